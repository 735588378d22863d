/* configs.h - what the config tests share: reading a config from text the
 * way shoald does (parse, then resolve against real plugins), with the
 * formatted error, and comparing whole messages. */
#ifndef SHOAL_TEST_CONFIGS_H
#define SHOAL_TEST_CONFIGS_H

#include <stddef.h>

#include "host/config.h"
#include "host/loader.h"

/* CU_ASSERT that got is want; prints both and the input text if not. */
void shoal_test_same(const char *got, const char *want, const char *text);

/* Parses text as the file `file`: rc, and the formatted error (or "") in
 * err. */
int shoal_test_config_parse(const char *file, const char *text, shoal_config_t **c, char *err,
                            size_t size);

/* fmt with %1$s the directory dir (the plugins'), parsed as `file` and
 * resolved with loader L: rc and the error out; *out the config (NULL on
 * failure). */
int shoal_test_config_resolve(shoal_loader_t *L, const char *file, const char *dir, const char *fmt,
                              shoal_config_t **out, char *err, size_t size);

#endif
