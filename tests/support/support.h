/* support.h - what every test executable shares: running one CUnit suite
 * and small helpers for runtime tests. */
#ifndef SHOAL_TEST_SUPPORT_H
#define SHOAL_TEST_SUPPORT_H

#include <CUnit/Basic.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "shoal/shoal.h"

typedef struct shoal_test_case_s {
    const char *name;
    void (*fn)(void);
} shoal_test_case_t;

/* Runs one suite of cases (terminated by {NULL, NULL}); returns the process
 * exit status: 0 when every assertion passed. It first starts and joins one
 * thread: a sanitizer runtime starts a helper thread of its own on the first
 * pthread_create, and thread-count baselines must include it. */
int shoal_test_run(const char *suite, const shoal_test_case_t *cases);

/* Seconds on the monotonic clock. */
double shoal_test_now(void);

/* A runtime with debug checks on and `threads` workers (0 = default). */
shoal_runtime_t *shoal_test_runtime(unsigned threads);
/* The same, with no thread made up for one held in a handler (no
 * compensation): a test that holds all `threads` stops the runtime. */
shoal_runtime_t *shoal_test_runtime_fixed(unsigned threads);

/* As shoal_test_runtime, keeping every log line at log_level or more severe
 * for shoal_test_log_has (the kept log is cleared by each call; one such
 * runtime at a time). NULL on failure. */
shoal_runtime_t *shoal_test_runtime_logged(unsigned threads, int log_level);

/* The same with the caller's options (their log_fn is replaced). */
shoal_runtime_t *shoal_test_runtime_logged_opts(shoal_runtime_opts_t *o);

/* A logged runtime (log_level) for the monitor's suites: `threads`,
 * max_extra_threads, stall_warn 100 ms (the hand-off mark too), debug
 * checks on. NULL on failure. */
shoal_runtime_t *shoal_test_runtime_watched(unsigned threads, int max_extra, int log_level);

/* A pool spawned from a thread of its own (shoal_runtime_spawn_pool blocks
 * until its workers have started): rc and pid once done is 1. */
typedef struct shoal_test_spawner_s {
    shoal_runtime_t *rt;
    shoal_pool_spec_t spec;
    shoal_pid_t pid;
    atomic_int rc, done;
} shoal_test_spawner_t;
/* pthread_create's start routine for one. */
void *shoal_test_spawner_main(void *arg);

/* Whether a kept log line contains `what`. */
bool shoal_test_log_has(const char *what);

/* How many kept log lines contain `what`. */
unsigned shoal_test_log_count(const char *what);

/* The first kept log line containing `what`, into out (cut to n - 1
 * characters, no newline); false if none. */
bool shoal_test_log_line(const char *what, char *out, size_t n);

/* CU_ASSERT that the kept log contains `what`; prints the log if not. */
void shoal_test_assert_logged(const char *what);

/* A parent that records the SHOAL_MSG_EXIT notices it hears, in order. One
 * recorder at a time: spawning one clears the record. */
shoal_pid_t shoal_test_recorder_spawn(shoal_runtime_t *rt);
unsigned shoal_test_exits(void);              /* notices heard so far */
shoal_pid_t shoal_test_exit_from(unsigned i); /* the child of notice i */
int shoal_test_exit_status(unsigned i);       /* its exit reason */
/* The reason pid ended with, as heard; SHOAL_TEST_NO_EXIT if not (yet). */
#define SHOAL_TEST_NO_EXIT 12345
int shoal_test_exit_of(shoal_pid_t pid);
/* The same, waiting up to `seconds` for the notice. */
int shoal_test_wait_exit(shoal_pid_t pid, double seconds);
/* Waits until n notices were heard; whether they were. */
bool shoal_test_wait_exits(unsigned n, double seconds);

/* Number of threads of this process (from /proc/self/status). */
int shoal_test_thread_count(void);
/* The count once it is `expect`, or whatever it is after 2 s: joined threads
 * leave /proc a moment after pthread_join returns. */
int shoal_test_threads(int expect);
/* The count once it held still for 20 ms: the base a test compares with. */
int shoal_test_thread_base(void);

/* Sleeps 200 us: the step of every polling wait. */
void shoal_test_nap(void);

/* Polls until cond holds or `seconds` pass. Every wait ends, so a bug fails
 * a test instead of hanging it. */
#define SHOAL_TEST_WAIT_UNTIL(cond, seconds)                                                       \
    do {                                                                                           \
        double end_ = shoal_test_now() + (seconds);                                                \
        while (!(cond) && shoal_test_now() < end_)                                                 \
            shoal_test_nap();                                                                      \
    } while (0)

/* The runtime's counters, by value. */
shoal_runtime_stats_t shoal_test_stats(shoal_runtime_t *rt);
/* A pool's counters, by value (asserted to be read within 10 s; zeros if
 * not). */
shoal_pool_stats_t shoal_test_pool_stats(shoal_runtime_t *rt, shoal_pid_t pool);

/* How much of its full size a stress test does: SHOAL_STRESS_SCALE if set,
 * else `sanitized` in a sanitizer build and 1.0 otherwise. */
double shoal_test_stress_scale(double sanitized);

/* Whether this is a sanitizer build (timing bounds are looser there). */
bool shoal_test_sanitized(void);

/* Sorts v[0..n) ascending and returns its median, v[n / 2]. */
double shoal_test_median(double *v, int n);

/* Sleeps until *flag != 0 or timeout_s passes; returns the final value. */
int shoal_test_wait_flag(atomic_int *flag, double timeout_s);

#endif
