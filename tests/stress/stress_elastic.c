/* stress_elastic.c - elastic pools under churn (core/pool/elastic.c,
 * autoscale.c): senders on four threads and two producer actors into a
 * pool that grows for them (lazy grow: the grow list), idles its workers
 * away within milliseconds, autoscales, and has its bounds and elastic
 * settings changed under it by a chaos thread; some senders wait for room
 * (send_wait, bounded by max_waiting). Each message carries a unique id; a
 * sender never retries, so each id is accepted (SHOAL_OK) or refused
 * (SHOAL_EBUSY, SHOAL_EOVERLOAD, SHOAL_ETIMEDOUT from send_wait). Checked:
 *   - every accepted id runs exactly once, no refused id ever runs;
 *   - the pool's counters once traffic stopped: forwarded == accepted,
 *     handled == accepted, dropped == 0, unhandled == the refusals the
 *     senders saw as SHOAL_EBUSY;
 *   - a last round ends with a drain while the senders still send: every
 *     accepted id ran once or was counted dropped, never both, and the
 *     pool's forwarded == handled + dropped (the grow list is swept).
 * For forward and pull pools. Sizes scale with SHOAL_STRESS_SCALE (a
 * factor, default 1; sanitizer builds default to 0.1).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/pool.h"
#include "support.h"

#define THREADS 4
#define ACTORS 2
#define SENDERS (THREADS + ACTORS)
#define MAXW 6u
#define WAIT_S 20.0
#define TMO 30000u

enum { M_WORK = 1, M_GO = 2 };

static uint32_t per_sender; /* ids each sender sends */
static unsigned char *runs, *accepted;
static atomic_int busy_refusals, other_refusals, bad_result;
static atomic_int handled_count;

typedef struct {
    uint32_t id;
    uint32_t spin;
} job_t;

static void spin_us(unsigned us)
{
    double end = shoal_test_now() + us / 1e6;
    while (shoal_test_now() < end)
        ;
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    job_t j;
    if (msg->type != M_WORK || msg->size != sizeof j)
        return 0;
    memcpy(&j, msg->data, sizeof j);
    if (j.spin)
        spin_us(j.spin);
    __atomic_fetch_add(&runs[j.id], 1, __ATOMIC_RELAXED);
    atomic_fetch_add(&handled_count, 1);
    return 0;
}

static const shoal_behaviour_t wk = {.name = "wk", .handle_message = wk_message};

static void record(uint32_t id, int rc)
{
    if (rc == SHOAL_OK)
        accepted[id] = 1;
    else if (rc == SHOAL_EBUSY)
        atomic_fetch_add(&busy_refusals, 1);
    else if (rc == SHOAL_EOVERLOAD || rc == SHOAL_ETIMEDOUT || rc == SHOAL_ENOPROC)
        atomic_fetch_add(&other_refusals, 1); /* ENOPROC: only once the drain has begun */
    else
        atomic_fetch_add(&bad_result, 1);
}

static job_t job_of(uint32_t id) { return (job_t){id, id % 7 == 0 ? 30u : 0u}; }

/* ---- senders ---------------------------------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    uint32_t first;
    int waits; /* one in 8 sends through send_wait */
} sender_t;

static void *thread_main(void *arg)
{
    sender_t *s = arg;
    for (uint32_t k = 0; k < per_sender; k++) {
        uint32_t id = s->first + k;
        job_t j = job_of(id);
        int rc = s->waits && k % 8 == 0
                     ? shoal_runtime_send_wait(s->rt, s->pool, M_WORK, &j, sizeof j, 5)
                     : shoal_runtime_send(s->rt, s->pool, M_WORK, &j, sizeof j);
        record(id, rc);
        if (k % 256 == 255) { /* pauses: workers idle away, and come back */
            struct timespec ts = {0, 30000000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

typedef struct {
    shoal_pid_t pool;
    uint32_t first, next;
} producer_t;

static atomic_int producers_done;

static int producer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    *(producer_t *)state = *(const producer_t *)args;
    return 0;
}

static int producer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    producer_t *p = state;
    if (msg->type != M_GO)
        return 0;
    for (int b = 0; b < 32 && p->next < per_sender; b++, p->next++) {
        uint32_t id = p->first + p->next;
        job_t j = job_of(id);
        record(id, shoal_send(ctx, p->pool, M_WORK, &j, sizeof j));
    }
    if (p->next < per_sender)
        return shoal_send(ctx, shoal_self(ctx), M_GO, NULL, 0) == SHOAL_OK ? 0 : SHOAL_EFAILED;
    atomic_fetch_add(&producers_done, 1);
    return 0;
}

static const shoal_behaviour_t producer = {.name = "producer",
                                           .state_size = sizeof(producer_t),
                                           .init = producer_init,
                                           .handle_message = producer_message};

/* ---- chaos ------------------------------------------------------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    atomic_int *stop;
    shoal_pool_spec_t spec;
} chaos_t;

static void *chaos_main(void *arg)
{
    chaos_t *c = arg;
    unsigned k = 0;
    while (!atomic_load(c->stop)) {
        shoal_pool_elastic_t el = {c->spec.idle_timeout_ms, c->spec.max_waiting, c->spec.autoscale};
        switch (k++ % 5) {
        case 0:
            shoal_pool_set_bounds(c->rt, c->pool, k % 3, 1 + k % MAXW, TMO);
            break;
        case 1:
            el.idle_timeout_ms = k % 2 ? 0 : 10; /* lazy grow off, then on */
            shoal_pool_set_elastic(c->rt, c->pool, &el, TMO);
            break;
        case 2: /* off now and then (on: readings start afresh) */
            el.autoscale.when =
                (k / 5) % 8 == 3 ? 0 : SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_REFUSED;
            shoal_pool_set_elastic(c->rt, c->pool, &el, TMO);
            break;
        case 3: /* a scale holds autoscale off for its cooldown: now and then */
            if ((k / 5) % 4 == 0)
                shoal_pool_set_size(c->rt, c->pool, k % (MAXW + 1), TMO);
            break;
        default:
            shoal_pool_set_bounds(c->rt, c->pool, 0, MAXW, TMO);
            shoal_pool_set_elastic(c->rt, c->pool, &el, TMO);
            break;
        }
        struct timespec ts = {0, 15000000}; /* time for the pool to act on each */
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* ---- a round ----------------------------------------------------------------- */

static void round_case(uint32_t kind, bool drain_at_end)
{
    uint32_t n = per_sender * SENDERS;
    memset(runs, 0, n);
    memset(accepted, 0, n);
    atomic_store(&busy_refusals, 0);
    atomic_store(&other_refusals, 0);
    atomic_store(&bad_result, 0);
    atomic_store(&handled_count, 0);
    atomic_store(&producers_done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "elastic";
    s.worker = &wk;
    s.kind = kind;
    s.size = 2;
    s.min_size = 0;
    s.max_size = MAXW;
    s.mailbox = 2;
    s.buffer = 4;
    s.restart.max = 1000;
    s.restart.within_ms = 1000;
    s.idle_timeout_ms = 10;
    s.max_waiting = 1; /* two threads wait now and then: one is refused */
    s.autoscale.when = SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_REFUSED;
    s.autoscale.up_for_ms = 20;
    s.autoscale.down_idle_ms = 50;
    s.autoscale.cooldown_ms = 20;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    shoal_pool_t *rec = shoal__pool_find(rt, pool); /* its counts after it has ended */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    atomic_int stop = 0;
    chaos_t chaos = {rt, pool, &stop, s};
    pthread_t tc, ts[THREADS];
    sender_t snd[THREADS];
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tc, NULL, chaos_main, &chaos), 0);
    for (int i = 0; i < THREADS; i++) {
        snd[i] = (sender_t){rt, pool, (uint32_t)i * per_sender, i % 2};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&ts[i], NULL, thread_main, &snd[i]), 0);
    }
    static producer_t args[ACTORS]; /* valid until each init has run */
    for (int i = 0; i < ACTORS; i++) {
        args[i] = (producer_t){pool, (uint32_t)(THREADS + i) * per_sender, 0};
        shoal_pid_t pp;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &producer, &args[i], NULL, &pp), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pp, M_GO, NULL, 0), SHOAL_OK);
    }
    if (drain_at_end) { /* while they still send */
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled_count) > (int)(n / 4), WAIT_S);
        atomic_store(&stop, 1);
        pthread_join(tc, NULL);
        CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, TMO), SHOAL_OK);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(ts[i], NULL);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&producers_done) == ACTORS, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&producers_done), ACTORS);
    if (!drain_at_end) {
        atomic_store(&stop, 1);
        pthread_join(tc, NULL);
    }
    CU_ASSERT_EQUAL(atomic_load(&bad_result), 0);
    uint32_t n_ok = 0;
    for (uint32_t id = 0; id < n; id++)
        n_ok += accepted[id];
    if (!drain_at_end) {
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled_count) == (int)n_ok, WAIT_S);
        shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
        if (atomic_load(&handled_count) != (int)n_ok) /* where are the rest? */
            printf("\n    stuck: accepted %u, handled %d; pool: live %u target %u retiring %u "
                   "in flight %llu orphans %llu grow list %llu lazy %u max %u",
                   n_ok, atomic_load(&handled_count), st.pool_size, st.target_size, st.retiring,
                   (unsigned long long)st.queue_depth,
                   (unsigned long long)atomic_load(&rec->pub_orphans),
                   (unsigned long long)atomic_load(&rec->grow_msgs), atomic_load(&rec->lazy),
                   atomic_load(&rec->lazy_max));
        CU_ASSERT_EQUAL(st.messages_forwarded, n_ok);
        SHOAL_TEST_WAIT_UNTIL(shoal_test_pool_stats(rt, pool).messages_handled == n_ok, WAIT_S);
        st = shoal_test_pool_stats(rt, pool);
        CU_ASSERT_EQUAL(st.messages_handled, n_ok);
        CU_ASSERT_EQUAL(st.messages_dropped, 0);
        /* A send_wait that got in after a refusal counted one too. */
        CU_ASSERT(st.messages_unhandled >= (uint64_t)atomic_load(&busy_refusals));
        uint32_t wrong = 0;
        for (uint32_t id = 0; id < n; id++)
            wrong += runs[id] != accepted[id];
        CU_ASSERT_EQUAL(wrong, 0);
        CU_ASSERT(n_ok > n / 20); /* enough got in for the checks to mean something */

        printf("\n    %s: %u of %u accepted, %llu lazily started, %llu expired, %llu+%llu "
               "autoscale decisions, %llu waits refused ",
               kind == SHOAL_POOL_KIND_PULL ? "pull" : "forward", n_ok, n,
               (unsigned long long)st.lazy_grown, (unsigned long long)st.expired,
               (unsigned long long)st.autoscale_ups, (unsigned long long)st.autoscale_downs,
               (unsigned long long)st.waiting_refused);
    }
    if (drain_at_end) {
        /* Ran once or counted dropped, never both, never a refused one. */
        SHOAL_TEST_WAIT_UNTIL(shoal__pool_is_quiet(rec), WAIT_S);
        CU_ASSERT(shoal__pool_is_quiet(rec));
        shoal_pool_stats_t st;
        shoal__pool_peek(rec, &st);
        uint32_t ran = 0, twice = 0, refused_ran = 0;
        for (uint32_t id = 0; id < n; id++) {
            ran += runs[id] == 1 && accepted[id];
            twice += runs[id] > 1;
            refused_ran += runs[id] != 0 && !accepted[id];
        }
        CU_ASSERT_EQUAL(twice, 0);
        CU_ASSERT_EQUAL(refused_ran, 0);
        CU_ASSERT_EQUAL(st.messages_forwarded, n_ok);
        CU_ASSERT_EQUAL(st.messages_handled, ran);
        CU_ASSERT_EQUAL(st.messages_handled + st.messages_dropped, n_ok);
        printf("\n    %s, drained: %u accepted, %u ran, %llu dropped ",
               kind == SHOAL_POOL_KIND_PULL ? "pull" : "forward", n_ok, ran,
               (unsigned long long)st.messages_dropped);
    }
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

static void forward_churn(void) { round_case(SHOAL_POOL_KIND_FORWARD, false); }
static void pull_churn(void) { round_case(SHOAL_POOL_KIND_PULL, false); }
static void forward_drained(void) { round_case(SHOAL_POOL_KIND_FORWARD, true); }
static void pull_drained(void) { round_case(SHOAL_POOL_KIND_PULL, true); }

int main(void)
{
    per_sender = (uint32_t)(20000 * shoal_test_stress_scale(0.1));
    if (per_sender < 1000)
        per_sender = 1000;
    runs = calloc((size_t)per_sender * SENDERS, 1);
    accepted = calloc((size_t)per_sender * SENDERS, 1);
    static const shoal_test_case_t cases[] = {
        {"forward: lazy grow, expiry, autoscale and bounds under churn", forward_churn},
        {"pull: lazy grow, expiry, autoscale and bounds under churn", pull_churn},
        {"forward: drained while senders send", forward_drained},
        {"pull: drained while senders send", pull_drained},
        {NULL, NULL},
    };
    int rc = shoal_test_run("stress_elastic", cases);
    free(runs);
    free(accepted);
    return rc;
}
