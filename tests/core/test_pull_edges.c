/* test_pull_edges.c - pull pools (core/pool/pull.c) at their edges, where
 * a review of the protocol in pull.h found a suspicion; each case is one
 * suspicion made into a test:
 *   - a drain whose last member dies (a job that panics) must still handle
 *     what the buffer holds, as a forward pool's drain does (its sweeper);
 *     and so must a drain whose retired member dies with items it took
 *     into its mailbox (prefetch > 1): they are handed back to a buffer no
 *     member takes from any more;
 *   - a member started while the buffer is empty (a replacement) has never
 *     announced itself in `sleepers`: a sender must still wake it;
 *   - a forward pool whose workers are pull pools counts what their buffers
 *     hold in its queue_depth (forwarded = handled + failed + dropped +
 *     queue_depth);
 *   - a pull pool's own actor that ends with a user message in its own
 *     mailbox (a send that read the slot's kind stale, send.c) dead-letters
 *     it: pull_hand_back is called with the group's own ctx, which has no
 *     member words (run in a child process: a crash fails the case, not the
 *     suite);
 *   - a member that ends while counted in `sleepers` (a STOP while it is
 *     idle) takes itself off the count: sleepers never exceeds the members.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actor/send.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u

enum { T_JOB = 1, T_WHO = 2 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2 };

typedef struct {
    uint32_t seq, act;
} job_t;

static atomic_int done, entered, gate, panicked;

static void reset(void)
{
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    atomic_store(&panicked, 0);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    job_t j;
    if (msg->type != T_JOB || msg->size != sizeof j)
        return 0;
    memcpy(&j, msg->data, sizeof j);
    if (j.act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (j.act & A_PANIC) {
        atomic_fetch_add(&panicked, 1);
        shoal_panic(ctx, "test panic on job %u", (unsigned)j.seq);
    }
    atomic_fetch_add(&done, 1);
    return 0;
}

static int wk_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    (void)msg;
    shoal_pid_t self = shoal_self(ctx);
    return shoal_reply_set(reply, T_WHO, &self, sizeof self);
}

static const shoal_behaviour_t wk = {
    .name = "wk", .handle_message = wk_message, .handle_call = wk_call};

static void pull_spec(shoal_pool_spec_t *s, uint32_t size, uint32_t prefetch, uint32_t buffer)
{
    shoal_pool_spec_init(s);
    s->name = "pull";
    s->worker = &wk;
    s->kind = SHOAL_POOL_KIND_PULL;
    s->size = s->min_size = size;
    s->prefetch = prefetch;
    s->buffer = buffer;
}

static int job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t seq, uint32_t act)
{
    job_t j = {seq, act};
    return shoal_runtime_send(rt, to, T_JOB, &j, sizeof j);
}

/* A pool's record from its PID (the test holds the runtime: it is live). */
static shoal_pool_t *record_of(shoal_runtime_t *rt, shoal_pid_t pid)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
    shoal_group_t *g = atomic_load(&a->group);
    return g != NULL ? shoal__pool_of_group(g) : NULL;
}

/* Whether the pool's actor has ended, read from its record: asking it
 * would leave a message to drop at its end. */
static bool pool_gone(shoal_runtime_t *rt, shoal_pid_t p)
{
    shoal_pool_t *r = shoal__pool_find(rt, p);
    if (r == NULL)
        return true;
    bool ended = shoal__pool_is_ended(r);
    shoal__pool_unref(rt, r);
    return ended;
}

/* ---- drain ------------------------------------------------------------------- */

/* One member blocks on job 0; jobs 1..20 wait in the buffer, job 1 panics.
 * The drain starts, the gate opens: the member takes job 1 and dies. While
 * draining no replacement is started, so nothing takes jobs 2..20; the
 * pool's retry tick then ends it and own_end's sweep drops all 19
 * (msgs_dropped). A forward pool would start a sweeper for them
 * (orphans.c). Expected: the 19 are handled, nothing dropped. */
static void a_drain_whose_last_member_dies_still_handles_the_buffer(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    pull_spec(&s, 1, 1, 50);
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, 0, A_BLOCK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 1);
    CU_ASSERT_EQUAL(job(rt, p, 1, A_PANIC), SHOAL_OK);
    for (uint32_t i = 2; i <= 20; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    /* Until the drain has begun, sends are still taken. */
    int late = 0, rc;
    double end = shoal_test_now() + WAIT_S;
    while ((rc = job(rt, p, 999, A_OK)) != SHOAL_ENOPROC && shoal_test_now() < end) {
        late += rc == SHOAL_OK;
        shoal_test_nap();
    }
    CU_ASSERT_EQUAL(rc, SHOAL_ENOPROC);
    atomic_store(&gate, 1);
    /* The pool ends (one way or the other) ... */
    WAIT_UNTIL(pool_gone(rt, p)); /* (a probe by message would be dropped at its end) */
    CU_ASSERT(pool_gone(rt, p));
    /* ... having handled everything but the job that panicked. */
    CU_ASSERT_EQUAL(atomic_load(&panicked), 1);
    CU_ASSERT_EQUAL(atomic_load(&done), 20 + late);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, 0);
    if (atomic_load(&done) != 20 + late)
        fprintf(stderr, "\n  handled %d of %d, runtime msgs_dropped %llu ", atomic_load(&done),
                20 + late, (unsigned long long)shoal_test_stats(rt).msgs_dropped);
    shoal_runtime_destroy(rt);
}

static atomic_int held_in[2];

static int holder_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    int i = (int)msg->type;
    atomic_store(&held_in[i], 1);
    double end = shoal_test_now() + WAIT_S;
    while (atomic_load(&held_in[i]) == 1 && shoal_test_now() < end)
        shoal_test_nap();
    return 0;
}

static const shoal_behaviour_t holder = {.name = "holder", .handle_message = holder_message};

/* One member, prefetch 4. Both dispatcher threads are held while jobs 0
 * (blocks), 1 (panics), 2 and 3 go into the buffer, so the member's first
 * take moves all four: 0 in hand, 1..3 in its own mailbox; the buffer is
 * empty. The drain then retires the member at once (drain_workers: the
 * buffer is empty). The gate opens: the member panics on 1 and ends; its
 * mailbox's 2 and 3 are handed back into the buffer (pull_hand_back), where
 * no member will ever take them: the pool ends and its sweep drops them.
 * Expected: 2 and 3 handled, nothing dropped. */
static void a_drain_whose_retired_member_dies_still_handles_what_it_held(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s;
    pull_spec(&s, 1, 4, 50);
    shoal_pid_t p, h[2];
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).pool_size, 1); /* started */
    for (uint32_t i = 0; i < 2; i++) {
        atomic_store(&held_in[i], 0);
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &holder, NULL, NULL, &h[i]), SHOAL_OK);
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, h[i], i, NULL, 0), SHOAL_OK);
    }
    WAIT_UNTIL(atomic_load(&held_in[0]) == 1 && atomic_load(&held_in[1]) == 1);
    CU_ASSERT_FATAL(atomic_load(&held_in[0]) == 1 && atomic_load(&held_in[1]) == 1);
    CU_ASSERT_EQUAL(job(rt, p, 0, A_BLOCK), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, 1, A_PANIC), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, 2, A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, 3, A_OK), SHOAL_OK);
    atomic_store(&held_in[0], 2);
    atomic_store(&held_in[1], 2);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.buffer_depth, 0); /* the member took all four */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    /* Draining: the member keeps what it holds until all is settled. */
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).state, SHOAL_POOL_DRAINING);
    atomic_store(&gate, 1);
    WAIT_UNTIL(pool_gone(rt, p)); /* (a probe by message would be dropped at its end) */
    CU_ASSERT(pool_gone(rt, p));
    CU_ASSERT_EQUAL(atomic_load(&panicked), 1);
    CU_ASSERT_EQUAL(atomic_load(&done), 3);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, 0);
    if (atomic_load(&done) != 3)
        fprintf(stderr, "\n  handled %d of 3, runtime msgs_dropped %llu ", atomic_load(&done),
                (unsigned long long)shoal_test_stats(rt).msgs_dropped);
    shoal_runtime_destroy(rt);
}

/* ---- wake-up ------------------------------------------------------------------ */

/* One member: it takes a job that panics and is replaced. The replacement
 * is listed while the buffer is empty (shoal__pull_listed schedules it
 * only if the buffer holds something), has never run a turn, so it never
 * announced itself in sleepers; a sender that then puts an item reads
 * sleepers == 0 and wakes nobody. Expected: the next job is handled. */
static void a_replacement_that_never_ran_is_woken(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    pull_spec(&s, 1, 1, 8);
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    for (uint32_t round = 0; round < 20; round++) {
        CU_ASSERT_EQUAL(job(rt, p, 2 * round, A_PANIC), SHOAL_OK);
        WAIT_UNTIL(shoal_test_pool_stats(rt, p).worker_restarts == round + 1);
        CU_ASSERT_EQUAL_FATAL(shoal_test_pool_stats(rt, p).worker_restarts, round + 1);
        shoal_test_nap(); /* the replacement is listed (restarts counts it) */
        CU_ASSERT_EQUAL(job(rt, p, 2 * round + 1, A_OK), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&done) == (int)round + 1);
        CU_ASSERT_EQUAL(atomic_load(&done), (int)round + 1);
        if (atomic_load(&done) != (int)round + 1) {
            shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
            fprintf(stderr, "\n  round %u: job not handled; buffer_depth %llu, members %u ", round,
                    (unsigned long long)st.buffer_depth, st.pool_size);
            break;
        }
    }
    shoal_runtime_destroy(rt);
}

/* ---- nested ------------------------------------------------------------------ */

/* A forward pool of 2 pull pools (1 member, prefetch 1, buffer 10 each); 6
 * jobs that block: each inner pool's member holds one, its buffer two. The
 * outer pool's stats while they wait: 6 forwarded, nothing settled, so its
 * queue_depth must be 6 (depth_of, stats.c, reads only the inner pools'
 * members' mailboxes: 0). */
static void a_forward_pool_of_pull_pools_counts_their_buffers(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t inner, outer;
    pull_spec(&inner, 1, 1, 10);
    shoal_pool_spec_init(&outer);
    outer.name = "outer";
    outer.worker_pool = &inner;
    outer.size = 2;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &outer, &p), SHOAL_OK);
    for (uint32_t i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, A_BLOCK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 2);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 6);
    CU_ASSERT_EQUAL(st.messages_handled + st.messages_failed + st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.queue_depth, 6);
    if (st.queue_depth != 6)
        fprintf(stderr, "\n  outer: forwarded %llu, queue_depth %llu ",
                (unsigned long long)st.messages_forwarded, (unsigned long long)st.queue_depth);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 6);
    CU_ASSERT_EQUAL(atomic_load(&done), 6);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 6);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_handled, 6);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

/* ---- the pool's own mailbox at its end ---------------------------------------- */

static atomic_int blocker_in;

static int blocker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_store(&blocker_in, 1);
    double end = shoal_test_now() + WAIT_S;
    while (atomic_load(&gate) == 0 && shoal_test_now() < end)
        shoal_test_nap();
    return 0;
}

static const shoal_behaviour_t blocker = {.name = "blocker", .handle_message = blocker_message};

/* In a child process: one dispatcher thread, held by a blocker; a user
 * message lands in the pull pool's own mailbox (as a send that read the
 * slot's kind stale does: shoal__deliver then reserves the user mailbox
 * instead of routing), and a STOP in its system mailbox. The gate opens:
 * the pool's turn handles STOP first and ends with the message still
 * queued; drain (actor.c) gives it to ops->hand_back with the group's own
 * ctx. Exit 0: the pool ended and the runtime was destroyed. */
static int own_mailbox_at_end_child(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(1);
    if (rt == NULL)
        return 2;
    shoal_pool_spec_t s;
    pull_spec(&s, 1, 1, 8);
    shoal_pid_t p, b;
    if (shoal_runtime_spawn_pool(rt, &s, &p) != SHOAL_OK)
        return 3;
    shoal_pool_stats_t st;
    if (shoal_pool_stats(rt, p, &st, TMO) != SHOAL_OK) /* started */
        return 4;
    if (shoal_runtime_spawn(rt, &blocker, NULL, NULL, &b) != SHOAL_OK ||
        shoal_runtime_send(rt, b, 1, NULL, 0) != SHOAL_OK)
        return 5;
    WAIT_UNTIL(atomic_load(&blocker_in) == 1);
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    job_t j = {1, A_OK};
    shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, T_JOB, &j, sizeof j);
    if (e == NULL || shoal__deliver_over(rt, tc, p, e) != SHOAL_OK)
        return 6;
    if (shoal_runtime_stop_actor(rt, p) != SHOAL_OK)
        return 7;
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_STATS, NULL, 0) == SHOAL_ENOPROC);
    if (shoal_runtime_send_priority(rt, p, SHOAL_POOL_STATS, NULL, 0) != SHOAL_ENOPROC)
        return 8;
    shoal_runtime_destroy(rt);
    return 0;
}

static void a_pool_ending_with_its_own_mailbox_not_empty(void)
{
    reset();
    atomic_store(&blocker_in, 0);
    fflush(NULL);
    pid_t child = fork();
    CU_ASSERT_FATAL(child >= 0);
    if (child == 0)
        _exit(own_mailbox_at_end_child());
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
    CU_ASSERT(WIFEXITED(status));
    if (WIFEXITED(status))
        CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
    if (WIFSIGNALED(status))
        fprintf(stderr, "\n  the child died of signal %d (%s) ", WTERMSIG(status),
                strsignal(WTERMSIG(status)));
}

/* ---- sleepers ---------------------------------------------------------------- */

/* Two members go idle (both counted in sleepers), then each is stopped
 * while idle: its STOP ends the turn before ops->take, which is where a
 * member takes itself off the count. Their replacements go idle too. The
 * count must stay <= the members (2); a stale count only costs senders a
 * scan of the table for an IDLE member on every send. */
static void a_member_stopped_while_asleep_leaves_sleepers(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    pull_spec(&s, 2, 1, 8);
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    shoal_pool_t *rec = record_of(rt, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    /* Both members' PIDs: calls, each answered by the member that took
     * it, until two have answered. */
    shoal_pid_t who[2] = {SHOAL_PID_NONE, SHOAL_PID_NONE};
    for (int i = 0; i < 2000 && who[1] == SHOAL_PID_NONE; i++) {
        shoal_answer_t a;
        if (shoal_runtime_call(rt, p, T_WHO, NULL, 0, TMO, &a) != SHOAL_OK)
            continue;
        shoal_pid_t w;
        if (a.status == SHOAL_OK && a.size == sizeof w) {
            memcpy(&w, a.data, sizeof w);
            if (who[0] == SHOAL_PID_NONE)
                who[0] = w;
            else if (w != who[0])
                who[1] = w;
        }
        shoal_answer_release(&a);
    }
    CU_ASSERT_FATAL(who[1] != SHOAL_PID_NONE);
    WAIT_UNTIL(atomic_load(&rec->pull->sleepers) == 2);
    CU_ASSERT_EQUAL(atomic_load(&rec->pull->sleepers), 2);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, who[i]), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).worker_restarts == 2 &&
               shoal_test_pool_stats(rt, p).pool_size == 2);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).pool_size, 2);
    /* Replacements idle: one job each way makes sure they have run. */
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, A_OK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&done) == 4);
    shoal_test_nap();
    WAIT_UNTIL(atomic_load(&rec->pull->sleepers) >= 2);
    uint32_t n = atomic_load(&rec->pull->sleepers);
    CU_ASSERT(n <= 2);
    if (n > 2)
        fprintf(stderr, "\n  sleepers %u with 2 members ", n);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a drain whose last member dies still handles the buffer",
         a_drain_whose_last_member_dies_still_handles_the_buffer},
        {"a drain whose retired member dies still handles what it held",
         a_drain_whose_retired_member_dies_still_handles_what_it_held},
        {"a replacement that never ran is woken", a_replacement_that_never_ran_is_woken},
        {"a forward pool of pull pools counts their buffers",
         a_forward_pool_of_pull_pools_counts_their_buffers},
        {"a pool ending with its own mailbox not empty",
         a_pool_ending_with_its_own_mailbox_not_empty},
        {"a member stopped while asleep leaves sleepers",
         a_member_stopped_while_asleep_leaves_sleepers},
        {NULL, NULL}};
    return shoal_test_run("pull_edges", cases);
}
