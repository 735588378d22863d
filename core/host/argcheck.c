/* argcheck.c - see argcheck.h.
 *
 * One checker per value (check_value) serves both the config's args and a
 * schema's own defaults; it runs the getters of host/args.c, so a config
 * error says what init's getter would have said, with the full path in
 * front instead of "args 'key'".
 */
#include "host/argcheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "host/args.h"

/* ---- types and ranges ------------------------------------------------------ */

/* The type's name in messages and --describe, or NULL for an unknown one. */
static const char *type_name(uint32_t type)
{
    switch (type) {
    case SHOAL_ARG_STRING:
        return "string";
    case SHOAL_ARG_INT:
        return "integer";
    case SHOAL_ARG_BOOL:
        return "bool";
    case SHOAL_ARG_DURATION:
    case SHOAL_ARG_DURATION_US:
        return "duration";
    case SHOAL_ARG_SIZE:
        return "size";
    case SHOAL_ARG_ENUM:
        return "enum";
    case SHOAL_ARG_LIST:
        return "list";
    case SHOAL_ARG_MAP:
        return "mapping";
    }
    return NULL;
}

/* A range is checked unless min and max are both 0 (args.h). */
static bool ranged(const shoal_arg_spec_t *s) { return s->min != 0 || s->max != 0; }

static bool takes_range(uint32_t type)
{
    return type == SHOAL_ARG_INT || type == SHOAL_ARG_DURATION || type == SHOAL_ARG_DURATION_US ||
           type == SHOAL_ARG_SIZE || type == SHOAL_ARG_STRING; /* a string's: its length */
}

/* us as it would be written: the largest unit that divides it ("1h",
 * "250ms", "50us"); 0 as "0". */
static const char *duration_text(uint64_t us, char *buf, size_t size)
{
    static const struct {
        const char *unit;
        uint64_t us;
    } units[] = {
        {"h", UINT64_C(3600000000)}, {"m", 60000000}, {"s", 1000000}, {"ms", 1000}, {"us", 1}};
    for (size_t i = 0; us != 0 && i < sizeof units / sizeof units[0]; i++)
        if (us % units[i].us == 0) {
            snprintf(buf, size, "%" PRIu64 "%s", us / units[i].us, units[i].unit);
            return buf;
        }
    snprintf(buf, size, "0");
    return buf;
}

/* bytes as they would be written: the largest binary unit that divides
 * them ("16MiB"), else the largest decimal one ("1kB"), else "B"; 0 as "0". */
static const char *size_text(uint64_t bytes, char *buf, size_t size)
{
    static const struct {
        const char *unit;
        uint64_t bytes;
    } units[] = {{"TiB", UINT64_C(1) << 40},
                 {"GiB", UINT64_C(1) << 30},
                 {"MiB", 1u << 20},
                 {"KiB", 1u << 10},
                 {"TB", UINT64_C(1000000000000)},
                 {"GB", 1000000000},
                 {"MB", 1000000},
                 {"kB", 1000}};
    if (bytes == 0) {
        snprintf(buf, size, "0");
        return buf;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (bytes % units[i].bytes == 0) {
            snprintf(buf, size, "%" PRIu64 "%s", bytes / units[i].bytes, units[i].unit);
            return buf;
        }
    snprintf(buf, size, "%" PRIu64 "B", bytes);
    return buf;
}

/* One end of a duration or size range, as written. */
static const char *bound_text(uint32_t type, int64_t v, char *buf, size_t size)
{
    if (type == SHOAL_ARG_DURATION && (uint64_t)v > UINT64_MAX / 1000)
        snprintf(buf, size, "%" PRIu64 "ms", (uint64_t)v);
    else if (type == SHOAL_ARG_DURATION)
        duration_text((uint64_t)v * 1000, buf, size);
    else if (type == SHOAL_ARG_DURATION_US)
        duration_text((uint64_t)v, buf, size);
    else
        size_text((uint64_t)v, buf, size);
    return buf;
}

/* ---- one value --------------------------------------------------------------- */

/* Checks the value of key in holder (holder itself when key is NULL)
 * against s, with the getter of s's type. On error err has the getter's
 * message ("args 'key': ..." or "args: ...") at the value. The key must be
 * present. */
static int check_value(const shoal_arg_spec_t *s, const shoal_node_t *holder, const char *key,
                       shoal_diag_t *err)
{
    int64_t i;
    uint64_t u;
    unsigned index;
    bool b;
    const char *str;
    const shoal_node_t *node;
    int rc;
    switch (s->type) {
    case SHOAL_ARG_STRING:
        rc = shoal__arg_string(holder, key, 0, &str, err);
        if (rc != SHOAL_OK || !ranged(s))
            return rc;
        size_t len = strlen(str);
        if (len >= (uint64_t)s->min && len <= (uint64_t)s->max)
            return SHOAL_OK;
        return shoal__arg_error(err, holder, key,
                                "%zu bytes long: expected %" PRId64 " to %" PRId64 " bytes", len,
                                s->min, s->max);
    case SHOAL_ARG_INT:
        return shoal__arg_int(holder, key, 0, ranged(s) ? s->min : INT64_MIN,
                              ranged(s) ? s->max : INT64_MAX, &i, err);
    case SHOAL_ARG_BOOL:
        return shoal__arg_bool(holder, key, 0, &b, err);
    case SHOAL_ARG_DURATION:
    case SHOAL_ARG_DURATION_US:
    case SHOAL_ARG_SIZE:
        rc = s->type == SHOAL_ARG_DURATION      ? shoal__arg_duration_ms(holder, key, 0, &u, err)
             : s->type == SHOAL_ARG_DURATION_US ? shoal__arg_duration_us(holder, key, 0, &u, err)
                                                : shoal__arg_size(holder, key, 0, &u, err);
        if (rc != SHOAL_OK || !ranged(s) || (u >= (uint64_t)s->min && u <= (uint64_t)s->max))
            return rc;
        char lo[32], hi[32];
        node = key != NULL ? shoal__node_get(holder, key) : holder;
        return shoal__arg_error(err, holder, key, "%s is out of range: expected %s to %s",
                                node->text, bound_text(s->type, s->min, lo, sizeof lo),
                                bound_text(s->type, s->max, hi, sizeof hi));
    case SHOAL_ARG_ENUM:
        return shoal__arg_enum(holder, key, 0, s->choices, &index, err);
    case SHOAL_ARG_LIST:
        return shoal__arg_node(holder, key, 0, SHOAL_NODE_LIST, &node, err);
    case SHOAL_ARG_MAP:
        return shoal__arg_node(holder, key, 0, SHOAL_NODE_MAP, &node, err);
    }
    return shoal__arg_error(err, holder, key, "unknown type %" PRIu32, s->type);
}

/* ---- a schema ---------------------------------------------------------------- */

static int refuse(char *why, size_t size, const char *fmt, ...) SHOAL_PRINTF(3, 4);
static int refuse(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return SHOAL_EINVAL;
}

static bool identifier(const char *s)
{
    size_t n = 0;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return false;
    for (; s[n] != '\0'; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
              (s[n] >= '0' && s[n] <= '9') || s[n] == '_'))
            return false;
    return n <= 64;
}

/* The choices of an enum: at least one, each non-empty and unique. */
static int check_choices(const char *owner, const shoal_arg_spec_t *s, char *why, size_t size)
{
    if (s->choices == NULL || s->choices[0] == NULL)
        return refuse(why, size,
                      "behaviour '%s' arg '%s': an enum needs choices (a "
                      "NULL-terminated list)",
                      owner, s->key);
    for (size_t i = 0; s->choices[i] != NULL; i++) {
        if (i == SHOAL_ARGCHECK_MAX_KEYS)
            return refuse(why, size,
                          "behaviour '%s' arg '%s': more than %d choices (is the list "
                          "NULL-terminated?)",
                          owner, s->key, SHOAL_ARGCHECK_MAX_KEYS);
        if (s->choices[i][0] == '\0')
            return refuse(why, size, "behaviour '%s' arg '%s': choice %zu is empty", owner, s->key,
                          i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->choices[i], s->choices[j]) == 0)
                return refuse(why, size, "behaviour '%s' arg '%s': choice '%s' is listed twice",
                              owner, s->key, s->choices[i]);
    }
    return SHOAL_OK;
}

/* The default: YAML, valid for the type and range. */
static int check_default(const char *owner, const shoal_arg_spec_t *s, char *why, size_t size)
{
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    int rc = shoal__node_parse("default", s->def, strlen(s->def), &root, &err);
    if (rc == SHOAL_ENOMEM)
        return rc;
    if (rc != SHOAL_OK)
        return refuse(why, size, "behaviour '%s' arg '%s': default '%s' is not YAML: %s", owner,
                      s->key, s->def, err.msg);
    rc = check_value(s, root, NULL, &err);
    shoal__node_free(root);
    if (rc != SHOAL_OK)
        return refuse(why, size, "behaviour '%s' arg '%s': default '%s' is not valid: %s", owner,
                      s->key, s->def, shoal__arg_reason(err.msg));
    return SHOAL_OK;
}

static int check_spec(const char *owner, const shoal_arg_spec_t *s, char *why, size_t size)
{
    const char *type = type_name(s->type);
    if (type == NULL)
        return refuse(why, size, "behaviour '%s' arg '%s': unknown type %" PRIu32, owner, s->key,
                      s->type);
    if ((s->flags & ~SHOAL_ARG_REQUIRED) != 0)
        return refuse(why, size, "behaviour '%s' arg '%s': unknown flags %#" PRIx32, owner, s->key,
                      s->flags & ~SHOAL_ARG_REQUIRED);
    int rc;
    if (s->type == SHOAL_ARG_ENUM && (rc = check_choices(owner, s, why, size)) != SHOAL_OK)
        return rc;
    if (s->type != SHOAL_ARG_ENUM && s->choices != NULL)
        return refuse(why, size, "behaviour '%s' arg '%s': choices are for an enum, not a %s",
                      owner, s->key, type);
    if (ranged(s) && !takes_range(s->type))
        return refuse(why, size,
                      "behaviour '%s' arg '%s': a range is for an integer, a duration, a "
                      "size or a string's length, not a %s (leave min and max 0)",
                      owner, s->key, type);
    if (ranged(s) && s->min > s->max)
        return refuse(why, size,
                      "behaviour '%s' arg '%s': range %" PRId64 "..%" PRId64 " has min above max",
                      owner, s->key, s->min, s->max);
    if (ranged(s) && s->type != SHOAL_ARG_INT && s->min < 0)
        return refuse(why, size, "behaviour '%s' arg '%s': a %s range cannot start below 0", owner,
                      s->key, type);
    if ((s->flags & SHOAL_ARG_REQUIRED) && s->def != NULL)
        return refuse(why, size, "behaviour '%s' arg '%s': a required arg has no default", owner,
                      s->key);
    if (s->doc != NULL && strchr(s->doc, '\n') != NULL)
        return refuse(why, size, "behaviour '%s' arg '%s': doc must be one line", owner, s->key);
    return s->def != NULL ? check_default(owner, s, why, size) : SHOAL_OK;
}

int shoal__argcheck_schema(const char *owner, const shoal_arg_spec_t *specs, char *why,
                           size_t why_size)
{
    for (size_t i = 0; specs != NULL && specs[i].key != NULL; i++) {
        const shoal_arg_spec_t *s = &specs[i];
        if (i == SHOAL_ARGCHECK_MAX_KEYS)
            return refuse(why, why_size,
                          "behaviour '%s' declares more than %d args (is its list "
                          "NULL-terminated?)",
                          owner, SHOAL_ARGCHECK_MAX_KEYS);
        if (!identifier(s->key))
            return refuse(why, why_size,
                          "behaviour '%s' arg %zu: key '%.80s' is not an identifier "
                          "([A-Za-z_][A-Za-z0-9_]*, at most 64)",
                          owner, i, s->key);
        for (size_t j = 0; j < i; j++)
            if (strcmp(specs[j].key, s->key) == 0)
                return refuse(why, why_size, "behaviour '%s' has two args named '%s'", owner,
                              s->key);
        int rc = check_spec(owner, s, why, why_size);
        if (rc != SHOAL_OK)
            return rc;
    }
    return SHOAL_OK;
}

/* ---- a pool's args --------------------------------------------------------------- */

static const shoal_arg_spec_t *find(const shoal_arg_spec_t *specs, const char *key)
{
    for (; specs->key != NULL; specs++)
        if (strcmp(specs->key, key) == 0)
            return specs;
    return NULL;
}

/* "a, b, c" of the schema's keys, or "" for none. */
static void key_list(const shoal_arg_spec_t *specs, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; specs[i].key != NULL && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", specs[i].key);
}

int shoal__argcheck_args(const shoal_arg_spec_t *specs, const shoal_node_t *args,
                         const shoal_node_t *pool_at, const char *path, const char *worker,
                         shoal_diag_t *err)
{
    char at[200];
    if (path != NULL)
        snprintf(at, sizeof at, "%.150s.args", path);
    else
        snprintf(at, sizeof at, "args");
    return shoal__argcheck_args_at(specs, args, pool_at, at, worker, err);
}

int shoal__argcheck_args_at(const shoal_arg_spec_t *specs, const shoal_node_t *args,
                            const shoal_node_t *pool_at, const char *at, const char *worker,
                            shoal_diag_t *err)
{
    if (specs == NULL)
        return SHOAL_OK;
    for (size_t i = 0; args != NULL && i < args->n; i++) {
        const shoal_node_t *key = args->keys[i];
        const shoal_arg_spec_t *s = find(specs, key->text);
        if (s == NULL) {
            char keys[256];
            key_list(specs, keys, sizeof keys);
            shoal__diag_set(err, key->file, key->line, key->col,
                            "%s: unknown key '%.64s' for %.80s (it takes%s%s)", at, key->text,
                            worker, keys[0] ? ": " : " no args", keys);
            return SHOAL_EINVAL;
        }
        int rc = check_value(s, args, s->key, err);
        if (rc != SHOAL_OK)
            return shoal__arg_relabel(err, at, s->key, rc);
    }
    for (const shoal_arg_spec_t *s = specs; s->key != NULL; s++) {
        if (!(s->flags & SHOAL_ARG_REQUIRED) || (args != NULL && shoal__node_get(args, s->key)))
            continue;
        const shoal_node_t *where = args != NULL ? args : pool_at;
        shoal__diag_set(err, where ? where->file : NULL, where ? where->line : 0,
                        where ? where->col : 0, "%s: missing required key '%s' for %.80s", at,
                        s->key, worker);
        return SHOAL_EINVAL;
    }
    return SHOAL_OK;
}

/* ---- describing ---------------------------------------------------------------- */

enum { COL_KEY, COL_TYPE, COL_NEED, COL_RANGE, COL_DOC, NCOLS };

typedef struct row_s {
    char cell[NCOLS][256];
} row_t;

/* The cells of one spec's row. */
static void row_of(const shoal_arg_spec_t *s, row_t *r)
{
    snprintf(r->cell[COL_KEY], sizeof r->cell[COL_KEY], "%s", s->key);
    snprintf(r->cell[COL_TYPE], sizeof r->cell[COL_TYPE], "%s", type_name(s->type));
    if (s->flags & SHOAL_ARG_REQUIRED)
        snprintf(r->cell[COL_NEED], sizeof r->cell[COL_NEED], "required");
    else if (s->def != NULL)
        snprintf(r->cell[COL_NEED], sizeof r->cell[COL_NEED], "default %s", s->def);
    else
        snprintf(r->cell[COL_NEED], sizeof r->cell[COL_NEED], "optional");
    char *range = r->cell[COL_RANGE], lo[32], hi[32];
    size_t size = sizeof r->cell[COL_RANGE];
    range[0] = '\0';
    if (s->type == SHOAL_ARG_ENUM) {
        size_t n = 0;
        for (size_t i = 0; s->choices[i] != NULL && n < size; i++)
            n += (size_t)snprintf(range + n, size - n, "%s%s", i ? " | " : "", s->choices[i]);
    } else if (ranged(s) && s->type == SHOAL_ARG_INT) {
        if (s->max == INT64_MAX)
            snprintf(range, size, ">= %" PRId64, s->min);
        else if (s->min == INT64_MIN)
            snprintf(range, size, "<= %" PRId64, s->max);
        else
            snprintf(range, size, "%" PRId64 "..%" PRId64, s->min, s->max);
    } else if (ranged(s) && s->type == SHOAL_ARG_STRING) {
        snprintf(range, size, "%" PRId64 "..%" PRId64 " bytes", s->min, s->max);
    } else if (ranged(s) && s->max == INT64_MAX) {
        snprintf(range, size, ">= %s", bound_text(s->type, s->min, lo, sizeof lo));
    } else if (ranged(s)) {
        snprintf(range, size, "%s..%s", bound_text(s->type, s->min, lo, sizeof lo),
                 bound_text(s->type, s->max, hi, sizeof hi));
    }
    snprintf(r->cell[COL_DOC], sizeof r->cell[COL_DOC], "%s", s->doc ? s->doc : "");
}

/* One behaviour's rows, each column as wide as its widest cell (a column
 * empty in every row takes no room). */
static void describe_args(FILE *out, const shoal_arg_spec_t *specs)
{
    size_t width[NCOLS] = {0};
    row_t r;
    for (const shoal_arg_spec_t *s = specs; s->key != NULL; s++) {
        row_of(s, &r);
        for (int c = 0; c < COL_DOC; c++)
            if (strlen(r.cell[c]) > width[c])
                width[c] = strlen(r.cell[c]);
    }
    for (const shoal_arg_spec_t *s = specs; s->key != NULL; s++) {
        char line[2048];
        size_t n = (size_t)snprintf(line, sizeof line, "    ");
        row_of(s, &r);
        for (int c = 0; c < NCOLS && n < sizeof line; c++)
            if (c == COL_DOC || width[c] != 0)
                n += (size_t)snprintf(line + n, sizeof line - n, "%-*s  ",
                                      c == COL_DOC ? 0 : (int)width[c], r.cell[c]);
        if (n >= sizeof line)
            n = sizeof line - 1;
        while (n > 0 && line[n - 1] == ' ')
            n--;
        fprintf(out, "%.*s\n", (int)n, line);
    }
}

void shoal__argcheck_describe(FILE *out, const shoal_module_t *m, const char *as)
{
    const shoal_plugin_t *d = shoal__module_plugin(m);
    const char *name = as != NULL ? as : d->name;
    fprintf(out, "plugin %s %s (ABI %u.%u) from %s", d->name, d->version ? d->version : "?",
            d->abi_major, d->abi_minor, shoal__module_path(m));
    if (strcmp(name, d->name) != 0)
        fprintf(out, ", as %s", name);
    fprintf(out, "\n");
    for (size_t i = 0; i < shoal__module_behaviour_count(m); i++) {
        const shoal_behaviour_t *b = shoal__module_behaviour_at(m, i);
        if (b->args == NULL)
            fprintf(out, "  %s.%s  (args not declared: not checked)\n", name, b->name);
        else if (b->args[0].key == NULL)
            fprintf(out, "  %s.%s  (takes no args)\n", name, b->name);
        else {
            fprintf(out, "  %s.%s\n", name, b->name);
            describe_args(out, b->args);
        }
    }
}
