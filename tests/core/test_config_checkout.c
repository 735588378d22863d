/* test_config_checkout.c - checkout pools in shoald's config
 * (host/config_checkout.c): a valid checkout pool read into every field
 * and into its spec, its defaults, resolved against the bundled conn
 * plugin (its args schema); a table of bad files, each refused with its
 * whole message (file:line:col); --check's line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/host.h"
#include "configs.h"
#include "support.h"

#ifndef SHOAL_PLUGIN_DIR
#error "SHOAL_PLUGIN_DIR must name <build>/plugins"
#endif

#define FILE_NAME "/etc/shoal/t.yaml"
#define F FILE_NAME ":"

#define PLUGINS "plugins:\n  conn: %1$s/conn/conn.so\n  echo: %1$s/echo/echo.so\n"

#define GOOD                                                                                       \
    PLUGINS "pools:\n"                                                                             \
            "  db:\n"                                                                              \
            "    kind: checkout\n"                                                                 \
            "    member: conn.conn\n"                                                              \
            "    init: 2\n"                                                                        \
            "    max: 8\n"                                                                         \
            "    args: {connect: 1ms, fail_permille: 5}\n"                                         \
            "    add_member_retry: 3\n"                                                            \
            "    member_start_timeout: 2s\n"                                                       \
            "    cull_interval: 10s\n"                                                             \
            "    max_age: 20s\n"                                                                   \
            "    max_lifetime: 1h\n"                                                               \
            "    max_lifetime_jitter: 5m\n"                                                        \
            "    queue_max: 100\n"                                                                 \
            "    lease: 5s\n"                                                                      \
            "    group: dbs\n"                                                                     \
            "    mailbox: 16\n"                                                                    \
            "  small:\n"                                                                           \
            "    kind: checkout\n"                                                                 \
            "    member: conn.conn\n"                                                              \
            "    strategy: lifo\n"

static void test_valid(void)
{
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_config_t *c;
    char err[1200];
    int rc = shoal_test_config_resolve(L, FILE_NAME, SHOAL_PLUGIN_DIR, GOOD, &c, err, sizeof err);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    refused: %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    const shoal_config_pool_t *p = shoal__config_pool(c, "db");
    const shoal_config_pool_t *s = shoal__config_pool(c, "small");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(p->kind, SHOAL_POOL_KIND_CHECKOUT);
    CU_ASSERT_STRING_EQUAL(p->plugin, "conn");
    CU_ASSERT_STRING_EQUAL(p->behaviour, "conn");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->beh);
    CU_ASSERT_EQUAL(p->size, 2);
    CU_ASSERT_EQUAL(p->min_size, 0);
    CU_ASSERT_EQUAL(p->max_size, 8);
    CU_ASSERT_EQUAL(p->mailbox, 16);
    CU_ASSERT_EQUAL(p->checkout.add_member_retry, 3);
    CU_ASSERT_EQUAL(p->checkout.member_start_timeout_ms, 2000);
    CU_ASSERT_EQUAL(p->checkout.cull_interval_ms, 10000);
    CU_ASSERT_EQUAL(p->checkout.max_age_ms, 20000);
    CU_ASSERT_EQUAL(p->checkout.max_lifetime_ms, 3600000);
    CU_ASSERT_EQUAL(p->checkout.max_lifetime_jitter_ms, 300000);
    CU_ASSERT_EQUAL(p->checkout.queue_max, 100);
    CU_ASSERT_EQUAL(p->checkout.lease_ms, 5000);
    CU_ASSERT_STRING_EQUAL(p->checkout.group, "dbs");
    /* The defaults: the SDK's, init 1, max = init. */
    CU_ASSERT_EQUAL(s->size, 1);
    CU_ASSERT_EQUAL(s->max_size, 1);
    CU_ASSERT_EQUAL(s->checkout.add_member_retry, 1);
    CU_ASSERT_EQUAL(s->checkout.member_start_timeout_ms, 10000);
    CU_ASSERT_EQUAL(s->checkout.cull_interval_ms, 60000);
    CU_ASSERT_EQUAL(s->checkout.max_age_ms, 30000);
    CU_ASSERT_EQUAL(s->checkout.max_lifetime_ms, 0);
    CU_ASSERT_EQUAL(s->checkout.queue_max, 50);
    CU_ASSERT_EQUAL(s->checkout.lease_ms, 30000);
    CU_ASSERT_PTR_NULL(s->checkout.group);
    CU_ASSERT_EQUAL(p->strategy, SHOAL_POOL_STRATEGY_FIFO); /* the default */
    CU_ASSERT_EQUAL(s->strategy, SHOAL_POOL_STRATEGY_LIFO);

    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(p, specs, &leaf);
    CU_ASSERT_PTR_EQUAL(leaf, p);
    CU_ASSERT_EQUAL(specs[0].kind, SHOAL_POOL_KIND_CHECKOUT);
    CU_ASSERT_EQUAL(specs[0].size, 2);
    CU_ASSERT_EQUAL(specs[0].max_size, 8);
    CU_ASSERT_PTR_EQUAL(specs[0].worker, p->beh);
    CU_ASSERT_EQUAL(specs[0].checkout.queue_max, 100);
    CU_ASSERT_EQUAL(specs[0].checkout.lease_ms, 5000);
    CU_ASSERT_STRING_EQUAL(specs[0].checkout.group, "dbs");
    shoal__host_spec_chain(s, specs, &leaf);
    CU_ASSERT_EQUAL(specs[0].strategy, SHOAL_POOL_STRATEGY_LIFO);

    char line[600];
    shoal__config_checkout_describe(p, line, sizeof line);
    shoal_test_same(
        line,
        "pool db: checkout, 2..8 members (conn.conn), fifo, queue_max 100, lease 5000ms, "
        "cull_interval 10000ms, max_age 20000ms, max_lifetime 3600000ms (+/- 300000ms), "
        "group dbs",
        "describe");
    shoal__config_checkout_describe(s, line, sizeof line);
    shoal_test_same(line,
                    "pool small: checkout, 1..1 members (conn.conn), lifo, queue_max 50, lease "
                    "30000ms, cull_interval 60000ms, max_age 30000ms, max_lifetime never (+/- "
                    "0ms), group none",
                    "describe lifo");
    shoal__config_free(c);

    /* The members' args are checked against conn's schema. */
    rc = shoal_test_config_resolve(L, FILE_NAME, SHOAL_PLUGIN_DIR,
                                   PLUGINS
                                   "pools:\n  db:\n    kind: checkout\n    member: conn.conn\n"
                                   "    args: {fail_permille: 1500}\n",
                                   &c, err, sizeof err);
    CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
    shoal_test_same(err,
                    F "8:27: pools.db.args.fail_permille: 1500 is out of range: expected 0 to 1000",
                    "members' args");
    shoal__loader_destroy(L);
}

/* ---- bad files ------------------------------------------------------------------ */

static const struct {
    const char *text, *want;
} bad[] = {
    {"pools:\n  db: {kind: checkout}\n",
     F "2:7: pools.db: missing key 'member' (PLUGIN.BEHAVIOUR)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, worker: conn.conn}\n",
     F "3:24: pools.db.worker: not a checkout pool's key (write member: PLUGIN.BEHAVIOUR -- its "
       "members are taken, not sent work)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, size: 2}\n",
     F "3:43: pools.db.size: not a checkout pool's key (write init: the members started with the "
       "pool)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, min: 1}\n",
     F "3:43: pools.db.min: not a checkout pool's key (its floor is init: culling never goes below "
       "it)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, prefetch: 2}\n",
     F "3:43: pools.db.prefetch: not a checkout pool's key (only a pull pool takes prefetch)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, idle_timeout: "
     "1s}\n",
     F "3:43: pools.db.idle_timeout: not a checkout pool's key (write max_age and cull_interval: "
       "free members unused that long end)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, init: 3, max: "
     "2}\n",
     F "3:49: pools.db.init: init 3 is above max 2"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, init: 3}\n"
     "  db2: {kind: checkout, member: conn.conn, max: 0}\n",
     F "4:49: pools.db2.max: 0 is out of range: expected 1 to 65536"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, max_lifetime: "
     "1s, max_lifetime_jitter: 1s}\n",
     F "3:82: pools.db.max_lifetime_jitter: 1000ms is not below max_lifetime (write a smaller "
       "jitter)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, group: 'a b'}\n",
     F "3:50: pools.db.group: expected a group NAME (1 to 63 letters, digits, '_', '-' or '.'), "
       "got 'a b'"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn, init: 1}\n",
     F "3:32: pools.db.member: expected PLUGIN.BEHAVIOUR (e.g. conn.conn), got 'conn'"},
    /* found by the fuzzer: both leaked the first one's names */
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, worker: "
     "conn.conn}\n",
     F "3:51: pools.db.worker: the pool's behaviour is given already (line 3); write member for a "
       "checkout pool, worker for the others, not both"},
    {"plugins: {conn: c.so}\npools:\n  db:\n    worker: conn.conn\n    member: conn.conn\n",
     F "5:13: pools.db.member: the pool's behaviour is given already (line 4); write member for a "
       "checkout pool, worker for the others, not both"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: nope.conn}\n",
     F "3:32: pools.db.member: no plugin 'nope' under plugins:"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, isolation: "
     "process}\n",
     F "3:54: pools.db.isolation: process is not supported for checkout pools (its members are "
       "taken by PID in this process)"},
    {"plugins: {conn: c.so}\npools:\n  db: {worker: conn.conn, queue_max: 5}\n",
     F "3:27: pools.db.queue_max: only a checkout pool takes queue_max (this one is kind: forward; "
       "write kind: checkout)"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: pull, worker: conn.conn, lease: 5s}\n",
     F "3:39: pools.db.lease: only a checkout pool takes lease (this one is kind: pull; write "
       "kind: checkout)"},
    {"plugins: {conn: c.so}\npools:\n  db:\n    worker:\n      kind: checkout\n"
     "      member: conn.conn\n",
     F "5:13: pools.db.worker.kind: a checkout pool goes directly under pools:, not nested in a "
       "pool"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, lease: 0ms}\n",
     F "3:50: pools.db.lease: must be at least 1ms, got '0ms'"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, add_member_retry: "
     "0}\n",
     F "3:61: pools.db.add_member_retry: 0 is out of range: expected 1 to 1000"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, "
     "member_start_timeout: 0ms}\n",
     F "3:65: pools.db.member_start_timeout: must be at least 1ms, got '0ms'"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, cull_interval: "
     "5ms}\n",
     F "3:58: pools.db.cull_interval: must be at least 10ms (or never), got '5ms'"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, max_age: "
     "soon}\n",
     F "3:52: pools.db.max_age: expected a duration like 250ms, 2s or 1m, got 'soon'"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, queue_max: "
     "2000000}\n",
     F "3:54: pools.db.queue_max: 2000000 is out of range: expected 0 to 1048576"},
    {"plugins: {conn: c.so}\npools:\n  db: {kind: checkout, member: conn.conn, max_lifetime: "
     "-1s}\n",
     F "3:57: pools.db.max_lifetime: expected a duration like 250ms, 2s or 1m, got '-1s'"},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        shoal_config_t *c = NULL;
        char err[1200];
        int rc = shoal_test_config_parse(FILE_NAME, bad[i].text, &c, err, sizeof err);
        CU_ASSERT_NOT_EQUAL(rc, SHOAL_OK);
        if (rc == SHOAL_OK) {
            fprintf(stderr, "\n    accepted: %s\n", bad[i].text);
            shoal__config_free(c);
            continue;
        }
        shoal_test_same(err, bad[i].want, bad[i].text);
    }
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a valid checkout pool, its defaults and spec", test_valid},
        {"bad checkout pools, each at its place", test_bad},
        {NULL, NULL},
    };
    return shoal_test_run("config_checkout", cases);
}
