/* waiter.c - calls and waits from a thread that is not an actor.
 *
 * The caller borrows an actor record of kind WAITER: replies are delivered
 * to it like to any actor, but making it runnable wakes the blocked thread
 * (futex on its schedule word: send.c, shoal__schedule) instead of pushing
 * it to a ring. The thread consumes its own mailbox, then closes and
 * drains it like an ending actor, so a late reply is dropped and counted.
 * A blocking call (shoal_runtime_call and its kin) waits for its REPLY; a
 * send_wait for a ROOM (room.h). Calls from an actor are call.c's.
 */
#include <sched.h>
#include <string.h>

#include "actor/call.h"
#include "actor/held.h"
#include "actor/room.h"
#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

/* A reply the waiter a no longer waits for: a checkout pool's member in
 * it goes back (actor/held.h); the payload is dropped. */
static void late(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a, shoal_env_t *e)
{
    if (shoal__held_is_grant(e))
        shoal__held_give_back(rt, tc, shoal__actor_pid(rt, a), e);
    shoal__env_drop_payload(e);
}

static void waiter_end(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a)
{
    shoal_actor_back_t *b = shoal__actor_back(rt, a);
    uint32_t ufin = shoal__rsv_close(&a->user_rsv);
    uint32_t sfin = shoal__rsv_close(&a->sys_rsv);
    unsigned spins = 0;
    while (b->sys_deq != sfin || atomic_load_explicit(&b->user_deq, memory_order_relaxed) != ufin) {
        shoal_env_t *e = shoal__actor_pop(tc, a, b->sys_deq != sfin);
        if (e == NULL) {
            if (++spins > 64)
                sched_yield();
            continue;
        }
        if (shoal__env_kind(e) != SHOAL_MSG_ROOM) /* a second ROOM is no late reply */
            SHOAL_STAT_ADD(tc, replies_late, 1);
        late(rt, tc, a, e);
    }
    shoal__actor_release(rt, tc, a);
}

/* What the caller of request_blocking may stop its wait with (NULL fn:
 * nothing). */
typedef struct until_s {
    bool (*fn)(void *arg);
    void *arg;
} until_t;

static int request_blocking(shoal_runtime_t *rt, shoal_pid_t to, unsigned kind, bool sys,
                            uint32_t type, const void *data, size_t size, uint64_t timeout_ms,
                            until_t until, shoal_answer_t *answer);

/* A waiter whose system mailbox looks empty: sleeps until something comes
 * (true: pop again) or deadline passes (false). */
static bool waiter_sleep(shoal_runtime_t *rt, shoal_actor_t *a, uint64_t deadline)
{
    shoal_actor_back_t *b = shoal__actor_back(rt, a);
    /* seq_cst store then reload: as end_turn (turn.c). */
    atomic_store_explicit(&a->sched, SHOAL_SCHED_IDLE, memory_order_seq_cst);
    if (shoal__rsv_count(atomic_load_explicit(&a->sys_rsv, memory_order_seq_cst)) != b->sys_deq) {
        atomic_store_explicit(&a->sched, SHOAL_SCHED_PROCESSING, memory_order_relaxed);
        return true;
    }
    uint64_t now = shoal__now_ns();
    if (now >= deadline) {
        atomic_store_explicit(&a->sched, SHOAL_SCHED_PROCESSING, memory_order_relaxed);
        return false;
    }
    uint64_t left = deadline - now;
    struct timespec ts = {.tv_sec = (time_t)(left / 1000000000u),
                          .tv_nsec = (long)(left % 1000000000u)};
    shoal__futex_wait(&a->sched, SHOAL_SCHED_IDLE, deadline == UINT64_MAX ? NULL : &ts);
    atomic_store_explicit(&a->sched, SHOAL_SCHED_PROCESSING, memory_order_relaxed);
    return true;
}

SHOAL_API int shoal_runtime_call(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                 const void *data, size_t size, uint64_t timeout_ms,
                                 shoal_answer_t *answer)
{
    return request_blocking(rt, to, SHOAL_MSG_CALL, false, type, data, size, timeout_ms,
                            (until_t){NULL, NULL}, answer);
}

SHOAL_API int shoal_runtime_call_priority(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                          const void *data, size_t size, uint64_t timeout_ms,
                                          shoal_answer_t *answer)
{
    return request_blocking(rt, to, SHOAL_MSG_CALL, true, type, data, size, timeout_ms,
                            (until_t){NULL, NULL}, answer);
}

int shoal__runtime_call_until(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type, const void *data,
                              size_t size, uint64_t timeout_ms, bool (*interrupted)(void *),
                              void *arg, shoal_answer_t *answer)
{
    return request_blocking(rt, to, SHOAL_MSG_CALL, true, type, data, size, timeout_ms,
                            (until_t){interrupted, arg}, answer);
}

SHOAL_API int shoal_runtime_inspect(shoal_runtime_t *rt, shoal_pid_t pid, uint64_t timeout_ms,
                                    shoal_answer_t *answer)
{
    return request_blocking(rt, pid, SHOAL_ENV_INSPECT, true, 0, NULL, 0, timeout_ms,
                            (until_t){NULL, NULL}, answer);
}

static int request_blocking(shoal_runtime_t *rt, shoal_pid_t to, unsigned kind, bool sys,
                            uint32_t type, const void *data, size_t size, uint64_t timeout_ms,
                            until_t until, shoal_answer_t *answer)
{
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    if (tc == NULL)
        return SHOAL_ENOMEM;
    if (tc->worker != NULL || answer == NULL || (size != 0 && data == NULL) || size > UINT32_MAX)
        return SHOAL_EINVAL;
    memset(answer, 0, sizeof *answer);
    shoal_pid_t self;
    int rc =
        shoal__actor_spawn(rt, tc, SHOAL_PID_NONE, NULL, NULL, 0, SHOAL_ACTOR_WAITER, NULL, &self);
    if (rc != SHOAL_OK)
        return rc;
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(self));
    shoal_ref_t ref = shoal__ref_next(rt, tc);
    unsigned flags = sys && kind == SHOAL_MSG_CALL ? SHOAL_ENV_PRIORITY : 0;
    shoal_env_t *e = shoal__env_new(tc, kind, flags, self, ref, type, data, size);
    if (e == NULL) {
        waiter_end(rt, tc, a);
        return SHOAL_ENOMEM;
    }
    atomic_store_explicit(&a->sched, SHOAL_SCHED_PROCESSING, memory_order_relaxed);
    rc = shoal__deliver(rt, tc, to, e, sys);
    if (rc != SHOAL_OK) {
        shoal__env_free(tc, e);
        SHOAL_STAT_ADD(tc, msgs_refused, shoal__rc_refused(rc));
        SHOAL_STAT_ADD(tc, msgs_noproc, rc == SHOAL_ENOPROC);
        waiter_end(rt, tc, a);
        return rc;
    }
    SHOAL_STAT_ADD(tc, msgs_sent, 1);
    uint64_t deadline = shoal__deadline_ns(shoal__now_ns(), timeout_ms);
    rc = SHOAL_ETIMEDOUT;
    for (;;) {
        shoal_env_t *r;
        while ((r = shoal__actor_pop(tc, a, true)) != NULL) {
            if (shoal__env_kind(r) == SHOAL_MSG_REPLY && shoal__env_ref(r) == ref) {
                /* Move it out of the mailbox: the queue keeps its node. */
                shoal_env_t *keep = shoal__env_move(tc, r);
                if (keep == NULL) {
                    shoal__env_drop_payload(r);
                    rc = SHOAL_ENOMEM;
                    goto done;
                }
                bool err = (shoal__env_flags(keep) & SHOAL_ENV_STATUS) != 0;
                answer->type = err ? 0 : keep->type;
                answer->status = err ? (int)keep->type : SHOAL_OK;
                answer->data = shoal__env_data(keep);
                answer->size = keep->size;
                answer->internal_[0] = rt;
                answer->internal_[1] = keep;
                rc = SHOAL_OK;
                goto done;
            }
            SHOAL_STAT_ADD(tc, replies_late, 1);
            late(rt, tc, a, r);
        }
        /* until: asked at each wake, and at least every SHOAL_ASK_EVERY_MS */
        uint64_t wake = deadline;
        if (until.fn != NULL) {
            if (until.fn(until.arg)) {
                rc = SHOAL_ESHUTDOWN;
                break;
            }
            uint64_t slice = shoal__deadline_ns(shoal__now_ns(), SHOAL_ASK_EVERY_MS);
            wake = slice < deadline ? slice : deadline;
        }
        if (!waiter_sleep(rt, a, wake) && wake == deadline)
            break;
    }
    if (kind == SHOAL_MSG_CALL)
        shoal__call_gone(rt, tc, to, self, ref); /* timed out: not to run now */
done:
    waiter_end(rt, tc, a);
    return rc;
}

/* ---- send_wait: a thread waits for room (room.h) ------------------------------ */

/* Sleeps on waiter a until a ROOM arrives (its status, SHOAL_OK or
 * SHOAL_ENOPROC) or deadline passes (SHOAL_ETIMEDOUT). */
static int wait_room(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a, uint64_t deadline)
{
    for (;;) {
        shoal_env_t *r;
        while ((r = shoal__actor_pop(tc, a, true)) != NULL) {
            bool room = shoal__env_kind(r) == SHOAL_MSG_ROOM;
            int status = room ? (int)r->type : SHOAL_OK;
            shoal__env_drop_payload(r);
            if (room)
                return status;
        }
        if (!waiter_sleep(rt, a, deadline))
            return SHOAL_ETIMEDOUT;
    }
}

int shoal__send_wait_after(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, uint32_t type,
                           const void *data, size_t size, uint64_t deadline, int rc)
{
    for (;; rc = shoal_runtime_send(rt, to, type, data, size)) {
        if (!shoal__rc_refused(rc))
            return rc;
        if (shoal__now_ns() >= deadline)
            return SHOAL_ETIMEDOUT;
        shoal_pid_t self;
        int r = shoal__actor_spawn(rt, tc, SHOAL_PID_NONE, NULL, NULL, 0, SHOAL_ACTOR_WAITER, NULL,
                                   &self);
        if (r != SHOAL_OK)
            return r;
        shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(self));
        atomic_store_explicit(&a->sched, SHOAL_SCHED_PROCESSING, memory_order_relaxed);
        r = shoal__room_request(rt, tc, to, self);
        if (r == SHOAL_OK)
            r = wait_room(rt, tc, a, deadline);
        else if (r == SHOAL_ENOTSUP)
            r = rc; /* it cannot tell: its refusal, at once */
        if (r == SHOAL_ETIMEDOUT)
            shoal__room_withdraw(rt, tc, to, self);
        waiter_end(rt, tc, a);
        if (r != SHOAL_OK)
            return r;
    }
}

SHOAL_API int shoal_runtime_send_wait(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                      const void *data, size_t size, uint64_t timeout_ms)
{
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    if (tc == NULL)
        return SHOAL_ENOMEM;
    if (tc->worker != NULL)
        return SHOAL_EINVAL;
    uint64_t deadline = shoal__deadline_ns(shoal__now_ns(), timeout_ms);
    return shoal__send_wait_after(rt, tc, to, type, data, size, deadline,
                                  shoal_runtime_send(rt, to, type, data, size));
}

SHOAL_API void shoal_answer_release(shoal_answer_t *answer)
{
    if (answer == NULL || answer->internal_[1] == NULL)
        return;
    shoal_runtime_t *rt = answer->internal_[0];
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    if (tc != NULL)
        shoal__env_free(tc, answer->internal_[1]);
    memset(answer, 0, sizeof *answer);
}
