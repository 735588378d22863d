/* test_remote_supervisor.c - the life of an isolated pool's children
 * (core/pool/remote_supervisor.c): started, published, replaced at a
 * swap's commit, buried when they end -- and the calls they held
 * answered then (core/pool/remote_calls.c).
 *
 * A real pool with `isolation: process` runs in a real runtime, but its
 * children are this test executable run again (--fake-child): a stand-in
 * for the host's worker process that attaches the channel, says UP,
 * counts every message it takes from its ring as handled (and answers a
 * call with its payload) -- but for a call of type FAKE_HOLD, which it
 * holds unanswered and unsettled -- and, told to drain, finishes once its
 * ring is empty and exits 0. Casts of two types make it misbehave as a
 * plugin in the host's child may: FAKE_SEND sends messages to a PID of the
 * parent, FAKE_SCRIBBLE writes garbage into its ring to the parent.
 * Their launch is
 * fake_launch, which counts its calls and releases and can be held on a
 * gate (the supervisor waits inside it).
 *
 * A "reader" thread stands for a sender: it enters a read-side region
 * (runtime/qsbr.h), finds the child new work goes to as
 * shoal__remote_forward does, and stays there for as long as the test
 * says -- as a dispatcher thread does for a whole turn, or a sender
 * between its look at `cur` and its copy into the ring. Then it does the
 * rest of what a forward does (or nothing) and leaves.
 *
 * Every wait is bounded; a bug fails a case, it does not hang the suite.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/chan.h"
#include "pool/pool.h"
#include "pool/remote.h"
#include "pool/remote_child.h"
#include "runtime/qsbr.h"
#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 20.0
#define TMO_MS 20000u

/* ---- the stand-in child ------------------------------------------------------- */

/* A call of this type the stand-in child holds: it never answers it, nor
 * counts it as settled. Any other call it answers with its payload (a
 * REPLY record, as the host's child sends one) and counts as handled. */
#define FAKE_HOLD 0xF001u

/* A cast of this type, whose payload is a fake_send_t, makes the stand-in
 * child send `copies` messages to `to` (a PID of the parent), as a worker
 * of the host's child sends them: SEND records. */
#define FAKE_SEND 0xF002u
typedef struct fake_send_s {
    uint64_t to;
    uint32_t copies;
} fake_send_t;

/* A cast of this type, whose payload is a uint32_t of milliseconds, makes
 * the stand-in child write garbage over the whole ring the parent reads its
 * records from, that long after (a plugin's stray write into the shared
 * memory); it then stays 10 s more, drained or not, unless killed. */
#define FAKE_SCRIBBLE 0xF003u
#define FAKE_LINGER_S 10.0

/* Garbage over ring 1 (ipc/chan.c: LAYOUT: a page of header, then ring 0,
 * then ring 1, S bytes each), through a mapping of its own of the region. */
static void fake_scribble(shoal_chan_t *ch)
{
    uint64_t s;
    shoal__chan_out_free(ch, &s);
    off_t total = lseek(3, 0, SEEK_END);
    unsigned char *r = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
    if (r == MAP_FAILED)
        return;
    memset(r + 4096 + s, 0xa5, s);
    munmap(r, (size_t)total);
}

/* Answers the call m (its payload `data`, `len` bytes) with that payload. */
static void fake_reply(shoal_chan_t *ch, const shoal_remote_msg_t *m, const void *data, size_t len)
{
    shoal_remote_msg_t r = {.to = m->from, .ref = m->ref, .type = m->type};
    shoal__chan_send(ch, SHOAL_REMOTE_REPLY, &r, sizeof r, data, len, true);
}

/* The child's main: its channel at 3, 4, 5 (as the host's child has it). */
static int fake_child(void)
{
    int fds[3] = {3, 4, 5};
    shoal_chan_t *ch;
    if (shoal__chan_attach(fds, &ch) != SHOAL_OK)
        return 2;
    shoal_remote_area_t *a = shoal__chan_user(ch, NULL);
    shoal_pool_stripe_t *st = shoal__remote_area_stripes(a);
    atomic_store_explicit(&a->nstripes, 1, memory_order_relaxed);
    atomic_store_explicit(&a->pool_size, 1, memory_order_relaxed);
    /* release: pairs with the parent's acquire of state. */
    atomic_store_explicit(&a->state, SHOAL_REMOTE_UP, memory_order_release);
    shoal__chan_send(ch, SHOAL_REMOTE_STATUS, NULL, 0, NULL, 0, true);
    uint32_t seen = 0;
    bool drain = false;
    double scribble_at = 0, scribbled_at = 0; /* shoal_test_now()'s; 0: none */
    for (;;) {
        double now = shoal_test_now();
        if (scribble_at != 0 && now >= scribble_at) {
            fake_scribble(ch);
            scribble_at = 0;
            scribbled_at = now;
        }
        /* acquire: pairs with the parent's release of want_seq. */
        uint32_t seq = atomic_load_explicit(&a->want_seq, memory_order_acquire);
        if (seq != seen) {
            seen = seq;
            drain = atomic_load_explicit(&a->want_drain, memory_order_relaxed) != 0;
        }
        uint32_t tag;
        const void *data;
        size_t len;
        unsigned n = 0;
        int rc;
        while ((rc = shoal__chan_peek(ch, &tag, &data, &len)) == SHOAL_OK) {
            shoal_remote_msg_t m = {0};
            if (len >= sizeof m)
                memcpy(&m, data, sizeof m);
            bool held = tag == SHOAL_REMOTE_CALL && m.type == FAKE_HOLD;
            if (tag == SHOAL_REMOTE_CALL && !held && len >= sizeof m)
                fake_reply(ch, &m, (const char *)data + sizeof m, len - sizeof m);
            uint32_t ms;
            if (tag == SHOAL_REMOTE_CAST && m.type == FAKE_SCRIBBLE &&
                len == sizeof m + sizeof ms) {
                memcpy(&ms, (const char *)data + sizeof m, sizeof ms);
                scribble_at = now + ms / 1000.0;
            }
            fake_send_t fs;
            if (tag == SHOAL_REMOTE_CAST && m.type == FAKE_SEND && len == sizeof m + sizeof fs) {
                memcpy(&fs, (const char *)data + sizeof m, sizeof fs);
                shoal_remote_msg_t out = {.to = fs.to, .type = 7};
                for (uint32_t i = 0; i < fs.copies; i++)
                    shoal__chan_send(ch, SHOAL_REMOTE_SEND, &out, sizeof out, "echo", 4, true);
            }
            if ((tag == SHOAL_REMOTE_CAST || tag == SHOAL_REMOTE_CALL) && !held)
                /* release: pairs with the parent's acquire of handled. */
                atomic_fetch_add_explicit(&st[0].handled, 1, memory_order_release);
            shoal__chan_consume(ch);
            n++;
        }
        if (rc != SHOAL_EBUSY) {
            shoal__chan_destroy(ch);
            return 4;
        }
        bool lingers =
            scribble_at != 0 || (scribbled_at != 0 && now < scribbled_at + FAKE_LINGER_S);
        if (drain && n == 0 && !lingers) {
            /* release: as UP's (the parent's acquire of state). */
            atomic_store_explicit(&a->state, SHOAL_REMOTE_DRAINED, memory_order_release);
            shoal__chan_send(ch, SHOAL_REMOTE_STATUS, NULL, 0, NULL, 0, true);
            shoal__chan_destroy(ch); /* (a leak checker's report would end it unclean) */
            return 0;
        }
        if (n == 0)
            shoal__chan_wait(ch, 20, 0);
    }
}

/* ---- its launch ------------------------------------------------------------------ */

typedef struct fake_s {
    atomic_int launches, releases;
    atomic_int gate;    /* set: a launch waits until it is cleared */
    atomic_int waiting; /* a launch waits at the gate */
    atomic_int fail;    /* set: launches fail (no process) */
    atomic_int pid;     /* the last child it started */
} fake_t;

static int fake_launch(void *user, const int chan_fds[3], pid_t *pid, int *pidfd, char *why,
                       size_t why_size)
{
    fake_t *f = user;
    atomic_fetch_add(&f->launches, 1);
    if (atomic_load(&f->gate)) {
        atomic_store(&f->waiting, 1);
        while (atomic_load(&f->gate))
            shoal_test_nap();
        atomic_store(&f->waiting, 0);
    }
    if (atomic_load(&f->fail)) {
        snprintf(why, why_size, "fake: no process today");
        return SHOAL_EFAILED;
    }
    pid_t child = fork();
    if (child < 0) {
        snprintf(why, why_size, "fork failed");
        return SHOAL_ENOMEM;
    }
    if (child == 0) {
        int high[3];
        for (int i = 0; i < 3; i++)
            if ((high[i] = fcntl(chan_fds[i], F_DUPFD, 100)) < 0)
                _exit(126);
        for (int i = 0; i < 3; i++)
            if (dup2(high[i], 3 + i) < 0)
                _exit(126);
        syscall(SYS_close_range, 6, ~0u, 0);
        char *const argv[] = {"test_remote_supervisor", "--fake-child", NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int fd = (int)syscall(SYS_pidfd_open, child, 0);
    if (fd < 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        snprintf(why, why_size, "pidfd_open failed");
        return SHOAL_EFAILED;
    }
    *pid = child;
    *pidfd = fd;
    atomic_store(&f->pid, child);
    return SHOAL_OK;
}

static void fake_release(void *user)
{
    fake_t *f = user;
    atomic_fetch_add(&f->releases, 1);
}

static shoal_remote_launch_t fake_of(fake_t *f)
{
    return (shoal_remote_launch_t){
        .launch = fake_launch, .release = fake_release, .user = f, .nstripes = 1};
}

/* Whether process pid is there and has not ended (not a zombie either). */
static bool running(int pid)
{
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *end = strrchr(stat, ')'); /* "pid (comm) S ..." */
    return end != NULL && end[1] == ' ' && end[2] != 'Z' && end[2] != 'X';
}

/* How many channels (memfds named shoal:chan) this process has open. */
static int channels_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k > 0) {
            target[k] = '\0';
            n += strstr(target, "memfd:shoal:chan") != NULL;
        }
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* How many sockets this process has open: a channel's doorbell ends. */
static int sockets_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k > 0) {
            target[k] = '\0';
            n += strncmp(target, "socket:", 7) == 0;
        }
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* ---- the pool ------------------------------------------------------------------- */

/* The behaviour the parent's spec names (it never runs in the parent). */
static int idle_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}
static const shoal_behaviour_t idle = {.name = "idle", .handle_message = idle_message};

typedef struct rig_s {
    shoal_runtime_t *rt;
    shoal_pid_t pid;
    shoal_pool_t *p; /* with a reference */
    shoal_remote_t *r;
} rig_t;

static void spec_of(shoal_pool_spec_t *s)
{
    shoal_pool_spec_init(s);
    s->name = "iso";
    s->worker = &idle;
    s->size = 1;
    s->mailbox = 64;
    s->restart.max = 10;
    s->restart.within_ms = 10000;
    s->restart.backoff_ms = 100;
}

/* A runtime (its log kept) and an isolated pool whose first child comes
 * from f; false (asserted, and the runtime destroyed) if it did not start.
 * rig_down ends what rig_up began. */
static bool rig_up(rig_t *g, fake_t *f)
{
    memset(g, 0, sizeof *g);
    g->rt = shoal_test_runtime_logged(2, SHOAL_LOG_INFO);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g->rt);
    shoal_pool_spec_t s;
    spec_of(&s);
    shoal_remote_launch_t l = fake_of(f);
    shoal_pool_opts_t o = {.remote = &l};
    char why[256] = "";
    int rc = shoal__pool_start_ex(g->rt, &s, NULL, &o, TMO_MS, &g->pid, why, sizeof why);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc != SHOAL_OK) { /* torn down: the case returns */
        printf("\n  the pool did not start: %s (%s)\n", shoal_strerror(rc), why);
        shoal_runtime_destroy(g->rt);
        return false;
    }
    g->p = shoal__pool_find(g->rt, g->pid);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g->p);
    g->r = g->p->remote;
    return true;
}

static void rig_down(rig_t *g)
{
    if (g->p != NULL)
        shoal__pool_unref(g->rt, g->p);
    shoal_runtime_destroy(g->rt);
}

/* The host's PREPARE of new code whose child comes from f: the swap's
 * status (SHOAL_OK once it is up), its token in *token. */
static int swap_prepare(rig_t *g, fake_t *f, uint64_t *token)
{
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    spec_of(&sw->chain[0]);
    sw->size = 1;
    sw->remote = fake_of(f);
    shoal_pool_swap_result_t res;
    return shoal__pool_swap_ask(g->rt, g->p, g->pid, sw, TMO_MS, token, &res);
}

static int swap_step(rig_t *g, uint32_t type, uint64_t token)
{
    return shoal__pool_swap_step(g->rt, g->pid, type, token, TMO_MS, NULL);
}

/* The child new work goes to, as inspect says (0: none). */
static int current_pid(rig_t *g)
{
    shoal_remote_info_t ri;
    shoal__remote_info(g->r, &ri);
    return ri.pid;
}

static uint64_t died(rig_t *g)
{
    shoal_remote_info_t ri;
    shoal__remote_info(g->r, &ri);
    return ri.died;
}

/* ---- the reader ------------------------------------------------------------------ */

/* R_GO: copy a message into the ring of the child it found, then leave;
 * R_TOUCH: read that child's state in its channel, then leave; R_LEAVE:
 * leave. */
enum { R_IN = 1, R_GO = 2, R_TOUCH = 3, R_LEAVE = 4, R_OUT = 5 };

typedef struct reader_s {
    rig_t *g;
    atomic_int stage; /* R_IN: in its region, found cur; then told; R_OUT: left */
    child_t *seen;    /* the child it found (read by others after R_IN) */
    int send_rc;      /* R_GO: what its copy into seen's ring returned */
    uint32_t state;   /* R_TOUCH: what it read */
} reader_t;

static void *reader(void *arg)
{
    reader_t *rd = arg;
    shoal_tcache_t *tc = shoal__tcache_get(rd->g->rt);
    shoal__qsbr_enter(tc);
    /* seq_cst: as shoal__remote_forward's (the reader's load of qsbr.h's
     * Dekker pair). */
    rd->seen = atomic_load_explicit(&rd->g->r->cur, memory_order_seq_cst);
    atomic_store(&rd->stage, R_IN);
    while (atomic_load(&rd->stage) == R_IN)
        shoal_test_nap();
    rd->send_rc = SHOAL_EINVAL;
    if (atomic_load(&rd->stage) == R_GO && rd->seen != NULL) {
        /* What shoal__remote_forward does after its load of cur. */
        atomic_fetch_add_explicit(&rd->seen->pushed, 1, memory_order_relaxed);
        shoal_remote_msg_t m = {.type = 7};
        rd->send_rc =
            shoal__chan_send(rd->seen->chan, SHOAL_REMOTE_CAST, &m, sizeof m, "late", 4, true);
    }
    if (atomic_load(&rd->stage) == R_TOUCH && rd->seen != NULL)
        /* acquire: as the supervisor's look at it. */
        rd->state = atomic_load_explicit(&rd->seen->area->state, memory_order_acquire);
    shoal__qsbr_exit(tc);
    atomic_store(&rd->stage, R_OUT);
    return NULL;
}

static void reader_start(reader_t *rd, rig_t *g, pthread_t *t)
{
    memset(rd, 0, sizeof *rd);
    rd->g = g;
    CU_ASSERT_EQUAL_FATAL(pthread_create(t, NULL, reader, rd), 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&rd->stage) == R_IN, WAIT_S);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rd->stage), R_IN);
}

/* Tells the reader to go on (stage R_GO or R_LEAVE) and joins it. */
static void reader_end(reader_t *rd, pthread_t t, int stage)
{
    atomic_store(&rd->stage, stage);
    pthread_join(t, NULL);
}

/* ---- A: a commit waits for the senders before the old child drains ---------------- */

/* A sender that found the old child just before a commit copies into its
 * ring after the commit: the old child is asked to drain only after that
 * sender's region, so it takes the message, handles it and exits cleanly;
 * nothing is counted failed and no death is logged. (Before the fix the
 * old child was told to drain at the commit, saw an empty ring, exited and
 * its channel was unmapped under the sender: the sender's copy crashed
 * shoald, or its message was counted failed without a word.) */
static void commit_waits_for_senders(void)
{
    fake_t f1 = {0}, f2 = {0};
    rig_t g;
    if (!rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    reader_t rd;
    pthread_t t;
    reader_start(&rd, &g, &t);
    CU_ASSERT_PTR_NOT_NULL(rd.seen);
    uint64_t token = 0;
    CU_ASSERT_EQUAL(swap_prepare(&g, &f2, &token), SHOAL_OK);
    CU_ASSERT_EQUAL(swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) == atomic_load(&f2.pid), WAIT_S);
    CU_ASSERT_EQUAL(current_pid(&g), atomic_load(&f2.pid));
    /* The reader still could copy into the old child: it must be there,
     * not told to drain. Give a wrong supervisor time to show it. */
    SHOAL_TEST_WAIT_UNTIL(!running(old), 0.5);
    bool still = running(old);
    CU_ASSERT_TRUE(still);
    if (!still) { /* its channel is gone: the reader must not touch it */
        reader_end(&rd, t, R_LEAVE);
        rig_down(&g);
        return;
    }
    reader_end(&rd, t, R_GO);
    CU_ASSERT_EQUAL(rd.send_rc, SHOAL_OK);
    /* Now it drains: takes the late message, and exits. */
    SHOAL_TEST_WAIT_UNTIL(!running(old), WAIT_S);
    CU_ASSERT_FALSE(running(old));
    shoal_pool_stats_t st;
    for (double end = shoal_test_now() + WAIT_S; shoal_test_now() < end; shoal_test_nap()) {
        st = shoal_test_pool_stats(g.rt, g.pid);
        if (st.messages_handled + st.messages_failed >= 1)
            break;
    }
    st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(died(&g), 0);
    CU_ASSERT_FALSE(shoal_test_log_has("isolated worker process"));
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
}

/* ---- B: a death is told at once, however long a region lasts --------------------- */

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
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    int first = atomic_load(&f.pid);
    reader_t rd;
    pthread_t t;
    reader_start(&rd, &g, &t);
    CU_ASSERT_EQUAL(channels_open(), 1);
    /* Its two doorbells: the parent's own ends, not the child's (closed
     * once the child had its copies). */
    CU_ASSERT_EQUAL(sockets_open(), 2);
    char line[128];
    snprintf(line, sizeof line, "isolated worker process %d was killed by SIGKILL", first);
    double t0 = shoal_test_now();
    kill(first, SIGKILL);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), 5.0);
    bool told = shoal_test_log_has(line);
    CU_ASSERT_TRUE(told);
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != 0 && current_pid(&g) != first, 5.0);
    int second = current_pid(&g);
    CU_ASSERT_TRUE(second != 0 && second != first);
    printf("\n  death logged and next child up in %.0f ms, a region still open ... ",
           (shoal_test_now() - t0) * 1000);
    if (!told) {
        reader_end(&rd, t, R_LEAVE);
        rig_down(&g);
        return;
    }
    CU_ASSERT_EQUAL(died(&g), 1);
    CU_ASSERT_EQUAL(atomic_load(&f.launches), 2);
    /* The dead child's channel is still there, beside the new one's. */
    CU_ASSERT_EQUAL(channels_open(), 2);
    CU_ASSERT_EQUAL(sockets_open(), 4);
    reader_end(&rd, t, R_TOUCH);
    CU_ASSERT_EQUAL(rd.state, SHOAL_REMOTE_UP); /* as it left it */
    /* The region has ended: the dead child's channel goes. */
    SHOAL_TEST_WAIT_UNTIL(channels_open() == 1, WAIT_S);
    CU_ASSERT_EQUAL(channels_open(), 1);
    CU_ASSERT_EQUAL(sockets_open(), 2);
    rig_down(&g);
}

/* ---- C: a prepared child lost before the commit ----------------------------------- */

/* Prepares a swap (from f2), then kills its child: the pool's actor has
 * heard of the death (logged) when this returns; the token in *token. */
static void prepare_then_lose(rig_t *g, fake_t *f2, uint64_t *token)
{
    CU_ASSERT_EQUAL_FATAL(swap_prepare(g, f2, token), SHOAL_OK);
    int lost = atomic_load(&f2->pid);
    kill(lost, SIGKILL);
    char line[128];
    snprintf(line, sizeof line, "isolated worker process %d was killed by SIGKILL", lost);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), WAIT_S);
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
    fake_t f1 = {0}, f2 = {0};
    rig_t g;
    if (!rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    uint64_t token = 0;
    prepare_then_lose(&g, &f2, &token);
    atomic_store(&f2.gate, 1);
    CU_ASSERT_EQUAL(swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&f2.waiting), 5.0);
    CU_ASSERT_TRUE(atomic_load(&f2.waiting)); /* the new code's child is being started */
    CU_ASSERT_EQUAL(current_pid(&g), old);    /* meanwhile the old one serves */
    CU_ASSERT_TRUE(running(old));
    atomic_store(&f2.gate, 0);
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != old && current_pid(&g) != 0, 5.0);
    CU_ASSERT_EQUAL(current_pid(&g), atomic_load(&f2.pid));
    CU_ASSERT_EQUAL(atomic_load(&f2.launches), 2);
    SHOAL_TEST_WAIT_UNTIL(!running(old), WAIT_S);
    CU_ASSERT_FALSE(running(old));
    CU_ASSERT_EQUAL(died(&g), 1);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1); /* the old code's, at the commit */
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
}

/* As above, but the new code's child cannot be started at the commit: it
 * says so; the old one drains all the same (the pool no longer has its
 * code), and the pool starts the new code again under its restart budget
 * -- up once its launch works. */
static void lost_child_replacement_fails(void)
{
    fake_t f1 = {0}, f2 = {0};
    rig_t g;
    if (!rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    uint64_t token = 0;
    prepare_then_lose(&g, &f2, &token);
    atomic_store(&f2.fail, 1);
    CU_ASSERT_EQUAL(swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    const char *said = "the worker process of its new code did not come up (fake: no process "
                       "today); the one of the old code drains";
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(said), WAIT_S);
    shoal_test_assert_logged(said);
    SHOAL_TEST_WAIT_UNTIL(!running(old), WAIT_S);
    CU_ASSERT_FALSE(running(old));
    atomic_store(&f2.fail, 0);
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != 0 && current_pid(&g) == atomic_load(&f2.pid), WAIT_S);
    CU_ASSERT_NOT_EQUAL(current_pid(&g), 0);
    CU_ASSERT_EQUAL(current_pid(&g), atomic_load(&f2.pid));
    CU_ASSERT_EQUAL(atomic_load(&f1.launches), 1); /* never the old code again */
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
}

/* ---- D: a restart that cannot start says why -------------------------------------- */

/* The child is killed and the next one cannot be started (its launch
 * fails): the pool says why (it used to say nothing but the death, and,
 * once past its budget, "degraded ... (last: handler failed)"), and starts
 * one again once the launch works. */
static void failed_restart_says_why(void)
{
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    int first = atomic_load(&f.pid);
    atomic_store(&f.fail, 1);
    kill(first, SIGKILL);
    const char *said = "iso: its isolated worker process did not start: fake: no process today";
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(said), WAIT_S);
    shoal_test_assert_logged(said);
    atomic_store(&f.fail, 0);
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != 0 && current_pid(&g) != first, WAIT_S);
    CU_ASSERT_TRUE(current_pid(&g) != 0 && current_pid(&g) != first);
    rig_down(&g);
}

/* ---- E: a swap's steps are carried out in the order given ------------------------- */

typedef struct asker_s {
    rig_t *g;
    fake_t *f;
    uint64_t token;
    int rc;
    atomic_int done;
} asker_t;

/* The host's PREPARE, from a thread of its own (it waits for the answer). */
static void *ask(void *arg)
{
    asker_t *a = arg;
    a->rc = swap_prepare(a->g, a->f, &a->token);
    atomic_store(&a->done, 1);
    return NULL;
}

/* Whether the pool's actor has taken the offer of the n-th swap asked
 * (whose token is n). */
static bool offer_taken(rig_t *g, uint64_t n)
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
    fake_t f1 = {0}, f2 = {0}, f3 = {0};
    rig_t g;
    if (!rig_up(&g, &f1))
        return;
    atomic_store(&f2.gate, 1);
    asker_t a2 = {.g = &g, .f = &f2}, a3 = {.g = &g, .f = &f3};
    pthread_t t2, t3;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t2, NULL, ask, &a2), 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&f2.waiting), WAIT_S);
    CU_ASSERT_TRUE_FATAL(atomic_load(&f2.waiting));
    CU_ASSERT_TRUE_FATAL(offer_taken(&g, 1));
    CU_ASSERT_EQUAL(swap_step(&g, SHOAL__POOL_SWAP_ABORT, 1), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&a2.done), WAIT_S);
    CU_ASSERT_EQUAL(a2.rc, SHOAL_ESHUTDOWN); /* "the swap was aborted" */
    pthread_join(t2, NULL);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t3, NULL, ask, &a3), 0);
    SHOAL_TEST_WAIT_UNTIL(offer_taken(&g, 2), WAIT_S); /* its PREPARE is the supervisor's */
    CU_ASSERT_TRUE(offer_taken(&g, 2));
    atomic_store(&f2.gate, 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&a3.done), WAIT_S + TMO_MS / 1000.0);
    pthread_join(t3, NULL);
    CU_ASSERT_EQUAL(a3.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&f3.launches), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.launches), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
    if (a3.rc == SHOAL_OK) {
        CU_ASSERT_EQUAL(swap_step(&g, SHOAL__POOL_SWAP_COMMIT, a3.token), SHOAL_OK);
        SHOAL_TEST_WAIT_UNTIL(current_pid(&g) == atomic_load(&f3.pid), WAIT_S);
        CU_ASSERT_EQUAL(current_pid(&g), atomic_load(&f3.pid));
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&f1.releases) == 1, WAIT_S);
        CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1); /* the old code's, at the commit */
        CU_ASSERT_EQUAL(atomic_load(&f3.releases), 0); /* the pool's now */
    }
    SHOAL_TEST_WAIT_UNTIL(!running(atomic_load(&f2.pid)), WAIT_S);
    CU_ASSERT_FALSE(running(atomic_load(&f2.pid)));
    rig_down(&g);
    CU_ASSERT_EQUAL(atomic_load(&f1.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f2.releases), 1);
    CU_ASSERT_EQUAL(atomic_load(&f3.releases), 1);
}

/* ---- F: the calls a child holds are answered when it ends ------------------------ */

/* A thread that calls the pool, as a shoalctl call does through shoald. */
typedef struct caller_s {
    rig_t *g;
    uint32_t type;
    uint64_t timeout_ms;
    int rc;       /* shoal_runtime_call's */
    int status;   /* the answer's (rc SHOAL_OK) */
    char data[8]; /* its payload (status 0) */
    double took;  /* seconds */
    atomic_int done;
} caller_t;

static void *caller(void *arg)
{
    caller_t *c = arg;
    shoal_answer_t a;
    double t0 = shoal_test_now();
    c->rc = shoal_runtime_call(c->g->rt, c->g->pid, c->type, "ping", 4, c->timeout_ms, &a);
    c->took = shoal_test_now() - t0;
    if (c->rc == SHOAL_OK) {
        c->status = a.status;
        if (a.status == 0 && a.size < sizeof c->data)
            memcpy(c->data, a.data, a.size);
        shoal_answer_release(&a);
    }
    atomic_store(&c->done, 1);
    return NULL;
}

static void callers_start(caller_t *c, pthread_t *t, int n, rig_t *g, uint32_t type,
                          uint64_t timeout_ms)
{
    for (int i = 0; i < n; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i] = (caller_t){.g = g, .type = type, .timeout_ms = timeout_ms};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, caller, &c[i]), 0);
    }
}

/* Until each of the n callers has its answer (seconds at most): whether
 * they all have. The threads are joined either way (at their timeout). */
static bool callers_answered(caller_t *c, pthread_t *t, int n, double seconds)
{
    double end = shoal_test_now() + seconds;
    bool all = true;
    for (int i = 0; i < n; i++) {
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&c[i].done), end - shoal_test_now());
        all &= atomic_load(&c[i].done) != 0;
    }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return all;
}

/* Until the current child holds n messages it has not settled (its ring
 * or its workers): the callers' calls have reached it. */
static bool child_holds(rig_t *g, uint64_t n)
{
    for (double end = shoal_test_now() + WAIT_S; shoal_test_now() < end; shoal_test_nap()) {
        /* relaxed: the supervisor publishes it; we only read its counts. */
        child_t *c = atomic_load_explicit(&g->r->cur, memory_order_relaxed);
        shoal_pool_stats_t st = shoal_test_pool_stats(g->rt, g->pid);
        if (c != NULL && shoal__remote_pushed(c) - st.messages_handled - st.messages_failed == n)
            return true;
    }
    return false;
}

#define HELD 3

/* Three callers wait on calls the child holds (it never answers them),
 * beside casts and a call it answered; the child is killed: each caller
 * hears SHOAL_EFAILED at once -- as a caller hears when an in-process
 * worker's handler fails; its calls are counted as failed -- not at its
 * timeout; the casts are counted as handled, and the next child answers.
 * (Before the fix the parent kept no record of the calls a child held:
 * their callers waited for their whole timeout, or for ever without one
 * -- a loadgen with `timeout: 0` stalled for good.) */
static void calls_answered_when_child_dies(void)
{
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    caller_t echo[1], held[HELD];
    pthread_t te[1], th[HELD];
    callers_start(echo, te, 1, &g, 1, TMO_MS);
    CU_ASSERT_TRUE(callers_answered(echo, te, 1, WAIT_S));
    CU_ASSERT_EQUAL(echo[0].rc, SHOAL_OK);
    CU_ASSERT_EQUAL(echo[0].status, SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(echo[0].data, "ping");
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, 1, "cast", 4), SHOAL_OK);
    callers_start(held, th, HELD, &g, FAKE_HOLD, TMO_MS);
    CU_ASSERT_TRUE(child_holds(&g, HELD));
    shoal_pool_stats_t st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_handled, 6); /* the answered call and the casts */
    double t0 = shoal_test_now();
    kill(atomic_load(&f.pid), SIGKILL);
    bool answered = callers_answered(held, th, HELD, 5.0);
    CU_ASSERT_TRUE(answered);
    printf("\n  %d held calls answered %.0f ms after the kill ... ", HELD,
           (shoal_test_now() - t0) * 1000);
    for (int i = 0; i < HELD; i++) {
        CU_ASSERT_EQUAL(held[i].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(held[i].status, SHOAL_EFAILED);
        CU_ASSERT(held[i].took < 5.0);
    }
    st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_failed, HELD);
    CU_ASSERT_EQUAL(st.messages_handled, 6);
    /* The next child answers. */
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != 0 && died(&g) == 1, WAIT_S);
    callers_start(echo, te, 1, &g, 1, TMO_MS);
    CU_ASSERT_TRUE(callers_answered(echo, te, 1, WAIT_S));
    CU_ASSERT_EQUAL(echo[0].status, SHOAL_OK);
    rig_down(&g);
}

/* The pool stops while a caller waits on a call its child holds: the
 * caller hears SHOAL_ENOPROC (the child's messages are dropped), as from
 * an actor that ends with calls in its mailbox. (Before the fix: nothing,
 * until its timeout.) */
static void calls_answered_when_pool_stops(void)
{
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    caller_t held[2];
    pthread_t th[2];
    callers_start(held, th, 2, &g, FAKE_HOLD, TMO_MS);
    CU_ASSERT_TRUE(child_holds(&g, 2));
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(g.rt, g.pid), SHOAL_OK);
    CU_ASSERT_TRUE(callers_answered(held, th, 2, 5.0));
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(held[i].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(held[i].status, SHOAL_ENOPROC);
    }
    rig_down(&g);
}

/* A caller gives up (its timeout) on a call the child holds: the call is
 * forgotten (shoal__call_gone), so the child's death later answers no
 * one -- no reply goes out to a caller that has left. */
static void call_given_up_is_forgotten(void)
{
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    caller_t held[1];
    pthread_t th[1];
    callers_start(held, th, 1, &g, FAKE_HOLD, 300);
    CU_ASSERT_TRUE(callers_answered(held, th, 1, WAIT_S));
    CU_ASSERT_EQUAL(held[0].rc, SHOAL_ETIMEDOUT);
    uint64_t late = shoal_test_stats(g.rt).replies_late;
    kill(atomic_load(&f.pid), SIGKILL);
    SHOAL_TEST_WAIT_UNTIL(died(&g) == 1, WAIT_S);
    CU_ASSERT_EQUAL(died(&g), 1);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(g.rt, g.pid).messages_failed, 1);
    CU_ASSERT_EQUAL(shoal_test_stats(g.rt).replies_late, late);
    rig_down(&g);
}

/* Four threads call the pool, one call after another, while its child is
 * killed every 30 ms, five times: every call is answered at once, and once
 * -- its echo, or SHOAL_EFAILED from a child that died holding it, or
 * refused (SHOAL_EBUSY) while no child is up -- none waits for its
 * timeout; and the pool's counts settle: handled + failed = the calls it
 * took. */
#define CALLERS 4

typedef struct many_s {
    rig_t *g;
    atomic_int *stop;
    unsigned calls, ok, failed, busy, other;
    double slowest;
} many_t;

static void *many_calls(void *arg)
{
    many_t *m = arg;
    while (!atomic_load(m->stop)) {
        m->calls++;
        shoal_answer_t a;
        double t0 = shoal_test_now();
        int rc = shoal_runtime_call(m->g->rt, m->g->pid, 1, "ping", 4, TMO_MS, &a);
        double took = shoal_test_now() - t0;
        m->slowest = took > m->slowest ? took : m->slowest;
        if (rc == SHOAL_OK && a.status == SHOAL_OK && a.size == 4 && memcmp(a.data, "ping", 4) == 0)
            m->ok++;
        else if (rc == SHOAL_OK && a.status == SHOAL_EFAILED)
            m->failed++;
        else if (rc == SHOAL_EBUSY)
            m->busy++;
        else
            m->other++;
        if (rc == SHOAL_OK)
            shoal_answer_release(&a);
        if (rc == SHOAL_EBUSY)
            shoal_test_nap(); /* no child up: as a caller would, a little later */
    }
    return NULL;
}

static void calls_across_deaths(void)
{
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    many_t m[CALLERS];
    pthread_t t[CALLERS];
    atomic_int stop = 0;
    for (int i = 0; i < CALLERS; i++) {
        m[i] = (many_t){.g = &g, .stop = &stop};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, many_calls, &m[i]), 0);
    }
    for (int k = 0; k < 5; k++) {
        SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != 0, WAIT_S);
        double t0 = shoal_test_now();
        SHOAL_TEST_WAIT_UNTIL(shoal_test_now() > t0 + 0.03, 1.0);
        kill(atomic_load(&f.pid), SIGKILL);
        SHOAL_TEST_WAIT_UNTIL(died(&g) == (uint64_t)k + 1, WAIT_S);
    }
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != 0, WAIT_S);
    atomic_store(&stop, 1);
    unsigned calls = 0, ok = 0, failed = 0, busy = 0, other = 0;
    double slowest = 0;
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(t[i], NULL);
        calls += m[i].calls;
        ok += m[i].ok;
        failed += m[i].failed;
        busy += m[i].busy;
        other += m[i].other;
        slowest = m[i].slowest > slowest ? m[i].slowest : slowest;
    }
    printf("\n  %u calls: %u answered, %u failed with their child, %u refused; slowest %.0f ms "
           "... ",
           calls, ok, failed, busy, slowest * 1000);
    CU_ASSERT_EQUAL(ok + failed + busy, calls);
    CU_ASSERT(failed > 0); /* else no death came while calls were held: it tests nothing */
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT(slowest < 5.0);
    shoal_pool_stats_t st;
    for (double end = shoal_test_now() + WAIT_S; shoal_test_now() < end; shoal_test_nap()) {
        st = shoal_test_pool_stats(g.rt, g.pid);
        if (st.messages_handled + st.messages_failed == st.messages_forwarded)
            break;
    }
    st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_handled + st.messages_failed, st.messages_forwarded);
    CU_ASSERT_EQUAL(st.messages_forwarded, ok + failed);
    /* Each once: no second answer reached a caller that had its first. */
    CU_ASSERT_EQUAL(shoal_test_stats(g.rt).replies_late, 0);
    rig_down(&g);
}

/* ---- G: what a child sends to an actor here is handled or counted ----------------- */

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
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate_open), WAIT_S);
    return SHOAL_OK;
}
static const shoal_behaviour_t gate = {.name = "gate", .handle_message = gate_message};

/* Whether the pool's inspect has `field` (a JSON key and its value). */
static bool inspect_has(rig_t *g, const char *field)
{
    shoal_answer_t a;
    if (shoal_runtime_inspect(g->rt, g->pid, TMO_MS, &a) != SHOAL_OK)
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
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    atomic_store(&gate_in, 0);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_got, 0);
    shoal_spawn_opts_t o = {.mailbox_limit = 1};
    shoal_pid_t to;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(g.rt, &gate, NULL, &o, &to), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, to, 1, "first", 5), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate_in), WAIT_S);
    CU_ASSERT_TRUE(atomic_load(&gate_in)); /* its mailbox is empty, its limit 1 */
    fake_send_t fs = {.to = to, .copies = 3};
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, FAKE_SEND, &fs, sizeof fs), SHOAL_OK);
    char first[160], rest[160];
    snprintf(first, sizeof first,
             "sent a message to <%u.%u> that was refused here (SHOAL_EFULL): dropped (its worker "
             "was told SHOAL_OK)",
             (unsigned)shoal__pid_slot(to), (unsigned)shoal__pid_gen(to));
    snprintf(rest, sizeof rest,
             ": 1 more message its workers sent was refused here and dropped (the last, to "
             "<%u.%u>: SHOAL_EFULL)",
             (unsigned)shoal__pid_slot(to), (unsigned)shoal__pid_gen(to));
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(first), WAIT_S);
    shoal_test_assert_logged(first);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(rest), WAIT_S);
    shoal_test_assert_logged(rest);
    CU_ASSERT_EQUAL(shoal_test_log_count("that was refused here"), 1);
    CU_ASSERT_TRUE(inspect_has(&g, "\"process_sends_dropped\":2"));
    atomic_store(&gate_open, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate_got) == 2, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&gate_got), 2); /* its first, and one of the three */
    CU_ASSERT_TRUE(inspect_has(&g, "\"process_sends_dropped\":2"));
    rig_down(&g);
}

/* ---- H: a child that writes nonsense into its ring --------------------------------- */

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
    fake_t f = {0};
    rig_t g;
    if (!rig_up(&g, &f))
        return;
    int child = atomic_load(&f.pid);
    char line[160];
    nonsense_line(line, sizeof line, child);
    uint32_t ms = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, FAKE_SCRIBBLE, &ms, sizeof ms), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), WAIT_S);
    shoal_test_assert_logged(line);
    SHOAL_TEST_WAIT_UNTIL(died(&g) == 1, WAIT_S);
    CU_ASSERT_EQUAL(died(&g), 1);
    double cpu = cpu_over_a_second();
    printf("\n  %.3f s of CPU in the second after ... ", cpu);
    CU_ASSERT(cpu < 0.3);
    CU_ASSERT_EQUAL(shoal_test_log_count("wrote nonsense into its channel"), 1);
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) != 0 && current_pid(&g) != child, WAIT_S);
    caller_t echo[1];
    pthread_t te[1];
    callers_start(echo, te, 1, &g, 1, TMO_MS);
    CU_ASSERT_TRUE(callers_answered(echo, te, 1, WAIT_S));
    CU_ASSERT_EQUAL(echo[0].status, SHOAL_OK);
    rig_down(&g);
}

/* A retiring child -- replaced at a swap's commit, told to drain, still
 * running -- writes garbage over its ring: it is said once and killed at
 * once, whatever its role, and the supervisor sleeps meanwhile; the new
 * child serves. (Before the fix a retiring child was never killed for it,
 * nor named: the supervisor spun on the broken ring, a whole core, until
 * the child exited on its own -- its drain may take up to 24 h.) */
static void nonsense_retiring_stopped_once(void)
{
    fake_t f1 = {0}, f2 = {0};
    rig_t g;
    if (!rig_up(&g, &f1))
        return;
    int old = atomic_load(&f1.pid);
    char line[160];
    nonsense_line(line, sizeof line, old);
    uint32_t ms = 1500; /* after the commit below */
    CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, FAKE_SCRIBBLE, &ms, sizeof ms), SHOAL_OK);
    uint64_t token = 0;
    CU_ASSERT_EQUAL_FATAL(swap_prepare(&g, &f2, &token), SHOAL_OK);
    CU_ASSERT_EQUAL(swap_step(&g, SHOAL__POOL_SWAP_COMMIT, token), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(current_pid(&g) == atomic_load(&f2.pid), WAIT_S);
    CU_ASSERT_EQUAL(current_pid(&g), atomic_load(&f2.pid));
    bool early = shoal_test_log_has(line);
    CU_ASSERT_FALSE(early); /* else it was not retiring yet: the case tests nothing */
    CU_ASSERT_TRUE(running(old));
    /* It scribbles 1.5 s after the cast, then stays 10 s. */
    double t0 = shoal_test_now();
    SHOAL_TEST_WAIT_UNTIL(shoal_test_now() > t0 + 1.7, 3.0);
    double cpu = cpu_over_a_second();
    printf("\n  %.3f s of CPU in the second after ... ", cpu);
    CU_ASSERT(cpu < 0.3);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has(line), 3.0);
    shoal_test_assert_logged(line);
    SHOAL_TEST_WAIT_UNTIL(!running(old), 3.0);
    CU_ASSERT_FALSE(running(old));
    CU_ASSERT_EQUAL(shoal_test_log_count("wrote nonsense into its channel"), 1);
    CU_ASSERT_EQUAL(current_pid(&g), atomic_load(&f2.pid));
    caller_t echo[1];
    pthread_t te[1];
    callers_start(echo, te, 1, &g, 1, TMO_MS);
    CU_ASSERT_TRUE(callers_answered(echo, te, 1, WAIT_S));
    CU_ASSERT_EQUAL(echo[0].status, SHOAL_OK);
    rig_down(&g);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--fake-child") == 0)
        return fake_child();
    static const shoal_test_case_t cases[] = {
        {"a commit waits for the senders before the old child drains", commit_waits_for_senders},
        {"a death is told at once, however long a region lasts", death_told_at_once},
        {"a swap's steps are carried out in the order given", swap_steps_in_order},
        {"a prepared child lost before the commit is replaced from the new code",
         lost_child_replaced_at_commit},
        {"a replacement that cannot start: the old child drains, the new code is retried",
         lost_child_replacement_fails},
        {"a restart that cannot start says why", failed_restart_says_why},
        {"the calls a dead child held are answered at once", calls_answered_when_child_dies},
        {"the calls a child holds are answered when the pool stops",
         calls_answered_when_pool_stops},
        {"a call its caller gave up is not answered at the child's death",
         call_given_up_is_forgotten},
        {"calls from many threads across deaths: each answered, at once", calls_across_deaths},
        {"what a child sends to a full actor here is dropped, counted and logged",
         refused_sends_counted},
        {"a child that writes nonsense into its ring is stopped once, said once",
         nonsense_current_stopped_once},
        {"a retiring child that writes nonsense is stopped at once; nothing spins",
         nonsense_retiring_stopped_once},
        {NULL, NULL},
    };
    return shoal_test_run("remote_supervisor", cases);
}
