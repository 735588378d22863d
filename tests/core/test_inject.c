/* test_inject.c - the MPMC ring and its overflow (sched/inject.h), packed
 * (the global ring) and spread (a pull pool's buffer). Actor
 * pointers are fake values, never dereferenced. A ring of 8 cells makes the
 * overflow list do most of the work. */
#include <pthread.h>
#include <stdlib.h>

#include "sched/inject.h"
#include "shoal/error.h"
#include "support.h"

typedef struct item_s item_t; /* items are opaque pointers */

static item_t *fake(uint32_t i) { return (item_t *)(uintptr_t)((uintptr_t)(i + 1) * 8); }
static uint32_t unfake(void *a) { return (uint32_t)((uintptr_t)a / 8 - 1); }

#define SMALL 8u

/* Every case runs on both shapes (inject.h): packed, then spread. */
static bool spread;
static int init(shoal_inject_t *q) { return shoal__inject_init(q, SMALL, spread); }

static size_t count(shoal_inject_t *q) { return shoal__inject_count(q, memory_order_relaxed); }

static void empty_takes_nothing(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    void *out[4];
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 4), 0);
    CU_ASSERT_EQUAL(count(&q), 0);
    shoal__inject_push(&q, fake(0));
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 0), 0);
    CU_ASSERT_EQUAL(count(&q), 1);
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 4), 1);
    CU_ASSERT_PTR_EQUAL(out[0], fake(0));
    CU_ASSERT_EQUAL(count(&q), 0);
    shoal__inject_fini(&q);
}

static void fifo_across_ring_and_overflow(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    for (uint32_t i = 0; i < 20; i++) {
        shoal__inject_push(&q, fake(i));
        CU_ASSERT_EQUAL(count(&q), i + 1);
    }
    CU_ASSERT_EQUAL(atomic_load(&q.overflow_len), 20 - SMALL);
    void *out[64];
    /* One take that spans both parts. */
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 11), 11);
    for (uint32_t i = 0; i < 11; i++)
        CU_ASSERT_PTR_EQUAL(out[i], fake(i));
    CU_ASSERT_EQUAL(count(&q), 9);
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 64), 9);
    for (uint32_t i = 0; i < 9; i++)
        CU_ASSERT_PTR_EQUAL(out[i], fake(11 + i));
    CU_ASSERT_EQUAL(count(&q), 0);
    CU_ASSERT_EQUAL(atomic_load(&q.overflow_len), 0);
    shoal__inject_fini(&q);
}

static void pushes_go_behind_the_overflow_while_it_is_not_empty(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    for (uint32_t i = 0; i < SMALL + 2; i++) /* ring full, overflow: 8, 9 */
        shoal__inject_push(&q, fake(i));
    void *out[64];
    /* Empty the ring only: the overflow still holds 8 and 9. */
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, SMALL), SMALL);
    for (uint32_t i = 0; i < SMALL; i++)
        CU_ASSERT_PTR_EQUAL(out[i], fake(i));
    /* The ring has room now, but 10 must not overtake 8 and 9. */
    shoal__inject_push(&q, fake(SMALL + 2));
    CU_ASSERT_EQUAL(count(&q), 3);
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 1), 1);
    CU_ASSERT_PTR_EQUAL(out[0], fake(SMALL));
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 64), 2);
    CU_ASSERT_PTR_EQUAL(out[0], fake(SMALL + 1));
    CU_ASSERT_PTR_EQUAL(out[1], fake(SMALL + 2));
    CU_ASSERT_EQUAL(count(&q), 0);
    /* With the overflow empty again, pushes use the ring. */
    shoal__inject_push(&q, fake(100));
    CU_ASSERT_EQUAL(atomic_load(&q.overflow_len), 0);
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 64), 1);
    CU_ASSERT_PTR_EQUAL(out[0], fake(100));
    shoal__inject_fini(&q);
}

static void overflow_grows_while_wrapped(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    uint32_t in = 0, outn = 0, errors = 0;
    void *out[256];
    /* Fill ring + 1024 overflow entries (its first capacity). */
    while (in < SMALL + 1024)
        shoal__inject_push(&q, fake(in++));
    /* Take 108: the overflow's head moves to 100. */
    for (uint32_t left = 108; left != 0;) {
        size_t k = shoal__inject_take(&q, out, left < 256 ? left : 256);
        for (size_t i = 0; i < k; i++)
            if (out[i] != fake(outn++))
                errors++;
        left -= (uint32_t)k;
    }
    /* Wrap the overflow's circular buffer, then grow it twice. */
    while (in < SMALL + 1024 + 3000)
        shoal__inject_push(&q, fake(in++));
    CU_ASSERT_EQUAL(count(&q), in - outn);
    size_t k;
    while ((k = shoal__inject_take(&q, out, 256)) != 0)
        for (size_t i = 0; i < k; i++)
            if (out[i] != fake(outn++))
                errors++;
    CU_ASSERT_EQUAL(errors, 0);
    CU_ASSERT_EQUAL(outn, in);
    CU_ASSERT_EQUAL(count(&q), 0);
    shoal__inject_fini(&q);
}

static void interleaved_pushes_and_takes_stay_fifo(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    uint32_t in = 0, outn = 0, errors = 0, count_errors = 0;
    void *out[32];
    for (uint32_t round = 0; round < 20000; round++) {
        uint32_t np = (round * 2654435761u >> 7) % 13;
        uint32_t nt = (round * 40503u >> 3) % 12 + 1;
        for (uint32_t i = 0; i < np; i++)
            shoal__inject_push(&q, fake(in++));
        size_t k = shoal__inject_take(&q, out, nt);
        uint32_t avail = in - outn;
        if (k != (avail < nt ? avail : nt))
            errors++;
        for (size_t i = 0; i < k; i++)
            if (out[i] != fake(outn++))
                errors++;
        if (count(&q) != in - outn)
            count_errors++;
    }
    CU_ASSERT_EQUAL(errors, 0);
    CU_ASSERT_EQUAL(count_errors, 0);
    CU_ASSERT(in > 100000);
    shoal__inject_fini(&q);
}

/* push_many: all at once when they fit (one claim: the ring's count moves
 * by n), else one at a time -- into the overflow past the ring -- and
 * FIFO either way, among single pushes too; n = 0 pushes nothing. */
static void push_many_is_fifo_and_spills_when_it_must(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    void *batch[32];
    for (uint32_t i = 0; i < 32; i++)
        batch[i] = fake(i);
    shoal__inject_push_many(&q, batch, 0);
    CU_ASSERT_EQUAL(count(&q), 0);
    shoal__inject_push(&q, fake(100));
    shoal__inject_push_many(&q, batch, 4); /* 0..3 */
    CU_ASSERT_EQUAL(atomic_load(&q.enq_pos), 5);
    CU_ASSERT_EQUAL(atomic_load(&q.overflow_len), 0);
    shoal__inject_push(&q, fake(101));
    shoal__inject_push_many(&q, batch + 4, 3); /* 4..6: room for 2 in the ring */
    CU_ASSERT_EQUAL(count(&q), 9);
    CU_ASSERT_EQUAL(atomic_load(&q.overflow_len), 1);
    void *out[64];
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 64), 9);
    const uint32_t want[9] = {100, 0, 1, 2, 3, 101, 4, 5, 6};
    for (uint32_t i = 0; i < 9; i++)
        CU_ASSERT_PTR_EQUAL(out[i], fake(want[i]));
    CU_ASSERT_EQUAL(count(&q), 0);
    CU_ASSERT_EQUAL(shoal__inject_take(&q, out, 64), 0);
    /* More than the ring holds: the ring, then the overflow, in order. */
    shoal_inject_t r;
    CU_ASSERT_EQUAL_FATAL(init(&r), SHOAL_OK);
    shoal__inject_push_many(&r, batch, 20);
    CU_ASSERT_EQUAL(count(&r), 20);
    CU_ASSERT_EQUAL(atomic_load(&r.overflow_len), 20 - SMALL);
    CU_ASSERT_EQUAL(shoal__inject_take(&r, out, 64), 20);
    for (uint32_t i = 0; i < 20; i++)
        CU_ASSERT_PTR_EQUAL(out[i], fake(i));
    shoal__inject_fini(&r);
    shoal__inject_fini(&q);
}

/* ---- threads -------------------------------------------------------------- */

#define PRODUCERS 2
#define PER_PRODUCER 100000u
#define ITEMS (PRODUCERS * PER_PRODUCER)

typedef struct mpmc_s {
    shoal_inject_t q;
    int consumers;
    uint32_t last[PRODUCERS]; /* one consumer: each producer's last item + 1 */
    _Atomic unsigned disorder;
    _Atomic uint8_t *seen;
    _Atomic unsigned taken;
    _Atomic unsigned bad;
    _Atomic int producers_done;
    _Atomic int go;
} mpmc_t;

typedef struct parg_s {
    mpmc_t *m;
    uint32_t id;
} parg_t;

/* Producer 0 pushes in batches of 1 to 9 (push_many), the others one at a
 * time. */
static void *producer(void *p)
{
    parg_t *a = p;
    while (!atomic_load(&a->m->go))
        ;
    for (uint32_t i = 0; i < PER_PRODUCER;) {
        if (a->id != 0) {
            shoal__inject_push(&a->m->q, fake(a->id * PER_PRODUCER + i++));
            continue;
        }
        void *batch[9];
        uint32_t n = 1 + i % 9;
        n = n < PER_PRODUCER - i ? n : PER_PRODUCER - i;
        for (uint32_t k = 0; k < n; k++)
            batch[k] = fake(a->id * PER_PRODUCER + i + k);
        shoal__inject_push_many(&a->m->q, batch, n);
        i += n;
    }
    atomic_fetch_add(&a->m->producers_done, 1);
    return NULL;
}

static void *consumer(void *p)
{
    mpmc_t *m = p;
    void *out[7];
    for (;;) {
        int done = atomic_load(&m->producers_done) == PRODUCERS;
        size_t k = shoal__inject_take(&m->q, out, 1 + atomic_load(&m->taken) % 7);
        if (k == 0) {
            if (done && count(&m->q) == 0)
                break;
            continue;
        }
        for (size_t i = 0; i < k; i++) {
            uint32_t v = unfake(out[i]);
            if (out[i] == NULL || ((uintptr_t)out[i] & 7) != 0 || v >= ITEMS) {
                atomic_fetch_add(&m->bad, 1);
                continue;
            }
            atomic_fetch_add_explicit(&m->seen[v], 1, memory_order_relaxed);
            atomic_fetch_add(&m->taken, 1);
            if (m->consumers == 1) { /* each producer's items in its order */
                uint32_t pr = v / PER_PRODUCER, idx = v % PER_PRODUCER;
                if (idx + 1 <= m->last[pr])
                    atomic_fetch_add(&m->disorder, 1);
                m->last[pr] = idx + 1;
            }
        }
    }
    return NULL;
}

static void run_mpmc(int consumers)
{
    mpmc_t *m = calloc(1, sizeof *m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL_FATAL(init(&m->q), SHOAL_OK);
    m->consumers = consumers;
    m->seen = calloc(ITEMS, sizeof *m->seen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m->seen);
    pthread_t pt[PRODUCERS], ct[2];
    parg_t pa[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        pa[i] = (parg_t){m, (uint32_t)i};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&pt[i], NULL, producer, &pa[i]), 0);
    }
    for (int i = 0; i < consumers; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&ct[i], NULL, consumer, m), 0);
    atomic_store(&m->go, 1);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(pt[i], NULL);
    for (int i = 0; i < consumers; i++)
        pthread_join(ct[i], NULL);
    unsigned missing = 0, dup = 0;
    for (uint32_t i = 0; i < ITEMS; i++) {
        uint8_t n = atomic_load(&m->seen[i]);
        missing += n == 0;
        dup += n > 1;
    }
    CU_ASSERT_EQUAL(atomic_load(&m->bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&m->disorder), 0);
    CU_ASSERT_EQUAL(missing, 0);
    CU_ASSERT_EQUAL(dup, 0);
    CU_ASSERT_EQUAL(atomic_load(&m->taken), ITEMS);
    CU_ASSERT_EQUAL(count(&m->q), 0);
    CU_ASSERT_EQUAL(atomic_load(&m->q.overflow_len), 0);
    shoal__inject_fini(&m->q);
    free(m->seen);
    free(m);
}

static void two_producers_two_consumers_every_item_once(void) { run_mpmc(2); }

static void two_producers_one_consumer_every_item_once(void) { run_mpmc(1); }

/* A producer that has claimed a ring cell but not yet published it (it was
 * preempted between its CAS on enq_pos and its seq store) makes ring_pop
 * report "empty" even though published cells follow it. take then goes to
 * the overflow list and hands out entries that were pushed AFTER those
 * ring cells, by the same producer: the "FIFO across the two parts"
 * promised in inject.h does not hold. The stall is simulated here by
 * claiming cell 0 by hand, exactly as ring_push's CAS does. */
static void stalled_producer_does_not_let_the_overflow_overtake_the_ring(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    /* producer A: claims position 0 (that counts it) and stalls before
     * publishing */
    size_t pos = 0;
    CU_ASSERT_TRUE_FATAL(atomic_compare_exchange_strong(&q.enq_pos, &pos, 1));
    CU_ASSERT_EQUAL(count(&q), 1);
    /* producer B: pushes 0..6 (ring cells 1..7), then 7 (ring full: overflow) */
    for (uint32_t i = 0; i < SMALL; i++)
        shoal__inject_push(&q, fake(i));
    CU_ASSERT_EQUAL(atomic_load(&q.overflow_len), 1);
    CU_ASSERT_EQUAL(count(&q), SMALL + 1);
    void *out[16];
    size_t k = shoal__inject_take(&q, out, 16);
    CU_ASSERT_EQUAL(count(&q), SMALL + 1 - k);
    /* B's 7 must not come out before B's 0..6. Allowed: nothing yet (the
     * head cell is not published), never 7 alone. */
    int overtaken = 0;
    for (size_t i = 0; i < k; i++)
        if (out[i] == fake(SMALL - 1))
            overtaken = 1;
    CU_ASSERT_FALSE(overtaken);
    /* A publishes; everything still comes out exactly once. */
    shoal_inject_cell_t *c0 = q.cells; /* cell 0 in either shape */
    atomic_store(&c0->item, fake(100));
    atomic_store(&c0->seq, 1);
    size_t total = k;
    while ((k = shoal__inject_take(&q, out, 16)) != 0)
        total += k;
    CU_ASSERT_EQUAL(total, SMALL + 1);
    CU_ASSERT_EQUAL(count(&q), 0);
    shoal__inject_fini(&q);
}

/* Spread: cell i is a line of its own, i lines from the first, and the
 * first is on a line's start; packed: four cells a line. */
static void cells_are_where_the_shape_says(void)
{
    shoal_inject_t q;
    CU_ASSERT_EQUAL_FATAL(init(&q), SHOAL_OK);
    size_t stride = spread ? 64 : sizeof(shoal_inject_cell_t);
    CU_ASSERT_EQUAL(sizeof(shoal_inject_cell_t), 16);
    CU_ASSERT_EQUAL((uintptr_t)q.cells % 64, 0);
    /* Fill the ring: each push writes its cell's item where the stride says. */
    for (uint32_t i = 0; i < SMALL; i++)
        shoal__inject_push(&q, fake(i));
    for (uint32_t i = 0; i < SMALL; i++) {
        shoal_inject_cell_t *c = (shoal_inject_cell_t *)(void *)((char *)q.cells + i * stride);
        CU_ASSERT_PTR_EQUAL(atomic_load(&c->item), fake(i));
        CU_ASSERT_EQUAL(atomic_load(&c->seq), i + 1);
    }
    shoal__inject_fini(&q);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"empty takes nothing", empty_takes_nothing},
        {"FIFO across ring and overflow", fifo_across_ring_and_overflow},
        {"pushes go behind the overflow while it is not empty",
         pushes_go_behind_the_overflow_while_it_is_not_empty},
        {"overflow grows while wrapped", overflow_grows_while_wrapped},
        {"interleaved pushes and takes stay FIFO", interleaved_pushes_and_takes_stay_fifo},
        {"2 producers, 2 consumers: every item once", two_producers_two_consumers_every_item_once},
        {"2 producers, 1 consumer: every item once, each producer's in order",
         two_producers_one_consumer_every_item_once},
        {"a stalled producer does not let the overflow overtake the ring",
         stalled_producer_does_not_let_the_overflow_overtake_the_ring},
        {"cells are where the shape says", cells_are_where_the_shape_says},
        {"push_many is FIFO, and spills one at a time when it must",
         push_many_is_fifo_and_spills_when_it_must},
        {NULL, NULL},
    };
    int rc = shoal_test_run("inject, packed", cases);
    spread = true;
    return shoal_test_run("inject, spread", cases) | rc;
}
