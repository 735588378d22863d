/* tasks.c - shoal-bench TASKS N W: task-pool throughput (shoal/tasks.h).
 *
 * W1's work through the task-pool API, Go's pool shape: the main thread
 * submits N tasks, task i computing xs50(i), onto a task pool of W workers
 * (a pull pool, queue SHOAL_BENCH_TASKS_QUEUE, default 1024 = go-chan's W1
 * channel capacity); while the pool is full, shoal_tasks_submit sleeps
 * until there is room (send_wait: a waiter woken by SHOAL_MSG_ROOM, never
 * polling). Each dispatcher thread keeps its own (count, acc), as a Go
 * worker keeps its own, in a cache line of its own; shoal_tasks_release
 * (no new tasks, wait for every one) ends the timed interval, as W1's done
 * markers do. Verified: count == N and the W1 checksum.
 *
 *   t0  right before the first submit
 *   t1  when shoal_tasks_release has returned (every task has run)
 */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>

#include "bench.h"
#include "shoal/pool.h"
#include "shoal/tasks.h"

/* One accumulator per thread that runs tasks (dispatcher threads and the
 * compensating ones, if any start). */
#define MAX_SLOTS 64

typedef struct slot_s {
    alignas(64) uint64_t count;
    uint64_t acc;
} slot_t;

static slot_t slots[MAX_SLOTS];
static atomic_uint nslots;
static _Thread_local slot_t *mine;

static int xs50_task(shoal_ctx_t *ctx, void *arg)
{
    (void)ctx;
    if (mine == NULL) {
        unsigned i = atomic_fetch_add_explicit(&nslots, 1, memory_order_relaxed);
        if (i >= MAX_SLOTS)
            shoal_panic(ctx, "more than %d threads ran tasks", MAX_SLOTS);
        mine = &slots[i];
    }
    mine->count++;
    mine->acc ^= xs50((uint64_t)(uintptr_t)arg);
    return 0;
}

int bench_tasks(int argc, char **argv)
{
    uint64_t n, w;
    if (argc != 2 || bench_parse_u64(argv[0], 1, &n) != 0 || bench_parse_u64(argv[1], 1, &w) != 0 ||
        w > SHOAL_POOL_MAX_SIZE)
        return BENCH_USAGE;
    bench_t b;
    if (bench_init(&b, "TASKS") != SHOAL_OK)
        return BENCH_VERIFY;
    unsigned long queue = bench_env_ulong("SHOAL_BENCH_TASKS_QUEUE", 1024);
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.name = "bench.tasks";
    o.size = (uint32_t)w;
    o.queue = (uint32_t)queue;
    shoal_tasks_t *pool = NULL;
    int rc = shoal_tasks_create(b.rt, &o, &pool);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: TASKS set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    bench_begin(&b);
    for (uint64_t i = 0; i < n && rc == SHOAL_OK; i++)
        rc = shoal_tasks_submit(pool, xs50_task, (void *)(uintptr_t)i, UINT64_MAX);
    if (rc == SHOAL_OK)
        rc = shoal_tasks_release(pool);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: TASKS: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    /* The release has answered: every worker has ended, its writes seen. */
    unsigned ns = atomic_load(&nslots);
    for (unsigned i = 0; i < ns && i < MAX_SLOTS; i++) {
        b.count += slots[i].count;
        b.acc ^= slots[i].acc;
    }
    uint32_t want = bench_expected_check(n);
    char params[64];
    snprintf(params, sizeof params, "N=%llu,W=%llu", (unsigned long long)n, (unsigned long long)w);
    bench_result(&b, params, b.count, b.t1 - b.t0,
                 "check=%llu pool=shoal-tasks(pull,queue=%lu) producer=main submit=send_wait "
                 "done=release task_threads=%u",
                 (unsigned long long)b.acc, queue, ns);
    int status = BENCH_OK;
    if (b.count != n || b.acc != want) {
        fprintf(stderr,
                "shoal-bench: TASKS verification failed: count %llu (want %llu), "
                "check %llu (want %u)\n",
                (unsigned long long)b.count, (unsigned long long)n, (unsigned long long)b.acc,
                want);
        status = BENCH_VERIFY;
    }
    bench_finish(&b, status);
}
