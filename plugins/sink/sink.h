/* sink.h - the sink plugin's protocol (see plugins/sink/README.md).
 *
 * sink.sink counts what it receives and drops it. Messages and calls both
 * count (a call is answered with an empty payload under its own type).
 */
#ifndef SHOAL_PLUGIN_SINK_H
#define SHOAL_PLUGIN_SINK_H

#include <shoal/types.h>

/* A call of this type is answered with a sink_stats_t (reply type the same);
 * it is not counted. */
#define SINK_MSG_STATS 0xFFFF0001u

typedef struct sink_stats_s {
    uint64_t messages; /* messages and calls received (not stats calls, not its own ticks) */
    uint64_t bytes;    /* their payload bytes */
} sink_stats_t;

#endif
