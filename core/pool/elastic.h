/* elastic.h - elastic pools (shoal/pool.h): idle expiry, lazy grow and
 * max_waiting (elastic.c), autoscale (autoscale.c), and what an elastic
 * pool's actor keeps between its ticks -- owned by the pool's actor:
 * touched in its turns only. */
#ifndef SHOAL_POOL_ELASTIC_H
#define SHOAL_POOL_ELASTIC_H

#include <stdbool.h>
#include <stdint.h>

#include "pool/pool.h"

/* A forward pool's worker as the tick last saw it (elastic.c). */
typedef struct shoal_seen_s {
    shoal_pid_t pid;
    uint32_t deq;
    uint64_t since;
} shoal_seen_t;

/* Autoscale's sums at the last tick, and its state (autoscale.c). */
typedef struct shoal_autoscale_state_s {
    bool primed; /* the sums below have been read once */
    uint64_t at_ns;
    uint64_t busy_ns, forwarded, unhandled, settled;
    uint64_t wait[SHOAL_HIST_BUCKETS];
    uint32_t live;           /* workers at the last tick */
    uint64_t pressure_since; /* 0: no pressure now */
    uint64_t calm_since;     /* 0: not calm now */
    uint64_t changed_at;     /* the last change of size (a decision or a command), or 0 */
} shoal_autoscale_state_t;

struct shoal_elastic_s {
    shoal_seen_t *seen; /* by FIFO slot: the record's cap of them */
    shoal_autoscale_state_t as;
};

/* elastic.c: idle expiry, lazy grow, max_waiting (shoal/pool.h: elastic
 * pools), and the tick they share with autoscale. */
#define SHOAL__POOL_TICK_ELASTIC 0xFFFE0109u /* the pool's elastic tick */
#define SHOAL__POOL_TICK_GROW 0xFFFE010Au    /* a sender: the grow list has sends */
/* Whether spec's elastic settings suit it: SHOAL_OK, SHOAL_EINVAL (bad
 * thresholds), SHOAL_ENOTSUP (a pool of pools, an isolated pool). */
int shoal__pool_elastic_check(const shoal_pool_spec_t *spec, const shoal_pool_elastic_t *el,
                              bool remote);
/* The pool's actor applies el (at start: the spec's; SET_ELASTIC later). */
int shoal__pool_set_elastic(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                            const shoal_pool_elastic_t *el);
/* SHOAL_POOL_SET_BOUNDS: the size after, or a negative SHOAL_E*. */
int shoal__pool_set_bounds(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t min, uint32_t max);
/* At the pool's start (its init): the spec's elastic settings applied.
 * SHOAL_OK, or SHOAL_ENOMEM (their state could not be allocated) with the
 * text the start fails with in why: the pool does not run without them. */
int shoal__pool_elastic_start(struct shoal_ctx_s *ctx, shoal_pool_t *p, char *why, size_t why_size);
/* The tick (SHOAL__POOL_TICK_ELASTIC) and a sender's grow tick. */
void shoal__pool_on_elastic_tick(struct shoal_ctx_s *ctx, shoal_pool_t *p);
void shoal__pool_on_grow(struct shoal_ctx_s *ctx, shoal_pool_t *p);
/* A sender (forward.c), every worker full: takes e for a worker to be
 * started (SHOAL_OK: the grow list owns it, counted forwarded) or refuses
 * (SHOAL_EBUSY; the caller keeps e). n: the workers it saw. */
int shoal__pool_lazy_take(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e,
                          uint32_t n);
/* A pull pool's sender put an item and no member waits for work. */
void shoal__pool_lazy_ask(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p);
/* The pool's actor ends: what the grow list holds is dropped (counted,
 * calls answered); senders that push after it sweep themselves. */
void shoal__pool_grow_sweep(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p);
/* A resize by command (SET_SIZE and the like, a reload): autoscale holds
 * it until its next decision (autoscale.c). */
void shoal__pool_resized_by_hand(shoal_pool_t *p);
/* How many senders wait for room in p now (any thread holding a
 * reference). */
uint32_t shoal__pool_waiting(shoal_pool_t *p);
/* waiter waits for room in p, registered by p's PID (actor/room.h) within
 * max_waiting; one past it is SHOAL_EOVERLOAD, counted in waits_refused
 * (a forward or checkout pool's room op; a pull pool keeps its own list). */
int shoal__pool_room_add(shoal_runtime_t *rt, shoal_pool_t *p, shoal_pid_t waiter);
/* Frees what el holds (with the record). */
void shoal__pool_elastic_free(struct shoal_elastic_s *el);

/* autoscale.c: one tick's measuring and deciding (the pool's actor). */
void shoal__autoscale_tick(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now);
/* A busy threshold as the config writes it: "80%", "82.5%" (permille in). */
void shoal__autoscale_pct(uint32_t permille, char *buf, size_t size);

#endif
