/* test_resize_checkout.c - the Resize contract (test_resize_{capacity,calls,work}.c) for
 * checkout pools, whose size is their init and max (core/pool/checkout.c:
 * set_locked, by shoal_pool_set_checkout):
 *   1. members in use are never more than the max in force, a lowered one
 *      from the first member given out after the lowering;
 *   3. an update is idempotent: a second identical one changes no member
 *      and no counter;
 *   4. updates are linearizable: each call's max is its own, and the reads
 *      of the pool after each call order the calls with no cycle;
 *   2. a transaction runs once to completion or is refused at once, while
 *      the max moves;
 *   5. once a drain has returned, nothing new runs;
 * and a lowered max touches no member in use until it is returned (then it
 * ends, counted culled).
 *
 * The test's own threads never call CUnit: they record into atomics and
 * arrays; the test thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "checkout_kit.h"

#define TMO 10000u
#define RESIZERS 8
#define ROUNDS 40
#define NCALLS (RESIZERS * ROUNDS)

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    unsigned t;
    const shoal_pool_checkout_t *co; /* the pool's settings */
    int rc[ROUNDS];
    uint32_t seen[ROUNDS]; /* the max read after call i */
} resizer_t;

/* ---- checkout pools: 1, 3, 4, and a lowered max --------------------------------------- */

/* 1. Takers on threads race a max lowered to CO_LOW and raised to CO_HIGH
 * again, CO_CYCLES times, each phase until CO_GRANTS members were given out
 * in it. A taker counts itself in co_held from after its take returned to
 * before it gives the member back: never more than the members in use. A
 * take begun once a lowering had returned (co_phase odd, read before it)
 * and counted before the next raise began (co_phase read again after) was
 * given out under max CO_LOW: the pool gives a member out only while no
 * more than max are alive, so from then on at most CO_LOW are in use --
 * members taken before the lowering and still out included. Any other
 * take: at most CO_HIGH. */
#define CO_TAKERS 6
#define CO_HIGH 4
#define CO_LOW 2
#define CO_CYCLES 20
#define CO_GRANTS 20

static atomic_int co_phase; /* even: max CO_HIGH set or being set; odd: CO_LOW set */
static atomic_int co_held, co_over, co_grants[2]; /* members given out: [0] high, [1] low */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    atomic_int *stop;
    unsigned taken, refused, bad;
} co_taker_t;

static void *co_taker_main(void *arg)
{
    co_taker_t *k = arg;
    while (!atomic_load(k->stop)) {
        int ph = atomic_load(&co_phase);
        shoal_pid_t m;
        int rc = shoal_runtime_take(k->rt, k->pool, 50, &m);
        if (rc != SHOAL_OK) {
            k->refused++;
            k->bad += rc != SHOAL_ENOMEMBERS && rc != SHOAL_ETIMEDOUT;
            shoal_test_nap();
            continue;
        }
        int n = atomic_fetch_add(&co_held, 1) + 1;
        int low = (ph & 1) && atomic_load(&co_phase) == ph;
        if (n > (low ? CO_LOW : CO_HIGH))
            atomic_fetch_add(&co_over, 1);
        atomic_fetch_add(&co_grants[low], 1);
        shoal_test_nap();
        atomic_fetch_sub(&co_held, 1);
        k->bad += shoal_runtime_return(k->rt, k->pool, m, SHOAL_RETURN_OK) != SHOAL_OK;
        k->taken++;
    }
    return NULL;
}

/* Whether n more members were given out in the phase (0 high, 1 low). */
static bool co_phase_ran(int low, int n)
{
    int until = atomic_load(&co_grants[low]) + n;
    CK_WAIT_UNTIL(atomic_load(&co_grants[low]) >= until);
    return atomic_load(&co_grants[low]) >= until;
}

static void checkout_capacity(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    atomic_store(&co_phase, 0);
    atomic_store(&co_held, 0);
    atomic_store(&co_over, 0);
    atomic_store(&co_grants[0], 0);
    atomic_store(&co_grants[1], 0);
    shoal_pool_spec_t s = ck_spec(0, CO_HIGH, CO_TAKERS);
    shoal_pid_t p = ck_start_spec(rt, &s);
    shoal_pool_checkout_update_t low = {0, CO_LOW, s.checkout}, high = {0, CO_HIGH, s.checkout};
    atomic_int stop = 0;
    co_taker_t k[CO_TAKERS];
    pthread_t t[CO_TAKERS];
    for (unsigned i = 0; i < CO_TAKERS; i++) {
        k[i] = (co_taker_t){.rt = rt, .pool = p, .stop = &stop};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, co_taker_main, &k[i]), 0);
    }
    unsigned short_phases = 0, bad_sets = 0;
    for (unsigned c = 0; c < CO_CYCLES; c++) {
        short_phases += !co_phase_ran(0, CO_GRANTS);
        bad_sets += shoal_pool_set_checkout(rt, p, &low, TMO) != SHOAL_OK;
        atomic_fetch_add(&co_phase, 1);
        short_phases += !co_phase_ran(1, CO_GRANTS);
        atomic_fetch_add(&co_phase, 1);
        bad_sets += shoal_pool_set_checkout(rt, p, &high, TMO) != SHOAL_OK;
    }
    atomic_store(&stop, 1);
    unsigned taken = 0, refused = 0, bad = 0;
    for (unsigned i = 0; i < CO_TAKERS; i++) {
        pthread_join(t[i], NULL);
        taken += k[i].taken;
        refused += k[i].refused;
        bad += k[i].bad;
    }
    CU_ASSERT_EQUAL(atomic_load(&co_over), 0); /* never above the max in force */
    CU_ASSERT_EQUAL(short_phases, 0);          /* each phase gave out CO_GRANTS under its max */
    CU_ASSERT_EQUAL(bad_sets, 0);
    CU_ASSERT_EQUAL(bad, 0); /* takes given or refused, returns taken back */
    /* Every member came back; the pool counted each take, return and refusal. */
    shoal_pool_stats_t st = ck_stats(rt, p);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT(st.pool_size <= CO_HIGH);
    CU_ASSERT_EQUAL(st.takes, taken);
    CU_ASSERT_EQUAL(st.returned_ok, taken);
    CU_ASSERT_EQUAL(st.returned_fail, 0);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.lease_expired, 0);
    CU_ASSERT_EQUAL(st.error_no_members + st.take_timeouts, refused);
    shoal_runtime_destroy(rt);
}

/* 3. Each field a second identical update could move. */
static void co_assert_same(const shoal_pool_stats_t *a, const shoal_pool_stats_t *b)
{
    CU_ASSERT_EQUAL(b->pool_size, a->pool_size);
    CU_ASSERT_EQUAL(b->target_size, a->target_size);
    CU_ASSERT_EQUAL(b->max_size, a->max_size);
    CU_ASSERT_EQUAL(b->in_use, a->in_use);
    CU_ASSERT_EQUAL(b->free, a->free);
    CU_ASSERT_EQUAL(b->starting, a->starting);
    CU_ASSERT_EQUAL(b->takes, a->takes);
    CU_ASSERT_EQUAL(b->returned_ok, a->returned_ok);
    CU_ASSERT_EQUAL(b->returned_fail, a->returned_fail);
    CU_ASSERT_EQUAL(b->killed_free, a->killed_free);
    CU_ASSERT_EQUAL(b->killed_in_use, a->killed_in_use);
    CU_ASSERT_EQUAL(b->culled, a->culled);
    CU_ASSERT_EQUAL(b->recycled, a->recycled);
    CU_ASSERT_EQUAL(b->start_failures, a->start_failures);
}

/* A member is in use throughout. Up (init 3, max 3) the first update starts
 * a third member; down (init 1, max 1) it stops the two free ones. The
 * second of each starts and stops none, moves no counter, and leaves the
 * member in use alone. */
static void checkout_idempotent(void)
{
    shoal_runtime_t *rt = ck_runtime(2);
    shoal_pool_spec_t s = ck_spec(2, 4, 0);
    shoal_pid_t p = ck_start_spec(rt, &s);
    shoal_pid_t c = ck_spawn_consumer(rt, 0);
    CU_ASSERT_EQUAL(ck_take(rt, c, 0, p, CK_TMO), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&grants[0]) == 1 && ck_stats(rt, p).free == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&grants[0]), 1);
    shoal_pid_t m = atomic_load(&got[0]);
    shoal_runtime_stats_t r0 = shoal_test_stats(rt);
    const shoal_pool_checkout_update_t u[2] = {{3, 3, s.checkout}, {1, 1, s.checkout}};
    const uint32_t alive[2] = {3, 1}, spawned[2] = {1, 1}, ended[2] = {0, 2};
    for (int k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, p, &u[k], TMO), SHOAL_OK);
        CK_WAIT_UNTIL(ck_stats(rt, p).pool_size == alive[k] && ck_stats(rt, p).starting == 0 &&
                      shoal_test_stats(rt).actors_ended == r0.actors_ended + ended[k]);
        shoal_pool_stats_t a = ck_stats(rt, p);
        shoal_runtime_stats_t ra = shoal_test_stats(rt);
        CU_ASSERT_EQUAL(a.pool_size, alive[k]);
        CU_ASSERT_EQUAL(a.in_use, 1);
        CU_ASSERT_EQUAL(a.free, alive[k] - 1);
        CU_ASSERT_EQUAL(ra.actors_spawned, r0.actors_spawned + spawned[k]);
        CU_ASSERT_EQUAL(ra.actors_ended, r0.actors_ended + ended[k]);
        CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, p, &u[k], TMO), SHOAL_OK);
        shoal_pool_stats_t b = ck_stats(rt, p); /* the pool's, after the second: in its order */
        shoal_runtime_stats_t rb = shoal_test_stats(rt);
        co_assert_same(&a, &b);
        CU_ASSERT_EQUAL(rb.actors_spawned, ra.actors_spawned);
        CU_ASSERT_EQUAL(rb.actors_ended, ra.actors_ended);
        CU_ASSERT_TRUE(ck_alive(rt, m));
    }
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 3);
    CU_ASSERT_EQUAL(ck_give_back(rt, c, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* 4. A checkout pool answers an update with 0 and counts no resizes: the
 * pool's order is found from its reads alone. Each call sets a max of its
 * own (CO_LIN_BASE + its node, t x ROUNDS + i; init stays 1, so no member
 * starts or ends), so a read names the call it saw. The orders a read
 * gives, which the pool's one order of calls must have: a resizer's call i
 * before its call i + 1; the spec's max before every call; the call before
 * its read before the call that read names (unless the same: the last
 * before a read is the one it sees); that one before the resizer's next
 * call; and every resizer's last call before the one the final read names.
 * A cycle among them means no one order explains what was read: the calls
 * no order can place are counted. */
#define CO_LIN_BASE 100u
#define NODES (NCALLS + 1) /* the calls, then the spec's max */

typedef struct {
    uint16_t from, to;
} edge_t;

static edge_t edges[3 * NCALLS + 2 * RESIZERS];
static unsigned nedges;

static void before(unsigned a, unsigned b)
{
    if (a != b)
        edges[nedges++] = (edge_t){(uint16_t)a, (uint16_t)b};
}

/* The node a read of max names: a call, NCALLS for the spec's, -1 none. */
static int named(uint32_t max)
{
    if (max == CO_LIN_BASE - 1)
        return NCALLS;
    return max >= CO_LIN_BASE && max < CO_LIN_BASE + NCALLS ? (int)(max - CO_LIN_BASE) : -1;
}

/* Nodes no order can place (on a cycle, or after one): 0 if the edges
 * have none. Kahn's: place what nothing unplaced must come before. */
static unsigned unplaceable(void)
{
    static unsigned into[NODES];
    static bool placed[NODES];
    memset(into, 0, sizeof into);
    memset(placed, 0, sizeof placed);
    for (unsigned e = 0; e < nedges; e++)
        into[edges[e].to]++;
    unsigned left = NODES;
    for (bool more = true; more;) {
        more = false;
        for (unsigned n = 0; n < NODES; n++) {
            if (placed[n] || into[n] != 0)
                continue;
            placed[n] = true;
            left--;
            more = true;
            for (unsigned e = 0; e < nedges; e++)
                if (edges[e].from == n)
                    into[edges[e].to]--;
        }
    }
    return left;
}

static void *co_resizing_main(void *arg)
{
    resizer_t *r = arg;
    for (unsigned i = 0; i < ROUNDS; i++) {
        shoal_pool_checkout_update_t u = {1, CO_LIN_BASE + r->t * ROUNDS + i, *r->co};
        r->rc[i] = shoal_pool_set_checkout(r->rt, r->pool, &u, TMO);
        shoal_pool_stats_t st;
        r->seen[i] = shoal_pool_stats(r->rt, r->pool, &st, TMO) == SHOAL_OK ? st.max_size : 0;
    }
    return NULL;
}

static void checkout_linearizable(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pool_spec_t s = ck_spec(1, CO_LIN_BASE - 1, 0);
    shoal_pid_t p = ck_start_spec(rt, &s);
    CK_WAIT_UNTIL(ck_stats(rt, p).free == 1);
    static resizer_t r[RESIZERS];
    pthread_t t[RESIZERS];
    for (unsigned i = 0; i < RESIZERS; i++) {
        r[i] = (resizer_t){.rt = rt, .pool = p, .t = i, .co = &s.checkout};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, co_resizing_main, &r[i]), 0);
    }
    for (unsigned i = 0; i < RESIZERS; i++)
        pthread_join(t[i], NULL);
    shoal_pool_stats_t st = ck_stats(rt, p);
    int last = named(st.max_size);
    unsigned wrong = 0, stray = last < 0;
    nedges = 0;
    for (unsigned i = 0; i < RESIZERS; i++) {
        unsigned first = i * ROUNDS;
        before(NCALLS, first);
        for (unsigned k = 0; k < ROUNDS; k++) {
            wrong += r[i].rc[k] != SHOAL_OK;
            int w = named(r[i].seen[k]);
            if (k + 1 < ROUNDS)
                before(first + k, first + k + 1);
            if (w < 0) {
                stray++;
                continue;
            }
            before(first + k, (unsigned)w);
            if (k + 1 < ROUNDS)
                before((unsigned)w, first + k + 1);
        }
        if (last >= 0)
            before(first + ROUNDS - 1, (unsigned)last);
    }
    unsigned lost = unplaceable();
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(stray, 0);
    CU_ASSERT_EQUAL(lost, 0);
    if (wrong + stray + lost != 0)
        printf("\n    wrong %u stray %u unplaceable %u (final max %u)\n", wrong, stray, lost,
               st.max_size);
    /* init was 1 throughout: the one member, none started or stopped. */
    CU_ASSERT_EQUAL(st.target_size, 1);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 1);
    /* A later call wins, whatever came before. */
    shoal_pool_checkout_update_t u = {1, CO_LIN_BASE - 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, p, &u, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(ck_stats(rt, p).max_size, CO_LIN_BASE - 1);
    shoal_runtime_destroy(rt);
}

/* Four consumers hold the pool's four members; max is lowered to 1. The
 * members in use are not touched: each handles a message sent after the
 * update, none ended, none culled. Given back one by one, the first three
 * are past the max: each is stopped when it comes back, counted culled; the
 * last, which the max allows, is kept free. No member is started. */
static void checkout_lowered_max_waits_for_returns(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pool_spec_t s = ck_spec(4, 4, 0);
    shoal_pid_t p = ck_start_spec(rt, &s);
    CK_WAIT_UNTIL(ck_stats(rt, p).free == 4);
    shoal_pid_t c[4], m[4];
    for (int i = 0; i < 4; i++) {
        c[i] = ck_spawn_consumer(rt, i);
        CU_ASSERT_EQUAL(ck_take(rt, c[i], i, p, CK_TMO), SHOAL_OK);
        CK_WAIT_UNTIL(atomic_load(&grants[i]) == 1);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&grants[i]), 1);
        m[i] = atomic_load(&got[i]);
    }
    shoal_runtime_stats_t r0 = shoal_test_stats(rt);
    shoal_pool_checkout_update_t u = {0, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, p, &u, TMO), SHOAL_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, m[i], T_OK, NULL, 0), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&ck_handled) == 4);
    CU_ASSERT_EQUAL(atomic_load(&ck_handled), 4);
    shoal_pool_stats_t st = ck_stats(rt, p);
    CU_ASSERT_EQUAL(st.max_size, 1);
    CU_ASSERT_EQUAL(st.in_use, 4);
    CU_ASSERT_EQUAL(st.pool_size, 4);
    CU_ASSERT_EQUAL(st.culled, 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, r0.actors_ended);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(ck_give_back(rt, c[i], i, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
        uint32_t out = 3u - (uint32_t)i, nfree = i < 3 ? 0u : 1u;
        uint64_t culled = i < 3 ? (uint64_t)i + 1 : 3;
        CK_WAIT_UNTIL(ck_stats(rt, p).in_use == out && ck_stats(rt, p).culled == culled);
        st = ck_stats(rt, p);
        CU_ASSERT_EQUAL(st.in_use, out);
        CU_ASSERT_EQUAL(st.culled, culled);
        CU_ASSERT_EQUAL(st.free, nfree);
        if (i < 3)
            CK_WAIT_UNTIL(ck_dead(rt, m[i]));
        CU_ASSERT_EQUAL(ck_dead(rt, m[i]), i < 3);
        for (int j = i + 1; j < 4; j++)
            CU_ASSERT_TRUE(ck_alive(rt, m[j]));
    }
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 4);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_spawned, r0.actors_spawned);
    shoal_runtime_destroy(rt);
}

/* ---- 2 and 5: once or refused at once; nothing after a drain ------------------------ */

/* A member that records each transaction's id (a cast of T_ID), a few
 * microseconds a transaction. */
enum { T_ID = 40 };
#define ONCE_SENDERS 4
#define ONCE_PER 3000u
#define ONCE_N (ONCE_SENDERS * ONCE_PER)
static atomic_uchar once_ran[ONCE_N];
static atomic_int once_total;

static int once_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    uint32_t id;
    if (msg->type != T_ID || msg->size != sizeof id)
        return 0;
    memcpy(&id, msg->data, sizeof id);
    if (id < ONCE_N)
        atomic_fetch_add(&once_ran[id], 1);
    atomic_fetch_add(&once_total, 1);
    struct timespec ts = {0, 5000};
    nanosleep(&ts, NULL);
    return 0;
}

static const shoal_behaviour_t once_member = {.name = "once", .handle_message = once_message};

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    uint32_t first;
    int rc[ONCE_PER];
} once_sender_t;

static atomic_int once_senders_done;

/* A send every few tens of microseconds: the run spans many moves of the
 * max. */
static void *once_sender_main(void *arg)
{
    once_sender_t *s = arg;
    for (uint32_t k = 0; k < ONCE_PER; k++) {
        uint32_t id = s->first + k;
        s->rc[k] = shoal_runtime_send(s->rt, s->pool, T_ID, &id, sizeof id);
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&once_senders_done, 1);
    return NULL;
}

/* 2. Four threads send 3000 transactions each while the test thread moves
 * the max between 4 and 1 every few milliseconds: each one accepted
 * (SHOAL_OK) runs exactly once, each one refused (SHOAL_ENOMEMBERS, at
 * once: a send does not wait) never runs, the pool counts the refusals as
 * error_no_members and the accepted ones as handled. */
static void checkout_once_or_refused(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    for (uint32_t i = 0; i < ONCE_N; i++)
        atomic_store(&once_ran[i], 0);
    atomic_store(&once_total, 0);
    atomic_store(&once_senders_done, 0);
    shoal_pool_spec_t s = ck_spec(1, 4, 8);
    s.worker = &once_member;
    shoal_pid_t p = ck_start_spec(rt, &s);
    shoal_pool_checkout_update_t low = {1, 1, s.checkout}, high = {1, 4, s.checkout};
    once_sender_t snd[ONCE_SENDERS];
    pthread_t t[ONCE_SENDERS];
    for (unsigned i = 0; i < ONCE_SENDERS; i++) {
        snd[i] = (once_sender_t){.rt = rt, .pool = p, .first = i * ONCE_PER};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, once_sender_main, &snd[i]), 0);
    }
    unsigned sets = 0, bad_sets = 0;
    double end = shoal_test_now() + CK_WAIT_S;
    while (atomic_load(&once_senders_done) < ONCE_SENDERS && shoal_test_now() < end) {
        bad_sets += shoal_pool_set_checkout(rt, p, sets % 2 ? &high : &low, TMO) != SHOAL_OK;
        sets++;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    for (unsigned i = 0; i < ONCE_SENDERS; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(bad_sets, 0);
    CU_ASSERT(sets >= 10); /* the max moved while they sent */
    uint32_t ok = 0, refused = 0, other = 0;
    for (unsigned i = 0; i < ONCE_SENDERS; i++)
        for (uint32_t k = 0; k < ONCE_PER; k++) {
            ok += snd[i].rc[k] == SHOAL_OK;
            refused += snd[i].rc[k] == SHOAL_ENOMEMBERS;
            other += snd[i].rc[k] != SHOAL_OK && snd[i].rc[k] != SHOAL_ENOMEMBERS;
        }
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT(ok > 0 && refused > 0);
    /* A member counts its message handled after its callback returns: wait
     * for the count as well as for the runs. */
    CK_WAIT_UNTIL((uint32_t)atomic_load(&once_total) == ok &&
                  ck_stats(rt, p).messages_handled == ok);
    CU_ASSERT_EQUAL((uint32_t)atomic_load(&once_total), ok);
    uint32_t twice = 0, lost = 0, ran_refused = 0;
    for (unsigned i = 0; i < ONCE_SENDERS; i++)
        for (uint32_t k = 0; k < ONCE_PER; k++) {
            unsigned r = atomic_load(&once_ran[i * ONCE_PER + k]);
            twice += r > 1;
            lost += snd[i].rc[k] == SHOAL_OK && r == 0;
            ran_refused += snd[i].rc[k] != SHOAL_OK && r != 0;
        }
    CU_ASSERT_EQUAL(twice, 0);
    CU_ASSERT_EQUAL(lost, 0);
    CU_ASSERT_EQUAL(ran_refused, 0);
    shoal_pool_stats_t st = ck_stats(rt, p);
    CU_ASSERT_EQUAL(st.error_no_members, refused);
    CU_ASSERT_EQUAL(st.messages_handled, ok);
    printf("\n    %u accepted, each run once; %u refused, none run; %u updates of the max ", ok,
           refused, sets);
    shoal_runtime_destroy(rt);
}

/* 5. Once a drain has returned, nothing new runs: 100 transactions sent
 * after it are refused SHOAL_ENOPROC and none reaches a member, however
 * long one waits. The 20 accepted before it all ran. */
static void checkout_nothing_after_drain(void)
{
    shoal_runtime_t *rt = ck_runtime(2);
    for (uint32_t i = 0; i < ONCE_N; i++)
        atomic_store(&once_ran[i], 0);
    atomic_store(&once_total, 0);
    shoal_pool_spec_t s = ck_spec(2, 2, 32);
    s.worker = &once_member;
    shoal_pid_t p = ck_start_spec(rt, &s);
    for (uint32_t id = 0; id < 20; id++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_ID, &id, sizeof id), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, p, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&once_total), 20);
    for (uint32_t id = 100; id < 200; id++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_ID, &id, sizeof id), SHOAL_ENOPROC);
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&once_total), 20);
    for (uint32_t id = 100; id < 200; id++)
        CU_ASSERT_EQUAL(atomic_load(&once_ran[id]), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"checkout: members in use within the max in force", checkout_capacity},
        {"checkout: an update is idempotent", checkout_idempotent},
        {"checkout: updates are linearizable", checkout_linearizable},
        {"checkout: a transaction runs once or is refused at once", checkout_once_or_refused},
        {"checkout: nothing runs after a drain", checkout_nothing_after_drain},
        {"checkout: a lowered max waits for members in use",
         checkout_lowered_max_waits_for_returns},
        {NULL, NULL}};
    return shoal_test_run("resize_checkout", cases);
}
