/* test_chan_hostile.c - a peer that breaks the rules of the channel between
 * two processes (core/ipc/chan.c):
 *
 *   - a peer that writes garbage into the region (stamps, lengths, head
 *     and tail) is detected as broken, never read or written past, never
 *     waited for: the consumer answers SHOAL_EINVAL, the producer EBUSY or
 *     EINVAL, at once; a broken ring is never a record waiting (arm,
 *     wait), so a consumer that polls sleeps;
 *   - a peer that makes its doorbell descriptors blocking, fills, shuts
 *     down or closes them never makes us wait: our sleep ends at its
 *     timeout, our sends answer at once;
 *   - the region is sealed: the peer can neither shrink nor grow it, nor
 *     seal it against our writes;
 *   - attach refuses a region that is not one.
 *
 * The pair of ends and the forked child: support/chan_kit.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chan_kit.h"

/* ---- a hostile peer ---------------------------------------------------------- */

/* The child scribbles: random bytes everywhere in the region, many times,
 * while sending good records too. The parent must never crash, read past
 * the mapping (ASan), or wait for ever. */
#define GOOD_FIRST 10u

static int scribbler(const int fds[3])
{
    shoal_chan_t *c;
    if (shoal__chan_attach(fds, &c) != SHOAL_OK)
        return 2;
    size_t user;
    unsigned char *u = shoal__chan_user(c, &user);
    /* The whole region, mapped again from the fd. */
    off_t total = lseek(fds[0], 0, SEEK_END);
    unsigned char *all = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    if (all == MAP_FAILED)
        return 4;
    /* Ten good records first, and the scribbling starts only once the
     * parent has read them all (its "down" says so): what it reads before
     * the ring breaks is known, whatever the scheduler does. */
    for (uint32_t i = 0; i < GOOD_FIRST; i++)
        if (shoal__chan_send(c, i, &i, sizeof i, NULL, 0, true) != SHOAL_OK)
            return 5;
    if (!shoal__chan_wait(c, 30000, 0))
        return 6;
    unsigned seed = 12345;
    for (int i = 0; i < 200000; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t at = seed % (size_t)total;
        all[at] = (unsigned char)(seed >> 16);
        if (i % 3 == 0)
            shoal__chan_send(c, (uint32_t)i, &seed, sizeof seed, NULL, 0, true);
        if (i % 1000 == 0) /* hostile values in the control words */
            memset(all + 64 * (seed % 32), 0xff, 8);
    }
    (void)u;
    (void)user;
    return 0;
}

static void hostile_peer_is_contained(void)
{
    unsigned broken = 0, total = 0;
    for (int round = 0; round < 5; round++) {
        shoal_chan_t *p;
        CU_ASSERT_EQUAL_FATAL(shoal__chan_create(CN_RING, 4096, &p), SHOAL_OK);
        pid_t pid = cn_fork_child(p, scribbler);
        unsigned records = 0, busy = 0;
        double end = shoal_test_now() + 30;
        int st = 0;
        bool exited = false;
        while (shoal_test_now() < end) {
            uint32_t tag;
            const void *data;
            size_t len;
            int rc = shoal__chan_peek(p, &tag, &data, &len);
            if (rc == SHOAL_OK) {
                unsigned char copy[64];
                memcpy(copy, data, len < sizeof copy ? len : sizeof copy);
                CU_ASSERT(len <= SHOAL_CHAN_RECORD_MAX);
                records++;
                shoal__chan_consume(p);
                continue;
            }
            if (rc == SHOAL_EINVAL)
                break; /* found broken: stays broken */
            busy++;
            /* Our sends must not hang or crash either. The first one tells
             * the child the good records were read. */
            if (records >= GOOD_FIRST) {
                rc = shoal__chan_send(p, 1, "down", 4, NULL, 0, true);
                CU_ASSERT(rc == SHOAL_OK || rc == SHOAL_EBUSY || rc == SHOAL_EINVAL);
                uint64_t size;
                CU_ASSERT(shoal__chan_out_free(p, &size) <= size); /* whatever its head says */
            }
            if (!exited && waitpid(pid, &st, WNOHANG) == pid)
                exited = true;
            if (exited && shoal__chan_peek(p, &tag, &data, &len) == SHOAL_EBUSY)
                break; /* done, and nothing more to read */
        }
        CU_ASSERT(shoal_test_now() < end);
        CU_ASSERT(records >= GOOD_FIRST);
        if (!exited)
            waitpid(pid, &st, 0);
        CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        total += records;
        if (shoal__chan_broken(p)) {
            broken++;
            uint32_t tag;
            const void *data;
            size_t len;
            CU_ASSERT_EQUAL(shoal__chan_peek(p, &tag, &data, &len), SHOAL_EINVAL);
        }
        shoal__chan_destroy(p);
    }
    /* The scribbling does hit what matters: a ring found broken, every
     * time, after the good records. */
    CU_ASSERT_EQUAL(broken, 5);
    CU_ASSERT(total >= 5 * GOOD_FIRST);
}

/* A ring the peer wrote garbage over is broken for good, and is never
 * work waiting for its consumer: arm says there is no record (so a thread
 * that polls sleeps), and wait sleeps its timeout out. (Before, both said a
 * record was there: the supervisor that arms before its poll never slept
 * again, a core spent until the peer ended.) */
static void broken_ring_is_never_ready(void)
{
    shoal_chan_t *p, *c;
    cn_pair(CN_RING, 0, &p, &c);
    CU_ASSERT_EQUAL(shoal__chan_send(c, 1, "one", 3, NULL, 0, true), SHOAL_OK);
    uint32_t tag;
    const void *data;
    size_t len;
    CU_ASSERT_EQUAL(shoal__chan_peek(p, &tag, &data, &len), SHOAL_OK);
    shoal__chan_consume(p);
    /* Garbage over the ring from the child (LAYOUT: after the header page
     * and ring 0), through a mapping of the region of our own. */
    int fds[3];
    shoal__chan_fds(p, fds);
    off_t total = lseek(fds[0], 0, SEEK_END);
    unsigned char *all = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    CU_ASSERT_FATAL(all != MAP_FAILED);
    memset(all + 4096 + CN_RING, 0xa5, CN_RING);
    munmap(all, (size_t)total);
    CU_ASSERT_EQUAL(shoal__chan_peek(p, &tag, &data, &len), SHOAL_EINVAL);
    CU_ASSERT_TRUE(shoal__chan_broken(p));
    CU_ASSERT_FALSE(shoal__chan_arm(p));
    shoal__chan_disarm(p);
    double t0 = shoal_test_now();
    CU_ASSERT_FALSE(shoal__chan_wait(p, 50, 0));
    CU_ASSERT(shoal_test_now() - t0 >= 0.04);
    CU_ASSERT_EQUAL(shoal__chan_peek(p, &tag, &data, &len), SHOAL_EINVAL); /* for good */
    shoal__chan_destroy(c);
    shoal__chan_destroy(p);
}

/* ---- a peer that plays with its descriptors -------------------------------------- */

/* The steps of the tricks below go through the user area (never through
 * a doorbell, which the tricks spoil): the parent stores a step's number
 * in `step`, the child stores it in `done` once it has played it. */
typedef struct {
    _Atomic uint32_t step, done;
} steps_t;

/* Until *w is v (10 s at most): true if it came. */
static bool until_is(_Atomic uint32_t *w, uint32_t v)
{
    double end = shoal_test_now() + 10;
    /* acquire: pairs with the other side's release of the word (what it
     * did before is done). */
    while (atomic_load_explicit(w, memory_order_acquire) != v) {
        if (shoal_test_now() > end)
            return false;
        struct timespec nap = {0, 200 * 1000};
        nanosleep(&nap, NULL);
    }
    return true;
}

/* The child: what a buggy or hostile plugin may do to the channel's
 * doorbell descriptors, one step at a time: (1) clear O_NONBLOCK on them
 * (a descriptor shares its flags with every copy of its open file
 * description) and fill the inbound one (an eventfd's counter to its top:
 * one more write would wait); (2) shut them down (sockets); (3) close
 * them. Before each it empties its ring, so that the parent can fill it
 * again; its ring stays armed throughout, so that every send of the parent
 * rings, and it never clears its doorbell. Killed at the end. */
static int fd_tricks(const int fds[3])
{
    shoal_chan_t *c;
    signal(SIGPIPE, SIG_IGN); /* a write into a socket shut down: EPIPE, not a death */
    if (shoal__chan_attach(fds, &c) != SHOAL_OK)
        return 2;
    steps_t *st = shoal__chan_user(c, NULL);
    for (uint32_t step = 1; step <= 3; step++) {
        if (!until_is(&st->step, step))
            return 3;
        uint32_t tag;
        const void *data;
        size_t len;
        while (shoal__chan_peek(c, &tag, &data, &len) == SHOAL_OK)
            shoal__chan_consume(c);
        shoal__chan_arm(c); /* asleep, as far as the parent can tell */
        for (int i = 1; i < 3; i++) {
            if (step == 1) {
                int fl = fcntl(fds[i], F_GETFL);
                fcntl(fds[i], F_SETFL, fl & ~O_NONBLOCK);
            } else if (step == 2) {
                shutdown(fds[i], SHUT_RDWR);
            } else {
                close(fds[i]);
            }
        }
        uint64_t top = UINT64_MAX - 1;
        ssize_t w = step == 1 ? write(fds[1], &top, sizeof top) : 0;
        (void)w; /* a socket may refuse it */
        /* release: pairs with the parent's acquire in until_is. */
        atomic_store_explicit(&st->done, step, memory_order_release);
    }
    for (;;)
        pause();
}

static void on_alarm(int sig) { (void)sig; }

/* Cuts off a call that waits: SIGALRM after 2 s, then every 100 ms (the
 * handler has no SA_RESTART: each ends the system call it interrupts with
 * EINTR). 0: off. */
static void alarm_after(int s)
{
    struct itimerval it = {.it_value = {s, 0}, .it_interval = {0, s ? 100000 : 0}};
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Seconds `call` took: one that would wait for the child shows as 2 s and
 * more instead of hanging the suite. */
#define TIMED(took, call)                                                                          \
    do {                                                                                           \
        double t0_ = shoal_test_now();                                                             \
        alarm_after(2);                                                                            \
        call;                                                                                      \
        alarm_after(0);                                                                            \
        (took) = shoal_test_now() - t0_;                                                           \
    } while (0)

/* Sends 1-byte records that ring until one is refused (its answer), or
 * for 3 s at most (SHOAL_OK then). */
static int fill(shoal_chan_t *p, unsigned *sent)
{
    int rc;
    double end = shoal_test_now() + 3;
    *sent = 0;
    while ((rc = shoal__chan_send(p, 100, "x", 1, NULL, 0, true)) == SHOAL_OK &&
           shoal_test_now() < end)
        ++*sent;
    return rc;
}

static void peer_descriptors_never_block_us(void)
{
    struct sigaction sa = {.sa_handler = on_alarm}, old;
    sigemptyset(&sa.sa_mask);
    CU_ASSERT_EQUAL_FATAL(sigaction(SIGALRM, &sa, &old), 0);
    shoal_chan_t *p;
    CU_ASSERT_EQUAL_FATAL(shoal__chan_create(CN_RING, sizeof(steps_t), &p), SHOAL_OK);
    steps_t *st = shoal__chan_user(p, NULL);
    pid_t pid = cn_fork_child(p, fd_tricks);
    CU_ASSERT_FATAL(pid > 0);
    for (uint32_t step = 1; step <= 3; step++) {
        /* release: pairs with the child's acquire in until_is. */
        atomic_store_explicit(&st->step, step, memory_order_release);
        CU_ASSERT_FATAL(until_is(&st->done, step));
        double took;
        /* The consumer's sleep: arm, poll, disarm (which clears the
         * doorbell), bounded by its timeout whatever the child did. */
        for (int i = 0; i < 3; i++) {
            TIMED(took, shoal__chan_wait(p, 50, 0));
            CU_ASSERT(took < 1.0);
        }
        TIMED(took, shoal__chan_arm(p); shoal__chan_disarm(p));
        CU_ASSERT(took < 1.0);
        /* The producer: the child looks asleep, so every send rings, into
         * a doorbell it never clears. Never waits: records until the ring
         * is full, then SHOAL_EBUSY. */
        int rc;
        unsigned sent;
        TIMED(took, rc = fill(p, &sent));
        CU_ASSERT(took < 1.0);
        CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
        CU_ASSERT_EQUAL(sent, CN_RING / 24); /* 24-byte records */
        TIMED(took, shoal__chan_ring(p));
        CU_ASSERT(took < 1.0);
    }
    kill(pid, SIGKILL);
    int status;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL); /* it did every step */
    shoal__chan_destroy(p);
    sigaction(SIGALRM, &old, NULL);
}

/* The region is sealed: the peer's copy of its descriptor can neither
 * shrink it (every later touch of ours past the new end would be a SIGBUS
 * that kills this process), nor grow it, nor add a seal of its own. */
static void peer_cannot_resize_the_region(void)
{
    shoal_chan_t *p, *c;
    cn_pair(CN_RING, 4096, &p, &c);
    int fds[3];
    shoal__chan_fds(p, fds);
    int peer = dup(fds[0]); /* as the child holds it */
    struct stat st;
    CU_ASSERT_EQUAL_FATAL(fstat(peer, &st), 0);
    CU_ASSERT_EQUAL(ftruncate(peer, st.st_size * 2), -1);
    CU_ASSERT_EQUAL(errno, EPERM);
    CU_ASSERT_EQUAL(fcntl(peer, F_ADD_SEALS, F_SEAL_WRITE), -1);
    CU_ASSERT_EQUAL(fcntl(peer, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1);
    int shrunk = ftruncate(peer, 4096);
    CU_ASSERT_EQUAL(shrunk, -1);
    CU_ASSERT_EQUAL(errno, EPERM);
    if (shrunk == 0) /* unsealed: put it back, or the looks below die of SIGBUS */
        CU_ASSERT_EQUAL(ftruncate(peer, st.st_size), 0);
    CU_ASSERT((fcntl(peer, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) ==
              (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
    /* Every byte of it still ours: the user area's last, records both ways. */
    size_t user;
    unsigned char *u = shoal__chan_user(p, &user);
    u[user - 1] = 7;
    CU_ASSERT_EQUAL(((unsigned char *)shoal__chan_user(c, NULL))[user - 1], 7);
    CU_ASSERT_EQUAL(shoal__chan_send(p, 1, "down", 4, NULL, 0, true), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__chan_send(c, 2, "up", 2, NULL, 0, true), SHOAL_OK);
    uint32_t tag;
    const void *data;
    size_t len;
    CU_ASSERT_EQUAL(shoal__chan_peek(c, &tag, &data, &len), SHOAL_OK);
    CU_ASSERT_EQUAL(tag, 1);
    CU_ASSERT_EQUAL(shoal__chan_peek(p, &tag, &data, &len), SHOAL_OK);
    CU_ASSERT_EQUAL(tag, 2);
    close(peer);
    shoal__chan_destroy(c);
    shoal__chan_destroy(p);
}

static void attach_refuses_what_is_not_a_channel(void)
{
    int fds[3] = {memfd_create("x", MFD_CLOEXEC), dup(0), dup(0)};
    CU_ASSERT_EQUAL_FATAL(ftruncate(fds[0], 1u << 20), 0);
    shoal_chan_t *c = (shoal_chan_t *)1;
    CU_ASSERT_EQUAL(shoal__chan_attach(fds, &c), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(c);
    /* A real one whose header lies about its size. */
    shoal_chan_t *p;
    CU_ASSERT_EQUAL_FATAL(shoal__chan_create(CN_RING, 0, &p), SHOAL_OK);
    int pf[3], dups[3];
    shoal__chan_fds(p, pf);
    for (int i = 0; i < 3; i++)
        dups[i] = dup(pf[i]);
    uint64_t huge = 1ull << 40;
    CU_ASSERT_EQUAL(pwrite(pf[0], &huge, sizeof huge, 16), (ssize_t)sizeof huge);
    CU_ASSERT_EQUAL(shoal__chan_attach(dups, &c), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal__chan_create(1000, 0, &c), SHOAL_EINVAL); /* not a power of two */
    shoal__chan_destroy(p);
}

/* A control word the peer made odd: a tail (ring 0's, at its control
 * block, LAYOUT in chan.c) that is not a multiple of 8 breaks our sends on
 * that ring; a head that is not breaks the ring of a side that attaches
 * to it. Records are 8-byte aligned, their stamps atomic: either would have
 * put a record at a misaligned address (before: the parent's send wrote
 * one and answered SHOAL_OK -- an alignment fault where atomics must be
 * aligned -- and attach took the head as it was). */
static void odd_control_words_break_the_ring(void)
{
    shoal_chan_t *p, *c;
    cn_pair(CN_RING, 0, &p, &c);
    int fds[3];
    shoal__chan_fds(p, fds);
    uint64_t tail, odd = 3;
    CU_ASSERT_EQUAL(pread(fds[0], &tail, sizeof tail, 64), (ssize_t)sizeof tail);
    CU_ASSERT_EQUAL(tail, 0);
    CU_ASSERT_EQUAL(pwrite(fds[0], &odd, sizeof odd, 64), (ssize_t)sizeof odd); /* ring 0's tail */
    CU_ASSERT_EQUAL(shoal__chan_send(p, 1, "down", 4, NULL, 0, true), SHOAL_EINVAL);
    CU_ASSERT_TRUE(shoal__chan_out_broken(p));
    CU_ASSERT_EQUAL(shoal__chan_send(p, 1, "down", 4, NULL, 0, true), SHOAL_EINVAL); /* for good */
    /* Ring 0's head, odd, then another child attaches. */
    CU_ASSERT_EQUAL(pwrite(fds[0], &odd, sizeof odd, 128), (ssize_t)sizeof odd);
    int dups[3] = {dup(fds[0]), -1, -1};
    shoal_chan_t *c2;
    CU_ASSERT_EQUAL_FATAL(shoal__chan_attach(dups, &c2), SHOAL_OK);
    uint32_t tag;
    const void *data;
    size_t len;
    CU_ASSERT_EQUAL(shoal__chan_peek(c2, &tag, &data, &len), SHOAL_EINVAL);
    CU_ASSERT_TRUE(shoal__chan_broken(c2));
    CU_ASSERT_FALSE(shoal__chan_arm(c2));
    shoal__chan_destroy(c2);
    shoal__chan_destroy(c);
    shoal__chan_destroy(p);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a hostile peer is contained", hostile_peer_is_contained},
        {"a broken ring is never a record waiting", broken_ring_is_never_ready},
        {"a peer's doorbell descriptors never block us", peer_descriptors_never_block_us},
        {"the peer cannot resize the region", peer_cannot_resize_the_region},
        {"attach refuses what is not a channel", attach_refuses_what_is_not_a_channel},
        {"odd control words break the ring", odd_control_words_break_the_ring},
        {NULL, NULL},
    };
    return shoal_test_run("chan: a hostile peer", cases);
}
