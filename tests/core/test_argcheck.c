/* test_argcheck.c - behaviours' args schemas (host/argcheck.c): every way a
 * schema can be malformed, each refused with its whole message; a config's
 * args checked against the real bundled plugins (SHOAL_PLUGIN_DIR) and the
 * fixtures (SHOAL_FIXTURE_DIR) at resolve - unknown key, wrong type, out of
 * range, bad choice, missing required key, a nested pool's leaf - each
 * refused with the exact "file:line:col: path: what" string, while a
 * behaviour without a schema (an ABI 1.2 plugin, a 1.3 one that declares
 * none) passes any args; and the --describe rows. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/argcheck.h"
#include "host/config.h"
#include "support.h"

#ifndef SHOAL_FIXTURE_DIR
#error "SHOAL_FIXTURE_DIR must name the directory of the built fixtures"
#endif
#ifndef SHOAL_PLUGIN_DIR
#error "SHOAL_PLUGIN_DIR must name <build>/plugins"
#endif

#define FILE_NAME "/etc/shoal/t.yaml"
#define F FILE_NAME ":"

static void same(const char *got, const char *want, const char *text)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    for:  %s\n    got:  %s\n    want: %s\n", text, got, want);
}

/* ---- schemas ------------------------------------------------------------------- */

static const char *const modes[] = {"fast", "slow", NULL};
static const char *const no_modes[] = {NULL};
static const char *const empty_mode[] = {"fast", "", NULL};
static const char *const twice[] = {"fast", "slow", "fast", NULL};

#define END                                                                                        \
    {                                                                                              \
        .key = NULL                                                                                \
    }

typedef struct schema_case_s {
    shoal_arg_spec_t specs[3]; /* a good first spec, the one under test, END */
    const char *why;           /* NULL: well formed */
} schema_case_t;

/* A well-formed first spec, so each defect is found past the first. */
#define OK_SPEC                                                                                    \
    {                                                                                              \
        .key = "ok", .type = SHOAL_ARG_INT, .min = 1, .max = 10, .def = "5", .doc = "fine"         \
    }

static const schema_case_t schema_cases[] = {
    /* keys */
    {{OK_SPEC, {.key = "", .type = SHOAL_ARG_INT}, END},
     "behaviour 'p.b' arg 1: key '' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 64)"},
    {{OK_SPEC, {.key = "2fast", .type = SHOAL_ARG_INT}, END},
     "behaviour 'p.b' arg 1: key '2fast' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most "
     "64)"},
    {{OK_SPEC, {.key = "max-size", .type = SHOAL_ARG_SIZE}, END},
     "behaviour 'p.b' arg 1: key 'max-size' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at "
     "most 64)"},
    {{OK_SPEC,
      {.key = "a123456789b123456789c123456789d123456789e123456789f123456789g1234",
       .type = SHOAL_ARG_INT},
      END},
     "behaviour 'p.b' arg 1: key "
     "'a123456789b123456789c123456789d123456789e123456789f123456789g1234'"
     " is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 64)"},
    {{OK_SPEC,
      {.key = "a123456789b123456789c123456789d123456789e123456789f123456789g123",
       .type = SHOAL_ARG_INT},
      END},
     NULL},
    {{OK_SPEC, {.key = "_Under_9", .type = SHOAL_ARG_INT}, END}, NULL},
    {{OK_SPEC, {.key = "ok", .type = SHOAL_ARG_STRING}, END},
     "behaviour 'p.b' has two args named 'ok'"},
    /* types and flags */
    {{OK_SPEC, {.key = "x"}, END}, "behaviour 'p.b' arg 'x': unknown type 0"},
    {{OK_SPEC, {.key = "x", .type = 10}, END}, "behaviour 'p.b' arg 'x': unknown type 10"},
    {{OK_SPEC, {.key = "x", .type = SHOAL_ARG_INT, .flags = SHOAL_ARG_OPTIONAL}, END},
     "behaviour 'p.b' arg 'x': unknown flags 0x1"},
    /* choices */
    {{OK_SPEC, {.key = "mode", .type = SHOAL_ARG_ENUM}, END},
     "behaviour 'p.b' arg 'mode': an enum needs choices (a NULL-terminated list)"},
    {{OK_SPEC, {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = no_modes}, END},
     "behaviour 'p.b' arg 'mode': an enum needs choices (a NULL-terminated list)"},
    {{OK_SPEC, {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = empty_mode}, END},
     "behaviour 'p.b' arg 'mode': choice 1 is empty"},
    {{OK_SPEC, {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = twice}, END},
     "behaviour 'p.b' arg 'mode': choice 'fast' is listed twice"},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .choices = modes}, END},
     "behaviour 'p.b' arg 'name': choices are for an enum, not a string"},
    /* ranges */
    /* a string's: its length in bytes (ABI 1.11) */
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .max = 5}, END}, NULL},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .min = 6, .max = 5}, END},
     "behaviour 'p.b' arg 'name': range 6..5 has min above max"},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .min = -1, .max = 5}, END},
     "behaviour 'p.b' arg 'name': a string range cannot start below 0"},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .max = 5, .def = "world"}, END}, NULL},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .max = 4, .def = "world"}, END},
     "behaviour 'p.b' arg 'name': default 'world' is not valid: 5 bytes long: expected 0 to 4 "
     "bytes"},
    {{OK_SPEC, {.key = "on", .type = SHOAL_ARG_BOOL, .min = 1, .max = 1}, END},
     "behaviour 'p.b' arg 'on': a range is for an integer, a duration, a size or a string's "
     "length, not a bool (leave min and max 0)"},
    {{OK_SPEC, {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = modes, .max = 1}, END},
     "behaviour 'p.b' arg 'mode': a range is for an integer, a duration, a size or a string's "
     "length, not a enum (leave min and max 0)"},
    {{OK_SPEC, {.key = "rate", .type = SHOAL_ARG_INT, .min = 10, .max = 1}, END},
     "behaviour 'p.b' arg 'rate': range 10..1 has min above max"},
    {{OK_SPEC, {.key = "rate", .type = SHOAL_ARG_INT, .min = 5}, END},
     "behaviour 'p.b' arg 'rate': range 5..0 has min above max"},
    {{OK_SPEC, {.key = "rate", .type = SHOAL_ARG_INT, .min = -5}, END}, NULL},
    {{OK_SPEC, {.key = "tick", .type = SHOAL_ARG_DURATION, .min = -1, .max = 10}, END},
     "behaviour 'p.b' arg 'tick': a duration range cannot start below 0"},
    {{OK_SPEC, {.key = "buf", .type = SHOAL_ARG_SIZE, .min = -1, .max = 10}, END},
     "behaviour 'p.b' arg 'buf': a size range cannot start below 0"},
    /* required, doc */
    {{OK_SPEC,
      {.key = "to", .type = SHOAL_ARG_STRING, .flags = SHOAL_ARG_REQUIRED, .def = "x"},
      END},
     "behaviour 'p.b' arg 'to': a required arg has no default"},
    {{OK_SPEC, {.key = "to", .type = SHOAL_ARG_STRING, .doc = "two\nlines"}, END},
     "behaviour 'p.b' arg 'to': doc must be one line"},
    /* defaults: YAML, valid for the type and the range */
    {{OK_SPEC, {.key = "rate", .type = SHOAL_ARG_INT, .def = "fast"}, END},
     "behaviour 'p.b' arg 'rate': default 'fast' is not valid: expected an integer, got 'fast'"},
    {{OK_SPEC, {.key = "rate", .type = SHOAL_ARG_INT, .min = 1, .max = 10, .def = "0"}, END},
     "behaviour 'p.b' arg 'rate': default '0' is not valid: 0 is out of range: expected 1 to 10"},
    {{OK_SPEC, {.key = "tick", .type = SHOAL_ARG_DURATION, .def = "5"}, END},
     "behaviour 'p.b' arg 'tick': default '5' is not valid: '5' has no unit: expected a duration "
     "like 250ms, 2s or 1m"},
    {{OK_SPEC, {.key = "tick", .type = SHOAL_ARG_DURATION, .max = 3600000, .def = "2h"}, END},
     "behaviour 'p.b' arg 'tick': default '2h' is not valid: 2h is out of range: expected 0 to 1h"},
    {{OK_SPEC,
      {.key = "spin", .type = SHOAL_ARG_DURATION_US, .min = 100, .max = 1000000, .def = "50us"},
      END},
     "behaviour 'p.b' arg 'spin': default '50us' is not valid: 50us is out of range: expected "
     "100us to 1s"},
    {{OK_SPEC, {.key = "spin", .type = SHOAL_ARG_DURATION_US, .min = -1, .max = 10}, END},
     "behaviour 'p.b' arg 'spin': a duration range cannot start below 0"},
    {{OK_SPEC,
      {.key = "buf", .type = SHOAL_ARG_SIZE, .min = 1, .max = 16 << 20, .def = "17MiB"},
      END},
     "behaviour 'p.b' arg 'buf': default '17MiB' is not valid: 17MiB is out of range: expected "
     "1B to 16MiB"},
    {{OK_SPEC, {.key = "on", .type = SHOAL_ARG_BOOL, .def = "yes"}, END},
     "behaviour 'p.b' arg 'on': default 'yes' is not valid: expected true or false, got 'yes'"},
    {{OK_SPEC, {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = modes, .def = "medium"}, END},
     "behaviour 'p.b' arg 'mode': default 'medium' is not valid: expected one of fast, slow, got "
     "'medium'"},
    {{OK_SPEC, {.key = "xs", .type = SHOAL_ARG_LIST, .def = "x"}, END},
     "behaviour 'p.b' arg 'xs': default 'x' is not valid: expected a list, got a value"},
    {{OK_SPEC, {.key = "m", .type = SHOAL_ARG_MAP, .def = "[]"}, END},
     "behaviour 'p.b' arg 'm': default '[]' is not valid: expected a mapping, got a list"},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .def = "[]"}, END},
     "behaviour 'p.b' arg 'name': default '[]' is not valid: expected a string, got a list"},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .def = "[a"}, END},
     "behaviour 'p.b' arg 'name': default '[a' is not YAML: while parsing a flow sequence did not "
     "find "
     "expected ',' or ']'"},
    /* good defaults */
    {{OK_SPEC, {.key = "xs", .type = SHOAL_ARG_LIST, .def = "[]"}, END}, NULL},
    {{OK_SPEC, {.key = "m", .type = SHOAL_ARG_MAP, .def = "{a: 1}"}, END}, NULL},
    {{OK_SPEC, {.key = "name", .type = SHOAL_ARG_STRING, .def = "'hello, world'"}, END}, NULL},
    {{OK_SPEC, {.key = "on", .type = SHOAL_ARG_BOOL, .def = "false"}, END}, NULL},
    {{OK_SPEC, {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = modes, .def = "slow"}, END},
     NULL},
    /* 250us rounds up to 1ms: inside 1ms..1m */
    {{OK_SPEC,
      {.key = "tick", .type = SHOAL_ARG_DURATION, .min = 1, .max = 60000, .def = "250us"},
      END},
     NULL},
    {{OK_SPEC, {.key = "buf", .type = SHOAL_ARG_SIZE, .max = 16 << 20, .def = "16MiB"}, END}, NULL},
    /* microseconds kept: 1500us is inside 1ms..1500us */
    {{OK_SPEC,
      {.key = "spin", .type = SHOAL_ARG_DURATION_US, .min = 1000, .max = 1500, .def = "1500us"},
      END},
     NULL},
    {{OK_SPEC, {.key = "n", .type = SHOAL_ARG_INT, .min = INT64_MIN, .max = -1, .def = "-7"}, END},
     NULL},
};

static void test_schemas(void)
{
    for (size_t i = 0; i < sizeof schema_cases / sizeof schema_cases[0]; i++) {
        const schema_case_t *c = &schema_cases[i];
        char why[400] = "";
        int rc = shoal__argcheck_schema("p.b", c->specs, why, sizeof why);
        char label[64];
        snprintf(label, sizeof label, "schema case %zu (%s)", i, c->specs[1].key);
        CU_ASSERT_EQUAL(rc, c->why ? SHOAL_EINVAL : SHOAL_OK);
        same(rc == SHOAL_OK ? "(ok)" : why, c->why ? c->why : "(ok)", label);
    }
    /* No schema, and an empty one, are well formed. */
    char why[400];
    static const shoal_arg_spec_t none[] = {END};
    CU_ASSERT_EQUAL(shoal__argcheck_schema("p.b", NULL, why, sizeof why), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__argcheck_schema("p.b", none, why, sizeof why), SHOAL_OK);
}

/* More keys than SHOAL_ARGCHECK_MAX_KEYS: most likely no terminator. */
static void test_too_many_keys(void)
{
    enum { N = SHOAL_ARGCHECK_MAX_KEYS + 1 };
    static shoal_arg_spec_t specs[N + 1];
    static char keys[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        specs[i] = (shoal_arg_spec_t){.key = keys[i], .type = SHOAL_ARG_INT};
    }
    char why[400];
    CU_ASSERT_EQUAL(shoal__argcheck_schema("p.b", specs, why, sizeof why), SHOAL_EINVAL);
    same(why, "behaviour 'p.b' declares more than 256 args (is its list NULL-terminated?)",
         "257 keys");
    specs[N - 1].key = NULL; /* exactly 256: fine */
    CU_ASSERT_EQUAL(shoal__argcheck_schema("p.b", specs, why, sizeof why), SHOAL_OK);
}

/* ---- a config's args, against the bundled plugins ----------------------------------- */

/* Every bundled plugin, and the fixtures' abi12 (ABI 1.2: no schema),
 * good (1.3, none declared) and noargs (1.3, declares none). */
#define PLUGINS                                                                                    \
    "plugins:\n"                                                                                   \
    "  echo: %1$s/echo/echo.so\n"                                                                  \
    "  burn: %1$s/burn/burn.so\n"                                                                  \
    "  sleep: %1$s/sleep/sleep.so\n"                                                               \
    "  crash: %1$s/crash/crash.so\n"                                                               \
    "  sink: %1$s/sink/sink.so\n"                                                                  \
    "  loadgen: %1$s/loadgen/loadgen.so\n"                                                         \
    "  old: %2$s/abi_1_2.so\n"                                                                     \
    "  good: %2$s/good.so\n"                                                                       \
    "  na: %2$s/no_args.so\n"                                                                      \
    "pools:\n"

/* Parses PLUGINS + pools (with %1$s the plugin dir, %2$s the fixture dir)
 * under FILE_NAME and resolves it with a fresh loader; returns resolve's
 * code with its error in `formatted`. Parsing must succeed. Everything is
 * freed, and the loader must hold no module after. */
static int resolve(const char *pools, char *formatted, size_t size)
{
    char fmt[4096], text[8192];
    snprintf(fmt, sizeof fmt, "%s%s", PLUGINS, pools);
    snprintf(text, sizeof text, fmt, SHOAL_PLUGIN_DIR, SHOAL_FIXTURE_DIR);
    shoal_config_t *c = NULL;
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = shoal__config_parse(FILE_NAME, text, strlen(text), &c, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    memset(&err, 0, sizeof err);
    rc = shoal__config_resolve(c, L, &err);
    shoal__diag_format(&err, formatted, size);
    shoal__config_free(c);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0); /* every reference dropped */
    shoal__loader_destroy(L);
    return rc;
}

/* The pools start on line 12 (after the 11 lines of PLUGINS). */
static const struct {
    const char *pools, *error;
} bad_args[] = {
    /* unknown keys, at the key */
    {"  api:\n    worker: echo.echo\n    args: {rpely: pong}\n",
     F "14:12: pools.api.args: unknown key 'rpely' for echo.echo (it takes: reply)"},
    {"  g:\n    worker: loadgen.loadgen\n    args:\n      target: api\n      rat: 5\n",
     F "16:7: pools.g.args: unknown key 'rat' for loadgen.loadgen (it takes: target, rate, size, "
       "type, count, done, tick, call, timeout, window, group)"},
    {"  q:\n    worker: na.quiet\n    args: {x: 1}\n",
     F "14:12: pools.q.args: unknown key 'x' for na.quiet (it takes no args)"},
    /* wrong types, at the value */
    {"  api:\n    worker: echo.echo\n    args: {reply: [1, 2]}\n",
     F "14:19: pools.api.args.reply: expected a string, got a list"},
    {"  b:\n    worker: burn.burn\n    args: {rounds: many}\n",
     F "14:20: pools.b.args.rounds: expected an integer, got 'many'"},
    {"  b:\n    worker: burn.burn\n    args: {rounds: '50'}\n",
     F "14:20: pools.b.args.rounds: expected an integer, got '50'"},
    {"  g:\n    worker: loadgen.loadgen\n    args: {target: api, call: yes}\n",
     F "14:31: pools.g.args.call: expected true or false, got 'yes'"},
    {"  s:\n    worker: sink.sink\n    args: {report: 5}\n",
     F "14:20: pools.s.args.report: '5' has no unit: expected a duration like 250ms, 2s or 1m"},
    {"  g:\n    worker: loadgen.loadgen\n    args: {target: api, size: 8 bytes}\n",
     F "14:31: pools.g.args.size: unknown unit in '8 bytes': expected a size like 512, 64KiB or "
       "1MiB"},
    /* out of range: what init's own check says */
    {"  b:\n    worker: burn.burn\n    args: {rounds: -1}\n",
     F "14:20: pools.b.args.rounds: -1 is out of range: expected 0 to 1000000000"},
    {"  c:\n    worker: crash.crash\n    args: {every: 0}\n",
     F "14:19: pools.c.args.every: 0 is out of range: expected 1 to 9223372036854775807"},
    {"  z:\n    worker: sleep.sleep\n    args: {latency: 2h}\n",
     F "14:21: pools.z.args.latency: 2h is out of range: expected 0 to 1h"},
    {"  z:\n    worker: sleep.sleep\n    args: {jitter: 3600000001us}\n",
     F "14:20: pools.z.args.jitter: 3600000001us is out of range: expected 0 to 1h"},
    {"  b:\n    worker: burn.burn\n    args: {spin: 61m}\n",
     F "14:18: pools.b.args.spin: 61m is out of range: expected 0 to 1h"},
    {"  g:\n    worker: loadgen.loadgen\n    args: {target: api, tick: 0ms}\n",
     F "14:31: pools.g.args.tick: 0ms is out of range: expected 1ms to 1m"},
    {"  g:\n    worker: loadgen.loadgen\n    args: {target: api, size: 17MiB}\n",
     F "14:31: pools.g.args.size: 17MiB is out of range: expected 0 to 16MiB"},
    {"  g:\n    worker: loadgen.loadgen\n    args: {target: api, type: 0x100000000}\n",
     F "14:31: pools.g.args.type: 0x100000000 is out of range: expected 0 to 4294967295"},
    /* bad choices */
    {"  c:\n    worker: crash.crash\n    args: {mode: boom}\n",
     F "14:18: pools.c.args.mode: expected one of panic, fail, exit, got 'boom'"},
    {"  g:\n    worker: loadgen.loadgen\n    args: {target: api, done: later}\n",
     F "14:31: pools.g.args.done: expected one of idle, exit, got 'later'"},
    /* a missing required key: at args:, or at the pool when there is none */
    {"  g:\n    worker: loadgen.loadgen\n    args: {rate: 5}\n",
     F "14:11: pools.g.args: missing required key 'target' for loadgen.loadgen"},
    {"  g:\n    worker: loadgen.loadgen\n    size: 1\n",
     F "13:5: pools.g.args: missing required key 'target' for loadgen.loadgen"},
    {"  g: {worker: loadgen.loadgen, args: {}}\n",
     F "12:38: pools.g.args: missing required key 'target' for loadgen.loadgen"},
    /* the first error in the file's order wins: the unknown key before the
     * bad value after it, both before the missing key */
    {"  g:\n    worker: loadgen.loadgen\n    args: {rat: 5, rate: x}\n",
     F "14:12: pools.g.args: unknown key 'rat' for loadgen.loadgen (it takes: target, rate, size, "
       "type, count, done, tick, call, timeout, window, group)"},
    /* a nested pool: the leaf's behaviour's schema, at the leaf's args */
    {"  n:\n    worker:\n      worker: burn.burn\n      args: {rounds: x}\n",
     F "15:22: pools.n.worker.args.rounds: expected an integer, got 'x'"},
    {"  n:\n    worker:\n      worker:\n        worker: echo.echo\n        args: {rpely: x}\n",
     F "16:16: pools.n.worker.worker.args: unknown key 'rpely' for echo.echo (it takes: reply)"},
    {"  n:\n    worker: {worker: loadgen.loadgen}\n",
     F "13:13: pools.n.worker.args: missing required key 'target' for loadgen.loadgen"},
    /* pools after a good one are checked too */
    {"  a:\n    worker: echo.echo\n  b:\n    worker: crash.crash\n    args: {mode: boom}\n",
     F "16:18: pools.b.args.mode: expected one of panic, fail, exit, got 'boom'"},
};

static void test_bad_args(void)
{
    for (size_t i = 0; i < sizeof bad_args / sizeof bad_args[0]; i++) {
        char err[1200];
        CU_ASSERT_EQUAL(resolve(bad_args[i].pools, err, sizeof err), SHOAL_EINVAL);
        same(err, bad_args[i].error, bad_args[i].pools);
    }
}

/* Every key of every bundled plugin, each with a good value (the edges of
 * the ranges included); a behaviour without a schema takes anything. */
static void test_good_args(void)
{
    static const char *const goods[] = {
        "  api:\n    worker: echo.echo\n    args: {reply: pong}\n",
        "  api:\n    worker: echo.echo\n    args: {reply: 42}\n",
        "  api:\n    worker: echo.echo\n",
        "  b:\n    worker: burn.burn\n    args: {rounds: 1000000000, spin: 1h}\n",
        "  b:\n    worker: burn.burn\n    args: {rounds: 0, spin: 3600000000us}\n",
        "  z:\n    worker: sleep.sleep\n    args: {latency: 250us, jitter: 60m}\n",
        "  c:\n    worker: crash.crash\n    args: {every: 9223372036854775807, mode: exit}\n",
        "  s:\n    worker: sink.sink\n    args: {report: 0}\n",
        "  s:\n    worker: sink.sink\n    args: {report: 24h}\n",
        "  g:\n    worker: loadgen.loadgen\n    args: {target: api, rate: 0, size: 16MiB, type: "
        "0xFFFFFFFF,\n      count: 0, done: exit, tick: 1m, call: true, timeout: 0, window: "
        "1073741824}\n",
        "  g:\n    worker: loadgen.loadgen\n    args: {target: api, tick: 1ms, size: 0}\n",
        "  o:\n    worker: old.old\n    args: {anything: [1, 2], goes: {here: true}}\n",
        "  p:\n    worker: good.alpha\n    args: {start: x, unknown: 1}\n",
        "  q:\n    worker: na.quiet\n    args: {}\n",
        "  n:\n    worker:\n      worker: old.old\n      args: {whatever: 1}\n",
    };
    for (size_t i = 0; i < sizeof goods / sizeof goods[0]; i++) {
        char err[1200];
        int rc = resolve(goods[i], err, sizeof err);
        CU_ASSERT_EQUAL(rc, SHOAL_OK);
        if (rc != SHOAL_OK)
            fprintf(stderr, "\n    for:  %s\n    refused: %s\n", goods[i], err);
    }
}

/* Without a file: a missing key with neither args: nor the pool's place. */
static void test_no_place(void)
{
    static const shoal_arg_spec_t specs[] = {
        {.key = "to", .type = SHOAL_ARG_STRING, .flags = SHOAL_ARG_REQUIRED}, END};
    shoal_diag_t err;
    char buf[1200];
    CU_ASSERT_EQUAL(shoal__argcheck_args(specs, NULL, NULL, "pools.x", "p.b", &err), SHOAL_EINVAL);
    same(shoal__diag_format(&err, buf, sizeof buf),
         "pools.x.args: missing required key 'to' for p.b", "no place");
    CU_ASSERT_EQUAL(shoal__argcheck_args(NULL, NULL, NULL, "pools.x", "p.b", &err), SHOAL_OK);
}

/* ---- describe -------------------------------------------------------------------- */

/* The rows of a module, as --describe and --help-config FILE print them. */
static void describe(const char *path, const char *as, char *out, size_t size)
{
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m, &err), SHOAL_OK);
    FILE *f = fmemopen(out, size, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    shoal__argcheck_describe(f, m, as);
    fclose(f);
    shoal__module_release(m);
    shoal__loader_destroy(L);
}

static void test_describe(void)
{
    char path[1024], got[4096], want[8192];
    snprintf(path, sizeof path, "%s/crash/crash.so", SHOAL_PLUGIN_DIR);
    describe(path, NULL, got, sizeof got);
    snprintf(want, sizeof want,
             "plugin crash 1.0.0 (ABI %d.%d) from %s\n"
             "  crash.crash\n"
             "    every  integer  default 10     >= 1                 fail on every k-th message "
             "or call (stats calls excepted)\n"
             "    mode   enum     default panic  panic | fail | exit  how it fails: shoal_panic, "
             "return SHOAL_EFAILED, or shoal_exit\n",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, path);
    same(got, want, "crash");

    /* Under the name a config gives it; a required key; durations and sizes
     * with their units; an empty range column takes no room. */
    snprintf(path, sizeof path, "%s/loadgen/loadgen.so", SHOAL_PLUGIN_DIR);
    describe(path, "gen", got, sizeof got);
    snprintf(want, sizeof want,
             "plugin loadgen 1.0.0 (ABI %d.%d) from %s, as gen\n"
             "  gen.loadgen\n"
             "    target   string    required                      the registered name (a pool's) "
             "to send to, looked up on every tick\n"
             "    rate     integer   default 1000   0..1000000000  messages per second; 0 = as "
             "fast as the target accepts\n"
             "    size     size      default 8B     0..16MiB       payload bytes; the first 8 "
             "carry the sequence number\n"
             "    type     integer   default 1      0..4294967295  the messages' type id\n"
             "    count    integer   default 0      >= 0           stop after this many accepted; "
             "0 = no end\n"
             "    done     enum      default idle   idle | exit    once count is reached and "
             "every call settled: stay, or end normally\n"
             "    tick     duration  default 10ms   1ms..1m        the rate mode's period, and the "
             "wait before retrying an unknown target\n"
             "    call     bool      default false                 send calls instead of "
             "messages\n"
             "    timeout  duration  default 1s                    calls only: the per-call "
             "timeout; 0 = none\n"
             "    window   integer   default 1024   0..1073741824  calls only: calls in flight at "
             "most; 0 = no limit\n"
             "    group    bool      default false                 target is a group of checkout "
             "pools: every attempt is a transaction (a call) on a member of one\n",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, path);
    same(got, want, "loadgen");

    /* A range in microseconds, shown in the largest unit that divides it. */
    snprintf(path, sizeof path, "%s/burn/burn.so", SHOAL_PLUGIN_DIR);
    describe(path, NULL, got, sizeof got);
    snprintf(want, sizeof want,
             "plugin burn 1.0.0 (ABI %d.%d) from %s\n"
             "  burn.burn\n"
             "    rounds  integer   default 50    0..1000000000  xorshift32 rounds per message\n"
             "    spin    duration  default 0     0..1h          also busy-wait this long per "
             "message (us kept: 50us is 50 microseconds)\n"
             "    skew    integer   default 0     0..1000000000  one message in this many (its "
             "payload's number a multiple) costs `factor` times as much; 0 = none\n"
             "    factor  integer   default 1000  1..1000000     how many times as much a skewed "
             "message costs\n",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, path);
    same(got, want, "burn");

    snprintf(path, sizeof path, "%s/sink/sink.so", SHOAL_PLUGIN_DIR);
    describe(path, NULL, got, sizeof got);
    snprintf(want, sizeof want,
             "plugin sink 1.0.0 (ABI %d.%d) from %s\n"
             "  sink.sink\n"
             "    report  duration  default 0  log a line with the counts and the rate every this "
             "long; 0 = never\n",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, path);
    same(got, want, "sink");

    snprintf(path, sizeof path, "%s/no_args.so", SHOAL_FIXTURE_DIR);
    describe(path, NULL, got, sizeof got);
    snprintf(want, sizeof want,
             "plugin noargs 1 (ABI %d.%d) from %s\n"
             "  noargs.quiet  (takes no args)\n",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, path);
    same(got, want, "no_args");

    snprintf(path, sizeof path, "%s/abi_1_2.so", SHOAL_FIXTURE_DIR);
    describe(path, "old", got, sizeof got);
    snprintf(want, sizeof want,
             "plugin abi12 1.2 (ABI %d.2) from %s, as old\n"
             "  old.old  (args not declared: not checked)\n",
             SHOAL_ABI_MAJOR, path);
    same(got, want, "abi_1_2");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"malformed schemas", test_schemas},
        {"too many keys", test_too_many_keys},
        {"bad args against the bundled plugins", test_bad_args},
        {"good args, and behaviours without a schema", test_good_args},
        {"a missing key with no place", test_no_place},
        {"describe", test_describe},
        {NULL, NULL},
    };
    return shoal_test_run("argcheck", cases);
}
