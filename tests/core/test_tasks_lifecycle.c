/* test_tasks_lifecycle.c - a task pool's life (core/tasks/tasks.c,
 * shoal/tasks.h) -- created, resized, released -- driven the way a careless
 * operator or a hostile caller would, with exact outcomes
 * (test_tasks_submit, _results, _sizing and _release cover each function on
 * its own):
 *   - release racing submitters on four threads (submit, try_submit, a
 *     group): every task runs exactly once or is refused, never both;
 *   - tune from three threads with submits, and racing release;
 *   - release twice at once, release_timeout(0), destroy after a timeout;
 *   - a runtime at max_actors: every call that would block the thread gets
 *     SHOAL_ELIMIT, except release and destroy, which wait without an
 *     actor (so a pool whose own workers fill max_actors can end);
 *   - bad arguments to every function;
 *   - idle expiry down to min_size 0 between bursts, with lazy grow.
 *
 * Tasks never call CUnit: they record into atomics (tasks_kit.h); the test
 * thread asserts after synchronising on them. Tasks that must stay put wait
 * on a gate (one for all, or one of their own) that the test opens.
 * Deadlines here only bound waits: every one is generous.
 */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tasks_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TK_WAIT_S)

/* ---- release racing submitters --------------------------------------------------- */

#define RACE_THREADS 4
#define RACE_PER 300
#define RACE_ROUNDS 6
#define RACE_TAIL 50 /* each racer's last tries: made once the pool drains */

typedef struct {
    pthread_t th;
    shoal_runtime_t *rt;
    shoal_tasks_t *t;
    shoal_task_group_t *g;
    int who; /* 0, 1: submit; 2: try_submit; 3: group_submit */
    int rc[RACE_PER];
    int odd;      /* codes this kind of call may not give */
    int reopened; /* an accepted task after a SHOAL_ESHUTDOWN */
} racer_t;

static atomic_int race_tries, race_after;

/* Releases the pool once the racers have made race_after tries: it spins,
 * so the release lands among the tries however fast they go. */
static void *race_releaser(void *arg)
{
    while (atomic_load(&race_tries) < atomic_load(&race_after))
        sched_yield();
    return (void *)(intptr_t)shoal_tasks_release(arg);
}

/* Whether the pool drains or has ended: release has closed it. */
static bool draining(shoal_runtime_t *rt, shoal_tasks_t *t)
{
    shoal_pool_stats_t st;
    return shoal_pool_stats(rt, shoal_tasks_pid(t), &st, TK_LONG_MS) != SHOAL_OK ||
           st.state == SHOAL_POOL_DRAINING;
}

static void *racer_main(void *arg)
{
    racer_t *r = arg;
    bool shut = false;
    for (int i = 0; i < RACE_PER; i++) {
        if (i == RACE_PER - RACE_TAIL) {
            double end = shoal_test_now() + TK_WAIT_S;
            while (!draining(r->rt, r->t) && shoal_test_now() < end)
                shoal_test_nap();
        }
        int idx = r->who * RACE_PER + i;
        tk_job_t *j = tk_job(idx, 0, r->who == 3 && i % 9 == 4 ? 5 : 0);
        int rc = r->who == 2   ? shoal_tasks_try_submit(r->t, tk_job_fn, j)
                 : r->who == 3 ? shoal_task_group_submit(r->g, tk_job_fn, j, TK_LONG_MS)
                               : shoal_tasks_submit(r->t, tk_job_fn, j, TK_LONG_MS);
        r->rc[i] = rc;
        r->odd += rc != SHOAL_OK && rc != SHOAL_ESHUTDOWN && !(r->who == 2 && rc == SHOAL_EBUSY);
        r->reopened += shut && rc == SHOAL_OK;
        shut = shut || rc == SHOAL_ESHUTDOWN;
        atomic_fetch_add(&race_tries, 1);
    }
    return NULL;
}

/* Four threads submit into a small pool (submit waits for room, try_submit
 * is refused when full, a group's submits) while a fifth releases it after
 * a different number of tries each round; each submitter's last 50 tries
 * come once the pool drains. Each call gives SHOAL_OK or SHOAL_ESHUTDOWN
 * (try_submit also SHOAL_EBUSY), the last 50 SHOAL_ESHUTDOWN; after a
 * thread's first SHOAL_ESHUTDOWN it is never accepted again; each accepted
 * task ran once, each refused one never; submitted and completed equal the
 * accepted; the group's first error is 5 exactly when an accepted member
 * returned it. */
static void release_races_submitters_on_four_threads(void)
{
    shoal_runtime_t *rt = tk_runtime();
    for (int round = 0; round < RACE_ROUNDS; round++) {
        tk_reset();
        atomic_store(&race_tries, 0);
        shoal_tasks_t *t = tk_make(rt, 3, 8);
        shoal_task_group_t *g = NULL;
        CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
        static racer_t r[RACE_THREADS];
        atomic_store(&race_after, 20 + round * 170);
        for (int k = 0; k < RACE_THREADS; k++) {
            memset(&r[k], 0, sizeof r[k]);
            r[k].rt = rt;
            r[k].t = t;
            r[k].g = g;
            r[k].who = k;
            CU_ASSERT_EQUAL_FATAL(pthread_create(&r[k].th, NULL, racer_main, &r[k]), 0);
        }
        pthread_t rel;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&rel, NULL, race_releaser, t), 0);
        for (int k = 0; k < RACE_THREADS; k++)
            pthread_join(r[k].th, NULL);
        void *rc = NULL;
        pthread_join(rel, &rc);
        CU_ASSERT_EQUAL((intptr_t)rc, SHOAL_OK);
        int accepted = 0, wrong = 0, odd = 0, reopened = 0, tail = 0;
        bool failed_member = false;
        for (int k = 0; k < RACE_THREADS; k++) {
            odd += r[k].odd;
            reopened += r[k].reopened;
            for (int i = 0; i < RACE_PER; i++) {
                int idx = k * RACE_PER + i;
                bool ok = r[k].rc[i] == SHOAL_OK;
                accepted += ok;
                tail += i >= RACE_PER - RACE_TAIL && r[k].rc[i] == SHOAL_ESHUTDOWN;
                wrong += atomic_load(&tk_ran[idx]) != (ok ? 1 : 0);
                failed_member = failed_member || (ok && k == 3 && tk_jobs[idx].ret != 0);
            }
        }
        CU_ASSERT_EQUAL(odd, 0);
        CU_ASSERT_EQUAL(reopened, 0);
        CU_ASSERT_EQUAL(wrong, 0);
        CU_ASSERT_EQUAL(tail, RACE_THREADS * RACE_TAIL);
        CU_ASSERT_EQUAL(atomic_load(&tk_done), accepted);
        CU_ASSERT_EQUAL(shoal_tasks_submitted(t), (uint64_t)accepted);
        CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)accepted);
        CU_ASSERT_EQUAL(shoal_tasks_queued(t), 0);
        CU_ASSERT_EQUAL(shoal_tasks_running(t), 0);
        int first = -1;
        CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_OK); /* all ran */
        CU_ASSERT_EQUAL(first, failed_member ? 5 : 0);
        shoal_task_group_free(g);
        CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    }
    shoal_runtime_destroy(rt);
}

/* ---- tune ------------------------------------------------------------------------ */

#define TUNERS 3
#define TUNE_MIN 2
#define TUNE_MAX 16

static const uint32_t tune_values[] = {0, 1, 2, 3, 5, 16, 17, 1000, UINT32_MAX, INT32_MAX + 1u};

static int clamp_tune(uint32_t v)
{
    return v < TUNE_MIN ? TUNE_MIN : v > TUNE_MAX ? TUNE_MAX : (int)v;
}

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    int who;
    int calls, wrong, shut, odd_after_shut;
    int zero; /* answers of 0 (below min_size) */
} tuner_t;

static atomic_int tune_stop, tune_calls;

/* Tunes until told to stop or, after its first SHOAL_ESHUTDOWN, three
 * calls more: each answer is its value clamped until then, and only
 * SHOAL_ESHUTDOWN from then on. */
static void *tuner_main(void *arg)
{
    tuner_t *u = arg;
    size_t nv = sizeof tune_values / sizeof tune_values[0];
    for (int i = u->who; !atomic_load(&tune_stop) && u->shut < 4; i++) {
        uint32_t v = tune_values[(size_t)i % nv];
        int rc = shoal_tasks_tune(u->t, v);
        u->calls++;
        atomic_fetch_add(&tune_calls, 1);
        u->zero += rc == 0;
        if (rc == SHOAL_ESHUTDOWN)
            u->shut++;
        else if (u->shut != 0)
            u->odd_after_shut++;
        else if (rc != clamp_tune(v))
            u->wrong++;
    }
    return NULL;
}

/* A pool of 4 workers, a queue of 32, tunable within [TUNE_MIN, TUNE_MAX]. */
static shoal_tasks_t *tune_pool(shoal_runtime_t *rt)
{
    shoal_tasks_opts_t o = tk_opts(4, 32);
    o.min_size = TUNE_MIN;
    o.max_size = TUNE_MAX;
    return tk_make_with(rt, &o);
}

/* Three threads tune (0, 1, huge, UINT32_MAX, INT32_MAX + 1 ...) while
 * another submits 2000 tasks: every answer is the value clamped to
 * [min_size, max_size]; every task runs once; a last tune sets cap and the
 * workers exactly. */
static void tune_storm_with_submits(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tune_pool(rt);
    atomic_store(&tune_stop, 0);
    atomic_store(&tune_calls, 0);
    tuner_t u[TUNERS];
    for (int k = 0; k < TUNERS; k++) {
        u[k] = (tuner_t){.t = t, .who = k * 3};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&u[k].th, NULL, tuner_main, &u[k]), 0);
    }
    int refused = 0;
    for (int i = 0; i < 2000; i++)
        refused += shoal_tasks_submit(t, tk_job_fn, tk_job(i, 0, 0), TK_LONG_MS) != SHOAL_OK;
    CU_ASSERT_EQUAL(refused, 0);
    WAIT_UNTIL(atomic_load(&tk_done) == 2000);
    /* The tuners may not have had the CPU yet (a busy machine): they tune
     * TUNERS times in all before they stop. */
    WAIT_UNTIL(atomic_load(&tune_calls) >= TUNERS);
    atomic_store(&tune_stop, 1);
    int calls = 0, wrong = 0;
    for (int k = 0; k < TUNERS; k++) {
        pthread_join(u[k].th, NULL);
        calls += u[k].calls;
        wrong += u[k].wrong + u[k].shut + u[k].odd_after_shut;
    }
    CU_ASSERT(calls > 0);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(tk_ran_times(0, 2000, 1), 2000);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 7), 7);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 7);
    WAIT_UNTIL(tk_stats(rt, t).pool_size == 7 && tk_stats(rt, t).retiring == 0);
    CU_ASSERT_EQUAL(tk_stats(rt, t).pool_size, 7);
    WAIT_UNTIL(shoal_tasks_completed(t) == 2000); /* counted after the task's end */
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2000);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 2000);
    tk_finish(rt, t);
}

#define TUNE_ROUNDS 300

/* Three threads tune while the pool is released, over 300 pools: each
 * answer is the value clamped to [min_size, max_size] or SHOAL_ESHUTDOWN
 * (tasks.h: "the new size ... or SHOAL_ESHUTDOWN once released"), never 0,
 * which is below min_size; after the first SHOAL_ESHUTDOWN only that. The
 * tasks submitted meanwhile all run. */
static void tune_races_release(void)
{
    shoal_runtime_t *rt = tk_runtime();
    int zero = 0, wrong = 0, shut = 0, ran_ok = 0;
    for (int round = 0; round < TUNE_ROUNDS; round++) {
        tk_reset();
        shoal_tasks_t *t = tune_pool(rt);
        atomic_store(&tune_stop, 0);
        atomic_store(&tune_calls, 0);
        tuner_t u[TUNERS];
        for (int k = 0; k < TUNERS; k++) {
            u[k] = (tuner_t){.t = t, .who = k * 3 + round};
            CU_ASSERT_EQUAL_FATAL(pthread_create(&u[k].th, NULL, tuner_main, &u[k]), 0);
        }
        for (int i = 0; i < 20; i++)
            CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, 0, 0), TK_LONG_MS),
                            SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
        for (int k = 0; k < TUNERS; k++) {
            pthread_join(u[k].th, NULL); /* each ends on SHOAL_ESHUTDOWN */
            wrong += u[k].wrong + u[k].odd_after_shut;
            shut += u[k].shut == 4;
            zero += u[k].zero;
        }
        ran_ok += tk_ran_times(0, 20, 1);
        CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
        CU_ASSERT_EQUAL(shoal_tasks_tune(t, 3), SHOAL_ESHUTDOWN);
        CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    }
    CU_ASSERT_EQUAL(zero, 0);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(shut, TUNERS * TUNE_ROUNDS);
    CU_ASSERT_EQUAL(ran_ok, 20 * TUNE_ROUNDS);
    shoal_runtime_destroy(rt);
}

/* ---- release --------------------------------------------------------------------- */

/* release_timeout(0) and (30) on a busy pool: SHOAL_ETIMEDOUT each time,
 * the pool closed from the first; two threads then release at once (both
 * wait); when the held tasks finish both get SHOAL_OK, and a third call
 * SHOAL_OK at once. A second pool whose only release timed out is
 * destroyed: destroy waits for its tasks, all of which ran. */
static void release_twice_at_once_and_after_timeouts(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 2, 8);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, A_BLOCK, 0), TK_LONG_MS),
                        SHOAL_OK);
    for (int i = 2; i < 6; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, 0, 0), TK_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 2);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 0), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(6, 0, 0)), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 0), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 30), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(7, 0, 0), TK_LONG_MS), SHOAL_ESHUTDOWN);
    tk_caller_t rel[2];
    tk_start(&rel[0], t, C_RELEASE, NULL);
    tk_start(&rel[1], t, C_RELEASE, NULL);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 30), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(tk_returned(rel, 2), 0);
    atomic_store(&tk_gate, 1);
    for (int k = 0; k < 2; k++) {
        pthread_join(rel[k].th, NULL);
        CU_ASSERT_EQUAL(atomic_load(&rel[k].rc), SHOAL_OK);
    }
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 6, 1), 6);
    CU_ASSERT_EQUAL(tk_ran_times(6, 8, 0), 2);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 6);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 6);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);

    tk_reset();
    t = tk_make(rt, 1, 8);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(0, A_OWN, 0), TK_LONG_MS), SHOAL_OK);
    for (int i = 1; i < 5; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, 0, 0), TK_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 10), SHOAL_ETIMEDOUT);
    atomic_store(&tk_gate_of[0], 1);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 5, 1), 5);
    shoal_runtime_destroy(rt);
}

/* ---- a runtime at max_actors ----------------------------------------------------- */

static int filler_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}

static const shoal_behaviour_t filler = {.name = "filler", .handle_message = filler_message};

#define FILL_MAX 64

/* A runtime whose every actor slot is taken (max_actors 32): a thread that
 * would block waits as an actor of its own, and none is left. With the pool
 * full, submit, submit_wait and a group's submit, then tune return
 * SHOAL_ELIMIT (none of their tasks runs, the size stays); try_submit is
 * SHOAL_EBUSY, and a group's wait, which takes no actor, SHOAL_OK.
 * release_timeout waits all the same, without an actor: SHOAL_ETIMEDOUT
 * while a task is held, the pool closed (submits and tune:
 * SHOAL_ESHUTDOWN); once the task goes on, release succeeds with the two
 * tasks accepted before run, with every other slot still taken. (It
 * returned SHOAL_ELIMIT, and a pool whose own workers filled max_actors
 * could never be released or destroyed.) */
static void a_full_runtime_refuses_with_elimit(void)
{
    tk_reset();
    shoal_runtime_opts_t ro;
    shoal_runtime_opts_init(&ro);
    ro.threads = 6; /* as tk_runtime's: the held task keeps one */
    ro.debug_checks = 1;
    ro.log_level = SHOAL_LOG_WARN;
    ro.max_actors = 32;
    shoal_runtime_t *rt = shoal_test_runtime_logged_opts(&ro);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_tasks_t *t = tk_make(rt, 1, 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(0, A_BLOCK, 0), TK_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(1, 0, 0), TK_LONG_MS), SHOAL_OK);
    shoal_pid_t fill[FILL_MAX];
    int n = 0, rc = SHOAL_OK;
    while (n < FILL_MAX &&
           (rc = shoal_runtime_spawn(rt, &filler, NULL, NULL, &fill[n])) == SHOAL_OK)
        n++;
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_ELIMIT);

    int r = 55, first = -1;
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(2, 0, 0)), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(2, 0, 0), TK_LONG_MS), SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tk_job_fn, tk_job(3, 0, 0), TK_LONG_MS, &r),
                    SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(r, 55);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, tk_job_fn, tk_job(4, 0, 0), TK_LONG_MS),
                    SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TK_LONG_MS, &first), SHOAL_OK); /* no member */
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 3), SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 50), SHOAL_ETIMEDOUT); /* the task is held */
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(5, 0, 0)), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 3), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 2);
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &filler, NULL, NULL, &fill[n]), SHOAL_ELIMIT);
    atomic_store(&tk_gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 2, 1), 2);
    CU_ASSERT_EQUAL(tk_ran_times(2, 6, 0), 4);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2);
    for (int i = 0; i < n; i++)
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, fill[i]), SHOAL_OK);
    shoal_task_group_free(g);
    tk_finish(rt, t);
}

/* ---- bad arguments --------------------------------------------------------------- */

/* NULL handles and functions where tasks.h lists SHOAL_EINVAL or says NULL
 * is ignored; options too short for ABI 1.6 (shorter than panic_user), a
 * newer caller's longer options, a name of 63 and 64 bytes, sizes past
 * SHOAL_POOL_MAX_SIZE; opts_init_sized filling only what it is given.
 * Nothing of a refused call runs. */
static void bad_arguments_everywhere(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 1, 4);
    shoal_task_group_t *g = NULL;
    int r = 55;
    CU_ASSERT_EQUAL(shoal_tasks_submit(NULL, tk_job_fn, &tk_jobs[0], 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, NULL, &tk_jobs[0], TK_LONG_MS), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(NULL, tk_job_fn, &tk_jobs[0]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, NULL, &tk_jobs[0]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(NULL, tk_job_fn, &tk_jobs[0], 0, &r), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, NULL, &tk_jobs[0], TK_LONG_MS, &r), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(r, 55);
    CU_ASSERT_EQUAL(shoal_tasks_tune(NULL, 2), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_release(NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(NULL, 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_pid(NULL), SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(shoal_task_group_create(NULL, &g), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_task_group_create(t, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_task_group_submit(NULL, tk_job_fn, &tk_jobs[0], 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_task_group_wait(NULL, 0, &r), SHOAL_EINVAL);
    shoal_task_group_free(NULL);
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, NULL, &tk_jobs[0], TK_LONG_MS), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &r), SHOAL_OK); /* nothing in it */
    CU_ASSERT_EQUAL(r, 0);
    shoal_task_group_free(g);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 0);

    shoal_tasks_opts_t o;
    memset(&o, 0xAB, sizeof o);
    shoal_tasks_opts_init_sized(&o, offsetof(shoal_tasks_opts_t, min_size));
    CU_ASSERT_EQUAL(o.size, 4);
    CU_ASSERT_EQUAL(o.min_size, 0xABABABABu); /* past the size given: untouched */
    shoal_tasks_opts_init_sized(NULL, sizeof o);
    shoal_tasks_t *x = NULL;
    shoal_tasks_opts_init(&o);
    CU_ASSERT_EQUAL(shoal_tasks_create_sized(rt, &o, offsetof(shoal_tasks_opts_t, panic_user), &x),
                    SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_create_sized(rt, &o, 0, &x), SHOAL_EINVAL);
    struct {
        shoal_tasks_opts_t o;
        uint64_t later[4]; /* a newer caller's fields */
    } newer;
    memset(&newer, 0xFF, sizeof newer);
    shoal_tasks_opts_init(&newer.o);
    newer.o.size = 2;
    x = NULL;
    CU_ASSERT_EQUAL(shoal_tasks_create_sized(rt, &newer.o, sizeof newer, &x), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_cap(x), 2);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(x), SHOAL_OK);
    char name[65];
    memset(name, 'n', sizeof name);
    name[63] = '\0';
    shoal_tasks_opts_init(&o);
    o.name = name;
    x = NULL;
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, &o, &x), SHOAL_OK); /* 63 bytes and its NUL */
    CU_ASSERT_EQUAL(shoal_tasks_destroy(x), SHOAL_OK);
    name[63] = 'n';
    name[64] = '\0';
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, &o, &x), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(x);
    shoal_tasks_opts_init(&o);
    o.size = SHOAL_POOL_MAX_SIZE + 1;
    o.max_size = SHOAL_POOL_MAX_SIZE + 1;
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, &o, &x), SHOAL_EINVAL);
    shoal_tasks_opts_init(&o);
    o.size = 8;
    o.max_size = 4; /* below size */
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, &o, &x), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(tk_ran_times(0, 1, 0), 1);
    tk_finish(rt, t);
}

/* ---- idle expiry and lazy grow --------------------------------------------------- */

#define BURSTS 8
#define BURST 150

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    int from;
    int refused;
} burster_t;

static void *burster_main(void *arg)
{
    burster_t *b = arg;
    for (int i = b->from; i < b->from + BURST; i++)
        b->refused += shoal_tasks_submit(b->t, tk_job_fn, tk_job(i, 0, 0), TK_LONG_MS) != SHOAL_OK;
    return NULL;
}

/* min_size 0, max_size 6, idle_timeout 5 ms, a queue of 8: every worker
 * expires between bursts (cap 0), then two threads submit 150 tasks each
 * and the pool grows back lazily. No task is lost or run twice; the last
 * burst is released while it grows. */
static void idle_expiry_to_zero_between_bursts(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(1, 8);
    o.min_size = 0;
    o.max_size = 6;
    o.idle_timeout_ms = 5;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    int refused = 0;
    for (int b = 0; b < BURSTS; b++) {
        WAIT_UNTIL(shoal_tasks_cap(t) == 0 && tk_stats(rt, t).pool_size == 0);
        CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
        burster_t u[2];
        for (int k = 0; k < 2; k++) {
            u[k] = (burster_t){.t = t, .from = (2 * b + k) * BURST};
            CU_ASSERT_EQUAL_FATAL(pthread_create(&u[k].th, NULL, burster_main, &u[k]), 0);
        }
        for (int k = 0; k < 2; k++) {
            pthread_join(u[k].th, NULL);
            refused += u[k].refused;
        }
        if (b + 1 < BURSTS)
            WAIT_UNTIL(atomic_load(&tk_done) == 2 * BURST * (b + 1));
    }
    CU_ASSERT(tk_stats(rt, t).lazy_grown >= BURSTS - 1); /* each earlier burst grew it */
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    int n = 2 * BURST * BURSTS;
    CU_ASSERT_EQUAL(refused, 0);
    CU_ASSERT_EQUAL(tk_ran_times(0, n, 1), n);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), (uint64_t)n);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n);
    tk_finish(rt, t);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"release races submitters on four threads", release_races_submitters_on_four_threads},
        {"tune storm with submits", tune_storm_with_submits},
        {"tune races release", tune_races_release},
        {"release twice at once and after timeouts", release_twice_at_once_and_after_timeouts},
        {"a full runtime refuses with SHOAL_ELIMIT", a_full_runtime_refuses_with_elimit},
        {"bad arguments everywhere", bad_arguments_everywhere},
        {"idle expiry to zero between bursts", idle_expiry_to_zero_between_bursts},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_lifecycle", cases);
}
