/* support.c - see support.h. */
#include "support.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *noop_thread(void *arg) { return arg; }

int shoal_test_run(const char *suite, const shoal_test_case_t *cases)
{
    pthread_t t; /* see support.h: the sanitizer's helper thread */
    if (pthread_create(&t, NULL, noop_thread, NULL) == 0)
        pthread_join(t, NULL);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    if (s == NULL)
        return 2;
    for (const shoal_test_case_t *c = cases; c->name != NULL; c++)
        if (CU_add_test(s, c->name, c->fn) == NULL)
            return 2;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    /* Unbuffered: a test that hangs until CTest kills it shows which case
     * it was in (a pipe's buffer would die with the process). */
    setvbuf(stdout, NULL, _IONBF, 0);
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

shoal_runtime_t *shoal_test_runtime_fixed(unsigned threads)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = threads;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_ERROR;
    o.max_extra_threads = SHOAL_EXTRA_THREADS_NONE;
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

/* A joined thread leaves /proc a moment after pthread_join returns (the
 * kernel clears the joiner's tid word before it reaps the task), so a count
 * taken at once can still include it. */
int shoal_test_threads(int expect)
{
    double end = shoal_test_now() + 2.0;
    int n = shoal_test_thread_count();
    while (n != expect && shoal_test_now() < end) {
        shoal_test_nap();
        n = shoal_test_thread_count();
    }
    return n;
}

int shoal_test_thread_base(void)
{
    double end = shoal_test_now() + 2.0, still = shoal_test_now();
    int n = shoal_test_thread_count();
    while (shoal_test_now() - still < 0.02 && shoal_test_now() < end) {
        shoal_test_nap();
        int m = shoal_test_thread_count();
        if (m != n)
            n = m, still = shoal_test_now();
    }
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

void shoal_test_nap(void)
{
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, NULL);
}

shoal_runtime_stats_t shoal_test_stats(shoal_runtime_t *rt)
{
    shoal_runtime_stats_t s;
    shoal_runtime_stats(rt, &s);
    return s;
}

shoal_pool_stats_t shoal_test_pool_stats(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, 10000), SHOAL_OK);
    return st;
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

double shoal_test_stress_scale(double sanitized)
{
    const char *s = getenv("SHOAL_STRESS_SCALE");
    double f = s ? atof(s) : (SANITIZED ? sanitized : 1.0);
    return f > 0 ? f : 1.0;
}

bool shoal_test_sanitized(void) { return SANITIZED; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double shoal_test_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return v[n / 2];
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[65536];

static void log_keep(void *user, int level, const char *line)
{
    (void)user;
    (void)level;
    pthread_mutex_lock(&log_lock);
    size_t len = strlen(log_text);
    if (len + strlen(line) + 2 < sizeof log_text)
        snprintf(log_text + len, sizeof log_text - len, "%s\n", line);
    pthread_mutex_unlock(&log_lock);
}

shoal_runtime_t *shoal_test_runtime_logged(unsigned threads, int log_level)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = threads;
    o.debug_checks = 1;
    o.log_level = log_level;
    return shoal_test_runtime_logged_opts(&o);
}

shoal_runtime_t *shoal_test_runtime_logged_opts(shoal_runtime_opts_t *o)
{
    pthread_mutex_lock(&log_lock);
    log_text[0] = '\0';
    pthread_mutex_unlock(&log_lock);
    o->log_fn = log_keep;
    o->log_user = NULL;
    shoal_runtime_t *rt = NULL;
    if (shoal_runtime_create(&rt, o) != SHOAL_OK)
        return NULL;
    return rt;
}

shoal_runtime_t *shoal_test_runtime_watched(unsigned threads, int max_extra, int log_level)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = threads;
    o.debug_checks = 1;
    o.log_level = log_level;
    o.stall_warn_ms = 100;
    o.max_extra_threads = max_extra;
    return shoal_test_runtime_logged_opts(&o);
}

void *shoal_test_spawner_main(void *arg)
{
    shoal_test_spawner_t *s = arg;
    atomic_store(&s->rc, shoal_runtime_spawn_pool(s->rt, &s->spec, &s->pid));
    atomic_store(&s->done, 1);
    return NULL;
}

bool shoal_test_log_has(const char *what)
{
    pthread_mutex_lock(&log_lock);
    bool yes = strstr(log_text, what) != NULL;
    pthread_mutex_unlock(&log_lock);
    return yes;
}

/* The first kept line from `line` on that holds `what`: its start, its
 * length (no newline) in *len; NULL when none. With log_lock held. */
static const char *line_with(const char *line, const char *what, size_t *len)
{
    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        *len = end ? (size_t)(end - line) : strlen(line);
        const char *hit = strstr(line, what);
        if (hit != NULL && hit + strlen(what) <= line + *len)
            return line;
        line += *len + (end ? 1 : 0);
    }
    return NULL;
}

unsigned shoal_test_log_count(const char *what)
{
    unsigned n = 0;
    size_t len;
    pthread_mutex_lock(&log_lock);
    for (const char *line = log_text; (line = line_with(line, what, &len)) != NULL; line += len)
        n++;
    pthread_mutex_unlock(&log_lock);
    return n;
}

bool shoal_test_log_line(const char *what, char *out, size_t n)
{
    size_t len;
    pthread_mutex_lock(&log_lock);
    const char *line = line_with(log_text, what, &len);
    if (line != NULL) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(out, line, k);
        out[k] = '\0';
    }
    pthread_mutex_unlock(&log_lock);
    return line != NULL;
}

void shoal_test_assert_logged(const char *what)
{
    bool yes = shoal_test_log_has(what);
    CU_ASSERT(yes);
    if (!yes) {
        pthread_mutex_lock(&log_lock);
        fprintf(stderr, "\n    not in the log: %s\n    the log:\n%s", what, log_text);
        pthread_mutex_unlock(&log_lock);
    }
}

#define MAX_EXITS 64
static _Atomic unsigned nexits;
static _Atomic shoal_pid_t exit_from[MAX_EXITS];
static _Atomic int exit_status[MAX_EXITS];

static int recorder_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        unsigned i = atomic_load(&nexits);
        if (i < MAX_EXITS) {
            atomic_store(&exit_from[i], msg->from);
            atomic_store(&exit_status[i], msg->status);
        }
        atomic_store(&nexits, i + 1); /* published after the slot */
    }
    return 0;
}

static const shoal_behaviour_t recorder = {.name = "recorder", .handle_message = recorder_message};

shoal_pid_t shoal_test_recorder_spawn(shoal_runtime_t *rt)
{
    atomic_store(&nexits, 0);
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &recorder, NULL, NULL, &p), SHOAL_OK);
    return p;
}

unsigned shoal_test_exits(void) { return atomic_load(&nexits); }

shoal_pid_t shoal_test_exit_from(unsigned i)
{
    return i < MAX_EXITS ? atomic_load(&exit_from[i]) : SHOAL_PID_NONE;
}

int shoal_test_exit_status(unsigned i)
{
    return i < MAX_EXITS ? atomic_load(&exit_status[i]) : SHOAL_TEST_NO_EXIT;
}

int shoal_test_exit_of(shoal_pid_t pid)
{
    unsigned n = atomic_load(&nexits);
    for (unsigned i = 0; i < n && i < MAX_EXITS; i++)
        if (atomic_load(&exit_from[i]) == pid)
            return atomic_load(&exit_status[i]);
    return SHOAL_TEST_NO_EXIT;
}

int shoal_test_wait_exit(shoal_pid_t pid, double seconds)
{
    SHOAL_TEST_WAIT_UNTIL(shoal_test_exit_of(pid) != SHOAL_TEST_NO_EXIT, seconds);
    return shoal_test_exit_of(pid);
}

bool shoal_test_wait_exits(unsigned n, double seconds)
{
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nexits) >= n, seconds);
    return atomic_load(&nexits) >= n;
}
