/* timer.h - delayed delivery: send_after and call timeouts.
 *
 * One timer thread per runtime sleeps until the earliest deadline of a
 * binary heap (under a mutex) and delivers that timer's envelope. A timer id
 * is the entry's index and generation, so cancelling a timer that already
 * fired (and whose entry was reused) is a harmless SHOAL_ENOPROC.
 */
#ifndef SHOAL_ACTOR_TIMER_H
#define SHOAL_ACTOR_TIMER_H

#include <stdbool.h>

#include "actor/envelope.h"
#include "runtime/tcache.h"

int shoal__timers_start(shoal_runtime_t *rt);
/* Stops the thread and frees every pending envelope. */
void shoal__timers_stop(shoal_runtime_t *rt);

/* Delivers e to `to` (system mailbox if sys) after delay_ms. The timer owns
 * e from SHOAL_OK on. */
int shoal__timer_start(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, uint64_t delay_ms,
                       shoal_env_t *e, bool sys, shoal_timer_t *id);
/* SHOAL_OK (e freed, never delivered) or SHOAL_ENOPROC (fired or gone). */
int shoal__timer_cancel(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_timer_t id);

#endif
