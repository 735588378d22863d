/* held.c - the members an actor holds from checkout pools (held.h). */
#include "actor/held.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "actor/ctx.h"
#include "actor/send.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"

/* A priority cast: never refused as full, and sent without memory to
 * spare (send.h: shoal__send_reserved). A pool that has ended has nothing
 * to take it back. */
void shoal__held_send_back(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from,
                           shoal_pid_t pool, shoal_pid_t member, int how)
{
    shoal_held_return_t r = {.member = member, .how = how};
    int rc = shoal__send_reserved(rt, tc, from, pool, SHOAL__CHECKOUT_RETURN, &r, sizeof r);
    if (rc != SHOAL_OK && rc != SHOAL_ENOPROC)
        shoal__log(rt, SHOAL_LOG_ERROR, from, NULL,
                   "could not give member <%" PRIu32 ".%" PRIu32 "> back to its pool <%" PRIu32
                   ".%" PRIu32 ">: %s (the reserve of envelopes used up too); the pool holds it "
                   "as in use",
                   shoal__pid_slot(member), shoal__pid_gen(member), shoal__pid_slot(pool),
                   shoal__pid_gen(pool), shoal_strerror(rc));
}

static shoal_checkout_member_t grant_of(const shoal_env_t *e)
{
    shoal_checkout_member_t g;
    memcpy(&g, shoal__env_data(e), sizeof g);
    return g;
}

bool shoal__held_is_grant(const shoal_env_t *e)
{
    /* From the pool it names (a grant is always the pool's reply, whatever
     * thread sends it: checkout_take.c, shoal__co_grant_send). A reply of
     * that type and size from anyone else -- an actor that passes on a
     * take's answer it got, or one that makes one up -- is an ordinary
     * reply: its receiver holds no member by it, and gives none back for
     * it (one given back so, while its holder still used it, went to the
     * next taker: two consumers on one member). */
    return shoal__env_kind(e) == SHOAL_MSG_REPLY && e->type == SHOAL_CHECKOUT_MEMBER &&
           !(shoal__env_flags(e) & SHOAL_ENV_STATUS) &&
           e->size == sizeof(shoal_checkout_member_t) && grant_of(e).pool == e->from;
}

void shoal__held_give_back(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t from,
                           const shoal_env_t *e)
{
    shoal_checkout_member_t g = grant_of(e);
    shoal__held_send_back(rt, tc, from, g.pool, g.member, SHOAL_RETURN_OK);
}

int shoal__held_reply(struct shoal_ctx_s *ctx, const shoal_env_t *e, bool pending)
{
    if (!shoal__held_is_grant(e))
        return pending ? SHOAL_OK : SHOAL__HELD_DROP;
    if (!pending) {
        shoal__held_give_back(ctx->rt, ctx->tc, ctx->self, e);
        return SHOAL__HELD_DROP;
    }
    shoal_checkout_member_t g = grant_of(e);
    if (shoal__held_add(ctx, g.member, g.pool, 0) != SHOAL_OK) {
        /* Untracked, it could never be given back: it goes back now. */
        shoal__held_send_back(ctx->rt, ctx->tc, ctx->self, g.pool, g.member, SHOAL_RETURN_OK);
        return SHOAL_ENOMEM;
    }
    return SHOAL_OK;
}

int shoal__held_add(struct shoal_ctx_s *ctx, shoal_pid_t member, shoal_pid_t pool, uint32_t seat)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x == NULL)
        x = ctx->b->ext = calloc(1, sizeof *x);
    shoal_held_t *h = x ? shoal__grow(x->held, x->nheld, &x->held_cap, sizeof *h, 4) : NULL;
    if (h == NULL)
        return SHOAL_ENOMEM;
    x->held = h;
    x->held[x->nheld++] = (shoal_held_t){member, pool, seat};
    return SHOAL_OK;
}

/* The index of member in the table, or -1. */
static int64_t find(const shoal_actor_ext_t *x, shoal_pid_t member)
{
    for (uint32_t i = 0; x != NULL && i < x->nheld; i++)
        if (x->held[i].member == member)
            return i;
    return -1;
}

int shoal__held_take_back(struct shoal_ctx_s *ctx, shoal_pid_t member, int how, shoal_held_t *out)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    int64_t i = find(x, member);
    if (i < 0 || (how != SHOAL_RETURN_OK && how != SHOAL_RETURN_FAIL))
        return SHOAL_EINVAL;
    *out = x->held[i];
    x->held[i] = x->held[--x->nheld];
    return SHOAL_OK;
}

void shoal__held_exit(struct shoal_ctx_s *ctx, shoal_pid_t from)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    int64_t i = find(x, from);
    if (i >= 0)
        x->held[i] = x->held[--x->nheld];
}

void shoal__held_end(struct shoal_ctx_s *ctx, int reason)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x == NULL)
        return;
    int how =
        reason == SHOAL_OK || reason == SHOAL_ESHUTDOWN ? SHOAL_RETURN_OK : SHOAL__RETURN_CRASHED;
    for (uint32_t i = 0; i < x->nheld; i++)
        shoal__held_send_back(ctx->rt, ctx->tc, ctx->self, x->held[i].pool, x->held[i].member, how);
    free(x->held);
    x->held = NULL;
    x->nheld = 0;
    x->held_cap = 0;
}
