/* args.c - typed getters over a pool's args tree (shoal/args.h). The
 * checks are here once; the public functions add logging through ctx. */
#include "host/args.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/ctx.h"
#include "runtime/runtime.h"

static int fail(shoal_diag_t *err, const shoal_node_t *at, const char *key, const char *fmt, ...)
    SHOAL_PRINTF(4, 5);

static int fail(shoal_diag_t *err, const shoal_node_t *at, const char *key, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (key != NULL)
        shoal__diag_set(err, at ? at->file : NULL, at ? at->line : 0, at ? at->col : 0,
                        "args '%s': %s", key, what);
    else
        shoal__diag_set(err, at ? at->file : NULL, at ? at->line : 0, at ? at->col : 0, "args: %s",
                        what);
    return SHOAL_EINVAL;
}

/* Finds the node: args itself (key NULL) or its value for key. */
static int lookup(const shoal_node_t *args, const char *key, unsigned flags,
                  const shoal_node_t **out, shoal_diag_t *err)
{
    *out = NULL;
    if (key == NULL) {
        if (args == NULL)
            return fail(err, NULL, NULL, "no value");
        *out = args;
        return SHOAL_OK;
    }
    if (args == NULL || args->kind != SHOAL_NODE_MAP) {
        if (args == NULL && (flags & SHOAL_ARG_OPTIONAL))
            return SHOAL_ENOKEY;
        if (args == NULL) {
            shoal__diag_set(err, NULL, 0, 0, "args: missing required key '%s'", key);
            return SHOAL_ENOKEY;
        }
        return fail(err, args, NULL, "expected a mapping, got %s", shoal__node_kind_name(args));
    }
    const shoal_node_t *v = shoal__node_get(args, key);
    if (v == NULL) {
        if (!(flags & SHOAL_ARG_OPTIONAL))
            shoal__diag_set(err, args->file, args->line, args->col,
                            "args: missing required key '%s'", key);
        return SHOAL_ENOKEY;
    }
    *out = v;
    return SHOAL_OK;
}

/* The scalar for key: SHOAL_OK with *v set, or SHOAL_OK with *v NULL when
 * it is absent and optional, or the error. `what` names the expected type. */
static int find_scalar(const shoal_node_t *args, const char *key, unsigned flags, const char *what,
                       const shoal_node_t **v, shoal_diag_t *err)
{
    int rc = lookup(args, key, flags, v, err);
    if (rc == SHOAL_ENOKEY && (flags & SHOAL_ARG_OPTIONAL))
        return SHOAL_OK;
    if (rc != SHOAL_OK)
        return rc;
    if ((*v)->kind != SHOAL_NODE_SCALAR)
        return fail(err, *v, key, "expected %s, got %s", what, shoal__node_kind_name(*v));
    return SHOAL_OK;
}

/* Parses [+-]digits or 0x hex into *out; returns the end of the number. */
static const char *parse_int(const char *s, int64_t *out, bool *overflow)
{
    const char *p = s;
    bool neg = false;
    *overflow = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
        base = 16;
        p += 2;
    }
    if (!(base == 10 ? isdigit((unsigned char)*p) : isxdigit((unsigned char)*p)))
        return s;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; base == 10 ? isdigit((unsigned char)*p) : isxdigit((unsigned char)*p); p++) {
        unsigned d = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
                                                : (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
        if (v > (limit - d) / (unsigned)base)
            *overflow = true;
        else
            v = v * (unsigned)base + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return p;
}

int shoal__arg_int(const shoal_node_t *args, const char *key, unsigned flags, int64_t min,
                   int64_t max, int64_t *out, shoal_diag_t *err)
{
    const shoal_node_t *v;
    int rc = find_scalar(args, key, flags, "an integer", &v, err);
    if (rc != SHOAL_OK || v == NULL)
        return rc;
    int64_t x;
    bool overflow;
    const char *end = parse_int(v->text, &x, &overflow);
    if (v->quoted || end == v->text || *end != '\0')
        return fail(err, v, key, "expected an integer, got '%s'", v->text);
    if (overflow || x < min || x > max)
        return fail(err, v, key, "%s is out of range: expected %" PRId64 " to %" PRId64, v->text,
                    min, max);
    *out = x;
    return SHOAL_OK;
}

int shoal__arg_string(const shoal_node_t *args, const char *key, unsigned flags, const char **out,
                      shoal_diag_t *err)
{
    const shoal_node_t *v;
    int rc = find_scalar(args, key, flags, "a string", &v, err);
    if (rc != SHOAL_OK || v == NULL)
        return rc;
    *out = v->text;
    return SHOAL_OK;
}

int shoal__arg_bool(const shoal_node_t *args, const char *key, unsigned flags, bool *out,
                    shoal_diag_t *err)
{
    const shoal_node_t *v;
    int rc = find_scalar(args, key, flags, "true or false", &v, err);
    if (rc != SHOAL_OK || v == NULL)
        return rc;
    if (!v->quoted && strcmp(v->text, "true") == 0)
        *out = true;
    else if (!v->quoted && strcmp(v->text, "false") == 0)
        *out = false;
    else
        return fail(err, v, key, "expected true or false, got '%s'", v->text);
    return SHOAL_OK;
}

typedef struct unit_s {
    const char *name;
    uint64_t num, den; /* value = n * num / den, rounded up */
} unit_t;

static int with_unit(const shoal_node_t *v, const char *key, const unit_t *units, bool bare_ok,
                     const char *what, uint64_t *out, shoal_diag_t *err)
{
    int64_t x;
    bool overflow;
    const char *end = parse_int(v->text, &x, &overflow);
    /* Decimal, unsigned: "0x1B" is no size, "-0ms" no duration. */
    if (v->quoted || end == v->text || !isdigit((unsigned char)v->text[0]) ||
        (v->text[0] == '0' && (v->text[1] == 'x' || v->text[1] == 'X')))
        return fail(err, v, key, "expected %s, got '%s'", what, v->text);
    if (overflow)
        return fail(err, v, key, "%s is too large", v->text);
    if (*end == '\0') {
        if (bare_ok || x == 0) {
            *out = (uint64_t)x;
            return SHOAL_OK;
        }
        return fail(err, v, key, "'%s' has no unit: expected %s", v->text, what);
    }
    for (const unit_t *u = units; u->name != NULL; u++) {
        if (strcmp(end, u->name) != 0)
            continue;
        if ((uint64_t)x > UINT64_MAX / u->num)
            return fail(err, v, key, "%s is too large", v->text);
        *out = ((uint64_t)x * u->num + u->den - 1) / u->den;
        return SHOAL_OK;
    }
    return fail(err, v, key, "unknown unit in '%s': expected %s", v->text, what);
}

int shoal__arg_duration_us(const shoal_node_t *args, const char *key, unsigned flags, uint64_t *out,
                           shoal_diag_t *err)
{
    static const unit_t units[] = {{"us", 1, 1},
                                   {"ms", 1000, 1},
                                   {"s", 1000000, 1},
                                   {"m", 60000000, 1},
                                   {"h", UINT64_C(3600000000), 1},
                                   {NULL, 0, 0}};
    const shoal_node_t *v;
    int rc = find_scalar(args, key, flags, "a duration", &v, err);
    if (rc != SHOAL_OK || v == NULL)
        return rc;
    return with_unit(v, key, units, false, "a duration like 50us, 250ms, 2s or 1m", out, err);
}

int shoal__arg_enum(const shoal_node_t *args, const char *key, unsigned flags,
                    const char *const *choices, unsigned *index, shoal_diag_t *err)
{
    const shoal_node_t *v;
    int rc = find_scalar(args, key, flags, "a string", &v, err);
    if (rc != SHOAL_OK || v == NULL)
        return rc;
    char list[256] = "";
    for (unsigned i = 0; choices != NULL && choices[i] != NULL; i++) {
        if (strcmp(v->text, choices[i]) == 0) {
            *index = i;
            return SHOAL_OK;
        }
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", choices[i]);
    }
    return fail(err, v, key, "expected one of %s, got '%s'", list, v->text);
}

int shoal__arg_duration_ms(const shoal_node_t *args, const char *key, unsigned flags, uint64_t *out,
                           shoal_diag_t *err)
{
    static const unit_t units[] = {{"us", 1, 1000}, {"ms", 1, 1},      {"s", 1000, 1},
                                   {"m", 60000, 1}, {"h", 3600000, 1}, {NULL, 0, 0}};
    const shoal_node_t *v;
    int rc = find_scalar(args, key, flags, "a duration", &v, err);
    if (rc != SHOAL_OK || v == NULL)
        return rc;
    return with_unit(v, key, units, false, "a duration like 250ms, 2s or 1m", out, err);
}

int shoal__arg_size(const shoal_node_t *args, const char *key, unsigned flags, uint64_t *out,
                    shoal_diag_t *err)
{
    static const unit_t units[] = {
        {"B", 1, 1},
        {"KiB", UINT64_C(1) << 10, 1},
        {"MiB", UINT64_C(1) << 20, 1},
        {"GiB", UINT64_C(1) << 30, 1},
        {"TiB", UINT64_C(1) << 40, 1},
        {"kB", 1000, 1},
        {"MB", 1000000, 1},
        {"GB", 1000000000, 1},
        {"TB", UINT64_C(1000000000000), 1},
        {NULL, 0, 0},
    };
    const shoal_node_t *v;
    int rc = find_scalar(args, key, flags, "a size", &v, err);
    if (rc != SHOAL_OK || v == NULL)
        return rc;
    return with_unit(v, key, units, true, "a size like 512, 64KiB or 1MiB", out, err);
}

int shoal__arg_node(const shoal_node_t *args, const char *key, unsigned flags,
                    shoal_node_kind_t kind, const shoal_node_t **out, shoal_diag_t *err)
{
    const shoal_node_t *v;
    int rc = lookup(args, key, flags, &v, err);
    if (rc == SHOAL_ENOKEY && (flags & SHOAL_ARG_OPTIONAL))
        return SHOAL_OK;
    if (rc != SHOAL_OK)
        return rc;
    if (v->kind != kind)
        return fail(err, v, key, "expected %s, got %s",
                    kind == SHOAL_NODE_MAP ? "a mapping" : "a list", shoal__node_kind_name(v));
    *out = v;
    return SHOAL_OK;
}

int shoal__arg_error(shoal_diag_t *err, const shoal_node_t *args, const char *key, const char *fmt,
                     ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const shoal_node_t *at = key != NULL ? shoal__node_get(args, key) : NULL;
    return fail(err, at != NULL ? at : args, key, "%s", what);
}

const char *shoal__arg_reason(const char *msg)
{
    if (strncmp(msg, "args: ", 6) == 0)
        return msg + 6;
    const char *p = strncmp(msg, "args '", 6) == 0 ? strstr(msg, "': ") : NULL;
    return p != NULL ? p + 3 : msg;
}

int shoal__arg_relabel(shoal_diag_t *err, const char *path, const char *key, int rc)
{
    char rest[340];
    snprintf(rest, sizeof rest, "%.339s", shoal__arg_reason(err->msg)); /* cut to fit */
    snprintf(err->msg, sizeof err->msg, "%.100s%s%.60s: %s", path, *path ? "." : "", key, rest);
    return rc == SHOAL_ENOKEY ? SHOAL_EINVAL : rc;
}

/* ---- public: the same, reported through the running actor ---------------- */

static int report(shoal_ctx_t *ctx, int rc, const shoal_diag_t *err)
{
    if (ctx == NULL)
        return rc;
    if (rc == SHOAL_OK) {
        ctx->error[0] = '\0';
        return rc;
    }
    shoal__diag_format(err, ctx->error, sizeof ctx->error);
    shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, ctx->b->beh ? ctx->b->beh->name : NULL, "%s",
               ctx->error);
    return rc;
}

SHOAL_API int shoal_arg_string(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                               unsigned flags, const char **out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_string(args, key, flags, out, &err), &err);
}

SHOAL_API int shoal_arg_int(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                            unsigned flags, int64_t min, int64_t max, int64_t *out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_int(args, key, flags, min, max, out, &err), &err);
}

SHOAL_API int shoal_arg_bool(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, bool *out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_bool(args, key, flags, out, &err), &err);
}

SHOAL_API int shoal_arg_duration_ms(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                                    unsigned flags, uint64_t *out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_duration_ms(args, key, flags, out, &err), &err);
}

SHOAL_API int shoal_arg_duration_us(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                                    unsigned flags, uint64_t *out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_duration_us(args, key, flags, out, &err), &err);
}

SHOAL_API int shoal_arg_enum(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, const char *const *choices, unsigned *index)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_enum(args, key, flags, choices, index, &err), &err);
}

SHOAL_API int shoal_arg_error(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                              const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    shoal_diag_t err;
    return report(ctx, shoal__arg_error(&err, args, key, "%s", what), &err);
}

SHOAL_API int shoal_arg_size(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, uint64_t *out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_size(args, key, flags, out, &err), &err);
}

SHOAL_API int shoal_arg_list(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                             unsigned flags, const shoal_args_t **out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_node(args, key, flags, SHOAL_NODE_LIST, out, &err), &err);
}

SHOAL_API int shoal_arg_map(shoal_ctx_t *ctx, const shoal_args_t *args, const char *key,
                            unsigned flags, const shoal_args_t **out)
{
    shoal_diag_t err;
    return report(ctx, shoal__arg_node(args, key, flags, SHOAL_NODE_MAP, out, &err), &err);
}

SHOAL_API size_t shoal_args_len(const shoal_args_t *node)
{
    return node != NULL && node->kind != SHOAL_NODE_SCALAR ? node->n : 0;
}

SHOAL_API const shoal_args_t *shoal_args_item(const shoal_args_t *node, size_t i)
{
    return node != NULL && node->kind != SHOAL_NODE_SCALAR && i < node->n ? node->items[i] : NULL;
}

SHOAL_API const char *shoal_args_key(const shoal_args_t *node, size_t i)
{
    return node != NULL && node->kind == SHOAL_NODE_MAP && i < node->n ? node->keys[i]->text : NULL;
}

SHOAL_API const char *shoal_ctx_error(const shoal_ctx_t *ctx) { return ctx->error; }
