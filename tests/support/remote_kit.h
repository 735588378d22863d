/* remote_kit.h - what the suites of an isolated pool's supervisor share
 * (test_remote_supervisor, test_remote_calls, test_remote_deliver): a
 * real pool with `isolation: process` in a real runtime, whose children
 * are the suite's own executable run again (--fake-child) -- a stand-in
 * for the host's worker process that attaches the channel, says UP,
 * counts every message it takes from its ring as handled (and answers a
 * call with its payload) -- but for a call of type RK_FAKE_HOLD, which it
 * holds unanswered and unsettled -- and, told to drain, finishes once its
 * ring is empty and exits 0. Casts of two types make it misbehave as a
 * plugin in the host's child may: RK_FAKE_SEND sends messages to a PID of
 * the parent, RK_FAKE_SCRIBBLE writes garbage into its ring to the parent.
 * Their launch (rk_fake_of) counts its calls and releases and can be held
 * on a gate (the supervisor waits inside it).
 *
 * A "reader" thread stands for a sender: it enters a read-side region
 * (runtime/qsbr.h), finds the child new work goes to as
 * shoal__remote_forward does, and stays there for as long as the test
 * says -- as a dispatcher thread does for a whole turn, or a sender
 * between its look at `cur` and its copy into the ring. Then it does the
 * rest of what a forward does (or nothing) and leaves.
 *
 * Every wait is bounded; a bug fails a case, it does not hang the suite.
 */
#ifndef SHOAL_TEST_REMOTE_KIT_H
#define SHOAL_TEST_REMOTE_KIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pool/pool.h"
#include "pool/remote.h"
#include "pool/remote_child.h"
#include "shoal/shoal.h"

#define RK_WAIT_S 20.0
#define RK_TMO_MS 20000u

/* A call of this type the stand-in child holds: it never answers it, nor
 * counts it as settled. Any other call it answers with its payload (a
 * REPLY record, as the host's child sends one) and counts as handled. */
#define RK_FAKE_HOLD 0xF001u

/* A cast of this type, whose payload is a rk_fake_send_t, makes the stand-in
 * child send `copies` messages to `to` (a PID of the parent), as a worker
 * of the host's child sends them: SEND records. */
#define RK_FAKE_SEND 0xF002u
typedef struct fake_send_s {
    uint64_t to;
    uint32_t copies;
} rk_fake_send_t;

/* A cast of this type, whose payload is a uint32_t of milliseconds, makes
 * the stand-in child write garbage over the whole ring the parent reads its
 * records from, that long after (a plugin's stray write into the shared
 * memory); it then stays 10 s more, drained or not, unless killed. */
#define RK_FAKE_SCRIBBLE 0xF003u
#define RK_FAKE_LINGER_S 10.0

/* The launch of the stand-in children: its calls and releases counted;
 * a gate it can be held on (the supervisor waits inside it); failing on
 * demand. */
typedef struct fake_s {
    atomic_int launches, releases;
    atomic_int gate;    /* set: a launch waits until it is cleared */
    atomic_int waiting; /* a launch waits at the gate */
    atomic_int fail;    /* set: launches fail (no process) */
    atomic_int pid;     /* the last child it started */
    /* set: the children it starts from now on say UP only once this file
     * exists (a child slow to start, at a moment the test chooses) */
    _Atomic(const char *) up_after;
    /* set: the children it starts from now on say FAILED ("fake: no start
     * today") where they would say UP, and wait to be killed */
    atomic_int fail_start;
} rk_fake_t;

/* A runtime and an isolated pool in it (rk_rig_up). */
typedef struct rig_s {
    shoal_runtime_t *rt;
    shoal_pid_t pid;
    shoal_pool_t *p; /* with a reference */
    shoal_remote_t *r;
} rk_rig_t;

/* RK_GO: copy a message into the ring of the child it found, then leave;
 * RK_TOUCH: read that child's state in its channel, then leave; RK_LEAVE:
 * leave. */
enum { RK_IN = 1, RK_GO = 2, RK_TOUCH = 3, RK_LEAVE = 4, RK_OUT = 5 };

typedef struct reader_s {
    rk_rig_t *g;
    atomic_int stage; /* RK_IN: in its region, found cur; then told; RK_OUT: left */
    child_t *seen;    /* the child it found (read by others after RK_IN) */
    int send_rc;      /* RK_GO: what its copy into seen's ring returned */
    uint32_t state;   /* RK_TOUCH: what it read */
} rk_reader_t;

/* A thread that calls the pool, as a shoalctl call does through shoald. */
typedef struct caller_s {
    rk_rig_t *g;
    uint32_t type;
    uint64_t timeout_ms;
    int rc;       /* shoal_runtime_call's */
    int status;   /* the answer's (rc SHOAL_OK) */
    char data[8]; /* its payload (status 0) */
    double took;  /* seconds */
    atomic_int done;
} rk_caller_t;

/* The stand-in child's main (its channel at fds 3, 4, 5, as the host's
 * child has it): a suite's main runs it, with its arguments, when its
 * first argument is --fake-child, as rk_fake_of's launch starts it (then
 * up_after's file or "-", and --fail-start or nothing). */
int rk_fake_child(int argc, char **argv);
/* A launch (remote.h) of stand-in children counted in f. */
shoal_remote_launch_t rk_fake_of(rk_fake_t *f);

/* Whether process pid is there and has not ended (not a zombie either). */
bool rk_running(int pid);
/* How many channels (memfds named shoal:chan) this process has open. */
int rk_channels_open(void);
/* How many sockets this process has open: a channel's doorbell ends. */
int rk_sockets_open(void);

/* A runtime (its log kept) and an isolated pool "iso" of 1 whose first
 * child comes from f; false (asserted, and the runtime destroyed) if it
 * did not start. rk_rig_down ends what rk_rig_up began. */
bool rk_rig_up(rk_rig_t *g, rk_fake_t *f);
/* As rk_rig_up, the pool's restart budget (10 restarts) within_ms long
 * (rk_rig_up: 10 s): a degraded pool recovers within_ms after its last
 * death, once it serves. */
bool rk_rig_up_within(rk_rig_t *g, rk_fake_t *f, uint64_t within_ms);
void rk_rig_down(rk_rig_t *g);
/* The host's PREPARE of new code whose child comes from f: the swap's
 * status (SHOAL_OK once it is up), its token in *token; then its COMMIT
 * or ABORT (type). */
int rk_swap_prepare(rk_rig_t *g, rk_fake_t *f, uint64_t *token);
int rk_swap_step(rk_rig_t *g, uint32_t type, uint64_t token);
/* The child new work goes to, as inspect says (0: none); the children
 * that died so far. */
int rk_current_pid(rk_rig_t *g);
uint64_t rk_died(rk_rig_t *g);

/* A reader started: in its region, it has found the current child
 * (RK_IN). rk_reader_end tells it to go on (RK_GO or RK_LEAVE, or
 * RK_TOUCH) and joins it. */
void rk_reader_start(rk_reader_t *rd, rk_rig_t *g, pthread_t *t);
void rk_reader_end(rk_reader_t *rd, pthread_t t, int stage);

/* n callers started on g's pool, each with a call of `type` and
 * `timeout_ms`; then, until each has its answer (seconds at most),
 * whether they all have -- the threads are joined either way. */
void rk_callers_start(rk_caller_t *c, pthread_t *t, int n, rk_rig_t *g, uint32_t type,
                      uint64_t timeout_ms);
bool rk_callers_answered(rk_caller_t *c, pthread_t *t, int n, double seconds);
/* One call of type 1 to g's pool, from a thread: answered, SHOAL_OK
 * (asserted) -- the child new work goes to serves. */
void rk_call_answered(rk_rig_t *g);

#endif
