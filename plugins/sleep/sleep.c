/* sleep.c - sleep.sleep: stands for a blocking call.
 *
 * args:
 *   latency  duration, default 1ms: sleep per message or call
 *   jitter   duration, default 0: plus a uniform extra of 0 .. jitter
 *            (per-actor xorshift32 PRNG, microsecond steps)
 * Both keep microseconds ("250us") and are at most an hour.
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
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/plugin.h>

#include "sleep.h"

#define MAX_US (UINT64_C(3600) * 1000000) /* an hour */

typedef struct sleep_s {
    uint64_t latency_us;
    uint64_t jitter_us;
    uint32_t prng; /* xorshift32 state, never 0 */
    sleep_stats_t st;
} sleep_t;

/* An optional duration in microseconds, at most max_us. The SDK's getter
 * keeps milliseconds (us rounds up), so "<digits>us" is read here; any
 * other value goes to the getter, which checks it and reports errors with
 * the value's file:line:col. *out is untouched when the key is absent. */
static int arg_duration_us(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                           uint64_t max_us, uint64_t *out)
{
    const char *text = NULL;
    uint64_t us;
    (void)shoal_arg_string(NULL, args, key, SHOAL_ARG_OPTIONAL, &text);
    size_t n = text != NULL ? strlen(text) : 0;
    if (n > 2 && n <= 2 + 15 && strcmp(text + n - 2, "us") == 0 &&
        strspn(text, "0123456789") == n - 2) {
        us = strtoull(text, NULL, 10);
    } else {
        uint64_t ms = UINT64_MAX;
        int rc = shoal_arg_duration_ms(ctx, args, key, SHOAL_ARG_OPTIONAL, &ms);
        if (rc != SHOAL_OK || ms == UINT64_MAX)
            return rc; /* an error (logged), or absent */
        us = ms > max_us / 1000 ? max_us + 1 : ms * 1000;
    }
    if (us > max_us) {
        shoal_log(ctx, SHOAL_LOG_ERROR, "args '%s': '%s' is too long: at most %" PRIu64 "s", key,
                  text != NULL ? text : "?", max_us / 1000000);
        return SHOAL_EINVAL;
    }
    *out = us;
    return SHOAL_OK;
}

static int sleep_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    sleep_t *s = state;
    int rc;
    s->latency_us = 1000;
    if ((rc = arg_duration_us(ctx, args, "latency", MAX_US, &s->latency_us)) ||
        (rc = arg_duration_us(ctx, args, "jitter", MAX_US, &s->jitter_us)))
        return rc;
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

static void sleep_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    sleep_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG,
              "sleep ends (%s): %" PRIu64 " messages, %" PRIu64 " calls, slept %" PRIu64 " us",
              shoal_errname(reason), s->st.messages, s->st.calls, s->st.slept_us);
}

static const shoal_behaviour_t sleep_behaviour = {
    .name = "sleep",
    .state_size = sizeof(sleep_t),
    .init = sleep_init,
    .handle_message = sleep_message,
    .handle_call = sleep_call,
    .terminate = sleep_terminate,
};

SHOAL_PLUGIN(.name = "sleep", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&sleep_behaviour));
