/* test_node.c - YAML text to a node tree (host/node.c): positions, the
 * quoted flag, and every strictness rule: one document, no explicit tags, no
 * duplicate or non-scalar keys, aliases within SHOAL_NODE_MAX_NODES and
 * SHOAL_NODE_MAX_TEXT, nesting within SHOAL_NODE_MAX_DEPTH, no NUL in a
 * value; anchors by name, the last of a name used; out of memory said
 * where. Errors are compared whole, as shoal__diag_format prints them
 * ("file:line:col: message"). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fail_alloc.h"
#include "host/node.h"
#include "support.h"

/* Parses text (a C string) named "t.yaml". */
static int parse(const char *text, shoal_node_t **root, shoal_diag_t *err)
{
    return shoal__node_parse("t.yaml", text, strlen(text), root, err);
}

/* Parses text that must be refused; returns the formatted error. */
static const char *refused(const char *text, char *buf, size_t size)
{
    shoal_node_t *root = (shoal_node_t *)1;
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = parse(text, &root, &err);
    CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(root);
    if (rc == SHOAL_OK)
        shoal__node_free(root);
    return shoal__diag_format(&err, buf, size);
}

#define ASSERT_REFUSED(text, want)                                                                 \
    do {                                                                                           \
        char buf_[1200];                                                                           \
        const char *got_ = refused(text, buf_, sizeof buf_);                                       \
        CU_ASSERT_STRING_EQUAL(got_, want);                                                        \
        if (strcmp(got_, want) != 0)                                                               \
            fprintf(stderr, "\n    got:  %s\n    want: %s\n", got_, want);                         \
    } while (0)

static void assert_at(const shoal_node_t *n, shoal_node_kind_t kind, uint32_t line, uint32_t col)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_EQUAL(n->kind, kind);
    CU_ASSERT_EQUAL(n->line, line);
    CU_ASSERT_EQUAL(n->col, col);
}

static void assert_scalar(const shoal_node_t *n, const char *text, bool quoted, uint32_t line,
                          uint32_t col)
{
    assert_at(n, SHOAL_NODE_SCALAR, line, col);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->text);
    CU_ASSERT_STRING_EQUAL(n->text, text);
    CU_ASSERT_EQUAL(n->quoted, quoted);
    CU_ASSERT_EQUAL(n->n, 0);
}

static void test_tree_and_positions(void)
{
    const char *text = "name: pool\n"
                       "size: 5\n"
                       "items:\n"
                       "  - a\n"
                       "  - 'b'\n"
                       "nested: {x: 1, y: [2, 3]}\n";
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(parse(text, &root, &err), SHOAL_OK);
    assert_at(root, SHOAL_NODE_MAP, 1, 1);
    CU_ASSERT_STRING_EQUAL(root->file, "t.yaml");
    CU_ASSERT_EQUAL_FATAL(root->n, 4);
    assert_scalar(root->keys[0], "name", false, 1, 1);
    assert_scalar(root->items[0], "pool", false, 1, 7);
    assert_scalar(root->keys[1], "size", false, 2, 1);
    assert_scalar(root->items[1], "5", false, 2, 7);
    assert_scalar(root->keys[2], "items", false, 3, 1);
    const shoal_node_t *items = root->items[2];
    assert_at(items, SHOAL_NODE_LIST, 4, 3);
    CU_ASSERT_EQUAL_FATAL(items->n, 2);
    CU_ASSERT_PTR_NULL(items->keys);
    assert_scalar(items->items[0], "a", false, 4, 5);
    assert_scalar(items->items[1], "b", true, 5, 5);
    assert_scalar(root->keys[3], "nested", false, 6, 1);
    const shoal_node_t *nested = root->items[3];
    assert_at(nested, SHOAL_NODE_MAP, 6, 9);
    CU_ASSERT_EQUAL_FATAL(nested->n, 2);
    assert_scalar(nested->keys[0], "x", false, 6, 10);
    assert_scalar(nested->items[0], "1", false, 6, 13);
    assert_scalar(nested->keys[1], "y", false, 6, 16);
    const shoal_node_t *y = nested->items[1];
    assert_at(y, SHOAL_NODE_LIST, 6, 19);
    CU_ASSERT_EQUAL_FATAL(y->n, 2);
    assert_scalar(y->items[0], "2", false, 6, 20);
    assert_scalar(y->items[1], "3", false, 6, 23);
    /* Every node shares the one file name. */
    CU_ASSERT_PTR_EQUAL(y->items[1]->file, root->file);

    /* Lookup and kind names. */
    CU_ASSERT_PTR_EQUAL(shoal__node_get(root, "size"), root->items[1]);
    CU_ASSERT_PTR_EQUAL(shoal__node_get(nested, "y"), y);
    CU_ASSERT_PTR_NULL(shoal__node_get(root, "nope"));
    CU_ASSERT_PTR_NULL(shoal__node_get(items, "a")); /* not a map */
    CU_ASSERT_PTR_NULL(shoal__node_get(NULL, "a"));
    CU_ASSERT_STRING_EQUAL(shoal__node_kind_name(root), "a mapping");
    CU_ASSERT_STRING_EQUAL(shoal__node_kind_name(items), "a list");
    CU_ASSERT_STRING_EQUAL(shoal__node_kind_name(items->items[0]), "a value");
    CU_ASSERT_STRING_EQUAL(shoal__node_kind_name(items->items[1]), "a quoted string");
    shoal__node_free(root);
}

static void test_quoted_flag(void)
{
    const char *text = "plain: 12\n"
                       "single: '12'\n"
                       "double: \"12\"\n"
                       "literal: |\n"
                       "  12\n"
                       "folded: >\n"
                       "  12\n"
                       "empty:\n"
                       "tilde: ~\n";
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(parse(text, &root, &err), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(root->n, 7);
    assert_scalar(shoal__node_get(root, "plain"), "12", false, 1, 8);
    assert_scalar(shoal__node_get(root, "single"), "12", true, 2, 9);
    assert_scalar(shoal__node_get(root, "double"), "12", true, 3, 9);
    assert_scalar(shoal__node_get(root, "literal"), "12\n", true, 4, 10);
    assert_scalar(shoal__node_get(root, "folded"), "12\n", true, 6, 9);
    /* An empty value is an empty plain scalar where the value would be. */
    assert_scalar(shoal__node_get(root, "empty"), "", false, 8, 7);
    /* No null resolution: ~ is just the text "~". */
    assert_scalar(shoal__node_get(root, "tilde"), "~", false, 9, 8);
    shoal__node_free(root);
}

static void test_duplicate_keys(void)
{
    ASSERT_REFUSED("a: 1\nb: 2\na: 3\n",
                   "t.yaml:3:1: duplicate key 'a' (first at line 1, column 1)");
    ASSERT_REFUSED("x:\n  a: 1\n  b: 2\n  a: 3\n",
                   "t.yaml:4:3: duplicate key 'a' (first at line 2, column 3)");
    ASSERT_REFUSED("{k: 1, k: 2}", "t.yaml:1:8: duplicate key 'k' (first at line 1, column 2)");
    /* Quoting does not make a key different. */
    ASSERT_REFUSED("k: 1\n'k': 2\n", "t.yaml:2:1: duplicate key 'k' (first at line 1, column 1)");
    /* The same key in two different maps is fine. */
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(parse("a: {k: 1}\nb: {k: 2}\n", &root, &err), SHOAL_OK);
    shoal__node_free(root);
}

/* A mapping of many keys (past the first 32 they are found through a
 * table, node.c): every one kept, in order; a key written again is
 * refused at its second place and names its first, whether the first is
 * among the first 32, past them, or the one just before it -- at every
 * size the table grows through. */
static char *many_keys(size_t n, size_t dup_of, size_t dup_at)
{
    char *text = malloc(n * 32 + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "key-with-a-prefix-%zu: %zu\n", i == dup_at ? dup_of : i,
                               i);
    return text;
}

static void test_many_keys(void)
{
    size_t n = 5000;
    char *text = many_keys(n, SIZE_MAX, SIZE_MAX);
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(parse(text, &root, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(root->n, n);
    char want[64];
    for (size_t i = 0; i < n; i++) {
        snprintf(want, sizeof want, "key-with-a-prefix-%zu", i);
        if (strcmp(root->keys[i]->text, want) != 0) {
            CU_FAIL("a key out of place");
            break;
        }
    }
    shoal__node_free(root);
    free(text);
    const size_t cases[][2] = {{0, 4999},  {31, 32},    {32, 33},     {5, 40}, {100, 127},
                               {127, 128}, {200, 3000}, {4998, 4999}, {0, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        text = many_keys(n, cases[c][0], cases[c][1]);
        char w[200];
        snprintf(
            w, sizeof w,
            "t.yaml:%zu:1: duplicate key 'key-with-a-prefix-%zu' (first at line %zu, column 1)",
            cases[c][1] + 1, cases[c][0], cases[c][0] + 1);
        ASSERT_REFUSED(text, w);
        free(text);
    }
}

static void test_explicit_tags_refused(void)
{
    ASSERT_REFUSED("a: !!str x\n",
                   "t.yaml:1:4: explicit tag 'tag:yaml.org,2002:str' is not allowed: write plain "
                   "values");
    ASSERT_REFUSED("a: !foo {}\n", "t.yaml:1:4: explicit tag '!foo' is not allowed: write plain "
                                   "values");
    ASSERT_REFUSED("- !seq [1]\n", "t.yaml:1:3: explicit tag '!seq' is not allowed: write plain "
                                   "values");
    ASSERT_REFUSED("--- !!map\na: 1\n",
                   "t.yaml:1:5: explicit tag 'tag:yaml.org,2002:map' is not allowed: write plain "
                   "values");
    /* On a key as well. */
    ASSERT_REFUSED("!!str k: 1\n",
                   "t.yaml:1:1: explicit tag 'tag:yaml.org,2002:str' is not allowed: write plain "
                   "values");
}

static void test_several_documents_refused(void)
{
    ASSERT_REFUSED("a: 1\n---\nb: 2\n",
                   "t.yaml:2:1: several YAML documents in one file: write one");
    ASSERT_REFUSED("---\na: 1\n...\n---\nb: 2\n",
                   "t.yaml:4:1: several YAML documents in one file: write one");
    /* One document with its explicit start and end markers is fine. */
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(parse("---\na: 1\n...\n", &root, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(root->kind, SHOAL_NODE_MAP);
    shoal__node_free(root);
}

static void test_empty_input(void)
{
    const char *texts[] = {"", "# only a comment\n", "\n\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        shoal_node_t *root = NULL;
        shoal_diag_t err;
        CU_ASSERT_EQUAL_FATAL(parse(texts[i], &root, &err), SHOAL_OK);
        assert_at(root, SHOAL_NODE_MAP, 1, 1);
        CU_ASSERT_EQUAL(root->n, 0);
        CU_ASSERT_STRING_EQUAL(root->file, "t.yaml");
        shoal__node_free(root);
    }
    /* A NULL name becomes "<args>". */
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse(NULL, "a: 1", 4, &root, &err), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(root->file, "<args>");
    shoal__node_free(root);
    /* A scalar document is kept as a scalar (callers check the kind). */
    CU_ASSERT_EQUAL_FATAL(parse("hello\n", &root, &err), SHOAL_OK);
    assert_scalar(root, "hello", false, 1, 1);
    shoal__node_free(root);
    shoal__node_free(NULL);
}

static void test_alias_expansion(void)
{
    const char *text = "base: &b {x: 1, y: [a, b]}\n"
                       "copy: *b\n"
                       "v: &v 5\n"
                       "w: *v\n";
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(parse(text, &root, &err), SHOAL_OK);
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
    assert_scalar(shoal__node_get(root, "w"), "5", false, 3, 4);
    shoal__node_free(root); /* ASan: the copies are freed separately */

    /* An alias as a key is fine when its value is a scalar. */
    CU_ASSERT_EQUAL_FATAL(parse("k: &k name\n*k : 2\n", &root, &err), SHOAL_OK);
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
    CU_ASSERT_EQUAL(parse(text, &root, &err), SHOAL_EINVAL);
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
    CU_ASSERT_EQUAL_FATAL(parse(small, &root, &err), SHOAL_OK);
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

    CU_ASSERT_EQUAL_FATAL(parse("a: &x 1\nb: *x\nc: &x [2]\nd: *x\ne: &y 3\nf: *y\n", &root, &err),
                          SHOAL_OK);
    assert_scalar(shoal__node_get(root, "b"), "1", false, 1, 4); /* where the anchored one is */
    const shoal_node_t *d = shoal__node_get(root, "d");
    CU_ASSERT_EQUAL_FATAL(d->kind, SHOAL_NODE_LIST);
    CU_ASSERT_STRING_EQUAL(d->items[0]->text, "2");
    assert_scalar(shoal__node_get(root, "f"), "3", false, 5, 4);
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
    int rc = parse(text, &root, &err);
    fa_disarm();
    char buf[600];
    CU_ASSERT_EQUAL(rc, SHOAL_ENOMEM);
    CU_ASSERT_PTR_NULL(root);
    CU_ASSERT_EQUAL(fa_refused(), 1);
    CU_ASSERT_STRING_EQUAL(shoal__diag_format(&err, buf, sizeof buf), "t.yaml:2:8: out of memory");
}

static void test_depth_limit(void)
{
    char text[2 * (SHOAL_NODE_MAX_DEPTH + 1) + 1];
    /* SHOAL_NODE_MAX_DEPTH nested lists: fine. */
    memset(text, '[', SHOAL_NODE_MAX_DEPTH);
    memset(text + SHOAL_NODE_MAX_DEPTH, ']', SHOAL_NODE_MAX_DEPTH);
    text[2 * SHOAL_NODE_MAX_DEPTH] = '\0';
    shoal_node_t *root = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(parse(text, &root, &err), SHOAL_OK);
    int depth = 0;
    for (const shoal_node_t *n = root; n != NULL; n = n->n ? n->items[0] : NULL)
        depth++;
    CU_ASSERT_EQUAL(depth, SHOAL_NODE_MAX_DEPTH);
    shoal__node_free(root);
    /* One more: refused at the opening bracket of the one too deep. */
    memset(text, '[', SHOAL_NODE_MAX_DEPTH + 1);
    memset(text + SHOAL_NODE_MAX_DEPTH + 1, ']', SHOAL_NODE_MAX_DEPTH + 1);
    text[2 * (SHOAL_NODE_MAX_DEPTH + 1)] = '\0';
    ASSERT_REFUSED(text, "t.yaml:1:33: nesting deeper than 32 levels");
    /* Mappings count the same way, in block style too. */
    char block[4096];
    size_t len = 0;
    for (int i = 0; i <= SHOAL_NODE_MAX_DEPTH; i++)
        len += (size_t)snprintf(block + len, sizeof block - len, "%*sk:\n", 2 * i, "");
    snprintf(block + len, sizeof block - len, "%*sk: v\n", 2 * (SHOAL_NODE_MAX_DEPTH + 1), "");
    ASSERT_REFUSED(block, "t.yaml:33:65: nesting deeper than 32 levels");
}

static void test_non_scalar_keys_refused(void)
{
    ASSERT_REFUSED("? [a]\n: 1\n", "t.yaml:1:3: a key must be a plain string, not a list");
    ASSERT_REFUSED("? {a: 1}\n: 1\n", "t.yaml:1:3: a key must be a plain string, not a mapping");
    ASSERT_REFUSED("{[a]: 1}\n", "t.yaml:1:2: a key must be a plain string, not a list");
    /* Through an alias: the same words (where it points is not asserted). */
    char buf[1200];
    const char *got = refused("a: &m {x: 1}\n*m : 2\n", buf, sizeof buf);
    const char *colon = strstr(got, ": a key");
    CU_ASSERT_PTR_NOT_NULL_FATAL(colon);
    CU_ASSERT_STRING_EQUAL(colon + 2, "a key must be a plain string, not a mapping");
    if (strcmp(colon + 2, "a key must be a plain string, not a mapping") != 0)
        fprintf(stderr, "\n    got: %s\n", got);
}

static void test_unknown_alias(void)
{
    ASSERT_REFUSED("a: *nope\n", "t.yaml:1:4: unknown alias '*nope'");
    /* An anchor is known only once its node is complete: no cycles. */
    ASSERT_REFUSED("a: &x [1, *x]\n", "t.yaml:1:11: unknown alias '*x'");
    /* Aliases refer backwards only. */
    ASSERT_REFUSED("a: *later\nb: &later 1\n", "t.yaml:1:4: unknown alias '*later'");
}

static void test_syntax_errors(void)
{
    ASSERT_REFUSED("a: [1, 2\n",
                   "t.yaml:2:1: while parsing a flow sequence did not find expected ',' or ']'");
    ASSERT_REFUSED("a: b: c\n", "t.yaml:1:5: mapping values are not allowed in this context");
    ASSERT_REFUSED("a:\n\tb: 1\n", "t.yaml:2:1: while scanning for the next token found "
                                   "character that cannot start any token");
    ASSERT_REFUSED("a: 'open\n",
                   "t.yaml:2:1: while scanning a quoted scalar found unexpected end of stream");
    ASSERT_REFUSED("[1, 2]]\n", "t.yaml:1:7: did not find expected <document start>");
}

/* A reader error (a control character) is on line 2: it must say so. */
static void test_reader_error_position(void)
{
    char buf[1200];
    const char *got = refused("a: 1\nb: x\x01y\n", buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(got, "t.yaml:2:5: control characters are not allowed");
    if (strcmp(got, "t.yaml:2:5: control characters are not allowed") != 0)
        fprintf(stderr,
                "\n    got:  %s\n    want: t.yaml:2:5: control characters are not "
                "allowed\n",
                got);
}

static void test_nul_in_value_refused(void)
{
    /* An escaped NUL in a double-quoted scalar reaches the tree as a byte. */
    ASSERT_REFUSED("a: \"x\\0y\"\n", "t.yaml:1:4: a NUL character is not allowed in a value");
    ASSERT_REFUSED("\"k\\0\": 1\n", "t.yaml:1:1: a NUL character is not allowed in a value");
    /* A raw NUL byte in the text is refused by the YAML reader. */
    shoal_node_t *root = (shoal_node_t *)1;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__node_parse("t.yaml", "a: x\0y\n", 7, &root, &err), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(root);
    CU_ASSERT_STRING_EQUAL(err.msg, "control characters are not allowed");
}

static void test_parse_file(void)
{
    shoal_node_t *root = (shoal_node_t *)1;
    shoal_diag_t err;
    char buf[1200];
    const char *missing = "/nonexistent-shoal-dir/pool.yaml";
    CU_ASSERT_EQUAL(shoal__node_parse_file(missing, &root, &err), SHOAL_EINVAL);
    CU_ASSERT_STRING_EQUAL(shoal__diag_format(&err, buf, sizeof buf),
                           "/nonexistent-shoal-dir/pool.yaml: cannot open: No such file or "
                           "directory");
    CU_ASSERT_EQUAL(err.line, 0);

    char path[] = "/tmp/shoal-test-node-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    const char *text = "pool:\n  size: 4\n  size: 5\n";
    CU_ASSERT_EQUAL_FATAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    /* The error names the file by the path given. */
    CU_ASSERT_EQUAL(shoal__node_parse_file(path, &root, &err), SHOAL_EINVAL);
    char want[600];
    snprintf(want, sizeof want, "%s:3:3: duplicate key 'size' (first at line 2, column 3)", path);
    CU_ASSERT_STRING_EQUAL(shoal__diag_format(&err, buf, sizeof buf), want);

    fd = open(path, O_WRONLY | O_TRUNC);
    CU_ASSERT_FATAL(fd >= 0);
    text = "pool:\n  size: 4\n";
    CU_ASSERT_EQUAL_FATAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse_file(path, &root, &err), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(root->file, path);
    assert_scalar(shoal__node_get(shoal__node_get(root, "pool"), "size"), "4", false, 2, 9);
    shoal__node_free(root);
    /* A directory cannot be read as a file. */
    CU_ASSERT_EQUAL(shoal__node_parse_file("/tmp", &root, &err), SHOAL_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.file, "/tmp");
    unlink(path);
}

/* Two trees are the same: kinds, texts, quoted flags, positions, keys. */
static bool same_tree(const shoal_node_t *a, const shoal_node_t *b)
{
    if (a->kind != b->kind || a->quoted != b->quoted || a->line != b->line || a->col != b->col ||
        a->n != b->n || strcmp(a->file, b->file) != 0 || (a->text == NULL) != (b->text == NULL) ||
        (a->text != NULL && strcmp(a->text, b->text) != 0))
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!same_tree(a->items[i], b->items[i]) ||
            (a->keys != NULL && !same_tree(a->keys[i], b->keys[i])))
            return false;
    return true;
}

/* A copy of a subtree (a pool's args) is the same tree, owns all its
 * memory, and outlives the document it came from (ASan checks the last). */
static void test_copy(void)
{
    shoal_node_t *root;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(parse("pools:\n  a:\n    args: { rate: 5, 'q': \"x\", l: [1, {k: v}],"
                                " e: {} }\n",
                                &root, &err),
                          SHOAL_OK);
    const shoal_node_t *args =
        shoal__node_get(shoal__node_get(shoal__node_get(root, "pools"), "a"), "args");
    CU_ASSERT_PTR_NOT_NULL_FATAL(args);
    shoal_node_t *c = shoal__node_copy(args);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(same_tree(args, c));
    CU_ASSERT_PTR_NOT_EQUAL(c->file, args->file);
    shoal__node_free(root); /* the copy stands alone */
    CU_ASSERT_STRING_EQUAL(c->file, "t.yaml");
    CU_ASSERT_EQUAL(c->n, 4);
    CU_ASSERT_STRING_EQUAL(shoal__node_get(c, "rate")->text, "5");
    CU_ASSERT(shoal__node_get(c, "q")->quoted);
    const shoal_node_t *l = shoal__node_get(c, "l");
    CU_ASSERT_EQUAL_FATAL(l->n, 2);
    assert_scalar(shoal__node_get(l->items[1], "k"), "v", false, 3, 43);
    CU_ASSERT_EQUAL(shoal__node_get(c, "e")->n, 0);
    shoal__node_free(c);
    CU_ASSERT_PTR_NULL(shoal__node_copy(NULL));
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"tree and positions", test_tree_and_positions},
        {"quoted flag", test_quoted_flag},
        {"duplicate keys", test_duplicate_keys},
        {"many keys: kept in order, a duplicate found anywhere", test_many_keys},
        {"explicit tags refused", test_explicit_tags_refused},
        {"several documents refused", test_several_documents_refused},
        {"empty input", test_empty_input},
        {"alias expansion", test_alias_expansion},
        {"billion laughs refused", test_billion_laughs_refused},
        {"node budget exact", test_node_budget_exact},
        {"text budget exact", test_text_budget_exact},
        {"many anchors; an anchor defined again", test_many_anchors},
        {"an alias out of memory", test_alias_out_of_memory},
        {"depth limit", test_depth_limit},
        {"non-scalar keys refused", test_non_scalar_keys_refused},
        {"unknown alias", test_unknown_alias},
        {"syntax errors", test_syntax_errors},
        {"reader error position", test_reader_error_position},
        {"NUL in a value refused", test_nul_in_value_refused},
        {"parse file", test_parse_file},
        {"copy", test_copy},
        {NULL, NULL},
    };
    return shoal_test_run("node", cases);
}
