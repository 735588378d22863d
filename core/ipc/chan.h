/* chan.h - a channel between two processes: one shared memory region (a
 * memfd) holding two byte rings, one each way, an area the user lays out as
 * it likes (counters, control words), and a doorbell per ring to wake a
 * consumer that sleeps: a pair of datagram sockets, one end each side.
 * The parent of an isolated pool and its child process talk through one
 * (pool/remote.c, host/isolated.c).
 *
 * Each ring carries records: a tag (the user's) and up to
 * SHOAL_CHAN_RECORD_MAX bytes, given as up to two parts that are copied in
 * one after the other. Any number of threads of the producing process may
 * send at once; one thread of the other process consumes. A send never
 * blocks: a full ring answers SHOAL_EBUSY at once.
 *
 * The other process is not trusted. It shares the memory and may write
 * anything into it at any time (a plugin bug in the child). Nothing it
 * writes can make this side read or write outside the mapping, loop, block
 * or crash: every index and length read from shared memory is checked, and
 * a record that does not make sense marks the channel broken
 * (SHOAL_EPROTO-like: shoal__chan_peek answers SHOAL_EINVAL for ever). It
 * cannot resize the region under us (the memfd is sealed at its size: a
 * shrink would make our next touch past the new end a SIGBUS). Nor can
 * anything it does to its descriptors: each side's doorbell ends are
 * open file descriptions of their own (its flags are not ours), used
 * without ever waiting (MSG_DONTWAIT), and its shutdown or close of its
 * ends does not reach ours. What it can do is garble what it receives,
 * which harms nobody but itself. The protocol is at the top of chan.c.
 */
#ifndef SHOAL_IPC_CHAN_H
#define SHOAL_IPC_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest record payload, whatever the ring size. */
#define SHOAL_CHAN_RECORD_MAX (1u << 20)
/* A record's header in the ring. A record takes at most half its ring,
 * header included: the largest payload a ring of s bytes (a power of two)
 * ever takes is SHOAL_CHAN_LEN_MAX(s); a larger one is refused
 * (SHOAL_EINVAL), however empty the ring. */
#define SHOAL_CHAN_RECORD_HDR 16u
#define SHOAL_CHAN_LEN_MAX(s)                                                                      \
    ((s) / 2 - SHOAL_CHAN_RECORD_HDR < SHOAL_CHAN_RECORD_MAX ? (s) / 2 - SHOAL_CHAN_RECORD_HDR     \
                                                             : SHOAL_CHAN_RECORD_MAX)

typedef struct shoal_chan_s shoal_chan_t;

/* The parent's side: a new region with two rings of ring_bytes each (a
 * power of two, >= 64 KiB, <= 256 MiB) and `user_bytes` of user area
 * (zeroed). SHOAL_OK, SHOAL_EINVAL, SHOAL_ENOMEM (or a system limit, as
 * SHOAL_ENOMEM). */
int shoal__chan_create(size_t ring_bytes, size_t user_bytes, shoal_chan_t **out);
/* The descriptors a child needs to attach: the region, and the child's
 * ends of ring 0's doorbell (it is woken through it) and of ring 1's (it
 * wakes the parent through it) -- never the parent's own ends. They stay
 * the parent's (close-on-exec: the launcher duplicates them into the
 * child), the doorbell ends until shoal__chan_handed, the region until
 * shoal__chan_destroy. */
void shoal__chan_fds(const shoal_chan_t *c, int fds[3]);
/* The child has its copies of the descriptors (its process was started):
 * the parent closes its own of the child's doorbell ends, which it never
 * uses (three descriptors per channel from then on: the region and its own
 * two ends). shoal__chan_fds's doorbell ends are -1 after. The parent's
 * side; once. */
void shoal__chan_handed(shoal_chan_t *c);
/* The child's side, from the three descriptors (it takes them over):
 * checks the region's header (magic, version, sizes) before using it.
 * SHOAL_OK, SHOAL_EINVAL (not such a region), SHOAL_ENOMEM. */
int shoal__chan_attach(const int fds[3], shoal_chan_t **out);
/* Unmaps and closes this side's. */
void shoal__chan_destroy(shoal_chan_t *c);

/* The user area, and its size. Both sides see the same bytes. */
void *shoal__chan_user(const shoal_chan_t *c, size_t *size);

/* Sends one record (tag, then a's bytes then b's; either may be empty) on
 * this side's outbound ring. SHOAL_OK; SHOAL_EBUSY when the ring has no
 * room now; SHOAL_EINVAL when too large (over SHOAL_CHAN_LEN_MAX of the
 * ring: it never fits) or the ring is broken (shoal__chan_out_broken). When
 * `ring` is set the consumer is woken if it sleeps (else call
 * shoal__chan_ring after a batch). Any thread. */
int shoal__chan_send(shoal_chan_t *c, uint32_t tag, const void *a, size_t alen, const void *b,
                     size_t blen, bool ring);
/* Wakes the consumer of the outbound ring if it sleeps. Any thread. */
void shoal__chan_ring(shoal_chan_t *c);

/* The next record of the inbound ring, left in place: SHOAL_OK with *tag,
 * *data (valid until shoal__chan_consume; it is shared memory, so copy
 * what must not change under you) and *len; SHOAL_EBUSY when there is none
 * yet; SHOAL_EINVAL when the ring makes no sense (from then on always).
 * The consumer thread only. */
int shoal__chan_peek(shoal_chan_t *c, uint32_t *tag, const void **data, size_t *len);
/* Done with the record peek gave: its room goes back to the producers. */
void shoal__chan_consume(shoal_chan_t *c);
/* Sleeps until a record is there (or was, when it returns), the producer
 * rang, or timeout_ms passed (-1: no limit). Spins spin_us first. Returns
 * true if a record is there -- never on a broken ring (shoal__chan_broken:
 * nothing is taken from it any more, so there is nothing to wake for). The
 * consumer thread only. */
bool shoal__chan_wait(shoal_chan_t *c, int timeout_ms, unsigned spin_us);
/* The inbound doorbell, for poll(): readable when the producer rang. A
 * thread that polls it among other descriptors arms it first -- arm
 * returns true when a record is there already (then do not sleep; never on
 * a broken ring, as wait) -- and disarms it after the poll (which also
 * clears it: the rings it found queued, at most 64, are returned). */
int shoal__chan_wake_fd(const shoal_chan_t *c);
bool shoal__chan_arm(shoal_chan_t *c);
unsigned shoal__chan_disarm(shoal_chan_t *c);
/* Whether producers have taken room in the inbound ring that the consumer
 * has not consumed: a record there, or one being written (a producer
 * between its reservation and its stamp). A look; never on a broken ring.
 * The consumer thread only. */
bool shoal__chan_in_pending(const shoal_chan_t *c);
/* Whether the channel was found broken (this side's inbound ring). */
bool shoal__chan_broken(const shoal_chan_t *c);
/* Whether this side's outbound ring was found broken (the consumer's head,
 * or the tail, made no sense): shoal__chan_send answers SHOAL_EINVAL from
 * then on. */
bool shoal__chan_out_broken(const shoal_chan_t *c);
/* Bytes free in this side's outbound ring now, and its size: a look, not
 * a promise (producers and the consumer move on). 0 free when the
 * consumer's head makes no sense. Any thread of the producing process. */
uint64_t shoal__chan_out_free(const shoal_chan_t *c, uint64_t *size);

#endif
