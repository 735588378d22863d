/* test_registry.c - actor slots and PID generations (actor/registry.c,
 * actor/actor.c). */
#include <stdlib.h>
#include <time.h>

#include "runtime/runtime.h"
#include "runtime/tcache.h"
#include "support.h"

#define MAX 16u

static shoal_runtime_t *runtime_max(unsigned threads, uint32_t max_actors)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = threads;
    o.max_actors = max_actors;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt = NULL;
    if (shoal_runtime_create(&rt, &o) != SHOAL_OK)
        return NULL;
    return rt;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t live(shoal_runtime_t *rt)
{
    shoal_runtime_stats_t s;
    shoal_runtime_stats(rt, &s);
    return s.actors_live;
}

static int wait_live(shoal_runtime_t *rt, uint64_t want, double timeout_s)
{
    double end = shoal_test_now() + timeout_s;
    while (live(rt) != want && shoal_test_now() < end)
        sleep_ms(1);
    return live(rt) == want;
}

/* ---- a behaviour that counts what it gets, per slot ----------------------- */

static _Atomic unsigned got[MAX];       /* messages handled, by slot */
static _Atomic uint32_t last_type[MAX]; /* type of the last one */
static _Atomic uint64_t last_to[MAX];   /* self PID when it was handled */

static int count_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    uint32_t slot = (uint32_t)shoal_self(ctx);
    if (slot < MAX) {
        atomic_store(&last_type[slot], msg->type);
        atomic_store(&last_to[slot], shoal_self(ctx));
        atomic_fetch_add(&got[slot], 1);
    }
    return 0;
}

static const shoal_behaviour_t counter = {.name = "counter", .handle_message = count_message};

/* A parent that spawns a child of `counter` on request (so the spawn runs
 * on a worker thread, whose slot cache holds the slots its actors freed). */
static _Atomic uint64_t spawned_pid;
static _Atomic int spawn_rc = 1;

static int spawn_on_request(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    shoal_pid_t pid = SHOAL_PID_NONE;
    int rc = shoal_spawn(ctx, &counter, NULL, NULL, &pid);
    atomic_store(&spawned_pid, pid);
    atomic_store(&spawn_rc, rc);
    return 0;
}

static const shoal_behaviour_t spawner = {.name = "spawner", .handle_message = spawn_on_request};

static void reset_counts(void)
{
    for (unsigned i = 0; i < MAX; i++) {
        atomic_store(&got[i], 0);
        atomic_store(&last_type[i], 0);
        atomic_store(&last_to[i], 0);
    }
}

/* ---- slots directly ------------------------------------------------------- */

static void slots_come_lowest_first_until_the_limit(void)
{
    shoal_runtime_t *rt = runtime_max(2, MAX);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tc);
    uint32_t slots[MAX];
    for (uint32_t i = 0; i < MAX; i++) {
        CU_ASSERT_EQUAL(shoal__slot_alloc(tc, &slots[i]), SHOAL_OK);
        CU_ASSERT_EQUAL(slots[i], i);
    }
    uint32_t extra = 12345;
    CU_ASSERT_EQUAL(shoal__slot_alloc(tc, &extra), SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(extra, 12345);
    /* A freed slot is the next one handed out; the limit holds again. */
    shoal__slot_free(tc, 5);
    CU_ASSERT_EQUAL(shoal__slot_alloc(tc, &extra), SHOAL_OK);
    CU_ASSERT_EQUAL(extra, 5);
    CU_ASSERT_EQUAL(shoal__slot_alloc(tc, &extra), SHOAL_ELIMIT);
    /* Free all, allocate all again: the same 16, each once. */
    for (uint32_t i = 0; i < MAX; i++)
        shoal__slot_free(tc, i);
    unsigned seen[MAX] = {0};
    for (uint32_t i = 0; i < MAX; i++) {
        uint32_t s = MAX;
        CU_ASSERT_EQUAL(shoal__slot_alloc(tc, &s), SHOAL_OK);
        if (s < MAX)
            seen[s]++;
    }
    for (uint32_t i = 0; i < MAX; i++)
        CU_ASSERT_EQUAL(seen[i], 1);
    CU_ASSERT_EQUAL(shoal__slot_alloc(tc, &extra), SHOAL_ELIMIT);
    for (uint32_t i = 0; i < MAX; i++)
        shoal__slot_free(tc, i);
    shoal_runtime_destroy(rt);
}

static void slots_move_between_threads_through_the_depot(void)
{
    /* 200 slots: more than one thread cache (64) holds. */
    shoal_runtime_t *rt = runtime_max(2, 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tc);
    unsigned seen[200] = {0};
    uint32_t s;
    for (unsigned i = 0; i < 200; i++) {
        CU_ASSERT_EQUAL_FATAL(shoal__slot_alloc(tc, &s), SHOAL_OK);
        CU_ASSERT_FATAL(s < 200);
        seen[s]++;
    }
    CU_ASSERT_EQUAL(shoal__slot_alloc(tc, &s), SHOAL_ELIMIT);
    for (unsigned i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(seen[i], 1);
    /* Freeing 200 overflows the cache into the depot ... */
    for (uint32_t i = 0; i < 200; i++)
        shoal__slot_free(tc, i);
    CU_ASSERT(tc->nslots <= SHOAL_SLOT_CACHE);
    /* ... and a flush hands the rest over; a second cache sees all 200. */
    shoal__slots_flush(tc);
    CU_ASSERT_EQUAL(tc->nslots, 0);
    shoal_tcache_t other;
    shoal__tcache_init(&other, rt, NULL);
    unsigned seen2[200] = {0};
    for (unsigned i = 0; i < 200; i++) {
        CU_ASSERT_EQUAL_FATAL(shoal__slot_alloc(&other, &s), SHOAL_OK);
        CU_ASSERT_FATAL(s < 200);
        seen2[s]++;
    }
    CU_ASSERT_EQUAL(shoal__slot_alloc(&other, &s), SHOAL_ELIMIT);
    for (unsigned i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(seen2[i], 1);
    shoal_runtime_destroy(rt);
}

/* Near the limit a thread takes one slot from the depot, not a batch: 100
 * slots taken and freed by one thread (into the depot, near the limit),
 * then one taken by it again -- another thread still gets all the other
 * 199. It got 168: the first had taken 32 of the freed ones back. */
static void slots_freed_near_the_limit_are_not_hoarded(void)
{
    shoal_runtime_t *rt = runtime_max(2, 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tc);
    uint32_t s, mine;
    for (uint32_t i = 0; i < 100; i++)
        CU_ASSERT_EQUAL_FATAL(shoal__slot_alloc(tc, &s), SHOAL_OK);
    for (uint32_t i = 0; i < 100; i++)
        shoal__slot_free(tc, i);
    CU_ASSERT_EQUAL(tc->nslots, 0);
    CU_ASSERT_EQUAL_FATAL(shoal__slot_alloc(tc, &mine), SHOAL_OK);
    CU_ASSERT_EQUAL(tc->nslots, 0);
    shoal_tcache_t other;
    shoal__tcache_init(&other, rt, NULL);
    unsigned taken = 0;
    while (taken < 300 && shoal__slot_alloc(&other, &s) == SHOAL_OK)
        taken++;
    CU_ASSERT_EQUAL(taken, 199);
    shoal_runtime_destroy(rt);
}

/* ---- through spawn -------------------------------------------------------- */

static void spawn_past_max_actors_is_elimit(void)
{
    shoal_runtime_t *rt = runtime_max(2, MAX);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pids[MAX];
    for (unsigned i = 0; i < MAX; i++) {
        CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &pids[i]), SHOAL_OK);
        CU_ASSERT_NOT_EQUAL(pids[i], SHOAL_PID_NONE);
        for (unsigned j = 0; j < i; j++)
            CU_ASSERT_NOT_EQUAL((uint32_t)pids[i], (uint32_t)pids[j]);
    }
    shoal_pid_t pid = 777;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &pid), SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &pid), SHOAL_ELIMIT);
    CU_ASSERT_EQUAL(live(rt), MAX);
    /* every one of them is reachable */
    for (unsigned i = 0; i < MAX; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pids[i], 1, NULL, 0), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* The brief's scenario: a runtime at max_actors, one actor ends, the next
 * spawn must succeed in its slot with a new generation, and the old PID must
 * be refused without reaching the new actor. */
static void ended_actor_frees_its_slot_for_the_next_spawn(void)
{
    reset_counts();
    shoal_runtime_t *rt = runtime_max(2, MAX);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pids[MAX];
    for (unsigned i = 0; i < MAX; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &pids[i]), SHOAL_OK);
    shoal_pid_t old = pids[3];
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, old), SHOAL_OK);
    CU_ASSERT_TRUE_FATAL(wait_live(rt, MAX - 1, 10));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, old, 1, NULL, 0), SHOAL_ENOPROC);

    shoal_pid_t fresh = SHOAL_PID_NONE;
    int rc = shoal_runtime_spawn(rt, &counter, NULL, NULL, &fresh);
    /* 15 actors are live, max_actors is 16: there is room. */
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc == SHOAL_OK) {
        CU_ASSERT_EQUAL((uint32_t)fresh, (uint32_t)old);
        CU_ASSERT_NOT_EQUAL(fresh >> 32, old >> 32);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, old, 666, NULL, 0), SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, fresh, 2, NULL, 0), SHOAL_OK);
        uint32_t slot = (uint32_t)fresh;
        double end = shoal_test_now() + 10;
        while (atomic_load(&got[slot]) < 1 && shoal_test_now() < end)
            sleep_ms(1);
        sleep_ms(50);
        CU_ASSERT_EQUAL(atomic_load(&got[slot]), 1);
        CU_ASSERT_EQUAL(atomic_load(&last_type[slot]), 2);
    }
    shoal_runtime_destroy(rt);
}

/* The same with the spawn done on the worker where the slot was freed
 * (one worker, so that is certain): the slot is reused, the generation
 * moves on, a stale PID reaches nothing. */
static void stale_pid_is_enoproc_after_slot_reuse(void)
{
    reset_counts();
    shoal_runtime_t *rt = runtime_max(1, MAX);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&spawned_pid, 0);
    atomic_store(&spawn_rc, 1);
    shoal_pid_t parent, victim;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &spawner, NULL, NULL, &parent), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &victim), SHOAL_OK);
    uint32_t slot = (uint32_t)victim;
    CU_ASSERT_FATAL(slot < MAX);
    /* the victim works */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, victim, 1, NULL, 0), SHOAL_OK);
    double end = shoal_test_now() + 10;
    while (atomic_load(&got[slot]) < 1 && shoal_test_now() < end)
        sleep_ms(1);
    CU_ASSERT_EQUAL(atomic_load(&got[slot]), 1);
    CU_ASSERT_EQUAL(atomic_load(&last_to[slot]), victim);
    /* it ends; its PID is dead from then on */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, victim), SHOAL_OK);
    CU_ASSERT_TRUE_FATAL(wait_live(rt, 1, 10));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, victim, 665, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, victim), SHOAL_ENOPROC);
    shoal_runtime_stats_t st;
    shoal_runtime_stats(rt, &st);
    CU_ASSERT_EQUAL(st.msgs_noproc, 1);
    CU_ASSERT_EQUAL(st.actors_ended, 1);
    /* the worker spawns the next actor: it gets the freed slot */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, parent, 1, NULL, 0), SHOAL_OK);
    end = shoal_test_now() + 10;
    while (atomic_load(&spawn_rc) == 1 && shoal_test_now() < end)
        sleep_ms(1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&spawn_rc), SHOAL_OK);
    shoal_pid_t fresh = atomic_load(&spawned_pid);
    CU_ASSERT_EQUAL(shoal__pid_slot(fresh), slot);
    CU_ASSERT_EQUAL(shoal__pid_gen(fresh), shoal__pid_gen(victim) + 1);
    CU_ASSERT_NOT_EQUAL(fresh, victim);
    /* the old PID still reaches nothing, the new one reaches the new actor */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, victim, 666, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, fresh, 2, NULL, 0), SHOAL_OK);
    end = shoal_test_now() + 10;
    while (atomic_load(&got[slot]) < 2 && shoal_test_now() < end)
        sleep_ms(1);
    sleep_ms(50);
    CU_ASSERT_EQUAL(atomic_load(&got[slot]), 2); /* 1 for the victim, 1 for the new one */
    CU_ASSERT_EQUAL(atomic_load(&last_type[slot]), 2);
    CU_ASSERT_EQUAL(atomic_load(&last_to[slot]), fresh);
    shoal_runtime_stats(rt, &st);
    CU_ASSERT_EQUAL(st.msgs_noproc, 2);
    shoal_runtime_destroy(rt);
}

static void generations_keep_moving_over_many_lives(void)
{
    /* One slot used for 50 lives in a row: every PID differs, and every
     * earlier one is refused. */
    reset_counts();
    shoal_runtime_t *rt = runtime_max(1, MAX);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t parent, first;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &spawner, NULL, NULL, &parent), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &first), SHOAL_OK);
    shoal_pid_t lives[50];
    lives[0] = first;
    unsigned n = 1;
    for (; n < 50; n++) {
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_stop_actor(rt, lives[n - 1]), SHOAL_OK);
        CU_ASSERT_TRUE_FATAL(wait_live(rt, 1, 10));
        atomic_store(&spawn_rc, 1);
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, parent, 1, NULL, 0), SHOAL_OK);
        double end = shoal_test_now() + 10;
        while (atomic_load(&spawn_rc) == 1 && shoal_test_now() < end)
            sleep_ms(1);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&spawn_rc), SHOAL_OK);
        lives[n] = atomic_load(&spawned_pid);
        CU_ASSERT_EQUAL(shoal__pid_slot(lives[n]), shoal__pid_slot(first));
    }
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            CU_ASSERT_NOT_EQUAL(lives[i], lives[j]);
    for (unsigned i = 0; i + 1 < n; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, lives[i], 9, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, lives[n - 1], 9, NULL, 0), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

static void pids_outside_the_table_are_enoproc(void)
{
    shoal_runtime_t *rt = runtime_max(1, MAX);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, SHOAL_PID_NONE, 1, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, shoal__pid_make(1, MAX), 1, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, shoal__pid_make(1, UINT32_MAX), 1, NULL, 0),
                    SHOAL_ENOPROC);
    /* a slot never used */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, shoal__pid_make(1, 3), 1, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, shoal__pid_make(0, 3), 1, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal__pid_make(1, 3)), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

static void bad_max_actors_is_einval(void)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 1;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt = (shoal_runtime_t *)1;
    o.max_actors = 15;
    CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &o), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(rt);
    o.max_actors = (1u << 30) + 1;
    CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &o), SHOAL_EINVAL);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"slots come lowest first until the limit", slots_come_lowest_first_until_the_limit},
        {"slots move between threads through the depot",
         slots_move_between_threads_through_the_depot},
        {"slots freed near the limit are not hoarded", slots_freed_near_the_limit_are_not_hoarded},
        {"spawn past max_actors is ELIMIT", spawn_past_max_actors_is_elimit},
        {"stale PID is ENOPROC after slot reuse", stale_pid_is_enoproc_after_slot_reuse},
        {"generations keep moving over many lives", generations_keep_moving_over_many_lives},
        {"PIDs outside the table are ENOPROC", pids_outside_the_table_are_enoproc},
        {"bad max_actors is EINVAL", bad_max_actors_is_einval},
        {"an ended actor frees its slot for the next spawn (max_actors full)",
         ended_actor_frees_its_slot_for_the_next_spawn},
        {NULL, NULL},
    };
    return shoal_test_run("registry", cases);
}
