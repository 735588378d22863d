/* test_inspect_json.c - inspection's answer (actor/inspect.c): the exact
 * JSON of an actor without an inspect callback and with one (every field
 * kind, in order); string escaping (values, keys and the behaviour's name);
 * doubles, finite and not (NaN and infinities as null).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inspect_kit.h"
#include "pool_kit.h"

static int escape_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_str(out, "quote", "say \"hi\"");
    shoal_inspect_str(out, "backslash", "C:\\dir\\");
    shoal_inspect_str(out, "controls",
                      "a\x01"
                      "b\nc\td\re\x1f"
                      "f");
    shoal_inspect_str(out, "kept", "/ \x7f caf\xc3\xa9"); /* slash, DEL, UTF-8: as they are */
    shoal_inspect_str(out, "empty", "");
    shoal_inspect_str(out, "k\"e\\y\n", "v"); /* keys are escaped too */
    return 0;
}

/* The behaviour's name is a JSON string as well. */
static const shoal_behaviour_t escaper = {
    .name = "esc\"aper\\", .handle_message = ik_ignore, .inspect = escape_inspect};

static int doubles_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_double(out, "half", 1.5);
    shoal_inspect_double(out, "neg", -2.25);
    shoal_inspect_double(out, "tenth", 0.1); /* round-trips: 17 digits */
    shoal_inspect_double(out, "three", 3.0);
    shoal_inspect_double(out, "big", 1e300);
    shoal_inspect_double(out, "tiny", 5e-324);
    shoal_inspect_double(out, "zero", 0.0);
    shoal_inspect_double(out, "nan", NAN);
    shoal_inspect_double(out, "inf", INFINITY);
    shoal_inspect_double(out, "ninf", -INFINITY);
    return 0;
}

static const shoal_behaviour_t doubles = {
    .name = "doubles", .handle_message = ik_ignore, .inspect = doubles_inspect};

/* Inspects pid into json: the call and the answer both SHOAL_OK. */
static void inspect_ok(shoal_runtime_t *rt, shoal_pid_t pid, char *json, size_t cap)
{
    int status;
    CU_ASSERT_EQUAL(ik_inspect_json(rt, pid, json, cap, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
}

/* ---- cases: the JSON --------------------------------------------------------------- */

static void without_callback_exact_json(void)
{
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ik_plain, NULL, NULL, &pid), SHOAL_OK);
    char json[512], want[512];
    int status;
    inspect_ok(rt, pid, json, sizeof json);
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"plain\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":null,\"info\":{}}",
             ik_pid_text(pid));
    ik_same(json, want);
    /* Inspection is not work: the actor is still there, nothing counted
     * against it, and it can be inspected again with the same answer. */
    CU_ASSERT_EQUAL(ik_inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    ik_same(json, want);
    shoal_runtime_destroy(rt);
}

static void with_callback_fields_in_order(void)
{
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    shoal_spawn_opts_t opts = {.mailbox_limit = 16};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ik_fields, NULL, &opts, &pid), SHOAL_OK);
    char json[512], want[512];
    inspect_ok(rt, pid, json, sizeof json);
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"fields\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":16,\"info\":{\"i\":-42,\"min\":-9223372036854775808,"
             "\"u\":18446744073709551615,\"t\":true,\"f\":false,\"s\":\"x\",\"n\":null,"
             "\"d\":0.5}}",
             ik_pid_text(pid));
    ik_same(json, want);
    shoal_runtime_destroy(rt);
}

static void strings_are_escaped(void)
{
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &escaper, NULL, NULL, &pid), SHOAL_OK);
    char json[512], want[512];
    inspect_ok(rt, pid, json, sizeof json);
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"esc\\\"aper\\\\\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":null,\"info\":{"
             "\"quote\":\"say \\\"hi\\\"\","
             "\"backslash\":\"C:\\\\dir\\\\\","
             "\"controls\":\"a\\u0001b\\u000ac\\u0009d\\u000de\\u001ff\","
             "\"kept\":\"/ \x7f caf\xc3\xa9\","
             "\"empty\":\"\","
             "\"k\\\"e\\\\y\\u000a\":\"v\"}}",
             ik_pid_text(pid));
    ik_same(json, want);
    shoal_runtime_destroy(rt);
}

static void doubles_finite_and_not(void)
{
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &doubles, NULL, NULL, &pid), SHOAL_OK);
    char json[512];
    inspect_ok(rt, pid, json, sizeof json);
    pk_has(json, "\"info\":{\"half\":1.5,\"neg\":-2.25,\"tenth\":0.10000000000000001,"
                 "\"three\":3,\"big\":1.0000000000000001e+300,"
                 "\"tiny\":4.9406564584124654e-324,\"zero\":0,"
                 "\"nan\":null,\"inf\":null,\"ninf\":null}}");
    /* And the whole object ends there. */
    CU_ASSERT_EQUAL(json[strlen(json) - 1], '}');
    CU_ASSERT_PTR_NULL(strstr(json, ":nan"));
    CU_ASSERT_PTR_NULL(strstr(json, ":inf"));
    CU_ASSERT_PTR_NULL(strstr(json, ":-inf"));
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"without a callback: the exact JSON", without_callback_exact_json},
        {"with a callback: every field kind, in order", with_callback_fields_in_order},
        {"strings are escaped", strings_are_escaped},
        {"doubles: finite, and NaN/inf as null", doubles_finite_and_not},
        {NULL, NULL},
    };
    return shoal_test_run("inspect_json", cases);
}
