/* loadgen.h - the loadgen plugin's protocol (see plugins/loadgen/README.md).
 *
 * loadgen.loadgen is a source: from init on it sends work to the actor
 * registered under its `target` name, at `rate` messages per second or as
 * fast as the target accepts. Each payload is `size` bytes; the first 8 (or
 * all, when fewer) are a uint64_t sequence number, native-endian: the n-th
 * ACCEPTED message carries n - 1, so what the target got is exactly 0 ..
 * sent - 1 (a refused send's number is used again by the next attempt).
 */
#ifndef SHOAL_PLUGIN_LOADGEN_H
#define SHOAL_PLUGIN_LOADGEN_H

#include <shoal/types.h>

/* A call of this type is answered with a loadgen_stats_t (reply type the
 * same). loadgen takes no other requests: a call of any type gets the same
 * answer (handy from a tool that cannot pick the type). */
#define LOADGEN_MSG_STATS 0xFFFF0001u

typedef struct loadgen_stats_s {
    uint64_t sent;         /* sends or calls accepted by the target */
    uint64_t refused_full; /* SHOAL_EFULL: the target's mailbox was at its limit */
    uint64_t refused_busy; /* SHOAL_EBUSY: the target is a pool and every worker was full */
    uint64_t noproc;       /* target name not registered, or SHOAL_ENOPROC */
    uint64_t send_errors;  /* any other send error (SHOAL_ENOMEM, SHOAL_ESTOPPED, ...) */
    uint64_t replies;      /* call mode: replies with status 0 */
    uint64_t reply_errors; /* call mode: replies with an error status (EPANIC, ENOPROC, ...) */
    uint64_t timeouts;     /* call mode: calls that got no reply within `timeout` */
    uint64_t in_flight;    /* call mode: calls sent and not settled yet */
    uint64_t throttled;    /* rate mode: sends skipped, as `window` calls were in flight */
    uint64_t behind;       /* rate mode: sends skipped, as the generator fell behind its rate */
    uint64_t done;         /* 1 once `count` sends were accepted and every call settled */
    /* Appended (SDK 1.4): as-fast mode, after SHOAL_EBUSY from a target that
     * can say when it has room (a pull pool): waits for SHOAL_MSG_ROOM. */
    uint64_t room_waits; /* times it waited so */
    uint64_t retries;    /* turns after a refusal without such a wait (the target cannot tell) */
} loadgen_stats_t;

#endif
