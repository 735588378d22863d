/* w6.c - W6 checkout transactions: `W6 C M K` (bench/peers/README.md is
 * the spec).
 *
 * A checkout pool (shoal/checkout.h) of M members, init = max = M, whose
 * queue holds every consumer. C consumer actors each do K transactions one
 * after another: take a member, call it with v = j*K + k (it answers
 * xs50(v) and counts a use), XOR the answer into acc, give the member
 * back. A take is shoal_try_take (a free member now, on the consumer's
 * thread: poolboy's checkout(Pool, false)) and, when none is free,
 * shoal_take (wait in the pool's queue) -- pool=checkout(try_take+take);
 * SHOAL_BENCH_W6=wait takes with shoal_take only (pool=checkout(take));
 * SHOAL_BENCH_W6=txn does each as one shoal_checkout_call (the pool takes,
 * calls and returns: poolboy's transaction). Each consumer times every
 * take (from its first ask to having the member); the members count their
 * uses in a table read after t1.
 */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "shoal/checkout.h"

typedef struct w6_start_s {
    shoal_pid_t pool, collector;
    uint64_t first, k; /* v runs first .. first + k - 1 */
} w6_start_t;

typedef struct w6_consumer_s {
    w6_start_t st;
    uint64_t done, acc;
    shoal_pid_t member;
    double asked; /* when the take was sent */
} w6_consumer_t;

static int txn_mode;
static int take_wait; /* SHOAL_BENCH_W6=wait: every take with shoal_take, none tried first */
/* Per member, in the order they started, a line each: members on two
 * cores count without sharing one (Go's keep theirs in their own state). */
typedef struct w6_uses_s {
    alignas(64) _Atomic uint64_t n;
} w6_uses_t;
static w6_uses_t *uses;
static _Atomic uint32_t members;
static uint32_t members_max;
/* Every take's wait: consumer j's k-th at j*K + k, so consumers on two
 * cores write their own stretches, not one shared count (Go's consumers
 * keep a histogram each). */
static uint32_t *take_ns;
static uint64_t takes_max;

/* ---- the member --------------------------------------------------------- */

static int member_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)args;
    uint32_t i = atomic_fetch_add_explicit(&members, 1, memory_order_relaxed);
    *(uint32_t *)state = i < members_max ? i : members_max; /* the last: replacements */
    return SHOAL_OK;
}

static int member_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    uint64_t v;
    if (msg->type != MSG_WORK || msg->size != sizeof v)
        return SHOAL_EINVAL;
    memcpy(&v, msg->data, sizeof v);
    _Atomic uint64_t *u = &uses[*(uint32_t *)state].n;
    atomic_store_explicit(u, atomic_load_explicit(u, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    uint64_t r = xs50(v);
    return shoal_reply_set(reply, MSG_WORK, &r, sizeof r);
}

static int member_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK; /* W6 only calls */
}

static const shoal_behaviour_t member_behaviour = {
    .name = "w6.member",
    .state_size = sizeof(uint32_t),
    .init = member_init,
    .handle_message = member_message,
    .handle_call = member_call,
};

/* ---- the consumer --------------------------------------------------------- */

/* The member is the consumer's: the take has ended (its wait timed), the
 * member is called with v. */
static void taken(shoal_ctx_t *ctx, w6_consumer_t *c, shoal_pid_t member, double waited)
{
    uint64_t t = c->st.first + c->done; /* this consumer's own slot */
    if (t < takes_max)
        take_ns[t] = waited * 1e9 > 4e9 ? UINT32_MAX : (uint32_t)(waited * 1e9);
    c->member = member;
    uint64_t v = c->st.first + c->done;
    shoal_ref_t ref;
    int rc = shoal_call(ctx, member, MSG_WORK, &v, sizeof v, 60000, &ref);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "call: %s", shoal_strerror(rc));
}

static void next(shoal_ctx_t *ctx, w6_consumer_t *c)
{
    if (c->done == c->st.k) {
        bench_report_t r = {.count = c->done, .acc = c->acc, .dropped = 0};
        int rc = shoal_send(ctx, c->st.collector, MSG_REPORT, &r, sizeof r);
        if (rc != SHOAL_OK)
            shoal_panic(ctx, "report: %s", shoal_strerror(rc));
        shoal_exit(ctx, SHOAL_OK);
        return;
    }
    uint64_t v = c->st.first + c->done;
    shoal_ref_t ref;
    c->asked = bench_now();
    if (!txn_mode && !take_wait) {
        /* A free member now (poolboy's checkout(Pool, false)); none: wait
         * in the pool's queue. */
        shoal_pid_t member;
        int rc = shoal_try_take(ctx, c->st.pool, &member);
        if (rc == SHOAL_OK) {
            taken(ctx, c, member, bench_now() - c->asked);
            return;
        }
        if (rc != SHOAL_ENOMEMBERS)
            shoal_panic(ctx, "try_take: %s", shoal_strerror(rc));
    }
    int rc = txn_mode ? shoal_checkout_call(ctx, c->st.pool, MSG_WORK, &v, sizeof v, 60000, &ref)
                      : shoal_take(ctx, c->st.pool, 60000, &ref);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "%s: %s", txn_mode ? "transaction" : "take", shoal_strerror(rc));
}

static int consumer_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w6_consumer_t *c = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == MSG_START) {
        memcpy(&c->st, msg->data, sizeof c->st);
        next(ctx, c);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_TIMEOUT)
        shoal_panic(ctx, "no answer in 60 s");
    if (msg->kind != SHOAL_MSG_REPLY)
        return SHOAL_OK;
    if (msg->status != SHOAL_OK)
        shoal_panic(ctx, "answer: %s", shoal_strerror(msg->status));
    if (msg->type == SHOAL_CHECKOUT_MEMBER) { /* the take's: call the member */
        shoal_checkout_member_t g;
        memcpy(&g, msg->data, sizeof g);
        taken(ctx, c, g.member, bench_now() - c->asked);
        return SHOAL_OK;
    }
    uint64_t r;
    memcpy(&r, msg->data, sizeof r);
    c->acc ^= r;
    c->done++;
    if (!txn_mode) {
        int rc = shoal_return(ctx, c->member, SHOAL_RETURN_OK);
        if (rc != SHOAL_OK)
            shoal_panic(ctx, "return: %s", shoal_strerror(rc));
    }
    next(ctx, c);
    return SHOAL_OK;
}

static const shoal_behaviour_t consumer_behaviour = {
    .name = "w6.consumer",
    .state_size = sizeof(w6_consumer_t),
    .handle_message = consumer_handle,
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int bench_w6(int argc, char **argv)
{
    uint64_t nc, m, k;
    if (argc != 3 || bench_parse_u64(argv[0], 1, &nc) != 0 ||
        bench_parse_u64(argv[1], 1, &m) != 0 || bench_parse_u64(argv[2], 1, &k) != 0 ||
        nc > 1u << 20 || m > SHOAL_POOL_MAX_SIZE || k > UINT64_MAX / nc)
        return BENCH_USAGE;
    const char *mode = getenv("SHOAL_BENCH_W6");
    txn_mode = mode != NULL && strcmp(mode, "txn") == 0;
    take_wait = mode != NULL && strcmp(mode, "wait") == 0;
    if (mode != NULL && !txn_mode && !take_wait && strcmp(mode, "take") != 0) {
        fprintf(stderr, "shoal-bench: SHOAL_BENCH_W6 is take, wait or txn, not '%s'\n", mode);
        return BENCH_USAGE;
    }
    bench_t b;
    if (bench_init(&b, "W6") != SHOAL_OK)
        return BENCH_VERIFY;
    members_max = (uint32_t)m;
    uses = aligned_alloc(64, (m + 1) * sizeof *uses);
    if (uses != NULL)
        memset(uses, 0, (m + 1) * sizeof *uses);
    takes_max = txn_mode ? 0 : nc * k;
    take_ns = takes_max ? calloc(takes_max, sizeof *take_ns) : NULL;
    shoal_pid_t *consumers = malloc(nc * sizeof *consumers);
    shoal_pid_t pool, collector;
    int rc = uses == NULL || consumers == NULL || (takes_max && take_ns == NULL)
                 ? SHOAL_ENOMEM
                 : bench_spawn_collector(&b, nc, &collector);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "w6";
    s.kind = SHOAL_POOL_KIND_CHECKOUT;
    s.worker = &member_behaviour;
    s.size = s.max_size = (uint32_t)m;
    s.checkout.queue_max = (uint32_t)(nc < 1u << 20 ? nc : 1u << 20);
    s.checkout.cull_interval_ms = 0;
    if (rc == SHOAL_OK)
        rc = shoal_runtime_spawn_pool(b.rt, &s, &pool);
    for (uint64_t j = 0; j < nc && rc == SHOAL_OK; j++)
        rc = shoal_runtime_spawn(b.rt, &consumer_behaviour, NULL, NULL, &consumers[j]);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W6 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    bench_begin(&b);
    for (uint64_t j = 0; j < nc && rc == SHOAL_OK; j++) {
        w6_start_t st = {pool, collector, j * k, k};
        rc = shoal_runtime_send(b.rt, consumers[j], MSG_START, &st, sizeof st);
    }
    if (rc != SHOAL_OK || bench_wait(&b) != 0) {
        if (rc != SHOAL_OK)
            fprintf(stderr, "shoal-bench: W6 start: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    uint64_t umin = UINT64_MAX, umax = 0, usum = 0;
    for (uint64_t i = 0; i < m; i++) {
        uint64_t u = atomic_load_explicit(&uses[i].n, memory_order_relaxed);
        umin = u < umin ? u : umin;
        umax = u > umax ? u : umax;
        usum += u;
    }
    char p99[32] = "na";
    uint64_t nt = takes_max; /* every consumer did K takes (checked below) */
    if (nt != 0) {
        qsort(take_ns, nt, sizeof *take_ns, cmp_u32);
        snprintf(p99, sizeof p99, "%.2f", take_ns[(nt * 99) / 100] / 1000.0);
    }
    double secs = b.t1 - b.t0;
    char params[96];
    snprintf(params, sizeof params, "C=%llu,M=%llu,K=%llu", (unsigned long long)nc,
             (unsigned long long)m, (unsigned long long)k);
    uint32_t want = bench_expected_check(nc * k);
    bench_result(&b, params, b.count, secs,
                 "check=%llu p99_take_us=%s member_uses_min=%llu member_uses_max=%llu "
                 "pool=checkout(%s)",
                 (unsigned long long)b.acc, p99, (unsigned long long)umin, (unsigned long long)umax,
                 txn_mode    ? "txn"
                 : take_wait ? "take"
                             : "try_take+take");
    int status = BENCH_OK;
    if (b.count != nc * k || (uint32_t)b.acc != want || b.acc > UINT32_MAX || usum != nc * k) {
        fprintf(stderr,
                "shoal-bench: W6 verification failed: %llu transactions (want %llu), check %llu "
                "(want %u), member uses %llu\n",
                (unsigned long long)b.count, (unsigned long long)(nc * k),
                (unsigned long long)b.acc, want, (unsigned long long)usum);
        status = BENCH_VERIFY;
    }
    bench_finish(&b, status);
}
