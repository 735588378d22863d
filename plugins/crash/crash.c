/* crash.c - crash.crash: fails on every k-th message or call.
 *
 * args:
 *   every  integer >= 1, default 10: the k; counted per actor instance, over
 *          messages and calls alike (stats calls excepted)
 *   mode   one of panic, fail, exit; default panic: how it fails -
 *            panic  shoal_panic() (reason SHOAL_EPANIC; a caller gets status
 *                   SHOAL_EPANIC)
 *            fail   the handler returns SHOAL_EFAILED (a caller gets status
 *                   SHOAL_EFAILED)
 *            exit   shoal_exit(ctx, SHOAL_EFAILED) and return normally (a
 *                   caller gets status SHOAL_EFAILED)
 * Every other message is counted and dropped; every other call is answered
 * with an empty payload under its own type. inspect reports what the stats
 * call answers: messages, calls, every, until_crash.
 */
#include <inttypes.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include "crash.h"

enum { MODE_PANIC, MODE_FAIL, MODE_EXIT };
static const char *const modes[] = {
    [MODE_PANIC] = "panic", [MODE_FAIL] = "fail", [MODE_EXIT] = "exit", NULL};

typedef struct crash_s {
    uint64_t every;
    unsigned mode;
    uint64_t seen; /* messages and calls handled, the fatal one included */
    crash_stats_t st;
} crash_t;

static int crash_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    crash_t *s = state;
    int64_t every = 10;
    int rc;
    s->mode = MODE_PANIC;
    if ((rc = shoal_arg_int(ctx, args, "every", SHOAL_ARG_OPTIONAL, 1, INT64_MAX, &every)) ||
        (rc = shoal_arg_enum(ctx, args, "mode", SHOAL_ARG_OPTIONAL, modes, &s->mode)))
        return rc;
    s->every = (uint64_t)every;
    return SHOAL_OK;
}

/* Counts one message or call; non-zero when this one is the k-th. */
static int fatal(crash_t *s) { return ++s->seen % s->every == 0; }

/* Fails the way `mode` says; returns what the handler should return. */
static int fail(shoal_ctx_t *ctx, crash_t *s, const shoal_msg_t *msg)
{
    switch (s->mode) {
    case MODE_PANIC:
        shoal_panic(ctx, "crash: %s %" PRIu64 " (every %" PRIu64 ")",
                    msg->kind == SHOAL_MSG_CALL ? "call" : "message", s->seen, s->every);
    case MODE_EXIT:
        shoal_exit(ctx, SHOAL_EFAILED);
        return SHOAL_OK;
    default:
        return SHOAL_EFAILED;
    }
}

static int crash_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    crash_t *s = state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (fatal(s))
        return fail(ctx, s, msg);
    s->st.messages++;
    return 0;
}

/* What a stats call and inspect report. */
static crash_stats_t stats(const crash_t *s)
{
    crash_stats_t st = s->st;
    st.every = s->every;
    st.until_crash = s->every - s->seen % s->every;
    return st;
}

static int crash_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    crash_t *s = state;
    int rc;
    if (msg->type == CRASH_MSG_STATS) {
        crash_stats_t st = stats(s);
        rc = shoal_reply_set(reply, CRASH_MSG_STATS, &st, sizeof st);
    } else if (fatal(s)) {
        rc = fail(ctx, s, msg);
        if (rc == SHOAL_OK) /* exit: the caller still hears why */
            shoal_reply_error(reply, SHOAL_EFAILED);
        return rc;
    } else {
        s->st.calls++;
        rc = shoal_reply_set(reply, msg->type, NULL, 0);
    }
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc); /* out of memory: tell the caller, live on */
    return 0;
}

/* Never fatal, like the stats call. */
static int crash_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    crash_stats_t st = stats(state);
    shoal_inspect_uint(out, "messages", st.messages);
    shoal_inspect_uint(out, "calls", st.calls);
    shoal_inspect_uint(out, "every", st.every);
    shoal_inspect_uint(out, "until_crash", st.until_crash);
    return 0;
}

static void crash_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    crash_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG, "crash ends (%s): %" PRIu64 " messages, %" PRIu64 " calls",
              shoal_errname(reason), s->st.messages, s->st.calls);
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t crash_args[] = {
    {.key = "every",
     .type = SHOAL_ARG_INT,
     .min = 1,
     .max = INT64_MAX,
     .def = "10",
     .doc = "fail on every k-th message or call (stats calls excepted)"},
    {.key = "mode",
     .type = SHOAL_ARG_ENUM,
     .choices = modes,
     .def = "panic",
     .doc = "how it fails: shoal_panic, return SHOAL_EFAILED, or shoal_exit"},
    {.key = NULL},
};

static const shoal_behaviour_t crash = {
    .name = "crash",
    .state_size = sizeof(crash_t),
    .init = crash_init,
    .handle_message = crash_message,
    .handle_call = crash_call,
    .terminate = crash_terminate,
    .inspect = crash_inspect,
    .args = crash_args,
};

SHOAL_PLUGIN(.name = "crash", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&crash));
