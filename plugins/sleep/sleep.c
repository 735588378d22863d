/* sleep.c - sleep.sleep: stands for a blocking call.
 *
 * args:
 *   latency  duration, default 1ms: sleep per message or call
 *   jitter   duration, default 0: plus a uniform extra of 0 .. jitter
 *            (per-actor xorshift32 PRNG, microsecond steps)
 * Both keep microseconds ("250us") and are at most an hour. inspect reports
 * what the stats call answers: messages, calls, slept_us.
 *
 * It really blocks: nanosleep runs on the dispatcher thread that runs this
 * actor, and that thread does nothing else meanwhile. That is the point -
 * it is how a handler that does blocking I/O behaves - so give a pool of
 * sleep workers more dispatcher threads than you would give CPU work, and
 * expect a few of them to hold back the whole runtime.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#include <errno.h>
#include <inttypes.h>
#include <time.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include "sleep.h"

#define MAX_US (UINT64_C(3600) * 1000000) /* an hour */

typedef struct sleep_s {
    uint64_t latency_us;
    uint64_t jitter_us;
    uint32_t prng; /* xorshift32 state, never 0 */
    sleep_stats_t st;
} sleep_t;

/* Reports a value of key outside `range`, as the SDK's getters do. */
static int out_of_range(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                        const char *range)
{
    const char *text = "?";
    (void)shoal_arg_string(NULL, args, key, SHOAL_ARG_OPTIONAL, &text);
    return shoal_arg_error(ctx, args, key, "%s is out of range: expected %s", text, range);
}

static int sleep_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    sleep_t *s = state;
    int rc;
    s->latency_us = 1000;
    if ((rc = shoal_arg_duration_us(ctx, args, "latency", SHOAL_ARG_OPTIONAL, &s->latency_us)) ||
        (rc = shoal_arg_duration_us(ctx, args, "jitter", SHOAL_ARG_OPTIONAL, &s->jitter_us)))
        return rc;
    if (s->latency_us > MAX_US)
        return out_of_range(ctx, args, "latency", "0 to 1h");
    if (s->jitter_us > MAX_US)
        return out_of_range(ctx, args, "jitter", "0 to 1h");
    /* Seed from the PID, so the workers of a pool do not march in step. */
    uint64_t pid = shoal_self(ctx);
    uint32_t seed = (uint32_t)(pid ^ pid >> 32) * 2654435761u;
    s->prng = seed != 0 ? seed : 0x9e3779b9u;
    return SHOAL_OK;
}

static uint32_t next_random(sleep_t *s)
{
    uint32_t x = s->prng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return s->prng = x;
}

/* Blocks this dispatcher thread for latency + 0 .. jitter. */
static void nap(sleep_t *s)
{
    uint64_t us = s->latency_us;
    if (s->jitter_us != 0)
        us += next_random(s) % (s->jitter_us + 1);
    s->st.slept_us += us;
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int sleep_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    sleep_t *s = state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    nap(s);
    s->st.messages++;
    return 0;
}

static int sleep_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    sleep_t *s = state;
    int rc;
    if (msg->type == SLEEP_MSG_STATS) {
        rc = shoal_reply_set(reply, SLEEP_MSG_STATS, &s->st, sizeof s->st);
    } else {
        nap(s);
        s->st.calls++;
        rc = shoal_reply_set(reply, msg->type, msg->data, msg->size);
    }
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc); /* out of memory: tell the caller, live on */
    return 0;
}

static int sleep_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    sleep_t *s = state;
    shoal_inspect_uint(out, "messages", s->st.messages);
    shoal_inspect_uint(out, "calls", s->st.calls);
    shoal_inspect_uint(out, "slept_us", s->st.slept_us);
    return 0;
}

static void sleep_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    sleep_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG,
              "sleep ends (%s): %" PRIu64 " messages, %" PRIu64 " calls, slept %" PRIu64 " us",
              shoal_errname(reason), s->st.messages, s->st.calls, s->st.slept_us);
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t sleep_args[] = {
    {.key = "latency",
     .type = SHOAL_ARG_DURATION_US,
     .min = 0,
     .max = (int64_t)MAX_US,
     .def = "1ms",
     .doc = "sleep per message or call (us kept: 250us is 250 microseconds)"},
    {.key = "jitter",
     .type = SHOAL_ARG_DURATION_US,
     .min = 0,
     .max = (int64_t)MAX_US,
     .def = "0",
     .doc = "plus a uniform extra of 0 .. jitter (microsecond steps)"},
    {.key = NULL},
};

static const shoal_behaviour_t sleep_behaviour = {
    .name = "sleep",
    .state_size = sizeof(sleep_t),
    .init = sleep_init,
    .handle_message = sleep_message,
    .handle_call = sleep_call,
    .terminate = sleep_terminate,
    .inspect = sleep_inspect,
    .args = sleep_args,
};

SHOAL_PLUGIN(.name = "sleep", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&sleep_behaviour));
