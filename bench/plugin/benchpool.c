/* benchpool.c - the bench plugin: the workers of the isolated-pool
 * benchmarks (../iso.c), built as a plugin because an isolated pool's
 * child process loads its code from one.
 *
 *   benchpool.w1    MSG_WORK(v): count it, acc ^= xs50(v) (W1's work);
 *                   when its pool drains it (terminate, reason 0), reports
 *                   (count, acc) with MSG_REPORT to whoever sent it work
 *   benchpool.pong  MSG_PING(k): MSG_PONG(k) back to the sender (W2); a call
 *                   is answered with its own payload (the call round trip)
 *
 * The message types and the report are shoal-bench's (bench.h), written
 * here again as plain numbers: a plugin includes only the SDK.
 */
#include <string.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/plugin.h>

#include "../xs50.h"

enum { MSG_WORK = 1, MSG_REPORT = 5, MSG_PING = 6, MSG_PONG = 7 };

typedef struct report_s {
    uint64_t count, acc, dropped;
} report_t;

typedef struct w1_s {
    uint64_t count;
    uint32_t acc;
    shoal_pid_t to;
} w1_t;

static int w1_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    w1_t *s = state;
    uint64_t v;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != MSG_WORK || msg->size != sizeof v)
        return 0;
    memcpy(&v, msg->data, sizeof v);
    s->count++;
    s->acc ^= xs50(v);
    s->to = msg->from;
    return 0;
}

static void w1_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    w1_t *s = state;
    if (reason != 0 || s->to == SHOAL_PID_NONE)
        return;
    report_t r = {s->count, s->acc, 0};
    shoal_send(ctx, s->to, MSG_REPORT, &r, sizeof r);
}

static int pong_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == MSG_PING)
        shoal_send(ctx, msg->from, MSG_PONG, msg->data, msg->size);
    return 0;
}

static int pong_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx, (void)state;
    int rc = shoal_reply_set(reply, msg->type, msg->data, msg->size);
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc);
    return 0;
}

static const shoal_arg_spec_t no_args[] = {{.key = NULL}};

static const shoal_behaviour_t w1 = {
    .name = "w1",
    .state_size = sizeof(w1_t),
    .handle_message = w1_message,
    .terminate = w1_terminate,
    .args = no_args,
};

static const shoal_behaviour_t pong = {
    .name = "pong",
    .handle_message = pong_message,
    .handle_call = pong_call,
    .args = no_args,
};

SHOAL_PLUGIN(.name = "benchpool", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&w1, &pong));
