/* timer.c - the timer thread and its heap; see timer.h. */
#include "actor/timer.h"
#include "actor/room.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "actor/ctx.h"
#include "actor/send.h"
#include "runtime/fault.h"
#include "runtime/runtime.h"
#include "sched/futex.h"
#include "sched/monitor.h"

#define QUEUED_CHECK_NS (10 * 1000 * 1000u)

typedef struct entry_s {
    uint64_t deadline;
    shoal_pid_t to;
    shoal_env_t *env; /* NULL: entry free */
    uint32_t gen;
    uint32_t heap_idx;
    bool sys;
} entry_t;

struct shoal_timers_s {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    bool stop;
    bool watch; /* run the monitor too */
    entry_t *entries;
    uint32_t nentries, cap;
    uint32_t *free_ids; /* free entry indices */
    uint32_t nfree;
    uint32_t *heap; /* entry indices, ordered by deadline */
    uint32_t nheap;
    shoal_tick_t *owed; /* ticks owed (timer.h), in no order */
    uint64_t owed_gen;  /* moves with every change to the list or a node on it */
    uint32_t fail;      /* timer starts still to fail (shoal__timers_fail) */
    /* The timer thread's cache, made before it starts (a runtime whose
     * timer thread could have none is not made: its timers would fire
     * into nothing, and ticks owed would wait for good); freed at the
     * thread's end, as any foreign cache. */
    shoal_tcache_t *tc;
};

static bool earlier(struct shoal_timers_s *t, uint32_t i, uint32_t j)
{
    return t->entries[t->heap[i]].deadline < t->entries[t->heap[j]].deadline;
}

static void swap(struct shoal_timers_s *t, uint32_t i, uint32_t j)
{
    uint32_t x = t->heap[i];
    t->heap[i] = t->heap[j];
    t->heap[j] = x;
    t->entries[t->heap[i]].heap_idx = i;
    t->entries[t->heap[j]].heap_idx = j;
}

static void sift_up(struct shoal_timers_s *t, uint32_t i)
{
    while (i > 0 && earlier(t, i, (i - 1) / 2)) {
        swap(t, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sift_down(struct shoal_timers_s *t, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->nheap && earlier(t, l, m))
            m = l;
        if (r < t->nheap && earlier(t, r, m))
            m = r;
        if (m == i)
            return;
        swap(t, i, m);
        i = m;
    }
}

static void heap_remove(struct shoal_timers_s *t, uint32_t i)
{
    t->nheap--;
    if (i == t->nheap)
        return;
    swap(t, i, t->nheap);
    sift_down(t, i);
    sift_up(t, i);
}

static void entry_free(struct shoal_timers_s *t, uint32_t id)
{
    t->entries[id].env = NULL;
    t->entries[id].gen++;
    t->free_ids[t->nfree++] = id;
}

/* Fires the earliest timer; called with t->lock held, which it drops
 * while delivering. */
static void fire(shoal_runtime_t *rt, struct shoal_timers_s *t, shoal_tcache_t *tc)
{
    entry_t *top = &t->entries[t->heap[0]];
    uint32_t id = t->heap[0];
    shoal_env_t *e = top->env;
    shoal_pid_t to = top->to;
    bool sys = top->sys;
    heap_remove(t, 0);
    entry_free(t, id);
    pthread_mutex_unlock(&t->lock);
    /* Read what we need first: once delivered, e belongs to the
     * receiver, which may already have handled and freed it. */
    bool cast = shoal__env_kind(e) == SHOAL_MSG_CAST;
    /* An actor's call timer that outlived it (call.c: a superseded one is
     * not cancelled) is nobody's refused message. */
    bool tick = shoal__env_kind(e) == SHOAL_ENV_CALL_TICK;
    if (shoal__deliver(rt, tc, to, e, sys) != SHOAL_OK) {
        SHOAL_STAT_ADD(tc, timer_refused, !tick);
        shoal__env_free(tc, e);
    } else if (cast) {
        SHOAL_STAT_ADD(tc, msgs_sent, 1);
    }
    pthread_mutex_lock(&t->lock);
}

/* k off the list of ticks owed, if it is on it; with t->lock. */
static void owed_remove(struct shoal_timers_s *t, shoal_tick_t *k)
{
    if (!k->owed)
        return;
    shoal_tick_t **at = &t->owed;
    while (*at != k)
        at = &(*at)->next;
    *at = k->next;
    k->owed = false;
    k->next = NULL;
    t->owed_gen++;
}

/* Sends the ticks owed that are due at `now`; called with t->lock held,
 * which it drops while it builds and sends each (an envelope may take the
 * runtime's slab lock and a refill: not under the timer's). Returns the
 * earliest time one is still owed for (0: none). A tick whose envelope
 * cannot be had yet stays owed, looked at again SHOAL__TICK_OWED_RETRY_MS
 * on; one whose actor has ended is dropped. */
static uint64_t pay_owed(shoal_runtime_t *rt, struct shoal_timers_s *t, shoal_tcache_t *tc,
                         uint64_t now)
{
    for (;;) {
        shoal_tick_t *k = t->owed;
        while (k != NULL && k->due > now)
            k = k->next;
        if (k == NULL)
            break;
        shoal_pid_t to = k->to;
        uint32_t type = k->type;
        uint64_t gen = t->owed_gen;
        pthread_mutex_unlock(&t->lock);
        shoal_env_t *e =
            shoal__env_new(tc, SHOAL_MSG_CAST, SHOAL_ENV_PRIORITY, to, 0, type, NULL, 0);
        pthread_mutex_lock(&t->lock);
        if (t->owed_gen != gen) {
            /* The list changed meanwhile: k may have been forgotten (and
             * freed with its owner) or moved. Looked at again. */
            if (e != NULL) {
                pthread_mutex_unlock(&t->lock);
                shoal__env_free(tc, e);
                pthread_mutex_lock(&t->lock);
            }
            continue;
        }
        if (e == NULL) {
            k->due = shoal__now_ns() + SHOAL__TICK_OWED_RETRY_MS * 1000000u;
            continue;
        }
        /* Off the list before the lock is let go: k is its owner's, who may
         * forget it (and free it) from then on; what is sent was copied. */
        owed_remove(t, k);
        pthread_mutex_unlock(&t->lock);
        if (shoal__deliver(rt, tc, to, e, true) != SHOAL_OK)
            shoal__env_free(tc, e); /* its actor has ended: nobody to tick */
        pthread_mutex_lock(&t->lock);
    }
    uint64_t next = 0;
    for (const shoal_tick_t *k = t->owed; k != NULL; k = k->next)
        if (next == 0 || k->due < next)
            next = k->due;
    return next;
}

static void *timer_main(void *arg)
{
    shoal_runtime_t *rt = arg;
    struct shoal_timers_s *t = rt->timers;
    shoal__fault_thread_start(NULL, "the timer thread");
    shoal_tcache_t *tc = t->tc;
    shoal__tcache_bind(rt, tc);
    uint64_t tick = 0; /* the monitor's next look; 0: idle, until kicked */
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        uint64_t now = shoal__now_ns();
        /* relaxed: written under t->lock (kick) or by this thread. */
        if (t->watch && (tick != 0 ? now >= tick
                                   : !atomic_load_explicit(&rt->mon_idle, memory_order_relaxed))) {
            pthread_mutex_unlock(&t->lock);
            tick = shoal__monitor_tick(rt, now);
            pthread_mutex_lock(&t->lock);
            continue;
        }
        /* While max_queued is set, the timer thread also sums what
         * unbounded mailboxes hold, every QUEUED_CHECK_NS (queued.c). */
        if (rt->max_queued != 0 && now - rt->queued_checked_ns >= QUEUED_CHECK_NS) {
            rt->queued_checked_ns = now;
            pthread_mutex_unlock(&t->lock);
            shoal__queued_check(rt);
            /* Below the limit: whoever waits for it is told (room.h). */
            if (!atomic_load_explicit(&rt->queued_over, memory_order_relaxed) &&
                shoal__room_queued_waiting(rt))
                shoal__room_tell_queued(rt, tc);
            pthread_mutex_lock(&t->lock);
            continue;
        }
        uint64_t until = t->watch ? tick : 0; /* 0: no deadline */
        if (t->owed != NULL) {
            uint64_t o = pay_owed(rt, t, tc, now);
            until = o != 0 && (until == 0 || o < until) ? o : until;
        }
        if (rt->max_queued != 0) {
            uint64_t q = rt->queued_checked_ns + QUEUED_CHECK_NS;
            until = until == 0 || q < until ? q : until;
        }
        if (t->nheap != 0) {
            uint64_t d = t->entries[t->heap[0]].deadline;
            if (d <= now) {
                fire(rt, t, tc);
                continue;
            }
            until = until == 0 || d < until ? d : until;
        }
        if (until == 0) {
            pthread_cond_wait(&t->cond, &t->lock);
        } else {
            struct timespec ts = {.tv_sec = (time_t)(until / 1000000000u),
                                  .tv_nsec = (long)(until % 1000000000u)};
            pthread_cond_timedwait(&t->cond, &t->lock, &ts);
        }
    }
    pthread_mutex_unlock(&t->lock);
    shoal__fault_thread_end();
    return NULL;
}

int shoal__timers_start(shoal_runtime_t *rt)
{
    struct shoal_timers_s *t = calloc(1, sizeof *t);
    if (t == NULL)
        return SHOAL_ENOMEM;
    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cond, &ca);
    pthread_condattr_destroy(&ca);
    rt->timers = t;
    /* On failure the cache stays in the runtime's list of foreign ones,
     * freed with its key (runtime.c: fail_timers). */
    if ((t->tc = shoal__tcache_new_foreign(rt)) == NULL ||
        pthread_create(&t->thread, NULL, timer_main, rt) != 0) {
        pthread_cond_destroy(&t->cond);
        pthread_mutex_destroy(&t->lock);
        free(t);
        rt->timers = NULL;
        return SHOAL_ENOMEM;
    }
    return SHOAL_OK;
}

void shoal__timers_watch(shoal_runtime_t *rt)
{
    struct shoal_timers_s *t = rt->timers;
    pthread_mutex_lock(&t->lock);
    t->watch = true;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

void shoal__timers_kick(shoal_runtime_t *rt)
{
    struct shoal_timers_s *t = rt->timers;
    pthread_mutex_lock(&t->lock);
    /* Under the lock: the timer thread checks it there before it sleeps. */
    atomic_store_explicit(&rt->mon_idle, 0, memory_order_relaxed);
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

void shoal__timers_stop(shoal_runtime_t *rt)
{
    struct shoal_timers_s *t = rt->timers;
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = true;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
}

void shoal__timers_free(shoal_runtime_t *rt)
{
    struct shoal_timers_s *t = rt->timers;
    if (t == NULL)
        return;
    /* Pending envelopes live in the runtime's slabs; only heap payloads
     * need releasing. */
    for (uint32_t i = 0; i < t->nheap; i++)
        shoal__env_drop_payload(t->entries[t->heap[i]].env);
    free(t->entries);
    free(t->free_ids);
    free(t->heap);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    free(t);
    rt->timers = NULL;
}

static int grow(struct shoal_timers_s *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    entry_t *ne = realloc(t->entries, cap * sizeof *ne);
    if (ne == NULL)
        return SHOAL_ENOMEM;
    t->entries = ne;
    uint32_t *nf = realloc(t->free_ids, cap * sizeof *nf);
    if (nf == NULL)
        return SHOAL_ENOMEM;
    t->free_ids = nf;
    uint32_t *nh = realloc(t->heap, cap * sizeof *nh);
    if (nh == NULL)
        return SHOAL_ENOMEM;
    t->heap = nh;
    for (uint32_t i = t->cap; i < cap; i++) {
        t->entries[i] = (entry_t){.env = NULL, .gen = 1};
        t->free_ids[t->nfree++] = cap - 1 - (i - t->cap);
    }
    t->cap = cap;
    return SHOAL_OK;
}

/* Starts a timer for e; k (if not NULL) is a tick owed that it
 * supersedes, taken off the list in the same hold of the lock. */
static int start(shoal_runtime_t *rt, shoal_pid_t to, uint64_t delay_ms, shoal_env_t *e, bool sys,
                 shoal_timer_t *id, shoal_tick_t *k)
{
    struct shoal_timers_s *t = rt->timers;
    uint64_t now = shoal__now_ns();
    uint64_t deadline = shoal__deadline_ns(now, delay_ms);
    pthread_mutex_lock(&t->lock);
    if (t->fail != 0 || (t->nfree == 0 && grow(t) != SHOAL_OK)) {
        t->fail -= t->fail != 0;
        pthread_mutex_unlock(&t->lock);
        return SHOAL_ENOMEM;
    }
    uint32_t i = t->free_ids[--t->nfree];
    entry_t *x = &t->entries[i];
    x->deadline = deadline;
    x->to = to;
    x->env = e;
    x->sys = sys;
    x->heap_idx = t->nheap;
    t->heap[t->nheap++] = i;
    sift_up(t, x->heap_idx);
    if (x->heap_idx == 0)
        pthread_cond_signal(&t->cond);
    if (id != NULL)
        *id = (shoal_timer_t)x->gen << 32 | (i + 1);
    if (k != NULL)
        owed_remove(t, k);
    pthread_mutex_unlock(&t->lock);
    return SHOAL_OK;
}

int shoal__timer_start(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, uint64_t delay_ms,
                       shoal_env_t *e, bool sys, shoal_timer_t *id)
{
    (void)tc;
    return start(rt, to, delay_ms, e, sys, id, NULL);
}

int shoal__timer_cancel(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_timer_t id)
{
    struct shoal_timers_s *t = rt->timers;
    uint32_t i = (uint32_t)id - 1, gen = (uint32_t)(id >> 32);
    pthread_mutex_lock(&t->lock);
    if ((uint32_t)id == 0 || i >= t->cap || t->entries[i].gen != gen || t->entries[i].env == NULL) {
        pthread_mutex_unlock(&t->lock);
        return SHOAL_ENOPROC;
    }
    shoal_env_t *e = t->entries[i].env;
    heap_remove(t, t->entries[i].heap_idx);
    entry_free(t, i);
    pthread_mutex_unlock(&t->lock);
    shoal__env_free(tc, e);
    return SHOAL_OK;
}

SHOAL_API int shoal_send_after(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t delay_ms, uint32_t type,
                               const void *data, size_t size, shoal_timer_t *timer)
{
    if ((size != 0 && data == NULL) || size > UINT32_MAX)
        return SHOAL_EINVAL;
    shoal_env_t *e = shoal__env_new(ctx->tc, SHOAL_MSG_CAST, 0, ctx->self, 0, type, data, size);
    if (e == NULL)
        return SHOAL_ENOMEM;
    int rc = shoal__timer_start(ctx->rt, ctx->tc, to, delay_ms, e, false, timer);
    if (rc != SHOAL_OK)
        shoal__env_free(ctx->tc, e);
    return rc;
}

SHOAL_API int shoal_send_after_priority(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t delay_ms,
                                        uint32_t type, const void *data, size_t size,
                                        shoal_timer_t *timer)
{
    if ((size != 0 && data == NULL) || size > UINT32_MAX)
        return SHOAL_EINVAL;
    shoal_env_t *e =
        shoal__env_new(ctx->tc, SHOAL_MSG_CAST, SHOAL_ENV_PRIORITY, ctx->self, 0, type, data, size);
    if (e == NULL)
        return SHOAL_ENOMEM;
    int rc = shoal__timer_start(ctx->rt, ctx->tc, to, delay_ms, e, true, timer);
    if (rc != SHOAL_OK)
        shoal__env_free(ctx->tc, e);
    return rc;
}

SHOAL_API int shoal_cancel_timer(shoal_ctx_t *ctx, shoal_timer_t timer)
{
    return shoal__timer_cancel(ctx->rt, ctx->tc, timer);
}

int shoal__tick_arm(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_tick_t *k, shoal_pid_t to,
                    uint64_t ms, uint32_t type, shoal_timer_t *id)
{
    shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CAST, SHOAL_ENV_PRIORITY, to, 0, type, NULL, 0);
    /* Armed: a tick owed on k before is superseded, off the list in the
     * same hold of the timer's lock. */
    int rc = e != NULL ? start(rt, to, ms, e, true, id, k) : SHOAL_ENOMEM;
    if (rc == SHOAL_OK)
        return SHOAL_OK;
    if (e != NULL)
        shoal__env_free(tc, e);
    struct shoal_timers_s *t = rt->timers;
    pthread_mutex_lock(&t->lock);
    k->due = shoal__deadline_ns(shoal__now_ns(), ms);
    k->to = to;
    k->type = type;
    if (!k->owed) {
        k->owed = true;
        k->next = t->owed;
        t->owed = k;
    }
    t->owed_gen++;
    pthread_cond_signal(&t->cond); /* it sleeps until the earliest deadline it knew */
    pthread_mutex_unlock(&t->lock);
    *id = 0;
    return rc;
}

void shoal__tick_forget(shoal_runtime_t *rt, shoal_tick_t *k)
{
    struct shoal_timers_s *t = rt->timers;
    if (t == NULL)
        return; /* freed with the timers (runtime's end): nothing is owed any more */
    pthread_mutex_lock(&t->lock);
    owed_remove(t, k);
    pthread_mutex_unlock(&t->lock);
}

bool shoal__tick_owed(shoal_runtime_t *rt, shoal_tick_t *k)
{
    struct shoal_timers_s *t = rt->timers;
    pthread_mutex_lock(&t->lock);
    bool owed = k->owed;
    pthread_mutex_unlock(&t->lock);
    return owed;
}

void shoal__timers_fail(shoal_runtime_t *rt, uint32_t n)
{
    struct shoal_timers_s *t = rt->timers;
    pthread_mutex_lock(&t->lock);
    t->fail = n;
    pthread_mutex_unlock(&t->lock);
}
