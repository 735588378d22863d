/* scale.c - SCALE BASE FACTOR SECS: an autoscaled pool under a step in load
 * (the elastic-pool seed's autoscale step; recorded, not asserted).
 *
 * Workers sleep SHOAL_BENCH_SVC_US (default 5000) per message -- an
 * I/O-bound handler, the load autoscale is for (a CPU-bound one is bound
 * by the cores, not the pool's size) -- on a runtime of
 * SHOAL_THREADS (default 128) threads, so the pool's size, not the
 * threads, bounds how many wait at once. A paced producer thread sends
 * BASE messages a second for 3 s, BASE x FACTOR for SECS, then BASE again
 * until the pool has shrunk back (or 60 s). The pool: forward, mailbox
 * 16, autoscale { min 1, max 256, up: busy > 80% or refused > 0 for 1s,
 * down: idle 5s, step 4, cooldown 2s }.
 *
 * One RESULT line: msgs = messages accepted in the whole run, secs = the
 * run; then needed (the size the step needs at 60% busy: ceil(BASE x
 * FACTOR x svc / 0.6)), reach_s (from the step until the target first
 * reached needed; "na" if never), peak (the largest target), ups, downs
 * (decisions), decisions_in_step (during the step, after it was reached),
 * wait_p99_ms_peak (the largest queue wait p99 autoscale read in a tick),
 * refused (sends refused in all), final (the target at the end), back_s
 * (from the end of the step until the target was back at the size BASE
 * needs, ceil(BASE x svc / 0.6): the run ends there, or 60 s after the
 * step).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "shoal/pool.h"

static unsigned svc_us;

static int sleeper_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    struct timespec ts = {(time_t)(svc_us / 1000000u), (long)(svc_us % 1000000u) * 1000};
    nanosleep(&ts, NULL);
    return 0;
}

static const shoal_behaviour_t sleeper = {.name = "sleeper", .handle_message = sleeper_message};

typedef struct phase_s {
    double until; /* run time (s) this rate lasts to */
    uint64_t rate;
} phase_t;

typedef struct run_s {
    uint64_t sent, refused;
    double step_at, step_end; /* run time */
    double reach_s, back_s;
    uint32_t base_needed, peak, needed;
    uint64_t wait_peak_us;
    uint64_t decisions_in_step;
} run_t;

static void nap_ms(unsigned ms)
{
    struct timespec ts = {0, (long)ms * 1000000};
    nanosleep(&ts, NULL);
}

int bench_scale(int argc, char **argv)
{
    uint64_t base, factor, secs;
    if (argc != 3 || bench_parse_u64(argv[0], 1, &base) || bench_parse_u64(argv[1], 1, &factor) ||
        bench_parse_u64(argv[2], 1, &secs))
        return BENCH_USAGE;
    svc_us = (unsigned)bench_env_ulong("SHOAL_BENCH_SVC_US", 5000);
    if (getenv("SHOAL_THREADS") == NULL)
        setenv("SHOAL_THREADS", "128", 0);
    bench_t b;
    if (bench_init(&b, "SCALE") != 0)
        return BENCH_UNSUPPORTED;
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "scaled";
    s.worker = &sleeper;
    s.size = 1;
    s.min_size = 1;
    s.max_size = 256;
    s.mailbox = 16;
    s.autoscale.when = SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_REFUSED;
    s.autoscale.up_for_ms = 1000;
    s.autoscale.down_idle_ms = 5000;
    s.autoscale.down_step = 4;
    s.autoscale.cooldown_ms = 2000;
    shoal_pid_t pool;
    int rc = shoal_runtime_spawn_pool(b.rt, &s, &pool);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: SCALE: the pool: %s\n", shoal_strerror(rc));
        return BENCH_UNSUPPORTED;
    }
    run_t r = {0};
    r.base_needed = (uint32_t)((base * svc_us + 600000 - 1) / 600000);
    r.step_at = 3.0;
    r.step_end = 3.0 + (double)secs;
    r.reach_s = r.back_s = -1;
    /* The size the step needs at the target busy ratio (midway between
     * 80% and 40%): messages a second x seconds a message / 0.6. */
    r.needed = (uint32_t)((base * factor * svc_us + 600000 - 1) / 600000);
    phase_t ph[3] = {{r.step_at, base}, {r.step_end, base * factor}, {r.step_end + 60.0, base}};
    bench_begin(&b);
    double t0 = bench_now(), phase_sent = 0, next_look = 0;
    unsigned p = 0, cur = 0;
    uint64_t ups_at_reach = 0;
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    for (;;) {
        double now = bench_now() - t0;
        while (p < 3 && now >= ph[p].until)
            p++;
        if (p == 3)
            break;
        /* Paced: what the rate owes since the phase began, in 1 ms steps. */
        if (p != cur) {
            cur = p;
            phase_sent = 0;
        }
        double owed = (double)ph[p].rate * (now - (p == 0 ? 0 : ph[p - 1].until));
        for (; phase_sent < owed; phase_sent += 1) {
            uint64_t v = 1;
            if (shoal_runtime_send(b.rt, pool, MSG_WORK, &v, sizeof v) == SHOAL_OK)
                r.sent++;
            else
                r.refused++;
        }
        if (now >= next_look) { /* the pool, 20 times a second */
            next_look = now + 0.05;
            if (shoal_pool_stats(b.rt, pool, &st, 1000) == SHOAL_OK) {
                if (st.target_size > r.peak)
                    r.peak = st.target_size;
                if (st.wait_p99_us > r.wait_peak_us)
                    r.wait_peak_us = st.wait_p99_us;
                if (r.reach_s < 0 && now >= r.step_at && st.target_size >= r.needed) {
                    r.reach_s = now - r.step_at;
                    ups_at_reach = st.autoscale_ups;
                }
                if (now >= r.step_at && now < r.step_end && r.reach_s >= 0)
                    r.decisions_in_step = st.autoscale_ups - ups_at_reach + st.autoscale_downs;
                if (r.back_s < 0 && now >= r.step_end && st.target_size <= r.base_needed) {
                    r.back_s = now - r.step_end;
                    break;
                }
            }
        }
        nap_ms(1);
    }
    double run = bench_now() - t0;
    bench_end(&b);
    shoal_pool_stats(b.rt, pool, &st, 1000);
    char params[128], reach[32], back[32];
    snprintf(params, sizeof params, "base=%llu,factor=%llu,secs=%llu,svc_us=%u",
             (unsigned long long)base, (unsigned long long)factor, (unsigned long long)secs,
             svc_us);
    if (r.reach_s >= 0)
        snprintf(reach, sizeof reach, "%.2f", r.reach_s);
    else
        snprintf(reach, sizeof reach, "na");
    if (r.back_s >= 0)
        snprintf(back, sizeof back, "%.1f", r.back_s);
    else
        snprintf(back, sizeof back, "na");
    bench_result(
        &b, params, r.sent, run,
        "needed=%u base_needed=%u reach_s=%s peak=%u ups=%llu downs=%llu decisions_in_step=%llu "
        "wait_p99_ms_peak=%.1f refused=%llu final=%u back_s=%s",
        r.needed, r.base_needed, reach, r.peak, (unsigned long long)st.autoscale_ups,
        (unsigned long long)st.autoscale_downs, (unsigned long long)r.decisions_in_step,
        (double)r.wait_peak_us / 1e3, (unsigned long long)r.refused, st.target_size, back);
    bench_finish(&b, BENCH_OK);
}
