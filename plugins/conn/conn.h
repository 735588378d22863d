/* conn.h - the conn plugin's protocol (see plugins/conn/README.md).
 *
 * conn.conn stands for a connection: the member of a checkout pool
 * (shoal/checkout.h), which one consumer takes, uses and gives back. Its
 * init is the connect (it sleeps `connect`, and may be refused); every
 * member gets a session id, unique among the members of this loaded
 * conn.so and counting up from 1 in the order their connects succeed; a
 * call may break the connection (then the member ends with SHOAL_EFAILED,
 * as a broken connection does).
 *
 * Draws. One pseudo-random generator per member, splitmix64 seeded with
 * the `seed` arg (as a uint64_t), or with the member's PID without one.
 * The first draw decides the connect, then each call but a stats call
 * draws once, whatever the rates; a draw d fails when d % 1000 is below
 * the rate in per mille. So members with the same seed fail at the same
 * uses, run after run.
 *
 * Type ids 0xFFFF0000 and up are kept for the bundled plugins (application
 * types stay below; 0xFFFE0000 .. 0xFFFEFFFF are the runtime's).
 */
#ifndef SHOAL_PLUGIN_CONN_H
#define SHOAL_PLUGIN_CONN_H

#include <shoal/types.h>

/* A call of this type (payload: nothing, or a uint64_t value) is one use:
 * answered with a conn_reply_t under the request's type, or it breaks the
 * connection (status SHOAL_EFAILED, and the member ends). A call of any
 * other type but CONN_MSG_STATS is answered the same way. A payload that
 * is not 8 bytes is not read (value 0). */
#define CONN_MSG_QUERY 0xFFFF0020u

/* A call of this type is answered with a conn_stats_t (reply type the
 * same). Not a use: it is never counted, draws nothing and never breaks. */
#define CONN_MSG_STATS 0xFFFF0001u

/* A cast of any type is one use; nothing is sent back, nothing is drawn. */

typedef struct conn_reply_s {
    uint64_t session; /* the member's session id (1, 2, ...) */
    uint64_t uses;    /* its calls and casts so far, this one included */
    uint64_t value;   /* the request's uint64_t payload, or 0 */
} conn_reply_t;

typedef struct conn_stats_s {
    uint64_t session;      /* the member's session id */
    uint64_t uses;         /* its calls and casts so far (stats calls not counted) */
    uint64_t connect_us;   /* the connect it slept in init (the `connect` arg) */
    uint64_t connected_ns; /* CLOCK_MONOTONIC when its connect succeeded, in ns */
} conn_stats_t;

#endif
