/* remote.c - the parent's side of a pool whose workers run in a child
 * process (remote.h): the senders' copy into the child's ring, and the
 * supervisor thread that starts children, delivers what they send back,
 * and settles their counts when they end.
 *
 * WHO TOUCHES WHAT
 *   - `cur` (the child new work goes to) is read by senders inside the
 *     pool's read-side region (runtime/qsbr.h) [seq_cst: the reader's load
 *     of the Dekker pair in qsbr.h; also an acquire: its channel is set up]
 *     and written by the supervisor: a child is published, replacing the
 *     one before at a commit [seq_cst: the reclaimer's store of the pair
 *     for the one replaced; also a release] and unpublished [seq_cst].
 *     Only once every region that could have seen a child has ended (a
 *     grace period) may it be told to drain (its ring then holds all it
 *     will ever get: no sender is between its look at `cur` and its
 *     stamp), and may its channel go; at the pool's stop, its channel goes
 *     with the record (shoal__remote_free), whose own grace period covers
 *     every sender that could have found it. The supervisor never waits
 *     for a grace period: it looks on each wake (remote_grace.c).
 *   - a child's `pushed` counts the messages senders put in its ring
 *     (fetch_add, undone when the ring refused); its settled counts are in
 *     the shared area, written by the child (untrusted: clamped). When the
 *     child ends its burial closes the count (SHOAL__REMOTE_CLOSED, a bit
 *     of it, remote_child.h): what it held is exact at once, and is said
 *     at once, while its channel waits for the grace period.
 *   - the calls the children hold are in one table, under `calls_lock`
 *     (remote_calls.c: its protocol): a sender writes a call in before its
 *     copy, the supervisor takes it out at its REPLY, and a burial closes
 *     the child's count (CLOSED) and answers its calls in one hold of the
 *     lock; a call's count is taken back only under it.
 *   - commands from the pool's actor (start again, drain, new size, stop)
 *     are bits under `lock`, and a swap's steps (prepare, commit, abort) a
 *     FIFO there (SWAP STEPS, below), with an eventfd that wakes the
 *     supervisor; everything else here is the supervisor's.
 *   - the supervisor tells the pool's actor what happened with priority
 *     messages (SHOAL__POOL_REMOTE) from no actor (SHOAL_PID_NONE).
 *
 * This file is the senders' side, the counts and the commands; the
 * supervisor thread is remote_supervisor.c, and the records both use are
 * in remote_child.h.
 */
#include "pool/remote.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "actor/send.h"
#include "pool/pool.h"
#include "pool/remote_child.h"
#include "runtime/runtime.h"

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
void shoal__remote_settled(child_t *c, uint64_t pushed, uint64_t *handled, uint64_t *failed,
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
    shoal__remote_settled(c, pushed, &h, &f, &d);
    return h + f + d;
}

/* ---- senders ------------------------------------------------------------------- */

/* Takes back the count forward made for a cast that did not go into c's
 * ring (`refused`, SHOAL_EBUSY or SHOAL_EINVAL: e is the caller's again)
 * -- unless c has ended meanwhile and its burial counted that message as
 * one it held, failed (remote_child.h: SHOAL__REMOTE_CLOSED): then it
 * stands as sent (SHOAL_OK, e freed), so the count said is exact. (A
 * call's: shoal__remote_call_refuse, which answers it then.) */
static int unpush(child_t *c, shoal_tcache_t *tc, shoal_env_t *e, int refused)
{
    uint64_t v = atomic_load_explicit(&c->pushed, memory_order_relaxed);
    do {
        if (v & SHOAL__REMOTE_CLOSED) {
            shoal__env_free(tc, e);
            return SHOAL_OK;
        }
        /* relaxed: `pushed` alone decides, by its modification order,
         * whether the burial's fetch_or counted this one. */
    } while (!atomic_compare_exchange_weak_explicit(&c->pushed, &v, v - 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    return refused;
}

/* As unpush, for a message refused on its way into c's ring: a call goes
 * through the table of calls (remote_calls.c), which it may have been
 * written in (held). */
static int refuse(shoal_remote_t *r, child_t *c, shoal_tcache_t *tc, shoal_env_t *e, int refused,
                  bool call, bool held)
{
    return call ? shoal__remote_call_refuse(r, c, tc, e, refused, held) : unpush(c, tc, e, refused);
}

int shoal__remote_forward(shoal_remote_t *r, shoal_tcache_t *tc, shoal_env_t *e)
{
    if (e->size > SHOAL_REMOTE_PAYLOAD_MAX)
        return SHOAL_EINVAL; /* never fits, whichever child: for good (remote.h) */
    /* seq_cst: the reader's load of qsbr.h's Dekker pair (we are in the
     * pool's region): c's channel stays mapped until we leave it. Also an
     * acquire: pairs with the supervisor's publishing (its channel is set
     * up). */
    child_t *c = atomic_load_explicit(&r->cur, memory_order_seq_cst);
    if (c == NULL)
        return SHOAL_EBUSY; /* none up: as a pool with no free worker */
    uint64_t cap = atomic_load_explicit(&r->cap, memory_order_relaxed);
    uint64_t n = atomic_fetch_add_explicit(&c->pushed, 1, memory_order_relaxed) + 1;
    if (n & SHOAL__REMOTE_CLOSED)
        return SHOAL_EBUSY; /* it has ended (its count is final): as none up */
    unsigned kind = shoal__env_kind(e);
    /* A call is answered even if the child ends: it is written in the table
     * of calls (remote.h: CALLS); a cast pays one test for it. */
    bool call = kind == SHOAL_MSG_CALL && e->from != SHOAL_PID_NONE;
    if (cap != 0 && n - atomic_load_explicit(&c->settled_seen, memory_order_relaxed) > cap) {
        /* Looks full by an old sum: sum again before refusing. */
        uint64_t s = settled_sum(c, n);
        atomic_store_explicit(&c->settled_seen, s, memory_order_relaxed);
        if (n - s > cap)
            return refuse(r, c, tc, e, SHOAL_EBUSY, call, false);
    }
    if (call && !shoal__remote_call_hold(r, c, e->from, shoal__env_ref(e)))
        return refuse(r, c, tc, e, SHOAL_EBUSY, true, false); /* full, or c has ended */
    shoal_remote_msg_t m = {
        .from = e->from,
        .ref = shoal__env_ref(e),
        .type = e->type,
    };
    int rc =
        shoal__chan_send(c->chan, kind == SHOAL_MSG_CALL ? SHOAL_REMOTE_CALL : SHOAL_REMOTE_CAST,
                         &m, sizeof m, shoal__env_data(e), e->size, true);
    if (rc != SHOAL_OK)
        /* SHOAL_EINVAL: too large for this ring (none is smaller than the
         * limit above allows: for good), or the ring is broken (the child
         * is stopped and replaced: a refusal for now). */
        return refuse(r, c, tc, e,
                      rc == SHOAL_EINVAL && !shoal__chan_out_broken(c->chan) ? SHOAL_EINVAL
                                                                             : SHOAL_EBUSY,
                      call, call);
    shoal__env_free(tc, e);
    return SHOAL_OK;
}

/* ---- room (remote.h: ROOM) -------------------------------------------------- */

bool shoal__remote_child_room(shoal_remote_t *r, child_t *c, uint64_t *at)
{
    uint64_t ring;
    uint64_t free = shoal__chan_out_free(c->chan, &ring);
    uint64_t pushed = shoal__remote_pushed(c);
    uint64_t settled = settled_sum(c, pushed); /* <= pushed */
    uint64_t cap = atomic_load_explicit(&r->cap, memory_order_relaxed);
    uint64_t low = cap / 4 != 0 ? cap / 4 : 1;
    if (cap != 0 && pushed - settled + low > cap) {
        *at = pushed + low - cap; /* settled up to here: low free */
        return false;
    }
    if (free < ring / 4) {
        *at = settled; /* the ring moving is what is waited for */
        return false;
    }
    return true;
}

bool shoal__remote_room(shoal_remote_t *r)
{
    /* seq_cst: as shoal__remote_forward's (its channel stays mapped). */
    child_t *c = atomic_load_explicit(&r->cur, memory_order_seq_cst);
    uint64_t at;
    return c != NULL && shoal__remote_child_room(r, c, &at);
}

void shoal__remote_room_wake(shoal_remote_t *r) { shoal__remote_command(r, CMD_ROOM); }

/* Takes r->lock; with patience (ms), gives up after that long (false). */
static bool lock_within(shoal_remote_t *r, unsigned patience)
{
    if (patience == 0) {
        pthread_mutex_lock(&r->lock);
        return true;
    }
    for (unsigned i = 0; i < patience * 10; i++) {
        if (pthread_mutex_trylock(&r->lock) == 0)
            return true;
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* The stripes child c counts into (as many as it says, within what the
 * parent mapped). */
static uint32_t child_stripes(const child_t *c)
{
    uint32_t n = atomic_load_explicit(&c->area->nstripes, memory_order_relaxed);
    return n < c->stripes_cap ? n : c->stripes_cap;
}

static bool remote_sum(shoal_remote_t *r, shoal_pool_stats_t *st, shoal_pool_hist_t *h,
                       unsigned patience)
{
    st->messages_handled += atomic_load_explicit(&r->done_handled, memory_order_relaxed);
    st->messages_failed += atomic_load_explicit(&r->done_failed, memory_order_relaxed);
    st->messages_dropped += atomic_load_explicit(&r->done_dropped, memory_order_relaxed);
    st->pool_size = atomic_load_explicit(&r->live_size, memory_order_relaxed);
    /* Restarts: the processes' (counted by the pool's actor) and their
     * workers' inside them, the ended children's kept. */
    st->worker_restarts += atomic_load_explicit(&r->done_restarts, memory_order_relaxed);
    /* The live children: the supervisor frees them only after taking the
     * lock, so they stay while we read. */
    if (!lock_within(r, patience))
        return false;
    for (child_t *c = r->children; c != NULL; c = c->next) {
        uint64_t handled, failed, dropped;
        shoal__remote_settled(c, shoal__remote_pushed(c), &handled, &failed, &dropped);
        st->messages_handled += handled;
        st->messages_failed += failed;
        st->messages_dropped += dropped;
        /* A child whose own pool is degraded (its workers past their
         * restart budget) makes this one degraded: the state says so. */
        st->worker_restarts += atomic_load_explicit(&c->area->restarts, memory_order_relaxed);
        if (atomic_load_explicit(&c->area->pool_state, memory_order_relaxed) ==
                SHOAL_POOL_DEGRADED &&
            st->state == SHOAL_POOL_RUNNING)
            st->state = SHOAL_POOL_DEGRADED;
        /* Latencies are only informative: the child's, as it writes them. */
        uint32_t n = child_stripes(c);
        for (uint32_t s = 0; s < n; s++)
            st->latency_samples +=
                atomic_load_explicit(&c->stripes[s].samples, memory_order_relaxed);
        if (h != NULL)
            shoal__pool_hist_add(c->stripes, n, h);
    }
    pthread_mutex_unlock(&r->lock);
    return true;
}

void shoal__remote_sum(shoal_remote_t *r, shoal_pool_stats_t *st, shoal_pool_hist_t *h)
{
    remote_sum(r, st, h, 0);
}

bool shoal__remote_sum_within(shoal_remote_t *r, shoal_pool_stats_t *st, shoal_pool_hist_t *h,
                              unsigned patience_ms)
{
    return remote_sum(r, st, h, patience_ms ? patience_ms : 1);
}

void shoal__remote_hist(shoal_remote_t *r, shoal_pool_hist_t *h)
{
    pthread_mutex_lock(&r->lock); /* the live children, as in shoal__remote_sum */
    for (child_t *c = r->children; c != NULL; c = c->next)
        shoal__pool_hist_add(c->stripes, child_stripes(c), h);
    pthread_mutex_unlock(&r->lock);
}

void shoal__remote_info(shoal_remote_t *r, shoal_remote_info_t *info)
{
    info->started = atomic_load_explicit(&r->started_n, memory_order_relaxed);
    info->died = atomic_load_explicit(&r->died_n, memory_order_relaxed);
    info->sends_dropped = atomic_load_explicit(&r->sends_dropped, memory_order_relaxed);
    info->doorbell_deafened = atomic_load_explicit(&r->bells_deafened, memory_order_relaxed);
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

void shoal__remote_command(shoal_remote_t *r, uint32_t cmd)
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
    shoal__remote_command(r, CMD_CONTROL);
}

void shoal__remote_drain(shoal_remote_t *r) { shoal__remote_command(r, CMD_DRAIN); }
void shoal__remote_restart(shoal_remote_t *r) { shoal__remote_command(r, CMD_RESTART); }

/* SWAP STEPS. PREPARE, COMMIT and ABORT are carried out in the order the
 * pool's actor gave them: a FIFO (ops, under `lock`), taken whole by the
 * supervisor on its next wake. (As bits, an ABORT of one swap and the
 * PREPARE of the next taken in one wake ran the wrong way round, and a
 * PREPARE given while the supervisor carried out another found one slot
 * for both launches.) The pool's actor runs one swap at a time and ends
 * each (COMMIT or ABORT) before the next PREPARE; a COMMIT comes only
 * after the supervisor said PREPARED, so after it took the PREPARE. So
 * the FIFO holds at most the end of one swap and the PREPARE of the next,
 * if an ABORT whose PREPARE is still queued takes that out (its child
 * never started; its launch is released) instead of following it. A
 * PREPARE is refused (SHOAL_EBUSY) unless it and its end have room. */

/* The staged swap's end, under `lock`. */
static void end_locked(shoal_remote_t *r, op_kind_t kind)
{
    r->staged = false;
    if (kind == OP_ABORT && r->nops > 0 && r->ops[r->nops - 1].kind == OP_PREPARE) {
        shoal_remote_launch_t l = r->ops[--r->nops].launch; /* never started */
        if (l.release != NULL)
            l.release(l.user);
        return;
    }
    r->ops[r->nops++] = (remote_op_t){.kind = kind}; /* its PREPARE left it room */
}

static void end_staged(shoal_remote_t *r, op_kind_t kind)
{
    pthread_mutex_lock(&r->lock);
    bool staged = r->staged;
    if (staged)
        end_locked(r, kind);
    pthread_mutex_unlock(&r->lock);
    if (staged)
        shoal__remote_command(r, CMD_SWAP);
}

void shoal__remote_commit(shoal_remote_t *r) { end_staged(r, OP_COMMIT); }
void shoal__remote_abort(shoal_remote_t *r) { end_staged(r, OP_ABORT); }

int shoal__remote_prepare(shoal_remote_t *r, const shoal_remote_launch_t *launch)
{
    pthread_mutex_lock(&r->lock);
    if (r->staged) /* one not ended (never, from swap.c): it is off */
        end_locked(r, OP_ABORT);
    bool room = r->nops + 2 <= SHOAL__REMOTE_OPS; /* it, and its end */
    if (room) {
        r->ops[r->nops++] = (remote_op_t){.kind = OP_PREPARE, .launch = *launch};
        r->staged = true;
    }
    pthread_mutex_unlock(&r->lock);
    if (!room) {
        if (launch->release != NULL)
            launch->release(launch->user);
        return SHOAL_EBUSY;
    }
    shoal__remote_command(r, CMD_SWAP);
    return SHOAL_OK;
}

/* ---- lifetime ------------------------------------------------------------------- */

/* TEST-ONLY fault injection (tests/host/test_table_noanswer.sh): with
 * SHOAL_TEST_HOLD_COUNTS_MS=N (1 .. 60000) in the environment, the
 * supervisor keeps the children's lock N ms longer each time it buries a
 * child that ended unasked while the pool runs (remote_supervisor.c,
 * child_ended), so that the table's patience runs out at a moment the test
 * chooses. Nothing in the product holds the lock that long by itself (it
 * is held for microseconds). Read once, when the pool is made; unset,
 * empty or anything else: 0, no effect. */
static unsigned test_hold_ms(void)
{
    const char *v = getenv("SHOAL_TEST_HOLD_COUNTS_MS");
    if (v == NULL || *v < '0' || *v > '9')
        return 0;
    char *end;
    unsigned long ms = strtoul(v, &end, 10);
    return *end == '\0' && ms <= 60000 ? (unsigned)ms : 0;
}

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
    pthread_mutex_init(&r->calls_lock, NULL);
    r->rt = p->rt;
    r->p = p;
    r->launch = *launch;
    r->want_size = p->spec.size;
    r->want_mailbox = p->spec.mailbox;
    r->test_hold_ms = test_hold_ms();
    atomic_store_explicit(
        &r->cap,
        p->spec.mailbox == SHOAL_MAILBOX_UNBOUNDED ? 0 : (uint64_t)p->spec.size * p->spec.mailbox,
        memory_order_relaxed);
    return r;
}

int shoal__remote_start(struct shoal_ctx_s *ctx, shoal_remote_t *r)
{
    (void)ctx;
    if (pthread_create(&r->thread, NULL, shoal__remote_supervise, r) != 0)
        return SHOAL_ENOMEM;
    r->started = true;
    shoal__remote_command(r, CMD_RESTART);
    return SHOAL_OK;
}

void shoal__remote_stop(shoal_remote_t *r)
{
    if (r == NULL || !r->started || r->stopped)
        return;
    shoal__remote_command(r, CMD_STOP);
    pthread_join(r->thread, NULL);
    r->stopped = true;
}

void shoal__remote_free(shoal_remote_t *r)
{
    if (r == NULL)
        return;
    shoal__remote_stop(r);
    shoal__remote_free_buried(r);
    if (r->launch.release != NULL)
        r->launch.release(r->launch.user);
    if (r->next_launch.release != NULL)
        r->next_launch.release(r->next_launch.user);
    for (uint32_t i = 0; i < r->nops; i++) /* PREPAREs never taken */
        if (r->ops[i].launch.release != NULL)
            r->ops[i].launch.release(r->ops[i].launch.user);
    close(r->cmd_efd);
    shoal__remote_calls_free(r);
    pthread_mutex_destroy(&r->calls_lock);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
