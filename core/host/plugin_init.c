/* plugin_init.c - a plugin's init or fini under a deadline (plugin_init.h).
 *
 * The loader's thread and the init thread share one job: the loader waits
 * on its condition until `done` or the deadline; whichever of the two lets
 * go last frees it (`refs`, under the lock). An abandoned job's thread,
 * when the hook returns, undoes what init did (fini) and unloads the plugin.
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

static void *hook_thread(void *arg)
{
    job_t *j = arg;
    shoal__fault_thread_start(NULL, j->fini ? "a plugin's fini" : "a plugin's init");
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
    shoal__fault_thread_end();
    return NULL;
}

int shoal__plugin_hook_run(const shoal_plugin_t *d, bool fini, void *dl, int copy,
                           unsigned timeout_ms, char *why, size_t why_size, int *result)
{
    job_t *j = calloc(1, sizeof *j);
    if (j == NULL)
        return SHOAL_ENOMEM;
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
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, hook_thread, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        j->refs = 1;
        job_release(j);
        return SHOAL_EFAILED;
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&j->lock);
    while (!j->done && pthread_cond_timedwait(&j->cond, &j->lock, &end) != ETIMEDOUT)
        continue;
    bool done = j->done;
    if (done) {
        *result = j->result;
        snprintf(why, why_size, "%s", j->why);
    } else {
        j->abandoned = true; /* dl and copy are the init thread's now */
        if (why_size != 0)
            why[0] = '\0';
    }
    pthread_mutex_unlock(&j->lock);
    job_release(j);
    return done ? 0 : SHOAL_ETIMEDOUT;
}
