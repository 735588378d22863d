/* test_plugins_descriptors.c - what each bundled plugin (plugins/<name>/)
 * declares, loaded through the loader as the host loads it: its descriptor
 * (name, ABI, one behaviour of its own name with every callback), and its
 * args schema agreeing with its init, key by key and value by value (the
 * edges of every range, every choice, the defaults). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/argcheck.h"
#include "host/args.h"
#include "plugins_kit.h"

/* ---- cases ------------------------------------------------------------------------------------
 */

static void every_plugin_loads(void)
{
    for (size_t i = 0; i < PL_NPLUGINS; i++) {
        shoal_module_t *m = pl_module(pl_names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const shoal_plugin_t *d = shoal__module_plugin(m);
        CU_ASSERT_STRING_EQUAL(d->name, pl_names[i]);
        CU_ASSERT_EQUAL(d->abi_major, SHOAL_ABI_MAJOR);
        CU_ASSERT_EQUAL(d->abi_minor, SHOAL_ABI_MINOR);
        /* One behaviour, named after the plugin, with every callback. */
        CU_ASSERT_PTR_NOT_NULL_FATAL(d->behaviours[0]);
        CU_ASSERT_PTR_NULL(d->behaviours[1]);
        const shoal_behaviour_t *b = shoal__module_behaviour(m, pl_names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b); /* the host's copy (loader.c) */
        CU_ASSERT_PTR_EQUAL(b->handle_message, d->behaviours[0]->handle_message);
        CU_ASSERT_PTR_NOT_NULL(b->init);
        CU_ASSERT_PTR_NOT_NULL(b->handle_message);
        CU_ASSERT_PTR_NOT_NULL(b->handle_call);
        CU_ASSERT_PTR_NOT_NULL(b->terminate);
        CU_ASSERT_PTR_NOT_NULL(b->inspect);
    }
}

/* ---- each plugin's args schema says what its init reads ----------------------------------- */

/* The args every probe carries besides the key under test: the other
 * required keys of the schema, each with a good value (every required key
 * of the bundled plugins is a string: loadgen's target). */
static const char *base_args(const shoal_arg_spec_t *specs, const char *except, char *buf,
                             size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const shoal_arg_spec_t *s = specs; s->key != NULL && n < size; s++)
        if ((s->flags & SHOAL_ARG_REQUIRED) && strcmp(s->key, except) != 0)
            n += (size_t)snprintf(buf + n, size - n, "%s: nobody\n", s->key);
    return buf;
}

/* One probe: `key: value` (or only the base when value is NULL) for
 * <plugin>.<plugin>. The host's schema check and the plugin's init must
 * agree: both accept, or both refuse - and then with the same reason at the
 * same place (init logs "pool.yaml:L:C: args 'key': <reason>", the config
 * says "pool.yaml:L:C: <path>.args.key: <reason>"). A missing required key
 * only has to be refused by both: init's getter words it its own way. */
static void probe(const char *plugin, const shoal_arg_spec_t *spec, const char *value)
{
    shoal_module_t *m = pl_module(plugin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, plugin);
    char text[512], base[256];
    base_args(b->args, spec->key, base, sizeof base);
    if (value != NULL)
        snprintf(text, sizeof text, "%s%s: %s\n", base, spec->key, value);
    else
        snprintf(text, sizeof text, "%s", base[0] ? base : "{}");
    shoal_node_t *args = NULL;
    shoal_diag_t err;
    int rc = shoal__node_parse("pool.yaml", text, strlen(text), &args, &err);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    cannot parse: %s\n", text);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    memset(&err, 0, sizeof err);
    int schema_rc = shoal__argcheck_args(b->args, args, args, "p", "x.y", &err);

    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, pl_parent, b, args, 64, &pid), SHOAL_OK);
    shoal_answer_t ans;
    rc = shoal_runtime_inspect(rt, pid, 10000, &ans); /* after init, if it passed */
    bool alive = rc == SHOAL_OK && ans.status == SHOAL_OK;
    if (rc == SHOAL_OK)
        shoal_answer_release(&ans);
    int init_rc = SHOAL_OK;
    if (alive) {
        shoal_runtime_stop_actor(rt, pid);
        CU_ASSERT_EQUAL(shoal_test_wait_exit(pid, 10.0), SHOAL_ESHUTDOWN);
    } else {
        init_rc = shoal_test_wait_exit(pid, 10.0);
    }
    char what[600];
    snprintf(what, sizeof what, "%s %s: %s", plugin, spec->key, value ? value : "(absent)");
    CU_ASSERT_EQUAL(schema_rc != SHOAL_OK, init_rc != SHOAL_OK);
    if ((schema_rc != SHOAL_OK) != (init_rc != SHOAL_OK)) {
        char buf[1200];
        fprintf(stderr, "\n    %s: the schema says %s, init ends with %s\n", what,
                schema_rc ? shoal__diag_format(&err, buf, sizeof buf) : "ok",
                shoal_errname(init_rc));
    }
    if (schema_rc != SHOAL_OK && init_rc != SHOAL_OK && value != NULL) {
        char line[1200], head[120];
        snprintf(head, sizeof head, "p.args.%s: ", spec->key);
        CU_ASSERT_NSTRING_EQUAL(err.msg, head, strlen(head));
        snprintf(line, sizeof line, "> %s: pool.yaml:%u:%u: args '%s': %s\n", plugin, err.line,
                 err.col, spec->key, err.msg + strlen(head));
        if (!shoal_test_log_has(line))
            fprintf(stderr, "\n    %s: init did not log the schema's reason:\n    %s", what, line);
        CU_ASSERT(shoal_test_log_has(line));
    }
    shoal_runtime_destroy(rt);
    shoal__node_free(args);
}

/* The "info" of a fresh <plugin>.<plugin> actor's inspect answer, spawned
 * with args (YAML text), into out. */
static void info_of(const char *plugin, const char *text, char *out, size_t size)
{
    shoal_module_t *m = pl_module(plugin);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, plugin);
    shoal_node_t *args = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse("pool.yaml", text, strlen(text), &args, &err),
                          SHOAL_OK);
    shoal_runtime_t *rt = pl_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, pl_parent, b, args, 64, &pid), SHOAL_OK);
    shoal_answer_t ans;
    snprintf(out, size, "(no answer)");
    if (shoal_runtime_inspect(rt, pid, 10000, &ans) == SHOAL_OK) {
        const char *info = ans.status == SHOAL_OK ? strstr(ans.data, "\"info\":") : NULL;
        snprintf(out, size, "%s", info ? info : "(no info)");
        shoal_answer_release(&ans);
    }
    shoal_runtime_destroy(rt);
    shoal__node_free(args);
}

/* The default a schema shows is the one init applies: the actor looks the
 * same to inspect with the key absent and with `key: <def>`. (Only what a
 * plugin's inspect reports can differ - burn's rounds, crash's every -
 * and loadgen's counters move by themselves, so it is left out.) */
static void default_is_inits(const char *plugin, const shoal_arg_spec_t *s)
{
    char base[256], text[512], absent[1024], given[1024];
    if (s->def == NULL || strcmp(plugin, "loadgen") == 0)
        return;
    base_args(shoal__module_behaviour(pl_module(plugin), plugin)->args, s->key, base, sizeof base);
    info_of(plugin, base[0] ? base : "{}", absent, sizeof absent);
    snprintf(text, sizeof text, "%s%s: %s\n", base, s->key, s->def);
    info_of(plugin, text, given, sizeof given);
    CU_ASSERT_STRING_EQUAL(absent, given);
    if (strcmp(absent, given) != 0)
        fprintf(stderr, "\n    %s %s: default %s is not init's: %s without it, %s with it\n",
                plugin, s->key, s->def, absent, given);
}

/* Probes one key: good and bad values of its type, the edges of its range
 * (and one past each), every choice, its default, its absence. */
static void probe_key(const char *plugin, const shoal_arg_spec_t *s)
{
    char v[64];
    bool ranged = s->min != 0 || s->max != 0;
    probe(plugin, s, NULL);
    if (s->def != NULL)
        probe(plugin, s, s->def);
    default_is_inits(plugin, s);
    switch (s->type) {
    case SHOAL_ARG_STRING:
        probe(plugin, s, "anything");
        probe(plugin, s, "[1]");
        break;
    case SHOAL_ARG_BOOL:
        probe(plugin, s, "true");
        probe(plugin, s, "false");
        probe(plugin, s, "yes");
        break;
    case SHOAL_ARG_ENUM:
        for (size_t i = 0; s->choices[i] != NULL; i++)
            probe(plugin, s, s->choices[i]);
        probe(plugin, s, "nosuch");
        break;
    case SHOAL_ARG_INT:
        probe(plugin, s, "x");
        probe(plugin, s, "1.5");
        if (!ranged)
            break;
        snprintf(v, sizeof v, "%" PRId64, s->min);
        probe(plugin, s, v);
        snprintf(v, sizeof v, "%" PRId64, s->max);
        probe(plugin, s, v);
        if (s->min != INT64_MIN) {
            snprintf(v, sizeof v, "%" PRId64, s->min - 1);
            probe(plugin, s, v);
        }
        if (s->max != INT64_MAX) {
            snprintf(v, sizeof v, "%" PRId64, s->max + 1);
            probe(plugin, s, v);
        }
        break;
    case SHOAL_ARG_DURATION:
    case SHOAL_ARG_DURATION_US:
    case SHOAL_ARG_SIZE: {
        bool duration = s->type != SHOAL_ARG_SIZE;
        const char *unit = s->type == SHOAL_ARG_DURATION ? "ms" : duration ? "us" : "B";
        probe(plugin, s, "x");
        probe(plugin, s, duration ? "5" : "5 parsecs");
        if (!ranged) {
            probe(plugin, s, "0");
            probe(plugin, s, duration ? "1h" : "1MiB");
            break;
        }
        snprintf(v, sizeof v, "%" PRId64 "%s", s->min, unit);
        probe(plugin, s, v);
        snprintf(v, sizeof v, "%" PRId64 "%s", s->max, unit);
        probe(plugin, s, v);
        if (s->min > 0) {
            snprintf(v, sizeof v, "%" PRId64 "%s", s->min - 1, unit);
            probe(plugin, s, v);
        }
        snprintf(v, sizeof v, "%" PRId64 "%s", s->max + 1, unit);
        probe(plugin, s, v);
        if (s->type == SHOAL_ARG_DURATION) { /* in microseconds: rounded up to ms */
            snprintf(v, sizeof v, "%" PRId64 "us", s->max * 1000);
            probe(plugin, s, v);
            snprintf(v, sizeof v, "%" PRId64 "us", s->max * 1000 + 1);
            probe(plugin, s, v);
        }
        if (s->type == SHOAL_ARG_DURATION_US) { /* in milliseconds */
            snprintf(v, sizeof v, "%" PRId64 "ms", s->max / 1000);
            probe(plugin, s, v);
            snprintf(v, sizeof v, "%" PRId64 "ms", s->max / 1000 + 1);
            probe(plugin, s, v);
        }
        break;
    }
    default:
        CU_FAIL("a bundled plugin declares a list or a mapping: probe it");
    }
}

static void schemas_match_init(void)
{
    for (size_t i = 0; i < PL_NPLUGINS; i++) {
        shoal_module_t *m = pl_module(pl_names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const shoal_behaviour_t *b = shoal__module_behaviour(m, pl_names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b->args); /* every bundled plugin declares one */
        for (const shoal_arg_spec_t *s = b->args; s->key != NULL; s++)
            probe_key(pl_names[i], s);
    }
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"every bundled plugin loads", every_plugin_loads},
        {"each schema says what its init reads", schemas_match_init},
        {NULL, NULL},
    };
    return pl_run("plugins_descriptors", cases);
}
