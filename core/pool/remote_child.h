/* remote_child.h - what remote.c (the senders' side, the counts, the
 * commands) and remote_supervisor.c (the thread that starts, feeds and
 * buries the children, with remote_grace.c, remote_deliver.c and
 * remote_bell.c) share about a pool whose workers run in a child
 * process: the records and who touches what (remote.c's header). Private
 * to core/pool/.
 */
#ifndef SHOAL_POOL_REMOTE_CHILD_H
#define SHOAL_POOL_REMOTE_CHILD_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool/pool.h"
#include "pool/remote.h"
#include "runtime/qsbr.h"

enum {
    CMD_RESTART = 1u << 0,
    CMD_DRAIN = 1u << 1,
    CMD_SWAP = 1u << 2, /* swap steps are queued (ops, below) */
    CMD_CONTROL = 1u << 3,
    CMD_STOP = 1u << 4,
    CMD_ROOM = 1u << 5, /* a sender waits for room: look (remote.h: ROOM) */
};

/* A swap's step, queued for the supervisor in the order the pool's actor
 * gave it (remote.c: SWAP STEPS). */
typedef enum { OP_PREPARE = 1, OP_COMMIT, OP_ABORT } op_kind_t;
typedef struct remote_op_s {
    op_kind_t kind;
    shoal_remote_launch_t launch; /* OP_PREPARE: the new child's (taken over) */
} remote_op_t;

/* The most steps ever queued: the end of one swap and the PREPARE of the
 * next (remote.c: SWAP STEPS); room for more, as a margin. */
#define SHOAL__REMOTE_OPS 4

/* CURRENT: takes new work once up; NEXT: a swap's, prepared; REPLACING:
 * started from the pool's launch at a commit whose prepared child was
 * lost, takes over from the current one once up (remote_supervisor.c:
 * THE REPLACEMENT); RETIRING: drains, or was killed. */
typedef enum { ROLE_CURRENT, ROLE_NEXT, ROLE_REPLACING, ROLE_RETIRING } role_t;

/* A child's `pushed` with this bit set: it has ended and its burial took
 * its count (remote_supervisor.c, child_ended). A sender that finds the
 * bit after its increment puts nothing into the ring; one that must take
 * its count back and finds the bit cannot: its message was counted as one
 * the child held (remote.c, unpush). */
#define SHOAL__REMOTE_CLOSED (UINT64_C(1) << 63)

typedef struct child_s {
    shoal_chan_t *chan;
    shoal_remote_area_t *area;
    shoal_pool_stripe_t *stripes;
    uint32_t stripes_cap;
    pid_t pid;
    int pidfd;
    role_t role;
    bool up;
    bool drain_asked;
    bool drain_pending; /* to be told to drain once its grace period has passed */
    bool room_armed;    /* ROOM: armed at room_at, no record since */
    bool nonsense;      /* its channel was found broken: said, and it was killed */
    bool stopped;       /* killed as one that never served (retire_killed): its end is not news */
    /* Its grace period (remote_grace.c: THE GRACE PERIOD). */
    bool published;    /* it was `cur` once: senders may have found it */
    bool grace_begun;  /* ... it no longer is, since snap was taken */
    bool snap_pending; /* ... but snap could not be taken yet (no memory) */
    bool graced;       /* ... and every region in snap has ended */
    shoal_qsbr_snap_t snap;
    uint64_t room_at;
    uint64_t started_ns;
    size_t ring_bytes; /* each of its channel's rings */
    /* Its workers' messages to this runtime's actors refused here
     * (remote_supervisor.c: REFUSED SENDS): how many not said yet, when
     * the last line was, the last one's receiver and error. */
    uint64_t sends_unsaid, sends_said_ns;
    shoal_pid_t sends_last_to;
    int sends_last_rc;
    /* Its doorbell (remote_bell.c), the supervisor's: where it is in this
     * wake's poll (its index + 1; 0: not polled), the rings cleared this
     * wake, the rings less the records it sent (the window begun at
     * bell_window_ns), until when it is not listened to, how many times
     * that was, and when it was last said. */
    unsigned bell_slot, bell_rang;
    int64_t bell_balance;
    uint64_t bell_window_ns, deaf_until, deaf_times, deaf_said_ns;
    /* Its calls (remote_calls.c), under the pool's calls_lock: set by its
     * burial, when it answered the calls it held with calls_status. */
    bool calls_closed;
    int calls_status;
    /* written by senders */
    alignas(64) _Atomic uint64_t pushed;
    _Atomic uint64_t settled_seen; /* a recent sum of its settled counts */
    struct child_s *next;
} child_t;

/* A call a child holds (remote_calls.c): made by `caller` with `ref`,
 * copied into child's ring. child NULL: a free slot. */
typedef struct remote_call_s {
    shoal_pid_t caller;
    shoal_ref_t ref;
    child_t *child;
} remote_call_t;

/* c's `pushed`, without SHOAL__REMOTE_CLOSED. */
static inline uint64_t shoal__remote_pushed(child_t *c)
{
    return atomic_load_explicit(&c->pushed, memory_order_relaxed) & ~SHOAL__REMOTE_CLOSED;
}

struct shoal_remote_s {
    shoal_runtime_t *rt;
    shoal_pool_t *p;
    /* read by senders */
    alignas(64) _Atomic(child_t *) cur;
    _Atomic uint64_t cap; /* size x mailbox; 0: no limit */
    /* the ended children's counts */
    alignas(64) _Atomic uint64_t done_handled;
    _Atomic uint64_t done_failed, done_dropped;
    _Atomic uint64_t done_restarts;     /* their workers' restarts inside them */
    _Atomic uint32_t live_size;         /* the current child's pool size, as it says */
    _Atomic uint64_t started_n, died_n; /* shoal__remote_info */
    _Atomic uint64_t sends_dropped;     /* ... and REFUSED SENDS (remote_supervisor.c) */
    _Atomic uint64_t bells_deafened;    /* ... and doorbells rung for nothing (remote_bell.c) */
    /* the calls the children hold (remote_calls.c), under calls_lock */
    alignas(64) pthread_mutex_t calls_lock;
    remote_call_t *calls; /* calls_cap slots (a power of two, or 0: none yet) */
    uint32_t calls_cap, calls_n;
    /* commands from the pool's actor */
    alignas(64) pthread_mutex_t lock;
    uint32_t cmds;
    uint32_t want_size, want_mailbox;
    remote_op_t ops[SHOAL__REMOTE_OPS]; /* swap steps, oldest first */
    uint32_t nops;
    bool staged; /* a PREPARE was queued whose COMMIT or ABORT was not */
    int cmd_efd;
    pthread_t thread;
    bool started, stopped;
    /* the supervisor's */
    shoal_remote_launch_t launch;      /* what the pool's children start from */
    shoal_remote_launch_t next_launch; /* a prepared swap's, until its commit or abort */
    child_t *children;
    child_t *buried;        /* ended, their channels waiting for a grace period (or the record) */
    unsigned grace_poll_ms; /* the poll's timeout while a grace period is pending */
    bool draining;          /* a drain was asked: DRAINED when the last child is gone */
    /* Test-only: how much longer a burial keeps `lock` (remote.c,
     * SHOAL_TEST_HOLD_COUNTS_MS); 0, as always outside the tests. */
    unsigned test_hold_ms;
};

/* What child c has settled, from its stripes, each count clamped so that
 * they never add up to more than the `pushed` it was sent. */
void shoal__remote_settled(child_t *c, uint64_t pushed, uint64_t *handled, uint64_t *failed,
                           uint64_t *dropped);
/* Whether child c has room (remote.h: ROOM); if not, *at is the settled
 * count that would leave it (remote.c). */
bool shoal__remote_child_room(shoal_remote_t *r, child_t *c, uint64_t *at);
/* Sets command bits for the supervisor and wakes it (remote.c). */
void shoal__remote_command(shoal_remote_t *r, uint32_t cmd);
/* THE CALLS A CHILD HOLDS (remote_calls.c: its protocol). A sender's call
 * to c, counted in c's `pushed` (CLOSED not set), is written in before its
 * copy into c's ring: true; false when the table is full, or c has ended
 * (then shoal__remote_call_refuse, not written). */
bool shoal__remote_call_hold(shoal_remote_t *r, child_t *c, shoal_pid_t caller, shoal_ref_t ref);
/* A call to c that did not go into c's ring (`refused`, SHOAL_EBUSY or
 * SHOAL_EINVAL; held: it was written in): taken out, its count taken back,
 * `refused` returned, e the caller's again -- unless c has ended and its
 * burial counted it as held: then it stands as sent and is answered with
 * c's ending status (by the burial if it was written in, else here), e is
 * freed, and the answer is SHOAL_OK. */
int shoal__remote_call_refuse(shoal_remote_t *r, child_t *c, struct shoal_tcache_s *tc,
                              struct shoal_env_s *e, int refused, bool held);
/* The supervisor: a REPLY from c to `to` for `ref`. True if it answers a
 * call c holds (taken out: deliver it); false if it answers none (never
 * made, answered already, or its caller gave up: drop it). */
bool shoal__remote_call_take(shoal_remote_t *r, child_t *c, shoal_pid_t to, shoal_ref_t ref);
/* The supervisor, burying c: closes its count (sets SHOAL__REMOTE_CLOSED
 * in `pushed`; returns the count without it) and answers every call it
 * still holds with `status`, from the pool, at once. */
uint64_t shoal__remote_close(shoal_remote_t *r, child_t *c, struct shoal_tcache_s *tc, int status);
/* The table's memory, with the record (every child is closed by then). */
void shoal__remote_calls_free(shoal_remote_t *r);

/* remote_grace.c, on the supervisor's thread (THE GRACE PERIOD): c takes
 * new work (publish), or takes none from now on and waits out its grace
 * period (unpublish), after which it is told to drain (ask_drain);
 * whether its grace period has passed (a look, never a wait); on every
 * wake, the drains and frees whose periods have passed (tend: the poll's
 * timeout, short while one is pending, SHOAL__REMOTE_POLL_MS at most). */
#define SHOAL__REMOTE_POLL_MS 100
void shoal__remote_publish(shoal_remote_t *r, child_t *c);
void shoal__remote_unpublish(shoal_remote_t *r, child_t *c);
void shoal__remote_ask_drain(shoal_remote_t *r, child_t *c);
bool shoal__remote_graced(shoal_remote_t *r, child_t *c);
int shoal__remote_tend(shoal_remote_t *r);
/* A child's channel, pidfd and record go. */
void shoal__remote_child_free(child_t *c);
/* Frees the buried children's channels, whatever their grace periods:
 * with the record, once no sender can read it. */
void shoal__remote_free_buried(shoal_remote_t *r);
/* The supervisor thread's body (remote_supervisor.c). */
void *shoal__remote_supervise(void *arg);
/* remote_deliver.c, on the supervisor's thread: what c sent back (4096
 * records at most, or all its ring holds once it has ended: how many
 * records it took); the refused sends of a burst not said yet (ending:
 * whatever the second); the look for room for the producers waiting on
 * the pool. */
size_t shoal__remote_deliver(shoal_remote_t *r, child_t *c, struct shoal_tcache_s *tc, bool all);
void shoal__remote_sends_say(shoal_remote_t *r, child_t *c, bool ending);
void shoal__remote_room_look(shoal_remote_t *r, struct shoal_tcache_s *tc);
/* remote_bell.c, on the supervisor's thread (A DOORBELL RUNG FOR NOTHING):
 * whether c's doorbell is listened to at `now`; a wake's account of it --
 * `rang` rings cleared from its doorbell, `got` records taken from its
 * ring. While a child is not listened to, the supervisor sleeps at most
 * SHOAL__REMOTE_DEAF_POLL_MS. */
#define SHOAL__REMOTE_DEAF_POLL_MS 10
bool shoal__remote_bell_heard(const child_t *c, uint64_t now);
void shoal__remote_bell_count(shoal_remote_t *r, child_t *c, unsigned rang, size_t got,
                              uint64_t now);

#endif
