/* test_envelope.c - envelopes: inline and heap payloads, hand-over, meta
 * packing, recycling through the thread cache and the depot
 * (actor/envelope.h). */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "actor/envelope.h"
#include "runtime/runtime.h"
#include "runtime/tcache.h"
#include "support.h"

static shoal_runtime_t *rt;
static shoal_tcache_t *tc;

static int setup(void)
{
    rt = shoal_test_runtime(2);
    if (rt == NULL)
        return -1;
    tc = shoal__tcache_get(rt);
    return tc == NULL ? -1 : 0;
}

static void teardown(void)
{
    shoal_runtime_destroy(rt);
    rt = NULL;
    tc = NULL;
}

static shoal_runtime_stats_t stats(void)
{
    shoal_runtime_stats_t s;
    shoal_runtime_stats(rt, &s);
    return s;
}

/* A free function that counts and checks what it frees. */
static _Atomic unsigned frees;
static void *last_freed;
static void counting_free(void *p)
{
    atomic_fetch_add(&frees, 1);
    last_freed = p;
    free(p);
}

static void layout_is_one_cache_line(void)
{
    CU_ASSERT_EQUAL(sizeof(shoal_env_t), 64);
    CU_ASSERT_EQUAL(offsetof(shoal_env_t, node), 0);
    CU_ASSERT_EQUAL(sizeof(((shoal_env_t *)0)->payload.bytes), SHOAL_INLINE_MAX);
    CU_ASSERT_EQUAL(offsetof(shoal_env_t, payload) % 8, 0);
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    shoal_env_t *e = shoal__env_alloc(tc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL((uintptr_t)e % 64, 0);
    CU_ASSERT_PTR_EQUAL(shoal__env_of(&e->node), e);
    shoal__env_free(tc, e);
    teardown();
}

static void payloads_up_to_32_bytes_are_inline(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    unsigned char src[SHOAL_INLINE_MAX];
    for (unsigned i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(0xa0 + i);
    uint64_t heap0 = stats().heap_payloads;
    for (size_t size = 0; size <= SHOAL_INLINE_MAX; size++) {
        shoal_env_t *e =
            shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 7, size ? src : NULL, size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL(e->size, size);
        CU_ASSERT_EQUAL(e->type, 7);
        CU_ASSERT_EQUAL(shoal__env_flags(e) & SHOAL_ENV_HEAP, 0);
        const void *d = shoal__env_data(e);
        if (size == 0) {
            CU_ASSERT_PTR_NULL(d);
        } else {
            CU_ASSERT_PTR_EQUAL(d, e->payload.bytes);
            CU_ASSERT_EQUAL(memcmp(d, src, size), 0);
            CU_ASSERT_EQUAL((uintptr_t)d % 8, 0);
        }
        shoal__env_free(tc, e);
    }
    CU_ASSERT_EQUAL(stats().heap_payloads, heap0);
    teardown();
}

static void larger_payloads_are_copied_to_the_heap(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    uint64_t heap0 = stats().heap_payloads;
    size_t sizes[] = {SHOAL_INLINE_MAX + 1, 100, 1 << 20};
    for (unsigned k = 0; k < 3; k++) {
        size_t size = sizes[k];
        unsigned char *src = malloc(size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(src);
        for (size_t i = 0; i < size; i++)
            src[i] = (unsigned char)(i * 31 + k);
        shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 9, src, size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL(e->size, size);
        CU_ASSERT_NOT_EQUAL(shoal__env_flags(e) & SHOAL_ENV_HEAP, 0);
        const unsigned char *d = shoal__env_data(e);
        CU_ASSERT_PTR_NOT_NULL(d);
        CU_ASSERT_PTR_NOT_EQUAL(d, src); /* a copy, not the sender's buffer */
        CU_ASSERT_PTR_NOT_EQUAL(d, e->payload.bytes);
        CU_ASSERT_EQUAL((uintptr_t)d % 8, 0);
        /* the sender may reuse its buffer at once */
        unsigned char first = src[0];
        memset(src, 0, size);
        CU_ASSERT_EQUAL(d[0], first);
        CU_ASSERT_EQUAL(d[size - 1], (unsigned char)((size - 1) * 31 + k));
        free(src);
        shoal__env_free(tc, e); /* frees the copy: ASan checks */
    }
    CU_ASSERT_EQUAL(stats().heap_payloads, heap0 + 3);
    teardown();
}

static void owned_payload_is_freed_exactly_once(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    uint64_t heap0 = stats().heap_payloads;
    atomic_store(&frees, 0);
    /* Handed over, even a small buffer stays where it is (no copy). */
    char *buf = malloc(8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    memcpy(buf, "handoff", 8);
    shoal_env_t *e =
        shoal__env_new_owned(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 1, buf, 8, counting_free);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_PTR_EQUAL(shoal__env_data(e), buf);
    CU_ASSERT_NOT_EQUAL(shoal__env_flags(e) & SHOAL_ENV_HEAP, 0);
    CU_ASSERT_EQUAL(atomic_load(&frees), 0);
    shoal__env_free(tc, e);
    CU_ASSERT_EQUAL(atomic_load(&frees), 1);
    CU_ASSERT_PTR_EQUAL(last_freed, buf);
    CU_ASSERT_EQUAL(stats().heap_payloads, heap0 + 1);

    /* drop_payload (after the handler) then free (later, as the retired
     * dummy): still one free. */
    buf = malloc(200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    e = shoal__env_new_owned(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 1, buf, 200, counting_free);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    shoal__env_drop_payload(e);
    CU_ASSERT_EQUAL(atomic_load(&frees), 2);
    CU_ASSERT_EQUAL(shoal__env_flags(e) & SHOAL_ENV_HEAP, 0);
    CU_ASSERT_EQUAL(e->size, 0);
    CU_ASSERT_PTR_NULL(shoal__env_data(e));
    shoal__env_drop_payload(e);
    CU_ASSERT_EQUAL(atomic_load(&frees), 2);
    shoal__env_free(tc, e);
    CU_ASSERT_EQUAL(atomic_load(&frees), 2);

    /* The recycled envelope carries no stale HEAP flag into its next life.
     * Empty the thread's free list first, so the next alloc after a free
     * returns that very envelope (the list is LIFO below two batches). */
    shoal_env_t *held[2048];
    unsigned nheld = 0;
    while (tc->env_nfree != 0 && nheld < 2048)
        held[nheld++] = shoal__env_alloc(tc);
    CU_ASSERT_EQUAL_FATAL(tc->env_nfree, 0);
    shoal__env_free(tc, held[--nheld]);
    buf = malloc(64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    e = shoal__env_new_owned(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 1, buf, 64, counting_free);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    shoal__env_free(tc, e);
    CU_ASSERT_EQUAL(atomic_load(&frees), 3);
    shoal_env_t *again = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 2, "x", 1);
    CU_ASSERT_PTR_EQUAL(again, e);
    CU_ASSERT_EQUAL(shoal__env_flags(again) & SHOAL_ENV_HEAP, 0);
    shoal__env_free(tc, again);
    CU_ASSERT_EQUAL(atomic_load(&frees), 3);
    while (nheld != 0)
        shoal__env_free(tc, held[--nheld]);

    /* Without a free function, free() is used (ASan/LSan check it). */
    e = shoal__env_new_owned(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 1, malloc(48), 48, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    shoal__env_free(tc, e);
    CU_ASSERT_EQUAL(atomic_load(&frees), 3);
    CU_ASSERT_EQUAL(stats().heap_payloads, heap0 + 4);
    teardown();
}

static void inline_drop_payload_is_a_no_op(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, 3, "abcdef", 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    shoal__env_drop_payload(e);
    CU_ASSERT_EQUAL(e->size, 6);
    CU_ASSERT_EQUAL(memcmp(shoal__env_data(e), "abcdef", 6), 0);
    shoal__env_free(tc, e);
    teardown();
}

static void meta_packs_ref_kind_and_flags(void)
{
    shoal_env_t e;
    memset(&e, 0, sizeof e);
    shoal__env_set_meta(&e, SHOAL_REF_MAX, 0xff, 0xff);
    CU_ASSERT_EQUAL(shoal__env_ref(&e), SHOAL_REF_MAX);
    CU_ASSERT_EQUAL(shoal__env_kind(&e), 0xff);
    CU_ASSERT_EQUAL(shoal__env_flags(&e), 0xff);
    CU_ASSERT_EQUAL(e.meta, UINT64_MAX);
    shoal__env_set_meta(&e, 0, 0, 0);
    CU_ASSERT_EQUAL(e.meta, 0);
    /* Fields do not bleed into each other. */
    shoal__env_set_meta(&e, UINT64_C(0x123456789abc), SHOAL_MSG_REPLY, SHOAL_ENV_STATUS);
    CU_ASSERT_EQUAL(shoal__env_ref(&e), UINT64_C(0x123456789abc));
    CU_ASSERT_EQUAL(shoal__env_kind(&e), SHOAL_MSG_REPLY);
    CU_ASSERT_EQUAL(shoal__env_flags(&e), SHOAL_ENV_STATUS);
    shoal__env_set_meta(&e, 1, SHOAL_ENV_STOP, 0);
    CU_ASSERT_EQUAL(shoal__env_ref(&e), 1);
    CU_ASSERT_EQUAL(shoal__env_kind(&e), SHOAL_ENV_STOP);
    CU_ASSERT_EQUAL(shoal__env_flags(&e), 0);
    /* A ref wider than 48 bits keeps its low 48 bits and nothing spills. */
    shoal__env_set_meta(&e, (UINT64_C(1) << 48) | 5, 2, 1);
    CU_ASSERT_EQUAL(shoal__env_ref(&e), 5);
    CU_ASSERT_EQUAL(shoal__env_kind(&e), 2);
    CU_ASSERT_EQUAL(shoal__env_flags(&e), 1);
    /* Out-of-range kind and flags are cut to their byte. */
    shoal__env_set_meta(&e, 0, 0x1ff, 0x103);
    CU_ASSERT_EQUAL(shoal__env_ref(&e), 0);
    CU_ASSERT_EQUAL(shoal__env_kind(&e), 0xff);
    CU_ASSERT_EQUAL(shoal__env_flags(&e), 0x03);
}

static void new_fills_every_header_field(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    shoal_pid_t from = UINT64_C(0x0000000700000003);
    shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CALL, SHOAL_ENV_PRIORITY, from, SHOAL_REF_MAX,
                                    0xdeadbeef, "hi", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->from, from);
    CU_ASSERT_EQUAL(e->type, 0xdeadbeef);
    CU_ASSERT_EQUAL(e->size, 2);
    CU_ASSERT_EQUAL(shoal__env_ref(e), SHOAL_REF_MAX);
    CU_ASSERT_EQUAL(shoal__env_kind(e), SHOAL_MSG_CALL);
    CU_ASSERT_EQUAL(shoal__env_flags(e), SHOAL_ENV_PRIORITY);
    shoal__env_free(tc, e);
    /* Hand-over adds HEAP to the caller's flags and keeps them. */
    e = shoal__env_new_owned(tc, SHOAL_MSG_REPLY, SHOAL_ENV_STATUS, from, 42, 5, malloc(40), 40,
                             NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(shoal__env_flags(e), SHOAL_ENV_STATUS | SHOAL_ENV_HEAP);
    CU_ASSERT_EQUAL(shoal__env_kind(e), SHOAL_MSG_REPLY);
    CU_ASSERT_EQUAL(shoal__env_ref(e), 42);
    shoal__env_free(tc, e);
    teardown();
}

#define ROUND 100000u

static void one_at_a_time_allocates_no_slab_per_message(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    uint64_t s0 = stats().env_slabs;
    for (unsigned i = 0; i < ROUND; i++) {
        shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, i, &i, sizeof i);
        if (e == NULL) {
            CU_FAIL("alloc failed");
            break;
        }
        shoal__env_free(tc, e);
    }
    uint64_t s1 = stats().env_slabs;
    CU_ASSERT(s1 - s0 <= 1);
    for (unsigned i = 0; i < ROUND; i++)
        shoal__env_free(tc, shoal__env_alloc(tc));
    CU_ASSERT_EQUAL(stats().env_slabs, s1);
    teardown();
}

static void bulk_rounds_reuse_the_depot(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    shoal_env_t **held = malloc(ROUND * sizeof *held);
    CU_ASSERT_PTR_NOT_NULL_FATAL(held);
    uint64_t s0 = stats().env_slabs;
    uint64_t after[3];
    for (int round = 0; round < 3; round++) {
        unsigned failed = 0;
        for (unsigned i = 0; i < ROUND; i++)
            if ((held[i] = shoal__env_alloc(tc)) == NULL)
                failed++;
        CU_ASSERT_EQUAL_FATAL(failed, 0);
        /* every envelope handed out once: no two alike */
        if (round == 0) {
            unsigned same = 0;
            for (unsigned i = 1; i < ROUND; i++)
                same += held[i] == held[i - 1];
            CU_ASSERT_EQUAL(same, 0);
        }
        for (unsigned i = 0; i < ROUND; i++)
            shoal__env_free(tc, held[i]);
        after[round] = stats().env_slabs;
        /* the thread keeps fewer than two batches; the rest is in the depot */
        CU_ASSERT(tc->env_nfree < 2 * SHOAL_ENV_BATCH);
    }
    /* 100k envelopes need ceil(100000 / 1024) = 98 slabs of 1024. */
    CU_ASSERT(after[0] - s0 >= 98);
    CU_ASSERT(after[0] - s0 <= 99);
    CU_ASSERT_EQUAL(after[1], after[0]);
    CU_ASSERT_EQUAL(after[2], after[0]);
    free(held);
    teardown();
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (shoal_env_t *const *)a, y = (uintptr_t) * (shoal_env_t *const *)b;
    return x < y ? -1 : x > y;
}

/* Every envelope out at once is a distinct, aligned line: the thread's
 * stack, the depot and fresh slabs never hand one out twice. */
static void every_envelope_out_is_distinct(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    shoal_env_t **held = malloc(ROUND * sizeof *held);
    CU_ASSERT_PTR_NOT_NULL_FATAL(held);
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i < ROUND; i++) {
            held[i] = shoal__env_alloc(tc);
            CU_ASSERT_PTR_NOT_NULL_FATAL(held[i]);
            /* half of them back at once, the rest at the end */
            if (i % 2 == 1 && round == 0) {
                shoal__env_free(tc, held[i]);
                held[i] = shoal__env_alloc(tc);
            }
        }
        qsort(held, ROUND, sizeof *held, by_address);
        unsigned same = 0, misaligned = 0;
        for (unsigned i = 0; i < ROUND; i++) {
            same += i > 0 && held[i] == held[i - 1];
            misaligned += (uintptr_t)held[i] % 64 != 0;
        }
        CU_ASSERT_EQUAL(same, 0);
        CU_ASSERT_EQUAL(misaligned, 0);
        for (unsigned i = 0; i < ROUND; i++)
            shoal__env_free(tc, held[i]);
    }
    free(held);
    teardown();
}

typedef struct {
    shoal_env_t **envs;
    unsigned n;
} freeing_t;

static void *free_elsewhere(void *arg)
{
    freeing_t *f = arg;
    shoal_tcache_t *mine = shoal__tcache_get(rt);
    for (unsigned i = 0; i < f->n; i++)
        shoal__env_free(mine, f->envs[i]);
    return NULL; /* the thread's cache goes to the depot as it exits */
}

/* One thread allocates, another frees (a producer and a pool's workers):
 * the envelopes come back to the first through the depot, so a second
 * round takes no new slab. */
static void freed_on_another_thread_come_back(void)
{
    CU_ASSERT_EQUAL_FATAL(setup(), 0);
    freeing_t f = {malloc(ROUND * sizeof(shoal_env_t *)), ROUND};
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.envs);
    uint64_t s0 = stats().env_slabs;
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i < ROUND; i++) {
            f.envs[i] = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, i, &i, sizeof i);
            CU_ASSERT_PTR_NOT_NULL_FATAL(f.envs[i]);
        }
        pthread_t t;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, free_elsewhere, &f), 0);
        pthread_join(t, NULL);
    }
    /* 100k out at once: 98 slabs (the first round's 100k less the ones the
     * thread held: at most one slab more), and none in the second round. */
    uint64_t slabs = stats().env_slabs - s0;
    CU_ASSERT(slabs >= 98 && slabs <= 99);
    free(f.envs);
    teardown();
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"layout is one cache line", layout_is_one_cache_line},
        {"payloads up to 32 bytes are inline", payloads_up_to_32_bytes_are_inline},
        {"larger payloads are copied to the heap", larger_payloads_are_copied_to_the_heap},
        {"owned payload is freed exactly once", owned_payload_is_freed_exactly_once},
        {"inline drop_payload is a no-op", inline_drop_payload_is_a_no_op},
        {"meta packs ref, kind and flags", meta_packs_ref_kind_and_flags},
        {"new fills every header field", new_fills_every_header_field},
        {"one at a time: no slab per message", one_at_a_time_allocates_no_slab_per_message},
        {"bulk rounds reuse the depot", bulk_rounds_reuse_the_depot},
        {"every envelope out is distinct", every_envelope_out_is_distinct},
        {"freed on another thread come back", freed_on_another_thread_come_back},
        {NULL, NULL},
    };
    return shoal_test_run("envelope", cases);
}
