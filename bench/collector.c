/* collector.c - the collector (W1-W4, TASKS, ...): it expects a number of
 * MSG_REPORTs, sums their counts and drops, XORs their accs, and then posts
 * the main thread's semaphore (bench_t.done) and exits.
 */
#include "bench.h"

#include <string.h>

/* ---- the collector ------------------------------------------------------ */

typedef struct collector_s {
    bench_t *b;
    uint64_t expected;
    uint64_t reports, count, acc, dropped;
} collector_t;

typedef struct collector_args_s {
    bench_t *b;
    uint64_t expected;
} collector_args_t;

static int collector_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    collector_t *c = state;
    const collector_args_t *a = args;
    c->b = a->b;
    c->expected = a->expected;
    return 0;
}

static int collector_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    collector_t *c = state;
    if (msg->type != MSG_REPORT || msg->size != sizeof(bench_report_t))
        return 0;
    bench_report_t r;
    memcpy(&r, msg->data, sizeof r);
    c->count += r.count;
    c->acc ^= r.acc;
    c->dropped += r.dropped;
    if (++c->reports == c->expected) {
        bench_t *b = c->b;
        b->reports = c->reports;
        b->count = c->count;
        b->acc = c->acc;
        b->dropped = c->dropped;
        sem_post(&b->done); /* publishes the fields above to the waiter */
        shoal_exit(ctx, 0);
    }
    return 0;
}

static const shoal_behaviour_t collector_behaviour = {
    .name = "bench.collector",
    .state_size = sizeof(collector_t),
    .init = collector_init,
    .handle_message = collector_handle,
};

int bench_spawn_collector(bench_t *b, uint64_t expected, shoal_pid_t *pid)
{
    /* init runs later on a worker: the args must outlive this call. */
    static collector_args_t args;
    args.b = b;
    args.expected = expected;
    return shoal_runtime_spawn(b->rt, &collector_behaviour, &args, NULL, pid);
}
