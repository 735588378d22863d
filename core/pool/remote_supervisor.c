/* remote_supervisor.c - the supervisor thread of a pool whose workers run
 * in a child process (remote.h): it starts children (the host's launch
 * function), has what they send back delivered (remote_deliver.c),
 * applies the pool actor's commands, watches each child's pidfd and
 * settles a dead child's counts (what it held is failed, exactly; the
 * calls it held are answered: remote_calls.c). When an unpublished child
 * may drain, or its channel go: remote_grace.c. Who touches what:
 * remote.c's header.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "actor/call.h"
#include "actor/room.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "pool/remote_child.h"
#include "runtime/qsbr.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

#define START_TIMEOUT_NS (10 * 1000000000ull)

/* ---- the supervisor ------------------------------------------------------------- */

static void notify(shoal_remote_t *r, uint32_t ev, int status, uint64_t held, const char *why)
{
    shoal_remote_ev_t e = {.ev = ev, .status = status, .held = held};
    snprintf(e.why, sizeof e.why, "%s", why ? why : "");
    /* A priority message from no actor: the pool's actor ends only after
     * it has stopped us, so it is there to take it. */
    shoal_runtime_send_priority(r->rt, r->p->g.pid, SHOAL__POOL_REMOTE, &e, sizeof e);
}

/* A ring big enough for the messages the child may hold, and their
 * headers, with room to spare; within the channel's bounds. */
static size_t ring_for(uint64_t cap)
{
    uint64_t want = cap == 0 ? (16u << 20) : cap * 128u;
    size_t size = SHOAL_REMOTE_RING_MIN;
    while (size < want && size < (64u << 20))
        size <<= 1;
    return size;
}

/* Starts a child from launch; it joins the list, not yet up. */
static int child_start(shoal_remote_t *r, const shoal_remote_launch_t *launch, role_t role,
                       char *why, size_t why_size)
{
    child_t *c = calloc(1, sizeof *c);
    if (c == NULL) {
        snprintf(why, why_size, "out of memory");
        return SHOAL_ENOMEM;
    }
    c->pidfd = -1;
    c->role = role;
    pthread_mutex_lock(&r->lock);
    uint32_t size = r->want_size, mailbox = r->want_mailbox;
    pthread_mutex_unlock(&r->lock);
    uint64_t cap = atomic_load_explicit(&r->cap, memory_order_relaxed);
    c->ring_bytes = ring_for(cap);
    int rc =
        shoal__chan_create(c->ring_bytes, shoal__remote_area_bytes(launch->nstripes), &c->chan);
    if (rc != SHOAL_OK) {
        snprintf(why, why_size, "cannot make its channel: %s", shoal_strerror(rc));
        free(c);
        return rc;
    }
    c->area = shoal__chan_user(c->chan, NULL);
    c->stripes = shoal__remote_area_stripes(c->area);
    c->stripes_cap = launch->nstripes;
    c->area->stripes_cap = launch->nstripes;
    atomic_store_explicit(&c->area->want_size, size, memory_order_relaxed);
    atomic_store_explicit(&c->area->want_mailbox, mailbox, memory_order_relaxed);
    int fds[3];
    shoal__chan_fds(c->chan, fds);
    if ((rc = launch->launch(launch->user, fds, &c->pid, &c->pidfd, why, why_size)) != SHOAL_OK) {
        shoal__chan_destroy(c->chan);
        free(c);
        return rc;
    }
    shoal__chan_handed(c->chan); /* its process has its copies: ours of its ends go */
    c->started_ns = shoal__now_ns();
    atomic_fetch_add_explicit(&r->started_n, 1, memory_order_relaxed);
    pthread_mutex_lock(&r->lock);
    c->next = r->children;
    r->children = c;
    pthread_mutex_unlock(&r->lock);
    return SHOAL_OK;
}

static child_t *with_role(shoal_remote_t *r, role_t role)
{
    for (child_t *c = r->children; c != NULL; c = c->next)
        if (c->role == role)
            return c;
    return NULL;
}

/* Stops c (not up, or never to serve): its end is not news. */
static void retire_killed(child_t *c)
{
    c->role = ROLE_RETIRING;
    c->stopped = true;
    kill(c->pid, SIGKILL);
}

/* The current child old is to go: it drains and exits -- or, never up
 * (a restart still starting), is stopped: no sender ever found it, and
 * as one told to drain it would be out of reach of the start timeout
 * (check_start), for ever if its start hangs. */
static void retire(shoal_remote_t *r, child_t *old)
{
    if (!old->up) {
        retire_killed(old);
        return;
    }
    /* A sender that found old just before it was replaced may still be
     * copying into its ring (or have reserved a slot it has not stamped
     * yet, which reads as empty): old is told to drain only after its
     * grace period (shoal__remote_ask_drain), so its ring holds all it
     * will ever get when it looks. */
    old->role = ROLE_RETIRING;
    shoal__remote_ask_drain(r, old);
}

/* c takes new work from now on; the current one goes (retire). The pool's
 * actor hears UP unless the one before was up: it last heard DOWN (a
 * death, a failed start) and would count the pool down -- degraded, never
 * recovering -- for as long as c serves. */
static void take_over(shoal_remote_t *r, child_t *c)
{
    child_t *old = with_role(r, ROLE_CURRENT);
    bool was_up = old != NULL && old->up;
    c->role = ROLE_CURRENT;
    shoal__remote_publish(r, c);
    if (old != NULL)
        retire(r, old);
    if (!was_up)
        notify(r, SHOAL_REMOTE_EV_UP, SHOAL_OK, 0, NULL);
}

/* THE REPLACEMENT. A swap's child lost after it said PREPARED (it died, or
 * was killed, before the COMMIT reached us) leaves a pool committed to new
 * code with no child running it: the pool's record and the host's name the
 * new code from the commit on (swap.c), and nothing can take that back. So
 * the COMMIT does what it would have done with its child: the swap's
 * launch becomes the pool's, and a child from it is started as
 * ROLE_REPLACING, the current one serving on until it is up, when it takes
 * over (take_over) -- as an in-process commit fills up from the new code.
 * If it cannot start, the current one drains all the same (it runs code
 * the pool no longer has), and the pool's actor hears that its child is
 * down: it starts one again from the new code, under its restart budget
 * (replace_failed). If the current one dies first, the replacing one is
 * the current one from then on. */

/* The child meant to replace the current one will not (why). */
static void replace_failed(shoal_remote_t *r, const char *why)
{
    child_t *old = with_role(r, ROLE_CURRENT);
    shoal__log(r->rt, SHOAL_LOG_ERROR, r->p->g.pid, r->p->name,
               "the worker process of its new code did not come up (%s)%s", why,
               old == NULL ? ""
               : old->up   ? "; the one of the old code drains"
                           : "; the one of the old code, still starting, is stopped");
    if (old != NULL)
        retire(r, old);
    notify(r, SHOAL_REMOTE_EV_DOWN, SHOAL_EFAILED, 0, why);
}

/* Starts the replacement (above) from the pool's launch. */
static void replace(shoal_remote_t *r)
{
    char why[256];
    role_t role = with_role(r, ROLE_CURRENT) != NULL ? ROLE_REPLACING : ROLE_CURRENT;
    if (child_start(r, &r->launch, role, why, sizeof why) != SHOAL_OK)
        replace_failed(r, why);
}

/* What ended a child, for the log. */
static void ending(const siginfo_t *si, char *buf, size_t size, bool *clean)
{
    *clean = false;
    if (si->si_code == CLD_EXITED) {
        *clean = si->si_status == 0;
        snprintf(buf, size, "exited with status %d", si->si_status);
    } else {
        const char *name = sigabbrev_np(si->si_status);
        snprintf(buf, size, "was killed by SIG%s%s", name ? name : "?",
                 si->si_code == CLD_DUMPED ? " (core dumped)" : "");
    }
}

/* Sleeps ms, whatever interrupts it (the test-only hold in child_ended). */
static void hold_for(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A child has ended (its pidfd said so), and what it sent before is
 * delivered: reap it, settle its counts, answer the calls it held, say so,
 * and tell the pool's actor. stopping: the pool is going away (what it
 * held is dropped, not failed). */
static void child_ended(shoal_remote_t *r, child_t *c, shoal_tcache_t *tc, bool stopping)
{
    /* seq_cst: as shoal__remote_unpublish's (the reclaimer's store of qsbr.h's pair). */
    if (stopping) /* no grace: its channel waits for the record's (below) */
        atomic_store_explicit(&r->cur, NULL, memory_order_seq_cst);
    else
        shoal__remote_unpublish(r, c); /* its channel waits for its grace period (below) */
    siginfo_t si = {0};
    if (waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED) != 0)
        si.si_code = CLD_KILLED;
    /* Its count, final now: a sender still between its look at cur and its
     * copy (its region may last long after) finds CLOSED and pushes
     * nothing; one that counted before and then cannot take its count back
     * has its message stand as sent, counted in `held` below (remote.c,
     * unpush). So what it held is exact without waiting for the grace
     * period, and is said at once. The calls among them are answered now,
     * as held messages are counted: failed (SHOAL_EFAILED), or dropped at
     * the pool's stop (SHOAL_ENOPROC); one whose sender finds CLOSED later
     * is answered by that sender (remote_calls.c). */
    uint64_t pushed = shoal__remote_close(r, c, tc, stopping ? SHOAL_ENOPROC : SHOAL_EFAILED);
    shoal__remote_sends_say(r, c, true);
    uint64_t h, f, d;
    shoal__remote_settled(c, pushed, &h, &f, &d);
    uint64_t held = pushed - h - f - d;
    /* acquire: as check_start's (the child's set_state, host/isolated.c);
     * only the value is used here. */
    bool drained =
        atomic_load_explicit(&c->area->state, memory_order_acquire) == SHOAL_REMOTE_DRAINED;
    char how[96];
    bool clean;
    ending(&si, how, sizeof how, &clean);
    /* Out of the list (under the lock: shoal__remote_sum reads it) before
     * its counts move to the ended ones'. */
    pthread_mutex_lock(&r->lock);
    for (child_t **pp = &r->children; *pp != NULL; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    atomic_fetch_add_explicit(&r->done_handled, h, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->done_restarts,
                              atomic_load_explicit(&c->area->restarts, memory_order_relaxed),
                              memory_order_relaxed);
    atomic_fetch_add_explicit(stopping ? &r->done_dropped : &r->done_failed,
                              (stopping ? 0 : f) + held, memory_order_relaxed);
    atomic_fetch_add_explicit(stopping ? &r->done_failed : &r->done_dropped, stopping ? f : d,
                              memory_order_relaxed);
    if (stopping)
        atomic_fetch_add_explicit(&r->done_dropped, d, memory_order_relaxed);
    /* A death: not a drained child's end, nor one we stopped (it never
     * served, and held nothing), nor the pool's stop. */
    bool died = !(clean && drained) && !stopping && !c->stopped;
    if (r->test_hold_ms != 0 && died) /* test-only: remote.c */
        hold_for(r->test_hold_ms);
    pthread_mutex_unlock(&r->lock);
    if (died) {
        atomic_fetch_add_explicit(&r->died_n, 1, memory_order_relaxed);
        shoal__log(r->rt, SHOAL_LOG_ERROR, r->p->g.pid, r->p->name,
                   "isolated worker process %d %s; %" PRIu64
                   " message%s it held %s counted as failed (%" PRIu64 " handled, %" PRIu64
                   " failed before)",
                   (int)c->pid, how, held, held == 1 ? "" : "s", held == 1 ? "is" : "are", h, f);
    }
    role_t role = c->role;
    bool was_up = c->up;
    if (stopping || !shoal__remote_graced(r, c)) {
        /* A sender that found it may still be pushing into it: its channel
         * goes once its grace period has passed (shoal__remote_tend) -- or, at the pool's
         * stop, with the record, once no sender can read that
         * (shoal__remote_free). */
        c->next = r->buried;
        r->buried = c;
    } else {
        shoal__remote_child_free(c);
    }
    if (stopping)
        return;
    if (role == ROLE_NEXT) {
        notify(r, SHOAL_REMOTE_EV_PREPARE_FAILED, SHOAL_EFAILED, 0, how);
    } else if (role == ROLE_REPLACING && !r->draining) {
        replace_failed(r, how);
    } else if (role == ROLE_CURRENT && !r->draining) {
        child_t *heir = with_role(r, ROLE_REPLACING);
        if (heir != NULL) /* it was to take over: it does, once up */
            heir->role = ROLE_CURRENT;
        notify(r, was_up ? SHOAL_REMOTE_EV_DOWN : SHOAL_REMOTE_EV_START_FAILED, SHOAL_EFAILED, held,
               how);
    }
    if (r->draining && r->children == NULL)
        notify(r, SHOAL_REMOTE_EV_DRAINED, SHOAL_OK, 0, NULL);
}

/* The child's status words: up, failed to start, or too slow. */
static void check_start(shoal_remote_t *r, child_t *c)
{
    if (c->up || c->role == ROLE_RETIRING)
        return; /* (a killed one's end is not news: not said again here) */
    /* acquire: pairs with the child's release of state (why is written). */
    uint32_t state = atomic_load_explicit(&c->area->state, memory_order_acquire);
    char why[256];
    if (state == SHOAL_REMOTE_UP) {
        c->up = true;
        if (c->role == ROLE_CURRENT) {
            /* (none was: a start or a restart). Not one asked to drain
             * while it started -- the pool's drain in the wake that saw it
             * up: published then, its grace period would never begin, it
             * would never be told, and the drain would wait for ever. */
            if (!c->drain_pending && !c->drain_asked)
                shoal__remote_publish(r, c);
            notify(r, SHOAL_REMOTE_EV_UP, SHOAL_OK, 0, NULL);
        } else if (c->role == ROLE_NEXT) {
            notify(r, SHOAL_REMOTE_EV_PREPARED, SHOAL_OK, 0, NULL);
        } else if (c->role == ROLE_REPLACING) {
            take_over(r, c);
        }
        return;
    }
    int rc;
    if (state == SHOAL_REMOTE_FAILED) {
        memcpy(why, c->area->why, sizeof why);
        why[sizeof why - 1] = '\0'; /* the child's text: ended where we say */
        rc = atomic_load_explicit(&c->area->start_rc, memory_order_relaxed);
        if (rc >= 0)
            rc = SHOAL_EFAILED;
    } else if (shoal__now_ns() - c->started_ns > START_TIMEOUT_NS) {
        snprintf(why, sizeof why, "its workers did not start within %llu ms",
                 START_TIMEOUT_NS / 1000000ull);
        rc = SHOAL_ETIMEDOUT;
    } else {
        return;
    }
    /* It will not serve: stop it, and say why (its end is not news). A
     * current one's heir (THE REPLACEMENT) takes its place, as at its
     * death (child_ended): without one, the restart would start another
     * child of the same code beside it. */
    role_t role = c->role;
    retire_killed(c);
    if (role == ROLE_REPLACING) {
        replace_failed(r, why);
        return;
    }
    child_t *heir = role == ROLE_CURRENT ? with_role(r, ROLE_REPLACING) : NULL;
    if (heir != NULL)
        heir->role = ROLE_CURRENT;
    notify(r, role == ROLE_NEXT ? SHOAL_REMOTE_EV_PREPARE_FAILED : SHOAL_REMOTE_EV_START_FAILED, rc,
           0, why);
}

static void apply_control(shoal_remote_t *r)
{
    pthread_mutex_lock(&r->lock);
    uint32_t size = r->want_size, mailbox = r->want_mailbox;
    pthread_mutex_unlock(&r->lock);
    for (child_t *c = r->children; c != NULL; c = c->next) {
        atomic_store_explicit(&c->area->want_size, size, memory_order_relaxed);
        atomic_store_explicit(&c->area->want_mailbox, mailbox, memory_order_relaxed);
        /* release: pairs with the child's acquire load of want_seq (bridge,
         * host/isolated.c): it reads the words after the new seq. */
        atomic_fetch_add_explicit(&c->area->want_seq, 1, memory_order_release);
        shoal__chan_ring(c->chan);
    }
}

/* Releases a launch (if it is one) and forgets it. */
static void launch_drop(shoal_remote_launch_t *l)
{
    if (l->release != NULL)
        l->release(l->user);
    *l = (shoal_remote_launch_t){0};
}

/* A swap is off: its child (if any) is stopped, its launch released. */
static void swap_abort(shoal_remote_t *r)
{
    child_t *c = with_role(r, ROLE_NEXT);
    if (c != NULL)
        retire_killed(c);
    launch_drop(&r->next_launch);
}

/* A swap's child starts from launch (taken over) beside the current one:
 * the launch is kept beside the pool's until the swap's commit or abort. */
static void swap_prepare(shoal_remote_t *r, shoal_remote_launch_t *launch)
{
    char why[256];
    swap_abort(r); /* one left prepared (never, from the pool's actor): off */
    if (child_start(r, launch, ROLE_NEXT, why, sizeof why) != SHOAL_OK) {
        launch_drop(launch);
        notify(r, SHOAL_REMOTE_EV_PREPARE_FAILED, SHOAL_EFAILED, 0, why);
        return;
    }
    r->next_launch = *launch;
}

/* A swap's child takes new work from now on, the one before drains and
 * exits, and the swap's launch becomes the pool's. Its child lost after it
 * said PREPARED: a replacement from that launch (THE REPLACEMENT). */
static void swap_commit(shoal_remote_t *r)
{
    if (r->next_launch.launch == NULL)
        return; /* its child never started: the pool's actor does not commit */
    launch_drop(&r->launch);
    r->launch = r->next_launch;
    r->next_launch = (shoal_remote_launch_t){0};
    child_t *c = with_role(r, ROLE_NEXT), *stale = with_role(r, ROLE_REPLACING);
    if (stale != NULL) /* started from the code this commit replaces */
        retire_killed(stale);
    if (c != NULL && c->up) {
        take_over(r, c);
        return;
    }
    if (c != NULL) /* (not up: it said PREPARED only once it was) */
        retire_killed(c);
    if (!r->draining)
        replace(r);
}

/* Returns false once told to stop. */
static bool run_commands(shoal_remote_t *r)
{
    pthread_mutex_lock(&r->lock);
    uint32_t cmds = r->cmds;
    r->cmds = 0;
    remote_op_t ops[SHOAL__REMOTE_OPS]; /* the swaps' steps, in order */
    uint32_t nops = r->nops;
    memcpy(ops, r->ops, nops * sizeof ops[0]);
    r->nops = 0;
    pthread_mutex_unlock(&r->lock);
    if (cmds & CMD_STOP) {
        for (uint32_t i = 0; i < nops; i++)
            launch_drop(&ops[i].launch); /* PREPAREs not carried out */
        return false;
    }
    char why[256];
    if (cmds & CMD_CONTROL)
        apply_control(r);
    if ((cmds & CMD_RESTART) && with_role(r, ROLE_CURRENT) == NULL && !r->draining) {
        if (child_start(r, &r->launch, ROLE_CURRENT, why, sizeof why) != SHOAL_OK)
            notify(r, SHOAL_REMOTE_EV_START_FAILED, SHOAL_EFAILED, 0, why);
    }
    for (uint32_t i = 0; i < nops; i++) {
        if (ops[i].kind == OP_PREPARE)
            swap_prepare(r, &ops[i].launch);
        else if (ops[i].kind == OP_COMMIT)
            swap_commit(r);
        else
            swap_abort(r);
    }
    if (cmds & CMD_DRAIN) {
        r->draining = true;
        for (child_t *c = r->children; c != NULL; c = c->next) {
            if (c->role == ROLE_NEXT || c->role == ROLE_REPLACING)
                retire_killed(c); /* it never served */
            else
                shoal__remote_ask_drain(r, c);
        }
        if (r->children == NULL)
            notify(r, SHOAL_REMOTE_EV_DRAINED, SHOAL_OK, 0, NULL);
    }
    return true;
}

void *shoal__remote_supervise(void *arg)
{
    shoal_remote_t *r = arg;
    shoal_tcache_t *tc = shoal__tcache_get(r->rt);
    struct pollfd fds[1 + 2 * 8];
    child_t *who[1 + 2 * 8];
    int timeout = SHOAL__REMOTE_POLL_MS;
    for (;;) {
        nfds_t n = 0;
        uint64_t now = shoal__now_ns();
        bool deaf = false;
        fds[n] = (struct pollfd){.fd = r->cmd_efd, .events = POLLIN};
        who[n++] = NULL;
        for (child_t *c = r->children; c != NULL; c = c->next)
            c->bell_slot = 0;
        for (child_t *c = r->children; c != NULL && n + 2 <= sizeof fds / sizeof fds[0];
             c = c->next) {
            /* A broken channel's doorbell is not listened to: nothing more
             * is read from it (its child was killed: its pidfd says when
             * it has ended). Nor, for a while, one rung for nothing
             * (remote_bell.c). */
            if (!c->nonsense && shoal__remote_bell_heard(c, now)) {
                fds[n] = (struct pollfd){.fd = shoal__chan_wake_fd(c->chan), .events = POLLIN};
                c->bell_slot = (unsigned)n + 1;
                who[n++] = c;
            }
            deaf |= !c->nonsense && c->bell_slot == 0;
            fds[n] = (struct pollfd){.fd = c->pidfd, .events = POLLIN};
            who[n++] = c;
        }
        /* Before sleeping, tell each child we sleep (and see what came: a
         * broken channel never counts, chan.h). */
        bool pending = false;
        for (child_t *c = r->children; c != NULL; c = c->next)
            pending |= shoal__chan_arm(c->chan);
        if (deaf && timeout > SHOAL__REMOTE_DEAF_POLL_MS)
            timeout = SHOAL__REMOTE_DEAF_POLL_MS;
        if (!pending)
            poll(fds, n, timeout);
        for (child_t *c = r->children; c != NULL; c = c->next)
            c->bell_rang = shoal__chan_disarm(c->chan);
        now = shoal__now_ns();
        uint64_t v;
        if (read(r->cmd_efd, &v, sizeof v) == (ssize_t)sizeof v && !run_commands(r))
            break;
        for (child_t *c = r->children, *next; c != NULL; c = next) {
            next = c->next;
            size_t got = shoal__remote_deliver(r, c, tc, false);
            /* Rings while records are pending -- one being written holds
             * back those behind it, whose rings came -- are no rings for
             * nothing (remote_bell.c). */
            if (c->bell_slot != 0)
                shoal__remote_bell_count(r, c, shoal__chan_in_pending(c->chan) ? 0 : c->bell_rang,
                                         got, now);
            shoal__remote_sends_say(r, c, false);
            check_start(r, c);
            if (c->up && c->role == ROLE_CURRENT)
                atomic_store_explicit(
                    &r->live_size, atomic_load_explicit(&c->area->pool_size, memory_order_relaxed),
                    memory_order_relaxed);
            struct pollfd pf = {.fd = c->pidfd, .events = POLLIN};
            if (poll(&pf, 1, 0) == 1) {
                shoal__remote_deliver(r, c, tc, true); /* what it sent before it ended */
                child_ended(r, c, tc, false);
            }
        }
        shoal__remote_room_look(r, tc);
        timeout = shoal__remote_tend(r);
        (void)who;
    }
    /* Stopping: whatever runs is killed; its held messages are dropped. */
    while (r->children != NULL) {
        child_t *c = r->children;
        kill(c->pid, SIGKILL);
        struct pollfd pf = {.fd = c->pidfd, .events = POLLIN};
        poll(&pf, 1, 5000);
        shoal__remote_deliver(r, c, tc, true);
        child_ended(r, c, tc, true);
    }
    atomic_store_explicit(&r->live_size, 0, memory_order_relaxed);
    return NULL;
}
