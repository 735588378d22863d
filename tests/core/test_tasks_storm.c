/* test_tasks_storm.c - submits of every kind from four threads while a
 * fifth tunes the pool between 0 and its max and idle expiry shrinks it,
 * then a release in the middle: every submit that returned SHOAL_OK (or a
 * submit_wait's SHOAL_ETIMEDOUT) ran exactly once, every refusal ran
 * nothing, and the pool's counters say the same.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tasks_kit.h"

#include "pool/pool.h"
#include "tasks/tasks.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TK_WAIT_S)
#define SUBMITTERS 4
#define PER 1500

static int rcs[TK_MAXN];
static int how_of[TK_MAXN];
static atomic_int stop_tuning, tunes_bad, tunes;
static shoal_task_group_t *groups[SUBMITTERS];
static atomic_int progress;

/* A task that takes a little while (~20 us), then is tk_job_fn. */
static int slow_fn(shoal_ctx_t *ctx, void *arg)
{
    double end = shoal_test_now() + 20e-6;
    while (shoal_test_now() < end)
        ;
    return tk_job_fn(ctx, arg);
}

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    int k;
} sub_t;

static void *submitter(void *arg)
{
    sub_t *s = arg;
    for (int i = 0; i < PER; i++) {
        int idx = s->k * PER + i;
        tk_job_t *j = tk_job(idx, 0, 0);
        int how = (i + s->k) % 4, rc;
        switch (how) {
        case 0:
            rc = shoal_tasks_submit(s->t, slow_fn, j, 2);
            break;
        case 1:
            rc = shoal_tasks_try_submit(s->t, slow_fn, j);
            break;
        case 2:
            rc = shoal_tasks_submit_wait(s->t, slow_fn, j, 50, NULL);
            break;
        default:
            rc = shoal_task_group_submit(groups[s->k], slow_fn, j, 1);
            break;
        }
        rcs[idx] = rc;
        how_of[idx] = how;
        atomic_fetch_add(&progress, 1);
    }
    return NULL;
}

static void *tuner(void *arg)
{
    shoal_tasks_t *t = arg;
    unsigned seed = 7;
    bool shut = false;
    while (!atomic_load(&stop_tuning)) {
        uint32_t want = (uint32_t)(rand_r(&seed) % 7);
        int rc = shoal_tasks_tune(t, want);
        atomic_fetch_add(&tunes, 1);
        if (rc == SHOAL_ESHUTDOWN)
            shut = true;
        else if (rc != (int)want || shut)
            atomic_fetch_add(&tunes_bad, 1);
    }
    return NULL;
}

static void storm(uint32_t queue, uint32_t max_waiting, uint64_t idle_ms, bool release_midway)
{
    tk_reset();
    memset(rcs, 0, sizeof rcs);
    atomic_store(&stop_tuning, 0);
    atomic_store(&tunes_bad, 0);
    atomic_store(&tunes, 0);
    atomic_store(&progress, 0);
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(2, queue);
    o.min_size = 0;
    o.max_size = 6;
    o.max_waiting = max_waiting;
    o.idle_timeout_ms = idle_ms;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    for (int k = 0; k < SUBMITTERS; k++)
        CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &groups[k]), SHOAL_OK);
    pthread_t tu;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tu, NULL, tuner, t), 0);
    sub_t s[SUBMITTERS];
    for (int k = 0; k < SUBMITTERS; k++) {
        s[k] = (sub_t){.t = t, .k = k};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&s[k].th, NULL, submitter, &s[k]), 0);
    }
    if (release_midway) {
        WAIT_UNTIL(atomic_load(&progress) >= SUBMITTERS * PER / 3);
        CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    }
    for (int k = 0; k < SUBMITTERS; k++)
        pthread_join(s[k].th, NULL);
    atomic_store(&stop_tuning, 1);
    pthread_join(tu, NULL);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    int accepted = 0, bad = 0, counts[4][64] = {{0}};
    for (int idx = 0; idx < SUBMITTERS * PER; idx++) {
        int rc = rcs[idx], how = how_of[idx];
        bool in = rc == SHOAL_OK || (how == 2 && rc == SHOAL_ETIMEDOUT);
        accepted += in;
        int ran = atomic_load(&tk_ran[idx]);
        if (ran != (in ? 1 : 0)) {
            if (bad++ < 5)
                fprintf(stderr, "\n  job %d how %d rc %d ran %d", idx, how, rc, ran);
        }
        if (-rc >= 0 && -rc < 64)
            counts[how][-rc]++;
        bool allowed = rc == SHOAL_OK || rc == SHOAL_ESHUTDOWN || rc == SHOAL_EBUSY ||
                       rc == SHOAL_EOVERLOAD || (how != 1 && rc == SHOAL_ETIMEDOUT);
        if (!allowed && bad++ < 5)
            fprintf(stderr, "\n  job %d how %d: rc %d (%s)", idx, how, rc, shoal_strerror(rc));
    }
    CU_ASSERT_EQUAL(bad, 0);
    for (int k = 0; k < SUBMITTERS; k++) {
        int first = -1;
        CU_ASSERT_EQUAL(shoal_task_group_wait(groups[k], 0, &first), SHOAL_OK);
        CU_ASSERT_EQUAL(first, 0);
        shoal_task_group_free(groups[k]);
    }
    shoal_pool_stats_t st;
    shoal_tasks_t *tt = t;
    CU_ASSERT_EQUAL(shoal_tasks_submitted(tt), (uint64_t)accepted);
    CU_ASSERT_EQUAL(shoal_tasks_completed(tt), (uint64_t)accepted);
    CU_ASSERT_EQUAL(shoal_tasks_dropped(tt), 0);
    CU_ASSERT_EQUAL(atomic_load(&tunes_bad), 0);
    shoal__pool_peek(tt->rec, &st);
    /* every SHOAL_EOVERLOAD counted, and nothing else */
    CU_ASSERT_EQUAL(st.waiting_refused,
                    (uint64_t)(counts[0][-SHOAL_EOVERLOAD] + counts[2][-SHOAL_EOVERLOAD] +
                               counts[3][-SHOAL_EOVERLOAD]));
    CU_ASSERT_EQUAL(counts[1][-SHOAL_EOVERLOAD], 0);
    tk_finish(rt, t);
}

static void storm_small_queue(void) { storm(1, 2, 0, false); }
static void storm_idle_expiry(void) { storm(2, 1, 5, false); }
static void storm_release_midway(void) { storm(1, 0, 5, true); }
static void storm_queue_zero(void) { storm(0, 3, 5, true); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"storm, a queue of one", storm_small_queue},
        {"storm, idle expiry", storm_idle_expiry},
        {"storm, released midway", storm_release_midway},
        {"storm, a queue of none", storm_queue_zero},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_storm", cases);
}
