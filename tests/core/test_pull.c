/* test_pull.c - pull pools (core/pool/pull.c): the exact capacity rule
 * (buffer + size x prefetch) and its refusals, no member ever holding more
 * than prefetch, no short job waiting behind a slow one while a member is
 * idle, calls answered by the member that takes them, live prefetch and
 * buffer, drain emptying the buffer first, a member that dies losing only
 * what it held, idle members woken without a lost wake-up, bad specs, and
 * a 1.3 program's smaller spec.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them. Where a test needs items to stay
 * queued, members block on a gate the test opens.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "actor/ctx.h"
#include "pool/pull.h"
#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u
#define THREADS 6u

enum { T_JOB = 1, T_WHO = 2 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2, A_SLEEP = 4, A_FAIL = 8, A_FIRST = 16 };
/* A_PANIC and A_FAIL: on every attempt, or with A_FIRST only on the first. */

typedef struct {
    uint32_t seq, act;
    uint32_t sleep_ms;
    double sent; /* shoal_test_now() at the send */
} job_t;

#define MAXSEQ 4096
static _Atomic shoal_pid_t owner[MAXSEQ];
static atomic_int seen[MAXSEQ];
static _Atomic double started_at[MAXSEQ], ended_at[MAXSEQ];
static atomic_int done, entered, gate, max_held, over_held;
static _Atomic uint32_t prefetch_now;

static void reset(void)
{
    for (unsigned i = 0; i < MAXSEQ; i++) {
        atomic_store(&owner[i], SHOAL_PID_NONE);
        atomic_store(&seen[i], 0);
        atomic_store(&started_at[i], 0.0);
        atomic_store(&ended_at[i], 0.0);
    }
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    atomic_store(&max_held, 0);
    atomic_store(&over_held, 0);
    atomic_store(&prefetch_now, 1);
}

static void sleep_ms(uint32_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    job_t j;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != T_JOB || msg->size != sizeof j)
        return 0;
    memcpy(&j, msg->data, sizeof j);
    /* What this member holds, the item in hand included (debug counter). */
    int held = (int)shoal__pull_held(ctx);
    int m = atomic_load(&max_held);
    while (held > m && !atomic_compare_exchange_weak(&max_held, &m, held))
        ;
    if ((uint32_t)held > atomic_load(&prefetch_now) || held < 1)
        atomic_fetch_add(&over_held, 1);
    int attempt = 1;
    if (j.seq < MAXSEQ) {
        atomic_store(&owner[j.seq], shoal_self(ctx));
        atomic_store(&started_at[j.seq], shoal_test_now());
        attempt = atomic_fetch_add(&seen[j.seq], 1) + 1;
    }
    bool now = !(j.act & A_FIRST) || attempt == 1;
    if (j.act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (j.act & A_SLEEP)
        sleep_ms(j.sleep_ms);
    if ((j.act & A_PANIC) && now)
        shoal_panic(ctx, "test panic on job %u", (unsigned)j.seq);
    if ((j.act & A_FAIL) && now)
        return 7;
    if (j.seq < MAXSEQ)
        atomic_store(&ended_at[j.seq], shoal_test_now());
    atomic_fetch_add(&done, 1);
    return 0;
}

typedef struct {
    shoal_pid_t self, from;
    shoal_ref_t ref;
} who_t;

static int wk_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    who_t w = {shoal_self(ctx), msg->from, msg->ref};
    return shoal_reply_set(reply, T_WHO, &w, sizeof w);
}

static const shoal_behaviour_t wk = {
    .name = "wk", .handle_message = wk_message, .handle_call = wk_call};

static void pull_spec(shoal_pool_spec_t *s, uint32_t size, uint32_t prefetch, uint32_t buffer)
{
    shoal_pool_spec_init(s);
    s->name = "pull";
    s->worker = &wk;
    s->kind = SHOAL_POOL_KIND_PULL;
    s->size = s->min_size = size;
    s->prefetch = prefetch;
    s->buffer = buffer;
    atomic_store(&prefetch_now, prefetch);
}

static shoal_pid_t spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, s, &p), SHOAL_OK);
    return p;
}

static int job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t seq, uint32_t act, uint32_t ms)
{
    job_t j = {seq, act, ms, shoal_test_now()};
    return shoal_runtime_send(rt, to, T_JOB, &j, sizeof j);
}

/* ---- capacity ---------------------------------------------------------------- */

/* Two members block on their first item; the buffer then takes exactly 10
 * more: 12 = buffer + size x prefetch accepted, every further send refused
 * with SHOAL_EBUSY and counted. The gate opens: all 12 are handled once. */
static void capacity_is_buffer_plus_size_times_prefetch(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 2, 1, 10);
    shoal_pid_t p = spawn(rt, &s);
    CU_ASSERT_EQUAL(job(rt, p, 0, A_BLOCK, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, 1, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 2);
    int ok = 2, busy = 0;
    for (uint32_t i = 2; i < 40; i++) {
        int rc = job(rt, p, i, A_OK, 0);
        ok += rc == SHOAL_OK;
        busy += rc == SHOAL_EBUSY;
    }
    CU_ASSERT_EQUAL(ok, 12);
    CU_ASSERT_EQUAL(busy, 28);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.kind, SHOAL_POOL_KIND_PULL);
    CU_ASSERT_EQUAL(st.prefetch, 1);
    CU_ASSERT_EQUAL(st.buffer, 10);
    CU_ASSERT_EQUAL(st.buffer_depth, 10);
    CU_ASSERT_EQUAL(st.demand, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded, 12);
    CU_ASSERT_EQUAL(st.messages_unhandled, 28);
    CU_ASSERT_EQUAL(st.delivered, 2);
    CU_ASSERT_EQUAL(st.queue_depth, 12);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 12);
    CU_ASSERT_EQUAL(atomic_load(&done), 12);
    for (uint32_t i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen[i]), 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 12);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_handled, 12);
    CU_ASSERT_EQUAL(st.delivered, 12);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.buffer_depth, 0);
    CU_ASSERT_EQUAL(st.demand, 2);
    shoal_runtime_destroy(rt);
}

/* SET_PREFETCH and SET_BUFFER change the capacity at once: 3 members with
 * prefetch 2 and buffer 5 take 3 x 2 + 5 = 11. */
static void prefetch_and_buffer_change_live(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 3, 1, 100);
    shoal_pid_t p = spawn(rt, &s);
    uint32_t v = 2;
    shoal_answer_t a;
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, p, SHOAL_POOL_SET_PREFETCH, &v, sizeof v, TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    atomic_store(&prefetch_now, 2);
    v = 5;
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, p, SHOAL_POOL_SET_BUFFER, &v, sizeof v, TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    v = 0; /* prefetch 0 is refused */
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, p, SHOAL_POOL_SET_PREFETCH, &v, sizeof v, TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EINVAL);
    shoal_answer_release(&a);
    int ok = 0;
    for (uint32_t i = 0; i < 30; i++)
        ok += job(rt, p, i, A_BLOCK, 0) == SHOAL_OK;
    CU_ASSERT_EQUAL(ok, 11);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.prefetch, 2);
    CU_ASSERT_EQUAL(st.buffer, 5);
    CU_ASSERT_EQUAL(st.messages_unhandled, 19);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 11);
    CU_ASSERT_EQUAL(atomic_load(&done), 11);
    CU_ASSERT_EQUAL(atomic_load(&over_held), 0);
    /* A forward pool has neither. */
    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &wk;
    shoal_pid_t fp = spawn(rt, &f);
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, fp, SHOAL_POOL_SET_BUFFER, &v, sizeof v, TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_ENOTSUP);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, fp).kind, SHOAL_POOL_KIND_FORWARD);
    shoal_runtime_destroy(rt);
}

/* ---- demand --------------------------------------------------------------------- */

/* 4 members, prefetch 3, 3000 items from two threads while they run: no
 * member ever holds more than 3 (checked in every handler), each item is
 * handled once. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t p;
    uint32_t from, n;
    int refused;
} feeder_t;

static void *feed(void *arg)
{
    feeder_t *f = arg;
    for (uint32_t i = f->from; i < f->from + f->n; i++) {
        int rc;
        while ((rc = job(f->rt, f->p, i, A_OK, 0)) == SHOAL_EBUSY) {
            f->refused++;
            shoal_test_nap();
        }
        if (rc != SHOAL_OK)
            break;
    }
    return NULL;
}

static void demand_never_exceeds_prefetch(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 4, 3, 16);
    shoal_pid_t p = spawn(rt, &s);
    feeder_t f[2] = {{rt, p, 0, 1500, 0}, {rt, p, 1500, 1500, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, feed, &f[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    WAIT_UNTIL(atomic_load(&done) == 3000);
    CU_ASSERT_EQUAL(atomic_load(&done), 3000);
    int once = 0;
    for (uint32_t i = 0; i < 3000; i++)
        once += atomic_load(&seen[i]) == 1;
    CU_ASSERT_EQUAL(once, 3000);
    CU_ASSERT_EQUAL(atomic_load(&over_held), 0);
    CU_ASSERT(atomic_load(&max_held) >= 1 && atomic_load(&max_held) <= 3);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 3000);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 3000);
    CU_ASSERT_EQUAL(st.messages_handled, 3000);
    CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)(f[0].refused + f[1].refused));
    CU_ASSERT_EQUAL(st.delivered, 3000);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

/* ---- uneven jobs ----------------------------------------------------------------- */

/* One 300 ms job, then 90 jobs of 1 ms on 4 members with prefetch 1: the
 * member with the slow job starts no other while it runs, and the short
 * ones are all done long before it ends (3 members: ~30 ms of work). A
 * forward pool would queue a quarter of them behind the slow job. */
static void no_item_waits_behind_a_slow_one(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 4, 1, 256);
    shoal_pid_t p = spawn(rt, &s);
    CU_ASSERT_EQUAL(job(rt, p, 0, A_SLEEP, 300), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&seen[0]) == 1);
    for (uint32_t i = 1; i <= 90; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, A_SLEEP, 1), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&done) == 91);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&done), 91);
    shoal_pid_t slow = atomic_load(&owner[0]);
    double slow_start = atomic_load(&started_at[0]), slow_end = atomic_load(&ended_at[0]);
    int on_slow = 0, after_slow = 0;
    for (uint32_t i = 1; i <= 90; i++) {
        double st = atomic_load(&started_at[i]);
        on_slow += atomic_load(&owner[i]) == slow && st > slow_start && st < slow_end;
        after_slow += atomic_load(&ended_at[i]) > slow_end;
    }
    CU_ASSERT_EQUAL(on_slow, 0);
    CU_ASSERT_EQUAL(after_slow, 0);
    shoal_runtime_destroy(rt);
}

/* ---- calls and drain ----------------------------------------------------------- */

/* A call is answered by the member that took it, straight to the caller:
 * the member saw the caller's PID and ref. */
static void calls_are_answered_by_the_member(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 3, 1, 8);
    shoal_pid_t p = spawn(rt, &s);
    for (int i = 0; i < 50; i++) {
        shoal_answer_t a;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, p, T_WHO, NULL, 0, TMO, &a), SHOAL_OK);
        CU_ASSERT_EQUAL(a.status, SHOAL_OK);
        who_t w;
        CU_ASSERT_EQUAL_FATAL(a.size, sizeof w);
        memcpy(&w, a.data, sizeof w);
        CU_ASSERT_NOT_EQUAL(w.self, p);
        CU_ASSERT_NOT_EQUAL(w.from, SHOAL_PID_NONE);
        shoal_answer_release(&a);
    }
    shoal_runtime_destroy(rt);
}

/* Drain: nothing new is taken (SHOAL_ENOPROC), everything in the buffer is
 * still handled, then the pool ends. */
static void drain_empties_the_buffer_first(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 2, 1, 500);
    shoal_pid_t p = spawn(rt, &s);
    CU_ASSERT_EQUAL(job(rt, p, 0, A_BLOCK, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, 1, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    for (uint32_t i = 2; i < 402; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, A_OK, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    /* Until the drain has begun, sends are still taken while there is room. */
    int late = 0, rc;
    double end = shoal_test_now() + WAIT_S;
    while ((rc = job(rt, p, 9999, A_OK, 0)) != SHOAL_ENOPROC && shoal_test_now() < end) {
        late += rc == SHOAL_OK;
        shoal_test_nap();
    }
    CU_ASSERT_EQUAL(rc, SHOAL_ENOPROC);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 402 + late);
    CU_ASSERT_EQUAL(atomic_load(&done), 402 + late);
    WAIT_UNTIL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_STATS, NULL, 0) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_STATS, NULL, 0), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- faults ------------------------------------------------------------------------ */

/* A member that panics loses the one item it held (failed); the buffer's
 * other items are handled by the rest and by its replacement. */
static void a_dying_member_loses_only_what_it_held(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 2, 1, 300);
    shoal_pid_t p = spawn(rt, &s);
    for (uint32_t i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, i % 50 == 7 ? A_PANIC : A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&done) == 196);
    CU_ASSERT_EQUAL(atomic_load(&done), 196);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_failed == 4 &&
               shoal_test_pool_stats(rt, p).messages_handled == 196);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 200);
    CU_ASSERT_EQUAL(st.messages_handled, 196);
    CU_ASSERT_EQUAL(st.messages_failed, 4);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.worker_restarts, 4);
    for (uint32_t i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(atomic_load(&seen[i]), 1);
    shoal_runtime_destroy(rt);
}

/* redeliver 2: jobs that fail or panic on their first attempt are handled
 * successfully on the second, each exactly once; jobs that always fail go
 * to the dead letter after 1 + 2 attempts, with their sender, type and
 * payload. The counts are exact and the ledger balances:
 * received = handled + failed + dead-lettered. */
static _Atomic uint64_t dl_seen;
static atomic_int dl_bad;
static int dl_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    job_t j;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != T_JOB || msg->size != sizeof j ||
        msg->from != SHOAL_PID_NONE || msg->ref != 0) {
        atomic_fetch_add(&dl_bad, 1);
        return 0;
    }
    memcpy(&j, msg->data, sizeof j);
    if (!(j.act & A_FAIL) || (j.act & A_FIRST))
        atomic_fetch_add(&dl_bad, 1);
    atomic_fetch_add(&dl_seen, 1);
    return 0;
}
static const shoal_behaviour_t dead_letters = {.name = "dl", .handle_message = dl_message};

static void failed_items_are_given_again(void)
{
    reset();
    atomic_store(&dl_seen, 0);
    atomic_store(&dl_bad, 0);
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pid_t dl;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &dead_letters, NULL, NULL, &dl), SHOAL_OK);
    shoal_pool_spec_t s;
    pull_spec(&s, 3, 2, 64);
    s.redeliver = 2;
    s.dead_letter = dl;
    s.restart.max = 1000; /* every failure ends its worker (a handler's error is its end) */
    s.restart.within_ms = 60000;
    shoal_pid_t p = spawn(rt, &s);
    uint32_t fail_once = 0, panic_once = 0, always = 0;
    for (uint32_t i = 0; i < 600; i++) {
        uint32_t act = A_OK;
        if (i % 10 == 1)
            act = A_FAIL | A_FIRST, fail_once++;
        else if (i % 50 == 3)
            act = A_PANIC | A_FIRST, panic_once++;
        else if (i % 100 == 7)
            act = A_FAIL, always++;
        int rc;
        double end = shoal_test_now() + WAIT_S;
        while ((rc = job(rt, p, i, act, 0)) == SHOAL_EBUSY && shoal_test_now() < end)
            shoal_test_nap();
        CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    }
    WAIT_UNTIL(atomic_load(&dl_seen) == always &&
               shoal_test_pool_stats(rt, p).messages_handled == 600 - always);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 600);
    CU_ASSERT_EQUAL(st.messages_handled, 600 - always);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(st.dead_lettered, always);
    CU_ASSERT_EQUAL(st.redelivered, fail_once + panic_once + 2 * always);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(atomic_load(&dl_seen), always);
    CU_ASSERT_EQUAL(atomic_load(&dl_bad), 0);
    CU_ASSERT_EQUAL(st.worker_restarts, fail_once + panic_once + 3 * always);
    uint32_t once = 0, twice = 0, thrice = 0;
    for (uint32_t i = 0; i < 600; i++) {
        int n = atomic_load(&seen[i]);
        once += n == 1;
        twice += n == 2;
        thrice += n == 3;
    }
    CU_ASSERT_EQUAL(once, 600 - fail_once - panic_once - always);
    CU_ASSERT_EQUAL(twice, fail_once + panic_once); /* never again after a success */
    CU_ASSERT_EQUAL(thrice, always);
    /* Without redeliver: a failure is final (at most once). */
    reset();
    pull_spec(&s, 2, 1, 64);
    shoal_pid_t q = spawn(rt, &s);
    for (uint32_t i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(job(rt, q, i, i % 4 == 0 ? A_FAIL : A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, q).messages_failed == 5 &&
               shoal_test_pool_stats(rt, q).messages_handled == 15);
    st = shoal_test_pool_stats(rt, q);
    CU_ASSERT_EQUAL(st.messages_failed, 5);
    CU_ASSERT_EQUAL(st.redelivered, 0);
    CU_ASSERT_EQUAL(st.dead_lettered, 0);
    shoal_runtime_destroy(rt);
}

/* ---- wake-up ------------------------------------------------------------------------ */

/* 3000 calls one at a time with idle members between them (each call finds
 * every member asleep or going to sleep): every one is answered. A lost
 * wake-up would leave a call to time out. Then bursts from 4 threads. */
static void no_lost_wake_up(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 3, 1, 64);
    shoal_pid_t p = spawn(rt, &s);
    int answered = 0;
    for (int i = 0; i < 3000; i++) {
        shoal_answer_t a;
        int rc = shoal_runtime_call(rt, p, T_WHO, NULL, 0, TMO, &a);
        if (rc == SHOAL_OK) {
            answered += a.status == SHOAL_OK;
            shoal_answer_release(&a);
        }
    }
    CU_ASSERT_EQUAL(answered, 3000);
    feeder_t f[4] = {
        {rt, p, 0, 800, 0}, {rt, p, 800, 800, 0}, {rt, p, 1600, 800, 0}, {rt, p, 2400, 800, 0}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, feed, &f[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    WAIT_UNTIL(atomic_load(&done) == 3200);
    CU_ASSERT_EQUAL(atomic_load(&done), 3200);
    shoal_runtime_destroy(rt);
}

/* ---- room ----------------------------------------------------------------------------- */

/* A producer actor sends 4000 jobs as fast as the pool takes them; after
 * each SHOAL_EBUSY it asks for SHOAL_MSG_ROOM and sends nothing until it
 * comes. No retry without a ROOM in between: every refusal is answered by
 * exactly one ROOM, every job is accepted once, and a forward pool says
 * it cannot tell. */
typedef struct {
    shoal_pid_t to;
    uint32_t next, total;
    bool waiting;
} producer_t;

static atomic_int refusals, rooms, early, prod_done, notify_rc;

static void produce(shoal_ctx_t *ctx, producer_t *pr)
{
    while (pr->next < pr->total) {
        job_t j = {pr->next, A_SLEEP, 0, 0};
        j.sleep_ms = pr->next % 500 == 0 ? 1 : 0;
        int rc = shoal_send(ctx, pr->to, T_JOB, &j, sizeof j);
        if (rc == SHOAL_EBUSY) {
            atomic_fetch_add(&refusals, 1);
            int nr = shoal_notify_room(ctx, pr->to);
            atomic_store(&notify_rc, nr);
            pr->waiting = nr == SHOAL_OK;
            return;
        }
        if (rc != SHOAL_OK)
            return;
        pr->next++;
    }
    atomic_store(&prod_done, 1);
}

static int prod_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    producer_t *pr = state;
    if (msg->kind == SHOAL_MSG_ROOM) {
        atomic_fetch_add(&rooms, 1);
        if (!pr->waiting || msg->from != pr->to)
            atomic_fetch_add(&early, 1);
        pr->waiting = false;
        produce(ctx, pr);
        return 0;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->size == sizeof(shoal_pid_t)) {
        memcpy(&pr->to, msg->data, sizeof pr->to);
        pr->total = 4000;
        produce(ctx, pr);
    }
    return 0;
}

static const shoal_behaviour_t producer = {
    .name = "producer", .state_size = sizeof(producer_t), .handle_message = prod_message};

static void a_refused_producer_waits_for_room(void)
{
    reset();
    atomic_store(&refusals, 0);
    atomic_store(&rooms, 0);
    atomic_store(&early, 0);
    atomic_store(&prod_done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s;
    pull_spec(&s, 2, 1, 32);
    shoal_pid_t p = spawn(rt, &s);
    shoal_pid_t pr;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &producer, NULL, NULL, &pr), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pr, 0, &p, sizeof p), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&prod_done) == 1 && atomic_load(&done) == 4000);
    CU_ASSERT_EQUAL(atomic_load(&prod_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&done), 4000);
    CU_ASSERT(atomic_load(&refusals) > 0); /* the pool was full at times */
    CU_ASSERT_EQUAL(atomic_load(&rooms), atomic_load(&refusals));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)atomic_load(&refusals));
    int once = 0;
    for (uint32_t i = 0; i < 4000; i++)
        once += atomic_load(&seen[i]) == 1;
    CU_ASSERT_EQUAL(once, 4000);
    /* A forward pool tells too (ABI 1.5): the producer waits for its ROOM
     * while the one worker is blocked, and finishes once the gate opens. */
    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &wk;
    f.size = 1;
    f.mailbox = 1;
    shoal_pid_t fp = spawn(rt, &f);
    reset();
    atomic_store(&notify_rc, 1);
    atomic_store(&prod_done, 0);
    atomic_store(&refusals, 0);
    atomic_store(&rooms, 0);
    atomic_store(&early, 0);
    CU_ASSERT_EQUAL(job(rt, fp, 0, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    CU_ASSERT_EQUAL(job(rt, fp, 1, A_OK, 0), SHOAL_OK); /* its mailbox: now full */
    shoal_pid_t pr2;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &producer, NULL, NULL, &pr2), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pr2, 0, &fp, sizeof fp), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&notify_rc) != 1);
    CU_ASSERT_EQUAL(atomic_load(&notify_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rooms), 0); /* not while the worker is stuck */
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&prod_done) == 1);
    CU_ASSERT_EQUAL(atomic_load(&prod_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&rooms), atomic_load(&refusals));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, fp).messages_unhandled,
                    (uint64_t)atomic_load(&refusals));
    shoal_runtime_destroy(rt);
}

/* ---- specs -------------------------------------------------------------------------- */

static void bad_pull_specs(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s, inner;
    shoal_pid_t p;
    pull_spec(&s, 2, 0, 8);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pull_spec(&s, 2, SHOAL_POOL_MAX_PREFETCH + 1, 8);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pull_spec(&s, 2, 1, SHOAL_POOL_MAX_BUFFER + 1);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pull_spec(&s, 2, 1, 8);
    s.kind = 7;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pull_spec(&inner, 2, 1, 8);
    inner.kind = SHOAL_POOL_KIND_FORWARD;
    pull_spec(&s, 2, 1, 8);
    s.worker = NULL;
    s.worker_pool = &inner; /* a member takes on its own thread: not a pool */
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pull_spec(&s, 2, 1, 8);
    s.redeliver = SHOAL_POOL_MAX_REDELIVER + 1;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    static const shoal_behaviour_t mute = {.name = "mute"}; /* no handle_message */
    pull_spec(&s, 2, 1, 8);
    s.source = &mute;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    /* A pull pool may be a forward pool's worker. */
    pull_spec(&inner, 2, 1, 8);
    shoal_pool_spec_init(&s);
    s.worker_pool = &inner;
    s.size = 2;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    reset();
    for (uint32_t i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&done) == 20);
    CU_ASSERT_EQUAL(atomic_load(&done), 20);
    shoal_runtime_destroy(rt);
}

/* A program built against ABI 1.3 passes a spec that ends at manager_args
 * to the unsuffixed entry points: what follows in its memory is never
 * read, and the pool is a forward pool with the defaults. */
static void a_1_3_spec_is_read_to_its_end_only(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    struct {
        shoal_pool_spec_t spec;
        unsigned char junk[64];
    } old;
    memset(&old, 0xA5, sizeof old); /* kind, prefetch...: junk */
    (shoal_pool_spec_init)(&old.spec);
    CU_ASSERT_EQUAL(old.spec.kind, 0xA5A5A5A5u); /* init wrote the 1.3 part only */
    old.spec.worker = &wk;
    old.spec.size = 2;
    shoal_pid_t p;
    CU_ASSERT_EQUAL((shoal_runtime_spawn_pool)(rt, &old.spec, &p), SHOAL_OK);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.kind, SHOAL_POOL_KIND_FORWARD);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.mailbox, 64);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"capacity is buffer + size x prefetch", capacity_is_buffer_plus_size_times_prefetch},
        {"prefetch and buffer change live", prefetch_and_buffer_change_live},
        {"demand never exceeds prefetch", demand_never_exceeds_prefetch},
        {"no item waits behind a slow one", no_item_waits_behind_a_slow_one},
        {"calls are answered by the member", calls_are_answered_by_the_member},
        {"drain empties the buffer first", drain_empties_the_buffer_first},
        {"a dying member loses only what it held", a_dying_member_loses_only_what_it_held},
        {"no lost wake-up", no_lost_wake_up},
        {"failed items are given again", failed_items_are_given_again},
        {"a refused producer waits for room", a_refused_producer_waits_for_room},
        {"bad pull specs", bad_pull_specs},
        {"a 1.3 spec is read to its end only", a_1_3_spec_is_read_to_its_end_only},
        {NULL, NULL}};
    return shoal_test_run("pull", cases);
}
