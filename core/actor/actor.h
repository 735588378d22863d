/* actor.h - an actor record, split in two by who writes it.
 *
 * The front (shoal_actor_t, one cache line) is what senders touch: both
 * mailboxes' tails and reservation words, the user mailbox's stub, the
 * schedule word, the mailbox limit. The worker running the actor reads it
 * only at the end of a turn, so a stream of sends keeps it in the sender's
 * cache. The back (shoal_actor_back_t) belongs to the worker running the
 * actor: mailbox heads, pop counts, behaviour, state. A slot's front and
 * back are one 128-byte block aligned to 128 (shoal_actor_rec_t), in one
 * array indexed by slot, reserved once per runtime and never freed while it
 * lives: a record is only ever reused, so a stale PID can always be checked
 * against the generation without touching freed memory.
 *   Why one block, not an array of fronts and an array of backs: the core
 * fetches a line's neighbour in its 128-byte pair along with it (the
 * adjacent-line prefetcher). With two arrays, that neighbour was another
 * actor's front or back; two actors run by two workers then pulled each
 * other's lines back and forth on every turn, though no byte was shared
 * (W2 P=1000 on two cores: median 15.8M -> 19.3M msg/s with one block,
 * bench/RESULTS.md). A block's two lines are one actor's, which its sender
 * and its worker touch anyway.
 *
 * SCHEDULE WORD (front.sched)
 *   IDLE -> SCHEDULED   by the one sender whose CAS wins; it pushes the
 *                       actor to a ring (or wakes the waiting thread).
 *   SCHEDULED -> PROCESSING   by the worker that popped it from a ring.
 *   PROCESSING -> SCHEDULED   by that worker, at the end of a turn with work
 *                             left: it pushes the actor to its own ring.
 *   PROCESSING -> IDLE  by that worker when both mailboxes look empty (a
 *                       gated actor's user mailbox is not looked at: its
 *                       messages wait for the OPEN that comes to the
 *                       system one, shoal_spawn_t.gated): a seq_cst store,
 *                       then a seq_cst reload of both reservation words;
 *                       if a message slipped in, CAS IDLE -> SCHEDULED and
 *                       push (the enqueue/finish race).
 *                       Pairs with the sender's seq_cst reservation CAS and
 *                       seq_cst load of sched (send.c): one of them sees
 *                       the other.
 *   PROCESSING -> FREE  when the actor ends; FREE -> IDLE at the next spawn,
 *                       a release store after the record is set up and
 *                       before its reservation words go live (spawn.c): a
 *                       stale scheduler (a sender of the slot's previous
 *                       actor late to its CAS) wins only a spurious turn
 *                       of a whole record, and a live sender never finds
 *                       FREE.
 * The CAS IDLE->SCHEDULED is seq_cst (acquire side: the pusher carries the
 * last worker's writes, released by its IDLE store, to the next worker).
 */
#ifndef SHOAL_ACTOR_ACTOR_H
#define SHOAL_ACTOR_ACTOR_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor/envelope.h"
#include "actor/mailbox.h"
#include "shoal/behaviour.h"

enum {
    SHOAL_SCHED_IDLE = 0,
    SHOAL_SCHED_SCHEDULED = 1,
    SHOAL_SCHED_PROCESSING = 2,
    SHOAL_SCHED_FREE = 3
};

enum {
    SHOAL_ACTOR_PLAIN = 0,
    SHOAL_ACTOR_WAITER = 1, /* a thread blocked in a call */
    SHOAL_ACTOR_GROUP = 2,  /* user sends are routed by its kind (group.h) */
};

struct shoal_group_s;

typedef struct shoal_actor_s {
    _Atomic uint64_t user_rsv; /* gen | ALIVE | count (mailbox.h) */
    _Atomic uint64_t sys_rsv;
    _Atomic(shoal_mq_node_t *) user_tail;
    _Atomic(shoal_mq_node_t *) sys_tail;
    shoal_mq_node_t user_stub;
    _Atomic uint32_t sched;
    _Atomic uint32_t limit; /* 0 = unbounded */
    _Atomic uint32_t owner; /* debug checks: running worker id + 1, else 0 */
    _Atomic uint32_t kind;  /* SHOAL_ACTOR_*; set at spawn */
    /* kind GROUP: its record, for senders (send.c); set [release] at spawn
     * before the actor is published, cleared when it ends. */
    _Atomic(struct shoal_group_s *) group;
} shoal_actor_t;

_Static_assert(sizeof(shoal_actor_t) == 64, "the sender-side record is one cache line");

/* The top bit of `limit`: someone waits for room in this actor (room.h).
 * Read the limit itself with shoal__actor_limit. */
#define SHOAL_LIMIT_ROOM 0x80000000u
static inline uint32_t shoal__actor_limit(const shoal_actor_t *a)
{
    return atomic_load_explicit(&a->limit, memory_order_relaxed) & ~SHOAL_LIMIT_ROOM;
}

/* A call made by this actor that is waiting for its reply or timeout. */
typedef struct shoal_pending_call_s {
    shoal_ref_t ref;
    uint64_t deadline; /* ns; UINT64_MAX: none */
    shoal_pid_t callee;
} shoal_pending_call_t;

/* Something an actor keeps alive while it lives (its plugin's code): release
 * runs once, after the actor has ended and its record is free. origin says
 * what it is, for a crash report (runtime/fault.h): "plugin NAME VERSION
 * (FILE)", a string that lives as long as `what` does; NULL: built in. */
typedef struct shoal_actor_hold_s {
    void (*release)(void *what);
    void *what;
    const char *origin;
} shoal_actor_hold_t;

/* What a source's actor sent (host/source.h), kept for it by the public
 * send entry points (send.c) when its ext->sends points here: `sent` the
 * messages accepted (SHOAL_OK), `refused` those refused for want of room
 * (ctx.h: shoal__rc_refused); sends to itself are not counted. Protocol: written with
 * relaxed fetch_adds by the thread running the actor (one thread at a
 * time), read with relaxed loads by the host (any thread): each is a
 * monotonic count on its own, no other memory is published through them.
 * The record that holds them (a group's record, group.h) outlives the actor. */
typedef struct shoal_send_counts_s {
    _Atomic uint64_t sent, refused;
} shoal_send_counts_t;

/* What only some actors need: allocated on demand. */
/* A member's own words (ext->member): what its group's kind keeps for it. */
#define SHOAL_MEMBER_WORDS 4u

typedef struct shoal_actor_ext_s {
    shoal_pid_t parent;
    shoal_actor_hold_t hold;
    shoal_pid_t *children;
    uint32_t nchildren;
    size_t children_cap;
    shoal_pending_call_t *calls;
    uint32_t ncalls;
    size_t calls_cap;
    /* The one timer that watches the calls' deadlines (call.c): armed for
     * call_timer_at (ns; 0: none armed). */
    shoal_timer_t call_timer;
    uint64_t call_timer_at;
    struct shoal_group_s *member_of; /* a member: its group (holds a reference) */
    /* What its group's kind keeps for it (zeroed at spawn, written only in
     * its turns): the member's own words, for as long as it lives. */
    uint64_t member[SHOAL_MEMBER_WORDS];
    bool retiring;              /* removed from its group: end when the mailbox is empty */
    bool listed;                /* a pull member its pool has listed (SHOAL_ENV_LISTED) */
    bool notify_start;          /* the parent waits for SHOAL_ENV_STARTED (not sent yet) */
    shoal_send_counts_t *sends; /* a source's: its sends are counted there (NULL: not) */
    struct shoal_held_s *held;  /* members it holds from checkout pools (held.h) */
    uint32_t nheld;
    size_t held_cap;
    /* Gated (shoal_spawn_t.gated) until SHOAL_ENV_OPEN: the messages of its
     * system mailbox it may not handle yet, moved out in the order they
     * came (linked through node.next; turn.c, actor.c, end.c). */
    bool gated;
    struct shoal_env_s *gate_head, *gate_tail;
} shoal_actor_ext_t;

typedef struct shoal_actor_back_s {
    /* One line each: the worker writes user_head at every pop and senders
     * read user_deq, so a back shared with a neighbour's (56 bytes apart,
     * as it was) had two workers on two cores writing one line. */
    _Alignas(64) shoal_mq_node_t *user_head;
    shoal_mq_node_t *sys_head;
    /* Here, not in the front: the worker checks the system mailbox before
     * every user message by reading its dummy node, and while no system
     * message has come that dummy is this stub, on the worker's own line. */
    shoal_mq_node_t sys_stub;
    _Atomic uint32_t user_deq; /* read by senders for the limit */
    uint32_t sys_deq;
    const shoal_behaviour_t *beh;
    void *state;
    shoal_actor_ext_t *ext;
} shoal_actor_back_t;

_Static_assert(sizeof(shoal_actor_back_t) == 64, "the worker-side record is one cache line");

/* A slot's whole record (header): the front first, so a front's address is
 * its record's. */
typedef struct shoal_actor_rec_s {
    _Alignas(128) shoal_actor_t front;
    shoal_actor_back_t back;
} shoal_actor_rec_t;

_Static_assert(sizeof(shoal_actor_rec_t) == 128, "a record is one 128-byte block");

static inline shoal_pid_t shoal__pid_make(uint32_t gen, uint32_t slot)
{
    return (shoal_pid_t)gen << 32 | slot;
}
static inline uint32_t shoal__pid_slot(shoal_pid_t pid) { return (uint32_t)pid; }
static inline uint32_t shoal__pid_gen(shoal_pid_t pid) { return (uint32_t)(pid >> 32); }

struct shoal_tcache_s;
struct shoal_worker_s;

/* What to spawn. parent may be SHOAL_PID_NONE, hold NULL. */
typedef struct shoal_spawn_s {
    shoal_pid_t parent;
    const shoal_behaviour_t *beh;
    const void *args;
    uint32_t limit; /* SHOAL_MAILBOX_UNBOUNDED or 1 .. SHOAL_MAILBOX_MAX */
    uint32_t kind;
    const shoal_actor_hold_t *hold;
    struct shoal_group_s *group;     /* kind GROUP: the record it runs */
    struct shoal_group_s *member_of; /* a member: its group (the reference passes to it) */
    const uint64_t *member_words;    /* ... and its first words (ext->member), or NULL: 0 */
    /* Tell the parent how the start went: one SHOAL_ENV_STARTED to it, with
     * status 0 once init has succeeded, or the reason the actor ended
     * before (its init failed or panicked, or it was stopped first) and the
     * error text. A group's own actor sends it itself when its members have
     * started (shoal__actor_started). */
    bool notify_start;
    shoal_send_counts_t *sends; /* count this actor's sends there (ext->sends), or NULL */
    /* Gated: init runs, then the actor handles nothing of its own until its
     * parent sends SHOAL_ENV_OPEN -- so that what a reload starts (a new
     * pool's workers, a swap's, a source's: pool/pool.h, opts held) sends
     * nothing before the reload commits. Its
     * user mailbox is not read meanwhile; what comes to its system mailbox
     * for its behaviour (priority messages, replies, timeouts, exits, ROOM)
     * is set aside in order and handled first at OPEN (its calls'
     * deadlines are looked at after that). STOP, INSPECT and
     * the runtime's own envelopes are carried out as ever; at its end what
     * was set aside is dropped as an ended actor's mailbox is (end.c). */
    bool gated;
} shoal_spawn_t;

/* Spawns. See shoal_runtime_spawn. On success the actor owns the hold
 * (released when it ends) and the member_of reference; on error the caller
 * still does. */
int shoal__actor_spawn_as(shoal_runtime_t *rt, struct shoal_tcache_s *tc, const shoal_spawn_t *s,
                          shoal_pid_t *pid);
/* The same, for the common case. */
int shoal__actor_spawn(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_pid_t parent,
                       const shoal_behaviour_t *beh, const void *args, uint32_t limit,
                       uint32_t kind, const shoal_actor_hold_t *hold, shoal_pid_t *pid);

struct shoal_ctx_s;
/* The running actor tells its parent how its start went, if the parent
 * asked for it (shoal_spawn_t.notify_start) and was not told yet: status 0,
 * or why it failed with `why` (NULL or "" for none) as the text. */
void shoal__actor_started(struct shoal_ctx_s *ctx, int status, const char *why);

/* The running actor ends (end.c): after its last callback of a turn. */
void shoal__actor_end(struct shoal_ctx_s *ctx);

/* Runs one turn of `a` on worker w (the worker popped it from a ring).
 * A panic in it (shoal_panic: longjmp to w->ctx.panic) lands where the
 * worker's loop set that jump point (sched/worker.c), which then calls
 * shoal__actor_unwound: the turn is finished there. One setjmp per
 * worker thread, not one per turn. */
void shoal__actor_run(struct shoal_worker_s *w, shoal_actor_t *a);
/* After a panic unwound a turn of w->ctx.a: what the panic skipped, then
 * the end of the turn, as shoal__actor_run would have ended it. */
void shoal__actor_unwound(struct shoal_worker_s *w);

/* Frees an ended actor's record for reuse (both mailboxes already closed and
 * drained). */
void shoal__actor_release(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_actor_t *a);

/* Pops the next envelope of a mailbox, freeing the retired dummy. */
shoal_env_t *shoal__actor_pop(struct shoal_tcache_s *tc, shoal_actor_t *a, bool sys);

/* Debug owner check: claim `a` for worker id; false if another holds it. */
bool shoal__owner_enter(shoal_actor_t *a, uint32_t worker_id);
void shoal__owner_leave(shoal_actor_t *a);

#endif
