/* inspect.c - answering an inspection: the runtime's own fields plus what
 * the behaviour's inspect callback adds, as one JSON object (shoal/inspect.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/ctx.h"
#include "runtime/runtime.h"
#include "shoal/inspect.h"

static void put(shoal_inspect_t *o, const char *s, size_t n)
{
    if (o->oom)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *nb = realloc(o->buf, cap);
        if (nb == NULL) {
            o->oom = true;
            return;
        }
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static void puts_(shoal_inspect_t *o, const char *s) { put(o, s, strlen(s)); }

static void put_string(shoal_inspect_t *o, const char *s)
{
    put(o, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(o, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            puts_(o, esc);
        } else {
            put(o, (const char *)p, 1);
        }
    }
    put(o, "\"", 1);
}

static void key(shoal_inspect_t *o, const char *k)
{
    if (o->fields++ != 0)
        put(o, ",", 1);
    put_string(o, k ? k : "");
    put(o, ":", 1);
}

SHOAL_API void shoal_inspect_int(shoal_inspect_t *o, const char *k, int64_t v)
{
    char n[32];
    key(o, k);
    snprintf(n, sizeof n, "%" PRId64, v);
    puts_(o, n);
}

SHOAL_API void shoal_inspect_uint(shoal_inspect_t *o, const char *k, uint64_t v)
{
    char n[32];
    key(o, k);
    snprintf(n, sizeof n, "%" PRIu64, v);
    puts_(o, n);
}

SHOAL_API void shoal_inspect_double(shoal_inspect_t *o, const char *k, double v)
{
    char n[40];
    key(o, k);
    if (isfinite(v)) {
        snprintf(n, sizeof n, "%.17g", v);
        puts_(o, n);
    } else {
        puts_(o, "null"); /* JSON has no NaN or infinity */
    }
}

SHOAL_API void shoal_inspect_bool(shoal_inspect_t *o, const char *k, bool v)
{
    key(o, k);
    puts_(o, v ? "true" : "false");
}

SHOAL_API void shoal_inspect_str(shoal_inspect_t *o, const char *k, const char *v)
{
    key(o, k);
    if (v == NULL)
        puts_(o, "null");
    else
        put_string(o, v);
}

void shoal__inspect_raw(shoal_inspect_t *o, const char *k, const char *json)
{
    key(o, k);
    puts_(o, json);
}

int shoal__inspect_answer(struct shoal_ctx_s *ctx, shoal_env_t *req)
{
    /* In the ctx, not on the stack: after_panic (turn.c) frees it. */
    shoal_inspect_t *op = &ctx->inspect;
    *op = (shoal_inspect_t){0};
#define o (*op)
    char pid[32];
    snprintf(pid, sizeof pid, "%" PRIu32 ".%" PRIu32, shoal__pid_slot(ctx->self),
             shoal__pid_gen(ctx->self));
    const shoal_behaviour_t *b = ctx->b->beh;
    uint32_t limit = shoal__actor_limit(ctx->a); /* without the room flag (room.h) */
    uint64_t rsv = atomic_load_explicit(&ctx->a->user_rsv, memory_order_relaxed);
    puts_(&o, "{");
    shoal_inspect_str(&o, "pid", pid);
    shoal_inspect_str(&o, "behaviour", b->name);
    shoal_inspect_uint(&o, "mailbox_depth", shoal__rsv_depth(rsv, ctx->deq));
    if (limit != 0) {
        shoal_inspect_uint(&o, "mailbox_limit", limit);
    } else {
        key(&o, "mailbox_limit");
        puts_(&o, "null");
    }
    key(&o, "info");
    puts_(&o, "{");
    unsigned outer = o.fields;
    o.fields = 0;
    int rc = b->inspect ? b->inspect(ctx, ctx->b->state, &o) : SHOAL_OK;
    o.fields = outer;
    puts_(&o, "}}");

    struct shoal_reply_s reply = {.tc = ctx->tc, .env = NULL, .status = SHOAL_OK};
    if (o.oom) {
        reply.status = SHOAL_ENOMEM;
    } else if (rc != SHOAL_OK) {
        reply.status = rc < 0 ? rc : SHOAL_EFAILED;
    } else {
        reply.env = shoal__env_new_owned(ctx->tc, SHOAL_MSG_REPLY, 0, ctx->self, 0, 0, o.buf,
                                         o.len + 1, free);
        if (reply.env == NULL)
            reply.status = SHOAL_ENOMEM;
        else
            o.buf = NULL; /* the envelope owns it */
    }
    free(o.buf);
    o.buf = NULL;
#undef o
    shoal__reply_send(ctx->rt, ctx->tc, ctx->self, req->from, shoal__env_ref(req), &reply);
    return rc;
}
