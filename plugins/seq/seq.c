/* seq.c - seq.seq: a pull pool's source of the integers from .. to by step.
 *
 * args:
 *   from  integer, default 0: the first integer
 *   to    integer, required: the last one, if the steps land on it; never
 *         passed
 *   step  integer, not 0, default 1: negative counts down
 *   type  integer 0 .. 0xFFFFFFFF outside 0xFFFE0000 .. 0xFFFEFFFF (the
 *         runtime's), default SEQ_MSG_ITEM: the items' type id
 *
 * The protocol (shoal/pull.h, seq.h). A SHOAL_PULL_REQUEST(n) sends the
 * pool up to n integers, each an int64_t payload, with shoal_send to the
 * request's sender, then answers with one priority message: SHOAL_PULL_SENT
 * carrying the cursor (the next integer, an int64_t), or SHOAL_PULL_DONE
 * (no cursor) as soon as the last integer went out - in the same turn, so
 * the pool need not ask again to learn there is nothing more. An empty
 * range (from > to counting up, from < to counting down) answers the first
 * request with DONE. A request after DONE is answered with DONE again.
 *
 * No arithmetic wraps: the next integer is computed only when it is not
 * past `to` (distances are taken as uint64_t, which hold any int64_t gap),
 * so to = INT64_MAX or INT64_MIN ends exactly there.
 *
 * SHOAL_PULL_RESUME (sent by the pool to a source it started again) sets
 * the cursor: 8 bytes, one of the integers of the range. Anything else -
 * another size, a value off the range or between its steps - cannot have
 * come from this source with these args: the source fails (SHOAL_EINVAL)
 * with one error line saying what it got. So does a request whose payload
 * is not a uint32_t. A request from outside any actor has nobody to send
 * to: it is logged and ignored. Other messages are ignored.
 *
 * A refused item (should not happen: the pool set room aside for n) stops
 * the batch: SENT then carries the refused integer as the cursor, so it is
 * sent first next time; the first refusal is logged (a warning, once per
 * actor), every one is counted.
 *
 * Every call is a stats call (seq.h); inspect reports the same fields.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>
#include <shoal/pull.h>

#include "seq.h"

typedef struct seq_s {
    int64_t from, to, step;
    uint32_t type;
    bool exhausted;    /* every integer was sent: st.next means nothing */
    bool told_refused; /* the first refused item was logged */
    seq_stats_t st;    /* st.next is the cursor */
} seq_t;

/* |v| as uint64_t, INT64_MIN included. */
static uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v; }

/* Whether v lies between a and b inclusive, going the step's way from a;
 * then *gap = |v - a|, exact (any int64_t gap fits a uint64_t). */
static bool between(const seq_t *s, int64_t a, int64_t v, int64_t b, uint64_t *gap)
{
    if (s->step > 0 ? v < a || v > b : v > a || v < b)
        return false;
    *gap = s->step > 0 ? (uint64_t)v - (uint64_t)a : (uint64_t)a - (uint64_t)v;
    return true;
}

/* After st.next went out: the integer after it, or the end. */
static void advance(seq_t *s)
{
    uint64_t left = 0;
    (void)between(s, s->st.next, s->to, s->to, &left); /* next is never past `to` */
    if (left < magnitude(s->step))
        s->exhausted = true;
    else
        s->st.next += s->step; /* lands at most on `to`: no overflow */
}

/* Answers the request: SENT with the cursor, or DONE once exhausted. A
 * pool that is gone (ENOPROC) stops us anyway; any other failure ends the
 * source, so the pool starts it again and resumes from its last cursor. */
static int answer(shoal_ctx_t *ctx, seq_t *s, shoal_pid_t pool)
{
    int rc = s->exhausted
                 ? shoal_send_priority(ctx, pool, SHOAL_PULL_DONE, NULL, 0)
                 : shoal_send_priority(ctx, pool, SHOAL_PULL_SENT, &s->st.next, sizeof s->st.next);
    s->st.done = s->exhausted;
    if (rc == SHOAL_OK || rc == SHOAL_ENOPROC)
        return SHOAL_OK;
    shoal_log(ctx, SHOAL_LOG_ERROR, "cannot answer the pool's request: %s", shoal_strerror(rc));
    return rc;
}

static int request(shoal_ctx_t *ctx, seq_t *s, const shoal_msg_t *msg)
{
    uint32_t n;
    if (msg->size != sizeof n) {
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "a SHOAL_PULL_REQUEST of %zu bytes: expected 4 (a uint32_t count)", msg->size);
        return SHOAL_EINVAL;
    }
    if (msg->from == SHOAL_PID_NONE) {
        shoal_log(ctx, SHOAL_LOG_WARN,
                  "a SHOAL_PULL_REQUEST from outside any actor: no pool to send to, ignored");
        return SHOAL_OK;
    }
    memcpy(&n, msg->data, sizeof n);
    s->st.requests++;
    for (uint32_t i = 0; i < n && !s->exhausted; i++) {
        int rc = shoal_send(ctx, msg->from, s->type, &s->st.next, sizeof s->st.next);
        if (rc != SHOAL_OK) {
            s->st.refused++;
            if (rc == SHOAL_ENOPROC) { /* draining or ended: it asks for nothing more */
                shoal_log(ctx, SHOAL_LOG_INFO,
                          "the pool has closed (draining or ended): %" PRIu32 " of %" PRIu32
                          " sent, none from item %" PRId64 " on",
                          i, n, s->st.next);
            } else if (!s->told_refused) {
                shoal_log(ctx, SHOAL_LOG_WARN,
                          "the pool refused item %" PRId64 " (%s): %" PRIu32 " of %" PRIu32
                          " sent, the rest comes at the next request (said once)",
                          s->st.next, shoal_strerror(rc), i, n);
                s->told_refused = true;
            }
            break;
        }
        s->st.items++;
        advance(s);
    }
    return answer(ctx, s, msg->from);
}

static int resume(shoal_ctx_t *ctx, seq_t *s, const shoal_msg_t *msg)
{
    int64_t v;
    uint64_t gap;
    if (msg->size != sizeof v) {
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "cannot resume: a cursor of %zu bytes, expected 8 (an int64_t, seq.h)",
                  msg->size);
        return SHOAL_EINVAL;
    }
    memcpy(&v, msg->data, sizeof v);
    if (!between(s, s->from, v, s->to, &gap) || gap % magnitude(s->step) != 0) {
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "cannot resume at %" PRId64 ": not one of %" PRId64 " .. %" PRId64
                  " step %" PRId64,
                  v, s->from, s->to, s->step);
        return SHOAL_EINVAL;
    }
    s->st.next = v;
    s->st.done = 0;
    s->exhausted = false;
    s->st.resumes++;
    shoal_log(ctx, SHOAL_LOG_INFO, "resuming at %" PRId64, v);
    return SHOAL_OK;
}

static int seq_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    seq_t *s = state;
    int64_t type = SEQ_MSG_ITEM;
    uint64_t gap;
    int rc;
    s->step = 1;
    if ((rc = shoal_arg_int(ctx, args, "from", SHOAL_ARG_OPTIONAL, INT64_MIN, INT64_MAX,
                            &s->from)) ||
        (rc = shoal_arg_int(ctx, args, "to", 0, INT64_MIN, INT64_MAX, &s->to)) ||
        (rc = shoal_arg_int(ctx, args, "step", SHOAL_ARG_OPTIONAL, INT64_MIN, INT64_MAX,
                            &s->step)) ||
        (rc = shoal_arg_int(ctx, args, "type", SHOAL_ARG_OPTIONAL, 0, UINT32_MAX, &type)))
        return rc;
    if (s->step == 0)
        return shoal_arg_error(ctx, args, "step", "0 is out of range: expected a non-zero integer");
    if (type >= SHOAL_TYPE_RESERVED_FIRST && type <= SHOAL_TYPE_RESERVED_LAST)
        return shoal_arg_error(ctx, args, "type",
                               "0x%" PRIX64 " is the runtime's (0xFFFE0000 .. 0xFFFEFFFF are "
                               "reserved): pick another type id",
                               (uint64_t)type);
    s->type = (uint32_t)type;
    s->st.next = s->from;
    s->exhausted = !between(s, s->from, s->from, s->to, &gap); /* an empty range */
    return SHOAL_OK;
}

static int seq_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    switch (msg->type) {
    case SHOAL_PULL_REQUEST:
        return request(ctx, state, msg);
    case SHOAL_PULL_RESUME:
        return resume(ctx, state, msg);
    default:
        return 0; /* not the pool's: ignored */
    }
}

static int seq_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)msg; /* every call is a stats call */
    seq_t *s = state;
    int rc = shoal_reply_set(reply, SEQ_MSG_STATS, &s->st, sizeof s->st);
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc);
    return 0;
}

static int seq_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    const seq_stats_t *st = &((const seq_t *)state)->st;
    shoal_inspect_uint(out, "requests", st->requests);
    shoal_inspect_uint(out, "items", st->items);
    shoal_inspect_uint(out, "refused", st->refused);
    shoal_inspect_uint(out, "resumes", st->resumes);
    shoal_inspect_int(out, "next", st->next);
    shoal_inspect_uint(out, "done", st->done);
    return 0;
}

static void seq_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    seq_t *s = state;
    shoal_log(ctx, SHOAL_LOG_DEBUG,
              "seq ends (%s): %" PRIu64 " requests, %" PRIu64 " items, %" PRIu64 " refused, %s",
              shoal_errname(reason), s->st.requests, s->st.items, s->st.refused,
              s->exhausted ? "done" : "not done");
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t seq_args[] = {
    {.key = "from", .type = SHOAL_ARG_INT, .def = "0", .doc = "the first integer"},
    {.key = "to",
     .type = SHOAL_ARG_INT,
     .flags = SHOAL_ARG_REQUIRED,
     .doc = "the last integer (inclusive, if the steps land on it); never passed"},
    {.key = "step",
     .type = SHOAL_ARG_INT,
     .def = "1",
     .doc = "the distance between items, not 0; negative counts down"},
    {.key = "type",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = UINT32_MAX,
     .def = "0xFFFF0010",
     .doc = "the items' type id (not one of the runtime's 0xFFFE0000 .. 0xFFFEFFFF)"},
    {.key = NULL},
};

static const shoal_behaviour_t seq = {
    .name = "seq",
    .state_size = sizeof(seq_t),
    .init = seq_init,
    .handle_message = seq_message,
    .handle_call = seq_call,
    .terminate = seq_terminate,
    .inspect = seq_inspect,
    .args = seq_args,
};

SHOAL_PLUGIN(.name = "seq", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&seq));
