/* chan.c - the channel of chan.h.
 *
 * LAYOUT (one memfd, both processes map all of it)
 *   page 0       header: magic, version, sizes, offsets; then one control
 *                block per ring, each field on its own cache line
 *   ring 0       parent -> child, S bytes (a power of two)
 *   ring 1       child -> parent, S bytes
 *   user area    what the user lays out (pool/remote.c: counters, status)
 * Each ring's S bytes are mapped twice, back to back (a "mirror"): a record
 * that runs past the end continues at the start, contiguously, so nothing
 * is ever split or padded.
 *
 * A RING. Positions are byte counts since the start, never wrapped (64 bits
 * do not run out); position p lives at p mod S. A record at p is
 *   stamp (8 bytes) | len (4) | tag (4) | len bytes, rounded up to 8
 * and its stamp is p + 1 once it is complete, 0 before. Bytes the consumer
 * is done with are zeroed by it before it gives them back, so a position
 * the producers have not written since holds 0: a stamp is never stale.
 *
 *   producer (any thread of one process):
 *     h = head [acquire], then t = tail; room if t + need - h <= S (h may
 *     be older than t: then t - h can exceed S for a moment, and we look
 *     again -- it is not the consumer's fault);
 *     reserve by CAS tail t -> t + need [relaxed: producers only order
 *     among themselves through it]; write len, tag, bytes;
 *     stamp = t + 1 [release]; to ring: fence [seq_cst], then sleeping
 *     [relaxed]: if set, ring the doorbell (below).
 *   consumer (one thread of the other process), at its head h:
 *     stamp [acquire] == h + 1: a record (pairs with the producer's
 *     release: len, tag and bytes are written); 0: none yet (empty, or a
 *     producer between its reservation and its stamp); anything else: the
 *     ring is broken. Done with it: zero its bytes, head = h + size
 *     [release] (pairs with the producer's acquire of head: the zeroes are
 *     there before a producer writes over them).
 *   sleeping: the consumer stores sleeping = 1 [seq_cst], then loads the
 *     stamp at its head [seq_cst]; only if none is there does it sleep on
 *     the doorbell (a broken ring has none to take, whatever its head
 *     holds: it sleeps). A producer stores the stamp, fences [seq_cst], loads
 *     sleeping. In the single order of seq_cst operations (the fence
 *     included) one of them comes first: the consumer sees the stamp, or
 *     the producer sees sleeping and rings. No lost wake-up. After its
 *     sleep the consumer stores sleeping = 0, clears the doorbell and looks
 *     at the ring again before it sleeps again.
 *
 * DOORBELLS. One per ring: a connected pair of datagram sockets (AF_UNIX,
 *   SOCK_DGRAM), the producers' process holding one end, the consumer's
 *   the other. Each end is an open file description of its own, so what
 *   one process does to its end -- clear O_NONBLOCK (shared by every copy
 *   of a description: an eventfd both processes held was one, and a peer
 *   that cleared it made our read in disarm wait for ever), shut it down,
 *   close it -- never reaches the other's, and every call on our end says
 *   MSG_DONTWAIT, so none can wait whatever the flags are. Ringing sends a
 *   one-byte datagram (MSG_NOSIGNAL: a peer that shut its end down gives
 *   EPIPE, not SIGPIPE); a full queue (EAGAIN) is a ring already there:
 *   the pair is connected, so every datagram the queue holds waits for the
 *   consumer, whose end reads as ready until it clears them. Clearing
 *   reads what is queued, at most BELL_DRAIN datagrams (a peer that rings
 *   without end costs wake-ups, never a loop); one left over only wakes the
 *   next sleep early, which looks at the ring and sleeps again. Datagram
 *   pairs are chosen over stream or seqpacket ones because a peer that
 *   shuts down or closes its end of those leaves ours readable for ever
 *   (a poll that never sleeps); a datagram end does not see it. The other
 *   direction of each pair is not used: the parent shuts it down on its
 *   ends (nothing the child sends there is queued).
 *
 * WHAT THREADSANITIZER CANNOT SEE. A producer writes over bytes another
 *   producer of its process wrote a lap earlier only after the consumer --
 *   another process -- read and gave them back: producer 1's stamp
 *   [release] -> consumer -> head [release] -> producer 2's head [acquire].
 *   TSan sees one process, so that edge is invisible to it, and it would
 *   call the second producer's write a race with the first one's. In TSan
 *   builds the producers of a process therefore send one at a time, under
 *   a mutex of their own (send_lock): producer 2 can write over producer
 *   1's bytes only after producer 1 stamped them, inside its turn, so
 *   producer 1's turn ended first and the mutex orders them for TSan as
 *   the chain does in fact. (Ordinary builds run the lock-free protocol
 *   above; the many-producers test checks it record by record.)
 *
 * THE OTHER SIDE IS NOT TRUSTED. It may write anything anywhere in the
 * region, and do what it likes with its own descriptors (DOORBELLS). It
 * cannot change the region's size: the memfd is sealed (F_SEAL_SHRINK,
 * F_SEAL_GROW, then F_SEAL_SEAL, so no seal can be added either -- not
 * F_SEAL_WRITE against our own writes) before it is mapped or handed
 * over; shrunk, every later touch of ours past its new end would be a
 * SIGBUS that kills this process. Every value read from the region is
 * checked before use: head against
 * tail (a head past the tail is impossible: the producer calls the ring
 * broken and sends nothing more; one more than S behind, looked at again,
 * is a full ring), a tail (and the head a child starts from) against the
 * 8 bytes records are aligned to (a record's address and its atomic stamp
 * come from it), a stamp against the position, a length against
 * SHOAL_CHAN_RECORD_MAX and S; the length is read once and that copy used,
 * and positions are taken mod S within our own mapping, so no access can
 * leave it. What the peer can do is garble what it is sent, or stall (a
 * full ring: SHOAL_EBUSY), never more.
 */
#include "ipc/chan.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shoal/error.h"

/* The edge through the other process, for ThreadSanitizer (top). */
#if defined(__SANITIZE_THREAD__)
#define SHOAL_CHAN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHOAL_CHAN_TSAN 1
#endif
#endif
#ifdef SHOAL_CHAN_TSAN
#include <pthread.h>
#endif

#define MAGIC UINT64_C(0x6e6168636c616f68) /* "hoalchan" */
#define VERSION 1u
#define PAGE 4096u
#define HDR_BYTES SHOAL_CHAN_RECORD_HDR
#define RING_MIN (64u * 1024u)
#define RING_MAX (256u * 1024u * 1024u)
#define BELL_DRAIN 64 /* datagrams one clear reads at most (top: DOORBELLS) */

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "cross-process atomics need lock-free 64-bit words");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "cross-process atomics need lock-free 32-bit words");

typedef struct ring_ctl_s {
    alignas(64) _Atomic uint64_t tail; /* producers */
    alignas(64) _Atomic uint64_t head; /* the consumer */
    _Atomic uint32_t sleeping;         /* the consumer sleeps on its doorbell */
} ring_ctl_t;

typedef struct region_s {
    uint64_t magic;
    uint32_t version, pad;
    uint64_t ring_bytes, user_bytes;
    uint64_t off_ring[2], off_user, total;
    ring_ctl_t ctl[2];
} region_t;

_Static_assert(sizeof(region_t) <= PAGE, "the header fits its page");

typedef struct record_s {
    _Atomic uint64_t stamp;
    uint32_t len;
    uint32_t tag;
} record_t;

_Static_assert(sizeof(record_t) == HDR_BYTES, "a record's header is 16 bytes");
/* SHOAL_CHAN_LEN_MAX is what send_one and peek allow: rec_size(len) <= S / 2
 * holds exactly for len <= S / 2 - HDR_BYTES, a multiple of 8. */
_Static_assert(SHOAL_CHAN_LEN_MAX(RING_MIN) == RING_MIN / 2 - HDR_BYTES &&
                   SHOAL_CHAN_LEN_MAX((uint64_t)RING_MAX) == SHOAL_CHAN_RECORD_MAX,
               "SHOAL_CHAN_LEN_MAX matches the ring's own check");

struct shoal_chan_s {
    int fd;
    int bell[2];      /* this side's end of each ring's doorbell (top: DOORBELLS) */
    int peer_bell[2]; /* the parent's: the child's ends, to hand over; -1 in the child, and
                       * once handed (shoal__chan_handed) */
    bool parent;
    region_t *r; /* the whole region, mapped once */
    size_t total;
    unsigned char *data[2]; /* each ring's mirror: 2 * S bytes of address space */
    uint64_t size;          /* S */
    /* the consumer's own (inbound ring) */
    uint64_t head;
    uint32_t peeked; /* size of the record peek gave, 0 if none */
    bool broken;
    /* the producers' (outbound ring) */
    _Atomic bool out_broken;
#ifdef SHOAL_CHAN_TSAN
    pthread_mutex_t send_lock; /* top: what ThreadSanitizer cannot see */
#endif
};

static uint64_t rec_size(uint64_t len) { return HDR_BYTES + ((len + 7) & ~UINT64_C(7)); }

static inline int out_ring(const shoal_chan_t *c) { return c->parent ? 0 : 1; }
static inline int in_ring(const shoal_chan_t *c) { return c->parent ? 1 : 0; }

/* ---- mapping ------------------------------------------------------------- */

/* Maps the S bytes at off twice, back to back. */
static unsigned char *mirror(int fd, uint64_t off, uint64_t size)
{
    unsigned char *base = mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    for (int i = 0; i < 2; i++) {
        void *at = mmap(base + i * size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                        (off_t)off);
        if (at == MAP_FAILED) {
            munmap(base, 2 * size);
            return NULL;
        }
    }
    return base;
}

static int map_all(shoal_chan_t *c)
{
    c->r = mmap(NULL, c->total, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
    if (c->r == MAP_FAILED) {
        c->r = NULL;
        return SHOAL_ENOMEM;
    }
    return SHOAL_OK;
}

static int map_rings(shoal_chan_t *c, const uint64_t off[2])
{
    for (int i = 0; i < 2; i++)
        if ((c->data[i] = mirror(c->fd, off[i], c->size)) == NULL)
            return SHOAL_ENOMEM;
    return SHOAL_OK;
}

static shoal_chan_t *chan_new(void)
{
    shoal_chan_t *c = calloc(1, sizeof *c);
#ifdef SHOAL_CHAN_TSAN
    if (c != NULL)
        pthread_mutex_init(&c->send_lock, NULL);
#endif
    return c;
}

static uint64_t page_up(uint64_t n) { return (n + PAGE - 1) & ~(uint64_t)(PAGE - 1); }

int shoal__chan_create(size_t ring_bytes, size_t user_bytes, shoal_chan_t **out)
{
    *out = NULL;
    if (ring_bytes < RING_MIN || ring_bytes > RING_MAX || (ring_bytes & (ring_bytes - 1)) != 0 ||
        user_bytes > RING_MAX)
        return SHOAL_EINVAL;
    shoal_chan_t *c = chan_new();
    if (c == NULL)
        return SHOAL_ENOMEM;
    c->parent = true;
    c->size = ring_bytes;
    c->bell[0] = c->bell[1] = c->peer_bell[0] = c->peer_bell[1] = -1;
    uint64_t off[2] = {PAGE, PAGE + ring_bytes};
    uint64_t off_user = PAGE + 2 * (uint64_t)ring_bytes;
    c->total = off_user + page_up(user_bytes ? user_bytes : 1);
    int rc = SHOAL_ENOMEM;
    /* Sealed at its size before anyone maps it (top: the other side). */
    c->fd = memfd_create("shoal:chan", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (c->fd < 0 || ftruncate(c->fd, (off_t)c->total) != 0 ||
        fcntl(c->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        goto fail;
    for (int i = 0; i < 2; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
            goto fail;
        /* Ring 0's producers are ours, ring 1's consumer is: the direction
         * we never use is shut on our end (top: DOORBELLS). */
        c->bell[i] = sv[0];
        c->peer_bell[i] = sv[1];
        if (shutdown(sv[0], i == 0 ? SHUT_RD : SHUT_WR) != 0)
            goto fail;
    }
    if ((rc = map_all(c)) != SHOAL_OK || (rc = map_rings(c, off)) != SHOAL_OK)
        goto fail;
    region_t *r = c->r; /* a fresh memfd reads as zeroes: every stamp is 0 */
    r->magic = MAGIC;
    r->version = VERSION;
    r->ring_bytes = ring_bytes;
    r->user_bytes = user_bytes;
    r->off_ring[0] = off[0];
    r->off_ring[1] = off[1];
    r->off_user = off_user;
    r->total = c->total;
    *out = c;
    return SHOAL_OK;
fail:
    shoal__chan_destroy(c);
    return rc;
}

void shoal__chan_fds(const shoal_chan_t *c, int fds[3])
{
    fds[0] = c->fd;
    fds[1] = c->peer_bell[0];
    fds[2] = c->peer_bell[1];
}

void shoal__chan_handed(shoal_chan_t *c)
{
    for (int i = 0; i < 2; i++) {
        if (c->peer_bell[i] >= 0)
            close(c->peer_bell[i]);
        c->peer_bell[i] = -1;
    }
}

int shoal__chan_attach(const int fds[3], shoal_chan_t **out)
{
    *out = NULL;
    shoal_chan_t *c = chan_new();
    if (c == NULL)
        return SHOAL_ENOMEM;
    c->fd = fds[0];
    c->bell[0] = fds[1];
    c->bell[1] = fds[2];
    c->peer_bell[0] = c->peer_bell[1] = -1;
    struct stat st;
    int rc = SHOAL_EINVAL;
    if (fstat(c->fd, &st) != 0 || (uint64_t)st.st_size < PAGE)
        goto fail;
    /* The header, read once into our own copy and checked against the
     * file: what we map is what we checked. */
    region_t h;
    if (pread(c->fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
        goto fail;
    uint64_t s = h.ring_bytes;
    if (h.magic != MAGIC || h.version != VERSION || s < RING_MIN || s > RING_MAX ||
        (s & (s - 1)) != 0 || h.off_ring[0] != PAGE || h.off_ring[1] != PAGE + s ||
        h.off_user != PAGE + 2 * s || h.user_bytes > RING_MAX ||
        h.total != h.off_user + page_up(h.user_bytes ? h.user_bytes : 1) ||
        (uint64_t)st.st_size != h.total)
        goto fail;
    c->size = s;
    c->total = h.total;
    uint64_t off[2] = {PAGE, PAGE + s};
    if ((rc = map_all(c)) != SHOAL_OK || (rc = map_rings(c, off)) != SHOAL_OK)
        goto fail;
    c->head = atomic_load_explicit(&c->r->ctl[0].head, memory_order_relaxed);
    /* Records start at multiples of 8: a head that is not one is no
     * record's, and the ring makes no sense (top: the other side). */
    c->broken = (c->head & 7) != 0;
    *out = c;
    return SHOAL_OK;
fail:
    shoal__chan_destroy(c);
    return rc;
}

void shoal__chan_destroy(shoal_chan_t *c)
{
    if (c == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        if (c->data[i] != NULL)
            munmap(c->data[i], 2 * c->size);
        if (c->bell[i] >= 0)
            close(c->bell[i]);
        if (c->peer_bell[i] >= 0)
            close(c->peer_bell[i]);
    }
    if (c->r != NULL)
        munmap(c->r, c->total);
    if (c->fd >= 0)
        close(c->fd);
#ifdef SHOAL_CHAN_TSAN
    pthread_mutex_destroy(&c->send_lock);
#endif
    free(c);
}

void *shoal__chan_user(const shoal_chan_t *c, size_t *size)
{
    /* Our own copy of the offset and size (the shared header is the
     * peer's to scribble on). */
    uint64_t off_user = PAGE + 2 * c->size;
    if (size != NULL)
        *size = c->total - off_user;
    return (unsigned char *)c->r + off_user;
}

/* ---- producing ------------------------------------------------------------ */

void shoal__chan_ring(shoal_chan_t *c)
{
    ring_ctl_t *ctl = &c->r->ctl[out_ring(c)];
    /* seq_cst fence: the producer's half of the sleeping pair (top). */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&ctl->sleeping, memory_order_relaxed) != 0) {
        char one = 1;
        ssize_t w = send(c->bell[out_ring(c)], &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)w; /* EAGAIN: a ring is queued already; EPIPE and the rest: the peer's
                  * doing, nothing we can help (top: DOORBELLS) */
    }
}

static int send_one(shoal_chan_t *c, uint32_t tag, const void *a, size_t alen, const void *b,
                    size_t blen, bool ring)
{
    int o = out_ring(c);
    ring_ctl_t *ctl = &c->r->ctl[o];
    size_t len = alen + blen;
    if (len > SHOAL_CHAN_RECORD_MAX || len < alen || rec_size(len) > c->size / 2 ||
        atomic_load_explicit(&c->out_broken, memory_order_relaxed))
        return SHOAL_EINVAL;
    uint64_t need = rec_size(len), t;
    for (unsigned looks = 1;; looks++) {
        /* acquire: pairs with the consumer's release of head: the bytes it
         * gave back are zeroes before we write over them. Head first: the
         * head only passes records whose reservation moved the tail first,
         * so the tail read after it is never behind it. */
        uint64_t h = atomic_load_explicit(&ctl->head, memory_order_acquire);
        t = atomic_load_explicit(&ctl->tail, memory_order_relaxed);
        if (h > t || (t & 7) != 0) {
            /* Impossible unless the other side wrote nonsense (producers
             * move the tail by whole records, multiples of 8: a record at
             * any other place would be misaligned): send nothing more on
             * this ring. */
            atomic_store_explicit(&c->out_broken, true, memory_order_relaxed);
            return SHOAL_EINVAL;
        }
        if (t - h > c->size) {
            /* The head we read is older than the tail: between the two
             * loads the consumer gave room back and producers filled it.
             * Look again. A head that stays that far behind (a consumer
             * writing nonsense) only keeps the ring full for us. */
            if (looks < 16)
                continue;
            return SHOAL_EBUSY;
        }
        if (t + need - h > c->size)
            return SHOAL_EBUSY;
        /* relaxed: the reservation only orders producers among themselves;
         * what the consumer needs rides on the stamp. */
        if (atomic_compare_exchange_weak_explicit(&ctl->tail, &t, t + need, memory_order_relaxed,
                                                  memory_order_relaxed))
            break; /* else another producer got there first: look again */
    }
    unsigned char *at = c->data[o] + (t & (c->size - 1));
    record_t *rec = (record_t *)(void *)at;
    rec->len = (uint32_t)len;
    rec->tag = tag;
    if (alen != 0)
        memcpy(at + HDR_BYTES, a, alen);
    if (blen != 0)
        memcpy(at + HDR_BYTES + alen, b, blen);
    /* release: pairs with the consumer's acquire of the stamp. */
    atomic_store_explicit(&rec->stamp, t + 1, memory_order_release);
    if (ring)
        shoal__chan_ring(c);
    return SHOAL_OK;
}

int shoal__chan_send(shoal_chan_t *c, uint32_t tag, const void *a, size_t alen, const void *b,
                     size_t blen, bool ring)
{
#ifdef SHOAL_CHAN_TSAN
    pthread_mutex_lock(&c->send_lock); /* top: what ThreadSanitizer cannot see */
    int rc = send_one(c, tag, a, alen, b, blen, ring);
    pthread_mutex_unlock(&c->send_lock);
    return rc;
#else
    return send_one(c, tag, a, alen, b, blen, ring);
#endif
}

/* ---- consuming ----------------------------------------------------------- */

static record_t *at_head(shoal_chan_t *c)
{
    return (record_t *)(void *)(c->data[in_ring(c)] + (c->head & (c->size - 1)));
}

int shoal__chan_peek(shoal_chan_t *c, uint32_t *tag, const void **data, size_t *len)
{
    if (c->broken)
        return SHOAL_EINVAL;
    record_t *rec = at_head(c);
    /* acquire: pairs with the producer's release of the stamp. */
    uint64_t stamp = atomic_load_explicit(&rec->stamp, memory_order_acquire);
    if (stamp == 0)
        return SHOAL_EBUSY;
    uint32_t n = rec->len; /* read once: the copy is what we check and use */
    if (stamp != c->head + 1 || n > SHOAL_CHAN_RECORD_MAX || rec_size(n) > c->size / 2) {
        c->broken = true;
        return SHOAL_EINVAL;
    }
    c->peeked = (uint32_t)rec_size(n);
    *tag = rec->tag;
    *data = (const unsigned char *)rec + HDR_BYTES;
    *len = n;
    return SHOAL_OK;
}

void shoal__chan_consume(shoal_chan_t *c)
{
    if (c->peeked == 0)
        return;
    ring_ctl_t *ctl = &c->r->ctl[in_ring(c)];
    memset(at_head(c), 0, c->peeked); /* the mirror: contiguous across the end */
    c->head += c->peeked;
    c->peeked = 0;
    /* release: pairs with the producers' acquire of head. */
    atomic_store_explicit(&ctl->head, c->head, memory_order_release);
}

int shoal__chan_wake_fd(const shoal_chan_t *c) { return c->bell[in_ring(c)]; }

bool shoal__chan_broken(const shoal_chan_t *c) { return c->broken; }

bool shoal__chan_out_broken(const shoal_chan_t *c)
{
    return atomic_load_explicit(&c->out_broken, memory_order_relaxed);
}

uint64_t shoal__chan_out_free(const shoal_chan_t *c, uint64_t *size)
{
    const ring_ctl_t *ctl = &c->r->ctl[out_ring(c)];
    *size = c->size;
    /* acquire: as send_one's (pairs with the consumer's release of head),
     * so the tail read after it is not behind it. The head is the
     * consumer's, so untrusted: one past the tail, or too far behind it,
     * leaves no room. */
    uint64_t h = atomic_load_explicit(&ctl->head, memory_order_acquire);
    uint64_t t = atomic_load_explicit(&ctl->tail, memory_order_relaxed);
    return h > t || t - h > c->size ? 0 : c->size - (t - h);
}

bool shoal__chan_in_pending(const shoal_chan_t *c)
{
    /* relaxed: a look. The tail is the producers' (untrusted): any value
     * but ours only says "pending". */
    const ring_ctl_t *ctl = &c->r->ctl[in_ring(c)];
    return !c->broken && atomic_load_explicit(&ctl->tail, memory_order_relaxed) != c->head;
}

/* Whether a record is there to take. Never on a broken ring: its head
 * holds a stamp that is not 0 (that is how it was found broken) but
 * nothing will ever be taken from it, and a consumer that counted it as
 * work waiting would never sleep. */
static bool ready(shoal_chan_t *c, memory_order mo)
{
    return !c->broken && atomic_load_explicit(&at_head(c)->stamp, mo) != 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned clear_doorbell(shoal_chan_t *c)
{
    char b;
    /* Whatever was queued, BELL_DRAIN at most; -1 (EAGAIN): no more. A
     * datagram's rest, and any descriptors sent with it, are discarded. */
    unsigned n = 0;
    while (n < (unsigned)BELL_DRAIN && recv(c->bell[in_ring(c)], &b, 1, MSG_DONTWAIT) >= 0)
        n++;
    return n;
}

bool shoal__chan_arm(shoal_chan_t *c)
{
    ring_ctl_t *ctl = &c->r->ctl[in_ring(c)];
    /* seq_cst store, then seq_cst load: the consumer's half of the
     * sleeping pair (top). */
    atomic_store_explicit(&ctl->sleeping, 1, memory_order_seq_cst);
    return ready(c, memory_order_seq_cst);
}

unsigned shoal__chan_disarm(shoal_chan_t *c)
{
    atomic_store_explicit(&c->r->ctl[in_ring(c)].sleeping, 0, memory_order_relaxed);
    return clear_doorbell(c);
}

bool shoal__chan_wait(shoal_chan_t *c, int timeout_ms, unsigned spin_us)
{
    if (ready(c, memory_order_relaxed))
        return true;
    if (spin_us != 0) {
        uint64_t end = now_ns() + (uint64_t)spin_us * 1000u;
        do {
            for (int i = 0; i < 32; i++)
                if (ready(c, memory_order_relaxed))
                    return true;
        } while (now_ns() < end);
    }
    bool got = shoal__chan_arm(c);
    if (!got && timeout_ms != 0) {
        struct pollfd p = {.fd = c->bell[in_ring(c)], .events = POLLIN};
        poll(&p, 1, timeout_ms);
        got = ready(c, memory_order_relaxed);
    }
    shoal__chan_disarm(c);
    /* acquire: pairs with the producer's release of the stamp; the caller's
     * shoal__chan_peek acquires it again before it reads the record. */
    return got || ready(c, memory_order_acquire);
}
