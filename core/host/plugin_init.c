/* plugin_init.c - a plugin's init or fini under a deadline (plugin_init.h).
 *
 * The hooks run on one long-lived thread, the runner, which takes one job
 * at a time: a thread per load (and an alternate signal stack per thread)
 * would be made and unmade a thousand times by a thousand loads. The
 * loader posts a job to the runner and waits on the job's condition until
 * `done` or the deadline; whichever of the two lets go of the job last
 * frees it (`refs`, under the job's lock). A job given up on is abandoned
 * with its runner: the runner is retired (it ends once that hook returns,
 * after undoing what init did -- fini -- and unloading the plugin), and the
 * next job starts a new runner. Jobs are posted one at a time
 * (runner_lock, held while the caller waits); a caller that finds the
 * runner taken by another's runs its hook on a thread of its own rather
 * than wait behind a hook that may hang.
 */
#include "host/plugin_init.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/fault.h"
#include "sched/futex.h"
#include "shoal/error.h"

typedef struct job_s {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int refs; /* 2 while both hold it */
    bool done, abandoned;
    bool fini; /* the hook: init, or fini */
    const shoal_plugin_t *d;
    void *dl;
    int copy;
    int result;
    char why[256];
} job_t;

/* A runner: its thread waits for `job` (under lock, signalled on cond)
 * and takes it off before it runs it; retired, it ends once it has none. */
typedef struct runner_s {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    job_t *job;
    bool retired;
} runner_t;

/* The runner the next job goes to, or NULL (none yet, or the last one was
 * retired). Under runner_lock, which a caller holds from posting its job
 * until it has its answer or gives up. */
static pthread_mutex_t runner_lock = PTHREAD_MUTEX_INITIALIZER;
static runner_t *runner;

static void job_release(job_t *j)
{
    pthread_mutex_lock(&j->lock);
    bool last = --j->refs == 0;
    pthread_mutex_unlock(&j->lock);
    if (last) {
        pthread_cond_destroy(&j->cond);
        pthread_mutex_destroy(&j->lock);
        free(j);
    }
}

static bool has_fini(const shoal_plugin_t *d)
{
    return d->size >= offsetof(shoal_plugin_t, fini) + sizeof d->fini && d->fini != NULL;
}

/* Runs j's hook and tells its caller; if the caller has given up on it by
 * then, undoes init and unloads the plugin. */
static void run_job(job_t *j)
{
    shoal__fault_thread_role(j->fini ? "a plugin's fini" : "a plugin's init");
    char why[sizeof j->why] = "";
    int r = 0;
    if (j->fini)
        j->d->fini();
    else
        r = j->d->init(why, sizeof why);
    why[sizeof why - 1] = '\0';
    pthread_mutex_lock(&j->lock);
    j->result = r;
    memcpy(j->why, why, sizeof why);
    j->done = true;
    bool abandoned = j->abandoned;
    pthread_cond_signal(&j->cond);
    pthread_mutex_unlock(&j->lock);
    if (abandoned) { /* given up on long ago: undo, unload */
        if (!j->fini && r == 0 && has_fini(j->d))
            j->d->fini();
        dlclose(j->dl);
        close(j->copy);
    }
    job_release(j);
    shoal__fault_thread_role("a plugin's init or fini (idle)");
}

static void *runner_main(void *arg)
{
    runner_t *r = arg;
    shoal__fault_thread_start(NULL, "a plugin's init or fini (idle)");
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->job == NULL && !r->retired)
            pthread_cond_wait(&r->cond, &r->lock);
        job_t *j = r->job;
        if (j == NULL)
            break;     /* retired, nothing left to run */
        r->job = NULL; /* ours: the next may be posted while we finish this */
        pthread_mutex_unlock(&r->lock);
        run_job(j);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    free(r);
    shoal__fault_thread_end();
    return NULL;
}

/* Starts fn(arg) on a detached thread: 0, or pthread_create's error. */
static int start_detached(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc;
}

/* With runner_lock: the runner, started if there is none; NULL if it
 * cannot be. */
static runner_t *runner_get(void)
{
    if (runner != NULL)
        return runner;
    runner_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    if (start_detached(runner_main, r) != 0) {
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
    }
    return runner = r;
}

static job_t *job_new(const shoal_plugin_t *d, bool fini, void *dl, int copy)
{
    job_t *j = calloc(1, sizeof *j);
    if (j == NULL)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->cond, &ca);
    pthread_condattr_destroy(&ca);
    j->refs = 2;
    j->fini = fini;
    j->d = d;
    j->dl = dl;
    j->copy = copy;
    return j;
}

/* A caller's tend (NULL: none), called while it waits. */
typedef struct tend_s {
    void (*fn)(void *arg);
    void *arg;
} tend_t;

/* Waits for j until done or timeout_ms: true with *result and why, or
 * false with j abandoned (its dl and copy its thread's now). tend every
 * SHOAL_ASK_EVERY_MS at most, without j's lock (it may log). */
static bool job_wait(job_t *j, unsigned timeout_ms, tend_t tend, char *why, size_t why_size,
                     int *result)
{
    uint64_t at = shoal__deadline_ns(shoal__now_ns(), timeout_ms); /* CLOCK_MONOTONIC, as cond */
    pthread_mutex_lock(&j->lock);
    for (;;) {
        uint64_t until = at;
        if (tend.fn != NULL) {
            uint64_t slice = shoal__deadline_ns(shoal__now_ns(), SHOAL_ASK_EVERY_MS);
            until = slice < at ? slice : at;
        }
        struct timespec end = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
        while (!j->done && pthread_cond_timedwait(&j->cond, &j->lock, &end) != ETIMEDOUT)
            continue;
        if (j->done || until == at)
            break;
        pthread_mutex_unlock(&j->lock);
        tend.fn(tend.arg);
        pthread_mutex_lock(&j->lock);
    }
    bool done = j->done;
    if (done) {
        *result = j->result;
        snprintf(why, why_size, "%s", j->why);
    } else {
        j->abandoned = true;
        if (why_size != 0)
            why[0] = '\0';
    }
    pthread_mutex_unlock(&j->lock);
    return done;
}

/* A thread for one job, when the runner is busy with another caller's
 * (a fini on a dispatcher thread while the host thread waits for an
 * init): this caller does not queue behind a hook that may hang. */
static void *oneoff_main(void *arg)
{
    shoal__fault_thread_start(NULL, "a plugin's init or fini");
    run_job(arg);
    shoal__fault_thread_end();
    return NULL;
}

static int oneoff_run(job_t *j, unsigned timeout_ms, tend_t tend, char *why, size_t why_size,
                      int *result)
{
    if (start_detached(oneoff_main, j) != 0) {
        j->refs = 1;
        job_release(j);
        return SHOAL_EFAILED;
    }
    bool done = job_wait(j, timeout_ms, tend, why, why_size, result);
    job_release(j);
    return done ? 0 : SHOAL_ETIMEDOUT;
}

int shoal__plugin_hook_run(const shoal_plugin_t *d, bool fini, void *dl, int copy,
                           unsigned timeout_ms, char *why, size_t why_size, int *result)
{
    return shoal__plugin_hook_run_tended(d, fini, dl, copy, timeout_ms, NULL, NULL, why, why_size,
                                         result);
}

int shoal__plugin_hook_run_tended(const shoal_plugin_t *d, bool fini, void *dl, int copy,
                                  unsigned timeout_ms, void (*tend_fn)(void *), void *tend_arg,
                                  char *why, size_t why_size, int *result)
{
    tend_t tend = {tend_fn, tend_arg};
    job_t *j = job_new(d, fini, dl, copy);
    if (j == NULL)
        return SHOAL_ENOMEM;
    if (pthread_mutex_trylock(&runner_lock) != 0)
        return oneoff_run(j, timeout_ms, tend, why, why_size, result);
    runner_t *r = runner_get();
    if (r == NULL) {
        pthread_mutex_unlock(&runner_lock);
        j->refs = 1;
        job_release(j);
        return SHOAL_EFAILED;
    }
    pthread_mutex_lock(&r->lock);
    r->job = j;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    bool done = job_wait(j, timeout_ms, tend, why, why_size, result);
    if (!done) {
        /* The runner is stuck in this hook: it ends once the hook returns
         * (runner_main), and the next job starts another. */
        pthread_mutex_lock(&r->lock);
        r->retired = true;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->lock);
        runner = NULL;
    }
    pthread_mutex_unlock(&runner_lock);
    job_release(j);
    return done ? 0 : SHOAL_ETIMEDOUT;
}
