/* test_elastic_edges.c - elastic pools that start with no worker
 * (core/pool/elastic.c, autoscale.c): whether anything starts their first
 * one is what shoal__pool_stays_empty (pool.h) says, which the config and
 * shoalctl scale refuse a size of 0 by.
 */
#include <unistd.h>

#include "elastic_kit.h"

/* An autoscaled pool of `kind` with no worker, no idle_timeout, growing on
 * `when` only, sent to for a second (four ticks, all pressure for a pool
 * that measures it): it grows exactly when stays_empty says it will not. */
static void empty_pool_case(uint32_t kind, uint32_t when)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s = ek_spec_of(kind, 0, 0, 4, 8);
    s.autoscale.when = when;
    s.autoscale.up_for_ms = 0;
    s.autoscale.cooldown_ms = 0;
    s.autoscale.up_wait_us = 1000;
    s.autoscale.down_wait_us = 500;
    shoal_pid_t p = ek_spawn(rt, &s);
    bool empty = shoal__pool_stays_empty(when, 0, false); /* sent to, not fed by a source */
    double end = shoal_test_now() + (empty ? 1.0 : EK_WAIT_S);
    while (shoal_test_now() < end && EK_STATS(rt, p).pool_size == 0) {
        for (int i = 0; i < 10; i++)
            ek_job(rt, p, EK_A_OK);
        usleep(10000);
    }
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size == 0, empty);
    CU_ASSERT_EQUAL(st.autoscale_ups == 0, empty);
    shoal_runtime_destroy(rt);
}

/* BUG: stays_empty said a pool growing on wait_p99 would grow: with no
 * worker nothing is taken, so no wait is measured and it never did. */
static void pull_wait(void) { empty_pool_case(SHOAL_POOL_KIND_PULL, SHOAL_AUTOSCALE_WAIT); }
static void forward_wait(void) { empty_pool_case(SHOAL_POOL_KIND_FORWARD, SHOAL_AUTOSCALE_WAIT); }
static void pull_busy(void) { empty_pool_case(SHOAL_POOL_KIND_PULL, SHOAL_AUTOSCALE_BUSY); }
static void pull_refused(void) { empty_pool_case(SHOAL_POOL_KIND_PULL, SHOAL_AUTOSCALE_REFUSED); }
static void forward_refused(void)
{
    empty_pool_case(SHOAL_POOL_KIND_FORWARD, SHOAL_AUTOSCALE_REFUSED);
}
static void pull_wait_refused(void)
{
    empty_pool_case(SHOAL_POOL_KIND_PULL, SHOAL_AUTOSCALE_WAIT | SHOAL_AUTOSCALE_REFUSED);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"pull, no worker, wait_p99 only: stays empty", pull_wait},
        {"forward, no worker, wait_p99 only: stays empty", forward_wait},
        {"pull, no worker, busy only: stays empty", pull_busy},
        {"pull, no worker, refusals: grows", pull_refused},
        {"forward, no worker, refusals: grows", forward_refused},
        {"pull, no worker, wait_p99 and refusals: grows", pull_wait_refused},
        {NULL, NULL},
    };
    return shoal_test_run("elastic_edges", cases);
}
