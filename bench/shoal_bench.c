/* shoal_bench.c - shoal-bench's command line: main, the usage text, and the
 * parsing of arguments (bench_parse_u64) and environment (bench_env_ulong).
 *
 *   shoal-bench W1 N W | W2 P M | W3 A | W4 N [block|drop] | W5 N W [RATE] | TASKS N W
 *             | W6 C M K
 *   shoal-bench SCALE BASE FACTOR SECS   (scale.c: an autoscaled pool, a step)
 *
 * The spec is /work/shared/bench/README.md. Environment:
 *   SHOAL_THREADS          dispatcher threads (default: the runtime's, max(CPUs, 2))
 *   SHOAL_BENCH_DESTROY=1  destroy the runtime before exiting (default: _Exit)
 *   SHOAL_BENCH_TIMEOUT    seconds to wait for the collector (default 300)
 *   SHOAL_BENCH_W1_MAILBOX W1 worker mailbox limit (default 1024; 0 = unbounded)
 *   SHOAL_BENCH_CHUNK      sends per producer turn (W1 default 256, W4 64)
 *   SHOAL_BENCH_DIRECT=1   W1 and W4 without a pool: producers send straight
 *                          to plain worker actors (W1 round-robin,
 *                          pool=rr-actors; W4 worker (k+p) mod 4,
 *                          bounded=native(mailbox=100)), done markers by
 *                          per-sender FIFO. Default: through a shoal pool
 *                          (pool=shoal-pool), done by SHOAL_POOL_DRAIN.
 *   SHOAL_BENCH_PRODUCERS  W1 only, for comparing pool and direct: this many
 *                          producer actors (default 1, as the spec's W1),
 *                          producer p sends messages [p*N/P, (p+1)*N/P)
 *                          (RESULT extra producers=P)
 *   SHOAL_BENCH_INSPECT_MS pool mode (W1, W4): the main thread inspects the
 *                          pool this often while it waits (default 50;
 *                          0 = never); RESULT extras inspect_*
 *   SHOAL_BENCH_POOL       W5: pull (default, a pull pool) or forward (a
 *                          forward pool); SHOAL_BENCH_DIRECT=1 overrides
 *   SHOAL_BENCH_W5_BUFFER  W5 pull pool buffer (default W x 100)
 *   SHOAL_BENCH_SVC_US     SCALE: a message's sleep in its handler (default 5000)
 *   SHOAL_BENCH_LOG_LEVEL  the runtime's log level (default 1, warnings; 2: info,
 *                          e.g. SCALE's autoscale decisions)
 *   SHOAL_BENCH_TASKS_QUEUE TASKS: the task pool's queue (default 1024)
 *   SHOAL_BENCH_SPIN_US    how long an idle dispatcher thread spins before
 *                          it parks (default: the runtime's, 50)
 *   SHOAL_BENCH_W6         W6: take (default: take, call, return) or txn
 *                          (shoal_checkout_call: one transaction)
 */
#include "bench.h"
#include "host/isolated.h"
#include "host/version.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long bench_env_ulong(const char *name, unsigned long dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return dflt;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        fprintf(stderr, "shoal-bench: ignoring %s=%s (not a number)\n", name, s);
        return dflt;
    }
    return v;
}

int bench_parse_u64(const char *s, uint64_t min, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min)
        return -1;
    *out = v;
    return 0;
}

/* ---- main --------------------------------------------------------------- */

static void usage(FILE *to)
{
    fprintf(to,
            "usage: shoal-bench W1 N W | W2 P M | W3 A | W4 N [block|drop] | W5 N W [RATE]\n"
            "       shoal-bench TASKS N W  (N xs50 tasks from the main thread, shoal/tasks.h)\n"
            "       shoal-bench W6 C M K   (C consumers x K checkout transactions on M members)\n"
            "       shoal-bench ISO W1 N W | ISO W2 M | ISO CALL K\n"
            "       shoal-bench SCALE BASE FACTOR SECS  (an autoscaled pool, a step in load)\n"
            "         (a pool with isolation: process; SHOAL_BENCH_ISOLATION=none: the same\n"
            "          pool in this process)\n"
            "       shoal-bench --version | --help\n"
            "The workloads, their arguments and output: bench/README.md.\n");
}

/* A usage error (version.h): what is wrong, a hint; exit status 2. */
static int bad(const char *fmt, const char *what)
{
    return shoal__usage_error("shoal-bench", fmt, what);
}

int main(int argc, char **argv)
{
    /* An isolated pool's child process (ISO): this program again. */
    if (argc == 2 && strcmp(argv[1], "--isolated-worker") == 0)
        return shoal__isolated_main();
    if (argc < 2)
        return bad("%s", "no workload (W1, W2, W3, W4, W5, W6, ISO, TASKS, SCALE)");
    const char *w = argv[1];
    if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(w, "--version") == 0) {
        shoal__version_print(stdout, "shoal-bench");
        return 0;
    }
    if (w[0] == '-')
        return bad("unknown option '%s'", w);
    int rc;
    if (strcmp(w, "W1") == 0)
        rc = bench_w1(argc - 2, argv + 2);
    else if (strcmp(w, "W2") == 0)
        rc = bench_w2(argc - 2, argv + 2);
    else if (strcmp(w, "W3") == 0)
        rc = bench_w3(argc - 2, argv + 2);
    else if (strcmp(w, "W4") == 0)
        rc = bench_w4(argc - 2, argv + 2);
    else if (strcmp(w, "W5") == 0)
        rc = bench_w5(argc - 2, argv + 2);
    else if (strcmp(w, "ISO") == 0)
        rc = bench_iso(argc - 2, argv + 2);
    else if (strcmp(w, "SCALE") == 0)
        rc = bench_scale(argc - 2, argv + 2);
    else if (strcmp(w, "TASKS") == 0)
        rc = bench_tasks(argc - 2, argv + 2);
    else if (strcmp(w, "W6") == 0)
        rc = bench_w6(argc - 2, argv + 2);
    else
        return bad("unknown workload '%s' (W1, W2, W3, W4, W5, W6, ISO, TASKS, SCALE)", w);
    if (rc == BENCH_USAGE)
        usage(stderr);
    return rc;
}
