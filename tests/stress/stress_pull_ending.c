/* stress_pull_ending.c - a pull pool (core/pool/pull.c) that ends while
 * everyone still sends: drained, or stopped. Every accepted item is handled
 * once, failed, or dropped and counted; every call returns
 * (pull_stress_kit.h says what else is checked).
 *
 * Sizes scale with SHOAL_STRESS_SCALE (default 1; sanitizer builds 0.1).
 */
#include "pull_stress_kit.h"

static void drained_under_traffic(void)
{
    static const ps_scenario_t s = {.name = "drained under traffic", .end = PS_END_DRAIN};
    ps_run(&s);
}

static void stopped_under_traffic(void)
{
    static const ps_scenario_t s = {.name = "stopped under traffic", .end = PS_END_STOP};
    ps_run(&s);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"the pool drained while everyone sends", drained_under_traffic},
        {"the pool stopped while everyone sends", stopped_under_traffic},
        {NULL, NULL},
    };
    return shoal_test_run("stress_pull_ending", cases);
}
