/* sleep.h - the sleep plugin's protocol (see plugins/sleep/README.md).
 *
 * sleep.sleep stands for a blocking call (I/O, a database, a remote API):
 * every message and call costs `latency` plus a uniform 0 .. `jitter` of
 * nanosleep, on the dispatcher thread that runs the actor.
 */
#ifndef SHOAL_PLUGIN_SLEEP_H
#define SHOAL_PLUGIN_SLEEP_H

#include <shoal/types.h>

/* A call of this type is answered at once (no sleep) with a sleep_stats_t
 * (reply type the same). Any other call is answered, after sleeping, with
 * the request's type and payload. */
#define SLEEP_MSG_STATS 0xFFFF0001u

typedef struct sleep_stats_s {
    uint64_t messages; /* messages slept on */
    uint64_t calls;    /* calls slept on and answered */
    uint64_t slept_us; /* sleep asked for, in all, in microseconds */
} sleep_stats_t;

#endif
