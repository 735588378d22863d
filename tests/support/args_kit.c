/* args_kit.c - the args suites' YAML, diag and comparison helpers
 * (args_kit.h). */
#include "args_kit.h"

#include <stdio.h>
#include <string.h>

/* The tree ag_yaml parsed last. */
static shoal_node_t *current;

void ag_drop(void)
{
    shoal__node_free(current);
    current = NULL;
}

const shoal_node_t *ag_yaml(const char *text)
{
    ag_drop();
    shoal_diag_t err;
    int rc = shoal__node_parse("pool.yaml", text, strlen(text), &current, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    return current;
}

static char formatted[1200];
const char *ag_fmt(const shoal_diag_t *d)
{
    return shoal__diag_format(d, formatted, sizeof formatted);
}

void ag_same(const char *got, const char *want, const char *text)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    for:  %s\n    got:  %s\n    want: %s\n", text, got, want);
}
