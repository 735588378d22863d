/* stress_pull_churn.c - a pull pool (core/pool/pull.c) under four producers
 * and a caller while its size, prefetch and buffer are churned and members
 * panic; and the same on a forward pool of 2 pull pools, the outer one
 * resized 2 -> 1 -> 2. Every ledger exact (pull_stress_kit.h says what is
 * checked).
 *
 * Sizes scale with SHOAL_STRESS_SCALE (default 1; sanitizer builds 0.1).
 */
#include "pull_stress_kit.h"

static void churn(void)
{
    static const ps_scenario_t s = {.name = "churn"};
    ps_run(&s);
}

static void nested(void)
{
    static const ps_scenario_t s = {.name = "nested", .nested = 1};
    ps_run(&s);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"4 producers + a caller; size, prefetch, buffer churned; members panic", churn},
        {"a forward pool of 2 pull pools, resized 2 <-> 1; members panic", nested},
        {NULL, NULL},
    };
    return shoal_test_run("stress_pull_churn", cases);
}
