/* test_args.c - the typed getters over a pool's args (host/args.c): every
 * getter on every kind of value and every error, through the internal
 * shoal__arg_* (whose diag is compared whole, "pool.yaml:line:col: ..."),
 * the walking helpers, the public shoal_arg_* with ctx NULL, and inside an
 * actor, where a failing getter in init ends the actor with its code and
 * leaves its message in shoal_ctx_error; shoal_arg_error (a plugin's own
 * check) reports the same way, at the value of its key. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "actor/actor.h"
#include "host/args.h"
#include "runtime/runtime.h"
#include "support.h"

/* ---- helpers --------------------------------------------------------------- */

/* Parses text named "pool.yaml"; the tree is freed by the next call or by
 * drop(). */
static shoal_node_t *current;

static void drop(void)
{
    shoal__node_free(current);
    current = NULL;
}

static const shoal_node_t *yaml(const char *text)
{
    drop();
    shoal_diag_t err;
    int rc = shoal__node_parse("pool.yaml", text, strlen(text), &current, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    return current;
}

static char formatted[1200];
static const char *fmt(const shoal_diag_t *d)
{
    return shoal__diag_format(d, formatted, sizeof formatted);
}

static void same(const char *got, const char *want, const char *text)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    for:  %s\n    got:  %s\n    want: %s\n", text, got, want);
}

/* ---- integers ---------------------------------------------------------------- */

typedef struct int_case_s {
    const char *text; /* the value of key "rate" */
    int64_t min, max;
    int rc;
    int64_t want;      /* when rc == SHOAL_OK */
    const char *error; /* otherwise: the whole formatted diag */
} int_case_t;

static void run_int_cases(const int_case_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char text[200];
        snprintf(text, sizeof text, "rate: %s\n", cases[i].text);
        const shoal_node_t *args = yaml(text);
        int64_t out = -12345;
        shoal_diag_t err;
        memset(&err, 0, sizeof err);
        int rc = shoal__arg_int(args, "rate", 0, cases[i].min, cases[i].max, &out, &err);
        CU_ASSERT_EQUAL(rc, cases[i].rc);
        if (rc != cases[i].rc)
            fprintf(stderr, "\n    for: %s: rc %d, want %d\n", text, rc, cases[i].rc);
        if (cases[i].rc == SHOAL_OK) {
            CU_ASSERT_EQUAL(out, cases[i].want);
        } else {
            CU_ASSERT_EQUAL(out, -12345); /* untouched on error */
            same(fmt(&err), cases[i].error, text);
        }
    }
}

static void test_int(void)
{
    static const int_case_t cases[] = {
        {"42", 0, 100, SHOAL_OK, 42, NULL},
        {"0", 0, 100, SHOAL_OK, 0, NULL},
        {"-42", -100, 100, SHOAL_OK, -42, NULL},
        {"+7", 0, 100, SHOAL_OK, 7, NULL},
        {"007", 0, 100, SHOAL_OK, 7, NULL},
        {"0x1F", 0, 100, SHOAL_OK, 31, NULL},
        {"0X1f", 0, 100, SHOAL_OK, 31, NULL},
        {"-0x10", -100, 100, SHOAL_OK, -16, NULL},
        {"9223372036854775807", INT64_MIN, INT64_MAX, SHOAL_OK, INT64_MAX, NULL},
        {"-9223372036854775808", INT64_MIN, INT64_MAX, SHOAL_OK, INT64_MIN, NULL},
        {"0x7fffffffffffffff", INT64_MIN, INT64_MAX, SHOAL_OK, INT64_MAX, NULL},
        {"1", 1, 1, SHOAL_OK, 1, NULL},
        /* out of range */
        {"1001", 1, 1000, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': 1001 is out of range: expected 1 to 1000"},
        {"0", 1, 1000, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': 0 is out of range: expected 1 to 1000"},
        {"-1", 0, 10, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': -1 is out of range: expected 0 to 10"},
        /* overflow */
        {"9223372036854775808", INT64_MIN, INT64_MAX, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': 9223372036854775808 is out of range: expected "
         "-9223372036854775808 to 9223372036854775807"},
        {"-9223372036854775809", INT64_MIN, INT64_MAX, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': -9223372036854775809 is out of range: expected "
         "-9223372036854775808 to 9223372036854775807"},
        {"99999999999999999999999", INT64_MIN, INT64_MAX, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': 99999999999999999999999 is out of range: expected "
         "-9223372036854775808 to 9223372036854775807"},
        {"0x8000000000000000", INT64_MIN, INT64_MAX, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': 0x8000000000000000 is out of range: expected "
         "-9223372036854775808 to 9223372036854775807"},
        /* not integers */
        {"fast", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got 'fast'"},
        {"\"12\"", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '12'"},
        {"'12'", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '12'"},
        {"", 0, 100, SHOAL_EINVAL, 0, "pool.yaml:1:6: args 'rate': expected an integer, got ''"},
        {"12abc", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '12abc'"},
        {"1.5", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '1.5'"},
        {"0x", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '0x'"},
        {"0xg", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '0xg'"},
        {"+", 0, 100, SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'rate': expected an integer, got '+'"},
        {"-x", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '-x'"},
        {"1_000", 0, 10000, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got '1_000'"},
        {"true", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got 'true'"},
        /* not scalars */
        {"[1]", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got a list"},
        {"{a: 1}", 0, 100, SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'rate': expected an integer, got a mapping"},
    };
    run_int_cases(cases, sizeof cases / sizeof cases[0]);
    drop();
}

/* ---- bool -------------------------------------------------------------------- */

static void test_bool(void)
{
    static const struct {
        const char *text;
        int rc;
        bool want;
        const char *error;
    } cases[] = {
        {"true", SHOAL_OK, true, NULL},
        {"false", SHOAL_OK, false, NULL},
        {"yes", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'flag': expected true or false, got 'yes'"},
        {"no", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'flag': expected true or false, got 'no'"},
        {"True", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'flag': expected true or false, got 'True'"},
        {"FALSE", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'flag': expected true or false, got 'FALSE'"},
        {"1", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'flag': expected true or false, got '1'"},
        {"0", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'flag': expected true or false, got '0'"},
        {"on", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'flag': expected true or false, got 'on'"},
        {"'true'", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'flag': expected true or false, got 'true'"},
        {"", SHOAL_EINVAL, 0, "pool.yaml:1:6: args 'flag': expected true or false, got ''"},
        {"[true]", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'flag': expected true or false, got a list"},
        {"{a: b}", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'flag': expected true or false, got a mapping"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[200];
        snprintf(text, sizeof text, "flag: %s\n", cases[i].text);
        const shoal_node_t *args = yaml(text);
        for (int start = 0; start <= 1; start++) { /* both starting values */
            bool out = start;
            shoal_diag_t err;
            int rc = shoal__arg_bool(args, "flag", 0, &out, &err);
            CU_ASSERT_EQUAL(rc, cases[i].rc);
            if (cases[i].rc == SHOAL_OK) {
                CU_ASSERT_EQUAL(out, cases[i].want);
            } else {
                CU_ASSERT_EQUAL(out, start);
                same(fmt(&err), cases[i].error, text);
            }
        }
    }
    drop();
}

/* ---- durations and sizes ------------------------------------------------------- */

typedef struct unit_case_s {
    const char *text;
    int rc;
    uint64_t want;
    const char *error;
} unit_case_t;

typedef int (*unit_getter_t)(const shoal_node_t *, const char *, unsigned, uint64_t *,
                             shoal_diag_t *);

static void run_unit_cases(unit_getter_t get, const char *key, const unit_case_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char text[200];
        snprintf(text, sizeof text, "%s: %s\n", key, cases[i].text);
        const shoal_node_t *args = yaml(text);
        uint64_t out = 12345;
        shoal_diag_t err;
        int rc = get(args, key, 0, &out, &err);
        CU_ASSERT_EQUAL(rc, cases[i].rc);
        if (rc != cases[i].rc)
            fprintf(stderr, "\n    for: %s: rc %d, want %d\n", text, rc, cases[i].rc);
        if (cases[i].rc == SHOAL_OK) {
            CU_ASSERT_EQUAL(out, cases[i].want);
            if (out != cases[i].want)
                fprintf(stderr, "\n    for: %s: %" PRIu64 ", want %" PRIu64 "\n", text, out,
                        cases[i].want);
        } else {
            CU_ASSERT_EQUAL(out, 12345);
            same(fmt(&err), cases[i].error, text);
        }
    }
    drop();
}

#define DUR_EXPECT "expected a duration like 250ms, 2s or 1m"

static void test_duration(void)
{
    static const unit_case_t cases[] = {
        {"250ms", SHOAL_OK, 250, NULL},
        {"2s", SHOAL_OK, 2000, NULL},
        {"1m", SHOAL_OK, 60000, NULL},
        {"1h", SHOAL_OK, 3600000, NULL},
        {"0", SHOAL_OK, 0, NULL},
        {"0ms", SHOAL_OK, 0, NULL},
        {"0h", SHOAL_OK, 0, NULL},
        /* microseconds round up to whole milliseconds */
        {"1us", SHOAL_OK, 1, NULL},
        {"999us", SHOAL_OK, 1, NULL},
        {"1000us", SHOAL_OK, 1, NULL},
        {"1001us", SHOAL_OK, 2, NULL},
        {"1500us", SHOAL_OK, 2, NULL},
        {"0us", SHOAL_OK, 0, NULL},
        {"5124095576030h", SHOAL_OK, UINT64_C(5124095576030) * 3600000u, NULL},
        /* no unit (only 0 may go without) */
        {"5", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': '5' has no unit: " DUR_EXPECT},
        /* unknown units */
        {"5d", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': unknown unit in '5d': " DUR_EXPECT},
        {"5MS", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': unknown unit in '5MS': " DUR_EXPECT},
        {"5 ms", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': unknown unit in '5 ms': " DUR_EXPECT},
        {"1.5s", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': unknown unit in '1.5s': " DUR_EXPECT},
        {"5msec", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': unknown unit in '5msec': " DUR_EXPECT},
        /* negative, signed, quoted, not a number */
        {"-5ms", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_EXPECT ", got '-5ms'"},
        {"+5ms", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_EXPECT ", got '+5ms'"},
        {"'5s'", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_EXPECT ", got '5s'"},
        {"ms", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_EXPECT ", got 'ms'"},
        {"", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'every': " DUR_EXPECT ", got ''"},
        /* too large */
        {"5124095576031h", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': 5124095576031h is too large"},
        {"99999999999999999999ms", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': 99999999999999999999ms is too large"},
        /* not scalars */
        {"[1s]", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': expected a duration, got a list"},
        {"{a: 1s}", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': expected a duration, got a mapping"},
    };
    run_unit_cases(shoal__arg_duration_ms, "every", cases, sizeof cases / sizeof cases[0]);
}

#define SIZE_EXPECT "expected a size like 512, 64KiB or 1MiB"

#define DUR_US_EXPECT "expected a duration like 50us, 250ms, 2s or 1m"

static void test_duration_us(void)
{
    static const unit_case_t cases[] = {
        /* microseconds are kept, not rounded */
        {"50us", SHOAL_OK, 50, NULL},
        {"1us", SHOAL_OK, 1, NULL},
        {"1001us", SHOAL_OK, 1001, NULL},
        {"0us", SHOAL_OK, 0, NULL},
        {"2ms", SHOAL_OK, 2000, NULL},
        {"250ms", SHOAL_OK, 250000, NULL},
        {"1s", SHOAL_OK, 1000000, NULL},
        {"1m", SHOAL_OK, 60000000, NULL},
        {"1h", SHOAL_OK, UINT64_C(3600000000), NULL},
        {"0", SHOAL_OK, 0, NULL},
        {"0h", SHOAL_OK, 0, NULL},
        {"9223372036854775807us", SHOAL_OK, INT64_MAX, NULL},
        {"5124095576h", SHOAL_OK, UINT64_C(5124095576) * UINT64_C(3600000000), NULL},
        /* no unit (only 0 may go without) */
        {"50", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': '50' has no unit: " DUR_US_EXPECT},
        {"1", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': '1' has no unit: " DUR_US_EXPECT},
        /* unknown units */
        {"5d", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': unknown unit in '5d': " DUR_US_EXPECT},
        {"5US", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': unknown unit in '5US': " DUR_US_EXPECT},
        {"5ns", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': unknown unit in '5ns': " DUR_US_EXPECT},
        {"1.5ms", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': unknown unit in '1.5ms': " DUR_US_EXPECT},
        /* negative, hex, quoted, not a number */
        {"-50us", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_US_EXPECT ", got '-50us'"},
        {"0x10us", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_US_EXPECT ", got '0x10us'"},
        {"'50us'", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_US_EXPECT ", got '50us'"},
        {"us", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': " DUR_US_EXPECT ", got 'us'"},
        /* too large */
        {"5124095577h", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': 5124095577h is too large"},
        {"9223372036854775808us", SHOAL_EINVAL, 0,
         "pool.yaml:1:8: args 'every': 9223372036854775808us is too large"},
        /* not scalars */
        {"[50us]", SHOAL_EINVAL, 0, "pool.yaml:1:8: args 'every': expected a duration, got a list"},
    };
    run_unit_cases(shoal__arg_duration_us, "every", cases, sizeof cases / sizeof cases[0]);

    /* Absent: required is ENOKEY at the mapping, optional leaves out alone. */
    const shoal_node_t *args = yaml("other: 1\n");
    uint64_t out = 7;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__arg_duration_us(args, "every", 0, &out, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:1:1: args: missing required key 'every'", "every absent");
    CU_ASSERT_EQUAL(shoal__arg_duration_us(args, "every", SHOAL_ARG_OPTIONAL, &out, &err),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(out, 7);
    drop();
}

static void test_size(void)
{
    static const unit_case_t cases[] = {
        {"512", SHOAL_OK, 512, NULL},
        {"0", SHOAL_OK, 0, NULL},
        {"512B", SHOAL_OK, 512, NULL},
        {"64KiB", SHOAL_OK, 65536, NULL},
        {"1MiB", SHOAL_OK, UINT64_C(1) << 20, NULL},
        {"3GiB", SHOAL_OK, UINT64_C(3) << 30, NULL},
        {"2TiB", SHOAL_OK, UINT64_C(2) << 40, NULL},
        {"1kB", SHOAL_OK, 1000, NULL},
        {"5MB", SHOAL_OK, 5000000, NULL},
        {"7GB", SHOAL_OK, UINT64_C(7000000000), NULL},
        {"9TB", SHOAL_OK, UINT64_C(9000000000000), NULL},
        {"9223372036854775807", SHOAL_OK, UINT64_C(9223372036854775807), NULL},
        {"16777215TiB", SHOAL_OK, UINT64_C(16777215) << 40, NULL},
        {"18446744TB", SHOAL_OK, UINT64_C(18446744) * UINT64_C(1000000000000), NULL},
        /* overflow */
        {"16777216TiB", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': 16777216TiB is too large"},
        {"18446745TB", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': 18446745TB is too large"},
        {"99999999999999999999", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'size': 99999999999999999999 is too large"},
        {"99999999999999999999KiB", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'size': 99999999999999999999KiB is too large"},
        /* unknown units: the binary ones are KiB, the decimal ones kB */
        {"1KB", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': unknown unit in '1KB': " SIZE_EXPECT},
        {"1kib", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'size': unknown unit in '1kib': " SIZE_EXPECT},
        {"1PiB", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'size': unknown unit in '1PiB': " SIZE_EXPECT},
        {"1.5MiB", SHOAL_EINVAL, 0,
         "pool.yaml:1:7: args 'size': unknown unit in '1.5MiB': " SIZE_EXPECT},
        /* negative, signed, quoted, not a number */
        {"-1", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': " SIZE_EXPECT ", got '-1'"},
        {"-1KiB", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': " SIZE_EXPECT ", got '-1KiB'"},
        {"+1", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': " SIZE_EXPECT ", got '+1'"},
        {"'512'", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': " SIZE_EXPECT ", got '512'"},
        {"big", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': " SIZE_EXPECT ", got 'big'"},
        {"[1]", SHOAL_EINVAL, 0, "pool.yaml:1:7: args 'size': expected a size, got a list"},
    };
    run_unit_cases(shoal__arg_size, "size", cases, sizeof cases / sizeof cases[0]);
}

/* ---- enumerations ------------------------------------------------------------ */

static void test_enum(void)
{
    static const char *const modes[] = {"panic", "fail", "exit", NULL};
    static const struct {
        const char *text;
        unsigned want;
    } ok[] = {
        {"panic", 0}, {"fail", 1}, {"exit", 2}, {"'exit'", 2}, {"\"fail\"", 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char text[200];
        snprintf(text, sizeof text, "mode: %s\n", ok[i].text);
        const shoal_node_t *args = yaml(text);
        unsigned index = 99;
        shoal_diag_t err;
        CU_ASSERT_EQUAL(shoal__arg_enum(args, "mode", 0, modes, &index, &err), SHOAL_OK);
        CU_ASSERT_EQUAL(index, ok[i].want);
    }
    static const struct {
        const char *text, *error;
    } bad[] = {
        {"boom", "pool.yaml:1:7: args 'mode': expected one of panic, fail, exit, got 'boom'"},
        {"Panic", "pool.yaml:1:7: args 'mode': expected one of panic, fail, exit, got 'Panic'"},
        {"pani", "pool.yaml:1:7: args 'mode': expected one of panic, fail, exit, got 'pani'"},
        {"''", "pool.yaml:1:7: args 'mode': expected one of panic, fail, exit, got ''"},
        {"0", "pool.yaml:1:7: args 'mode': expected one of panic, fail, exit, got '0'"},
        {"[panic]", "pool.yaml:1:7: args 'mode': expected a string, got a list"},
        {"{panic: 1}", "pool.yaml:1:7: args 'mode': expected a string, got a mapping"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[200];
        snprintf(text, sizeof text, "mode: %s\n", bad[i].text);
        const shoal_node_t *args = yaml(text);
        unsigned index = 99;
        shoal_diag_t err;
        CU_ASSERT_EQUAL(shoal__arg_enum(args, "mode", 0, modes, &index, &err), SHOAL_EINVAL);
        CU_ASSERT_EQUAL(index, 99); /* untouched on error */
        same(fmt(&err), bad[i].error, text);
    }
    /* One choice; absent keys. */
    static const char *const only[] = {"only", NULL};
    const shoal_node_t *args = yaml("mode: x\n");
    unsigned index = 99;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__arg_enum(args, "mode", 0, only, &index, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:1:7: args 'mode': expected one of only, got 'x'", "one choice");
    CU_ASSERT_EQUAL(shoal__arg_enum(args, "kind", 0, modes, &index, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:1:1: args: missing required key 'kind'", "kind absent");
    CU_ASSERT_EQUAL(shoal__arg_enum(args, "kind", SHOAL_ARG_OPTIONAL, modes, &index, &err),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(index, 99);
    drop();
}

/* ---- strings, lists, maps ------------------------------------------------------ */

static void test_string(void)
{
    static const struct {
        const char *text, *want;
    } ok[] = {
        {"pong", "pong"},
        {"'quoted'", "quoted"},
        {"\"two words\"", "two words"},
        {"42", "42"},
        {"true", "true"},
        {"1.5", "1.5"},
        {"''", ""},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char text[200];
        snprintf(text, sizeof text, "reply: %s\n", ok[i].text);
        const shoal_node_t *args = yaml(text);
        const char *out = NULL;
        shoal_diag_t err;
        CU_ASSERT_EQUAL(shoal__arg_string(args, "reply", 0, &out, &err), SHOAL_OK);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        CU_ASSERT_STRING_EQUAL(out, ok[i].want);
        /* It points into the tree. */
        CU_ASSERT_PTR_EQUAL(out, shoal__node_get(args, "reply")->text);
    }
    const char *out = "untouched";
    shoal_diag_t err;
    const shoal_node_t *args = yaml("reply: [a]\nmap: {a: 1}\n");
    CU_ASSERT_EQUAL(shoal__arg_string(args, "reply", 0, &out, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:1:8: args 'reply': expected a string, got a list", "reply: [a]");
    CU_ASSERT_EQUAL(shoal__arg_string(args, "map", 0, &out, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:2:6: args 'map': expected a string, got a mapping", "map: {a: 1}");
    CU_ASSERT_STRING_EQUAL(out, "untouched");
    drop();
}

static void test_list_and_map(void)
{
    const shoal_node_t *args = yaml("ports: [80, 443]\n"
                                    "limits: {cpu: 2, mem: 1GiB}\n"
                                    "name: x\n"
                                    "quoted: 'x'\n");
    const shoal_node_t *list = NULL, *map = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__arg_node(args, "ports", 0, SHOAL_NODE_LIST, &list, &err), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(list, shoal__node_get(args, "ports"));
    CU_ASSERT_EQUAL(shoal__arg_node(args, "limits", 0, SHOAL_NODE_MAP, &map, &err), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(map, shoal__node_get(args, "limits"));

    const shoal_node_t *out = (const shoal_node_t *)&err;
    CU_ASSERT_EQUAL(shoal__arg_node(args, "limits", 0, SHOAL_NODE_LIST, &out, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:2:9: args 'limits': expected a list, got a mapping", "limits");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "ports", 0, SHOAL_NODE_MAP, &out, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:1:8: args 'ports': expected a mapping, got a list", "ports");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "name", 0, SHOAL_NODE_LIST, &out, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:3:7: args 'name': expected a list, got a value", "name");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "quoted", 0, SHOAL_NODE_MAP, &out, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:4:9: args 'quoted': expected a mapping, got a quoted string",
         "quoted");
    CU_ASSERT_PTR_EQUAL(out, (const shoal_node_t *)&err);
    CU_ASSERT_EQUAL(shoal__arg_node(args, "nope", 0, SHOAL_NODE_MAP, &out, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:1:1: args: missing required key 'nope'", "nope");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "nope", SHOAL_ARG_OPTIONAL, SHOAL_NODE_LIST, &out, &err),
                    SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(out, (const shoal_node_t *)&err);
    drop();
}

/* ---- lookup rules: missing keys, OPTIONAL, key NULL, args not a map ----------- */

static void test_missing_required_key(void)
{
    const shoal_node_t *args = yaml("# pool args\nother: 1\n");
    shoal_diag_t err;
    int64_t i = 5;
    bool b = true;
    uint64_t u = 5;
    const char *s = "s";
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:2:1: args: missing required key 'rate'", "int");
    CU_ASSERT_EQUAL(shoal__arg_bool(args, "flag", 0, &b, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:2:1: args: missing required key 'flag'", "bool");
    CU_ASSERT_EQUAL(shoal__arg_duration_ms(args, "every", 0, &u, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:2:1: args: missing required key 'every'", "duration");
    CU_ASSERT_EQUAL(shoal__arg_size(args, "size", 0, &u, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:2:1: args: missing required key 'size'", "size");
    CU_ASSERT_EQUAL(shoal__arg_string(args, "reply", 0, &s, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:2:1: args: missing required key 'reply'", "string");
    CU_ASSERT_EQUAL(i, 5);
    CU_ASSERT_EQUAL(b, true);
    CU_ASSERT_EQUAL(u, 5);
    CU_ASSERT_STRING_EQUAL(s, "s");
    /* Keys are case-sensitive. */
    args = yaml("Rate: 1\n");
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    /* No args at all (a pool without an args: section). */
    CU_ASSERT_EQUAL(shoal__arg_int(NULL, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    same(fmt(&err), "args: missing required key 'rate'", "NULL args");
    /* Empty args: an empty mapping. */
    args = yaml("");
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", 0, 0, 10, &i, &err), SHOAL_ENOKEY);
    same(fmt(&err), "pool.yaml:1:1: args: missing required key 'rate'", "empty args");
    drop();
}

static void test_optional_leaves_out_untouched(void)
{
    const shoal_node_t *args = yaml("other: 1\n");
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
    args = yaml("rate: fast\n");
    int64_t i = 3;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__arg_int(args, "rate", SHOAL_ARG_OPTIONAL, 0, 10, &i, &err),
                    SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:1:7: args 'rate': expected an integer, got 'fast'", "optional");
    CU_ASSERT_EQUAL(i, 3);
    drop();
}

static void test_key_null_reads_the_node(void)
{
    const shoal_node_t *args = yaml("ports: [80, 0x1bb, x]\nevery: [1s, 2ms]\n");
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
    same(fmt(&err), "pool.yaml:1:20: args: expected an integer, got 'x'", "item 2");
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
    same(fmt(&err), "pool.yaml:1:8: args: expected an integer, got a list", "list as int");
    /* key NULL and no node at all. */
    CU_ASSERT_EQUAL(shoal__arg_int(NULL, NULL, 0, 0, 1, &p, &err), SHOAL_EINVAL);
    same(fmt(&err), "args: no value", "NULL, NULL");
    /* A key looked up in something that is not a mapping. */
    CU_ASSERT_EQUAL(shoal__arg_int(ports, "rate", 0, 0, 1, &p, &err), SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:1:8: args: expected a mapping, got a list", "key in list");
    CU_ASSERT_EQUAL(
        shoal__arg_int(shoal_args_item(ports, 0), "rate", SHOAL_ARG_OPTIONAL, 0, 1, &p, &err),
        SHOAL_EINVAL);
    same(fmt(&err), "pool.yaml:1:9: args: expected a mapping, got a value", "key in scalar");
    drop();
}

static void test_walking(void)
{
    const shoal_node_t *args = yaml("list: [a, b, c]\nmap: {x: 1, y: 2}\nscalar: s\n");
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
    drop();
}

/* ---- the public getters with ctx NULL ----------------------------------------- */

static void test_public_ctx_null(void)
{
    const shoal_args_t *args = yaml("rate: 5\nflag: true\nevery: 2s\nsize: 1KiB\nreply: hi\n"
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
    drop();
}

/* The three added later: duration_us, enum and error, with ctx NULL. */
static void test_public_ctx_null_new(void)
{
    static const char *const modes[] = {"panic", "fail", "exit", NULL};
    const shoal_args_t *args = yaml("spin: 50us\nmode: exit\nbad: 50\nboom: boom\n");
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
    drop();
}

/* ---- inside an actor ------------------------------------------------------------ */

/* What the actors below saw, written by them, read by the test thread after
 * the parent has heard of the end (the EXIT notice orders the two). */
static char seen_error[600];
static char seen_error_after[600];
static _Atomic int seen_rc;
static _Atomic int exited;
static _Atomic int exit_status;

static int parent_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&exit_status, msg->status);
        atomic_store(&exited, 1);
    }
    return 0;
}

static const shoal_behaviour_t parent = {.name = "args-parent", .handle_message = parent_message};

/* Reads "rate" (1..1000) and ends with the getter's code. */
static int reader_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    int64_t rate = 0;
    int rc = shoal_arg_int(ctx, args, "rate", 0, 1, 1000, &rate);
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    atomic_store(&seen_rc, rc);
    return rc;
}

/* A failing getter, then a good one: the error is cleared. */
static int clearer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    bool b;
    int64_t rate = 0;
    int rc = shoal_arg_bool(ctx, args, "rate", 0, &b);
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    atomic_store(&seen_rc, rc);
    rc = shoal_arg_int(ctx, args, "rate", 0, 1, 1000, &rate);
    snprintf(seen_error_after, sizeof seen_error_after, "%s", shoal_ctx_error(ctx));
    return rc == SHOAL_OK && rate == 5 ? SHOAL_OK : SHOAL_EFAILED;
}

/* Calls no getter: its callback has seen no error. */
static int quiet_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    return SHOAL_OK;
}

static int ignore(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}

static const shoal_behaviour_t reader = {
    .name = "args-reader", .init = reader_init, .handle_message = ignore};
static const shoal_behaviour_t clearer = {
    .name = "args-clearer", .init = clearer_init, .handle_message = ignore};
static const shoal_behaviour_t quiet = {
    .name = "args-quiet", .init = quiet_init, .handle_message = ignore};

static shoal_runtime_t *runtime(unsigned threads)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(threads, SHOAL_LOG_ERROR);
    CU_ASSERT_PTR_NOT_NULL(rt);
    return rt;
}

/* Spawns beh as a child of a recording parent with args; waits for its end
 * (want_end) or for init to have run; returns the exit status. */
static int run_child(shoal_runtime_t *rt, const shoal_behaviour_t *beh, const shoal_args_t *args,
                     bool want_end, shoal_pid_t *child)
{
    atomic_store(&exited, 0);
    atomic_store(&exit_status, 12345);
    atomic_store(&seen_rc, 12345);
    seen_error[0] = seen_error_after[0] = '\0';
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &parent, NULL, NULL, &p), SHOAL_OK);
    /* The parent spawns nothing itself: its child is attached through the
     * internal spawn, which takes the parent PID. */
    CU_ASSERT_EQUAL_FATAL(shoal__actor_spawn(rt, shoal__tcache_get(rt), p, beh, args, 0,
                                             SHOAL_ACTOR_PLAIN, NULL, child),
                          SHOAL_OK);
    if (want_end) {
        CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    } else {
        /* A call is handled after init: when it returns, init has run. */
        shoal_answer_t ans;
        CU_ASSERT_EQUAL(shoal_runtime_call(rt, *child, 1, NULL, 0, 10000, &ans), SHOAL_OK);
        shoal_answer_release(&ans);
    }
    return atomic_load(&exit_status);
}

static void test_in_actor_init(void)
{
    shoal_runtime_t *rt = runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t child;

    /* A wrong type: the actor ends with SHOAL_EINVAL, the message is kept
     * and logged as the actor. */
    const shoal_args_t *args = yaml("rate: fast\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_EINVAL);
    same(seen_error, "pool.yaml:1:7: args 'rate': expected an integer, got 'fast'", "actor");
    CU_ASSERT(shoal_test_log_has(
        "args-reader: pool.yaml:1:7: args 'rate': expected an integer, got 'fast'"));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, 1, NULL, 0), SHOAL_ENOPROC);

    /* Out of range. */
    args = yaml("rate: 1001\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_EINVAL);
    same(seen_error, "pool.yaml:1:7: args 'rate': 1001 is out of range: expected 1 to 1000",
         "actor range");

    /* A missing key: SHOAL_ENOKEY. */
    args = yaml("speed: 3\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_ENOKEY);
    same(seen_error, "pool.yaml:1:1: args: missing required key 'rate'", "actor missing");

    /* Good args: init succeeds, no error. */
    args = yaml("rate: 5\n");
    run_child(rt, &reader, args, false, &child);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(seen_error, "");
    CU_ASSERT_EQUAL(atomic_load(&exited), 0);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), SHOAL_ESHUTDOWN);

    /* The error lasts until the next getter call. */
    run_child(rt, &clearer, args, false, &child);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_EINVAL);
    same(seen_error, "pool.yaml:1:7: args 'rate': expected true or false, got '5'", "clearer");
    CU_ASSERT_STRING_EQUAL(seen_error_after, "");
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    shoal_runtime_destroy(rt);
    drop();
}

/* shoal_ctx_error is "the last getter error seen in this callback": a
 * callback that called no getter sees "", even when the actor that ran
 * before it on the same worker thread failed one. */
static void test_ctx_error_per_callback(void)
{
    shoal_runtime_t *rt = runtime(1); /* one worker: both actors share its ctx */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t child;
    const shoal_args_t *args = yaml("rate: fast\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_EINVAL);
    CU_ASSERT_STRING_NOT_EQUAL(seen_error, "");
    run_child(rt, &quiet, NULL, false, &child);
    CU_ASSERT_STRING_EQUAL(seen_error, "");
    if (seen_error[0] != '\0')
        fprintf(stderr, "\n    a callback with no getter call saw: %s\n", seen_error);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    shoal_runtime_destroy(rt);
    drop();
}

/* shoal_arg_error and the two new getters as a plugin uses them: each
 * message kept in shoal_ctx_error and logged as the actor. */
#define NCHECKS 8
static char check_error[NCHECKS][600];
static _Atomic int check_rc[NCHECKS];

static void keep(shoal_ctx_t *ctx, int i, int rc)
{
    snprintf(check_error[i], sizeof check_error[i], "%s", shoal_ctx_error(ctx));
    atomic_store(&check_rc[i], rc);
}

static int checker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    static const char *const modes[] = {"panic", "fail", "exit", NULL};
    unsigned mode = 99;
    uint64_t us = 0;
    int64_t rate = 0;
    keep(ctx, 0, shoal_arg_error(ctx, args, "rate", "%d is odd", 5));
    keep(ctx, 1, shoal_arg_error(ctx, args, "speed", "needed with '%s'", "rate"));
    keep(ctx, 2, shoal_arg_error(ctx, args, NULL, "rate and mode do not mix"));
    keep(ctx, 3,
         shoal_arg_error(ctx, args, "list", "has %zu items",
                         shoal_args_len(shoal_args_item(args, 3))));
    keep(ctx, 4, shoal_arg_enum(ctx, args, "mode", 0, modes, &mode));
    keep(ctx, 5, shoal_arg_duration_us(ctx, args, "spin", 0, &us));
    keep(ctx, 6, shoal_arg_error(ctx, NULL, "x", "no args at all"));
    keep(ctx, 7, shoal_arg_int(ctx, args, "rate", 0, 0, 10, &rate)); /* clears it */
    return mode == 99 && us == 0 && rate == 5 ? SHOAL_OK : SHOAL_EFAILED;
}

/* A plugin's own range check failing init. */
static int odd_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    int64_t rate = 0;
    int rc = shoal_arg_int(ctx, args, "rate", 0, 0, 100, &rate);
    if (rc == SHOAL_OK && rate % 2 != 0)
        rc = shoal_arg_error(ctx, args, "rate", "%" PRId64 " is odd: expected an even rate", rate);
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    atomic_store(&seen_rc, rc);
    return rc;
}

static const shoal_behaviour_t checker = {
    .name = "args-checker", .init = checker_init, .handle_message = ignore};
static const shoal_behaviour_t odd = {
    .name = "args-odd", .init = odd_init, .handle_message = ignore};

static void test_arg_error_in_actor(void)
{
    shoal_runtime_t *rt = runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t child;
    const shoal_args_t *args = yaml("rate: 5\nmode: boom\nspin: 50\nlist: [1, 2]\n");
    for (int i = 0; i < NCHECKS; i++)
        atomic_store(&check_rc[i], 12345);
    run_child(rt, &checker, args, false, &child); /* init succeeded: the actor lives */
    CU_ASSERT_EQUAL(atomic_load(&exited), 0);
    static const char *const want[NCHECKS] = {
        /* at the value of a present key */
        "pool.yaml:1:7: args 'rate': 5 is odd",
        /* an absent key: at the args mapping */
        "pool.yaml:1:1: args 'speed': needed with 'rate'",
        /* key NULL: at the args mapping, no key named */
        "pool.yaml:1:1: args: rate and mode do not mix",
        /* a list value: at the list */
        "pool.yaml:4:7: args 'list': has 2 items",
        /* the enum getter lists the choices */
        "pool.yaml:2:7: args 'mode': expected one of panic, fail, exit, got 'boom'",
        /* duration_us: a number needs its unit */
        ("pool.yaml:3:7: args 'spin': '50' has no unit: expected a duration like 50us, 250ms, "
         "2s or 1m"),
        /* no args at all: no place to point at */
        "args 'x': no args at all",
        /* a good getter call clears it */
        "",
    };
    static const int want_rc[NCHECKS] = {SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_EINVAL,
                                         SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_OK};
    for (int i = 0; i < NCHECKS; i++) {
        CU_ASSERT_EQUAL(atomic_load(&check_rc[i]), want_rc[i]);
        same(check_error[i], want[i], "checker");
    }
    CU_ASSERT(shoal_test_log_has("args-checker: pool.yaml:1:7: args 'rate': 5 is odd\n"));
    CU_ASSERT(shoal_test_log_has("args-checker: pool.yaml:1:1: args: rate and mode do not mix\n"));
    CU_ASSERT(shoal_test_log_has("args-checker: args 'x': no args at all\n"));
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);

    /* Returned from init, it ends the actor with SHOAL_EINVAL. */
    args = yaml("rate: 7\n");
    CU_ASSERT_EQUAL(run_child(rt, &odd, args, true, &child), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_EINVAL);
    same(seen_error, "pool.yaml:1:7: args 'rate': 7 is odd: expected an even rate", "odd");
    CU_ASSERT(shoal_test_log_has(
        "args-odd: pool.yaml:1:7: args 'rate': 7 is odd: expected an even rate"));
    args = yaml("rate: 8\n");
    run_child(rt, &odd, args, false, &child);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(seen_error, "");
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    shoal_runtime_destroy(rt);
    drop();
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"int", test_int},
        {"bool", test_bool},
        {"duration", test_duration},
        {"duration in microseconds", test_duration_us},
        {"size", test_size},
        {"enum", test_enum},
        {"string", test_string},
        {"list and map", test_list_and_map},
        {"missing required key", test_missing_required_key},
        {"optional leaves out untouched", test_optional_leaves_out_untouched},
        {"key NULL reads the node", test_key_null_reads_the_node},
        {"walking lists and maps", test_walking},
        {"public getters with ctx NULL", test_public_ctx_null},
        {"duration_us, enum and arg_error with ctx NULL", test_public_ctx_null_new},
        {"getter in actor init", test_in_actor_init},
        {"ctx error is per callback", test_ctx_error_per_callback},
        {"arg_error and the new getters in an actor", test_arg_error_in_actor},
        {NULL, NULL},
    };
    return shoal_test_run("args", cases);
}
