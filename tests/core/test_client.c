/* test_client.c - the client's side of the control socket (host/client.h):
 * how a reply is written for a terminal. Printable text (valid UTF-8, no
 * control characters but tab and newline) is written as it is, with a
 * newline added if it has none; anything else is escaped whole, byte by
 * byte, so a terminal never gets raw bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/client.h"
#include "support.h"

/* What shoal__client_write_text writes for data[0..len), and whether it
 * escaped it. */
static const char *text(const char *data, size_t len, bool *escaped)
{
    static char out[1024];
    FILE *f = fmemopen(out, sizeof out, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    *escaped = shoal__client_write_text(f, data, len);
    fclose(f);
    return out;
}

#define AS_TEXT(lit, want)                                                                         \
    do {                                                                                           \
        bool esc;                                                                                  \
        CU_ASSERT_STRING_EQUAL(text(lit, sizeof(lit) - 1, &esc), want);                            \
        CU_ASSERT_FALSE(esc);                                                                      \
    } while (0)
#define ESCAPED(lit, want)                                                                         \
    do {                                                                                           \
        bool esc;                                                                                  \
        CU_ASSERT_STRING_EQUAL(text(lit, sizeof(lit) - 1, &esc), want);                            \
        CU_ASSERT_TRUE(esc);                                                                       \
    } while (0)

static void printable_text_is_written_as_it_is(void)
{
    AS_TEXT("hello", "hello\n");
    AS_TEXT("hello\n", "hello\n"); /* no second newline */
    AS_TEXT("", "\n");
    AS_TEXT("a\tb\nc", "a\tb\nc\n");
    AS_TEXT("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x90\x9f",
            "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x90\x9f\n");
    AS_TEXT("back\\slash", "back\\slash\n");
}

static void anything_else_is_escaped_whole(void)
{
    ESCAPED("a\x01\x02\xff"
            "b\tc\\d",
            "a\\x01\\x02\\xffb\\tc\\\\d\n");
    ESCAPED("x\0y", "x\\x00y\n"); /* never \0: "\01" would read as octal */
    ESCAPED("\0"
            "1",
            "\\x001\n");
    ESCAPED("cr\r\n", "cr\\r\\n\n");
    ESCAPED("\x1b[31mred", "\\x1b[31mred\n"); /* a terminal escape never reaches it */
    ESCAPED("del\x7f", "del\\x7f\n");
    /* Not UTF-8: a lone continuation byte, a truncated sequence, an
     * overlong '/', a surrogate, past U+10FFFF, a C1 control (U+0085). */
    ESCAPED("\x80", "\\x80\n");
    ESCAPED("\xc3", "\\xc3\n");
    ESCAPED("\xe2\x82", "\\xe2\\x82\n");
    ESCAPED("\xc0\xaf", "\\xc0\\xaf\n");
    ESCAPED("\xed\xa0\x80", "\\xed\\xa0\\x80\n");
    ESCAPED("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80\n");
    ESCAPED("\xc2\x85", "\\xc2\\x85\n");
    /* A valid character beside a bad byte is escaped too: one rule for the
     * whole reply. */
    ESCAPED("\xc3\xa9\x01", "\\xc3\\xa9\\x01\n");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"printable text is written as it is", printable_text_is_written_as_it_is},
        {"anything else is escaped whole", anything_else_is_escaped_whole},
        {NULL, NULL},
    };
    return shoal_test_run("client", cases);
}
