/* test_bulkhead.c - members held back while stuck callbacks hold the spare
 * threads (core/sched/bulkhead.c): a pool with a stuck member runs no other
 * member while that takes the one compensating thread, a plain actor runs
 * meanwhile, and the held ones run once it returns, nothing lost; a new
 * pool's members do not start while another pool's init holds it (a
 * stuck handler holds no new member, and a member without init is never
 * held); the held members of a start given up run their init, then end,
 * handling nothing; a pool whose inits all hang gets two threads of four,
 * not three (the members in init counted before the monitor lists them);
 * with max_extra_threads none nothing is held; and shoal_runtime_stats as
 * built before ABI 1.14 fills no more than its struct had.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them. Waits are generous deadlines on
 * counts, never timings.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pool/pool.h"
#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 30.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)

#define HELD_LINE "callbacks stuck ("
#define AGAIN_LINE "held members run again"

/* ---- behaviours ------------------------------------------------------------ */

static atomic_int release;   /* let every gate return */
static atomic_int entered;   /* handlers that came to the gate */
static atomic_int handled;   /* ... and left it */
static atomic_int inits;     /* inits that came to their gate */
static atomic_int started;   /* ... and left it */
static atomic_int counted;   /* the plain counter's messages */
static atomic_int init_gate; /* inits wait at the gate too */
static atomic_int ends;      /* terminates */

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void wait_gate(void)
{
    while (!atomic_load(&release))
        nap_ms(1);
}

static int gate_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx, (void)state, (void)args;
    atomic_fetch_add(&inits, 1);
    if (atomic_load(&init_gate))
        wait_gate();
    atomic_fetch_add(&started, 1);
    return SHOAL_OK;
}

static int gate_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state, (void)msg;
    atomic_fetch_add(&entered, 1);
    wait_gate();
    atomic_fetch_add(&handled, 1);
    return SHOAL_OK;
}

static int count_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state, (void)msg;
    atomic_fetch_add(&counted, 1);
    return SHOAL_OK;
}

static void gate_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx, (void)state, (void)reason;
    atomic_fetch_add(&ends, 1);
}

static const shoal_behaviour_t gate = {
    .name = "gate", .init = gate_init, .handle_message = gate_handle, .terminate = gate_terminate};
static const shoal_behaviour_t counter = {.name = "count", .handle_message = count_handle};

static void reset(void)
{
    atomic_store(&release, 0);
    atomic_store(&entered, 0);
    atomic_store(&handled, 0);
    atomic_store(&inits, 0);
    atomic_store(&started, 0);
    atomic_store(&counted, 0);
    atomic_store(&init_gate, 0);
    atomic_store(&ends, 0);
}

/* A runtime of `threads`, stall_warn 100 ms (the hand-off mark too). */
static shoal_runtime_t *make_rt(unsigned threads, int max_extra)
{
    return shoal_test_runtime_watched(threads, max_extra, SHOAL_LOG_INFO);
}

static shoal_pool_spec_t gate_pool(const char *name, uint32_t size)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = name;
    s.worker = &gate;
    s.size = size;
    s.strategy = SHOAL_POOL_STRATEGY_ROUND_ROBIN;
    return s;
}

/* A plain actor answers n casts while the pools are stuck or held. */
static void plain_actor_runs(shoal_runtime_t *rt, int n)
{
    shoal_pid_t c;
    int before = atomic_load(&counted);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &c), SHOAL_OK);
    for (int i = 0; i < n; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&counted) == before + n);
    CU_ASSERT_EQUAL(atomic_load(&counted), before + n);
}

static uint64_t held_now(shoal_runtime_t *rt) { return shoal_test_stats(rt).held_back; }

/* ---- a running pool's stuck member ---------------------------------------------- */

static void stuck_member_holds_its_pool_back(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(1, 1); /* one thread, one to make up for it */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = gate_pool("gates", 3);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&started), 3);
    /* One message each (round robin): the first hangs on the only thread;
     * once it is listed, the compensating thread takes the other two and
     * holds them. */
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(held_now(rt) == 2);
    CU_ASSERT_EQUAL_FATAL(held_now(rt), 2);
    CU_ASSERT_EQUAL(atomic_load(&entered), 1);
    plain_actor_runs(rt, 100); /* on the compensating thread */
    CU_ASSERT_EQUAL(atomic_load(&entered), 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(HELD_LINE), 1);
    shoal_test_assert_logged("dispatcher: 1 callbacks stuck (0 of them inits), "
                             "runtime.max_extra_threads 1: members of pools with a stuck "
                             "callback, and new members while inits are stuck, wait until one "
                             "returns, so the other pools keep their threads");
    shoal_test_assert_logged("(first held: a running member of pool gates)");

    atomic_store(&release, 1);
    WAIT_UNTIL(atomic_load(&handled) == 3);
    CU_ASSERT_EQUAL(atomic_load(&handled), 3);
    CU_ASSERT_EQUAL(atomic_load(&entered), 3);
    shoal_runtime_stats_t st = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(st.held_back, 0);
    CU_ASSERT_EQUAL(st.held_back_total, 2);
    WAIT_UNTIL(shoal_test_log_count(AGAIN_LINE) == 1);
    shoal_test_assert_logged("dispatcher: stuck callbacks returned (0 still stuck): the last 2 "
                             "held members run again");
    WAIT_UNTIL(shoal_test_pool_stats(rt, pool).messages_handled == 3);
    shoal_pool_stats_t ps = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(ps.messages_forwarded, 3);
    CU_ASSERT_EQUAL(ps.messages_handled, 3);
    shoal_runtime_destroy(rt);
}

/* ---- a new pool's members while another's init hangs ------------------------ */

static void new_members_wait_for_a_stuck_init(void)
{
    reset();
    atomic_store(&init_gate, 1);
    shoal_runtime_t *rt = make_rt(1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_test_spawner_t a = {.rt = rt, .spec = gate_pool("hangs", 1)};
    pthread_t ta, tb;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, shoal_test_spawner_main, &a), 0);
    WAIT_UNTIL(atomic_load(&rt->nstuck) == 1); /* its one init, listed */
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rt->nstuck), 1);
    /* Another pool: its own actor runs and spawns its members; they do not
     * start. */
    shoal_test_spawner_t b = {.rt = rt, .spec = gate_pool("waits", 2)};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tb, NULL, shoal_test_spawner_main, &b), 0);
    WAIT_UNTIL(held_now(rt) == 2);
    CU_ASSERT_EQUAL_FATAL(held_now(rt), 2);
    plain_actor_runs(rt, 100);
    CU_ASSERT_EQUAL(atomic_load(&inits), 1);
    CU_ASSERT_EQUAL(atomic_load(&b.done), 0);
    shoal_test_assert_logged("(first held: a new member of pool waits)");

    atomic_store(&release, 1);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CU_ASSERT_EQUAL(atomic_load(&a.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&b.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&started), 3);
    CU_ASSERT_EQUAL(held_now(rt), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).held_back_total, 2);
    shoal_runtime_destroy(rt);
}

/* A start's `interrupted`: true once two members are held. */
static bool two_held(void *arg) { return held_now(arg) == 2; }

/* A pool started while another's init hangs, given up while its members
 * are held (as a reload that fails then: host/reload.c): once the init
 * returns, the held members run their init, then their terminate, and
 * handle nothing -- every worker's init comes first (behaviour.h), so a
 * plugin's init must not assume its worker will be used. */
static void held_members_of_a_stopped_start_run_init_then_end(void)
{
    reset();
    atomic_store(&init_gate, 1);
    shoal_runtime_t *rt = make_rt(1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_test_spawner_t a = {.rt = rt, .spec = gate_pool("hangs", 1)};
    pthread_t ta;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, shoal_test_spawner_main, &a), 0);
    WAIT_UNTIL(atomic_load(&rt->nstuck) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rt->nstuck), 1);
    shoal_pool_spec_t s = gate_pool("given_up", 2);
    shoal_pool_opts_t o = {.interrupted = two_held, .interrupted_arg = rt};
    shoal_pid_t pid;
    char why[128];
    CU_ASSERT_EQUAL(shoal__pool_start_ex(rt, &s, NULL, &o, 0, &pid, why, sizeof why),
                    SHOAL_ESHUTDOWN);
    CU_ASSERT_STRING_EQUAL(why, "interrupted while its workers started");
    CU_ASSERT_EQUAL(atomic_load(&inits), 1); /* the one that hangs */

    atomic_store(&release, 1);
    pthread_join(ta, NULL);
    CU_ASSERT_EQUAL(atomic_load(&a.rc), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ends) == 2);
    CU_ASSERT_EQUAL(atomic_load(&ends), 2);    /* the given-up pool's two */
    CU_ASSERT_EQUAL(atomic_load(&started), 3); /* each ran its init first */
    CU_ASSERT_EQUAL(atomic_load(&entered), 0); /* and handled nothing */
    CU_ASSERT_EQUAL(held_now(rt), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).held_back_total, 2);
    shoal_runtime_destroy(rt);
}

/* ---- inits that all hang, before the monitor has seen them ------------------ */

static void hanging_inits_take_the_spare_threads_only(void)
{
    reset();
    atomic_store(&init_gate, 1);
    shoal_runtime_t *rt = make_rt(2, 2); /* two threads, two to make up for them */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_test_spawner_t a = {.rt = rt, .spec = gate_pool("hangs", 6)};
    pthread_t ta;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, shoal_test_spawner_main, &a), 0);
    /* Two inits hang; the four others are held, however the compensating
     * thread started for the first hang came before the second was
     * listed. */
    WAIT_UNTIL(held_now(rt) == 4);
    CU_ASSERT_EQUAL_FATAL(held_now(rt), 4);
    plain_actor_runs(rt, 100);
    CU_ASSERT_EQUAL(atomic_load(&inits), 2);
    CU_ASSERT_EQUAL(atomic_load(&rt->ninit), 2);

    atomic_store(&release, 1);
    pthread_join(ta, NULL);
    CU_ASSERT_EQUAL(atomic_load(&a.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&started), 6);
    CU_ASSERT_EQUAL(held_now(rt), 0);
    CU_ASSERT_EQUAL(atomic_load(&rt->ninit), 0);
    shoal_runtime_destroy(rt);
}

/* ---- what is not held ---------------------------------------------------------- */

/* A handler stuck in one pool (as many as max_extra_threads makes up for)
 * holds nobody else's new members: a new pool starts, its members' inits
 * run. */
static void stuck_handler_holds_no_new_pool(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = gate_pool("gates", 1);
    shoal_pid_t pool, other;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&rt->nstuck) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rt->nstuck), 1);
    s = gate_pool("new", 3);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &other), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&started), 4);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).held_back_total, 0);
    atomic_store(&release, 1);
    WAIT_UNTIL(atomic_load(&handled) == 1);
    shoal_runtime_destroy(rt);
}

/* While an init is stuck, a new member whose behaviour has no init is not
 * held: its INIT runs no plugin code. */
static void member_without_init_is_not_held(void)
{
    reset();
    atomic_store(&init_gate, 1);
    shoal_runtime_t *rt = make_rt(1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_test_spawner_t a = {.rt = rt, .spec = gate_pool("hangs", 1)};
    pthread_t ta;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, shoal_test_spawner_main, &a), 0);
    WAIT_UNTIL(atomic_load(&rt->nstuck_init) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rt->nstuck_init), 1);
    shoal_pool_spec_t s = gate_pool("counts", 2);
    s.worker = &counter;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&counted) == 10);
    CU_ASSERT_EQUAL(atomic_load(&counted), 10);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).held_back_total, 0);
    atomic_store(&release, 1);
    pthread_join(ta, NULL);
    CU_ASSERT_EQUAL(atomic_load(&a.rc), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- off ---------------------------------------------------------------------- */

static void none_holds_nothing(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(2, SHOAL_EXTRA_THREADS_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = gate_pool("gates", 3);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_OK);
    /* Both threads go into the gate, listed as stuck; nothing is held. */
    WAIT_UNTIL(atomic_load(&entered) == 2 && atomic_load(&rt->nstuck) == 2);
    CU_ASSERT_EQUAL(atomic_load(&entered), 2);
    CU_ASSERT_EQUAL(atomic_load(&rt->nstuck), 2);
    CU_ASSERT_EQUAL(held_now(rt), 0);
    atomic_store(&release, 1);
    WAIT_UNTIL(atomic_load(&handled) == 3);
    CU_ASSERT_EQUAL(atomic_load(&handled), 3);
    shoal_runtime_stats_t st = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(st.held_back_total, 0);
    CU_ASSERT_EQUAL(shoal_test_log_count(HELD_LINE), 0);
    shoal_runtime_destroy(rt);
}

/* ---- the counts, through the entry point before ABI 1.14 ------------------------ */

static void old_stats_fill_no_more_than_their_struct(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t c;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &c), SHOAL_OK);
    shoal_runtime_stats_t st;
    memset(&st, 0xab, sizeof st);
    (shoal_runtime_stats)(rt, &st); /* the function, not the macro: a caller built before */
    CU_ASSERT_EQUAL(st.actors_live, 1);
    CU_ASSERT_EQUAL(st.extra_threads_live, 0);
    CU_ASSERT_EQUAL(st.held_back, UINT64_C(0xabababababababab)); /* past its struct: untouched */
    CU_ASSERT_EQUAL(st.held_back_total, UINT64_C(0xabababababababab));
    shoal_runtime_stats(rt, &st);
    CU_ASSERT_EQUAL(st.held_back, 0);
    CU_ASSERT_EQUAL(st.held_back_total, 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a stuck member holds its pool's other members back", stuck_member_holds_its_pool_back},
        {"new members wait for another pool's stuck init", new_members_wait_for_a_stuck_init},
        {"held members of a start given up run init, then end",
         held_members_of_a_stopped_start_run_init_then_end},
        {"hanging inits take the spare threads only", hanging_inits_take_the_spare_threads_only},
        {"a stuck handler holds no new pool's members", stuck_handler_holds_no_new_pool},
        {"a member without init is not held", member_without_init_is_not_held},
        {"max_extra_threads none holds nothing", none_holds_nothing},
        {"the stats before ABI 1.14 fill their own struct",
         old_stats_fill_no_more_than_their_struct},
        {NULL, NULL},
    };
    return shoal_test_run("bulkhead", cases);
}
