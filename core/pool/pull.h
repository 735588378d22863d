/* pull.h - the pull kind (after Akka's work pulling): one bounded buffer
 * that senders put items into and members take from on their own threads,
 * each only while it holds fewer than `prefetch`.
 *
 * PROTOCOL
 *   admission   admitted -- the items accepted and not yet settled (in the
 *               buffer, or held by a member) -- is two monotonic counts, so
 *               senders and members do not write one line per item:
 *               admitted = admits - settles (shoal__pull_admitted: settles
 *               read first, so never negative). A sender claims one with a
 *               CAS on `admits` that keeps admitted <= capacity [relaxed: it
 *               publishes nothing; the item itself goes through the queue],
 *               checked against `seen`, a value `settles` had (senders keep
 *               it beside `admits`; any sender may store it [relaxed], so
 *               it may go back, never past settles): admits - seen is never
 *               below admitted. Only when that says full does the sender
 *               read `settles` (after `admits`: admits - settles is then
 *               never above what admitted was at that read) and refuse
 *               (SHOAL_EBUSY) if it is full indeed: the capacity is never
 *               passed, and a refusal is exact at the read of `settles`.
 *               A member counts an item out when it is settled (handled,
 *               failed, dropped) [fetch_add on settles, seq_cst: its half of
 *               the room pairs below], each one at once (the group is
 *               `exact`, actor/group.h), then reads admits [seq_cst] for
 *               what is left: never below the truth, so a concurrent
 *               admission may hide room from that member; the member that
 *               settles the admitted item looks again.
 *               A source's request claims its room in admits up front
 *               (pull_source.c: room), so a source's items are admitted
 *               already, and what it leaves is settled.
 *               capacity = buffer + target x prefetch, written by the
 *               pool's actor [seq_cst: the room pair below; senders read
 *               it relaxed, a value on its own]. Draining or
 *               ending, the pool's actor sets PULL_CLOSED in admits
 *               [fetch_or]: every admission after it fails (its CAS sees
 *               the bit: one word, one modification order) with
 *               SHOAL_ENOPROC, so once admitted is 0 again nothing is left
 *               and nothing can come: the members retire (workers.c).
 *   the buffer  a never-refusing MPMC FIFO (sched/inject.h): the item is
 *               pushed after it is admitted, so the FIFO never holds more
 *               than capacity. Its count (inject.h) takes the item in
 *               with the seq_cst claim of its cell.
 *   wake-up     a member that finds nothing to take announces it is going
 *               to sleep -- sleepers += 1 [seq_cst], once until it takes
 *               again -- then goes IDLE [seq_cst store, actor.h] and reads
 *               count once more [seq_cst] (group.h: ops->more, then
 *               ops->recheck, which reads only the buffer). A sender,
 *               after its push (the claim [seq_cst]), reads sleepers [seq_cst]
 *               and, when any, schedules an IDLE member [seq_cst load and
 *               CAS of its schedule word, send.c]. In the single order of
 *               seq_cst operations either the member's second read sees
 *               the item (it schedules itself) or the sender's reads come
 *               after the member's announcement and IDLE store (it finds
 *               an IDLE member: that one, or another that will take it).
 *               sleepers may count a member that is already running again
 *               (it is taken off at its next take): a sender then looks
 *               for an IDLE member in vain, never the other way round.
 *               A sender finds members through the worker table [seq_cst
 *               loads]. A member takes nothing and announces nothing until
 *               the pool's actor has listed it: a swap's new members run
 *               init beside the old ones and must not serve before COMMIT
 *               (a reload that fails would have run its new code). After
 *               listing one [release stores, then a seq_cst fence] the
 *               actor tells it (SHOAL_ENV_LISTED, a system message: the
 *               mailbox's own reserve/schedule pair, actor.h, gives it a
 *               turn), and in that turn it sets its `listed` word, then
 *               takes what there is or announces itself: its announcement
 *               comes after its pop of the message [acquire], so a sender
 *               that reads it [seq_cst] and scans sees the listing.
 *               A scan in vain (every member `sleepers` counts is running)
               costs a look at every member: one sender in vain marks it
               (`vain` := the value of `sleeps` it read [seq_cst] before its
               scan [relaxed store]), and a sender that reads `sleeps`
               [seq_cst, after its claim and its read of sleepers] equal to
               the mark does not scan. A member bumps `sleeps` [seq_cst
               fetch_add] each time it waits for work, after its IDLE store
               and before its second read of count (shoal__pull_recheck).
               A member whose second read missed an item counted its sleep
               before the sender read `sleeps`; a mark equal to that read
               was set by a scan after the bump, so after the IDLE store:
               that scan found the member IDLE (it was no scan in vain) or
               running again, and then its next sleep's bump comes after
               this sender's read (else the sender read a later value), so
               its second read sees the item. Skipping costs no wake-up.
               A member that ends takes itself off `sleepers` and, if items
               wait (count [seq_cst]), scans the table as a sender does: a
               sender may have woken it for one it never takes (a STOP is
               read before any take). A member
 *               removed from the table (retiring: a resize, idle expiry)
 *               takes nothing more, so one that a sender woke passes the
 *               wake-up on: in its next take it reads count [seq_cst] and,
 *               if items wait, scans the table as a sender does. A scan
 *               that finds no IDLE member, in a lazy pool, asks the pool's
 *               actor for a new one, as a put that finds no sleeper does
 *               (elastic.c: lazy grow).
 *   room        a producer refused with SHOAL_EBUSY may ask for one
 *               SHOAL_MSG_ROOM (shoal_notify_room): it is added to `waiting`
 *               under room_lock, nwaiting is stored [seq_cst], then admitted
 *               is read [seq_cst] and, below the low-water mark (a quarter
 *               free), every waiter is told at once. A member that settles
 *               lowers admitted (raises settles) [seq_cst] and reads
 *               nwaiting [seq_cst]: below the mark with waiters, it tells
 *               them all. One of the two sees the other (an admission
 *               between them may hide the room: the member that settles
 *               that item looks again -- every settle does, a drop at a
 *               member's end too -- and the last settle sees it all); a
 *               waiter may be told twice, never not. A resize that
 *               raises the capacity stores it [seq_cst] and then reads
 *               nwaiting [seq_cst]; an asker reads the capacity [seq_cst]
 *               after its store of nwaiting: one sees the other, so a
 *               waiter never sleeps through room a resize made (with
 *               nothing admitted, no settle would tell it). Closing (a drain,
 *               the end) tells every waiter SHOAL_ENOPROC, and a waiter
 *               that asks after the close hears it at once (pull_room.c).
 *               Waiters that have ended are taken off the list (under
 *               room_lock) before max_waiting is counted and when the
 *               count is read: they hold no place.
 *   the end     the pool's actor, ending, closes admission, stores
 *               pull_ended [seq_cst] and sweeps: it drops every item it can
 *               take, then reads the buffer's count [seq_cst] and, while it
 *               is not 0, yields and sweeps again -- an item is counted from
 *               its claim (inject.h), so a sender between its claim and its
 *               publication is waited for, not passed by. A sender (or a
 *               member handing an item back), after its push (the claim
 *               [seq_cst]), reads pull_ended [seq_cst] and, if set, sweeps
 *               what is published, its own item included. In the single
 *               order either that read comes after the store (the sender
 *               sweeps its item) or the claim comes before the actor's
 *               count (the actor waits for it). A cell's seq [acquire] is
 *               no substitute for the count: the sender's release store of
 *               it may still be in its store buffer when its load of
 *               pull_ended reads 0 (the store-load pair needs both sides
 *               seq_cst).
 *   members     each member's own words (actor.h, ext->member): held, the
 *               items taken and not settled; asleep; and ext->listed (set
 *               by SHOAL_ENV_LISTED). Written only in its turns.
 *   seats       (pull_seats.c) each member's counters for readers
 *               (shoal_pull_worker_stats_t):
 *               a seat the pool's actor allocates before the member is
 *               spawned (its pointer is in the member's words) and frees
 *               when the member's EXIT comes, or with the record, or at
 *               once if no member was spawned for it: a member that runs
 *               always has its seat (shoal__pool_spawn_member fails only
 *               before it spawns; it takes the room to track the member
 *               first). The member alone writes it [relaxed: each a value
 *               on its own]; readers (any thread holding a reference on the
 *               record) walk the seat table under seats_lock, which the
 *               pool's actor holds to add or remove a seat. The member
 *               never touches its seat after its EXIT is sent (actor/end.c:
 *               the EXIT is last).
 */
#ifndef SHOAL_POOL_PULL_H
#define SHOAL_POOL_PULL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>

#include "actor/actor.h"
#include "actor/group.h"
#include "sched/inject.h"
#include "shoal/pool.h"
#include "shoal/pull.h"

struct shoal_pool_s;
struct shoal_ctx_s;

typedef struct shoal_pull_seat_s {
    alignas(64) _Atomic uint64_t taken; /* one line a seat: its member writes every word */
    _Atomic uint64_t completed;
    _Atomic uint64_t idle_ns;    /* waits that have ended */
    _Atomic uint64_t idle_since; /* the wait under way began (ns), or 0 */
    uint32_t index;              /* set before the member runs */
    shoal_pid_t pid;             /* ... and once it is spawned, under seats_lock */
} shoal_pull_seat_t;
_Static_assert(sizeof(shoal_pull_seat_t) == 64, "a seat is one line");

/* A member's own words (actor.h, ext->member): written only in its turns. */
typedef struct shoal_pull_member_s {
    uint32_t held;   /* taken, not settled */
    uint32_t asleep; /* counted in sleepers */
    shoal_pull_seat_t *seat;
} shoal_pull_member_t;
_Static_assert(sizeof(shoal_pull_member_t) <= SHOAL_MEMBER_WORDS * sizeof(uint64_t),
               "a member's words fit in ext->member");

/* Told of each item a pull pool drops unhandled (it has ended, the
 * runtime stops, or there was no memory to move it), before it goes: the
 * type, payload and size it was sent with. A task pool's (tasks.c), so
 * that a group hears of tasks that will never run. */
typedef void (*shoal_pull_drop_fn)(uint32_t type, const void *data, size_t size);

typedef struct shoal_pull_s {
    shoal_inject_t queue; /* the buffer */
    /* senders' line: written by every admission */
    alignas(64) _Atomic uint64_t admits; /* | PULL_CLOSED (admission, above) */
    _Atomic uint64_t seen;               /* a value settles had */
    /* read by senders and members, written seldom */
    alignas(64) _Atomic uint64_t capacity;
    /* places the source's request claimed in admits and its items have not
     * taken yet (pull_source.c: room) */
    _Atomic uint64_t reserved;
    _Atomic uint32_t prefetch;
    _Atomic uint32_t buffer_pub;    /* `buffer` below, for readers of the stats [relaxed] */
    _Atomic shoal_pid_t source_pid; /* its items take the places in `reserved` */
    /* Set at creation, never changed (a reload replaces the pool): read by
     * senders and members without the pool's actor's spec. */
    uint32_t redeliver;
    shoal_pid_t dead_letter;
    bool has_source;
    /* set once, before the pool is handed to any sender (shoal__pull_on_drop);
     * relaxed: a code address, nothing rides on it */
    _Atomic(shoal_pull_drop_fn) on_drop;
    alignas(64) _Atomic uint64_t settles; /* members' side (admission, above) */
    alignas(64) _Atomic uint32_t sleepers;
    /* Sleeps so far (every member's, each time it waits for work: its
     * recheck) and the value a sender's scan for an IDLE member found none
     * at (wake-up, above: the vain mark) */
    _Atomic uint64_t sleeps, vain;
    _Atomic uint32_t want_room;  /* the pool's actor waits for room (pull_source.c) */
    _Atomic uint64_t room_below; /* ... until admitted is below this */
    /* producers waiting for room (shoal_notify_room): under room_lock;
     * nwaiting mirrors how many (the room pair, below) */
    _Atomic uint32_t nwaiting;
    pthread_mutex_t room_lock;
    shoal_pid_t *waiting;
    size_t waiting_n, waiting_cap;
    /* the source, for stats (relaxed: each a value on its own) */
    _Atomic uint64_t source_items; /* sent this epic (route, on the source's thread) */
    _Atomic uint32_t source_state, source_restarts;
    _Atomic uint32_t own_args; /* the epic runs with its own args (epic, below) */
    /* The current source's init (its SHOAL_ENV_STARTED): 0 not done yet,
     * 1 done, 2 failed; read by the host before it hands an epic to this
     * pool (a flag on its own: relaxed). */
    _Atomic uint32_t source_up;
    /* the seat table (seats, above): seats[i] is seat i, or NULL */
    pthread_mutex_t seats_lock;
    shoal_pull_seat_t **seats;
    uint32_t nseats; /* seats[0 .. nseats) allocated */
    /* owned by the pool's actor */
    alignas(64) uint32_t buffer;
    bool asked; /* a request is out */
    /* the last source spawned, current or not: its SHOAL_ENV_STARTED is
     * the source's (source_up), never a worker's start (pool.c) */
    shoal_pid_t spawned;
    uint32_t cursor_len;
    uint64_t epic_start_ns;
    struct shoal_pull_epic_s *epic; /* this epic's own args, or NULL: the spec's */
    unsigned char cursor[SHOAL_PULL_CURSOR_MAX];
} shoal_pull_t;

extern const shoal_group_ops_t shoal__pull_ops;

/* The top bit of admits: no more admissions (draining, ended). */
#define PULL_CLOSED (UINT64_C(1) << 63)

/* Items admitted and not settled (admission, above): settles is read
 * first, so the difference is never negative when the loads are ordered
 * (seq_cst); relaxed loads may be reordered (not on x86), and such a read
 * of admits older than settles reads 0. It may count admissions made after
 * the read of settles. */
static inline uint64_t shoal__pull_admitted(shoal_pull_t *q, memory_order mo)
{
    uint64_t out = atomic_load_explicit(&q->settles, mo);
    uint64_t in = atomic_load_explicit(&q->admits, mo) & ~PULL_CLOSED;
    return in > out ? in - out : 0;
}
/* The pool's actor closes the buffer to new items (drain, end). */
void shoal__pull_close(struct shoal_pool_s *p);

/* Sets the pool's drop hook (shoal_pull_drop_fn), before anyone sends to
 * it; shoal__pull_dropped tells it of e, an item dropped unhandled. */
void shoal__pull_on_drop(struct shoal_pool_s *p, shoal_pull_drop_fn fn);
void shoal__pull_dropped(struct shoal_pool_s *p, const shoal_env_t *e);

/* A pull pool's part of its record, for spec (checked): SHOAL_ENOMEM. */
int shoal__pull_new(struct shoal_pool_s *p, const shoal_pool_spec_t *spec);
/* Frees it; what the buffer still holds is dropped (the record is going:
 * no thread can add to it any more). */
void shoal__pull_free(shoal_runtime_t *rt, shoal_pull_t *q);
/* The pool's actor: capacity after target, prefetch or buffer changed. */
void shoal__pull_update(struct shoal_pool_s *p);
/* SHOAL_POOL_SET_PREFETCH / SET_BUFFER: the value now (clamped), or 0 with
 * *rc = SHOAL_EINVAL. */
uint32_t shoal__pull_set_prefetch(struct shoal_pool_s *p, uint32_t v, int *rc);
uint32_t shoal__pull_set_buffer(struct shoal_pool_s *p, uint32_t v, int *rc);
/* Draining (closed): true while items are admitted (in the buffer or held
 * by members, who keep taking them; a tick asks again), false once none. */
bool shoal__pull_draining(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* The pool's actor has just listed member pid in the worker table (pull.h:
 * a member may have gone to sleep before senders could find it). */
void shoal__pull_listed(struct shoal_pool_s *p, shoal_pid_t pid);
/* In a member's turn: the items it holds now (taken, not settled). */
uint32_t shoal__pull_held(struct shoal_ctx_s *ctx);
/* The senders' side (pull.c), used by members too: puts an admitted item
 * into the buffer and wakes a member if one sleeps (sweeps if the pool has
 * ended); schedules one IDLE member (wake-up, above). */
void shoal__pull_put(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                     shoal_env_t *e);
void shoal__pull_wake(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p);
/* The members' side (pull_members.c): the kind's ops->take, more, recheck,
 * settled, turn_end, hand_back and member_end (actor/group.h). */
shoal_env_t *shoal__pull_take(struct shoal_ctx_s *ctx);
int shoal__pull_more(struct shoal_ctx_s *ctx);
bool shoal__pull_recheck(shoal_group_t *g);
void shoal__pull_settled(struct shoal_ctx_s *ctx, shoal_env_t *e, bool ok,
                         const shoal_group_timing_t *t);
void shoal__pull_turn_end(struct shoal_ctx_s *ctx, uint64_t handled);
bool shoal__pull_hand_back(struct shoal_ctx_s *ctx, shoal_group_t *g, shoal_pid_t to,
                           shoal_env_t *e);
void shoal__pull_member_end(struct shoal_ctx_s *ctx);
/* The source (pull_source.c), in the pool actor's turns: start it with
 * the pool; a new epic (SHOAL_POOL_EPIC: SHOAL_EBUSY while one runs); stop
 * it (drain); ask it for items if there is room and no request is out
 * (after every callback of the pool's actor); its answers and the pool's
 * room tick (true if msg was one); its end (true if pid was it). */
int shoal__pull_source_start(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
int shoal__pull_epic(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* SHOAL__POOL_EPIC_ARGS (pool.h): a new epic with these args for the
 * source, taken over in every case (freed at once if refused). */
typedef struct shoal_pull_epic_args_s {
    void *args;                    /* what the source's init gets */
    void (*free_args)(void *args); /* how to free it */
} shoal_pull_epic_args_t;
int shoal__pull_epic_with(struct shoal_ctx_s *ctx, struct shoal_pool_s *p,
                          const shoal_pull_epic_args_t *ea);
/* Drops the record's hold on its epic's args (shoal__pull_free). */
void shoal__pull_epic_drop(struct shoal_pull_epic_s *e);
void shoal__pull_source_stop(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* A SHOAL_ENV_STARTED from the pool's last source (true; source_up set if
 * it is still the current one), or not from it (false: a worker's). */
bool shoal__pull_source_started(struct shoal_pool_s *p, const shoal_msg_t *msg);
/* An epic handed over by a pull pool a reload replaces to the pool that
 * replaces it, when both run the same source with the same args (host/
 * host_pull.c): SHOAL__POOL_HAND_OVER's answer, carried to the new pool in
 * its SHOAL__POOL_GO. Without it the new pool's source would start its
 * epic from the start, and what the old one had sent would be handled
 * again. */
typedef struct shoal_pull_handover_s {
    uint32_t state;      /* the old epic's SHOAL_SOURCE_*, as it was before the handover */
    uint32_t own_args;   /* 1: it ran with its own args (shoalctl epic): not resumed */
    uint64_t items;      /* what its source sent this epic (over every pool it ran in) */
    uint64_t elapsed_ns; /* since the epic started (likewise) */
    uint32_t cursor_len; /* 0: it reported none */
    uint32_t pad_;
    unsigned char cursor[SHOAL_PULL_CURSOR_MAX];
} shoal_pull_handover_t;
/* The old pool's half: what the new one needs, and its source stopped when
 * the new one takes the epic over (running or failed, with the spec's
 * args: the epic ends "handed over", and this pool asks for nothing more).
 * One with its own args is left to end as the pool drains. */
void shoal__pull_hand_over(struct shoal_ctx_s *ctx, struct shoal_pool_s *p,
                           shoal_pull_handover_t *out);
/* The new pool's half, at GO (h NULL: no epic handed over; then the start
 * of its own epic is logged now, not when its source was spawned held):
 * an epic done is not run again (its source, started held, is stopped);
 * one running or failed resumes at its cursor (SHOAL_PULL_RESUME), as a
 * restarted source does, its count and time going on; one without a
 * cursor, or with its own args, starts from the start. */
void shoal__pull_go(struct shoal_ctx_s *ctx, struct shoal_pool_s *p,
                    const shoal_pull_handover_t *h);
void shoal__pull_source_ask(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
bool shoal__pull_source_message(struct shoal_ctx_s *ctx, struct shoal_pool_s *p,
                                const shoal_msg_t *msg);
bool shoal__pull_source_exit(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, shoal_pid_t pid,
                             int reason);
/* Room for producers (pull_room.c): whether admitted leaves a quarter of
 * the capacity free (the low-water mark); telling every waiter (one
 * SHOAL_MSG_ROOM each); a member's check after it settled items (settles
 * is `out` now: what is left is read only when a waiter or the source
 * waits); and the kind's ops->room and ops->room_cancel (actor/group.h). */
bool shoal__pull_has_room(const shoal_pull_t *q, uint64_t admitted);
/* A copied cast from outside any actor into pull pool p, by a caller that
 * holds a reference on p's record (a task pool's handle, tasks.h): the
 * route a send takes, without the actor layer's look-up of the record (no
 * read-side region: the reference keeps it). A pool that drains or has
 * ended refuses at admission (SHOAL_ENOPROC). Counted as a send. */
int shoal__pull_send(shoal_runtime_t *rt, struct shoal_tcache_s *tc, struct shoal_pool_s *p,
                     uint32_t type, const void *data, size_t size);
/* Tells every producer waiting for room: one SHOAL_MSG_ROOM each, with
 * status 0 (room), or SHOAL_ENOPROC once the pool drains or has ended. */
void shoal__pull_tell_waiters(shoal_runtime_t *rt, struct shoal_tcache_s *tc,
                              struct shoal_pool_s *p, int status);
void shoal__pull_room_after_settle(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint64_t out);
int shoal__pull_room_ask(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_group_t *g,
                         shoal_pid_t waiter);
/* Producers waiting for room now (the ended ones taken off first). */
uint32_t shoal__pull_waiting(shoal_runtime_t *rt, struct shoal_pool_s *p);
void shoal__pull_room_cancel(shoal_runtime_t *rt, shoal_group_t *g, shoal_pid_t waiter);
/* A member, after admitted went down to `left`: tells the pool's actor if
 * it waits for room. */
void shoal__pull_room(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint64_t left);
/* The pool's actor, about to spawn a member: a seat for it (NULL: no
 * memory), and the member's first words (ext->member) to spawn it with. Then
 * the member's pid once it is spawned (pid SHOAL_PID_NONE: it was not, the
 * seat is freed). */
shoal_pull_seat_t *shoal__pull_seat_new(struct shoal_pool_s *p, uint64_t words[SHOAL_MEMBER_WORDS]);
void shoal__pull_seat_bind(struct shoal_pool_s *p, shoal_pull_seat_t *s, shoal_pid_t pid);
/* A child's EXIT reached the pool's actor: its seat, if it had one, goes. */
void shoal__pull_seat_drop(struct shoal_pool_s *p, shoal_pid_t pid);
/* How many workers an inspection and /metrics list one by one, at most. */
#define SHOAL__PULL_WORKERS_SHOWN 256u
/* Per worker, by seat: fills out[0 .. min(n, cap)) and returns n, the live
 * members that have a pid. Any thread holding a reference on the record. */
size_t shoal__pull_workers(struct shoal_pool_s *p, shoal_pull_worker_stats_t *out, size_t cap);
/* The members (up to cap, by seat) that have waited for work since at
 * least limit ns before now (any thread, as above). */
size_t shoal__pull_idle_past(struct shoal_pool_s *p, uint64_t now, uint64_t limit, shoal_pid_t *out,
                             size_t cap);
/* How many of its workers wait for work now (any thread, as above). */
uint32_t shoal__pull_idle(struct shoal_pool_s *p);
/* Its fields of shoal_pool_stats_t (any thread). */
void shoal__pull_stats(const struct shoal_pool_s *p, shoal_pool_stats_t *st);

#endif
