/* w5.h - what W5's files share: the job, the run's configuration that
 * its actors read, a worker's report, the clock the latencies are read
 * from, and the three behaviours. w5.c sets up and reports the run,
 * w5_worker.c holds the worker (the job's work) and the collector,
 * w5_producer.c the producer, w5_hist.c the latency histogram.
 */
#ifndef SHOAL_BENCH_W5_H
#define SHOAL_BENCH_W5_H

#include <stdint.h>
#include <time.h>

#include "bench.h"
#include "w5_hist.h"

#define W5_CAP 100u    /* jobs per worker (the spec's bound) */
#define W5_PREFETCH 1u /* pull: jobs a worker holds */

enum { W5_PULL, W5_FORWARD, W5_DIRECT };

/* ---- the job and its latency -------------------------------------------- */

typedef struct w5_job_s {
    uint64_t v;
    int64_t sent; /* ns, CLOCK_MONOTONIC */
} w5_job_t;

static inline int64_t w5_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- configuration, shared by the actors ---------------------------------- */

typedef struct w5_cfg_s {
    uint64_t n, rate;
    unsigned w, chunk;
    int mode;   /* W5_PULL, W5_FORWARD, W5_DIRECT */
    int64_t t0; /* ns: job i is due at t0 + i/rate */
    shoal_pid_t collector;
    shoal_pid_t pool;     /* pooled */
    shoal_pid_t *workers; /* direct */
    uint64_t buffer;      /* pull: as the pool reports it */
    uint32_t prefetch;
    bench_t *b;
    w5_hist_t merged; /* the collector's; read by main after b->done */
    /* The producer's counters, written before its last sends (so the
     * collector's post publishes them to main). */
    uint64_t retries, room_waits, ahead_yields, sleeps;
    int64_t max_lag;
} w5_cfg_t;

/* What a worker reports: its histogram is handed over (the collector frees). */
typedef struct w5_report_s {
    uint64_t count;
    uint64_t acc;
    w5_hist_t *hist;
} w5_report_t;

/* The run's actors; their args are the run's w5_cfg_t. */
extern const shoal_behaviour_t w5_collector_behaviour;
extern const shoal_behaviour_t w5_worker_behaviour;
extern const shoal_behaviour_t w5_producer_behaviour;

/* The W5 checksum for n jobs: the spec's table, else computed. */
uint32_t w5_expected_check(uint64_t n);

#endif
