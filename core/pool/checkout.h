/* checkout.h - the checkout kind (shoal/checkout.h): members a consumer
 * takes for itself and gives back, after Erlang's pooler. The consumer's
 * side -- what an actor holds, given back when it ends -- is
 * actor/held.h; this is the pool's.
 *
 * WHO TOUCHES WHAT
 *   The seats, the free FIFO, the queue of takers and the counters are
 *   guarded by `lock`: the pool's own actor holds it through each of its
 *   callbacks that touches them (every entry point of checkout*.c takes
 *   it; the functions they call assume it), and the consumers' fast paths
 *   (checkout_fast.c) hold it for a take, a return or a transaction done
 *   on the consumer's own thread, without a message to the pool. What
 *   only the pool's actor touches outside the lock: the settings (cfg,
 *   p->spec), the tick (tick_at, tick_timer), retry_at, next_cull, prng.
 *   What the fast paths cannot finish -- a member to stop or start, a
 *   deadline to watch, a taker that is a thread -- goes to the actor as
 *   before: takes and returns as priority messages
 *   (SHOAL__CHECKOUT_TAKE/RETURN, held.h), a member's start and end as
 *   STARTED and EXIT, a transaction through its own mailbox when the
 *   queue cannot take it (no memory: checkout_fast.c).
 *   - txn_out, txn_limit: the sender's admission of a transaction (route,
 *     any thread): fetch_add on txn_out, refused (and given back) past
 *     txn_limit [relaxed: a count bounding memory, publishing nothing -- the
 *     message itself travels through the mailbox's own release/acquire];
 *     the pool's actor adds one, unbounded, for a transaction that came
 *     into its own mailbox past route (co_own_message: a send that read
 *     the slot's kind stale; route's own are flagged POOLED);
 *     whoever settles or drops one subtracts it (shoal__co_txn_out)
 *     [seq_cst fetch_sub, then a seq_cst load of the pool actor's room
 *     flag: the settler's half of the room pair (actor/room.h), against a
 *     refused sender that asks for room (co_room: the flag's seq_cst
 *     fetch_or, then seq_cst loads of txn_out and txn_limit) -- one of the
 *     two sees the other, and a waiter is told once a quarter of the limit
 *     is free]. txn_out sits on the lock's line: a sender's fetch_add
 *     brings that line to its core just before it takes the lock there,
 *     and a settler subtracts mostly under the lock -- one line moves
 *     between cores for the two, not two (txn_limit, read-mostly, is on
 *     the first line) (W6 64 8 5000 txn: 3.66M -> 3.72M with the
 *     clock read at a hand-off gone too, within noise; the count removed
 *     altogether, an experiment, gave +4 %).
 *   - pub_*: written by the lock's holder as it lets go, and only those
 *     that changed [relaxed stores], read by any thread holding a
 *     reference (peek, the table, /metrics, a try_take's first look): a
 *     recent picture, each a value on its own. pub_queued, which moves
 *     with every take that waits and every hand-off, sits beside the
 *     lock, on the line its holder writes anyway, apart from the words a
 *     try_take reads; the fast paths read it there only when they must.
 *   - stripes: the counters and the take wait's histogram, one stripe per
 *     dispatcher thread (its worker id) and one for every other thread
 *     (the last), so a take and a return write no counter line that
 *     another core wrote last. A worker's stripe has one writer, its
 *     thread [relaxed load and store]; the shared one any thread
 *     [relaxed fetch_add: some of its counts are added without the lock,
 *     a refusal before it]. Readers sum them [relaxed]: a recent picture,
 *     exact under the lock.
 *   - state: the pool's state, read by route [relaxed: a draining pool's
 *     mailbox is also closed, which is what refuses for certain].
 *   - a stripe's `granting`: the member whose grant its thread sends after
 *     the lock (GRANTS AFTER THE LOCK, below). Set by that thread with the
 *     lock held [relaxed: the other side reads it only under the lock];
 *     swapped back to none by that thread once the grant is sent, CASed by
 *     the pool's actor (under the lock) when that member ends [paired,
 *     below].
 *
 * MEMBERS
 *   Each member sits in a seat (its index in seats[], kept in the member's
 *   first word, ctx->member[0] = seat + 1, so its transaction's return
 *   names it). STARTING -> FREE when its start notice comes; FREE ->
 *   IN_USE when given to a taker or a transaction; IN_USE -> FREE on an OK
 *   return (or -> ENDING when it is to be replaced); any -> ENDING when
 *   the pool stops it; the seat empties when its EXIT comes. The pool
 *   starts members to keep `init` alive and for takers waiting, up to max
 *   -- ending ones counted: a member whose init outlived its start's
 *   deadline is ENDING but its init still runs on a thread, so the pool
 *   never has more than max members alive or ending.
 *
 * GRANTS AFTER THE LOCK
 *   A grant decided on a consumer's thread -- a take served there, a
 *   return's hand-off to the first actor waiting (checkout_fast.c) -- is
 *   sent after the lock is let go. The seat is IN_USE by the taker from the
 *   decision, so a member that ends before the grant is sent has its
 *   holder told (an EXIT from it) by the pool's actor, and that EXIT could
 *   reach the taker first: the taker, holding nothing of that name yet,
 *   drops it, then holds a dead member until it gives it back. The rule:
 *   an actor is told of its member's end after that member's grant, never
 *   before it. So the decision marks the seat (granter: the holder's
 *   stripe) and the stripe (granting: the member), and once the grant is
 *   in the taker's mailbox its thread clears the mark, swapping in none
 *   [release: pairs with the end's acquire, below]. The pool's actor,
 *   telling a holder of its member's end, first CASes the granter's mark
 *   (member -> ended, the reason in the same word) [acquire]: if that
 *   succeeds the grant's thread has not cleared it (the grant may not be
 *   sent yet), and that thread, swapping out `ended` instead of the
 *   member, sends the EXIT itself after the grant; if it fails the mark
 *   was cleared, the grant is in the taker's mailbox, and the EXIT sent
 *   now comes after it. Exactly one of the two sends it; the counts are
 *   the actor's as before (killed_in_use when the member's EXIT comes to
 *   it). A pool that ends tells its holders so the same way. A grant sent
 *   under the lock (the pool's actor's) has no mark: an EXIT can only come
 *   after it. A thread's take is granted only by the actor, and a thread
 *   is told of no end.
 *   A member that gives itself back after a transaction, in its own turn,
 *   and takes the next one queued holds it IN_USE (by TXN) from the
 *   decision; the envelope reaches its mailbox after the lock
 *   (checkout_fast.c), from the same thread. In between, the transaction
 *   is in neither the queue nor a mailbox, which nothing needs: a caller
 *   that gives up does not find it queued and sends its note, as for one
 *   in a mailbox, and the member cannot end before it is delivered (its
 *   mailbox closes only at its own end, after that turn).
 *
 * FAILURES
 *   Member starts that fail add_member_retry times in a row make a round:
 *   takers and transactions waiting then hear SHOAL_ENOMEMBERS, and starts
 *   wait retry_ms (restart.backoff_ms, doubling up to
 *   SHOAL__POOL_BACKOFF_GROWTH times it; a start resets it). A member that
 *   ends by a failure (returned FAIL, ended in use or free) is a restart,
 *   under restart.max within restart.within_ms as a forward pool's worker
 *   (workers.c); past it the pool is degraded (logged once) and starts
 *   wait p->backoff_ms, doubling at each failure after a wait, until no
 *   member has failed for restart.within_ms.
 *
 * DRAINING
 *   A drain closes the pool's mailbox and clears `open`: new takes and
 *   transactions get SHOAL_ENOPROC. The takes waiting then are answered
 *   SHOAL_ESHUTDOWN at once (counted, take_shutdowns): a member given to
 *   one would be held for as long as its taker liked. The transactions
 *   it accepted -- queued, or still in its own mailbox, whose count is
 *   final once it is closed -- are served first: a member freed (given
 *   back, or started) goes to the first one queued, or stays free for
 *   one still in the mailbox; a member starting stays while any waits.
 *   After the last, free and starting members end, and the pool ends
 *   with its last member. Returns go to its actor meanwhile (the fast
 *   paths see `open` clear). No member starts while it drains: one still
 *   queued when the last member has ended (it failed) is dropped then,
 *   counted and logged -- once none is left in the mailbox either, and
 *   before the drain's callers hear it done, so that the counts they read
 *   then are final (a host's ledger: nothing in flight).
 */
#ifndef SHOAL_POOL_CHECKOUT_H
#define SHOAL_POOL_CHECKOUT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actor/envelope.h"
#include "pool/stripe.h" /* shoal__stripe_add: its counters are striped as a pool's */
#include "shoal/checkout.h"
#include "runtime/tcache.h"
#include "sched/futex.h"
#include "sched/lock.h"
#include "sched/worker.h"

struct shoal_ctx_s;
struct shoal_pool_s;
struct shoal_tcache_s;

enum {
    SHOAL_CO_EMPTY = 0,
    SHOAL_CO_STARTING = 1,
    SHOAL_CO_FREE = 2,
    SHOAL_CO_IN_USE = 3,
    SHOAL_CO_ENDING = 4,
};

/* Who holds a member in use. */
enum { SHOAL_CO_BY_ACTOR = 1, SHOAL_CO_BY_THREAD = 2, SHOAL_CO_BY_TXN = 3 };

#define SHOAL_CO_NIL UINT32_MAX

/* A seat is one line, and so is a taker (seats[] and q[] are aligned):
 * a take or a return touches one of each, not parts of two. */
typedef struct shoal_co_seat_s {
    alignas(64) shoal_pid_t pid;
    uint8_t state, by;
    bool failed;         /* ENDING by a failure (returned FAIL, ended in use): a restart */
    bool for_start;      /* one of `init` the pool's start waits for (not a spare) */
    uint32_t prev, next; /* the free list's links (seats), SHOAL_CO_NIL at its ends */
    shoal_pid_t owner;   /* IN_USE: the actor, the thread's waiter, the transaction's sender */
    union {
        uint64_t token; /* IN_USE by a thread: which thread (checkout_api.c) */
        /* IN_USE by an actor: the stripe of the thread that sends its grant
         * after the lock (GRANTS AFTER THE LOCK); NULL: sent under it */
        struct shoal_co_stripe_s *granter;
    };
    uint64_t deadline; /* STARTING: its start's end; IN_USE by a thread: its lease's */
    uint64_t expires;  /* its max_lifetime ends (ns), UINT64_MAX: never */
    uint64_t used_ns;  /* last given back (or started); IN_USE by a thread: given then */
} shoal_co_seat_t;
_Static_assert(sizeof(shoal_co_seat_t) == 64, "a seat is one line");

/* A taker waiting in the queue: a take (txn NULL) or a transaction. */
typedef struct shoal_co_taker_s {
    alignas(64) shoal_pid_t from;
    shoal_ref_t ref;
    uint64_t since, deadline; /* deadline UINT64_MAX: none (a transaction) */
    shoal_env_t *txn;
    uint64_t token; /* a thread's take: which thread */
    bool lease;     /* a thread's take */
    bool gone;      /* answered already (timed out): skipped */
} shoal_co_taker_t;
_Static_assert(sizeof(shoal_co_taker_t) == 64, "a taker is one line");

/* The counters, by index (counts[] and stats). */
enum {
    SHOAL_CO_TAKES,
    SHOAL_CO_RETURNED_OK,
    SHOAL_CO_RETURNED_FAIL,
    SHOAL_CO_NO_MEMBERS,
    SHOAL_CO_TAKE_TIMEOUTS,
    SHOAL_CO_KILLED_FREE,
    SHOAL_CO_KILLED_IN_USE,
    SHOAL_CO_LEASE_EXPIRED,
    SHOAL_CO_CULLED,
    SHOAL_CO_RECYCLED,
    SHOAL_CO_START_FAILURES,
    SHOAL_CO_TAKE_SHUTDOWNS, /* takes waiting when the pool began to drain (inspect only) */
    SHOAL_CO_NCOUNTS
};

/* The take wait's histogram: pool.h's buckets (checked in checkout.c). */
#define SHOAL_CO_WAIT_BUCKETS 144u

/* Recently expired leases remembered, so a late return can say so. */
#define SHOAL_CO_EXPIRED_RING 64u

/* One thread's share of a checkout pool's counters (WHO TOUCHES WHAT:
 * stripes). no_members_early: takes and transactions refused before the
 * lock (a try_take that saw the pool at max, a transaction past
 * txn_limit, a group with no free member). */
typedef struct shoal_co_stripe_s {
    /* The member whose grant this stripe's thread is sending after the
     * lock; SHOAL_PID_NONE: none; shoal__co_ended(reason): it ended
     * meanwhile (GRANTS AFTER THE LOCK). Beside the counts a take writes. */
    alignas(64) _Atomic shoal_pid_t granting;
    _Atomic uint64_t counts[SHOAL_CO_NCOUNTS];
    _Atomic uint64_t no_members_early;
    _Atomic uint32_t wait[SHOAL_CO_WAIT_BUCKETS]; /* the take wait's histogram */
} shoal_co_stripe_t;

typedef struct shoal_checkout_s {
    /* set at creation: nstripes = one per worker id, then the shared one */
    shoal_co_stripe_t *stripes;
    uint32_t nstripes;
    bool debug;                 /* the runtime's debug_checks: holder is kept */
    _Atomic uint64_t txn_limit; /* max + queue_max: read by every transaction, set by a resize */
    /* published for other threads, on a line of their own (one line: an
     * alignas on the first word only) */
    alignas(64) _Atomic uint32_t pub_in_use;
    _Atomic uint32_t pub_free, pub_starting, pub_ending;

    /* Under `lock` (above): the words every take, return and transaction
     * touch, all on the lock's one line, so that a holder on another core
     * than the last moves one line, not two (checked below). open: takes
     * are served (cleared when the pool drains or ends). */
    alignas(64) shoal_lock_t lock;
    _Atomic uint32_t pub_queued; /* published (above), on the line every holder writes */
    _Atomic uint64_t txn_out;    /* on the lock's line (WHO TOUCHES WHAT) */
    shoal_co_stripe_t *st;       /* the holder's stripe (shoal__co_lock) */
    bool open;
    bool recycle_asked; /* a POKE is on its way to the actor */
    bool st_shared;     /* st is the shared stripe */
    uint32_t free_head, free_tail;
    uint32_t nfree, nin_use, nstarting, nending;
    uint32_t qhead, qlen; /* the ring's entries, gone ones included */
    uint32_t qlive;       /* waiting: all */
    /* Under `lock`, touched less often. */
    uint32_t qcap;     /* the ring's size: 2^k */
    uint32_t qtakers;  /* waiting: takes (not transactions) */
    uint32_t handoffs; /* members handed from a return to a waiting actor (checkout_fast.c) */
    /* Transactions sent to the pool's own mailbox, not yet read there by
     * its actor (the queue could not grow: checkout_fast.c). While any
     * is, every later one goes there too, behind them, so that they keep
     * the order they came in. */
    uint32_t txn_mailed;
    /* A take refused for want of a member asked for a look (checkout_fast.c):
     * the POKE starts a spare member for the next taker. A POKE asked for
     * a transaction that waits starts members only for those still
     * waiting when it is read (shoal__co_fill): one served meanwhile by a
     * return needs none. */
    bool spare_asked;
    shoal_co_taker_t *q; /* a ring */
    shoal_co_seat_t *seats;
    uint32_t *index; /* the seats by pid (checkout_index.c): 2^index_bits slots */
    uint32_t index_bits;
    uint32_t nseats, seats_cap;       /* seats in use are < nseats; cap: max_size */
    struct shoal_pool_s *pool;        /* the record this is part of */
    const shoal_pool_checkout_t *cfg; /* the record's spec.checkout */
    uint32_t fails_in_row;            /* member starts that failed since the last that did not */
    uint32_t owed_restarts;           /* failed members past the restart budget, not yet replaced */
    uint64_t retry_at; /* starts held off until then after add_member_retry failures */
    uint64_t retry_ms; /* the next such wait: doubles, 0 (backoff_ms) after a start */
    bool start_lost;   /* the pool's own start failed: it ends, nothing more starts */
    uint64_t next_cull;
    uint64_t tick_at; /* the armed tick (ns), UINT64_MAX: none (under the lock) */
    /* The earliest start deadline, lease or retry set since the pool's
     * actor last cleared it (shoal__co_due): what a start notice arms,
     * instead of a pass over every seat and taker (checkout.c). */
    uint64_t due_added;
    shoal_timer_t tick_timer;
    uint32_t prng;
    char group[64];
    pthread_t holder; /* debug: the thread that holds the lock, if any */
    bool held;
    shoal_pid_t expired[SHOAL_CO_EXPIRED_RING];
    uint32_t expired_next;
} shoal_checkout_t;
_Static_assert(offsetof(shoal_checkout_t, qlive) + sizeof(uint32_t) -
                       offsetof(shoal_checkout_t, lock) <=
                   64,
               "what every take, return and transaction touches is on the lock's line");

/* The kind's ops (actor/group.h; checkout_ops.c). */
extern const struct shoal_group_ops_s shoal__checkout_ops;
/* A draining pool's next step, with the lock (checkout.c): its free
 * members serve the transactions queued, and it ends when none is left. */
void shoal__co_drain_step(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);

/* The pool's tick: deadlines, leases, culling (its own priority cast). */
#define SHOAL__POOL_TICK_CHECKOUT 0xFFFE010Bu

/* checkout.c: set up at spawn (before publication), freed with the record. */
int shoal__checkout_new(struct shoal_pool_s *p, const shoal_pool_spec_t *spec);
void shoal__checkout_free(shoal_checkout_t *co);
/* Whether spec's checkout settings are valid (pool.c's spec check). */
int shoal__checkout_check(const shoal_pool_spec_t *spec);

/* The pool's own actor (pool.c hands these over). */
int shoal__checkout_start(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* A pool started held (pool.h: opts held) is told its reload committed:
 * its members are opened, and its place in its group, taken closed at its
 * start, opens (a group's takes find it from then on; nothing to fail). */
void shoal__checkout_go(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* A take (a priority call): answered now, or SHOAL_DEFER (queued). */
int shoal__checkout_take(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, const shoal_msg_t *msg,
                         shoal_reply_t *reply);
/* A return, as a cast (an actor, a member) or a call (a thread): its status. */
int shoal__checkout_return(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, const shoal_msg_t *msg);
/* SHOAL_POOL_SET_CHECKOUT. */
int shoal__checkout_set(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, const shoal_msg_t *msg);
/* A message to the pool's actor that is the checkout kind's: a member's
 * start notice or EXIT, a return (a priority cast), its tick. True if it
 * was (then it is dealt with); a start notice is also the pool's own
 * (pool.c counts the first ones). */
/* Whether member's start notice is one the pool's start waits for: one of
 * its `init` members, still starting (not a spare a take started meanwhile).
 * Before shoal__checkout_message hears the notice. */
bool shoal__checkout_start_counts(const struct shoal_pool_s *p, shoal_pid_t member);
bool shoal__checkout_message(struct shoal_ctx_s *ctx, struct shoal_pool_s *p,
                             const shoal_msg_t *msg);
/* SHOAL_POOL_DRAIN on a checkout pool (checkout.h: draining). */
void shoal__checkout_drain(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* Its fields of stats (the pool's actor, or any thread: published words). */
void shoal__checkout_stats(struct shoal_pool_s *p, shoal_pool_stats_t *st);
/* The same from one moment, under the lock (the pool's actor): published
 * first, and pool_size counted seat by seat -- in_use + free + starting
 * equal it. */
void shoal__checkout_stats_now(struct shoal_pool_s *p, shoal_pool_stats_t *st);
/* The published words, at the end of each of the pool actor's callbacks. */
void shoal__checkout_publish(struct shoal_pool_s *p);
/* Its fields of an inspection. */
void shoal__checkout_inspect(struct shoal_pool_s *p, const shoal_pool_stats_t *st,
                             shoal_inspect_t *out);

/* A deadline (a start's, a lease's, a retry's) was set: noted for a
 * start notice's arming (due_added). */
static inline void shoal__co_due(shoal_checkout_t *co, uint64_t at)
{
    if (at < co->due_added)
        co->due_added = at;
}

/* The k-th entry of the queue of takers from its head (qcap is a power
 * of two). */
static inline shoal_co_taker_t *shoal__co_qat(const shoal_checkout_t *co, uint32_t k)
{
    return &co->q[(co->qhead + k) & (co->qcap - 1)];
}

/* One transaction settled or dropped: off txn_out, and who waits for room
 * to send one is told if there is (WHO TOUCHES WHAT: txn_out). */
void shoal__co_txn_out(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p);

/* The stripe of co's counters for the thread whose cache is tc (NULL: a
 * thread with none); *shared when it is the one every thread outside the
 * dispatcher adds to. shoal__co_stripe: the calling thread's. */
static inline shoal_co_stripe_t *shoal__co_stripe_of(shoal_checkout_t *co,
                                                     const struct shoal_tcache_s *tc, bool *shared)
{
    uint32_t i = tc != NULL && tc->worker != NULL ? tc->worker->id : co->nstripes - 1;
    *shared = i == co->nstripes - 1;
    return &co->stripes[i];
}
shoal_co_stripe_t *shoal__co_stripe(shoal_checkout_t *co, bool *shared);

/* Takes the lock; the holder's stripe is looked up once, for every count
 * it makes while it holds it. */
static inline void shoal__co_locked(shoal_checkout_t *co, shoal_co_stripe_t *st, bool shared)
{
    co->st = st;
    co->st_shared = shared;
    if (__builtin_expect(co->debug, 0)) {
        co->holder = pthread_self();
        co->held = true;
    }
}
static inline void shoal__co_lock(shoal_checkout_t *co)
{
    shoal__lock(&co->lock);
    bool shared;
    shoal_co_stripe_t *st = shoal__co_stripe(co, &shared);
    shoal__co_locked(co, st, shared);
}
/* The same for the thread whose cache is tc (the fast paths have it). */
static inline void shoal__co_lock_tc(shoal_checkout_t *co, const struct shoal_tcache_s *tc)
{
    shoal__lock(&co->lock);
    bool shared;
    shoal_co_stripe_t *st = shoal__co_stripe_of(co, tc, &shared);
    shoal__co_locked(co, st, shared);
}

/* The debug check that a count is made with the lock held, by its holder
 * (checkout_stats.c: aborts with a log line if not). */
void shoal__co_check_holder(shoal_checkout_t *co);
/* The debug owner check (checkout_take.c: shoal__co_seat_give): seat i was
 * to be given to `owner` but is not free -- a member held by two. Logs
 * who holds it, and aborts. */
void shoal__co_owner_fault(shoal_checkout_t *co, uint32_t i, shoal_pid_t owner);

/* Counts n into counter i, in the lock holder's stripe. */
static inline void shoal__co_count(shoal_checkout_t *co, unsigned i, uint64_t n)
{
    if (__builtin_expect(co->debug, 0))
        shoal__co_check_holder(co);
    shoal__stripe_add(&co->st->counts[i], n, co->st_shared);
}

/* A take or transaction refused before the lock (no_members_early). */
static inline void shoal__co_refused_early(shoal_checkout_t *co, const struct shoal_tcache_s *tc)
{
    bool shared;
    shoal_co_stripe_t *st = shoal__co_stripe_of(co, tc, &shared);
    shoal__stripe_add(&st->no_members_early, 1, shared);
}

/* checkout_take.c and checkout_queue.c: giving members out, taking them
 * back, and the queue of takers (all of these with the lock held). */
/* Answers a take with an error status (it stops waiting). */
void shoal__co_answer_error(struct shoal_ctx_s *ctx, shoal_pid_t to, shoal_ref_t ref, int status);
void shoal__co_note_wait(shoal_checkout_t *co, uint64_t ns);
int shoal__co_queue_put(shoal_checkout_t *co, const shoal_co_taker_t *t, bool front);
/* The first live taker, taken off the queue; false when none waits. */
bool shoal__co_queue_pop(shoal_checkout_t *co, shoal_co_taker_t *out);
/* Seat i goes to `owner` (a thread's: token says which); counted a take. */
void shoal__co_seat_give(shoal_checkout_t *co, uint32_t i, shoal_pid_t owner, uint8_t by,
                         uint64_t token, uint64_t now);
/* Seat i goes to actor `owner` as shoal__co_seat_give, its grant to be sent
 * after the lock by this holder, who marks it so (GRANTS AFTER THE LOCK):
 * the mark's stripe, for shoal__co_grant_clear. */
shoal_co_stripe_t *shoal__co_seat_grant(shoal_checkout_t *co, uint32_t i, shoal_pid_t owner,
                                        uint64_t now);
/* Seat i, given out, is not after all (its taker was gone). */
void shoal__co_seat_ungive(shoal_checkout_t *co, uint32_t i);
/* Hands transaction m to the member in seat i: true, or false if that
 * member has gone (the seat is ENDING; its EXIT is on the way). */
bool shoal__co_txn_give(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                        uint32_t i, shoal_env_t *m, uint64_t now);
/* Transaction m, given to `member` in seat i under the lock and then not
 * delivered after it (the member had ended): as shoal__co_txn_give's
 * failure, and m is first in the queue again -- false if the queue could
 * not grow for it (no memory). With the lock. */
bool shoal__co_txn_lost_give(shoal_checkout_t *co, uint32_t i, shoal_pid_t member, shoal_env_t *m);
/* A grant: the REPLY to `ref` carrying `member`, from the pool, to
 * `taker`: true if delivered (no lock needed: it touches no seat). */
bool shoal__co_grant_send(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                          shoal_pid_t member, shoal_pid_t taker, shoal_ref_t ref);

/* The mark of a member that ended while its grant was on its way: its end's
 * reason, in a word no local actor's pid is (its slot is past any). */
static inline shoal_pid_t shoal__co_ended(int reason)
{
    return (uint64_t)(uint32_t)reason << 32 | UINT32_MAX;
}
/* shoal__co_grant_clear's rare half: `member` ended while its grant was on
 * its way (the mark was `ended`, with the reason): the taker, if its grant
 * was delivered (sent), is told of that end now, after it. */
void shoal__co_grant_ended(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_pid_t ended,
                           shoal_pid_t member, shoal_pid_t taker, bool sent);
/* After the lock, once the grant of `member` to `taker` marked in stripe st
 * (shoal__co_seat_grant) has been sent (shoal__co_grant_send; sent: it was
 * delivered): the mark is cleared, and if the member ended meanwhile the
 * taker is told so, after its grant (GRANTS AFTER THE LOCK). */
static inline void shoal__co_grant_clear(shoal_runtime_t *rt, struct shoal_tcache_s *tc,
                                         shoal_co_stripe_t *st, shoal_pid_t member,
                                         shoal_pid_t taker, bool sent)
{
    /* release: pairs with the acquire of the actor's CAS in
     * shoal__co_tell_holder, which, finding the mark cleared, sends its EXIT
     * after this grant. The word was ours (member) or the actor's (ended):
     * nobody else writes it meanwhile. */
    shoal_pid_t seen =
        atomic_exchange_explicit(&st->granting, SHOAL_PID_NONE, memory_order_release);
    if (__builtin_expect(seen != member, 0))
        shoal__co_grant_ended(rt, tc, seen, member, taker, sent);
}
/* With the lock: the actor holding seat i's member (IN_USE by an actor) is
 * told that it ended (`reason`): an EXIT from it now, or, while its grant
 * is on its way, by the grant's thread after it (GRANTS AFTER THE LOCK). */
void shoal__co_tell_holder(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_checkout_t *co,
                           uint32_t i, int reason);
/* Grants seat i to take t (its answer, from the pool): true, or false if
 * the taker is gone (the seat is FREE again, not listed). */
bool shoal__co_grant(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                     uint32_t i, const shoal_co_taker_t *t, uint64_t now);
/* A free seat (FREE, just started or given back) goes to the first taker
 * waiting, or to the free FIFO. Draining: to the first transaction queued,
 * else to the free FIFO while transactions are still in the pool's
 * mailbox, else it is stopped (checkout.h: draining). */
void shoal__co_offer(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint32_t i);
/* Every free member offered again, in FIFO order, as a return offers one
 * (a POKE, a drain's step, a take that finds takers waiting). */
void shoal__co_offer_free(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* User messages still in the pool's own mailbox beyond the one being
 * handled: transactions to place, every one (co_route). Final once the
 * mailbox is closed (a drain). The pool's actor, in its turn. */
uint32_t shoal__co_mailbox_txns(const struct shoal_ctx_s *ctx);
/* A transaction to run (own_message): on a free member now, else queued;
 * front: handed back by a member that ended before it, it was first. */
void shoal__co_txn_place(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, shoal_env_t *m,
                         bool front);
/* A transaction that will not run: its call answered SHOAL_ENOPROC, counted dropped. */
void shoal__co_txn_drop(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, shoal_env_t *m);
/* The queue of takers: every one answered `status` (transactions dropped:
 * how many is returned); those past their deadline answered
 * SHOAL_ETIMEDOUT; every take and transaction answered SHOAL_ENOMEMBERS
 * (starts keep failing); the newest takes past queue_max answered SHOAL_ENOMEMBERS
 * (queue_max lowered). */
uint32_t shoal__co_queue_flush(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, int status);
/* With the lock, in the pool's actor's turn: the transactions no member
 * will run -- the pool ends, or drains with no member left -- dropped
 * (queued ones: their callers answered SHOAL_ENOPROC; those still in the
 * mailbox: by the actor's end), counted; one log line says how many. */
uint32_t shoal__co_drop_unserved(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* A drain began: every take waiting is answered SHOAL_ESHUTDOWN, counted
 * (take_shutdowns); transactions wait on, to be served. */
void shoal__co_queue_shut_takes(struct shoal_ctx_s *ctx, shoal_checkout_t *co);
void shoal__co_queue_expire(struct shoal_ctx_s *ctx, shoal_checkout_t *co, uint64_t now);
void shoal__co_queue_fail_takes(struct shoal_ctx_s *ctx, shoal_checkout_t *co);
void shoal__co_queue_trim(struct shoal_ctx_s *ctx, shoal_checkout_t *co);
/* Arms the pool's tick for the next deadline (a taker's, a seat's, a cull,
 * a retry of starts). */
void shoal__co_rearm(struct shoal_ctx_s *ctx, shoal_checkout_t *co);
/* Arms the pool's tick for `at` (ns), unless one comes at or before it:
 * from any thread, with the lock held. */
void shoal__co_arm_at(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_checkout_t *co,
                      uint64_t at);
/* A return (a cast from an actor or a member, a call from a thread), the
 * lock held: its status (shoal__checkout_return takes the lock). */
int shoal__co_return_locked(struct shoal_ctx_s *ctx, struct shoal_pool_s *p,
                            const shoal_msg_t *msg);

/* The publication of the counts, the lock held (shoal__checkout_publish). */
void shoal__co_publish_locked(struct shoal_pool_s *p);
/* Lets go of the lock, the counts published first: what other threads read
 * without it (pub_*: stats, a try_take's first look) is what the last
 * holder left. Every holder lets go so. */
void shoal__co_unlock(struct shoal_pool_s *p);
/* A consumer asks the actor to look at the pool: replace free members past
 * their lifetime, give free members to takers waiting (a priority cast, no
 * payload; checkout_fast.c sends it at most once until the actor has
 * handled it: recycle_asked). */
#define SHOAL__CHECKOUT_POKE 0xFFFE010Cu

#endif
