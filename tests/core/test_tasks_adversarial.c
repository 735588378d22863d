/* test_tasks_adversarial.c - task pools (core/tasks/, shoal/tasks.h) used
 * the way a careless operator or a hostile caller would, with exact
 * outcomes (test_tasks.c covers each function on its own):
 *   - release racing submitters on four threads (submit, try_submit, a
 *     group), and submitters of every kind already waiting for room when
 *     it comes: every task runs exactly once or is refused, never both;
 *   - the wait for room: a waiter woken at the low-water mark and not
 *     before, max_waiting under many threads, and waiters against others
 *     that retry past SHOAL_EOVERLOAD;
 *   - panic storms (thousands of tasks, from two threads) and panics while
 *     the pool is being released;
 *   - submit_wait from four threads with returns that look like the pool's
 *     own codes, panics and timeouts: each caller gets its own result;
 *   - groups: the first error in finish order across a panic and a return,
 *     submitters and waiters at once, a group freed by its own task;
 *   - tasks that submit tasks, and call another pool's blocking functions;
 *   - tune from three threads with submits, and racing release;
 *   - release twice at once, release_timeout(0), destroy after a timeout;
 *   - bad arguments to every function;
 *   - idle expiry down to min_size 0 between bursts, with lazy grow.
 *
 * Tasks never call CUnit: they record into atomics; the test thread asserts
 * after synchronising on them. Tasks that must stay put wait on a gate (one
 * for all, or one of their own) that the test opens. Deadlines here only
 * bound waits: every one is generous.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define SOON_S 3.0 /* what should happen at once: bounded, with slack */
#define LONG_MS 20000u
#define THREADS 6u /* blocked tasks hold threads: the pool's actor needs one */
#define MAXN 8192

enum {
    A_BLOCK = 1,   /* waits for `gate` */
    A_OWN = 2,     /* waits for gate_of[idx] */
    A_PANIC = 4,   /* panics after it ran */
    A_SPAWN = 8,   /* submits children (tasks submitting tasks) */
    A_FOREIGN = 16 /* calls another pool's blocking functions */
};

typedef struct {
    int idx;
    int ret; /* what the task returns */
    int act; /* A_* */
} job_t;

static job_t jobs[MAXN];
static atomic_int ran[MAXN], gate_of[MAXN], hooked_of[MAXN];
static atomic_int done, entered, gate;
/* The panic hook's record: a call with a foreign arg, a wrong user or a
 * text not the task's own counts in hook_bad. */
static atomic_int hooked, hook_bad;
static int hook_user;

static void reset(void)
{
    for (int i = 0; i < MAXN; i++) {
        jobs[i] = (job_t){i, 0, 0};
        atomic_store(&ran[i], 0);
        atomic_store(&gate_of[i], 0);
        atomic_store(&hooked_of[i], 0);
    }
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    atomic_store(&hooked, 0);
    atomic_store(&hook_bad, 0);
}

static void spawn_children(shoal_ctx_t *ctx, job_t *j);
static void call_foreign(void);

static int job_fn(shoal_ctx_t *ctx, void *arg)
{
    job_t *j = arg;
    if (j->act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (j->act & A_OWN) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate_of[j->idx], WAIT_S);
    }
    if (j->act & A_SPAWN)
        spawn_children(ctx, j);
    if (j->act & A_FOREIGN)
        call_foreign();
    atomic_fetch_add(&ran[j->idx], 1);
    atomic_fetch_add(&done, 1); /* last: `done` counts tasks that have finished */
    if (j->act & A_PANIC)
        shoal_panic(ctx, "storm %d", j->idx);
    return j->ret;
}

static void hook(void *arg, const char *why, void *user)
{
    job_t *j = arg;
    char want[32];
    if (user != &hook_user || j < jobs || j >= jobs + MAXN) {
        atomic_fetch_add(&hook_bad, 1);
        return;
    }
    snprintf(want, sizeof want, "storm %d", j->idx);
    if (strcmp(why, want) != 0)
        atomic_fetch_add(&hook_bad, 1);
    atomic_fetch_add(&hooked_of[j->idx], 1);
    atomic_fetch_add(&hooked, 1);
}

/* A runtime whose log is kept (each panic logs a line), not printed. */
static shoal_runtime_t *runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    return rt;
}

static shoal_tasks_opts_t opts(uint32_t size, uint32_t queue)
{
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.size = size;
    o.queue = queue;
    o.panic_hook = hook;
    o.panic_user = &hook_user;
    return o;
}

static shoal_tasks_t *make_with(shoal_runtime_t *rt, const shoal_tasks_opts_t *o)
{
    shoal_tasks_t *t = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_create(rt, o, &t), SHOAL_OK);
    return t;
}

static shoal_tasks_t *make(shoal_runtime_t *rt, uint32_t size, uint32_t queue)
{
    shoal_tasks_opts_t o = opts(size, queue);
    return make_with(rt, &o);
}

static job_t *job(int i, int act, int ret)
{
    jobs[i].act = act;
    jobs[i].ret = ret;
    return &jobs[i];
}

/* How many of jobs[from, to) ran exactly `want` times. */
static int ran_times(int from, int to, int want)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += atomic_load(&ran[i]) == want;
    return n;
}

static shoal_pool_stats_t stats(shoal_runtime_t *rt, shoal_tasks_t *t)
{
    return shoal_test_pool_stats(rt, shoal_tasks_pid(t));
}

static void finish(shoal_runtime_t *rt, shoal_tasks_t *t)
{
    atomic_store(&gate, 1);
    for (int i = 0; i < MAXN; i++)
        atomic_store(&gate_of[i], 1);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- a caller on its own thread -------------------------------------------------- */

enum { C_SUBMIT, C_FOREVER, C_SUBMIT_WAIT, C_GROUP, C_RELEASE };

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    shoal_task_group_t *g;
    int how; /* C_* */
    job_t *job;
    int result; /* submit_wait's */
    atomic_int rc, returned;
} caller_t;

static void *caller_main(void *arg)
{
    caller_t *c = arg;
    int rc;
    switch (c->how) {
    case C_SUBMIT:
        rc = shoal_tasks_submit(c->t, job_fn, c->job, LONG_MS);
        break;
    case C_FOREVER:
        rc = shoal_tasks_submit(c->t, job_fn, c->job, UINT64_MAX);
        break;
    case C_SUBMIT_WAIT:
        rc = shoal_tasks_submit_wait(c->t, job_fn, c->job, LONG_MS, &c->result);
        break;
    case C_GROUP:
        rc = shoal_task_group_submit(c->g, job_fn, c->job, LONG_MS);
        break;
    default:
        rc = shoal_tasks_release(c->t);
        break;
    }
    atomic_store(&c->rc, rc);
    atomic_store(&c->returned, 1);
    return NULL;
}

static void start(caller_t *c, shoal_tasks_t *t, int how, job_t *j)
{
    c->t = t;
    c->how = how;
    c->job = j;
    c->result = 12345;
    atomic_store(&c->rc, 12345);
    atomic_store(&c->returned, 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&c->th, NULL, caller_main, c), 0);
}

static int returned(caller_t *c, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += atomic_load(&c[i].returned);
    return k;
}

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
    return shoal_pool_stats(rt, shoal_tasks_pid(t), &st, LONG_MS) != SHOAL_OK ||
           st.state == SHOAL_POOL_DRAINING;
}

static void *racer_main(void *arg)
{
    racer_t *r = arg;
    bool shut = false;
    for (int i = 0; i < RACE_PER; i++) {
        if (i == RACE_PER - RACE_TAIL) {
            double end = shoal_test_now() + WAIT_S;
            while (!draining(r->rt, r->t) && shoal_test_now() < end)
                shoal_test_nap();
        }
        int idx = r->who * RACE_PER + i;
        job_t *j = job(idx, 0, r->who == 3 && i % 9 == 4 ? 5 : 0);
        int rc = r->who == 2   ? shoal_tasks_try_submit(r->t, job_fn, j)
                 : r->who == 3 ? shoal_task_group_submit(r->g, job_fn, j, LONG_MS)
                               : shoal_tasks_submit(r->t, job_fn, j, LONG_MS);
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
    shoal_runtime_t *rt = runtime();
    for (int round = 0; round < RACE_ROUNDS; round++) {
        reset();
        atomic_store(&race_tries, 0);
        shoal_tasks_t *t = make(rt, 3, 8);
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
                wrong += atomic_load(&ran[idx]) != (ok ? 1 : 0);
                failed_member = failed_member || (ok && k == 3 && jobs[idx].ret != 0);
            }
        }
        CU_ASSERT_EQUAL(odd, 0);
        CU_ASSERT_EQUAL(reopened, 0);
        CU_ASSERT_EQUAL(wrong, 0);
        CU_ASSERT_EQUAL(tail, RACE_THREADS * RACE_TAIL);
        CU_ASSERT_EQUAL(atomic_load(&done), accepted);
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

/* ---- waiting for room ------------------------------------------------------------ */

/* Seven submitters of every kind wait for room in a full pool (submit with
 * a deadline and without one, submit_wait, a group's submit) when release
 * begins: each is refused with SHOAL_ESHUTDOWN while the running task still
 * holds the pool, the refused group member is no member (its wait returns
 * at once), and none of their tasks ever runs. */
static void release_refuses_every_kind_of_waiter(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 2);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(i, A_BLOCK, 0), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    static caller_t c[7];
    int how[7] = {C_SUBMIT, C_SUBMIT, C_SUBMIT, C_FOREVER, C_FOREVER, C_SUBMIT_WAIT, C_GROUP};
    for (int k = 0; k < 7; k++) {
        c[k].g = g;
        start(&c[k], t, how[k], job(3 + k, 0, 0));
    }
    WAIT_UNTIL(shoal_tasks_waiting(t) == 7);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 7);
    caller_t rel;
    start(&rel, t, C_RELEASE, NULL);
    WAIT_UNTIL(returned(c, 7) == 7);
    CU_ASSERT_EQUAL(returned(c, 7), 7); /* the gate is still shut */
    for (int k = 0; k < 7; k++)
        CU_ASSERT_EQUAL(atomic_load(&c[k].rc), SHOAL_ESHUTDOWN);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT_EQUAL(atomic_load(&rel.returned), 0);
    atomic_store(&gate, 1);
    for (int k = 0; k < 7; k++)
        pthread_join(c[k].th, NULL);
    pthread_join(rel.th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&rel.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(ran_times(0, 3, 1), 3);
    CU_ASSERT_EQUAL(ran_times(3, 10, 0), 7);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    shoal_task_group_free(g);
    finish(rt, t);
}

/* One worker, a queue of 7: eight tasks, each on its own gate, fill the
 * pool's 8 places and a submitter waits. Waiters are woken at the pool's
 * low-water mark, a quarter of the places free (tasks.h), not at each one:
 * with one place free the submitter sleeps on, and that place goes to a
 * try_submit; with two free it is woken and gets in. */
static void a_waiter_wakes_at_the_low_water_mark(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 7);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(i, A_OWN, 0)), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(10, 0, 0)), SHOAL_EBUSY);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    caller_t c;
    start(&c, t, C_SUBMIT, job(8, 0, 0));
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 1);
    atomic_store(&gate_of[0], 1);
    WAIT_UNTIL(atomic_load(&entered) == 2); /* task 0 settled, task 1 runs: 7 of 8 held */
    CU_ASSERT_EQUAL(atomic_load(&c.returned), 0);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(9, 0, 0)), SHOAL_OK); /* the one place */
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(10, 0, 0)), SHOAL_EBUSY);
    atomic_store(&gate_of[1], 1);
    WAIT_UNTIL(atomic_load(&entered) == 3); /* one place free again */
    CU_ASSERT_EQUAL(atomic_load(&c.returned), 0);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
    atomic_store(&gate_of[2], 1); /* two free: the mark */
    WAIT_UNTIL(atomic_load(&c.returned));
    CU_ASSERT_EQUAL(atomic_load(&c.returned), 1);
    CU_ASSERT_EQUAL(atomic_load(&c.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    for (int i = 3; i < 8; i++)
        atomic_store(&gate_of[i], 1);
    pthread_join(c.th, NULL);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(ran_times(0, 10, 1), 10);
    CU_ASSERT_EQUAL(atomic_load(&ran[10]), 0); /* refused twice: never runs */
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 10);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 10);
    finish(rt, t);
}

#define MW_THREADS 12
#define MW_MAX 3

/* max_waiting 3 and twelve submitters at once into a full pool: exactly
 * three wait, nine are refused with SHOAL_EOVERLOAD (counted), none of
 * theirs runs; once the gate opens the three get in and run once each. */
static void max_waiting_under_twelve_threads(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_opts_t o = opts(1, 1);
    o.max_waiting = MW_MAX;
    shoal_tasks_t *t = make_with(rt, &o);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(0, A_BLOCK, 0), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(1, 0, 0)), SHOAL_OK);
    static caller_t c[MW_THREADS];
    for (int k = 0; k < MW_THREADS; k++)
        start(&c[k], t, k % 2 ? C_SUBMIT : C_FOREVER, job(2 + k, 0, 0));
    WAIT_UNTIL(returned(c, MW_THREADS) == MW_THREADS - MW_MAX && shoal_tasks_waiting(t) == MW_MAX);
    CU_ASSERT_EQUAL(returned(c, MW_THREADS), MW_THREADS - MW_MAX);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), MW_MAX);
    int overload = 0;
    for (int k = 0; k < MW_THREADS; k++)
        overload += atomic_load(&c[k].returned) && atomic_load(&c[k].rc) == SHOAL_EOVERLOAD;
    CU_ASSERT_EQUAL(overload, MW_THREADS - MW_MAX);
    CU_ASSERT_EQUAL(stats(rt, t).waiting_refused, MW_THREADS - MW_MAX);
    bool waited[MW_THREADS];
    for (int k = 0; k < MW_THREADS; k++)
        waited[k] = !atomic_load(&c[k].returned);
    atomic_store(&gate, 1);
    int ok = 0, right = 0;
    for (int k = 0; k < MW_THREADS; k++) {
        pthread_join(c[k].th, NULL);
        ok += atomic_load(&c[k].rc) == SHOAL_OK;
        right += waited[k] == (atomic_load(&c[k].rc) == SHOAL_OK);
    }
    CU_ASSERT_EQUAL(ok, MW_MAX);
    CU_ASSERT_EQUAL(right, MW_THREADS);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    int ran_right = 0;
    for (int k = 0; k < MW_THREADS; k++)
        ran_right += atomic_load(&ran[2 + k]) == (waited[k] ? 1 : 0);
    CU_ASSERT_EQUAL(ran_right, MW_THREADS);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2 + MW_MAX);
    finish(rt, t);
}

#define PUSHERS 4

static atomic_int push_stop, push_ran, push_ok, push_overload, push_odd;

static int push_fn(shoal_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&push_ran, 1);
    return 0;
}

/* Submits again at once after each SHOAL_EOVERLOAD, until told to stop. */
static void *pusher_main(void *arg)
{
    shoal_tasks_t *t = arg;
    while (!atomic_load(&push_stop)) {
        int rc = shoal_tasks_submit(t, push_fn, NULL, LONG_MS);
        atomic_fetch_add(rc == SHOAL_OK          ? &push_ok
                         : rc == SHOAL_EOVERLOAD ? &push_overload
                                                 : &push_odd,
                         1);
    }
    return NULL;
}

#define KEEP_ROUNDS 5

/* max_waiting 2: two submitters wait in a full pool; four more threads
 * submit again at once after each SHOAL_EOVERLOAD. One slot frees, then
 * the rest. A woken waiter that finds the pool full again is counted
 * against max_waiting again (tasks.h, as ants): it gets in or is refused
 * with SHOAL_EOVERLOAD, nothing else; the waiters never number more than
 * max_waiting; and over five pools every task is accounted for. */
static void waiters_against_retries_past_max_waiting(void)
{
    shoal_runtime_t *rt = runtime();
    int other = 0, odd = 0, lost = 0;
    uint32_t most = 0;
    for (int round = 0; round < KEEP_ROUNDS; round++) {
        reset();
        atomic_store(&push_stop, 0);
        atomic_store(&push_ran, 0);
        atomic_store(&push_ok, 0);
        atomic_store(&push_overload, 0);
        atomic_store(&push_odd, 0);
        shoal_tasks_opts_t o = opts(1, 1);
        o.max_waiting = 2;
        shoal_tasks_t *t = make_with(rt, &o);
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(0, A_OWN, 0), LONG_MS), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&entered) == 1);
        CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(1, A_OWN, 0)), SHOAL_OK);
        caller_t c[2];
        start(&c[0], t, C_SUBMIT, job(2, 0, 0));
        start(&c[1], t, C_SUBMIT, job(3, 0, 0));
        WAIT_UNTIL(shoal_tasks_waiting(t) == 2);
        CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 2);
        pthread_t p[PUSHERS];
        for (int k = 0; k < PUSHERS; k++)
            CU_ASSERT_EQUAL_FATAL(pthread_create(&p[k], NULL, pusher_main, t), 0);
        WAIT_UNTIL(atomic_load(&push_overload) >= 100);
        for (int k = 0; k < 1000; k++) { /* sampled while the retries hammer */
            uint32_t w = shoal_tasks_waiting(t);
            most = w > most ? w : most;
        }
        atomic_store(&gate_of[0], 1); /* one slot */
        WAIT_UNTIL(atomic_load(&entered) == 2);
        SHOAL_TEST_WAIT_UNTIL(returned(c, 2) != 0 || atomic_load(&push_ok) != 0, SOON_S);
        for (int k = 0; k < 1000; k++) {
            uint32_t w = shoal_tasks_waiting(t);
            most = w > most ? w : most;
        }
        atomic_store(&gate_of[1], 1); /* and the rest */
        atomic_store(&push_stop, 1);
        int c_ok = 0;
        for (int k = 0; k < 2; k++) {
            pthread_join(c[k].th, NULL);
            int rc = atomic_load(&c[k].rc);
            c_ok += rc == SHOAL_OK;
            other += rc != SHOAL_OK && rc != SHOAL_EOVERLOAD;
        }
        for (int k = 0; k < PUSHERS; k++)
            pthread_join(p[k], NULL);
        odd += atomic_load(&push_odd);
        CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
        for (int k = 0; k < 2; k++)
            lost += atomic_load(&ran[2 + k]) != (atomic_load(&c[k].rc) == SHOAL_OK ? 1 : 0);
        lost += atomic_load(&push_ran) != atomic_load(&push_ok);
        lost += shoal_tasks_completed(t) != (uint64_t)(2 + c_ok + atomic_load(&push_ok));
        CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    }
    CU_ASSERT(most <= 2);
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_EQUAL(odd, 0);
    CU_ASSERT_EQUAL(lost, 0);
    shoal_runtime_destroy(rt);
}

/* ---- panics ---------------------------------------------------------------------- */

#define STORM_PER 1500
#define STORM_EVERY 10 /* every 10th task returns, the rest panic */

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    int from;
    int refused;
} stormer_t;

static void *stormer_main(void *arg)
{
    stormer_t *s = arg;
    for (int i = s->from; i < s->from + STORM_PER; i++) {
        int act = i % STORM_EVERY == 0 ? 0 : A_PANIC;
        s->refused += shoal_tasks_submit(s->t, job_fn, job(i, act, 0), LONG_MS) != SHOAL_OK;
    }
    return NULL;
}

/* 3000 tasks from two threads, nine in ten of them panic: the hook hears
 * each panicking task exactly once with its own arg and text and no other;
 * the counters are exact; the pool is never degraded, has its four workers
 * afterwards and still serves. */
static void panic_storm_from_two_threads(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 4, 256);
    stormer_t s[2] = {{.t = t, .from = 0}, {.t = t, .from = STORM_PER}};
    for (int k = 0; k < 2; k++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&s[k].th, NULL, stormer_main, &s[k]), 0);
    for (int k = 0; k < 2; k++) {
        pthread_join(s[k].th, NULL);
        CU_ASSERT_EQUAL(s[k].refused, 0);
    }
    int n = 2 * STORM_PER, panics = n - n / STORM_EVERY;
    WAIT_UNTIL(shoal_tasks_completed(t) == (uint64_t)n && atomic_load(&hooked) == panics);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), (uint64_t)panics);
    CU_ASSERT_EQUAL(atomic_load(&hooked), panics);
    CU_ASSERT_EQUAL(atomic_load(&hook_bad), 0);
    int hook_right = 0;
    for (int i = 0; i < n; i++)
        hook_right += atomic_load(&hooked_of[i]) == (i % STORM_EVERY == 0 ? 0 : 1);
    CU_ASSERT_EQUAL(hook_right, n);
    CU_ASSERT_EQUAL(ran_times(0, n, 1), n);
    WAIT_UNTIL(stats(rt, t).worker_restarts == (uint64_t)panics && stats(rt, t).pool_size == 4);
    shoal_pool_stats_t st = stats(rt, t);
    CU_ASSERT_EQUAL(st.worker_restarts, (uint64_t)panics);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(st.pool_size, 4);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 4);
    CU_ASSERT_FALSE(shoal_test_log_has("degraded"));
    int r = -1;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, job(n, 0, 3), LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, 3);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n + 1);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), (uint64_t)panics);
    finish(rt, t);
}

/* Two workers held, then 300 tasks that all panic queued behind them (a
 * third of them in a group) when release begins: the draining pool replaces
 * each panicked worker until every task has run; the hook hears each once;
 * the group's first error is SHOAL_EPANIC; release returns SHOAL_OK. */
static void panics_while_the_pool_is_released(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 2, 512);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(i, A_BLOCK, 0), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    for (int i = 2; i < 302; i++) {
        job_t *j = job(i, A_PANIC, 0);
        CU_ASSERT_EQUAL(i % 3 ? shoal_tasks_submit(t, job_fn, j, LONG_MS)
                              : shoal_task_group_submit(g, job_fn, j, LONG_MS),
                        SHOAL_OK);
    }
    caller_t rel;
    start(&rel, t, C_RELEASE, NULL);
    WAIT_UNTIL(stats(rt, t).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(400, 0, 0)), SHOAL_ESHUTDOWN);
    atomic_store(&gate, 1);
    pthread_join(rel.th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&rel.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(ran_times(0, 302, 1), 302);
    CU_ASSERT_EQUAL(atomic_load(&ran[400]), 0);
    CU_ASSERT_EQUAL(atomic_load(&hooked), 300);
    CU_ASSERT_EQUAL(atomic_load(&hook_bad), 0);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 302);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), 300);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    shoal_task_group_free(g);
    finish(rt, t);
}

/* ---- submit_wait ----------------------------------------------------------------- */

#define SW_THREADS 4
#define SW_PER 250

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    int from;
    int wrong; /* a call whose code or result was not its task's */
} waiter_t;

/* What task i does under submit_wait: a code of its own, 0, codes that
 * look like the pool's (SHOAL_ETIMEDOUT, SHOAL_EPANIC, SHOAL_ESHUTDOWN),
 * INT_MIN and INT_MAX, or a panic. */
static void sw_plan(int i, int *act, int *ret)
{
    static const int looks[] = {SHOAL_ETIMEDOUT, SHOAL_EPANIC, SHOAL_ESHUTDOWN, INT_MIN, INT_MAX};
    *act = i % 11 == 3 ? A_PANIC : 0;
    *ret = i % 11 == 3 ? 0 : i % 7 == 0 ? looks[(i / 7) % 5] : i % 2 ? i : 0;
}

static void *waiter_main(void *arg)
{
    waiter_t *w = arg;
    for (int i = w->from; i < w->from + SW_PER; i++) {
        int act, ret, r = 12345;
        sw_plan(i, &act, &ret);
        int rc = shoal_tasks_submit_wait(w->t, job_fn, job(i, act, ret), LONG_MS, &r);
        w->wrong += rc != SHOAL_OK || r != (act & A_PANIC ? SHOAL_EPANIC : ret);
    }
    return NULL;
}

/* Four threads, 250 submit_waits each on three workers: each caller gets
 * SHOAL_OK and its own task's return -- a task returning SHOAL_ETIMEDOUT or
 * SHOAL_EPANIC is told apart from a timeout or a panic only by the call's
 * code, and counts as no panic --, or SHOAL_EPANIC for its own panic. Then
 * five submit_waits that time out on held tasks: each task still runs once
 * later. */
static void submit_wait_results_never_cross(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 3, 16);
    waiter_t w[SW_THREADS];
    for (int k = 0; k < SW_THREADS; k++) {
        w[k] = (waiter_t){.t = t, .from = k * SW_PER};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&w[k].th, NULL, waiter_main, &w[k]), 0);
    }
    int wrong = 0;
    for (int k = 0; k < SW_THREADS; k++) {
        pthread_join(w[k].th, NULL);
        wrong += w[k].wrong;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    int n = SW_THREADS * SW_PER, panics = 0;
    for (int i = 0; i < n; i++) {
        int act, ret;
        sw_plan(i, &act, &ret);
        panics += (act & A_PANIC) != 0;
    }
    CU_ASSERT_EQUAL(ran_times(0, n, 1), n);
    WAIT_UNTIL(atomic_load(&hooked) == panics && shoal_tasks_completed(t) == (uint64_t)n);
    CU_ASSERT_EQUAL(atomic_load(&hooked), panics);
    CU_ASSERT_EQUAL(atomic_load(&hook_bad), 0);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), (uint64_t)panics);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n);

    for (int i = n; i < n + 5; i++) {
        int r = 777;
        CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, job(i, A_OWN, 9), 30, &r),
                        SHOAL_ETIMEDOUT);
        CU_ASSERT_EQUAL(r, 777); /* no result: left as it was */
    }
    WAIT_UNTIL(atomic_load(&entered) == 3);
    CU_ASSERT_EQUAL(ran_times(n, n + 5, 0), 5);
    for (int i = n; i < n + 5; i++)
        atomic_store(&gate_of[i], 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(ran_times(n, n + 5, 1), 5);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n + 5);
    finish(rt, t); /* ASan: the five groups went with their tasks */
}

/* ---- groups ---------------------------------------------------------------------- */

/* The first error is the first in the order tasks finished, a panic's
 * included (its worker ends after it): a panic that finished (its worker
 * replaced) before a task returned 7 comes first; in a second group a task
 * that returned 7 before another panicked comes first. Four workers, so the
 * two run on different threads. */
static void group_first_error_in_finish_order(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 4, 64);
    shoal_task_group_t *g = NULL;
    int first = -1;

    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, job(0, A_OWN, 7), LONG_MS), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, job(1, A_PANIC, 0), LONG_MS), SHOAL_OK);
    for (int i = 2; i < 20; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, job(i, 0, 0), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(stats(rt, t).worker_restarts == 1 && atomic_load(&done) == 19);
    CU_ASSERT_EQUAL(atomic_load(&hooked_of[1]), 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_ETIMEDOUT); /* 0 still held */
    atomic_store(&gate_of[0], 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    shoal_task_group_free(g);
    /* completed counts a task after its group heard of it */
    WAIT_UNTIL(shoal_tasks_completed(t) == 20);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_completed(t), 20);

    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, job(20, A_OWN | A_PANIC, 0), LONG_MS),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, job(21, 0, 7), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(shoal_tasks_completed(t) == 21);
    CU_ASSERT_EQUAL(atomic_load(&ran[21]), 1);
    atomic_store(&gate_of[20], 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 7);
    WAIT_UNTIL(atomic_load(&hooked) == 2);
    CU_ASSERT_EQUAL(atomic_load(&hooked_of[20]), 1);
    shoal_task_group_free(g);
    finish(rt, t);
}

#define GS_THREADS 3
#define GS_PER 400

typedef struct {
    pthread_t th;
    shoal_task_group_t *g;
    int from;
    int refused;
} gsubmitter_t;

static void *gsubmitter_main(void *arg)
{
    gsubmitter_t *s = arg;
    for (int i = s->from; i < s->from + GS_PER; i++)
        s->refused += shoal_task_group_submit(s->g, job_fn, job(i, 0, i == 777 ? 13 : 0),
                                              LONG_MS) != SHOAL_OK;
    return NULL;
}

static shoal_task_group_t *own_group; /* the group free_own_group frees */

static int free_own_group(shoal_ctx_t *ctx, void *arg)
{
    shoal_task_group_free(own_group); /* its memory must outlive this task */
    return job_fn(ctx, arg);
}

/* Three threads submit 400 tasks each to one group while the test thread
 * waits on it with short deadlines (SHOAL_OK or SHOAL_ETIMEDOUT only);
 * then one wait sees all 1200 run, with the one failure (13) as the first
 * error. A second group is freed by one of its own tasks while 50 more of
 * its tasks are queued: every one runs, nothing touches freed memory
 * (ASan). */
static void groups_under_concurrent_submits_and_freed_by_a_task(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 3, 64);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    gsubmitter_t s[GS_THREADS];
    for (int k = 0; k < GS_THREADS; k++) {
        s[k] = (gsubmitter_t){.g = g, .from = k * GS_PER};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&s[k].th, NULL, gsubmitter_main, &s[k]), 0);
    }
    int odd = 0, first = -1;
    for (int k = 0; k < 200; k++) {
        int rc = shoal_task_group_wait(g, 1, &first);
        odd += rc != SHOAL_OK && rc != SHOAL_ETIMEDOUT;
    }
    for (int k = 0; k < GS_THREADS; k++) {
        pthread_join(s[k].th, NULL);
        CU_ASSERT_EQUAL(s[k].refused, 0);
    }
    CU_ASSERT_EQUAL(odd, 0);
    first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 13);
    CU_ASSERT_EQUAL(ran_times(0, GS_THREADS * GS_PER, 1), GS_THREADS * GS_PER);
    shoal_task_group_free(g);

    int base = GS_THREADS * GS_PER;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &own_group), SHOAL_OK);
    for (int i = base; i < base + 3; i++) /* every worker held */
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(i, A_BLOCK, 0), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 3);
    CU_ASSERT_EQUAL(
        shoal_task_group_submit(own_group, free_own_group, job(base + 3, 0, 4), LONG_MS), SHOAL_OK);
    for (int i = base + 4; i < base + 54; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(own_group, job_fn, job(i, 0, 1), LONG_MS),
                        SHOAL_OK);
    atomic_store(&gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(ran_times(base, base + 54, 1), 54);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)base + 54);
    finish(rt, t);
}

/* ---- tasks that submit, and call what they may not ------------------------------- */

#define FAN 3
#define DEPTH 5

static shoal_tasks_t *fan_pool, *other_pool;
static shoal_task_group_t *fan_group;
static atomic_int fan_next, fan_ok, fan_busy, fan_odd, fan_member;
static int depth_of[MAXN]; /* written before the task is submitted */
static atomic_int foreign_rc[5];

/* FAN children per task down to DEPTH: the first a group's, the others
 * plain submits, none with a deadline; full pool: SHOAL_EBUSY at once,
 * never a wait. */
static void spawn_children(shoal_ctx_t *ctx, job_t *j)
{
    (void)ctx;
    if (depth_of[j->idx] >= DEPTH)
        return;
    for (int k = 0; k < FAN; k++) {
        int i = atomic_fetch_add(&fan_next, 1);
        if (i >= MAXN)
            return;
        depth_of[i] = depth_of[j->idx] + 1;
        job_t *c = job(i, A_SPAWN, 0);
        bool member = k == 0;
        int rc = member ? shoal_task_group_submit(fan_group, job_fn, c, UINT64_MAX)
                        : shoal_tasks_submit(fan_pool, job_fn, c, UINT64_MAX);
        if (rc == SHOAL_OK) {
            atomic_fetch_add(&fan_ok, 1);
            atomic_fetch_add(&fan_member, member);
        } else if (rc == SHOAL_EBUSY) {
            atomic_fetch_add(&fan_busy, 1);
        } else {
            atomic_fetch_add(&fan_odd, 1);
        }
    }
}

/* Another pool's blocking functions, from a task: each SHOAL_EINVAL. */
static void call_foreign(void)
{
    int r = 0;
    shoal_task_group_t *g = NULL;
    atomic_store(&foreign_rc[0],
                 shoal_tasks_submit_wait(other_pool, job_fn, &jobs[MAXN - 1], LONG_MS, &r));
    atomic_store(&foreign_rc[1], shoal_task_group_create(other_pool, &g));
    atomic_store(&foreign_rc[2], shoal_task_group_wait(g, LONG_MS, NULL));
    shoal_task_group_free(g);
    atomic_store(&foreign_rc[3], shoal_tasks_release(other_pool));
    atomic_store(&foreign_rc[4], shoal_tasks_destroy(other_pool));
}

/* A task fans out into a tree of tasks (3 children each, 5 levels) in a
 * pool of two workers and a queue of 4, every submit with no deadline: on
 * a dispatcher thread each is accepted or refused at once with SHOAL_EBUSY;
 * exactly the accepted ones run, once each, and the group holds exactly
 * its accepted members. A task calling another pool's submit_wait,
 * group_wait, release and destroy is refused (SHOAL_EINVAL); that pool
 * still takes and runs tasks. */
static void tasks_submitting_tasks_never_block(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    fan_pool = make(rt, 2, 4);
    other_pool = make(rt, 1, 4);
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(fan_pool, &fan_group), SHOAL_OK);
    atomic_store(&fan_next, 1);
    memset(depth_of, 0, sizeof depth_of);
    atomic_store(&fan_ok, 0);
    atomic_store(&fan_busy, 0);
    atomic_store(&fan_odd, 0);
    atomic_store(&fan_member, 0);
    for (int k = 0; k < 5; k++)
        atomic_store(&foreign_rc[k], 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit(fan_pool, job_fn, job(0, A_SPAWN | A_FOREIGN, 0), LONG_MS),
                    SHOAL_OK);
    WAIT_UNTIL(atomic_load(&done) == 1 + atomic_load(&fan_ok));
    CU_ASSERT_EQUAL(atomic_load(&done), 1 + atomic_load(&fan_ok));
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(fan_group, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_release(fan_pool), SHOAL_OK);
    int ok = atomic_load(&fan_ok), n = atomic_load(&fan_next);
    CU_ASSERT_EQUAL(atomic_load(&fan_odd), 0);
    CU_ASSERT(atomic_load(&fan_busy) > 0); /* the queue of 4 overflowed */
    CU_ASSERT_EQUAL(ok + atomic_load(&fan_busy), n - 1);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(fan_pool), (uint64_t)ok + 1);
    CU_ASSERT_EQUAL(shoal_tasks_completed(fan_pool), (uint64_t)ok + 1);
    CU_ASSERT_EQUAL(ran_times(0, n, 1), 1 + ok);
    CU_ASSERT_EQUAL(ran_times(0, n, 0), n - 1 - ok);
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT(atomic_load(&fan_member) > 0);
    for (int k = 0; k < 5; k++)
        CU_ASSERT_EQUAL(atomic_load(&foreign_rc[k]), k == 1 ? SHOAL_OK : SHOAL_EINVAL);
    int r = -1;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(other_pool, job_fn, job(MAXN - 2, 0, 6), LONG_MS, &r),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(r, 6);
    CU_ASSERT_EQUAL(shoal_tasks_release(other_pool), SHOAL_OK); /* counters final */
    CU_ASSERT_EQUAL(shoal_tasks_submitted(other_pool), 1);      /* the foreign call's never ran */
    CU_ASSERT_EQUAL(shoal_tasks_completed(other_pool), 1);
    shoal_task_group_free(fan_group);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(other_pool), SHOAL_OK);
    finish(rt, fan_pool);
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

static atomic_int tune_stop;

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

/* Three threads tune (0, 1, huge, UINT32_MAX, INT32_MAX + 1 ...) while
 * another submits 2000 tasks: every answer is the value clamped to
 * [min_size, max_size]; every task runs once; a last tune sets cap and the
 * workers exactly. */
static void tune_storm_with_submits(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_opts_t o = opts(4, 32);
    o.min_size = TUNE_MIN;
    o.max_size = TUNE_MAX;
    shoal_tasks_t *t = make_with(rt, &o);
    atomic_store(&tune_stop, 0);
    tuner_t u[TUNERS];
    for (int k = 0; k < TUNERS; k++) {
        u[k] = (tuner_t){.t = t, .who = k * 3};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&u[k].th, NULL, tuner_main, &u[k]), 0);
    }
    int refused = 0;
    for (int i = 0; i < 2000; i++)
        refused += shoal_tasks_submit(t, job_fn, job(i, 0, 0), LONG_MS) != SHOAL_OK;
    CU_ASSERT_EQUAL(refused, 0);
    WAIT_UNTIL(atomic_load(&done) == 2000);
    atomic_store(&tune_stop, 1);
    int calls = 0, wrong = 0;
    for (int k = 0; k < TUNERS; k++) {
        pthread_join(u[k].th, NULL);
        calls += u[k].calls;
        wrong += u[k].wrong + u[k].shut + u[k].odd_after_shut;
    }
    CU_ASSERT(calls > 0);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(ran_times(0, 2000, 1), 2000);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 7), 7);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 7);
    WAIT_UNTIL(stats(rt, t).pool_size == 7 && stats(rt, t).retiring == 0);
    CU_ASSERT_EQUAL(stats(rt, t).pool_size, 7);
    WAIT_UNTIL(shoal_tasks_completed(t) == 2000); /* counted after the task's end */
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2000);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 2000);
    finish(rt, t);
}

#define TUNE_ROUNDS 300

/* Three threads tune while the pool is released, over 300 pools: each
 * answer is the value clamped to [min_size, max_size] or SHOAL_ESHUTDOWN
 * (tasks.h: "the new size ... or SHOAL_ESHUTDOWN once released"), never 0,
 * which is below min_size; after the first SHOAL_ESHUTDOWN only that. The
 * tasks submitted meanwhile all run. */
static void tune_races_release(void)
{
    shoal_runtime_t *rt = runtime();
    int zero = 0, wrong = 0, shut = 0, ran_ok = 0;
    for (int round = 0; round < TUNE_ROUNDS; round++) {
        reset();
        shoal_tasks_opts_t o = opts(4, 32);
        o.min_size = TUNE_MIN;
        o.max_size = TUNE_MAX;
        shoal_tasks_t *t = make_with(rt, &o);
        atomic_store(&tune_stop, 0);
        tuner_t u[TUNERS];
        for (int k = 0; k < TUNERS; k++) {
            u[k] = (tuner_t){.t = t, .who = k * 3 + round};
            CU_ASSERT_EQUAL_FATAL(pthread_create(&u[k].th, NULL, tuner_main, &u[k]), 0);
        }
        for (int i = 0; i < 20; i++)
            CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(i, 0, 0), LONG_MS), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
        for (int k = 0; k < TUNERS; k++) {
            pthread_join(u[k].th, NULL); /* each ends on SHOAL_ESHUTDOWN */
            wrong += u[k].wrong + u[k].odd_after_shut;
            shut += u[k].shut == 4;
            zero += u[k].zero;
        }
        ran_ok += ran_times(0, 20, 1);
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
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 2, 8);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(i, A_BLOCK, 0), LONG_MS), SHOAL_OK);
    for (int i = 2; i < 6; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(i, 0, 0), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 0), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, job(6, 0, 0)), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 0), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 30), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(7, 0, 0), LONG_MS), SHOAL_ESHUTDOWN);
    caller_t rel[2];
    start(&rel[0], t, C_RELEASE, NULL);
    start(&rel[1], t, C_RELEASE, NULL);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 30), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(returned(rel, 2), 0);
    atomic_store(&gate, 1);
    for (int k = 0; k < 2; k++) {
        pthread_join(rel[k].th, NULL);
        CU_ASSERT_EQUAL(atomic_load(&rel[k].rc), SHOAL_OK);
    }
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(ran_times(0, 6, 1), 6);
    CU_ASSERT_EQUAL(ran_times(6, 8, 0), 2);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 6);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 6);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);

    reset();
    t = make(rt, 1, 8);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(0, A_OWN, 0), LONG_MS), SHOAL_OK);
    for (int i = 1; i < 5; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, job(i, 0, 0), LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 10), SHOAL_ETIMEDOUT);
    atomic_store(&gate_of[0], 1);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    CU_ASSERT_EQUAL(ran_times(0, 5, 1), 5);
    shoal_runtime_destroy(rt);
}

/* ---- bad arguments --------------------------------------------------------------- */

/* NULL handles and functions where tasks.h lists SHOAL_EINVAL or says NULL
 * is ignored; options too short for ABI 1.6 (shorter than panic_user), a
 * newer caller's longer options, a name of 63 and 64 bytes, sizes past
 * SHOAL_POOL_MAX_SIZE; opts_init_sized filling only what it is given.
 * Nothing of a refused call runs. */
static void bad_arguments_everywhere(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 4);
    shoal_task_group_t *g = NULL;
    int r = 55;
    CU_ASSERT_EQUAL(shoal_tasks_submit(NULL, job_fn, &jobs[0], 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, NULL, &jobs[0], LONG_MS), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(NULL, job_fn, &jobs[0]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, NULL, &jobs[0]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(NULL, job_fn, &jobs[0], 0, &r), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, NULL, &jobs[0], LONG_MS, &r), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(r, 55);
    CU_ASSERT_EQUAL(shoal_tasks_tune(NULL, 2), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_release(NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(NULL, 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_pid(NULL), SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(shoal_task_group_create(NULL, &g), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_task_group_create(t, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_task_group_submit(NULL, job_fn, &jobs[0], 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_task_group_wait(NULL, 0, &r), SHOAL_EINVAL);
    shoal_task_group_free(NULL);
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, NULL, &jobs[0], LONG_MS), SHOAL_EINVAL);
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
    CU_ASSERT_EQUAL(ran_times(0, 1, 0), 1);
    finish(rt, t);
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
        b->refused += shoal_tasks_submit(b->t, job_fn, job(i, 0, 0), LONG_MS) != SHOAL_OK;
    return NULL;
}

/* min_size 0, max_size 6, idle_timeout 5 ms, a queue of 8: every worker
 * expires between bursts (cap 0), then two threads submit 150 tasks each
 * and the pool grows back lazily. No task is lost or run twice; the last
 * burst is released while it grows. */
static void idle_expiry_to_zero_between_bursts(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_opts_t o = opts(1, 8);
    o.min_size = 0;
    o.max_size = 6;
    o.idle_timeout_ms = 5;
    shoal_tasks_t *t = make_with(rt, &o);
    int refused = 0;
    for (int b = 0; b < BURSTS; b++) {
        WAIT_UNTIL(shoal_tasks_cap(t) == 0 && stats(rt, t).pool_size == 0);
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
            WAIT_UNTIL(atomic_load(&done) == 2 * BURST * (b + 1));
    }
    CU_ASSERT(stats(rt, t).lazy_grown >= BURSTS - 1); /* each earlier burst grew it */
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    int n = 2 * BURST * BURSTS;
    CU_ASSERT_EQUAL(refused, 0);
    CU_ASSERT_EQUAL(ran_times(0, n, 1), n);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), (uint64_t)n);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n);
    finish(rt, t);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"release races submitters on four threads", release_races_submitters_on_four_threads},
        {"release refuses every kind of waiter", release_refuses_every_kind_of_waiter},
        {"a waiter wakes at the low-water mark", a_waiter_wakes_at_the_low_water_mark},
        {"max_waiting under twelve threads", max_waiting_under_twelve_threads},
        {"waiters against retries past max_waiting", waiters_against_retries_past_max_waiting},
        {"panic storm from two threads", panic_storm_from_two_threads},
        {"panics while the pool is released", panics_while_the_pool_is_released},
        {"submit_wait results never cross", submit_wait_results_never_cross},
        {"group first error in finish order", group_first_error_in_finish_order},
        {"groups under concurrent submits; freed by a task",
         groups_under_concurrent_submits_and_freed_by_a_task},
        {"tasks submitting tasks never block", tasks_submitting_tasks_never_block},
        {"tune storm with submits", tune_storm_with_submits},
        {"tune races release", tune_races_release},
        {"release twice at once and after timeouts", release_twice_at_once_and_after_timeouts},
        {"bad arguments everywhere", bad_arguments_everywhere},
        {"idle expiry to zero between bursts", idle_expiry_to_zero_between_bursts},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_adversarial", cases);
}
