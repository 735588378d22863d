/* remote.h - a pool whose workers run in a child process (`isolation:
 * process`, after nginx's master and workers).
 *
 * In the parent the pool is a pool like any other -- a PID, a record, its
 * own actor for priority traffic -- but it has no workers of its own: a
 * normal send or call to it is copied, on the sender's thread, into the
 * parent-to-child ring of a channel (ipc/chan.h) and the child process
 * runs an ordinary pool of the workers (host/isolated.c) behind a bridge
 * that feeds it from the ring. What the child's workers send back -- a
 * reply, or a message to a PID of the parent (SHOAL__PID_REMOTE in the
 * child) -- comes back in the other ring and is delivered here.
 *
 * Senders see what they would see in-process: SHOAL_OK, or SHOAL_EBUSY at
 * once when the child holds size x mailbox messages (counted as the pool's
 * unhandled), calls answered with the original ref, the sender kept. But
 * for size: a payload over SHOAL_REMOTE_PAYLOAD_MAX never fits the ring
 * and is refused for good, SHOAL_EINVAL at once (unhandled too), so that no
 * sender waits for room that cannot come; the same bound holds for what
 * the child sends back (host/isolated.c: a reply too large reaches its
 * caller as the status SHOAL_EINVAL, a send too large is refused so).
 *
 * One supervisor thread per such pool (remote.c) starts the child (the
 * host's launch function), delivers what comes back, and watches the
 * child's pidfd. The child counts every message its workers settle, one by
 * one, in counters that live in the channel's shared area; when the child
 * dies, the messages it held -- pushed into its ring and not settled -- are
 * counted as failed, exactly, the calls it held are answered at once (CALLS,
 * below), and the pool's actor restarts it under the pool's restart
 * budget. A reload that changes the code starts a second
 * child beside the first (PREPARE), and COMMIT sends new work to it while
 * the first drains and exits.
 *
 * The child is not trusted: whatever it writes into the shared memory, the
 * parent reads it only through checks (chan.h), and counts it reports are
 * clamped to what was sent to it.
 *
 * ROOM (actor/room.h: a refused sender waits to be told, never polls).
 * The pool's waiters are in room.h's registry, on the pool's PID. Room
 * means the current child holds at most size x mailbox less a quarter of
 * it (at least one) unsettled, and a quarter of its ring is free.
 *   the ask     forward.c, in the pool's read-side region: after listing
 *               the waiter, shoal__remote_room looks at the current child;
 *               room: tell now; none: shoal__remote_room_wake sets CMD_ROOM
 *               under `lock` and wakes the supervisor, so its next look
 *               comes after the listing (the mutex orders the two).
 *   the look    the supervisor, after every wake (a command, a record from
 *               a child, a child's end, its POLL_MS timeout), when the
 *               pool's flag says someone waits: room in the current child
 *               tells them; else it arms that child -- room_at, the settled
 *               count that leaves room [relaxed], then room_seq [release;
 *               pairs with the bridge's acquire] -- and sends it a
 *               SHOAL_REMOTE_ROOM record of no bytes: a child asleep on its
 *               ring looks for a record before it sleeps, not at the words
 *               (which alone could go unseen for its 100 ms nap), and a
 *               ring too full to take the record keeps it awake anyway.
 *               A child published (started, restarted, committed) is
 *               looked at in the same wake.
 *   the child   its bridge (host/isolated.c), armed by a new room_seq,
 *               sends one SHOAL_REMOTE_ROOM once its settled count reaches
 *               room_at and its ring has moved (it took records, or it is
 *               empty), looking every 100 us while armed (as it does while
 *               its pool is full); the record wakes the supervisor, which
 *               looks again and tells, or arms again.
 *   untrusted   a ROOM record only makes the supervisor look at counts it
 *               clamps; a child that never sends one leaves its waiters to
 *               their deadlines, or to the next child (published: looked
 *               at). An actor's waiter is told SHOAL_ENOPROC when the pool
 *               ends (room.h: the end).
 *
 * CALLS (remote_calls.c). A call is written in the pool's table of calls --
 * its caller, its ref, the child -- before it is copied into the child's
 * ring, and taken out when the child's REPLY comes back, which is then
 * delivered. A REPLY that answers no call in the table (never made,
 * answered already, or its caller gave up: shoal__remote_call_gone) is
 * dropped, counted as late: a child answers each call once, and only the
 * calls it was given. When a child ends, each call it still holds is
 * answered at once from the pool with SHOAL_EFAILED -- what an in-process
 * worker's caller hears when its handler fails; the child's messages are
 * counted as failed -- or, when the pool stops (they are counted as
 * dropped), with SHOAL_ENOPROC, as an ending actor answers the calls it
 * still has. No caller waits for its timeout, or for ever. The table holds
 * at most SHOAL_REMOTE_CALLS_MAX calls: one more is refused, SHOAL_EBUSY,
 * as by a full child. A cast is never written in.
 *
 * SENDS (remote_supervisor.c: REFUSED SENDS). A message a child's worker
 * sends to an actor of this runtime went into the ring with SHOAL_OK: the
 * worker cannot wait for what the receiver says. The supervisor delivers
 * it as any send; one the receiver refuses (its mailbox full, or it has
 * ended) is dropped -- never delivered over the receiver's limit: nothing
 * would then hold back a child that sends faster than the receiver
 * handles, and its mailbox would grow without end -- and is counted
 * (shoal__remote_info's sends_dropped; and, as any send, in the runtime's
 * refused or noproc, and a pool receiver's unhandled) and logged: the
 * first of a burst at once, the rest once a second while it goes on.
 */
#ifndef SHOAL_POOL_REMOTE_H
#define SHOAL_POOL_REMOTE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/chan.h"

struct shoal_pool_s;
struct shoal_pool_stripe_s;
struct shoal_tcache_s;
struct shoal_env_s;
struct shoal_ctx_s;
struct shoal_pool_stats_s;
struct shoal_pool_hist_s;

/* ---- the channel's contents (both processes) ------------------------------ */

/* Record tags. Parent to child: a message for the pool. Child to parent: a
 * reply to a call, or a message to a parent's PID, or a status change. */
enum {
    SHOAL_REMOTE_CAST = 1, /* shoal_remote_msg_t + payload */
    SHOAL_REMOTE_CALL = 2,
    SHOAL_REMOTE_REPLY = 3,  /* shoal_remote_msg_t (ref, status in flags) + payload */
    SHOAL_REMOTE_SEND = 4,   /* shoal_remote_msg_t (to) + payload */
    SHOAL_REMOTE_STATUS = 5, /* nothing: the child's status changed (wakes the parent) */
    SHOAL_REMOTE_ROOM = 6    /* nothing: to the child, a wake for room_seq; from it, it
                              * settled up to room_at (ROOM, above) */
};

#define SHOAL_REMOTE_MSG_PRIORITY 0x1u /* SEND: to the system mailbox */
#define SHOAL_REMOTE_MSG_STATUS 0x2u   /* REPLY: type is an error status, no payload */

typedef struct shoal_remote_msg_s {
    uint64_t from; /* CAST, CALL: the sender in the parent (SHOAL_PID_NONE: a thread) */
    uint64_t to;   /* REPLY, SEND: the receiver in the parent */
    uint64_t ref;  /* CALL, REPLY */
    uint32_t type;
    uint32_t flags; /* SHOAL_REMOTE_MSG_* */
} shoal_remote_msg_t;

/* The smallest ring a child is given (remote_supervisor.c, ring_for: more
 * for a larger size x mailbox), and the largest payload a message carries
 * either way: its record, shoal_remote_msg_t then the payload, must fit
 * the smallest ring (chan.h: SHOAL_CHAN_LEN_MAX), whichever child it
 * meets. One number for every isolated pool, documented (README.md,
 * shoal.yaml(5), shoal/ctx.h): 512 KiB less 48 bytes. */
#define SHOAL_REMOTE_RING_MIN (1u << 20)
#define SHOAL_REMOTE_PAYLOAD_MAX                                                                   \
    (SHOAL_CHAN_LEN_MAX(SHOAL_REMOTE_RING_MIN) - sizeof(shoal_remote_msg_t))
_Static_assert(SHOAL_REMOTE_PAYLOAD_MAX == 524240u, "the documented limit");

/* The most calls an isolated pool's children hold unanswered at once
 * (CALLS, above): the table's bound, 3 MiB at most. */
#define SHOAL_REMOTE_CALLS_MAX (1u << 16)

/* The child's state (shoal_remote_area_t.state). */
enum {
    SHOAL_REMOTE_STARTING = 0,
    SHOAL_REMOTE_UP = 1,      /* its pool has started: it takes messages */
    SHOAL_REMOTE_FAILED = 2,  /* its pool could not start: why says why */
    SHOAL_REMOTE_DRAINED = 3, /* drained on request: it exits */
};

/* The channel's user area. The parent writes `control`; the child writes
 * the rest. Each is a value on its own [relaxed], but for state: the
 * child writes start_rc and why, then state [release]; the parent reads
 * state [acquire], then them. */
typedef struct shoal_remote_area_s {
    /* parent -> child */
    alignas(64) _Atomic uint32_t want_size;
    _Atomic uint32_t want_mailbox;
    _Atomic uint32_t want_drain;
    _Atomic uint32_t want_seq; /* bumped after each change: the child applies on a new value */
    _Atomic uint32_t room_seq; /* bumped when a sender waits for room (ROOM, above) */
    _Atomic uint64_t room_at;  /* the settled count that leaves room, written before room_seq */
    /* child -> parent */
    alignas(64) _Atomic uint32_t state;
    _Atomic int32_t start_rc;
    char why[256];
    _Atomic uint32_t pool_size, pool_state, threads;
    _Atomic uint64_t restarts;
    _Atomic uint32_t nstripes; /* how many of stripes[] the child counts into */
    uint32_t stripes_cap;      /* written by the parent before the child starts */
    /* followed by stripes_cap shoal_pool_stripe_t, 64-byte aligned */
} shoal_remote_area_t;

/* Bytes of user area for a pool whose child counts into nstripes stripes. */
size_t shoal__remote_area_bytes(uint32_t nstripes);
/* The stripes after the area's header. */
struct shoal_pool_stripe_s *shoal__remote_area_stripes(shoal_remote_area_t *a);

/* ---- the parent's side -------------------------------------------------------- */

/* How the host starts a child for the pool: launch runs on the supervisor
 * thread with the channel's three descriptors (close-on-exec: it hands them
 * to the child itself, before it returns: the parent closes its copies of
 * the child's doorbell ends then, chan.h: shoal__chan_handed) and returns
 * SHOAL_OK with the child's pid and a pidfd for it, or an error with why.
 * The pool keeps what it is given until release(user). nstripes: what the
 * child's runtime counts into. */
typedef struct shoal_remote_launch_s {
    int (*launch)(void *user, const int chan_fds[3], pid_t *pid, int *pidfd, char *why,
                  size_t why_size);
    void (*release)(void *user);
    void *user;
    uint32_t nstripes;
} shoal_remote_launch_t;

typedef struct shoal_remote_s shoal_remote_t;

/* A pool record's remote part, from the pool's spawn (launch is taken
 * over: released with the remote). Nothing runs until start. */
shoal_remote_t *shoal__remote_new(struct shoal_pool_s *p, const shoal_remote_launch_t *launch);
/* The pool's actor, in its init: start the supervisor thread and the
 * first child. The pool hears how it went (a notice, pool.c). */
int shoal__remote_start(struct shoal_ctx_s *ctx, shoal_remote_t *r);
/* Stops every child (killed if still running: what it held is counted as
 * dropped) and joins the supervisor. The pool's actor, when it ends. NULL
 * is fine. */
void shoal__remote_stop(shoal_remote_t *r);
/* Frees it (stopping it first if need be): with the record, once no
 * sender can read it. NULL is fine. */
void shoal__remote_free(shoal_remote_t *r);

/* The sender's side (forward.c): copies e into the child's ring (a call
 * is written in the table of calls first: CALLS, above). SHOAL_OK (e is
 * freed), SHOAL_EBUSY (no child up, or it holds its capacity, or its ring
 * is full, or, for a call, the table is: counted by the caller),
 * SHOAL_EINVAL (its payload is over SHOAL_REMOTE_PAYLOAD_MAX: it never
 * fits; counted by the caller too), e still the caller's then. A child
 * that ends while e is on its way counts it as one it held (failed; a
 * call is answered SHOAL_EFAILED) and the answer is SHOAL_OK, or it never
 * gets it (SHOAL_EBUSY): never both, never neither. Inside the pool's
 * read-side region. */
int shoal__remote_forward(shoal_remote_t *r, struct shoal_tcache_s *tc, struct shoal_env_s *e);
/* caller's call `ref` to the pool timed out (shoal__call_gone): it is taken
 * out of the table of calls (CALLS, above); the child's reply, if it comes,
 * is dropped. Any thread. */
void shoal__remote_call_gone(shoal_remote_t *r, uint64_t caller, uint64_t ref);

/* ROOM (above). Whether the current child has room for a sender now:
 * inside the pool's read-side region. */
bool shoal__remote_room(shoal_remote_t *r);
/* A sender listed as a waiter found no room: the supervisor looks (and
 * arms the child) after this. */
void shoal__remote_room_wake(shoal_remote_t *r);

/* The counts the children settled (ended ones and the live ones'), each
 * clamped to what was pushed to it: into st's handled, failed, dropped and
 * latency samples, their latency histograms into *h (none when h is
 * NULL), their workers' restarts into worker_restarts (a degraded child
 * makes st degraded), and the child's pool_size. Any thread. */
void shoal__remote_sum(shoal_remote_t *r, struct shoal_pool_stats_s *st,
                       struct shoal_pool_hist_s *h);
/* The live children's latency histograms added into *h (an ended child's
 * go with it). Any thread. */
void shoal__remote_hist(shoal_remote_t *r, struct shoal_pool_hist_s *h);
/* As shoal__remote_sum, but gives up (false, st partly filled) when the
 * children's lock stays taken for patience_ms (the supervisor is busy with a
 * child): for the table, which must not wait. */
bool shoal__remote_sum_within(shoal_remote_t *r, struct shoal_pool_stats_s *st,
                              struct shoal_pool_hist_s *h, unsigned patience_ms);

/* What inspect shows of the processes: the child taking new work (0 when
 * none is up), how many were started and how many ended unasked (killed
 * by a signal, or exited when nobody told them to), how many messages
 * their workers sent to this runtime's actors were refused here and
 * dropped (SENDS, above), and how many times a child's doorbell, rung for
 * nothing, was not listened to for a while (remote_bell.c). Any thread. */
typedef struct shoal_remote_info_s {
    int pid;
    uint64_t started, died;
    uint64_t sends_dropped;
    uint64_t doorbell_deafened;
} shoal_remote_info_t;
void shoal__remote_info(shoal_remote_t *r, shoal_remote_info_t *info);

/* The pool's actor: a new size and mailbox for the child's pool (and the
 * capacity senders are held to). */
void shoal__remote_control(shoal_remote_t *r, uint32_t size, uint32_t mailbox);
/* The pool's actor: drain (the child drains its pool and exits; the pool
 * hears SHOAL_REMOTE_EV_DRAINED). */
void shoal__remote_drain(shoal_remote_t *r);
/* The pool's actor: start a child again (after it died, or to retry). */
void shoal__remote_restart(shoal_remote_t *r);
/* The pool's actor, for a worker swap: start a second child from launch
 * (taken over, whatever the answer) beside the first: SHOAL_OK, and
 * PREPARED or PREPARE_FAILED follows; SHOAL_EBUSY if too many steps wait
 * for the supervisor (remote.c: SWAP STEPS). commit: new work goes to it,
 * the first drains and exits; abort: it is stopped. Carried out in the
 * order given; commit and abort end the swap prepared last (nothing if
 * none is). */
int shoal__remote_prepare(shoal_remote_t *r, const shoal_remote_launch_t *launch);
void shoal__remote_commit(shoal_remote_t *r);
void shoal__remote_abort(shoal_remote_t *r);

/* What the supervisor tells the pool's actor: a priority message of type
 * SHOAL__POOL_REMOTE from SHOAL_PID_NONE carrying this. */
enum {
    SHOAL_REMOTE_EV_UP = 1,             /* the child's pool started */
    SHOAL_REMOTE_EV_START_FAILED = 2,   /* ... did not (status, why) */
    SHOAL_REMOTE_EV_DOWN = 3,           /* the child ended unexpectedly (status: how, held) */
    SHOAL_REMOTE_EV_DRAINED = 4,        /* it ended after a drain */
    SHOAL_REMOTE_EV_PREPARED = 5,       /* the swap's child started */
    SHOAL_REMOTE_EV_PREPARE_FAILED = 6, /* ... did not */
};
typedef struct shoal_remote_ev_s {
    uint32_t ev;
    int32_t status;
    uint64_t held; /* DOWN: messages it held, counted as failed */
    char why[256];
} shoal_remote_ev_t;

#endif
