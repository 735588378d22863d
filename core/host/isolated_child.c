/* isolated_child.c - the child of `isolation: process` (isolated.h):
 * shoald --isolated-worker. Its main reads the boot record, parses the
 * config's text under its file's name, runs its one pool in a runtime of
 * its own, and the bridge feeds that pool from the channel and sends its
 * replies back.
 */
#include "host/isolated.h"

#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "actor/send.h"
#include "host/host.h"
#include "host/output.h"
#include "runtime/fault.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

typedef struct child_s {
    shoal_chan_t *chan;
    shoal_remote_area_t *area;
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    shoal_output_t *log; /* stderr, never blocking (output.h); NULL: stderr as it is */
} child_t;

/* A reply that finds the ring to the parent full waits for room: the
 * parent's supervisor empties it as it goes (it never waits on us), and a
 * reply dropped here is a call its caller hears of only at its timeout,
 * though it was handled (12 calls of 500 KB answers at once on a pool of
 * 4: 5 timed out). It waits REPLY_WAIT_NS at most -- a parent that reads
 * nothing for that long is stuck, not busy -- then it is dropped, said
 * here (the child's log, in the parent's) and counted as a late reply. */
#define REPLY_WAIT_NS (10ull * 1000000000ull)

static int send_waiting(child_t *ch, uint32_t tag, const shoal_remote_msg_t *m, const void *data,
                        size_t size)
{
    uint64_t end = 0;
    for (unsigned tries = 0;; tries++) {
        int rc = shoal__chan_send(ch->chan, tag, m, sizeof *m, data, size, true);
        if (rc != SHOAL_EBUSY)
            return rc;
        uint64_t now = shoal__now_ns();
        if (end == 0) {
            end = now + REPLY_WAIT_NS;
        } else if (now >= end) {
            shoal__log(ch->rt, SHOAL_LOG_WARN, ch->pool, NULL,
                       "a reply of %zu bytes was dropped: the channel to the parent stayed full "
                       "for %llu s",
                       size, REPLY_WAIT_NS / 1000000000ull);
            return rc;
        }
        if (tries < 16) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000}; /* 50 us */
            nanosleep(&ts, NULL);
        }
    }
}

/* What the child's workers send to a PID of the parent (SHOAL__PID_REMOTE):
 * into the channel (runtime.h: the gateway). A reply to a call the parent
 * made, or a message. A message never waits: a full ring refuses it
 * (SHOAL_EFULL, its sender hears). A reply waits for room (send_waiting).
 * A payload over SHOAL_REMOTE_PAYLOAD_MAX never fits (pool/remote.h): a
 * message is refused with SHOAL_EINVAL, a reply goes as the status
 * SHOAL_EINVAL, so that its caller hears at once instead of at its
 * timeout. */
static int gateway(void *user, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e, bool sys)
{
    child_t *ch = user;
    unsigned kind = shoal__env_kind(e);
    unsigned flags = shoal__env_flags(e);
    shoal_remote_msg_t m = {
        .to = shoal__pid_make(shoal__pid_gen(to), shoal__pid_slot(to) & ~SHOAL__PID_REMOTE),
        .ref = shoal__env_ref(e),
        .type = e->type,
    };
    uint32_t tag;
    if (kind == SHOAL_MSG_REPLY) {
        tag = SHOAL_REMOTE_REPLY;
        m.flags = (flags & SHOAL_ENV_STATUS) ? SHOAL_REMOTE_MSG_STATUS : 0;
    } else if (kind == SHOAL_MSG_CAST) {
        tag = SHOAL_REMOTE_SEND;
        m.flags = sys ? SHOAL_REMOTE_MSG_PRIORITY : 0;
    } else {
        return SHOAL_ENOPROC; /* a call, an exit, ...: no actor here answers for them */
    }
    bool status = (m.flags & SHOAL_REMOTE_MSG_STATUS) != 0;
    if (!status && e->size > SHOAL_REMOTE_PAYLOAD_MAX) {
        if (tag == SHOAL_REMOTE_SEND)
            return SHOAL_EINVAL;
        m.flags = SHOAL_REMOTE_MSG_STATUS;
        m.type = (uint32_t)SHOAL_EINVAL;
        status = true;
    }
    int rc =
        tag == SHOAL_REMOTE_REPLY
            ? send_waiting(ch, tag, &m, status ? NULL : shoal__env_data(e), status ? 0 : e->size)
            : shoal__chan_send(ch->chan, tag, &m, sizeof m, status ? NULL : shoal__env_data(e),
                               status ? 0 : e->size, true);
    if (rc != SHOAL_OK)
        return rc == SHOAL_EBUSY ? SHOAL_EFULL : SHOAL_ENOPROC;
    shoal__env_free(tc, e);
    return SHOAL_OK;
}

/* The parent's PID as this runtime names it: remote. */
static shoal_pid_t remote_pid(uint64_t pid)
{
    if (pid == SHOAL_PID_NONE)
        return SHOAL_PID_NONE;
    return shoal__pid_make(shoal__pid_gen(pid), shoal__pid_slot(pid) | SHOAL__PID_REMOTE);
}

/* One record from the parent into the pool: SHOAL_OK (taken), SHOAL_EBUSY
 * (no room now: try again), anything else (dropped). */
static int bridge_one(child_t *ch, shoal_tcache_t *tc, uint32_t tag, const void *data, size_t len)
{
    shoal_remote_msg_t m;
    if ((tag != SHOAL_REMOTE_CAST && tag != SHOAL_REMOTE_CALL) || len < sizeof m)
        return SHOAL_EINVAL;
    memcpy(&m, data, sizeof m);
    shoal_env_t *e = shoal__env_new(tc, tag == SHOAL_REMOTE_CALL ? SHOAL_MSG_CALL : SHOAL_MSG_CAST,
                                    0, remote_pid(m.from), m.ref, m.type,
                                    (const unsigned char *)data + sizeof m, len - sizeof m);
    if (e == NULL)
        return SHOAL_EBUSY;
    int rc = shoal__deliver(ch->rt, tc, ch->pool, e, false);
    if (rc != SHOAL_OK)
        shoal__env_free(tc, e);
    return rc == SHOAL_EFULL ? SHOAL_EBUSY : rc;
}

static void set_state(child_t *ch, uint32_t state, int rc, const char *why)
{
    if (why != NULL)
        snprintf(ch->area->why, sizeof ch->area->why, "%s", why);
    atomic_store_explicit(&ch->area->start_rc, rc, memory_order_relaxed);
    /* release: pairs with the parent's acquire of state (why is written). */
    atomic_store_explicit(&ch->area->state, state, memory_order_release);
    shoal__chan_send(ch->chan, SHOAL_REMOTE_STATUS, NULL, 0, NULL, 0, true);
}

static void publish_status(child_t *ch, shoal_host_t *h)
{
    shoal_pool_stats_t st;
    shoal__host_peek(&h->pools[0], &st);
    atomic_store_explicit(&ch->area->pool_size, st.pool_size, memory_order_relaxed);
    atomic_store_explicit(&ch->area->pool_state, st.state, memory_order_relaxed);
    atomic_store_explicit(&ch->area->restarts, st.worker_restarts, memory_order_relaxed);
}

/* What this child's workers have settled, from the stripes it counts into
 * (the sum the parent makes, unclamped). */
static uint64_t settled_total(child_t *ch)
{
    shoal_pool_stripe_t *s = shoal__remote_area_stripes(ch->area);
    uint32_t n = atomic_load_explicit(&ch->area->nstripes, memory_order_relaxed);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n && i < ch->area->stripes_cap; i++)
        sum += atomic_load_explicit(&s[i].handled, memory_order_relaxed) +
               atomic_load_explicit(&s[i].failed, memory_order_relaxed) +
               atomic_load_explicit(&s[i].dropped, memory_order_relaxed);
    return sum;
}

/* Feeds the pool from the ring until told to drain (then drains it) or
 * the channel breaks. Returns the exit status. While the parent has a
 * sender waiting for room (pool/remote.h: ROOM) it says when its workers
 * have settled up to room_at. */
static int bridge(child_t *ch, shoal_host_t *h)
{
    shoal_tcache_t *tc = shoal__tcache_get(ch->rt);
    uint32_t seen = 0, room_seen = 0;
    uint64_t room_at = 0;
    bool room_armed = false;
    uint64_t next_status = 0, next_drops = 0, drops_said = 0;
    bool drain = false;
    for (;;) {
        /* acquire: pairs with the parent's release of want_seq. */
        uint32_t seq = atomic_load_explicit(&ch->area->want_seq, memory_order_acquire);
        if (seq != seen) {
            seen = seq;
            uint32_t size = atomic_load_explicit(&ch->area->want_size, memory_order_relaxed);
            uint32_t mailbox = atomic_load_explicit(&ch->area->want_mailbox, memory_order_relaxed);
            shoal_pool_stats_t st;
            shoal__host_peek(&h->pools[0], &st);
            if (size != st.target_size)
                shoal_pool_set_size(ch->rt, ch->pool, size, 5000);
            if (mailbox != st.mailbox)
                shoal_pool_set_mailbox(ch->rt, ch->pool, mailbox, 5000);
            drain = atomic_load_explicit(&ch->area->want_drain, memory_order_relaxed) != 0;
        }
        /* acquire: pairs with the parent's release of room_seq (room_at is
         * written before it). */
        uint32_t rseq = atomic_load_explicit(&ch->area->room_seq, memory_order_acquire);
        if (rseq != room_seen) {
            room_seen = rseq;
            room_at = atomic_load_explicit(&ch->area->room_at, memory_order_relaxed);
            room_armed = true;
        }
        uint32_t tag;
        const void *data;
        size_t len;
        int rc;
        unsigned n = 0;
        while (n < 4096 && (rc = shoal__chan_peek(ch->chan, &tag, &data, &len)) == SHOAL_OK) {
            if (tag != SHOAL_REMOTE_ROOM && /* a wake: room_seq says the rest */
                bridge_one(ch, tc, tag, data, len) == SHOAL_EBUSY)
                break; /* its workers are full: leave it in the ring, try again soon */
            shoal__chan_consume(ch->chan);
            n++;
        }
        if (shoal__chan_broken(ch->chan) || shoal__chan_out_broken(ch->chan))
            return 4; /* the parent's side made no sense: nothing more can come */
        if (room_armed && (n > 0 || rc == SHOAL_EBUSY) && settled_total(ch) >= room_at &&
            shoal__chan_send(ch->chan, SHOAL_REMOTE_ROOM, NULL, 0, NULL, 0, true) == SHOAL_OK)
            room_armed = false; /* the parent looks, and arms again if need be */
        uint64_t now = shoal__now_ns();
        if (now >= next_status) {
            publish_status(ch, h);
            if (ch->log != NULL)
                shoal__output_pump(ch->log); /* what stderr's reader had not taken */
            next_status = now + 100000000u;
        }
        if (ch->log != NULL && now >= next_drops) { /* as shoald's host thread does */
            shoal__host_log_drops(h, ch->log, &drops_said);
            next_drops = now + 1000000000u;
        }
        if (drain && rc == SHOAL_EBUSY && n == 0) {
            /* Told to drain, and the parent sends nothing more: it asked
             * only after a grace period in which every sender that found
             * this child stamped what it reserved (pool/remote.c), and we
             * read the ring after the request [acquire of want_seq], so a
             * slot at the head that reads as empty is empty for good, not
             * reserved and unstamped. Finish what the pool has. */
            shoal_pool_drain(ch->rt, ch->pool, 24u * 3600u * 1000u);
            set_state(ch, SHOAL_REMOTE_DRAINED, SHOAL_OK, NULL);
            return 0;
        }
        if (n == 0 && rc == SHOAL_EBUSY && !room_armed)
            shoal__chan_wait(ch->chan, 100, 50);
        else if (n == 0) {
            /* The pool is full (let it work), or a sender of the parent
             * waits for room: look again soon. */
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Reads the boot record: fills b, and returns the three strings (one
 * malloc'd block) or NULL. */
static char *read_boot(shoal__iso_boot_t *b, char **name, char **file, char **text)
{
    if (pread(SHOAL__ISO_FD_BOOT, b, sizeof *b, 0) != (ssize_t)sizeof *b ||
        b->magic != SHOAL__ISO_BOOT_MAGIC || b->version != SHOAL__ISO_BOOT_VERSION ||
        b->name_len > 255 || b->file_len > PATH_MAX || b->text_len > (64u << 20))
        return NULL;
    size_t total = (size_t)b->name_len + b->file_len + b->text_len + 3;
    char *all = malloc(total);
    if (all == NULL)
        return NULL;
    char *p = all;
    off_t off = sizeof *b;
    uint64_t lens[3] = {b->name_len, b->file_len, b->text_len};
    char **outs[3] = {name, file, text};
    for (int i = 0; i < 3; i++) {
        if (pread(SHOAL__ISO_FD_BOOT, p, lens[i], off) != (ssize_t)lens[i]) {
            free(all);
            return NULL;
        }
        p[lens[i]] = '\0';
        *outs[i] = p;
        off += (off_t)lens[i];
        p += lens[i] + 1;
    }
    return all;
}

int shoal__isolated_main(void)
{
    /* Run as /proc/self/exe (SELF_EXE), its name would be "exe" in ps and
     * top: the parent's name, as before. */
    prctl(PR_SET_NAME, "shoald", 0, 0, 0);
    shoal__iso_boot_t b;
    char *name, *file, *text;
    char *all = read_boot(&b, &name, &file, &text);
    if (all == NULL) {
        fprintf(stderr, "shoald --isolated-worker: no boot record (started by hand?)\n");
        return 2;
    }
    /* stderr is the parent's: a reader of it that stops reading must not
     * hold this process's threads either. */
    child_t ch = {0};
    shoal__output_open(STDERR_FILENO, 1u << 20, &ch.log);
    shoal__fault_install(ch.log != NULL ? shoal__output_fd(ch.log) : STDERR_FILENO,
                         b.log_format == SHOAL_LOG_FORMAT_JSON ? SHOAL_FAULT_JSON
                                                               : SHOAL_FAULT_TEXT);
    shoal__fault_set_generation(b.generation);
    int fds[3] = {SHOAL__ISO_FD_CHAN, SHOAL__ISO_FD_CHAN + 1, SHOAL__ISO_FD_CHAN + 2};
    if (shoal__chan_attach(fds, &ch.chan) != SHOAL_OK) {
        fprintf(stderr, "shoald --isolated-worker: no channel from the parent\n");
        free(all);
        return 2;
    }
    size_t area_size;
    ch.area = shoal__chan_user(ch.chan, &area_size);
    uint32_t cap = ch.area->stripes_cap;
    int rc = SHOAL_EINVAL, exit_status = 3;
    char why[1200] = "";
    shoal_diag_t err = {0};
    shoal_config_t *c = NULL;
    shoal_loader_t *loader = NULL;
    shoal_host_t *h = NULL;
    if (area_size < shoal__remote_area_bytes(cap)) {
        snprintf(why, sizeof why, "the parent's shared area is too small");
        goto fail;
    }
    /* The parent's config, under its name: errors name its file:line:col. */
    char plugin[64];
    snprintf(plugin, sizeof plugin, "/proc/self/fd/%d", SHOAL__ISO_FD_PLUGIN);
    if ((rc = shoal__config_parse(file, text, b.text_len, &c, &err)) != SHOAL_OK ||
        (rc = shoal__config_isolate(c, name, plugin, &err)) != SHOAL_OK ||
        (rc = shoal__loader_create(&loader)) != SHOAL_OK ||
        (rc = shoal__config_resolve(c, loader, &err)) != SHOAL_OK) {
        shoal__diag_format(&err, why, sizeof why);
        goto fail;
    }
    /* The host without its pool, then the pool with our options. */
    const shoal_config_pool_t *cp = &c->pools[0];
    c->npools = 0;
    rc = shoal__host_start(c, loader, ch.log != NULL ? shoal__output_file(ch.log) : stderr, &h,
                           &err);
    c->npools = 1;
    if (rc != SHOAL_OK) {
        c = NULL; /* the host freed it */
        shoal__diag_format(&err, why, sizeof why);
        goto fail;
    }
    snprintf(h->log_tag, sizeof h->log_tag, "%s:%d", name, (int)getpid());
    shoal__host_set_generation(h, b.generation, (int)b.log_format);
    ch.rt = h->rt;
    if (h->rt->nslots + 1 > cap) {
        rc = SHOAL_ELIMIT;
        snprintf(why, sizeof why,
                 "the parent made room for %u thread counters, this runtime has %u", cap,
                 h->rt->nslots + 1);
        goto fail;
    }
    /* Replies and messages to the parent's PIDs go into the channel. No
     * actor has run yet: set once, read only from here on. */
    h->rt->gateway = gateway;
    h->rt->gateway_user = &ch;
    shoal_pool_opts_t opts = {
        .stripes = shoal__remote_area_stripes(ch.area), .nstripes = cap, .exact = true};
    if ((rc = shoal__host_start_pool(h, h->config, cp, b.generation, &opts, &ch.pool, why,
                                     sizeof why)) != SHOAL_OK ||
        shoal__host_pool_add(h, cp, ch.pool, b.generation) == NULL) {
        char inner[1200];
        snprintf(inner, sizeof inner, "%s", why[0] ? why : shoal_strerror(rc));
        snprintf(why, sizeof why, "%s", inner);
        rc = rc != SHOAL_OK ? rc : SHOAL_ENOMEM;
        goto fail;
    }
    atomic_store_explicit(&ch.area->nstripes, h->rt->nslots + 1, memory_order_relaxed);
    atomic_store_explicit(&ch.area->threads, h->rt->nthreads, memory_order_relaxed);
    publish_status(&ch, h);
    set_state(&ch, SHOAL_REMOTE_UP, SHOAL_OK, NULL);
    exit_status = bridge(&ch, h);
    /* Drained (or broken): the pool is done; leave without tearing down a
     * runtime a plugin may have left stuck. */
    if (ch.log != NULL)
        shoal__output_drain(ch.log, 2000); /* threads may still log: not freed */
    fflush(stderr);
    _exit(exit_status);
fail:
    set_state(&ch, SHOAL_REMOTE_FAILED, rc < 0 ? rc : SHOAL_EFAILED, why);
    if (ch.log != NULL)
        shoal__output_drain(ch.log, 2000);
    fflush(stderr);
    _exit(exit_status);
}
