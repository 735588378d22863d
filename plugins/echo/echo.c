/* echo.c - echo.echo: answers calls with what they carried (or with a fixed
 * string) and sends messages back to the actor that sent them.
 *
 * args:
 *   reply  string, optional: answer every call with these bytes (no NUL)
 *          under the request's type, instead of the request's payload.
 *
 * Two echo actors that send to each other bounce one message for ever:
 * echo only answers, so point it at actors that do not answer back.
 *
 * inspect reports what the stats call answers: calls, messages, echoed,
 * echo_refused.
 */
#include <inttypes.h>
#include <string.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include "echo.h"

typedef struct echo_s {
    const char *reply; /* NULL: echo the request; points into the args tree */
    echo_stats_t st;
} echo_t;

static int echo_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    echo_t *s = state;
    return shoal_arg_string(ctx, args, "reply", SHOAL_ARG_OPTIONAL, &s->reply);
}

static int echo_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    echo_t *s = state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0; /* echo makes no calls and spawns nothing */
    s->st.messages++;
    if (msg->from == SHOAL_PID_NONE)
        return 0;
    if (shoal_send(ctx, msg->from, msg->type, msg->data, msg->size) == SHOAL_OK)
        s->st.echoed++;
    else
        s->st.echo_refused++;
    return 0;
}

/* Sets the immediate answer; out of memory becomes the reply's status
 * instead of ending the actor. */
static int answer(shoal_reply_t *reply, uint32_t type, const void *data, size_t size)
{
    int rc = shoal_reply_set(reply, type, data, size);
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc);
    return 0;
}

static int echo_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    echo_t *s = state;
    if (msg->type == ECHO_MSG_STATS)
        return answer(reply, ECHO_MSG_STATS, &s->st, sizeof s->st);
    s->st.calls++;
    if (s->reply != NULL)
        return answer(reply, msg->type, s->reply, strlen(s->reply));
    return answer(reply, msg->type, msg->data, msg->size);
}

static int echo_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    echo_t *s = state;
    shoal_inspect_uint(out, "calls", s->st.calls);
    shoal_inspect_uint(out, "messages", s->st.messages);
    shoal_inspect_uint(out, "echoed", s->st.echoed);
    shoal_inspect_uint(out, "echo_refused", s->st.echo_refused);
    return 0;
}

static void echo_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    echo_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG,
              "echo ends (%s): %" PRIu64 " calls, %" PRIu64 " messages, %" PRIu64
              " echoed, %" PRIu64 " refused",
              shoal_errname(reason), s->st.calls, s->st.messages, s->st.echoed, s->st.echo_refused);
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t echo_args[] = {
    {.key = "reply",
     .type = SHOAL_ARG_STRING,
     .doc = "answer every call with these bytes (no NUL) instead of the request's payload"},
    {.key = NULL},
};

static const shoal_behaviour_t echo = {
    .name = "echo",
    .state_size = sizeof(echo_t),
    .init = echo_init,
    .handle_message = echo_message,
    .handle_call = echo_call,
    .terminate = echo_terminate,
    .inspect = echo_inspect,
    .args = echo_args,
};

SHOAL_PLUGIN(.name = "echo", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&echo));
