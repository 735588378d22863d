/* sink.c - sink.sink: counts messages and their payload bytes, drops them.
 *
 * args:
 *   report  duration, default 0 (never): log one line per interval with the
 *           count and the rate since the last line
 *
 * Reporting runs on a timer: shoal_send_after to itself with a private type
 * (SINK_TICK) and a generation number. Those ticks are not counted as work.
 * A timer delivery goes to the ordinary mailbox and is refused (not retried)
 * when that is full, and a tick may sit behind a long queue; so every work
 * message also checks the clock, and when a report is a whole interval late
 * it reports at once and starts a new tick generation. Ticks of an older
 * generation are then ignored, so there is never more than one tick chain.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/plugin.h>

#include "sink.h"

/* Private: the report timer. Only from the sink itself. */
#define SINK_TICK 0xFFFF0002u

typedef struct sink_s {
    uint64_t report_ms; /* 0: no reports */
    uint64_t gen;       /* the live tick chain */
    uint64_t last_ns;   /* time of the last report (or of init) */
    uint64_t last_messages;
    uint64_t late; /* ticks given up on */
    sink_stats_t st;
} sink_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Starts the next tick of the live chain. */
static int arm(shoal_ctx_t *ctx, sink_t *s)
{
    int rc = shoal_send_after(ctx, shoal_self(ctx), s->report_ms, SINK_TICK, &s->gen, sizeof s->gen,
                              NULL);
    if (rc != SHOAL_OK)
        shoal_log(ctx, SHOAL_LOG_WARN, "report timer: %s", shoal_strerror(rc));
    return rc;
}

static void report(shoal_ctx_t *ctx, sink_t *s, uint64_t now)
{
    uint64_t d = s->st.messages - s->last_messages;
    double secs = (double)(now - s->last_ns) / 1e9;
    shoal_log(ctx, SHOAL_LOG_INFO,
              "%" PRIu64 " messages, %" PRIu64 " bytes (+%" PRIu64 " in %.2f s: %.0f msg/s)",
              s->st.messages, s->st.bytes, d, secs, secs > 0 ? (double)d / secs : 0.0);
    s->last_ns = now;
    s->last_messages = s->st.messages;
}

static int sink_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    sink_t *s = state;
    int rc = shoal_arg_duration_ms(ctx, args, "report", SHOAL_ARG_OPTIONAL, &s->report_ms);
    if (rc != SHOAL_OK || s->report_ms == 0)
        return rc;
    s->last_ns = now_ns();
    s->gen = 1;
    return arm(ctx, s);
}

static int is_tick(shoal_ctx_t *ctx, const shoal_msg_t *msg)
{
    return msg->type == SINK_TICK && msg->from == shoal_self(ctx) && msg->size == sizeof(uint64_t);
}

static void count(shoal_ctx_t *ctx, sink_t *s, const shoal_msg_t *msg)
{
    s->st.messages++;
    s->st.bytes += msg->size;
    if (s->report_ms == 0)
        return;
    uint64_t now = now_ns();
    if ((now - s->last_ns) / 2000000u >= s->report_ms) {
        /* The tick is lost or stuck behind the queue: report now and
         * start a new chain; the old one's tick, if any, is ignored. */
        s->late++;
        s->gen++;
        report(ctx, s, now);
        arm(ctx, s);
    }
}

static int sink_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    sink_t *s = state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (is_tick(ctx, msg)) {
        uint64_t gen;
        memcpy(&gen, msg->data, sizeof gen);
        if (gen == s->gen) {
            report(ctx, s, now_ns());
            arm(ctx, s);
        }
        return 0;
    }
    count(ctx, s, msg);
    return 0;
}

static int sink_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    sink_t *s = state;
    int rc;
    if (msg->type == SINK_MSG_STATS) {
        rc = shoal_reply_set(reply, SINK_MSG_STATS, &s->st, sizeof s->st);
    } else {
        count(ctx, s, msg);
        rc = shoal_reply_set(reply, msg->type, NULL, 0);
    }
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc); /* out of memory: tell the caller, live on */
    return 0;
}

static void sink_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    sink_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG,
              "sink ends (%s): %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64 " late ticks",
              shoal_errname(reason), s->st.messages, s->st.bytes, s->late);
}

static const shoal_behaviour_t sink = {
    .name = "sink",
    .state_size = sizeof(sink_t),
    .init = sink_init,
    .handle_message = sink_message,
    .handle_call = sink_call,
    .terminate = sink_terminate,
};

SHOAL_PLUGIN(.name = "sink", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&sink));
