/* test_send_many.c - many messages in one step (core/actor/send.c
 * shoal__send_many, core/pool/forward.c forward_route_many): the same
 * outcome as single sends that stop at the first refusal, exactly.
 *   - to a plain unbounded actor: every message, in order, with its
 *     payload and sender; the counters move by n sends;
 *   - to a bounded actor that is full up to k: the first k taken, in order,
 *     SHOAL_EFULL and one refusal counted; nothing from the rest arrives;
 *   - interleaved with single sends from one actor: per-sender FIFO holds
 *     across both;
 *   - payloads on the heap (over SHOAL_INLINE_MAX) and of odd sizes;
 *   - bad arguments and dead receivers: nothing sent, the error returned;
 *   - to a forward pool: spread over the workers as single sends would be
 *     (64 over 4 idle workers: 16 each), each worker's share in order; with
 *     every worker blocked and full, exactly size x mailbox taken, then
 *     SHOAL_EBUSY, and the pool's forwarded/unhandled counters exact;
 *   - to a pull pool: admitted up to its capacity (buffer + workers x
 *     prefetch) with one admission, the rest refused, counts exact;
 *   - to pools that route one by one (round_robin, least_loaded) and to a
 *     pull pool with room: every message, taken as single sends would be.
 *
 * Handlers never call CUnit: they record in atomics; the test thread
 * asserts after waiting on them.
 */
#include <stdio.h>
#include <string.h>

#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define MAXN 4096

enum { T_DATA = 1, T_GO = 2, T_BIG = 3 };

/* What the receivers saw: per message index, which actor and in which
 * position it arrived; order errors per receiving actor. */
static _Atomic shoal_pid_t seen_by[MAXN];
static atomic_int seen_pos[MAXN];
static atomic_int total, bad, bad_from, gate, entered;
static _Atomic shoal_pid_t want_from;

static void reset(void)
{
    for (int i = 0; i < MAXN; i++) {
        atomic_store(&seen_by[i], SHOAL_PID_NONE);
        atomic_store(&seen_pos[i], -1);
    }
    atomic_store(&total, 0);
    atomic_store(&bad, 0);
    atomic_store(&bad_from, 0);
    atomic_store(&gate, 0);
    atomic_store(&entered, 0);
    atomic_store(&want_from, SHOAL_PID_NONE);
}

typedef struct {
    int64_t last; /* the last index this actor got: each actor's run rises */
} rx_state_t;

static int rx_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)args;
    ((rx_state_t *)state)->last = -1;
    return 0;
}

/* A receiver: message T_DATA carries its index (uint64_t); while the test
 * keeps the gate closed, a handler waits for it to open. */
static int rx_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    rx_state_t *s = state;
    uint64_t i;
    if (msg->type == T_BIG) {
        /* 100 bytes: byte j of message i is (i + j) & 0xff. */
        const unsigned char *p = msg->data;
        memcpy(&i, p, sizeof i);
        if (msg->size != 100)
            atomic_fetch_add(&bad, 1);
        for (size_t j = sizeof i; j < msg->size; j++)
            if (p[j] != (unsigned char)((i + j) & 0xff))
                atomic_fetch_add(&bad, 1);
    } else if (msg->type == T_DATA && msg->size == sizeof i) {
        memcpy(&i, msg->data, sizeof i);
    } else if (msg->type == T_DATA && msg->size == 3) {
        /* odd sizes: bytes i, i + 1, i + 2 of a counter */
        const unsigned char *p = msg->data;
        i = p[0];
        if (p[1] != (unsigned char)(i + 1) || p[2] != (unsigned char)(i + 2))
            atomic_fetch_add(&bad, 1);
    } else {
        return 0;
    }
    if (atomic_load(&gate) == 0) { /* closed: every handler waits for it */
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (i >= MAXN || (int64_t)i <= s->last) {
        atomic_fetch_add(&bad, 1);
        return 0;
    }
    s->last = (int64_t)i;
    if (msg->from != atomic_load(&want_from))
        atomic_fetch_add(&bad_from, 1);
    atomic_store(&seen_by[i], shoal_self(ctx));
    atomic_store(&seen_pos[i], atomic_fetch_add(&total, 1));
    return 0;
}

static const shoal_behaviour_t rx = {
    .name = "rx", .state_size = sizeof(rx_state_t), .init = rx_init, .handle_message = rx_message};

static shoal_pid_t spawn_rx(shoal_runtime_t *rt, uint32_t limit)
{
    shoal_spawn_opts_t o = {.mailbox_limit = limit};
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &rx, NULL, &o, &pid), SHOAL_OK);
    return pid;
}

static void fill(uint64_t *v, uint64_t first, size_t n)
{
    for (size_t j = 0; j < n; j++)
        v[j] = first + j;
}

/* ---- plain actors ------------------------------------------------------- */

static void all_to_unbounded_actor_in_order(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    atomic_store(&gate, 1);
    shoal_pid_t r = spawn_rx(rt, SHOAL_MAILBOX_UNBOUNDED);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    static uint64_t v[1000];
    fill(v, 0, 1000);
    size_t sent = 12345;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, v, sizeof v[0], 1000, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 1000);
    WAIT_UNTIL(atomic_load(&total) == 1000);
    CU_ASSERT_EQUAL(atomic_load(&total), 1000);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad_from), 0);
    for (int i = 0; i < 1000; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen_pos[i]), i); /* arrival order is index order */
    shoal_runtime_stats_t after = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(after.msgs_sent - before.msgs_sent, 1000);
    CU_ASSERT_EQUAL(after.msgs_refused - before.msgs_refused, 0);
    shoal_runtime_destroy(rt);
}

static void bounded_actor_takes_its_room_then_efull(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    shoal_pid_t r = spawn_rx(rt, 10);
    uint64_t v[25];
    /* The first message blocks the receiver inside its handler: then the
     * mailbox holds exactly 10 more. */
    fill(v, 0, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, v, sizeof v[0], 1, NULL), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    fill(v, 1, 25);
    size_t sent = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, v, sizeof v[0], 25, &sent), SHOAL_EFULL);
    CU_ASSERT_EQUAL(sent, 10);
    shoal_runtime_stats_t mid = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(mid.msgs_sent - before.msgs_sent, 10);
    CU_ASSERT_EQUAL(mid.msgs_refused - before.msgs_refused, 1); /* the first refused one */
    /* Full: not even one more. */
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, v + 10, sizeof v[0], 5, &sent),
                    SHOAL_EFULL);
    CU_ASSERT_EQUAL(sent, 0);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&total) == 11);
    CU_ASSERT_EQUAL(atomic_load(&total), 11);
    for (int i = 0; i <= 10; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen_pos[i]), i);
    for (int i = 11; i < 26; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen_pos[i]), -1);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0);
    shoal_runtime_destroy(rt);
}

/* An actor that sends runs and single messages, alternating: its receiver
 * must see them in the order sent. */
static shoal_pid_t mixer_to;
static atomic_int mixer_err;

static int mixer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type != T_GO)
        return 0;
    uint64_t v[37];
    uint64_t i = 0;
    while (i < 2000) {
        size_t n = (i / 38) % 2 == 0 ? 37 : 1, sent;
        if (i + n > 2000)
            n = 2000 - i;
        int rc;
        if (n == 1) {
            rc = shoal_send(ctx, mixer_to, T_DATA, &i, sizeof i);
            sent = rc == SHOAL_OK;
        } else {
            fill(v, i, n);
            rc = shoal_send_many(ctx, mixer_to, T_DATA, v, sizeof v[0], n, &sent);
        }
        if (rc != SHOAL_OK || sent != n)
            atomic_fetch_add(&mixer_err, 1);
        i += n;
    }
    return 0;
}

static void runs_and_single_sends_keep_sender_fifo(void)
{
    static const shoal_behaviour_t mixer = {.name = "mixer", .handle_message = mixer_message};
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    atomic_store(&gate, 1);
    atomic_store(&mixer_err, 0);
    mixer_to = spawn_rx(rt, SHOAL_MAILBOX_UNBOUNDED);
    shoal_pid_t m = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &mixer, NULL, NULL, &m), SHOAL_OK);
    atomic_store(&want_from, m);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, T_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&total) == 2000);
    CU_ASSERT_EQUAL(atomic_load(&total), 2000);
    CU_ASSERT_EQUAL(atomic_load(&mixer_err), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad_from), 0);
    for (int i = 0; i < 2000; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen_pos[i]), i);
    shoal_runtime_destroy(rt);
}

static void heap_and_odd_sized_payloads(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    atomic_store(&gate, 1);
    shoal_pid_t r = spawn_rx(rt, SHOAL_MAILBOX_UNBOUNDED);
    static unsigned char big[150][100];
    for (uint64_t i = 0; i < 150; i++) {
        memcpy(big[i], &i, sizeof i);
        for (size_t j = sizeof i; j < 100; j++)
            big[i][j] = (unsigned char)((i + j) & 0xff);
    }
    size_t sent = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_BIG, big, 100, 150, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 150);
    WAIT_UNTIL(atomic_load(&total) == 150);
    unsigned char odd[100][3];
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < 3; j++)
            odd[i][j] = (unsigned char)(150 + i + j);
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, odd, 3, 100, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 100);
    WAIT_UNTIL(atomic_load(&total) == 250);
    CU_ASSERT_EQUAL(atomic_load(&total), 250);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0);
    for (int i = 0; i < 250; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen_pos[i]), i);
    shoal_runtime_destroy(rt);
}

static void bad_arguments_and_dead_receivers(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    atomic_store(&gate, 1);
    shoal_pid_t r = spawn_rx(rt, SHOAL_MAILBOX_UNBOUNDED);
    uint64_t v[4] = {0, 1, 2, 3};
    size_t sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, NULL, 8, 4, &sent), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(sent, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, v, 8, 0, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, SHOAL_PID_NONE, T_DATA, v, 8, 4, &sent),
                    SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(sent, 0);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, r), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_send(rt, r, T_GO, NULL, 0) == SHOAL_ENOPROC);
    before = shoal_test_stats(rt);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, r, T_DATA, v, 8, 4, &sent), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(sent, 0);
    shoal_runtime_stats_t after = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(after.msgs_noproc - before.msgs_noproc, 1);
    CU_ASSERT_EQUAL(after.msgs_sent - before.msgs_sent, 0);
    CU_ASSERT_EQUAL(atomic_load(&total), 0);
    shoal_runtime_destroy(rt);
}

/* ---- pools -------------------------------------------------------------- */

static shoal_pid_t spawn_pool(shoal_runtime_t *rt, uint32_t kind, uint32_t strategy, uint32_t size,
                              uint32_t mailbox)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "many";
    s.worker = &rx;
    s.size = size;
    s.mailbox = mailbox;
    s.kind = kind;
    if (kind == SHOAL_POOL_KIND_FORWARD)
        s.strategy = strategy;
    else
        s.buffer = MAXN;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    return p;
}

/* Which worker got index i: its position among the distinct workers seen. */
static unsigned owners(shoal_pid_t *out, unsigned max, int n)
{
    unsigned k = 0;
    for (int i = 0; i < n; i++) {
        shoal_pid_t p = atomic_load(&seen_by[i]);
        unsigned j = 0;
        while (j < k && out[j] != p)
            j++;
        if (j == k && k < max)
            out[k++] = p;
    }
    return k;
}

static void pool_spreads_a_run_as_single_sends_would(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    atomic_store(&gate, 1);
    shoal_pid_t pool = spawn_pool(rt, SHOAL_POOL_KIND_FORWARD, SHOAL_POOL_STRATEGY_FIFO, 4, 100);
    uint64_t v[64];
    fill(v, 0, 64);
    size_t sent = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_DATA, v, sizeof v[0], 64, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 64);
    WAIT_UNTIL(atomic_load(&total) == 64);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0); /* each worker's share arrived in order */
    shoal_pid_t w[8];
    CU_ASSERT_EQUAL(owners(w, 8, 64), 4);
    for (unsigned k = 0; k < 4; k++) {
        int got = 0;
        for (int i = 0; i < 64; i++)
            got += atomic_load(&seen_by[i]) == w[k];
        CU_ASSERT_EQUAL(got, 16);
    }
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 64);
    CU_ASSERT_EQUAL(st.messages_unhandled, 0);
    shoal_runtime_destroy(rt);
}

static void full_pool_takes_exactly_its_capacity(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    shoal_pid_t pool = spawn_pool(rt, SHOAL_POOL_KIND_FORWARD, SHOAL_POOL_STRATEGY_FIFO, 3, 5);
    /* A run of 3 gives each worker one (its fair share), which holds it in
     * its handler: then each mailbox has room for exactly 5. */
    uint64_t v[40];
    fill(v, 0, 3);
    size_t sent = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_DATA, v, sizeof v[0], 3, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 3);
    WAIT_UNTIL(atomic_load(&entered) == 3);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 3);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    fill(v, 3, 40);
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_DATA, v, sizeof v[0], 40, &sent),
                    SHOAL_EBUSY);
    CU_ASSERT_EQUAL(sent, 15);
    shoal_runtime_stats_t mid = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(mid.msgs_sent - before.msgs_sent, 15);
    CU_ASSERT_EQUAL(mid.msgs_refused - before.msgs_refused, 1);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&total) == 18);
    CU_ASSERT_EQUAL(atomic_load(&total), 18);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0);
    shoal_pid_t w[8];
    CU_ASSERT_EQUAL(owners(w, 8, 18), 3);
    for (unsigned k = 0; k < 3; k++) {
        int got = 0;
        for (int i = 0; i < 18; i++)
            got += atomic_load(&seen_by[i]) == w[k];
        CU_ASSERT_EQUAL(got, 6); /* 1 held + 5 queued each */
    }
    for (int i = 18; i < 43; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen_pos[i]), -1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 18);
    CU_ASSERT_EQUAL(st.messages_unhandled, 1);
    shoal_runtime_destroy(rt);
}

/* A pull pool admits a run as far as its capacity (buffer + workers x
 * prefetch) goes, with one admission for the lot, and refuses the rest. */
static void pull_pool_admits_a_run_up_to_its_capacity(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    reset();
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "pulled";
    s.kind = SHOAL_POOL_KIND_PULL;
    s.worker = &rx;
    s.size = 2;
    s.prefetch = 1;
    s.buffer = 5;
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    uint64_t v[20];
    fill(v, 0, 2);
    size_t sent = 0;
    /* Two items: each worker takes one and waits in its handler. */
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_DATA, v, sizeof v[0], 2, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 2);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 2);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    fill(v, 2, 20);
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_DATA, v, sizeof v[0], 20, &sent),
                    SHOAL_EBUSY);
    CU_ASSERT_EQUAL(sent, 5); /* 5 + 2 x 1, of which 2 are held */
    shoal_runtime_stats_t mid = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(mid.msgs_sent - before.msgs_sent, 5);
    CU_ASSERT_EQUAL(mid.msgs_refused - before.msgs_refused, 1);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&total) == 7);
    CU_ASSERT_EQUAL(atomic_load(&total), 7);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0); /* each worker's items in the order admitted */
    for (int i = 7; i < 22; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen_pos[i]), -1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 7);
    CU_ASSERT_EQUAL(st.messages_unhandled, 1);
    shoal_runtime_destroy(rt);
}

static void one_by_one_kinds_take_every_message(void)
{
    static const struct {
        uint32_t kind, strategy;
        const char *what;
    } cases[] = {
        {SHOAL_POOL_KIND_FORWARD, SHOAL_POOL_STRATEGY_ROUND_ROBIN, "round_robin"},
        {SHOAL_POOL_KIND_FORWARD, SHOAL_POOL_STRATEGY_LEAST_LOADED, "least_loaded"},
        {SHOAL_POOL_KIND_PULL, 0, "pull"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        shoal_runtime_t *rt = shoal_test_runtime(2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        reset();
        atomic_store(&gate, 1);
        shoal_pid_t pool = spawn_pool(rt, cases[c].kind, cases[c].strategy, 3, 1000);
        static uint64_t v[MAXN];
        fill(v, 0, 3000);
        size_t sent = 0;
        CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_DATA, v, sizeof v[0], 3000, &sent),
                        SHOAL_OK);
        CU_ASSERT_EQUAL(sent, 3000);
        WAIT_UNTIL(atomic_load(&total) == 3000);
        if (atomic_load(&total) != 3000 || atomic_load(&bad) != 0)
            fprintf(stderr, "\n%s: total %d bad %d\n", cases[c].what, atomic_load(&total),
                    atomic_load(&bad));
        CU_ASSERT_EQUAL(atomic_load(&total), 3000);
        CU_ASSERT_EQUAL(atomic_load(&bad), 0);
        shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
        CU_ASSERT_EQUAL(st.messages_forwarded, 3000);
        shoal_runtime_destroy(rt);
    }
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"all to an unbounded actor, in order", all_to_unbounded_actor_in_order},
        {"a bounded actor takes its room, then EFULL", bounded_actor_takes_its_room_then_efull},
        {"runs and single sends keep per-sender FIFO", runs_and_single_sends_keep_sender_fifo},
        {"heap and odd-sized payloads", heap_and_odd_sized_payloads},
        {"bad arguments and dead receivers", bad_arguments_and_dead_receivers},
        {"a pool spreads a run as single sends would", pool_spreads_a_run_as_single_sends_would},
        {"a full pool takes what it has room for", full_pool_takes_exactly_its_capacity},
        {"a pull pool admits a run up to its capacity", pull_pool_admits_a_run_up_to_its_capacity},
        {"kinds that route one by one take every message", one_by_one_kinds_take_every_message},
        {NULL, NULL},
    };
    return shoal_test_run("send_many", cases);
}
