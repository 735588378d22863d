/* config_kit.c - the config suites' parse, refusal check and resolve
 * (config_kit.h). */
#include "config_kit.h"

#include <stdio.h>
#include <string.h>

#include "host/diag.h"

#ifndef SHOAL_FIXTURE_DIR
#error "SHOAL_FIXTURE_DIR must name the directory of the built fixtures"
#endif
#ifndef SHOAL_PLUGIN_DIR
#error "SHOAL_PLUGIN_DIR must name <build>/plugins"
#endif

shoal_config_t *cf_parse_as(const char *file, const char *text)
{
    shoal_config_t *c = NULL;
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = shoal__config_parse(file, text, strlen(text), &c, &err);
    if (rc != SHOAL_OK) {
        char buf[1200];
        fprintf(stderr, "\n    for:  %s\n    refused: %s\n", text,
                shoal__diag_format(&err, buf, sizeof buf));
    }
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    return c;
}

shoal_config_t *cf_parse(const char *text) { return cf_parse_as(CF_FILE_NAME, text); }

void cf_refused(const char *text, const char *error)
{
    shoal_config_t *c = (shoal_config_t *)1;
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = shoal__config_parse(CF_FILE_NAME, text, strlen(text), &c, &err);
    CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(c);
    if (rc == SHOAL_OK) {
        fprintf(stderr, "\n    accepted: %s\n", text);
        shoal__config_free(c);
        return;
    }
    char buf[1200];
    shoal_test_same(shoal__diag_format(&err, buf, sizeof buf), error, text);
}

/* Parses `fmt` with %1$s the plugin dir and %2$s the fixture dir, under
 * CF_FILE_NAME, and resolves it with a fresh loader. Returns resolve's code;
 * *formatted is its error. Everything is freed and the loader holds no module
 * after. If check is set it runs on the resolved config before the free. */
int cf_resolve(const char *fmt, char *formatted, size_t size,
               void (*check)(shoal_config_t *, shoal_loader_t *))
{
    char text[2048];
    snprintf(text, sizeof text, fmt, SHOAL_PLUGIN_DIR, SHOAL_FIXTURE_DIR);
    shoal_config_t *c = cf_parse(text);
    if (c == NULL)
        return SHOAL_EINVAL;
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = shoal__config_resolve(c, L, &err);
    shoal__diag_format(&err, formatted, size);
    if (check != NULL)
        check(c, L);
    shoal__config_free(c);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0); /* every reference dropped */
    shoal__loader_destroy(L);
    return rc;
}

char *cf_help_text(void)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    shoal__config_help(f);
    fclose(f);
    return out;
}
