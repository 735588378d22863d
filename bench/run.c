/* run.c - a run's frame, shared by the workloads: the runtime's creation
 * (bench_init), the timed interval (bench_begin, bench_end), waiting for
 * the collector (bench_wait; bench_wait_inspect inspects a pool meanwhile),
 * the RESULT line and the counters on stderr (bench_result), the exit
 * (bench_finish), and the clock and /proc readings they take.
 */
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long bench_status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    size_t klen = strlen(key);
    long kb = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            kb = strtol(line + klen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* ---- set-up, timing, output --------------------------------------------- */

int bench_init(bench_t *b, const char *workload)
{
    memset(b, 0, sizeof *b);
    b->workload = workload;
    if (sem_init(&b->done, 0, 0) != 0)
        return SHOAL_ENOMEM;
    shoal_runtime_opts_t opts;
    shoal_runtime_opts_init(&opts);
    opts.threads = (unsigned)bench_env_ulong("SHOAL_THREADS", 0);
    opts.log_level = (int)bench_env_ulong("SHOAL_BENCH_LOG_LEVEL", SHOAL_LOG_WARN);
    opts.spin_us = (unsigned)bench_env_ulong("SHOAL_BENCH_SPIN_US", 0);
    int rc = shoal_runtime_create(&b->rt, &opts);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: shoal_runtime_create: %s\n", shoal_strerror(rc));
        return rc;
    }
    b->threads = shoal_runtime_threads(b->rt);
    return SHOAL_OK;
}

void bench_begin(bench_t *b)
{
    shoal_runtime_stats(b->rt, &b->st0);
    b->mallocs0 = bench_malloc_calls();
    b->t0 = bench_now();
}

static void print_stats(const bench_t *b, const char *when)
{
    const shoal_runtime_stats_t *s = &b->st1, *z = &b->st0;
    fprintf(stderr,
            "shoal-bench: %s stats (%s): turns=%llu steals=%llu parks=%llu wakes=%llu "
            "sent=%llu handled=%llu refused=%llu dropped=%llu spawned=%llu ended=%llu "
            "live=%llu env_slabs=%llu heap_payloads=%llu mallocs=%llu\n",
            b->workload, when, (unsigned long long)(s->turns - z->turns),
            (unsigned long long)(s->steals - z->steals), (unsigned long long)(s->parks - z->parks),
            (unsigned long long)(s->wakes - z->wakes),
            (unsigned long long)(s->msgs_sent - z->msgs_sent),
            (unsigned long long)(s->msgs_handled - z->msgs_handled),
            (unsigned long long)(s->msgs_refused - z->msgs_refused),
            (unsigned long long)(s->msgs_dropped - z->msgs_dropped),
            (unsigned long long)(s->actors_spawned - z->actors_spawned),
            (unsigned long long)(s->actors_ended - z->actors_ended),
            (unsigned long long)s->actors_live, (unsigned long long)(s->env_slabs - z->env_slabs),
            (unsigned long long)(s->heap_payloads - z->heap_payloads),
            (unsigned long long)(b->mallocs1 - b->mallocs0));
}

/* The run did not complete within limit seconds: record the end as it is
 * and say so. */
static void timed_out(bench_t *b, double limit)
{
    b->t1 = bench_now();
    b->mallocs1 = bench_malloc_calls();
    shoal_runtime_stats(b->rt, &b->st1);
    fprintf(stderr, "shoal-bench: %s: no completion after %.0f s (hang?)\n", b->workload, limit);
    print_stats(b, "at timeout");
}

int bench_wait(bench_t *b)
{
    double limit = (double)bench_env_ulong("SHOAL_BENCH_TIMEOUT", 300);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)limit;
    while (sem_timedwait(&b->done, &ts) != 0) {
        if (errno == EINTR)
            continue;
        timed_out(b, limit);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int bench_wait_inspect(bench_t *b, shoal_pid_t pid, bench_inspect_t *out)
{
    memset(out, 0, sizeof *out);
    out->every_ms = (unsigned)bench_env_ulong("SHOAL_BENCH_INSPECT_MS", 50);
    if (out->every_ms == 0)
        return bench_wait(b);
    double limit = (double)bench_env_ulong("SHOAL_BENCH_TIMEOUT", 300);
    double deadline = bench_now() + limit;
    size_t cap = 256;
    double *lat = malloc(cap * sizeof *lat);
    char last[2048] = "";
    int rc = 0;
    for (;;) {
        /* sem_timedwait takes a CLOCK_REALTIME instant: now + the period. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)(out->every_ms % 1000) * 1000000L;
        ts.tv_sec += (time_t)(out->every_ms / 1000) + ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        if (sem_timedwait(&b->done, &ts) == 0)
            break;
        if (errno == EINTR)
            continue;
        if (bench_now() > deadline) {
            timed_out(b, limit);
            rc = -1;
            break;
        }
        shoal_answer_t a;
        memset(&a, 0, sizeof a);
        double t = bench_now();
        int irc = shoal_runtime_inspect(b->rt, pid, 1000, &a);
        double ms = (bench_now() - t) * 1e3;
        if (irc == SHOAL_OK && a.status == SHOAL_OK && a.data != NULL) {
            if (out->n == cap) {
                double *n = realloc(lat, 2 * cap * sizeof *lat);
                if (n != NULL) {
                    lat = n;
                    cap *= 2;
                }
            }
            if (lat != NULL && out->n < cap)
                lat[out->n] = ms;
            out->n++;
            if (ms > out->max_ms)
                out->max_ms = ms;
            snprintf(last, sizeof last, "%s", (const char *)a.data);
        } else {
            out->fail++; /* typically: the drained pool has just ended */
        }
        shoal_answer_release(&a);
    }
    if (lat != NULL && out->n != 0) {
        size_t n = out->n < cap ? (size_t)out->n : cap;
        qsort(lat, n, sizeof *lat, cmp_double);
        out->p50_ms = n % 2 ? lat[n / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2;
    }
    free(lat);
    if (last[0] != '\0')
        fprintf(stderr, "shoal-bench: %s: last inspect answer: %s\n", b->workload, last);
    fprintf(stderr,
            "shoal-bench: %s: inspected the pool every %u ms: %llu answers, p50 %.3f ms, "
            "max %.3f ms, %llu failed\n",
            b->workload, out->every_ms, (unsigned long long)out->n, out->p50_ms, out->max_ms,
            (unsigned long long)out->fail);
    return rc;
}

const char *bench_inspect_extras(const bench_inspect_t *in, char *buf, size_t size)
{
    if (in->every_ms == 0) {
        if (size != 0)
            buf[0] = '\0';
        return buf;
    }
    if (in->n == 0) { /* the run was shorter than one period */
        snprintf(buf, size,
                 " inspect_every_ms=%u inspect_n=0 inspect_p50_ms=na inspect_max_ms=na "
                 "inspect_fail=%llu",
                 in->every_ms, (unsigned long long)in->fail);
        return buf;
    }
    snprintf(buf, size,
             " inspect_every_ms=%u inspect_n=%llu inspect_p50_ms=%.3f inspect_max_ms=%.3f "
             "inspect_fail=%llu",
             in->every_ms, (unsigned long long)in->n, in->p50_ms, in->max_ms,
             (unsigned long long)in->fail);
    return buf;
}

void bench_end(bench_t *b)
{
    b->t1 = bench_now();
    b->mallocs1 = bench_malloc_calls();
    shoal_runtime_stats(b->rt, &b->st1);
}

void bench_result(bench_t *b, const char *params, uint64_t msgs, double secs, const char *fmt, ...)
{
    char extra[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(extra, sizeof extra, fmt, ap);
    va_end(ap);
    double rate = secs > 0 ? (double)msgs / secs : 0.0;
    printf("RESULT workload=%s impl=shoal params=%s msgs=%llu secs=%.6f rate=%.0f rss_kb=%ld%s%s"
           " threads=%u mallocs=%llu heap_payloads=%llu env_slabs=%llu\n",
           b->workload, params, (unsigned long long)msgs, secs, rate, bench_status_kb("VmHWM"),
           extra[0] ? " " : "", extra, b->threads, (unsigned long long)(b->mallocs1 - b->mallocs0),
           (unsigned long long)(b->st1.heap_payloads - b->st0.heap_payloads),
           (unsigned long long)(b->st1.env_slabs - b->st0.env_slabs));
    fflush(stdout);
    print_stats(b, "timed interval");
}

_Noreturn void bench_finish(bench_t *b, int rc)
{
    fflush(stdout);
    fflush(stderr);
    if (bench_env_ulong("SHOAL_BENCH_DESTROY", 0) != 0 && b->rt != NULL) {
        double t = bench_now();
        shoal_runtime_destroy(b->rt);
        fprintf(stderr, "shoal-bench: runtime destroyed in %.4f s\n", bench_now() - t);
        sem_destroy(&b->done);
        exit(rc);
    }
    _Exit(rc);
}
