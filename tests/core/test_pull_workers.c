/* test_pull_workers.c - a pull pool's workers one by one (Akka's
 * GetWorkerStats: SHOAL_POOL_WORKER_STATS, the seats of core/pool/pull_seats.c):
 *   - what each worker took and completed adds up to the pool's, exactly,
 *     and nothing is in progress once all is done;
 *   - in progress and idle are each worker's now: a busy one holds its item
 *     and its idle time stands still, an idle one's grows;
 *   - a replacement takes the seat of the worker it replaces and starts
 *     from 0; a pool that shrinks keeps its seats, one that grows again
 *     fills the lowest free ones;
 *   - fewer records asked for than there are workers: the count is still
 *     the number of workers; a forward pool answers SHOAL_ENOTSUP.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u
#define MAXW 8

enum { T_JOB = 1 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2 };

static atomic_int done, entered, gate;

static void reset(void)
{
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    uint32_t act;
    if (msg->type != T_JOB || msg->size != sizeof act)
        return 0;
    memcpy(&act, msg->data, sizeof act);
    if (act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (act & A_PANIC)
        shoal_panic(ctx, "test panic");
    atomic_fetch_add(&done, 1);
    return 0;
}

static const shoal_behaviour_t wk = {.name = "wk", .handle_message = wk_message};

static shoal_pid_t spawn_pull(shoal_runtime_t *rt, uint32_t size, uint32_t prefetch,
                              uint32_t buffer)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "pull";
    s.worker = &wk;
    s.kind = SHOAL_POOL_KIND_PULL;
    s.size = size;
    s.min_size = 1;
    s.max_size = MAXW;
    s.prefetch = prefetch;
    s.buffer = buffer;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    return p;
}

static int job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t act)
{
    return shoal_runtime_send(rt, to, T_JOB, &act, sizeof act);
}

/* The pool's workers into w[MAXW]: how many, -1 on an error (asserted). */
static int workers(shoal_runtime_t *rt, shoal_pid_t p, shoal_pull_worker_stats_t *w)
{
    memset(w, 0xA5, MAXW * sizeof *w);
    int n = shoal_pool_worker_stats(rt, p, w, MAXW, TMO);
    CU_ASSERT(n >= 0 && n <= MAXW);
    return n >= 0 && n <= MAXW ? n : -1;
}

/* How many workers are idle now. */
static int idle_count(shoal_runtime_t *rt, shoal_pid_t p)
{
    shoal_pull_worker_stats_t w[MAXW];
    int n = workers(rt, p, w), k = 0;
    for (int i = 0; i < n; i++)
        k += w[i].idle == 1;
    return k;
}

/* 3 workers, prefetch 2, 3000 items: per worker taken == completed, and
 * they sum to 3000; seats 0, 1, 2 with three distinct pids; nothing in
 * progress; every worker idle once all is done. */
static void each_workers_counts_add_up_to_the_pools(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn_pull(rt, 3, 2, 64);
    int sent = 0;
    while (sent < 3000) {
        int rc = job(rt, p, A_OK);
        CU_ASSERT(rc == SHOAL_OK || rc == SHOAL_EBUSY);
        if (rc == SHOAL_OK)
            sent++;
        else
            shoal_test_nap();
    }
    WAIT_UNTIL(atomic_load(&done) == 3000 && idle_count(rt, p) == 3);
    shoal_pull_worker_stats_t w[MAXW];
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, w), 3);
    uint64_t taken = 0, completed = 0;
    for (uint32_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(w[i].seat, i);
        CU_ASSERT_EQUAL(w[i].in_progress, 0);
        CU_ASSERT_EQUAL(w[i].taken, w[i].completed);
        CU_ASSERT_EQUAL(w[i].idle, 1);
        CU_ASSERT(w[i].idle_ns > 0);
        CU_ASSERT_NOT_EQUAL(w[i].pid, w[(i + 1) % 3].pid);
        taken += w[i].taken;
        completed += w[i].completed;
    }
    CU_ASSERT_EQUAL(taken, 3000);
    CU_ASSERT_EQUAL(completed, 3000);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).delivered, 3000);
    shoal_runtime_destroy(rt);
}

/* 2 workers, prefetch 1: one blocks on its item. It is in progress 1, not
 * idle, and its idle time stands still over 50 ms; the other is idle,
 * holds nothing, and its idle time grows by at least those 50 ms. */
static void in_progress_and_idle_are_each_workers_now(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn_pull(rt, 2, 1, 4);
    WAIT_UNTIL(idle_count(rt, p) == 2);
    CU_ASSERT_EQUAL(job(rt, p, A_BLOCK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    WAIT_UNTIL(idle_count(rt, p) == 1);
    shoal_pull_worker_stats_t a[MAXW], b[MAXW];
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, a), 2);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, b), 2);
    int busy = a[0].idle ? 1 : 0, free_ = 1 - busy;
    CU_ASSERT_EQUAL(a[busy].idle, 0);
    CU_ASSERT_EQUAL(a[busy].in_progress, 1);
    CU_ASSERT_EQUAL(a[busy].taken, 1);
    CU_ASSERT_EQUAL(a[busy].completed, 0);
    CU_ASSERT_EQUAL(b[busy].idle_ns, a[busy].idle_ns);
    CU_ASSERT_EQUAL(a[free_].idle, 1);
    CU_ASSERT_EQUAL(a[free_].in_progress, 0);
    CU_ASSERT_EQUAL(a[free_].taken, 0);
    CU_ASSERT(b[free_].idle_ns >= a[free_].idle_ns + 50 * 1000000u);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 1 && idle_count(rt, p) == 2);
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, b), 2);
    CU_ASSERT_EQUAL(b[busy].pid, a[busy].pid);
    CU_ASSERT_EQUAL(b[busy].in_progress, 0);
    CU_ASSERT_EQUAL(b[busy].completed, 1);
    shoal_runtime_destroy(rt);
}

/* The worker that panics is replaced in its seat, with counts from 0; the
 * others keep theirs. Shrunk to 1, the one left keeps its seat; grown to 3
 * again, the new ones sit in the lowest free seats. */
static void a_replacement_takes_the_seat_it_replaces(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn_pull(rt, 3, 1, 64);
    for (int i = 0; i < 30; i++)
        CU_ASSERT_EQUAL(job(rt, p, A_OK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&done) == 30 && idle_count(rt, p) == 3);
    shoal_pull_worker_stats_t a[MAXW], b[MAXW];
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, a), 3);
    CU_ASSERT_EQUAL(job(rt, p, A_PANIC), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).worker_restarts == 1 &&
               shoal_test_pool_stats(rt, p).pool_size == 3 && idle_count(rt, p) == 3);
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, b), 3);
    int replaced = 0;
    for (uint32_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(b[i].seat, i);
        if (b[i].pid == a[i].pid) {
            CU_ASSERT_EQUAL(b[i].completed, a[i].completed);
        } else {
            replaced++;
            CU_ASSERT_EQUAL(b[i].taken, 0);
            CU_ASSERT_EQUAL(b[i].completed, 0);
        }
    }
    CU_ASSERT_EQUAL(replaced, 1);
    /* Shrink to 1: the seats of the two that left are free. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 1, TMO), 1);
    WAIT_UNTIL(workers(rt, p, a) == 1);
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, a), 1);
    uint32_t kept = a[0].seat;
    CU_ASSERT(kept < 3);
    int found = 0;
    for (uint32_t i = 0; i < 3; i++)
        found += b[i].seat == kept && b[i].pid == a[0].pid;
    CU_ASSERT_EQUAL(found, 1);
    /* Grow to 3: seats 0, 1, 2 again, the kept one where it was. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 3, TMO), 3);
    WAIT_UNTIL(workers(rt, p, b) == 3);
    CU_ASSERT_EQUAL_FATAL(workers(rt, p, b), 3);
    for (uint32_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(b[i].seat, i);
    CU_ASSERT_EQUAL(b[kept].pid, a[0].pid);
    shoal_runtime_destroy(rt);
}

/* Asked for 2 of 5 workers: 2 records filled, 5 returned, the rest of the
 * caller's array untouched; asked for none: 5. A forward pool: ENOTSUP. */
static void fewer_records_than_workers_and_other_kinds(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn_pull(rt, 5, 1, 4);
    shoal_pull_worker_stats_t w[MAXW];
    memset(w, 0xA5, sizeof w);
    CU_ASSERT_EQUAL(shoal_pool_worker_stats(rt, p, w, 2, TMO), 5);
    CU_ASSERT_EQUAL(w[0].seat, 0);
    CU_ASSERT_EQUAL(w[1].seat, 1);
    CU_ASSERT_EQUAL(w[2].seat, 0xA5A5A5A5u);
    CU_ASSERT_EQUAL(shoal_pool_worker_stats(rt, p, NULL, 0, TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_worker_stats(rt, p, NULL, 1, TMO), SHOAL_EINVAL);

    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.worker = &wk;
    s.size = 2;
    shoal_pid_t f = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &f), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_worker_stats(rt, f, w, MAXW, TMO), SHOAL_ENOTSUP);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"each worker's counts add up to the pool's", each_workers_counts_add_up_to_the_pools},
        {"in progress and idle are each worker's now", in_progress_and_idle_are_each_workers_now},
        {"a replacement takes the seat it replaces", a_replacement_takes_the_seat_it_replaces},
        {"fewer records than workers, and other kinds", fewer_records_than_workers_and_other_kinds},
        {NULL, NULL}};
    return shoal_test_run("pull_workers", cases);
}
