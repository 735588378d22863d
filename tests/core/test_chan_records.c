/* test_chan_records.c - records through the channel between two processes
 * (core/ipc/chan.c):
 *
 *   - records of every size up to the limit, across the ring's end many
 *     times, arrive byte for byte, in order; a full ring answers
 *     SHOAL_EBUSY at once and takes records again once consumed;
 *   - many producer threads: exact totals, each producer's order kept;
 *   - across a fork: a child that echoes every record back, both sides
 *     sleeping on their doorbells between bursts; a consumer that dies
 *     never blocks the producer.
 *
 * The pair of ends and the forked child: support/chan_kit.h.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "chan_kit.h"

static void fill_pattern(unsigned char *buf, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(seed * 131u + i * 7u);
}

static void records_of_every_size_across_the_end(void)
{
    shoal_chan_t *p, *c;
    cn_pair(CN_RING, 100, &p, &c);
    size_t user = 0;
    unsigned char *u = shoal__chan_user(p, &user);
    CU_ASSERT_EQUAL(user, 4096); /* rounded up to a page */
    u[99] = 42;
    CU_ASSERT_EQUAL(((unsigned char *)shoal__chan_user(c, NULL))[99], 42);
    static unsigned char out[CN_RING], in[CN_RING];
    size_t sizes[] = {0, 1, 7, 8, 9, 100, 4095, 4096, 20000, CN_RING / 2 - 16};
    unsigned n = 0;
    for (unsigned round = 0; round < 200; round++) {
        size_t len = sizes[round % (sizeof sizes / sizeof sizes[0])];
        fill_pattern(out, len, round);
        /* Split in two parts at a place of its own. */
        size_t cut = len / 3;
        CU_ASSERT_EQUAL_FATAL(shoal__chan_send(p, round, out, cut, out + cut, len - cut, true),
                              SHOAL_OK);
        uint32_t tag;
        const void *data;
        size_t got;
        CU_ASSERT_EQUAL_FATAL(shoal__chan_peek(c, &tag, &data, &got), SHOAL_OK);
        CU_ASSERT_EQUAL(tag, round);
        CU_ASSERT_EQUAL(got, len);
        memcpy(in, data, got);
        n += memcmp(in, out, len) == 0;
        shoal__chan_consume(c);
        CU_ASSERT_EQUAL(shoal__chan_peek(c, &tag, &data, &got), SHOAL_EBUSY);
    }
    CU_ASSERT_EQUAL(n, 200);
    /* Too large (one byte past SHOAL_CHAN_LEN_MAX: it never fits, however
     * empty the ring), and the other way round works too. */
    CU_ASSERT_EQUAL(SHOAL_CHAN_LEN_MAX(CN_RING), CN_RING / 2 - 16);
    CU_ASSERT_EQUAL(shoal__chan_send(p, 1, out, SHOAL_CHAN_LEN_MAX(CN_RING) + 1, NULL, 0, false),
                    SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal__chan_send(p, 1, out, CN_RING / 2, NULL, 0, false), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal__chan_send(c, 9, "up", 2, NULL, 0, true), SHOAL_OK);
    uint32_t tag;
    const void *data;
    size_t got;
    CU_ASSERT_EQUAL(shoal__chan_peek(p, &tag, &data, &got), SHOAL_OK);
    CU_ASSERT_EQUAL(tag, 9);
    CU_ASSERT_EQUAL(got, 2);
    CU_ASSERT_EQUAL(memcmp(data, "up", 2), 0);
    shoal__chan_consume(p);
    shoal__chan_destroy(c);
    shoal__chan_destroy(p);
}

static void full_ring_is_busy_at_once(void)
{
    shoal_chan_t *p, *c;
    cn_pair(CN_RING, 0, &p, &c);
    unsigned char rec[1000] = {0};
    unsigned sent = 0;
    int rc;
    uint64_t size = 0;
    CU_ASSERT_EQUAL(shoal__chan_out_free(p, &size), CN_RING); /* the free bytes, exactly */
    CU_ASSERT_EQUAL(size, CN_RING);
    while ((rc = shoal__chan_send(p, sent, rec, sizeof rec, NULL, 0, false)) == SHOAL_OK) {
        sent++;
        CU_ASSERT_EQUAL(shoal__chan_out_free(p, &size), CN_RING - sent * 1016u);
    }
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    CU_ASSERT_EQUAL(sent, CN_RING / (16 + 1000)); /* 1016-byte records in 64 KiB */
    CU_ASSERT_EQUAL(shoal__chan_out_free(p, &size), CN_RING % 1016u);
    CU_ASSERT_EQUAL(shoal__chan_out_free(c, &size), CN_RING); /* the other way: empty */
    uint32_t tag;
    const void *data;
    size_t len;
    CU_ASSERT_EQUAL(shoal__chan_peek(c, &tag, &data, &len), SHOAL_OK);
    CU_ASSERT_EQUAL(tag, 0);
    shoal__chan_consume(c);
    CU_ASSERT_EQUAL(shoal__chan_out_free(p, &size), CN_RING % 1016u + 1016u); /* given back */
    CU_ASSERT_EQUAL(shoal__chan_send(p, sent, rec, sizeof rec, NULL, 0, false), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__chan_send(p, sent + 1, rec, sizeof rec, NULL, 0, false), SHOAL_EBUSY);
    unsigned got = 0;
    while (shoal__chan_peek(c, &tag, &data, &len) == SHOAL_OK) {
        CU_ASSERT_EQUAL(tag, got + 1);
        got++;
        shoal__chan_consume(c);
    }
    CU_ASSERT_EQUAL(got, sent);
    shoal__chan_destroy(c);
    shoal__chan_destroy(p);
}

/* ---- many producers --------------------------------------------------------- */

#define PRODUCERS 4
#define PER_PRODUCER 50000

typedef struct {
    shoal_chan_t *c;
    uint32_t id;
} prod_t;

static atomic_int consumer_gone; /* the consumer gave up: stop sending */

static void *producer(void *arg)
{
    prod_t *pr = arg;
    for (uint32_t i = 0; i < PER_PRODUCER && !atomic_load(&consumer_gone);) {
        uint32_t v[2] = {pr->id, i};
        size_t len = 8 + (i % 5) * 8; /* records of different sizes */
        unsigned char buf[48] = {0};
        memcpy(buf, v, sizeof v);
        if (shoal__chan_send(pr->c, pr->id, buf, len, NULL, 0, true) == SHOAL_OK) {
            i++;
        } else {
            /* Full: let the consumer catch up. A nap, not sched_yield:
             * four producers yielding to each other on two cores can keep
             * the consumer off the CPU for seconds (a sanitizer build). */
            struct timespec nap = {0, 50 * 1000};
            nanosleep(&nap, NULL);
        }
    }
    return NULL;
}

static void many_producers_exact_and_in_order(void)
{
    shoal_chan_t *p, *c;
    cn_pair(CN_RING, 0, &p, &c);
    pthread_t t[PRODUCERS];
    prod_t pr[PRODUCERS];
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        pr[i] = (prod_t){p, i};
        pthread_create(&t[i], NULL, producer, &pr[i]);
    }
    uint32_t next[PRODUCERS] = {0}, bad = 0, total = 0;
    double end = shoal_test_now() + 60;
    while (total < PRODUCERS * PER_PRODUCER && shoal_test_now() < end) {
        uint32_t tag;
        const void *data;
        size_t len;
        if (!shoal__chan_wait(c, 100, 20))
            continue;
        if (shoal__chan_peek(c, &tag, &data, &len) != SHOAL_OK)
            continue;
        uint32_t v[2];
        memcpy(v, data, sizeof v);
        bad += tag >= PRODUCERS || v[0] != tag || v[1] != next[tag] || len != 8 + (v[1] % 5) * 8;
        if (tag < PRODUCERS)
            next[tag] = v[1] + 1;
        total++;
        shoal__chan_consume(c);
    }
    atomic_store(&consumer_gone, 1); /* (they are done, unless we timed out) */
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(total, PRODUCERS * PER_PRODUCER);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(!shoal__chan_broken(c));
    /* A producer whose head is older than the tail it read next (the
     * consumer moved on between its two loads) looks again; it once called
     * the ring broken and refused everything from then on. */
    CU_ASSERT(!shoal__chan_out_broken(p));
    shoal__chan_destroy(c);
    shoal__chan_destroy(p);
}

/* The same several times: the stale-head case needs a producer caught
 * between its two loads. */
static void many_producers_rounds(void)
{
    for (int round = 0; round < 8; round++) {
        atomic_store(&consumer_gone, 0);
        many_producers_exact_and_in_order();
    }
}

/* ---- across a fork ------------------------------------------------------------ */

#define ECHOES 100000

/* The child: attach, echo every record back (tag and bytes), until tag 0. */
static int echo_child(const int fds[3])
{
    shoal_chan_t *c;
    if (shoal__chan_attach(fds, &c) != SHOAL_OK)
        return 2;
    for (;;) {
        shoal__chan_wait(c, 1000, 50);
        uint32_t tag;
        const void *data;
        size_t len;
        int rc;
        while ((rc = shoal__chan_peek(c, &tag, &data, &len)) == SHOAL_OK) {
            unsigned char copy[64];
            size_t n = len < sizeof copy ? len : sizeof copy;
            memcpy(copy, data, n);
            shoal__chan_consume(c);
            if (tag == 0)
                return 0;
            while (shoal__chan_send(c, tag, copy, n, NULL, 0, true) == SHOAL_EBUSY)
                sched_yield();
        }
        if (rc == SHOAL_EINVAL)
            return 3;
    }
}

static void echo_across_a_fork(void)
{
    shoal_chan_t *p;
    CU_ASSERT_EQUAL_FATAL(shoal__chan_create(CN_RING, 0, &p), SHOAL_OK);
    pid_t pid = cn_fork_child(p, echo_child);
    CU_ASSERT_FATAL(pid > 0);
    uint32_t sent = 0, got = 0, bad = 0;
    double end = shoal_test_now() + 120;
    while (got < ECHOES && shoal_test_now() < end) {
        /* Bursts, then sleep: both sides park on their doorbells. */
        for (int k = 0; k < 64 && sent < ECHOES; k++) {
            uint64_t v = sent;
            if (shoal__chan_send(p, sent + 1, &v, sizeof v, NULL, 0, true) != SHOAL_OK)
                break;
            sent++;
        }
        shoal__chan_wait(p, 1000, sent % 1000 == 0 ? 0 : 20);
        uint32_t tag;
        const void *data;
        size_t len;
        while (shoal__chan_peek(p, &tag, &data, &len) == SHOAL_OK) {
            uint64_t v;
            memcpy(&v, data, sizeof v);
            bad += len != sizeof v || v != got || tag != got + 1;
            got++;
            shoal__chan_consume(p);
        }
    }
    CU_ASSERT_EQUAL(got, ECHOES);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(shoal__chan_send(p, 0, NULL, 0, NULL, 0, true), SHOAL_OK);
    int st;
    CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    shoal__chan_destroy(p);
}

/* A consumer that dies: the producer fills the ring and gets SHOAL_EBUSY,
 * never blocks. */
static int die_at_once(const int fds[3])
{
    (void)fds;
    raise(SIGKILL);
    return 0;
}

static void dead_consumer_never_blocks(void)
{
    shoal_chan_t *p;
    CU_ASSERT_EQUAL_FATAL(shoal__chan_create(CN_RING, 0, &p), SHOAL_OK);
    pid_t pid = cn_fork_child(p, die_at_once);
    int st;
    CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
    unsigned n = 0;
    int rc;
    while ((rc = shoal__chan_send(p, 1, "x", 1, NULL, 0, true)) == SHOAL_OK)
        n++;
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    CU_ASSERT_EQUAL(n, CN_RING / 24);
    CU_ASSERT(!shoal__chan_wait(p, 10, 0)); /* nothing will come */
    shoal__chan_destroy(p);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"records of every size, across the end", records_of_every_size_across_the_end},
        {"a full ring is busy at once", full_ring_is_busy_at_once},
        {"many producers: exact and in order (8 rounds)", many_producers_rounds},
        {"echo across a fork, sleeping between bursts", echo_across_a_fork},
        {"a dead consumer never blocks the producer", dead_consumer_never_blocks},
        {NULL, NULL},
    };
    return shoal_test_run("chan: records, in order, across a fork", cases);
}
