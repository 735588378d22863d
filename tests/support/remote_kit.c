/* remote_kit.c - see remote_kit.h. */
#include "remote_kit.h"

#include <dirent.h>
#include <fcntl.h>
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
#include "runtime/qsbr.h"
#include "runtime/runtime.h"
#include "support.h"
#include "pool/swap.h"
/* ---- the stand-in child ------------------------------------------------------- */

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

/* The child's main: its channel at 3, 4, 5 (as the host's child has it);
 * argv[2]: a file it waits for before it says UP (up_after), or "-";
 * argv[3]: --fail-start, to say FAILED instead (then it waits to be
 * killed). */
int rk_fake_child(int argc, char **argv)
{
    int fds[3] = {3, 4, 5};
    shoal_chan_t *ch;
    if (shoal__chan_attach(fds, &ch) != SHOAL_OK)
        return 2;
    shoal_remote_area_t *a = shoal__chan_user(ch, NULL);
    const char *up_after = argc > 2 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
    for (double end = shoal_test_now() + RK_WAIT_S; up_after != NULL && access(up_after, F_OK) != 0;
         shoal_test_nap())
        if (shoal_test_now() > end)
            return 3;
    if (argc > 3 && strcmp(argv[3], "--fail-start") == 0) {
        snprintf(a->why, sizeof a->why, "fake: no start today");
        atomic_store_explicit(&a->start_rc, SHOAL_EFAILED, memory_order_relaxed);
        /* release: pairs with the parent's acquire of state (why is written). */
        atomic_store_explicit(&a->state, SHOAL_REMOTE_FAILED, memory_order_release);
        shoal__chan_send(ch, SHOAL_REMOTE_STATUS, NULL, 0, NULL, 0, true);
        for (double end = shoal_test_now() + RK_WAIT_S; shoal_test_now() < end;)
            shoal_test_nap();
        return 3;
    }
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
            bool held = tag == SHOAL_REMOTE_CALL && m.type == RK_FAKE_HOLD;
            if (tag == SHOAL_REMOTE_CALL && !held && len >= sizeof m)
                fake_reply(ch, &m, (const char *)data + sizeof m, len - sizeof m);
            uint32_t ms;
            if (tag == SHOAL_REMOTE_CAST && m.type == RK_FAKE_SCRIBBLE &&
                len == sizeof m + sizeof ms) {
                memcpy(&ms, (const char *)data + sizeof m, sizeof ms);
                scribble_at = now + ms / 1000.0;
            }
            rk_fake_send_t fs;
            if (tag == SHOAL_REMOTE_CAST && m.type == RK_FAKE_SEND && len == sizeof m + sizeof fs) {
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
            scribble_at != 0 || (scribbled_at != 0 && now < scribbled_at + RK_FAKE_LINGER_S);
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

static int fake_launch(void *user, const int chan_fds[3], pid_t *pid, int *pidfd, char *why,
                       size_t why_size)
{
    rk_fake_t *f = user;
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
    const char *up_after = atomic_load(&f->up_after);
    bool fail = atomic_load(&f->fail_start) != 0;
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
        char *const argv[] = {"shoal-test-fake-child", "--fake-child",
                              (char *)(up_after != NULL ? up_after : "-"),
                              fail ? "--fail-start" : NULL, NULL};
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
    rk_fake_t *f = user;
    atomic_fetch_add(&f->releases, 1);
}

shoal_remote_launch_t rk_fake_of(rk_fake_t *f)
{
    return (shoal_remote_launch_t){
        .launch = fake_launch, .release = fake_release, .user = f, .nstripes = 1};
}

/* Whether process pid is there and has not ended (not a zombie either). */
bool rk_running(int pid)
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

/* How many descriptors this process has open whose target, as
 * /proc/self/fd reads it, has `what` in it. */
static int fds_open(const char *what)
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
            n += strstr(target, what) != NULL;
        }
    }
    if (d != NULL)
        closedir(d);
    return n;
}

int rk_channels_open(void) { return fds_open("memfd:shoal:chan"); }

int rk_sockets_open(void) { return fds_open("socket:["); }

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

static void spec_of(shoal_pool_spec_t *s)
{
    shoal_pool_spec_init(s);
    s->name = "iso";
    s->worker = &idle;
    s->size = 1;
    s->mailbox = 64;
    s->restart.max = 10;
    s->restart.backoff_ms = 100;
}

bool rk_rig_up(rk_rig_t *g, rk_fake_t *f) { return rk_rig_up_within(g, f, 10000); }

bool rk_rig_up_within(rk_rig_t *g, rk_fake_t *f, uint64_t within_ms)
{
    memset(g, 0, sizeof *g);
    g->rt = shoal_test_runtime_logged(2, SHOAL_LOG_INFO);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g->rt);
    shoal_pool_spec_t s;
    spec_of(&s);
    s.restart.within_ms = within_ms;
    shoal_remote_launch_t l = rk_fake_of(f);
    shoal_pool_opts_t o = {.remote = &l};
    char why[256] = "";
    int rc = shoal__pool_start_ex(g->rt, &s, NULL, &o, RK_TMO_MS, &g->pid, why, sizeof why);
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

void rk_rig_down(rk_rig_t *g)
{
    if (g->p != NULL)
        shoal__pool_unref(g->rt, g->p);
    shoal_runtime_destroy(g->rt);
}

/* The host's PREPARE of new code whose child comes from f: the swap's
 * status (SHOAL_OK once it is up), its token in *token. */
int rk_swap_prepare(rk_rig_t *g, rk_fake_t *f, uint64_t *token)
{
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    spec_of(&sw->chain[0]);
    sw->size = 1;
    sw->remote = rk_fake_of(f);
    shoal_pool_swap_result_t res;
    return shoal__pool_swap_ask(g->rt, g->p, g->pid, sw, RK_TMO_MS, token, &res);
}

int rk_swap_step(rk_rig_t *g, uint32_t type, uint64_t token)
{
    return shoal__pool_swap_step(g->rt, g->pid, type, token, RK_TMO_MS, NULL);
}

/* The child new work goes to, as inspect says (0: none). */
int rk_current_pid(rk_rig_t *g)
{
    shoal_remote_info_t ri;
    shoal__remote_info(g->r, &ri);
    return ri.pid;
}

uint64_t rk_died(rk_rig_t *g)
{
    shoal_remote_info_t ri;
    shoal__remote_info(g->r, &ri);
    return ri.died;
}

/* ---- the reader ------------------------------------------------------------------ */

static void *reader(void *arg)
{
    rk_reader_t *rd = arg;
    shoal_tcache_t *tc = shoal__tcache_get(rd->g->rt);
    shoal__qsbr_enter(tc);
    /* seq_cst: as shoal__remote_forward's (the reader's load of qsbr.h's
     * Dekker pair). */
    rd->seen = atomic_load_explicit(&rd->g->r->cur, memory_order_seq_cst);
    atomic_store(&rd->stage, RK_IN);
    while (atomic_load(&rd->stage) == RK_IN)
        shoal_test_nap();
    rd->send_rc = SHOAL_EINVAL;
    if (atomic_load(&rd->stage) == RK_GO && rd->seen != NULL) {
        /* What shoal__remote_forward does after its load of cur. */
        atomic_fetch_add_explicit(&rd->seen->pushed, 1, memory_order_relaxed);
        shoal_remote_msg_t m = {.type = 7};
        rd->send_rc =
            shoal__chan_send(rd->seen->chan, SHOAL_REMOTE_CAST, &m, sizeof m, "late", 4, true);
    }
    if (atomic_load(&rd->stage) == RK_TOUCH && rd->seen != NULL)
        /* acquire: as the supervisor's look at it. */
        rd->state = atomic_load_explicit(&rd->seen->area->state, memory_order_acquire);
    shoal__qsbr_exit(tc);
    atomic_store(&rd->stage, RK_OUT);
    return NULL;
}

void rk_reader_start(rk_reader_t *rd, rk_rig_t *g, pthread_t *t)
{
    memset(rd, 0, sizeof *rd);
    rd->g = g;
    CU_ASSERT_EQUAL_FATAL(pthread_create(t, NULL, reader, rd), 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&rd->stage) == RK_IN, RK_WAIT_S);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rd->stage), RK_IN);
}

/* Tells the reader to go on (stage RK_GO or RK_LEAVE) and joins it. */
void rk_reader_end(rk_reader_t *rd, pthread_t t, int stage)
{
    atomic_store(&rd->stage, stage);
    pthread_join(t, NULL);
}

static void *caller(void *arg)
{
    rk_caller_t *c = arg;
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

void rk_callers_start(rk_caller_t *c, pthread_t *t, int n, rk_rig_t *g, uint32_t type,
                      uint64_t timeout_ms)
{
    for (int i = 0; i < n; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i] = (rk_caller_t){.g = g, .type = type, .timeout_ms = timeout_ms};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, caller, &c[i]), 0);
    }
}

/* Until each of the n callers has its answer (seconds at most): whether
 * they all have. The threads are joined either way (at their timeout). */
bool rk_callers_answered(rk_caller_t *c, pthread_t *t, int n, double seconds)
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

void rk_call_answered(rk_rig_t *g)
{
    rk_caller_t echo[1];
    pthread_t te[1];
    rk_callers_start(echo, te, 1, g, 1, RK_TMO_MS);
    CU_ASSERT_TRUE(rk_callers_answered(echo, te, 1, RK_WAIT_S));
    CU_ASSERT_EQUAL(echo[0].rc, SHOAL_OK);
    CU_ASSERT_EQUAL(echo[0].status, SHOAL_OK);
}
