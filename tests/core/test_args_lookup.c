/* test_args_lookup.c - how the args getters (host/args.c) find their value:
 * missing required keys, SHOAL_ARG_OPTIONAL leaving the output untouched,
 * key NULL reading the node itself, keys looked up in what is not a
 * mapping, the walking helpers (shoal_args_len, _key, _item), and the
 * public shoal_arg_* with ctx NULL giving the internal getters' codes. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "args_kit.h"

/* ---- lookup rules: missing keys, OPTIONAL, key NULL, args not a map ----------- */

static void test_missing_required_key(void)
{
    const shoal_node_t *args = ag_yaml("# pool args\nother: 1\n");
    shoal_diag_t err;
    int64_t i = 5;
    bool b = true;
    uint64_t u = 5;
    const char *s = "s";
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:2:1: args: missing required key 'rate'", "int");
    CU_ASSERT_EQUAL(shoal__arg_bool(args, "flag", 0, &b, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:2:1: args: missing required key 'flag'", "bool");
    CU_ASSERT_EQUAL(shoal__arg_duration_ms(args, "every", 0, &u, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:2:1: args: missing required key 'every'", "duration");
    CU_ASSERT_EQUAL(shoal__arg_size(args, "size", 0, &u, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:2:1: args: missing required key 'size'", "size");
    CU_ASSERT_EQUAL(shoal__arg_string(args, "reply", 0, &s, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:2:1: args: missing required key 'reply'", "string");
    CU_ASSERT_EQUAL(i, 5);
    CU_ASSERT_EQUAL(b, true);
    CU_ASSERT_EQUAL(u, 5);
    CU_ASSERT_STRING_EQUAL(s, "s");
    /* Keys are case-sensitive. */
    args = ag_yaml("Rate: 1\n");
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    /* No args at all (a pool without an args: section). */
    CU_ASSERT_EQUAL(shoal__arg_int(NULL, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "args: missing required key 'rate'", "NULL args");
    /* Empty args: an empty mapping. */
    args = ag_yaml("");
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:1:1: args: missing required key 'rate'", "empty args");
    ag_drop();
}

static void test_optional_leaves_out_untouched(void)
{
    const shoal_node_t *args = ag_yaml("other: 1\n");
    for (int pass = 0; pass < 2; pass++) {
        const shoal_node_t *a = pass == 0 ? args : NULL; /* absent key, then no args */
        shoal_diag_t err;
        memset(&err, 0x5a, sizeof err);
        int64_t i = 77;
        bool b = true;
        uint64_t d = 88, z = 99;
        const char *s = "default";
        const shoal_node_t *l = a, *m = a;
        CU_ASSERT_EQUAL(shoal__arg_int(a, "rate", SHOAL_ARG_OPTIONAL, 0, 10, &i, &err), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal__arg_bool(a, "flag", SHOAL_ARG_OPTIONAL, &b, &err), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal__arg_duration_ms(a, "every", SHOAL_ARG_OPTIONAL, &d, &err), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal__arg_size(a, "size", SHOAL_ARG_OPTIONAL, &z, &err), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal__arg_string(a, "reply", SHOAL_ARG_OPTIONAL, &s, &err), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal__arg_node(a, "l", SHOAL_ARG_OPTIONAL, SHOAL_NODE_LIST, &l, &err),
                        SHOAL_OK);
        CU_ASSERT_EQUAL(shoal__arg_node(a, "m", SHOAL_ARG_OPTIONAL, SHOAL_NODE_MAP, &m, &err),
                        SHOAL_OK);
        CU_ASSERT_EQUAL(i, 77);
        CU_ASSERT_EQUAL(b, true);
        CU_ASSERT_EQUAL(d, 88);
        CU_ASSERT_EQUAL(z, 99);
        CU_ASSERT_STRING_EQUAL(s, "default");
        CU_ASSERT_PTR_EQUAL(l, a);
        CU_ASSERT_PTR_EQUAL(m, a);
    }
    /* OPTIONAL does not excuse a wrong value. */
    args = ag_yaml("rate: fast\n");
    int64_t i = 3;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", SHOAL_ARG_OPTIONAL, 0, 10, &i, &err),
                    SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:7: args 'rate': expected an integer, got 'fast'",
            "optional");
    CU_ASSERT_EQUAL(i, 3);
    ag_drop();
}

static void test_key_null_reads_the_node(void)
{
    const shoal_node_t *args = ag_yaml("ports: [80, 0x1bb, x]\nevery: [1s, 2ms]\n");
    const shoal_node_t *ports = shoal__node_get(args, "ports");
    shoal_diag_t err;
    int64_t p = 0;
    CU_ASSERT_EQUAL(shoal__arg_int(shoal_args_item(ports, 0), NULL, 0, 1, 65535, &p, &err),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(p, 80);
    CU_ASSERT_EQUAL(shoal__arg_int(shoal_args_item(ports, 1), NULL, 0, 1, 65535, &p, &err),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(p, 443);
    CU_ASSERT_EQUAL(shoal__arg_int(shoal_args_item(ports, 2), NULL, 0, 1, 65535, &p, &err),
                    SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:20: args: expected an integer, got 'x'", "item 2");
    CU_ASSERT_EQUAL(p, 443);
    uint64_t ms = 0;
    const shoal_node_t *every = shoal__node_get(args, "every");
    CU_ASSERT_EQUAL(shoal__arg_duration_ms(shoal_args_item(every, 1), NULL, 0, &ms, &err),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(ms, 2);
    /* key NULL on a list: the list itself. */
    const shoal_node_t *l = NULL;
    CU_ASSERT_EQUAL(shoal__arg_node(ports, NULL, 0, SHOAL_NODE_LIST, &l, &err), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(l, ports);
    CU_ASSERT_EQUAL(shoal__arg_int(ports, NULL, 0, 0, 1, &p, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:8: args: expected an integer, got a list", "list as int");
    /* key NULL and no node at all. */
    CU_ASSERT_EQUAL(shoal__arg_int(NULL, NULL, 0, 0, 1, &p, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "args: no value", "NULL, NULL");
    /* A key looked up in something that is not a mapping. */
    CU_ASSERT_EQUAL(shoal__arg_int(ports, "rate", 0, 0, 1, &p, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:8: args: expected a mapping, got a list", "key in list");
    CU_ASSERT_EQUAL(
        shoal__arg_int(shoal_args_item(ports, 0), "rate", SHOAL_ARG_OPTIONAL, 0, 1, &p, &err),
        SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:9: args: expected a mapping, got a value", "key in scalar");
    ag_drop();
}

static void test_walking(void)
{
    const shoal_node_t *args = ag_yaml("list: [a, b, c]\nmap: {x: 1, y: 2}\nscalar: s\n");
    const shoal_args_t *list = shoal__node_get(args, "list"), *map = shoal__node_get(args, "map"),
                       *scalar = shoal__node_get(args, "scalar");
    CU_ASSERT_EQUAL(shoal_args_len(args), 3);
    CU_ASSERT_STRING_EQUAL(shoal_args_key(args, 0), "list");
    CU_ASSERT_STRING_EQUAL(shoal_args_key(args, 2), "scalar");
    CU_ASSERT_PTR_EQUAL(shoal_args_item(args, 1), map);

    CU_ASSERT_EQUAL(shoal_args_len(list), 3);
    CU_ASSERT_STRING_EQUAL(shoal_args_item(list, 0)->text, "a");
    CU_ASSERT_STRING_EQUAL(shoal_args_item(list, 2)->text, "c");
    CU_ASSERT_PTR_NULL(shoal_args_item(list, 3));
    CU_ASSERT_PTR_NULL(shoal_args_key(list, 0)); /* a list has no keys */

    CU_ASSERT_EQUAL(shoal_args_len(map), 2);
    CU_ASSERT_STRING_EQUAL(shoal_args_key(map, 0), "x");
    CU_ASSERT_STRING_EQUAL(shoal_args_key(map, 1), "y");
    CU_ASSERT_PTR_NULL(shoal_args_key(map, 2));
    CU_ASSERT_STRING_EQUAL(shoal_args_item(map, 1)->text, "2");
    CU_ASSERT_PTR_NULL(shoal_args_item(map, 2));

    CU_ASSERT_EQUAL(shoal_args_len(scalar), 0);
    CU_ASSERT_PTR_NULL(shoal_args_item(scalar, 0));
    CU_ASSERT_PTR_NULL(shoal_args_key(scalar, 0));
    CU_ASSERT_EQUAL(shoal_args_len(NULL), 0);
    CU_ASSERT_PTR_NULL(shoal_args_item(NULL, 0));
    CU_ASSERT_PTR_NULL(shoal_args_key(NULL, 0));
    ag_drop();
}

/* ---- the public getters with ctx NULL ----------------------------------------- */

static void test_public_ctx_null(void)
{
    const shoal_args_t *args = ag_yaml("rate: 5\nflag: true\nevery: 2s\nsize: 1KiB\nreply: hi\n"
                                       "list: [1]\nmap: {a: 1}\nbad: fast\n");
    int64_t i = 0;
    bool b = false;
    uint64_t u = 0;
    const char *s = NULL;
    const shoal_args_t *n = NULL;
    CU_ASSERT_EQUAL(shoal_arg_int(NULL, args, "rate", 0, 0, 10, &i), SHOAL_OK);
    CU_ASSERT_EQUAL(i, 5);
    CU_ASSERT_EQUAL(shoal_arg_bool(NULL, args, "flag", 0, &b), SHOAL_OK);
    CU_ASSERT_EQUAL(b, true);
    CU_ASSERT_EQUAL(shoal_arg_duration_ms(NULL, args, "every", 0, &u), SHOAL_OK);
    CU_ASSERT_EQUAL(u, 2000);
    CU_ASSERT_EQUAL(shoal_arg_size(NULL, args, "size", 0, &u), SHOAL_OK);
    CU_ASSERT_EQUAL(u, 1024);
    CU_ASSERT_EQUAL(shoal_arg_string(NULL, args, "reply", 0, &s), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(s, "hi");
    CU_ASSERT_EQUAL(shoal_arg_list(NULL, args, "list", 0, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_args_len(n), 1);
    CU_ASSERT_EQUAL(shoal_arg_map(NULL, args, "map", 0, &n), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(shoal_args_key(n, 0), "a");

    /* The same codes as the internal getters. */
    CU_ASSERT_EQUAL(shoal_arg_int(NULL, args, "bad", 0, 0, 10, &i), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_int(NULL, args, "rate", 0, 6, 10, &i), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_bool(NULL, args, "bad", 0, &b), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_duration_ms(NULL, args, "bad", 0, &u), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_size(NULL, args, "bad", 0, &u), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_string(NULL, args, "list", 0, &s), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_list(NULL, args, "map", 0, &n), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_map(NULL, args, "list", 0, &n), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_int(NULL, args, "nope", 0, 0, 10, &i), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_bool(NULL, args, "nope", 0, &b), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_duration_ms(NULL, args, "nope", 0, &u), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_size(NULL, args, "nope", 0, &u), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_string(NULL, args, "nope", 0, &s), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_list(NULL, args, "nope", 0, &n), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_map(NULL, args, "nope", 0, &n), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_int(NULL, NULL, "rate", 0, 0, 10, &i), SHOAL_ENOKEY);
    i = 42;
    CU_ASSERT_EQUAL(shoal_arg_int(NULL, args, "nope", SHOAL_ARG_OPTIONAL, 0, 10, &i), SHOAL_OK);
    CU_ASSERT_EQUAL(i, 42);
    CU_ASSERT_EQUAL(shoal_arg_int(NULL, NULL, "nope", SHOAL_ARG_OPTIONAL, 0, 10, &i), SHOAL_OK);
    CU_ASSERT_EQUAL(i, 42);
    ag_drop();
}

/* The three added later: duration_us, enum and error, with ctx NULL. */
static void test_public_ctx_null_new(void)
{
    static const char *const modes[] = {"panic", "fail", "exit", NULL};
    const shoal_args_t *args = ag_yaml("spin: 50us\nmode: exit\nbad: 50\nboom: boom\n");
    uint64_t u = 0;
    unsigned x = 99;
    CU_ASSERT_EQUAL(shoal_arg_duration_us(NULL, args, "spin", 0, &u), SHOAL_OK);
    CU_ASSERT_EQUAL(u, 50);
    CU_ASSERT_EQUAL(shoal_arg_enum(NULL, args, "mode", 0, modes, &x), SHOAL_OK);
    CU_ASSERT_EQUAL(x, 2);
    CU_ASSERT_EQUAL(shoal_arg_duration_us(NULL, args, "bad", 0, &u), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_enum(NULL, args, "boom", 0, modes, &x), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_duration_us(NULL, args, "nope", 0, &u), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_enum(NULL, args, "nope", 0, modes, &x), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(shoal_arg_duration_us(NULL, args, "nope", SHOAL_ARG_OPTIONAL, &u), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_arg_enum(NULL, args, "nope", SHOAL_ARG_OPTIONAL, modes, &x), SHOAL_OK);
    CU_ASSERT_EQUAL(u, 50);
    CU_ASSERT_EQUAL(x, 2);
    CU_ASSERT_EQUAL(shoal_arg_error(NULL, args, "spin", "%s", "no"), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_arg_error(NULL, NULL, NULL, "%s", "no"), SHOAL_EINVAL);
    ag_drop();
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"missing required key", test_missing_required_key},
        {"optional leaves out untouched", test_optional_leaves_out_untouched},
        {"key NULL reads the node", test_key_null_reads_the_node},
        {"walking lists and maps", test_walking},
        {"public getters with ctx NULL", test_public_ctx_null},
        {"duration_us, enum and arg_error with ctx NULL", test_public_ctx_null_new},
        {NULL, NULL},
    };
    return shoal_test_run("args_lookup", cases);
}
