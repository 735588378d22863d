/* timer.h - delayed delivery: send_after and call timeouts.
 *
 * One timer thread per runtime sleeps until the earliest deadline of a
 * binary heap (under a mutex) and delivers that timer's envelope. A timer id
 * is the entry's index and generation, so cancelling a timer that already
 * fired (and whose entry was reused) is a harmless SHOAL_ENOPROC.
 * The same thread runs the dispatcher's monitor (sched/monitor.h) once
 * shoal__timers_watch has been called: it wakes for the monitor's ticks
 * too, and sleeps without them while the monitor is idle (rt->mon_idle)
 * until shoal__timers_kick.
 */
#ifndef SHOAL_ACTOR_TIMER_H
#define SHOAL_ACTOR_TIMER_H

#include <stdbool.h>

#include "actor/envelope.h"
#include "runtime/tcache.h"

int shoal__timers_start(shoal_runtime_t *rt);
/* From now on the timer thread also runs the monitor (rt->monitor is set
 * up, and so are the workers). */
void shoal__timers_watch(shoal_runtime_t *rt);
/* Wakes the monitor from its idle sleep: clears rt->mon_idle under the
 * timer lock. Any thread, until shoal__timers_free. */
void shoal__timers_kick(shoal_runtime_t *rt);
/* Stops the thread (the monitor with it); no timer fires after this. */
void shoal__timers_stop(shoal_runtime_t *rt);
/* Frees what shoal__timers_start set up and every pending envelope; after
 * the workers have stopped (they may kick until then). */
void shoal__timers_free(shoal_runtime_t *rt);

/* Delivers e to `to` (system mailbox if sys) after delay_ms. The timer owns
 * e from SHOAL_OK on. */
int shoal__timer_start(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, uint64_t delay_ms,
                       shoal_env_t *e, bool sys, shoal_timer_t *id);
/* SHOAL_OK (e freed, never delivered) or SHOAL_ENOPROC (fired or gone). */
int shoal__timer_cancel(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_timer_t id);

/* TICKS THAT ARE NEVER LOST
 * An actor that keeps itself going by ticks to itself (a pool's retry,
 * drain, elastic and checkout ticks) stops for good if one cannot be
 * armed: nothing else would wake it for what the tick was to do. So such
 * a tick has a node in its owner's record: when the envelope or the
 * timer's entry cannot be had (no memory), the node goes on the timer's
 * list of ticks owed -- it allocates nothing -- and the timer thread
 * sends the tick when it is due and an envelope can be had, looking again
 * every SHOAL__TICK_OWED_RETRY_MS while it cannot. The node's fields are
 * the timer's, under its mutex. */
typedef struct shoal_tick_s {
    struct shoal_tick_s *next; /* on the list of ticks owed */
    uint64_t due;              /* ns */
    shoal_pid_t to;
    uint32_t type;
    bool owed;
} shoal_tick_t;

#define SHOAL__TICK_OWED_RETRY_MS 10u

/* An empty priority cast `type` to `to` (from `to`: a tick to itself)
 * after ms, through a timer (*id, which must not be NULL) -- or, if that
 * cannot be armed, owed on k (*id 0). SHOAL_OK: armed; else why it is
 * owed (the caller logs it): the tick comes either way. Arming k again
 * while it is owed supersedes it: armed, it leaves the list; owed again,
 * it moves to the new time and type. One arming thread at a time per
 * node (its owner's rule). Any thread. */
int shoal__tick_arm(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_tick_t *k, shoal_pid_t to,
                    uint64_t ms, uint32_t type, shoal_timer_t *id);
/* k off the list of ticks owed, if it is on it: before its owner's record
 * is freed, or when the tick is no longer wanted. Any thread; nothing
 * after shoal__timers_free. */
void shoal__tick_forget(shoal_runtime_t *rt, shoal_tick_t *k);

/* Whether k is owed now (read under the timer's mutex). */
bool shoal__tick_owed(shoal_runtime_t *rt, shoal_tick_t *k);

/* Fault injection, for the tests of what a lost arm does: the next n
 * timer starts fail with SHOAL_ENOMEM, as for want of memory. */
void shoal__timers_fail(shoal_runtime_t *rt, uint32_t n);

#endif
