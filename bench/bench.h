/* bench.h - what the workloads of shoal-bench share.
 *
 * shoal-bench implements the peer harness of /work/shared/bench (README.md
 * there is the spec): one workload per run, exactly one RESULT line on
 * stdout, diagnostics on stderr. Each workload file (w1.c .. w6.c, tasks.c;
 * W5 in w5*.c) sets up its actors, calls bench_begin() right before the
 * timed interval starts, bench_wait() for the collector's signal,
 * bench_end(), then prints with bench_result() and leaves through
 * bench_finish().
 *
 * What they share, declared here, is defined in: run.c (bench_init, the
 * timed interval, waiting, the RESULT line, the exit), collector.c,
 * worker.c (the W1/W4 worker, its pool, bench_expected_check), producer.c
 * (sending runs, MSG_DONE markers, yielding), shoal_bench.c (main,
 * bench_parse_u64, bench_env_ulong), malloc_count.c.
 *
 * The main thread never runs actors: it drives (W2-W4 start messages, W3
 * spawns) and then sleeps on a semaphore that the collector actor posts
 * (W1 and W4 through a pool: waking every 50 ms to inspect the pool).
 */
#ifndef SHOAL_BENCH_H
#define SHOAL_BENCH_H

#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>

#include "shoal/error.h"
#include "shoal/runtime.h"

/* Exit statuses fixed by the spec. */
enum { BENCH_OK = 0, BENCH_VERIFY = 1, BENCH_USAGE = 2, BENCH_UNSUPPORTED = 3 };

/* Message types used by every workload. */
enum {
    MSG_WORK = 1,   /* uint64_t v */
    MSG_DONE = 2,   /* no payload: end of work from one producer */
    MSG_CONT = 3,   /* a producer's note to itself: go on */
    MSG_START = 4,  /* workload-specific payload */
    MSG_REPORT = 5, /* bench_report_t, to the collector */
    MSG_PING = 6,   /* uint64_t k */
    MSG_PONG = 7,   /* uint64_t k */
};

/* What an actor reports to the collector: counts add up, accs XOR. */
typedef struct bench_report_s {
    uint64_t count;
    uint64_t acc;
    uint64_t dropped;
} bench_report_t;

typedef struct bench_s {
    shoal_runtime_t *rt;
    unsigned threads;
    const char *workload;

    /* Filled by the collector before it posts `done`. */
    sem_t done;
    uint64_t reports;
    uint64_t count;
    uint64_t acc;
    uint64_t dropped;

    /* The timed interval and what happened during it. */
    double t0, t1;
    uint64_t mallocs0, mallocs1;
    shoal_runtime_stats_t st0, st1;
} bench_t;

#include "xs50.h"

/* Monotonic seconds. */
double bench_now(void);

/* The number on a "Key:" line of /proc/self/status (VmRSS, VmHWM in kB;
 * Threads); -1 if absent. */
long bench_status_kb(const char *key);

/* An environment variable as an unsigned number, or `dflt` when unset. */
unsigned long bench_env_ulong(const char *name, unsigned long dflt);

/* The W1/W4-block checksum for n messages: the spec's table, else computed. */
uint32_t bench_expected_check(uint64_t n);

/* Creates the runtime (threads from SHOAL_THREADS, else the default). */
int bench_init(bench_t *b, const char *workload);

/* Spawns the collector: it expects `expected` MSG_REPORTs, sums them into
 * b->count / acc / dropped and then posts b->done. */
int bench_spawn_collector(bench_t *b, uint64_t expected, shoal_pid_t *pid);

/* A worker (W1, W4): processes MSG_WORK and reports (count, acc) to
 * `collector`
 *   - direct (pooled = 0): after `dones` MSG_DONE markers, then exits;
 *   - pooled (pooled = 1, a pool's worker): from its terminate callback when
 *     it ends normally (reason 0), i.e. when its pool drains it
 *     (SHOAL_POOL_DRAIN: it finishes its queued messages, then ends).
 * args must outlive the worker's init (pooled: the pool, which starts
 * replacements with them). */
typedef struct bench_worker_args_s {
    shoal_pid_t collector;
    unsigned dones;
    int pooled;
} bench_worker_args_t;

int bench_spawn_worker(bench_t *b, const bench_worker_args_t *args, uint32_t mailbox_limit,
                       shoal_pid_t *pid);

/* A pool of `size` workers running the worker behaviour above with args
 * (args->pooled must be 1), `mailbox` per worker (SHOAL_MAILBOX_UNBOUNDED
 * for none), as a root actor (shoal_runtime_spawn_pool). */
int bench_spawn_worker_pool(bench_t *b, const char *name, const bench_worker_args_t *args,
                            uint32_t size, uint32_t mailbox, shoal_pid_t *pid);
/* SHOAL_BENCH_POOL=pull: bench_spawn_worker_pool makes a pull pool with
 * the same capacity (buffer size x mailbox, prefetch 1). */
int bench_pull(void);
/* After SHOAL_EBUSY from `to`: asks for SHOAL_MSG_ROOM (1, *waits counted:
 * the caller sends nothing until it comes) or 0 when `to` cannot tell. */
int bench_wait_room(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t *waits);

/* SHOAL_BENCH_DIRECT=1: W1 and W4 send to plain worker actors as before
 * pools existed (pool=rr-actors, bounded=native(mailbox=100)) instead of
 * through a pool. */
int bench_direct(void);

/* SHOAL_BENCH_SEND=one: producers send each message with shoal_send;
 * default (many): a run of them with one shoal_send_many. */
int bench_send_many(void);
/* Sends values first, first + 1, ... (uint64_t, message type MSG_WORK) to
 * `to`, at most n of them: with one shoal_send_many, or with shoal_send
 * one by one under SHOAL_BENCH_SEND=one. *sent: how many were taken; the
 * result is the refusal that stopped it, else SHOAL_OK. */
int bench_send_run(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t first, uint64_t n, uint64_t *sent);

/* From a producer whose send met SHOAL_EFULL: ends its turn (shoal_yield)
 * and gets MSG_CONT back in a later one. */
int bench_yield(shoal_ctx_t *ctx);

/* A producer's end of work: MSG_DONE to workers[*sent .. n), in order;
 * SHOAL_OK once all are sent, else the refusal (retry next turn). */
int bench_send_done(shoal_ctx_t *ctx, const shoal_pid_t *workers, uint64_t n, uint64_t *sent);

/* Ends a producer's turn after its last send returned rc: on SHOAL_EFULL (a
 * full mailbox) or SHOAL_EBUSY (a pool whose workers are all full) it counts
 * the turn in *full and yields; on SHOAL_OK it continues with a self-sent
 * MSG_CONT; anything else is a bug (panic). */
void bench_next_turn(shoal_ctx_t *ctx, int rc, uint64_t *full);

/* Takes t0 and the counters' starting values. */
void bench_begin(bench_t *b);

/* Sleeps until the collector posts. 0, or -1 after SHOAL_BENCH_TIMEOUT
 * seconds (default 300): then the counters go to stderr. */
int bench_wait(bench_t *b);

/* What the main thread measured by inspecting a pool while it waited. */
typedef struct bench_inspect_s {
    unsigned every_ms; /* 0: not inspected */
    uint64_t n;        /* answered inspections (status 0) */
    uint64_t fail;     /* calls that failed or answered an error (the pool ended) */
    double p50_ms, max_ms;
} bench_inspect_t;

/* As bench_wait, and while waiting, every SHOAL_BENCH_INSPECT_MS
 * milliseconds (default 50; 0 = never, then plain bench_wait) the main thread
 * calls shoal_runtime_inspect(pid) and times the call. The last answer goes
 * to stderr. */
int bench_wait_inspect(bench_t *b, shoal_pid_t pid, bench_inspect_t *out);

/* " inspect_every_ms=.. inspect_n=.. inspect_p50_ms=.. inspect_max_ms=..
 * inspect_fail=.." for the RESULT line (with its leading space; the
 * latencies are "na" when no inspection was answered), or "" when not
 * inspected. */
const char *bench_inspect_extras(const bench_inspect_t *in, char *buf, size_t size);

/* Takes t1 and the counters' final values. */
void bench_end(bench_t *b);

/* Prints the RESULT line: the seven fixed fields, then the extras given by
 * the workload (a printf format, may be ""), then threads, mallocs,
 * heap_payloads and env_slabs of the timed interval. Counters go to stderr. */
void bench_result(bench_t *b, const char *params, uint64_t msgs, double secs, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Leaves the program with status rc: _Exit at once, or, when
 * SHOAL_BENCH_DESTROY=1, after shoal_runtime_destroy. */
_Noreturn void bench_finish(bench_t *b, int rc);

/* Parses a decimal count >= min; 0 on success, -1 otherwise. */
int bench_parse_u64(const char *s, uint64_t min, uint64_t *out);

/* Allocation calls made so far by the whole process (malloc_count.c). */
uint64_t bench_malloc_calls(void);
uint64_t bench_free_calls(void);

/* W2's ping: MSG_START(w2_start_t) starts it; it sends MSG_PING(k) for k =
 * m .. 1 to its pong, each after MSG_PONG(k+1) came back (to whoever sent
 * the pong: a pool's PID when the pong is a pool's worker), then reports
 * (count = m) to the collector and exits. */
typedef struct w2_start_s {
    shoal_pid_t pong;
    shoal_pid_t collector;
    uint64_t m;
} w2_start_t;
extern const shoal_behaviour_t bench_w2_ping;

/* The workloads: argc/argv start after the workload name. */
int bench_w1(int argc, char **argv);
int bench_w2(int argc, char **argv);
int bench_w3(int argc, char **argv);
int bench_w4(int argc, char **argv);
int bench_w5(int argc, char **argv);
int bench_iso(int argc, char **argv);
int bench_scale(int argc, char **argv);
int bench_tasks(int argc, char **argv);
int bench_w6(int argc, char **argv);

#endif
