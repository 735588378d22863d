/* worker.c - the worker of W1 and W4 (xs50 per MSG_WORK; its report of
 * (count, acc) to the collector), spawned alone or as a pool of them
 * (bench_spawn_worker_pool; SHOAL_BENCH_POOL=pull: a pull pool), the modes
 * that choose between them (bench_direct, bench_pull), and the checksum the
 * workers must produce (bench_expected_check).
 */
#include "bench.h"

#include "shoal/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t bench_expected_check(uint64_t n)
{
    switch (n) {
    case 200000:
        return 4157333466u;
    case 1000000:
        return 3111071181u;
    case 2000000:
        return 3697708317u;
    case 10000000:
        return 1546984362u;
    default:
        break;
    }
    uint32_t acc = 0;
    for (uint64_t v = 0; v < n; v++)
        acc ^= xs50(v);
    return acc;
}

/* ---- the worker (W1, W4) ------------------------------------------------ */

typedef struct worker_s {
    uint64_t count;
    uint32_t acc;
    unsigned dones; /* MSG_DONEs heard */
    const bench_worker_args_t *args;
} worker_t;

static void worker_report(shoal_ctx_t *ctx, const worker_t *s)
{
    bench_report_t r = {.count = s->count, .acc = s->acc, .dropped = 0};
    int rc = shoal_send(ctx, s->args->collector, MSG_REPORT, &r, sizeof r);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "report: %s", shoal_strerror(rc));
}

static int worker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((worker_t *)state)->args = args;
    return 0;
}

/* MSG_WORK: process (xs50, count, acc). Direct: after args->dones
 * MSG_DONEs, report (count, acc) to the collector and exit. Pooled: no
 * MSG_DONE comes; worker_terminate reports. */
static int worker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    worker_t *s = state;
    if (msg->type == MSG_WORK) {
        uint64_t v;
        memcpy(&v, msg->data, sizeof v);
        s->count++;
        s->acc ^= xs50(v);
    } else if (msg->type == MSG_DONE && !s->args->pooled && ++s->dones == s->args->dones) {
        worker_report(ctx, s);
        shoal_exit(ctx, 0);
    }
    return 0;
}

/* A pool's worker ends with reason 0 when the drained pool retired it and it
 * has handled everything queued for it: that is its report. Any other end
 * (it failed, the runtime stopped) reports nothing, so the collector never
 * completes and the run fails by timeout. */
static void worker_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    worker_t *s = state;
    if (!s->args->pooled)
        return;
    if (reason == 0)
        worker_report(ctx, s);
    else
        fprintf(stderr, "shoal-bench: pool worker ended with %s after %llu messages\n",
                shoal_strerror(reason), (unsigned long long)s->count);
}

static const shoal_behaviour_t worker_behaviour = {
    .name = "bench.worker",
    .state_size = sizeof(worker_t),
    .init = worker_init,
    .handle_message = worker_handle,
    .terminate = worker_terminate,
};

int bench_spawn_worker(bench_t *b, const bench_worker_args_t *args, uint32_t mailbox_limit,
                       shoal_pid_t *pid)
{
    shoal_spawn_opts_t o = {.mailbox_limit = mailbox_limit};
    return shoal_runtime_spawn(b->rt, &worker_behaviour, args, &o, pid);
}

int bench_spawn_worker_pool(bench_t *b, const char *name, const bench_worker_args_t *args,
                            uint32_t size, uint32_t mailbox, shoal_pid_t *pid)
{
    shoal_pool_spec_t spec;
    shoal_pool_spec_init(&spec);
    spec.name = name;
    spec.worker = &worker_behaviour;
    spec.worker_args = args;
    spec.size = size;
    spec.min_size = 1;
    spec.max_size = size > 1024 ? size : 1024;
    spec.mailbox = mailbox;
    if (bench_pull()) { /* the same capacity, in one buffer */
        spec.kind = SHOAL_POOL_KIND_PULL;
        spec.prefetch = 1;
        spec.buffer = mailbox == SHOAL_MAILBOX_UNBOUNDED                 ? SHOAL_POOL_MAX_BUFFER
                      : (uint64_t)size * mailbox > SHOAL_POOL_MAX_BUFFER ? SHOAL_POOL_MAX_BUFFER
                                                                         : size * mailbox;
    }
    return shoal_runtime_spawn_pool(b->rt, &spec, pid);
}

int bench_pull(void)
{
    const char *k = getenv("SHOAL_BENCH_POOL");
    return k != NULL && strcmp(k, "pull") == 0;
}

int bench_direct(void) { return bench_env_ulong("SHOAL_BENCH_DIRECT", 0) != 0; }
