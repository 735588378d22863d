/* test_pull_capacity.c - what a pull pool (core/pool/pull.c) takes: the
 * exact capacity rule (buffer + size x prefetch) and its refusals; prefetch
 * and buffer changed live; drain emptying the buffer first; a refused
 * producer waiting for SHOAL_MSG_ROOM, one ROOM per refusal.
 *
 * Handlers never call CUnit: they record into atomics (pull_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs items
 * to stay queued, members block on a gate the test opens.
 */
#include <string.h>

#include "pull_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PU_WAIT_S)

/* ---- capacity ---------------------------------------------------------------- */

/* Two members block on their first item; the buffer then takes exactly 10
 * more: 12 = buffer + size x prefetch accepted, every further send refused
 * with SHOAL_EBUSY and counted. The gate opens: all 12 are handled once. */
static void capacity_is_buffer_plus_size_times_prefetch(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 2, 1, 10);
    shoal_pid_t p = pu_spawn(rt, &s);
    CU_ASSERT_EQUAL(pu_job(rt, p, 0, A_BLOCK, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(pu_job(rt, p, 1, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pu_entered) == 2);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&pu_entered), 2);
    int ok = 2, busy = 0;
    for (uint32_t i = 2; i < 40; i++) {
        int rc = pu_job(rt, p, i, A_OK, 0);
        ok += rc == SHOAL_OK;
        busy += rc == SHOAL_EBUSY;
    }
    CU_ASSERT_EQUAL(ok, 12);
    CU_ASSERT_EQUAL(busy, 28);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.kind, SHOAL_POOL_KIND_PULL);
    CU_ASSERT_EQUAL(st.prefetch, 1);
    CU_ASSERT_EQUAL(st.buffer, 10);
    CU_ASSERT_EQUAL(st.buffer_depth, 10);
    CU_ASSERT_EQUAL(st.demand, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded, 12);
    CU_ASSERT_EQUAL(st.messages_unhandled, 28);
    CU_ASSERT_EQUAL(st.delivered, 2);
    CU_ASSERT_EQUAL(st.queue_depth, 12);
    atomic_store(&pu_gate, 1);
    WAIT_UNTIL(atomic_load(&pu_done) == 12);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 12);
    for (uint32_t i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(atomic_load(&pu_seen[i]), 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 12);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_handled, 12);
    CU_ASSERT_EQUAL(st.delivered, 12);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.buffer_depth, 0);
    CU_ASSERT_EQUAL(st.demand, 2);
    shoal_runtime_destroy(rt);
}

/* SET_PREFETCH and SET_BUFFER change the capacity at once: 3 members with
 * prefetch 2 and buffer 5 take 3 x 2 + 5 = 11. */
static void prefetch_and_buffer_change_live(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 3, 1, 100);
    shoal_pid_t p = pu_spawn(rt, &s);
    uint32_t v = 2;
    shoal_answer_t a;
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, p, SHOAL_POOL_SET_PREFETCH, &v, sizeof v, PU_TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    atomic_store(&pu_prefetch_now, 2);
    v = 5;
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, p, SHOAL_POOL_SET_BUFFER, &v, sizeof v, PU_TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    v = 0; /* prefetch 0 is refused */
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, p, SHOAL_POOL_SET_PREFETCH, &v, sizeof v, PU_TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EINVAL);
    shoal_answer_release(&a);
    int ok = 0;
    for (uint32_t i = 0; i < 30; i++)
        ok += pu_job(rt, p, i, A_BLOCK, 0) == SHOAL_OK;
    CU_ASSERT_EQUAL(ok, 11);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.prefetch, 2);
    CU_ASSERT_EQUAL(st.buffer, 5);
    CU_ASSERT_EQUAL(st.messages_unhandled, 19);
    atomic_store(&pu_gate, 1);
    WAIT_UNTIL(atomic_load(&pu_done) == 11);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 11);
    CU_ASSERT_EQUAL(atomic_load(&pu_over_held), 0);
    /* A forward pool has neither. */
    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &pu_wk;
    shoal_pid_t fp = pu_spawn(rt, &f);
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, fp, SHOAL_POOL_SET_BUFFER, &v, sizeof v, PU_TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_ENOTSUP);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, fp).kind, SHOAL_POOL_KIND_FORWARD);
    shoal_runtime_destroy(rt);
}

static void drain_empties_the_buffer_first(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 2, 1, 500);
    shoal_pid_t p = pu_spawn(rt, &s);
    CU_ASSERT_EQUAL(pu_job(rt, p, 0, A_BLOCK, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(pu_job(rt, p, 1, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pu_entered) == 2);
    for (uint32_t i = 2; i < 402; i++)
        CU_ASSERT_EQUAL(pu_job(rt, p, i, A_OK, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    /* Until the drain has begun, sends are still taken while there is room. */
    int late = 0, rc;
    double end = shoal_test_now() + PU_WAIT_S;
    while ((rc = pu_job(rt, p, 9999, A_OK, 0)) != SHOAL_ENOPROC && shoal_test_now() < end) {
        late += rc == SHOAL_OK;
        shoal_test_nap();
    }
    CU_ASSERT_EQUAL(rc, SHOAL_ENOPROC);
    atomic_store(&pu_gate, 1);
    WAIT_UNTIL(atomic_load(&pu_done) == 402 + late);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 402 + late);
    WAIT_UNTIL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_STATS, NULL, 0) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_STATS, NULL, 0), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- room ----------------------------------------------------------------------------- */

/* A producer actor sends 4000 jobs as fast as the pool takes them; after
 * each SHOAL_EBUSY it asks for SHOAL_MSG_ROOM and sends nothing until it
 * comes. No retry without a ROOM in between: every refusal is answered by
 * exactly one ROOM, every job is accepted once, and a forward pool says
 * it cannot tell. */
typedef struct {
    shoal_pid_t to;
    uint32_t next, total;
    bool waiting;
} producer_t;

static atomic_int refusals, rooms, early, prod_done, notify_rc;

static void produce(shoal_ctx_t *ctx, producer_t *pr)
{
    while (pr->next < pr->total) {
        pu_job_t j = {pr->next, A_SLEEP, 0, 0};
        j.sleep_ms = pr->next % 500 == 0 ? 1 : 0;
        int rc = shoal_send(ctx, pr->to, T_JOB, &j, sizeof j);
        if (rc == SHOAL_EBUSY) {
            atomic_fetch_add(&refusals, 1);
            int nr = shoal_notify_room(ctx, pr->to);
            atomic_store(&notify_rc, nr);
            pr->waiting = nr == SHOAL_OK;
            return;
        }
        if (rc != SHOAL_OK)
            return;
        pr->next++;
    }
    atomic_store(&prod_done, 1);
}

static int prod_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    producer_t *pr = state;
    if (msg->kind == SHOAL_MSG_ROOM) {
        atomic_fetch_add(&rooms, 1);
        if (!pr->waiting || msg->from != pr->to)
            atomic_fetch_add(&early, 1);
        pr->waiting = false;
        produce(ctx, pr);
        return 0;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->size == sizeof(shoal_pid_t)) {
        memcpy(&pr->to, msg->data, sizeof pr->to);
        pr->total = 4000;
        produce(ctx, pr);
    }
    return 0;
}

static const shoal_behaviour_t producer = {
    .name = "producer", .state_size = sizeof(producer_t), .handle_message = prod_message};

static void a_refused_producer_waits_for_room(void)
{
    pu_reset();
    atomic_store(&refusals, 0);
    atomic_store(&rooms, 0);
    atomic_store(&early, 0);
    atomic_store(&prod_done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 2, 1, 32);
    shoal_pid_t p = pu_spawn(rt, &s);
    shoal_pid_t pr;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &producer, NULL, NULL, &pr), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pr, 0, &p, sizeof p), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&prod_done) == 1 && atomic_load(&pu_done) == 4000);
    CU_ASSERT_EQUAL(atomic_load(&prod_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 4000);
    CU_ASSERT(atomic_load(&refusals) > 0); /* the pool was full at times */
    CU_ASSERT_EQUAL(atomic_load(&rooms), atomic_load(&refusals));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)atomic_load(&refusals));
    int once = 0;
    for (uint32_t i = 0; i < 4000; i++)
        once += atomic_load(&pu_seen[i]) == 1;
    CU_ASSERT_EQUAL(once, 4000);
    /* A forward pool tells too (ABI 1.5): the producer waits for its ROOM
     * while the one worker is blocked, and finishes once the gate opens. */
    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &pu_wk;
    f.size = 1;
    f.mailbox = 1;
    shoal_pid_t fp = pu_spawn(rt, &f);
    pu_reset();
    atomic_store(&notify_rc, 1);
    atomic_store(&prod_done, 0);
    atomic_store(&refusals, 0);
    atomic_store(&rooms, 0);
    atomic_store(&early, 0);
    CU_ASSERT_EQUAL(pu_job(rt, fp, 0, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pu_entered) == 1);
    CU_ASSERT_EQUAL(pu_job(rt, fp, 1, A_OK, 0), SHOAL_OK); /* its mailbox: now full */
    shoal_pid_t pr2;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &producer, NULL, NULL, &pr2), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pr2, 0, &fp, sizeof fp), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&notify_rc) != 1);
    CU_ASSERT_EQUAL(atomic_load(&notify_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&rooms), 0); /* not while the worker is stuck */
    atomic_store(&pu_gate, 1);
    WAIT_UNTIL(atomic_load(&prod_done) == 1);
    CU_ASSERT_EQUAL(atomic_load(&prod_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&rooms), atomic_load(&refusals));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, fp).messages_unhandled,
                    (uint64_t)atomic_load(&refusals));
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"capacity is buffer + size x prefetch", capacity_is_buffer_plus_size_times_prefetch},
        {"prefetch and buffer change live", prefetch_and_buffer_change_live},
        {"drain empties the buffer first", drain_empties_the_buffer_first},
        {"a refused producer waits for room", a_refused_producer_waits_for_room},
        {NULL, NULL},
    };
    return shoal_test_run("pull_capacity", cases);
}
