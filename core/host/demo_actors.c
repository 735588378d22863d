/* demo_actors.c - shoal-demo's actors (demo.c draws their topology): the
 * api pool's workers and the flaky ones that panic, the sink that counts
 * their results, and the source that offers WORK at the rate. Each keeps
 * its counters in the demo_t (demo.h).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include <shoal/shoal.h>

#include "host/demo.h"

#define TICK_MS 1

/* MSG_WORK's payload. */
typedef struct work_s {
    uint64_t seq;
    uint32_t cost;
} work_t;

static void bump(_Atomic uint64_t *c) { atomic_fetch_add_explicit(c, 1, memory_order_relaxed); }

/* ---- worker and flaky ---------------------------------------------------- */

typedef struct worker_s {
    demo_t *demo;
    shoal_pid_t sink;
    uint64_t seen; /* messages this incarnation handled */
} worker_t;

static int worker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    worker_t *w = state;
    const worker_args_t *a = args;
    w->demo = a->demo;
    w->sink = a->sink;
    return 0;
}

/* A little CPU per message, so that the mailboxes have something to hold. */
static uint64_t burn(uint64_t x, uint32_t cost)
{
    for (uint32_t i = 0; i < cost; i++) {
        x ^= x >> 33;
        x *= UINT64_C(0xff51afd7ed558ccd);
    }
    return x;
}

static int do_work(shoal_ctx_t *ctx, worker_t *w, const shoal_msg_t *msg)
{
    work_t job;
    if (msg->size != sizeof job)
        return SHOAL_EINVAL;
    memcpy(&job, msg->data, sizeof job);
    uint64_t r = burn(job.seq + 1, job.cost);
    /* The sink's mailbox is unbounded: this send is not refused. */
    int rc = shoal_send(ctx, w->sink, MSG_RESULT, &r, sizeof r);
    if (rc != SHOAL_OK)
        return rc;
    bump(&w->demo->handled);
    return 0;
}

static int worker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    worker_t *w = state;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != MSG_WORK)
        return 0;
    w->seen++;
    return do_work(ctx, w, msg);
}

static int flaky_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    worker_t *w = state;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != MSG_WORK)
        return 0;
    if (++w->seen % w->demo->panic_every == 0) {
        bump(&w->demo->lost);
        shoal_panic(ctx, "message %" PRIu64 " of this incarnation: giving up", w->seen);
    }
    return do_work(ctx, w, msg);
}

const shoal_behaviour_t shoal__demo_worker = {
    .name = "worker",
    .state_size = sizeof(worker_t),
    .init = worker_init,
    .handle_message = worker_handle,
};

const shoal_behaviour_t shoal__demo_flaky = {
    .name = "flaky",
    .state_size = sizeof(worker_t),
    .init = worker_init,
    .handle_message = flaky_handle,
};

/* ---- sink ------------------------------------------------------------------ */

typedef struct sink_s {
    demo_t *demo;
    sink_count_t count;
} sink_t;

static int sink_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((sink_t *)state)->demo = (demo_t *)args;
    return 0;
}

static int sink_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    sink_t *s = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == MSG_RESULT && msg->size == sizeof(uint64_t)) {
        uint64_t r;
        memcpy(&r, msg->data, sizeof r);
        s->count.received++;
        s->count.checksum ^= r;
        bump(&s->demo->sunk);
    }
    return 0;
}

static int sink_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    sink_t *s = state;
    if (msg->type != MSG_COUNT) {
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return 0;
    }
    return shoal_reply_set(reply, MSG_COUNT, &s->count, sizeof s->count);
}

const shoal_behaviour_t shoal__demo_sink = {
    .name = "sink",
    .state_size = sizeof(sink_t),
    .init = sink_init,
    .handle_message = sink_handle,
    .handle_call = sink_call,
};

/* ---- source ---------------------------------------------------------------- */

typedef struct source_s {
    demo_t *demo;
    shoal_pid_t api, flaky;
    double start;
    uint64_t offered;
    int stopped;
} source_t;

static int source_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    source_t *s = state;
    const source_args_t *a = args;
    s->demo = a->demo;
    s->api = a->api;
    s->flaky = a->flaky;
    s->start = shoal__demo_now_s();
    return shoal_send_after(ctx, shoal_self(ctx), TICK_MS, MSG_TICK, NULL, 0, NULL);
}

/* How many messages the source should have offered `t` seconds in: `rate`
 * per second, times `surge` during one second. */
static uint64_t due_at(const demo_t *d, double t)
{
    double in_surge = t < d->surge_at ? 0 : t > d->surge_at + 1 ? 1 : t - d->surge_at;
    return (uint64_t)((t + (double)(d->surge - 1) * in_surge) * (double)d->rate);
}

/* Sends what the rate asks for since the start, at most 20 ms worth (of the
 * surge rate) at once: a source that fell behind does not flood to catch up.
 * One message in FLAKY_SHARE goes to the flaky pool. */
static void source_tick(shoal_ctx_t *ctx, source_t *s)
{
    demo_t *d = s->demo;
    uint64_t due = due_at(d, shoal__demo_now_s() - s->start);
    uint64_t cap = d->rate * d->surge / 50 + 1;
    if (due > s->offered + cap)
        due = s->offered + cap;
    while (s->offered < due) {
        work_t job = {.seq = s->offered, .cost = d->cost};
        shoal_pid_t to = s->offered % FLAKY_SHARE == FLAKY_SHARE - 1 ? s->flaky : s->api;
        int rc = shoal_send(ctx, to, MSG_WORK, &job, sizeof job);
        s->offered++;
        bump(&d->offered);
        if (rc == SHOAL_OK)
            bump(&d->accepted);
        else if (rc == SHOAL_EBUSY)
            bump(&d->busy);
        else
            shoal_panic(ctx, "send: %s", shoal_strerror(rc));
    }
}

static int source_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    source_t *s = state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    switch (msg->type) {
    case MSG_TICK:
        if (s->stopped)
            return 0;
        source_tick(ctx, s);
        return shoal_send_after(ctx, shoal_self(ctx), TICK_MS, MSG_TICK, NULL, 0, NULL);
    case MSG_STOP:
        s->stopped = 1;
        /* release: main reads the source's counters after seeing this. */
        atomic_store_explicit(&s->demo->source_stopped, 1, memory_order_release);
        return 0;
    default:
        return 0;
    }
}

const shoal_behaviour_t shoal__demo_source = {
    .name = "source",
    .state_size = sizeof(source_t),
    .init = source_init,
    .handle_message = source_handle,
};
