/* test_config_elastic.c - elastic pools in shoald's config
 * (host/config_elastic.c, the elastic rows of host/schema.c): a pool with
 * every elastic key read into every field, into its spec and into the
 * autoscale line; autoscale's defaults; each form of a `when` condition
 * parsed to the thresholds the pool compares (permille, us, per second);
 * idle_timeout, max_waiting and strategy at their edges; a table of bad
 * files, one mistake each, refused with its whole message (file:line:col
 * of the offending node): condition syntax, hysteresis, bounds, where the
 * keys apply, durations, steps, unknown keys, and the three plain keys;
 * --help-config's elastic rows and paragraph. Decisions at run time are
 * test_autoscale.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_kit.h"
#include "host/host.h"

/* autoscale with max 4 and one `when` under test: up's at 5:36, down's at
 * 5:38. */
#define AS CF_P "    autoscale: "
#define UP(w) AS "{max: 4, up: {when: " w "}}\n"
#define DOWN(w) AS "{max: 4, down: {when: " w "}}\n"

/* Messages that repeat. */
#define PCT "expected a percentage, 0% to 100% (e.g. 80% or 82.5%)"
#define DUR "expected a duration (e.g. 5ms, 500us or 1.5s)"
#define PER_S "expected sends a second (e.g. 0, 100 or 100/s)"
#define SIGNAL                                                                                     \
    "the signal is busy, wait_p99 or refused (e.g. busy > 80%, wait_p99 > 5ms or refused > 0)"
#define GAP "(between the two nothing moves: that gap is what keeps a steady load from flapping)"
#define NO_WORKER                                                                                  \
    "pools.api.autoscale: it would start with no worker and nothing would start one (busy stays "  \
    "0% and no queue wait is measured): give size or min >= 1, or idle_timeout (a send starts a "  \
    "worker), or up.when on refused"

/* ---- a valid elastic pool ---------------------------------------------------- */

#define FULL                                                                                       \
    CF_P "    idle_timeout: 2s\n"                                                                  \
         "    max_waiting: 100\n"                                                                  \
         "    strategy: least_loaded\n"                                                            \
         "    autoscale:\n"                                                                        \
         "      min: 2\n"                                                                          \
         "      max: 16\n"                                                                         \
         "      up:\n"                                                                             \
         "        when: [busy >= 75%, wait_p99 > 20ms, refused > 5/s]\n"                           \
         "        for: 500ms\n"                                                                    \
         "        step: 2\n"                                                                       \
         "      down:\n"                                                                           \
         "        when: [busy < 25%, wait_p99 <= 2ms]\n"                                           \
         "        idle: 1m\n"                                                                      \
         "        step: 3\n"                                                                       \
         "      cooldown: 10s\n"

static void test_full(void)
{
    shoal_config_t *c = cf_parse(FULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const shoal_config_pool_t *p = shoal__config_pool(c, "api");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->kind, SHOAL_POOL_KIND_FORWARD);
    CU_ASSERT_EQUAL(p->strategy, SHOAL_POOL_STRATEGY_LEAST_LOADED);
    CU_ASSERT_EQUAL(p->idle_timeout_ms, 2000);
    CU_ASSERT_EQUAL(p->max_waiting, 100);
    /* autoscale's bounds are the pool's; no size: it starts at min */
    CU_ASSERT_EQUAL(p->as_min, 2);
    CU_ASSERT_EQUAL(p->as_max, 16);
    CU_ASSERT_EQUAL(p->min_size, 2);
    CU_ASSERT_EQUAL(p->max_size, 16);
    CU_ASSERT_EQUAL(p->size, 2);
    /* the `when` nodes are kept, at their place */
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->up_when_at);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->down_when_at);
    CU_ASSERT_EQUAL(p->up_when_at->line, 12);
    CU_ASSERT_EQUAL(p->up_when_at->col, 15);
    CU_ASSERT_EQUAL(p->down_when_at->line, 16);
    const shoal_pool_autoscale_t *a = &p->autoscale;
    CU_ASSERT_EQUAL(a->when, SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_WAIT | SHOAL_AUTOSCALE_REFUSED);
    CU_ASSERT_EQUAL(a->up_busy, 749);   /* >= 75%: above 74.9% */
    CU_ASSERT_EQUAL(a->down_busy, 249); /* < 25%: at most 24.9% */
    CU_ASSERT_EQUAL(a->up_wait_us, 20000);
    CU_ASSERT_EQUAL(a->down_wait_us, 2000);
    CU_ASSERT_EQUAL(a->up_refused, 5);
    CU_ASSERT_EQUAL(a->down_refused, 2); /* not named in down.when: half of up's */
    CU_ASSERT_EQUAL(a->up_for_ms, 500);
    CU_ASSERT_EQUAL(a->up_step, 2);
    CU_ASSERT_EQUAL(a->down_idle_ms, 60000);
    CU_ASSERT_EQUAL(a->down_step, 3);
    CU_ASSERT_EQUAL(a->cooldown_ms, 10000);

    /* The spec carries them as they are. */
    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(p, specs, &leaf);
    CU_ASSERT_PTR_EQUAL(leaf, p);
    CU_ASSERT_EQUAL(specs[0].size, 2);
    CU_ASSERT_EQUAL(specs[0].min_size, 2);
    CU_ASSERT_EQUAL(specs[0].max_size, 16);
    CU_ASSERT_EQUAL(specs[0].strategy, SHOAL_POOL_STRATEGY_LEAST_LOADED);
    CU_ASSERT_EQUAL(specs[0].idle_timeout_ms, 2000);
    CU_ASSERT_EQUAL(specs[0].max_waiting, 100);
    CU_ASSERT_EQUAL(memcmp(&specs[0].autoscale, a, sizeof *a), 0);

    char line[400];
    shoal__config_autoscale_text(a, line, sizeof line);
    shoal_test_same(line,
                    "up when busy > 74.9%, wait_p99 > 20000us, refused > 5/s for 500ms (+2 at "
                    "least); down when busy <= 24.9%, wait_p99 <= 2000us, refused <= 2/s for "
                    "60000ms (-3); cooldown 10000ms",
                    FULL);
    shoal__config_free(c);
}

/* autoscale with only max: the SDK's defaults and busy > 80%; a pool
 * without the elastic keys: all off. */
static void test_defaults(void)
{
    shoal_config_t *c = cf_parse(CF_P "    size: 3\n    autoscale: {max: 8}\n"
                                      "  plain: {worker: e.echo}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const shoal_config_pool_t *p = shoal__config_pool(c, "api");
    const shoal_config_pool_t *q = shoal__config_pool(c, "plain");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL(p->size, 3);
    CU_ASSERT_EQUAL(p->min_size, 1);
    CU_ASSERT_EQUAL(p->max_size, 8);
    CU_ASSERT_PTR_NULL(p->up_when_at);
    CU_ASSERT_PTR_NULL(p->down_when_at);
    const shoal_pool_autoscale_t *a = &p->autoscale;
    CU_ASSERT_EQUAL(a->when, SHOAL_AUTOSCALE_BUSY);
    CU_ASSERT_EQUAL(a->up_busy, 800);
    CU_ASSERT_EQUAL(a->down_busy, 400);
    CU_ASSERT_EQUAL(a->up_wait_us, 5000);
    CU_ASSERT_EQUAL(a->down_wait_us, 2500);
    CU_ASSERT_EQUAL(a->up_refused, 0);
    CU_ASSERT_EQUAL(a->down_refused, 0);
    CU_ASSERT_EQUAL(a->up_for_ms, 1000);
    CU_ASSERT_EQUAL(a->up_step, 1);
    CU_ASSERT_EQUAL(a->down_idle_ms, 30000);
    CU_ASSERT_EQUAL(a->down_step, 1);
    CU_ASSERT_EQUAL(a->cooldown_ms, 5000);
    char line[400];
    shoal__config_autoscale_text(a, line, sizeof line);
    shoal_test_same(line,
                    "up when busy > 80% for 1000ms (+1 at least); down when busy <= 40% for "
                    "30000ms (-1); cooldown 5000ms",
                    "defaults");
    CU_ASSERT_EQUAL(q->autoscale.when, 0);
    CU_ASSERT_EQUAL(q->idle_timeout_ms, 0);
    CU_ASSERT_EQUAL(q->max_waiting, 0);
    CU_ASSERT_EQUAL(q->strategy, SHOAL_POOL_STRATEGY_FIFO);
    CU_ASSERT_EQUAL(q->min_size, 1);
    CU_ASSERT_EQUAL(q->max_size, 1024);
    shoal__config_autoscale_text(&q->autoscale, line, sizeof line);
    shoal_test_same(line, "off", "plain");
    shoal__config_free(c);
}

/* Each form of a condition, and the thresholds the pool compares: pressure
 * is a reading above up_*, calm one at or below down_*. A signal up.when
 * names and down.when does not is calm at half its up threshold; one up.when
 * does not name keeps the SDK's default. */
static void test_conditions(void)
{
    static const struct {
        const char *up, *down; /* down NULL: not given */
        uint32_t when, up_busy, down_busy;
        uint64_t up_wait, down_wait, up_refused, down_refused;
    } cases[] = {
        {"busy > 80%", NULL, SHOAL_AUTOSCALE_BUSY, 800, 400, 5000, 2500, 0, 0},
        {"busy >= 80%", NULL, SHOAL_AUTOSCALE_BUSY, 799, 399, 5000, 2500, 0, 0},
        {"busy > 37.5%", NULL, SHOAL_AUTOSCALE_BUSY, 375, 187, 5000, 2500, 0, 0},
        {"busy > 0.1%", NULL, SHOAL_AUTOSCALE_BUSY, 1, 0, 5000, 2500, 0, 0},
        {"busy>90%", "busy < 40%", SHOAL_AUTOSCALE_BUSY, 900, 399, 5000, 2500, 0, 0},
        {"busy > 80%", "busy <= 40%", SHOAL_AUTOSCALE_BUSY, 800, 400, 5000, 2500, 0, 0},
        /* the narrowest gap: only 80.0% itself moves nothing */
        {"busy > 80%", "busy < 80%", SHOAL_AUTOSCALE_BUSY, 800, 799, 5000, 2500, 0, 0},
        {"wait_p99 > 5ms", NULL, SHOAL_AUTOSCALE_WAIT, 800, 400, 5000, 2500, 0, 0},
        {"wait_p99 > 500us", NULL, SHOAL_AUTOSCALE_WAIT, 800, 400, 500, 250, 0, 0},
        {"wait_p99 >= 500us", NULL, SHOAL_AUTOSCALE_WAIT, 800, 400, 499, 249, 0, 0},
        {"wait_p99 > 1.5s", "wait_p99 <= 0ms", SHOAL_AUTOSCALE_WAIT, 800, 400, 1500000, 0, 0, 0},
        {"wait_p99 > 5 ms", "wait_p99 < 1.5ms", SHOAL_AUTOSCALE_WAIT, 800, 400, 5000, 1499, 0, 0},
        {"refused > 0", NULL, SHOAL_AUTOSCALE_REFUSED, 800, 400, 5000, 2500, 0, 0},
        {"refused > 100/s", NULL, SHOAL_AUTOSCALE_REFUSED, 800, 400, 5000, 2500, 100, 50},
        {"refused > 100", "refused < 10", SHOAL_AUTOSCALE_REFUSED, 800, 400, 5000, 2500, 100, 9},
        /* refused: calm may equal pressure's threshold */
        {"refused > 0", "refused <= 0", SHOAL_AUTOSCALE_REFUSED, 800, 400, 5000, 2500, 0, 0},
        {"refused > 0", "refused < 1", SHOAL_AUTOSCALE_REFUSED, 800, 400, 5000, 2500, 0, 0},
        /* several signals: a list; down.when names some of them */
        {"[busy > 80%, refused > 0]", NULL, SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_REFUSED, 800,
         400, 5000, 2500, 0, 0},
        {"[busy > 80%, wait_p99 > 4ms]", "busy < 50%", SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_WAIT,
         800, 499, 4000, 2000, 0, 0},
        {"[wait_p99 > 2ms]", "[wait_p99 < 1ms]", SHOAL_AUTOSCALE_WAIT, 800, 400, 2000, 999, 0, 0},
        {"[busy >= 80%, wait_p99 > 5ms, refused > 100/s]",
         "[busy <= 30%, wait_p99 < 1.5ms, refused < 10]",
         SHOAL_AUTOSCALE_BUSY | SHOAL_AUTOSCALE_WAIT | SHOAL_AUTOSCALE_REFUSED, 799, 300, 5000,
         1499, 100, 9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[400], down[120] = "";
        if (cases[i].down != NULL)
            snprintf(down, sizeof down, ", down: {when: %s}", cases[i].down);
        snprintf(text, sizeof text, AS "{max: 4, up: {when: %s}%s}\n", cases[i].up, down);
        shoal_config_t *c = cf_parse(text);
        CU_ASSERT_PTR_NOT_NULL(c);
        if (c == NULL)
            continue;
        const shoal_pool_autoscale_t *a = &c->pools[0].autoscale;
        bool same = a->when == cases[i].when && a->up_busy == cases[i].up_busy &&
                    a->down_busy == cases[i].down_busy && a->up_wait_us == cases[i].up_wait &&
                    a->down_wait_us == cases[i].down_wait && a->up_refused == cases[i].up_refused &&
                    a->down_refused == cases[i].down_refused;
        CU_ASSERT(same);
        if (!same)
            fprintf(stderr,
                    "\n    for:  %s    got: when %u busy %u/%u wait %llu/%llu refused "
                    "%llu/%llu\n",
                    text, a->when, a->up_busy, a->down_busy, (unsigned long long)a->up_wait_us,
                    (unsigned long long)a->down_wait_us, (unsigned long long)a->up_refused,
                    (unsigned long long)a->down_refused);
        shoal__config_free(c);
    }
}

/* idle_timeout, max_waiting and strategy at their edges, on a forward pool
 * and on a pull pool (whose elastic keys are its own too); a pool that
 * starts with no worker when something would start one. */
static void test_keys(void)
{
    shoal_config_t *c = cf_parse(
        CF_P "    idle_timeout: never\n    max_waiting: 16777216\n    strategy: round_robin\n"
             "  lo: {worker: e.echo, idle_timeout: 10ms, max_waiting: 0, strategy: fifo}\n"
             "  hi: {worker: e.echo, idle_timeout: 8760h}\n"
             "  jobs: {kind: pull, worker: e.echo, idle_timeout: 1s, max_waiting: 3, "
             "autoscale: {max: 6}}\n"
             "  lazy: {worker: e.echo, idle_timeout: 1s, autoscale: {min: 0, max: 4}}\n"
             "  spill: {worker: e.echo, min: 0, autoscale: {max: 4, up: {when: refused > 0}}}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL_FATAL(c->npools, 6);
    const shoal_config_pool_t *p = c->pools;
    CU_ASSERT_EQUAL(p[0].idle_timeout_ms, 0);
    CU_ASSERT_EQUAL(p[0].max_waiting, 16777216);
    CU_ASSERT_EQUAL(p[0].strategy, SHOAL_POOL_STRATEGY_ROUND_ROBIN);
    CU_ASSERT_EQUAL(p[1].idle_timeout_ms, 10);
    CU_ASSERT_EQUAL(p[1].max_waiting, 0);
    CU_ASSERT_EQUAL(p[1].strategy, SHOAL_POOL_STRATEGY_FIFO);
    CU_ASSERT_EQUAL(p[2].idle_timeout_ms, UINT64_C(31536000000));
    CU_ASSERT_EQUAL(p[3].kind, SHOAL_POOL_KIND_PULL);
    CU_ASSERT_EQUAL(p[3].idle_timeout_ms, 1000);
    CU_ASSERT_EQUAL(p[3].max_waiting, 3);
    CU_ASSERT_EQUAL(p[3].autoscale.when, SHOAL_AUTOSCALE_BUSY);
    CU_ASSERT_EQUAL(p[3].size, 1);
    CU_ASSERT_EQUAL(p[3].max_size, 6);
    /* min 0 and no size: none at start, a send starts one (idle_timeout) or a
     * refusal does (refused) */
    CU_ASSERT_EQUAL(p[4].size, 0);
    CU_ASSERT_EQUAL(p[4].min_size, 0);
    CU_ASSERT_EQUAL(p[5].size, 0);
    CU_ASSERT_EQUAL(p[5].min_size, 0);
    CU_ASSERT_EQUAL(p[5].autoscale.when, SHOAL_AUTOSCALE_REFUSED);
    shoal__config_free(c);
}

/* ---- bad files ------------------------------------------------------------------ */

static const cf_bad_case_t bad_cases[] = {
    /* a condition's syntax: at the condition */
    {UP("busy >> 80%"), CF_F "5:36: pools.api.autoscale.up.when: 'busy >> 80%': " PCT},
    {UP("busy > 180%"), CF_F "5:36: pools.api.autoscale.up.when: 'busy > 180%': " PCT},
    {UP("busy > 82.55%"), CF_F "5:36: pools.api.autoscale.up.when: 'busy > 82.55%': " PCT},
    {UP("busy > 80"), CF_F "5:36: pools.api.autoscale.up.when: 'busy > 80': " PCT},
    {UP("wait_p99 > 5parsecs"),
     CF_F "5:36: pools.api.autoscale.up.when: 'wait_p99 > 5parsecs': " DUR},
    {UP("wait_p99 > 0.5us"), CF_F "5:36: pools.api.autoscale.up.when: 'wait_p99 > 0.5us': " DUR},
    {UP("wait_p99 > 5"), CF_F "5:36: pools.api.autoscale.up.when: 'wait_p99 > 5': " DUR},
    {UP("refused > 1.5"), CF_F "5:36: pools.api.autoscale.up.when: 'refused > 1.5': " PER_S},
    {UP("refused > 10/m"), CF_F "5:36: pools.api.autoscale.up.when: 'refused > 10/m': " PER_S},
    {UP("latency > 5ms"), CF_F "5:36: pools.api.autoscale.up.when: 'latency > 5ms': " SIGNAL},
    {UP("''"), CF_F "5:36: pools.api.autoscale.up.when: '': " SIGNAL},
    {UP(""), CF_F "5:36: pools.api.autoscale.up.when: '': " SIGNAL},
    {UP("[]"), CF_F "5:36: pools.api.autoscale.up.when: the list is empty: name a condition"},
    {UP("{busy: 80%}"), CF_F "5:36: pools.api.autoscale.up.when: expected a condition or a list "
                             "of them, got a mapping"},
    {UP("[[busy > 80%]]"), CF_F "5:37: pools.api.autoscale.up.when: expected a condition like "
                                "busy > 80%, wait_p99 > 5ms or refused > 0, got a list"},
    {UP("busy 80%"), CF_F "5:36: pools.api.autoscale.up.when: 'busy 80%': expected > or >= after "
                          "busy"},
    {UP("busy < 80%"),
     CF_F "5:36: pools.api.autoscale.up.when: 'busy < 80%': up.when conditions say > or >= "
          "(pressure is a signal above its threshold, calm one below it)"},
    {UP("[busy > 80%, busy > 90%]"),
     CF_F "5:49: pools.api.autoscale.up.when: busy is named twice (first at line 5)"},
    {UP("busy > 100%"), CF_F "5:36: pools.api.autoscale.up.when: busy is never above 100%"},
    /* BUG: config_elastic.c crashed on these four (no down.when to report
     * at), or took refused >= 0 for refused > 0 */
    {UP("busy > 0%"), CF_F "5:36: pools.api.autoscale.up.when: 'busy > 0%' leaves no calm below "
                           "it (nothing is below 0): write a threshold above 0"},
    {UP("wait_p99 > 0us"),
     CF_F "5:36: pools.api.autoscale.up.when: 'wait_p99 > 0us' leaves no calm below it (nothing "
          "is below 0): write a threshold above 0"},
    {UP("busy >= 0%"), CF_F "5:36: pools.api.autoscale.up.when: 'busy >= 0%' always holds "
                            "(nothing is below 0): the pool would only grow"},
    {UP("refused >= 0"), CF_F "5:36: pools.api.autoscale.up.when: 'refused >= 0' always holds "
                              "(nothing is below 0): the pool would only grow"},
    {DOWN("busy > 30%"),
     CF_F "5:38: pools.api.autoscale.down.when: 'busy > 30%': down.when conditions say < or <= "
          "(pressure is a signal above its threshold, calm one below it)"},
    {DOWN("busy < 0%"), CF_F "5:38: pools.api.autoscale.down.when: 'busy < 0%' never holds "
                             "(nothing is below 0): write busy <= 0"},
    {DOWN("wait_p99 < 1ms"),
     CF_F "5:38: pools.api.autoscale.down.when: wait_p99 is not one of up.when's signals (calm is "
          "judged on what pressure is)"},
    {DOWN("[]"), CF_F "5:38: pools.api.autoscale.down.when: the list is empty: name a condition"},
    /* hysteresis: calm below pressure, at the down condition */
    {DOWN("busy < 90%"),
     CF_F "5:38: pools.api.autoscale.down.when: 'busy < 90%' is not below up.when's busy " GAP},
    {DOWN("busy <= 80%"),
     CF_F "5:38: pools.api.autoscale.down.when: 'busy <= 80%' is not below up.when's busy " GAP},
    {AS "{max: 4, up: {when: refused > 0}, down: {when: refused <= 1}}\n",
     CF_F "5:63: pools.api.autoscale.down.when: 'refused <= 1' is not below up.when's "
          "refused " GAP},
    {AS "{max: 4, up: {when: wait_p99 > 5ms}, down: {when: wait_p99 <= 5ms}}\n",
     CF_F "5:66: pools.api.autoscale.down.when: 'wait_p99 <= 5ms' is not below up.when's "
          "wait_p99 " GAP},
    {AS "{max: 4, up: {when: busy > 0%}, down: {when: busy <= 0%}}\n",
     CF_F "5:61: pools.api.autoscale.down.when: 'busy <= 0%' is not below up.when's busy " GAP},
    /* bounds: max required, given once, min <= max */
    {AS "{}\n", CF_F "5:5: pools.api.autoscale: missing key 'max' (the most workers it may "
                     "start)"},
    {CF_P "    max: 8\n    autoscale: {up: {for: 1s}}\n",
     CF_F "6:5: pools.api.autoscale: missing key 'max' (the most workers it may start)"},
    {CF_P "    max: 8\n    autoscale: {max: 4}\n",
     CF_F "5:5: pools.api.max: the pool's bounds are given once: as autoscale.min and .max (line "
          "6) or here, not both"},
    {CF_P "    min: 1\n    autoscale: {min: 1, max: 4}\n",
     CF_F "5:5: pools.api.min: the pool's bounds are given once: as autoscale.min and .max (line "
          "6) or here, not both"},
    {AS "{min: 5, max: 3}\n", CF_F "5:17: pools.api.autoscale: min 5 is above max 3"},
    {CF_P "    min: 5\n    autoscale: {max: 3}\n",
     CF_F "6:17: pools.api.autoscale: min 5 is above max 3"},
    {CF_P "    size: 9\n    autoscale: {max: 8}\n", CF_F "5:11: pools.api.size: 9 is above max 8"},
    {AS "{max: 0}\n", CF_F "5:22: pools.api.autoscale.max: 0 is out of range: expected 1 to 65536"},
    {AS "{max: 70000}\n",
     CF_F "5:22: pools.api.autoscale.max: 70000 is out of range: expected 1 to 65536"},
    {AS "{min: -1, max: 4}\n",
     CF_F "5:22: pools.api.autoscale.min: -1 is out of range: expected 0 to 65536"},
    /* no worker at start and nothing to start one: at the 0 */
    {AS "{min: 0, max: 4}\n", CF_F "5:17: " NO_WORKER},
    {AS "{max: 4}\n    size: 0\n", CF_F "6:5: " NO_WORKER},
    /* BUG: taken -- with no worker no queue wait is measured: it never grew */
    {AS "{min: 0, max: 4, up: {when: wait_p99 > 5ms}}\n", CF_F "5:17: " NO_WORKER},
    {AS "{min: 0, max: 4, up: {when: [busy > 80%, wait_p99 > 5ms]}}\n", CF_F "5:17: " NO_WORKER},
    /* BUG: config_elastic.c gave no file:line:col (the pool's min was not
     * looked at) */
    {CF_P "    min: 0\n    autoscale: {max: 4}\n", CF_F "5:5: " NO_WORKER},
    /* BUG: config_elastic.c said it at autoscale.min (6:17), which is 2 */
    {CF_P "    size: 0\n    autoscale: {min: 2, max: 4}\n", CF_F "5:5: " NO_WORKER},
    /* where the elastic keys apply: at the first of them */
    {CF_PL "pools:\n  api:\n    worker:\n      worker: e.echo\n      idle_timeout: 1s\n",
     CF_F "6:7: pools.api.worker.idle_timeout: only a pool under pools: takes idle_timeout (a "
          "nested pool is sized by the pool above it)"},
    {CF_PL "pools:\n  api:\n    worker: {worker: e.echo, autoscale: {max: 4}}\n",
     CF_F "4:30: pools.api.worker.autoscale: only a pool under pools: takes autoscale (a nested "
          "pool is sized by the pool above it)"},
    /* BUG: config_elastic.c said "put it where worker: is PLUGIN.BEHAVIOUR":
     * in the nested pool, which refuses it (above) */
    {CF_PL "pools:\n  api:\n    worker: {worker: e.echo}\n    max_waiting: 4\n"
           "    autoscale: {max: 4}\n",
     CF_F "5:5: pools.api.max_waiting: a pool of pools does not take max_waiting (its workers "
          "are pools, not actors: only a pool under pools: whose worker: is PLUGIN.BEHAVIOUR "
          "takes it)"},
    {CF_P "    isolation: process\n    autoscale: {max: 4}\n",
     CF_F "6:5: pools.api.autoscale: not with isolation: process (its workers are in another "
          "process)"},
    {CF_P "    idle_timeout: 1s\n    isolation: process\n",
     CF_F "5:5: pools.api.idle_timeout: not with isolation: process (its workers are in another "
          "process)"},
    {CF_PL "pools:\n  db: {kind: checkout, member: e.echo, autoscale: {max: 4}}\n",
     CF_F "3:40: pools.db.autoscale: not a checkout pool's key (it grows on demand up to max and "
          "is culled back to init)"},
    {CF_PL "pools:\n  db: {kind: checkout, member: e.echo, max_waiting: 4}\n",
     CF_F "3:40: pools.db.max_waiting: not a checkout pool's key (write queue_max: the takers "
          "that may wait at once)"},
    {CF_PL "pools:\n  db: {kind: checkout, member: e.echo, strategy: round_robin}\n",
     CF_F "3:50: pools.db.strategy: a checkout pool takes fifo (the member free the longest) or "
          "lifo (the member given back last), not round_robin"},
    {CF_PL "pools:\n  db: {worker: e.echo, strategy: lifo}\n",
     CF_F "3:34: pools.db.strategy: lifo is a checkout pool's (a forward pool takes fifo, "
          "least_loaded or round_robin)"},
    /* for, idle, cooldown: durations, at most a year */
    {AS "{max: 4, up: {for: 1}}\n",
     CF_F "5:35: pools.api.autoscale.up.for: '1' has no unit: expected a duration like 250ms, 2s "
          "or 1m"},
    {AS "{max: 4, up: {for: -1s}}\n",
     CF_F "5:35: pools.api.autoscale.up.for: expected a duration like 250ms, 2s or 1m, got "
          "'-1s'"},
    {AS "{max: 4, up: {for: 8761h}}\n",
     CF_F "5:35: pools.api.autoscale.up.for: at most 365 days, got '8761h'"},
    {AS "{max: 4, cooldown: 5sec}\n",
     CF_F "5:35: pools.api.autoscale.cooldown: unknown unit in '5sec': expected a duration like "
          "250ms, 2s or 1m"},
    {AS "{max: 4, cooldown: [5s]}\n",
     CF_F "5:35: pools.api.autoscale.cooldown: expected a duration, got a list"},
    {AS "{max: 4, down: {idle: soon}}\n",
     CF_F "5:38: pools.api.autoscale.down.idle: expected a duration like 250ms, 2s or 1m, got "
          "'soon'"},
    {AS "{max: 4, down: {idle: 8761h}}\n",
     CF_F "5:38: pools.api.autoscale.down.idle: at most 365 days, got '8761h'"},
    /* steps: 1 to the most workers a pool has */
    {AS "{max: 4, up: {step: 0}}\n",
     CF_F "5:36: pools.api.autoscale.up.step: 0 is out of range: expected 1 to 65536"},
    {AS "{max: 4, up: {step: 65537}}\n",
     CF_F "5:36: pools.api.autoscale.up.step: 65537 is out of range: expected 1 to 65536"},
    {AS "{max: 4, down: {step: 0}}\n",
     CF_F "5:38: pools.api.autoscale.down.step: 0 is out of range: expected 1 to 65536"},
    {AS "{max: 4, down: {step: 100000}}\n",
     CF_F "5:38: pools.api.autoscale.down.step: 100000 is out of range: expected 1 to 65536"},
    /* unknown keys, wrong types: each section lists what it takes */
    {AS "{max: 4, mn: 1}\n", CF_F "5:25: unknown key 'mn' in pools.api.autoscale (expected one "
                                  "of: min, max, up, down, cooldown)"},
    {AS "{max: 4, up: {when: busy > 80%, steps: 2}}\n",
     CF_F "5:48: unknown key 'steps' in pools.api.autoscale.up (expected one of: when, for, "
          "step)"},
    {AS "{max: 4, down: {wait: 1s}}\n", CF_F "5:32: unknown key 'wait' in pools.api.autoscale.down "
                                             "(expected one of: when, idle, step)"},
    {AS "4\n", CF_F "5:16: pools.api.autoscale: expected a mapping, got a value"},
    {AS "{max: 4, up: 1}\n", CF_F "5:29: pools.api.autoscale.up: expected a mapping, got a value"},
    {AS "{max: 4, down: [idle]}\n",
     CF_F "5:31: pools.api.autoscale.down: expected a mapping, got a list"},
    /* strategy, max_waiting, idle_timeout */
    {CF_P "    strategy: random\n",
     CF_F "5:15: pools.api.strategy: expected one of fifo, least_loaded, round_robin, lifo, "
          "got 'random'"},
    {CF_P "    max_waiting: -1\n",
     CF_F "5:18: pools.api.max_waiting: -1 is out of range: expected 0 to 16777216"},
    {CF_P "    max_waiting: 16777217\n",
     CF_F "5:18: pools.api.max_waiting: 16777217 is out of range: expected 0 to 16777216"},
    {CF_P "    max_waiting: 99999999999999999999\n",
     CF_F "5:18: pools.api.max_waiting: 99999999999999999999 is out of range: expected 0 to "
          "16777216"},
    {CF_P "    max_waiting: lots\n",
     CF_F "5:18: pools.api.max_waiting: expected an integer, got 'lots'"},
    {CF_P "    max_waiting: \"5\"\n", CF_F "5:18: pools.api.max_waiting: expected an integer, got "
                                           "the string \"5\" (write numbers without quotes)"},
    {CF_P "    idle_timeout: 5ms\n",
     CF_F "5:19: pools.api.idle_timeout: must be at least 10ms (or never), got '5ms'"},
    {CF_P "    idle_timeout: 0\n",
     CF_F "5:19: pools.api.idle_timeout: must be at least 10ms (or never), got '0'"},
    {CF_P "    idle_timeout: 30\n", CF_F "5:19: pools.api.idle_timeout: '30' has no unit: expected "
                                         "a duration like 250ms, 2s or 1m"},
    {CF_P "    idle_timeout: forever\n",
     CF_F "5:19: pools.api.idle_timeout: expected a duration like 250ms, 2s or 1m, got "
          "'forever'"},
    {CF_P "    idle_timeout: 8761h\n",
     CF_F "5:19: pools.api.idle_timeout: at most 365 days, got '8761h'"},
    {CF_P "    idle_timeout: [1s]\n",
     CF_F "5:19: pools.api.idle_timeout: expected a duration, got a list"},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        cf_refused(bad_cases[i].text, bad_cases[i].error);
}

/* ---- --help-config -------------------------------------------------------------- */

static void test_help(void)
{
    char *out = cf_help_text();
    static const char *const want[] = {
        "\n  idle_timeout               never | duration >= 10ms       never            a worker "
        "idle this long ends, down to min; then a send that finds every worker full starts one "
        "(up to max); a reload applies it live\n",
        "\n  max_waiting                integer 0..16777216            0                senders "
        "that may wait for room at once (send_wait, SHOAL_MSG_ROOM); one more gets "
        "SHOAL_EOVERLOAD; 0: no bound; a reload applies it live\n",
        /* strategy's type is wider than its column: the key and type, then the rest */
        "\n  strategy                   fifo | least_loaded | round_robin | lifo",
        " fifo             forward: how a send picks its worker -- fifo: each sender rotates "
        "on its own; least_loaded: the fewest queued, idle first; round_robin: one rotation for "
        "all senders. checkout: which free member a take gets -- fifo: the one free the longest "
        "(use spreads over every member); lifo: the one given back last (a light load keeps few "
        "members busy, and max_age culls the rest). A reload applies it live\n",
        "\n  autoscale                  mapping                        off              the pool "
        "sizes itself within min..max on pressure and calm (see ELASTIC POOLS below); a reload "
        "applies it live\n",
        "\n  autoscale.min              integer 0..65536               the pool's min   fewest "
        "workers (the pool's min: give it here or there)\n",
        "\n  autoscale.max              integer 1..65536               (required)       most "
        "workers (the pool's max)\n",
        "\n  autoscale.up               mapping                                         when and "
        "how the pool grows\n",
        "\n  autoscale.up.when          condition | [condition]        busy > 80%       pressure: "
        "one condition or a list of them, any of which holds -- busy > N% (time in handlers over "
        "wall time), wait_p99 > DURATION (queue wait), refused > N (sends refused a second)\n",
        "\n  autoscale.up.for           duration (250ms, 2s, 1m)       1s               pressure "
        "this long (at every reading, 4 a second) before the pool grows\n",
        "\n  autoscale.up.step          integer 1..65536               1                workers a "
        "growth adds at least (it adds as many as the load needs)\n",
        "\n  autoscale.down             mapping                                         when and "
        "how it shrinks\n",
        "\n  autoscale.down.when        condition | [condition]        half of up's     calm: "
        "conditions on the signals up.when names, all of which hold -- busy < N%, wait_p99 < "
        "DURATION, refused < N; below up's: between the two nothing moves\n",
        "\n  autoscale.down.idle        duration (250ms, 2s, 1m)       30s              calm this "
        "long before the pool shrinks\n",
        "\n  autoscale.down.step        integer 1..65536               1                workers a "
        "shrink removes (never below the size whose busy ratio would be the target)\n",
        "\n  autoscale.cooldown         duration (250ms, 2s, 1m)       5s               no "
        "decision this long after any change of size (a decision, a scale, a reload)\n",
        "\nELASTIC POOLS (idle_timeout, max_waiting, autoscale):\n"
        "  For a pool under pools: whose worker is PLUGIN.BEHAVIOUR (forward or pull), not\n"
        "  isolated. autoscale reads three signals 4 times a second: busy (time in handlers\n",
        "  down.when condition) for down.idle shrinks it by down.step, never below what the\n"
        "  load needs; nothing is decided for cooldown after any change. Each decision is\n"
        "  one log line with the signals.\n",
        /* BUG: it said "(give them there or as min/max, not both)": a pool's max
         * without autoscale.max is refused (missing key 'max') */
        "  autoscale.min and .max are the pool's bounds (max is given there; min there or\n"
        "  as the pool's min, not both); size, if not given, starts at min. Example:\n"
        "    autoscale: { max: 32, up: { when: [busy > 80%, refused > 0], for: 1s },\n"
        "                 down: { idle: 30s }, cooldown: 5s }\n",
        "  blocking handlers grown past runtime.threads gains mailboxes, not concurrency.\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(out, want[i]));
        if (strstr(out, want[i]) == NULL)
            fprintf(stderr, "\n    missing: %s\n", want[i]);
    }
    free(out);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a pool with every elastic key, its spec and line", test_full},
        {"autoscale's defaults, and none", test_defaults},
        {"each form of a condition", test_conditions},
        {"idle_timeout, max_waiting, strategy", test_keys},
        {"bad elastic pools, each at its place", test_bad},
        {"help", test_help},
        {NULL, NULL},
    };
    return shoal_test_run("config_elastic", cases);
}
