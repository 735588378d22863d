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

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor/actor.h"
#include "actor/ctx.h"
#include "actor/group.h"
#include "actor/timer.h"
#include "pool/pull.h"
#include "pool/remote.h"
#include "pool/stripe.h"
#include "runtime/qsbr.h"
#include "sched/futex.h"
#include "sched/worker.h"
#include "shoal/pool.h"

_Static_assert(SHOAL_POOL_MAX_DEPTH <= SHOAL_GROUP_MAX_NESTING,
               "a pool nests no deeper than a group may (actor/group.h)");

/* Holding what the workers' code lives in (a plugin module): acquire runs
 * once per worker spawned, and its release when that worker ends. origin:
 * what it is, passed to each leaf worker's actor hold (actor.h). */
typedef struct shoal_pool_hold_s {
    void (*acquire)(void *what);
    void (*release)(void *what);
    void *what;
    const char *origin;
} shoal_pool_hold_t;

/* A message the pool holds between a worker that ended and a live one. */
typedef struct shoal_orphans_s {
    shoal_env_t *head, *tail; /* linked through node.next */
    uint64_t n;
} shoal_orphans_t;

/* A pool's own ticks (shoal_pool_t.ticks): its retry, check, drain and
 * elastic ticks, and a checkout pool's. */
enum {
    SHOAL__POOL_TICK_AT_RETRY,
    SHOAL__POOL_TICK_AT_CHECK,
    SHOAL__POOL_TICK_AT_DRAIN,
    SHOAL__POOL_TICK_AT_ELASTIC,
    SHOAL__POOL_TICK_AT_CHECKOUT,
    SHOAL__POOL_NTICKS
};

typedef struct shoal_pool_s {
    /* What the actor layer reads (actor/group.h): the kind's ops, the pid,
     * the record above (the pool this one is a worker of: counts go up
     * too), name, label, exact. Set before publication. */
    shoal_group_t g;
    /* read by senders */
    alignas(64) _Atomic uint32_t nworkers; /* slots[0 .. nworkers) are the FIFO */
    uint32_t cap;                          /* max_size */
    _Atomic shoal_pid_t *slots;
    shoal_pool_stripe_t *stripes; /* nstripes: one per worker id, then the shared one */
    uint32_t nstripes;
    /* SHOAL_POOL_STRATEGY_*, written by the pool's actor [relaxed: a value
     * on its own]; rr: ROUND_ROBIN's shared rotation [relaxed fetch_add:
     * it only spreads sends, it publishes nothing] (forward.c) */
    _Atomic uint32_t strategy;
    alignas(64) _Atomic uint32_t rr;
    /* Elastic pools (elastic.c), read by senders [relaxed: each a value on
     * its own], written by the pool's actor: lazy, whether a send that finds
     * every worker full may have one started (idle_timeout is set);
     * lazy_max, the most workers; lazy_mailbox, how many sends one new
     * worker takes; max_waiting, the bound on waiters for room (0: none).
     * The grow list (elastic.c: its protocol): sends accepted for workers
     * still to be started, and how many (grow_msgs). waits_refused: asks
     * for room refused past max_waiting [relaxed fetch_add]. */
    alignas(64) _Atomic uint32_t lazy;
    _Atomic uint32_t lazy_max, lazy_mailbox, max_waiting;
    alignas(64) _Atomic(shoal_env_t *) grow_head; /* senders write it: apart from lazy */
    _Atomic uint64_t grow_msgs;
    _Atomic uint32_t grow_closed; /* the pool's actor has ended (the end pair) */
    _Atomic uint32_t grow_shut;   /* the pool drains: claims undone (the drain pair) */
    _Atomic uint32_t grow_asked;  /* a pull pool: a worker was asked for */
    _Atomic uint64_t waits_refused;
    /* kind pull: its buffer (pull.h); set before publication, freed with
     * the record. pull_ended: set [seq_cst] when the pool's actor ends. */
    struct shoal_pull_s *pull;
    _Atomic uint32_t pull_ended;
    /* kind checkout: its members and takers (checkout.h); set before
     * publication, freed with the record. */
    struct shoal_checkout_s *co;
    /* isolation: process (remote.h): the workers are in a child process;
     * set before publication, freed with the record */
    struct shoal_remote_s *remote;
    bool stripes_external; /* stripes are not ours to free (a child's shared counters) */
    char name[64];
    char label[128]; /* "name/behaviour": how its workers are named in logs */

    /* The host's swap offer (swap.c): the new code a PREPARE asks the pool
     * to take, named by its token. Put and taken under offer_lock, by the
     * host's thread (shoal__pool_swap_ask) and by the pool's actor
     * (PREPARE); whoever takes it owns it. offer_seq: the last token. */
    pthread_mutex_t offer_lock;
    struct shoal_pool_swap_s *offer;
    uint64_t offer_seq;
    /* The token of the last swap this pool committed (0: none): stored by
     * its actor at the COMMIT, read by the host to learn whether a COMMIT
     * it could not wait for, or that failed, took effect (host/reload.c).
     * Relaxed: a value on its own, nothing is published through it. */
    _Atomic uint64_t swap_done;

    /* lifetime (see above) */
    alignas(64) _Atomic uint32_t refs;
    /* A thread waiting for this root pool to start (shoal__pool_start):
     * `starting` is 1 until the start has ended (the futex it sleeps on);
     * the pool's actor writes init_rc and init_text, then stores 0
     * [release], which the waiter's acquire load pairs with. */
    _Atomic uint32_t starting;
    _Atomic int init_rc;
    char init_text[256];
    shoal_qsbr_retired_t retired; /* in the runtime's limbo (runtime/qsbr.h) */

    /* Published by the pool's actor at the end of each of its callbacks,
     * for threads that read a pool without asking it (shoal__pool_peek):
     * relaxed, each a value on its own. */
    alignas(64) _Atomic uint32_t pub_state;
    _Atomic uint32_t pub_target, pub_retiring, pub_mailbox;
    _Atomic uint64_t pub_restarts, pub_requeued, pub_orphans, pub_resizes;
    _Atomic uint32_t pub_min, pub_max;
    _Atomic uint64_t pub_expired, pub_lazy_grown, pub_ups, pub_downs;
    _Atomic uint32_t pub_busy; /* autoscale's last reading (permille) */
    _Atomic uint64_t pub_wait_us, pub_refused_ps, pub_idle_ms;
    _Atomic uint32_t pub_autoscale;
    _Atomic uint32_t pub_ended; /* set [release] when the pool's actor has ended */
    /* A source's record (opts count_sends, set before publication): its
     * workers are spawned with ext->sends = &sends (actor.h protocol). */
    bool count_sends;
    shoal_send_counts_t sends;

    /* owned by the pool actor */
    alignas(64) shoal_runtime_t *rt;
    shoal_pool_spec_t spec; /* a copy; spec.worker_pool points at `nested` */
    shoal_pool_spec_t *nested;
    /* What the workers' code lives in: the record holds it (acquired at
     * spawn or swap) until the pool's actor ends, and each worker holds
     * it while it lives (pool.c, workers.c, swap.c). */
    shoal_pool_hold_t hold;
    bool wait_start;                  /* a thread waits for the start (root pools: `starting`) */
    bool held;                        /* opts held, or its parent's: until SHOAL__POOL_GO */
    bool staging;                     /* a swap's PREPARE spawns: gated workers (swap.c) */
    bool start_pending;               /* the first workers have not all started yet */
    uint32_t start_awaiting;          /* ... how many have not */
    struct shoal_pool_stage_s *stage; /* a swap being prepared (swap.c), or NULL */
    bool remote_up;                   /* remote: its child process takes messages */
    bool remote_done;                 /* remote: drained, its children have ended */
    uint32_t depth;                   /* 0 for a root pool */
    uint32_t target;                  /* workers wanted */
    shoal_pid_t *retiring_pids;       /* removed from the FIFO, finishing their mailboxes */
    uint32_t nretiring;
    size_t retiring_cap;
    uint32_t state; /* SHOAL_POOL_* */
    bool retry_pending;
    bool check_pending;
    bool drain_pending; /* a pull pool's TICK_DRAIN */
    uint64_t restarts;
    uint64_t requeued;
    uint64_t resizes;     /* resizes that changed target */
    uint64_t *restart_at; /* ring of the last spec.restart.max restart times (ns) */
    uint32_t restart_head, restart_n;
    uint64_t backoff_ms;
    uint64_t last_death_ns;
    shoal_orphans_t orphans;
    void *manager_state;
    struct shoal_drain_waiter_s *waiters; /* DRAIN calls answered at the end */
    uint32_t nwaiters;
    size_t waiters_cap;
    /* elastic pools (elastic.c, autoscale.c): what the tick keeps, or NULL
     * while the pool is not elastic; the counters */
    struct shoal_elastic_s *el;
    bool tick_pending;
    uint64_t expired, lazy_grown, ups, downs;
    /* Its own ticks' nodes, for when one cannot be armed (actor/timer.h:
     * ticks that are never lost), by SHOAL__POOL_TICK_AT_*; ticks_owed:
     * those whose arm failed since one of its kind last came (logged once
     * a streak). */
    shoal_tick_t ticks[SHOAL__POOL_NTICKS];
    _Atomic uint32_t ticks_owed; /* [relaxed: a checkout's tick is armed from any thread
                                  * under its lock, the rest by the actor] */
} shoal_pool_t;

/* Spawns a pool (pool.c) without waiting for it. parent: SHOAL_PID_NONE
 * for a root pool, or the actor the pool is linked to; member_of: the pool
 * it is a worker of (its reference passes to the new pool), or NULL. hold
 * may be NULL (else the record acquires its own). notify: the parent gets
 * one SHOAL_ENV_STARTED when every first worker of the new pool (and of
 * the pools below it) has run its init, or when one has failed. */
int shoal__pool_spawn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t parent,
                      shoal_pool_t *member_of, const shoal_pool_spec_t *spec,
                      const shoal_pool_hold_t *hold, uint32_t depth, bool notify, shoal_pid_t *pid);

/* From a thread that is not a dispatcher worker: spawns a root pool and
 * waits until it has started -- every first worker's init has run, nested
 * pools' included -- or timeout_ms has passed (0: no limit). SHOAL_OK, or
 * the first failure (an init's error, SHOAL_ETIMEDOUT, what spawning
 * returned) with nothing left running and, in why (may be NULL), the text
 * of the failure (the args getter's message, the panic's). */
int shoal__pool_start(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                      const shoal_pool_hold_t *hold, uint64_t timeout_ms, shoal_pid_t *pid,
                      char *why, size_t why_size);

/* What only some root pools are (shoal__pool_start_ex):
 *   remote    its workers run in a child process started by this launch
 *             (remote.h; taken over, success or not)
 *   stripes   its counters live here, nstripes of them (a child's, in the
 *             shared memory its parent reads), and ...
 *   exact     ... its workers count every message as it is settled, not
 *             once a turn: a process that dies leaves exact counts.
 *   count_sends  its workers' sends are counted in the record's `sends`
 *             (a source's, host/source.h).
 *   held      started for a reload that has not committed yet (host/
 *             reload.c): its workers, members and source start and run
 *             their init as at any start, but what would reach beyond the
 *             pool waits for SHOAL__POOL_GO -- its workers and members are
 *             spawned gated (actor.h: they handle nothing, their own
 *             timers included) and opened then, its nested pools held and
 *             told GO then, a checkout pool is in its group only then
 *             (its place taken closed at its start), a pull pool asks
 *             its source for its first items only then --
 *             so that a reload that fails stops it having taken nothing
 *             from a source, lent no member and sent nothing. */
typedef struct shoal_pool_opts_s {
    const shoal_remote_launch_t *remote;
    struct shoal_pool_stripe_s *stripes;
    uint32_t nstripes;
    bool exact;
    bool count_sends; /* a source's: its workers' sends are counted in the record */
    bool held;        /* a reload's, until SHOAL__POOL_GO */
    /* Asked every SHOAL_ASK_EVERY_MS while shoal__pool_start_ex waits: true stops the
     * start (SHOAL_ESHUTDOWN, why "interrupted"). NULL: never. */
    bool (*interrupted)(void *arg);
    void *interrupted_arg;
} shoal_pool_opts_t;
int shoal__pool_start_ex(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                         const shoal_pool_hold_t *hold, const shoal_pool_opts_t *opts,
                         uint64_t timeout_ms, shoal_pid_t *pid, char *why, size_t why_size);

/* The record of the live pool pid, with a reference the caller drops with
 * shoal__pool_unref; NULL if pid is not a live pool. Any thread. */
shoal_pool_t *shoal__pool_find(shoal_runtime_t *rt, shoal_pid_t pid);
/* A pool's counters read from its record without asking its actor (so it
 * answers even when no dispatcher thread is free): the message counters
 * summed over their stripes, what the pool's actor last published (state,
 * target, retiring, restarts, requeued), pool_size, and as queue_depth the
 * messages in flight (forwarded - handled - failed - dropped), never a
 * worker's messages to itself. Any thread holding a reference; after the
 * pool has ended, its final counts. */
void shoal__pool_peek(shoal_pool_t *p, shoal_pool_stats_t *st);
/* Only the message counters of peek (forwarded, handled, failed, dropped,
 * unhandled, dead-lettered, ...), queue_depth and the state -- not the
 * latencies' buckets summed and their percentiles, most of peek's work:
 * what the ledgers and the host's once-a-second watch read, of thousands
 * of pools on a large host. patience_ms as peek_within's (0: waits for an
 * isolated pool's children's counts). */
bool shoal__pool_counts(shoal_pool_t *p, shoal_pool_stats_t *st, unsigned patience_ms);
/* The same, but for an isolated pool gives up (false) when its children's
 * counts cannot be read within patience_ms (its supervisor holds them):
 * the table says `no answer` then. */
bool shoal__pool_peek_within(shoal_pool_t *p, shoal_pool_stats_t *st, unsigned patience_ms);
/* The pool's actor publishes what peek reads (end of each of its callbacks). */
void shoal__pool_publish(shoal_pool_t *p);
/* Whether the pool's actor has ended (its workers may still be ending). */
bool shoal__pool_is_ended(shoal_pool_t *p);
/* Whether it has ended and no worker holds its record any more: only the
 * caller's reference is left, and its counts are final. */
bool shoal__pool_is_quiet(shoal_pool_t *p);

/* One message in 16 a thread sends to pools carries its send time, for the
 * queue-wait and service-time histograms: whether this one does. */
static inline bool shoal__pool_sampled(shoal_tcache_t *tc)
{
    return (++tc->pool_sample & 15u) == 0;
}
/* Stamps e with the time now, once (and only if its payload leaves room:
 * shoal__env_stamp). */
static inline void shoal__pool_stamp(shoal_env_t *e)
{
    if (shoal__env_flags(e) & SHOAL_ENV_STAMP)
        return;
    uint64_t *stamp = shoal__env_stamp(e);
    if (stamp != NULL) {
        *stamp = shoal__now_ns();
        e->meta |= SHOAL_ENV_STAMP;
    }
}

/* Whether a pool with no worker would stay so: its autoscale (`when`)
 * grows on busy or wait_p99 only -- with no worker, busy is 0% and no
 * queue wait is measured (a wait is timed when a worker takes the message)
 * -- and no idle_timeout starts a worker for a send. Only refusals grow
 * it: a full pool refuses sends with no worker as with one -- but for a
 * pull pool fed by its own source (fed), which asks it for no more items
 * than there is room for, so nothing is ever refused. A config refuses
 * such a pool starting empty (config_elastic.c), shoalctl scale a size of
 * 0 for it (control_cmd.c), and a reload does not keep it at 0
 * (reload_live.c). */
static inline bool shoal__pool_stays_empty(uint32_t when, uint64_t idle_timeout_ms, bool fed)
{
    return when != 0 && (fed || (when & SHOAL_AUTOSCALE_REFUSED) == 0) && idle_timeout_ms == 0;
}

/* A kind's name, as a config writes it (shoal/pool.h). */
static inline const char *shoal__pool_kind_name(uint32_t k)
{
    return k == SHOAL_POOL_KIND_PULL       ? "pull"
           : k == SHOAL_POOL_KIND_CHECKOUT ? "checkout"
                                           : "forward";
}

/* A strategy's name, as a config writes it (shoal/pool.h). */
static inline const char *shoal__pool_strategy_name(uint32_t s)
{
    return s == SHOAL_POOL_STRATEGY_LEAST_LOADED  ? "least_loaded"
           : s == SHOAL_POOL_STRATEGY_ROUND_ROBIN ? "round_robin"
           : s == SHOAL_POOL_STRATEGY_LIFO        ? "lifo"
                                                  : "fifo";
}

/* The forward kind (forward.c): its ops (actor/group.h). Its route offers
 * e to each worker once, from the sender's cursor: on SHOAL_OK a worker's
 * mailbox owns e; SHOAL_EBUSY: every worker was full (counted). */
extern const shoal_group_ops_t shoal__forward_ops;
/* A member of a timed pool (actor/group.h: ops->busy): ns more busy time
 * in its thread's stripe. */
void shoal__pool_busy(struct shoal_ctx_s *ctx, uint64_t ns);
/* The pool's own actor, after each of its callbacks: room that came with a
 * change of its workers is told to whoever waits (forward.c). */
void shoal__forward_room_recheck(struct shoal_ctx_s *ctx, shoal_pool_t *p);

/* The record of a group (g is its first member). */
static inline shoal_pool_t *shoal__pool_of_group(shoal_group_t *g)
{
    return (shoal_pool_t *)(void *)g;
}
/* The pool p is a worker of, or NULL. */
static inline shoal_pool_t *shoal__pool_parent(const shoal_pool_t *p)
{
    return p->g.parent != NULL ? shoal__pool_of_group(p->g.parent) : NULL;
}

/* A worker's side: one message failed, or one timed message handled (with
 * its latencies); n untimed messages handled (summed over a turn). Into p
 * and every pool above. */
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
/* Counts one message passed to a pull pool's dead_letter, in p and every
 * pool above it (settled there too: their ledgers balance). */
void shoal__pool_count_dead_lettered(shoal_tcache_t *tc, shoal_pool_t *p);
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
/* The pool's own start has failed (a checkout member that did not start in
 * time, or whose init failed): whoever waits hears rc and why, as when a
 * first worker's init fails. True if the pool ends for it (someone
 * waited). The pool's actor, while its start is pending. */
bool shoal__pool_start_fail(struct shoal_ctx_s *ctx, shoal_pool_t *p, int rc, const char *why);
/* SHOAL__POOL_GO (pool.c): a held pool's reload has committed. */
void shoal__pool_go(struct shoal_ctx_s *ctx, shoal_pool_t *p, const void *data, size_t size);
/* Worker pid of p, spawned gated (p held or staging: workers.c), handles
 * its messages from now on: a leaf is sent SHOAL_ENV_OPEN, a nested pool
 * SHOAL__POOL_GO. */
void shoal__pool_open_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid);

/* ---- the pool's own actor: pool.c, workers.c, orphans.c, stats.c --------
 * Called only in that actor's turns. */

/* Private timer messages (in the range shoal/pool.h reserves). */
#define SHOAL__POOL_TICK_RETRY 0xFFFE0100u
#define SHOAL__POOL_TICK_CHECK 0xFFFE0101u
#define SHOAL__POOL_TICK_DRAIN 0xFFFE0106u /* a pull pool's buffer may be empty now */
#define SHOAL__POOL_TICK_ROOM 0xFFFE0107u  /* from a member: the pull pool has room again */
/* From the host (its control agent): a priority call starting a new epic
 * with other args for the source than the spec's (shoalctl epic POOL ARGS).
 * Payload: a shoal_pull_epic_args_t, handed over (host/agent.c); the pool
 * takes its args over when it reads it -- it frees them, whatever it
 * answers, once no source of it lives -- and clears both of the payload's
 * fields, so that the payload's free function, which frees the args a call
 * dropped unread still holds, frees nothing more. Answered with a reply of
 * this type carrying the int32_t status (SHOAL_OK, SHOAL_EBUSY,
 * SHOAL_ENOTSUP). */
#define SHOAL__POOL_EPIC_ARGS 0xFFFE0108u
/* To a pool started held (shoal_pool_opts_t): its reload has committed.
 * From a thread -- a priority cast (from SHOAL_PID_NONE) or a call,
 * answered with an empty reply of this type once carried out -- or, to a
 * nested pool, a priority cast from its parent pool. No payload, or to a
 * pull pool a shoal_pull_handover_t (pull.h: the epic of the pool it
 * replaces). Its workers are opened (a nested pool told GO), a checkout
 * pool's place in its group opens, a pull pool asks its source
 * (shoal__pool_go). A pool not held ignores it; GO from anyone else is
 * not one. */
#define SHOAL__POOL_GO 0xFFFE010Eu
/* From the host's thread, a priority call to a pull pool with a source
 * that a reload replaces: its source stopped, answered with a reply of
 * this type carrying a shoal_pull_handover_t for the new pool's GO
 * (host/host_pull.c). SHOAL_ENOTSUP from anyone else, or to a pool
 * without a source. */
#define SHOAL__POOL_HAND_OVER 0xFFFE010Fu
/* From a remote pool's supervisor thread (remote.h): a shoal_remote_ev_t. */
#define SHOAL__POOL_REMOTE 0xFFFE0105u

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
/* Spawns one worker of p from spec and hold (p's own, or a swap's new
 * ones), a child of the pool actor; notify: it tells when it has started
 * (SHOAL_ENV_STARTED). */
int shoal__pool_spawn_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                             const shoal_pool_spec_t *spec, const shoal_pool_hold_t *hold,
                             bool notify, shoal_pid_t *pid);
/* The same for a worker that is an actor, with its first words (ext->member).
 * A failure means no member was spawned: the caller may free what its
 * words point at (a pull pool's seat). */
int shoal__pool_spawn_member(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                             const shoal_pool_spec_t *spec, const shoal_pool_hold_t *hold,
                             bool notify, const uint64_t *words, shoal_pid_t *pid);
void shoal__pool_table_append(shoal_pool_t *p, shoal_pid_t pid);
void shoal__pool_retire_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid);
bool shoal__pool_restart_allowed(shoal_pool_t *p, uint64_t now);
void shoal__pool_restart_note(shoal_pool_t *p, uint64_t now);
/* Sends itself `tick` after ms, unless one is pending (*pending): never
 * lost -- owed when it cannot be armed (actor/timer.h), and logged. */
void shoal__pool_schedule(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t ms, uint32_t tick,
                          bool *pending);
/* A tick of p's (SHOAL__POOL_TICK_AT_*) was armed with rc: one that could
 * not be (owed) is logged, the first of a streak -- the streak ends when a
 * tick of that kind comes (shoal__pool_tick_came, which says so), so the
 * next failure is logged again. Any thread (ticks_owed). */
void shoal__pool_tick_armed(shoal_runtime_t *rt, shoal_pool_t *p, unsigned at, int rc);
void shoal__pool_tick_came(shoal_runtime_t *rt, shoal_pool_t *p, unsigned at);
/* The SHOAL__POOL_TICK_AT_* of a pool's own tick message type (retry,
 * check, drain or elastic). */
unsigned shoal__pool_tick_at(uint32_t tick);
void shoal__pool_on_retry(struct shoal_ctx_s *ctx, shoal_pool_t *p);
void shoal__pool_on_check(struct shoal_ctx_s *ctx, shoal_pool_t *p);
void shoal__pool_drain(struct shoal_ctx_s *ctx, shoal_pool_t *p);
/* Draining, once nothing is left for the workers but their mailboxes (a
 * pull pool's buffer is empty): every worker retires. */
void shoal__pool_drain_workers(struct shoal_ctx_s *ctx, shoal_pool_t *p);
/* A remote pool's child process is gone (remote.h): started again under
 * the restart budget, or the pool is degraded and retries later. */
void shoal__pool_remote_down(struct shoal_ctx_s *ctx, shoal_pool_t *p, int reason);
/* Ends a draining pool if nothing is left in it (answers the DRAIN calls). */
void shoal__pool_drain_finish(struct shoal_ctx_s *ctx, shoal_pool_t *p);
/* The workers it has: its FIFO's, or a remote pool's child's when up. */
uint32_t shoal__pool_running(const shoal_pool_t *p);
/* Closes up slot i of the FIFO (the last worker moves into it). */
void shoal__pool_table_remove_at(shoal_pool_t *p, uint32_t i);
/* Puts pid into slot i of the FIFO [release]. */
void shoal__pool_slot_set(shoal_pool_t *p, uint32_t i, shoal_pid_t pid);
/* Starts workers until the FIFO holds target of them (or one fails). */
void shoal__pool_fill(struct shoal_ctx_s *ctx, shoal_pool_t *p, bool count_restarts);

/* The spec (spec.c): its max_size as the pool runs it (0: its kind's
 * default); whether it and each nested spec below it (at depth, in a
 * remote pool) is one a pool may run (SHOAL_OK, SHOAL_EINVAL); copied into
 * the record, names and the nested chain with it (spec_copy), or only the
 * nested chain below spec (copy_nested: a swap's). */
uint32_t shoal__pool_max_of(const shoal_pool_spec_t *s);
int shoal__pool_spec_check(const shoal_pool_spec_t *s, uint32_t depth, bool remote);
int shoal__pool_spec_copy(shoal_pool_t *p, const shoal_pool_spec_t *spec);
int shoal__pool_copy_nested(shoal_pool_t *p, const shoal_pool_spec_t *spec);
/* Clamps to [min_size, max_size]; returns the new target size. */
uint32_t shoal__pool_resize(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t want);
int shoal__pool_set_mailbox(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t limit);
/* A child ended; false if it was not a worker (the manager's child). */
bool shoal__pool_on_exit(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid, int reason);

/* orphans.c */
void shoal__pool_place_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p);
/* e, accepted and counted already, waits with the orphans and is placed
 * like them: on a worker with room, else over a limit. */
void shoal__pool_hold_placed(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *e);
/* The same without placing it now: the caller places what is held once. */
void shoal__pool_hold(shoal_pool_t *p, shoal_env_t *e);
/* The pool ends: up to the parent pool, else dropped and counted. */
void shoal__pool_give_up_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p);

/* commands.c: whether `from` is a thread that is not an actor (a call's
 * WAITER record, waiter.c): actors, and so plugins, never are one. */
bool shoal__pool_from_thread(shoal_runtime_t *rt, shoal_pid_t from);
/* A command (a priority send or call; *out: the reply's
 * uint32; SHOAL_ENOTSUP: not one), and a call to the pool's own actor
 * (the manager's, if any, for what is not the pool's). */
int shoal__pool_command(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg,
                        uint32_t *out);
int shoal__pool_call(shoal_ctx_t *ctx, shoal_pool_t *p, const shoal_msg_t *msg,
                     shoal_reply_t *reply);

/* stats.c */
void shoal__pool_fill_stats(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pool_stats_t *st);
/* The pool's fields of its inspection (the manager adds its own after). */
void shoal__pool_inspect(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_inspect_t *out);

/* Records (record.c). stripes: external counters (nstripes of them), or
 * NULL for the record's own, one per worker id and a shared one. */
shoal_pool_t *shoal__pool_record_new(shoal_runtime_t *rt, uint32_t cap,
                                     struct shoal_pool_stripe_s *stripes, uint32_t nstripes);
/* The last reference is gone: to limbo, freed after a grace period. */
void shoal__pool_record_retire(shoal_runtime_t *rt, shoal_pool_t *p);
/* Sums the stripes into the message counters and percentiles of *st. */
void shoal__pool_sum(const shoal_pool_t *p, shoal_pool_stats_t *st);
/* A pool's histograms as they stand: its stripes' and a remote pool's live
 * children's. Any thread holding a reference on p. */
void shoal__pool_hist(shoal_pool_t *p, shoal_pool_hist_t *out);
/* Takes one more reference on a record the caller holds one on. */
void shoal__pool_ref(shoal_pool_t *p);
/* The stripe the calling thread counts into; *shared when it is the one
 * every non-worker thread shares. */
static inline shoal_pool_stripe_t *shoal__pool_stripe(shoal_pool_t *p, shoal_tcache_t *tc,
                                                      bool *shared)
{
    *shared = tc->worker == NULL;
    return &p->stripes[*shared ? p->nstripes - 1 : tc->worker->id];
}

/* One message accepted by p (its ledger's forwarded), on tc's stripe. */
static inline void shoal__pool_count_forwarded(shoal_tcache_t *tc, shoal_pool_t *p)
{
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    shoal__stripe_add(&st->forwarded, 1, shared);
}

#endif
