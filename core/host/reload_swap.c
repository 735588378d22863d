/* reload_swap.c - a reload's worker swap, the host's side: a kept pool
 * whose code or args changed gets its new workers started beside the old
 * ones and waited for (PREPARE); reload.c commits the swap once the whole
 * reload has succeeded, or aborts it (the old workers serve on). The
 * pool's side is pool/swap.c (pool.h: shoal_pool_swap_t). Host thread.
 */
#include "host/host.h"

#include <stdio.h>
#include <stdlib.h>

#include "host/code.h"
#include "pool/pool.h"
#include "pool/swap.h"

/* Starts the new workers of hp (from cp's code, as many as cp's size, or
 * for a pool that sizes itself and whose size did not change, as many as
 * it runs) beside the old ones and waits for their init. *token: the
 * swap's, for its COMMIT or ABORT; why: the failure (then the swap is
 * aborted: the old workers serve on). */
int shoal__host_swap_prepare(shoal_host_t *h, const shoal_config_t *c, uint64_t gen,
                             shoal_host_pool_t *hp, const shoal_config_pool_t *cp, uint64_t *token,
                             char *why, size_t why_size)
{
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    const shoal_config_pool_t *leaf = NULL;
    if (sw != NULL)
        shoal__host_spec_chain(cp, sw->chain, &leaf);
    if (sw != NULL && cp->isolation == SHOAL_ISOLATION_PROCESS) {
        /* A new child process from the new code (the pool's own spec
         * names the leaf behaviour, as at its start). */
        int rc = shoal__host_isolated_spec(c, cp, gen, sw->chain, &sw->remote, why, why_size);
        if (rc != SHOAL_OK) {
            free(sw);
            return rc;
        }
    }
    shoal_code_t *code = NULL;
    int rc = SHOAL_ENOMEM;
    if (sw == NULL)
        snprintf(why, why_size, "out of memory");
    else /* the leaf's code, and a pull pool's source and dead_letter as at its start */
        rc = shoal__host_pull_spec(h, cp, &sw->chain[0], &code, why, why_size);
    if (rc != SHOAL_OK) {
        shoal__pool_swap_free(sw);
        return rc;
    }
    for (size_t i = 0; i < SHOAL_POOL_MAX_DEPTH; i++) {
        if (sw->chain[i].worker != NULL) {
            sw->chain[i].worker_args = shoal__code_args(code);
            break;
        }
    }
    /* The swap's own reference on the code, taken before ours goes: the
     * pool holds it from PREPARE on (pool.h: shoal_pool_swap_t). */
    sw->hold = shoal__code_hold(code);
    if (sw->hold.acquire != NULL)
        sw->hold.acquire(sw->hold.what);
    shoal__code_release(code);
    sw->size = cp->size;
    shoal_pool_stats_t st; /* the size it runs: kept, or the file's (shoal__host_keeps_size) */
    shoal__host_peek(hp, &st);
    sw->keep_size = shoal__host_keeps_size(hp->cp, cp, st.target_size);
    shoal_pool_swap_result_t r;
    rc = shoal__pool_swap_ask_until(h->rt, hp->rec, hp->pid, sw, SHOAL_HOST_START_TIMEOUT_MS + 5000,
                                    h->interrupted, h->interrupted_arg, token, &r);
    if (rc != SHOAL_OK) {
        snprintf(why, why_size, "%s",
                 r.why[0]                ? r.why
                 : rc == SHOAL_ETIMEDOUT ? "its new workers did not start in time"
                 : rc == SHOAL_ESHUTDOWN ? "interrupted while its new workers started"
                                         : shoal_strerror(rc));
        /* Whatever the pool did, it keeps its old workers (an ABORT that
         * times out is carried out when the pool's actor reads it, after
         * the PREPARE queued before it). A pool whose actor did not
         * answer in time is not waited for again: its ABORT is queued and
         * the reload fails now, not up to 15 s later; one that answered
         * runs, and is given the live changes' 5 s. */
        bool unanswered = rc == SHOAL_ETIMEDOUT || rc == SHOAL_ESHUTDOWN;
        shoal__pool_swap_step(h->rt, hp->pid, SHOAL__POOL_SWAP_ABORT, *token,
                              unanswered ? 1 : SHOAL_HOST_LIVE_MS, NULL);
    }
    return rc;
}
