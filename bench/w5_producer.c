/* w5_producer.c - W5's producer: one actor that sends the N jobs, up to
 * `chunk` a turn, saturating (each job stamped right before its first try;
 * into a pool a run at a time with shoal_send_many) or paced (job i due at
 * t0 + i/RATE, stamped with its due time; sleeping or yielding while
 * ahead), then drains the pool or sends MSG_DONE to the direct workers.
 * How a refused send waits: w5.c's opening comment.
 */
#include <stdio.h>

#include "shoal/pool.h"
#include "shoal/pull.h"
#include "w5.h"

#define W5_SLEEP_NS 2000000 /* paced: further ahead than this, sleep on a timer */

typedef struct w5_producer_s {
    w5_cfg_t *cfg;
    uint64_t i;         /* next job */
    int64_t held_sent;  /* saturating: sent_i of job i, refused last turn ... */
    int held;           /* ... if set */
    uint64_t done_sent; /* direct: MSG_DONEs sent so far */
    uint64_t retries, ahead_yields, sleeps, room_waits;
    int64_t max_lag;
} w5_producer_t;

static int producer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((w5_producer_t *)state)->cfg = (w5_cfg_t *)args;
    return 0;
}

/* Job i's due time, ns: t0 + i/rate without overflowing i * 1e9 (rate is at
 * most 1e9). */
static int64_t due_ns(const w5_cfg_t *cfg, uint64_t i)
{
    uint64_t r = cfg->rate;
    return cfg->t0 + (int64_t)((i / r) * 1000000000u + (i % r) * 1000000000u / r);
}

static int send_job(shoal_ctx_t *ctx, const w5_cfg_t *cfg, uint64_t i, int64_t sent)
{
    w5_job_t j = {.v = i, .sent = sent};
    shoal_pid_t to = cfg->mode == W5_DIRECT ? cfg->workers[i % cfg->w] : cfg->pool;
    return shoal_send(ctx, to, MSG_WORK, &j, sizeof j);
}

/* The end of work: a pool is drained, direct workers get MSG_DONE (retried
 * on SHOAL_EFULL like a job). 1 when everything is sent, else 0 and *rc says
 * why not. */
static int finish(shoal_ctx_t *ctx, w5_producer_t *s, int *rc)
{
    w5_cfg_t *cfg = s->cfg;
    cfg->retries = s->retries;
    cfg->room_waits = s->room_waits;
    cfg->ahead_yields = s->ahead_yields;
    cfg->sleeps = s->sleeps;
    cfg->max_lag = s->max_lag;
    if (cfg->mode == W5_DIRECT) {
        *rc = bench_send_done(ctx, cfg->workers, cfg->w, &s->done_sent);
        return s->done_sent == cfg->w;
    }
    *rc = shoal_send_priority(ctx, cfg->pool, SHOAL_POOL_DRAIN, NULL, 0);
    if (*rc != SHOAL_OK)
        shoal_panic(ctx, "drain: %s", shoal_strerror(*rc));
    return 1;
}

/* Saturating, into a pool, a run at a time (shoal_send_many): up to chunk
 * jobs, stamped once right before the run is tried (a later job of the run
 * is sent a little after its stamp: its latency is, if anything,
 * overstated); the first refused one keeps its stamp for the next try. */
static int produce_run(shoal_ctx_t *ctx, w5_producer_t *s)
{
    const w5_cfg_t *cfg = s->cfg;
    w5_job_t jobs[256];
    uint64_t m = cfg->n - s->i;
    if (m > cfg->chunk)
        m = cfg->chunk;
    if (m > 256)
        m = 256;
    int64_t now = w5_now_ns();
    for (uint64_t k = 0; k < m; k++)
        jobs[k] = (w5_job_t){.v = s->i + k, .sent = k == 0 && s->held ? s->held_sent : now};
    size_t sent;
    int rc = shoal_send_many(ctx, cfg->pool, MSG_WORK, jobs, sizeof jobs[0], m, &sent);
    s->i += sent;
    s->held = rc != SHOAL_OK;
    if (s->held)
        s->held_sent = jobs[sent].sent;
    return rc;
}

/* Saturating: up to chunk jobs, each stamped right before its first try. */
static int produce_saturating(shoal_ctx_t *ctx, w5_producer_t *s)
{
    const w5_cfg_t *cfg = s->cfg;
    int rc = SHOAL_OK;
    if (cfg->mode != W5_DIRECT && bench_send_many())
        return produce_run(ctx, s);
    for (unsigned budget = cfg->chunk; s->i < cfg->n && budget != 0; budget--) {
        int64_t sent = s->held ? s->held_sent : w5_now_ns();
        rc = send_job(ctx, cfg, s->i, sent);
        if (rc != SHOAL_OK) {
            s->held = 1;
            s->held_sent = sent;
            break;
        }
        s->held = 0;
        s->i++;
    }
    return rc;
}

/* Paced: the jobs that are due, up to chunk of them. 1 if the turn ended
 * because the next job is not due yet (the producer then waited). */
static int produce_paced(shoal_ctx_t *ctx, w5_producer_t *s, int *rc)
{
    const w5_cfg_t *cfg = s->cfg;
    int64_t now = w5_now_ns();
    *rc = SHOAL_OK;
    for (unsigned budget = cfg->chunk; s->i < cfg->n && budget != 0; budget--) {
        int64_t due = due_ns(cfg, s->i);
        if (due > now && due > (now = w5_now_ns())) {
            /* Ahead: sleep on a timer while far ahead, else yield. */
            int64_t ahead = due - now;
            if (ahead > W5_SLEEP_NS) {
                s->sleeps++;
                *rc = shoal_send_after(ctx, shoal_self(ctx), (uint64_t)(ahead / 1000000) - 1,
                                       MSG_CONT, NULL, 0, NULL);
                if (*rc != SHOAL_OK)
                    shoal_panic(ctx, "timer: %s", shoal_strerror(*rc));
            } else {
                s->ahead_yields++;
                *rc = bench_yield(ctx);
                if (*rc != SHOAL_OK)
                    shoal_panic(ctx, "continue: %s", shoal_strerror(*rc));
            }
            return 1;
        }
        if (now - due > s->max_lag)
            s->max_lag = now - due;
        *rc = send_job(ctx, cfg, s->i, due);
        if (*rc != SHOAL_OK)
            break;
        s->i++;
    }
    return 0;
}

static int producer_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w5_producer_t *s = state;
    if (msg->kind != SHOAL_MSG_ROOM && msg->type != MSG_START && msg->type != MSG_CONT)
        return 0;
    int rc;
    if (s->cfg->rate == 0)
        rc = produce_saturating(ctx, s);
    else if (produce_paced(ctx, s, &rc))
        return 0; /* waiting until the next job is due */
    if (s->i == s->cfg->n && finish(ctx, s, &rc)) {
        fprintf(stderr,
                "shoal-bench: W5 producer: %llu retries, %llu ahead-yields, %llu sleeps, "
                "max lag %.1f us\n",
                (unsigned long long)s->retries, (unsigned long long)s->ahead_yields,
                (unsigned long long)s->sleeps, (double)s->max_lag / 1e3);
        shoal_exit(ctx, 0);
        return 0;
    }
    if (rc == SHOAL_EBUSY && shoal_notify_room(ctx, s->cfg->pool) == SHOAL_OK) {
        s->room_waits++; /* SHOAL_MSG_ROOM brings the next turn */
        return 0;
    }
    bench_next_turn(ctx, rc, &s->retries);
    return 0;
}

const shoal_behaviour_t w5_producer_behaviour = {
    .name = "w5.producer",
    .state_size = sizeof(w5_producer_t),
    .init = producer_init,
    .handle_message = producer_handle,
};
