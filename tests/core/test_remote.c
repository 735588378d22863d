/* test_remote.c - reading an isolated pool's counts without waiting
 * (core/pool/remote.c shoal__remote_sum_within, stats.c
 * shoal__pool_peek_within): the table says `no answer` for a pool whose
 * children's counts are held by its supervisor (their lock taken) past the
 * table's patience, instead of blocking the host thread or showing zeros.
 * A remote record and a pool record are built by hand (no child process):
 * only the fields these readers touch are set. The lock is held by a
 * second thread, as the supervisor would hold it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "pool/remote.h"
#include "pool/remote_child.h"
#include "support.h"

typedef struct {
    pthread_mutex_t *lock;
    pthread_mutex_t gate;
    pthread_cond_t cond;
    int stage; /* 1: holding the lock; 2: asked to let go */
} holder_t;

static void *hold(void *arg)
{
    holder_t *h = arg;
    pthread_mutex_lock(h->lock);
    pthread_mutex_lock(&h->gate);
    h->stage = 1;
    pthread_cond_broadcast(&h->cond);
    while (h->stage != 2)
        pthread_cond_wait(&h->cond, &h->gate);
    pthread_mutex_unlock(&h->gate);
    pthread_mutex_unlock(h->lock);
    return NULL;
}

static shoal_remote_t *fake_remote(void)
{
    shoal_remote_t *r = aligned_alloc(64, sizeof *r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    atomic_store(&r->done_handled, 7);
    atomic_store(&r->done_failed, 2);
    atomic_store(&r->done_dropped, 1);
    atomic_store(&r->live_size, 3);
    return r;
}

static void test_sum_within(void)
{
    shoal_remote_t *r = fake_remote();
    shoal_pool_t *p = aligned_alloc(64, sizeof *p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memset(p, 0, sizeof *p);
    p->remote = r;
    shoal_pool_hist_t hist;
    memset(&hist, 0, sizeof hist);
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    /* Free: read at once. */
    CU_ASSERT_TRUE(shoal__remote_sum_within(r, &st, &hist, 5));
    CU_ASSERT_EQUAL(st.messages_handled, 7);
    CU_ASSERT_EQUAL(st.messages_failed, 2);
    CU_ASSERT_EQUAL(st.messages_dropped, 1);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_TRUE(shoal__pool_peek_within(p, &st, 5));
    CU_ASSERT_EQUAL(st.messages_handled, 7);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    /* Held: both give up (false), and return. */
    holder_t h = {.lock = &r->lock, .stage = 0};
    pthread_mutex_init(&h.gate, NULL);
    pthread_cond_init(&h.cond, NULL);
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, hold, &h), 0);
    pthread_mutex_lock(&h.gate);
    while (h.stage != 1)
        pthread_cond_wait(&h.cond, &h.gate);
    pthread_mutex_unlock(&h.gate);
    memset(&st, 0, sizeof st);
    CU_ASSERT_FALSE(shoal__remote_sum_within(r, &st, &hist, 5));
    CU_ASSERT_FALSE(shoal__pool_peek_within(p, &st, 5));
    pthread_mutex_lock(&h.gate);
    h.stage = 2;
    pthread_cond_broadcast(&h.cond);
    pthread_mutex_unlock(&h.gate);
    CU_ASSERT_EQUAL(pthread_join(t, NULL), 0);
    /* Let go: read again. */
    CU_ASSERT_TRUE(shoal__pool_peek_within(p, &st, 5));
    CU_ASSERT_EQUAL(st.messages_failed, 2);
    pthread_cond_destroy(&h.cond);
    pthread_mutex_destroy(&h.gate);
    pthread_mutex_destroy(&r->lock);
    free(p);
    free(r);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"counts read within a patience, or not at all", test_sum_within},
        {NULL, NULL},
    };
    return shoal_test_run("remote", cases);
}
