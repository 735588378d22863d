/* test_node_aliases.c - YAML aliases in a node tree (host/node.c):
 * expanded as copies, within SHOAL_NODE_MAX_NODES and SHOAL_NODE_MAX_TEXT
 * (a billion laughs refused, each budget exact), anchors by name (the
 * last of a name used), unknown or forward aliases refused, and out of
 * memory said where. Errors are compared whole, as shoal__diag_format
 * prints them ("file:line:col: message"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail_alloc.h"
#include "host/node.h"
#include "node_kit.h"

static void test_alias_expansion(void)
{
    const char *text = "base: &b {x: 1, y: [a, b]}\n"
                       "copy: *b\n"
                       "v: &v 5\n"
                       "w: *v\n";
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(nk_parse(text, &root, &err), SHOAL_OK);
    const shoal_node_t *base = shoal__node_get(root, "base"), *copy = shoal__node_get(root, "copy");
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    CU_ASSERT_PTR_NOT_EQUAL(base, copy); /* a copy, not a shared node */
    CU_ASSERT_EQUAL_FATAL(copy->kind, SHOAL_NODE_MAP);
    CU_ASSERT_EQUAL_FATAL(copy->n, 2);
    CU_ASSERT_STRING_EQUAL(copy->keys[0]->text, "x");
    CU_ASSERT_STRING_EQUAL(copy->items[0]->text, "1");
    CU_ASSERT_PTR_NOT_EQUAL(copy->items[0], base->items[0]);
    CU_ASSERT_PTR_NOT_EQUAL(copy->items[0]->text, base->items[0]->text);
    const shoal_node_t *y = shoal__node_get(copy, "y");
    CU_ASSERT_EQUAL_FATAL(y->kind, SHOAL_NODE_LIST);
    CU_ASSERT_EQUAL_FATAL(y->n, 2);
    CU_ASSERT_STRING_EQUAL(y->items[0]->text, "a");
    CU_ASSERT_STRING_EQUAL(y->items[1]->text, "b");
    /* Copied values keep the position where they are written. */
    CU_ASSERT_EQUAL(copy->items[0]->line, 1);
    CU_ASSERT_EQUAL(copy->items[0]->col, base->items[0]->col);
    nk_assert_scalar(shoal__node_get(root, "w"), "5", false, 3, 4);
    shoal__node_free(root); /* ASan: the copies are freed separately */

    /* An alias as a key is fine when its value is a scalar. */
    CU_ASSERT_EQUAL_FATAL(nk_parse("k: &k name\n*k : 2\n", &root, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(root->n, 2);
    CU_ASSERT_STRING_EQUAL(root->keys[1]->text, "name");
    shoal__node_free(root);
    /* ...and a duplicate when it repeats a key. */
    ASSERT_REFUSED("name: &k name\n*k : 2\n",
                   "t.yaml:1:7: duplicate key 'name' (first at line 1, column 1)");
}

/* The classic "billion laughs": nine levels of ten aliases, 10^9 nodes. */
static void test_billion_laughs_refused(void)
{
    char text[2048];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "a: &a [lol, lol, lol, lol, lol, lol, lol, "
                                  "lol, lol, lol]\n");
    for (char c = 'b'; c <= 'i'; c++) {
        len += (size_t)snprintf(text + len, sizeof text - len, "%c: &%c [", c, c);
        for (int i = 0; i < 10; i++)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s*%c", i ? ", " : "", c - 1);
        len += (size_t)snprintf(text + len, sizeof text - len, "]\n");
    }
    shoal_node_t *root = (shoal_node_t *)1;
    shoal_diag_t err;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(nk_parse(text, &root, &err), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(root);
    CU_ASSERT_STRING_EQUAL(err.file, "t.yaml");
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "document too large: more than 100000 nodes (aliases included)");
    /* At one of the alias lines (which one depends on the budget). */
    CU_ASSERT(err.line >= 2 && err.line <= 9);
    /* Refused early, not after expanding: well under a second. */
    CU_ASSERT(shoal_test_now() - t0 < 5.0);

    /* Three levels (1,000 copies) are fine. */
    const char *small = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                        "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n";
    CU_ASSERT_EQUAL_FATAL(nk_parse(small, &root, &err), SHOAL_OK);
    const shoal_node_t *c = shoal__node_get(root, "c");
    CU_ASSERT_EQUAL_FATAL(c->n, 10);
    CU_ASSERT_EQUAL_FATAL(c->items[9]->n, 10);
    CU_ASSERT_STRING_EQUAL(c->items[9]->items[9]->items[9]->text, "lol");
    shoal__node_free(root);
}

/* The budget counts every node: a list of N scalars is N + 1 nodes. */
static void test_node_budget_exact(void)
{
    for (int over = 0; over <= 1; over++) {
        size_t n = SHOAL_NODE_MAX_NODES - 1 + (size_t)over;
        char *text = malloc(n * 4 + 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        for (size_t i = 0; i < n; i++)
            memcpy(text + i * 4, "- a\n", 4);
        text[n * 4] = '\0';
        shoal_node_t *root = NULL;
        shoal_diag_t err;
        int rc = shoal__node_parse("t.yaml", text, n * 4, &root, &err);
        if (!over) {
            CU_ASSERT_EQUAL(rc, SHOAL_OK);
            CU_ASSERT_EQUAL(root ? root->n : 0, n);
        } else {
            char buf[600];
            CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
            CU_ASSERT_STRING_EQUAL(shoal__diag_format(&err, buf, sizeof buf),
                                   "t.yaml:100000:3: document too large: more than 100000 nodes "
                                   "(aliases included)");
        }
        shoal__node_free(root);
        free(text);
    }
}

/* The bytes of values count too, aliases' copies included: a list of one
 * 1 MiB value and 63 aliases of it is 64 MiB, the budget; one alias more is
 * refused, at that alias. (A 1 MB value aliased 2,000 times, a 1 MB file,
 * took 2 GB; 20,000 times would take 20.) */
static void test_text_budget_exact(void)
{
    const size_t big = (size_t)1 << 20;
    _Static_assert(SHOAL_NODE_MAX_TEXT == 64 << 20, "the case below is 64 values of 1 MiB");
    char *text = malloc(big + 16 + 65 * 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t len = (size_t)sprintf(text, "- &a ");
    memset(text + len, 'x', big);
    len += big;
    text[len++] = '\n';
    for (int over = 0; over <= 1; over++) {
        size_t at = len;
        for (int i = 0; i < 63 + over; i++)
            at += (size_t)sprintf(text + at, "- *a\n");
        shoal_node_t *root = NULL;
        shoal_diag_t err;
        int rc = shoal__node_parse("t.yaml", text, at, &root, &err);
        if (!over) {
            CU_ASSERT_EQUAL(rc, SHOAL_OK);
            CU_ASSERT_EQUAL(root ? root->n : 0, 64);
            CU_ASSERT_EQUAL(root ? strlen(root->items[63]->text) : 0, big);
        } else {
            char buf[600];
            CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
            CU_ASSERT_PTR_NULL(root);
            CU_ASSERT_STRING_EQUAL(shoal__diag_format(&err, buf, sizeof buf),
                                   "t.yaml:65:3: document too large: its values come to more "
                                   "than 64 MiB (aliases included)");
        }
        shoal__node_free(root);
    }
    free(text);
}

/* Anchors are found by name among many (an index, node.c: a scan of
 * 49,000 of them for each of as many aliases took 17 s); a name anchored
 * again names its last node from there on, as YAML says. */
static void test_many_anchors(void)
{
    enum { N = 20000 };
    char *text = malloc((size_t)N * 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t len = 0;
    for (int i = 0; i < N; i++)
        len += (size_t)sprintf(text + len, "k%d: &a%d v%d\n", i, i, i);
    for (int i = N; i-- > 0;)
        len += (size_t)sprintf(text + len, "l%d: *a%d\n", i, i);
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse("t.yaml", text, len, &root, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(root->n, 2 * N);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        char key[16], want[16];
        snprintf(key, sizeof key, "l%d", i);
        snprintf(want, sizeof want, "v%d", i);
        const shoal_node_t *v = shoal__node_get(root, key);
        wrong += v == NULL || strcmp(v->text, want) != 0;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    shoal__node_free(root);
    free(text);

    CU_ASSERT_EQUAL_FATAL(
        nk_parse("a: &x 1\nb: *x\nc: &x [2]\nd: *x\ne: &y 3\nf: *y\n", &root, &err), SHOAL_OK);
    nk_assert_scalar(shoal__node_get(root, "b"), "1", false, 1, 4); /* where the anchored one is */
    const shoal_node_t *d = shoal__node_get(root, "d");
    CU_ASSERT_EQUAL_FATAL(d->kind, SHOAL_NODE_LIST);
    CU_ASSERT_STRING_EQUAL(d->items[0]->text, "2");
    nk_assert_scalar(shoal__node_get(root, "f"), "3", false, 5, 4);
    shoal__node_free(root);
}

/* No memory for an alias's copy: said, at the alias (it was an empty
 * message, and the caller read "invalid argument"). */
static void test_alias_out_of_memory(void)
{
    char text[1024];
    int n = snprintf(text, sizeof text, "a: &a %0777d\nb: [1, *a]\n", 7);
    CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof text);
    shoal_node_t *root = (shoal_node_t *)1;
    shoal_diag_t err;
    fa_arm(FA_MALLOC, 778, 1); /* the copy's text: 777 bytes and its NUL */
    int rc = nk_parse(text, &root, &err);
    fa_disarm();
    char buf[600];
    CU_ASSERT_EQUAL(rc, SHOAL_ENOMEM);
    CU_ASSERT_PTR_NULL(root);
    CU_ASSERT_EQUAL(fa_refused(), 1);
    CU_ASSERT_STRING_EQUAL(shoal__diag_format(&err, buf, sizeof buf), "t.yaml:2:8: out of memory");
}

static void test_unknown_alias(void)
{
    ASSERT_REFUSED("a: *nope\n", "t.yaml:1:4: unknown alias '*nope'");
    /* An anchor is known only once its node is complete: no cycles. */
    ASSERT_REFUSED("a: &x [1, *x]\n", "t.yaml:1:11: unknown alias '*x'");
    /* Aliases refer backwards only. */
    ASSERT_REFUSED("a: *later\nb: &later 1\n", "t.yaml:1:4: unknown alias '*later'");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"alias expansion", test_alias_expansion},
        {"billion laughs refused", test_billion_laughs_refused},
        {"node budget exact", test_node_budget_exact},
        {"text budget exact", test_text_budget_exact},
        {"many anchors; an anchor defined again", test_many_anchors},
        {"an alias out of memory", test_alias_out_of_memory},
        {"unknown alias", test_unknown_alias},
        {NULL, NULL},
    };
    return shoal_test_run("node_aliases", cases);
}
