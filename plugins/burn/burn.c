/* burn.c - burn.burn: a configurable amount of CPU work per message.
 *
 * args:
 *   rounds  integer 0 .. 1000000000, default 50: xorshift32 rounds per message
 *   spin    duration, default 0: also busy-wait this long per message
 *           (clock_gettime loop); microseconds are kept ("50us")
 *
 * The work for one message (burn.h): v = the payload's first 8 bytes, or
 * the count so far when the payload is shorter; s = (uint32_t)(v + 1);
 * `rounds` times: s ^= s << 13; s ^= s >> 17; s ^= s << 5. Then count += 1
 * and acc ^= s. rounds = 50 is the benchmark spec's xs50.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/plugin.h>

#include "burn.h"

#define MAX_ROUNDS 1000000000
#define MAX_SPIN_US (UINT64_C(3600) * 1000000) /* an hour */

typedef struct burn_s {
    uint32_t rounds;
    uint64_t spin_ns;
    uint64_t count;
    uint32_t acc;
} burn_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

static int burn_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    burn_t *s = state;
    int64_t rounds = 50;
    uint64_t spin_us = 0;
    int rc;
    if ((rc = shoal_arg_int(ctx, args, "rounds", SHOAL_ARG_OPTIONAL, 0, MAX_ROUNDS, &rounds)) ||
        (rc = arg_duration_us(ctx, args, "spin", MAX_SPIN_US, &spin_us)))
        return rc;
    s->rounds = (uint32_t)rounds;
    s->spin_ns = spin_us * 1000;
    return SHOAL_OK;
}

/* The work for one payload; returns the result. */
static uint32_t work(burn_t *s, const shoal_msg_t *msg)
{
    uint64_t v = s->count;
    if (msg->size >= sizeof v)
        memcpy(&v, msg->data, sizeof v);
    uint32_t x = (uint32_t)(v + 1);
    for (uint32_t i = 0; i < s->rounds; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    if (s->spin_ns != 0) {
        uint64_t end = now_ns() + s->spin_ns;
        while (now_ns() < end) {
        }
    }
    s->count++;
    s->acc ^= x;
    return x;
}

static int burn_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    if (msg->kind == SHOAL_MSG_CAST)
        work(state, msg);
    return 0;
}

static int burn_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    burn_t *s = state;
    int rc;
    if (msg->type == BURN_MSG_STATS) {
        burn_stats_t st = {.count = s->count, .acc = s->acc, .rounds = s->rounds};
        rc = shoal_reply_set(reply, BURN_MSG_STATS, &st, sizeof st);
    } else {
        uint32_t r = work(s, msg);
        rc = shoal_reply_set(reply, msg->type, &r, sizeof r);
    }
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc); /* out of memory: tell the caller, live on */
    return 0;
}

static void burn_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    burn_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG, "burn ends (%s): count %" PRIu64 ", acc %" PRIu32,
              shoal_errname(reason), s->count, s->acc);
}

static const shoal_behaviour_t burn = {
    .name = "burn",
    .state_size = sizeof(burn_t),
    .init = burn_init,
    .handle_message = burn_message,
    .handle_call = burn_call,
    .terminate = burn_terminate,
};

SHOAL_PLUGIN(.name = "burn", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&burn));
