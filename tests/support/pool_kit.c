/* pool_kit.c - the forwarding pool suites' worker, manager and helpers
 * (pool_kit.h). */
#include "pool_kit.h"

#include <stdio.h>
#include <string.h>

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PK_WAIT_S)
#define THREADS 6u

/* ---- the worker ------------------------------------------------------------- */

_Atomic shoal_pid_t pk_owner[PK_MAXSEQ], pk_from_of[PK_MAXSEQ];
atomic_int pk_seen[PK_MAXSEQ];
atomic_int pk_done, pk_entered, pk_gate, pk_other;

static void reset(void)
{
    for (unsigned i = 0; i < PK_MAXSEQ; i++) {
        atomic_store(&pk_owner[i], SHOAL_PID_NONE);
        atomic_store(&pk_from_of[i], SHOAL_PID_NONE);
        atomic_store(&pk_seen[i], 0);
    }
    atomic_store(&pk_done, 0);
    atomic_store(&pk_entered, 0);
    atomic_store(&pk_gate, 0);
    atomic_store(&pk_other, 0);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    pk_job_t j;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != T_JOB || msg->size != sizeof j) {
        atomic_fetch_add(&pk_other, 1);
        return 0;
    }
    memcpy(&j, msg->data, sizeof j);
    if (j.seq < PK_MAXSEQ) {
        atomic_store(&pk_owner[j.seq], shoal_self(ctx));
        atomic_store(&pk_from_of[j.seq], msg->from);
        atomic_fetch_add(&pk_seen[j.seq], 1);
    }
    if (j.act & A_BLOCK) { /* until the gate passes the job's level: seq >> 16 */
        atomic_fetch_add(&pk_entered, 1);
        double end = shoal_test_now() + PK_WAIT_S;
        while (atomic_load(&pk_gate) <= (int)(j.seq >> 16) && shoal_test_now() < end)
            shoal_test_nap();
    }
    if (j.act & A_PANIC)
        shoal_panic(ctx, "test panic on job %u", (unsigned)j.seq);
    if (j.act & A_FAIL)
        return 7;
    atomic_fetch_add(&pk_done, 1);
    return 0;
}

static int wk_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "test panic in a call");
    if (msg->type != T_WHO) {
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return 0;
    }
    pk_who_t w = {shoal_self(ctx), msg->from, msg->ref};
    return shoal_reply_set(reply, T_WHO, &w, sizeof w);
}

static const shoal_behaviour_t wk = {
    .name = "wk", .handle_message = wk_message, .handle_call = wk_call};

/* ---- the manager behaviour ---------------------------------------------- */

typedef struct {
    int base, casts;
} mgr_state_t;

atomic_int pk_mgr_inits, pk_mgr_casts, pk_mgr_terms, pk_mgr_reason, pk_mgr_bad, pk_mgr_init_rc;
_Atomic shoal_pid_t pk_mgr_self;
const int pk_mgr_base = 40;

static void mgr_reset(void)
{
    atomic_store(&pk_mgr_inits, 0);
    atomic_store(&pk_mgr_casts, 0);
    atomic_store(&pk_mgr_terms, 0);
    atomic_store(&pk_mgr_reason, PK_PENDING);
    atomic_store(&pk_mgr_bad, 0);
    atomic_store(&pk_mgr_init_rc, SHOAL_OK);
    atomic_store(&pk_mgr_self, SHOAL_PID_NONE);
}

static int mgr_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    ((mgr_state_t *)state)->base = *(const int *)args;
    atomic_store(&pk_mgr_self, shoal_self(ctx));
    atomic_fetch_add(&pk_mgr_inits, 1);
    return atomic_load(&pk_mgr_init_rc);
}

static int mgr_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_NOTE && (msg->flags & SHOAL_MSG_PRIORITY)) {
        ((mgr_state_t *)state)->casts++;
        atomic_fetch_add(&pk_mgr_casts, 1);
    } else {
        atomic_fetch_add(&pk_mgr_bad, 1);
    }
    return 0;
}

static int mgr_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    int v;
    if (msg->type != T_ASK || msg->size != sizeof v || !(msg->flags & SHOAL_MSG_PRIORITY)) {
        shoal_reply_error(reply, SHOAL_EINVAL);
        return 0;
    }
    memcpy(&v, msg->data, sizeof v);
    v += ((mgr_state_t *)state)->base;
    return shoal_reply_set(reply, T_ASK + 100, &v, sizeof v);
}

static int mgr_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    shoal_inspect_uint(out, "manager_casts", (uint64_t)((mgr_state_t *)state)->casts);
    shoal_inspect_str(out, "manager_note", "hi");
    return 0;
}

static void mgr_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    atomic_store(&pk_mgr_reason, reason);
    atomic_fetch_add(&pk_mgr_terms, 1);
}

const shoal_behaviour_t pk_mgr = {.name = "mgr",
                                  .state_size = sizeof(mgr_state_t),
                                  .init = mgr_init,
                                  .handle_message = mgr_message,
                                  .handle_call = mgr_call,
                                  .terminate = mgr_terminate,
                                  .inspect = mgr_inspect};

/* ---- helpers ---------------------------------------------------------------- */

/* Fresh records, and a runtime that keeps its log for the test. */
shoal_runtime_t *pk_begin(void)
{
    reset();
    mgr_reset();
    return shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
}

void pk_spec_of(shoal_pool_spec_t *s, const char *name, uint32_t size, uint32_t mailbox)
{
    shoal_pool_spec_init(s);
    s->name = name;
    s->worker = &wk;
    s->size = size;
    s->mailbox = mailbox;
}

shoal_pid_t pk_spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, s, &p), SHOAL_OK);
    return p;
}

/* A pool of `size` wk workers. */
shoal_pid_t pk_wk_pool(shoal_runtime_t *rt, const char *name, uint32_t size, uint32_t mailbox)
{
    shoal_pool_spec_t s;
    pk_spec_of(&s, name, size, mailbox);
    return pk_spawn(rt, &s);
}

/* A pool of `size` pools of inner's spec. */
void pk_nest(shoal_pool_spec_t *s, const char *name, uint32_t size, const shoal_pool_spec_t *inner)
{
    pk_spec_of(s, name, size, 8);
    s->worker = NULL;
    s->worker_pool = inner;
}

int pk_job(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t seq, uint32_t act)
{
    pk_job_t j = {seq, act};
    return shoal_runtime_send(rt, pool, T_JOB, &j, sizeof j);
}

/* Sends a job that blocks its worker until the gate opens, and waits until
 * a worker is in it. */
void pk_block(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t seq, uint32_t act)
{
    int before = atomic_load(&pk_entered);
    CU_ASSERT_EQUAL(pk_job(rt, pool, seq, A_BLOCK | act), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pk_entered) == before + 1);
    CU_ASSERT_EQUAL(atomic_load(&pk_entered), before + 1);
}

/* Sends A_OK jobs from *seq on until one is refused; returns how many were
 * accepted, *rc the refusal. The refused seq is skipped. */
uint32_t pk_fill_up(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t *seq, int *rc)
{
    uint32_t n = 0;
    while ((*rc = pk_job(rt, pool, (*seq)++, A_OK)) == SHOAL_OK && n < 100)
        n++;
    return n;
}

int pk_stats_rc;

shoal_pool_stats_t pk_st(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_pool_stats_t s;
    memset(&s, 0, sizeof s);
    s.state = 99;
    pk_stats_rc = shoal_pool_stats(rt, pool, &s, PK_TMO);
    return s;
}

/* Waits until the pool counts exactly `handled` and `failed` and nothing is
 * queued (a worker publishes its pop count lazily, mailbox.h). */
shoal_pool_stats_t pk_settle(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t handled,
                             uint64_t failed)
{
    shoal_pool_stats_t s;
    PK_WAIT_STATS(s, rt, pool,
                  s.messages_handled == handled && s.messages_failed == failed &&
                      s.queue_depth == 0);
    CU_ASSERT_EQUAL(pk_stats_rc, SHOAL_OK);
    return s;
}

/* Waits until exactly `live` actors live: the inner pools of a nested pool
 * start their workers after shoal_runtime_spawn_pool has returned. */
bool pk_ready(shoal_runtime_t *rt, uint64_t live)
{
    WAIT_UNTIL(shoal_test_stats(rt).actors_live == live);
    return shoal_test_stats(rt).actors_live == live;
}

bool pk_all_ended(shoal_runtime_t *rt) { return pk_ready(rt, 0); }

int pk_inspect(shoal_runtime_t *rt, shoal_pid_t pid, char *out, size_t cap)
{
    shoal_answer_t a;
    out[0] = '\0';
    int rc = shoal_runtime_inspect(rt, pid, PK_TMO, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && a.data != NULL)
        snprintf(out, cap, "%s", (const char *)a.data);
    shoal_answer_release(&a);
    return rc;
}

void pk_has(const char *json, const char *part)
{
    CU_ASSERT_PTR_NOT_NULL(strstr(json, part));
    if (strstr(json, part) == NULL)
        fprintf(stderr, "\n    in:      %s\n    missing: %s\n", json, part);
}

unsigned pk_owned_by(shoal_pid_t pid, uint32_t from, uint32_t to)
{
    unsigned n = 0;
    for (uint32_t i = from; i < to; i++)
        n += atomic_load(&pk_owner[i]) == pid;
    return n;
}

/* Every seq in [from, to) was handled exactly `times` times. */
void pk_seen_all(uint32_t from, uint32_t to, int times)
{
    int bad = 0;
    for (uint32_t i = from; i < to; i++)
        bad += atomic_load(&pk_seen[i]) != times;
    CU_ASSERT_EQUAL(bad, 0);
}

static void *drain_main(void *arg)
{
    pk_drainer_t *d = arg;
    atomic_store(&d->rc, shoal_pool_drain(d->rt, d->pool, 3 * PK_TMO));
    return NULL;
}

void pk_drainer_start(pk_drainer_t *d, shoal_runtime_t *rt, shoal_pid_t pool)
{
    d->rt = rt;
    d->pool = pool;
    atomic_store(&d->rc, PK_PENDING);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&d->t, NULL, drain_main, d), 0);
}

void pk_spec_restart(shoal_pool_spec_t *s, uint32_t max, uint64_t within, uint64_t backoff)
{
    s->restart.max = max;
    s->restart.within_ms = within;
    s->restart.backoff_ms = backoff;
}
