/* test_output.c - host/output.c: shoald's stdout and stderr never make a
 * writer wait. Over a pipe and a socket whose reader does not read: each
 * write returns at once, what does not fit is held up to the bound and
 * then dropped whole, counted; once the reader reads, a pump writes what
 * was held, in order; the caller's own descriptor stays blocking; a reader
 * that is gone is the stream's error; a block bigger than the pipe is
 * never cut; a second writer of the same pipe never cuts a line; close
 * gives up after its wait and says what it left. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host/output.h"
#include "support.h"

/* Fills fd (made non-blocking for it, then restored) until it takes no
 * more; returns the bytes written. */
static size_t fill(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    char junk[4096];
    memset(junk, '\1', sizeof junk);
    size_t n = 0;
    ssize_t w;
    while ((w = write(fd, junk, sizeof junk)) > 0)
        n += (size_t)w;
    fcntl(fd, F_SETFL, fl);
    return n;
}

/* Reads fd until nothing comes within 50 ms; the bytes that are not the
 * filling go to out (NUL-ended). Returns their count. */
static size_t drain(int fd, char *out, size_t size)
{
    size_t n = 0;
    char buf[8192];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, 50) > 0) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got; i++)
            if (buf[i] != '\1' && n + 1 < size)
                out[n++] = buf[i];
    }
    out[n] = '\0';
    return n;
}

static void line(shoal_output_t *o, const char *s)
{
    FILE *f = shoal__output_file(o);
    fputs(s, f);
    fflush(f);
}

/* A reader that does not read: held to the bound, then dropped whole. */
static void stuck(int w, int r)
{
    CU_ASSERT(fill(w) > 0);
    shoal_output_t *o;
    CU_ASSERT_EQUAL_FATAL(shoal__output_open(w, 100, &o), 0);
    CU_ASSERT_EQUAL(fcntl(w, F_GETFL) & O_NONBLOCK, 0);   /* the caller's stays blocking */
    line(o, "one 45678901234567890123456789012345678\n"); /* 40 bytes each */
    line(o, "two 45678901234567890123456789012345678\n");
    line(o, "three 678901234567890123456789012345678\n");
    line(o, "four 5678901234567890123456789012345678\n");
    CU_ASSERT_EQUAL(shoal__output_pump(o), 80);
    CU_ASSERT_EQUAL(shoal__output_dropped(o), 2);
    CU_ASSERT_FALSE(ferror(shoal__output_file(o)));
    char got[4096];
    drain(r, got, sizeof got); /* the reader reads: the filling only */
    CU_ASSERT_EQUAL(shoal__output_pump(o), 0);
    line(o, "five 5678901234567890123456789012345678\n");
    drain(r, got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "one 45678901234567890123456789012345678\n"
                                "two 45678901234567890123456789012345678\n"
                                "five 5678901234567890123456789012345678\n");
    CU_ASSERT_EQUAL(shoal__output_dropped(o), 2);
    CU_ASSERT_EQUAL(shoal__output_close(o, 0), 0);
}

static void test_pipe_stuck(void)
{
    int p[2];
    CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
    stuck(p[1], p[0]);
    close(p[0]);
    close(p[1]);
}

static void test_socket_stuck(void)
{
    int s[2];
    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    stuck(s[0], s[1]);
    close(s[0]);
    close(s[1]);
}

/* A block four times the pipe's size, into an empty pipe nobody reads:
 * what the pipe takes goes, the rest is held, whatever the bound -- never
 * cut -- and comes out whole once read. */
static void test_block_bigger_than_the_pipe(void)
{
    int p[2];
    CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
    enum { N = 256 << 10 };
    char *block = malloc(N), *got = malloc(N + 1);
    CU_ASSERT_FATAL(block != NULL && got != NULL);
    for (size_t i = 0; i < N; i++)
        block[i] = (char)('a' + i % 23);
    shoal_output_t *o;
    CU_ASSERT_EQUAL_FATAL(shoal__output_open(p[1], 1 << 20, &o), 0);
    FILE *f = shoal__output_file(o);
    CU_ASSERT_EQUAL(fwrite(block, 1, N, f), N);
    CU_ASSERT_EQUAL(fflush(f), 0);
    size_t held = shoal__output_pump(o);
    CU_ASSERT(held > 0 && held < N);
    size_t n = 0;
    while (n < N) { /* read as it comes, pumping what is held */
        ssize_t r = read(p[0], got + n, N - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        shoal__output_pump(o);
    }
    CU_ASSERT_EQUAL(n, N);
    CU_ASSERT_EQUAL(memcmp(got, block, N), 0);
    CU_ASSERT_EQUAL(shoal__output_dropped(o), 0);
    CU_ASSERT_EQUAL(shoal__output_close(o, 0), 0);
    free(block);
    free(got);
    close(p[0]);
    close(p[1]);
}

/* Another writer of the same pipe (an isolated pool's child shares
 * shoald's stderr) writes between the output's writes as the reader
 * frees room: each of the output's lines still comes whole, because it
 * writes whole lines of at most PIPE_BUF bytes a write. */
static void test_second_writer_cuts_no_line(void)
{
    int p[2];
    CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
    fill(p[1]);
    shoal_output_t *o;
    CU_ASSERT_EQUAL_FATAL(shoal__output_open(p[1], 1 << 20, &o), 0);
    enum { LINES = 2000, LEN = 100 };
    char text[LEN + 1];
    memset(text, 'L', LEN - 1);
    text[LEN - 1] = '\n';
    text[LEN] = '\0';
    for (int i = 0; i < LINES; i++)
        line(o, text);
    CU_ASSERT_EQUAL(shoal__output_pump(o), (size_t)LINES * LEN); /* all held */
    int fl = fcntl(p[0], F_GETFL);
    fcntl(p[0], F_SETFL, fl | O_NONBLOCK);
    fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
    size_t cap = (size_t)LINES * LEN * 2, n = 0;
    char *got = malloc(cap + 1), buf[4096];
    CU_ASSERT_FATAL(got != NULL);
    int x = 0, idle = 0;
    size_t left = 1;
    while (idle < 20) {
        ssize_t r = read(p[0], buf, sizeof buf); /* frees room... */
        for (ssize_t i = 0; i < r; i++)
            if (buf[i] != '\1' && n < cap)
                got[n++] = buf[i];
        if (left != 0 && write(p[1], "X\n", 2) == 2) /* ...the other writer takes some... */
            x++;
        left = shoal__output_pump(o); /* ...and the output the rest */
        idle = r <= 0 && left == 0 ? idle + 1 : 0;
    }
    got[n] = '\0';
    int whole = 0, xs = 0, cut = 0;
    for (char *l = strtok(got, "\n"); l != NULL; l = strtok(NULL, "\n")) {
        if (strcmp(l, "X") == 0)
            xs++;
        else if (strlen(l) == LEN - 1 && strspn(l, "L") == LEN - 1)
            whole++;
        else
            cut++;
    }
    CU_ASSERT(x > 10); /* the other writer did write between */
    CU_ASSERT_EQUAL(xs, x);
    CU_ASSERT_EQUAL(whole, LINES);
    CU_ASSERT_EQUAL(cut, 0);
    CU_ASSERT_EQUAL(shoal__output_dropped(o), 0);
    CU_ASSERT_EQUAL(shoal__output_close(o, 0), 0);
    free(got);
    close(p[0]);
    close(p[1]);
}

/* The reader is gone: the stream's error, at once. */
static void test_reader_gone(void)
{
    signal(SIGPIPE, SIG_IGN); /* as shoald */
    int p[2];
    CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
    shoal_output_t *o;
    CU_ASSERT_EQUAL_FATAL(shoal__output_open(p[1], 100, &o), 0);
    close(p[0]);
    FILE *f = shoal__output_file(o);
    fputs("to nobody\n", f);
    CU_ASSERT_EQUAL(fflush(f), EOF);
    CU_ASSERT_TRUE(ferror(f));
    CU_ASSERT_EQUAL(shoal__output_pump(o), 0);
    CU_ASSERT_EQUAL(shoal__output_close(o, 0), 0);
    close(p[1]);
}

/* A full disk (/dev/full: every write ENOSPC) is not a reader gone: held
 * to the bound and dropped whole, no stream error, and written once the
 * descriptor takes writes again (here a pipe put in its place) -- a log
 * on a full disk stopped for the rest of the process. */
static void test_full_disk_comes_back(void)
{
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(full >= 0);
    shoal_output_t *o;
    CU_ASSERT_EQUAL_FATAL(shoal__output_open(full, 100, &o), 0);
    line(o, "one 45678901234567890123456789012345678\n"); /* 40 bytes each */
    line(o, "two 45678901234567890123456789012345678\n");
    line(o, "three 678901234567890123456789012345678\n");
    CU_ASSERT_EQUAL(shoal__output_pump(o), 80);
    CU_ASSERT_EQUAL(shoal__output_dropped(o), 1);
    CU_ASSERT_FALSE(ferror(shoal__output_file(o)));
    /* Space again: the descriptor written to now takes writes. */
    int p[2];
    CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
    CU_ASSERT_FATAL(dup2(p[1], shoal__output_fd(o)) >= 0);
    CU_ASSERT_EQUAL(shoal__output_pump(o), 0);
    line(o, "four 5678901234567890123456789012345678\n");
    char got[4096];
    drain(p[0], got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "one 45678901234567890123456789012345678\n"
                                "two 45678901234567890123456789012345678\n"
                                "four 5678901234567890123456789012345678\n");
    CU_ASSERT_EQUAL(shoal__output_dropped(o), 1);
    CU_ASSERT_FALSE(ferror(shoal__output_file(o)));
    CU_ASSERT_EQUAL(shoal__output_close(o, 0), 0);
    close(p[0]);
    close(p[1]);
    close(full);
}

/* close waits for the reader only so long, and says what it left. */
static void test_close_gives_up(void)
{
    int p[2];
    CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
    fill(p[1]);
    shoal_output_t *o;
    CU_ASSERT_EQUAL_FATAL(shoal__output_open(p[1], 100, &o), 0);
    fputs("left behind\n", shoal__output_file(o)); /* still in stdio's buffer */
    CU_ASSERT_EQUAL(shoal__output_close(o, 50), 12);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a pipe nobody reads", test_pipe_stuck},
        {"a socket nobody reads", test_socket_stuck},
        {"a block bigger than the pipe is never cut", test_block_bigger_than_the_pipe},
        {"a second writer of the pipe cuts no line", test_second_writer_cuts_no_line},
        {"a reader that is gone", test_reader_gone},
        {"a full disk, then space again", test_full_disk_comes_back},
        {"close gives up after its wait", test_close_gives_up},
        {NULL, NULL},
    };
    return shoal_test_run("output", cases);
}
