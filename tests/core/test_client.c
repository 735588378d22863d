/* test_client.c - the client's side of the control socket (host/client.h):
 * how a reply is written for a terminal. Printable text (valid UTF-8, no
 * control characters but tab and newline) is written as it is, with a
 * newline added if it has none; anything else is escaped whole, byte by
 * byte, so a terminal never gets raw bytes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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

/* ---- a server that is not shoald --------------------------------------------- */

/* What the fake server answers: `reply` once, or, with `endless`, that
 * reply and then the same 64 KiB chunk until the client goes. */
typedef struct fake_s {
    int listen_fd;
    const char *reply;
    bool endless;
    size_t sent;
} fake_t;

static void *serve(void *arg)
{
    fake_t *f = arg;
    int c = accept(f->listen_fd, NULL, NULL);
    if (c < 0)
        return NULL;
    char req[256];
    (void)read(c, req, sizeof req); /* the request, whatever it is */
    ssize_t w = write(c, f->reply, strlen(f->reply));
    f->sent = w > 0 ? (size_t)w : 0;
    static char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    while (f->endless && (w = send(c, chunk, sizeof chunk, MSG_NOSIGNAL)) > 0)
        f->sent += (size_t)w;
    close(c);
    return NULL;
}

/* Asks the fake server; its exit status, what it wrote on out and err. */
static int ask_fake(fake_t *f, char *out, size_t out_size, char *err, size_t err_size)
{
    char path[108];
    snprintf(path, sizeof path, "/tmp/test_client.%d.sock", (int)getpid());
    unlink(path);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    f->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(f->listen_fd >= 0 &&
                    bind(f->listen_fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
                    listen(f->listen_fd, 1) == 0);
    pthread_t t;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, serve, f) == 0);
    FILE *o = fmemopen(out, out_size, "w"), *e = fmemopen(err, err_size, "w");
    CU_ASSERT_FATAL(o != NULL && e != NULL);
    int rc = shoal__client_ask(path, "status\n", 7, 5000, "shoalctl", o, e);
    fclose(o);
    fclose(e);
    pthread_join(t, NULL);
    close(f->listen_fd);
    unlink(path);
    return rc;
}

/* Control characters from whatever answers are written as \xNN: an ESC
 * sequence does not reach the terminal, on out or on err. */
static void control_characters_do_not_reach_the_terminal(void)
{
    char out[256], err[256];
    fake_t f = {.reply = "0 ok\n\x1b[2J\x1b]0;pwned\x07pool a size 1\n\r\tend\n"};
    CU_ASSERT_EQUAL(ask_fake(&f, out, sizeof out, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(out, "\\x1b[2J\\x1b]0;pwned\\x07pool a size 1\n\\x0d\tend\n");
    CU_ASSERT_STRING_EQUAL(err, "");
    fake_t g = {.reply = "1 no \x1b[31mred\n\x1b[0m"};
    CU_ASSERT_EQUAL(ask_fake(&g, out, sizeof out, err, sizeof err), 1);
    CU_ASSERT_STRING_EQUAL(err, "shoalctl: no \\x1b[31mred\n\\x1b[0m");
}

/* An answer that does not end is cut where no answer of shoald's goes. */
static void an_endless_answer_is_stopped(void)
{
    static char out[SHOAL_CLIENT_ANSWER_MAX + 65536];
    char err[512];
    fake_t f = {.reply = "0 ok\n", .endless = true};
    CU_ASSERT_EQUAL(ask_fake(&f, out, sizeof out, err, sizeof err), 2);
    char want[256];
    snprintf(want, sizeof want,
             "shoalctl: the answer from /tmp/test_client.%d.sock goes on past %d bytes: not "
             "shoald's (stopped)\n",
             (int)getpid(), SHOAL_CLIENT_ANSWER_MAX);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT(strlen(out) <= SHOAL_CLIENT_ANSWER_MAX);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"printable text is written as it is", printable_text_is_written_as_it_is},
        {"anything else is escaped whole", anything_else_is_escaped_whole},
        {"control characters do not reach the terminal",
         control_characters_do_not_reach_the_terminal},
        {"an endless answer is stopped", an_endless_answer_is_stopped},
        {NULL, NULL},
    };
    return shoal_test_run("client", cases);
}
