/* test_name_index.c - names to positions (host/name_index.c): every name of
 * 20,000 found at its position and none that is not there; entries left
 * out (NULL) are not found; of two equal names the first is; an empty
 * array finds nothing; and shoal__config_pool, which uses it, finds every
 * pool of a config, and its one pool once the config is cut to it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/name_index.h"
#include "support.h"

#define N 20000u

static char names[N][16];
static const char *at_all(const void *arr, size_t i)
{
    (void)arr;
    return names[i];
}

/* Every third name is left out. */
static const char *at_some(const void *arr, size_t i)
{
    (void)arr;
    return i % 3 == 0 ? NULL : names[i];
}

static void every_name_at_its_position(void)
{
    for (unsigned i = 0; i < N; i++)
        snprintf(names[i], sizeof names[i], "p%u", i);
    shoal_name_index_t x;
    CU_ASSERT_EQUAL_FATAL(shoal__name_index_build(&x, names, N, at_all), SHOAL_OK);
    CU_ASSERT_TRUE(shoal__name_index_ready(&x));
    unsigned wrong = 0;
    for (unsigned i = 0; i < N; i++)
        wrong += shoal__name_index_find(&x, names, at_all, names[i]) != i;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(shoal__name_index_find(&x, names, at_all, "p20000"), SIZE_MAX);
    CU_ASSERT_EQUAL(shoal__name_index_find(&x, names, at_all, ""), SIZE_MAX);
    CU_ASSERT_EQUAL(shoal__name_index_find(&x, names, at_all, NULL), SIZE_MAX);
    shoal__name_index_free(&x);
    CU_ASSERT_FALSE(shoal__name_index_ready(&x));

    CU_ASSERT_EQUAL_FATAL(shoal__name_index_build(&x, names, N, at_some), SHOAL_OK);
    wrong = 0;
    for (unsigned i = 0; i < N; i++)
        wrong += shoal__name_index_find(&x, names, at_some, names[i]) != (i % 3 ? i : SIZE_MAX);
    CU_ASSERT_EQUAL(wrong, 0);
    shoal__name_index_free(&x);
}

static void the_first_of_equal_names(void)
{
    snprintf(names[0], sizeof names[0], "a");
    snprintf(names[1], sizeof names[1], "b");
    snprintf(names[2], sizeof names[2], "a");
    shoal_name_index_t x;
    CU_ASSERT_EQUAL_FATAL(shoal__name_index_build(&x, names, 3, at_all), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__name_index_find(&x, names, at_all, "a"), 0);
    CU_ASSERT_EQUAL(shoal__name_index_find(&x, names, at_all, "b"), 1);
    shoal__name_index_free(&x);
    CU_ASSERT_EQUAL_FATAL(shoal__name_index_build(&x, names, 0, at_all), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__name_index_find(&x, names, at_all, "a"), SIZE_MAX);
    shoal__name_index_free(&x);
}

static void a_config_finds_its_pools(void)
{
    char text[64 * 1024];
    size_t n = (size_t)snprintf(text, sizeof text, "plugins: { echo: echo.so }\npools:\n");
    for (unsigned i = 0; i < 1000; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "  q%u: { worker: echo.echo }\n", i);
    shoal_config_t *c = NULL;
    shoal_diag_t err = {0};
    int rc = shoal__config_parse("t.yaml", text, n, &c, &err);
    if (rc != SHOAL_OK) {
        char buf[1200];
        fprintf(stderr, "\n    refused: %s\n", shoal__diag_format(&err, buf, sizeof buf));
    }
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(c->npools, 1000);
    unsigned wrong = 0;
    char name[16];
    for (unsigned i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "q%u", i);
        const shoal_config_pool_t *p = shoal__config_pool(c, name);
        wrong += p == NULL || strcmp(p->name, name) != 0;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_PTR_NULL(shoal__config_pool(c, "q1000"));
    /* Cut to one pool as shoal__config_isolate cuts it, indexed again: the
     * pool moved to position 0 is found there, the others are gone. */
    shoal_config_pool_t first = c->pools[0];
    c->pools[0] = c->pools[500];
    c->npools = 1;
    shoal__config_index_pools(c);
    CU_ASSERT_PTR_EQUAL(shoal__config_pool(c, "q500"), &c->pools[0]);
    CU_ASSERT_PTR_NULL(shoal__config_pool(c, "q0"));
    CU_ASSERT_PTR_NULL(shoal__config_pool(c, "q501"));
    c->pools[0] = first; /* each pool freed once below */
    c->npools = 1000;
    shoal__config_free(c);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"every name at its position", every_name_at_its_position},
        {"the first of equal names; an empty array", the_first_of_equal_names},
        {"a config finds its pools", a_config_finds_its_pools},
        {NULL, NULL},
    };
    return shoal_test_run("name_index", cases);
}
