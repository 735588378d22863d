/* conn.c - conn.conn: stands for a connection, the member of a checkout pool.
 *
 * args:
 *   connect                duration 0 .. 1m, default 0: init sleeps this
 *                          long (the connect handshake; `us` kept)
 *   connect_fail_permille  integer 0 .. 1000, default 0: the chance, per
 *                          mille, that the connect is refused (init fails)
 *   fail_permille          integer 0 .. 1000, default 0: the chance, per
 *                          mille, that a call breaks the connection
 *   seed                   integer, optional: seeds the draws (default:
 *                          the member's PID)
 * The SDK has no getter for a fraction, so the chances are per mille.
 *
 * init sleeps `connect`, draws for the connect, and on success takes the
 * next session id. Every call and cast is one use; each call but a stats
 * call draws, and a failed draw ends the member with SHOAL_EFAILED (the
 * caller's status too). inspect reports session, uses, connect_us.
 *
 * Like sleep, the connect blocks the dispatcher thread that runs init, on
 * purpose: that is what a blocking connect in a member's init does.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include "conn.h"

#define MAX_CONNECT_US (UINT64_C(60) * 1000000) /* a minute */
#define PERMILLE 1000

/* The next session id, shared by every member this copy of the plugin
 * runs (the loader maps one copy per file: a changed conn.so loaded by a
 * reload counts from 1 again). Relaxed: the id only has to be unique, and
 * a fetch_add gives each caller a different value whatever the order;
 * nothing else is published through it. */
static _Atomic uint64_t next_session = 1;

typedef struct conn_s {
    uint64_t session;
    uint64_t uses;
    uint64_t connect_us;
    uint64_t connected_ns;
    int64_t fail_permille;
    uint64_t prng; /* splitmix64 state */
} conn_t;

/* Reports a value of key outside `range`, as the SDK's getters do. */
static int out_of_range(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                        const char *range)
{
    const char *text = "?";
    (void)shoal_arg_string(NULL, args, key, SHOAL_ARG_OPTIONAL, &text);
    return shoal_arg_error(ctx, args, key, "%s is out of range: expected %s", text, range);
}

/* splitmix64 (Vigna): every seed, 0 included, gives a full sequence. */
static uint64_t next_random(conn_t *c)
{
    uint64_t z = c->prng += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* One draw: true when it fails, with a chance of permille / 1000. */
static bool draw_fails(conn_t *c, int64_t permille)
{
    return next_random(c) % PERMILLE < (uint64_t)permille;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Blocks this dispatcher thread for us microseconds. */
static void nap(uint64_t us)
{
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int conn_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    conn_t *c = state;
    int64_t connect_fail = 0, seed = 0;
    const char *seed_text = NULL;
    int rc;
    if ((rc = shoal_arg_duration_us(ctx, args, "connect", SHOAL_ARG_OPTIONAL, &c->connect_us)) ||
        (rc = shoal_arg_int(ctx, args, "connect_fail_permille", SHOAL_ARG_OPTIONAL, 0, PERMILLE,
                            &connect_fail)) ||
        (rc = shoal_arg_int(ctx, args, "fail_permille", SHOAL_ARG_OPTIONAL, 0, PERMILLE,
                            &c->fail_permille)) ||
        (rc = shoal_arg_int(ctx, args, "seed", SHOAL_ARG_OPTIONAL, INT64_MIN, INT64_MAX, &seed)))
        return rc;
    if (c->connect_us > MAX_CONNECT_US)
        return out_of_range(ctx, args, "connect", "0 to 1m");
    /* The seed as given (0 is one too), else the PID: a pool's members differ. */
    (void)shoal_arg_string(NULL, args, "seed", SHOAL_ARG_OPTIONAL, &seed_text);
    c->prng = seed_text != NULL ? (uint64_t)seed : (uint64_t)shoal_self(ctx);

    nap(c->connect_us);
    if (draw_fails(c, connect_fail)) {
        const char *text = "?";
        (void)shoal_arg_string(NULL, args, "connect_fail_permille", SHOAL_ARG_OPTIONAL, &text);
        /* The text is the start's reason (shoal_ctx_error); the end is a
         * failure, not a bad arg. */
        (void)shoal_arg_error(ctx, args, "connect_fail_permille",
                              "connect refused (%s per mille of connects fail)", text);
        return SHOAL_EFAILED;
    }
    c->connected_ns = now_ns();
    c->session = atomic_fetch_add_explicit(&next_session, 1, memory_order_relaxed);
    return SHOAL_OK;
}

static int conn_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    conn_t *c = state;
    if (msg->kind == SHOAL_MSG_CAST)
        c->uses++;
    return 0;
}

/* Sets the immediate answer; out of memory becomes the reply's status
 * instead of ending the member. */
static int answer(shoal_reply_t *reply, uint32_t type, const void *data, size_t size)
{
    int rc = shoal_reply_set(reply, type, data, size);
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc);
    return 0;
}

static int conn_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    conn_t *c = state;
    if (msg->type == CONN_MSG_STATS) {
        conn_stats_t st = {.session = c->session,
                           .uses = c->uses,
                           .connect_us = c->connect_us,
                           .connected_ns = c->connected_ns};
        return answer(reply, CONN_MSG_STATS, &st, sizeof st);
    }
    c->uses++;
    if (draw_fails(c, c->fail_permille)) {
        shoal_log(ctx, SHOAL_LOG_WARN,
                  "connection broke after %" PRIu64 " use%s (session %" PRIu64 ")", c->uses,
                  c->uses == 1 ? "" : "s", c->session);
        return SHOAL_EFAILED; /* the caller's status, and the member's end */
    }
    conn_reply_t r = {.session = c->session, .uses = c->uses};
    if (msg->size == sizeof r.value)
        memcpy(&r.value, msg->data, sizeof r.value);
    return answer(reply, msg->type, &r, sizeof r);
}

static int conn_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    conn_t *c = state;
    shoal_inspect_uint(out, "session", c->session);
    shoal_inspect_uint(out, "uses", c->uses);
    shoal_inspect_uint(out, "connect_us", c->connect_us);
    return 0;
}

static void conn_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    conn_t *c = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG, "conn ends (%s): session %" PRIu64 ", %" PRIu64 " uses",
              shoal_errname(reason), c->session, c->uses);
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t conn_args[] = {
    {.key = "connect",
     .type = SHOAL_ARG_DURATION_US,
     .min = 0,
     .max = (int64_t)MAX_CONNECT_US,
     .def = "0",
     .doc = "init sleeps this long: the connect handshake (us kept)"},
    {.key = "connect_fail_permille",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = PERMILLE,
     .def = "0",
     .doc = "the chance, per mille, that the connect is refused (init fails)"},
    {.key = "fail_permille",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = PERMILLE,
     .def = "0",
     .doc = "the chance, per mille, that a call breaks the connection (the member ends)"},
    {.key = "seed",
     .type = SHOAL_ARG_INT,
     .doc = "seeds the draws, the same run after run (default: the member's PID)"},
    {.key = NULL},
};

static const shoal_behaviour_t conn_behaviour = {
    .name = "conn",
    .state_size = sizeof(conn_t),
    .init = conn_init,
    .handle_message = conn_message,
    .handle_call = conn_call,
    .terminate = conn_terminate,
    .inspect = conn_inspect,
    .args = conn_args,
};

SHOAL_PLUGIN(.name = "conn", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&conn_behaviour));
