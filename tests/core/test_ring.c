/* test_ring.c - a worker's ring: owner FIFO, take, steal-half (sched/ring.h).
 * Actor pointers are fake values, never dereferenced. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched/ring.h"
#include "support.h"

typedef struct shoal_actor_s actor_t;

static actor_t *fake(uint32_t i) { return (actor_t *)(uintptr_t)((uintptr_t)(i + 1) * 8); }
static uint32_t unfake(actor_t *a) { return (uint32_t)((uintptr_t)a / 8 - 1); }

static shoal_ring_t *ring_new(void)
{
    shoal_ring_t *r = aligned_alloc(64, sizeof *r);
    if (r != NULL)
        shoal__ring_init(r);
    return r;
}

static void owner_pops_in_push_order(void)
{
    shoal_ring_t *r = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_PTR_NULL(shoal__ring_pop(r));
    CU_ASSERT_EQUAL(shoal__ring_len(r), 0);
    for (uint32_t i = 0; i < 100; i++)
        CU_ASSERT_TRUE(shoal__ring_push(r, fake(i)));
    CU_ASSERT_EQUAL(shoal__ring_len(r), 100);
    for (uint32_t i = 0; i < 100; i++)
        CU_ASSERT_PTR_EQUAL(shoal__ring_pop(r), fake(i));
    CU_ASSERT_PTR_NULL(shoal__ring_pop(r));
    CU_ASSERT_EQUAL(shoal__ring_len(r), 0);
    CU_ASSERT_EQUAL(atomic_load(&r->progress), 100);
    free(r);
}

static void fifo_holds_across_wrap_around(void)
{
    shoal_ring_t *r = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    /* Interleave so head and tail lap the buffer several times. */
    uint32_t next_in = 0, next_out = 0, errors = 0;
    for (uint32_t round = 0; round < 5 * SHOAL_RING_SIZE / 7; round++) {
        for (int k = 0; k < 7; k++)
            if (!shoal__ring_push(r, fake(next_in++)))
                errors++;
        for (int k = 0; k < 6; k++)
            if (shoal__ring_pop(r) != fake(next_out++))
                errors++;
    }
    while (next_out < next_in)
        if (shoal__ring_pop(r) != fake(next_out++))
            errors++;
    CU_ASSERT_EQUAL(errors, 0);
    CU_ASSERT(next_in > 4 * SHOAL_RING_SIZE);
    CU_ASSERT_PTR_NULL(shoal__ring_pop(r));
    free(r);
}

static void full_ring_refuses(void)
{
    shoal_ring_t *r = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    uint32_t pushed = 0;
    while (pushed < 2 * SHOAL_RING_SIZE && shoal__ring_push(r, fake(pushed)))
        pushed++;
    CU_ASSERT_EQUAL(pushed, SHOAL_RING_SIZE);
    CU_ASSERT_EQUAL(shoal__ring_len(r), SHOAL_RING_SIZE);
    CU_ASSERT_FALSE(shoal__ring_push(r, fake(9999)));
    /* One pop frees exactly one place, and the ring stays FIFO. */
    CU_ASSERT_PTR_EQUAL(shoal__ring_pop(r), fake(0));
    CU_ASSERT_TRUE(shoal__ring_push(r, fake(SHOAL_RING_SIZE)));
    CU_ASSERT_FALSE(shoal__ring_push(r, fake(9999)));
    for (uint32_t i = 1; i <= SHOAL_RING_SIZE; i++)
        if (shoal__ring_pop(r) != fake(i)) {
            CU_FAIL("order broken after a full ring");
            break;
        }
    CU_ASSERT_PTR_NULL(shoal__ring_pop(r));
    free(r);
}

static void take_moves_the_oldest(void)
{
    shoal_ring_t *r = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    actor_t *out[16];
    CU_ASSERT_EQUAL(shoal__ring_take(r, out, 16), 0);
    for (uint32_t i = 0; i < 10; i++)
        shoal__ring_push(r, fake(i));
    CU_ASSERT_EQUAL(shoal__ring_take(r, out, 4), 4);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_PTR_EQUAL(out[i], fake(i));
    CU_ASSERT_EQUAL(shoal__ring_len(r), 6);
    CU_ASSERT_EQUAL(shoal__ring_take(r, out, 16), 6);
    for (uint32_t i = 0; i < 6; i++)
        CU_ASSERT_PTR_EQUAL(out[i], fake(4 + i));
    CU_ASSERT_EQUAL(shoal__ring_take(r, out, 16), 0);
    CU_ASSERT_EQUAL(shoal__ring_take(r, out, 0), 0);
    free(r);
}

/* Steal from a ring holding n; check the count, the order and what is left. */
static void check_steal(uint32_t n)
{
    shoal_ring_t *victim = ring_new(), *into = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(victim);
    CU_ASSERT_PTR_NOT_NULL_FATAL(into);
    /* Start the thief's ring at an arbitrary position. */
    for (uint32_t i = 0; i < 5; i++) {
        shoal__ring_push(into, fake(1000));
        shoal__ring_pop(into);
    }
    for (uint32_t i = 0; i < n; i++)
        shoal__ring_push(victim, fake(i));
    uint32_t stolen = 12345;
    actor_t *run = shoal__ring_steal(victim, into, true, &stolen);
    uint32_t want = n - n / 2;
    CU_ASSERT_EQUAL(stolen, want);
    if (n == 0) {
        CU_ASSERT_PTR_NULL(run);
    } else {
        CU_ASSERT_PTR_EQUAL(run, fake(0));
    }
    CU_ASSERT_EQUAL(shoal__ring_len(into), want == 0 ? 0 : want - 1);
    for (uint32_t i = 1; i < want; i++)
        CU_ASSERT_PTR_EQUAL(shoal__ring_pop(into), fake(i));
    CU_ASSERT_PTR_NULL(shoal__ring_pop(into));
    CU_ASSERT_EQUAL(shoal__ring_len(victim), n - want);
    for (uint32_t i = want; i < n; i++)
        CU_ASSERT_PTR_EQUAL(shoal__ring_pop(victim), fake(i));
    CU_ASSERT_PTR_NULL(shoal__ring_pop(victim));
    free(victim);
    free(into);
}

static void steal_takes_half_rounded_up_oldest_first(void)
{
    check_steal(0);
    check_steal(1);
    check_steal(2);
    check_steal(3);
    check_steal(10);
    check_steal(11);
    check_steal(SHOAL_RING_SIZE - 1);
    check_steal(SHOAL_RING_SIZE);
}

static void single_item_needs_allow_single(void)
{
    shoal_ring_t *victim = ring_new(), *into = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(victim);
    CU_ASSERT_PTR_NOT_NULL_FATAL(into);
    shoal__ring_push(victim, fake(7));
    uint32_t stolen = 99;
    CU_ASSERT_PTR_NULL(shoal__ring_steal(victim, into, false, &stolen));
    CU_ASSERT_EQUAL(stolen, 0);
    CU_ASSERT_EQUAL(shoal__ring_len(victim), 1);
    CU_ASSERT_EQUAL(shoal__ring_len(into), 0);
    CU_ASSERT_PTR_EQUAL(shoal__ring_steal(victim, into, true, &stolen), fake(7));
    CU_ASSERT_EQUAL(stolen, 1);
    CU_ASSERT_EQUAL(shoal__ring_len(victim), 0);
    CU_ASSERT_EQUAL(shoal__ring_len(into), 0);
    CU_ASSERT_PTR_NULL(shoal__ring_steal(victim, into, true, &stolen));
    CU_ASSERT_EQUAL(stolen, 0);
    /* Stealing does not count as the owner's progress. */
    CU_ASSERT_EQUAL(atomic_load(&victim->progress), 0);
    free(victim);
    free(into);
}

/* ring.h: "a thief may take a ring's SINGLE actor only when progress has
 * not moved"; worker.c wakes a sibling when a ring holds two or more so
 * that it can steal. With two actors in the ring, half rounded up is one,
 * and that steal must not need allow_single. */
static void two_items_one_is_stolen_without_allow_single(void)
{
    shoal_ring_t *victim = ring_new(), *into = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(victim);
    CU_ASSERT_PTR_NOT_NULL_FATAL(into);
    shoal__ring_push(victim, fake(7));
    shoal__ring_push(victim, fake(8));
    uint32_t stolen = 99;
    CU_ASSERT_PTR_EQUAL(shoal__ring_steal(victim, into, false, &stolen), fake(7));
    CU_ASSERT_EQUAL(stolen, 1);
    CU_ASSERT_EQUAL(shoal__ring_len(into), 0);
    CU_ASSERT_EQUAL(shoal__ring_len(victim), 1);
    free(victim);
    free(into);
}

/* ---- owner against thieves ------------------------------------------------ */

#define ITEMS 200000u
#define THIEVES 2

typedef struct race_s {
    shoal_ring_t *owner_ring;
    _Atomic uint8_t *seen; /* per item: times taken */
    _Atomic int done;      /* the owner pushed everything and drained its ring */
    _Atomic unsigned taken;
    _Atomic unsigned bad;
} race_t;

typedef struct thief_s {
    race_t *race;
    shoal_ring_t *ring;
    unsigned taken;
    unsigned steals;
} thief_t;

static void mark(race_t *r, actor_t *a)
{
    uint32_t i = unfake(a);
    if (a == NULL || ((uintptr_t)a & 7) != 0 || i >= ITEMS) {
        atomic_fetch_add(&r->bad, 1);
        return;
    }
    atomic_fetch_add_explicit(&r->seen[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->taken, 1, memory_order_relaxed);
}

static void *thief_main(void *p)
{
    thief_t *t = p;
    race_t *r = t->race;
    for (;;) {
        int done = atomic_load(&r->done);
        uint32_t stolen;
        actor_t *a = shoal__ring_steal(r->owner_ring, t->ring, true, &stolen);
        if (a == NULL) {
            if (done)
                break;
            continue;
        }
        t->steals++;
        mark(r, a);
        t->taken++;
        /* Run what we stole, as a worker would, so our ring is empty again. */
        actor_t *b;
        while ((b = shoal__ring_pop(t->ring)) != NULL) {
            mark(r, b);
            t->taken++;
        }
        if (stolen == 0 || stolen > SHOAL_RING_SIZE / 2)
            atomic_fetch_add(&r->bad, 1);
    }
    return NULL;
}

static void owner_and_thieves_take_every_item_once(void)
{
    race_t r;
    r.owner_ring = ring_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.owner_ring);
    r.seen = calloc(ITEMS, sizeof *r.seen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.seen);
    atomic_init(&r.done, 0);
    atomic_init(&r.taken, 0);
    atomic_init(&r.bad, 0);
    thief_t th[THIEVES];
    pthread_t tid[THIEVES];
    for (int i = 0; i < THIEVES; i++) {
        th[i] = (thief_t){.race = &r, .ring = ring_new()};
        CU_ASSERT_PTR_NOT_NULL_FATAL(th[i].ring);
        CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, thief_main, &th[i]), 0);
    }
    /* The owner pushes in bursts and pops some itself, so thieves race with
     * both its pushes and its pops; a full ring is drained by popping. */
    unsigned owner_taken = 0, refused = 0;
    uint32_t last_popped = 0;
    unsigned order_errors = 0;
    for (uint32_t i = 0; i < ITEMS;) {
        uint32_t burst = 1 + (i * 7919u) % 64;
        for (uint32_t k = 0; k < burst && i < ITEMS; k++) {
            if (shoal__ring_push(r.owner_ring, fake(i))) {
                i++;
            } else {
                refused++;
                break;
            }
        }
        /* every fourth burst the owner takes a batch (as spill does) */
        if ((i & 3) == 0) {
            actor_t *batch[8];
            uint32_t k = shoal__ring_take(r.owner_ring, batch, 1 + i % 8);
            for (uint32_t j = 0; j < k; j++) {
                if (owner_taken != 0 && unfake(batch[j]) <= last_popped)
                    order_errors++;
                last_popped = unfake(batch[j]);
                mark(&r, batch[j]);
                owner_taken++;
            }
        }
        for (uint32_t k = 0; k < burst / 2; k++) {
            actor_t *a = shoal__ring_pop(r.owner_ring);
            if (a == NULL)
                break;
            /* the owner's own pops come out in increasing order */
            if (owner_taken != 0 && unfake(a) <= last_popped)
                order_errors++;
            last_popped = unfake(a);
            mark(&r, a);
            owner_taken++;
        }
    }
    actor_t *a;
    while ((a = shoal__ring_pop(r.owner_ring)) != NULL) {
        if (owner_taken != 0 && unfake(a) <= last_popped)
            order_errors++;
        last_popped = unfake(a);
        mark(&r, a);
        owner_taken++;
    }
    atomic_store(&r.done, 1);
    unsigned thief_taken = 0, steals = 0;
    for (int i = 0; i < THIEVES; i++) {
        pthread_join(tid[i], NULL);
        thief_taken += th[i].taken;
        steals += th[i].steals;
        free(th[i].ring);
    }
    unsigned dup = 0, missing = 0;
    for (uint32_t i = 0; i < ITEMS; i++) {
        uint8_t n = atomic_load(&r.seen[i]);
        if (n == 0)
            missing++;
        else if (n > 1)
            dup++;
    }
    CU_ASSERT_EQUAL(atomic_load(&r.bad), 0);
    CU_ASSERT_EQUAL(missing, 0);
    CU_ASSERT_EQUAL(dup, 0);
    CU_ASSERT_EQUAL(order_errors, 0);
    CU_ASSERT_EQUAL(owner_taken + thief_taken, ITEMS);
    CU_ASSERT_EQUAL(atomic_load(&r.taken), ITEMS);
    CU_ASSERT_EQUAL(shoal__ring_len(r.owner_ring), 0);
    if (steals == 0)
        fprintf(stderr, "\n  (note: no steal succeeded in this run)\n");
    free(r.seen);
    free(r.owner_ring);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"owner pops in push order", owner_pops_in_push_order},
        {"FIFO holds across wrap-around", fifo_holds_across_wrap_around},
        {"full ring refuses", full_ring_refuses},
        {"take moves the oldest", take_moves_the_oldest},
        {"steal takes half rounded up, oldest first", steal_takes_half_rounded_up_oldest_first},
        {"a single item needs allow_single", single_item_needs_allow_single},
        {"two items: one is stolen without allow_single",
         two_items_one_is_stolen_without_allow_single},
        {"owner and 2 thieves take every item once", owner_and_thieves_take_every_item_once},
        {NULL, NULL},
    };
    return shoal_test_run("ring", cases);
}
