/* configs.c - see configs.h. */
#include "configs.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "host/diag.h"
#include "shoal/error.h"

void shoal_test_same(const char *got, const char *want, const char *text)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    for:  %s\n    got:  %s\n    want: %s\n", text, got, want);
}

int shoal_test_config_parse(const char *file, const char *text, shoal_config_t **c, char *err,
                            size_t size)
{
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    int rc = shoal__config_parse(file, text, strlen(text), c, &d);
    if (rc != SHOAL_OK)
        shoal__diag_format(&d, err, size);
    else
        err[0] = '\0';
    return rc;
}

int shoal_test_config_resolve(shoal_loader_t *L, const char *file, const char *dir, const char *fmt,
                              shoal_config_t **out, char *err, size_t size)
{
    char text[4096];
    snprintf(text, sizeof text, fmt, dir);
    *out = NULL;
    shoal_config_t *c = NULL;
    int rc = shoal_test_config_parse(file, text, &c, err, size);
    if (rc != SHOAL_OK)
        return rc;
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    if ((rc = shoal__config_resolve(c, L, &d)) != SHOAL_OK) {
        shoal__diag_format(&d, err, size);
        shoal__config_free(c);
        return rc;
    }
    *out = c;
    return SHOAL_OK;
}
