/* test_remote_supervisor.c - the life of an isolated pool's children
 * (core/pool/remote_supervisor.c, remote_grace.c): started, published,
 * replaced at a swap's commit, buried when they end; a dead child told at
 * once, whatever a sender's region; a swap's steps in order; a restart
 * that cannot start says why; a drain that comes as a restarted child
 * says UP is carried out; a commit that ends an outage is heard, and stops
 * a restart still starting; a restart that fails leaves the pool to the
 * replacement beside it. The rig, the stand-in children and the
 * readers: support/remote_kit.h.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "remote_kit.h"
#include "support.h"
#include "pool/swap.h"

/* ---- a commit waits for the senders before the old child drains ------------------- */

/* A sender that found the old child just before a commit copies into its
 * ring after the commit: the old child is asked to drain only after that
 * sender's region, so it takes the message, handles it and exits cleanly;
 * nothing is counted failed and no death is logged. (Before the fix the
 * old child was told to drain at the commit, saw an empty ring, exited and
 * its channel was unmapped under the sender: the sender's copy crashed
 * shoald, or its message was counted failed without a word.) */
static void commit_waits_for_senders(void)
{
    rk_fake_t f1 = {0}, f2 = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    rk_reader_t rd;
    pthread_t t;
    rk_reader_start(&rd, &g, &t);
    CU_ASSERT_PTR_NOT_NULL(rd.seen);
    uint64_t token = 0;
    CU_ASSERT_EQUAL(rk_swap_prepare(&g, &f2, &token), SHOAL_OK);
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) == atomic_load(&f2.pid), RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f2.pid));
    /* The reader still could copy into the old child: it must be there,
     * not told to drain. Give a wrong supervisor time to show it. */
    SHOAL_TEST_WAIT_UNTIL(!rk_running(old), 0.5);
    bool still = rk_running(old);
    CU_ASSERT_TRUE(still);
    if (!still) { /* its channel is gone: the reader must not touch it */
        rk_reader_end(&rd, t, RK_LEAVE);
        rk_rig_down(&g);
        return;
    }
    rk_reader_end(&rd, t, RK_GO);
    CU_ASSERT_EQUAL(rd.send_rc, SHOAL_OK);
    /* Now it drains: takes the late message, and exits. */
    SHOAL_TEST_WAIT_UNTIL(!rk_running(old), RK_WAIT_S);
    CU_ASSERT_FALSE(rk_running(old));
    shoal_pool_stats_t st;
    for (double end = shoal_test_now() + RK_WAIT_S; shoal_test_now() < end; shoal_test_nap()) {
        st = shoal_test_pool_stats(g.rt, g.pid);
        if (st.messages_handled + st.messages_failed >= 1)
            break;
    }
    st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(rk_died(&g), 0);
    CU_ASSERT_FALSE(shoal_test_log_has("isolated worker process"));
    rk_rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
}

/* ---- a death is told at once, however long a region lasts ------------------------- */

/* A thread stays in its read-side region (as a dispatcher thread does for
 * the whole turn of a handler that runs long, or never returns) while the
 * current child is killed: the death is logged and told to the pool at
 * once, and the pool's next child is up at once; the dead child's channel
 * stays mapped while the region lasts (a sender in it may still be copying
 * into it: the reader reads it) and goes once it has ended. (Before the
 * fix the supervisor waited for the region to end before it did anything
 * else: the death's log, the restart, replies and commands all waited for
 * an unrelated handler, for ever if it never returned.) */
static void death_told_at_once(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    int first = atomic_load(&f.pid);
    rk_reader_t rd;
    pthread_t t;
    rk_reader_start(&rd, &g, &t);
    CU_ASSERT_EQUAL(rk_channels_open(), 1);
    /* Its two doorbells: the parent's own ends, not the child's (closed
     * once the child had its copies). */
    CU_ASSERT_EQUAL(rk_sockets_open(), 2);
    char line[128];
    snprintf(line, sizeof line, "isolated worker process %d was killed by SIGKILL", first);
    double t0 = shoal_test_now();
    kill(first, SIGKILL);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), 5.0);
    bool told = shoal_test_log_has(line);
    CU_ASSERT_TRUE(told);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != 0 && rk_current_pid(&g) != first, 5.0);
    int second = rk_current_pid(&g);
    CU_ASSERT_TRUE(second != 0 && second != first);
    printf("\n  death logged and next child up in %.0f ms, a region still open ... ",
           (shoal_test_now() - t0) * 1000);
    if (!told) {
        rk_reader_end(&rd, t, RK_LEAVE);
        rk_rig_down(&g);
        return;
    }
    CU_ASSERT_EQUAL(rk_died(&g), 1);
    CU_ASSERT_EQUAL(atomic_load(&f.launches), 2);
    /* The dead child's channel is still there, beside the new one's. */
    CU_ASSERT_EQUAL(rk_channels_open(), 2);
    CU_ASSERT_EQUAL(rk_sockets_open(), 4);
    rk_reader_end(&rd, t, RK_TOUCH);
    CU_ASSERT_EQUAL(rd.state, SHOAL_REMOTE_UP); /* as it left it */
    /* The region has ended: the dead child's channel goes. */
    SHOAL_TEST_WAIT_UNTIL(rk_channels_open() == 1, RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_channels_open(), 1);
    CU_ASSERT_EQUAL(rk_sockets_open(), 2);
    rk_rig_down(&g);
}

/* ---- a prepared child lost before the commit -------------------------------------- */

/* Prepares a swap (from f2), then kills its child: the pool's actor has
 * heard of the death (logged) when this returns; the token in *token. */
static void prepare_then_lose(rk_rig_t *g, rk_fake_t *f2, uint64_t *token)
{
    CU_ASSERT_EQUAL_FATAL(rk_swap_prepare(g, f2, token), SHOAL_OK);
    int lost = atomic_load(&f2->pid);
    kill(lost, SIGKILL);
    char line[128];
    snprintf(line, sizeof line, "isolated worker process %d was killed by SIGKILL", lost);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), RK_WAIT_S);
    CU_ASSERT_TRUE(shoal_test_log_has(line));
}

/* The swap's child dies after it said PREPARED, before the COMMIT: the
 * COMMIT still takes. A child is started from the new code (the swap's
 * launch again) while the old one serves on (it is held at the launch's
 * gate: the old one is still the current one), then it takes over and the
 * old one drains and exits. One death is counted (the lost child), not
 * the drain. (Before the fix the COMMIT found no prepared child and did
 * nothing: the old child served the old code on, while the pool's record
 * and the host's said the new code; its restarts started the old code
 * again, and later reloads saw nothing to change: the reload was a no-op
 * that reported success.) */
static void lost_child_replaced_at_commit(void)
{
    rk_fake_t f1 = {0}, f2 = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    uint64_t token = 0;
    prepare_then_lose(&g, &f2, &token);
    atomic_store(&f2.gate, 1);
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&f2.waiting), 5.0);
    CU_ASSERT_TRUE(atomic_load(&f2.waiting)); /* the new code's child is being started */
    CU_ASSERT_EQUAL(rk_current_pid(&g), old); /* meanwhile the old one serves */
    CU_ASSERT_TRUE(rk_running(old));
    atomic_store(&f2.gate, 0);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != old && rk_current_pid(&g) != 0, 5.0);
    CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f2.pid));
    CU_ASSERT_EQUAL(atomic_load(&f2.launches), 2);
    SHOAL_TEST_WAIT_UNTIL(!rk_running(old), RK_WAIT_S);
    CU_ASSERT_FALSE(rk_running(old));
    CU_ASSERT_EQUAL(rk_died(&g), 1);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1); /* the old code's, at the commit */
    rk_rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
}

/* As above, but the new code's child cannot be started at the commit: it
 * says so; the old one drains all the same (the pool no longer has its
 * code), and the pool starts the new code again under its restart budget
 * -- up once its launch works. */
static void lost_child_replacement_fails(void)
{
    rk_fake_t f1 = {0}, f2 = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    uint64_t token = 0;
    prepare_then_lose(&g, &f2, &token);
    atomic_store(&f2.fail, 1);
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    const char *said = "the worker process of its new code did not come up (fake: no process "
                       "today); the one of the old code drains";
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(said), RK_WAIT_S);
    shoal_test_assert_logged(said);
    SHOAL_TEST_WAIT_UNTIL(!rk_running(old), RK_WAIT_S);
    CU_ASSERT_FALSE(rk_running(old));
    atomic_store(&f2.fail, 0);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != 0 && rk_current_pid(&g) == atomic_load(&f2.pid),
                          RK_WAIT_S);
    CU_ASSERT_NOT_EQUAL(rk_current_pid(&g), 0);
    CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f2.pid));
    CU_ASSERT_EQUAL(atomic_load(&f1.launches), 1); /* never the old code again */
    rk_rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
}

/* ---- a restart that cannot start says why ----------------------------------------- */

/* The child is killed and the next one cannot be started (its launch
 * fails): the pool says why (it used to say nothing but the death, and,
 * once past its budget, "degraded ... (last: handler failed)"), and starts
 * one again once the launch works. */
static void failed_restart_says_why(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    int first = atomic_load(&f.pid);
    atomic_store(&f.fail, 1);
    kill(first, SIGKILL);
    const char *said = "iso: its isolated worker process did not start: fake: no process today";
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(said), RK_WAIT_S);
    shoal_test_assert_logged(said);
    atomic_store(&f.fail, 0);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != 0 && rk_current_pid(&g) != first, RK_WAIT_S);
    CU_ASSERT_TRUE(rk_current_pid(&g) != 0 && rk_current_pid(&g) != first);
    rk_rig_down(&g);
}

/* ---- a swap's steps are carried out in the order given ---------------------------- */

typedef struct asker_s {
    rk_rig_t *g;
    rk_fake_t *f;
    uint64_t token;
    int rc;
    atomic_int done;
} asker_t;

/* The host's PREPARE, from a thread of its own (it waits for the answer). */
static void *ask(void *arg)
{
    asker_t *a = arg;
    a->rc = rk_swap_prepare(a->g, a->f, &a->token);
    atomic_store(&a->done, 1);
    return NULL;
}

/* Whether the pool's actor has taken the offer of the n-th swap asked
 * (whose token is n). */
static bool offer_taken(rk_rig_t *g, uint64_t n)
{
    pthread_mutex_lock(&g->p->offer_lock);
    bool taken = g->p->offer_seq >= n && g->p->offer == NULL;
    pthread_mutex_unlock(&g->p->offer_lock);
    return taken;
}

/* The supervisor is busy starting swap 2's child (its launch held at a
 * gate) while the host gives swap 2 up (ABORT) and prepares swap 3: both
 * steps wait for the supervisor together. Carried out in that order, the
 * ABORT stops swap 2's child and releases its launch, and swap 3's child
 * starts and is committed. (Before the fix the steps were bits, and the
 * PREPARE's launch a single slot: swap 2's launch, put back when its
 * child had started, overwrote swap 3's; then PREPARE ran before ABORT,
 * and both acted on swap 2 -- swap 3 was never started, its PREPARE never
 * answered, its launch never released. Other interleavings started a
 * child from a launch the ABORT had released and zeroed.) */
static void swap_steps_in_order(void)
{
    rk_fake_t f1 = {0}, f2 = {0}, f3 = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f1))
        return;
    atomic_store(&f2.gate, 1);
    asker_t a2 = {.g = &g, .f = &f2}, a3 = {.g = &g, .f = &f3};
    pthread_t t2, t3;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t2, NULL, ask, &a2), 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&f2.waiting), RK_WAIT_S);
    CU_ASSERT_TRUE_FATAL(atomic_load(&f2.waiting));
    CU_ASSERT_TRUE_FATAL(offer_taken(&g, 1));
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_ABORT, 1), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&a2.done), RK_WAIT_S);
    CU_ASSERT_EQUAL(a2.rc, SHOAL_ESHUTDOWN); /* "the swap was aborted" */
    pthread_join(t2, NULL);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t3, NULL, ask, &a3), 0);
    SHOAL_TEST_WAIT_UNTIL(offer_taken(&g, 2), RK_WAIT_S); /* its PREPARE is the supervisor's */
    CU_ASSERT_TRUE(offer_taken(&g, 2));
    atomic_store(&f2.gate, 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&a3.done), RK_WAIT_S + RK_TMO_MS / 1000.0);
    pthread_join(t3, NULL);
    CU_ASSERT_EQUAL(a3.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&f3.launches), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.launches), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
    if (a3.rc == SHOAL_OK) {
        CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, a3.token), SHOAL_OK);
        SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) == atomic_load(&f3.pid), RK_WAIT_S);
        CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f3.pid));
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&f1.releases) == 1, RK_WAIT_S);
        CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1); /* the old code's, at the commit */
        CU_ASSERT_EQUAL(atomic_load(&f3.releases), 0); /* the pool's now */
    }
    SHOAL_TEST_WAIT_UNTIL(!rk_running(atomic_load(&f2.pid)), RK_WAIT_S);
    CU_ASSERT_FALSE(rk_running(atomic_load(&f2.pid)));
    rk_rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f3.releases), 1);
}

/* ---- a drain asked while the next child starts ---------------------------------- */

/* Kills f's current child (first) and waits until the pool has launched the
 * next one from f: its pid (first if it did not, asserted). */
static int kill_and_relaunch(rk_fake_t *f)
{
    int first = atomic_load(&f->pid), launched = atomic_load(&f->launches);
    kill(first, SIGKILL);
    SHOAL_TEST_WAIT_UNTIL(
        atomic_load(&f->launches) == launched + 1 && atomic_load(&f->pid) != first, RK_WAIT_S);
    int next = atomic_load(&f->pid);
    CU_ASSERT_NOT_EQUAL(next, first);
    return next;
}

/* Creates the file a stand-in child waits for (up_after). */
static void touch(const char *path)
{
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL(fp);
    if (fp != NULL)
        fclose(fp);
}

typedef struct drainer_s {
    rk_rig_t *g;
    int rc;
    atomic_int done;
} drainer_t;

/* The host's drain of the pool, from a thread of its own (it waits). */
static void *drain_pool(void *arg)
{
    drainer_t *d = arg;
    d->rc = shoal_pool_drain(d->g->rt, d->g->pid, 10000);
    atomic_store(&d->done, 1);
    return NULL;
}

/* The child after a death is starting when the pool drains (shoald's
 * SIGTERM just after a crash), and the supervisor's wake that takes the
 * drain is the one that sees the child up: the child is told to drain, is
 * never published, and exits cleanly; the drain is done at once. The case
 * holds the supervisor's lock over the moment the child says UP, with the
 * drain command posted, so that both are news in its next wake. (Before
 * the fix that wake asked the child to drain, then published it as up:
 * published, its grace period never began, it was never told, and the
 * drain waited out its deadline -- shoald exited 3, "pool iso still busy",
 * about one stop in forty under the address sanitizer.) */
static void drain_while_restarting(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    char up[64];
    snprintf(up, sizeof up, "/tmp/shoal-test-up-%d", (int)getpid());
    unlink(up);
    atomic_store(&f.up_after, up);
    int first = atomic_load(&f.pid);
    int second = kill_and_relaunch(&f);
    CU_ASSERT_NOT_EQUAL_FATAL(second, first);
    shoal_remote_t *r = g.r;
    child_t *c = NULL;
    for (double end = shoal_test_now() + RK_WAIT_S; c == NULL && shoal_test_now() < end;
         shoal_test_nap()) {
        pthread_mutex_lock(&r->lock);
        for (child_t *k = r->children; k != NULL; k = k->next)
            if (k->pid == second)
                c = k;
        if (c == NULL)
            pthread_mutex_unlock(&r->lock);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(c); /* (the lock is held from here) */
    /* The drain, as shoal__remote_command posts it, but the lock kept. */
    r->cmds |= CMD_DRAIN;
    uint64_t one = 1;
    CU_ASSERT_EQUAL(write(r->cmd_efd, &one, sizeof one), (ssize_t)sizeof one);
    drainer_t d = {.g = &g};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, drain_pool, &d), 0);
    touch(up);
    SHOAL_TEST_WAIT_UNTIL(
        atomic_load_explicit(&c->area->state, memory_order_acquire) == SHOAL_REMOTE_UP, RK_WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&c->area->state), SHOAL_REMOTE_UP);
    /* What the case is for: the supervisor has not seen it up yet. */
    CU_ASSERT_PTR_NULL(atomic_load(&r->cur));
    pthread_mutex_unlock(&r->lock);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&d.done), 12.0);
    CU_ASSERT_TRUE(atomic_load(&d.done));
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(!rk_running(second), RK_WAIT_S);
    CU_ASSERT_FALSE(rk_running(second));
    CU_ASSERT_EQUAL(rk_current_pid(&g), 0); /* never published */
    CU_ASSERT_EQUAL(rk_died(&g), 1);        /* the first, killed; not the drained one */
    char line[128];
    snprintf(line, sizeof line, "isolated worker process %d", second);
    CU_ASSERT_FALSE(shoal_test_log_has(line));
    unlink(up);
    rk_rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f.launches), 2);
}

/* ---- a commit while the pool is down ------------------------------------------- */

/* The pool is degraded -- its child died, every restart since failed to
 * start, past its budget -- when a reload's swap commits new code whose
 * child is up: the pool hears it is up and recovers (its budget's window
 * after the last failure), and serves. (Before the fix the commit
 * published the new child without a word to the pool's actor, which had
 * last heard DOWN: the pool served, but stayed degraded for as long as
 * that child lived -- "degraded" in the table, healthy 0 in /metrics, its
 * source "down" -- what an operator's reload to fix a crashing pool does.) */
static void commit_ends_an_outage(void)
{
    rk_fake_t f1 = {0}, f2 = {0};
    rk_rig_t g;
    if (!rk_rig_up_within(&g, &f1, 2000))
        return;
    atomic_store(&f1.fail, 1);
    kill(atomic_load(&f1.pid), SIGKILL);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has("iso: degraded: more than 10 restarts"), RK_WAIT_S);
    shoal_test_assert_logged("iso: degraded: more than 10 restarts");
    CU_ASSERT_EQUAL(shoal_test_pool_stats(g.rt, g.pid).state, SHOAL_POOL_DEGRADED);
    uint64_t token = 0;
    CU_ASSERT_EQUAL_FATAL(rk_swap_prepare(&g, &f2, &token), SHOAL_OK);
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) == atomic_load(&f2.pid), RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f2.pid));
    SHOAL_TEST_WAIT_UNTIL(shoal_test_pool_stats(g.rt, g.pid).state == SHOAL_POOL_RUNNING,
                          RK_WAIT_S);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(g.rt, g.pid).state, SHOAL_POOL_RUNNING);
    shoal_test_assert_logged("iso: recovered: 1 workers");
    rk_call_answered(&g);
    CU_ASSERT_EQUAL(atomic_load(&f2.launches), 1);
    rk_rig_down(&g);
}

/* A restart is still starting (its start hangs) when a swap commits: the
 * new code's child takes over, and the one still starting -- never up, so
 * nobody sent it anything -- is stopped at once, which is no death; the
 * pool serves, and its drain ends at once. (Before the fix it was told to drain instead, out of
 * reach of the start timeout: a start that hung held it for ever, and the
 * pool's drain waited out its deadline for it.) */
static void commit_stops_a_starting_restart(void)
{
    rk_fake_t f1 = {0}, f2 = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f1))
        return;
    char never[64];
    snprintf(never, sizeof never, "/tmp/shoal-test-never-%d", (int)getpid());
    unlink(never);
    atomic_store(&f1.up_after, never); /* the next one starts and never says UP */
    int first = atomic_load(&f1.pid);
    int starting = kill_and_relaunch(&f1);
    CU_ASSERT_NOT_EQUAL_FATAL(starting, first);
    uint64_t token = 0;
    CU_ASSERT_EQUAL_FATAL(rk_swap_prepare(&g, &f2, &token), SHOAL_OK);
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) == atomic_load(&f2.pid), RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f2.pid));
    SHOAL_TEST_WAIT_UNTIL(!rk_running(starting), 5.0);
    CU_ASSERT_FALSE(rk_running(starting));
    rk_call_answered(&g);
    /* Stopped, not dead: neither counted nor logged as a death. */
    CU_ASSERT_EQUAL(rk_died(&g), 1);
    char line[128];
    snprintf(line, sizeof line, "isolated worker process %d", starting);
    CU_ASSERT_FALSE(shoal_test_log_has(line));
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_pool_drain(g.rt, g.pid, 5000), SHOAL_OK);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 4.0);
    CU_ASSERT_EQUAL(atomic_load(&f1.launches), 2);
    CU_ASSERT_EQUAL(atomic_load(&f2.launches), 1);
    rk_rig_down(&g);
}

/* A restart is still starting when a commit whose prepared child was lost
 * starts the new code's replacement beside it (THE REPLACEMENT); then the
 * restart fails to start (FAILED: a plugin's init that failed): the
 * replacement is the pool's child from then on, and comes up as such --
 * no other child is started. (Before the fix the replacement was left
 * waiting to replace a child that was gone, and the pool's restart
 * started a second child of the new code beside it.) */
static void failed_start_leaves_its_heir(void)
{
    rk_fake_t f1 = {0}, f2 = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f1))
        return;
    uint64_t token = 0;
    prepare_then_lose(&g, &f2, &token);
    int lost = atomic_load(&f2.pid);
    char fail_at[64], up_at[64];
    snprintf(fail_at, sizeof fail_at, "/tmp/shoal-test-fail-%d", (int)getpid());
    snprintf(up_at, sizeof up_at, "/tmp/shoal-test-heir-%d", (int)getpid());
    unlink(fail_at);
    unlink(up_at);
    atomic_store(&f1.up_after, fail_at); /* the restart: starting, to fail at fail_at */
    atomic_store(&f1.fail_start, 1);
    (void)kill_and_relaunch(&f1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&f1.launches), 2);
    atomic_store(&f2.up_after, up_at); /* the replacement: starting, up at up_at */
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&f2.launches) == 2 && atomic_load(&f2.pid) != lost,
                          RK_WAIT_S);
    int heir = atomic_load(&f2.pid);
    CU_ASSERT_NOT_EQUAL_FATAL(heir, lost);
    touch(fail_at);
    const char *said = "iso: its isolated worker process did not start: fake: no start today";
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(said), RK_WAIT_S);
    shoal_test_assert_logged(said);
    touch(up_at);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) == heir, RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_current_pid(&g), heir);
    rk_call_answered(&g);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&f2.launches) > 2, 0.5); /* a wrong restart's time */
    CU_ASSERT_EQUAL(atomic_load(&f2.launches), 2);
    CU_ASSERT_EQUAL(atomic_load(&f1.launches), 2);
    unlink(fail_at);
    unlink(up_at);
    rk_rig_down(&g);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--fake-child") == 0)
        return rk_fake_child(argc, argv);
    static const shoal_test_case_t cases[] = {
        {"a commit waits for the senders before the old child drains", commit_waits_for_senders},
        {"a death is told at once, however long a region lasts", death_told_at_once},
        {"a swap's steps are carried out in the order given", swap_steps_in_order},
        {"a prepared child lost before the commit is replaced from the new code",
         lost_child_replaced_at_commit},
        {"a replacement that cannot start: the old child drains, the new code is retried",
         lost_child_replacement_fails},
        {"a restart that cannot start says why", failed_restart_says_why},
        {"a drain asked while the next child starts is carried out", drain_while_restarting},
        {"a commit while the pool is degraded: it is up, and recovers", commit_ends_an_outage},
        {"a commit stops a restart still starting", commit_stops_a_starting_restart},
        {"a restart that fails to start leaves the pool to its replacement",
         failed_start_leaves_its_heir},
        {NULL, NULL},
    };
    return shoal_test_run("remote_supervisor", cases);
}
