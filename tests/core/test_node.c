/* test_node.c - YAML text to a node tree (host/node.c): positions, the
 * quoted flag, and every strictness rule but the aliases': one document,
 * no explicit tags, no duplicate or non-scalar keys, nesting within
 * SHOAL_NODE_MAX_DEPTH, no NUL in a value; syntax errors where they are;
 * a file parsed, a tree copied. Aliases and the budgets they meet:
 * test_node_aliases.c. Errors are compared whole, as shoal__diag_format
 * prints them ("file:line:col: message"). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/node.h"
#include "node_kit.h"

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
    CU_ASSERT_EQUAL_FATAL(nk_parse(text, &root, &err), SHOAL_OK);
    nk_assert_at(root, SHOAL_NODE_MAP, 1, 1);
    CU_ASSERT_STRING_EQUAL(root->file, "t.yaml");
    CU_ASSERT_EQUAL_FATAL(root->n, 4);
    nk_assert_scalar(root->keys[0], "name", false, 1, 1);
    nk_assert_scalar(root->items[0], "pool", false, 1, 7);
    nk_assert_scalar(root->keys[1], "size", false, 2, 1);
    nk_assert_scalar(root->items[1], "5", false, 2, 7);
    nk_assert_scalar(root->keys[2], "items", false, 3, 1);
    const shoal_node_t *items = root->items[2];
    nk_assert_at(items, SHOAL_NODE_LIST, 4, 3);
    CU_ASSERT_EQUAL_FATAL(items->n, 2);
    CU_ASSERT_PTR_NULL(items->keys);
    nk_assert_scalar(items->items[0], "a", false, 4, 5);
    nk_assert_scalar(items->items[1], "b", true, 5, 5);
    nk_assert_scalar(root->keys[3], "nested", false, 6, 1);
    const shoal_node_t *nested = root->items[3];
    nk_assert_at(nested, SHOAL_NODE_MAP, 6, 9);
    CU_ASSERT_EQUAL_FATAL(nested->n, 2);
    nk_assert_scalar(nested->keys[0], "x", false, 6, 10);
    nk_assert_scalar(nested->items[0], "1", false, 6, 13);
    nk_assert_scalar(nested->keys[1], "y", false, 6, 16);
    const shoal_node_t *y = nested->items[1];
    nk_assert_at(y, SHOAL_NODE_LIST, 6, 19);
    CU_ASSERT_EQUAL_FATAL(y->n, 2);
    nk_assert_scalar(y->items[0], "2", false, 6, 20);
    nk_assert_scalar(y->items[1], "3", false, 6, 23);
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
    CU_ASSERT_EQUAL_FATAL(nk_parse(text, &root, &err), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(root->n, 7);
    nk_assert_scalar(shoal__node_get(root, "plain"), "12", false, 1, 8);
    nk_assert_scalar(shoal__node_get(root, "single"), "12", true, 2, 9);
    nk_assert_scalar(shoal__node_get(root, "double"), "12", true, 3, 9);
    nk_assert_scalar(shoal__node_get(root, "literal"), "12\n", true, 4, 10);
    nk_assert_scalar(shoal__node_get(root, "folded"), "12\n", true, 6, 9);
    /* An empty value is an empty plain scalar where the value would be. */
    nk_assert_scalar(shoal__node_get(root, "empty"), "", false, 8, 7);
    /* No null resolution: ~ is just the text "~". */
    nk_assert_scalar(shoal__node_get(root, "tilde"), "~", false, 9, 8);
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
    CU_ASSERT_EQUAL(nk_parse("a: {k: 1}\nb: {k: 2}\n", &root, &err), SHOAL_OK);
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
    CU_ASSERT_EQUAL_FATAL(nk_parse(text, &root, &err), SHOAL_OK);
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
    CU_ASSERT_EQUAL(nk_parse("---\na: 1\n...\n", &root, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(root->kind, SHOAL_NODE_MAP);
    shoal__node_free(root);
}

static void test_empty_input(void)
{
    const char *texts[] = {"", "# only a comment\n", "\n\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        shoal_node_t *root = NULL;
        shoal_diag_t err;
        CU_ASSERT_EQUAL_FATAL(nk_parse(texts[i], &root, &err), SHOAL_OK);
        nk_assert_at(root, SHOAL_NODE_MAP, 1, 1);
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
    CU_ASSERT_EQUAL_FATAL(nk_parse("hello\n", &root, &err), SHOAL_OK);
    nk_assert_scalar(root, "hello", false, 1, 1);
    shoal__node_free(root);
    shoal__node_free(NULL);
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
    CU_ASSERT_EQUAL_FATAL(nk_parse(text, &root, &err), SHOAL_OK);
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
    const char *got = nk_refused("a: &m {x: 1}\n*m : 2\n", buf, sizeof buf);
    const char *colon = strstr(got, ": a key");
    CU_ASSERT_PTR_NOT_NULL_FATAL(colon);
    CU_ASSERT_STRING_EQUAL(colon + 2, "a key must be a plain string, not a mapping");
    if (strcmp(colon + 2, "a key must be a plain string, not a mapping") != 0)
        fprintf(stderr, "\n    got: %s\n", got);
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
    const char *got = nk_refused("a: 1\nb: x\x01y\n", buf, sizeof buf);
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
    nk_assert_scalar(shoal__node_get(shoal__node_get(root, "pool"), "size"), "4", false, 2, 9);
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
    CU_ASSERT_EQUAL_FATAL(nk_parse("pools:\n  a:\n    args: { rate: 5, 'q': \"x\", l: [1, {k: v}],"
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
    nk_assert_scalar(shoal__node_get(l->items[1], "k"), "v", false, 3, 43);
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
        {"depth limit", test_depth_limit},
        {"non-scalar keys refused", test_non_scalar_keys_refused},
        {"syntax errors", test_syntax_errors},
        {"reader error position", test_reader_error_position},
        {"NUL in a value refused", test_nul_in_value_refused},
        {"parse file", test_parse_file},
        {"copy", test_copy},
        {NULL, NULL},
    };
    return shoal_test_run("node", cases);
}
