/* plugins_kit.h - what the bundled plugins' suites share
 * (test_plugins_descriptors, test_plugins_workers, test_plugins_traffic):
 * each plugin (plugins/<name>/) loaded once through the loader
 * (host/loader.c) as the host loads it, a runtime that keeps its log with a
 * recording parent for the plugins' actors, args trees parsed from YAML
 * text named "pool.yaml", calls, the stats call, the exact inspect answer,
 * the check that init fails on bad args with the exact message, the xs50
 * reference of burn.h, and a main that loads and releases the plugins
 * around the suite.
 *
 * The .so files are found from the executable's place: it is
 * <build>/bin/test_plugins_<concept>, they are
 * <build>/plugins/<name>/<name>.so. A plugin that is missing fails the
 * test. */
#ifndef SHOAL_TEST_PLUGINS_KIT_H
#define SHOAL_TEST_PLUGINS_KIT_H

#include "host/loader.h"
#include "host/node.h"
#include "support.h"

/* ---- finding and loading the plugins ------------------------------------------ */

/* The bundled plugins, each with one behaviour of its own name. */
#define PL_NPLUGINS 6
extern const char *const pl_names[PL_NPLUGINS];

/* The module of plugin `name`, loaded once (the loader's reference is kept
 * until pl_run ends); NULL, with a failed assertion, when it cannot be. */
shoal_module_t *pl_module(const char *name);

/* ---- a runtime that keeps its log, args trees ---------------------------------- */

/* Parses text named "pool.yaml" (asserting it parses); the tree is freed by
 * pl_done. */
const shoal_node_t *pl_yaml(const char *text);

/* The recording parent of the runtime pl_runtime made last. */
extern shoal_pid_t pl_parent;

/* Two workers, info logs kept; a recording parent (pl_parent) for the
 * plugins' actors. */
shoal_runtime_t *pl_runtime(void);

/* Destroys rt and frees the args trees of the running test. */
void pl_done(shoal_runtime_t *rt);

/* Spawns <plugin>.<plugin> with args (YAML text, NULL for none) as a child
 * of the recording parent. */
shoal_pid_t pl_spawn(shoal_runtime_t *rt, const char *plugin, const char *args, uint32_t limit);

/* ---- calls and inspection ------------------------------------------------------ */

/* A call; copies the reply's payload (at most cap bytes) and returns its
 * size, or -1 on a failed call or a non-zero status (*status gets it). */
long pl_call(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type, const void *data, size_t size,
             void *out, size_t cap, uint32_t *rtype, int *status);

/* The stats call (every plugin's 0xFFFF0001): fills st (st_size bytes),
 * asserting the reply's shape. */
void pl_stats(shoal_runtime_t *rt, shoal_pid_t pid, void *st, size_t st_size);

/* The whole inspect answer must be exactly
 * {"pid":"<pid>","behaviour":"<name>","mailbox_depth":0,"mailbox_limit":<limit>,"info":<info>} */
void pl_inspect_is(shoal_runtime_t *rt, shoal_pid_t pid, const char *name, const char *limit,
                   const char *info);

/* Init must fail: the actor ends with `reason` and the log holds the
 * line "<plugin>: <message>" (whole, up to its end). */
void pl_bad_args(shoal_runtime_t *rt, const char *plugin, const char *args, int reason,
                 const char *message);

/* ---- xs50 (burn.h): the reference, computed here ------------------------------- */

/* v + 1 put through `rounds` xorshift rounds. */
uint32_t pl_xs(uint64_t v, unsigned rounds);
/* The xor of pl_xs(v, 50) for v in 0 .. n-1. */
uint32_t pl_xs50_checksum(uint64_t n);

/* ---- a suite --------------------------------------------------------------------- */

/* Runs the suite (shoal_test_run) with a loader the plugins are loaded into,
 * released after; the process exit status. */
int pl_run(const char *suite, const shoal_test_case_t *cases);

#endif
