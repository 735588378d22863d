/* swap.c - new code for a running pool's workers, in two steps (the
 * SHOAL__POOL_SWAP protocol in pool.h), so that a reload can change many
 * pools all or nothing.
 *
 * PREPARE starts the new workers beside the old ones -- children and members
 * of the pool like any worker, but not in the FIFO, so no sender reaches
 * them, and gated (actor.h), so that they send nothing of their own either
 * -- and waits for each to say it has started (SHOAL_ENV_STARTED,
 * actor.h). The first failure stops the others and answers with its text;
 * when all have started it answers OK and the new workers wait. COMMIT puts
 * them in the old ones' slots, opens them, and retires the old (they finish
 * what they have queued, then end: their code is released with the last
 * of them), and notes its token in the record (swap_done: how the host
 * learns what a COMMIT it did not wait for did). ABORT stops the new ones;
 * the old ones never noticed. A COMMIT that cannot be carried out is an
 * ABORT.
 *
 * A remote pool (remote.h) swaps its whole child: PREPARE starts a second
 * child process from the new code beside the first, COMMIT sends new work
 * to it while the first drains and exits, ABORT stops it. A new child lost
 * after it started (PREPARED, then PREPARE_FAILED: it died, or was killed)
 * does not stop the COMMIT, as a new worker that ends while it waits does
 * not in a pool of our own: the record takes the new code all the same,
 * and the supervisor starts a child from it to take over from the old one
 * (remote_supervisor.c: THE REPLACEMENT). Failing the COMMIT instead would
 * leave the host's record of the pool (and a later reload's comparison)
 * naming code the pool does not run.
 *
 * While a swap is prepared the pool goes on as before: a worker that dies
 * is replaced from the old code, a resize uses the old code. COMMIT takes
 * whatever the FIFO holds then. A new worker that ends while it waits is
 * simply one fewer to put in; COMMIT fills up to the target from the new
 * code. Everything here runs in the pool actor's turns, but for the
 * host's side (shoal__pool_swap_ask, _step), on its thread.
 *
 * THE OFFER AND THE TOKEN. The new code does not travel in the PREPARE
 * message: the host puts it in the record (offer, under offer_lock) with a
 * token, and every step names that token. So a step read after its caller
 * gave up waiting (every dispatcher thread busy past the host's wait) is
 * still safe: a PREPARE finds the offer gone (the host took it back and
 * freed it: nothing leaks) or takes it (then the host's ABORT, queued
 * behind it, stops it); a late COMMIT or ABORT is carried out; and a stale
 * step never touches a later swap (its token is another's). The offer owns
 * one reference on the code's hold, acquired by the host before it is
 * offered: the code cannot be released before the pool holds it.
 */
#include "pool/pool.h"
#include "pool/swap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/send.h"
#include "runtime/runtime.h"

typedef struct shoal_pool_stage_s {
    shoal_pool_swap_t *sw; /* the new code (the stage holds sw->hold) */
    shoal_pid_t *pids;     /* the new workers, in the order they take slots */
    uint32_t n, awaiting;
    shoal_pid_t from; /* the PREPARE call, answered once */
    shoal_ref_t ref;
    uint64_t token; /* the host's name for this swap (sw->token) */
    bool answered;
} shoal_pool_stage_t;

static void answer(struct shoal_ctx_s *ctx, shoal_pool_stage_t *st, int status, const char *why)
{
    if (st->answered)
        return;
    st->answered = true;
    shoal_pool_swap_result_t r = {.status = status, .started = st->n - st->awaiting};
    snprintf(r.why, sizeof r.why, "%s", why ? why : "");
    shoal_reply(ctx, st->from, st->ref, SHOAL__POOL_SWAP, &r, sizeof r);
}

void shoal__pool_swap_free(shoal_pool_swap_t *sw)
{
    if (sw == NULL)
        return;
    if (sw->hold.release != NULL)
        sw->hold.release(sw->hold.what);
    if (sw->remote.release != NULL) /* not given to a remote pool */
        sw->remote.release(sw->remote.user);
    free(sw);
}

static void stage_free(shoal_pool_stage_t *st)
{
    shoal__pool_swap_free(st->sw);
    free(st->pids);
    free(st);
}

/* The offer named token, taken out of p's record; NULL if there is none
 * (taken back by the host, or another swap's). Any thread. */
static shoal_pool_swap_t *offer_take(shoal_pool_t *p, uint64_t token)
{
    pthread_mutex_lock(&p->offer_lock);
    shoal_pool_swap_t *sw = p->offer;
    if (sw != NULL && sw->token == token)
        p->offer = NULL;
    else
        sw = NULL;
    pthread_mutex_unlock(&p->offer_lock);
    return sw;
}

/* Stops the new workers still in the stage: they become retiring ones, so
 * their EXIT is expected (and a drain waits for them). */
static void stop_all(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pool_stage_t *st)
{
    for (uint32_t i = 0; i < st->n; i++) {
        shoal_pid_t pid = st->pids[i];
        shoal__send_system(ctx->rt, ctx->tc, pid, SHOAL_ENV_STOP, ctx->self,
                           (uint32_t)SHOAL_ESHUTDOWN);
        shoal__pool_retire_worker(ctx, p, pid); /* tracked till it ends */
    }
    st->n = 0;
}

/* How many workers the swap puts in: its size, or (keep_size) the target
 * the pool runs with, within the pool's bounds. */
static uint32_t swap_want(const shoal_pool_t *p, const shoal_pool_swap_t *sw)
{
    uint32_t n = sw->keep_size ? p->target : sw->size;
    return n < p->spec.min_size ? p->spec.min_size : n > p->spec.max_size ? p->spec.max_size : n;
}

int shoal__pool_swap_prepare(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t token,
                             shoal_pid_t from, shoal_ref_t ref)
{
    shoal_pool_swap_t *sw = offer_take(p, token);
    if (sw == NULL)
        return SHOAL_EINVAL; /* taken back: its caller no longer waits */
    const shoal_pool_spec_t *top = &sw->chain[0];
    int rc = SHOAL_OK;
    if (p->stage != NULL)
        rc = SHOAL_EBUSY; /* one swap at a time */
    else if ((top->worker_pool == NULL) != (p->spec.worker_pool == NULL) ||
             p->state == SHOAL_POOL_DRAINING)
        rc = SHOAL_EINVAL;
    uint32_t want = swap_want(p, sw);
    shoal_pool_stage_t *st = rc == SHOAL_OK ? calloc(1, sizeof *st) : NULL;
    if (rc == SHOAL_OK &&
        (st == NULL || (st->pids = calloc(want ? want : 1, sizeof *st->pids)) == NULL)) {
        free(st);
        rc = SHOAL_ENOMEM;
    }
    if (rc != SHOAL_OK) {
        shoal__pool_swap_free(sw); /* ours now, whatever the answer */
        return rc;
    }
    st->sw = sw; /* with its hold's reference: the stage's until commit or abort */
    st->from = from;
    st->ref = ref;
    st->token = token;
    p->stage = st;
    if (p->remote != NULL) {
        /* One new child: the supervisor says when it is up (on_remote). */
        st->awaiting = 1;
        rc = shoal__remote_prepare(p->remote, &sw->remote); /* it takes the launch over */
        sw->remote = (shoal_remote_launch_t){0};
        if (rc != SHOAL_OK) {
            answer(ctx, st, rc, "its supervisor has too many steps to carry out");
            p->stage = NULL;
            stage_free(st);
        }
        return SHOAL_DEFER;
    }
    /* The nested chain in sw links its levels to each other: spawning a
     * nested pool copies what it needs. The new workers are spawned gated
     * (staging: workers.c): they run init and nothing else -- their own
     * timers included -- until the COMMIT opens them. */
    for (uint32_t i = 0; i < want; i++) {
        shoal_pid_t pid;
        p->staging = true;
        rc = shoal__pool_spawn_worker(ctx, p, top, &sw->hold, true, &pid);
        p->staging = false;
        if (rc != SHOAL_OK) {
            stop_all(ctx, p, st);
            answer(ctx, st, rc, "cannot spawn a new worker");
            p->stage = NULL;
            stage_free(st);
            return SHOAL_DEFER; /* answered */
        }
        st->pids[st->n++] = pid;
        st->awaiting++;
    }
    if (st->awaiting == 0)
        answer(ctx, st, SHOAL_OK, NULL);
    return SHOAL_DEFER;
}

static bool stage_index(shoal_pool_stage_t *st, shoal_pid_t pid, uint32_t *at)
{
    for (uint32_t i = 0; st != NULL && i < st->n; i++) {
        if (st->pids[i] == pid) {
            *at = i;
            return true;
        }
    }
    return false;
}

bool shoal__pool_swap_on_started(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid,
                                 int status, const char *why, size_t why_len)
{
    shoal_pool_stage_t *st = p->stage;
    uint32_t i;
    if (!stage_index(st, pid, &i))
        return false;
    if (status == SHOAL_OK) {
        if (--st->awaiting == 0)
            answer(ctx, st, SHOAL_OK, NULL);
        return true;
    }
    /* One did not start: the swap is off. The old workers never noticed;
     * the others are stopped; the host hears why (and then aborts). */
    char text[256];
    size_t n = why_len < sizeof text - 1 ? why_len : sizeof text - 1;
    if (n != 0)
        memcpy(text, why, n);
    text[n] = '\0';
    answer(ctx, st, status, n != 0 ? text : shoal_strerror(status));
    stop_all(ctx, p, st);
    return true;
}

void shoal__pool_swap_on_remote(struct shoal_ctx_s *ctx, shoal_pool_t *p, int status,
                                const char *why)
{
    shoal_pool_stage_t *st = p->stage;
    if (st == NULL || st->answered)
        return; /* a child of an aborted swap, or one lost after PREPARED (top) */
    if (status == SHOAL_OK)
        st->awaiting = 0;
    answer(ctx, st, status, status == SHOAL_OK ? NULL : why[0] ? why : shoal_strerror(status));
}

bool shoal__pool_swap_on_exit(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid)
{
    (void)ctx;
    shoal_pool_stage_t *st = p->stage;
    uint32_t i;
    if (!stage_index(st, pid, &i))
        return false;
    /* A new worker that started and then ended while it waited (its start
     * notice came first: a failed start has already stopped the stage). */
    memmove(&st->pids[i], &st->pids[i + 1], (st->n - i - 1) * sizeof *st->pids);
    st->n--;
    return true;
}

int shoal__pool_swap_commit(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t token)
{
    shoal_pool_stage_t *st = p->stage;
    if (st == NULL || st->token != token || !st->answered || st->awaiting != 0)
        return SHOAL_EINVAL; /* not this swap, or not (all) started */
    shoal_pool_swap_t *sw = st->sw;
    const shoal_pool_spec_t *top = &sw->chain[0];
    if (top->worker_pool != NULL) {
        int rc = shoal__pool_copy_nested(p, top);
        if (rc != SHOAL_OK) {
            /* The swap is off, as at an ABORT: a COMMIT its host no longer
             * waits for leaves no stage behind to refuse the next PREPARE
             * (EBUSY), and swap_done tells the host its code did not change. */
            shoal__pool_swap_abort(ctx, p, token);
            return rc;
        }
    } else {
        p->spec.worker = top->worker;
    }
    p->spec.worker_args = top->worker_args;
    if (p->pull != NULL && top->source != NULL) {
        /* A pull pool's source comes with the new code too: its behaviour
         * and args, read at its next start (an epic, a restart), are the
         * code's the record holds from now on -- the old code's go with
         * it (they were read after it was freed). */
        p->spec.source = top->source;
        p->spec.source_args = top->source_args;
    }
    /* The stage's hold becomes the record's; the old code is released by
     * the record now and by each old worker as it ends. */
    if (p->hold.release != NULL)
        p->hold.release(p->hold.what);
    p->hold = sw->hold;
    sw->hold = (shoal_pool_hold_t){0};
    /* (p->label keeps the first behaviour's name: workers read it while
     * they run, so it is never rewritten.) */
    uint32_t want = swap_want(p, sw);
    atomic_store_explicit(&p->swap_done, token, memory_order_relaxed); /* see pool.h */
    if (p->remote != NULL) { /* new work to the new child; the old one drains */
        p->target = want;
        shoal__remote_control(p->remote, want, p->spec.mailbox);
        shoal__remote_commit(p->remote);
        p->stage = NULL;
        stage_free(st);
        return (int)want;
    }
    uint32_t live = shoal__pool_live(p);
    uint32_t k = st->n < live ? st->n : live; /* replaced in place */
    for (uint32_t i = 0; i < k; i++) {
        shoal_pid_t old = shoal__pool_slot(p, i);
        shoal__pool_slot_set(p, i, st->pids[i]); /* the new one first: never fewer */
        shoal__pool_retire_worker(ctx, p, old);
    }
    for (uint32_t i = k; i < st->n; i++) /* more new than old */
        shoal__pool_table_append(p, st->pids[i]);
    for (uint32_t i = 0; i < st->n; i++) /* in their places: they may handle work now */
        shoal__pool_open_worker(ctx, p, st->pids[i]);
    while (shoal__pool_live(p) > st->n) { /* more old than new: the rest retire */
        uint32_t n = shoal__pool_live(p);
        shoal_pid_t old = shoal__pool_slot(p, n - 1);
        /* release: out of the FIFO before its mailbox closes. */
        atomic_store_explicit(&p->nworkers, n - 1, memory_order_release);
        shoal__pool_retire_worker(ctx, p, old);
    }
    p->target = want;
    st->n = 0;
    p->stage = NULL;
    stage_free(st);
    shoal__pool_fill(ctx, p, false); /* new ones that ended while they waited */
    return (int)k;
}

void shoal__pool_swap_abort(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t token)
{
    shoal_pool_stage_t *st = p->stage;
    if (st == NULL || (token != 0 && st->token != token))
        return;
    answer(ctx, st, SHOAL_ESHUTDOWN, "the swap was aborted");
    if (p->remote != NULL)
        shoal__remote_abort(p->remote);
    stop_all(ctx, p, st);
    p->stage = NULL;
    stage_free(st);
}

/* ---- the host's side, on its thread --------------------------------------------------- */

int shoal__pool_swap_ask(shoal_runtime_t *rt, shoal_pool_t *p, shoal_pid_t pid,
                         shoal_pool_swap_t *sw, uint64_t timeout_ms, uint64_t *token,
                         shoal_pool_swap_result_t *r)
{
    return shoal__pool_swap_ask_until(rt, p, pid, sw, timeout_ms, NULL, NULL, token, r);
}

int shoal__pool_swap_ask_until(shoal_runtime_t *rt, shoal_pool_t *p, shoal_pid_t pid,
                               shoal_pool_swap_t *sw, uint64_t timeout_ms,
                               bool (*interrupted)(void *), void *arg, uint64_t *token,
                               shoal_pool_swap_result_t *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_lock(&p->offer_lock);
    shoal_pool_swap_t *stale = p->offer; /* none: every ask takes its own back */
    sw->token = *token = ++p->offer_seq;
    p->offer = sw;
    pthread_mutex_unlock(&p->offer_lock);
    shoal__pool_swap_free(stale);
    shoal_answer_t a;
    int rc = shoal__runtime_call_until(rt, pid, SHOAL__POOL_SWAP, token, sizeof *token, timeout_ms,
                                       interrupted, arg, &a);
    /* Whatever happened: an offer still there was never taken, and never
     * will be now (a PREPARE read later finds nothing). */
    shoal__pool_swap_free(offer_take(p, *token));
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && a.size == sizeof *r)
        memcpy(r, a.data, sizeof *r);
    else if (rc == SHOAL_OK)
        rc = SHOAL_ENOTSUP; /* not a pool's answer */
    shoal_answer_release(&a);
    return rc == SHOAL_OK ? r->status : rc;
}

int shoal__pool_swap_step(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type, uint64_t token,
                          uint64_t timeout_ms, uint32_t *replaced)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pid, type, &token, sizeof token, timeout_ms, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && replaced != NULL) {
        if (a.size == sizeof *replaced)
            memcpy(replaced, a.data, sizeof *replaced);
        else
            rc = SHOAL_ENOTSUP; /* not a pool's answer */
    }
    shoal_answer_release(&a);
    return rc;
}
