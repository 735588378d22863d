/* runtime.c - creating and destroying a runtime, and its counters.
 *
 * Create sets up, in order: the actor records, the global ring, the thread
 * cache key, the timer thread, the workers. Destroy stops every actor, waits
 * for the last one to end, stops the timer and the workers, and frees the
 * same things in reverse.
 */
#include "runtime/qsbr.h"
#include "runtime/runtime.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actor/room.h"
#include "actor/send.h"
#include "actor/timer.h"
#include "sched/bulkhead.h"
#include "sched/futex.h"
#include "sched/monitor.h"
#include "sched/worker.h"

#define GLOBAL_RING_SIZE (1u << 14)

SHOAL_API void shoal_runtime_opts_init(shoal_runtime_opts_t *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->log_level = SHOAL_LOG_INFO;
}

static unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 2 ? 2 : n > 1024 ? 1024 : (unsigned)n;
}

SHOAL_API int shoal_runtime_create(shoal_runtime_t **out, const shoal_runtime_opts_t *opts)
{
    shoal_runtime_opts_t defaults;
    if (out == NULL)
        return SHOAL_EINVAL;
    *out = NULL;
    if (opts == NULL) {
        shoal_runtime_opts_init(&defaults);
        opts = &defaults;
    }
    if (opts->threads > 1024 || opts->throughput > 1u << 20 || opts->spin_us > 1000000 ||
        (opts->max_actors != 0 && opts->max_actors < 16) || opts->max_actors > 1u << 30 ||
        opts->stall_warn_ms > SHOAL_STALL_WARN_MAX_MS ||
        opts->max_extra_threads < SHOAL_EXTRA_THREADS_NONE || opts->max_extra_threads > 1024)
        return SHOAL_EINVAL;
    shoal_runtime_t *rt = aligned_alloc(64, sizeof *rt);
    if (rt == NULL)
        return SHOAL_ENOMEM;
    memset(rt, 0, sizeof *rt);
    rt->nthreads = opts->threads ? opts->threads : default_threads();
    unsigned max_extra = opts->max_extra_threads == 0  ? rt->nthreads
                         : opts->max_extra_threads < 0 ? 0
                                                       : (unsigned)opts->max_extra_threads;
    rt->nslots = rt->nthreads + max_extra;
    rt->throughput = opts->throughput ? opts->throughput : 32;
    rt->spin_ns = (uint64_t)(opts->spin_us ? opts->spin_us : 50) * 1000u;
    rt->max_actors = opts->max_actors ? opts->max_actors : 1u << 24;
    rt->debug_checks = opts->debug_checks;
    rt->log_level = opts->log_level;
    rt->log_fn = opts->log_fn;
    rt->log_user = opts->log_user;
    rt->max_queued = opts->max_queued;
    pthread_mutex_init(&rt->env_lock, NULL);
    pthread_mutex_init(&rt->limbo_lock, NULL);
    pthread_mutex_init(&rt->queued_lock, NULL);
    shoal__bulkhead_init(rt, max_extra);
    shoal__names_init(rt);

    int rc = shoal__rooms_init(rt);
    if (rc != SHOAL_OK)
        goto fail_slots;
    if ((rc = shoal__slots_init(rt)) != SHOAL_OK)
        goto fail_slots;
    if ((rc = shoal__inject_init(&rt->global, GLOBAL_RING_SIZE, false)) != SHOAL_OK)
        goto fail_inject;
    if ((rc = shoal__tcache_key_init(rt)) != SHOAL_OK)
        goto fail_key;
    if ((rc = shoal__timers_start(rt)) != SHOAL_OK)
        goto fail_timers;
    if ((rc = shoal__workers_start(rt)) != SHOAL_OK)
        goto fail_workers;
    if ((rc = shoal__monitor_create(rt, opts->stall_warn_ms ? opts->stall_warn_ms : 1000,
                                    max_extra)) != SHOAL_OK)
        goto fail_monitor;
    shoal__timers_watch(rt);
    /* release: pairs with shoal__queued_check's acquire (rt->workers set). */
    atomic_store_explicit(&rt->started, 1, memory_order_release);
    *out = rt;
    return SHOAL_OK;

fail_monitor:
    shoal__timers_stop(rt);
    shoal__workers_join(rt);
    shoal__workers_free(rt);
    shoal__timers_free(rt);
    goto fail_timers;
fail_workers:
    shoal__timers_stop(rt);
    shoal__timers_free(rt);
fail_timers:
    shoal__tcache_key_fini(rt);
fail_key:
    shoal__inject_fini(&rt->global);
fail_inject:
    shoal__slots_fini(rt);
fail_slots:
    shoal__rooms_fini(rt);
    shoal__names_fini(rt);
    shoal__envs_fini(rt);
    shoal__bulkhead_fini(rt);
    pthread_mutex_destroy(&rt->queued_lock);
    pthread_mutex_destroy(&rt->limbo_lock);
    pthread_mutex_destroy(&rt->env_lock);
    free(rt);
    return rc;
}

/* Asks every live actor to stop, then sleeps until the last has ended. */
static void stop_all(shoal_runtime_t *rt)
{
    /* seq_cst: after this no spawn starts. One already past its check
     * finishes: then it is a child of a running actor (which stops its
     * children when it ends), since no other thread may use rt now. So the
     * scan below, plus the children's links, reaches every actor. */
    atomic_store_explicit(&rt->stopping, 1, memory_order_seq_cst);
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    pthread_mutex_lock(&rt->slots_lock);
    uint32_t used = atomic_load_explicit(&rt->next_fresh, memory_order_relaxed);
    pthread_mutex_unlock(&rt->slots_lock);
    for (uint32_t slot = 0; slot < used && tc != NULL; slot++) {
        shoal_actor_t *a = shoal__actor_at(rt, slot);
        /* acquire (both words): pairs with the release stores of user_rsv and
         * sys_rsv in shoal__actor_spawn: a live word's record (kind) is set up. */
        uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
        /* The system mailbox: a retiring pool worker or a draining pool has
         * closed its user mailbox and still lives. */
        uint64_t sw = atomic_load_explicit(&a->sys_rsv, memory_order_acquire);
        if (!shoal__rsv_alive(sw) || shoal__rsv_gen(sw) != shoal__rsv_gen(w) ||
            atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_WAITER)
            continue;
        shoal__send_system(rt, tc, shoal__pid_make(shoal__rsv_gen(w), slot), SHOAL_ENV_STOP,
                           SHOAL_PID_NONE, (uint32_t)SHOAL_ESHUTDOWN);
    }
    /* seq_cst: stop_all's half of the shutdown pair (the store of stopping
     * above, then this load) with shoal__actor_release's seq_cst fetch_sub
     * of live and load of stopping: the last actor to end wakes us, or we
     * see live at 0. The 10 ms timeout is a backstop, not the protocol. It
     * also acquires every ending actor's clean-up (their fetch_subs, one
     * release sequence). */
    while (atomic_load_explicit(&rt->live, memory_order_seq_cst) != 0) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
        shoal__futex_wait(&rt->all_ended, 0, &ts);
    }
}

SHOAL_API void shoal_runtime_destroy(shoal_runtime_t *rt)
{
    if (rt == NULL)
        return;
    stop_all(rt);
    shoal__timers_stop(rt); /* and the monitor: no compensating worker starts now */
    shoal__workers_join(rt);
    shoal__timers_free(rt); /* workers may kick the monitor until they stop */
    shoal__monitor_destroy(rt);
    shoal__qsbr_collect(rt, true); /* no thread reads records now */
    shoal__workers_free(rt);
    shoal__tcache_key_fini(rt);
    shoal__inject_fini(&rt->global);
    shoal__slots_fini(rt);
    shoal__envs_fini(rt);
    shoal__names_fini(rt);
    shoal__rooms_fini(rt);
    shoal__bulkhead_fini(rt);
    pthread_mutex_destroy(&rt->queued_lock);
    pthread_mutex_destroy(&rt->limbo_lock);
    pthread_mutex_destroy(&rt->env_lock);
    pthread_mutex_destroy(&rt->slots_lock);
    free(rt);
}

SHOAL_API unsigned shoal_runtime_threads(const shoal_runtime_t *rt) { return rt->nthreads; }

SHOAL_API void shoal_runtime_stats_sized(shoal_runtime_t *rt, shoal_runtime_stats_t *stats,
                                         size_t size)
{
    shoal_runtime_stats_t all;
    shoal_tstats_t sum;
    shoal__tcache_sum(rt, &sum);
    memset(&all, 0, sizeof all);
#define SHOAL__TSTAT_COPY(name) all.name = atomic_load_explicit(&sum.name, memory_order_relaxed);
    SHOAL_TSTATS_MAP(SHOAL__TSTAT_COPY)
#undef SHOAL__TSTAT_COPY
    all.actors_live = atomic_load_explicit(&rt->live, memory_order_relaxed);
    shoal__monitor_counts(rt, &all.stalls, &all.extra_threads_started, &all.extra_threads_live);
    shoal__bulkhead_counts(rt, &all.held_back, &all.held_back_total);
    memcpy(stats, &all, size < sizeof all ? size : sizeof all);
}

SHOAL_API void(shoal_runtime_stats)(shoal_runtime_t *rt, shoal_runtime_stats_t *stats)
{
    shoal_runtime_stats_sized(rt, stats, offsetof(shoal_runtime_stats_t, held_back));
}
