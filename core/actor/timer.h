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

#endif
