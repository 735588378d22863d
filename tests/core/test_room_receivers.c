/* test_room_receivers.c - backpressure without polling (room.h, forward.c,
 * pull_room.c; shoal_runtime_send_wait and shoal_notify_room) at receivers
 * of every kind, used the way a careless operator and a hostile caller
 * would, with exact outcomes:
 *   - eight threads send_wait into one bounded actor, a forward pool, a
 *     pull pool: exactly the capacity gets in, exactly max_waiting wait,
 *     the rest get SHOAL_EOVERLOAD at once; the receiver drains, is
 *     stopped, is drained, resized down and up, or a worker crashes: every
 *     waiter gets the documented answer and none is left counted;
 *   - a checkout pool (sends are transactions, refused SHOAL_ENOMEMBERS past
 *     max + queue_max: it tells of room when one settles, and SHOAL_ENOPROC
 *     when it drains) and a pool of pools (max_waiting refused;
 *     room in a leaf is room in it: at once, for a thread whose ask comes
 *     after the leaves drained, and after a resize).
 *
 * Two bugs these cases found are fixed, and the cases hold them: a pool of
 * pools with room told nobody at once (a send_wait into it could sleep to
 * its deadline); a pull pool that ended told its waiting actors SHOAL_OK,
 * not SHOAL_ENOPROC.
 *
 * No assertion is about time: deadlines are only upper bounds of waits.
 * Handlers never call CUnit: they record into atomics (room_kit.h); the
 * test thread asserts after synchronising on them.
 */
#include <stdint.h>

#include "room_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, RK_WAIT_S)
/* An upper bound for a wait that should end at once (nothing is stuck);
 * a bug makes the case wait for it in full. */
#define SOON_S 5.0

/* ---- many threads into one bounded actor ------------------------------------- */

/* A sink of mailbox 3, stuck: of eight threads, exactly three get in and
 * five wait (nothing handled yet); the gate opens: all eight get SHOAL_OK,
 * each item handled once, nobody left waiting. Then a sink of mailbox 1,
 * stuck and full, with eight waiters, is stopped: each hears SHOAL_ENOPROC,
 * none of their items is handled, none is left waiting. */
static void eight_threads_into_one_bounded_actor(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = rk_spawn_sink(rt, 3);
    rk_block(rt, s, 1);
    rk_waiter_t w[RK_NT];
    rk_start_waiters(w, RK_NT, rt, s, 0, RK_LONG_MS);
    WAIT_UNTIL(rk_done_count(w, RK_NT) == 3 && rk_waiters_of(rt, s) == RK_NT - 3);
    CU_ASSERT_EQUAL(rk_done_count(w, RK_NT), 3);
    CU_ASSERT_EQUAL(rk_rc_count(w, RK_NT, SHOAL_OK), 3);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s), RK_NT - 3);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), 0);
    atomic_store(&rk_gate, 1);
    rk_join_waiters(w, RK_NT);
    for (int k = 0; k < RK_NT; k++)
        CU_ASSERT_EQUAL(w[k].rc, SHOAL_OK);
    /* A marker sent after every send returned is handled after them all
     * (one mailbox, first in first out): then the count is final. */
    uint32_t marker = 999;
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, s, T_ITEM, &marker, sizeof marker, RK_LONG_MS),
                    SHOAL_OK);
    WAIT_UNTIL(rk_seen_of(marker) == 1);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), RK_NT + 1);
    for (int k = 0; k < RK_NT; k++)
        CU_ASSERT_EQUAL(rk_seen_of((uint32_t)k), 1);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s), 0);

    /* The same eight wait on a receiver that is stopped. */
    atomic_store(&rk_gate, 0);
    shoal_pid_t s2 = rk_spawn_sink(rt, 1);
    rk_block(rt, s2, 1);
    CU_ASSERT_EQUAL(rk_fill(rt, s2, 100), 1);
    rk_start_waiters(w, RK_NT, rt, s2, 200, RK_LONG_MS);
    WAIT_UNTIL(rk_waiters_of(rt, s2) == RK_NT);
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s2), RK_NT);
    CU_ASSERT_EQUAL(rk_done_count(w, RK_NT), 0);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, s2), SHOAL_OK);
    atomic_store(&rk_gate, 1); /* its handler returns; the STOP ends it */
    rk_join_waiters(w, RK_NT);
    for (int k = 0; k < RK_NT; k++) {
        CU_ASSERT_EQUAL(w[k].rc, SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(rk_seen_of(200u + (uint32_t)k), 0);
    }
    CU_ASSERT_EQUAL(rk_waiters_of(rt, s2), 0);
    shoal_runtime_destroy(rt);
}

/* ---- max_waiting --------------------------------------------------------------- */

/* A forward pool (2 workers, mailbox 1) and a pull pool (1 worker, buffer
 * 2), each stuck and full, max_waiting 3: of eight threads exactly three
 * wait and five get SHOAL_EOVERLOAD while the pool is still stuck (counted:
 * waiting 3, waiting_refused 5); the gate opens: the three get in, their
 * items handled once, the five's never; nobody is left waiting. */
static void max_waiting_bounds_threads_in_forward_and_pull_pools(void)
{
    for (uint32_t kind = SHOAL_POOL_KIND_FORWARD; kind <= SHOAL_POOL_KIND_PULL; kind++) {
        rk_reset();
        shoal_runtime_t *rt = shoal_test_runtime(4);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        bool fwd = kind == SHOAL_POOL_KIND_FORWARD;
        shoal_pool_spec_t sp = rk_pool_spec(kind, fwd ? 2 : 1, fwd ? 1 : 2, 3);
        shoal_pid_t p = rk_spawn_pool(rt, &sp);
        rk_block(rt, p, fwd ? 2 : 1);
        CU_ASSERT_EQUAL(rk_fill(rt, p, 0), 2);
        rk_waiter_t w[RK_NT];
        rk_start_waiters(w, RK_NT, rt, p, 100, RK_LONG_MS);
        WAIT_UNTIL(rk_done_count(w, RK_NT) == RK_NT - 3 && rk_waiting_of(rt, p) == 3);
        CU_ASSERT_EQUAL(rk_done_count(w, RK_NT), RK_NT - 3);
        CU_ASSERT_EQUAL(rk_rc_count(w, RK_NT, SHOAL_EOVERLOAD), RK_NT - 3);
        shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
        CU_ASSERT_EQUAL(st.waiting, 3);
        CU_ASSERT_EQUAL(st.max_waiting, 3);
        CU_ASSERT_EQUAL(st.waiting_refused, RK_NT - 3);
        CU_ASSERT_EQUAL(atomic_load(&rk_handled), 0);
        atomic_store(&rk_gate, 1);
        rk_join_waiters(w, RK_NT);
        CU_ASSERT_EQUAL(rk_rc_count(w, RK_NT, SHOAL_OK), 3);
        CU_ASSERT_EQUAL(rk_rc_count(w, RK_NT, SHOAL_EOVERLOAD), RK_NT - 3);
        WAIT_UNTIL(atomic_load(&rk_handled) == 2 + 3);
        st = shoal_test_pool_stats(rt, p);
        CU_ASSERT_EQUAL(st.messages_forwarded, (fwd ? 2u : 1u) + 2 + 3);
        WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == st.messages_forwarded);
        st = shoal_test_pool_stats(rt, p);
        CU_ASSERT_EQUAL(st.messages_handled, st.messages_forwarded);
        CU_ASSERT_EQUAL(atomic_load(&rk_handled), 2 + 3);
        CU_ASSERT_EQUAL(st.waiting, 0);
        CU_ASSERT_EQUAL(st.waiting_refused, RK_NT - 3);
        CU_ASSERT_EQUAL(rk_seen_of(0), 1);
        CU_ASSERT_EQUAL(rk_seen_of(1), 1);
        for (int k = 0; k < RK_NT; k++)
            CU_ASSERT_EQUAL(rk_seen_of(w[k].id), w[k].rc == SHOAL_OK ? 1 : 0);
        shoal_runtime_destroy(rt);
    }
}

/* ---- a checkout pool ----------------------------------------------------------- */

/* Sends to a checkout pool are transactions (shoal/checkout.h): with its
 * one member in use and no queue (max + queue_max = 1 outstanding), one
 * more is refused SHOAL_ENOMEMBERS. A thread's send_wait then waits for
 * room, and an actor refused so asks for a ROOM (shoal_notify_room): both
 * are counted waiting, neither gets in while the transaction runs, and
 * both are told once it settles, and get in -- one at a time, each item
 * once. max_waiting is refused at spawn (queue_max bounds its takers). */
static void a_checkout_pool_tells_of_room(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t sp;
    shoal_pool_spec_init(&sp);
    sp.kind = SHOAL_POOL_KIND_CHECKOUT;
    sp.worker = &rk_sink;
    sp.size = 1;
    sp.max_size = 1;
    sp.checkout.queue_max = 0;
    sp.checkout.cull_interval_ms = 0;
    sp.max_waiting = 1;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &sp, &p), SHOAL_EINVAL);
    sp.max_waiting = 0;
    p = rk_spawn_pool(rt, &sp);
    rk_block(rt, p, 1); /* a transaction: the member is in use */
    rk_waiter_t w[1];
    rk_start_waiters(w, 1, rt, p, 7, RK_LONG_MS);
    WAIT_UNTIL(rk_waiting_of(rt, p) == 1);
    shoal_pid_t a = rk_spawn_asker(rt, 0);
    rk_tell(rt, a, O_PRODUCE, p, 8);
    WAIT_UNTIL(atomic_load(&rk_asks[0]) == 1 && rk_waiting_of(rt, p) == 2);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 2);
    CU_ASSERT_EQUAL(atomic_load(&rk_ask_rc[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rk_refused[0]), 1);
    CU_ASSERT_EQUAL(rk_done_count(w, 1), 0); /* still waiting */
    CU_ASSERT_EQUAL(atomic_load(&rk_rooms[0]), 0);
    CU_ASSERT_EQUAL(rk_seen_of(7) + rk_seen_of(8), 0);
    atomic_store(&rk_gate, 1); /* the transaction settles: room */
    rk_join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_OK);
    WAIT_UNTIL(rk_seen_of(7) == 1 && rk_seen_of(8) == 1 && atomic_load(&rk_sent[0]) == 1);
    CU_ASSERT_EQUAL(rk_seen_of(7), 1);
    CU_ASSERT_EQUAL(rk_seen_of(8), 1);
    CU_ASSERT_TRUE(atomic_load(&rk_rooms[0]) >= 1); /* twice if the thread got in first */
    CU_ASSERT_EQUAL(atomic_load(&rk_room_status[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rk_room_from[0]), p);
    CU_ASSERT_EQUAL(atomic_load(&rk_bad[0]), 0);
    CU_ASSERT_EQUAL(atomic_load(&rk_gaveup[0]), 0);
    WAIT_UNTIL(rk_waiting_of(rt, p) == 0);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 0);
    shoal_runtime_destroy(rt);
}

/* A checkout pool that drains under a waiter tells it: its send_wait
 * returns SHOAL_ENOPROC, at once, not at its deadline. */
static void a_checkout_pool_draining_tells_its_waiters(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t sp;
    shoal_pool_spec_init(&sp);
    sp.kind = SHOAL_POOL_KIND_CHECKOUT;
    sp.worker = &rk_sink;
    sp.size = 1;
    sp.max_size = 1;
    sp.checkout.queue_max = 0;
    sp.checkout.cull_interval_ms = 0;
    shoal_pid_t p = rk_spawn_pool(rt, &sp);
    rk_block(rt, p, 1);
    rk_waiter_t w[1];
    rk_start_waiters(w, 1, rt, p, 7, RK_LONG_MS);
    WAIT_UNTIL(rk_waiting_of(rt, p) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    /* Told, it returns at once; untold, it would sleep to its deadline
     * (RK_LONG_MS). 5 s is an upper bound on "at once". */
    SHOAL_TEST_WAIT_UNTIL(rk_done_count(w, 1) == 1, 5.0);
    CU_ASSERT_EQUAL(rk_done_count(w, 1), 1);
    atomic_store(&rk_gate, 1);
    rk_join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(rk_seen_of(7), 0);
    shoal_runtime_destroy(rt);
}

/* ---- pools of pools ------------------------------------------------------------ */

static void nested_specs(shoal_pool_spec_t *outer, shoal_pool_spec_t *inner, uint32_t outer_size,
                         uint32_t inner_mailbox)
{
    shoal_pool_spec_init(inner);
    inner->worker = &rk_sink;
    inner->size = 1;
    inner->mailbox = inner_mailbox;
    shoal_pool_spec_init(outer);
    outer->worker_pool = inner;
    outer->size = outer_size;
    outer->max_size = 4;
}

#define STREAM 10000u

/* One thread streams STREAM items with send_wait (timeout SOON_S) into
 * the pool `to`, where nothing is stuck: whether each returned SHOAL_OK --
 * a refusal is followed by room as soon as the workers drain -- and every
 * item was handled once, with nobody left waiting. */
static bool stream_send_wait(shoal_runtime_t *rt, shoal_pid_t to, uint32_t first)
{
    uint32_t n = 0;
    while (n < STREAM) {
        uint32_t id = first + n;
        if (shoal_runtime_send_wait(rt, to, T_ITEM, &id, sizeof id, (uint64_t)(SOON_S * 1000)) !=
            SHOAL_OK)
            break;
        n++;
    }
    WAIT_UNTIL(shoal_test_pool_stats(rt, to).messages_handled == n);
    int once = 0;
    for (uint32_t k = 0; k < n; k++)
        once += rk_seen_of(first + k) == 1;
    return n == STREAM && shoal_test_pool_stats(rt, to).messages_handled == n && once == (int)n &&
           rk_waiting_of(rt, to) == 0;
}

/* A pool of two pools of one idle worker each has room: an ask is told at
 * once (ctx.h: "at once if there is room already"), as a flat forward pool
 * of idle workers is. max_waiting is refused on a pool of pools. Then one
 * thread streams items with send_wait into a flat pool and a pool of pools
 * (each 2 leaves of mailbox 1), nothing stuck: it never sleeps to its
 * deadline -- when its ask comes after the leaves have drained, the pool
 * of pools must still see their room (room.h: the ask). */
static void a_pool_of_pools_with_room_tells_at_once(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t outer, inner;
    nested_specs(&outer, &inner, 2, 4);
    outer.max_waiting = 2;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &outer, &p), SHOAL_EINVAL);
    outer.max_waiting = 0;
    p = rk_spawn_pool(rt, &outer);
    shoal_pool_spec_t flat = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 4, 0);
    shoal_pid_t f = rk_spawn_pool(rt, &flat);
    shoal_pid_t a = rk_spawn_asker(rt, 0), b = rk_spawn_asker(rt, 1);
    CU_ASSERT_EQUAL(rk_ask_sync(rt, a, 0, f), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rk_rooms[0]), 1); /* the flat pool: at once */
    CU_ASSERT_EQUAL(atomic_load(&rk_room_status[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(rk_ask_sync(rt, b, 1, p), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rk_rooms[1]), 1); /* the pool of pools: at once too */
    CU_ASSERT_EQUAL(atomic_load(&rk_room_status[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rk_room_from[1]), p);
    /* However it went: one item through it, and by then exactly one ROOM
     * (a leaf's drain tells, if nothing did before). */
    uint32_t id = 5;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_ITEM, &id, sizeof id), SHOAL_OK);
    WAIT_UNTIL(rk_seen_of(5) == 1 && atomic_load(&rk_rooms[1]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&rk_rooms[1]), 1);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 0);
    shoal_runtime_destroy(rt);

    /* send_wait, one item after another, nothing stuck. */
    rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t flat1 = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 1, 0);
    flat1.strategy = SHOAL_POOL_STRATEGY_FIFO;
    shoal_pool_spec_t outer1, inner1;
    nested_specs(&outer1, &inner1, 2, 1);
    CU_ASSERT(stream_send_wait(rt, rk_spawn_pool(rt, &flat1), 100));
    CU_ASSERT(stream_send_wait(rt, rk_spawn_pool(rt, &outer1), 100 + STREAM));
    shoal_runtime_destroy(rt);
}

/* A pool of one pool of one worker (mailbox 1), stuck and full; a thread
 * waits. The outer pool grows to 2: the new inner pool's idle worker is
 * room no drain announces -- as for a flat pool (test_room: "a new worker
 * is room") the waiter is told and gets in while the old leaf is still
 * stuck. */
static void a_pool_of_pools_grown_under_a_waiter_tells_it(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t outer, inner;
    nested_specs(&outer, &inner, 1, 1);
    shoal_pid_t p = rk_spawn_pool(rt, &outer);
    rk_block(rt, p, 1);
    CU_ASSERT_EQUAL(rk_fill(rt, p, 0), 1);
    rk_waiter_t w[1];
    rk_start_waiters(w, 1, rt, p, 10, RK_LONG_MS);
    WAIT_UNTIL(rk_waiting_of(rt, p) == 1);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, RK_TMO), 2);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&w[0].done) == 1, SOON_S);
    CU_ASSERT_EQUAL(atomic_load(&w[0].done), 1); /* in, with the old leaf still stuck */
    CU_ASSERT_EQUAL(atomic_load(&rk_entered), 1);
    atomic_store(&rk_gate, 1);
    rk_join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_OK);
    WAIT_UNTIL(rk_seen_of(0) == 1 && rk_seen_of(10) == 1);
    CU_ASSERT_EQUAL(rk_seen_of(0), 1);
    CU_ASSERT_EQUAL(rk_seen_of(10), 1);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 0);
    shoal_runtime_destroy(rt);
}

/* ---- pools that end under waiters ------------------------------------------- */

/* One pool, stuck and full, with four threads and two askers waiting;
 * `stop`: the pool is stopped, else drained (a priority send: the test
 * does not wait for it). Each thread gets SHOAL_ENOPROC and each asker
 * exactly one ROOM, while the pool is still stuck; nobody is left counted
 * waiting; none of the waiters' items is handled. Returns the pool. With
 * `strict`, each ROOM's status must be SHOAL_ENOPROC; else (a drain: the
 * pool has not ended yet) a ROOM of SHOAL_OK is allowed if the asker's
 * next send then finds the pool gone. */
static void pool_ends_under_waiters(uint32_t kind, bool stop, bool strict)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    bool fwd = kind == SHOAL_POOL_KIND_FORWARD;
    shoal_pool_spec_t sp = rk_pool_spec(kind, fwd ? 2 : 1, 1, 0);
    shoal_pid_t p = rk_spawn_pool(rt, &sp);
    rk_block(rt, p, fwd ? 2 : 1);
    int filled = rk_fill(rt, p, 0);
    CU_ASSERT_EQUAL(filled, fwd ? 2 : 1);
    shoal_pid_t a[2] = {rk_spawn_asker(rt, 0), rk_spawn_asker(rt, 1)};
    for (uint32_t i = 0; i < 2; i++)
        rk_tell(rt, a[i], O_PRODUCE, p, 20 + i);
    rk_waiter_t w[4];
    rk_start_waiters(w, 4, rt, p, 10, RK_LONG_MS);
    WAIT_UNTIL(rk_waiting_of(rt, p) == 6);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 6);
    CU_ASSERT_EQUAL(atomic_load(&rk_asks[0]) + atomic_load(&rk_asks[1]), 2);
    if (stop) {
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, p), SHOAL_OK);
    } else {
        CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    }
    WAIT_UNTIL(rk_done_count(w, 4) == 4 && atomic_load(&rk_rooms[0]) == 1 &&
               atomic_load(&rk_rooms[1]) == 1);
    CU_ASSERT_EQUAL(rk_rc_count(w, 4, SHOAL_ENOPROC), 4);
    CU_ASSERT_EQUAL(atomic_load(&rk_entered), fwd ? 2 : 1); /* still stuck */
    for (uint32_t i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(atomic_load(&rk_rooms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&rk_room_from[i]), p);
        CU_ASSERT_EQUAL(atomic_load(&rk_bad[i]), 0);
        int status = atomic_load(&rk_room_status[i]);
        if (strict) {
            CU_ASSERT_EQUAL(status, SHOAL_ENOPROC);
        } else {
            CU_ASSERT(status == SHOAL_ENOPROC || status == SHOAL_OK);
            if (status == SHOAL_OK) {
                WAIT_UNTIL(atomic_load(&rk_gaveup[i]) == 1);
                CU_ASSERT_EQUAL(atomic_load(&rk_send_rc[i]), SHOAL_ENOPROC);
            }
        }
        CU_ASSERT_EQUAL(atomic_load(&rk_sent[i]), 0);
    }
    if (!stop) /* the pool's actor still answers while its workers finish */
        CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 0);
    atomic_store(&rk_gate, 1);
    rk_join_waiters(w, 4);
    if (!stop) { /* a drain finishes what is queued */
        WAIT_UNTIL(atomic_load(&rk_handled) == filled);
        CU_ASSERT_EQUAL(atomic_load(&rk_handled), filled);
    }
    uint32_t id = 30;
    WAIT_UNTIL(shoal_runtime_send(rt, p, T_ITEM, &id, sizeof id) == SHOAL_ENOPROC);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(rk_seen_of(10 + i), 0);
    CU_ASSERT_EQUAL(rk_seen_of(20) + rk_seen_of(21) + rk_seen_of(30), 0);
    /* Told once: nothing of theirs was left to tell again. */
    CU_ASSERT_EQUAL(atomic_load(&rk_rooms[0]) + atomic_load(&rk_rooms[1]), 2);
    shoal_runtime_destroy(rt);
}

/* A forward pool drained, then one stopped, under four threads and two
 * askers. */
static void a_forward_pool_ending_under_waiters_tells_enoproc(void)
{
    pool_ends_under_waiters(SHOAL_POOL_KIND_FORWARD, false, true);
    pool_ends_under_waiters(SHOAL_POOL_KIND_FORWARD, true, true);
}

/* The same for a pull pool. Drained: a ROOM of SHOAL_OK followed by a send
 * refused SHOAL_ENOPROC is allowed (the pool has not ended when it tells).
 * Stopped: the pool has ended, so the ROOM's status must say so (ctx.h:
 * "with status SHOAL_ENOPROC if `to` ends first"; message.h). */
static void a_pull_pool_ending_under_waiters_tells_enoproc(void)
{
    pool_ends_under_waiters(SHOAL_POOL_KIND_PULL, false, false);
    pool_ends_under_waiters(SHOAL_POOL_KIND_PULL, true, true);
}

/* ---- resizes and crashes under waiters ---------------------------------------- */

/* A forward pool of two workers (mailbox 1), stuck and full, four threads
 * waiting. Down to one: nothing frees (the removed worker is still stuck),
 * all four still wait. Up to three: the two new workers are room, all four
 * get in while the old ones are still stuck; then every item once. */
static void a_forward_pool_resized_down_then_up_under_waiters(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t sp = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 1, 0);
    sp.max_size = 4;
    shoal_pid_t p = rk_spawn_pool(rt, &sp);
    rk_block(rt, p, 2);
    CU_ASSERT_EQUAL(rk_fill(rt, p, 0), 2);
    rk_waiter_t w[4];
    rk_start_waiters(w, 4, rt, p, 10, RK_LONG_MS);
    WAIT_UNTIL(rk_waiting_of(rt, p) == 4);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 4);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 1, RK_TMO), 1);
    CU_ASSERT_EQUAL(rk_done_count(w, 4), 0); /* no room anywhere yet */
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting, 4);
    CU_ASSERT_EQUAL(st.retiring, 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 3, RK_TMO), 3);
    WAIT_UNTIL(rk_done_count(w, 4) == 4 && atomic_load(&rk_handled) == 4);
    CU_ASSERT_EQUAL(rk_rc_count(w, 4, SHOAL_OK), 4);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), 4); /* the new workers' */
    CU_ASSERT_EQUAL(atomic_load(&rk_entered), 2); /* the old ones still stuck */
    atomic_store(&rk_gate, 1);
    rk_join_waiters(w, 4);
    WAIT_UNTIL(atomic_load(&rk_handled) == 6 && shoal_test_pool_stats(rt, p).retiring == 0);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), 6);
    for (uint32_t id = 0; id < 2; id++)
        CU_ASSERT_EQUAL(rk_seen_of(id), 1);
    for (uint32_t id = 10; id < 14; id++)
        CU_ASSERT_EQUAL(rk_seen_of(id), 1);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.retiring, 0);
    CU_ASSERT_EQUAL(st.waiting, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded, 2 + 2 + 4);
    CU_ASSERT_EQUAL(st.messages_handled, 2 + 2 + 4);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    shoal_runtime_destroy(rt);
}

/* A forward pool of two workers (mailbox 1), both stuck, both full, four
 * threads waiting. One worker panics: it loses only the message it was
 * handling, its queued item goes on, its replacement is room, and all four
 * threads get in while the other worker is still stuck. Every item once;
 * forwarded = handled + failed. */
static void a_forward_worker_crashes_under_waiters(void)
{
    rk_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_ERROR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t sp = rk_pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 1, 0);
    shoal_pid_t p = rk_spawn_pool(rt, &sp);
    uint32_t role = ROLE_PANIC;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_BLOCK, &role, sizeof role), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&rk_entered) == 1);
    rk_block(rt, p, 1);
    CU_ASSERT_EQUAL(rk_fill(rt, p, 0), 2);
    rk_waiter_t w[4];
    rk_start_waiters(w, 4, rt, p, 10, RK_LONG_MS);
    WAIT_UNTIL(rk_waiting_of(rt, p) == 4);
    CU_ASSERT_EQUAL(rk_waiting_of(rt, p), 4);
    CU_ASSERT_EQUAL(rk_done_count(w, 4), 0);
    atomic_store(&rk_gate2, 1); /* the first worker panics */
    WAIT_UNTIL(rk_done_count(w, 4) == 4 && atomic_load(&rk_handled) == 5);
    CU_ASSERT_EQUAL(rk_rc_count(w, 4, SHOAL_OK), 4);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), 5); /* its queued item and the four */
    atomic_store(&rk_gate, 1);
    rk_join_waiters(w, 4);
    WAIT_UNTIL(atomic_load(&rk_handled) == 6);
    CU_ASSERT_EQUAL(atomic_load(&rk_handled), 6);
    for (uint32_t id = 0; id < 2; id++)
        CU_ASSERT_EQUAL(rk_seen_of(id), 1);
    for (uint32_t id = 10; id < 14; id++)
        CU_ASSERT_EQUAL(rk_seen_of(id), 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 7);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 2 + 2 + 4);
    CU_ASSERT_EQUAL(st.messages_handled, 7);
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.messages_requeued, 1); /* the crashed worker's queued item */
    CU_ASSERT_EQUAL(st.worker_restarts, 1);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.waiting, 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"eight threads into one bounded actor", eight_threads_into_one_bounded_actor},
        {"max_waiting bounds threads in forward and pull pools",
         max_waiting_bounds_threads_in_forward_and_pull_pools},
        {"a checkout pool tells of room for transactions", a_checkout_pool_tells_of_room},
        {"a checkout pool draining tells its waiters", a_checkout_pool_draining_tells_its_waiters},
        {"a pool of pools with room tells at once", a_pool_of_pools_with_room_tells_at_once},
        {"a pool of pools grown under a waiter tells it",
         a_pool_of_pools_grown_under_a_waiter_tells_it},
        {"a forward pool ending under waiters tells ENOPROC",
         a_forward_pool_ending_under_waiters_tells_enoproc},
        {"a pull pool ending under waiters tells ENOPROC",
         a_pull_pool_ending_under_waiters_tells_enoproc},
        {"a forward pool resized down then up under waiters",
         a_forward_pool_resized_down_then_up_under_waiters},
        {"a forward worker crashes under waiters", a_forward_worker_crashes_under_waiters},
        {NULL, NULL}};
    return shoal_test_run("room_receivers", cases);
}
