/* test_mailbox.c - the MPSC queue and the reservation word (actor/mailbox.h). */
#include <pthread.h>
#include <stdlib.h>

#include "actor/mailbox.h"
#include "support.h"

typedef struct msg_s {
    shoal_mq_node_t node; /* first: the queue links through it */
    uint32_t producer;
    uint32_t seq;
} msg_t;

typedef struct queue_s {
    _Atomic(shoal_mq_node_t *) tail;
    shoal_mq_node_t *head;
    shoal_mq_node_t stub;
} queue_t;

static void queue_init(queue_t *q) { shoal__mq_init(&q->tail, &q->head, &q->stub); }

/* ---- queue, one thread ---------------------------------------------------- */

static void empty_queue_pops_nothing(void)
{
    queue_t q;
    queue_init(&q);
    shoal_mq_node_t *retired = (shoal_mq_node_t *)&q; /* must stay untouched */
    CU_ASSERT_PTR_NULL(shoal__mq_pop(&q.head, &retired));
    CU_ASSERT_PTR_EQUAL(retired, (shoal_mq_node_t *)&q);
    CU_ASSERT_PTR_EQUAL(q.head, &q.stub);
    CU_ASSERT_PTR_EQUAL(atomic_load(&q.tail), &q.stub);
}

static void pops_in_push_order_and_retires_the_previous_dummy(void)
{
    queue_t q;
    queue_init(&q);
    msg_t m[3];
    for (uint32_t i = 0; i < 3; i++) {
        m[i].seq = i;
        shoal__mq_push(&q.tail, &m[i].node);
        CU_ASSERT_PTR_EQUAL(atomic_load(&q.tail), &m[i].node);
    }
    shoal_mq_node_t *retired = NULL;
    /* The first pop retires the stub, each later one the message before. */
    CU_ASSERT_PTR_EQUAL(shoal__mq_pop(&q.head, &retired), &m[0].node);
    CU_ASSERT_PTR_EQUAL(retired, &q.stub);
    CU_ASSERT_PTR_EQUAL(shoal__mq_pop(&q.head, &retired), &m[1].node);
    CU_ASSERT_PTR_EQUAL(retired, &m[0].node);
    CU_ASSERT_PTR_EQUAL(shoal__mq_pop(&q.head, &retired), &m[2].node);
    CU_ASSERT_PTR_EQUAL(retired, &m[1].node);
    /* The last message popped stays in the queue as its dummy. */
    retired = NULL;
    CU_ASSERT_PTR_NULL(shoal__mq_pop(&q.head, &retired));
    CU_ASSERT_PTR_NULL(retired);
    CU_ASSERT_PTR_EQUAL(q.head, &m[2].node);
    /* A push after the queue ran dry links behind that dummy. */
    msg_t d = {.seq = 3};
    shoal__mq_push(&q.tail, &d.node);
    CU_ASSERT_PTR_EQUAL(shoal__mq_pop(&q.head, &retired), &d.node);
    CU_ASSERT_PTR_EQUAL(retired, &m[2].node);
    CU_ASSERT_PTR_NULL(shoal__mq_pop(&q.head, &retired));
}

static void retired_nodes_can_be_recycled(void)
{
    /* The runtime frees each retired node and reuses it for a later push:
     * with a free list of three nodes, 1000 messages go through in order. */
    queue_t q;
    queue_init(&q);
    msg_t pool[3];
    msg_t *free_list[3] = {&pool[0], &pool[1], &pool[2]};
    unsigned nfree = 3;
    uint32_t next_seq = 0, expect = 0;
    for (unsigned round = 0; round < 1000; round++) {
        /* push two, pop one; then pop one more every other round */
        for (int k = 0; k < 2 && nfree != 0 && next_seq < 1000; k++) {
            msg_t *m = free_list[--nfree];
            m->seq = next_seq++;
            shoal__mq_push(&q.tail, &m->node);
        }
        for (int k = 0; k < 1 + (int)(round & 1); k++) {
            shoal_mq_node_t *retired = NULL;
            msg_t *got = (msg_t *)shoal__mq_pop(&q.head, &retired);
            if (got == NULL)
                break;
            if (got->seq != expect) {
                CU_FAIL("out of order after recycling");
                return;
            }
            expect++;
            if (retired != &q.stub)
                free_list[nfree++] = (msg_t *)retired;
        }
    }
    shoal_mq_node_t *retired;
    while (shoal__mq_pop(&q.head, &retired) != NULL)
        expect++;
    CU_ASSERT_EQUAL(next_seq, 1000);
    CU_ASSERT_EQUAL(expect, 1000);
}

/* ---- reservation word, one thread ---------------------------------------- */

static uint64_t word(uint32_t gen, bool alive, uint32_t count)
{
    return (uint64_t)gen << SHOAL_RSV_GEN_SHIFT | (alive ? SHOAL_RSV_ALIVE : 0) |
           (count & SHOAL_RSV_COUNT_MASK);
}

static void word_helpers_split_the_fields(void)
{
    uint64_t w = word(7, true, 12345);
    CU_ASSERT_EQUAL(shoal__rsv_gen(w), 7);
    CU_ASSERT_TRUE(shoal__rsv_alive(w));
    CU_ASSERT_EQUAL(shoal__rsv_count(w), 12345);
    w = word(UINT32_MAX, false, SHOAL_RSV_COUNT_MASK);
    CU_ASSERT_EQUAL(shoal__rsv_gen(w), UINT32_MAX);
    CU_ASSERT_FALSE(shoal__rsv_alive(w));
    CU_ASSERT_EQUAL(shoal__rsv_count(w), SHOAL_RSV_COUNT_MASK);
    /* depth is modulo 2^31: a count that wrapped past the consumer's. */
    CU_ASSERT_EQUAL(shoal__rsv_depth(word(1, true, 10), 10), 0);
    CU_ASSERT_EQUAL(shoal__rsv_depth(word(1, true, 10), 3), 7);
    CU_ASSERT_EQUAL(shoal__rsv_depth(word(1, true, 2), SHOAL_RSV_COUNT_MASK - 1), 4);
}

static void reserve_refuses_exactly_at_the_limit(void)
{
    _Atomic uint64_t w = word(3, true, 0);
    _Atomic uint32_t deq = 0;
    const uint32_t limit = 100;
    unsigned accepted = 0, refused = 0, other = 0;
    for (unsigned i = 0; i < 250; i++) {
        int rc = shoal__rsv_reserve(&w, 3, limit, &deq);
        if (rc == SHOAL_OK)
            accepted++;
        else if (rc == SHOAL_EFULL)
            refused++;
        else
            other++;
    }
    CU_ASSERT_EQUAL(accepted, limit);
    CU_ASSERT_EQUAL(refused, 150);
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_EQUAL(shoal__rsv_count(atomic_load(&w)), limit);
    CU_ASSERT_EQUAL(shoal__rsv_gen(atomic_load(&w)), 3);
    CU_ASSERT_TRUE(shoal__rsv_alive(atomic_load(&w)));
    /* One pop makes room for exactly one more. */
    atomic_store(&deq, 1);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 3, limit, &deq), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 3, limit, &deq), SHOAL_EFULL);
    CU_ASSERT_EQUAL(shoal__rsv_count(atomic_load(&w)), limit + 1);
}

static void limit_one_and_unbounded(void)
{
    _Atomic uint64_t w = word(1, true, 0);
    _Atomic uint32_t deq = 0;
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 1, 1, &deq), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 1, 1, &deq), SHOAL_EFULL);
    /* limit 0: unbounded; deq is not even read (NULL is allowed). */
    for (unsigned i = 0; i < 10000; i++)
        if (shoal__rsv_reserve(&w, 1, 0, NULL) != SHOAL_OK) {
            CU_FAIL("unbounded reserve refused");
            break;
        }
    CU_ASSERT_EQUAL(shoal__rsv_count(atomic_load(&w)), 10001);
}

static void count_wraps_without_touching_alive_or_gen(void)
{
    _Atomic uint64_t w = word(9, true, SHOAL_RSV_COUNT_MASK - 1);
    _Atomic uint32_t deq = SHOAL_RSV_COUNT_MASK - 1;
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 9, 4, &deq), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 9, 4, &deq), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 9, 4, &deq), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 9, 4, &deq), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 9, 4, &deq), SHOAL_EFULL);
    uint64_t v = atomic_load(&w);
    CU_ASSERT_EQUAL(shoal__rsv_count(v), 2); /* (2^31 - 2 + 4) mod 2^31 */
    CU_ASSERT_EQUAL(shoal__rsv_gen(v), 9);
    CU_ASSERT_TRUE(shoal__rsv_alive(v));
    CU_ASSERT_EQUAL(shoal__rsv_depth(v, atomic_load(&deq)), 4);
}

static void wrong_generation_is_enoproc(void)
{
    _Atomic uint64_t w = word(5, true, 0);
    _Atomic uint32_t deq = 0;
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 4, 0, &deq), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 6, 0, &deq), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 0, 0, &deq), SHOAL_ENOPROC);
    /* ENOPROC wins over EFULL, and a refusal changes nothing. */
    _Atomic uint64_t full = word(5, true, 1);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&full, 4, 1, &deq), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&full, 5, 1, &deq), SHOAL_EFULL);
    CU_ASSERT_EQUAL(atomic_load(&full), word(5, true, 1));
    CU_ASSERT_EQUAL(atomic_load(&w), word(5, true, 0));
}

static void close_returns_final_count_and_refuses_after(void)
{
    _Atomic uint64_t w = word(2, true, 0);
    _Atomic uint32_t deq = 0;
    for (unsigned i = 0; i < 17; i++)
        CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 2, 0, &deq), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__rsv_close(&w), 17);
    uint64_t v = atomic_load(&w);
    CU_ASSERT_FALSE(shoal__rsv_alive(v));
    CU_ASSERT_EQUAL(shoal__rsv_gen(v), 2);
    CU_ASSERT_EQUAL(shoal__rsv_count(v), 17);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 2, 0, &deq), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal__rsv_reserve(&w, 2, 100, &deq), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal__rsv_count(atomic_load(&w)), 17);
    /* Closing again is harmless and reports the same count. */
    CU_ASSERT_EQUAL(shoal__rsv_close(&w), 17);
}

/* ---- many producers ------------------------------------------------------- */

#define NPROD 4
#define PER_PROD 100000u

typedef struct mp_s {
    queue_t q;
    _Atomic uint64_t rsv;
    _Atomic uint32_t deq;
    uint32_t limit;
    msg_t *msgs[NPROD];
    _Atomic unsigned accepted[NPROD];
    _Atomic unsigned refused[NPROD];
    _Atomic int go;
} mp_t;

typedef struct prod_arg_s {
    mp_t *mp;
    uint32_t id;
} prod_arg_t;

static void *producer(void *p)
{
    prod_arg_t *arg = p;
    mp_t *mp = arg->mp;
    while (!atomic_load(&mp->go))
        ;
    unsigned acc = 0, ref = 0;
    for (uint32_t i = 0; i < PER_PROD; i++) {
        int rc = shoal__rsv_reserve(&mp->rsv, 1, mp->limit, &mp->deq);
        if (rc == SHOAL_EFULL) {
            ref++;
            continue;
        }
        if (rc != SHOAL_OK)
            break;
        msg_t *m = &mp->msgs[arg->id][acc];
        m->producer = arg->id;
        m->seq = i;
        shoal__mq_push(&mp->q.tail, &m->node);
        acc++;
    }
    atomic_store(&mp->accepted[arg->id], acc);
    atomic_store(&mp->refused[arg->id], ref);
    return NULL;
}

/* Runs NPROD producers against one consumer (this thread); the consumer
 * checks per-producer order as it goes and counts what it got. */
static void run_producers(uint32_t limit, unsigned got[NPROD], unsigned *order_errors,
                          uint32_t *max_depth)
{
    mp_t *mp = calloc(1, sizeof *mp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    queue_init(&mp->q);
    atomic_init(&mp->rsv, word(1, true, 0));
    mp->limit = limit;
    for (uint32_t p = 0; p < NPROD; p++) {
        mp->msgs[p] = calloc(PER_PROD, sizeof(msg_t));
        CU_ASSERT_PTR_NOT_NULL_FATAL(mp->msgs[p]);
    }
    pthread_t th[NPROD];
    prod_arg_t args[NPROD];
    for (uint32_t p = 0; p < NPROD; p++) {
        args[p] = (prod_arg_t){mp, p};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[p], NULL, producer, &args[p]), 0);
    }
    int64_t last[NPROD];
    for (uint32_t p = 0; p < NPROD; p++) {
        last[p] = -1;
        got[p] = 0;
    }
    *order_errors = 0;
    *max_depth = 0;
    atomic_store(&mp->go, 1);
    /* Pop until every producer is done and the count of pops matches the
     * count of reservations (the close protocol of an ending actor). */
    uint32_t popped = 0;
    uint32_t fin = 0;
    bool closed = false;
    double deadline = shoal_test_now() + 20;
    for (;;) {
        if (!closed) {
            unsigned done = 0;
            for (uint32_t p = 0; p < NPROD; p++)
                done += atomic_load(&mp->accepted[p]) + atomic_load(&mp->refused[p]) != 0;
            if (done == NPROD) {
                fin = shoal__rsv_close(&mp->rsv);
                closed = true;
            }
        }
        if (closed && popped == fin)
            break;
        shoal_mq_node_t *retired;
        msg_t *m = (msg_t *)shoal__mq_pop(&mp->q.head, &retired);
        if (m == NULL) {
            if (shoal_test_now() > deadline) {
                CU_FAIL("consumer timed out");
                break;
            }
            continue;
        }
        popped++;
        atomic_store_explicit(&mp->deq, popped & SHOAL_RSV_COUNT_MASK, memory_order_release);
        /* depth never exceeds the limit: a producer only sees an older deq */
        uint32_t depth = shoal__rsv_depth(atomic_load(&mp->rsv), popped & SHOAL_RSV_COUNT_MASK);
        if (depth > *max_depth)
            *max_depth = depth;
        if (m->producer >= NPROD) {
            (*order_errors)++;
            continue;
        }
        if ((int64_t)m->seq <= last[m->producer])
            (*order_errors)++;
        last[m->producer] = m->seq;
        got[m->producer]++;
    }
    for (uint32_t p = 0; p < NPROD; p++)
        pthread_join(th[p], NULL);
    unsigned accepted = 0;
    for (uint32_t p = 0; p < NPROD; p++) {
        CU_ASSERT_EQUAL(got[p], atomic_load(&mp->accepted[p]));
        CU_ASSERT_EQUAL(atomic_load(&mp->accepted[p]) + atomic_load(&mp->refused[p]), PER_PROD);
        accepted += atomic_load(&mp->accepted[p]);
    }
    CU_ASSERT_EQUAL(fin, accepted);
    CU_ASSERT_EQUAL(popped, accepted);
    shoal_mq_node_t *retired;
    CU_ASSERT_PTR_NULL(shoal__mq_pop(&mp->q.head, &retired));
    for (uint32_t p = 0; p < NPROD; p++)
        free(mp->msgs[p]);
    free(mp);
}

static void producers_unbounded_every_message_once_in_order(void)
{
    unsigned got[NPROD], order_errors;
    uint32_t max_depth;
    run_producers(0, got, &order_errors, &max_depth);
    CU_ASSERT_EQUAL(order_errors, 0);
    for (uint32_t p = 0; p < NPROD; p++)
        CU_ASSERT_EQUAL(got[p], PER_PROD);
}

static void producers_bounded_accept_plus_refuse_is_exact(void)
{
    unsigned got[NPROD], order_errors;
    uint32_t max_depth;
    run_producers(64, got, &order_errors, &max_depth);
    CU_ASSERT_EQUAL(order_errors, 0);
    CU_ASSERT(max_depth <= 64);
    unsigned total = 0;
    for (uint32_t p = 0; p < NPROD; p++)
        total += got[p];
    CU_ASSERT(total > 0);
    CU_ASSERT(total <= NPROD * PER_PROD);
}

/* Nobody pops: across all producers exactly `limit` reservations succeed. */
typedef struct race_s {
    _Atomic uint64_t rsv;
    _Atomic uint32_t deq;
    _Atomic unsigned ok, full, other;
    _Atomic int go;
} race_t;

static void *reserver(void *p)
{
    race_t *r = p;
    while (!atomic_load(&r->go))
        ;
    for (unsigned i = 0; i < 20000; i++) {
        int rc = shoal__rsv_reserve(&r->rsv, 8, 1000, &r->deq);
        atomic_fetch_add(rc == SHOAL_OK ? &r->ok : rc == SHOAL_EFULL ? &r->full : &r->other, 1);
    }
    return NULL;
}

static void concurrent_reserves_stop_exactly_at_the_limit(void)
{
    race_t r;
    atomic_init(&r.rsv, word(8, true, 0));
    atomic_init(&r.deq, 0);
    atomic_init(&r.ok, 0);
    atomic_init(&r.full, 0);
    atomic_init(&r.other, 0);
    atomic_init(&r.go, 0);
    pthread_t th[NPROD];
    for (int i = 0; i < NPROD; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, reserver, &r), 0);
    atomic_store(&r.go, 1);
    for (int i = 0; i < NPROD; i++)
        pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(atomic_load(&r.ok), 1000);
    CU_ASSERT_EQUAL(atomic_load(&r.full), NPROD * 20000 - 1000);
    CU_ASSERT_EQUAL(atomic_load(&r.other), 0);
    CU_ASSERT_EQUAL(shoal__rsv_count(atomic_load(&r.rsv)), 1000);
}

/* A close racing with reservations: every reservation made before the
 * close is counted in the final count, none after it succeeds. */
static void *closer_reserver(void *p)
{
    race_t *r = p;
    while (!atomic_load(&r->go))
        ;
    for (;;) {
        int rc = shoal__rsv_reserve(&r->rsv, 8, 0, NULL);
        if (rc == SHOAL_OK)
            atomic_fetch_add(&r->ok, 1);
        else {
            atomic_fetch_add(rc == SHOAL_ENOPROC ? &r->full : &r->other, 1);
            break;
        }
    }
    return NULL;
}

static void close_racing_with_reserves_counts_exactly(void)
{
    race_t r;
    atomic_init(&r.rsv, word(8, true, 0));
    atomic_init(&r.deq, 0);
    atomic_init(&r.ok, 0);
    atomic_init(&r.full, 0);
    atomic_init(&r.other, 0);
    atomic_init(&r.go, 0);
    pthread_t th[NPROD];
    for (int i = 0; i < NPROD; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, closer_reserver, &r), 0);
    atomic_store(&r.go, 1);
    while (shoal__rsv_count(atomic_load(&r.rsv)) < 5000)
        ;
    uint32_t fin = shoal__rsv_close(&r.rsv);
    for (int i = 0; i < NPROD; i++)
        pthread_join(th[i], NULL);
    CU_ASSERT(fin >= 5000);
    CU_ASSERT_EQUAL(atomic_load(&r.ok), fin);
    CU_ASSERT_EQUAL(atomic_load(&r.full), NPROD); /* each thread stops on ENOPROC */
    CU_ASSERT_EQUAL(atomic_load(&r.other), 0);
    CU_ASSERT_EQUAL(shoal__rsv_count(atomic_load(&r.rsv)), fin);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"empty queue pops nothing", empty_queue_pops_nothing},
        {"pops in push order and retires the previous dummy",
         pops_in_push_order_and_retires_the_previous_dummy},
        {"retired nodes can be recycled", retired_nodes_can_be_recycled},
        {"word helpers split the fields", word_helpers_split_the_fields},
        {"reserve refuses exactly at the limit", reserve_refuses_exactly_at_the_limit},
        {"limit one and unbounded", limit_one_and_unbounded},
        {"count wraps without touching alive or gen", count_wraps_without_touching_alive_or_gen},
        {"wrong generation is ENOPROC", wrong_generation_is_enoproc},
        {"close returns final count and refuses after",
         close_returns_final_count_and_refuses_after},
        {"4 producers unbounded: every message once, in order",
         producers_unbounded_every_message_once_in_order},
        {"4 producers bounded: accepted + refused is exact",
         producers_bounded_accept_plus_refuse_is_exact},
        {"concurrent reserves stop exactly at the limit",
         concurrent_reserves_stop_exactly_at_the_limit},
        {"close racing with reserves counts exactly", close_racing_with_reserves_counts_exactly},
        {NULL, NULL},
    };
    return shoal_test_run("mailbox", cases);
}
