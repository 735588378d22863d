/* test_agent.c - the control socket's agent (core/host/agent.c): the
 * args of an epic (shoalctl epic POOL ARGS) have one owner at a time and
 * are freed exactly once on every path -- taken by the callee that reads
 * the call, or freed with a call dropped unread (its callee ended with it
 * queued, after the agent's timeout), or by the agent when the call is not
 * made (the job came past its timeout, the callee is gone). The callee is
 * a stand-in for a pull pool that takes the args as the pool does
 * (pool/commands.c): it clears the payload's two fields.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/agent.h"
#include "pool/pool.h" /* SHOAL__POOL_EPIC_ARGS */
#include "pool/pull.h"
#include "shoal/shoal.h"
#include "support.h"

#define WAIT_S 10.0

/* ---- the args and who freed them ----------------------------------------------- */

static atomic_int freed;

static void args_free(void *args)
{
    free(args);
    atomic_fetch_add(&freed, 1);
}

static shoal_pull_epic_args_t args_new(void)
{
    int *v = malloc(sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    *v = 42;
    return (shoal_pull_epic_args_t){.args = v, .free_args = args_free};
}

/* ---- the callee ------------------------------------------------------------------ */

/* A cast of this type makes it sleep in its handler that many ms, then end
 * if the payload's second word says so: a call that comes meanwhile waits
 * in its mailbox. */
#define NAP 1u
typedef struct nap_s {
    uint32_t ms, end;
} nap_t;

static atomic_int napping, took;

static int callee_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == NAP && msg->size == sizeof(nap_t)) {
        nap_t n;
        memcpy(&n, msg->data, sizeof n);
        atomic_store(&napping, 1);
        struct timespec ts = {n.ms / 1000, (long)(n.ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        if (n.end)
            shoal_exit(ctx, SHOAL_OK);
        return SHOAL_OK;
    }
    return SHOAL_OK;
}

static int callee_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)state;
    if (msg->type != SHOAL__POOL_EPIC_ARGS || msg->size != sizeof(shoal_pull_epic_args_t)) {
        shoal_reply_error(reply, SHOAL_EINVAL);
        return SHOAL_OK;
    }
    /* As the pool takes them: ours, the payload cleared. */
    shoal_pull_epic_args_t ea;
    memcpy(&ea, msg->data, sizeof ea);
    shoal_pull_epic_args_t *box = (shoal_pull_epic_args_t *)(uintptr_t)msg->data;
    box->args = NULL;
    box->free_args = NULL;
    atomic_fetch_add(&took, 1);
    ea.free_args(ea.args);
    int32_t status = SHOAL_OK;
    return shoal_reply_set(reply, SHOAL__POOL_EPIC_ARGS, &status, sizeof status);
}

static const shoal_behaviour_t callee = {
    .name = "epic-callee",
    .handle_message = callee_message,
    .handle_call = callee_call,
};

/* ---- the rig --------------------------------------------------------------------- */

typedef struct rig_s {
    shoal_runtime_t *rt;
    shoal_agent_t *agent;
    shoal_pid_t pid; /* the callee */
} rig_t;

static void rig_up(rig_t *g)
{
    atomic_store(&freed, 0);
    atomic_store(&napping, 0);
    atomic_store(&took, 0);
    g->rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g->rt);
    CU_ASSERT_EQUAL_FATAL(shoal__agent_start(g->rt, &g->agent), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(g->rt, &callee, NULL, 0, &g->pid), SHOAL_OK);
}

static void rig_down(rig_t *g)
{
    shoal__agent_stop(g->agent);
    shoal_runtime_destroy(g->rt);
}

/* Submits job `id`, the epic ea to `to`, within timeout_ms. */
static void submit(rig_t *g, uint64_t id, shoal_pid_t to, shoal_pull_epic_args_t ea,
                   uint64_t timeout_ms)
{
    CU_ASSERT_EQUAL(shoal__agent_submit(g->agent, id, SHOAL_AGENT_CALL_PRIORITY,
                                        SHOAL__POOL_EPIC_ARGS, &ea, sizeof ea, &to, 1, timeout_ms),
                    SHOAL_OK);
}

/* Job id's result (its one request's rc), once posted; -1 if it was not
 * within WAIT_S. */
static int result_of(rig_t *g, uint64_t id)
{
    int rc = -1;
    bool got = false;
    for (double end = shoal_test_now() + WAIT_S; !got && shoal_test_now() < end;) {
        struct pollfd p = {.fd = shoal__agent_fd(g->agent), .events = POLLIN};
        poll(&p, 1, 10);
        for (shoal_agent_done_t *d = shoal__agent_take(g->agent), *next; d != NULL; d = next) {
            next = d->next;
            if (d->id == id) {
                got = true;
                rc = d->n == 1 ? d->results[0].rc : -1;
            }
            shoal__agent_done_free(d);
        }
    }
    return rc;
}

/* Makes the callee nap nap_ms in its handler, then end; once it naps,
 * submits job id, a fresh epic to it within timeout_ms. */
static void nap_then_submit(rig_t *g, uint64_t id, uint32_t nap_ms, uint64_t timeout_ms)
{
    nap_t n = {.ms = nap_ms, .end = 1};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(g->rt, g->pid, NAP, &n, sizeof n), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&napping, WAIT_S), 1);
    submit(g, id, g->pid, args_new(), timeout_ms);
}

/* ---- the cases ------------------------------------------------------------------- */

/* The callee reads the call: it has the args (freed once, by it), and the
 * agent hears SHOAL_OK. */
static void taken_by_the_callee(void)
{
    rig_t g;
    rig_up(&g);
    submit(&g, 1, g.pid, args_new(), 5000);
    CU_ASSERT_EQUAL(result_of(&g, 1), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&took), 1);
    CU_ASSERT_EQUAL(atomic_load(&freed), 1);
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&freed), 1);
}

/* The callee is busy past the agent's timeout and then ends with the call
 * still queued: the agent answers SHOAL_ETIMEDOUT, and the args are freed
 * with the call, once. (Before the fix they leaked: the agent left them to
 * a pool that never read them.) */
static void dropped_unread_after_the_timeout(void)
{
    rig_t g;
    rig_up(&g);
    nap_then_submit(&g, 2, 1500, 50);
    CU_ASSERT_EQUAL(result_of(&g, 2), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(atomic_load(&freed), 0); /* still queued: the callee may yet read it */
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&freed) != 0, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&took), 0);
    CU_ASSERT_EQUAL(atomic_load(&freed), 1);
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&freed), 1);
}

/* The callee ends with the call queued within the agent's timeout: the
 * agent hears SHOAL_ENOPROC (the runtime answers for an ending actor), and
 * the args are freed with the call, once. */
static void dropped_unread_in_time(void)
{
    rig_t g;
    rig_up(&g);
    nap_then_submit(&g, 3, 200, 5000);
    CU_ASSERT_EQUAL(result_of(&g, 3), SHOAL_ENOPROC);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&freed) != 0, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&took), 0);
    CU_ASSERT_EQUAL(atomic_load(&freed), 1);
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&freed), 1);
}

/* The call is not made: the callee is gone (SHOAL_ENOPROC from the send),
 * or the agent reads the job after its timeout (SHOAL_ETIMEDOUT, nothing
 * sent): the agent frees the args, once. */
static void not_sent(void)
{
    rig_t g;
    rig_up(&g);
    nap_t n = {.ms = 0, .end = 1};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(g.rt, g.pid, NAP, &n, sizeof n), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_runtime_send(g.rt, g.pid, 9, NULL, 0) == SHOAL_ENOPROC, WAIT_S);
    submit(&g, 4, g.pid, args_new(), 5000);
    CU_ASSERT_EQUAL(result_of(&g, 4), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(atomic_load(&freed), 1);
    submit(&g, 5, g.pid, args_new(), 0);
    CU_ASSERT_EQUAL(result_of(&g, 5), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(atomic_load(&freed), 2);
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&freed), 2);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"an epic's args read by the callee are its own", taken_by_the_callee},
        {"an epic's args dropped unread after the agent's timeout are freed once",
         dropped_unread_after_the_timeout},
        {"an epic's args dropped unread within the timeout are freed once", dropped_unread_in_time},
        {"an epic's args the agent never sent are freed once", not_sent},
        {NULL, NULL},
    };
    return shoal_test_run("agent", cases);
}
