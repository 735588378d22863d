/* burn.c - burn.burn: a configurable amount of CPU work per message.
 *
 * args:
 *   rounds  integer 0 .. 1000000000, default 50: xorshift32 rounds per message
 *   spin    duration 0 .. 1h, default 0: also busy-wait this long per
 *           message (clock_gettime loop); microseconds are kept ("50us")
 *   skew    integer 0 .. 1000000000, default 0: one message in `skew` (those
 *           whose v below is a multiple of it) costs `factor` times as much;
 *           0 = none. Uneven jobs, as the benchmarks' W5 (skew 1000)
 *   factor  integer 1 .. 1000000, default 1000: how much more those cost
 *
 * The work for one message (burn.h): v = the payload's first 8 bytes, or
 * the count so far when the payload is shorter; s = (uint32_t)(v + 1);
 * `rounds` times (x factor for a skewed one): s ^= s << 13; s ^= s >> 17;
 * s ^= s << 5, and the spin likewise. Then count += 1 and acc ^= s.
 * rounds = 50 is the benchmark spec's xs50.
 *
 * inspect reports what the stats call answers: count, acc, rounds.
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
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include "burn.h"

#define MAX_ROUNDS 1000000000
#define MAX_SPIN_US (UINT64_C(3600) * 1000000) /* an hour */
#define MAX_FACTOR 1000000

typedef struct burn_s {
    uint32_t rounds;
    uint64_t spin_ns;
    uint64_t skew, factor;
    uint64_t count;
    uint32_t acc;
} burn_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reports a value of key outside `range`, as the SDK's getters do. */
static int out_of_range(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                        const char *range)
{
    const char *text = "?";
    (void)shoal_arg_string(NULL, args, key, SHOAL_ARG_OPTIONAL, &text);
    return shoal_arg_error(ctx, args, key, "%s is out of range: expected %s", text, range);
}

static int burn_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    burn_t *s = state;
    int64_t rounds = 50, skew = 0, factor = 1000;
    uint64_t spin_us = 0;
    int rc;
    if ((rc = shoal_arg_int(ctx, args, "rounds", SHOAL_ARG_OPTIONAL, 0, MAX_ROUNDS, &rounds)) ||
        (rc = shoal_arg_duration_us(ctx, args, "spin", SHOAL_ARG_OPTIONAL, &spin_us)) ||
        (rc = shoal_arg_int(ctx, args, "skew", SHOAL_ARG_OPTIONAL, 0, MAX_ROUNDS, &skew)) ||
        (rc = shoal_arg_int(ctx, args, "factor", SHOAL_ARG_OPTIONAL, 1, MAX_FACTOR, &factor)))
        return rc;
    s->skew = (uint64_t)skew;
    s->factor = (uint64_t)factor;
    if (spin_us > MAX_SPIN_US)
        return out_of_range(ctx, args, "spin", "0 to 1h");
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
    uint64_t times = s->skew != 0 && v % s->skew == 0 ? s->factor : 1;
    uint32_t x = (uint32_t)(v + 1);
    for (uint64_t i = 0, n = (uint64_t)s->rounds * times; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    if (s->spin_ns != 0) {
        uint64_t end = now_ns() + s->spin_ns * times;
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

static int burn_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    burn_t *s = state;
    shoal_inspect_uint(out, "count", s->count);
    shoal_inspect_uint(out, "acc", s->acc);
    shoal_inspect_uint(out, "rounds", s->rounds);
    return 0;
}

static void burn_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    burn_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG, "burn ends (%s): count %" PRIu64 ", acc %" PRIu32,
              shoal_errname(reason), s->count, s->acc);
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t burn_args[] = {
    {.key = "rounds",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = MAX_ROUNDS,
     .def = "50",
     .doc = "xorshift32 rounds per message"},
    {.key = "spin",
     .type = SHOAL_ARG_DURATION_US,
     .min = 0,
     .max = (int64_t)MAX_SPIN_US,
     .def = "0",
     .doc = "also busy-wait this long per message (us kept: 50us is 50 microseconds)"},
    {.key = "skew",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = MAX_ROUNDS,
     .def = "0",
     .doc = "one message in this many (its payload's number a multiple) costs `factor` times "
            "as much; 0 = none"},
    {.key = "factor",
     .type = SHOAL_ARG_INT,
     .min = 1,
     .max = MAX_FACTOR,
     .def = "1000",
     .doc = "how many times as much a skewed message costs"},
    {.key = NULL},
};

static const shoal_behaviour_t burn = {
    .name = "burn",
    .state_size = sizeof(burn_t),
    .init = burn_init,
    .handle_message = burn_message,
    .handle_call = burn_call,
    .terminate = burn_terminate,
    .inspect = burn_inspect,
    .args = burn_args,
};

SHOAL_PLUGIN(.name = "burn", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&burn));
