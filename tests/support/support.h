/* support.h - what every test executable shares: running one CUnit suite
 * and small helpers for runtime tests. */
#ifndef SHOAL_TEST_SUPPORT_H
#define SHOAL_TEST_SUPPORT_H

#include <CUnit/Basic.h>
#include <stdatomic.h>
#include <stdint.h>

#include "shoal/shoal.h"

typedef struct shoal_test_case_s {
    const char *name;
    void (*fn)(void);
} shoal_test_case_t;

/* Runs one suite of cases (terminated by {NULL, NULL}); returns the process
 * exit status: 0 when every assertion passed. */
int shoal_test_run(const char *suite, const shoal_test_case_t *cases);

/* Seconds on the monotonic clock. */
double shoal_test_now(void);

/* A runtime with debug checks on and `threads` workers (0 = default). */
shoal_runtime_t *shoal_test_runtime(unsigned threads);

/* Number of threads of this process (from /proc/self/status). */
int shoal_test_thread_count(void);

/* Sleeps until *flag != 0 or timeout_s passes; returns the final value. */
int shoal_test_wait_flag(atomic_int *flag, double timeout_s);

#endif
