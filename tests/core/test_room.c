/* test_room.c - waiting for room without polling (core/actor/room.c, its
 * protocol in room.h; forward pools' in core/pool/forward.c):
 *   - a producer actor refused by a bounded actor asks for ROOM and gets
 *     exactly one per refusal, only once the receiver has drained (none
 *     while it is stuck), and every item arrives once; no retry polls;
 *   - a receiver that ends while waited on tells its waiter SHOAL_ENOPROC;
 *   - shoal_runtime_send_wait from a thread: times out after its timeout
 *     (and leaves no waiter behind), returns once a stuck receiver drains,
 *     returns SHOAL_ENOPROC when the receiver ends; into a full forward
 *     pool and a full pull pool alike; refused on a worker thread;
 *   - the room flag, in the limit's word, is never read as part of the
 *     limit (inspect, refusals).
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "actor/room.h"
#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u
#define NITEMS 3000u

enum { T_ITEM = 1, T_BLOCK = 2, T_GO = 3 };

static atomic_int got, entered, gate, refusals, rooms, early, prod_done, room_status;
static unsigned char seen[NITEMS];

static void reset(void)
{
    memset(seen, 0, sizeof seen);
    atomic_store(&got, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    atomic_store(&refusals, 0);
    atomic_store(&rooms, 0);
    atomic_store(&early, 0);
    atomic_store(&prod_done, 0);
    atomic_store(&room_status, 1);
}

/* The receiver: counts items, blocks on T_BLOCK until the gate opens. */
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
        if (i < NITEMS)
            __atomic_fetch_add(&seen[i], 1, __ATOMIC_RELAXED);
        atomic_fetch_add(&got, 1);
    }
    return 0;
}

static const shoal_behaviour_t sink = {.name = "sink", .handle_message = sink_message};

/* The producer: NITEMS items to `to`; refused, it asks for ROOM and stops
 * until it comes (never a retry without one). */
typedef struct {
    shoal_pid_t to;
    uint32_t next;
    bool waiting;
} producer_t;

static void produce(shoal_ctx_t *ctx, producer_t *pr)
{
    while (pr->next < NITEMS) {
        int rc = shoal_send(ctx, pr->to, T_ITEM, &pr->next, sizeof pr->next);
        if (rc == SHOAL_EFULL || rc == SHOAL_EBUSY) {
            atomic_fetch_add(&refusals, 1);
            pr->waiting = shoal_notify_room(ctx, pr->to) == SHOAL_OK;
            if (!pr->waiting)
                atomic_fetch_add(&early, 1000); /* asserted: never */
            return;
        }
        if (rc != SHOAL_OK) {
            atomic_fetch_add(&early, 1000);
            return;
        }
        pr->next++;
    }
    atomic_store(&prod_done, 1);
}

static int prod_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    producer_t *pr = state;
    if (msg->kind == SHOAL_MSG_ROOM) {
        atomic_fetch_add(&rooms, 1);
        atomic_store(&room_status, msg->status);
        if (!pr->waiting || msg->from != pr->to)
            atomic_fetch_add(&early, 1);
        pr->waiting = false;
        if (msg->status == SHOAL_OK)
            produce(ctx, pr);
        return 0;
    }
    if (msg->type == T_GO && msg->size == sizeof pr->to) {
        memcpy(&pr->to, msg->data, sizeof pr->to);
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

static shoal_pid_t start_producer(shoal_runtime_t *rt, shoal_pid_t to)
{
    shoal_pid_t pr = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &producer, NULL, NULL, &pr), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pr, T_GO, &to, sizeof to), SHOAL_OK);
    return pr;
}

/* Waiters for room in receiver, and its flag agrees (room.h). */
static size_t waiters_of(shoal_runtime_t *rt, shoal_pid_t receiver)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(receiver));
    size_t n = shoal__room_count(rt, receiver);
    if (n != 0 && !(atomic_load(&a->limit) & SHOAL_LIMIT_ROOM))
        return 1000; /* a waiter without the flag: it would never be told */
    return n;
}

/* ---- actors waiting ------------------------------------------------------------ */

/* A sink with a mailbox of 4, stuck on its first message: the producer is
 * refused and waits; no ROOM while the sink is stuck; the gate opens: one
 * ROOM per refusal, every item once. */
static void a_producer_waits_for_a_bounded_actor(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t s = spawn_sink(rt, 4);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    start_producer(rt, s);
    WAIT_UNTIL(atomic_load(&refusals) == 1);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&refusals), 1); /* it waits: no retry */
    CU_ASSERT_EQUAL(atomic_load(&rooms), 0);    /* nor a ROOM while the sink is stuck */
    CU_ASSERT_EQUAL(waiters_of(rt, s), 1);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&prod_done) == 1 && atomic_load(&got) == (int)NITEMS);
    CU_ASSERT_EQUAL(atomic_load(&prod_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&got), (int)NITEMS);
    CU_ASSERT_EQUAL(atomic_load(&rooms), atomic_load(&refusals));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    CU_ASSERT_EQUAL(atomic_load(&room_status), SHOAL_OK);
    int once = 0;
    for (uint32_t i = 0; i < NITEMS; i++)
        once += seen[i] == 1;
    CU_ASSERT_EQUAL(once, (int)NITEMS);
    WAIT_UNTIL(waiters_of(rt, s) == 0);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    shoal_runtime_destroy(rt);
}

/* A receiver that ends while waited on: ROOM with SHOAL_ENOPROC. */
static void a_receiver_that_ends_tells_enoproc(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t pr = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &producer, NULL, NULL, &pr), SHOAL_OK);
    /* The producer asks through a sink it is refused by: stuck, mailbox 1. */
    shoal_pid_t s = spawn_sink(rt, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pr, T_GO, &s, sizeof s), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&refusals) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, s), SHOAL_OK);
    atomic_store(&gate, 1); /* its handler returns; the STOP ends it */
    WAIT_UNTIL(atomic_load(&rooms) == 1);
    CU_ASSERT_EQUAL(atomic_load(&rooms), 1);
    CU_ASSERT_EQUAL(atomic_load(&room_status), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    shoal_runtime_destroy(rt);
}

/* ---- threads waiting (send_wait) ----------------------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
    uint64_t timeout_ms;
    int rc;
    double secs;
} waiting_t;

static void *send_wait_main(void *arg)
{
    waiting_t *w = arg;
    uint32_t i = 0;
    double t0 = shoal_test_now();
    w->rc = shoal_runtime_send_wait(w->rt, w->to, T_ITEM, &i, sizeof i, w->timeout_ms);
    w->secs = shoal_test_now() - t0;
    return NULL;
}

/* A sink of mailbox 2, stuck, full: send_wait times out after its 20 ms,
 * never sooner, the median of 11 within 2 ms after (10 ms in a sanitizer
 * build), and leaves no waiter behind; with 10 s, it returns once the gate
 * opens (50 ms later), its item delivered. */
static void send_wait_times_out_or_gets_in(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t s = spawn_sink(rt, 2);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    uint32_t i = 1;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &i, sizeof i), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &i, sizeof i), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &i, sizeof i), SHOAL_EFULL);
    enum { TRIES = 11 };
    double took[TRIES];
    for (int k = 0; k < TRIES; k++) {
        waiting_t w = {rt, s, 20, 0, 0};
        send_wait_main(&w);
        CU_ASSERT_EQUAL(w.rc, SHOAL_ETIMEDOUT);
        CU_ASSERT(w.secs >= 0.020);
        CU_ASSERT_EQUAL(shoal__room_count(rt, s), 0); /* it took itself off */
        took[k] = w.secs;
    }
    double median = shoal_test_median(took, TRIES);
    CU_ASSERT(median < 0.020 + (shoal_test_sanitized() ? 0.010 : 0.002));
    printf("\n    a 20 ms send_wait returned after %.2f ms (median of %d; %.2f..%.2f) ",
           median * 1e3, TRIES, took[0] * 1e3, took[TRIES - 1] * 1e3);
    waiting_t w2 = {rt, s, 10000, 0, 0};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, send_wait_main, &w2), 0);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    atomic_store(&gate, 1);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(w2.rc, SHOAL_OK);
    CU_ASSERT(w2.secs >= 0.04);
    CU_ASSERT(w2.secs < 5.0);
    WAIT_UNTIL(atomic_load(&got) == 3);
    CU_ASSERT_EQUAL(atomic_load(&got), 3);
    CU_ASSERT_EQUAL(seen[0], 1); /* send_wait's item */
    shoal_runtime_destroy(rt);
}

/* The receiver ends while a thread waits on it: SHOAL_ENOPROC. */
static void send_wait_hears_the_receiver_end(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t s = spawn_sink(rt, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    uint32_t i = 1;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &i, sizeof i), SHOAL_OK);
    waiting_t w = {rt, s, 10000, 0, 0};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, send_wait_main, &w), 0);
    WAIT_UNTIL(waiters_of(rt, s) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, s), SHOAL_OK);
    atomic_store(&gate, 1);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(w.rc, SHOAL_ENOPROC);
    CU_ASSERT(w.secs < 5.0);
    shoal_runtime_destroy(rt);
}

/* A forward pool of one worker (mailbox 1) and a pull pool (buffer 0,
 * prefetch 1), each full behind a stuck worker: send_wait gets in once the
 * gate opens. */
static void send_wait_into_full_pools(void)
{
    for (int kind = 0; kind < 2; kind++) {
        reset();
        shoal_runtime_t *rt = shoal_test_runtime(4);
        shoal_pool_spec_t sp;
        shoal_pool_spec_init(&sp);
        sp.worker = &sink;
        sp.size = 1;
        sp.mailbox = 1;
        sp.kind = kind == 0 ? SHOAL_POOL_KIND_FORWARD : SHOAL_POOL_KIND_PULL;
        sp.buffer = 0;
        shoal_pid_t p;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &sp, &p), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_BLOCK, NULL, 0), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&entered) == 1);
        uint32_t i = 1;
        if (kind == 0) /* the forward worker's mailbox: now full */
            CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_ITEM, &i, sizeof i), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_ITEM, &i, sizeof i), SHOAL_EBUSY);
        waiting_t w = {rt, p, 10000, 0, 0};
        pthread_t t;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, send_wait_main, &w), 0);
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
        atomic_store(&gate, 1);
        pthread_join(t, NULL);
        CU_ASSERT_EQUAL(w.rc, SHOAL_OK);
        WAIT_UNTIL(__atomic_load_n(&seen[0], __ATOMIC_RELAXED) == 1);
        CU_ASSERT_EQUAL(__atomic_load_n(&seen[0], __ATOMIC_RELAXED), 1);
        shoal_runtime_destroy(rt);
    }
}

/* From a worker thread send_wait is refused: an actor asks for ROOM. */
static int worker_tries(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    static shoal_runtime_t *rt_;
    memcpy(&rt_, msg->data, sizeof rt_);
    uint32_t i = 0;
    atomic_store(&room_status,
                 shoal_runtime_send_wait(rt_, SHOAL_PID_NONE, T_ITEM, &i, sizeof i, 1));
    return 0;
}
static const shoal_behaviour_t tries = {.name = "tries", .handle_message = worker_tries};

static void send_wait_is_for_threads(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &tries, NULL, NULL, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, &rt, sizeof rt), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&room_status) != 1);
    CU_ASSERT_EQUAL(atomic_load(&room_status), SHOAL_EINVAL);
    shoal_runtime_destroy(rt);
}

/* A forward pool of one worker (mailbox 1), stuck and full: the producer
 * waits. The pool grows to 2: the new worker is room that no drain
 * announces -- the pool's actor tells, and the producer finishes its items
 * through the new worker while the old one is still stuck. */
static void a_new_worker_is_room(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t sp;
    shoal_pool_spec_init(&sp);
    sp.worker = &sink;
    sp.size = 1;
    sp.mailbox = 1;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &sp, &p), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    start_producer(rt, p);
    WAIT_UNTIL(atomic_load(&refusals) == 1 && waiters_of(rt, p) == 1);
    CU_ASSERT_EQUAL(atomic_load(&rooms), 0);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, TMO), 2);
    WAIT_UNTIL(atomic_load(&prod_done) == 1);
    CU_ASSERT_EQUAL(atomic_load(&prod_done), 1); /* the old worker is still stuck */
    CU_ASSERT_EQUAL(atomic_load(&entered), 1);
    CU_ASSERT_EQUAL(atomic_load(&rooms), atomic_load(&refusals));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&got) == (int)NITEMS);
    CU_ASSERT_EQUAL(atomic_load(&got), (int)NITEMS);
    shoal_runtime_destroy(rt);
}

/* A forward pool whose one worker is a pool of one worker (mailbox 1),
 * stuck and full: the producer waits -- no ROOM while the leaf is stuck
 * (a nested pool's own mailbox is no room), then one per refusal once it
 * drains. */
static void a_pool_of_pools_tells_from_its_leaves(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t outer, inner;
    shoal_pool_spec_init(&inner);
    inner.worker = &sink;
    inner.size = 1;
    inner.mailbox = 1;
    shoal_pool_spec_init(&outer);
    outer.worker_pool = &inner;
    outer.size = 1;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &outer, &p), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    start_producer(rt, p);
    WAIT_UNTIL(atomic_load(&refusals) >= 1);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&refusals), 1); /* it waits: no ROOM, no retry */
    CU_ASSERT_EQUAL(atomic_load(&rooms), 0);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&prod_done) == 1 && atomic_load(&got) == (int)NITEMS);
    CU_ASSERT_EQUAL(atomic_load(&got), (int)NITEMS);
    CU_ASSERT_EQUAL(atomic_load(&rooms), atomic_load(&refusals));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    shoal_runtime_destroy(rt);
}

/* The room flag shares the limit's word (room.h): with a waiter
 * registered, the actor's limit reads as it is -- in inspect, and in the
 * refusals (a mailbox of 3 still takes exactly 3). */
static void the_limit_reads_without_the_flag(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t s = spawn_sink(rt, 3);
    shoal_pid_t waiter = spawn_sink(rt, 0); /* a live one: an ended waiter is taken off */
    CU_ASSERT_EQUAL_FATAL(shoal__room_add(rt, s, waiter, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 1);
    shoal_answer_t in;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, s, TMO, &in), SHOAL_OK);
    CU_ASSERT_EQUAL(in.status, SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL(in.data != NULL ? strstr(in.data, "\"mailbox_limit\":3") : NULL);
    shoal_answer_release(&in);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    uint32_t i = 1;
    for (int k = 0; k < 3; k++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &i, sizeof i), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, T_ITEM, &i, sizeof i), SHOAL_EFULL);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&got) == 3 && waiters_of(rt, s) == 0); /* its drain told */
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a producer waits for a bounded actor", a_producer_waits_for_a_bounded_actor},
        {"a receiver that ends tells ENOPROC", a_receiver_that_ends_tells_enoproc},
        {"send_wait times out or gets in", send_wait_times_out_or_gets_in},
        {"send_wait hears the receiver end", send_wait_hears_the_receiver_end},
        {"send_wait into full pools", send_wait_into_full_pools},
        {"send_wait is for threads", send_wait_is_for_threads},
        {"the limit reads without the flag", the_limit_reads_without_the_flag},
        {"a new worker is room", a_new_worker_is_room},
        {"a pool of pools tells from its leaves", a_pool_of_pools_tells_from_its_leaves},
        {NULL, NULL}};
    return shoal_test_run("room", cases);
}
