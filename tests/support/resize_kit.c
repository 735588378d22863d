/* resize_kit.c - the Resize suites' worker, its records, pool and job
 * (resize_kit.h). */
#include "resize_kit.h"

#include <string.h>

/* The worker's one message type: a job_t, an id and what it asks. */
enum { T_JOB = 1 };

typedef struct {
    uint32_t id, act;
} job_t;

unsigned char rz_runs[RZ_NJOBS];
unsigned char rz_accepted[RZ_NJOBS];
static atomic_int running; /* handlers running now */
atomic_int rz_max_running, rz_done, rz_entered, rz_gate, rz_after_drain, rz_drained;
atomic_int rz_accepted_n, rz_ended;
atomic_int rz_sent_after, rz_refused_after;
atomic_uint rz_cap_word;
atomic_int rz_over_cap, rz_cap_checked, rz_cap_unchecked, rz_bad_resize;

void rz_reset(void)
{
    memset(rz_runs, 0, sizeof rz_runs);
    memset(rz_accepted, 0, sizeof rz_accepted);
    atomic_store(&running, 0);
    atomic_store(&rz_max_running, 0);
    atomic_store(&rz_done, 0);
    atomic_store(&rz_accepted_n, 0);
    atomic_store(&rz_ended, 0);
    atomic_store(&rz_entered, 0);
    atomic_store(&rz_gate, 0);
    atomic_store(&rz_after_drain, 0);
    atomic_store(&rz_drained, 0);
    atomic_store(&rz_sent_after, 0);
    atomic_store(&rz_refused_after, 0);
    atomic_store(&rz_cap_word, RZ_MAXW);
    atomic_store(&rz_over_cap, 0);
    atomic_store(&rz_cap_checked, 0);
    atomic_store(&rz_cap_unchecked, 0);
    atomic_store(&rz_bad_resize, 0);
}

uint32_t rz_cap_of(uint32_t w) { return w & 0xffu; }

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
        atomic_fetch_add(&rz_cap_unchecked, 1);
        return;
    }
    uint32_t bound = rz_cap_of(before) > rz_cap_of(after) ? rz_cap_of(before) : rz_cap_of(after);
    if ((uint32_t)now > bound)
        atomic_fetch_add(&rz_over_cap, 1);
    atomic_fetch_add(&rz_cap_checked, 1);
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
    if (atomic_load(&rz_drained))
        atomic_fetch_add(&rz_after_drain, 1);
    uint32_t cap_before = atomic_load(&rz_cap_word);
    int now = atomic_fetch_add(&running, 1) + 1;
    check_cap(now, cap_before, atomic_load(&rz_cap_word));
    int m = atomic_load(&rz_max_running);
    while (now > m && !atomic_compare_exchange_weak(&rz_max_running, &m, now))
        ;
    if (j.act & RZ_A_BLOCK) {
        atomic_fetch_add(&rz_entered, 1);
        shoal_test_wait_flag(&rz_gate, RZ_WAIT_S);
    }
    if (j.act & RZ_A_SPIN)
        spin_us(20);
    atomic_fetch_sub(&running, 1);
    atomic_fetch_add(&rz_ended, 1);
    if (j.act & RZ_A_PANIC)
        shoal_panic(ctx, "test panic on job %u", (unsigned)j.id);
    if (j.id < RZ_NJOBS)
        __atomic_fetch_add(&rz_runs[j.id], 1, __ATOMIC_RELAXED);
    atomic_fetch_add(&rz_done, 1);
    return 0;
}

const shoal_behaviour_t rz_wk = {.name = "wk", .handle_message = wk_message};

shoal_pid_t rz_spawn_max(shoal_runtime_t *rt, uint32_t kind, uint32_t size, uint32_t mailbox,
                         uint32_t max)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = kind == SHOAL_POOL_KIND_PULL ? "pull" : "forward";
    s.worker = &rz_wk;
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

shoal_pid_t rz_spawn(shoal_runtime_t *rt, uint32_t kind, uint32_t size, uint32_t mailbox)
{
    return rz_spawn_max(rt, kind, size, mailbox, RZ_MAXW);
}

int rz_job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t id, uint32_t act)
{
    job_t j = {id, act};
    return shoal_runtime_send(rt, to, T_JOB, &j, sizeof j);
}

bool rz_settled_at(shoal_runtime_t *rt, shoal_pid_t p, uint32_t size)
{
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    return st.pool_size == size && st.target_size == size && st.retiring == 0;
}
