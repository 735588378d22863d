/* send.c - sending: reserve, push, schedule. The mailbox protocol is in
 * mailbox.h, the schedule word's in actor.h. */
#include "actor/send.h"

#include "actor/room.h"

#include "actor/group.h"
#include "runtime/qsbr.h"
#include "runtime/runtime.h"
#include "sched/futex.h"
#include "sched/worker.h"

bool shoal__schedule(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a)
{
    /* seq_cst: the sender's load in the Dekker pair with end_turn
     * (turn.c), after the seq_cst reservation CAS. */
    uint32_t s = atomic_load_explicit(&a->sched, memory_order_seq_cst);
    if (s != SHOAL_SCHED_IDLE)
        return false;
    /* seq_cst: acquires the last worker's writes (released by its IDLE
     * store) and is part of the same Dekker pair. */
    if (!atomic_compare_exchange_strong_explicit(&a->sched, &s, SHOAL_SCHED_SCHEDULED,
                                                 memory_order_seq_cst, memory_order_relaxed))
        return false;
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_WAITER)
        shoal__futex_wake(&a->sched, 1);
    else
        shoal__sched_push(rt, tc, a);
    return true;
}

/* `to` is a live actor that is not a group after all (the caller's early
 * read of the kind was stale), or its kind sends e to its own actor
 * (group.h): deliver as to any actor. */
#define NOT_GROUP SHOAL_GROUP_OWN_MAILBOX

/* The group `to` (front a), for a send or a room request, found inside a
 * read-side region: the record may be unpublished and retired meanwhile,
 * but is not freed before the region ends (leave_group). NULL with *rc:
 * SHOAL_ENOPROC, or NOT_GROUP. */
static shoal_group_t *enter_group(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a,
                                  shoal_pid_t to, int *rc)
{
    (void)rt;
    shoal__qsbr_enter(tc);
    *rc = SHOAL_ENOPROC;
    /* acquire: pairs with the release stores of spawn (spawn.c): the record
     * a live generation points at is set up. */
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
    /* seq_cst: the reader's load of the Dekker pair in qsbr.h (it also
     * acquires: the record is initialised before it is published). It may
     * be a later group's on this slot (then its pid differs) or one that
     * ended (in limbo, still readable inside our region). */
    shoal_group_t *g = atomic_load_explicit(&a->group, memory_order_seq_cst);
    if (shoal__rsv_gen(w) != shoal__pid_gen(to) || !shoal__rsv_alive(w))
        return NULL;
    /* The caller read the kind before it knew the generation: check it now
     * that the acquire above has shown us that generation's spawn. */
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_GROUP) {
        *rc = NOT_GROUP;
        return NULL;
    }
    return g != NULL && g->pid == to ? g : NULL;
}

static void leave_group(shoal_tcache_t *tc, bool opened)
{
    /* A worker thread stays in its region until the end of its turn. */
    if (opened && tc->worker == NULL)
        shoal__qsbr_exit(tc);
}

/* Hands a user-mailbox envelope sent to the group `to` to its kind.
 * SHOAL_OK: taken; NOT_GROUP; else an error, and the caller keeps e. */
static int route_to_group(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a, shoal_pid_t to,
                          shoal_env_t *e)
{
    bool opened = !tc->in_region;
    int rc;
    shoal_group_t *g = enter_group(rt, tc, a, to, &rc);
    if (g != NULL)
        rc = g->ops->route(rt, tc, g, e);
    leave_group(tc, opened);
    return rc;
}

/* shoal__deliver's body, inlined into the send path. */
static inline __attribute__((always_inline)) int deliver(shoal_runtime_t *rt, shoal_tcache_t *tc,
                                                         shoal_pid_t to, shoal_env_t *e, bool sys)
{
    uint32_t slot = shoal__pid_slot(to);
    if (to == SHOAL_PID_NONE)
        return SHOAL_ENOPROC;
    if (__builtin_expect(slot >= rt->max_actors, 0))
        return (slot & SHOAL__PID_REMOTE) && rt->gateway != NULL
                   ? rt->gateway(rt->gateway_user, tc, to, e, sys)
                   : SHOAL_ENOPROC;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    int rc;
    /* A group routes (the kind is checked again there, with the generation;
     * a PLAIN read that is stale lands in a group's own mailbox, and the
     * group places it like a handed-back message). */
    if (!sys && atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_GROUP) {
        rc = route_to_group(rt, tc, a, to, e);
        if (rc != NOT_GROUP)
            return rc;
    }
    if (sys) {
        rc = shoal__rsv_reserve(&a->sys_rsv, shoal__pid_gen(to), 0, NULL);
    } else {
        uint32_t limit = shoal__actor_limit(a);
        if (limit == 0 && (rc = shoal__queued_admit(rt, tc)) != SHOAL_OK)
            return rc;
        rc = shoal__rsv_reserve(&a->user_rsv, shoal__pid_gen(to), limit,
                                &shoal__actor_back(rt, a)->user_deq);
        if (rc == SHOAL_OK && limit == 0)
            shoal__queued_in(tc, e);
    }
    if (rc != SHOAL_OK)
        return rc;
    shoal__mq_push(sys ? &a->sys_tail : &a->user_tail, &e->node);
    shoal__schedule(rt, tc, a);
    return SHOAL_OK;
}

int shoal__deliver(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e,
                   bool sys)
{
    return deliver(rt, tc, to, e, sys);
}

int shoal__deliver_over(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e)
{
    uint32_t slot = shoal__pid_slot(to);
    if (to == SHOAL_PID_NONE || slot >= rt->max_actors)
        return SHOAL_ENOPROC;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    int rc = shoal__rsv_reserve(&a->user_rsv, shoal__pid_gen(to), 0, NULL);
    if (rc != SHOAL_OK)
        return rc;
    if (shoal__actor_limit(a) == 0)
        shoal__queued_in(tc, e); /* placed over any limit: never refused, still counted */
    shoal__mq_push(&a->user_tail, &e->node);
    shoal__schedule(rt, tc, a);
    return SHOAL_OK;
}

/* Whether `to` is a live bounded actor whose user mailbox is full now. */
static bool full_now(shoal_runtime_t *rt, shoal_pid_t to)
{
    if (to == SHOAL_PID_NONE || shoal__pid_slot(to) >= rt->max_actors)
        return false;
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(to));
    uint32_t limit = shoal__actor_limit(a);
    if (limit == 0)
        return false;
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    uint32_t deq = atomic_load_explicit(&shoal__actor_back(rt, a)->user_deq, memory_order_relaxed);
    return shoal__rsv_gen(w) == shoal__pid_gen(to) && shoal__rsv_alive(w) &&
           shoal__rsv_depth(w, deq) >= limit;
}

/* A send's end: the envelope e delivered to `to`, or freed and the refusal
 * counted. Ownership of data_owned stays with the caller on a refusal. */
static inline __attribute__((always_inline)) int send_env(shoal_runtime_t *rt, shoal_tcache_t *tc,
                                                          shoal_pid_t to, shoal_env_t *e,
                                                          bool priority, bool owned)
{
    int rc = deliver(rt, tc, to, e, priority);
    if (__builtin_expect(rc == SHOAL_OK, 1)) {
        SHOAL_STAT_ADD(tc, msgs_sent, 1);
        return SHOAL_OK;
    }
    if (owned)
        e->meta &= ~(uint64_t)SHOAL_ENV_HEAP;
    shoal__env_free(tc, e);
    if (shoal__rc_refused(rc))
        SHOAL_STAT_ADD(tc, msgs_refused, 1);
    else if (rc == SHOAL_ENOPROC)
        SHOAL_STAT_ADD(tc, msgs_noproc, 1);
    return rc;
}

int shoal__send(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                uint32_t type, const void *data, size_t size, bool priority, void *data_owned,
                shoal_free_fn free_fn)
{
    if (tc == NULL)
        return SHOAL_ENOMEM;
    if ((size != 0 && data == NULL && data_owned == NULL) || size > UINT32_MAX)
        return SHOAL_EINVAL;
    unsigned flags = priority ? SHOAL_ENV_PRIORITY : 0;
    shoal_env_t *e;
    if (__builtin_expect(data_owned == NULL && size <= SHOAL_INLINE_MAX, 1)) {
        /* The common case: a small copied payload, no call out of here. A
         * refusal costs an envelope from the thread's stack and back. */
        e = shoal__env_new(tc, SHOAL_MSG_CAST, flags, from, 0, type, data, size);
    } else {
        /* A full mailbox refuses before we copy to the heap. Reading the
         * depth here is a valid moment for the refusal; a mailbox that
         * looks open is checked again, exactly, by the reservation. */
        if (!priority && full_now(rt, to)) {
            SHOAL_STAT_ADD(tc, msgs_refused, 1);
            return SHOAL_EFULL;
        }
        if (data_owned != NULL)
            e = shoal__env_new_owned(tc, SHOAL_MSG_CAST, flags, from, 0, type, data_owned, size,
                                     free_fn);
        else
            e = shoal__env_new(tc, SHOAL_MSG_CAST, flags, from, 0, type, data, size);
    }
    if (e == NULL)
        return SHOAL_ENOMEM;
    return send_env(rt, tc, to, e, priority, data_owned != NULL);
}

/* ---- many messages at once (shoal_send_many) ------------------------------ */

void shoal__env_link(shoal_env_t **envs, uint32_t n)
{
    for (uint32_t i = 0; i + 1 < n; i++)
        atomic_store_explicit(&envs[i]->node.next, &envs[i + 1]->node, memory_order_relaxed);
}

int shoal__deliver_many_plain(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a,
                              shoal_pid_t to, shoal_env_t **envs, uint32_t n, uint32_t flags,
                              uint32_t *took)
{
    uint32_t limit = shoal__actor_limit(a);
    int rc;
    *took = 0;
    if (n == 0)
        return SHOAL_OK;
    if (limit == 0 && (rc = shoal__queued_admit(rt, tc)) != SHOAL_OK)
        return rc;
    uint32_t k;
    rc = shoal__rsv_reserve_many(&a->user_rsv, shoal__pid_gen(to), limit,
                                 &shoal__actor_back(rt, a)->user_deq, n, &k);
    if (rc != SHOAL_OK)
        return rc;
    for (uint32_t i = 0; i < k; i++) {
        envs[i]->meta |= flags;
        if (limit == 0)
            shoal__queued_in(tc, envs[i]);
    }
    shoal__env_link(envs, k);
    shoal__mq_push_chain(&a->user_tail, &envs[0]->node, &envs[k - 1]->node);
    shoal__schedule(rt, tc, a);
    *took = k;
    return k == n ? SHOAL_OK : SHOAL_EFULL;
}

/* deliver() for envs[0 .. n) into user mailboxes, in order: the first
 * *took taken, the error the next one met. */
static int deliver_many(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t **envs,
                        uint32_t n, uint32_t *took)
{
    uint32_t slot = shoal__pid_slot(to);
    *took = 0;
    if (to != SHOAL_PID_NONE && slot < rt->max_actors) {
        shoal_actor_t *a = shoal__actor_at(rt, slot);
        if (atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_GROUP)
            return shoal__deliver_many_plain(rt, tc, a, to, envs, n, 0, took);
        bool opened = !tc->in_region;
        int rc;
        shoal_group_t *g = enter_group(rt, tc, a, to, &rc);
        if (g != NULL && g->ops->route_many != NULL) {
            rc = g->ops->route_many(rt, tc, g, envs, n, took);
            leave_group(tc, opened);
            return rc;
        }
        leave_group(tc, opened);
        if (g == NULL && rc != NOT_GROUP)
            return rc;
    }
    /* One by one: a kind that routes one at a time, a stale kind, a
     * remote PID. */
    for (uint32_t i = 0; i < n; i++) {
        int rc = deliver(rt, tc, to, envs[i], false);
        if (rc != SHOAL_OK)
            return rc;
        ++*took;
    }
    return SHOAL_OK;
}

/* How many envelopes shoal__send_many builds and offers at a time: a few
 * first, so a receiver that is full refuses the run at the price of a few
 * envelopes built and freed, then runs of this many. */
#define SEND_MANY_FIRST 8u
#define SEND_MANY_CHUNK 64u

int shoal__send_many(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                     uint32_t type, const void *data, size_t size, size_t n, size_t *sent)
{
    size_t done = 0;
    int rc = SHOAL_OK;
    if (tc == NULL)
        rc = SHOAL_ENOMEM;
    else if ((size != 0 && data == NULL) || size > UINT32_MAX)
        rc = SHOAL_EINVAL;
    const unsigned char *p = data;
    if (rc == SHOAL_OK && size > SHOAL_INLINE_MAX) {
        /* Each on the heap anyway: one by one. */
        for (; done < n; done++)
            if ((rc = shoal__send(rt, tc, from, to, type, p + done * size, size, false, NULL,
                                  NULL)) != SHOAL_OK)
                break;
        goto out;
    }
    while (rc == SHOAL_OK && done < n) {
        shoal_env_t *envs[SEND_MANY_CHUNK];
        uint32_t chunk = done == 0 ? SEND_MANY_FIRST : SEND_MANY_CHUNK;
        uint32_t m = n - done < chunk ? (uint32_t)(n - done) : chunk;
        uint32_t built = 0, took = 0;
        for (; built < m; built++) {
            /* No payload (size 0, data may be NULL): no pointer arithmetic
             * on it, which is undefined for NULL even by 0. */
            envs[built] = shoal__env_new(tc, SHOAL_MSG_CAST, 0, from, 0, type,
                                         size != 0 ? p + (done + built) * size : p, size);
            if (envs[built] == NULL)
                break;
        }
        rc = built == 0 ? SHOAL_ENOMEM : deliver_many(rt, tc, to, envs, built, &took);
        for (uint32_t i = took; i < built; i++)
            shoal__env_free(tc, envs[i]);
        done += took;
        SHOAL_STAT_ADD(tc, msgs_sent, took);
        if (rc == SHOAL_OK && built < m)
            rc = SHOAL_ENOMEM;
        if (shoal__rc_refused(rc))
            SHOAL_STAT_ADD(tc, msgs_refused, 1);
        else if (rc == SHOAL_ENOPROC)
            SHOAL_STAT_ADD(tc, msgs_noproc, 1);
    }
out:
    if (sent != NULL)
        *sent = done;
    return rc;
}

int shoal__send_system(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, unsigned kind,
                       shoal_pid_t from, uint32_t type)
{
    if (tc == NULL)
        return SHOAL_ENOMEM;
    shoal_env_t *e = shoal__env_new_reserved(tc, kind, 0, from, 0, type, NULL, 0);
    if (e == NULL)
        return SHOAL_ENOMEM;
    int rc = shoal__deliver(rt, tc, to, e, true);
    if (rc != SHOAL_OK)
        shoal__env_free(tc, e);
    return rc;
}

int shoal__send_reserved(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from, shoal_pid_t to,
                         uint32_t type, const void *data, size_t size)
{
    if (tc == NULL)
        return SHOAL_ENOMEM;
    if (size > SHOAL_INLINE_MAX || (size != 0 && data == NULL))
        return SHOAL_EINVAL;
    shoal_env_t *e =
        shoal__env_new_reserved(tc, SHOAL_MSG_CAST, SHOAL_ENV_PRIORITY, from, 0, type, data, size);
    if (e == NULL)
        return SHOAL_ENOMEM;
    return send_env(rt, tc, to, e, true, false);
}

/* ---- public entry points ------------------------------------------------ */

#include "actor/ctx.h"

/* A source's send (ctx->sends set): sent, then counted. Out of line, so
 * that every other actor's send pays one load and one branch for it. */
static __attribute__((noinline, cold)) int send_counted(shoal_ctx_t *ctx, shoal_pid_t to,
                                                        uint32_t type, const void *data,
                                                        size_t size, void *owned,
                                                        shoal_free_fn free_fn)
{
    int rc = shoal__send(ctx->rt, ctx->tc, ctx->self, to, type, data, size, false, owned, free_fn);
    shoal__ctx_count_send(ctx, to, rc);
    return rc;
}

/* Every send shoal_send's fast path does not take, whole: a source's, a
 * large or NULL payload, a remote or grouped receiver, a thread whose
 * envelope stack is empty, a runtime that caps queued messages. */
static __attribute__((noinline)) int send_general(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type,
                                                  const void *data, size_t size)
{
    if (__builtin_expect(ctx->sends != NULL, 0))
        return send_counted(ctx, to, type, data, size, NULL, NULL);
    if (__builtin_expect(size <= SHOAL_INLINE_MAX && (data != NULL || size == 0), 1)) {
        shoal_env_t *e = shoal__env_new(ctx->tc, SHOAL_MSG_CAST, 0, ctx->self, 0, type, data, size);
        return e != NULL ? send_env(ctx->rt, ctx->tc, to, e, false, false) : SHOAL_ENOMEM;
    }
    return shoal__send(ctx->rt, ctx->tc, ctx->self, to, type, data, size, false, NULL, NULL);
}

/* The fast path's end when the receiver was idle: shoal__schedule (its
 * seq_cst load again, then its CAS), out of line so that the fast path
 * calls nothing but in tail position. */
static __attribute__((noinline)) int schedule_sent(shoal_runtime_t *rt, shoal_tcache_t *tc,
                                                   shoal_actor_t *a)
{
    shoal__schedule(rt, tc, a);
    return SHOAL_OK;
}

/* The common send: a small copied payload to a local actor that is not a
 * group, an envelope on the thread's stack, no cap on queued messages.
 * What deliver() and send_env() do for it, in the same order and with the
 * same atomics (mailbox.h, actor.h), with no call but tail calls, so that
 * it saves almost no registers (one on x86-64, where the general path
 * saved six: bench/cost W1-direct 225 -> 212 instructions a message).
 * Anything else is send_general's, decided before anything is taken. */
SHOAL_API int shoal_send(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                         size_t size)
{
    shoal_runtime_t *rt = ctx->rt;
    shoal_tcache_t *tc = ctx->tc;
    uint32_t slot = shoal__pid_slot(to);
    if (__builtin_expect(ctx->sends != NULL || size > SHOAL_INLINE_MAX || to == SHOAL_PID_NONE ||
                             slot >= rt->max_actors || tc->env_nfree == 0 || rt->max_queued != 0,
                         0))
        return send_general(ctx, to, type, data, size);
    if (__builtin_expect(data == NULL, 0) && size != 0)
        return send_general(ctx, to, type, data, size); /* its SHOAL_EINVAL */
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    /* A group routes (deliver(): a PLAIN read that is stale lands in the
     * group's own mailbox, as there). */
    if (__builtin_expect(atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_GROUP,
                         0))
        return send_general(ctx, to, type, data, size);
    shoal_env_t *e = tc->envs[--tc->env_nfree];
    shoal__env_fill_at(e, SHOAL_MSG_CAST, 0, ctx->self, 0, type, data, size);
    uint32_t limit = shoal__actor_limit(a);
    int rc = shoal__rsv_reserve(&a->user_rsv, shoal__pid_gen(to), limit,
                                &shoal__actor_back(rt, a)->user_deq);
    if (__builtin_expect(rc != SHOAL_OK, 0)) {
        tc->envs[tc->env_nfree++] = e; /* where it came from: there is room */
        if (rc == SHOAL_EFULL)
            SHOAL_STAT_ADD(tc, msgs_refused, 1);
        else
            SHOAL_STAT_ADD(tc, msgs_noproc, 1);
        return rc;
    }
    if (limit == 0)
        shoal__queued_mark(tc, e); /* shoal__queued_in, when max_queued is 0 */
    shoal__mq_push(&a->user_tail, &e->node);
    SHOAL_STAT_ADD(tc, msgs_sent, 1);
    /* seq_cst: shoal__schedule's first load (the sender's load of the
     * Dekker pair with end_turn, after the seq_cst reservation CAS);
     * schedule_sent repeats it before its CAS. */
    if (atomic_load_explicit(&a->sched, memory_order_seq_cst) == SHOAL_SCHED_IDLE)
        return schedule_sent(rt, tc, a);
    return SHOAL_OK;
}

SHOAL_API int shoal_send_owned(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, void *data,
                               size_t size, shoal_free_fn free_fn)
{
    if (data == NULL)
        return SHOAL_EINVAL;
    if (__builtin_expect(ctx->sends != NULL, 0))
        return send_counted(ctx, to, type, NULL, size, data, free_fn);
    return shoal__send(ctx->rt, ctx->tc, ctx->self, to, type, NULL, size, false, data, free_fn);
}

SHOAL_API int shoal_send_many(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                              size_t size, size_t n, size_t *sent)
{
    size_t done;
    int rc = shoal__send_many(ctx->rt, ctx->tc, ctx->self, to, type, data, size, n, &done);
    if (__builtin_expect(ctx->sends != NULL, 0) && to != ctx->self) {
        atomic_fetch_add_explicit(&ctx->sends->sent, done, memory_order_relaxed);
        if (shoal__rc_refused(rc))
            atomic_fetch_add_explicit(&ctx->sends->refused, 1, memory_order_relaxed);
    }
    if (sent != NULL)
        *sent = done;
    return rc;
}

SHOAL_API int shoal_send_priority(shoal_ctx_t *ctx, shoal_pid_t to, uint32_t type, const void *data,
                                  size_t size)
{
    return shoal__send(ctx->rt, ctx->tc, ctx->self, to, type, data, size, true, NULL, NULL);
}

SHOAL_API int shoal_runtime_send(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                 const void *data, size_t size)
{
    return shoal__send(rt, shoal__tcache_get(rt), SHOAL_PID_NONE, to, type, data, size, false, NULL,
                       NULL);
}

SHOAL_API int shoal_runtime_send_many(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                      const void *data, size_t size, size_t n, size_t *sent)
{
    return shoal__send_many(rt, shoal__tcache_get(rt), SHOAL_PID_NONE, to, type, data, size, n,
                            sent);
}

SHOAL_API int shoal_runtime_send_owned(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                       void *data, size_t size, shoal_free_fn free_fn)
{
    if (data == NULL)
        return SHOAL_EINVAL;
    return shoal__send(rt, shoal__tcache_get(rt), SHOAL_PID_NONE, to, type, NULL, size, false, data,
                       free_fn);
}

SHOAL_API int shoal_runtime_send_priority(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                          const void *data, size_t size)
{
    return shoal__send(rt, shoal__tcache_get(rt), SHOAL_PID_NONE, to, type, data, size, true, NULL,
                       NULL);
}

int shoal__room_request(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_pid_t waiter)
{
    uint32_t slot = shoal__pid_slot(to);
    if (to == SHOAL_PID_NONE || slot >= rt->max_actors)
        return SHOAL_ENOPROC;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    uint32_t kind = atomic_load_explicit(&a->kind, memory_order_relaxed);
    if (kind == SHOAL_ACTOR_WAITER)
        return SHOAL_ENOPROC; /* a thread's waiter: not a receiver */
    /* Refused for max_queued: room comes when the runtime's unbounded
     * mailboxes drain, not from the receiver (room.h). */
    int qrc = shoal__room_ask_queued(rt, tc, to, waiter, kind == SHOAL_ACTOR_GROUP);
    if (qrc != SHOAL_ENOTSUP)
        return qrc;
    if (kind == SHOAL_ACTOR_GROUP) {
        bool opened = !tc->in_region;
        int rc;
        shoal_group_t *g = enter_group(rt, tc, a, to, &rc);
        if (g != NULL)
            rc = g->ops->room != NULL ? g->ops->room(rt, tc, g, waiter) : SHOAL_ENOTSUP;
        leave_group(tc, opened);
        if (rc != NOT_GROUP)
            return rc;
    }
    return shoal__room_ask(rt, tc, to, waiter); /* a plain actor (room.h) */
}

void shoal__room_withdraw(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to,
                          shoal_pid_t waiter)
{
    uint32_t slot = shoal__pid_slot(to);
    if (to == SHOAL_PID_NONE || slot >= rt->max_actors)
        return;
    if (rt->max_queued != 0)
        shoal__room_cancel_queued(rt, to, waiter);
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_GROUP) {
        bool opened = !tc->in_region;
        int rc;
        shoal_group_t *g = enter_group(rt, tc, a, to, &rc);
        if (g != NULL && g->ops->room_cancel != NULL)
            g->ops->room_cancel(rt, g, waiter);
        leave_group(tc, opened);
        if (g != NULL && g->ops->room_cancel != NULL)
            return;
    }
    shoal__room_cancel(rt, to, waiter); /* the registry's (room.h) */
}

void shoal__call_gone(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_pid_t caller,
                      shoal_ref_t ref)
{
    uint32_t slot = shoal__pid_slot(to);
    if (to == SHOAL_PID_NONE || slot >= rt->max_actors)
        return;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_GROUP)
        return;
    bool opened = !tc->in_region;
    /* Not enter_group: a draining group has closed its reserve to new
     * messages, but what it still holds must hear that its caller gave up
     * (group.h: call_gone). The group its front pointer names is readable
     * inside the region, ended or not. */
    shoal__qsbr_enter(tc);
    /* seq_cst: the reader's load of the Dekker pair in qsbr.h. */
    shoal_group_t *g = atomic_load_explicit(&a->group, memory_order_seq_cst);
    if (g != NULL && g->pid == to && g->ops->call_gone != NULL)
        g->ops->call_gone(rt, tc, g, caller, ref);
    leave_group(tc, opened);
}

SHOAL_API int shoal_notify_room(shoal_ctx_t *ctx, shoal_pid_t to)
{
    return shoal__room_request(ctx->rt, ctx->tc, to, ctx->self);
}
