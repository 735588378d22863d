/* echo.h - the echo plugin's protocol (see plugins/echo/README.md).
 *
 * echo.echo answers every call with the request's type and payload (or with
 * the `reply` string of its args), and sends every message that came from
 * an actor back to that actor. Application type ids below 0xFFFF0000 are
 * yours; the bundled plugins keep the range 0xFFFF0000.. for themselves.
 */
#ifndef SHOAL_PLUGIN_ECHO_H
#define SHOAL_PLUGIN_ECHO_H

#include <shoal/types.h>

/* A call of this type is answered with an echo_stats_t (reply type the
 * same). The counters are this one actor's, since it started. */
#define ECHO_MSG_STATS 0xFFFF0001u

typedef struct echo_stats_s {
    uint64_t calls;        /* calls answered (not counting stats calls) */
    uint64_t messages;     /* messages (casts) received */
    uint64_t echoed;       /* messages sent back to their sender (accepted) */
    uint64_t echo_refused; /* sends back refused (full, gone, ...) */
} echo_stats_t;

#endif
