/* crash.h - the crash plugin's protocol (see plugins/crash/README.md).
 *
 * crash.crash fails on every `every`-th message or call it handles (counted
 * per actor instance, so a fresh replacement starts counting from zero):
 * it panics, returns SHOAL_EFAILED, or exits with SHOAL_EFAILED, as `mode`
 * says. Everything else it counts and drops, like a sink; a call that does
 * not crash is answered with an empty payload under the request's type.
 */
#ifndef SHOAL_PLUGIN_CRASH_H
#define SHOAL_PLUGIN_CRASH_H

#include <shoal/types.h>

/* A call of this type is answered with a crash_stats_t (reply type the
 * same); it is not counted and never crashes. */
#define CRASH_MSG_STATS 0xFFFF0001u

typedef struct crash_stats_s {
    uint64_t messages;    /* messages handled without crashing */
    uint64_t calls;       /* calls answered without crashing */
    uint64_t every;       /* the configured period */
    uint64_t until_crash; /* how many more messages/calls the next crash is: 1 = the next one */
} crash_stats_t;

#endif
