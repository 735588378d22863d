/* checkout_members.h - a checkout pool's members and their seats
 * (checkout_members.c), and the seats found by their members' pids
 * (checkout_index.c). Under the pool's lock, as all of checkout.h's state;
 * the protocol is checkout.h's (MEMBERS). */
#ifndef SHOAL_POOL_CHECKOUT_MEMBERS_H
#define SHOAL_POOL_CHECKOUT_MEMBERS_H

#include "pool/checkout.h"

/* checkout_index.c: the seats by their members' pids. */
/* Room for `seats` seats at most half the table: grown (rebuilt) if
 * needed; SHOAL_ENOMEM (no memory, or past SHOAL_CO_INDEX_MAX seats)
 * leaves it as it was. */
#define SHOAL_CO_INDEX_MAX (UINT32_C(1) << 30)
int shoal__co_index_reserve(shoal_checkout_t *co, uint32_t seats);
/* Seat i, just given its pid, into the table; out of it, before it empties. */
void shoal__co_index_put(shoal_checkout_t *co, uint32_t i);
void shoal__co_index_del(shoal_checkout_t *co, uint32_t i);
/* The seat whose member is pid (not EMPTY), or -1. */
int64_t shoal__co_find(const shoal_checkout_t *co, shoal_pid_t pid);

/* checkout_members.c: seats and the members in them. */
/* The pool's start: its `init` members (each tells when it has started). */
int shoal__co_start_init(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* Members alive (not ending), counted seat by seat: the stats call's
 * pool_size, which must equal in_use + free + starting. */
uint32_t shoal__co_live(const shoal_checkout_t *co);
/* Whether the seats agree with the counts and the free FIFO (a debug
 * check after each of the pool actor's callbacks); else why not. */
bool shoal__co_consistent(const shoal_checkout_t *co, char *why, size_t size);
/* Starts members while the pool wants more (init, takers waiting). */
void shoal__co_fill(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* Every live member's mailbox limit from now on (SET_MAILBOX). */
void shoal__co_set_limit(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint32_t limit);
/* Stops the member in seat i (it ends; its EXIT empties the seat). */
void shoal__co_stop(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint32_t i);
void shoal__co_free_push(shoal_checkout_t *co, uint32_t i);
uint32_t shoal__co_free_pop(shoal_checkout_t *co);
void shoal__co_free_remove(shoal_checkout_t *co, uint32_t i);
/* Whether FREE seat i is in the FIFO (not while it is being offered). */
bool shoal__co_free_listed(const shoal_checkout_t *co, uint32_t i);
/* Culling, lifetimes, leases and start deadlines at time now. */
void shoal__co_sweep(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint64_t now);
/* The earliest deadline of the seats (starts, leases), UINT64_MAX: none. */
uint64_t shoal__co_seats_next(const shoal_checkout_t *co);
/* A member's lifetime's end, drawn with the jitter, from now. */
uint64_t shoal__co_lifetime(shoal_checkout_t *co, uint64_t now);
/* A member's start failed (its init, its deadline, an end before its
 * notice): counted, `what` logged if it is the first of a round; past
 * add_member_retry in a row (checkout.h: failures), starts wait retry_ms,
 * logged once, and with none starting the takers and transactions
 * waiting hear SHOAL_ENOMEMBERS. */
void shoal__co_start_failed(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint64_t now,
                            const char *what);
/* A member ended by a failure (checkout.h: failures): a restart, or the
 * pool is degraded and starts wait. */
void shoal__co_member_failed(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint64_t now,
                             int reason);
/* A take could not wait: one member is started for the next, if the pool
 * is below max and none is starting beyond the takers waiting. */
void shoal__co_start_spare(struct shoal_ctx_s *ctx, struct shoal_pool_s *p);
/* The next free member fit to give out (one past its lifetime is
 * recycled on the way), or SHOAL_CO_NIL. */
uint32_t shoal__co_free_take(struct shoal_ctx_s *ctx, struct shoal_pool_s *p, uint64_t now);

#endif
