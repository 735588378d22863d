/* ctx.c - what a handler can do through its context (shoal/ctx.h), and the
 * embedding API's spawn and stop. */
#include "actor/ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "actor/call.h"
#include "actor/send.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"

SHOAL_API shoal_pid_t shoal_self(const shoal_ctx_t *ctx) { return ctx->self; }

SHOAL_API shoal_runtime_t *shoal_ctx_runtime(const shoal_ctx_t *ctx) { return ctx->rt; }

int shoal__children_reserve(struct shoal_ctx_s *ctx)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x == NULL && (x = ctx->b->ext = calloc(1, sizeof *x)) == NULL)
        return SHOAL_ENOMEM;
    shoal_pid_t *nc = shoal__grow(x->children, x->nchildren, &x->children_cap, sizeof *nc, 4);
    if (nc == NULL)
        return SHOAL_ENOMEM;
    x->children = nc;
    return SHOAL_OK;
}

int shoal__children_add(struct shoal_ctx_s *ctx, shoal_pid_t child)
{
    if (shoal__children_reserve(ctx) != SHOAL_OK) {
        /* Untracked, it would outlive us: it ends now. */
        shoal__send_system(ctx->rt, ctx->tc, child, SHOAL_ENV_STOP, ctx->self,
                           (uint32_t)SHOAL_ESHUTDOWN);
        return SHOAL_ENOMEM;
    }
    shoal_actor_ext_t *x = ctx->b->ext;
    x->children[x->nchildren++] = child;
    return SHOAL_OK;
}

void shoal__children_remove(struct shoal_ctx_s *ctx, shoal_pid_t child)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    for (uint32_t i = 0; x != NULL && i < x->nchildren; i++) {
        if (x->children[i] == child) {
            x->children[i] = x->children[--x->nchildren];
            return;
        }
    }
}

static uint32_t opts_limit(const shoal_spawn_opts_t *opts)
{
    return opts == NULL || opts->mailbox_limit == 0 ? SHOAL_MAILBOX_UNBOUNDED : opts->mailbox_limit;
}

SHOAL_API int shoal_spawn(shoal_ctx_t *ctx, const shoal_behaviour_t *behaviour, const void *args,
                          const shoal_spawn_opts_t *opts, shoal_pid_t *pid)
{
    if (pid == NULL)
        return SHOAL_EINVAL;
    int rc = shoal__actor_spawn(ctx->rt, ctx->tc, ctx->self, behaviour, args, opts_limit(opts),
                                SHOAL_ACTOR_PLAIN, NULL, pid);
    if (rc != SHOAL_OK)
        return rc;
    if ((rc = shoal__children_add(ctx, *pid)) != SHOAL_OK)
        *pid = SHOAL_PID_NONE;
    return rc;
}

SHOAL_API int shoal_runtime_spawn(shoal_runtime_t *rt, const shoal_behaviour_t *behaviour,
                                  const void *args, const shoal_spawn_opts_t *opts,
                                  shoal_pid_t *pid)
{
    if (pid == NULL)
        return SHOAL_EINVAL;
    return shoal__actor_spawn(rt, shoal__tcache_get(rt), SHOAL_PID_NONE, behaviour, args,
                              opts_limit(opts), SHOAL_ACTOR_PLAIN, NULL, pid);
}

SHOAL_API void shoal_exit(shoal_ctx_t *ctx, int reason) { shoal__ctx_fail(ctx, reason); }

SHOAL_API void shoal_yield(shoal_ctx_t *ctx) { ctx->yield = true; }

SHOAL_API int shoal_stop(shoal_ctx_t *ctx, shoal_pid_t pid)
{
    return shoal__send_system(ctx->rt, ctx->tc, pid, SHOAL_ENV_STOP, ctx->self,
                              (uint32_t)SHOAL_ESHUTDOWN);
}

SHOAL_API int shoal_runtime_stop_actor(shoal_runtime_t *rt, shoal_pid_t pid)
{
    return shoal__send_system(rt, shoal__tcache_get(rt), pid, SHOAL_ENV_STOP, SHOAL_PID_NONE,
                              (uint32_t)SHOAL_ESHUTDOWN);
}

SHOAL_API void shoal_panic(shoal_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, ctx->name, "panic: %s", what);
    snprintf(ctx->panic_text, sizeof ctx->panic_text, "panic: %.240s", what);
    longjmp(ctx->panic, 1);
}

SHOAL_API void shoal_log(shoal_ctx_t *ctx, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    shoal__vlog(ctx->rt, level, ctx->self, ctx->name, fmt, ap);
    va_end(ap);
}
