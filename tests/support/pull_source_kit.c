/* pull_source_kit.c - the counter source, the members and the epic pool of
 * the pull source suites (pull_source_kit.h). */
#include <limits.h>
#include <string.h>

#include "pull_source_kit.h"
#include "shoal/pull.h"

_Atomic uint64_t ps_total;
_Atomic uint64_t ps_panic_at;
atomic_int ps_panics_left;
atomic_int ps_requests, ps_resumes;
_Atomic uint32_t ps_max_n;
_Atomic uintptr_t ps_last_args;
atomic_int ps_inits;

unsigned char ps_seen[PS_MAXITEMS];
_Atomic uint64_t ps_handled, ps_dups;
atomic_int ps_gate = 1;

/* ---- the source: items next .. total-1, cursor = next ------------------------- */

typedef struct {
    uint64_t next;
    uint64_t end; /* from its args (a uint64_t *), else 0: ps_total */
} counter_t;

static int counter_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    counter_t *c = state;
    if (args != NULL)
        memcpy(&c->end, args, sizeof c->end);
    atomic_store(&ps_last_args, (uintptr_t)args);
    atomic_fetch_add(&ps_inits, 1);
    return 0;
}

static int counter_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    counter_t *c = state;
    if (msg->type == SHOAL_PULL_RESUME && msg->size == sizeof c->next) {
        memcpy(&c->next, msg->data, sizeof c->next);
        atomic_fetch_add(&ps_resumes, 1);
        return 0;
    }
    if (msg->type != SHOAL_PULL_REQUEST || msg->size != sizeof(uint32_t))
        return 0;
    uint32_t n;
    memcpy(&n, msg->data, sizeof n);
    atomic_fetch_add(&ps_requests, 1);
    uint32_t m = atomic_load(&ps_max_n);
    while (n > m && !atomic_compare_exchange_weak(&ps_max_n, &m, n))
        ;
    if (c->next >= atomic_load(&ps_panic_at) && atomic_fetch_sub(&ps_panics_left, 1) > 0)
        shoal_panic(ctx, "source panics at %llu", (unsigned long long)c->next);
    uint64_t end = c->end != 0 ? c->end : atomic_load(&ps_total);
    for (uint32_t i = 0; i < n && c->next < end; i++, c->next++)
        if (shoal_send(ctx, msg->from, PS_ITEM, &c->next, sizeof c->next) != SHOAL_OK)
            return SHOAL_EFAILED; /* never: the room was set aside */
    if (c->next == end)
        return shoal_send_priority(ctx, msg->from, SHOAL_PULL_DONE, NULL, 0);
    return shoal_send_priority(ctx, msg->from, SHOAL_PULL_SENT, &c->next, sizeof c->next);
}

const shoal_behaviour_t ps_counter = {.name = "counter",
                                      .state_size = sizeof(counter_t),
                                      .init = counter_init,
                                      .handle_message = counter_message};

/* ---- the members ---------------------------------------------------------------- */

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    uint64_t i;
    if (msg->type != PS_ITEM || msg->size != sizeof i)
        return 0;
    memcpy(&i, msg->data, sizeof i);
    double end = shoal_test_now() + PS_WAIT_S;
    while (i == 0 && atomic_load(&ps_gate) == 0 && shoal_test_now() < end)
        shoal_test_nap();
    if (i < PS_MAXITEMS && __atomic_fetch_add(&ps_seen[i], 1, __ATOMIC_RELAXED) != 0)
        atomic_fetch_add(&ps_dups, 1);
    atomic_fetch_add(&ps_handled, 1);
    return 0;
}

const shoal_behaviour_t ps_wk = {.name = "wk", .handle_message = wk_message};

void ps_reset(uint64_t n)
{
    memset(ps_seen, 0, sizeof ps_seen);
    atomic_store(&ps_handled, 0);
    atomic_store(&ps_dups, 0);
    atomic_store(&ps_total, n);
    atomic_store(&ps_panic_at, 0);
    atomic_store(&ps_panics_left, 0);
    atomic_store(&ps_requests, 0);
    atomic_store(&ps_resumes, 0);
    atomic_store(&ps_max_n, 0);
    atomic_store(&ps_last_args, 0);
    atomic_store(&ps_inits, 0);
}

void ps_epic_spec(shoal_pool_spec_t *s, uint32_t size, uint32_t buffer)
{
    shoal_pool_spec_init(s);
    s->name = "epic";
    s->worker = &ps_wk;
    s->kind = SHOAL_POOL_KIND_PULL;
    s->size = size;
    s->buffer = buffer;
    s->source = &ps_counter;
}

shoal_pid_t ps_spawn(shoal_runtime_t *rt, uint32_t size, uint32_t buffer)
{
    shoal_pool_spec_t s;
    ps_epic_spec(&s, size, buffer);
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    return p;
}

/* Whether items 0 .. n-1 were each seen lo to hi times. */
static bool each_seen(uint64_t n, unsigned lo, unsigned hi)
{
    for (uint64_t i = 0; i < n; i++) {
        unsigned c = __atomic_load_n(&ps_seen[i], __ATOMIC_RELAXED); /* members may still add */
        if (c < lo || c > hi)
            return false;
    }
    return true;
}

bool ps_all_once(uint64_t n) { return each_seen(n, 1, 1); }

bool ps_all_seen(uint64_t n) { return each_seen(n, 1, UCHAR_MAX); }

void ps_settle(void)
{
    double end = shoal_test_now() + 0.2;
    while (shoal_test_now() < end)
        shoal_test_nap();
}
