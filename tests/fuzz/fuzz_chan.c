/* fuzz_chan.c - libFuzzer target: an isolated pool's channel (ipc/chan.c)
 * with a hostile child on the other side, and the parent's reading of what
 * that child sends and counts (pool/remote_deliver.c, remote.c,
 * remote_calls.c).
 *
 * Each input makes a channel as the parent does (64 KiB rings, a remote
 * pool's user area), attaches the "child" to it from copies of the
 * descriptors, and runs the input as a list of operations: the child
 * writing any bytes anywhere in the region (raw bytes, control words,
 * forged record headers, its shared counts), ringing or breaking its
 * doorbell ends, legitimate sends from either side (plain records and the
 * remote protocol's), and the parent's reads: peek and consume, the looks
 * (in_pending, arm, wait), out_free, sends on a ring the child garbled,
 * and an isolated pool's supervisor delivering the child's records into a
 * runtime, settling its counts, looking for room.
 *
 * What chan.h promises is checked after every operation: a record peek
 * gives is within SHOAL_CHAN_LEN_MAX, where the consumer's head says, and
 * read through our own mapping; a broken ring stays broken (peek
 * SHOAL_EINVAL, never ready, never pending); an out-broken ring refuses
 * every send; out_free is within the ring. While the child has not
 * scribbled on the rings, each ring is also checked against a model of
 * what was sent: the same records, in order, refused exactly when full.
 * And the parent's clamps: a child's settled counts never exceed what it
 * was pushed. A crash, a leak (memory or descriptors: everything is
 * released in its input), a hang (-timeout) or a failed check is a
 * finding. CI runs it under ASan+UBSan from the seeds in
 * corpus/fuzz_chan/ (.ci/run, job fuzz).
 *
 * This file: the input, the model, the checks and the target; the
 * child's scribbling is fuzz_chan_child.c, what both share fuzz_chan.h. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_chan.h"
#include "ipc/chan.h"
#include "pool/pool.h"
#include "pool/remote.h"
#include "pool/remote_child.h"
#include "runtime/runtime.h"
#include "runtime/tcache.h"
#include "shoal/shoal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the input ------------------------------------------------------------- */

uint64_t fc_take(input_t *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && in->n != 0; i++, in->p++, in->n--)
        v |= (uint64_t)in->p[0] << (8 * i);
    return v;
}

/* ---- the model of a ring the child left alone ------------------------------------ */

static uint64_t rec_size(uint64_t len)
{
    return SHOAL_CHAN_RECORD_HDR + ((len + 7) & ~UINT64_C(7));
}

static uint64_t sum_of(const void *a, size_t n, uint64_t h)
{
    const unsigned char *b = a;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}

static void model_push(model_t *m, uint32_t tag, uint32_t len, uint64_t sum)
{
    CHECK(m->n < MODEL_MAX);
    m->q[(m->first + m->n) % MODEL_MAX] = (rec_t){.tag = tag, .len = len, .sum = sum};
    m->n++;
    m->used += rec_size(len);
}

static void model_pop(model_t *m)
{
    CHECK(m->n != 0);
    m->used -= rec_size(m->q[m->first].len);
    m->first = (m->first + 1) % MODEL_MAX;
    m->n--;
}

/* ---- one input's world ------------------------------------------------------------- */

/* The runtime an isolated pool's supervisor delivers into: made once, with a
 * sink actor whose mailbox is small (so the child's sends are refused too). */
static shoal_runtime_t *rt;
static shoal_tcache_t *tc;
static shoal_pid_t sink;

static int sink_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}
static const shoal_behaviour_t sink_b = {.name = "fuzz_sink", .handle_message = sink_message};

static void quiet(void *user, int level, const char *line)
{
    (void)user;
    (void)level;
    (void)line;
}

static unsigned char buf[(size_t)LEN_MAX + 256];

uint64_t fc_load64(const world_t *w, uint64_t at)
{
    uint64_t v;
    memcpy(&v, w->region + at, sizeof v);
    return v;
}

static void world_up(world_t *w)
{
    memset(w, 0, sizeof *w);
    w->cfd[0] = w->cfd[1] = w->cfd[2] = -1;
    w->m[0].clean = w->m[1].clean = true;
    size_t user = shoal__remote_area_bytes(NSTRIPES);
    CHECK(shoal__chan_create(RING, user, &w->p) == SHOAL_OK);
    int fds[3];
    shoal__chan_fds(w->p, fds);
    for (int i = 0; i < 3; i++) {
        w->cfd[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
        CHECK(w->cfd[i] >= 0);
    }
    CHECK(shoal__chan_attach(w->cfd, &w->c) == SHOAL_OK);
    size_t got;
    unsigned char *u = shoal__chan_user(w->c, &got);
    CHECK(got >= user);
    w->region = u - (PAGE + 2 * RING);
    w->total = PAGE + 2 * RING + got;
    /* The isolated pool's parts the supervisor's code reads. */
    w->pool = calloc(1, sizeof *w->pool);
    w->r = calloc(1, sizeof *w->r);
    w->child = calloc(1, sizeof *w->child);
    CHECK(w->pool != NULL && w->r != NULL && w->child != NULL);
    w->pool->g.pid = SHOAL_PID_NONE;
    snprintf(w->pool->name, sizeof w->pool->name, "fuzz");
    w->r->rt = rt;
    w->r->p = w->pool;
    pthread_mutex_init(&w->r->calls_lock, NULL);
    pthread_mutex_init(&w->r->lock, NULL);
    w->r->children = w->child;
    child_t *c = w->child;
    c->chan = w->p;
    c->area = shoal__chan_user(w->p, NULL);
    c->stripes = shoal__remote_area_stripes(c->area);
    c->stripes_cap = NSTRIPES;
    c->ring_bytes = RING;
    c->up = true;
    /* Said and killed already: a broken channel then kills no process
     * (this one has no child process to kill). */
    c->nonsense = true;
    c->pid = -1;
    c->pidfd = -1;
}

static void world_down(world_t *w)
{
    shoal__remote_calls_free(w->r);
    pthread_mutex_destroy(&w->r->calls_lock);
    pthread_mutex_destroy(&w->r->lock);
    free(w->child);
    free(w->r);
    free(w->pool);
    shoal__chan_destroy(w->c);
    shoal__chan_destroy(w->p);
}

/* ---- the checks ----------------------------------------------------------------- */

/* What chan.h promises whatever the child wrote, after every operation. */
static void check_always(world_t *w)
{
    uint32_t tag;
    const void *d;
    size_t len;
    if (w->p_broken) {
        CHECK(shoal__chan_broken(w->p));
        CHECK(shoal__chan_peek(w->p, &tag, &d, &len) == SHOAL_EINVAL);
        CHECK(!shoal__chan_in_pending(w->p));
    }
    w->p_broken = shoal__chan_broken(w->p);
    if (w->c_broken)
        CHECK(shoal__chan_broken(w->c));
    w->c_broken = shoal__chan_broken(w->c);
    if (w->p_out_broken)
        CHECK(shoal__chan_out_broken(w->p));
    w->p_out_broken = shoal__chan_out_broken(w->p);
    if (w->c_out_broken)
        CHECK(shoal__chan_out_broken(w->c));
    w->c_out_broken = shoal__chan_out_broken(w->c);
    for (int i = 0; i < 2; i++) {
        shoal_chan_t *s = i == 0 ? w->p : w->c;
        uint64_t ring = 0;
        uint64_t free_ = shoal__chan_out_free(s, &ring);
        CHECK(ring == RING && free_ <= RING);
        model_t *m = &w->m[i == 0 ? 0 : 1];
        if (m->clean)
            CHECK(free_ == RING - m->used);
    }
}

/* A record peek gave on ring `ri` to its consumer: within bounds, where the
 * consumer's head is, and the bytes the child's mapping holds there. */
static void check_record(world_t *w, int ri, uint32_t tag, const void *d, size_t len)
{
    model_t *m = &w->m[ri];
    CHECK(len <= LEN_MAX);
    const unsigned char *rec = (const unsigned char *)d - SHOAL_CHAN_RECORD_HDR;
    uint64_t stamp;
    memcpy(&stamp, rec, sizeof stamp);
    /* Read through our mapping: a pointer outside it faults here. The
     * same bytes, through the child's, at the head's place in the ring
     * (unless the child changes them between the two reads: it does not,
     * it is this thread). */
    memcpy(buf, rec, SHOAL_CHAN_RECORD_HDR + len);
    const unsigned char *base = w->region + RING_AT(ri);
    for (size_t k = 0; k < SHOAL_CHAN_RECORD_HDR + len; k++)
        CHECK(buf[k] == base[(m->head + k) & (RING - 1)]);
    CHECK(stamp == m->head + 1);
    if (m->clean) {
        CHECK(m->n != 0);
        const rec_t *want = &m->q[m->first];
        CHECK(want->tag == tag && want->len == len && want->sum == sum_of(d, len, 0));
    }
}

/* Side s (0: the parent, ring 1; 1: the child, ring 0) is done with the
 * record its last peek gave (none: nothing happens). */
static void consume(world_t *w, int s)
{
    int ri = s == 0 ? 1 : 0;
    model_t *m = &w->m[ri];
    shoal__chan_consume(s == 0 ? w->p : w->c);
    uint64_t size = m->peeked;
    if (size == 0)
        return;
    m->peeked = 0;
    m->head += size;
    /* Its head published, its bytes zeroed for the producers. */
    CHECK(fc_load64(w, HEAD_AT(ri)) == m->head);
    for (uint64_t k = 0; k < size; k++)
        CHECK(w->region[RING_AT(ri) + ((m->head - size + k) & (RING - 1))] == 0);
    if (m->clean)
        model_pop(m);
}

/* peek on side s, and consume if asked. */
static void peek(world_t *w, int s, bool and_consume)
{
    shoal_chan_t *ch = s == 0 ? w->p : w->c;
    int ri = s == 0 ? 1 : 0;
    model_t *m = &w->m[ri];
    bool was_broken = shoal__chan_broken(ch);
    uint32_t tag = 0;
    const void *d = NULL;
    size_t len = 0;
    int rc = shoal__chan_peek(ch, &tag, &d, &len);
    CHECK(rc == SHOAL_OK || rc == SHOAL_EBUSY || rc == SHOAL_EINVAL);
    if (was_broken)
        CHECK(rc == SHOAL_EINVAL);
    if (rc == SHOAL_EINVAL)
        CHECK(shoal__chan_broken(ch));
    if (m->clean)
        CHECK(rc == (m->n != 0 ? SHOAL_OK : SHOAL_EBUSY));
    if (rc == SHOAL_OK) {
        check_record(w, ri, tag, d, len);
        m->peeked = rec_size(len);
    }
    if (and_consume)
        consume(w, s);
}

/* A send of len bytes (as two parts) from side s; the bytes from the input's
 * seed. */
static void send_plain(world_t *w, int s, uint32_t tag, size_t len, size_t split, uint64_t seed,
                       bool ring)
{
    shoal_chan_t *ch = s == 0 ? w->p : w->c;
    model_t *m = &w->m[s == 0 ? 0 : 1];
    size_t n = len <= sizeof buf ? len : 0;
    for (size_t k = 0; k < n; k++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        buf[k] = (unsigned char)(seed >> 56);
    }
    if (split > n)
        split = n;
    bool out_broken = shoal__chan_out_broken(ch);
    int rc;
    if (len > sizeof buf) /* too large for any ring, the parts' sum wrapping: never read */
        rc = shoal__chan_send(ch, tag, buf, len, buf, split + 1, ring);
    else
        rc = shoal__chan_send(ch, tag, buf, split, buf + split, n - split, ring);
    CHECK(rc == SHOAL_OK || rc == SHOAL_EBUSY || rc == SHOAL_EINVAL);
    if (len > LEN_MAX || out_broken)
        CHECK(rc == SHOAL_EINVAL);
    if (rc == SHOAL_EINVAL && len <= LEN_MAX)
        CHECK(shoal__chan_out_broken(ch));
    if (m->clean && len <= LEN_MAX && !out_broken) {
        CHECK(rc == (m->used + rec_size(len) <= RING ? SHOAL_OK : SHOAL_EBUSY));
        if (rc == SHOAL_OK)
            model_push(m, tag, (uint32_t)len, sum_of(buf, n, 0));
    }
}

/* A record of the remote protocol (remote.h) from the child. */
static void send_remote(world_t *w, input_t *in)
{
    static const uint32_t tags[] = {SHOAL_REMOTE_REPLY, SHOAL_REMOTE_SEND, SHOAL_REMOTE_STATUS,
                                    SHOAL_REMOTE_ROOM,  SHOAL_REMOTE_CAST, SHOAL_REMOTE_CALL};
    uint8_t how = (uint8_t)fc_take(in, 1);
    uint32_t tag = how < 240 ? tags[how % 6] : (uint32_t)fc_take(in, 4);
    shoal_remote_msg_t msg = {0};
    uint8_t to = (uint8_t)fc_take(in, 1);
    msg.to = to % 4 == 0   ? sink
             : to % 4 == 1 ? SHOAL_PID_NONE
             : to % 4 == 2 ? (uint64_t)to
                           : fc_take(in, 8);
    msg.from = fc_take(in, 1);
    msg.ref = fc_take(in, 1);
    msg.type = (uint32_t)fc_take(in, 2);
    msg.flags = (uint32_t)fc_take(in, 1);
    size_t head = fc_take(in, 1) % (sizeof msg + 1); /* short records too */
    size_t pay = fc_take(in, 1);
    memcpy(buf, &msg, sizeof msg);
    size_t len = head < sizeof msg ? head : sizeof msg + pay;
    memset(buf + sizeof msg, 0x5a, pay);
    model_t *m = &w->m[1];
    bool fits = m->used + rec_size(len) <= RING, out_broken = shoal__chan_out_broken(w->c);
    int rc = shoal__chan_send(w->c, tag, buf, len, NULL, 0, (how & 1) != 0);
    CHECK(rc == SHOAL_OK || rc == SHOAL_EBUSY || rc == SHOAL_EINVAL);
    if (m->clean && !out_broken) {
        CHECK(rc == (fits ? SHOAL_OK : SHOAL_EBUSY));
        if (rc == SHOAL_OK)
            model_push(m, tag, (uint32_t)len, sum_of(buf, len, 0));
    }
}

/* The supervisor takes what the child sent (remote_deliver.c). */
static void deliver(world_t *w, bool all)
{
    model_t *m = &w->m[1];
    bool was_broken = shoal__chan_broken(w->p);
    size_t before = m->n;
    size_t n = shoal__remote_deliver(w->r, w->child, tc, all);
    CHECK(n <= (all ? RING / SHOAL_CHAN_RECORD_HDR : 4096));
    if (was_broken)
        CHECK(n == 0);
    if (n != 0) {
        m->head = fc_load64(w, HEAD_AT(1)); /* it just published it */
        m->peeked = 0;
    }
    if (m->clean) {
        CHECK(n == before);
        while (m->n != 0)
            model_pop(m);
    }
}

/* The counts a child writes, as the parent reads them (remote.c). */
static void counts(world_t *w, input_t *in)
{
    child_t *c = w->child;
    uint8_t how = (uint8_t)fc_take(in, 1);
    uint64_t pushed = how & 1 ? fc_take(in, 8) & ~SHOAL__REMOTE_CLOSED : fc_take(in, 2);
    atomic_store_explicit(&c->pushed, pushed, memory_order_relaxed);
    atomic_store_explicit(&w->r->cap, how & 2 ? fc_take(in, 8) : fc_take(in, 2),
                          memory_order_relaxed);
    uint64_t h, f, d;
    shoal__remote_settled(c, pushed, &h, &f, &d);
    CHECK(h <= pushed && f <= pushed - h && d <= pushed - h - f);
    uint64_t at = 0;
    (void)shoal__remote_child_room(w->r, c, &at);
    shoal_pool_stats_t st;
    shoal_pool_hist_t hist;
    memset(&st, 0, sizeof st);
    memset(&hist, 0, sizeof hist);
    st.state = SHOAL_POOL_RUNNING;
    shoal__remote_sum(w->r, &st, &hist);
    CHECK(st.messages_handled + st.messages_failed + st.messages_dropped <= pushed);
    shoal__remote_hist(w->r, &hist);
}

/* A call the child was given (remote_calls.c), so its REPLY can answer one:
 * a caller and ref the child's records can name (send_remote). */
static void hold_call(world_t *w, input_t *in)
{
    uint8_t to = (uint8_t)fc_take(in, 1);
    shoal_pid_t caller = to % 4 == 0 ? sink : to % 4 == 1 ? SHOAL_PID_NONE : (uint64_t)to;
    shoal_ref_t ref = fc_take(in, 1);
    if (to & 0x80)
        shoal__remote_call_gone(w->r, caller, ref);
    else
        (void)shoal__remote_call_hold(w->r, w->child, caller, ref);
}

/* ---- the target --------------------------------------------------------------------- */

/* The layout the scribbling assumes is chan.c's: a record sent moves the
 * tail where we look for it, and lands where we look for it. */
static bool layout_ok(void)
{
    world_t w;
    world_up(&w);
    bool ok = shoal__chan_send(w.c, 7, "abc", 3, NULL, 0, false) == SHOAL_OK &&
              fc_load64(&w, TAIL_AT(1)) == rec_size(3) && fc_load64(&w, RING_AT(1)) == 1 &&
              shoal__chan_send(w.p, 7, "abc", 3, NULL, 0, false) == SHOAL_OK &&
              fc_load64(&w, TAIL_AT(0)) == rec_size(3) && fc_load64(&w, RING_AT(0)) == 1;
    uint32_t tag;
    const void *d;
    size_t len;
    ok = ok && shoal__chan_peek(w.p, &tag, &d, &len) == SHOAL_OK;
    shoal__chan_consume(w.p);
    ok = ok && fc_load64(&w, HEAD_AT(1)) == rec_size(3);
    world_down(&w);
    return ok;
}

static void setup(void)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 1;
    o.log_fn = quiet;
    CHECK(shoal_runtime_create(&rt, &o) == SHOAL_OK);
    shoal_spawn_opts_t so = {.mailbox_limit = 4};
    CHECK(shoal_runtime_spawn(rt, &sink_b, NULL, &so, &sink) == SHOAL_OK);
    tc = shoal__tcache_get(rt);
    CHECK(tc != NULL);
    if (!layout_ok()) {
        fprintf(stderr, "fuzz_chan: chan.c's layout is not the one this target writes over\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready)
        setup();
    ready = true;
    world_t *w = malloc(sizeof *w);
    CHECK(w != NULL);
    world_up(w);
    input_t in = {data, size};
    while (in.n != 0) {
        uint8_t op = (uint8_t)fc_take(&in, 1);
        switch (op % 16) {
        case 0:
            fc_poke(w, &in);
            break;
        case 1:
            fc_word(w, &in);
            break;
        case 2:
            fc_forge(w, &in);
            break;
        case 3:
        case 4: { /* a plain send, from the child (3) or the parent (4) */
            uint8_t how = (uint8_t)fc_take(&in, 1);
            size_t len = (how & 0xc0) == 0xc0   ? LEN_MAX + (size_t)(int8_t)fc_take(&in, 1)
                         : (how & 0xc0) == 0x80 ? fc_take(&in, 2) % (LEN_MAX + 64)
                         : (how & 0x3f) == 0x3f ? SIZE_MAX - fc_take(&in, 1)
                                                : fc_take(&in, 1);
            send_plain(w, op % 16 == 3 ? 1 : 0, (uint32_t)fc_take(&in, 1), len, fc_take(&in, 1), op,
                       (how & 1) != 0);
            break;
        }
        case 5:
            peek(w, 0, false);
            break;
        case 6:
            peek(w, 0, true);
            break;
        case 7:
            consume(w, (op & 0x10) != 0);
            break;
        case 8:
            peek(w, 1, (op & 0x10) != 0);
            break;
        case 9:
            fc_bell(w, &in);
            break;
        case 10:
            shoal__chan_handed(w->p);
            w->handed = true;
            break;
        case 11:
            fc_reattach(w);
            break;
        case 12:
            send_remote(w, &in);
            break;
        case 13:
            deliver(w, (op & 0x10) != 0);
            break;
        case 14:
            counts(w, &in);
            break;
        default:
            hold_call(w, &in);
            break;
        }
        check_always(w);
    }
    world_down(w);
    free(w);
    return 0;
}
