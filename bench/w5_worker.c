/* w5_worker.c - W5's worker and its collector. A worker does job i's work
 * (w5_work: xs50(i), chained for every 1000th job), records its latency in
 * its own histogram and hands that to the collector in its report: on
 * MSG_DONE (direct), or from terminate when its drained pool ends it. The
 * collector sums, XORs and merges the reports and posts the main thread.
 * Also the checksum the workers must produce (w5_expected_check).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "w5.h"

#define W5_LONG_EVERY 1000u /* every 1000th job is long ... */
#define W5_LONG_COST 1000u  /* ... 1000 xs50 calls instead of one */

/* Job i's work: xs50(i), chained 999 more times for every 1000th job. */
static uint32_t w5_work(uint64_t i)
{
    uint32_t s = xs50(i);
    unsigned r = i % W5_LONG_EVERY == 0 ? W5_LONG_COST : 1;
    for (unsigned k = 1; k < r; k++)
        s = xs50(s);
    return s;
}

uint32_t w5_expected_check(uint64_t n)
{
    if (n == 200000)
        return 1024201162u;
    if (n == 2000000)
        return 2826556261u;
    uint32_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc ^= w5_work(i);
    return acc;
}

/* ---- the collector ------------------------------------------------------ */

typedef struct w5_collector_s {
    w5_cfg_t *cfg;
    uint64_t reports, count, acc;
} w5_collector_t;

static int collector_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((w5_collector_t *)state)->cfg = (w5_cfg_t *)args;
    return 0;
}

static int collector_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w5_collector_t *c = state;
    if (msg->type != MSG_REPORT || msg->size != sizeof(w5_report_t))
        return 0;
    w5_report_t r;
    memcpy(&r, msg->data, sizeof r);
    c->count += r.count;
    c->acc ^= r.acc;
    w5_hist_merge(&c->cfg->merged, r.hist);
    free(r.hist);
    if (++c->reports == c->cfg->w) {
        bench_t *b = c->cfg->b;
        b->reports = c->reports;
        b->count = c->count;
        b->acc = c->acc;
        sem_post(&b->done); /* publishes the fields above and cfg->merged */
        shoal_exit(ctx, 0);
    }
    return 0;
}

const shoal_behaviour_t w5_collector_behaviour = {
    .name = "w5.collector",
    .state_size = sizeof(w5_collector_t),
    .init = collector_init,
    .handle_message = collector_handle,
};

/* ---- the worker --------------------------------------------------------- */

typedef struct w5_worker_s {
    const w5_cfg_t *cfg;
    uint64_t count;
    uint32_t acc;
    w5_hist_t *hist; /* NULL once handed to the collector */
} w5_worker_t;

static int worker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    w5_worker_t *s = state;
    s->cfg = args;
    s->hist = calloc(1, sizeof *s->hist);
    return s->hist != NULL ? 0 : SHOAL_ENOMEM;
}

static void worker_report(shoal_ctx_t *ctx, w5_worker_t *s)
{
    w5_report_t r = {.count = s->count, .acc = s->acc, .hist = s->hist};
    int rc = shoal_send(ctx, s->cfg->collector, MSG_REPORT, &r, sizeof r);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "report: %s", shoal_strerror(rc));
    s->hist = NULL;
}

/* MSG_WORK: the job's work, then its latency. Direct: MSG_DONE (from the
 * one producer, behind all its jobs) reports and exits; pooled: the drained
 * pool ends the worker and worker_terminate reports. */
static int worker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w5_worker_t *s = state;
    if (msg->type == MSG_WORK && msg->size == sizeof(w5_job_t)) {
        w5_job_t j;
        memcpy(&j, msg->data, sizeof j);
        s->acc ^= w5_work(j.v);
        s->count++;
        w5_hist_record(s->hist, w5_now_ns() - j.sent);
    } else if (msg->type == MSG_DONE && s->cfg->mode == W5_DIRECT) {
        worker_report(ctx, s);
        shoal_exit(ctx, 0);
    }
    return 0;
}

/* A pool's worker that ends with reason 0 has handled all it was given: that
 * is its report. Any other end reports nothing; the run then fails by
 * timeout. */
static void worker_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    w5_worker_t *s = state;
    if (s->cfg->mode != W5_DIRECT && s->hist != NULL) {
        if (reason == 0)
            worker_report(ctx, s);
        else
            fprintf(stderr, "shoal-bench: W5 pool worker ended with %s after %llu jobs\n",
                    shoal_strerror(reason), (unsigned long long)s->count);
    }
    free(s->hist);
}

const shoal_behaviour_t w5_worker_behaviour = {
    .name = "w5.worker",
    .state_size = sizeof(w5_worker_t),
    .init = worker_init,
    .handle_message = worker_handle,
    .terminate = worker_terminate,
};
