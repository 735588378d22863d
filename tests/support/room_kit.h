/* room_kit.h - what the adversarial backpressure suites share
 * (test_room_receivers, test_room_notify, test_room_send_wait): a receiver
 * that can be held stuck and counts what it handles, an asker -- an actor
 * that sends and asks for ROOM when refused -- with its records, threads
 * that send_wait, receivers of every kind (a bounded actor, forward and
 * pull pools), and helpers that hold, fill and count them.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (the helpers do, and
 * rk_reset() clears them before a case).
 */
#ifndef SHOAL_TEST_ROOM_KIT_H
#define SHOAL_TEST_ROOM_KIT_H

#include <pthread.h>
#include <stddef.h>

#include "support.h"

#define RK_WAIT_S 20.0
#define RK_TMO 10000u     /* a resize's or a drain's timeout */
#define RK_LONG_MS 60000u /* send_wait timeouts that must not expire */
#define RK_NIDS 32768u    /* item ids the receiver counts */
#define RK_NA 2400u       /* askers */
#define RK_NT 8           /* threads that send_wait */

enum { T_ITEM = 1, T_BLOCK = 2, T_NOP = 3, T_ORDER = 4 };
enum { ROLE_WAIT = 0, ROLE_PANIC = 1 };

/* ---- the receiver ----------------------------------------------------------- */

/* The sink: T_BLOCK (payload: a role, or none) waits until rk_gate opens --
 * or, role ROLE_PANIC, until rk_gate2 opens, then panics; rk_entered counts
 * the T_BLOCKs that came in. T_ITEM (payload: an id) is counted in
 * rk_handled, and once per id (rk_seen_of), after sleeping rk_slow_us
 * microseconds if that is not 0. */
extern atomic_int rk_gate, rk_gate2, rk_entered, rk_handled, rk_slow_us;
extern const shoal_behaviour_t rk_sink;
int rk_seen_of(uint32_t id);

/* ---- the asker: an actor that sends, and asks for ROOM when refused --------- */

/* Orders to an asker (rk_tell). O_ASK: notify_room(to). O_PRODUCE: items
 * id, id + 1, ... to `to` until refused full or busy (or a checkout pool's
 * SHOAL_ENOMEMBERS), then asks for ROOM
 * and sends nothing until it comes (never a retry without one). O_SYNC:
 * nothing but an ack. O_EXIT: it ends. */
enum { O_ASK = 1, O_PRODUCE, O_SYNC, O_EXIT };

/* Per asker i: orders done (acks), asks that returned SHOAL_OK, the last
 * ask's result (99: none), sends refused full/busy, the last other send
 * result, whether all its items went in or it gave up, the ROOMs it got with
 * the last one's status and sender, ROOMs from a receiver it did not ask
 * (bad), and whether it has ended. */
extern atomic_int rk_acks[RK_NA], rk_asks[RK_NA], rk_ask_rc[RK_NA], rk_refused[RK_NA],
    rk_send_rc[RK_NA], rk_sent[RK_NA], rk_gaveup[RK_NA], rk_rooms[RK_NA], rk_room_status[RK_NA],
    rk_bad[RK_NA], rk_ended[RK_NA];
extern _Atomic shoal_pid_t rk_room_from[RK_NA];

/* Shuts both gates, clears every count and record. */
void rk_reset(void);
/* Asker i (0 <= i < RK_NA). */
shoal_pid_t rk_spawn_asker(shoal_runtime_t *rt, uint32_t i);
/* An order: op with `to` and a first item id (one item for O_PRODUCE). */
void rk_tell(shoal_runtime_t *rt, shoal_pid_t who, uint32_t op, shoal_pid_t to, uint32_t id);
/* O_PRODUCE of n items, first, first + 1, ... */
void rk_tell_stream(shoal_runtime_t *rt, shoal_pid_t who, shoal_pid_t to, uint32_t first,
                    uint32_t n);
/* Asker i asks for ROOM from `to`, then handles a SYNC: a ROOM told during
 * the ask (at once) is in its system mailbox before the SYNC is handled,
 * and the system mailbox goes first, so its count is exact afterwards.
 * Returns the ask's result. */
int rk_ask_sync(shoal_runtime_t *rt, shoal_pid_t who, uint32_t i, shoal_pid_t to);

/* ---- threads that send_wait --------------------------------------------------- */

/* One thread's send_wait of item `id` to `to`: its result, and done once it
 * returned. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
    uint32_t id;
    uint64_t timeout_ms;
    int rc;
    atomic_int done;
    pthread_t t;
} rk_waiter_t;

/* n threads, items first_id, first_id + 1, ... */
void rk_start_waiters(rk_waiter_t *w, int n, shoal_runtime_t *rt, shoal_pid_t to, uint32_t first_id,
                      uint64_t timeout_ms);
void rk_join_waiters(rk_waiter_t *w, int n);
int rk_done_count(rk_waiter_t *w, int n);
/* Of the waiters that are done, how many returned rc. */
int rk_rc_count(rk_waiter_t *w, int n, int rc);

/* ---- receivers ------------------------------------------------------------------ */

/* A sink with a mailbox limit of `limit` (0: none). */
shoal_pid_t rk_spawn_sink(shoal_runtime_t *rt, uint32_t limit);
/* A forward pool of `size` sinks with mailboxes of `mailbox`, least
 * loaded first (a second T_BLOCK goes to an idle worker, not behind the
 * first), or a pull pool of `size` sinks, prefetch 1, buffer `mailbox`. */
shoal_pool_spec_t rk_pool_spec(uint32_t kind, uint32_t size, uint32_t mailbox,
                               uint32_t max_waiting);
shoal_pid_t rk_spawn_pool(shoal_runtime_t *rt, const shoal_pool_spec_t *sp);
/* Sends n T_BLOCKs, one at a time, each entering its handler (a worker of
 * its own) before the next. */
void rk_block(shoal_runtime_t *rt, shoal_pid_t to, int n);
/* Items first_id, first_id + 1, ... until the receiver refuses one (full or
 * busy); how many went in. */
int rk_fill(shoal_runtime_t *rt, shoal_pid_t to, uint32_t first_id);
/* A pool's count of senders waiting for room. */
uint32_t rk_waiting_of(shoal_runtime_t *rt, shoal_pid_t pool);
/* Waiters registered for room in the plain actor `receiver`, and its flag
 * agrees (room.h); 1000 if a waiter is registered without the flag. */
size_t rk_waiters_of(shoal_runtime_t *rt, shoal_pid_t receiver);

#endif
