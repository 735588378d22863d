/* support.c - see support.h. */
#include "support.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int shoal_test_run(const char *suite, const shoal_test_case_t *cases)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    if (s == NULL)
        return 2;
    for (const shoal_test_case_t *c = cases; c->name != NULL; c++)
        if (CU_add_test(s, c->name, c->fn) == NULL)
            return 2;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed == 0 ? 0 : 1;
}

double shoal_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

shoal_runtime_t *shoal_test_runtime(unsigned threads)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = threads;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt = NULL;
    if (shoal_runtime_create(&rt, &o) != SHOAL_OK)
        return NULL;
    return rt;
}

int shoal_test_thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Threads:", 8) == 0)
            n = atoi(line + 8);
    fclose(f);
    return n;
}

int shoal_test_wait_flag(atomic_int *flag, double timeout_s)
{
    double end = shoal_test_now() + timeout_s;
    while (!atomic_load(flag) && shoal_test_now() < end) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return atomic_load(flag);
}
