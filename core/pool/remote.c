/* remote.c - the parent's side of a pool whose workers run in a child
 * process (remote.h): the senders' copy into the child's ring, and the
 * supervisor thread that starts children, delivers what they send back,
 * and settles their counts when they end.
 *
 * WHO TOUCHES WHAT
 *   - `cur` (the child new work goes to) is read by senders inside the
 *     pool's read-side region (runtime/qsbr.h) and written by the
 *     supervisor: a child is published [release; pairs with the senders'
 *     acquire: its channel is set up] and unpublished [seq_cst: the
 *     reclaimer's store of the Dekker pair in qsbr.h]; only once every
 *     region that could have seen it has ended is its `pushed` final and
 *     may its channel go.
 *   - a child's `pushed` counts the messages senders put in its ring
 *     (fetch_add, undone when the ring refused); its settled counts are in
 *     the shared area, written by the child (untrusted: clamped).
 *   - commands from the pool's actor (start again, drain, prepare, commit,
 *     abort, new size, stop) are bits under `lock`, with an eventfd that
 *     wakes the supervisor; everything else here is the supervisor's.
 *   - the supervisor tells the pool's actor what happened with priority
 *     messages (SHOAL__POOL_REMOTE) from no actor (SHOAL_PID_NONE).
 */
#include "pool/remote.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actor/call.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

#define POLL_MS 100
#define START_TIMEOUT_NS (10 * 1000000000ull)

enum {
    CMD_RESTART = 1u << 0,
    CMD_DRAIN = 1u << 1,
    CMD_PREPARE = 1u << 2,
    CMD_COMMIT = 1u << 3,
    CMD_ABORT = 1u << 4,
    CMD_CONTROL = 1u << 5,
    CMD_STOP = 1u << 6,
};

typedef enum { ROLE_CURRENT, ROLE_NEXT, ROLE_RETIRING } role_t;

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
    uint64_t started_ns;
    /* written by senders */
    alignas(64) _Atomic uint64_t pushed;
    _Atomic uint64_t settled_seen; /* a recent sum of its settled counts */
    struct child_s *next;
} child_t;

struct shoal_remote_s {
    shoal_runtime_t *rt;
    shoal_pool_t *p;
    /* read by senders */
    alignas(64) _Atomic(child_t *) cur;
    _Atomic uint64_t cap; /* size x mailbox; 0: no limit */
    /* the ended children's counts */
    alignas(64) _Atomic uint64_t done_handled, done_failed, done_dropped;
    _Atomic uint32_t live_size; /* the current child's pool size, as it says */
    _Atomic uint64_t started_n, died_n; /* shoal__remote_info */
    /* commands from the pool's actor */
    alignas(64) pthread_mutex_t lock;
    uint32_t cmds;
    uint32_t want_size, want_mailbox;
    shoal_remote_launch_t launch, next_launch;
    int cmd_efd;
    pthread_t thread;
    bool started, stopped;
    /* the supervisor's */
    child_t *children;
    bool draining; /* a drain was asked: DRAINED when the last child is gone */
};

/* ---- the shared area -------------------------------------------------------- */

static size_t area_head(void) { return (sizeof(shoal_remote_area_t) + 63) & ~(size_t)63; }

size_t shoal__remote_area_bytes(uint32_t nstripes)
{
    return area_head() + (size_t)nstripes * sizeof(shoal_pool_stripe_t);
}

shoal_pool_stripe_t *shoal__remote_area_stripes(shoal_remote_area_t *a)
{
    return (shoal_pool_stripe_t *)(void *)((unsigned char *)a + area_head());
}

/* What a child has settled, from its stripes (it writes them: each count
 * is clamped so that they never add up to more than it was sent). */
static void settled_of(child_t *c, uint64_t pushed, uint64_t *handled, uint64_t *failed,
                       uint64_t *dropped)
{
    uint64_t h = 0, f = 0, d = 0;
    uint32_t n = atomic_load_explicit(&c->area->nstripes, memory_order_relaxed);
    if (n > c->stripes_cap)
        n = c->stripes_cap;
    for (uint32_t s = 0; s < n; s++) {
        /* acquire: pairs with the child's release of its handled count. */
        h += atomic_load_explicit(&c->stripes[s].handled, memory_order_acquire);
        f += atomic_load_explicit(&c->stripes[s].failed, memory_order_relaxed);
        d += atomic_load_explicit(&c->stripes[s].dropped, memory_order_relaxed);
    }
    h = h < pushed ? h : pushed;
    f = f < pushed - h ? f : pushed - h;
    d = d < pushed - h - f ? d : pushed - h - f;
    *handled = h;
    *failed = f;
    *dropped = d;
}

static uint64_t settled_sum(child_t *c, uint64_t pushed)
{
    uint64_t h, f, d;
    settled_of(c, pushed, &h, &f, &d);
    return h + f + d;
}

/* ---- senders ------------------------------------------------------------------- */

int shoal__remote_forward(shoal_remote_t *r, shoal_tcache_t *tc, shoal_env_t *e)
{
    /* acquire: pairs with the supervisor's release store of cur. */
    child_t *c = atomic_load_explicit(&r->cur, memory_order_acquire);
    if (c == NULL)
        return SHOAL_EBUSY; /* none up: as a pool with no free worker */
    uint64_t cap = atomic_load_explicit(&r->cap, memory_order_relaxed);
    uint64_t n = atomic_fetch_add_explicit(&c->pushed, 1, memory_order_relaxed) + 1;
    if (cap != 0 && n - atomic_load_explicit(&c->settled_seen, memory_order_relaxed) > cap) {
        /* Looks full by an old sum: sum again before refusing. */
        uint64_t s = settled_sum(c, n);
        atomic_store_explicit(&c->settled_seen, s, memory_order_relaxed);
        if (n - s > cap) {
            atomic_fetch_sub_explicit(&c->pushed, 1, memory_order_relaxed);
            return SHOAL_EBUSY;
        }
    }
    unsigned kind = shoal__env_kind(e);
    shoal_remote_msg_t m = {
        .from = e->from,
        .ref = shoal__env_ref(e),
        .type = e->type,
    };
    int rc =
        shoal__chan_send(c->chan, kind == SHOAL_MSG_CALL ? SHOAL_REMOTE_CALL : SHOAL_REMOTE_CAST,
                         &m, sizeof m, shoal__env_data(e), e->size, true);
    if (rc != SHOAL_OK) {
        atomic_fetch_sub_explicit(&c->pushed, 1, memory_order_relaxed);
        return SHOAL_EBUSY;
    }
    shoal__env_free(tc, e);
    return SHOAL_OK;
}

void shoal__remote_sum(shoal_remote_t *r, shoal_pool_stats_t *st, uint64_t *wait, uint64_t *service)
{
    st->messages_handled += atomic_load_explicit(&r->done_handled, memory_order_relaxed);
    st->messages_failed += atomic_load_explicit(&r->done_failed, memory_order_relaxed);
    st->messages_dropped += atomic_load_explicit(&r->done_dropped, memory_order_relaxed);
    st->pool_size = atomic_load_explicit(&r->live_size, memory_order_relaxed);
    /* The live children: the supervisor frees them only after taking the
     * lock, so they stay while we read. */
    pthread_mutex_lock(&r->lock);
    for (child_t *c = r->children; c != NULL; c = c->next) {
        uint64_t h, f, d;
        settled_of(c, atomic_load_explicit(&c->pushed, memory_order_relaxed), &h, &f, &d);
        st->messages_handled += h;
        st->messages_failed += f;
        st->messages_dropped += d;
        /* Latencies are only informative: the child's, as it writes them. */
        uint32_t n = atomic_load_explicit(&c->area->nstripes, memory_order_relaxed);
        for (uint32_t s = 0; s < n && s < c->stripes_cap; s++) {
            const shoal_pool_stripe_t *x = &c->stripes[s];
            st->latency_samples += atomic_load_explicit(&x->samples, memory_order_relaxed);
            for (unsigned i = 0; i < SHOAL_HIST_BUCKETS; i++) {
                wait[i] += atomic_load_explicit(&x->wait[i], memory_order_relaxed);
                service[i] += atomic_load_explicit(&x->service[i], memory_order_relaxed);
            }
        }
    }
    pthread_mutex_unlock(&r->lock);
}

void shoal__remote_info(shoal_remote_t *r, shoal_remote_info_t *info)
{
    info->started = atomic_load_explicit(&r->started_n, memory_order_relaxed);
    info->died = atomic_load_explicit(&r->died_n, memory_order_relaxed);
    info->pid = 0;
    pthread_mutex_lock(&r->lock); /* the list, as in shoal__remote_sum */
    /* relaxed: cur is only compared with the live children, not read through. */
    child_t *cur = atomic_load_explicit(&r->cur, memory_order_relaxed);
    for (child_t *c = r->children; c != NULL; c = c->next)
        if (c == cur)
            info->pid = (int)c->pid;
    pthread_mutex_unlock(&r->lock);
}

/* ---- commands from the pool's actor ------------------------------------------- */

static void command(shoal_remote_t *r, uint32_t cmd)
{
    pthread_mutex_lock(&r->lock);
    r->cmds |= cmd;
    pthread_mutex_unlock(&r->lock);
    uint64_t one = 1;
    ssize_t w = write(r->cmd_efd, &one, sizeof one);
    (void)w; /* a full counter is a pending wake already */
}

void shoal__remote_control(shoal_remote_t *r, uint32_t size, uint32_t mailbox)
{
    uint64_t cap = mailbox == SHOAL_MAILBOX_UNBOUNDED ? 0 : (uint64_t)size * mailbox;
    atomic_store_explicit(&r->cap, cap, memory_order_relaxed);
    pthread_mutex_lock(&r->lock);
    r->want_size = size;
    r->want_mailbox = mailbox;
    pthread_mutex_unlock(&r->lock);
    command(r, CMD_CONTROL);
}

void shoal__remote_drain(shoal_remote_t *r) { command(r, CMD_DRAIN); }
void shoal__remote_restart(shoal_remote_t *r) { command(r, CMD_RESTART); }
void shoal__remote_commit(shoal_remote_t *r) { command(r, CMD_COMMIT); }
void shoal__remote_abort(shoal_remote_t *r) { command(r, CMD_ABORT); }

void shoal__remote_prepare(shoal_remote_t *r, const shoal_remote_launch_t *launch)
{
    pthread_mutex_lock(&r->lock);
    if (r->next_launch.release != NULL) /* one not taken yet: replaced */
        r->next_launch.release(r->next_launch.user);
    r->next_launch = *launch;
    pthread_mutex_unlock(&r->lock);
    command(r, CMD_PREPARE);
}

/* ---- the supervisor ------------------------------------------------------------- */

static void notify(shoal_remote_t *r, uint32_t ev, int status, uint64_t held, const char *why)
{
    shoal_remote_ev_t e = {.ev = ev, .status = status, .held = held};
    snprintf(e.why, sizeof e.why, "%s", why ? why : "");
    /* A priority message from no actor: the pool's actor ends only after
     * it has stopped us, so it is there to take it. */
    shoal_runtime_send_priority(r->rt, r->p->pid, SHOAL__POOL_REMOTE, &e, sizeof e);
}

/* A ring big enough for the messages the child may hold, and their
 * headers, with room to spare; within the channel's bounds. */
static size_t ring_for(uint64_t cap)
{
    uint64_t want = cap == 0 ? (16u << 20) : cap * 128u;
    size_t size = 1u << 20;
    while (size < want && size < (64u << 20))
        size <<= 1;
    return size;
}

static void child_free(child_t *c)
{
    shoal__chan_destroy(c->chan);
    if (c->pidfd >= 0)
        close(c->pidfd);
    free(c);
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
    int rc =
        shoal__chan_create(ring_for(cap), shoal__remote_area_bytes(launch->nstripes), &c->chan);
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
    c->started_ns = shoal__now_ns();
    atomic_fetch_add_explicit(&r->started_n, 1, memory_order_relaxed);
    pthread_mutex_lock(&r->lock);
    c->next = r->children;
    r->children = c;
    pthread_mutex_unlock(&r->lock);
    return SHOAL_OK;
}

/* Waits until no sender can still be pushing into a child that is no
 * longer published (runtime/qsbr.h): then its `pushed` is final. */
static void grace(shoal_remote_t *r)
{
    shoal_qsbr_snap_t snap;
    while (shoal__qsbr_snapshot(r->rt, &snap) != SHOAL_OK) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    while (!shoal__qsbr_passed(r->rt, &snap)) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    shoal__qsbr_snap_free(&snap);
}

static void publish(shoal_remote_t *r, child_t *c)
{
    /* release: pairs with the senders' acquire: its channel is set up. */
    atomic_store_explicit(&r->cur, c, memory_order_release);
}

static void unpublish(shoal_remote_t *r, child_t *c)
{
    child_t *expect = c;
    /* seq_cst: the reclaimer's store of qsbr.h's Dekker pair. */
    if (atomic_compare_exchange_strong_explicit(&r->cur, &expect, NULL, memory_order_seq_cst,
                                                memory_order_relaxed))
        grace(r);
}

/* Tells a child to drain, once nobody can push into it any more. */
static void ask_drain(shoal_remote_t *r, child_t *c)
{
    if (c->drain_asked)
        return;
    unpublish(r, c);
    c->drain_asked = true;
    atomic_store_explicit(&c->area->want_drain, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->area->want_seq, 1, memory_order_release);
    shoal__chan_ring(c->chan);
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

/* A child has ended (its pidfd said so): reap it, settle its counts, say
 * so, and tell the pool's actor. stopping: the pool is going away (what it
 * held is dropped, not failed). */
static void child_ended(shoal_remote_t *r, child_t *c, bool stopping)
{
    if (stopping) /* (no grace: the pool has ended, its senders see ENOPROC) */
        atomic_store_explicit(&r->cur, NULL, memory_order_seq_cst);
    else
        unpublish(r, c);
    siginfo_t si = {0};
    if (waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED) != 0)
        si.si_code = CLD_KILLED;
    uint64_t pushed = atomic_load_explicit(&c->pushed, memory_order_relaxed);
    uint64_t h, f, d;
    settled_of(c, pushed, &h, &f, &d);
    uint64_t held = pushed - h - f - d;
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
    atomic_fetch_add_explicit(stopping ? &r->done_dropped : &r->done_failed,
                              (stopping ? 0 : f) + held, memory_order_relaxed);
    atomic_fetch_add_explicit(stopping ? &r->done_failed : &r->done_dropped, stopping ? f : d,
                              memory_order_relaxed);
    if (stopping)
        atomic_fetch_add_explicit(&r->done_dropped, d, memory_order_relaxed);
    pthread_mutex_unlock(&r->lock);
    if (!(clean && drained) && !stopping)
        atomic_fetch_add_explicit(&r->died_n, 1, memory_order_relaxed);
    if (!(clean && drained) && !stopping)
        shoal__log(r->rt, SHOAL_LOG_ERROR, r->p->pid, r->p->name,
                   "isolated worker process %d %s; %" PRIu64
                   " message%s it held %s counted as failed (%" PRIu64 " handled, %" PRIu64
                   " failed before)",
                   (int)c->pid, how, held, held == 1 ? "" : "s", held == 1 ? "is" : "are", h, f);
    role_t role = c->role;
    bool was_up = c->up;
    child_free(c);
    if (stopping)
        return;
    if (role == ROLE_NEXT) {
        notify(r, SHOAL_REMOTE_EV_PREPARE_FAILED, SHOAL_EFAILED, 0, how);
    } else if (role == ROLE_CURRENT && !r->draining) {
        notify(r, was_up ? SHOAL_REMOTE_EV_DOWN : SHOAL_REMOTE_EV_START_FAILED, SHOAL_EFAILED, held,
               how);
    }
    if (r->draining && r->children == NULL)
        notify(r, SHOAL_REMOTE_EV_DRAINED, SHOAL_OK, 0, NULL);
}

/* The child's status words: up, failed to start, or too slow. */
static void check_start(shoal_remote_t *r, child_t *c)
{
    if (c->up)
        return;
    /* acquire: pairs with the child's release of state (why is written). */
    uint32_t state = atomic_load_explicit(&c->area->state, memory_order_acquire);
    char why[256];
    if (state == SHOAL_REMOTE_UP) {
        c->up = true;
        if (c->role == ROLE_CURRENT) {
            publish(r, c);
            notify(r, SHOAL_REMOTE_EV_UP, SHOAL_OK, 0, NULL);
        } else if (c->role == ROLE_NEXT) {
            notify(r, SHOAL_REMOTE_EV_PREPARED, SHOAL_OK, 0, NULL);
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
    /* It will not serve: stop it, and say why (its end is not news). */
    role_t role = c->role;
    c->role = ROLE_RETIRING;
    kill(c->pid, SIGKILL);
    notify(r, role == ROLE_NEXT ? SHOAL_REMOTE_EV_PREPARE_FAILED : SHOAL_REMOTE_EV_START_FAILED, rc,
           0, why);
}

/* Messages the child sent back: replies and sends into this runtime. */
static void deliver(shoal_remote_t *r, child_t *c, shoal_tcache_t *tc)
{
    uint32_t tag;
    const void *data;
    size_t len;
    int rc;
    unsigned n = 0;
    while (n++ < 4096 && (rc = shoal__chan_peek(c->chan, &tag, &data, &len)) == SHOAL_OK) {
        shoal_remote_msg_t m;
        if (tag == SHOAL_REMOTE_STATUS || len < sizeof m) {
            shoal__chan_consume(c->chan);
            continue;
        }
        memcpy(&m, data, sizeof m);
        const unsigned char *payload = (const unsigned char *)data + sizeof m;
        size_t size = len - sizeof m;
        if (tag == SHOAL_REMOTE_REPLY) {
            bool status = (m.flags & SHOAL_REMOTE_MSG_STATUS) != 0;
            shoal_env_t *e =
                shoal__env_new(tc, SHOAL_MSG_REPLY, status ? SHOAL_ENV_STATUS : 0, r->p->pid, m.ref,
                               m.type, status ? NULL : payload, status ? 0 : size);
            if (e != NULL && shoal__deliver(r->rt, tc, m.to, e, true) != SHOAL_OK) {
                shoal__env_free(tc, e);
                SHOAL_STAT_ADD(tc, replies_late, 1);
            }
        } else if (tag == SHOAL_REMOTE_SEND) {
            shoal__send(r->rt, tc, r->p->pid, m.to, m.type, payload, size,
                        (m.flags & SHOAL_REMOTE_MSG_PRIORITY) != 0, NULL, NULL);
        }
        shoal__chan_consume(c->chan);
    }
    if ((shoal__chan_broken(c->chan) || shoal__chan_out_broken(c->chan)) &&
        c->role != ROLE_RETIRING) {
        shoal__log(r->rt, SHOAL_LOG_ERROR, r->p->pid, r->p->name,
                   "isolated worker process %d wrote nonsense into its channel: stopped",
                   (int)c->pid);
        kill(c->pid, SIGKILL);
    }
}

static void apply_control(shoal_remote_t *r)
{
    pthread_mutex_lock(&r->lock);
    uint32_t size = r->want_size, mailbox = r->want_mailbox;
    pthread_mutex_unlock(&r->lock);
    for (child_t *c = r->children; c != NULL; c = c->next) {
        atomic_store_explicit(&c->area->want_size, size, memory_order_relaxed);
        atomic_store_explicit(&c->area->want_mailbox, mailbox, memory_order_relaxed);
        /* release: the child reads the words after the new seq. */
        atomic_fetch_add_explicit(&c->area->want_seq, 1, memory_order_release);
        shoal__chan_ring(c->chan);
    }
}

static child_t *with_role(shoal_remote_t *r, role_t role)
{
    for (child_t *c = r->children; c != NULL; c = c->next)
        if (c->role == role)
            return c;
    return NULL;
}

/* Returns false once told to stop. */
static bool run_commands(shoal_remote_t *r)
{
    pthread_mutex_lock(&r->lock);
    uint32_t cmds = r->cmds;
    r->cmds = 0;
    shoal_remote_launch_t next = r->next_launch;
    if (cmds & CMD_PREPARE)
        r->next_launch = (shoal_remote_launch_t){0};
    pthread_mutex_unlock(&r->lock);
    char why[256];
    if (cmds & CMD_STOP)
        return false;
    if (cmds & CMD_CONTROL)
        apply_control(r);
    if ((cmds & CMD_RESTART) && with_role(r, ROLE_CURRENT) == NULL && !r->draining) {
        if (child_start(r, &r->launch, ROLE_CURRENT, why, sizeof why) != SHOAL_OK)
            notify(r, SHOAL_REMOTE_EV_START_FAILED, SHOAL_EFAILED, 0, why);
    }
    if (cmds & CMD_PREPARE) {
        child_t *old = with_role(r, ROLE_NEXT);
        if (old != NULL) { /* a prepared one not committed: replaced */
            old->role = ROLE_RETIRING;
            kill(old->pid, SIGKILL);
        }
        if (child_start(r, &next, ROLE_NEXT, why, sizeof why) != SHOAL_OK) {
            next.release(next.user);
            notify(r, SHOAL_REMOTE_EV_PREPARE_FAILED, SHOAL_EFAILED, 0, why);
        } else {
            /* The launch data the next child came from becomes the pool's
             * at commit; until then it is kept beside. */
            pthread_mutex_lock(&r->lock);
            r->next_launch = next;
            pthread_mutex_unlock(&r->lock);
        }
    }
    if (cmds & CMD_ABORT) {
        child_t *c = with_role(r, ROLE_NEXT);
        if (c != NULL) {
            c->role = ROLE_RETIRING;
            kill(c->pid, SIGKILL);
        }
        pthread_mutex_lock(&r->lock);
        shoal_remote_launch_t l = r->next_launch;
        r->next_launch = (shoal_remote_launch_t){0};
        pthread_mutex_unlock(&r->lock);
        if (l.release != NULL)
            l.release(l.user);
    }
    if (cmds & CMD_COMMIT) {
        child_t *c = with_role(r, ROLE_NEXT), *old = with_role(r, ROLE_CURRENT);
        if (c != NULL && c->up) {
            c->role = ROLE_CURRENT;
            publish(r, c);
            if (old != NULL) {
                old->role = ROLE_RETIRING;
                ask_drain(r, old); /* after the grace: nothing new reaches it */
            }
            pthread_mutex_lock(&r->lock);
            shoal_remote_launch_t was = r->launch;
            r->launch = r->next_launch;
            r->next_launch = (shoal_remote_launch_t){0};
            pthread_mutex_unlock(&r->lock);
            if (was.release != NULL)
                was.release(was.user);
        }
    }
    if (cmds & CMD_DRAIN) {
        r->draining = true;
        for (child_t *c = r->children; c != NULL; c = c->next) {
            if (c->role == ROLE_NEXT) {
                c->role = ROLE_RETIRING;
                kill(c->pid, SIGKILL);
            } else {
                ask_drain(r, c);
            }
        }
        if (r->children == NULL)
            notify(r, SHOAL_REMOTE_EV_DRAINED, SHOAL_OK, 0, NULL);
    }
    return true;
}

static void *supervise(void *arg)
{
    shoal_remote_t *r = arg;
    shoal_tcache_t *tc = shoal__tcache_get(r->rt);
    struct pollfd fds[1 + 2 * 8];
    child_t *who[1 + 2 * 8];
    for (;;) {
        nfds_t n = 0;
        fds[n] = (struct pollfd){.fd = r->cmd_efd, .events = POLLIN};
        who[n++] = NULL;
        for (child_t *c = r->children; c != NULL && n + 2 <= sizeof fds / sizeof fds[0];
             c = c->next) {
            fds[n] = (struct pollfd){.fd = shoal__chan_wake_fd(c->chan), .events = POLLIN};
            who[n++] = c;
            fds[n] = (struct pollfd){.fd = c->pidfd, .events = POLLIN};
            who[n++] = c;
        }
        /* Before sleeping, tell each child we sleep (and see what came). */
        bool pending = false;
        for (child_t *c = r->children; c != NULL; c = c->next)
            pending |= shoal__chan_arm(c->chan);
        if (!pending)
            poll(fds, n, POLL_MS);
        for (child_t *c = r->children; c != NULL; c = c->next)
            shoal__chan_disarm(c->chan);
        uint64_t v;
        if (read(r->cmd_efd, &v, sizeof v) == (ssize_t)sizeof v && !run_commands(r))
            break;
        for (child_t *c = r->children, *next; c != NULL; c = next) {
            next = c->next;
            deliver(r, c, tc);
            check_start(r, c);
            if (c->up && c->role == ROLE_CURRENT)
                atomic_store_explicit(
                    &r->live_size, atomic_load_explicit(&c->area->pool_size, memory_order_relaxed),
                    memory_order_relaxed);
            struct pollfd pf = {.fd = c->pidfd, .events = POLLIN};
            if (poll(&pf, 1, 0) == 1) {
                deliver(r, c, tc); /* what it sent before it ended */
                child_ended(r, c, false);
            }
        }
        (void)who;
    }
    /* Stopping: whatever runs is killed; its held messages are dropped. */
    while (r->children != NULL) {
        child_t *c = r->children;
        kill(c->pid, SIGKILL);
        struct pollfd pf = {.fd = c->pidfd, .events = POLLIN};
        poll(&pf, 1, 5000);
        deliver(r, c, tc);
        child_ended(r, c, true);
    }
    atomic_store_explicit(&r->live_size, 0, memory_order_relaxed);
    return NULL;
}

/* ---- lifetime ------------------------------------------------------------------- */

shoal_remote_t *shoal__remote_new(shoal_pool_t *p, const shoal_remote_launch_t *launch)
{
    shoal_remote_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->cmd_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (r->cmd_efd < 0) {
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    r->rt = p->rt;
    r->p = p;
    r->launch = *launch;
    r->want_size = p->spec.size;
    r->want_mailbox = p->spec.mailbox;
    atomic_store_explicit(
        &r->cap,
        p->spec.mailbox == SHOAL_MAILBOX_UNBOUNDED ? 0 : (uint64_t)p->spec.size * p->spec.mailbox,
        memory_order_relaxed);
    return r;
}

int shoal__remote_start(struct shoal_ctx_s *ctx, shoal_remote_t *r)
{
    (void)ctx;
    if (pthread_create(&r->thread, NULL, supervise, r) != 0)
        return SHOAL_ENOMEM;
    r->started = true;
    command(r, CMD_RESTART);
    return SHOAL_OK;
}

void shoal__remote_stop(shoal_remote_t *r)
{
    if (r == NULL || !r->started || r->stopped)
        return;
    command(r, CMD_STOP);
    pthread_join(r->thread, NULL);
    r->stopped = true;
}

void shoal__remote_free(shoal_remote_t *r)
{
    if (r == NULL)
        return;
    shoal__remote_stop(r);
    if (r->launch.release != NULL)
        r->launch.release(r->launch.user);
    if (r->next_launch.release != NULL)
        r->next_launch.release(r->next_launch.user);
    close(r->cmd_efd);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
