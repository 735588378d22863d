/* producer.c - what the producers of W1, W4 and W5 share: sending a run of
 * MSG_WORK (bench_send_run: shoal_send_many, or one by one under
 * SHOAL_BENCH_SEND=one), the MSG_DONE markers (bench_send_done), and how a
 * turn ends after a refused send: waiting for SHOAL_MSG_ROOM
 * (bench_wait_room) or yielding (bench_yield, bench_next_turn).
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

int bench_wait_room(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t *waits)
{
    if (shoal_notify_room(ctx, to) != SHOAL_OK)
        return 0;
    (*waits)++;
    return 1;
}

int bench_send_many(void)
{
    static int many = -1; /* read once: the producers' turns ask often */
    if (many < 0) {
        const char *v = getenv("SHOAL_BENCH_SEND");
        many = v == NULL || strcmp(v, "one") != 0;
    }
    return many;
}

int bench_send_run(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t first, uint64_t n, uint64_t *sent)
{
    int rc = SHOAL_OK;
    *sent = 0;
    if (!bench_send_many()) {
        for (uint64_t v = first; *sent < n; v++, ++*sent)
            if ((rc = shoal_send(ctx, to, MSG_WORK, &v, sizeof v)) != SHOAL_OK)
                break;
        return rc;
    }
    uint64_t vals[256];
    while (*sent < n) {
        size_t m = n - *sent < 256 ? (size_t)(n - *sent) : 256, took;
        for (size_t j = 0; j < m; j++)
            vals[j] = first + *sent + j;
        rc = shoal_send_many(ctx, to, MSG_WORK, vals, sizeof vals[0], m, &took);
        *sent += took;
        if (rc != SHOAL_OK)
            break;
    }
    return rc;
}

/* ---- yielding ----------------------------------------------------------- */

int bench_send_done(shoal_ctx_t *ctx, const shoal_pid_t *workers, uint64_t n, uint64_t *sent)
{
    int rc = SHOAL_OK;
    while (*sent < n && (rc = shoal_send(ctx, workers[*sent], MSG_DONE, NULL, 0)) == SHOAL_OK)
        (*sent)++;
    return rc;
}

void bench_next_turn(shoal_ctx_t *ctx, int rc, uint64_t *full)
{
    if (rc == SHOAL_EFULL || rc == SHOAL_EBUSY) {
        (*full)++;
        rc = bench_yield(ctx);
    } else if (rc != SHOAL_OK) {
        shoal_panic(ctx, "send: %s", shoal_strerror(rc));
    } else {
        rc = shoal_send(ctx, shoal_self(ctx), MSG_CONT, NULL, 0);
    }
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "continue: %s", shoal_strerror(rc));
}

int bench_yield(shoal_ctx_t *ctx)
{
    /* MSG_CONT to ourselves, and shoal_yield so it is not handled in this
     * turn: the actors queued on this worker (the consumers) run first. */
    int rc = shoal_send(ctx, shoal_self(ctx), MSG_CONT, NULL, 0);
    shoal_yield(ctx);
    return rc;
}
