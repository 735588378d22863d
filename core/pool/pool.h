/* pool.h - a pool's record: what senders read to forward (forward.c), what
 * workers count into, and what only the pool's own actor touches (pool.c).
 *
 * WHO WRITES WHAT
 *   - The worker table (nworkers, slots) is written only by the pool's actor,
 *     and read by every sender. A worker is added by storing its PID in
 *     slots[n] and then n + 1 [both release]; removed by storing the smaller
 *     count first [release], then closing the worker's mailbox; a dead one is
 *     replaced in place [release]. A sender loads nworkers [acquire], then
 *     slots [acquire], and tries each slot at most once: a stale PID (dead,
 *     closed, removed) answers SHOAL_ENOPROC and the sender goes on to the
 *     next, so no table state a sender can see loses a message. (While a
 *     slot is closed up, a sender may see one PID in two slots: harmless.)
 *   - Counters are striped: one stripe per worker id (compensating slots
 *     included: a slot's threads come one after another), written by that
 *     thread only (relaxed load + store), and one shared stripe for every
 *     other thread (relaxed fetch_add). Readers sum them (relaxed loads): a
 *     recent picture, exact once traffic stops.
 *   - Everything below `owned by the pool actor` is touched by its turns only.
 *
 * LIFETIME
 *   The record is counted: one reference for the pool's actor, one for each
 *   live worker (ext->member_of; for a nested pool, its record's `parent`),
 *   dropped when it ends; the last one drops the record's reference on its
 *   parent pool's record. Senders hold no
 *   reference: they find the record through the pool actor's front (its
 *   `pool` pointer), check that it is this pool's (rec->pid), and read it
 *   inside a read-side region (runtime/qsbr.h). When the last reference
 *   goes, the record waits in the runtime's limbo until every region that
 *   could have seen it has ended, and is freed then.
 */
#ifndef SHOAL_POOL_POOL_H
#define SHOAL_POOL_POOL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor/actor.h"
#include "actor/ctx.h"
#include "runtime/qsbr.h"
#include "sched/worker.h"
#include "shoal/pool.h"

/* Latency histogram: 4 buckets per power of two of nanoseconds, up to 2^36
 * (about 69 s); the last bucket takes everything above. */
#define SHOAL_HIST_BUCKETS 144u

typedef struct shoal_pool_stripe_s {
    alignas(64) _Atomic uint64_t forwarded;
    _Atomic uint64_t unhandled;
    _Atomic uint64_t handled;
    _Atomic uint64_t failed;
    _Atomic uint64_t dropped;
    _Atomic uint64_t samples;
    _Atomic uint32_t wait[SHOAL_HIST_BUCKETS];
    _Atomic uint32_t service[SHOAL_HIST_BUCKETS];
} shoal_pool_stripe_t;

/* Holding what the workers' code lives in (a plugin module): acquire runs
 * once per worker spawned, and its release when that worker ends. */
typedef struct shoal_pool_hold_s {
    void (*acquire)(void *what);
    void (*release)(void *what);
    void *what;
} shoal_pool_hold_t;

/* A message the pool holds between a worker that ended and a live one. */
typedef struct shoal_orphans_s {
    shoal_env_t *head, *tail; /* linked through node.next */
    uint64_t n;
} shoal_orphans_t;

typedef struct shoal_pool_s {
    /* read by senders */
    alignas(64) shoal_pid_t pid; /* set before publication */
    _Atomic uint32_t nworkers;   /* slots[0 .. nworkers) are the FIFO */
    uint32_t cap;                /* max_size */
    _Atomic shoal_pid_t *slots;
    shoal_pool_stripe_t *stripes; /* nstripes: one per worker id, then the shared one */
    uint32_t nstripes;
    struct shoal_pool_s *parent; /* the pool this one is a worker of (counts go up too) */
    char name[64];
    char label[128]; /* "name/behaviour": how its workers are named in logs */

    /* lifetime (see above) */
    alignas(64) _Atomic uint32_t refs;
    /* Starting (pool.c, start_done): the root pool of a tree counts the
     * inits not yet run in the tree (its own, and every nested pool's);
     * shoal_runtime_spawn_pool waits for 0 on this futex. init_rc keeps the
     * first failure. */
    struct shoal_pool_s *root;
    _Atomic uint32_t starting;
    _Atomic int init_rc;
    bool start_done; /* this pool's init has been counted (pool actor only) */
    struct shoal_pool_s *limbo_next;
    shoal_qsbr_snap_t snap;
    bool snap_pending; /* in limbo without a snapshot yet (ENOMEM) */

    /* owned by the pool actor */
    alignas(64) shoal_runtime_t *rt;
    shoal_pool_spec_t spec; /* a copy; spec.worker_pool points at `nested` */
    shoal_pool_spec_t *nested;
    shoal_pool_hold_t hold;
    uint32_t depth;             /* 0 for a root pool */
    uint32_t target;            /* workers wanted */
    shoal_pid_t *retiring_pids; /* removed from the FIFO, finishing their mailboxes */
    uint32_t nretiring;
    size_t retiring_cap;
    uint32_t state; /* SHOAL_POOL_* */
    bool retry_pending;
    bool check_pending;
    uint64_t restarts;
    uint64_t requeued;
    uint64_t *restart_at; /* ring of the last spec.restart.max restart times (ns) */
    uint32_t restart_head, restart_n;
    uint64_t backoff_ms;
    uint64_t last_death_ns;
    shoal_orphans_t orphans;
    void *manager_state;
    struct shoal_drain_waiter_s *waiters; /* DRAIN calls answered at the end */
    uint32_t nwaiters;
    size_t waiters_cap;
} shoal_pool_t;

/* Spawns a pool (pool.c). parent: SHOAL_PID_NONE for a root pool, or the
 * actor the pool is linked to; member_of: the pool it is a worker of (its
 * reference passes to the new pool), or NULL. hold may be NULL. */
int shoal__pool_spawn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t parent,
                      shoal_pool_t *member_of, const shoal_pool_spec_t *spec,
                      const shoal_pool_hold_t *hold, uint32_t depth, shoal_pid_t *pid);

/* Forwards a user-mailbox envelope sent to the pool whose front is `pa`
 * (forward.c). On SHOAL_OK a worker's mailbox owns e. SHOAL_EBUSY: every
 * worker was full (counted); SHOAL_ENOPROC: no such pool; SHOAL__NOT_POOL:
 * the live actor `to` is not a pool after all (the caller's early read of
 * its kind was stale): deliver it as to any actor. The caller still owns e
 * on error. */
#define SHOAL__NOT_POOL 1
int shoal__pool_forward(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *pa, shoal_pid_t to,
                        shoal_env_t *e);

/* A worker's side (called by actor.c with ctx->pool set): one message
 * failed, or one timed message handled (with its latencies); n untimed
 * messages handled (summed over a turn). Into p and every pool above. */
void shoal__pool_count(shoal_tcache_t *tc, shoal_pool_t *p, bool failed, uint64_t wait_ns,
                       uint64_t service_ns, bool sampled);
void shoal__pool_count_handled(shoal_tcache_t *tc, shoal_pool_t *p, uint64_t n);
/* An actor that ends gives a queued user message back to the pool `to`: a
 * worker to its pool, a nested pool to its parent pool (SHOAL_PID_NONE: no
 * one to give it to). True if that pool took it; false: the caller
 * dead-letters it, and it is counted as dropped in `counted` and the pools
 * above it. */
bool shoal__pool_hand_back(struct shoal_ctx_s *ctx, shoal_pool_t *counted, shoal_pid_t to,
                           shoal_env_t *e);
/* Counts one message dropped in p and every pool above it. */
void shoal__pool_count_dropped(shoal_tcache_t *tc, shoal_pool_t *p);
/* Drops a reference on p; the last one retires p and drops p's reference on
 * its parent pool's record. */
void shoal__pool_unref(shoal_runtime_t *rt, shoal_pool_t *p);

/* The pool's actor (pool.c): a hand-back arrived in its system mailbox; it
 * takes the envelope's contents. RETIRE arrived: drain. */
void shoal__pool_take_hand_back(struct shoal_ctx_s *ctx, shoal_env_t *e);
void shoal__pool_retire(struct shoal_ctx_s *ctx);
/* The pool's actor ends (actor_end, whatever the reason, init failed or
 * not): unpublish the record, give up what it holds, answer DRAIN callers.
 * Returns the record: actor_end drops the actor's reference on it last. */
shoal_pool_t *shoal__pool_ended(struct shoal_ctx_s *ctx);

/* ---- the pool's own actor: pool.c, workers.c, orphans.c, stats.c --------
 * Called only in that actor's turns. */

/* Private timer messages (in the range shoal/pool.h reserves). */
#define SHOAL__POOL_TICK_RETRY 0xFFFE0100u
#define SHOAL__POOL_TICK_CHECK 0xFFFE0101u
/* The host's rolling replacement (shoal__pool_swap): a priority call from a
 * thread that is not an actor, payload a shoal_pool_swap_t * the pool takes
 * over (and frees). Answered with the number of workers replaced. */
#define SHOAL__POOL_SWAP 0xFFFE0102u

/* New code for a pool's workers: the spec chain (chain[0] is the pool's own
 * level; nested levels follow, linked to each other) and what holds it. */
typedef struct shoal_pool_swap_s {
    shoal_pool_spec_t chain[SHOAL_POOL_MAX_DEPTH];
    shoal_pool_hold_t hold;
} shoal_pool_swap_t;
/* Backoff doubles up to this many times restart.backoff_ms. */
#define SHOAL__POOL_BACKOFF_GROWTH 64u

/* A DRAIN call answered when the pool has ended. */
struct shoal_drain_waiter_s {
    shoal_pid_t from;
    shoal_ref_t ref;
};

static inline shoal_pool_t *shoal__pool_of(void *state) { return *(shoal_pool_t **)state; }

static inline uint64_t shoal__ms_to_ns(uint64_t ms)
{
    return ms > UINT64_MAX / 1000000u ? UINT64_MAX : ms * 1000000u;
}

/* The FIFO as the pool's actor reads it (it is the only writer). */
static inline uint32_t shoal__pool_live(shoal_pool_t *p)
{
    return atomic_load_explicit(&p->nworkers, memory_order_relaxed);
}
static inline shoal_pid_t shoal__pool_slot(shoal_pool_t *p, uint32_t i)
{
    return atomic_load_explicit(&p->slots[i], memory_order_relaxed);
}

/* workers.c */
int shoal__pool_spawn_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t *pid);
void shoal__pool_table_append(shoal_pool_t *p, shoal_pid_t pid);
void shoal__pool_retire_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid);
bool shoal__pool_restart_allowed(shoal_pool_t *p, uint64_t now);
void shoal__pool_restart_note(shoal_pool_t *p, uint64_t now);
/* Sends itself `tick` after ms, unless one is pending (*pending). */
void shoal__pool_schedule(struct shoal_ctx_s *ctx, uint64_t ms, uint32_t tick, bool *pending);
void shoal__pool_on_retry(struct shoal_ctx_s *ctx, shoal_pool_t *p);
void shoal__pool_on_check(struct shoal_ctx_s *ctx, shoal_pool_t *p);
void shoal__pool_drain(struct shoal_ctx_s *ctx, shoal_pool_t *p);
/* Rolling replacement: from now on workers start from sw's spec and hold;
 * each current worker gets a new one in its slot and retires (finishes its
 * mailbox, then ends: its plugin is closed with its last actor). Returns how
 * many were replaced, or SHOAL_EINVAL if the shape differs. */
int shoal__pool_swap(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_pool_swap_t *sw);
/* Copies the nested spec chain below spec into p (pool.c). */
int shoal__pool_copy_nested(shoal_pool_t *p, const shoal_pool_spec_t *spec);
/* Clamps to [min_size, max_size]; returns the new target size. */
uint32_t shoal__pool_resize(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t want);
int shoal__pool_set_mailbox(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t limit);
/* A child ended; false if it was not a worker (the manager's child). */
bool shoal__pool_on_exit(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid, int reason);

/* orphans.c */
void shoal__pool_place_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p);
/* The pool ends: up to the parent pool, else dropped and counted. */
void shoal__pool_give_up_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p);

/* stats.c */
void shoal__pool_fill_stats(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pool_stats_t *st);
/* The pool's fields of its inspection (the manager adds its own after). */
void shoal__pool_inspect(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_inspect_t *out);

/* Records (record.c). */
shoal_pool_t *shoal__pool_record_new(shoal_runtime_t *rt, uint32_t cap);
/* The last reference is gone: to limbo, freed after a grace period. */
void shoal__pool_record_retire(shoal_runtime_t *rt, shoal_pool_t *p);
/* Frees what in limbo has passed its grace period (all of it if `all`:
 * only when no thread can read records any more, at runtime destroy). */
void shoal__pool_limbo_collect(shoal_runtime_t *rt, bool all);
/* A pool's counters and the queue depth of the workers in its FIFO, read
 * from a thread that is not a worker without asking the pool's actor (it
 * may get no thread: shutdown with every thread stuck). What retiring
 * workers and the pool itself hold is not in the depth; the other fields
 * of *st are 0. SHOAL_OK, SHOAL_ENOPROC (ended), SHOAL_EINVAL (called
 * from a worker), SHOAL_ENOMEM. */
int shoal__pool_peek(shoal_runtime_t *rt, shoal_pid_t pid, shoal_pool_stats_t *st);
/* Sums the stripes into the message counters and percentiles of *st. */
void shoal__pool_sum(const shoal_pool_t *p, shoal_pool_stats_t *st);
/* The histogram bucket of a latency. */
unsigned shoal__hist_bucket(uint64_t ns);
/* The stripe the calling thread counts into; *shared when it is the one
 * every non-worker thread shares. */
static inline shoal_pool_stripe_t *shoal__pool_stripe(shoal_pool_t *p, shoal_tcache_t *tc,
                                                      bool *shared)
{
    *shared = tc->worker == NULL;
    return &p->stripes[*shared ? p->nstripes - 1 : tc->worker->id];
}

/* Adds n to a stripe counter: plain for a worker's own stripe, atomic for
 * the shared one. */
static inline void shoal__stripe_add(_Atomic uint64_t *c, uint64_t n, bool shared)
{
    if (shared)
        atomic_fetch_add_explicit(c, n, memory_order_relaxed);
    else
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                              memory_order_relaxed);
}

#endif
