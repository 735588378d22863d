/* shoal/pool.h - pools of identical workers behind one PID (after Ergo's
 * act.Pool).
 *
 * A pool is an actor with a PID like any other. A normal-priority send or
 * call to it is forwarded, on the sender's own thread, to one of its
 * workers; the worker sees the original sender and ref, and replies go
 * straight to the caller. Worker choice is a FIFO: take the next worker; if
 * its mailbox is full, the one after; a dead worker is skipped and
 * replaced. When every worker is full the sender gets SHOAL_EBUSY and the
 * pool counts the message as unhandled. There is no buffer beyond the
 * workers' mailboxes: a pool holds at most size x mailbox messages. A pool
 * does not order messages.
 *
 * High-priority sends and calls (shoal_send_priority, shoal_call_priority)
 * go to the pool itself: the management commands below, and whatever a
 * pool's optional manager behaviour adds.
 *
 * Workers are children of the pool. A worker that ends (a handler failed or
 * panicked, or it exited) loses at most the message it was handling
 * (counted in messages_failed); what was still queued in its mailbox goes
 * back to the pool and on to other workers, and a replacement starts. More
 * than restart.max restarts within restart.within_ms put the pool in the
 * degraded state: it serves with the workers it has, logs once, and tries
 * again after restart.backoff_ms (doubling, up to 64 times that).
 *
 * Removing workers (SHOAL_POOL_REMOVE_WORKERS, a smaller SET_SIZE) takes
 * them out of the FIFO at once; each finishes what is already queued in its
 * mailbox and then ends. Draining a pool (SHOAL_POOL_DRAIN) does that to
 * every worker: senders get SHOAL_ENOPROC from then on, and the pool ends
 * normally when the last worker has.
 *
 * Type ids 0xFFFE0000 .. 0xFFFEFFFF are reserved for these commands.
 */
#ifndef SHOAL_POOL_H
#define SHOAL_POOL_H

#include "shoal/behaviour.h"
#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The type ids the runtime keeps for its commands and notes (above and
 * shoal/checkout.h): a plugin's own types are outside this range, and a
 * setting that names a type refuses one inside it (the bundled seq and
 * lines plugins, shoalctl send and call). */
#define SHOAL_TYPE_RESERVED_FIRST 0xFFFE0000u
#define SHOAL_TYPE_RESERVED_LAST 0xFFFEFFFFu

/* The most workers a pool can have, and the deepest nesting. */
#define SHOAL_POOL_MAX_SIZE 65536u
#define SHOAL_POOL_MAX_DEPTH 8u

typedef struct shoal_pool_restart_s {
    uint32_t max;        /* restarts allowed within within_ms; default 5 */
    uint64_t within_ms;  /* default 5000 */
    uint64_t backoff_ms; /* first retry once degraded; default 100 */
} shoal_pool_restart_t;

/* Elastic pools (ABI 1.6). Forward pools whose workers are actors (not
 * pools, not isolation: process) and pull pools may change their own size
 * within [min_size, max_size]:
 *
 * idle_timeout_ms (ants' ExpiryDuration, pond's IdleTimeout): a worker that
 *   has waited for work this long ends (it has nothing queued: nothing is
 *   lost), down to min_size; the target size follows. Then a send that finds
 *   every worker full while fewer than max_size run is not refused: a
 *   worker is started for it (ants' lazy grow; a pull pool starts one when
 *   an item comes and no worker waits for work). Counted: expired,
 *   lazy_grown.
 * max_waiting (ants' MaxBlockingTasks): how many senders may wait for room
 *   in the pool at once -- threads in shoal_runtime_send_wait and actors
 *   that asked with shoal_notify_room; one more is refused at once with
 *   SHOAL_EOVERLOAD (counted: waiting_refused). 0: no bound. A waiter
 *   leaves the count when it is told of room, or once it has ended (an
 *   actor that asked and then stopped holds no place); one that finds the
 *   pool full again and waits again is counted (and may be refused) again,
 *   as in ants.
 * autoscale: with `when` non-zero, the pool's actor measures three signals
 *   every SHOAL_AUTOSCALE_TICK_MS, over that tick:
 *     busy      time its workers spent handling / (wall time x workers),
 *               in permille (a member's time is marked after each message:
 *               one clock read a message, only in an autoscaled pool);
 *     wait_p99  the 99th percentile of the queue wait, in microseconds
 *               (an autoscaled pool times every message, not one in 16);
 *               no reading below 4 messages;
 *     refused   sends refused (SHOAL_EBUSY) per second.
 *   Pressure: any signal named in `when` above its up_ threshold. Calm:
 *   every signal named at or below its down_ threshold (the thresholds
 *   between are the hysteresis: neither grows nor shrinks).
 *   Grow: pressure at every tick for up_for_ms, and no change for
 *   cooldown_ms: to the largest of size + up_step, the size at which the
 *   busy ratio would be the target (size x busy / target), and the size
 *   the offered load needs ((accepted + refused)/s x the mean time a
 *   message took / target), where target is midway between the busy
 *   thresholds. Shrink: calm for down_idle_ms, and no change for
 *   cooldown_ms, by down_step (down to min_size, and never to none) -- but
 *   never below the size at which the busy ratio would be the target (a
 *   step past it stops there). Each decision is logged with the
 *   signals' values and counted (autoscale_ups, autoscale_downs); a
 *   resize by command (a reload, shoalctl scale) holds until the next.
 * The thresholds have defaults (shoal_pool_spec_init): busy 800/400 permille,
 * wait_p99 5000/2500 us, refused 0/0 per second; a down threshold must be
 * below its up one (refused: at most). */
#define SHOAL_AUTOSCALE_BUSY 1u    /* busy ratio */
#define SHOAL_AUTOSCALE_WAIT 2u    /* queue wait p99 */
#define SHOAL_AUTOSCALE_REFUSED 4u /* refusals per second */
#define SHOAL_AUTOSCALE_TICK_MS 250u

typedef struct shoal_pool_autoscale_s {
    uint32_t when;      /* SHOAL_AUTOSCALE_* or'ed: the signals of pressure; 0: autoscale off */
    uint32_t up_step;   /* workers a growth adds at least; default 1 */
    uint64_t up_for_ms; /* pressure this long before the pool grows; default 1000 */
    uint32_t up_busy, down_busy;       /* permille of busy; default 800 and 400 */
    uint64_t up_wait_us, down_wait_us; /* wait_p99; default 5000 and 2500 */
    uint64_t up_refused, down_refused; /* per second; default 0 and 0 */
    uint32_t down_step;                /* workers a shrink removes; default 1 */
    uint64_t down_idle_ms;             /* calm this long before the pool shrinks; default 30000 */
    uint64_t cooldown_ms; /* no decision this long after any change of size; default 5000 */
} shoal_pool_autoscale_t;

/* A checkout pool's own settings (ABI 1.7; shoal/checkout.h says what
 * each does). Its `init` and `max` are the spec's size and max_size. */
typedef struct shoal_pool_checkout_s {
    uint32_t add_member_retry;        /* starts tried for a member wanted; default 1 */
    uint64_t member_start_timeout_ms; /* a member's init within this; default 10000 */
    uint64_t cull_interval_ms; /* how often idle members are culled; default 60000, 0: never */
    uint64_t max_age_ms;       /* a free member unused this long is culled; default 30000 */
    uint64_t max_lifetime_ms;  /* a member this old is replaced when returned; 0: never */
    uint64_t max_lifetime_jitter_ms; /* ... plus or minus up to this, per member; default 0 */
    uint32_t queue_max;              /* takers waiting at once, at most; default 50 */
    uint64_t lease_ms;               /* a thread's take is held at most this long; default 30000 */
    const char *group;               /* the group it belongs to (shoal_take_group), or NULL */
} shoal_pool_checkout_t;

/* What a pool is made of. Fill with shoal_pool_spec_init, then set fields.
 * The pool copies the spec (names and nested specs included); worker_args
 * and manager_args are passed by pointer and must stay valid while the pool
 * lives (replacements are started with them). */
typedef struct shoal_pool_spec_s {
    const char *name;                /* for logs and inspect; NULL = "pool" */
    const shoal_behaviour_t *worker; /* every worker runs this ... */
    const void *worker_args;
    const struct shoal_pool_spec_s *worker_pool; /* ... or is a pool of this spec (nested) */
    uint32_t size;                               /* workers at start; default 4 */
    uint32_t min_size;                           /* bounds for resizing; default 1 */
    uint32_t max_size;                           /* default max(size, 1024) */
    uint32_t
        mailbox; /* per worker: 1 .. SHOAL_MAILBOX_MAX or SHOAL_MAILBOX_UNBOUNDED; default 64 */
    shoal_pool_restart_t restart;
    /* Optional: the pool's own behaviour for priority messages and calls
     * it does not know itself (and extra inspect fields). Its state is
     * allocated like an actor's; its init gets manager_args. */
    const shoal_behaviour_t *manager;
    const void *manager_args;
    /* Appended in ABI 1.4 (the spec only grows at the end). */
    uint32_t kind; /* SHOAL_POOL_KIND_FORWARD (the default) or SHOAL_POOL_KIND_PULL */
    /* Pull pools (shoal/pull.h); ignored by forward pools. */
    uint32_t prefetch; /* items one worker holds at most: 1 .. SHOAL_POOL_MAX_PREFETCH; default 1 */
    uint32_t buffer;   /* items the pool holds for its workers: 0 .. SHOAL_POOL_MAX_BUFFER;
                          default 1024 */
    uint32_t redeliver;      /* times an item (a cast) whose worker failed or died on it goes to
                                another: 0 .. SHOAL_POOL_MAX_REDELIVER; default 0 (at most once) */
    shoal_pid_t dead_letter; /* where it goes after that (as an ordinary send from its
                                first sender); SHOAL_PID_NONE: counted failed */
    const shoal_behaviour_t *source; /* the epic: asked for items (shoal/pull.h), or NULL */
    const void *source_args;         /* its init's args; must stay valid while the pool lives */
    /* Appended in ABI 1.5. */
    uint32_t strategy; /* forward pools: SHOAL_POOL_STRATEGY_FIFO, LEAST_LOADED or ROUND_ROBIN;
                          checkout pools (ABI 1.13): FIFO or LIFO; default FIFO (pull: FIFO
                          only) */
    /* Appended in ABI 1.6: elastic pools (below). */
    uint64_t idle_timeout_ms; /* a worker idle this long ends, down to min_size; 0: never */
    uint32_t max_waiting;     /* senders waiting for room at once, at most; 0: no bound */
    shoal_pool_autoscale_t autoscale;
    /* Appended in ABI 1.7: checkout pools (shoal/checkout.h). */
    shoal_pool_checkout_t checkout;
} shoal_pool_spec_t;

/* Pool kinds. A forward pool hands each send to a worker's mailbox on the
 * sender's thread (above). A pull pool holds sends in one bounded buffer
 * and each worker takes the next item on its own thread when it has
 * demand -- it holds fewer than `prefetch` -- so a slow item never has
 * others queued behind it while another worker idles (shoal/pull.h). */
#define SHOAL_POOL_KIND_FORWARD 0u
#define SHOAL_POOL_KIND_PULL 1u
#define SHOAL_POOL_KIND_CHECKOUT 2u /* ABI 1.7: exclusive members, taken and returned */
#define SHOAL_POOL_MAX_PREFETCH 1024u
#define SHOAL_POOL_MAX_REDELIVER 1000u
#define SHOAL_POOL_MAX_BUFFER (1u << 24)

/* How a forward pool picks the worker for a send, on the sender's thread:
 *   FIFO          Ergo's rotating FIFO: each sender thread goes on from the
 *                 worker after the one it used last (no shared write);
 *   LEAST_LOADED  the worker with the fewest queued messages, an idle one
 *                 before a busy one with the same count, ties to the next
 *                 in FIFO order (Akka's SmallestMailbox, ants' LeastTasks;
 *                 it reads every worker's mailbox, writes none);
 *   ROUND_ROBIN   one rotation shared by every sender (one shared counter
 *                 bumped per send).
 * A worker that is full is passed over for the next, whatever the
 * strategy; every worker full: SHOAL_EBUSY. */
#define SHOAL_POOL_STRATEGY_FIFO 0u
#define SHOAL_POOL_STRATEGY_LEAST_LOADED 1u
#define SHOAL_POOL_STRATEGY_ROUND_ROBIN 2u
/* Which free member a checkout pool gives a take (shoal/checkout.h), ABI
 * 1.13 (poolboy's strategy):
 *   FIFO  the member free the longest: use spreads over every member;
 *   LIFO  the member given back last: a light load keeps the fewest
 *         members busy (and their caches warm), and the rest age, to be
 *         culled past max_age. */
#define SHOAL_POOL_STRATEGY_LIFO 3u

/* Fills spec with the defaults (no behaviour: set worker or worker_pool).
 *
 * The spec only grows at the end, so its users say how big theirs is: the
 * macros below pass the size of the spec the caller was compiled with to the _sized functions, and
 * a field past that size takes its default (nested specs are read at the
 * same size). The unsuffixed symbols stay for plugins built against ABI
 * 1.2 and 1.3: they read a spec up to manager_args. */
SHOAL_API void shoal_pool_spec_init_sized(shoal_pool_spec_t *spec, size_t size);
SHOAL_API int shoal_runtime_spawn_pool_sized(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                                             size_t size, shoal_pid_t *pid);
SHOAL_API int shoal_spawn_pool_sized(shoal_ctx_t *ctx, const shoal_pool_spec_t *spec, size_t size,
                                     shoal_pid_t *pid);
SHOAL_API void(shoal_pool_spec_init)(shoal_pool_spec_t *spec);
SHOAL_API int(shoal_runtime_spawn_pool)(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                                        shoal_pid_t *pid);
SHOAL_API int(shoal_spawn_pool)(shoal_ctx_t *ctx, const shoal_pool_spec_t *spec, shoal_pid_t *pid);
#define shoal_pool_spec_init(spec) shoal_pool_spec_init_sized((spec), sizeof(shoal_pool_spec_t))
#define shoal_runtime_spawn_pool(rt, spec, pid)                                                    \
    shoal_runtime_spawn_pool_sized((rt), (spec), sizeof(shoal_pool_spec_t), (pid))
#define shoal_spawn_pool(ctx, spec, pid)                                                           \
    shoal_spawn_pool_sized((ctx), (spec), sizeof(shoal_pool_spec_t), (pid))

/* Spawns a pool as a root actor. Returns when it has started: every first
 * worker (nested pools' included) has run its init. SHOAL_OK; SHOAL_EINVAL
 * for a bad spec; SHOAL_ELIMIT or SHOAL_ENOMEM when the workers could not
 * all be spawned; the first error a worker's init returned (SHOAL_EPANIC if
 * it panicked) -- in each failure case nothing is left running;
 * SHOAL_ESTOPPED. Called from a worker thread it does not wait: then a
 * failure to start ends the pool instead. */
/* shoal_runtime_spawn_pool(rt, spec, pid) */

/* Spawns a pool as a child of the running actor (linked, like shoal_spawn).
 * Does not wait: if its workers cannot be started, the pool ends and the
 * parent gets SHOAL_MSG_EXIT with the reason. */
/* shoal_spawn_pool(ctx, spec, pid) */

/* Management commands: high-priority calls (shoal_call_priority,
 * shoal_runtime_call_priority) or high-priority sends (shoal_send_priority,
 * shoal_runtime_send_priority) to the pool. An ordinary send or call of
 * one of these types is a message like any other: the pool hands it to a
 * worker (a checkout pool's, to a member: a transaction), which answers it
 * as it likes, and nothing is resized.
 * Payloads and replies are uint32_t unless said otherwise.
 * Sizes are clamped to [min_size, max_size]; the reply is the new size. */
#define SHOAL_POOL_ADD_WORKERS 0xFFFE0001u    /* payload: how many */
#define SHOAL_POOL_REMOVE_WORKERS 0xFFFE0002u /* payload: how many */
#define SHOAL_POOL_SET_SIZE 0xFFFE0003u       /* payload: the size wanted */
#define SHOAL_POOL_SET_MAILBOX 0xFFFE0004u    /* payload: a limit; applied to live workers */
#define SHOAL_POOL_STATS 0xFFFE0005u          /* no payload; reply: shoal_pool_stats_t */
#define SHOAL_POOL_DRAIN 0xFFFE0006u          /* no payload; a call is answered when it has ended */
/* Pull pools only (others answer SHOAL_ENOTSUP). */
#define SHOAL_POOL_SET_PREFETCH 0xFFFE0007u /* payload: items per worker; reply: the new value */
#define SHOAL_POOL_SET_BUFFER 0xFFFE0008u   /* payload: buffer items; reply: the new value */
#define SHOAL_POOL_EPIC                                                                            \
    0xFFFE0009u /* no payload: starts the source again (a new epic) on a                           \
                   pool whose last one has ended; SHOAL_EBUSY while one runs */
/* SHOAL_POOL_WORKER_STATS 0xFFFE000Au: per worker (shoal/pull.h) */
/* Forward pools only (others answer SHOAL_ENOTSUP). */
#define SHOAL_POOL_SET_STRATEGY 0xFFFE000Bu /* payload: SHOAL_POOL_STRATEGY_*; reply: it */
/* ABI 1.6. SET_BOUNDS: payload two uint32_t, min_size then max_size (0 <=
 * min <= max, 1 <= max, max not past the pool's max_size at its start:
 * its capacity); the size is clamped into them (a change of size holds
 * autoscale off for its cooldown); reply: the size. SET_ELASTIC:
 * payload a shoal_pool_elastic_t; the pool's idle_timeout_ms, max_waiting
 * and autoscale from now on (SHOAL_EINVAL for bad thresholds, SHOAL_ENOTSUP
 * where elastic pools are not: a pool of pools, an isolated one); reply:
 * the uint32_t 0. */
#define SHOAL_POOL_SET_BOUNDS 0xFFFE000Cu
#define SHOAL_POOL_SET_ELASTIC 0xFFFE000Du
typedef struct shoal_pool_elastic_s {
    uint64_t idle_timeout_ms;
    uint32_t max_waiting;
    shoal_pool_autoscale_t autoscale;
} shoal_pool_elastic_t;

enum { SHOAL_POOL_RUNNING = 0, SHOAL_POOL_DEGRADED = 1, SHOAL_POOL_DRAINING = 2 };

/* A pool's counters. The message counters always satisfy
 *   forwarded = handled + failed + dropped + in flight
 * where in flight is what is queued in worker mailboxes, being handled, or
 * held by the pool between a dead worker and a live one. Latencies are
 * sampled (one message in 16 with a payload of at most 24 bytes) and given
 * as the upper bound of a histogram bucket (within 25%). New fields are only
 * appended; `size_` says how many bytes the sender filled. */
typedef struct shoal_pool_stats_s {
    uint32_t size_;
    uint32_t state;       /* SHOAL_POOL_* */
    uint32_t pool_size;   /* live workers */
    uint32_t target_size; /* workers wanted */
    uint32_t min_size, max_size;
    uint32_t mailbox;  /* per worker limit, SHOAL_MAILBOX_UNBOUNDED for none */
    uint32_t retiring; /* removed workers still finishing their mailboxes */
    uint64_t worker_restarts;
    uint64_t messages_forwarded; /* accepted by a worker (the sender saw SHOAL_OK) */
    uint64_t messages_unhandled; /* refused: every worker was full (SHOAL_EBUSY); for a
                                    nested pool, also what its parent offered it in vain;
                                    for an isolated pool, also what was too large for it
                                    (SHOAL_EINVAL: shoal/ctx.h, shoal_send) */
    uint64_t messages_handled;   /* a handler returned normally */
    uint64_t messages_failed;    /* the handler failed or panicked on it */
    uint64_t messages_dropped;   /* lost because the pool or the runtime stopped */
    uint64_t messages_requeued;  /* handed back by a worker that ended, and placed again */
    uint64_t queue_depth;        /* in worker mailboxes now (retiring ones and those of a
                                    nested pool's current workers too), plus held by the pool */
    uint64_t latency_samples;
    uint64_t queue_wait_ns[3]; /* p50, p90, p99 */
    uint64_t service_ns[3];    /* p50, p90, p99 */
    /* Appended in ABI 1.4. For a pull pool the counters above read:
     * forwarded = items accepted into the buffer (received), unhandled =
     * sends refused because it was full, handled/failed = items completed or
     * failed by a worker, queue_depth = in the buffer + held by workers; and
     *   received = handled + failed + dead_lettered + dropped + queue_depth
     * (an item redelivered counts once, when it is settled for good). */
    uint32_t kind;          /* SHOAL_POOL_KIND_* */
    uint32_t prefetch;      /* pull: items per worker */
    uint64_t buffer;        /* pull: its capacity ... */
    uint64_t buffer_depth;  /* ... and the items in it now */
    uint64_t demand;        /* pull: items the workers could take now (size x prefetch - held) */
    uint64_t delivered;     /* pull: items taken by a worker (redeliveries included) */
    uint64_t redelivered;   /* pull: items given to another worker after a failure */
    uint64_t dead_lettered; /* pull: items sent on to dead_letter after the last redelivery */
    uint32_t source_state;  /* pull: SHOAL_SOURCE_* (shoal/pull.h) */
    uint32_t source_restarts;
    uint64_t source_items; /* pull: items the source has sent in this epic */
    /* Appended in ABI 1.5. */
    uint32_t strategy; /* SHOAL_POOL_STRATEGY_* */
    /* Its workers now (pond's names): running -- handling or about to (a
     * message is queued for them), idle -- waiting for work. Workers that
     * are actors only: a pool of pools, and an isolated pool, report 0 and
     * 0. A recent picture, like the counters. */
    uint32_t running, idle;
    uint64_t resizes; /* resizes that changed the target size (commands, reloads) */
    /* Appended in ABI 1.6 (elastic pools, above). */
    uint32_t waiting;         /* senders waiting for room now (threads and actors) */
    uint32_t max_waiting;     /* 0: no bound */
    uint64_t waiting_refused; /* asks for room refused past max_waiting */
    uint64_t idle_timeout_ms;
    uint64_t expired;       /* workers ended by idle_timeout */
    uint64_t lazy_grown;    /* workers started for a send that found every worker full */
    uint32_t autoscale;     /* its `when`; 0: off */
    uint32_t busy;          /* autoscale: busy over the last tick, permille */
    uint64_t wait_p99_us;   /* autoscale: the last tick's queue wait p99 (0: no reading) */
    uint64_t refused_per_s; /* autoscale: the last tick's refusals per second */
    uint64_t autoscale_ups, autoscale_downs; /* its decisions */
    /* Appended in ABI 1.7: checkout pools (shoal/checkout.h). pool_size
     * is the members alive (in_use + free + starting), target_size `init`;
     * messages_forwarded counts the transactions accepted, handled/failed
     * how their members' calls ended. */
    uint32_t in_use, free, starting, queued; /* members now; takers waiting now */
    uint64_t takes;                          /* members given out (transactions included) */
    uint64_t returned_ok, returned_fail;
    uint64_t error_no_members; /* takes, group takes and transactions refused */
    uint64_t take_timeouts;    /* takers whose wait ended unanswered */
    uint64_t killed_free;      /* free members that ended by themselves */
    uint64_t killed_in_use;    /* members that ended in use, or whose consumer crashed */
    uint64_t lease_expired;    /* threads' takes past their lease: the member destroyed */
    uint64_t culled;           /* ended unneeded: free past max_age, or past a lowered max */
    uint64_t recycled;         /* members replaced past max_lifetime */
    uint64_t start_failures;   /* members whose init failed or did not end in time */
    uint64_t take_wait_ns[2];  /* p50, p99 of the wait for a member (0: none yet) */
} shoal_pool_stats_t;

/* From a thread that is not a dispatcher worker: the commands above as
 * blocking calls (see shoal_runtime_call for timeouts and errors). The
 * resizing ones return the new size (>= 0) or a negative SHOAL_E*:
 * SHOAL_ENOPROC from a pool that drains (it takes no resize, as no send). */
SHOAL_API int shoal_pool_add_workers(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t n,
                                     uint64_t timeout_ms);
SHOAL_API int shoal_pool_remove_workers(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t n,
                                        uint64_t timeout_ms);
SHOAL_API int shoal_pool_set_size(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t size,
                                  uint64_t timeout_ms);
SHOAL_API int shoal_pool_set_mailbox(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t limit,
                                     uint64_t timeout_ms);
SHOAL_API int shoal_pool_stats(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pool_stats_t *stats,
                               uint64_t timeout_ms);
/* SHOAL_OK, SHOAL_EINVAL (not a strategy), SHOAL_ENOTSUP (not a forward pool). */
SHOAL_API int shoal_pool_set_strategy(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t strategy,
                                      uint64_t timeout_ms);
/* SHOAL_POOL_SET_BOUNDS and SET_ELASTIC (above) as blocking calls: the size
 * (>= 0), and SHOAL_OK; or a negative SHOAL_E*. */
SHOAL_API int shoal_pool_set_bounds(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t min_size,
                                    uint32_t max_size, uint64_t timeout_ms);
SHOAL_API int shoal_pool_set_elastic(shoal_runtime_t *rt, shoal_pid_t pool,
                                     const shoal_pool_elastic_t *elastic, uint64_t timeout_ms);
/* Drains the pool and waits until it has ended (SHOAL_OK: every worker has
 * ended, nothing is left). SHOAL_ETIMEDOUT: still draining at the deadline;
 * SHOAL_ENOPROC: it had ended already; the reason it ended otherwise while
 * the drain waited (its PID stopped: SHOAL_ESHUTDOWN) -- then workers may
 * still be finishing what they were handling. */
SHOAL_API int shoal_pool_drain(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
