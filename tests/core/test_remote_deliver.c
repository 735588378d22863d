/* test_remote_deliver.c - what an isolated pool's child sends back
 * (core/pool/remote_deliver.c): a send to an actor here that refuses it is
 * dropped, counted and logged; a child that writes nonsense into its ring
 * is stopped once and said once, and nothing spins. The rig and the
 * stand-in children: support/remote_kit.h.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "remote_kit.h"
#include "support.h"
#include "pool/swap.h"

/* ---- what a child sends to an actor here is handled or counted -------------------- */

/* An actor with a mailbox of one whose first message holds it until the
 * gate opens. */
static atomic_int gate_in, gate_open, gate_got;

static int gate_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_fetch_add(&gate_got, 1);
    atomic_store(&gate_in, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate_open), RK_WAIT_S);
    return SHOAL_OK;
}
static const shoal_behaviour_t gate = {.name = "gate", .handle_message = gate_message};

/* Whether the pool's inspect has `field` (a JSON key and its value). */
static bool inspect_has(rk_rig_t *g, const char *field)
{
    shoal_answer_t a;
    if (shoal_runtime_inspect(g->rt, g->pid, RK_TMO_MS, &a) != SHOAL_OK)
        return false;
    bool has = a.status == 0 && a.data != NULL && strstr(a.data, field) != NULL;
    shoal_answer_release(&a);
    return has;
}

/* The child's worker sends 3 messages to an actor here whose mailbox (of
 * one) is full but for one: one is delivered, two are refused there. The
 * child was told SHOAL_OK for each (it cannot wait for the answer): the two
 * are dropped, counted (inspect's process_sends_dropped) and logged -- the
 * first at once, the rest of the burst a second later -- never delivered
 * over the receiver's limit. Delivered + dropped = sent. (Before the fix
 * the two vanished: no count, no line.) */
static void refused_sends_counted(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    atomic_store(&gate_in, 0);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_got, 0);
    shoal_spawn_opts_t o = {.mailbox_limit = 1};
    shoal_pid_t to;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(g.rt, &gate, NULL, &o, &to), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, to, 1, "first", 5), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate_in), RK_WAIT_S);
    CU_ASSERT_TRUE(atomic_load(&gate_in)); /* its mailbox is empty, its limit 1 */
    rk_fake_send_t fs = {.to = to, .copies = 3};
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, RK_FAKE_SEND, &fs, sizeof fs), SHOAL_OK);
    char first[160], rest[160];
    snprintf(first, sizeof first,
             "sent a message to <%u.%u> that was refused here (SHOAL_EFULL): dropped (its worker "
             "was told SHOAL_OK)",
             (unsigned)shoal__pid_slot(to), (unsigned)shoal__pid_gen(to));
    snprintf(rest, sizeof rest,
             ": 1 more message its workers sent was refused here and dropped (the last, to "
             "<%u.%u>: SHOAL_EFULL)",
             (unsigned)shoal__pid_slot(to), (unsigned)shoal__pid_gen(to));
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(first), RK_WAIT_S);
    shoal_test_assert_logged(first);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(rest), RK_WAIT_S);
    shoal_test_assert_logged(rest);
    CU_ASSERT_EQUAL(shoal_test_log_count("that was refused here"), 1);
    CU_ASSERT_TRUE(inspect_has(&g, "\"process_sends_dropped\":2"));
    atomic_store(&gate_open, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate_got) == 2, RK_WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&gate_got), 2); /* its first, and one of the three */
    CU_ASSERT_TRUE(inspect_has(&g, "\"process_sends_dropped\":2"));
    rk_rig_down(&g);
}

/* ---- a child that writes nonsense into its ring ----------------------------------- */

/* This process's CPU time, in seconds. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU this process uses over one second of wall time (idle here but
 * for the supervisor, the runtime's two threads and the test's naps). */
static double cpu_over_a_second(void)
{
    double c0 = cpu_now(), t0 = shoal_test_now();
    while (shoal_test_now() < t0 + 1.0)
        shoal_test_nap();
    return cpu_now() - c0;
}

static void nonsense_line(char *line, size_t size, int pid)
{
    snprintf(line, size, "isolated worker process %d wrote nonsense into its channel: stopped",
             pid);
}

/* The current child writes garbage over the ring the supervisor reads: it
 * is said once, killed once, and the pool's next child serves; the
 * supervisor sleeps meanwhile. (Before the fix the broken ring counted as
 * a record waiting, so the supervisor never slept; each turn said so and
 * killed the child again until it was reaped: hundreds of lines.) */
static void nonsense_current_stopped_once(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    int child = atomic_load(&f.pid);
    char line[160];
    nonsense_line(line, sizeof line, child);
    uint32_t ms = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, RK_FAKE_SCRIBBLE, &ms, sizeof ms), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), RK_WAIT_S);
    shoal_test_assert_logged(line);
    SHOAL_TEST_WAIT_UNTIL(rk_died(&g) == 1, RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_died(&g), 1);
    double cpu = cpu_over_a_second();
    printf("\n  %.3f s of CPU in the second after ... ", cpu);
    CU_ASSERT(cpu < 0.3);
    CU_ASSERT_EQUAL(shoal_test_log_count("wrote nonsense into its channel"), 1);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != 0 && rk_current_pid(&g) != child, RK_WAIT_S);
    rk_call_answered(&g);
    rk_rig_down(&g);
}

/* A retiring child -- replaced at a swap's commit, told to drain, still
 * running -- writes garbage over its ring: it is said once and killed at
 * once, whatever its role, and the supervisor sleeps meanwhile; the new
 * child serves. (Before the fix a retiring child was never killed for it,
 * nor named: the supervisor spun on the broken ring, a whole core, until
 * the child exited on its own -- its drain may take up to 24 h.) */
static void nonsense_retiring_stopped_once(void)
{
    rk_fake_t f1 = {0}, f2 = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    char line[160];
    nonsense_line(line, sizeof line, old);
    uint32_t ms = 1500; /* after the commit below */
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, RK_FAKE_SCRIBBLE, &ms, sizeof ms), SHOAL_OK);
    uint64_t token = 0;
    CU_ASSERT_EQUAL_FATAL(rk_swap_prepare(&g, &f2, &token), SHOAL_OK);
    CU_ASSERT_EQUAL(rk_swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) == atomic_load(&f2.pid), RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f2.pid));
    bool early = shoal_test_log_has(line);
    CU_ASSERT_FALSE(early); /* else it was not retiring yet: the case tests nothing */
    CU_ASSERT_TRUE(rk_running(old));
    /* It scribbles 1.5 s after the cast, then stays 10 s. */
    double t0 = shoal_test_now();
    SHOAL_TEST_WAIT_UNTIL(shoal_test_now() > t0 + 1.7, 3.0);
    double cpu = cpu_over_a_second();
    printf("\n  %.3f s of CPU in the second after ... ", cpu);
    CU_ASSERT(cpu < 0.3);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), 3.0);
    shoal_test_assert_logged(line);
    SHOAL_TEST_WAIT_UNTIL(!rk_running(old), 3.0);
    CU_ASSERT_FALSE(rk_running(old));
    CU_ASSERT_EQUAL(shoal_test_log_count("wrote nonsense into its channel"), 1);
    CU_ASSERT_EQUAL(rk_current_pid(&g), atomic_load(&f2.pid));
    rk_call_answered(&g);
    rk_rig_down(&g);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--fake-child") == 0)
        return rk_fake_child(argc, argv);
    static const shoal_test_case_t cases[] = {
        {"what a child sends to a full actor here is dropped, counted and logged",
         refused_sends_counted},
        {"a child that writes nonsense into its ring is stopped once, said once",
         nonsense_current_stopped_once},
        {"a retiring child that writes nonsense is stopped at once; nothing spins",
         nonsense_retiring_stopped_once},
        {NULL, NULL},
    };
    return shoal_test_run("remote_deliver", cases);
}
