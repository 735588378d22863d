/* test_send_payloads.c - payload kinds (core/actor/send.c): inline and heap
 * copies arriving intact, a payload copied at the send, and owned payloads
 * handed over (freed exactly once: when handled, when dropped, on destroy;
 * kept by the caller on an error).
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in atomics (some in send_kit.h), and the test thread asserts after
 * synchronising on them.
 */
#include <stdlib.h>
#include <string.h>

#include "send_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, SK_WAIT_S)

/* ---- payloads ------------------------------------------------------------- */

static void payload_roundtrip(shoal_runtime_t *rt, shoal_pid_t pid, const unsigned char *data,
                              size_t size, int n_before)
{
    sk_expect = data;
    sk_expect_size = size;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, data, size), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&sk_data) == n_before + 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), n_before + 1);
}

static void inline_and_heap_payloads_arrive_intact(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sk_blocker, NULL, NULL, &pid), SHOAL_OK);
    static unsigned char buf[4096];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    int n = 0;
    payload_roundtrip(rt, pid, buf, 0, n++);
    payload_roundtrip(rt, pid, buf, 1, n++);
    payload_roundtrip(rt, pid, buf, SHOAL_INLINE_MAX, n++);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).heap_payloads, 0); /* <= 32 B: inside the envelope */
    payload_roundtrip(rt, pid, buf, SHOAL_INLINE_MAX + 1, n++);
    payload_roundtrip(rt, pid, buf, sizeof buf, n++);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).heap_payloads, 2);
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    shoal_runtime_destroy(rt);
}

/* The copy is taken at send time: changing the buffer later changes nothing. */
static void payload_is_copied_at_send(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t pid = sk_spawn_blocked(rt, 0);
    static unsigned char big[4096], orig_big[4096];
    for (size_t i = 0; i < sizeof orig_big; i++)
        orig_big[i] = (unsigned char)(i ^ 0x3c);
    memcpy(big, orig_big, sizeof big);
    sk_expect = orig_big;
    sk_expect_size = sizeof big;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, big, sizeof big), SHOAL_OK);
    memset(big, 0, sizeof big);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&sk_data) == 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    shoal_runtime_destroy(rt);
}

static atomic_int owned_frees;
static void owned_free(void *p)
{
    atomic_fetch_add(&owned_frees, 1);
    free(p);
}

static unsigned char *owned_buf(size_t size, unsigned char seed)
{
    unsigned char *p = malloc(size);
    for (size_t i = 0; i < size; i++)
        p[i] = (unsigned char)(seed + i);
    return p;
}

static void owned_payload_is_handed_over_and_freed_once(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    atomic_store(&owned_frees, 0);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sk_blocker, NULL, NULL, &pid), SHOAL_OK);
    for (int i = 0; i < 3; i++) {
        size_t size = i == 0 ? 8 : 4096; /* small ones are handed over too */
        unsigned char *p = owned_buf(size, (unsigned char)i);
        unsigned char *want = owned_buf(size, (unsigned char)i);
        sk_expect = want;
        sk_expect_size = size;
        sk_expect_ptr = p; /* handed over: the handler sees the very buffer */
        CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, p, size, owned_free), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&owned_frees) == i + 1);
        CU_ASSERT_EQUAL(atomic_load(&owned_frees), i + 1);
        CU_ASSERT_EQUAL(atomic_load(&sk_data), i + 1);
        free(want);
    }
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).heap_payloads, 3);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), 3);
}

static void owned_payload_freed_when_dropped_kept_on_error(void)
{
    enum { K = 5 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    atomic_store(&owned_frees, 0);
    shoal_pid_t pid = sk_spawn_blocked(rt, K);
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, owned_buf(64, 1), 64, owned_free),
                        SHOAL_OK);
    /* Full: refused, and the caller still owns the buffer. */
    unsigned char *mine = owned_buf(64, 2);
    CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, mine, 64, owned_free), SHOAL_EFULL);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), 0);
    CU_ASSERT_EQUAL(mine[63], (unsigned char)(2 + 63)); /* still ours and intact (ASan) */
    /* The receiver ends after the blocking message: the K queued are dropped. */
    atomic_store(&sk_exit_after, 1);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&owned_frees) == K && shoal_test_stats(rt).msgs_dropped == K);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, K);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), 0);
    /* Gone: refused with ENOPROC, the caller still owns it. */
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, pid) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, mine, 64, owned_free), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, NULL, 64, owned_free), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
    CU_ASSERT_EQUAL(mine[0], 2);
    free(mine);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
}

/* Owned payloads still queued when the runtime is destroyed are freed too. */
static void owned_payload_freed_on_destroy(void)
{
    enum { K = 7 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    atomic_store(&owned_frees, 0);
    shoal_pid_t pid = sk_spawn_blocked(rt, 0);
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(
            shoal_runtime_send_owned(rt, pid, T_DATA, owned_buf(100, 3), 100, owned_free),
            SHOAL_OK);
    atomic_store(&sk_release, 1); /* destroy waits for the handler to return */
    shoal_runtime_destroy(rt);
    /* Each was either handled (then freed) or dropped (then freed). */
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"inline and heap payloads arrive intact", inline_and_heap_payloads_arrive_intact},
        {"payload is copied at send", payload_is_copied_at_send},
        {"owned payload is handed over and freed once",
         owned_payload_is_handed_over_and_freed_once},
        {"owned payload freed when dropped, kept on error",
         owned_payload_freed_when_dropped_kept_on_error},
        {"owned payload freed on destroy", owned_payload_freed_on_destroy},
        {NULL, NULL},
    };
    return shoal_test_run("send_payloads", cases);
}
