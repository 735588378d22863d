/* test_lock.c - the short lock (sched/lock.h): its states, mutual
 * exclusion under contention, and a sleeper woken by the unlock. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "sched/lock.h"
#include "support.h"

static void states_uncontended(void)
{
    shoal_lock_t l = {0};
    CU_ASSERT_EQUAL(atomic_load(&l.word), 0);
    shoal__lock(&l);
    CU_ASSERT_EQUAL(atomic_load(&l.word), 1); /* held, nobody asleep */
    shoal__unlock(&l);
    CU_ASSERT_EQUAL(atomic_load(&l.word), 0);
    for (int i = 0; i < 1000; i++) {
        shoal__lock(&l);
        shoal__unlock(&l);
    }
    CU_ASSERT_EQUAL(atomic_load(&l.word), 0);
}

/* ---- mutual exclusion -------------------------------------------------- */

#define EX_THREADS 4
#define EX_ROUNDS 200000

static shoal_lock_t ex_lock = {0};
static uint64_t ex_count; /* plain: only under the lock */
static atomic_int ex_inside, ex_overlap;

static void *ex_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < EX_ROUNDS; i++) {
        shoal__lock(&ex_lock);
        if (atomic_fetch_add_explicit(&ex_inside, 1, memory_order_relaxed) != 0)
            atomic_fetch_add(&ex_overlap, 1);
        ex_count++;
        if (i % 1024 == 0) /* now and then a holder that takes its time */
            for (int k = 0; k < 2000; k++)
                shoal__cpu_relax();
        atomic_fetch_sub_explicit(&ex_inside, 1, memory_order_relaxed);
        shoal__unlock(&ex_lock);
    }
    return NULL;
}

/* Four threads (on two cores: holders preempted, spinners gone to sleep)
 * each add 200,000 under the lock: the plain count is exact and no two
 * were ever inside at once. */
static void threads_exclude_each_other(void)
{
    pthread_t t[EX_THREADS];
    for (int i = 0; i < EX_THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, ex_main, NULL), 0);
    for (int i = 0; i < EX_THREADS; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(ex_count, (uint64_t)EX_THREADS * EX_ROUNDS);
    CU_ASSERT_EQUAL(atomic_load(&ex_overlap), 0);
    CU_ASSERT_EQUAL(atomic_load(&ex_lock.word), 0);
}

/* ---- a sleeper --------------------------------------------------------- */

static shoal_lock_t sl_lock = {0};
static atomic_int sl_got;
static int sl_seen; /* written by the holder before its unlock */

static void *sl_main(void *arg)
{
    (void)arg;
    shoal__lock(&sl_lock);
    atomic_store(&sl_got, sl_seen);
    shoal__unlock(&sl_lock);
    return NULL;
}

/* The test thread holds the lock; a second thread spins out and sleeps
 * (the word goes to 2). It is still asleep 50 ms later; the unlock wakes
 * it, it sees what the holder wrote, and the word ends free. */
static void unlock_wakes_a_sleeper(void)
{
    atomic_store(&sl_got, -1);
    shoal__lock(&sl_lock);
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, sl_main, NULL), 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sl_lock.word) == 2, 5.0);
    CU_ASSERT_EQUAL(atomic_load(&sl_lock.word), 2);
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&sl_got), -1); /* still waiting */
    sl_seen = 42;
    shoal__unlock(&sl_lock);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(atomic_load(&sl_got), 42);
    CU_ASSERT_EQUAL(atomic_load(&sl_lock.word), 0);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"states, uncontended", states_uncontended},
        {"threads exclude each other", threads_exclude_each_other},
        {"the unlock wakes a sleeper", unlock_wakes_a_sleeper},
        {NULL, NULL},
    };
    return shoal_test_run("lock", cases);
}
