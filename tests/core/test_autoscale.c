/* test_autoscale.c - a pool that sizes itself (core/pool/autoscale.c,
 * shoal/pool.h: elastic pools), under a load this test paces: workers
 * that sleep a fixed time per message, and a producer thread whose rate
 * the test changes. It checks that a step in load reaches the size the
 * load needs within up_for + 1 s, in one decision; that steady load between
 * the thresholds makes no decision; that the pool shrinks only after
 * down_idle of calm, by down_step, cooldown apart, down to min; that a
 * second grow waits out the cooldown after the first, and a shrink starts
 * the cooldown as a grow does (before the next shrink, and before a grow);
 * that the
 * queue-wait signal grows it too, and refusals alone; that pressure
 * shorter than up.for decides nothing; that a resize by command holds until the
 * next decision and bounds hold autoscale in; and that every decision is
 * one log line with its reason.
 *
 * Handlers never call CUnit: they record into atomics.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define TMO 10000u
/* Each message sleeps this long in its handler: what a busy machine adds
 * to a sleep is a few milliseconds whatever its length (the thread waits
 * to run again), which was up to 60 % of a 5 ms sleep (an up decision in
 * the steady phase, both on CI and here); a quarter of it at 20 ms. */
#define SVC_US 20000u
/* Messages a second that take one worker's whole time. */
#define ONE_WORKER (1000000u / SVC_US)
/* A handler that sleeps holds its dispatcher thread: enough threads that
 * the pool's size, not the runtime's threads, bounds how many sleep at
 * once (a pool of blocking handlers grown past runtime.threads gains
 * mailboxes, not concurrency). */
#define THREADS 16u

static atomic_int done;
/* How long the handlers really slept, in all: a loaded machine (or a
 * sanitizer) stretches a sleep, and the size a load needs is counted
 * from the service time it really had. */
static atomic_llong slept_ns;

static int sleeper_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    struct timespec ts = {0, SVC_US * 1000};
    double t = shoal_test_now();
    nanosleep(&ts, NULL);
    atomic_fetch_add(&slept_ns, (long long)((shoal_test_now() - t) * 1e9));
    atomic_fetch_add(&done, 1);
    return 0;
}

static const shoal_behaviour_t sleeper = {.name = "sleeper", .handle_message = sleeper_message};

/* ---- a paced producer ---------------------------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    _Atomic uint32_t rate; /* sends a second; 0: none */
    atomic_int stop;
    atomic_long ok, busy;
    pthread_t t;
} load_t;

static void *load_main(void *arg)
{
    load_t *l = arg;
    double start = shoal_test_now();
    uint32_t rate = 0;
    double sent = 0;
    while (!atomic_load(&l->stop)) {
        uint32_t r = atomic_load(&l->rate);
        double now = shoal_test_now();
        if (r != rate) { /* a new rate counts from now */
            rate = r;
            start = now;
            sent = 0;
        }
        while (rate != 0 && sent < (now - start) * rate) {
            uint32_t x = 0;
            int rc = shoal_runtime_send(l->rt, l->pool, 1, &x, sizeof x);
            if (rc == SHOAL_OK)
                atomic_fetch_add(&l->ok, 1);
            else
                atomic_fetch_add(&l->busy, 1);
            sent++;
        }
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void load_start(load_t *l, shoal_runtime_t *rt, shoal_pid_t pool)
{
    l->rt = rt;
    l->pool = pool;
    atomic_store(&l->rate, 0);
    atomic_store(&l->stop, 0);
    atomic_store(&l->ok, 0);
    atomic_store(&l->busy, 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&l->t, NULL, load_main, l), 0);
}

static void load_stop(load_t *l)
{
    atomic_store(&l->stop, 1);
    pthread_join(l->t, NULL);
}

static shoal_pool_spec_t spec_of(uint32_t kind, uint32_t size, uint32_t max, uint32_t mailbox)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "auto";
    s.worker = &sleeper;
    s.kind = kind;
    s.size = size;
    s.min_size = 1;
    s.max_size = max;
    s.mailbox = mailbox;
    s.buffer = mailbox * 2;
    s.autoscale.when = SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_REFUSED;
    s.autoscale.up_for_ms = 300;
    s.autoscale.cooldown_ms = 300;
    s.autoscale.down_idle_ms = 600;
    s.autoscale.down_step = 2;
    return s;
}

#define STATS(rt, p) shoal_test_pool_stats(rt, p)

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- a step up, steady, a step down ---------------------------------------------- */

static void step_case(uint32_t kind)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = spec_of(kind, 1, 16, 4);
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    sleep_s(0.6); /* a few quiet readings first: nothing happens */
    CU_ASSERT_EQUAL(STATS(rt, p).autoscale_ups, 0);
    CU_ASSERT_EQUAL(STATS(rt, p).autoscale_downs, 0);

    /* 4 workers' time; at the target busy ratio (60%, midway between 80%
     * and 40%): 7 workers. A sleep stretched past SVC_US needs more: at
     * most 3 over what the service time the handlers really had needs
     * (ceil(rate x mean / 0.6)). */
    double t0 = shoal_test_now();
    long long ns0 = atomic_load(&slept_ns);
    int n0 = atomic_load(&done);
    atomic_store(&l.rate, 4 * ONE_WORKER);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).target_size >= 7, 0.3 + 1.0 + 5.0);
    double reached = shoal_test_now() - t0;
    shoal_pool_stats_t st = STATS(rt, p);
    int n = atomic_load(&done) - n0;
    double mean_s = n > 0 ? (double)(atomic_load(&slept_ns) - ns0) / 1e9 / n : SVC_US / 1e6;
    uint32_t need = (uint32_t)(4.0 * ONE_WORKER * mean_s / 0.6 + 0.999);
    uint32_t peak = st.target_size;
    CU_ASSERT(n > 0);
    CU_ASSERT(peak >= 7 && peak <= (need < 7 ? 7 : need) + 3);
    CU_ASSERT_EQUAL(st.autoscale_ups, 1); /* in one decision */
    CU_ASSERT(reached <= 0.3 + 1.0);
    printf("\n    %s: 1 -> %u workers %.2f s after the step (for: 0.3 s; "
           "%.2f ms a message needs %u) ",
           kind == SHOAL_POOL_KIND_PULL ? "pull" : "forward", peak, reached, mean_s * 1e3, need);
    shoal_test_assert_logged("auto: autoscale: up 1 -> ");

    /* Steady at about 60% busy, between the thresholds: no decision. */
    sleep_s(2.0);
    st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.autoscale_ups, 1);
    CU_ASSERT_EQUAL(st.autoscale_downs, 0);
    CU_ASSERT_EQUAL(st.target_size, peak);
    CU_ASSERT(st.busy > 400 && st.busy < 800);

    /* No load: calm for 0.6 s, then down 2 at a time, 0.3 s apart, to 1. */
    atomic_store(&l.rate, 0);
    double t1 = shoal_test_now();
    sleep_s(0.45);
    CU_ASSERT_EQUAL(STATS(rt, p).autoscale_downs, 0); /* not before down_idle */
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).target_size == 1, 20.0);
    st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 1);
    CU_ASSERT_EQUAL(st.autoscale_downs, (peak - 1 + 1) / 2);
    CU_ASSERT_EQUAL(st.autoscale_ups, 1);
    CU_ASSERT(shoal_test_now() - t1 >= 0.6 + 0.3 * (double)((peak - 1 + 1) / 2 - 1));
    CU_ASSERT_EQUAL(shoal_test_log_count("auto: autoscale: down "), (peak - 1 + 1) / 2);
    shoal_test_assert_logged("workers: calm for ");
    load_stop(&l);
    /* Nothing lost on the way: every accepted message ran. */
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&done) == atomic_load(&l.ok), 10.0);
    CU_ASSERT_EQUAL(atomic_load(&done), atomic_load(&l.ok));
    shoal_runtime_destroy(rt);
}

static void forward_step(void) { step_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_step(void) { step_case(SHOAL_POOL_KIND_PULL); }

/* ---- steady load between the thresholds ---------------------------------------- */

/* 4 workers at about 60% busy, midway between down 40% and up 80% (a
 * sleep stretched by a loaded machine moves the reading up): in 4 s, no
 * decision. */
static void steady_no_flap(void)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s = spec_of(SHOAL_POOL_KIND_FORWARD, 4, 16, 16);
    s.autoscale.when = SHOAL_AUTOSCALE_BUSY;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    atomic_store(&l.rate, 4 * 600000 / (SVC_US + 100)); /* 60% of 4 workers' time */
    sleep_s(4.0);
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.autoscale_ups, 0);
    CU_ASSERT_EQUAL(st.autoscale_downs, 0);
    CU_ASSERT_EQUAL(st.target_size, 4);
    CU_ASSERT(st.busy > 400 && st.busy < 800);
    printf("\n    busy %u.%u%% over the last tick, 0 decisions in 4 s ", st.busy / 10,
           st.busy % 10);
    load_stop(&l);
    shoal_runtime_destroy(rt);
}

/* ---- a decision's size, from its own reading ------------------------------------ */

/* The first grow decision in the kept log went from the spec's size to
 * exactly what its own reading asked for: the larger of size + up.step and
 * the workers its line says the load needs at the target busy ratio, no
 * more than max (autoscale.c, grow). The pool's signals may be a queue
 * wait or refusals, but the size is always the reading's. */
static void assert_first_up_exact(const shoal_pool_spec_t *s)
{
    char line[512];
    bool found = shoal_test_log_line("autoscale: up ", line, sizeof line);
    CU_ASSERT_FATAL(found);
    unsigned from = 0, to = 0, need = 0;
    const char *a = strstr(line, "autoscale: up ");
    const char *b = strstr(line, " us a message: ");
    CU_ASSERT_FATAL(a != NULL && b != NULL);
    CU_ASSERT_EQUAL_FATAL(sscanf(a, "autoscale: up %u -> %u workers", &from, &to), 2);
    CU_ASSERT_EQUAL_FATAL(sscanf(b, " us a message: %u workers at", &need), 1);
    unsigned want = from + s->autoscale.up_step;
    want = need > want ? need : want;
    want = want < s->max_size ? want : s->max_size;
    CU_ASSERT_EQUAL(from, s->size);
    CU_ASSERT_EQUAL(to, want);
    printf("\n    first decision %u -> %u (the reading needed %u) ", from, to, need);
}

/* ---- the queue-wait signal ------------------------------------------------------- */

/* No refusals (a deep mailbox, or buffer) but a growing queue: wait_p99
 * past 5 ms grows the pool. */
static void grows_on_wait_case(uint32_t kind)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = spec_of(kind, 1, 8, 1000);
    s.autoscale.when = SHOAL_AUTOSCALE_WAIT;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    atomic_store(&l.rate, 8 * ONE_WORKER / 5); /* 1.6 workers' time into 1 */
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_ups >= 1, 10.0);
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT(st.autoscale_ups >= 1);
    CU_ASSERT(st.target_size >= 2);
    CU_ASSERT_EQUAL(st.messages_unhandled, 0);
    shoal_test_assert_logged("us > 5000us for ");
    assert_first_up_exact(&s);
    load_stop(&l);
    shoal_runtime_destroy(rt);
}

static void forward_grows_on_wait(void) { grows_on_wait_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_grows_on_wait(void) { grows_on_wait_case(SHOAL_POOL_KIND_PULL); }

/* ---- `for`, and refusals alone ---------------------------------------------------- */

/* Pressure shorter than up.for decides nothing: twice the pool's capacity
 * for 1 s (four ticks) against a `for` of 2.5 s, then calm; once it lasts
 * past `for`, the pool grows. */
static void short_pressure_no_decision(void)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s = spec_of(SHOAL_POOL_KIND_FORWARD, 2, 8, 16);
    s.autoscale.when = SHOAL_AUTOSCALE_BUSY;
    s.autoscale.up_for_ms = 2500;
    s.autoscale.down_idle_ms = 60000; /* no shrink in this case */
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    atomic_store(&l.rate, 2 * 2 * ONE_WORKER); /* twice 2 workers' time */
    sleep_s(1.0);
    atomic_store(&l.rate, 0);
    sleep_s(3.0); /* past `for`, counted from the pressure's start */
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.autoscale_ups, 0);
    CU_ASSERT_EQUAL(st.target_size, 2);
    atomic_store(&l.rate, 2 * 2 * ONE_WORKER);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_ups >= 1, 10.0);
    CU_ASSERT(STATS(rt, p).autoscale_ups >= 1);
    load_stop(&l);
    shoal_runtime_destroy(rt);
}

/* Refusals alone (when: refused > 0, no busy signal): a pool that refuses
 * grows, and its decision's line names the refusals. */
static void grows_on_refusals_case(uint32_t kind)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = spec_of(kind, 1, 8, 4);
    s.autoscale.when = SHOAL_AUTOSCALE_REFUSED;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    atomic_store(&l.rate, 3 * ONE_WORKER); /* three workers' time into one */
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_ups >= 1, 10.0);
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT(st.autoscale_ups >= 1);
    CU_ASSERT(st.target_size >= 2);
    CU_ASSERT(st.messages_unhandled > 0);
    shoal_test_assert_logged("auto: autoscale: up 1 -> ");
    shoal_test_assert_logged("/s > 0/s for ");
    assert_first_up_exact(&s);
    load_stop(&l);
    shoal_runtime_destroy(rt);
}

static void forward_grows_on_refusals(void) { grows_on_refusals_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_grows_on_refusals(void) { grows_on_refusals_case(SHOAL_POOL_KIND_PULL); }

/* ---- the cooldown after a grow ------------------------------------------------------- */

/* A second step in load right after a decision up waits out the cooldown:
 * the next decision up comes no sooner than cooldown_ms after the first
 * (without it: up.for, 0.3 s, after), and then at once. */
static void cooldown_after_up(void)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = spec_of(SHOAL_POOL_KIND_FORWARD, 1, 16, 4);
    s.autoscale.cooldown_ms = 1000;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    atomic_store(&l.rate, 4 * ONE_WORKER);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_ups == 1, 5.0);
    double t_a = shoal_test_now(); /* no earlier than the decision */
    CU_ASSERT_EQUAL_FATAL(STATS(rt, p).autoscale_ups, 1);
    uint32_t first = STATS(rt, p).target_size;
    atomic_store(&l.rate, 10 * ONE_WORKER); /* 10 workers' time: pressure at once */
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_ups == 2, 5.0);
    double t_b = shoal_test_now();
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.autoscale_ups, 2);
    CU_ASSERT(st.target_size > first);
    /* The poll sees each decision within a nap of it: the first's time is
     * late by at most that, so the gap is the cooldown less a nap. */
    CU_ASSERT(t_b - t_a >= 0.95);
    CU_ASSERT(t_b - t_a <= 1.0 + 0.3 + 1.0);
    CU_ASSERT_EQUAL(shoal_test_log_count("auto: autoscale: up "), 2);
    printf("\n    up to %u, then to %u %.2f s later (cooldown 1 s) ", first, st.target_size,
           t_b - t_a);
    load_stop(&l);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&done) == atomic_load(&l.ok), 10.0);
    CU_ASSERT_EQUAL(atomic_load(&done), atomic_load(&l.ok));
    shoal_runtime_destroy(rt);
}

/* ---- the cooldown after a shrink ------------------------------------------------------ */

/* A decision down starts the cooldown as a decision up does: with no load,
 * the second shrink comes cooldown_ms after the first (without it:
 * down.idle, 0.2 s, after); and a load stepped up right after a shrink
 * grows the pool no sooner than cooldown_ms after that shrink (without
 * it: up.for, 0.3 s, after), then within up.for + 1 s. */
static void cooldown_after_down(void)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = spec_of(SHOAL_POOL_KIND_FORWARD, 7, 16, 4);
    s.autoscale.cooldown_ms = 1000;
    s.autoscale.down_idle_ms = 200;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    /* No load: 7 -> 5 after down.idle, then 5 -> 3 a cooldown later. */
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_downs == 1, 5.0);
    double t_a = shoal_test_now();
    CU_ASSERT_EQUAL_FATAL(STATS(rt, p).autoscale_downs, 1);
    CU_ASSERT_EQUAL(STATS(rt, p).target_size, 5);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_downs == 2, 5.0);
    double t_b = shoal_test_now();
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.autoscale_downs, 2);
    CU_ASSERT_EQUAL(st.target_size, 3);
    CU_ASSERT(t_b - t_a >= 0.95);
    CU_ASSERT(t_b - t_a <= 1.0 + 0.2 + 1.0);
    /* Pressure at once after the second shrink: 10 workers' time. */
    atomic_store(&l.rate, 10 * ONE_WORKER);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_ups == 1, 5.0);
    double t_c = shoal_test_now();
    st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.autoscale_ups, 1);
    CU_ASSERT_EQUAL(st.autoscale_downs, 2);
    CU_ASSERT(st.target_size > 3);
    CU_ASSERT(t_c - t_b >= 0.95);
    CU_ASSERT(t_c - t_b <= 1.0 + 0.3 + 1.0);
    CU_ASSERT_EQUAL(shoal_test_log_count("auto: autoscale: down "), 2);
    CU_ASSERT_EQUAL(shoal_test_log_count("auto: autoscale: up "), 1);
    printf("\n    down to 5, to 3 %.2f s later, up to %u %.2f s after that (cooldown 1 s) ",
           t_b - t_a, st.target_size, t_c - t_b);
    load_stop(&l);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&done) == atomic_load(&l.ok), 10.0);
    CU_ASSERT_EQUAL(atomic_load(&done), atomic_load(&l.ok));
    shoal_runtime_destroy(rt);
}

/* ---- commands and bounds ------------------------------------------------------------ */

/* A resize by command holds through the cooldown (no decision undoes it at
 * once) until autoscale's next decision; bounds set later hold it in. */
static void commands_and_bounds(void)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s = spec_of(SHOAL_POOL_KIND_FORWARD, 2, 16, 4);
    s.autoscale.cooldown_ms = 1000;
    s.autoscale.down_idle_ms = 300;
    s.autoscale.down_step = 16;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    sleep_s(0.1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 6, TMO), 6);
    sleep_s(0.6); /* calm, but within the cooldown of the command */
    CU_ASSERT_EQUAL(STATS(rt, p).target_size, 6);
    CU_ASSERT_EQUAL(STATS(rt, p).autoscale_downs, 0);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).target_size == 1, 5.0);
    CU_ASSERT_EQUAL(STATS(rt, p).target_size, 1); /* the next decision: down to min */
    CU_ASSERT_EQUAL(STATS(rt, p).autoscale_downs, 1);

    /* Bounds 2..3: a load that needs 7 gets 3. */
    CU_ASSERT_EQUAL(shoal_pool_set_bounds(rt, p, 2, 3, TMO), 2);
    load_t l;
    load_start(&l, rt, p);
    atomic_store(&l.rate, 4 * ONE_WORKER);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).target_size == 3, 10.0);
    sleep_s(1.5);
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 3);
    CU_ASSERT_EQUAL(st.max_size, 3);
    CU_ASSERT_EQUAL(st.autoscale_ups, 1); /* 2 -> 3, and no more: at max */
    load_stop(&l);
    shoal_runtime_destroy(rt);
}

/* ---- a step past the floor ----------------------------------------------------------- */

/* min_size 0 and a down_step as big as the pool: calm shrinks it to one
 * worker (autoscale never takes a pool to none), not never. */
static void shrinks_past_floor(void)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(THREADS);
    shoal_pool_spec_t s = spec_of(SHOAL_POOL_KIND_FORWARD, 4, 16, 4);
    s.min_size = 0;
    s.autoscale.when = SHOAL_AUTOSCALE_BUSY;
    s.autoscale.down_idle_ms = 300;
    s.autoscale.down_step = 8;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).target_size == 1, 3.0);
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 1);
    CU_ASSERT_EQUAL(st.autoscale_downs, 1);
    sleep_s(1.0); /* and no further: never to none */
    st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 1);
    CU_ASSERT_EQUAL(st.autoscale_downs, 1);
    shoal_runtime_destroy(rt);
}

/* A step down past what the load needs goes as far as that: at 7 workers
 * under one worker's time (two at the target 60 % busy), with down.step
 * 4, the pool goes 7 -> 3 -> 2 and stays at 2 -- not 7 -> 3 and then
 * nothing, the step to 1 refused for the load it would leave one worker
 * (SCALE's autoscale step ended at 5 so). */
static void shrinks_to_what_the_load_needs(void)
{
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = spec_of(SHOAL_POOL_KIND_FORWARD, 7, 16, 4);
    s.autoscale.down_idle_ms = 400;
    s.autoscale.down_step = 4;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    load_t l;
    load_start(&l, rt, p);
    atomic_store(&l.rate, ONE_WORKER);
    SHOAL_TEST_WAIT_UNTIL(STATS(rt, p).autoscale_downs == 2, 10.0);
    shoal_pool_stats_t st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.autoscale_downs, 2);
    CU_ASSERT_EQUAL(st.target_size, 2);
    CU_ASSERT_EQUAL(shoal_test_log_count("auto: autoscale: down 7 -> 3 workers"), 1);
    CU_ASSERT_EQUAL(shoal_test_log_count("auto: autoscale: down 3 -> 2 workers"), 1);
    sleep_s(1.5); /* and there it stays: 2 are what the load needs */
    st = STATS(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 2);
    CU_ASSERT_EQUAL(st.autoscale_downs, 2);
    CU_ASSERT_EQUAL(st.autoscale_ups, 0);
    load_stop(&l);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&done) == atomic_load(&l.ok), 10.0);
    CU_ASSERT_EQUAL(atomic_load(&done), atomic_load(&l.ok));
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: a step in load, steady, then none", forward_step},
        {"pull: a step in load, steady, then none", pull_step},
        {"steady load between the thresholds: no decision", steady_no_flap},
        {"forward: the queue wait grows it", forward_grows_on_wait},
        {"pull: the queue wait grows it", pull_grows_on_wait},
        {"pressure shorter than up.for: no decision", short_pressure_no_decision},
        {"forward: refusals alone grow it", forward_grows_on_refusals},
        {"pull: refusals alone grow it", pull_grows_on_refusals},
        {"a second grow waits out the cooldown", cooldown_after_up},
        {"a shrink starts the cooldown too", cooldown_after_down},
        {"a command holds until the next decision; bounds hold", commands_and_bounds},
        {"min 0, a step as big as the pool: down to one", shrinks_past_floor},
        {"a step down stops at what the load needs", shrinks_to_what_the_load_needs},
        {NULL, NULL},
    };
    return shoal_test_run("autoscale", cases);
}
