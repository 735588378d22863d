/* test_config_sources.c - shoald's config (host/config.c) for the
 * sources: section (singleton actors that feed pools): read into every
 * field, refused with whole messages, and resolved against the bundled
 * plugins (SHOAL_PLUGIN_DIR) with their args checked against the
 * behaviour's schema. */
#include "config_kit.h"

/* ---- sources ----------------------------------------------------------------- */

#define SRC CF_PL "pools:\n  api:\n    worker: e.echo\nsources:\n"

static void test_sources(void)
{
    shoal_config_t *c = cf_parse(SRC "  load:\n    actor: e.gen\n    args: {target: api, rate: 5}\n"
                                     "    restart: {max: 3, within: 2s, backoff: 50ms}\n"
                                     "  quiet: {actor: e.idle}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->npools, 1);
    CU_ASSERT_EQUAL_FATAL(c->nsources, 2);
    const shoal_config_pool_t *s = shoal__config_source(c, "load");
    CU_ASSERT_PTR_EQUAL_FATAL(s, &c->sources[0]);
    CU_ASSERT_STRING_EQUAL(s->name, "load");
    CU_ASSERT_STRING_EQUAL(s->path, "sources.load");
    CU_ASSERT_STRING_EQUAL(s->plugin, "e");
    CU_ASSERT_STRING_EQUAL(s->behaviour, "gen");
    CU_ASSERT(s->source);
    CU_ASSERT_EQUAL(s->size, 1);
    CU_ASSERT_EQUAL(s->min_size, 1);
    CU_ASSERT_EQUAL(s->max_size, 1);
    CU_ASSERT_EQUAL(s->mailbox, 64);
    CU_ASSERT_PTR_NULL(s->nested);
    CU_ASSERT_EQUAL(s->restart.max, 3);
    CU_ASSERT_EQUAL(s->restart.within_ms, 2000);
    CU_ASSERT_EQUAL(s->restart.backoff_ms, 50);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->args);
    CU_ASSERT_EQUAL(s->args->n, 2);
    CU_ASSERT_EQUAL(s->at->line, 7); /* the mapping under `load:` */
    const shoal_config_pool_t *q = shoal__config_source(c, "quiet");
    CU_ASSERT_PTR_EQUAL_FATAL(q, &c->sources[1]);
    CU_ASSERT_STRING_EQUAL(q->behaviour, "idle");
    CU_ASSERT_EQUAL(q->restart.max, 5); /* a pool's defaults */
    CU_ASSERT_EQUAL(q->restart.within_ms, 5000);
    CU_ASSERT_EQUAL(q->restart.backoff_ms, 100);
    CU_ASSERT_PTR_NULL(q->args);
    CU_ASSERT_PTR_NULL(shoal__config_source(c, "api")); /* a pool, not a source */
    CU_ASSERT_PTR_NULL(shoal__config_pool(c, "load"));  /* and the other way round */
    shoal__config_free(c);
    /* none, or an empty section */
    c = cf_parse(CF_P);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->nsources, 0);
    shoal__config_free(c);
    c = cf_parse(CF_P "sources: {}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->nsources, 0);
    shoal__config_free(c);

    static const cf_bad_case_t bad[] = {
        {SRC "  api: {actor: e.gen}\n",
         CF_F "6:3: sources.api: the name is taken by pools.api (line 4): a name is one actor, a "
              "pool or a source"},
        {SRC "  load: {worker: e.gen}\n",
         CF_F "6:10: unknown key 'worker' in sources.load (expected one of: actor, args, restart)"},
        {SRC "  load: {args: {rate: 1}}\n",
         CF_F "6:9: sources.load: missing key 'actor' (PLUGIN.BEHAVIOUR)"},
        {SRC "  load: {actor: {worker: e.echo}}\n",
         CF_F "6:17: sources.load.actor: expected PLUGIN.BEHAVIOUR (e.g. loadgen.loadgen), got a "
              "mapping"},
        {SRC "  load: {actor: gen}\n",
         CF_F "6:17: sources.load.actor: expected PLUGIN.BEHAVIOUR (e.g. loadgen.loadgen), got "
              "'gen'"},
        {SRC "  load: {actor: x.gen}\n",
         CF_F "6:17: sources.load.actor: no plugin 'x' under plugins:"},
        {SRC "  load: {actor: e.gen, args: [1]}\n",
         CF_F "6:30: sources.load.args: expected a mapping, got a list"},
        {SRC "  load: {actor: e.gen, restart: {max: -1}}\n",
         CF_F "6:39: sources.load.restart.max: -1 is out of range: expected 0 to 1000000"},
        {SRC "  a/b: {actor: e.gen}\n", CF_F
         "6:3: sources: 'a/b' is not a source name (1 to 63 letters, digits, '_', '-' or '.')"},
        {CF_P "sources: [a, b]\n",
         CF_F "5:10: sources: expected a mapping of NAME: SOURCE, got a list"},
        {CF_P "sources:\n  load: 1\n", CF_F "6:9: sources.load: expected a mapping, got a value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cf_refused(bad[i].text, bad[i].error);
}

/* A source's behaviour is resolved, and its args checked against the
 * behaviour's schema, like a pool's. */
static void check_source_resolved(shoal_config_t *c, shoal_loader_t *L)
{
    (void)L;
    CU_ASSERT_EQUAL_FATAL(c->nsources, 1);
    CU_ASSERT_PTR_EQUAL(c->sources[0].module, c->plugins[1].module);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->sources[0].beh);
    CU_ASSERT_STRING_EQUAL(c->sources[0].beh->name, "loadgen");
}

#define SRC_GOOD                                                                                   \
    "plugins:\n  echo: %1$s/echo/echo.so\n  loadgen: %1$s/loadgen/loadgen.so\n"                    \
    "pools:\n  a:\n    worker: echo.echo\nsources:\n  load:\n    actor: loadgen.loadgen\n"

static void test_sources_resolve(void)
{
    char err[1200];
    CU_ASSERT_EQUAL(cf_resolve(SRC_GOOD "    args: {target: a, rate: 10}\n", err, sizeof err,
                               check_source_resolved),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(cf_resolve(SRC_GOOD "    args: {target: a, rat: 10}\n", err, sizeof err, NULL),
                    SHOAL_EINVAL);
    shoal_test_same(err,
                    CF_F
                    "10:23: sources.load.args: unknown key 'rat' for loadgen.loadgen (it takes: "
                    "target, rate, size, type, count, done, tick, call, timeout, window, group)",
                    "rat");
    CU_ASSERT_EQUAL(cf_resolve(SRC_GOOD "    args: {rate: 10}\n", err, sizeof err, NULL),
                    SHOAL_EINVAL);
    shoal_test_same(
        err, CF_F "10:11: sources.load.args: missing required key 'target' for loadgen.loadgen",
        "no target");
    CU_ASSERT_EQUAL(cf_resolve("plugins:\n  echo: %1$s/echo/echo.so\npools: {}\nsources:\n  l:\n"
                               "    actor: echo.gen\n",
                               err, sizeof err, NULL),
                    SHOAL_ELOAD);
    shoal_test_same(
        err, CF_F "6:12: sources.l.actor: plugin 'echo' has no behaviour 'gen' (it has: echo)",
        "no behaviour");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"sources", test_sources},
        {"sources resolve", test_sources_resolve},
        {NULL, NULL},
    };
    return shoal_test_run("config_sources", cases);
}
