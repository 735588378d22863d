/* pull_stress_kit.c - the pull pool stress engine (pull_stress_kit.h):
 * the member, the senders, the caller, the churner, and one scenario run
 * to its exact ledger. */
#include "pull_stress_kit.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/ctx.h"
#include "pool/pull.h"

#define THREADS 2 /* producer threads */
#define ACTORS 2  /* producer actors */
#define PRODUCERS (THREADS + ACTORS)
#define CRASH_PRIME 211u
#define MAX_PREFETCH 8u
#define BATCH 32
#define STALL_S 15.0
#define CALL_MS 20000
#define ROUNDS 2

enum { M_WORK = 1, M_GO = 2, M_BLOCK = 3 };

static const ps_scenario_t *sc;
static shoal_runtime_t *rt;
static shoal_pid_t pool_pid;
static long per_producer, casts, ncalls, total;

static _Atomic unsigned char *seen;
static unsigned char *accepted;
static atomic_long sent_total, handled, panicked, duplicates, bad_msgs, wrong_sender, over_held;
static atomic_long ok_count, busy_count, enoproc_count, other_count;
static atomic_int other_rc, producers_done, stop_churn, gate, blocked;
static _Atomic shoal_pid_t producer_pid[ACTORS];
static atomic_long call_ok, call_panic, call_enoproc, call_busy, call_bad;
static atomic_long churns, churn_bad;
static atomic_uint max_prefetch;

/* ---- logging: panics are expected ---- */

static void quiet_log(void *user, int level, const char *line)
{
    (void)user;
    (void)level;
    if (strstr(line, "panic") == NULL && strstr(line, "ended:") == NULL)
        fprintf(stderr, "\n  log: %s", line);
}

/* ---- the member ---- */

static void mark(shoal_ctx_t *ctx, uint32_t id)
{
    if (atomic_fetch_add(&seen[id], 1) != 0)
        atomic_fetch_add(&duplicates, 1);
    /* What this member holds, the item in hand included. */
    uint32_t held = shoal__pull_held(ctx);
    if (held < 1 || held > atomic_load(&max_prefetch))
        atomic_fetch_add(&over_held, 1);
    if (id % CRASH_PRIME == 0) {
        atomic_fetch_add(&panicked, 1);
        shoal_panic(ctx, "id %u", id);
    }
    atomic_fetch_add(&handled, 1);
}

static int member_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    uint32_t id;
    if (msg->type == M_BLOCK) { /* the admission probe: hold until the gate opens */
        atomic_fetch_add(&blocked, 1);
        double end = shoal_test_now() + STALL_S;
        while (atomic_load(&gate) == 0 && shoal_test_now() < end)
            shoal_test_nap();
        return 0;
    }
    if (msg->type != M_WORK || msg->size != sizeof id) {
        atomic_fetch_add(&bad_msgs, 1);
        return 0;
    }
    memcpy(&id, msg->data, sizeof id);
    if (id >= (uint32_t)casts) {
        atomic_fetch_add(&bad_msgs, 1);
        return 0;
    }
    long p = id / per_producer;
    if (p >= THREADS && msg->from != atomic_load(&producer_pid[p - THREADS]))
        atomic_fetch_add(&wrong_sender, 1);
    mark(ctx, id);
    return 0;
}

static int member_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *r)
{
    (void)state;
    uint32_t id;
    if (msg->size != sizeof id) {
        atomic_fetch_add(&bad_msgs, 1);
        return 0;
    }
    memcpy(&id, msg->data, sizeof id);
    if (id < (uint32_t)casts || id >= (uint32_t)total) {
        atomic_fetch_add(&bad_msgs, 1);
        return 0;
    }
    mark(ctx, id);
    return shoal_reply_set(r, M_WORK, &id, sizeof id);
}

static const shoal_behaviour_t member_beh = {
    .name = "member", .handle_message = member_message, .handle_call = member_call};

/* ---- senders ---- */

static void note_send(uint32_t id, int rc)
{
    if (rc == SHOAL_OK) {
        accepted[id] = 1;
        atomic_fetch_add(&ok_count, 1);
    } else if (rc == SHOAL_EBUSY) {
        atomic_fetch_add(&busy_count, 1);
    } else if (rc == SHOAL_ENOPROC && sc->end != PS_END_NONE) {
        atomic_fetch_add(&enoproc_count, 1);
    } else {
        atomic_fetch_add(&other_count, 1);
        atomic_store(&other_rc, rc);
    }
    atomic_fetch_add_explicit(&sent_total, 1, memory_order_relaxed);
}

static void *producer_thread(void *arg)
{
    long p = (long)(uintptr_t)arg;
    for (long i = 0; i < per_producer; i++) {
        uint32_t id = (uint32_t)(p * per_producer + i);
        int rc = shoal_runtime_send(rt, pool_pid, M_WORK, &id, sizeof id);
        note_send(id, rc);
        if (rc == SHOAL_EBUSY)
            sched_yield();
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
    ((prod_state_t *)state)->p = *(const int *)args;
    return 0;
}

static int prod_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    prod_state_t *s = state;
    if (msg->type != M_GO)
        return 0;
    for (int k = 0; k < BATCH && s->next < per_producer; k++, s->next++) {
        uint32_t id = (uint32_t)((THREADS + s->p) * per_producer + s->next);
        note_send(id, shoal_send(ctx, pool_pid, M_WORK, &id, sizeof id));
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

/* Calls one at a time; each must come back (never ETIMEDOUT). */
static void *caller_thread(void *arg)
{
    (void)arg;
    for (long i = 0; i < ncalls; i++) {
        uint32_t id = (uint32_t)(casts + i);
        shoal_answer_t a;
        int rc;
        /* Refused: tried again, a while (each refusal is counted). */
        for (int k = 0; k < 100; k++) {
            rc = shoal_runtime_call(rt, pool_pid, M_WORK, &id, sizeof id, CALL_MS, &a);
            if (rc != SHOAL_EBUSY)
                break;
            atomic_fetch_add(&call_busy, 1);
            sched_yield();
        }
        if (rc == SHOAL_OK) {
            accepted[id] = 1;
            uint32_t back = 0;
            if (a.status == SHOAL_OK && a.size == sizeof back)
                memcpy(&back, a.data, sizeof back);
            if (a.status == SHOAL_OK && back == id)
                atomic_fetch_add(&call_ok, 1);
            else if (a.status == SHOAL_EPANIC && id % CRASH_PRIME == 0)
                atomic_fetch_add(&call_panic, 1);
            else if (a.status == SHOAL_ENOPROC && sc->end != PS_END_NONE)
                atomic_fetch_add(&call_enoproc, 1); /* dropped at the end */
            else
                atomic_fetch_add(&call_bad, 1);
            shoal_answer_release(&a);
        } else if (rc == SHOAL_EBUSY) {
            /* counted above */
        } else if (rc == SHOAL_ENOPROC && sc->end != PS_END_NONE) {
            atomic_fetch_add(&call_enoproc, 1);
        } else {
            fprintf(stderr, "\n  call %u: rc %d (%s)", id, rc, shoal_errname(rc));
            atomic_fetch_add(&call_bad, 1);
        }
        atomic_fetch_add_explicit(&sent_total, 1, memory_order_relaxed);
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

/* ---- the churner: size, prefetch, buffer, at random, until told ---- */

static int set_knob(uint32_t what, uint32_t v)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool_pid, what, &v, sizeof v, CALL_MS, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    shoal_answer_release(&a);
    return rc;
}

static void *churn_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!atomic_load(&stop_churn)) {
        unsigned r = (unsigned)rand_r(&seed);
        int rc;
        if (sc->nested) {
            uint32_t size = 1 + r % 2;
            rc = shoal_pool_set_size(rt, pool_pid, size, CALL_MS) == (int)size ? 0 : -1;
        } else if (r % 3 == 0) {
            uint32_t size = 1 + (r >> 2) % 6;
            rc = shoal_pool_set_size(rt, pool_pid, size, CALL_MS) == (int)size ? 0 : -1;
        } else if (r % 3 == 1) {
            rc = set_knob(SHOAL_POOL_SET_PREFETCH, 1 + (r >> 2) % MAX_PREFETCH);
        } else {
            rc = set_knob(SHOAL_POOL_SET_BUFFER, (r >> 2) % 49);
        }
        atomic_fetch_add(&churns, 1);
        if (rc != 0)
            atomic_fetch_add(&churn_bad, 1);
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* ---- one scenario ---- */

static void reset(void)
{
    atomic_long *zero[] = {&sent_total,   &handled,   &panicked,   &duplicates,   &bad_msgs,
                           &wrong_sender, &over_held, &ok_count,   &busy_count,   &enoproc_count,
                           &other_count,  &call_ok,   &call_panic, &call_enoproc, &call_busy,
                           &call_bad,     &churns,    &churn_bad};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        atomic_store(zero[i], 0);
    atomic_store(&other_rc, 0);
    atomic_store(&producers_done, 0);
    atomic_store(&stop_churn, 0);
    atomic_store(&gate, 0);
    atomic_store(&blocked, 0);
    atomic_store(&max_prefetch, MAX_PREFETCH);
}

static shoal_pool_stats_t stats_now(void)
{
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool_pid, &st, CALL_MS), SHOAL_OK);
    return st;
}

static void print_stats(const char *when, const shoal_pool_stats_t *st)
{
    fprintf(stderr,
            "\n  %s: size %u/%u retiring %u restarts %llu forwarded %llu unhandled %llu handled "
            "%llu failed %llu dropped %llu depth %llu buffer %llu/%llu prefetch %u",
            when, st->pool_size, st->target_size, st->retiring,
            (unsigned long long)st->worker_restarts, (unsigned long long)st->messages_forwarded,
            (unsigned long long)st->messages_unhandled, (unsigned long long)st->messages_handled,
            (unsigned long long)st->messages_failed, (unsigned long long)st->messages_dropped,
            (unsigned long long)st->queue_depth, (unsigned long long)st->buffer_depth,
            (unsigned long long)st->buffer, st->prefetch);
}

/* The accepted ids that panic (casts and calls). */
static long crash_ids(void)
{
    long n = 0;
    for (long id = 0; id < total; id += CRASH_PRIME)
        n += accepted[id];
    return n;
}

/* Waits until everything accepted is settled; aborts on a stall. */
static void wait_settled(long acc)
{
    long last = -1;
    double last_change = shoal_test_now();
    for (;;) {
        shoal_pool_stats_t st = stats_now();
        uint64_t settled = st.messages_handled + st.messages_failed + st.messages_dropped;
        if (settled >= (uint64_t)acc && st.queue_depth == 0 && st.retiring == 0 &&
            st.pool_size == st.target_size)
            return;
        if ((long)settled != last) {
            last = (long)settled;
            last_change = shoal_test_now();
        } else if (shoal_test_now() - last_change > STALL_S) {
            fprintf(stderr, "\n  stalled: %ld accepted, %ld settled", acc, last);
            print_stats("stats", &st);
            fprintf(stderr, "\n");
            abort(); /* a lost wake-up: members idle with items in the buffer */
        }
        shoal_test_nap();
    }
}

/* With every member blocked, exactly buffer + size x prefetch items are
 * accepted: an `admitted` leaked by the churn would show as fewer. */
static void probe_admission(void)
{
    const uint32_t size = 3, prefetch = 2, buffer = 5;
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool_pid, size, CALL_MS), (int)size);
    CU_ASSERT_EQUAL(set_knob(SHOAL_POOL_SET_PREFETCH, prefetch), 0);
    CU_ASSERT_EQUAL(set_knob(SHOAL_POOL_SET_BUFFER, buffer), 0);
    int ok = 0, busy = 0;
    for (int i = 0; i < 100 && busy == 0; i++) {
        int rc = shoal_runtime_send(rt, pool_pid, M_BLOCK, NULL, 0);
        ok += rc == SHOAL_OK;
        busy += rc == SHOAL_EBUSY;
    }
    CU_ASSERT_EQUAL(ok, (int)(buffer + size * prefetch));
    if (ok != (int)(buffer + size * prefetch))
        fprintf(stderr, "\n  admission probe: %d accepted, capacity %u", ok,
                buffer + size * prefetch);
    atomic_store(&gate, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&blocked) == ok, STALL_S);
    CU_ASSERT_EQUAL(atomic_load(&blocked), ok);
}

static shoal_pid_t spawn_pool(void)
{
    shoal_pool_spec_t pull, outer;
    shoal_pool_spec_init(&pull);
    pull.name = "pull";
    pull.worker = &member_beh;
    pull.kind = SHOAL_POOL_KIND_PULL;
    pull.size = 4;
    pull.min_size = 1;
    pull.max_size = 6;
    pull.prefetch = 2;
    pull.buffer = 32;
    pull.restart.max = 100000; /* never degraded */
    pull.restart.within_ms = 1000;
    shoal_pid_t p = SHOAL_PID_NONE;
    if (!sc->nested) {
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &pull, &p), SHOAL_OK);
        return p;
    }
    pull.size = pull.max_size = 2;
    shoal_pool_spec_init(&outer);
    outer.name = "outer";
    outer.worker_pool = &pull;
    outer.size = outer.max_size = 2;
    outer.min_size = 1;
    outer.restart = pull.restart;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &outer, &p), SHOAL_OK);
    return p;
}

/* The pool ends under traffic (drained or stopped) once a third is sent. */
static void end_under_traffic(void)
{
    while (atomic_load(&sent_total) < total / 3 && atomic_load(&producers_done) < PRODUCERS + 1)
        shoal_test_nap();
    atomic_store(&stop_churn, 1);
    int rc = sc->end == PS_END_DRAIN ? shoal_pool_drain(rt, pool_pid, CALL_MS)
                                     : shoal_runtime_stop_actor(rt, pool_pid);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
}

static void run_once(const ps_scenario_t *s, int round)
{
    sc = s;
    reset();
    per_producer = (long)(250000 * shoal_test_stress_scale(0.1));
    if (per_producer < 1000)
        per_producer = 1000;
    casts = per_producer * PRODUCERS;
    ncalls = per_producer / 50;
    total = casts + ncalls;
    seen = calloc((size_t)total, sizeof *seen);
    accepted = calloc((size_t)total, 1);
    CU_ASSERT_FATAL(seen != NULL && accepted != NULL);
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 4;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_WARN;
    o.log_fn = quiet_log;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    pool_pid = spawn_pool();

    double t0 = shoal_test_now();
    static const int index[ACTORS] = {0, 1};
    for (int p = 0; p < ACTORS; p++) {
        shoal_pid_t pid;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &prod_beh, &index[p], NULL, &pid), SHOAL_OK);
        atomic_store(&producer_pid[p], pid);
    }
    pthread_t th[THREADS], caller, churner;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&churner, NULL, churn_thread, (void *)(uintptr_t)round),
                          0);
    for (int p = 0; p < THREADS; p++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[p], NULL, producer_thread, (void *)(uintptr_t)p),
                              0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&caller, NULL, caller_thread, NULL), 0);
    for (int p = 0; p < ACTORS; p++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, atomic_load(&producer_pid[p]), M_GO, NULL, 0),
                              SHOAL_OK);
    if (s->end != PS_END_NONE)
        end_under_traffic();
    /* Producers and the caller finish on their own (calls never hang). */
    double end = shoal_test_now() + 10 * STALL_S;
    while (atomic_load(&producers_done) < PRODUCERS + 1 && shoal_test_now() < end)
        shoal_test_nap();
    if (atomic_load(&producers_done) < PRODUCERS + 1) {
        fprintf(stderr, "\n  senders stuck: %d of %d done, %ld sent\n",
                atomic_load(&producers_done), PRODUCERS + 1, atomic_load(&sent_total));
        abort();
    }
    for (int p = 0; p < THREADS; p++)
        pthread_join(th[p], NULL);
    pthread_join(caller, NULL);
    atomic_store(&stop_churn, 1);
    pthread_join(churner, NULL);

    long acc = 0, refused = atomic_load(&busy_count) + atomic_load(&call_busy);
    for (long id = 0; id < total; id++)
        acc += accepted[id];
    CU_ASSERT_EQUAL(atomic_load(&other_count), 0);
    if (atomic_load(&other_count) != 0)
        fprintf(stderr, "\n  %ld sends failed otherwise (last %s)", atomic_load(&other_count),
                shoal_errname(atomic_load(&other_rc)));
    CU_ASSERT_EQUAL(atomic_load(&call_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&churn_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&duplicates), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad_msgs), 0);
    CU_ASSERT_EQUAL(atomic_load(&wrong_sender), 0);
    CU_ASSERT_EQUAL(atomic_load(&over_held), 0);
    /* Everything accepted settles: handled, failed, or (the pool ended)
     * dropped and counted. Only then are the ids compared. */
    if (s->end != PS_END_NONE)
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled) + atomic_load(&panicked) +
                                      (long)shoal_test_stats(rt).msgs_dropped >=
                                  acc,
                              STALL_S);
    else
        wait_settled(acc);
    long mismatched = 0, lost = 0;
    for (long id = 0; id < total; id++) {
        unsigned char n = atomic_load_explicit(&seen[id], memory_order_relaxed);
        mismatched += n > accepted[id];
        lost += n < accepted[id];
    }
    CU_ASSERT_EQUAL(mismatched, 0); /* handled though refused, or twice */

    if (s->end != PS_END_NONE) {
        /* The pool is gone: every accepted item handled once, failed, or
         * dropped and counted; every call came back (above). */
        uint64_t dropped = shoal_test_stats(rt).msgs_dropped;
        CU_ASSERT_EQUAL((uint64_t)lost, dropped);
        CU_ASSERT_EQUAL(atomic_load(&handled) + atomic_load(&panicked) + (long)dropped, acc);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool_pid, M_WORK, &(uint32_t){0}, 4), SHOAL_ENOPROC);
        fprintf(stderr,
                "\n  [%s, round %d: %ld sent in %.2f s, %ld accepted, %ld refused, %ld after the "
                "end, %llu dropped, %ld churns] ",
                s->name, round + 1, total, shoal_test_now() - t0, acc, refused,
                atomic_load(&enoproc_count) + atomic_load(&call_enoproc),
                (unsigned long long)dropped, atomic_load(&churns));
    } else {
        shoal_pool_stats_t st = stats_now();
        long crashed = crash_ids();
        fprintf(stderr,
                "\n  [%s, round %d: %ld sent in %.2f s, %ld accepted, %ld refused, %ld churns, "
                "%llu restarts, %ld calls answered] ",
                s->name, round + 1, total, shoal_test_now() - t0, acc, refused,
                atomic_load(&churns), (unsigned long long)st.worker_restarts,
                atomic_load(&call_ok) + atomic_load(&call_panic));
        CU_ASSERT_EQUAL(lost, 0);
        CU_ASSERT_EQUAL(atomic_load(&panicked), crashed);
        CU_ASSERT_EQUAL(atomic_load(&handled) + atomic_load(&panicked), acc);
        CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)acc);
        CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)refused);
        CU_ASSERT_EQUAL(st.messages_handled, (uint64_t)(acc - crashed));
        CU_ASSERT_EQUAL(st.messages_failed, (uint64_t)crashed);
        CU_ASSERT_EQUAL(st.messages_dropped, 0);
        CU_ASSERT_EQUAL(st.queue_depth, 0);
        CU_ASSERT_EQUAL(st.buffer_depth, 0);
        CU_ASSERT_EQUAL(st.messages_forwarded, st.messages_handled + st.messages_failed +
                                                   st.messages_dropped + st.queue_depth);
        if (st.messages_forwarded != (uint64_t)acc || st.messages_unhandled != (uint64_t)refused ||
            st.messages_failed != (uint64_t)crashed || st.queue_depth != 0 || lost != 0) {
            fprintf(stderr, "\n  expected forwarded %ld unhandled %ld failed %ld; %ld lost", acc,
                    refused, crashed, lost);
            print_stats("stats", &st);
        }
        if (!s->nested)
            probe_admission();
        CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool_pid, CALL_MS), SHOAL_OK);
        shoal_runtime_stats_t rs = shoal_test_stats(rt);
        CU_ASSERT_EQUAL(rs.msgs_dropped, 0);
        if (rs.msgs_dropped != 0)
            fprintf(stderr, "\n  the drain dropped %llu (handled %ld + panicked %ld of %ld)",
                    (unsigned long long)rs.msgs_dropped, atomic_load(&handled),
                    atomic_load(&panicked), acc);
    }
    shoal_runtime_destroy(rt);
    rt = NULL;
    free(seen);
    free(accepted);
    seen = NULL;
    accepted = NULL;
}

void ps_run(const ps_scenario_t *s)
{
    for (int round = 0; round < ROUNDS && CU_get_number_of_failures() == 0; round++)
        run_once(s, round);
}
