/* test_room_notify.c - shoal_notify_room's contract (room.h, forward.c,
 * pull_room.c; ctx.h), used the way a careless operator and a hostile
 * caller would, with exact outcomes:
 *   - notify_room asked twice, for a receiver that has room already, for
 *     receivers that are gone, by askers that end before their ROOM, by
 *     thousands of askers at once.
 *
 * A bug these cases found is fixed, and they hold it: an asker that ended
 * still counted as waiting (and against max_waiting).
 *
 * No assertion is about time: deadlines are only upper bounds of waits.
 * Handlers never call CUnit: they record into atomics (room_kit.h); the
 * test thread asserts after synchronising on them.
 */
#include <stdint.h>
#include <stdlib.h>

#include "room_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, RK_WAIT_S)

/* ---- notify_room's contract, one asker at a time ------------------------------ */

/* Asker `idx` asks `to` (blocked and filled by the caller) twice: no ROOM
 * yet and `waiting` counts 2; once the gate opens, two ROOMs with
 * SHOAL_OK and nothing left registered. */
static void ask_twice(shoal_runtime_t *rt, shoal_pid_t to, int idx,
                      size_t (*waiting)(shoal_runtime_t *, shoal_pid_t))
{
    shoal_pid_t a = rk_spawn_asker(rt, (uint32_t)idx);
    CU_ASSERT_EQUAL(rk_ask_sync(rt, a, idx, to), SHOAL_OK);
    CU_ASSERT_EQUAL(rk_ask_sync(rt, a, idx, to), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rk_rooms[idx]), 0);
    CU_ASSERT_EQUAL(waiting(rt, to), 2);
    atomic_store(&rk_gate, 1);
    WAIT_UNTIL(atomic_load(&rk_rooms[idx]) == 2 && waiting(rt, to) == 0);
    CU_ASSERT_EQUAL(waiting(rt, to), 0); /* none left: no third can come */
    CU_ASSERT_EQUAL(atomic_load(&rk_rooms[idx]), 2);
    CU_ASSERT_EQUAL(atomic_load(&rk_room_status[idx]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rk_bad[idx]), 0);
}

/* rk_waiting_of (a pull pool's count) in the shape ask_twice takes. */
static size_t pull_waiting(shoal_runtime_t *rt, shoal_pid_t pool)
{
    return rk_waiting_of(rt, pool);
}

/* Asked twice before room comes, an asker gets two ROOMs (one per ask),
 * both SHOAL_OK from the receiver, and nothing stays registered: a stuck
 * bounded actor, then a stuck pull pool (counted waiting 2 meanwhile). */
static void asked_twice_an_asker_gets_two_rooms(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = rk_spawn_sink(rt, 2);
    rk_block(rt, s, 1);
    CU_ASSERT_EQUAL(rk_fill(rt, s, 0), 2);
    ask_twice(rt, s, 0, rk_waiters_of);

    atomic_store(&rk_gate, 0);
    shoal_pool_spec_t sp = rk_pool_spec(SHOAL_POOL_KIND_PULL, 1, 1, 0);
    shoal_pid_t p = rk_spawn_pool(rt, &sp);
    rk_block(rt, p, 1);
    CU_ASSERT_EQUAL(rk_fill(rt, p, 10), 1);
    ask_twice(rt, p, 1, pull_waiting);
    shoal_runtime_destroy(rt);
}

/* A receiver with room already: SHOAL_OK and one ROOM (SHOAL_OK) at once --
 * an idle bounded actor, an unbounded one, an idle forward pool, an idle
 * pull pool. A receiver that is gone: the asker hears exactly once --
 * either the ask returns SHOAL_ENOPROC and no ROOM comes, or it returns
 * SHOAL_OK and one ROOM with status SHOAL_ENOPROC (ctx.h allows both
 * readings) -- a stopped actor, a drained pool; SHOAL_PID_NONE and a PID
 * that no slot has: SHOAL_ENOPROC and nothing. */
static void room_at_once_and_receivers_that_are_gone(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t fs = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 4, 0);
    shoal_pool_spec_t ps = rk_pool_spec(SHOAL_POOL_KIND_PULL, 2, 4, 0);
    shoal_pid_t live[4] = {rk_spawn_sink(rt, 4), rk_spawn_sink(rt, 0), rk_spawn_pool(rt, &fs),
                           rk_spawn_pool(rt, &ps)};
    for (uint32_t i = 0; i < 4; i++) {
        shoal_pid_t a = rk_spawn_asker(rt, i);
        CU_ASSERT_EQUAL(rk_ask_sync(rt, a, i, live[i]), SHOAL_OK);
        CU_ASSERT_EQUAL(atomic_load(&rk_rooms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&rk_room_status[i]), SHOAL_OK);
        CU_ASSERT_EQUAL(atomic_load(&rk_room_from[i]), live[i]);
    }
    CU_ASSERT_EQUAL(rk_waiters_of(rt, live[0]), 0);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, live[1]), 0);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, live[2]), 0);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, live[3]), 0);

    /* Gone. */
    shoal_pid_t dead_sink = rk_spawn_sink(rt, 4);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, dead_sink), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_send(rt, dead_sink, T_NOP, NULL, 0) == SHOAL_ENOPROC);
    shoal_pool_spec_t ds = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 1, 4, 0);
    shoal_pid_t dead_pool = rk_spawn_pool(rt, &ds);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, dead_pool, RK_TMO), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_send(rt, dead_pool, T_NOP, NULL, 0) == SHOAL_ENOPROC);
    shoal_pid_t gone[2] = {dead_sink, dead_pool};
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t i = 4 + k;
        shoal_pid_t a = rk_spawn_asker(rt, i);
        int rc = rk_ask_sync(rt, a, i, gone[k]);
        CU_ASSERT(rc == SHOAL_OK || rc == SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(atomic_load(&rk_rooms[i]), rc == SHOAL_OK ? 1 : 0);
        if (rc == SHOAL_OK) {
            CU_ASSERT_EQUAL(atomic_load(&rk_room_status[i]), SHOAL_ENOPROC);
            CU_ASSERT_EQUAL(atomic_load(&rk_room_from[i]), gone[k]);
        }
        CU_ASSERT_EQUAL(rk_waiters_of(rt, gone[k]), 0);
    }
    shoal_pid_t none[2] = {SHOAL_PID_NONE, UINT64_MAX};
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t i = 6 + k;
        shoal_pid_t a = rk_spawn_asker(rt, i);
        CU_ASSERT_EQUAL(rk_ask_sync(rt, a, i, none[k]), SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(atomic_load(&rk_rooms[i]), 0);
    }
    shoal_runtime_destroy(rt);
}

/* Askers that end before their ROOM comes: a bounded actor and a forward
 * pool (max_waiting 2), each stuck and full, two askers each; the askers
 * exit. An ended asker waits for nothing: the pool counts no sender waiting
 * (pool.h: "senders waiting for room now") and a thread's send_wait then
 * waits in its place instead of being refused SHOAL_EOVERLOAD. Once the
 * gates open nothing breaks (the ROOMs to the ended askers are dropped),
 * nothing stays registered, the thread gets in. */
static void askers_that_end_before_their_room(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = rk_spawn_sink(rt, 1);
    shoal_pool_spec_t sp = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 1, 1, 2);
    shoal_pid_t p = rk_spawn_pool(rt, &sp);
    rk_block(rt, s, 1);
    rk_block(rt, p, 1);
    CU_ASSERT_EQUAL(rk_fill(rt, s, 0), 1);
    CU_ASSERT_EQUAL(rk_fill(rt, p, 1), 1);
    shoal_pid_t a[4];
    for (uint32_t i = 0; i < 4; i++) {
        a[i] = rk_spawn_asker(rt, i);
        rk_tell(rt, a[i], O_PRODUCE, i < 2 ? s : p, 10 + i);
    }
    WAIT_UNTIL(rk_waiters_of(rt, s) == 2 && rk_waiting_of(rt, p) == 2);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s), 2);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 2);
    for (uint32_t i = 0; i < 4; i++)
        rk_tell(rt, a[i], O_EXIT, SHOAL_PID_NONE, 0);
    WAIT_UNTIL(atomic_load(&rk_ended[0]) + atomic_load(&rk_ended[1]) + atomic_load(&rk_ended[2]) +
                   atomic_load(&rk_ended[3]) ==
               4);
    for (uint32_t i = 0; i < 4; i++)
        WAIT_UNTIL(shoal_runtime_send(rt, a[i], T_NOP, NULL, 0) == SHOAL_ENOPROC);
    /* Nobody waits for room in the pool now. */
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting, 0);
    rk_waiter_t w[1];
    rk_start_waiters(w, 1, rt, p, 20, RK_LONG_MS);
    WAIT_UNTIL(atomic_load(&w[0].done) == 1 || rk_waiting_of(rt, p) == 1);
    CU_ASSERT_EQUAL(atomic_load(&w[0].done), 0); /* it waits: not SHOAL_EOVERLOAD */
    atomic_store(&rk_gate, 1);
    rk_join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_OK);
    WAIT_UNTIL(atomic_load(&rk_handled) == 2 + (w[0].rc == SHOAL_OK) && rk_waiters_of(rt, s) == 0 &&
               rk_waiting_of(rt, p) == 0);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s), 0);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 0);
    CU_ASSERT_EQUAL(rk_seen_of(0), 1);
    CU_ASSERT_EQUAL(rk_seen_of(1), 1);
    for (uint32_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(rk_seen_of(10 + i), 0);
        CU_ASSERT_EQUAL(atomic_load(&rk_rooms[i]), 0);
    }
    shoal_runtime_destroy(rt);
}

/* ---- thousands of askers -------------------------------------------------------- */

#define N_PLAIN 1400u
#define N_POOL 900u
#define POOL_MAX_WAITING 500u

/* N_PLAIN producers into one bounded actor (mailbox 8), stuck: exactly 8
 * get in, every other one asks (SHOAL_OK); the gate opens: every item once,
 * each producer got exactly one ROOM per ask, all SHOAL_OK, from that actor.
 * Then N_POOL producers into a forward pool (max_waiting 500), stuck and
 * full: exactly 500 asks are taken and N_POOL - 500 refused SHOAL_EOVERLOAD
 * (counted); once it drains the 500 get in, once each, with one ROOM per
 * ask, the refused ones get no ROOM and nothing of theirs is handled. */
static void thousands_of_askers_on_one_receiver(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = rk_spawn_sink(rt, 8);
    rk_block(rt, s, 1);
    shoal_pid_t *a = calloc(N_PLAIN + N_POOL, sizeof *a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    for (uint32_t i = 0; i < N_PLAIN; i++) {
        a[i] = rk_spawn_asker(rt, i);
        rk_tell(rt, a[i], O_PRODUCE, s, i);
    }
    int acked = 0;
    double end = shoal_test_now() + RK_WAIT_S;
    while (shoal_test_now() < end) {
        acked = 0;
        for (uint32_t i = 0; i < N_PLAIN; i++)
            acked += atomic_load(&rk_acks[i]);
        if (acked == (int)N_PLAIN)
            break;
        shoal_test_nap();
    }
    CU_ASSERT_EQUAL(acked, (int)N_PLAIN);
    int sent = 0, asks = 0;
    for (uint32_t i = 0; i < N_PLAIN; i++) {
        sent += atomic_load(&rk_sent[i]);
        asks += atomic_load(&rk_asks[i]);
    }
    CU_ASSERT_EQUAL(sent, 8);
    CU_ASSERT_EQUAL(asks, (int)N_PLAIN - 8);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s), N_PLAIN - 8);
    atomic_store(&rk_gate, 1);
    WAIT_UNTIL(atomic_load(&rk_handled) == (int)N_PLAIN && rk_waiters_of(rt, s) == 0);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), (int)N_PLAIN);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s), 0);
    int once = 0, matched = 0, ok = 0, bad = 0, gaveup = 0;
    for (uint32_t i = 0; i < N_PLAIN; i++) {
        once += rk_seen_of(i) == 1;
        matched += atomic_load(&rk_rooms[i]) == atomic_load(&rk_asks[i]);
        ok += atomic_load(&rk_rooms[i]) == 0 || atomic_load(&rk_room_status[i]) == SHOAL_OK;
        bad += atomic_load(&rk_bad[i]);
        gaveup += atomic_load(&rk_gaveup[i]);
    }
    CU_ASSERT_EQUAL(once, (int)N_PLAIN);
    CU_ASSERT_EQUAL(matched, (int)N_PLAIN);
    CU_ASSERT_EQUAL(ok, (int)N_PLAIN);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(gaveup, 0);

    /* A pool with max_waiting. */
    atomic_store(&rk_gate, 0);
    shoal_pool_spec_t sp = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 1, 1, POOL_MAX_WAITING);
    shoal_pid_t p = rk_spawn_pool(rt, &sp);
    rk_block(rt, p, 1);
    CU_ASSERT_EQUAL(rk_fill(rt, p, RK_NIDS - 1), 1);
    for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++) {
        a[i] = rk_spawn_asker(rt, i);
        rk_tell(rt, a[i], O_PRODUCE, p, i);
    }
    end = shoal_test_now() + RK_WAIT_S;
    while (shoal_test_now() < end) {
        acked = 0;
        for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++)
            acked += atomic_load(&rk_acks[i]);
        if (acked == (int)N_POOL)
            break;
        shoal_test_nap();
    }
    CU_ASSERT_EQUAL(acked, (int)N_POOL);
    int overload = 0;
    asks = 0;
    for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++) {
        asks += atomic_load(&rk_asks[i]);
        overload += atomic_load(&rk_gaveup[i]) && atomic_load(&rk_ask_rc[i]) == SHOAL_EOVERLOAD;
    }
    CU_ASSERT_EQUAL(asks, (int)POOL_MAX_WAITING);
    CU_ASSERT_EQUAL(overload, (int)(N_POOL - POOL_MAX_WAITING));
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting, POOL_MAX_WAITING);
    CU_ASSERT_EQUAL(st.waiting_refused, N_POOL - POOL_MAX_WAITING);
    atomic_store(&rk_gate, 1);
    WAIT_UNTIL(atomic_load(&rk_handled) == (int)(N_PLAIN + 1 + POOL_MAX_WAITING) &&
               rk_waiting_of(rt, p) == 0);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), (int)(N_PLAIN + 1 + POOL_MAX_WAITING));
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 0);
    int in = 0, out = 0;
    matched = 0;
    bad = 0;
    for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++) {
        bool refused = atomic_load(&rk_ask_rc[i]) == SHOAL_EOVERLOAD && atomic_load(&rk_gaveup[i]);
        if (refused)
            out += rk_seen_of(i) == 0 && atomic_load(&rk_rooms[i]) == 0;
        else
            in += rk_seen_of(i) == 1 && atomic_load(&rk_sent[i]) == 1;
        matched += atomic_load(&rk_rooms[i]) == atomic_load(&rk_asks[i]);
        bad += atomic_load(&rk_bad[i]);
    }
    CU_ASSERT_EQUAL(in, (int)POOL_MAX_WAITING);
    CU_ASSERT_EQUAL(out, (int)(N_POOL - POOL_MAX_WAITING));
    CU_ASSERT_EQUAL(matched, (int)N_POOL);
    CU_ASSERT_EQUAL(bad, 0);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting_refused, N_POOL - POOL_MAX_WAITING);
    free(a);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"asked twice, an asker gets two rooms", asked_twice_an_asker_gets_two_rooms},
        {"room at once, and receivers that are gone", room_at_once_and_receivers_that_are_gone},
        {"askers that end before their room", askers_that_end_before_their_room},
        {"thousands of askers on one receiver", thousands_of_askers_on_one_receiver},
        {NULL, NULL}};
    return shoal_test_run("room_notify", cases);
}
