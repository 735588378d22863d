/* test_args_values.c - the typed getters over a pool's args (host/args.c)
 * on every kind of value and every error, through the internal shoal__arg_*
 * (whose diag is compared whole, "pool.yaml:line:col: ..."): integers and
 * their ranges, bools, durations in milliseconds and in microseconds,
 * sizes, enumerations, strings, lists and maps. How keys are looked up is
 * test_args_lookup's; the getters inside an actor, test_args_actor's. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args_kit.h"

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
        const shoal_node_t *args = ag_yaml(text);
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
            ag_same(ag_fmt(&err), cases[i].error, text);
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
    ag_drop();
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
        const shoal_node_t *args = ag_yaml(text);
        for (int start = 0; start <= 1; start++) { /* both starting values */
            bool out = start;
            shoal_diag_t err;
            int rc = shoal__arg_bool(args, "flag", 0, &out, &err);
            CU_ASSERT_EQUAL(rc, cases[i].rc);
            if (cases[i].rc == SHOAL_OK) {
                CU_ASSERT_EQUAL(out, cases[i].want);
            } else {
                CU_ASSERT_EQUAL(out, start);
                ag_same(ag_fmt(&err), cases[i].error, text);
            }
        }
    }
    ag_drop();
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
        const shoal_node_t *args = ag_yaml(text);
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
            ag_same(ag_fmt(&err), cases[i].error, text);
        }
    }
    ag_drop();
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
    const shoal_node_t *args = ag_yaml("other: 1\n");
    uint64_t out = 7;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__arg_duration_us(args, "every", 0, &out, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:1:1: args: missing required key 'every'", "every absent");
    CU_ASSERT_EQUAL(shoal__arg_duration_us(args, "every", SHOAL_ARG_OPTIONAL, &out, &err),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(out, 7);
    ag_drop();
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
        const shoal_node_t *args = ag_yaml(text);
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
        const shoal_node_t *args = ag_yaml(text);
        unsigned index = 99;
        shoal_diag_t err;
        CU_ASSERT_EQUAL(shoal__arg_enum(args, "mode", 0, modes, &index, &err), SHOAL_EINVAL);
        CU_ASSERT_EQUAL(index, 99); /* untouched on error */
        ag_same(ag_fmt(&err), bad[i].error, text);
    }
    /* One choice; absent keys. */
    static const char *const only[] = {"only", NULL};
    const shoal_node_t *args = ag_yaml("mode: x\n");
    unsigned index = 99;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__arg_enum(args, "mode", 0, only, &index, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:7: args 'mode': expected one of only, got 'x'",
            "one choice");
    CU_ASSERT_EQUAL(shoal__arg_enum(args, "kind", 0, modes, &index, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:1:1: args: missing required key 'kind'", "kind absent");
    CU_ASSERT_EQUAL(shoal__arg_enum(args, "kind", SHOAL_ARG_OPTIONAL, modes, &index, &err),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(index, 99);
    ag_drop();
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
        const shoal_node_t *args = ag_yaml(text);
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
    const shoal_node_t *args = ag_yaml("reply: [a]\nmap: {a: 1}\n");
    CU_ASSERT_EQUAL(shoal__arg_string(args, "reply", 0, &out, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:8: args 'reply': expected a string, got a list",
            "reply: [a]");
    CU_ASSERT_EQUAL(shoal__arg_string(args, "map", 0, &out, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:2:6: args 'map': expected a string, got a mapping",
            "map: {a: 1}");
    CU_ASSERT_STRING_EQUAL(out, "untouched");
    ag_drop();
}

static void test_list_and_map(void)
{
    const shoal_node_t *args = ag_yaml("ports: [80, 443]\n"
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
    ag_same(ag_fmt(&err), "pool.yaml:2:9: args 'limits': expected a list, got a mapping", "limits");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "ports", 0, SHOAL_NODE_MAP, &out, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:1:8: args 'ports': expected a mapping, got a list", "ports");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "name", 0, SHOAL_NODE_LIST, &out, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:3:7: args 'name': expected a list, got a value", "name");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "quoted", 0, SHOAL_NODE_MAP, &out, &err), SHOAL_EINVAL);
    ag_same(ag_fmt(&err), "pool.yaml:4:9: args 'quoted': expected a mapping, got a quoted string",
            "quoted");
    CU_ASSERT_PTR_EQUAL(out, (const shoal_node_t *)&err);
    CU_ASSERT_EQUAL(shoal__arg_node(args, "nope", 0, SHOAL_NODE_MAP, &out, &err), SHOAL_ENOKEY);
    ag_same(ag_fmt(&err), "pool.yaml:1:1: args: missing required key 'nope'", "nope");
    CU_ASSERT_EQUAL(shoal__arg_node(args, "nope", SHOAL_ARG_OPTIONAL, SHOAL_NODE_LIST, &out, &err),
                    SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(out, (const shoal_node_t *)&err);
    ag_drop();
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
        {NULL, NULL},
    };
    return shoal_test_run("args_values", cases);
}
