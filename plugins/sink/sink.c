/* sink.c - sink.sink: counts messages and their payload bytes, drops them.
 *
 * args:
 *   report  duration, default 0 (never): log one line per interval with the
 *           count and the rate since the last line
 *
 * Reporting runs on a timer: shoal_send_after_priority to itself with a
 * private type (SINK_TICK). The tick travels in the system mailbox, so it is
 * never refused by a full mailbox and never waits behind queued work: the
 * reports keep their pace exactly when the sink is overloaded. Only a
 * priority SINK_TICK from the sink itself is a tick; anything else of that
 * type is counted like any message. Ticks are not counted as work.
 *
 * inspect reports what the stats call answers: messages, bytes.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#include <inttypes.h>
#include <stdbool.h>
#include <time.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include "sink.h"

/* Private: the report timer. Only from the sink itself. */
#define SINK_TICK 0xFFFF0002u

typedef struct sink_s {
    uint64_t report_ms;  /* 0: no reports */
    shoal_timer_t timer; /* the pending tick; 0 when none */
    uint64_t last_ns;    /* time of the last report (or of init) */
    uint64_t last_messages;
    sink_stats_t st;
} sink_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Starts the next tick. A failure (out of memory) is logged; the next
 * message tries again. */
static void arm(shoal_ctx_t *ctx, sink_t *s)
{
    int rc = shoal_send_after_priority(ctx, shoal_self(ctx), s->report_ms, SINK_TICK, NULL, 0,
                                       &s->timer);
    if (rc != SHOAL_OK) {
        s->timer = 0;
        shoal_log(ctx, SHOAL_LOG_WARN, "report timer: %s", shoal_strerror(rc));
    }
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
    arm(ctx, s);
    return SHOAL_OK;
}

static bool is_tick(shoal_ctx_t *ctx, const shoal_msg_t *msg)
{
    return msg->type == SINK_TICK && msg->from == shoal_self(ctx) &&
           (msg->flags & SHOAL_MSG_PRIORITY) && msg->size == 0;
}

static void count(shoal_ctx_t *ctx, sink_t *s, const shoal_msg_t *msg)
{
    s->st.messages++;
    s->st.bytes += msg->size;
    if (s->report_ms != 0 && s->timer == 0)
        arm(ctx, s); /* the last tick could not be armed */
}

static int sink_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    sink_t *s = state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (is_tick(ctx, msg)) {
        s->timer = 0;
        report(ctx, s, now_ns());
        arm(ctx, s);
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

static int sink_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    sink_t *s = state;
    shoal_inspect_uint(out, "messages", s->st.messages);
    shoal_inspect_uint(out, "bytes", s->st.bytes);
    return 0;
}

static void sink_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    sink_t *s = state;
    if (s->timer != 0)
        shoal_cancel_timer(ctx, s->timer); /* no tick for a sink that is gone */
    shoal_log(ctx, SHOAL_LOG_DEBUG, "sink ends (%s): %" PRIu64 " messages, %" PRIu64 " bytes",
              shoal_errname(reason), s->st.messages, s->st.bytes);
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t sink_args[] = {
    {.key = "report",
     .type = SHOAL_ARG_DURATION,
     .def = "0",
     .doc = "log a line with the counts and the rate every this long; 0 = never"},
    {.key = NULL},
};

static const shoal_behaviour_t sink = {
    .name = "sink",
    .state_size = sizeof(sink_t),
    .init = sink_init,
    .handle_message = sink_message,
    .handle_call = sink_call,
    .terminate = sink_terminate,
    .inspect = sink_inspect,
    .args = sink_args,
};

SHOAL_PLUGIN(.name = "sink", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&sink));
