/* loadgen.c - loadgen.loadgen: a source that sends work to a named target.
 *
 * args:
 *   target   string, required: a name the host registered (a pool's name);
 *            looked up at init and again on every tick, so a re-registered
 *            name is followed
 *   group    bool, default false: target names a group of checkout pools;
 *            every attempt is a call, a transaction on a member of one of
 *            them (shoal_checkout_call_group: the pool a group take would
 *            pick, else it waits at a random one)
 *   rate     integer 0 .. 1000000000, default 1000: messages per second;
 *            0 = as fast as the target accepts
 *   size     size 0 .. 16MiB, default 8B: payload bytes; the first 8 carry
 *            the sequence number (loadgen.h)
 *   type     integer 0 .. 0xFFFFFFFF, default 1: the messages' type id
 *   count    integer >= 0, default 0 (no end): stop after this many accepted
 *   done     idle or exit, default idle: when count is reached and every
 *            call settled, stay (and answer stats) or end normally
 *   tick     duration 1ms .. 1m, default 10ms: the rate mode's period, and
 *            how long to wait before trying an unknown target again
 *   call     bool, default false: send calls instead of messages
 *   timeout  duration, default 1s: calls only; 0 = no timeout
 *   window   integer 0 .. 1073741824, default 1024: calls only; calls in
 *            flight at most (0 = no limit)
 *
 * Rate mode (rate > 0). A timer tick every `tick` adds rate x (time since
 * the last tick) messages to what is owed, carrying the fraction; a late
 * tick adds for at most 10 ticks. Each owed message is one attempt,
 * accepted or refused (and counted either way); a turn makes at most 256
 * attempts and continues in a new turn (a message to itself) when more are
 * owed. Owed messages beyond 10 ticks' worth are dropped as `behind`; in
 * call mode, those owed while `window` calls are in flight as `throttled`.
 *
 * As-fast mode (rate = 0). A turn sends until the first refusal or 256
 * accepted, then queues the next turn as a message to itself: one handler
 * never spins, and other actors on the thread get their turns. After
 * SHOAL_EBUSY it asks the target for SHOAL_MSG_ROOM (shoal_notify_room)
 * and sends nothing until that comes (counted as room_waits); a target that
 * cannot tell gets the next turn at once (counted as retries), one whose
 * max_waiting senders wait already (SHOAL_EOVERLOAD) a tick later. A call
 * window that is full pauses it until a reply or timeout comes. A target
 * that is not registered or gone (SHOAL_ENOPROC), or any other error,
 * waits a tick before the next try.
 *
 * The timer ticks (rate mode's period, and the wait before trying an
 * unknown target again) come through shoal_send_after_priority: they travel
 * in the system mailbox, are never refused as full and are seen with
 * SHOAL_MSG_PRIORITY. The turns that continue at once are ordinary messages
 * to itself, queued behind other work (private type LOADGEN_TURN for both);
 * replies come through the system mailbox. Only a LOADGEN_TURN from itself
 * is a tick or a turn. A bounded mailbox is fine: a turn refused as full is
 * taken over by a tick.
 *
 * inspect reports what the stats call answers, field by field.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shoal/args.h>
#include <shoal/checkout.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include "loadgen.h"

/* Private: the generator's own ticks and turns. Only from itself. */
#define LOADGEN_TURN 0xFFFF0002u
enum { TURN_TIMER = 1, TURN_NOW = 2 };

#define BATCH 256
#define MAX_SIZE (UINT64_C(16) << 20)
#define MAX_TICK_MS 60000
#define CATCH_UP_TICKS 10

static const char *const dones[] = {"idle", "exit", NULL};

typedef struct loadgen_s {
    /* args */
    const char *target; /* points into the args tree */
    bool group;         /* target is a group of checkout pools: transactions */
    uint64_t rate, size, count, tick_ms, timeout_ms, window;
    uint32_t type;
    bool call, exit_when_done;
    /* running */
    shoal_pid_t to;
    unsigned char *buf;
    uint64_t last_ns;  /* rate mode: when the owed count was last topped up */
    uint64_t frac;     /* rate mode: carried fraction of a message, x 1e9 */
    uint64_t owed;     /* rate mode: attempts due and not made yet */
    uint64_t owed_max; /* rate mode: 10 ticks' worth */
    bool turn_pending; /* a TURN_NOW is on its way */
    bool room_wait;    /* as-fast mode: waiting for SHOAL_MSG_ROOM from the target */
    bool finished;
    bool lost; /* the target was not found: said once, until it is again */
    loadgen_stats_t st;
} loadgen_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool sending_done(const loadgen_t *s) { return s->count != 0 && s->st.sent >= s->count; }

static bool window_full(const loadgen_t *s)
{
    return s->call && s->window != 0 && s->st.in_flight >= s->window;
}

/* Sends a turn of `kind` to itself: at once through the ordinary mailbox
 * (delay_ms 0), or after delay_ms through the timer into the system mailbox. */
static int schedule(shoal_ctx_t *ctx, uint32_t kind, uint64_t delay_ms)
{
    int rc = delay_ms == 0 ? shoal_send(ctx, shoal_self(ctx), LOADGEN_TURN, &kind, sizeof kind)
                           : shoal_send_after_priority(ctx, shoal_self(ctx), delay_ms, LOADGEN_TURN,
                                                       &kind, sizeof kind, NULL);
    if (rc != SHOAL_OK && !(delay_ms == 0 && rc == SHOAL_EFULL))
        shoal_log(ctx, SHOAL_LOG_WARN, "cannot schedule the next turn: %s", shoal_strerror(rc));
    return rc;
}

/* Queues one TURN_NOW unless one is on its way; after delay_ms. When our own
 * mailbox is too full for a turn at once, a tick brings it instead. */
static int turn_soon(shoal_ctx_t *ctx, loadgen_t *s, uint64_t delay_ms)
{
    if (s->turn_pending)
        return SHOAL_OK;
    int rc = schedule(ctx, TURN_NOW, delay_ms);
    if (rc == SHOAL_EFULL)
        rc = schedule(ctx, TURN_NOW, s->tick_ms);
    s->turn_pending = rc == SHOAL_OK;
    return rc;
}

/* One send or call to the target; counts the result and returns it. */
static int attempt(shoal_ctx_t *ctx, loadgen_t *s)
{
    int rc = SHOAL_ENOPROC;
    if (s->group || s->to != SHOAL_PID_NONE) {
        uint64_t seq = s->st.sent;
        memcpy(s->buf, &seq, s->size < sizeof seq ? s->size : sizeof seq);
        uint64_t tmo = s->timeout_ms ? s->timeout_ms : UINT64_MAX;
        shoal_ref_t ref;
        if (s->group)
            rc = shoal_checkout_call_group(ctx, s->target, s->type, s->buf, s->size, tmo, &ref);
        else if (s->call)
            rc = shoal_call(ctx, s->to, s->type, s->buf, s->size, tmo, &ref);
        else
            rc = shoal_send(ctx, s->to, s->type, s->buf, s->size);
        s->st.in_flight += s->call && rc == SHOAL_OK; /* group implies call */
    }
    /* A target that names nothing (a typo, or gone) is said once, and
     * when it is found again: never a silent source that sends nothing. */
    if (rc == SHOAL_ENOPROC && !s->lost) {
        s->lost = true;
        if (s->group)
            shoal_log(ctx, SHOAL_LOG_WARN,
                      "group '%s': no checkout pool has that group (or none is left): nothing is "
                      "sent; tried again every %" PRIu64 " ms",
                      s->target, s->tick_ms);
        else
            shoal_log(ctx, SHOAL_LOG_WARN,
                      "target '%s': no pool or actor is registered under that name (or it is "
                      "gone): nothing is sent; looked up again every %" PRIu64 " ms",
                      s->target, s->tick_ms);
    } else if (rc != SHOAL_ENOPROC && s->lost) {
        s->lost = false;
        shoal_log(ctx, SHOAL_LOG_INFO, "%s '%s' found: sending again",
                  s->group ? "group" : "target", s->target);
    }
    switch (rc) {
    case SHOAL_OK:
        s->st.sent++;
        break;
    case SHOAL_EFULL:
        s->st.refused_full++;
        break;
    case SHOAL_EBUSY:
        s->st.refused_busy++;
        break;
    case SHOAL_ENOPROC:
        s->st.noproc++;
        break;
    default:
        s->st.send_errors++;
        break;
    }
    return rc;
}

/* Once count is reached and every call settled: say so, and end or idle. */
static void maybe_finish(shoal_ctx_t *ctx, loadgen_t *s)
{
    if (s->finished || !sending_done(s) || s->st.in_flight != 0)
        return;
    s->finished = true;
    s->st.done = 1;
    /* Every outcome: a send refused otherwise (send_errors: e.g. a checkout
     * pool's SHOAL_ENOMEMBERS), a call answered with an error. */
    shoal_log(ctx, SHOAL_LOG_INFO,
              "done: %" PRIu64 " sent, %" PRIu64 " full, %" PRIu64 " busy, %" PRIu64
              " noproc, %" PRIu64 " send errors, %" PRIu64 " replies, %" PRIu64
              " reply errors, %" PRIu64 " timeouts",
              s->st.sent, s->st.refused_full, s->st.refused_busy, s->st.noproc, s->st.send_errors,
              s->st.replies, s->st.reply_errors, s->st.timeouts);
    if (s->exit_when_done)
        shoal_exit(ctx, SHOAL_OK);
}

/* Rate mode: makes up to BATCH of the owed attempts. */
static void run_owed(shoal_ctx_t *ctx, loadgen_t *s)
{
    for (unsigned i = 0; i < BATCH && s->owed != 0 && !sending_done(s); i++) {
        if (window_full(s)) {
            s->st.throttled += s->owed;
            s->owed = 0;
            break;
        }
        attempt(ctx, s);
        s->owed--;
    }
    if (s->owed != 0 && !sending_done(s))
        turn_soon(ctx, s, 0);
}

/* Rate mode: the timer tick. */
static void rate_tick(shoal_ctx_t *ctx, loadgen_t *s)
{
    if (!s->group)
        s->to = shoal_whereis(ctx, s->target);
    uint64_t now = now_ns();
    uint64_t elapsed = now - s->last_ns;
    if (elapsed > CATCH_UP_TICKS * s->tick_ms * 1000000u)
        elapsed = CATCH_UP_TICKS * s->tick_ms * 1000000u;
    s->last_ns = now;
    /* rate x elapsed / 1e9, in two steps that cannot overflow: rate <= 1e9,
     * elapsed <= 600 s. */
    uint64_t part = s->rate * (elapsed % 1000000000u) + s->frac;
    s->owed += s->rate * (elapsed / 1000000000u) + part / 1000000000u;
    s->frac = part % 1000000000u;
    if (s->owed > s->owed_max) {
        s->st.behind += s->owed - s->owed_max;
        s->owed = s->owed_max;
    }
    run_owed(ctx, s);
    if (!sending_done(s))
        schedule(ctx, TURN_TIMER, s->tick_ms);
}

/* As-fast mode: one turn. */
static void fast_turn(shoal_ctx_t *ctx, loadgen_t *s)
{
    if (!s->group)
        s->to = shoal_whereis(ctx, s->target);
    int rc = SHOAL_OK;
    for (unsigned i = 0; i < BATCH && !sending_done(s) && !window_full(s); i++)
        if ((rc = attempt(ctx, s)) != SHOAL_OK)
            break;
    if (sending_done(s) || window_full(s))
        return; /* finished, or a reply will start the next turn */
    int asked = rc == SHOAL_EBUSY ? shoal_notify_room(ctx, s->to) : SHOAL_ENOTSUP;
    if (asked == SHOAL_OK) {
        s->st.room_waits++;
        s->room_wait = true; /* SHOAL_MSG_ROOM brings the next turn */
        return;
    }
    if (rc == SHOAL_EFULL || rc == SHOAL_EBUSY)
        s->st.retries++;
    if (asked == SHOAL_EOVERLOAD) /* too many wait for it already: not at once */
        turn_soon(ctx, s, s->tick_ms);
    else if (rc == SHOAL_OK || rc == SHOAL_EFULL || rc == SHOAL_EBUSY)
        turn_soon(ctx, s, 0);
    else
        turn_soon(ctx, s, s->tick_ms); /* no target, or worse: wait a tick */
}

/* Reports a value of key outside `range`, as the SDK's getters do. */
static int out_of_range(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                        const char *range)
{
    const char *text = "?";
    (void)shoal_arg_string(NULL, args, key, SHOAL_ARG_OPTIONAL, &text);
    return shoal_arg_error(ctx, args, key, "%s is out of range: expected %s", text, range);
}

static int loadgen_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    loadgen_t *s = state;
    int64_t rate = 1000, type = 1, count = 0, window = 1024;
    unsigned done = 0;
    int rc;
    s->size = 8;
    s->tick_ms = 10;
    s->timeout_ms = 1000;
    if ((rc = shoal_arg_string(ctx, args, "target", 0, &s->target)) ||
        (rc = shoal_arg_bool(ctx, args, "group", SHOAL_ARG_OPTIONAL, &s->group)) ||
        (rc = shoal_arg_int(ctx, args, "rate", SHOAL_ARG_OPTIONAL, 0, 1000000000, &rate)) ||
        (rc = shoal_arg_size(ctx, args, "size", SHOAL_ARG_OPTIONAL, &s->size)) ||
        (rc = shoal_arg_int(ctx, args, "type", SHOAL_ARG_OPTIONAL, 0, UINT32_MAX, &type)) ||
        (rc = shoal_arg_int(ctx, args, "count", SHOAL_ARG_OPTIONAL, 0, INT64_MAX, &count)) ||
        (rc = shoal_arg_enum(ctx, args, "done", SHOAL_ARG_OPTIONAL, dones, &done)) ||
        (rc = shoal_arg_duration_ms(ctx, args, "tick", SHOAL_ARG_OPTIONAL, &s->tick_ms)) ||
        (rc = shoal_arg_bool(ctx, args, "call", SHOAL_ARG_OPTIONAL, &s->call)) ||
        (rc = shoal_arg_duration_ms(ctx, args, "timeout", SHOAL_ARG_OPTIONAL, &s->timeout_ms)) ||
        (rc = shoal_arg_int(ctx, args, "window", SHOAL_ARG_OPTIONAL, 0, 1 << 30, &window)))
        return rc;
    s->call = s->call || s->group; /* a transaction is a call */
    /* The getters have no range for sizes and durations: */
    if (s->size > MAX_SIZE)
        return out_of_range(ctx, args, "size", "0 to 16MiB");
    if (s->tick_ms == 0 || s->tick_ms > MAX_TICK_MS)
        return out_of_range(ctx, args, "tick", "1ms to 1m");
    s->rate = (uint64_t)rate;
    s->type = (uint32_t)type;
    s->count = (uint64_t)count;
    s->window = (uint64_t)window;
    s->exit_when_done = done == 1;
    s->owed_max = s->rate * s->tick_ms * CATCH_UP_TICKS / 1000;
    if (s->owed_max < BATCH)
        s->owed_max = BATCH;
    if ((s->buf = calloc(1, s->size ? s->size : 1)) == NULL)
        return SHOAL_ENOMEM;
    s->to = s->group ? SHOAL_PID_NONE : shoal_whereis(ctx, s->target);
    s->last_ns = now_ns();
    rc = s->rate != 0 ? schedule(ctx, TURN_TIMER, s->tick_ms) : turn_soon(ctx, s, 0);
    if (rc != SHOAL_OK) {
        free(s->buf); /* terminate does not run after a failed init */
        s->buf = NULL;
    }
    return rc;
}

static int loadgen_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    loadgen_t *s = state;
    switch (msg->kind) {
    case SHOAL_MSG_CAST: {
        uint32_t kind;
        if (msg->type != LOADGEN_TURN || msg->from != shoal_self(ctx) || msg->size != sizeof kind)
            return 0; /* not ours: ignored */
        memcpy(&kind, msg->data, sizeof kind);
        if (kind == TURN_TIMER) {
            rate_tick(ctx, s);
        } else {
            s->turn_pending = false;
            if (s->rate != 0)
                run_owed(ctx, s);
            else
                fast_turn(ctx, s);
        }
        break;
    }
    case SHOAL_MSG_REPLY:
    case SHOAL_MSG_TIMEOUT:
        s->st.in_flight--;
        if (msg->kind == SHOAL_MSG_TIMEOUT)
            s->st.timeouts++;
        else if (msg->status != SHOAL_OK)
            s->st.reply_errors++;
        else
            s->st.replies++;
        if (s->rate == 0 && !sending_done(s) && !s->room_wait)
            turn_soon(ctx, s, 0); /* the window has room again */
        break;
    case SHOAL_MSG_ROOM:
        if (!s->room_wait)
            return 0;
        s->room_wait = false;
        if (!sending_done(s))
            turn_soon(ctx, s, 0);
        break;
    default:
        return 0;
    }
    maybe_finish(ctx, s);
    return 0;
}

static int loadgen_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)msg; /* every call is a stats call: loadgen takes no other requests */
    loadgen_t *s = state;
    int rc = shoal_reply_set(reply, LOADGEN_MSG_STATS, &s->st, sizeof s->st);
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc);
    return 0;
}

static int loadgen_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    const loadgen_stats_t *st = &((const loadgen_t *)state)->st;
    shoal_inspect_uint(out, "sent", st->sent);
    shoal_inspect_uint(out, "refused_full", st->refused_full);
    shoal_inspect_uint(out, "refused_busy", st->refused_busy);
    shoal_inspect_uint(out, "noproc", st->noproc);
    shoal_inspect_uint(out, "send_errors", st->send_errors);
    shoal_inspect_uint(out, "replies", st->replies);
    shoal_inspect_uint(out, "reply_errors", st->reply_errors);
    shoal_inspect_uint(out, "timeouts", st->timeouts);
    shoal_inspect_uint(out, "in_flight", st->in_flight);
    shoal_inspect_uint(out, "throttled", st->throttled);
    shoal_inspect_uint(out, "behind", st->behind);
    shoal_inspect_uint(out, "done", st->done);
    shoal_inspect_uint(out, "room_waits", st->room_waits);
    shoal_inspect_uint(out, "retries", st->retries);
    return 0;
}

static void loadgen_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    loadgen_t *s = state;
    free(s->buf);
    s->buf = NULL;
    shoal_log(ctx, SHOAL_LOG_DEBUG,
              "loadgen ends (%s): %" PRIu64 " sent, %" PRIu64 " full, %" PRIu64 " busy, %" PRIu64
              " noproc, %" PRIu64 " replies, %" PRIu64 " timeouts",
              shoal_errname(reason), s->st.sent, s->st.refused_full, s->st.refused_busy,
              s->st.noproc, s->st.replies, s->st.timeouts);
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t loadgen_args[] = {
    {.key = "target",
     .type = SHOAL_ARG_STRING,
     .flags = SHOAL_ARG_REQUIRED,
     .doc = "the registered name (a pool's) to send to, looked up on every tick"},
    {.key = "rate",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = 1000000000,
     .def = "1000",
     .doc = "messages per second; 0 = as fast as the target accepts"},
    {.key = "size",
     .type = SHOAL_ARG_SIZE,
     .min = 0,
     .max = (int64_t)MAX_SIZE,
     .def = "8B",
     .doc = "payload bytes; the first 8 carry the sequence number"},
    {.key = "type",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = UINT32_MAX,
     .def = "1",
     .doc = "the messages' type id"},
    {.key = "count",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = INT64_MAX,
     .def = "0",
     .doc = "stop after this many accepted; 0 = no end"},
    {.key = "done",
     .type = SHOAL_ARG_ENUM,
     .choices = dones,
     .def = "idle",
     .doc = "once count is reached and every call settled: stay, or end normally"},
    {.key = "tick",
     .type = SHOAL_ARG_DURATION,
     .min = 1,
     .max = MAX_TICK_MS,
     .def = "10ms",
     .doc = "the rate mode's period, and the wait before retrying an unknown target"},
    {.key = "call",
     .type = SHOAL_ARG_BOOL,
     .def = "false",
     .doc = "send calls instead of messages"},
    {.key = "timeout",
     .type = SHOAL_ARG_DURATION,
     .def = "1s",
     .doc = "calls only: the per-call timeout; 0 = none"},
    {.key = "window",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = 1 << 30,
     .def = "1024",
     .doc = "calls only: calls in flight at most; 0 = no limit"},
    {.key = "group",
     .type = SHOAL_ARG_BOOL,
     .def = "false",
     .doc = "target is a group of checkout pools: every attempt is a transaction (a call) on a "
            "member of one"},
    {.key = NULL},
};

static const shoal_behaviour_t loadgen = {
    .name = "loadgen",
    .state_size = sizeof(loadgen_t),
    .init = loadgen_init,
    .handle_message = loadgen_message,
    .handle_call = loadgen_call,
    .terminate = loadgen_terminate,
    .inspect = loadgen_inspect,
    .args = loadgen_args,
};

SHOAL_PLUGIN(.name = "loadgen", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&loadgen));
