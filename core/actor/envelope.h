/* envelope.h - one message in flight: 64 bytes, payloads up to 32 bytes
 * inline, larger ones on the heap (copied, or handed over by the sender).
 *
 * Envelopes come from per-thread caches (tcache.h) that exchange batches
 * with a runtime-wide depot, so the steady path allocates nothing.
 */
#ifndef SHOAL_ACTOR_ENVELOPE_H
#define SHOAL_ACTOR_ENVELOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "actor/mailbox.h"
#include "runtime/tcache.h"
#include "shoal/message.h"

/* Envelope kinds: the public shoal_msg_kind_t values, plus system ones. */
enum {
    SHOAL_ENV_INIT = 16,      /* run init; payload: the args pointer */
    SHOAL_ENV_STOP = 17,      /* end with the reason in `type` */
    SHOAL_ENV_INSPECT = 18,   /* answer with the actor's inspection (JSON), like a call */
    SHOAL_ENV_RETIRE = 19,    /* from its pool: handle what is queued, then end */
    SHOAL_ENV_LIMIT = 20,     /* from its pool: the user mailbox limit is now `type` */
    SHOAL_ENV_STARTED = 21,   /* to the parent that asked (notify_start): the child's start
                                 ended with status `type` (0: init succeeded); payload: why
                                 not, as text (shoal__actor_started) */
    SHOAL_ENV_CALL_TICK = 22, /* to itself: a pending call's deadline may have come
                                 (call.c: call timeouts) */
    SHOAL_ENV_LISTED = 23,    /* from its pool: it is in the worker table now (a pull
                                 member takes work only from then on: pull.h) */
    SHOAL_ENV_OPEN = 24,      /* from its pool: a gated actor handles its messages from
                                 now on (actor.h: shoal_spawn_t.gated) */
};

/* Envelope flags. */
enum {
    SHOAL_ENV_HEAP = 0x1,       /* payload.heap owns a buffer */
    SHOAL_ENV_PRIORITY = 0x2,   /* sent to the system mailbox by a user */
    SHOAL_ENV_STATUS = 0x4,     /* REPLY carrying an error: `type` holds the status */
    SHOAL_ENV_HANDBACK = 0x8,   /* a pool worker's queued message, back to its pool */
    SHOAL_ENV_STAMP = 0x10,     /* carries its forward time (shoal__env_stamp) */
    SHOAL_ENV_POOLED = 0x20,    /* came through a pool: its worker counts it for the pool */
    SHOAL_ENV_UNBOUNDED = 0x40, /* in an unbounded user mailbox: counted out when popped */
    SHOAL_ENV_KEEP = 0x80,      /* a group may give it again if its handler fails: the
                                   payload outlives the handler (freed with the envelope),
                                   and a cast's ref field counts the times it was given again */
};

typedef struct shoal_env_s {
    shoal_mq_node_t node; /* first: the mailbox links envelopes through it */
    shoal_pid_t from;
    uint64_t meta; /* ref << 16 | kind << 8 | flags */
    uint32_t type;
    uint32_t size;
    union {
        _Alignas(8) unsigned char bytes[SHOAL_INLINE_MAX];
        struct {
            void *ptr;
            shoal_free_fn free_fn;
        } heap;
    } payload;
} shoal_env_t;

_Static_assert(sizeof(shoal_env_t) == 64, "an envelope is one cache line");

#define SHOAL_REF_MAX ((UINT64_C(1) << 48) - 1)

static inline shoal_env_t *shoal__env_of(shoal_mq_node_t *n) { return (shoal_env_t *)n; }
static inline unsigned shoal__env_kind(const shoal_env_t *e)
{
    return (unsigned)(e->meta >> 8) & 0xff;
}
static inline unsigned shoal__env_flags(const shoal_env_t *e) { return (unsigned)e->meta & 0xff; }
static inline shoal_ref_t shoal__env_ref(const shoal_env_t *e) { return e->meta >> 16; }
static inline void shoal__env_set_meta(shoal_env_t *e, shoal_ref_t ref, unsigned kind,
                                       unsigned flags)
{
    e->meta = (ref & SHOAL_REF_MAX) << 16 | (uint64_t)(kind & 0xff) << 8 | (flags & 0xff);
}
static inline const void *shoal__env_data(const shoal_env_t *e)
{
    if (e->size == 0)
        return NULL;
    return (shoal__env_flags(e) & SHOAL_ENV_HEAP) ? e->payload.heap.ptr : e->payload.bytes;
}

/* True for a message from the user mailbox (not sent with priority). */
static inline bool shoal__env_is_user(const shoal_env_t *e)
{
    unsigned kind = shoal__env_kind(e);
    return (kind == SHOAL_MSG_CAST || kind == SHOAL_MSG_CALL) &&
           !(shoal__env_flags(e) & SHOAL_ENV_PRIORITY);
}

/* True for a message that came through a group: only those count for it (a
 * member may also get messages sent to its own PID, e.g. to itself). */
static inline bool shoal__env_is_pooled(const shoal_env_t *e)
{
    return shoal__env_is_user(e) && (shoal__env_flags(e) & SHOAL_ENV_POOLED) != 0;
}

/* Where a forwarded message keeps its send time for the pool's latency
 * histograms: the last 8 payload bytes, free when the payload is on the heap
 * or at most 24 bytes. NULL when there is no room. */
static inline uint64_t *shoal__env_stamp(shoal_env_t *e)
{
    if ((shoal__env_flags(e) & SHOAL_ENV_HEAP) || e->size <= SHOAL_INLINE_MAX - 8)
        return (uint64_t *)(void *)(e->payload.bytes + SHOAL_INLINE_MAX - 8);
    return NULL;
}

/* Slow paths of the two below (envelope.c): a thread's stack is empty
 * (a batch from the depot, else a slab; NULL on ENOMEM), or full (the
 * older batch goes to the depot). */
shoal_env_t *shoal__env_refill(shoal_tcache_t *tc);
void shoal__env_spill(shoal_tcache_t *tc, shoal_env_t *e);
/* As shoal__env_refill, then one of the runtime's reserve (envelope.c:
 * THE RESERVE); NULL only when that is empty too. */
shoal_env_t *shoal__env_refill_reserved(shoal_tcache_t *tc);

/* Allocates an envelope from the calling thread's cache; NULL on ENOMEM. */
static inline shoal_env_t *shoal__env_alloc(shoal_tcache_t *tc)
{
    if (__builtin_expect(tc->env_nfree == 0, 0))
        return shoal__env_refill(tc);
    return tc->envs[--tc->env_nfree];
}
/* As shoal__env_alloc, then from the runtime's reserve (envelope.c: THE
 * RESERVE). */
static inline shoal_env_t *shoal__env_alloc_reserved(shoal_tcache_t *tc)
{
    if (__builtin_expect(tc->env_nfree == 0, 0))
        return shoal__env_refill_reserved(tc);
    return tc->envs[--tc->env_nfree];
}

/* Releases the payload (if on the heap) and the envelope. */
void shoal__env_drop_payload(shoal_env_t *e);
static inline void shoal__env_free(shoal_tcache_t *tc, shoal_env_t *e)
{
    if (__builtin_expect((e->meta & SHOAL_ENV_HEAP) != 0, 0))
        shoal__env_drop_payload(e);
    if (__builtin_expect(tc->env_nfree >= SHOAL_ENV_STACK - 1, 0))
        shoal__env_spill(tc, e);
    else
        tc->envs[tc->env_nfree++] = e;
}
/* A copy of e in a fresh envelope that takes over e's heap payload (e no
 * longer owns it): for moving a message out of a mailbox, whose queue keeps
 * the popped node. NULL on ENOMEM (e unchanged). */
shoal_env_t *shoal__env_move(struct shoal_tcache_s *tc, shoal_env_t *e);
/* (shoal__env_drop_payload, above: releases only the heap payload, if
 * any, after the handler ran.) */

/* Copies n <= SHOAL_INLINE_MAX bytes with fixed-size moves (two that may
 * overlap), reading and writing only [0, n): no call to memcpy for the
 * payloads most messages carry. */
static inline void shoal__copy_small(unsigned char *dst, const void *src, size_t n)
{
    const unsigned char *s = src;
    if (n >= 16) {
        __builtin_memcpy(dst, s, 16);
        __builtin_memcpy(dst + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        __builtin_memcpy(dst, s, 8);
        __builtin_memcpy(dst + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        __builtin_memcpy(dst, s, 4);
        __builtin_memcpy(dst + n - 4, s + n - 4, 4);
    } else if (n != 0) {
        dst[0] = s[0];
        dst[n / 2] = s[n / 2];
        dst[n - 1] = s[n - 1];
    }
}

/* A payload too large for the envelope: copied to the heap (envelope.c). */
shoal_env_t *shoal__env_new_heap(shoal_tcache_t *tc, unsigned kind, unsigned flags,
                                 shoal_pid_t from, shoal_ref_t ref, uint32_t type, const void *data,
                                 size_t size);

/* Fills e with a copy of size <= SHOAL_INLINE_MAX bytes. */
static inline void shoal__env_fill_at(shoal_env_t *e, unsigned kind, unsigned flags,
                                      shoal_pid_t from, shoal_ref_t ref, uint32_t type,
                                      const void *data, size_t size)
{
    e->from = from;
    e->type = type;
    e->size = (uint32_t)size;
    shoal__env_set_meta(e, ref, kind, flags);
    shoal__copy_small(e->payload.bytes, data, size);
}
/* As shoal__env_fill_at; e NULL is passed on. */
static inline shoal_env_t *shoal__env_fill(shoal_env_t *e, unsigned kind, unsigned flags,
                                           shoal_pid_t from, shoal_ref_t ref, uint32_t type,
                                           const void *data, size_t size)
{
    if (__builtin_expect(e == NULL, 0))
        return NULL;
    shoal__env_fill_at(e, kind, flags, from, ref, type, data, size);
    return e;
}

/* Allocates and fills an envelope with a copy of data. NULL on ENOMEM. */
static inline shoal_env_t *shoal__env_new(shoal_tcache_t *tc, unsigned kind, unsigned flags,
                                          shoal_pid_t from, shoal_ref_t ref, uint32_t type,
                                          const void *data, size_t size)
{
    if (__builtin_expect(size > SHOAL_INLINE_MAX, 0))
        return shoal__env_new_heap(tc, kind, flags, from, ref, type, data, size);
    return shoal__env_fill(shoal__env_alloc(tc), kind, flags, from, ref, type, data, size);
}
/* As shoal__env_new, for a message whose loss would lose what it stands
 * for (envelope.c: THE RESERVE), its payload at most SHOAL_INLINE_MAX:
 * from the runtime's reserve when there is no other. */
static inline shoal_env_t *shoal__env_new_reserved(shoal_tcache_t *tc, unsigned kind,
                                                   unsigned flags, shoal_pid_t from,
                                                   shoal_ref_t ref, uint32_t type, const void *data,
                                                   size_t size)
{
    return shoal__env_fill(shoal__env_alloc_reserved(tc), kind, flags, from, ref, type, data, size);
}
/* As shoal__env_new, taking ownership of data (freed with free_fn). */
shoal_env_t *shoal__env_new_owned(struct shoal_tcache_s *tc, unsigned kind, unsigned flags,
                                  shoal_pid_t from, shoal_ref_t ref, uint32_t type, void *data,
                                  size_t size, shoal_free_fn free_fn);

#endif
