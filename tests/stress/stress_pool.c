/* stress_pool.c - pools under resizing and crashes.
 *
 * 10^6 messages from 2 producers into a pool of 8 workers (mailbox 64,
 * min_size 1, max_size 8) while a resizer thread sets its size 8 -> 1 -> 8
 * a hundred times, paced by the producers' progress so that resizes
 * happen under traffic; and since a descheduled resizer (2 cores, 4
 * dispatcher threads, a sanitizer build) can fall behind producers that
 * finish in 10 ms, a producer halfway through its share waits for the
 * resizer's first GATE_RESIZES steps, its sent messages still queued and
 * being handled -- so at least that many resizes see traffic in every
 * round, on any schedule. Each message carries a unique id; a producer never
 * retries, so each id is either accepted (SHOAL_OK) or refused
 * (SHOAL_EBUSY). Every worker marks the id it handles with an atomic
 * fetch_add. Checked, for every scenario:
 *   - per producer: accepted + refused == sent (no other result, in
 *     particular no SHOAL_ENOPROC before the drain);
 *   - every accepted id handled exactly once, no refused id ever handled,
 *     no id twice; the worker sees the original sender;
 *   - the pool's stats once traffic stopped (queue_depth 0, nothing
 *     retiring): forwarded == accepted, unhandled == refused, handled
 *     (+ failed) == accepted, nothing dropped, pool_size == target_size;
 *   - the drain ends the pool, and a send afterwards gets SHOAL_ENOPROC.
 * Scenarios:
 *   1. producers are threads (shoal_runtime_send);
 *   2. producers are actors (shoal_send, forwarding on dispatcher threads);
 *   3. workers panic on ids divisible by a prime, size fixed: handled +
 *      failed == accepted, failed == the accepted ids that panic,
 *      restarts == failed (the restart budget never runs out);
 *   4. the same crashes while resizing: as 3, but a retiring worker that
 *      panics is not replaced, so restarts <= failed;
 *   5. nested pools: a pool of 2 pools of 4, the outer one resized
 *      2 -> 1 -> 2 a hundred times (a removed inner pool drains);
 *   6. the same with crashing workers: the inner pools restart them, the
 *      outer one counts their failures.
 *
 * Each scenario runs ROUNDS times, on a fresh runtime each time. Sizes
 * scale with SHOAL_STRESS_SCALE (a factor, default 1; sanitizer builds
 * default to 0.1); the number of resize cycles and rounds does not.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define PRODUCERS 2
#define MAILBOX 64
#define CYCLES 100
#define CRASH_PRIME 997u
#define BATCH 64     /* messages per turn of a producer actor */
#define STALL_S 10.0 /* no progress for this long: fail */
#define CALL_MS 30000
#define ROUNDS 4
#define GATE_RESIZES 4 /* resizes a producer waits for halfway */

enum { M_WORK = 1, M_GO = 2 };

typedef struct {
    const char *name;
    int actor_producers; /* else threads */
    int crash;           /* workers panic on ids divisible by CRASH_PRIME */
    int resize;
    int nested; /* a pool of 2 pools of 4; else a pool of 8 */
} scenario_t;

static const scenario_t *sc;
static shoal_runtime_t *rt;
static shoal_pid_t pool_pid;
static uint32_t big_size, small_size;
static long per_producer, total;

/* Per id: how many times a worker saw it; whether its send was accepted
 * (written by its producer only, read after the producers finished). */
static _Atomic unsigned char *seen;
static unsigned char *accepted;

static atomic_long sent_total, handled, panicked, duplicates, bad_msgs, wrong_sender;
static atomic_long ok_count[PRODUCERS], busy_count[PRODUCERS], other_count[PRODUCERS];
static atomic_int other_rc;
static atomic_int producers_done;
static _Atomic shoal_pid_t producer_pid[PRODUCERS];
static atomic_long resizes_done, resizes_under_traffic, resize_bad;
static atomic_int resize_stop;
static atomic_long log_panics, log_degraded, log_other;

/* ---- logging: panics are expected, anything else is shown ---- */

static void quiet_log(void *user, int level, const char *line)
{
    (void)user;
    (void)level;
    if (strstr(line, "panic") != NULL) {
        atomic_fetch_add(&log_panics, 1);
        return;
    }
    if (strstr(line, "degraded") != NULL)
        atomic_fetch_add(&log_degraded, 1);
    if (atomic_fetch_add(&log_other, 1) < 20)
        fprintf(stderr, "\n  log: %s", line);
}

static shoal_runtime_t *quiet_runtime(unsigned threads)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = threads;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_WARN;
    o.log_fn = quiet_log;
    shoal_runtime_t *r = NULL;
    if (shoal_runtime_create(&r, &o) != SHOAL_OK)
        return NULL;
    return r;
}

/* ---- the worker ---- */

static int worker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    uint32_t id;
    if (msg->type != M_WORK || msg->size != sizeof id) {
        atomic_fetch_add(&bad_msgs, 1);
        return 0;
    }
    memcpy(&id, msg->data, sizeof id);
    if (id >= (uint32_t)total) {
        atomic_fetch_add(&bad_msgs, 1);
        return 0;
    }
    long p = id / per_producer;
    if (msg->from != atomic_load_explicit(&producer_pid[p], memory_order_relaxed))
        atomic_fetch_add(&wrong_sender, 1);
    if (atomic_fetch_add(&seen[id], 1) != 0)
        atomic_fetch_add(&duplicates, 1);
    if (sc->crash && id % CRASH_PRIME == 0) {
        atomic_fetch_add(&panicked, 1);
        shoal_panic(ctx, "id %u", id);
    }
    atomic_fetch_add(&handled, 1);
    return 0;
}

static const shoal_behaviour_t worker_beh = {.name = "worker", .handle_message = worker_handle};

/* ---- producers ---- */

static void note_send(int p, uint32_t id, int rc)
{
    if (rc == SHOAL_OK) {
        accepted[id] = 1;
        atomic_fetch_add_explicit(&ok_count[p], 1, memory_order_relaxed);
    } else if (rc == SHOAL_EBUSY) {
        atomic_fetch_add_explicit(&busy_count[p], 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&other_count[p], 1, memory_order_relaxed);
        atomic_store(&other_rc, rc);
    }
    atomic_fetch_add_explicit(&sent_total, 1, memory_order_relaxed);
}

/* Halfway through its share, a producer waits for the resizer's first
 * GATE_RESIZES steps (each needs less than a hundredth of the traffic sent,
 * so the wait ends). Never held when the scenario does not resize. */
static int held_at_gate(long next)
{
    return sc->resize && next == per_producer / 2 && atomic_load(&resizes_done) < GATE_RESIZES &&
           !atomic_load(&resize_stop);
}

static void *producer_thread(void *arg)
{
    int p = (int)(uintptr_t)arg;
    for (long i = 0; i < per_producer; i++) {
        while (held_at_gate(i))
            shoal_test_nap();
        uint32_t id = (uint32_t)(p * per_producer + i);
        int rc = shoal_runtime_send(rt, pool_pid, M_WORK, &id, sizeof id);
        note_send(p, id, rc);
        if (rc == SHOAL_EBUSY)
            sched_yield(); /* give the workers a chance; the id is not retried */
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

typedef struct {
    int p;
    long next;
} prod_state_t;

static int prod_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    prod_state_t *s = state;
    s->p = *(const int *)args;
    return 0;
}

/* Sends a batch per turn, then goes to the back of the queue with a GO to
 * itself; the first GO comes from the test once every PID is known. */
static int prod_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    prod_state_t *s = state;
    if (msg->type != M_GO)
        return 0;
    for (int k = 0; k < BATCH && s->next < per_producer && !held_at_gate(s->next); k++, s->next++) {
        uint32_t id = (uint32_t)(s->p * per_producer + s->next);
        note_send(s->p, id, shoal_send(ctx, pool_pid, M_WORK, &id, sizeof id));
    }
    if (s->next < per_producer) {
        if (shoal_send(ctx, shoal_self(ctx), M_GO, NULL, 0) != SHOAL_OK)
            return SHOAL_EFAILED;
        shoal_yield(ctx);
    } else {
        atomic_fetch_add(&producers_done, 1);
    }
    return 0;
}

static const shoal_behaviour_t prod_beh = {.name = "producer",
                                           .state_size = sizeof(prod_state_t),
                                           .init = prod_init,
                                           .handle_message = prod_handle};

/* ---- the resizer: big -> small -> big, CYCLES times, each step once the
 * producers have sent their share of the traffic before it ---- */

static void *resizer_thread(void *arg)
{
    (void)arg;
    const long steps = 2 * CYCLES;
    for (long s = 0; s < steps && !atomic_load(&resize_stop); s++) {
        long want = (s + 1) * total / (steps + 1);
        while (atomic_load_explicit(&sent_total, memory_order_relaxed) < want &&
               atomic_load(&producers_done) < PRODUCERS && !atomic_load(&resize_stop))
            shoal_test_nap();
        uint32_t size = (s & 1) == 0 ? small_size : big_size;
        int r = shoal_pool_set_size(rt, pool_pid, size, CALL_MS);
        if (r != (int)size) {
            fprintf(stderr, "\n  set_size(%u) returned %d", size, r);
            atomic_fetch_add(&resize_bad, 1);
        }
        /* Counted before done: a producer held at the gate is let go only
         * after this step is counted as under traffic. */
        if (atomic_load(&producers_done) < PRODUCERS)
            atomic_fetch_add(&resizes_under_traffic, 1);
        atomic_fetch_add(&resizes_done, 1);
    }
    return NULL;
}

/* ---- one scenario ---- */

static void reset(void)
{
    atomic_store(&sent_total, 0);
    atomic_store(&handled, 0);
    atomic_store(&panicked, 0);
    atomic_store(&duplicates, 0);
    atomic_store(&bad_msgs, 0);
    atomic_store(&wrong_sender, 0);
    for (int p = 0; p < PRODUCERS; p++) {
        atomic_store(&ok_count[p], 0);
        atomic_store(&busy_count[p], 0);
        atomic_store(&other_count[p], 0);
        atomic_store(&producer_pid[p], SHOAL_PID_NONE);
    }
    atomic_store(&other_rc, 0);
    atomic_store(&producers_done, 0);
    atomic_store(&resizes_done, 0);
    atomic_store(&resizes_under_traffic, 0);
    atomic_store(&resize_bad, 0);
    atomic_store(&resize_stop, 0);
    atomic_store(&log_panics, 0);
    atomic_store(&log_degraded, 0);
    atomic_store(&log_other, 0);
}

static void print_stats(const char *when, const shoal_pool_stats_t *st)
{
    fprintf(stderr,
            "\n  %s: state %u size %u/%u retiring %u restarts %llu forwarded %llu unhandled %llu "
            "handled %llu failed %llu dropped %llu requeued %llu depth %llu",
            when, st->state, st->pool_size, st->target_size, st->retiring,
            (unsigned long long)st->worker_restarts, (unsigned long long)st->messages_forwarded,
            (unsigned long long)st->messages_unhandled, (unsigned long long)st->messages_handled,
            (unsigned long long)st->messages_failed, (unsigned long long)st->messages_dropped,
            (unsigned long long)st->messages_requeued, (unsigned long long)st->queue_depth);
}

/* Prints a few ids whose fate does not match their send. */
static void print_mismatches(void)
{
    int shown = 0;
    for (long id = 0; id < total && shown < 10; id++) {
        unsigned char n = atomic_load_explicit(&seen[id], memory_order_relaxed);
        if (n != accepted[id]) {
            fprintf(stderr, "\n  id %ld: accepted %d, handled %u times", id, accepted[id], n);
            shown++;
        }
    }
}

static void run_once(const scenario_t *s, int round)
{
    sc = s;
    reset();
    per_producer = (long)(500000 * shoal_test_stress_scale(0.1));
    if (per_producer < 1000)
        per_producer = 1000;
    total = per_producer * PRODUCERS;
    seen = calloc((size_t)total, sizeof *seen);
    accepted = calloc((size_t)total, 1);
    CU_ASSERT_FATAL(seen != NULL && accepted != NULL);

    rt = quiet_runtime(s->actor_producers ? 4 : 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);

    shoal_pool_spec_t inner, spec;
    shoal_pool_spec_init(&inner);
    inner.name = "inner";
    inner.worker = &worker_beh;
    inner.size = 4;
    inner.min_size = 1;
    inner.max_size = 4;
    inner.mailbox = MAILBOX;
    shoal_pool_spec_init(&spec);
    spec.name = "stress";
    spec.min_size = 1;
    spec.mailbox = MAILBOX;
    /* Never degraded: many more restarts allowed than the test causes. */
    spec.restart.max = 100000;
    spec.restart.within_ms = 1000;
    inner.restart = spec.restart;
    if (s->nested) {
        spec.worker_pool = &inner;
        big_size = 2;
    } else {
        spec.worker = &worker_beh;
        big_size = 8;
    }
    small_size = 1;
    spec.size = spec.max_size = big_size;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &spec, &pool_pid), SHOAL_OK);

    double t0 = shoal_test_now();
    pthread_t prod[PRODUCERS], resizer;
    static const int index[PRODUCERS] = {0, 1};
    if (s->actor_producers) {
        for (int p = 0; p < PRODUCERS; p++) {
            shoal_pid_t pid;
            CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &prod_beh, &index[p], NULL, &pid),
                                  SHOAL_OK);
            atomic_store(&producer_pid[p], pid);
        }
    }
    if (s->resize)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&resizer, NULL, resizer_thread, NULL), 0);
    for (int p = 0; p < PRODUCERS; p++) {
        if (s->actor_producers) {
            CU_ASSERT_EQUAL_FATAL(
                shoal_runtime_send(rt, atomic_load(&producer_pid[p]), M_GO, NULL, 0), SHOAL_OK);
        } else {
            CU_ASSERT_EQUAL_FATAL(
                pthread_create(&prod[p], NULL, producer_thread, (void *)(uintptr_t)p), 0);
        }
    }

    /* Watchdog: sending, then handling, must not stop for STALL_S. */
    long last = -1;
    double last_change = shoal_test_now();
    for (;;) {
        long sent = atomic_load(&sent_total);
        long ok = 0;
        for (int p = 0; p < PRODUCERS; p++)
            ok += atomic_load(&ok_count[p]);
        long done = atomic_load(&handled) + atomic_load(&panicked);
        if (atomic_load(&producers_done) == PRODUCERS && done >= ok)
            break;
        if (sent + done != last) {
            last = sent + done;
            last_change = shoal_test_now();
        } else if (shoal_test_now() - last_change > STALL_S) {
            shoal_pool_stats_t st;
            int rc = shoal_pool_stats(rt, pool_pid, &st, 1000);
            fprintf(stderr, "\n  stalled: sent %ld of %ld, accepted %ld, handled %ld (stats rc %d)",
                    sent, total, ok, done, rc);
            if (rc == SHOAL_OK)
                print_stats("stats", &st);
            if (atomic_load(&producers_done) == PRODUCERS)
                print_mismatches();
            fprintf(stderr, "\n");
            abort(); /* threads may be stuck: do not join them */
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    double took = shoal_test_now() - t0;
    if (!s->actor_producers)
        for (int p = 0; p < PRODUCERS; p++)
            pthread_join(prod[p], NULL);
    if (s->resize) {
        atomic_store(&resize_stop, 1); /* the few steps left would see no traffic */
        pthread_join(resizer, NULL);
        /* Stopped after a step down: back to the big size, so that the
         * checks below find the pool as every other run does. */
        if (atomic_load(&resizes_done) % 2 == 1)
            CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool_pid, big_size, CALL_MS), (int)big_size);
    }

    /* Every producer's sends add up; nothing but OK and EBUSY. */
    long acc = 0, refused = 0;
    for (int p = 0; p < PRODUCERS; p++) {
        long ok = atomic_load(&ok_count[p]), busy = atomic_load(&busy_count[p]),
             other = atomic_load(&other_count[p]);
        CU_ASSERT_EQUAL(ok + busy + other, per_producer);
        CU_ASSERT_EQUAL(other, 0);
        if (other != 0)
            fprintf(stderr, "\n  producer %d: %ld sends failed otherwise (last rc %d)", p, other,
                    atomic_load(&other_rc));
        acc += ok;
        refused += busy;
    }
    long crash_ids = 0;
    for (long id = 0; id < total; id++)
        if (accepted[id] && s->crash && id % CRASH_PRIME == 0)
            crash_ids++;

    /* The stats once the pool is quiet: nothing queued, nothing retiring,
     * every accepted message counted, every dead worker replaced. */
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    int rc = SHOAL_OK;
    double end = shoal_test_now() + STALL_S;
    do {
        rc = shoal_pool_stats(rt, pool_pid, &st, CALL_MS);
        if (rc != SHOAL_OK)
            break;
        if (st.queue_depth == 0 && st.retiring == 0 && st.pool_size == st.target_size &&
            st.messages_handled + st.messages_failed >= (uint64_t)acc)
            break;
        shoal_test_nap();
    } while (shoal_test_now() < end);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    fprintf(stderr,
            "\n  [%s, round %d: %ld sent in %.2f s, %ld accepted, %ld refused, %ld resizes "
            "(%ld under traffic), %llu restarts, %llu requeued] ",
            s->name, round + 1, total, took, acc, refused, atomic_load(&resizes_done),
            atomic_load(&resizes_under_traffic), (unsigned long long)st.worker_restarts,
            (unsigned long long)st.messages_requeued);

    CU_ASSERT_EQUAL(atomic_load(&handled) + atomic_load(&panicked), acc);
    CU_ASSERT_EQUAL(atomic_load(&panicked), crash_ids);
    CU_ASSERT_EQUAL(atomic_load(&duplicates), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad_msgs), 0);
    CU_ASSERT_EQUAL(atomic_load(&wrong_sender), 0);
    CU_ASSERT_EQUAL(atomic_load(&resize_bad), 0);
    if (s->resize)
        CU_ASSERT(atomic_load(&resizes_under_traffic) >= GATE_RESIZES);

    /* Every id: handled once if accepted, never if refused. */
    long mismatched = 0;
    for (long id = 0; id < total; id++)
        if (atomic_load_explicit(&seen[id], memory_order_relaxed) != accepted[id])
            mismatched++;
    CU_ASSERT_EQUAL(mismatched, 0);
    if (mismatched != 0) {
        fprintf(stderr, "\n  %ld ids mismatched", mismatched);
        print_mismatches();
    }

    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.retiring, 0);
    CU_ASSERT_EQUAL(st.pool_size, st.target_size);
    CU_ASSERT_EQUAL(st.target_size, big_size);
    CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)acc);
    CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)refused);
    CU_ASSERT_EQUAL(st.messages_handled, (uint64_t)(acc - crash_ids));
    CU_ASSERT_EQUAL(st.messages_failed, (uint64_t)crash_ids);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    if (s->nested) {
        CU_ASSERT_EQUAL(st.worker_restarts, 0); /* the inner pools restart their workers */
    } else if (s->crash && !s->resize) {
        CU_ASSERT_EQUAL(st.worker_restarts, (uint64_t)crash_ids);
    } else if (s->crash) {
        CU_ASSERT(st.worker_restarts <= (uint64_t)crash_ids);
    } else {
        CU_ASSERT_EQUAL(st.worker_restarts, 0);
    }
    if (st.messages_forwarded != (uint64_t)acc || st.messages_unhandled != (uint64_t)refused ||
        st.messages_handled + st.messages_failed != (uint64_t)acc || st.queue_depth != 0 ||
        st.messages_dropped != 0 || st.pool_size != st.target_size) {
        fprintf(stderr, "\n  expected forwarded %ld unhandled %ld failed %ld", acc, refused,
                crash_ids);
        print_stats("stats", &st);
    }
    CU_ASSERT_EQUAL(atomic_load(&log_degraded), 0);

    /* Drain: the pool ends; senders then get ENOPROC. */
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool_pid, CALL_MS), SHOAL_OK);
    uint32_t id = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool_pid, M_WORK, &id, sizeof id), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(atomic_load(&handled) + atomic_load(&panicked), acc);
    CU_ASSERT_EQUAL(atomic_load(&duplicates), 0);

    shoal_runtime_stats_t rs = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(rs.msgs_refused, (uint64_t)refused);
    CU_ASSERT_EQUAL(rs.msgs_dropped, 0);
    if (s->crash)
        CU_ASSERT(atomic_load(&log_panics) >= crash_ids);
    shoal_runtime_destroy(rt);
    rt = NULL;
    free(seen);
    free(accepted);
    seen = NULL;
    accepted = NULL;
}

/* Each scenario a few times, on a fresh runtime each time: the bugs this
 * test is for hide in rare interleavings. */
static void run(const scenario_t *s)
{
    for (int round = 0; round < ROUNDS && CU_get_number_of_failures() == 0; round++)
        run_once(s, round);
}

static void resize_thread_producers(void)
{
    static const scenario_t s = {.name = "resize, thread producers", .resize = 1};
    run(&s);
}

static void resize_actor_producers(void)
{
    static const scenario_t s = {
        .name = "resize, actor producers", .resize = 1, .actor_producers = 1};
    run(&s);
}

static void crash_fixed_size(void)
{
    static const scenario_t s = {.name = "crashes", .crash = 1};
    run(&s);
}

static void crash_and_resize(void)
{
    static const scenario_t s = {.name = "crashes and resize", .crash = 1, .resize = 1};
    run(&s);
}

static void nested_resize(void)
{
    static const scenario_t s = {.name = "nested, resize", .resize = 1, .nested = 1};
    run(&s);
}

static void nested_crash_resize(void)
{
    static const scenario_t s = {
        .name = "nested, crashes, resize", .crash = 1, .resize = 1, .nested = 1};
    run(&s);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"2 producer threads, pool resized 8 -> 1 -> 8 x100", resize_thread_producers},
        {"2 producer actors, pool resized 8 -> 1 -> 8 x100", resize_actor_producers},
        {"2 producer threads, workers panic on some ids", crash_fixed_size},
        {"2 producer threads, workers panic, pool resized x100", crash_and_resize},
        {"pool of 2 pools of 4, outer resized 2 -> 1 -> 2 x100", nested_resize},
        {"pool of 2 pools of 4, workers panic, outer resized x100", nested_crash_resize},
        {NULL, NULL},
    };
    return shoal_test_run("stress_pool", cases);
}
