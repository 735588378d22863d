/* config_kit.h - what shoald's config suites share (test_config_malformed,
 * test_config_valid, test_config_resolve, test_config_load,
 * test_config_help, test_config_sources): the file name configs are parsed
 * as, the text that declares a plugin and a pool, a parse that must pass, a
 * parse that must be refused with a whole message, and a resolve against
 * the bundled plugins (SHOAL_PLUGIN_DIR/<name>/<name>.so) and the loader's
 * fixtures (SHOAL_FIXTURE_DIR) with a fresh loader. Whole messages are
 * compared with shoal_test_same (configs.h). */
#ifndef SHOAL_TEST_CONFIG_KIT_H
#define SHOAL_TEST_CONFIG_KIT_H

#include <stddef.h>

#include "configs.h"
#include "host/config.h"
#include "host/loader.h"
#include "support.h"

#define CF_FILE_NAME "/etc/shoal/t.yaml"
#define CF_F CF_FILE_NAME ":"

/* Pools need a plugin; CF_P declares one and starts pool `api` with a good
 * worker, so the key under test is on line 5, column 5. */
#define CF_PL "plugins: {e: e.so}\n"
#define CF_P CF_PL "pools:\n  api:\n    worker: e.echo\n"

/* A file that must be refused, and the whole formatted diag it gets. */
typedef struct cf_bad_case_s {
    const char *text;
    const char *error; /* the whole formatted diag */
} cf_bad_case_t;

/* Parses text as `file` (CF_FILE_NAME for cf_parse), asserting it parses
 * (and printing the refusal if not); the config, NULL if refused. */
shoal_config_t *cf_parse_as(const char *file, const char *text);
shoal_config_t *cf_parse(const char *text);

/* Parses text as CF_FILE_NAME, which must be refused (SHOAL_EINVAL, no
 * config) with exactly `error`, formatted by shoal__diag_format. */
void cf_refused(const char *text, const char *error);

/* Parses `fmt` with %1$s the plugin dir and %2$s the fixture dir, under
 * CF_FILE_NAME, and resolves it with a fresh loader. Returns resolve's code;
 * *formatted is its error. Everything is freed and the loader holds no module
 * after. If check is set it runs on the resolved config before the free. */
int cf_resolve(const char *fmt, char *formatted, size_t size,
               void (*check)(shoal_config_t *, shoal_loader_t *));

/* What --help-config prints (shoal__config_help), as one string the caller
 * frees. */
char *cf_help_text(void);

#endif
