/* test_lines.c - plugins/lines, the lines of a file as a pull pool's
 * source, loaded from build/plugins/lines/lines.so by the host's loader and
 * driven by a pool played by hand (fakepool.h): exact items and cursors
 * (empty lines, CRLF, a last line without '\n', a NUL inside), RESUME at an
 * offset or a whole cursor (one of a file since replaced: read from the
 * start; bad ones failing it), each way with a line past max_line, a file
 * that cannot be opened, a file replaced while read, refused items,
 * a million lines streamed in batches of 64 in bounded memory, and its args
 * schema agreeing with its init. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../plugins/lines/lines.h"
#include "actor/actor.h"
#include "fakepool.h"
#include "host/argcheck.h"

static shoal_runtime_t *rt;
static shoal_pid_t src;
static uint64_t items_sent; /* what the source's stats must say */
static bool ending;         /* the source is to fail after its next answer */

/* ---- files ----------------------------------------------------------------------------- */

#define MAX_FILES 8
static char files[MAX_FILES][64];
static unsigned nfiles;

/* A new temporary file holding `size` bytes of data; removed by cleanup(). */
static const char *file_with(const void *data, size_t size)
{
    CU_ASSERT_FATAL(nfiles < MAX_FILES);
    char *path = files[nfiles++];
    snprintf(path, sizeof files[0], "/tmp/shoal-lines-XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, data, size) == (ssize_t)size);
    close(fd);
    return path;
}
#define FILE_WITH(s) file_with(s, sizeof(s) - 1)

static void cleanup(void)
{
    for (unsigned i = 0; i < nfiles; i++)
        unlink(files[i]);
    nfiles = 0;
}

/* ---- the source ------------------------------------------------------------------------- */

static void respawn(const char *path, const char *more)
{
    char args[512];
    snprintf(args, sizeof args, "path: %s\n%s", path, more ? more : "");
    src = fp_spawn("lines", args);
    items_sent = 0;
}

static void start(const char *path, const char *more)
{
    rt = fp_start(0);
    respawn(path, more);
}

typedef struct line_s {
    const char *bytes;
    size_t size;
} line_t;
#define L(s)                                                                                       \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }
#define LINES(...)                                                                                 \
    (const line_t[]){__VA_ARGS__}, sizeof((const line_t[]){__VA_ARGS__}) / sizeof(line_t)
#define NONE NULL, 0

static lines_cursor_t last_cursor; /* the last SENT's (ask) */

/* Asks for n: the answer must be `answer` (SENT carrying `cursor`, or DONE
 * carrying nothing) from the source with priority, and the items that came
 * with it exactly want[0 .. k) of type LINES_MSG_ITEM. */
static void ask(uint32_t n, uint32_t answer, uint64_t cursor, const line_t *want, unsigned k)
{
    unsigned before = fp_items();
    const fp_msg_t *a = fp_ask(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->type, answer);
    CU_ASSERT_EQUAL(a->from, src);
    CU_ASSERT(a->flags & SHOAL_MSG_PRIORITY);
    if (answer == SHOAL_PULL_SENT) {
        lines_cursor_t got = {0, 0, 0};
        CU_ASSERT_EQUAL_FATAL(a->size, sizeof got);
        memcpy(&got, a->data, sizeof got);
        CU_ASSERT_EQUAL(got.offset, cursor);
        if (got.offset != cursor)
            fprintf(stderr, "\n    cursor %" PRIu64 ", want %" PRIu64 "\n", got.offset, cursor);
        CU_ASSERT(got.ino != 0);
        last_cursor = got;
    } else {
        CU_ASSERT_EQUAL(a->size, 0);
    }
    CU_ASSERT_FATAL(fp_wait_items(before + k));
    for (unsigned i = 0; i < k; i++) {
        const fp_msg_t *m = fp_item(before + i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(m->type, LINES_MSG_ITEM);
        CU_ASSERT_EQUAL(m->from, src);
        CU_ASSERT_EQUAL(m->size, want[i].size);
        bool same = m->size == want[i].size && memcmp(m->data, want[i].bytes, m->size) == 0;
        CU_ASSERT(same);
        if (!same)
            fprintf(stderr, "\n    item %u: '%.*s', want '%s'\n", i, (int)m->size,
                    (const char *)m->data, want[i].bytes);
    }
    items_sent += k;
    CU_ASSERT_EQUAL(fp_strays(), 0);
    if (ending) /* the source fails after this answer: no stats to ask */
        return;
    lines_stats_t st;
    fp_stats(&st, sizeof st); /* handled after the request: its items are all sent */
    CU_ASSERT_EQUAL(st.items, items_sent);
    CU_ASSERT_EQUAL(st.done, answer == SHOAL_PULL_DONE);
    CU_ASSERT_EQUAL(fp_items(), before + k);
}

/* RESUME with an offset alone (8 bytes), or a whole cursor. */
static void tell_cursor(uint64_t at) { fp_tell(SHOAL_PULL_RESUME, &at, sizeof at); }
static void tell_whole(lines_cursor_t c) { fp_tell(SHOAL_PULL_RESUME, &c, sizeof c); }

/* The source must end with `reason`, having logged "<level> <pid> lines: <message>". */
static void fails(int reason, const char *level, const char *message)
{
    char line[900];
    CU_ASSERT_EQUAL(fp_exit(10), reason);
    snprintf(line, sizeof line, "%s <%u.%u> lines: %s\n", level, (unsigned)shoal__pid_slot(src),
             (unsigned)shoal__pid_gen(src), message);
    shoal_test_assert_logged(line);
}

/* Init must fail with `reason`, logging "lines: <message>" (the whole line). */
static void bad_args(const char *args, int reason, const char *message)
{
    char line[900];
    fp_spawn("lines", args);
    CU_ASSERT_EQUAL(fp_exit(10), reason);
    snprintf(line, sizeof line, "> lines: %s\n", message);
    shoal_test_assert_logged(line);
}

/* ---- cases ------------------------------------------------------------------------------- */

static const char text5[] = "alpha\n\nbeta\r\n\r\ngamma"; /* offsets 0, 6, 7, 13, 15; 20 bytes */

static void lines_as_items(void)
{
    const char *path = FILE_WITH(text5);
    start(path, NULL);
    ask(2, SHOAL_PULL_SENT, 7, LINES(L("alpha"), L("")));
    ask(2, SHOAL_PULL_SENT, 15, LINES(L("beta"), L("")));
    ask(2, SHOAL_PULL_DONE, 0, LINES(L("gamma")));
    ask(2, SHOAL_PULL_DONE, 0, NONE); /* asked again after DONE */
    char info[256];
    fp_info(info, sizeof info);
    CU_ASSERT_STRING_EQUAL(info, "{\"requests\":4,\"items\":5,\"bytes\":14,\"refused\":0,"
                                 "\"resumes\":0,\"long_lines\":0,\"offset\":20,\"done\":1,"
                                 "\"buffer\":256}");
    /* All at once. */
    respawn(path, NULL);
    ask(100, SHOAL_PULL_DONE, 0, LINES(L("alpha"), L(""), L("beta"), L(""), L("gamma")));
    /* A batch that ends with the last line says DONE with it. */
    respawn(FILE_WITH("a\nb\n"), NULL);
    ask(2, SHOAL_PULL_DONE, 0, LINES(L("a"), L("b")));
    /* An empty file: DONE at once. One newline: one empty line. */
    respawn(FILE_WITH(""), NULL);
    ask(3, SHOAL_PULL_DONE, 0, NONE);
    respawn(FILE_WITH("\n"), NULL);
    ask(3, SHOAL_PULL_DONE, 0, LINES(L("")));
    /* A NUL is kept; a '\r' ends only at the line's end; a last '\r' goes. */
    respawn(FILE_WITH("x\0y\na\rb\r\nq\r"), NULL);
    ask(1, SHOAL_PULL_SENT, 4, LINES(L("x\0y")));
    ask(5, SHOAL_PULL_DONE, 0, LINES(L("a\rb"), L("q")));
    fp_stop();
    cleanup();
}

static void resumes_at_the_cursor(void)
{
    const char *path = FILE_WITH(text5);
    start(path, NULL);
    ask(2, SHOAL_PULL_SENT, 7, LINES(L("alpha"), L("")));
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, src), SHOAL_OK);
    CU_ASSERT_EQUAL(fp_exit(10), SHOAL_ESHUTDOWN);
    respawn(path, NULL);
    tell_cursor(7);
    ask(10, SHOAL_PULL_DONE, 0, LINES(L("beta"), L(""), L("gamma")));
    char line[600];
    snprintf(line, sizeof line, "lines: %s: resuming at byte 7\n", path);
    shoal_test_assert_logged(line);
    respawn(path, NULL);
    tell_cursor(13);
    ask(1, SHOAL_PULL_SENT, 15, LINES(L("")));
    tell_cursor(0); /* back to the start */
    ask(1, SHOAL_PULL_SENT, 6, LINES(L("alpha")));
    /* A whole cursor of this file, as SENT gave it. */
    lines_cursor_t here = last_cursor;
    here.offset = 13;
    tell_whole(here);
    ask(1, SHOAL_PULL_SENT, 15, LINES(L("")));
    lines_stats_t st;
    fp_stats(&st, sizeof st);
    CU_ASSERT_EQUAL(st.resumes, 3);
    CU_ASSERT_EQUAL(st.offset, 15);

    /* Cursors this file cannot have given. */
    char msg[600];
    respawn(path, NULL);
    tell_cursor(3);
    snprintf(msg, sizeof msg, "cannot resume at byte 3: no line of %s starts there (replaced?)",
             path);
    fails(SHOAL_EINVAL, "error", msg);
    respawn(path, NULL);
    tell_cursor(21);
    snprintf(msg, sizeof msg, "cannot resume at byte 21: %s has 20 bytes (truncated or replaced?)",
             path);
    fails(SHOAL_EINVAL, "error", msg);
    respawn(path, NULL);
    fp_tell(SHOAL_PULL_RESUME, "\0\0\0\0", 4);
    fails(SHOAL_EINVAL, "error",
          "cannot resume: a cursor of 4 bytes, expected 24 (a lines_cursor_t, lines.h) or 8 "
          "(its offset)");
    respawn(path, NULL);
    fp_tell(SHOAL_PULL_REQUEST, "", 0);
    fails(SHOAL_EINVAL, "error", "a SHOAL_PULL_REQUEST of 0 bytes: expected 4 (a uint32_t count)");
    fp_stop();
    cleanup();
}

/* offsets: short 0, 12345678\r\n 6, 0123456789abc 16, end 30; 34 bytes */
static const char long_text[] = "short\n12345678\r\n0123456789abc\nend\n";

static void a_long_line_each_way(void)
{
    const char *path = FILE_WITH(long_text);
    char msg[600];
    /* fail (the default): what comes before it, SENT at it, then the end. */
    start(path, "max_line: 8\n");
    ending = true;
    ask(10, SHOAL_PULL_SENT, 16, LINES(L("short"), L("12345678")));
    snprintf(msg, sizeof msg,
             "%s: the line at byte 16 is 13 bytes, longer than max_line (8): failing "
             "(long_lines: truncate or skip would go on)",
             path);
    fails(SHOAL_EFAILED, "error", msg);
    /* Started again and resumed there: it fails there again, sending nothing. */
    respawn(path, "max_line: 8\n");
    tell_cursor(16);
    ask(10, SHOAL_PULL_SENT, 16, NONE);
    fails(SHOAL_EFAILED, "error", msg);
    ending = false;

    respawn(path, "max_line: 8B\nlong_lines: truncate\n");
    ask(10, SHOAL_PULL_DONE, 0, LINES(L("short"), L("12345678"), L("01234567"), L("end")));
    snprintf(msg, sizeof msg,
             "%s: the line at byte 16 is 13 bytes, longer than max_line (8): truncated (said "
             "once; long_lines counts them)",
             path);
    char line[900];
    snprintf(line, sizeof line, "warn <%u.%u> lines: %s\n", (unsigned)shoal__pid_slot(src),
             (unsigned)shoal__pid_gen(src), msg);
    shoal_test_assert_logged(line);
    CU_ASSERT_EQUAL(fp_exit(0), SHOAL_TEST_NO_EXIT);
    lines_stats_t st;
    fp_stats(&st, sizeof st);
    CU_ASSERT_EQUAL(st.long_lines, 1);
    CU_ASSERT_EQUAL(st.bytes, 5 + 8 + 8 + 3);
    CU_ASSERT_EQUAL(st.buffer, 9); /* max_line + 1, never more */
    CU_ASSERT_EQUAL(st.offset, 34);

    /* skip: passed over, and not one of the n asked for. */
    respawn(path, "max_line: 8\nlong_lines: skip\n");
    ask(2, SHOAL_PULL_SENT, 16, LINES(L("short"), L("12345678")));
    ask(1, SHOAL_PULL_DONE, 0, LINES(L("end")));
    fp_stats(&st, sizeof st);
    CU_ASSERT_EQUAL(st.long_lines, 1);
    /* Said once, however many. */
    const char many[] = "0123456789\n0123456789\nok\n0123456789\n";
    respawn(FILE_WITH(many), "max_line: 4\nlong_lines: skip\n");
    ask(10, SHOAL_PULL_DONE, 0, LINES(L("ok")));
    fp_stats(&st, sizeof st);
    CU_ASSERT_EQUAL(st.long_lines, 3);
    CU_ASSERT_EQUAL(shoal_test_log_count("max_line (4): skipped"), 1);
    fp_stop();
    cleanup();
}

static void cannot_open_fails_init(void)
{
    rt = fp_start(0);
    bad_args("path: /nonexistent/shoal-lines\n", SHOAL_EINVAL,
             "pool.yaml:1:7: args 'path': cannot open /nonexistent/shoal-lines: No such file or "
             "directory");
    bad_args("path: /tmp\n", SHOAL_EINVAL,
             "pool.yaml:1:7: args 'path': /tmp is a directory: expected a regular file");
    bad_args("path: /dev/null\n", SHOAL_EINVAL,
             "pool.yaml:1:7: args 'path': /dev/null is not a regular file: expected a regular "
             "file");
    /* A FIFO with no writer: refused at once, not waited on. */
    char fifo[64], args[256], msg[600];
    snprintf(fifo, sizeof fifo, "/tmp/shoal-lines-fifo-%d", (int)getpid());
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    snprintf(args, sizeof args, "path: %s\n", fifo);
    snprintf(msg, sizeof msg,
             "pool.yaml:1:7: args 'path': %s is not a regular file: expected a regular file", fifo);
    bad_args(args, SHOAL_EINVAL, msg);
    unlink(fifo);
    const char *path = FILE_WITH("x\n");
    if (geteuid() != 0) { /* root reads it anyway */
        chmod(path, 0);
        snprintf(args, sizeof args, "path: %s\n", path);
        snprintf(msg, sizeof msg, "pool.yaml:1:7: args 'path': cannot open %s: Permission denied",
                 path);
        bad_args(args, SHOAL_EINVAL, msg);
    }
    bad_args("max_line: 8\n", SHOAL_ENOKEY, "pool.yaml:1:1: args: missing required key 'path'");
    snprintf(args, sizeof args, "path: %s\nmax_line: 0\n", path);
    bad_args(args, SHOAL_EINVAL,
             "pool.yaml:2:11: args 'max_line': 0 is out of range: expected 1B to 16MiB");
    snprintf(args, sizeof args, "path: %s\nmax_line: 17MiB\n", path);
    bad_args(args, SHOAL_EINVAL,
             "pool.yaml:2:11: args 'max_line': 17MiB is out of range: expected 1B to 16MiB");
    snprintf(args, sizeof args, "path: %s\nlong_lines: wrap\n", path);
    bad_args(args, SHOAL_EINVAL,
             "pool.yaml:2:13: args 'long_lines': expected one of fail, truncate, skip, got 'wrap'");
    snprintf(args, sizeof args, "path: %s\ntype: 0xFFFE0000\n", path);
    bad_args(args, SHOAL_EINVAL,
             "pool.yaml:2:7: args 'type': 0xFFFE0000 is the runtime's (0xFFFE0000 .. 0xFFFEFFFF "
             "are reserved): pick another type id");
    fp_stop();
    cleanup();
}

/* The open file is read to its end, whatever happens to its name. A
 * source started again opens the name: a whole cursor of the file it
 * replaced does not resume in it (read from its start, with a warning),
 * an offset alone is checked against it. */
static void a_replaced_file_is_read_to_its_end(void)
{
    const char *path = FILE_WITH("one\ntwo\nthree\n");
    const char *other = FILE_WITH("uno\ndos\n");
    start(path, NULL);
    ask(1, SHOAL_PULL_SENT, 4, LINES(L("one")));
    CU_ASSERT_EQUAL_FATAL(rename(other, path), 0);
    ask(10, SHOAL_PULL_DONE, 0, LINES(L("two"), L("three")));
    /* Started again, it opens the name: the new file. */
    respawn(path, NULL);
    ask(10, SHOAL_PULL_DONE, 0, LINES(L("uno"), L("dos")));
    respawn(path, NULL);
    ask(1, SHOAL_PULL_SENT, 4, LINES(L("uno")));
    unlink(path);
    ask(1, SHOAL_PULL_DONE, 0, LINES(L("dos")));

    /* A cursor of the file it replaced, at a line start of this one too:
     * read from its start, said (it resumed there, and "uno" was lost). */
    const char *third = FILE_WITH("eins\nzwei\ndrei\n");
    CU_ASSERT_EQUAL_FATAL(rename(third, path), 0);
    respawn(path, NULL);
    ask(1, SHOAL_PULL_SENT, 5, LINES(L("eins")));
    lines_cursor_t old = last_cursor;                   /* offset 5 of that file */
    const char *fourth = FILE_WITH("uno\ndos\ntres\n"); /* a line starts at 4, not 5 */
    const char *fifth = FILE_WITH("abcd\nefgh\n");      /* one starts at 5 */
    CU_ASSERT_EQUAL_FATAL(rename(fifth, path), 0);
    respawn(path, NULL);
    tell_whole(old);
    ask(10, SHOAL_PULL_DONE, 0, LINES(L("abcd"), L("efgh")));
    char msg[700];
    snprintf(msg, sizeof msg,
             "warn <%u.%u> lines: %s is another file than the cursor's (replaced since it was read "
             "to byte 5): reading it from its start\n",
             (unsigned)shoal__pid_slot(src), (unsigned)shoal__pid_gen(src), path);
    shoal_test_assert_logged(msg);
    /* Its offset alone is checked against the file as it is. */
    CU_ASSERT_EQUAL_FATAL(rename(fourth, path), 0);
    respawn(path, NULL);
    tell_cursor(5);
    snprintf(msg, sizeof msg, "cannot resume at byte 5: no line of %s starts there (replaced?)",
             path);
    fails(SHOAL_EINVAL, "error", msg);
    fp_stop();
    cleanup();
}

/* The pool's mailbox holds 3 and is not emptied while the source answers:
 * the 4th line is refused, SENT carries its offset, it comes next. */
static void a_refused_line_comes_next_time(void)
{
    const char *path = FILE_WITH("l0\nl1\nl2\nl3\nl4\nl5\n");
    rt = fp_start(3);
    respawn(path, NULL);
    unsigned answers = fp_answers();
    fp_ask_held(10);
    lines_stats_t st;
    fp_stats(&st, sizeof st);
    CU_ASSERT_EQUAL(st.items, 3);
    CU_ASSERT_EQUAL(st.refused, 1);
    CU_ASSERT_EQUAL(st.offset, 9);
    fp_release();
    SHOAL_TEST_WAIT_UNTIL(fp_answers() > answers, 10.0);
    const fp_msg_t *a = fp_answer(answers);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->type, SHOAL_PULL_SENT);
    uint64_t cursor = 0;
    memcpy(&cursor, a->data, sizeof cursor);
    CU_ASSERT_EQUAL(cursor, 9);
    CU_ASSERT_FATAL(fp_wait_items(3));
    CU_ASSERT_EQUAL(memcmp(fp_item(2)->data, "l2", 2), 0);
    items_sent = 3;
    shoal_test_assert_logged("lines: the pool refused the line at byte 9 (mailbox full): 3 of 10 "
                             "sent, the rest comes at the next request (said once)\n");
    ask(2, SHOAL_PULL_SENT, 15, LINES(L("l3"), L("l4")));
    ask(2, SHOAL_PULL_DONE, 0, LINES(L("l5")));
    fp_stop();
    cleanup();
}

/* The pool ends in the turn it asks (its mailbox closed, as a draining
 * pool's): no line goes, and the source says so at info -- not that the
 * rest comes at the next request, which never comes -- counting the one
 * it tried. One dispatcher thread: the pool has ended before the source
 * reads the request. */
static void an_ended_pool_is_told_apart(void)
{
    const char *path = FILE_WITH("l0\nl1\nl2\n");
    rt = fp_start_on(0, 1);
    respawn(path, NULL);
    fp_ask_and_end(10);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has("lines: the pool has closed"), 10.0);
    shoal_test_assert_logged("lines: the pool has closed (draining or ended): 0 of 10 sent, none "
                             "from the line at byte 0 on\n");
    CU_ASSERT_EQUAL(shoal_test_log_count("next request"), 0);
    CU_ASSERT_EQUAL(shoal_test_log_count("lines: the pool"), 1);
    CU_ASSERT_EQUAL(fp_items(), 0);
    fp_stop();
    cleanup();
}

/* ---- a million lines, in bounded memory ------------------------------------------------- */

#define BIG_LINES 1000000u
#define BIG_PAD "-abcdefghijklmnopqrstuvw" /* 24 bytes: each line is 31, 32 with its end */

static bool big_line_is(uint64_t i, const void *data, size_t size)
{
    char want[40];
    snprintf(want, sizeof want, "%07" PRIu64 BIG_PAD, i);
    return size == 31 && memcmp(data, want, 31) == 0;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

static void a_million_lines_in_bounded_memory(void)
{
    CU_ASSERT_FATAL(nfiles < MAX_FILES);
    char *path = files[nfiles++];
    snprintf(path, sizeof files[0], "/tmp/shoal-lines-XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (unsigned i = 0; i < BIG_LINES; i++)
        fprintf(f, "%07u" BIG_PAD "\n", i);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);

    start(path, NULL);
    long before = rss_kib();
    uint64_t got = 0, bad = 0;
    bool done = fp_stream(64, big_line_is, BIG_LINES, 100.0, &got, &bad);
    long after = rss_kib();
    CU_ASSERT(done);
    CU_ASSERT_EQUAL(got, BIG_LINES);
    CU_ASSERT_EQUAL(bad, 0);
    lines_stats_t st;
    fp_stats(&st, sizeof st);
    CU_ASSERT_EQUAL(st.items, BIG_LINES);
    CU_ASSERT_EQUAL(st.bytes, 31ull * BIG_LINES);
    CU_ASSERT_EQUAL(st.requests, BIG_LINES / 64); /* DONE came with the last full batch */
    CU_ASSERT_EQUAL(st.offset, 32ull * BIG_LINES);
    CU_ASSERT_EQUAL(st.done, 1);
    CU_ASSERT_EQUAL(st.buffer, 256); /* the first buffer: no line needed more */
    /* The file is 32 MB: read whole, it would show. */
    CU_ASSERT(before > 0 && after > 0 && after - before < 8 * 1024);
    if (after - before >= 8 * 1024)
        fprintf(stderr, "\n    VmRSS %ld kB -> %ld kB\n", before, after);
    fp_stop();
    cleanup();
}

/* Each key: the host's schema check and init accept the same values, and
 * refuse the others for the same reason at the same place. */
static void schema_agrees_with_init(void)
{
    static const struct {
        const char *more;
        const char *refused; /* the key refused, or NULL: accepted */
    } probes[] = {
        {"", NULL},
        {"type: 0\n", NULL},
        {"type: 4294967295\n", NULL},
        {"type: 4294967296\n", "type"},
        {"type: 0xFFFF0011\nmax_line: 64KiB\nlong_lines: fail\n", NULL}, /* the defaults */
        {"max_line: 1B\n", NULL},
        {"max_line: 16MiB\n", NULL},
        {"max_line: 16777217\n", "max_line"},
        {"max_line: 1 parsec\n", "max_line"},
        {"long_lines: truncate\n", NULL},
        {"long_lines: skip\n", NULL},
        {"long_lines: nope\n", "long_lines"},
    };
    const shoal_behaviour_t *b = fp_behaviour("lines");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    const char *path = FILE_WITH("x\n");
    rt = fp_start(0);
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "path: %s\n%s", path, probes[i].more);
        const shoal_node_t *args = fp_yaml(text);
        shoal_diag_t err;
        memset(&err, 0, sizeof err);
        int schema = shoal__argcheck_args(b->args, args, args, "p", "lines.lines", &err);
        const char *key = probes[i].refused;
        CU_ASSERT_EQUAL(schema == SHOAL_OK, key == NULL);
        if ((schema == SHOAL_OK) != (key == NULL))
            fprintf(stderr, "\n    schema on %s: %s\n", text, err.msg);
        respawn(path, probes[i].more);
        char info[256];
        fp_info(info, sizeof info);
        bool alive = info[0] == '{';
        CU_ASSERT_EQUAL(alive, key == NULL);
        if (alive || key == NULL || schema == SHOAL_OK)
            continue;
        /* The same reason at the same place: "p.args.<key>: <reason>". */
        char head[64], line[900];
        CU_ASSERT_NOT_EQUAL(fp_exit(10), SHOAL_OK);
        snprintf(head, sizeof head, "p.args.%s: ", key);
        CU_ASSERT_NSTRING_EQUAL(err.msg, head, strlen(head));
        snprintf(line, sizeof line, "> lines: pool.yaml:%u:%u: args '%s': %s\n", err.line, err.col,
                 key, err.msg + strlen(head));
        shoal_test_assert_logged(line);
    }
    fp_stop();
    cleanup();
}

int main(void)
{
    if (fp_setup() != SHOAL_OK)
        return 1;
    static const shoal_test_case_t cases[] = {
        {"lines as items: empty, CRLF, no last newline", lines_as_items},
        {"RESUME at the cursor, and bad cursors", resumes_at_the_cursor},
        {"a line past max_line: fail, truncate, skip", a_long_line_each_way},
        {"a file that cannot be opened fails init", cannot_open_fails_init},
        {"a replaced file is read to its end", a_replaced_file_is_read_to_its_end},
        {"a refused line comes next time", a_refused_line_comes_next_time},
        {"an ended pool is told apart", an_ended_pool_is_told_apart},
        {"a million lines in bounded memory", a_million_lines_in_bounded_memory},
        {"the schema agrees with init", schema_agrees_with_init},
        {NULL, NULL},
    };
    int rc = shoal_test_run("lines", cases);
    fp_teardown();
    return rc;
}
