/* test_pull_source_held.c - a pull pool's source when the pool is started
 * held (as a reload starts its new pools: pool.h, opts held): it asks its
 * source for nothing until the host's SHOAL__POOL_GO -- an actor's is not
 * one --, while a GO to a pool not held changes nothing; and an epic
 * handed over from one pool to another, as a reload that replaces a pool
 * does (SHOAL__POOL_HAND_OVER, then GO with the epic).
 *
 * The source and the members are pull_source_kit.h's: handlers record
 * into atomics; the test thread asserts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "pull_source_kit.h"

/* ---- a pool started held ---------------------------------------------------------- */

static atomic_int goer_rc = 99;

/* Sends SHOAL__POOL_GO, as the host would, to the pool named by its
 * message -- but from an actor, which is not the host. */
static int goer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    shoal_pid_t to;
    if (msg->kind != SHOAL_MSG_CAST || msg->size != sizeof to)
        return SHOAL_OK;
    memcpy(&to, msg->data, sizeof to);
    atomic_store(&goer_rc, shoal_send_priority(ctx, to, SHOAL__POOL_GO, NULL, 0));
    return SHOAL_OK;
}

static const shoal_behaviour_t goer = {.name = "goer", .handle_message = goer_message};

/* A pool started held: its source starts (its init runs once, the epic is
 * running) but is asked for nothing, and no item is handled -- not after a
 * GO from an actor either; after the host's GO (from a thread) every item
 * of the epic is handled once, by the one source; a second GO, to a pool
 * no longer held, changes nothing. */
static void a_held_pool_asks_its_source_only_at_go(void)
{
    ps_reset(5000);
    atomic_store(&goer_rc, 99);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    ps_epic_spec(&s, 2, 64);
    shoal_pid_t p = SHOAL_PID_NONE, g;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start_ex(rt, &s, NULL, &(shoal_pool_opts_t){.held = true},
                                               PS_TMO, &p, why, sizeof why),
                          SHOAL_OK);
    PS_WAIT_UNTIL(atomic_load(&ps_inits) == 1);
    CU_ASSERT_EQUAL(atomic_load(&ps_inits), 1);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).source_state, SHOAL_SOURCE_RUNNING);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &goer, NULL, NULL, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, g, 1, &p, sizeof p), SHOAL_OK);
    PS_WAIT_UNTIL(atomic_load(&goer_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&goer_rc), SHOAL_OK); /* sent, and not taken as a GO */
    ps_settle();
    CU_ASSERT_EQUAL(atomic_load(&ps_requests), 0);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_items, 0);
    CU_ASSERT_EQUAL(st.messages_handled, 0);

    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 5000 &&
                  shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 5000);
    CU_ASSERT_EQUAL(atomic_load(&ps_dups), 0);
    CU_ASSERT(ps_all_once(5000));
    CU_ASSERT_EQUAL(atomic_load(&ps_inits), 1);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(st.source_items, 5000);
    CU_ASSERT_EQUAL(st.source_restarts, 0);
    shoal_test_assert_logged("epic done: 5000 items in ");

    int asked = atomic_load(&ps_requests);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    ps_settle();
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(st.source_items, 5000);
    CU_ASSERT_EQUAL(atomic_load(&ps_requests), asked);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 5000);
    CU_ASSERT_EQUAL(atomic_load(&ps_inits), 1);
    shoal_runtime_destroy(rt);
}

/* SHOAL__POOL_HAND_OVER from the host's thread, answered with the epic. */
static int hand_over(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pull_handover_t *out)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, SHOAL__POOL_HAND_OVER, NULL, 0, PS_TMO, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && a.size == sizeof *out)
        memcpy(out, a.data, sizeof *out);
    else if (rc == SHOAL_OK)
        rc = SHOAL_EINVAL;
    shoal_answer_release(&a);
    return rc;
}

/* A pool started held, told GO with the epic h (host/reload.c's way). */
static shoal_pid_t go_with(shoal_runtime_t *rt, const shoal_pull_handover_t *h)
{
    shoal_pool_spec_t s;
    ps_epic_spec(&s, 2, 64);
    shoal_pid_t p = SHOAL_PID_NONE;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start_ex(rt, &s, NULL, &(shoal_pool_opts_t){.held = true},
                                               PS_TMO, &p, why, sizeof why),
                          SHOAL_OK);
    shoal_pool_t *rec = shoal__pool_find(rt, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    PS_WAIT_UNTIL(atomic_load(&rec->pull->source_up) != 0);
    CU_ASSERT_EQUAL(atomic_load(&rec->pull->source_up), 1); /* its init ran */
    shoal__pool_unref(rt, rec);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, h, sizeof *h), SHOAL_OK);
    return p;
}

/* An epic handed from one pool to another (a reload's replacement, host/
 * host_pull.c): the old pool, its first item held so that the epic is under
 * way, answers SHOAL__POOL_HAND_OVER with its state, count and cursor, and
 * its source stops; a pool started held and told GO with it resumes its own
 * source at that cursor -- every item is handled, and none twice but the
 * one request the old source was answering (at most the room, 66) -- and
 * counts on from the old count. Handed over again once done: the next pool
 * asks its source for nothing. A pool without a source answers
 * SHOAL_ENOTSUP. */
static void an_epic_is_handed_over(void)
{
    ps_reset(100000);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    atomic_store(&ps_gate, 0);
    shoal_pid_t a = ps_spawn(rt, 2, 64);
    PS_WAIT_UNTIL(atomic_load(&ps_requests) >= 2 &&
                  atomic_load(&ps_handled) >= 1); /* a SENT read */
    shoal_pull_handover_t h;
    memset(&h, 0, sizeof h);
    CU_ASSERT_EQUAL_FATAL(hand_over(rt, a, &h), SHOAL_OK);
    CU_ASSERT_EQUAL(h.state, SHOAL_SOURCE_RUNNING);
    CU_ASSERT_EQUAL(h.own_args, 0);
    CU_ASSERT_EQUAL(h.cursor_len, sizeof(uint64_t));
    uint64_t cursor;
    memcpy(&cursor, h.cursor, sizeof cursor);
    CU_ASSERT(cursor > 0 && cursor <= h.items && h.items < 100000);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, a).source_state, SHOAL_SOURCE_DONE);
    shoal_test_assert_logged("epic handed over to the pool that replaces it: ");
    int before = atomic_load(&ps_resumes);
    shoal_pid_t b = go_with(rt, &h);
    atomic_store(&ps_gate, 1);
    /* Every item, not ps_handled >= 100000: that counts the duplicates
     * too, and reached it while the last items were still on their way. */
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, b).source_state == SHOAL_SOURCE_DONE &&
                  ps_all_seen(100000));
    CU_ASSERT_EQUAL(atomic_load(&ps_resumes), before + 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, b);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT(st.source_items >= 100000); /* the old count, and on */
    CU_ASSERT(ps_all_seen(100000));       /* a duplicate may land yet: not ps_all_once */
    CU_ASSERT(atomic_load(&ps_dups) <= 66);
    shoal_test_assert_logged("epic taken over from the pool it replaces (");

    /* Done: handed over again, nothing is asked of the next pool's source. */
    CU_ASSERT_EQUAL_FATAL(hand_over(rt, b, &h), SHOAL_OK);
    CU_ASSERT_EQUAL(h.state, SHOAL_SOURCE_DONE);
    int asked = atomic_load(&ps_requests);
    shoal_pid_t c = go_with(rt, &h);
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, c).source_state == SHOAL_SOURCE_DONE);
    ps_settle();
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, c).source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, c).source_items, h.items);
    CU_ASSERT_EQUAL(atomic_load(&ps_requests), asked);
    shoal_test_assert_logged("epic done already in the pool it replaces (");

    /* No source: nothing to hand over. */
    shoal_pool_spec_t s;
    ps_epic_spec(&s, 1, 8);
    s.source = NULL;
    s.name = "plain";
    shoal_pid_t d = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &d), SHOAL_OK);
    CU_ASSERT_EQUAL(hand_over(rt, d, &h), SHOAL_ENOTSUP);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a pool started held asks its source for nothing until GO",
         a_held_pool_asks_its_source_only_at_go},
        {"an epic is handed over", an_epic_is_handed_over},
        {NULL, NULL}};
    return shoal_test_run("pull_source_held", cases);
}
