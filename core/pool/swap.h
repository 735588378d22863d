/* swap.h - a pool's workers swapped for new code or args, all or nothing
 * (swap.c): the host's two steps (a reload's PREPARE, then COMMIT or
 * ABORT) and the pool actor's side of each. The pool itself is pool.h. */
#ifndef SHOAL_POOL_SWAP_H
#define SHOAL_POOL_SWAP_H

#include "pool/pool.h"

/* The host's worker swap (swap.c), in two steps so a reload can swap many
 * pools all or nothing: priority calls, each carrying the swap's token (a
 * uint64_t) and nothing else -- no pointer travels in a message, so the
 * steps need not know who sends them, and a step that arrives late (its
 * caller gave up waiting) still does what it says or nothing:
 *   PREPARE  the pool takes the swap offered under that token
 *            (shoal__pool_swap_ask: the new code, held in the record) and
 *            starts its new workers beside the old ones (not yet given
 *            work); answered when all have run init, or at the first
 *            failure (then it has stopped them): a shoal_pool_swap_result_t.
 *            No such offer (taken back by a caller that gave up): EINVAL.
 *   COMMIT   the new workers of that swap take the old ones' places in the
 *            FIFO; the old ones retire (finish their mailboxes, then end).
 *            Answered with the number replaced (uint32_t), the record's
 *            swap_done then naming its token; EINVAL if that swap is not
 *            prepared (another's token, or none). One that cannot be
 *            carried out (ENOMEM) is an ABORT, answered with its error.
 *   ABORT    that swap's new workers are stopped; the old ones never
 *            noticed. SHOAL_OK whether or not it was there. */
#define SHOAL__POOL_SWAP 0xFFFE0102u
#define SHOAL__POOL_SWAP_COMMIT 0xFFFE0103u
#define SHOAL__POOL_SWAP_ABORT 0xFFFE0104u

/* New code for a pool's workers: the spec chain (chain[0] is the pool's own
 * level; nested levels follow, linked to each other), what holds it (one
 * reference acquired for the swap: whoever ends up with it releases it, or
 * passes it to the record at COMMIT), and how many workers to start. */
typedef struct shoal_pool_swap_s {
    shoal_pool_spec_t chain[SHOAL_POOL_MAX_DEPTH];
    shoal_pool_hold_t hold;
    uint32_t size;
    /* A pool that sizes itself (elastic) and whose file's size did not
     * change keeps the size it runs with: its target, not `size`. */
    bool keep_size;
    shoal_remote_launch_t remote; /* a remote pool's: how to start the new child */
    uint64_t token;               /* set by shoal__pool_swap_ask */
} shoal_pool_swap_t;

typedef struct shoal_pool_swap_result_s {
    int32_t status; /* SHOAL_OK, or why a new worker did not start */
    uint32_t started;
    char why[256]; /* the failure's text */
} shoal_pool_swap_result_t;

/* The host's swap of a pool's workers (SHOAL__POOL_SWAP), from a thread
 * that is not a dispatcher worker, holding a reference on p (pid's
 * record). ask offers sw -- taken over, whatever happens -- under a new
 * token (*token), and asks the pool to PREPARE it, waiting up to
 * timeout_ms: the call's error, else the answer's status (r: the answer,
 * zeroed if none). An offer the pool had not taken when the wait ended is
 * taken back and freed, so a PREPARE read later finds nothing; one it had
 * taken is its own: after any failure the caller sends ABORT with *token
 * (harmless if nothing was prepared). step sends COMMIT or ABORT for
 * token: the call's error (a step that timed out stays queued and is
 * carried out when the pool's actor reads it), else the answer's status;
 * replaced (may be NULL): COMMIT's count. */
int shoal__pool_swap_ask(shoal_runtime_t *rt, shoal_pool_t *p, shoal_pid_t pid,
                         shoal_pool_swap_t *sw, uint64_t timeout_ms, uint64_t *token,
                         shoal_pool_swap_result_t *r);
/* As ask, asking interrupted(arg) (NULL: never) every SHOAL_ASK_EVERY_MS
 * while it waits: true gives the PREPARE up as a timeout does, and returns
 * SHOAL_ESHUTDOWN (the host's reload: host.h, interrupted). */
int shoal__pool_swap_ask_until(shoal_runtime_t *rt, shoal_pool_t *p, shoal_pid_t pid,
                               shoal_pool_swap_t *sw, uint64_t timeout_ms,
                               bool (*interrupted)(void *), void *arg, uint64_t *token,
                               shoal_pool_swap_result_t *r);
int shoal__pool_swap_step(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type, uint64_t token,
                          uint64_t timeout_ms, uint32_t *replaced);

/* swap.c: the worker swap's steps (see SHOAL__POOL_SWAP), in the pool
 * actor's turns. prepare returns SHOAL_DEFER when the answer comes later,
 * or an error now; commit and abort act only on the swap token names
 * (abort: 0 names whichever is prepared). */
int shoal__pool_swap_prepare(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t token,
                             shoal_pid_t from, shoal_ref_t ref);
int shoal__pool_swap_commit(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t token);
void shoal__pool_swap_abort(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t token);
/* Frees a swap no pool took: its hold's reference and its remote launch. */
void shoal__pool_swap_free(shoal_pool_swap_t *sw);
/* A start notice or an end from a worker of the swap being prepared: true
 * if pid was one (then it is dealt with). */
bool shoal__pool_swap_on_started(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid,
                                 int status, const char *why, size_t why_len);
bool shoal__pool_swap_on_exit(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid);
/* A remote pool's new child for the swap started (status 0), or not. */
void shoal__pool_swap_on_remote(struct shoal_ctx_s *ctx, shoal_pool_t *p, int status,
                                const char *why);
#endif
