/* test_fault_format.c - the crash reporter's words (runtime/fault.h,
 * core/runtime/fault_fmt.c): the hand-written formatting checked against
 * libc's (snprintf, gmtime_r + strftime), JSON strings escaped, a full
 * buffer cut and terminated, and the exact report lines and backtraces in
 * both formats. The handler itself: test_fault_handler.c.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime/fault.h"
#include "support.h"

/* ---- numbers, time, JSON strings --------------------------------------- */

static void numbers_match_snprintf(void)
{
    const uint64_t vs[] = {
        0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, 1234567890123456789u, UINT64_MAX};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        char got[32], hex[32], want[32];
        shoal_fault_buf_t b = {got, 0, sizeof got, false};
        shoal__fault_put_u64(&b, vs[i]);
        snprintf(want, sizeof want, "%" PRIu64, vs[i]);
        CU_ASSERT_STRING_EQUAL(got, want);
        shoal_fault_buf_t h = {hex, 0, sizeof hex, false};
        shoal__fault_put_hex(&h, vs[i]);
        snprintf(want, sizeof want, "0x%" PRIx64, vs[i]);
        CU_ASSERT_STRING_EQUAL(hex, want);
        CU_ASSERT(!b.cut && !h.cut);
    }
}

/* What host_log.c's emit() writes for the same instant. */
static void libc_time(int64_t sec, long nsec, char *out, size_t size)
{
    time_t t = (time_t)sec;
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t w = strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + w, size - w, ".%03dZ", (int)(nsec / 1000000));
}

static void check_time(int64_t sec, long nsec)
{
    char got[48], want[48];
    shoal_fault_buf_t b = {got, 0, sizeof got, false};
    shoal__fault_put_time(&b, sec, nsec);
    libc_time(sec, nsec, want, sizeof want);
    if (strcmp(got, want) != 0)
        printf("\n  time %" PRId64 ".%09ld: %s, libc %s\n", sec, nsec, got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
}

static void timestamps_match_gmtime(void)
{
    check_time(0, 0);                    /* 1970-01-01T00:00:00.000Z */
    check_time(-1, 999999999);           /* 1969-12-31T23:59:59.999Z */
    check_time(951782400, 123456789);    /* 2000-02-29 */
    check_time(951868799, 0);            /* 2000-02-29T23:59:59 */
    check_time(4107542400, 0);           /* 2100-03-01 (2100 is no leap year) */
    check_time(1795344092, 390000000);   /* 2026-11-22T10:41:32.390Z */
    check_time(253402300799, 999999999); /* 9999-12-31T23:59:59.999Z */
    check_time(-30610224000, 0);         /* 1000-01-01 */
    /* Every day from 1900 to 2400, at a different second of each. */
    for (int64_t s = -2208988800; s < 13569465600; s += 86400 + 7)
        check_time(s, (long)((s & 1023) * 976562));
}

static void json_strings_are_escaped(void)
{
    char out[64];
    shoal_fault_buf_t b = {out, 0, sizeof out, false};
    const char in[] = "a\"b\\c\n\x01\x1f caf\xc3\xa9";
    shoal__fault_put_json(&b, in, sizeof in - 1);
    CU_ASSERT_STRING_EQUAL(out, "\"a\\\"b\\\\c\\u000a\\u0001\\u001f caf\xc3\xa9\"");
}

static void a_full_buffer_cuts_and_stays_terminated(void)
{
    char out[12];
    memset(out, '#', sizeof out);
    shoal_fault_buf_t b = {out, 0, 8, false};
    shoal__fault_put(&b, "hello world");
    CU_ASSERT_STRING_EQUAL(out, "hello w");
    CU_ASSERT(b.cut);
    CU_ASSERT_EQUAL(b.len, 7);
    shoal__fault_put_json(&b, "x", 1);
    shoal__fault_put_u64(&b, 12345);
    shoal__fault_put_time(&b, 0, 0);
    CU_ASSERT_STRING_EQUAL(out, "hello w");
    CU_ASSERT_EQUAL(out[8], '#'); /* nothing written past cap */
    shoal_fault_buf_t none = {out, 0, 0, false};
    shoal__fault_put(&none, "x"); /* no room even for the NUL: nothing */
    CU_ASSERT_EQUAL(out[0], 'h');
}

static void signal_names(void)
{
    CU_ASSERT_STRING_EQUAL(shoal__fault_signame(SIGSEGV), "SIGSEGV");
    CU_ASSERT_STRING_EQUAL(shoal__fault_signame(SIGBUS), "SIGBUS");
    CU_ASSERT_STRING_EQUAL(shoal__fault_signame(SIGFPE), "SIGFPE");
    CU_ASSERT_STRING_EQUAL(shoal__fault_signame(SIGILL), "SIGILL");
    CU_ASSERT_STRING_EQUAL(shoal__fault_signame(SIGABRT), "SIGABRT");
    CU_ASSERT_PTR_NULL(shoal__fault_signame(SIGTERM));
}

/* ---- report lines ---------------------------------------------------------- */

/* 2026-11-22T10:41:32.390Z, gen 2, a SIGSEGV at 0 in <42.3> of pool api. */
static shoal_fault_report_t in_actor(void)
{
    return (shoal_fault_report_t){
        .sec = 1795344092,
        .nsec = 390000000,
        .generation = 2,
        .sig = SIGSEGV,
        .code = SEGV_MAPERR,
        .addr = 0,
        .pid = (shoal_pid_t)3 << 32 | 42,
        .label = "api/echo",
        .pool = "api",
        .behaviour = "echo",
        .origin = "plugin echo 1.0.0 (/p/echo.so)",
        .thread = "dispatcher thread 1",
    };
}

static void line(const shoal_fault_report_t *r, int format, const char *want)
{
    char out[2048];
    shoal_fault_buf_t b = {out, 0, sizeof out, false};
    shoal__fault_format_line(&b, r, format);
    if (strcmp(out, want) != 0)
        printf("\n  got:  %s  want: %s", out, want);
    CU_ASSERT_STRING_EQUAL(out, want);
}

static void text_lines_look_like_the_hosts(void)
{
    shoal_fault_report_t r = in_actor();
    line(&r, SHOAL_FAULT_TEXT,
         "2026-11-22T10:41:32.390Z gen=2 error <42.3> api/echo: fatal signal SIGSEGV (address 0x0, "
         "not mapped) in pool api, behaviour echo, plugin echo 1.0.0 (/p/echo.so), on dispatcher "
         "thread 1; the process ends\n");
    /* A built-in behaviour outside any pool; an instruction fault. */
    r.pool = NULL;
    r.origin = NULL;
    r.label = "echo";
    r.sig = SIGILL;
    r.code = ILL_ILLOPN;
    r.addr = 0x7f001234;
    line(&r, SHOAL_FAULT_TEXT,
         "2026-11-22T10:41:32.390Z gen=2 error <42.3> echo: fatal signal SIGILL (instruction at "
         "0x7f001234) in behaviour echo (not a pool's worker), built in (no plugin), on dispatcher "
         "thread 1; the process ends\n");
    /* A dispatcher thread between callbacks. */
    r = in_actor();
    r.pid = SHOAL_PID_NONE;
    r.in_runtime = true;
    r.code = SEGV_ACCERR;
    r.addr = 0x10;
    line(&r, SHOAL_FAULT_TEXT,
         "2026-11-22T10:41:32.390Z gen=2 error fatal signal SIGSEGV (address 0x10, no access) in "
         "runtime code, not in any actor, on dispatcher thread 1; the process ends\n");
    /* The host thread, a signal sent from outside; abort() in this one. */
    r = in_actor();
    r.pid = SHOAL_PID_NONE;
    r.thread = "the host thread";
    r.code = SI_USER;
    r.sender = 4242;
    line(&r, SHOAL_FAULT_TEXT,
         "2026-11-22T10:41:32.390Z gen=2 error fatal signal SIGSEGV (sent by process 4242) on the "
         "host thread; the process ends\n");
    r.sig = SIGABRT;
    r.code = SI_TKILL;
    r.sender_is_self = true;
    line(&r, SHOAL_FAULT_TEXT,
         "2026-11-22T10:41:32.390Z gen=2 error fatal signal SIGABRT (raised by this process) on "
         "the host thread; the process ends\n");
}

static void json_lines_have_the_hosts_fields(void)
{
    shoal_fault_report_t r = in_actor();
    line(&r, SHOAL_FAULT_JSON,
         "{\"ts\":\"2026-11-22T10:41:32.390Z\",\"gen\":2,\"level\":\"error\",\"pid\":\"42.3\","
         "\"actor\":\"api/echo\",\"msg\":\"fatal signal SIGSEGV (address 0x0, not mapped) in pool "
         "api, behaviour echo, plugin echo 1.0.0 (/p/echo.so), on dispatcher thread 1; the "
         "process ends\",\"signal\":\"SIGSEGV\",\"pool\":\"api\",\"behaviour\":\"echo\","
         "\"origin\":\"plugin echo 1.0.0 (/p/echo.so)\",\"thread\":\"dispatcher thread 1\"}\n");
    /* Not a pool's worker, built in, a quote in a path. */
    r.pool = NULL;
    r.origin = "plugin q 1 (/a\"b.so)";
    line(&r, SHOAL_FAULT_JSON,
         "{\"ts\":\"2026-11-22T10:41:32.390Z\",\"gen\":2,\"level\":\"error\",\"pid\":\"42.3\","
         "\"actor\":\"api/echo\",\"msg\":\"fatal signal SIGSEGV (address 0x0, not mapped) in "
         "behaviour echo (not a pool's worker), plugin q 1 (/a\\\"b.so), on dispatcher thread 1; "
         "the process ends\",\"signal\":\"SIGSEGV\",\"pool\":null,\"behaviour\":\"echo\","
         "\"origin\":\"plugin q 1 (/a\\\"b.so)\",\"thread\":\"dispatcher thread 1\"}\n");
    /* No actor: no pid, actor, pool, behaviour or origin. */
    r = in_actor();
    r.pid = SHOAL_PID_NONE;
    r.thread = "the timer thread";
    r.sig = SIGBUS;
    r.code = BUS_ADRERR;
    r.addr = 0xff;
    line(&r, SHOAL_FAULT_JSON,
         "{\"ts\":\"2026-11-22T10:41:32.390Z\",\"gen\":2,\"level\":\"error\",\"msg\":\"fatal "
         "signal SIGBUS (address 0xff) on the timer thread; the process ends\",\"signal\":"
         "\"SIGBUS\",\"thread\":\"the timer thread\"}\n");
}

static void backtrace(const shoal_fault_report_t *r, int format, const char *const *frames,
                      size_t n, bool deeper, size_t cap, const char *want)
{
    char out[4096];
    shoal_fault_buf_t b = {out, 0, cap, false};
    shoal__fault_format_backtrace(&b, r, format, frames, n, deeper);
    if (strcmp(out, want) != 0)
        printf("\n  got:  %s  want: %s", out, want);
    CU_ASSERT_STRING_EQUAL(out, want);
}

static void backtraces_list_frames_and_fold_recursion(void)
{
    shoal_fault_report_t r = in_actor();
    const char *f[] = {"/p/echo.so(+0x10)[0x7f10]", "/p/echo.so(+0x20)[0x7f20]",
                       "/p/echo.so(+0x20)[0x7f20]", "/p/echo.so(+0x20)[0x7f20]",
                       "/bin/shoald(+0x30)[0x5530]"};
    backtrace(&r, SHOAL_FAULT_TEXT, f, 5, false, 4096,
              "  backtrace:\n"
              "    #0 /p/echo.so(+0x10)[0x7f10]\n"
              "    #1 /p/echo.so(+0x20)[0x7f20]\n"
              "    #2-#3: the frame above, 2 more times\n"
              "    #4 /bin/shoald(+0x30)[0x5530]\n");
    backtrace(&r, SHOAL_FAULT_TEXT, f, 2, true, 4096,
              "  backtrace:\n"
              "    #0 /p/echo.so(+0x10)[0x7f10]\n"
              "    #1 /p/echo.so(+0x20)[0x7f20]\n"
              "    (deeper frames not taken)\n");
    backtrace(&r, SHOAL_FAULT_TEXT, f, 0, false, 4096, "  backtrace: no frames found\n");
    backtrace(&r, SHOAL_FAULT_JSON, f, 3, false, 4096,
              "{\"ts\":\"2026-11-22T10:41:32.390Z\",\"gen\":2,\"level\":\"error\",\"pid\":\"42.3\","
              "\"actor\":\"api/echo\",\"msg\":\"backtrace\",\"backtrace\":[\"/p/echo.so(+0x10)"
              "[0x7f10]\",\"/p/echo.so(+0x20)[0x7f20]\",\"/p/echo.so(+0x20)[0x7f20]\"]}\n");
}

static void a_full_report_leaves_frames_out_and_says_so(void)
{
    shoal_fault_report_t r = in_actor();
    const char *f[] = {"/p/a.so(+0x10)[0x7f10]", "/p/b.so(+0x20)[0x7f20]",
                       "/p/c.so(+0x30)[0x7f30]"};
    /* Room for the heading, one frame and the tail (128), not two frames. */
    size_t cap = strlen("  backtrace:\n    #0 /p/a.so(+0x10)[0x7f10]\n") + 128 + 10;
    backtrace(&r, SHOAL_FAULT_TEXT, f, 3, false, cap,
              "  backtrace:\n"
              "    #0 /p/a.so(+0x10)[0x7f10]\n"
              "    (2 more frames left out: the report is full)\n");
    /* JSON: the object is closed, whatever was left out. */
    char out[512];
    size_t head = strlen("{\"ts\":\"2026-11-22T10:41:32.390Z\",\"gen\":2,\"level\":\"error\","
                         "\"pid\":\"42.3\",\"actor\":\"api/echo\",\"msg\":\"backtrace\","
                         "\"backtrace\":[");
    shoal_fault_buf_t b = {out, 0, head + strlen("\"/p/a.so(+0x10)[0x7f10]\"") + 10 + 128, false};
    shoal__fault_format_backtrace(&b, &r, SHOAL_FAULT_JSON, f, 3, true);
    CU_ASSERT(!b.cut);
    CU_ASSERT_STRING_EQUAL(out + head, "\"/p/a.so(+0x10)[0x7f10]\"],\"frames_left_out\":2,"
                                       "\"deeper_frames_not_taken\":true}\n");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"numbers match snprintf", numbers_match_snprintf},
        {"timestamps match gmtime", timestamps_match_gmtime},
        {"JSON strings are escaped", json_strings_are_escaped},
        {"a full buffer cuts and stays terminated", a_full_buffer_cuts_and_stays_terminated},
        {"signal names", signal_names},
        {"text lines look like the host's", text_lines_look_like_the_hosts},
        {"JSON lines have the host's fields", json_lines_have_the_hosts_fields},
        {"backtraces list frames and fold recursion", backtraces_list_frames_and_fold_recursion},
        {"a full report leaves frames out and says so",
         a_full_report_leaves_frames_out_and_says_so},
        {NULL, NULL},
    };
    return shoal_test_run("fault: the report's words and lines", cases);
}
