/* test_resize.c - the Resize contract (the elastic-pool seed's, after ants
 * and pond), proven for forward and pull pools on the pool's resize
 * (core/pool/workers.c: shoal__pool_resize, fill, retire); checkout pools'
 * init and max are test_resize_checkout.c's:
 *   1. in-flight work never exceeds the capacity in force: handlers running
 *      at once are never more than the largest size a resize in flight or
 *      applied allows (a shrink's old size until its retired workers have
 *      ended), and once a shrink has settled, never more than the new size;
 *   2. a message runs to completion exactly once, or is refused at once
 *      (SHOAL_EBUSY) and never runs -- through resizes and crashes;
 *   3. resize is idempotent: a second set_size(5) changes nothing (no
 *      worker started or ended);
 *   4. resizes are linearizable: threads resizing at once each get the size
 *      their own call produced, and the pool ends at the size of the last
 *      call in the pool's own order, read from the pool (stats.resizes); a
 *      later call wins;
 *   5. after drain returns, nothing new runs, and every send is refused;
 * and live size and target are reported apart (a crash: one worker fewer
 * live, the target kept, until the replacement), and a shrink never
 * abandons queued or held work.
 *
 * Handlers and the test's own threads never call CUnit: they record into
 * atomics and arrays; the test thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define WAIT_S 30.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u
#define MAXW 6u /* max_size of every pool here */
#define NJOBS 20000u

enum { T_JOB = 1 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2, A_SPIN = 4 };

typedef struct {
    uint32_t id, act;
} job_t;

static unsigned char runs[NJOBS];     /* completions per id */
static unsigned char accepted[NJOBS]; /* the send returned SHOAL_OK */
static atomic_int running, max_running, done, entered, gate, after_drain, drained;
static atomic_int accepted_n, ended; /* sends accepted (load_main); handlers ended, panics too */
static atomic_int sent_after, refused_after; /* sends begun after drain returned; of them ENOPROC */
/* The capacity in force (resizer_main), with a generation: (changes << 8) |
 * capacity. One writer at a time (set_cap). */
static atomic_uint cap_word;
static atomic_int over_cap; /* handlers that found more running than the capacity in force */
static atomic_int cap_checked, cap_unchecked; /* handlers checked; not (two changes meanwhile) */
static atomic_int bad_resize; /* resizer_main: answers not the size asked, waits that failed */

static void reset(void)
{
    memset(runs, 0, sizeof runs);
    memset(accepted, 0, sizeof accepted);
    atomic_store(&running, 0);
    atomic_store(&max_running, 0);
    atomic_store(&done, 0);
    atomic_store(&accepted_n, 0);
    atomic_store(&ended, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    atomic_store(&after_drain, 0);
    atomic_store(&drained, 0);
    atomic_store(&sent_after, 0);
    atomic_store(&refused_after, 0);
    atomic_store(&cap_word, MAXW);
    atomic_store(&over_cap, 0);
    atomic_store(&cap_checked, 0);
    atomic_store(&cap_unchecked, 0);
    atomic_store(&bad_resize, 0);
}

static uint32_t cap_of(uint32_t w) { return w & 0xffu; }

static void set_cap(uint32_t cap)
{
    uint32_t w = atomic_load(&cap_word);
    atomic_store(&cap_word, ((w >> 8) + 1) << 8 | cap);
}

/* Whether `now` handlers running broke the capacity in force when the
 * count was taken, given the words read just before and just after it: a
 * capacity read after the count may be a shrink's that settled since (a
 * retired worker's handler, counted in `now`, has ended meanwhile), one
 * read before it a grow's that came after. With at most one change
 * between the reads, the capacity at the count was one of the two: the
 * larger bounds it. With more, it is not known: not checked (counted). */
static void check_cap(int now, uint32_t before, uint32_t after)
{
    if ((after >> 8) - (before >> 8) > 1) {
        atomic_fetch_add(&cap_unchecked, 1);
        return;
    }
    uint32_t bound = cap_of(before) > cap_of(after) ? cap_of(before) : cap_of(after);
    if ((uint32_t)now > bound)
        atomic_fetch_add(&over_cap, 1);
    atomic_fetch_add(&cap_checked, 1);
}

static void spin_us(unsigned us)
{
    double end = shoal_test_now() + us / 1e6;
    while (shoal_test_now() < end)
        ;
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    job_t j;
    if (msg->type != T_JOB || msg->size != sizeof j)
        return 0;
    memcpy(&j, msg->data, sizeof j);
    if (atomic_load(&drained))
        atomic_fetch_add(&after_drain, 1);
    uint32_t cap_before = atomic_load(&cap_word);
    int now = atomic_fetch_add(&running, 1) + 1;
    check_cap(now, cap_before, atomic_load(&cap_word));
    int m = atomic_load(&max_running);
    while (now > m && !atomic_compare_exchange_weak(&max_running, &m, now))
        ;
    if (j.act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (j.act & A_SPIN)
        spin_us(20);
    atomic_fetch_sub(&running, 1);
    atomic_fetch_add(&ended, 1);
    if (j.act & A_PANIC)
        shoal_panic(ctx, "test panic on job %u", (unsigned)j.id);
    if (j.id < NJOBS)
        __atomic_fetch_add(&runs[j.id], 1, __ATOMIC_RELAXED);
    atomic_fetch_add(&done, 1);
    return 0;
}

static const shoal_behaviour_t wk = {.name = "wk", .handle_message = wk_message};

static shoal_pid_t spawn_max(shoal_runtime_t *rt, uint32_t kind, uint32_t size, uint32_t mailbox,
                             uint32_t max)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = kind == SHOAL_POOL_KIND_PULL ? "pull" : "forward";
    s.worker = &wk;
    s.kind = kind;
    s.size = size;
    s.min_size = 1;
    s.max_size = max;
    s.mailbox = mailbox;
    s.buffer = mailbox; /* a pull pool's */
    s.restart.max = 1000000;
    s.restart.within_ms = 1000;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    return p;
}

static shoal_pid_t spawn(shoal_runtime_t *rt, uint32_t kind, uint32_t size, uint32_t mailbox)
{
    return spawn_max(rt, kind, size, mailbox, MAXW);
}

static int job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t id, uint32_t act)
{
    job_t j = {id, act};
    return shoal_runtime_send(rt, to, T_JOB, &j, sizeof j);
}

/* Until the pool has settled at `size`: live = target = size, none retiring. */
static bool settled_at(shoal_runtime_t *rt, shoal_pid_t p, uint32_t size)
{
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    return st.pool_size == size && st.target_size == size && st.retiring == 0;
}

/* ---- 1 + 2: capacity, and each message once, through resizes and crashes ---- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    uint32_t from, to; /* ids */
    atomic_int *stop;
} load_t;

/* A loader sends its ids once each, never again after a refusal. After
 * each refusal it waits for REFUSAL_PACE more jobs to be done before its
 * next send: how many are refused was otherwise the scheduler's -- workers
 * on threads the CPU was taken from refused most of a loader's ids, and
 * "most got in" (n_ok > NJOBS / 2) failed in an ASan run on a busy CPU.
 * Paced, between two refusals of one loader at least REFUSAL_PACE jobs are
 * done, so the two loaders' refusals are at most 2 / REFUSAL_PACE of the
 * done ones, fewer than NJOBS / 2 on any schedule (a refusal means the
 * pool is full: its queued jobs get done). The wait also ends when every
 * accepted job has ended: the pool may have emptied before the loader read
 * `done` (a loader the CPU was taken from), and then no more would be done
 * -- both loaders waited out WAIT_S, 30 s a time, on a busy CPU. An empty
 * pool takes the next send. */
#define REFUSAL_PACE 3

static void *load_main(void *arg)
{
    load_t *l = arg;
    for (uint32_t id = l->from; id < l->to; id++) {
        uint32_t act = id % 997 == 3 ? A_PANIC : A_SPIN;
        int rc = job(l->rt, l->pool, id, act);
        if (rc == SHOAL_OK) {
            accepted[id] = 1;
            atomic_fetch_add(&accepted_n, 1);
        } else if (rc != SHOAL_EBUSY)
            accepted[id] = 2; /* never: asserted below */
        if (rc == SHOAL_EBUSY) {
            int until = atomic_load(&done) + REFUSAL_PACE;
            WAIT_UNTIL(atomic_load(&done) >= until ||
                       atomic_load(&ended) >= atomic_load(&accepted_n));
        }
        if (id % 8 == 0)
            shoal_test_nap(); /* most are accepted, some refused */
    }
    return NULL;
}

/* Whether every worker a shrink retired has ended (each first finishes
 * what it holds: until then its handlers run beside the new size). */
static bool retired_all(shoal_runtime_t *rt, shoal_pid_t p)
{
    shoal_pool_stats_t st;
    return shoal_pool_stats(rt, p, &st, TMO) == SHOAL_OK && st.retiring == 0;
}

/* Grows and shrinks by 1 to 5, keeping cap_word at the capacity in force:
 * before a call, the larger of the size in force and the size asked (a
 * grow's workers may run before it answers); after it, the size asked --
 * after a shrink, once its retired workers have ended. */
static void *resizer_main(void *arg)
{
    static const uint32_t sizes[] = {1, 4, 2, 6, 1, 3, 5, 2};
    load_t *l = arg;
    uint32_t k = 0, now = cap_of(atomic_load(&cap_word));
    while (!atomic_load(l->stop)) {
        uint32_t want = sizes[k++ % (sizeof sizes / sizeof sizes[0])];
        set_cap(want > now ? want : now);
        if (shoal_pool_set_size(l->rt, l->pool, want, TMO) != (int)want)
            atomic_fetch_add(&bad_resize, 1); /* asserted below */
        if (want < now) {
            WAIT_UNTIL(retired_all(l->rt, l->pool));
            if (!retired_all(l->rt, l->pool))
                atomic_fetch_add(&bad_resize, 1);
        }
        set_cap(want);
        now = want;
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void capacity_and_once_case(uint32_t kind)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn(rt, kind, 3, 32);
    set_cap(3);
    atomic_int stop = 0;
    load_t a = {rt, p, 0, NJOBS / 2, &stop}, b = {rt, p, NJOBS / 2, NJOBS, &stop};
    load_t r = {rt, p, 0, 0, &stop};
    pthread_t ta, tb, tr;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tr, NULL, resizer_main, &r), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, load_main, &a), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tb, NULL, load_main, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    atomic_store(&stop, 1);
    pthread_join(tr, NULL);
    CU_ASSERT_EQUAL(atomic_load(&bad_resize), 0); /* each answered its size; shrinks settled */
    uint32_t n_ok = 0, n_panic = 0, bad = 0;
    for (uint32_t id = 0; id < NJOBS; id++) {
        n_ok += accepted[id] == 1;
        n_panic += accepted[id] == 1 && id % 997 == 3;
        bad += accepted[id] == 2;
    }
    CU_ASSERT_EQUAL(bad, 0);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).queue_depth == 0 &&
               (uint32_t)atomic_load(&done) == n_ok - n_panic);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, n_ok);
    CU_ASSERT_EQUAL(st.messages_handled, n_ok - n_panic);
    CU_ASSERT_EQUAL(st.messages_failed, n_panic);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.messages_unhandled, NJOBS - n_ok);
    CU_ASSERT(n_ok > NJOBS / 2); /* most got in: the check above means something */
    if (n_ok <= NJOBS / 2)
        printf("\n    accepted %u of %u\n", n_ok, NJOBS);
    /* Exactly once each accepted one that did not panic; never a refused one. */
    uint32_t wrong = 0;
    for (uint32_t id = 0; id < NJOBS; id++)
        wrong += runs[id] != (accepted[id] == 1 && id % 997 != 3 ? 1 : 0);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(atomic_load(&over_cap), 0); /* never above the capacity in force */
    CU_ASSERT(atomic_load(&max_running) >= 2);  /* handlers did run side by side */
    /* Nearly every handler was checked (two resizes between two loads
     * take a preemption longer than the resizer's pause). */
    int checked = atomic_load(&cap_checked), unchecked = atomic_load(&cap_unchecked);
    CU_ASSERT(checked >= (int)(n_ok / 2) && unchecked <= checked / 10);
    if (checked < (int)(n_ok / 2) || unchecked > checked / 10)
        printf("\n    capacity checked %d, unchecked %d\n", checked, unchecked);

    /* Shrunk to 2 and settled: no more than 2 handlers at once from now on. */
    set_cap(MAXW);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, TMO), 2);
    WAIT_UNTIL(settled_at(rt, p, 2));
    CU_ASSERT(settled_at(rt, p, 2));
    atomic_store(&max_running, 0);
    set_cap(2);
    for (uint32_t id = 0; id < 2000; id++) {
        while (job(rt, p, NJOBS, A_SPIN) == SHOAL_EBUSY)
            shoal_test_nap();
    }
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).queue_depth == 0);
    CU_ASSERT(atomic_load(&max_running) <= 2);
    CU_ASSERT_EQUAL(atomic_load(&over_cap), 0);
    shoal_runtime_destroy(rt);
}

static void forward_capacity_and_once(void) { capacity_and_once_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_capacity_and_once(void) { capacity_and_once_case(SHOAL_POOL_KIND_PULL); }

/* ---- 3: idempotent --------------------------------------------------------------- */

static void idempotent_case(uint32_t kind)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t p = spawn(rt, kind, 3, 16);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, TMO), 5);
    WAIT_UNTIL(settled_at(rt, p, 5));
    shoal_runtime_stats_t a = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, TMO), 5);
    shoal_runtime_stats_t b = shoal_test_stats(rt);
    CU_ASSERT(settled_at(rt, p, 5));
    CU_ASSERT_EQUAL(b.actors_spawned, a.actors_spawned);
    CU_ASSERT_EQUAL(b.actors_ended, a.actors_ended);
    /* The same going down: a second set_size(2) retires no one more. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, TMO), 2);
    WAIT_UNTIL(settled_at(rt, p, 2) && shoal_test_stats(rt).actors_ended == a.actors_ended + 3);
    a = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, TMO), 2);
    b = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(b.actors_spawned, a.actors_spawned);
    CU_ASSERT_EQUAL(b.actors_ended, a.actors_ended);
    CU_ASSERT(settled_at(rt, p, 2));
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).resizes, 2); /* 3 -> 5, 5 -> 2 */
    shoal_runtime_destroy(rt);
}

static void forward_idempotent(void) { idempotent_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_idempotent(void) { idempotent_case(SHOAL_POOL_KIND_PULL); }

/* ---- 4: linearizable --------------------------------------------------------------- */

/* The pool's order is read from the pool: a stats call is the pool actor's
 * as a resize is, answered in the same order, and stats.resizes counts the
 * resizes that changed the target. Here every call changes it -- resizer t
 * asks 2 + t and 2 + t + RESIZERS by turns, and the pool starts at 1 -- so
 * each call is one step of that count, and a read (resizes R, target T)
 * says "the R-th resize in the pool's order left T". Each resizer reads
 * after each of its calls; then
 *   - every call answered its own size;
 *   - the count grew by RESIZERS x ROUNDS: each call applied once;
 *   - no two reads of one step saw different targets: one order;
 *   - each of a resizer's reads is at a later step than its last: its own
 *     call was applied before it answered;
 *   - exactly one read saw the last step with its own call's size (the
 *     read after the pool's last call: nothing came after it), and the
 *     pool's target is that size. */
#define RESIZERS 8
#define ROUNDS 40
#define NCALLS (RESIZERS * ROUNDS)
#define LIN_MAX (1 + 2 * RESIZERS)

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    unsigned t;
    int rc[ROUNDS];
    uint64_t step[ROUNDS]; /* stats.resizes read after call i (UINT64_MAX: no read) */
    uint32_t seen[ROUNDS]; /* the target read with it */
} resizer_t;

static uint32_t lin_size(unsigned t, unsigned i) { return 2 + t + (i % 2) * RESIZERS; }

static void *resizing_main(void *arg)
{
    resizer_t *r = arg;
    for (unsigned i = 0; i < ROUNDS; i++) {
        r->rc[i] = shoal_pool_set_size(r->rt, r->pool, lin_size(r->t, i), TMO);
        shoal_pool_stats_t st;
        bool read = shoal_pool_stats(r->rt, r->pool, &st, TMO) == SHOAL_OK;
        r->step[i] = read ? st.resizes : UINT64_MAX;
        r->seen[i] = read ? st.target_size : 0;
    }
    return NULL;
}

static void linearizable_case(uint32_t kind)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn_max(rt, kind, 1, 16, LIN_MAX);
    uint64_t base = shoal_test_pool_stats(rt, p).resizes;
    static resizer_t r[RESIZERS];
    pthread_t t[RESIZERS];
    for (unsigned i = 0; i < RESIZERS; i++) {
        r[i] = (resizer_t){.rt = rt, .pool = p, .t = i};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, resizing_main, &r[i]), 0);
    }
    for (unsigned i = 0; i < RESIZERS; i++)
        pthread_join(t[i], NULL);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.resizes, base + NCALLS);
    static uint32_t left[NCALLS + 1]; /* the target step k left, as read (0: not read) */
    memset(left, 0, sizeof left);
    left[0] = 1;
    unsigned wrong = 0, stray = 0, torn = 0, unapplied = 0, last = 0;
    uint32_t last_size = 0;
    for (unsigned i = 0; i < RESIZERS; i++) {
        uint64_t prev = base;
        for (unsigned k = 0; k < ROUNDS; k++) {
            uint32_t size = lin_size(i, k);
            wrong += r[i].rc[k] != (int)size;
            if (r[i].step[k] < base || r[i].step[k] > base + NCALLS) {
                stray++;
                continue;
            }
            unapplied += r[i].step[k] <= prev;
            prev = r[i].step[k];
            uint64_t at = r[i].step[k] - base;
            torn += left[at] != 0 && left[at] != r[i].seen[k];
            left[at] = r[i].seen[k];
            if (at == NCALLS && r[i].seen[k] == size) {
                last++;
                last_size = size;
            }
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(stray, 0);
    CU_ASSERT_EQUAL(torn, 0);
    CU_ASSERT_EQUAL(unapplied, 0);
    CU_ASSERT_EQUAL(last, 1);
    CU_ASSERT_EQUAL(st.target_size, last_size);
    if (wrong + stray + torn + unapplied != 0 || last != 1 || st.target_size != last_size)
        printf("\n    wrong %u stray %u torn %u unapplied %u last %u (size %u, target %u)\n", wrong,
               stray, torn, unapplied, last, last_size, st.target_size);
    uint32_t target = st.target_size;
    WAIT_UNTIL(settled_at(rt, p, target));
    CU_ASSERT(settled_at(rt, p, target));
    /* A later call wins, whatever came before. */
    uint32_t later = target == 4 ? 2 : 4;
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, later, TMO), (int)later);
    WAIT_UNTIL(settled_at(rt, p, later));
    CU_ASSERT(settled_at(rt, p, later));
    shoal_runtime_destroy(rt);
}

static void forward_linearizable(void) { linearizable_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_linearizable(void) { linearizable_case(SHOAL_POOL_KIND_PULL); }

/* ---- 5: nothing runs after drain returns ----------------------------------------------- */

/* After drain returns the sender goes on for AFTER_SENDS sends, counted by
 * the sender itself (a send it began after it saw `drained`), and the test
 * waits for that count. It used to sleep 2 x 50 ms and assert that the
 * refusals had grown in the second 50 ms, which held only if the sender
 * thread ran in them: on a busy CPU it may not. Counted, every send made
 * after the drain is known, and each is asserted refused (SHOAL_ENOPROC). */
#define AFTER_SENDS 1000

static void *sending_main(void *arg)
{
    load_t *l = arg;
    for (uint32_t id = 0; !atomic_load(l->stop); id = (id + 1) % NJOBS) {
        bool after = atomic_load(&drained); /* read before the send: drain had returned */
        int rc = job(l->rt, l->pool, NJOBS, A_SPIN);
        if (after) {
            atomic_fetch_add(&refused_after, rc == SHOAL_ENOPROC);
            atomic_fetch_add(&sent_after, 1);
        }
        if (id % 16 == 0)
            shoal_test_nap();
    }
    return NULL;
}

static void drain_case(uint32_t kind)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn(rt, kind, 3, 32);
    atomic_int stop = 0;
    load_t l = {rt, p, 0, 0, &stop};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, sending_main, &l), 0);
    WAIT_UNTIL(atomic_load(&done) >= 500);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, p, TMO), SHOAL_OK);
    atomic_store(&drained, 1);
    int done_at_drain = atomic_load(&done);
    WAIT_UNTIL(atomic_load(&sent_after) >= AFTER_SENDS); /* the sender goes on meanwhile */
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    CU_ASSERT(atomic_load(&sent_after) >= AFTER_SENDS);
    CU_ASSERT_EQUAL(atomic_load(&refused_after), atomic_load(&sent_after)); /* every one */
    CU_ASSERT_EQUAL(atomic_load(&after_drain), 0);
    CU_ASSERT_EQUAL(atomic_load(&done), done_at_drain);
    CU_ASSERT_EQUAL(job(rt, p, 0, A_OK), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 3, TMO), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

static void forward_nothing_after_drain(void) { drain_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_nothing_after_drain(void) { drain_case(SHOAL_POOL_KIND_PULL); }

/* ---- live size and target apart; shrink keeps the work ------------------------------- */

/* restart.max 0: the first crash degrades the pool, which refills after the
 * backoff (300 ms): meanwhile 2 live of a target of 3. It is RUNNING again
 * once a whole restart window (1 s) has passed without a death and every
 * worker is back (workers.c: shoal__pool_on_check). */
static void live_and_target_case(uint32_t kind)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.worker = &wk;
    s.kind = kind;
    s.size = 3;
    s.max_size = MAXW;
    s.restart.max = 0;
    s.restart.within_ms = 1000;
    s.restart.backoff_ms = 300;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, 0, A_PANIC), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).pool_size == 2);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.target_size, 3);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_DEGRADED);
    /* A resize while degraded moves the target; live follows at the refill. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 4, TMO), 4);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 4);
    WAIT_UNTIL(settled_at(rt, p, 4) && shoal_test_pool_stats(rt, p).state == SHOAL_POOL_RUNNING);
    CU_ASSERT(settled_at(rt, p, 4));
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).state, SHOAL_POOL_RUNNING);
    shoal_runtime_destroy(rt);
}

static void forward_live_and_target(void) { live_and_target_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_live_and_target(void) { live_and_target_case(SHOAL_POOL_KIND_PULL); }

/* 4 workers block on one job each; 40 more wait (in mailboxes, or in the
 * buffer). Shrunk to 1: 3 retire, and every job is still handled once. */
static void shrink_keeps_work_case(uint32_t kind)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(6);
    shoal_pid_t p = spawn(rt, kind, 4, 64);
    for (uint32_t id = 0; id < 4; id++)
        CU_ASSERT_EQUAL(job(rt, p, id, A_BLOCK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 4);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 4);
    for (uint32_t id = 4; id < 44; id++)
        CU_ASSERT_EQUAL(job(rt, p, id, A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 1, TMO), 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 1);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.retiring, 3);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 44 && settled_at(rt, p, 1));
    CU_ASSERT_EQUAL(atomic_load(&done), 44);
    for (uint32_t id = 0; id < 44; id++)
        CU_ASSERT_EQUAL(runs[id], 1);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 44);
    CU_ASSERT_EQUAL(st.messages_handled, 44);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

static void forward_shrink_keeps_work(void) { shrink_keeps_work_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_shrink_keeps_work(void) { shrink_keeps_work_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: capacity, and each message once", forward_capacity_and_once},
        {"pull: capacity, and each message once", pull_capacity_and_once},
        {"forward: resize is idempotent", forward_idempotent},
        {"pull: resize is idempotent", pull_idempotent},
        {"forward: resizes are linearizable", forward_linearizable},
        {"pull: resizes are linearizable", pull_linearizable},
        {"forward: nothing runs after drain returns", forward_nothing_after_drain},
        {"pull: nothing runs after drain returns", pull_nothing_after_drain},
        {"forward: live size and target apart", forward_live_and_target},
        {"pull: live size and target apart", pull_live_and_target},
        {"forward: a shrink keeps queued work", forward_shrink_keeps_work},
        {"pull: a shrink keeps held and buffered work", pull_shrink_keeps_work},
        {NULL, NULL}};
    return shoal_test_run("resize", cases);
}
