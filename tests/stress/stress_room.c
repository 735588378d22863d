/* stress_room.c - waiting for room under load (core/actor/room.c, protocol
 * in room.h; forward pools in core/pool/forward.c). Every wait is bounded:
 * a lost wake-up fails a case at its deadline instead of hanging it.
 *   a. 8 producer actors send unique ids to one bounded actor (mailbox 1,
 *      2 and 4) whose handler sleeps at random moments; refused, each asks
 *      for ROOM and goes on only when it comes. Checked: every producer
 *      finishes; every id is handled exactly once; per producer, ROOMs ==
 *      refusals, each ROOM from its receiver, with SHOAL_OK, while it waited;
 *      no send result but SHOAL_OK / SHOAL_EFULL; no waiter left.
 *   b. The same into a forward pool (mailbox 1 per worker, refusal
 *      SHOAL_EBUSY) while a thread resizes it at random between 1 and 6;
 *      the producers wait halfway for its first GATE_RESIZES resizes, so
 *      at least that many come under traffic on any schedule.
 *   c. Threads with shoal_runtime_send_wait (10 s timeout) into a bounded
 *      actor and a forward pool, alongside producer actors: every
 *      send_wait returns SHOAL_OK; every id exactly once.
 *   d. Receivers stopped while producers (actors and threads) wait on
 *      them: each actor waiter gets exactly one ROOM with SHOAL_ENOPROC,
 *      each thread's send_wait returns SHOAL_ENOPROC; then new actors are
 *      spawned into the freed slots and sent to: no old waiter hears
 *      another ROOM, and no waiter of an old PID stays registered.
 *   e. Threads call send_wait with 1..5 ms timeouts in a loop against a
 *      receiver that stays full until each thread has seen TIMEOUTS_FULL
 *      of them time out: each returns SHOAL_ETIMEDOUT or
 *      SHOAL_OK; items handled == OKs + those queued before; afterwards no
 *      waiter for that receiver is registered.
 * Sizes scale with shoal_test_stress_scale(0.1).
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actor/room.h"
#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 30.0
#define MAXP 16u
#define MAXIDS (1u << 18)
#define THREAD_BASE (MAXIDS / 2) /* ids sent by threads start here */

enum { T_ITEM = 1, T_BLOCK = 2, T_GO = 3, T_AGAIN = 4 };
#define GATE_RESIZES 4 /* resizes a producer into a resized pool waits for halfway */

static unsigned char seen[MAXIDS];
static atomic_int got, entered, gate;
static atomic_int refusals[MAXP], rooms[MAXP], bad[MAXP], done[MAXP], enoproc[MAXP];
static uint32_t per_producer; /* ids each producer sends */
/* Case b: whether producers wait for the resizer halfway; its resizes, and
 * those begun before every producer was done. */
static atomic_int gated, resizes_done, resizes_under_traffic;

static void reset(void)
{
    memset(seen, 0, sizeof seen);
    atomic_store(&got, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    for (unsigned i = 0; i < MAXP; i++) {
        atomic_store(&refusals[i], 0);
        atomic_store(&rooms[i], 0);
        atomic_store(&bad[i], 0);
        atomic_store(&done[i], 0);
        atomic_store(&enoproc[i], 0);
    }
    atomic_store(&gated, 0);
    atomic_store(&resizes_done, 0);
    atomic_store(&resizes_under_traffic, 0);
}

static uint32_t scaled(uint32_t n)
{
    double v = n * shoal_test_stress_scale(0.1);
    return v < 20 ? 20 : (uint32_t)v;
}

/* The receiver: counts each id, sleeps 50..250 us on about one message in
 * 16 (by a hash of the id), blocks on T_BLOCK until the gate opens. */
static int sink_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->type == T_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
        return 0;
    }
    uint32_t i;
    if (msg->type == T_ITEM && msg->size == sizeof i) {
        memcpy(&i, msg->data, sizeof i);
        if (i < MAXIDS)
            __atomic_fetch_add(&seen[i], 1, __ATOMIC_RELAXED);
        atomic_fetch_add(&got, 1);
        uint32_t h = i * 2654435761u;
        if ((h >> 28) == 0) {
            struct timespec ts = {0, 50000L + (long)((h >> 8) % 200) * 1000L};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

static const shoal_behaviour_t sink = {.name = "sink", .handle_message = sink_message};

/* A producer: ids idx*per_producer .. +per_producer to `to`; refused, it
 * asks for ROOM and stops until one comes. Into a pool being resized (b),
 * one halfway through its ids waits for the resizer's first GATE_RESIZES
 * resizes, sending itself T_AGAIN meanwhile (it holds no thread): the
 * resizer is a thread of its own, and with 2 cores and 4 dispatcher
 * threads it may not run at all before the producers are done -- then the
 * case would have resized nothing under traffic. */
typedef struct {
    shoal_pid_t to;
    uint32_t idx;
} go_t;

typedef struct {
    shoal_pid_t to;
    uint32_t idx, next;
    bool waiting, over;
} producer_t;

static void produce(shoal_ctx_t *ctx, producer_t *pr)
{
    while (pr->next < per_producer) {
        if (atomic_load(&gated) && pr->next == per_producer / 2 &&
            atomic_load(&resizes_done) < GATE_RESIZES) {
            if (shoal_send(ctx, shoal_self(ctx), T_AGAIN, NULL, 0) != SHOAL_OK)
                atomic_fetch_add(&bad[pr->idx], 1);
            return;
        }
        uint32_t id = pr->idx * per_producer + pr->next;
        int rc = shoal_send(ctx, pr->to, T_ITEM, &id, sizeof id);
        if (rc == SHOAL_EFULL || rc == SHOAL_EBUSY) {
            atomic_fetch_add(&refusals[pr->idx], 1);
            int r = shoal_notify_room(ctx, pr->to);
            pr->waiting = r == SHOAL_OK;
            if (!pr->waiting)
                atomic_fetch_add(&bad[pr->idx], 1);
            return;
        }
        if (rc != SHOAL_OK) {
            atomic_fetch_add(&bad[pr->idx], 1);
            pr->over = true;
            return;
        }
        pr->next++;
    }
    pr->over = true;
    atomic_store(&done[pr->idx], 1);
}

static int prod_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    producer_t *pr = state;
    if (msg->kind == SHOAL_MSG_ROOM) {
        atomic_fetch_add(&rooms[pr->idx], 1);
        if (!pr->waiting || msg->from != pr->to || pr->over)
            atomic_fetch_add(&bad[pr->idx], 100);
        pr->waiting = false;
        if (msg->status == SHOAL_OK) {
            produce(ctx, pr);
        } else if (msg->status == SHOAL_ENOPROC) {
            atomic_fetch_add(&enoproc[pr->idx], 1);
            pr->over = true;
        } else {
            atomic_fetch_add(&bad[pr->idx], 10000);
        }
        return 0;
    }
    if (msg->type == T_AGAIN && !pr->waiting && !pr->over) {
        produce(ctx, pr);
        return 0;
    }
    go_t g;
    if (msg->type == T_GO && msg->size == sizeof g) {
        memcpy(&g, msg->data, sizeof g);
        pr->to = g.to;
        pr->idx = g.idx;
        produce(ctx, pr);
    }
    return 0;
}

static const shoal_behaviour_t producer = {
    .name = "producer", .state_size = sizeof(producer_t), .handle_message = prod_message};

static shoal_pid_t spawn_sink(shoal_runtime_t *rt, uint32_t limit)
{
    shoal_spawn_opts_t o = {.mailbox_limit = limit};
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &sink, NULL, &o, &pid), SHOAL_OK);
    return pid;
}

static shoal_pid_t spawn_pool(shoal_runtime_t *rt, uint32_t size)
{
    shoal_pool_spec_t sp;
    shoal_pool_spec_init(&sp);
    sp.worker = &sink;
    sp.size = size;
    sp.min_size = 1;
    sp.max_size = 8;
    sp.mailbox = 1;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &sp, &p), SHOAL_OK);
    return p;
}

static void start_producer(shoal_runtime_t *rt, shoal_pid_t to, uint32_t idx)
{
    shoal_pid_t pr = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &producer, NULL, NULL, &pr), SHOAL_OK);
    go_t g = {to, idx};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pr, T_GO, &g, sizeof g), SHOAL_OK);
}

static bool all_done(uint32_t from, uint32_t n)
{
    for (uint32_t i = from; i < from + n; i++)
        if (!atomic_load(&done[i]))
            return false;
    return true;
}

/* Producers from .. from+n all finished, each with ROOMs == refusals and
 * nothing bad; their ids each handled once. */
static void check_producers(uint32_t from, uint32_t n)
{
    for (uint32_t i = from; i < from + n; i++) {
        CU_ASSERT_EQUAL(atomic_load(&done[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&bad[i]), 0);
        CU_ASSERT_EQUAL(atomic_load(&rooms[i]), atomic_load(&refusals[i]));
        CU_ASSERT_EQUAL(atomic_load(&enoproc[i]), 0);
        if (atomic_load(&done[i]) != 1 || atomic_load(&bad[i]) != 0 ||
            atomic_load(&rooms[i]) != atomic_load(&refusals[i]))
            fprintf(stderr, "producer %u: done %d bad %d rooms %d refusals %d\n", i,
                    atomic_load(&done[i]), atomic_load(&bad[i]), atomic_load(&rooms[i]),
                    atomic_load(&refusals[i]));
    }
    uint32_t once = 0;
    for (uint32_t i = from * per_producer; i < (from + n) * per_producer; i++)
        once += __atomic_load_n(&seen[i], __ATOMIC_RELAXED) == 1;
    CU_ASSERT_EQUAL(once, n * per_producer);
}

/* ---- a. producers into a bounded actor -------------------------------------------- */

static void producers_into_a_bounded_actor(void)
{
    static const uint32_t limits[] = {1, 2, 4};
    for (unsigned k = 0; k < 3; k++) {
        reset();
        per_producer = scaled(4000);
        shoal_runtime_t *rt = shoal_test_runtime(4);
        shoal_pid_t s = spawn_sink(rt, limits[k]);
        for (uint32_t i = 0; i < 8; i++)
            start_producer(rt, s, i);
        SHOAL_TEST_WAIT_UNTIL(all_done(0, 8) && atomic_load(&got) == (int)(8 * per_producer),
                              WAIT_S);
        check_producers(0, 8);
        CU_ASSERT_EQUAL(atomic_load(&got), (int)(8 * per_producer));
        int total = 0;
        for (uint32_t i = 0; i < 8; i++)
            total += atomic_load(&refusals[i]);
        CU_ASSERT(total > 0); /* the case did exercise refusals */
        SHOAL_TEST_WAIT_UNTIL(shoal__room_count(rt, s) == 0, WAIT_S);
        CU_ASSERT_EQUAL(shoal__room_count(rt, s), 0);
        shoal_runtime_destroy(rt);
    }
}

/* ---- b. producers into a forward pool being resized ---------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    atomic_int stop;
    int resizes, errors;
} resizer_t;

static void *resizer_main(void *arg)
{
    resizer_t *r = arg;
    unsigned seed = 12345;
    while (!atomic_load(&r->stop)) {
        uint32_t size = 1 + (uint32_t)(rand_r(&seed) % 6);
        int rc = shoal_pool_set_size(r->rt, r->pool, size, 10000);
        if (rc < 0)
            r->errors++;
        r->resizes++;
        /* Counted under traffic before done: a producer held at the gate
         * goes on only after this resize is counted as under traffic. */
        if (!all_done(0, 8))
            atomic_fetch_add(&resizes_under_traffic, 1);
        atomic_fetch_add(&resizes_done, 1);
        struct timespec ts = {0, (long)(rand_r(&seed) % 3000) * 1000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void producers_into_a_resized_pool(void)
{
    reset();
    per_producer = scaled(3000);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn_pool(rt, 3);
    resizer_t r = {.rt = rt, .pool = p};
    atomic_store(&gated, 1);
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, resizer_main, &r), 0);
    for (uint32_t i = 0; i < 8; i++)
        start_producer(rt, p, i);
    SHOAL_TEST_WAIT_UNTIL(all_done(0, 8) && atomic_load(&got) == (int)(8 * per_producer), WAIT_S);
    atomic_store(&r.stop, 1);
    pthread_join(t, NULL);
    check_producers(0, 8);
    CU_ASSERT_EQUAL(atomic_load(&got), (int)(8 * per_producer));
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT(atomic_load(&resizes_under_traffic) >= GATE_RESIZES);
    CU_ASSERT_EQUAL(r.resizes, atomic_load(&resizes_done));
    SHOAL_TEST_WAIT_UNTIL(shoal__room_count(rt, p) == 0, WAIT_S);
    CU_ASSERT_EQUAL(shoal__room_count(rt, p), 0);
    shoal_runtime_destroy(rt);
}

/* ---- c. threads with send_wait alongside actors ---------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
    uint32_t first, n;
    uint64_t timeout_ms;
    int ok, enoproc, other;
    atomic_int timedout; /* read while it runs (e) */
} sender_t;

static void *sender_main(void *arg)
{
    sender_t *s = arg;
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t id = s->first + k;
        int rc = shoal_runtime_send_wait(s->rt, s->to, T_ITEM, &id, sizeof id, s->timeout_ms);
        if (rc == SHOAL_OK)
            s->ok++;
        else if (rc == SHOAL_ETIMEDOUT)
            atomic_fetch_add(&s->timedout, 1);
        else if (rc == SHOAL_ENOPROC)
            s->enoproc++;
        else
            s->other++;
    }
    return NULL;
}

static void threads_and_actors_together(void)
{
    reset();
    per_producer = scaled(3000);
    uint32_t nthread = scaled(2000);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t to[2] = {spawn_sink(rt, 2), spawn_pool(rt, 3)};
    sender_t s[4];
    pthread_t t[4];
    for (uint32_t i = 0; i < 4; i++) {
        s[i] = (sender_t){rt, to[i % 2], THREAD_BASE + i * nthread, nthread, 10000, 0, 0, 0, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, sender_main, &s[i]), 0);
    }
    for (uint32_t i = 0; i < 8; i++)
        start_producer(rt, to[i % 2], i);
    for (uint32_t i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    uint32_t total = 8 * per_producer + 4 * nthread;
    SHOAL_TEST_WAIT_UNTIL(all_done(0, 8) && atomic_load(&got) == (int)total, WAIT_S);
    check_producers(0, 8);
    for (uint32_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(s[i].ok, (int)nthread);
        CU_ASSERT_EQUAL(atomic_load(&s[i].timedout) + s[i].enoproc + s[i].other, 0);
    }
    uint32_t once = 0;
    for (uint32_t i = THREAD_BASE; i < THREAD_BASE + 4 * nthread; i++)
        once += __atomic_load_n(&seen[i], __ATOMIC_RELAXED) == 1;
    CU_ASSERT_EQUAL(once, 4 * nthread);
    CU_ASSERT_EQUAL(atomic_load(&got), (int)total);
    for (int i = 0; i < 2; i++) {
        SHOAL_TEST_WAIT_UNTIL(shoal__room_count(rt, to[i]) == 0, WAIT_S);
        CU_ASSERT_EQUAL(shoal__room_count(rt, to[i]), 0);
    }
    shoal_runtime_destroy(rt);
}

/* ---- d. receivers that end while waited on --------------------------------------------- */

/* Whether producers 0 .. n-1 each heard SHOAL_ENOPROC. */
static bool all_told(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load(&enoproc[i]) != 1)
            return false;
    return true;
}

#define NSINK 3u
#define PER_SINK 3u /* producer actors per stopped sink */

static void receivers_end_while_waited_on(void)
{
    unsigned rounds = scaled(200) / 20 + 1;
    for (unsigned round = 0; round < rounds; round++) {
        reset();
        per_producer = 1000; /* more than ever fit: each is refused */
        shoal_runtime_t *rt = shoal_test_runtime(6);
        shoal_pid_t s[NSINK];
        uint32_t one = MAXIDS - 1; /* fills each sink; counted, not checked */
        for (unsigned i = 0; i < NSINK; i++) {
            s[i] = spawn_sink(rt, 1);
            CU_ASSERT_EQUAL(shoal_runtime_send(rt, s[i], T_BLOCK, NULL, 0), SHOAL_OK);
        }
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&entered) == (int)NSINK, WAIT_S);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), (int)NSINK);
        for (unsigned i = 0; i < NSINK; i++)
            CU_ASSERT_EQUAL(shoal_runtime_send(rt, s[i], T_ITEM, &one, sizeof one), SHOAL_OK);
        for (unsigned i = 0; i < NSINK; i++)
            for (unsigned k = 0; k < PER_SINK; k++)
                start_producer(rt, s[i], i * PER_SINK + k);
        sender_t w[NSINK];
        pthread_t t[NSINK];
        for (unsigned i = 0; i < NSINK; i++) {
            w[i] = (sender_t){rt, s[i], THREAD_BASE + i, 1, 20000, 0, 0, 0, 0};
            CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, sender_main, &w[i]), 0);
        }
        /* Every producer and thread registered. */
        bool all = false;
        double end = shoal_test_now() + WAIT_S;
        while (!all && shoal_test_now() < end) {
            all = true;
            for (unsigned i = 0; i < NSINK; i++)
                all = all && shoal__room_count(rt, s[i]) == PER_SINK + 1;
            if (!all)
                shoal_test_nap();
        }
        CU_ASSERT_FATAL(all);
        for (unsigned i = 0; i < NSINK; i++)
            CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, s[i]), SHOAL_OK);
        atomic_store(&gate, 1); /* the STOPs are seen once the handlers return */
        const uint32_t np = NSINK * PER_SINK;
        SHOAL_TEST_WAIT_UNTIL(all_told(np), WAIT_S);
        for (unsigned i = 0; i < NSINK; i++) {
            pthread_join(t[i], NULL);
            CU_ASSERT_EQUAL(w[i].enoproc, 1);
        }
        /* New actors take the freed slots and are sent to (and may get
         * waiters of their own): no old waiter hears from them. */
        for (unsigned k = 0; k < 32; k++) {
            shoal_pid_t n = spawn_sink(rt, 1);
            uint32_t id = THREAD_BASE + 100 + k;
            (void)shoal_runtime_send(rt, n, T_ITEM, &id, sizeof id);
            (void)shoal_runtime_send(rt, n, T_ITEM, &id, sizeof id);
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        for (uint32_t i = 0; i < np; i++) {
            CU_ASSERT_EQUAL(atomic_load(&enoproc[i]), 1);
            CU_ASSERT_EQUAL(atomic_load(&rooms[i]), 1);
            CU_ASSERT_EQUAL(atomic_load(&refusals[i]), 1);
            CU_ASSERT_EQUAL(atomic_load(&bad[i]), 0);
        }
        for (unsigned i = 0; i < NSINK; i++)
            CU_ASSERT_EQUAL(shoal__room_count(rt, s[i]), 0);
        shoal_runtime_destroy(rt);
    }
}

/* ---- e. short timeouts against a receiver that stays full ------------------------------ */

#define TIMEOUTS_FULL 5 /* send_waits each sender has seen time out before room comes */

static void short_timeouts_leave_nobody(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t s = spawn_sink(rt, 2);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_BLOCK, NULL, 0), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&entered) == 1, WAIT_S);
    uint32_t pre = MAXIDS - 1;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &pre, sizeof pre), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &pre, sizeof pre), SHOAL_OK);
    uint32_t n = scaled(400);
    sender_t w[3];
    pthread_t t[3];
    for (unsigned i = 0; i < 3; i++) {
        /* timeouts 1..5 ms: one sender_t per timeout step, n/5 each */
        w[i] = (sender_t){rt, s, THREAD_BASE + i * n, n, 1 + i * 2, 0, 0, 0, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, sender_main, &w[i]), 0);
    }
    /* Full until every sender has timed out TIMEOUTS_FULL times (each of
     * its send_waits does while the receiver is held): a 200 ms sleep here
     * left it to the scheduler whether the sender threads ran at all in it
     * -- if none had, nothing timed out. */
    bool all = false;
    double end = shoal_test_now() + WAIT_S;
    while (!all && shoal_test_now() < end) {
        all = true;
        for (unsigned i = 0; i < 3; i++)
            all = all && atomic_load(&w[i].timedout) >= TIMEOUTS_FULL;
        if (!all)
            shoal_test_nap();
    }
    CU_ASSERT(all);
    atomic_store(&gate, 1);
    int oks = 0;
    for (unsigned i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        CU_ASSERT_EQUAL(w[i].ok + atomic_load(&w[i].timedout), (int)n);
        CU_ASSERT_EQUAL(w[i].enoproc + w[i].other, 0);
        CU_ASSERT(atomic_load(&w[i].timedout) >= TIMEOUTS_FULL);
        oks += w[i].ok;
    }
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&got) == oks + 2, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&got), oks + 2);
    int timedout =
        atomic_load(&w[0].timedout) + atomic_load(&w[1].timedout) + atomic_load(&w[2].timedout);
    CU_ASSERT(timedout >= 3 * TIMEOUTS_FULL); /* the receiver was full for a while */
    CU_ASSERT_EQUAL(shoal__room_count(rt, s), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"8 producers into a bounded actor (mailbox 1, 2, 4)", producers_into_a_bounded_actor},
        {"8 producers into a forward pool being resized", producers_into_a_resized_pool},
        {"send_wait threads alongside producer actors", threads_and_actors_together},
        {"receivers that end while waited on", receivers_end_while_waited_on},
        {"short send_wait timeouts leave no waiter", short_timeouts_leave_nobody},
        {NULL, NULL}};
    return shoal_test_run("stress_room", cases);
}
