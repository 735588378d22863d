/* lines.c - lines.lines: a pull pool's source of the lines of a file.
 *
 * args:
 *   path        string, required: the file; a relative path is taken from
 *               the host's working directory
 *   type        integer 0 .. 0xFFFFFFFF outside 0xFFFE0000 .. 0xFFFEFFFF
 *               (the runtime's), default LINES_MSG_ITEM: the items' type id
 *   max_line    size 1B .. 16MiB, default 64KiB: the longest line, in bytes
 *               without its end
 *   long_lines  fail, truncate or skip, default fail: what a longer line does
 *
 * The file is opened in init (a file that cannot be opened, or is not a
 * regular file, fails init with the reason at the value of `path`) and
 * read lazily, a line per item, through stdio into one buffer that grows to
 * max_line + 1 bytes at most: memory stays bounded however large the file.
 * The open file is kept: a file replaced (renamed over) or deleted while
 * the source runs is read to its end as it was opened. Only a source
 * started again (after a failure, or by a pool that took its epic over at
 * a reload) opens the path anew; its RESUME is checked against that file.
 *
 * The protocol (shoal/pull.h, lines.h). A SHOAL_PULL_REQUEST(n) sends the
 * pool up to n lines with shoal_send to the request's sender, then answers
 * with one priority message: SHOAL_PULL_SENT carrying the cursor (the byte
 * offset of the next line and the file's identity: lines_cursor_t), or
 * SHOAL_PULL_DONE (no cursor) as
 * soon as the file has no byte left after the lines sent - in the same
 * turn. The end is the end of the file when it is reached: lines appended
 * later are not waited for. A request after DONE is answered with DONE.
 *
 * A line longer than max_line (its end not counted):
 *   fail      the lines before it are sent and SENT carries its offset; then
 *             the source fails (SHOAL_EFAILED) with an error line naming the
 *             file, the offset and the limit. Started again and resumed, it
 *             fails there again: nothing is sent altered, nothing twice.
 *   truncate  its first max_line bytes are the item.
 *   skip      it is passed over (not an item, not counted in n).
 * Either way it is counted in long_lines; truncate and skip log the first
 * one as a warning.
 *
 * SHOAL_PULL_RESUME sets the cursor: a lines_cursor_t, or 8 bytes (its
 * offset alone). A cursor of another file than the one the path names now
 * (its device or inode differ: the file was replaced since) is no place in
 * this one: the source reads it from its start, with a warning (the
 * offset would have skipped, silently, as many bytes of the new file).
 * Otherwise the offset must be a line start (0, or just after a '\n')
 * within the file: another size, an offset past the end or inside a line
 * - the file changed in place - fails the source (SHOAL_EINVAL) with one
 * error line saying so; so does a request whose payload is not a uint32_t,
 * and a read error. A request from outside any actor has nobody to send
 * to: logged and ignored. Other messages are ignored.
 *
 * A refused item (should not happen: the pool set room aside for n) stops
 * the batch: the file goes back to that line's start, and SENT carries its
 * offset; the first refusal is logged (a warning, once per actor), every
 * one is counted.
 *
 * Every call is a stats call (lines.h); inspect reports the same fields.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fdopen, fseeko, getc_unlocked, strerror_r */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>
#include <shoal/pull.h>

#include "lines.h"

#define MAX_LINE (UINT64_C(16) << 20)
#define FIRST_BUFFER 256u

static const char *const long_modes[] = {"fail", "truncate", "skip", NULL};
enum { LONG_FAIL = 0, LONG_TRUNCATE = 1, LONG_SKIP = 2 };

typedef struct lines_s {
    /* args */
    const char *path; /* points into the args tree */
    uint32_t type;
    size_t max_line;
    unsigned long_lines; /* LONG_* */
    /* running */
    FILE *f;           /* positioned at st.offset between turns */
    uint64_t dev, ino; /* which file f is (fstat at open) */
    char *buf;         /* the line being read: st.buffer bytes */
    bool exhausted;    /* the end of the file was reached after the last line */
    bool told_refused; /* the first refused item was logged */
    bool told_long;    /* the first long line (truncate, skip) was logged */
    lines_stats_t st;  /* st.offset is the cursor */
} lines_t;

/* strerror, thread-safe, whichever strerror_r the C library declares. */
static const char *error_text(int err, char *buf, size_t size)
{
#if defined(_GNU_SOURCE)
    return strerror_r(err, buf, size);
#else
    return strerror_r(err, buf, size) == 0 ? buf : "unknown error";
#endif
}

/* Doubles the line buffer, to max_line + 1 bytes at most (room for a '\r'
 * that the line end then takes away). */
static int grow(lines_t *s)
{
    size_t cap = s->st.buffer == 0 ? FIRST_BUFFER : (size_t)s->st.buffer * 2;
    if (cap > s->max_line + 1)
        cap = s->max_line + 1;
    char *buf = realloc(s->buf, cap);
    if (buf == NULL)
        return SHOAL_ENOMEM;
    s->buf = buf;
    s->st.buffer = cap;
    return SHOAL_OK;
}

/* Reads the line at st.offset. Returns 1 with *len = its length without
 * the end (the first min(len, max_line) bytes are in buf) and *used = the
 * file bytes it took, end included; 0 at the end of the file; a negative
 * error (logged) when the file cannot be read. */
static int read_line(shoal_ctx_t *ctx, lines_t *s, uint64_t *len, uint64_t *used)
{
    uint64_t n = 0;
    int c, last = EOF;
    while ((c = getc_unlocked(s->f)) != EOF && c != '\n') {
        if (n < (uint64_t)s->max_line + 1) {
            if (n == s->st.buffer && grow(s) != SHOAL_OK) {
                shoal_log(ctx, SHOAL_LOG_ERROR, "%s: no memory for a line at byte %" PRIu64,
                          s->path, s->st.offset);
                return SHOAL_ENOMEM;
            }
            s->buf[n] = (char)c;
        }
        n++;
        last = c;
    }
    if (c == EOF && ferror(s->f)) {
        char text[128];
        shoal_log(ctx, SHOAL_LOG_ERROR, "%s: cannot read at byte %" PRIu64 ": %s", s->path,
                  s->st.offset, error_text(errno, text, sizeof text));
        return SHOAL_EFAILED;
    }
    if (c == EOF && n == 0)
        return 0;
    *used = n + (c == '\n');
    *len = last == '\r' ? n - 1 : n;
    return 1;
}

/* Puts the file back at offset (the line that was not sent). */
static int seek(shoal_ctx_t *ctx, lines_t *s, uint64_t offset)
{
    char text[128];
    if (offset > INT64_MAX || fseeko(s->f, (off_t)offset, SEEK_SET) != 0) {
        shoal_log(ctx, SHOAL_LOG_ERROR, "%s: cannot seek to byte %" PRIu64 ": %s", s->path, offset,
                  offset > INT64_MAX ? "too far" : error_text(errno, text, sizeof text));
        return SHOAL_EFAILED;
    }
    s->st.offset = offset;
    return SHOAL_OK;
}

/* Whether the file has no byte left; a read error is taken as more to come
 * (the next request reads, and reports it). */
static bool at_end(lines_t *s)
{
    int c = getc_unlocked(s->f);
    if (c == EOF)
        return !ferror(s->f);
    ungetc(c, s->f);
    return false;
}

/* Answers the request: SENT with the cursor, or DONE once exhausted. A
 * pool that is gone (ENOPROC) stops us anyway; any other failure ends the
 * source, so the pool starts it again and resumes from its last cursor. */
static int answer(shoal_ctx_t *ctx, lines_t *s, shoal_pid_t pool)
{
    lines_cursor_t c = {s->st.offset, s->dev, s->ino};
    int rc = s->exhausted ? shoal_send_priority(ctx, pool, SHOAL_PULL_DONE, NULL, 0)
                          : shoal_send_priority(ctx, pool, SHOAL_PULL_SENT, &c, sizeof c);
    s->st.done = s->exhausted;
    if (rc == SHOAL_OK || rc == SHOAL_ENOPROC)
        return SHOAL_OK;
    shoal_log(ctx, SHOAL_LOG_ERROR, "cannot answer the pool's request: %s", shoal_strerror(rc));
    return rc;
}

/* A line longer than max_line at `start`: SHOAL_OK to send it truncated,
 * 1 to skip it, or SHOAL_EFAILED (after answering the request with its
 * offset) to fail. */
static int long_line(shoal_ctx_t *ctx, lines_t *s, uint64_t start, uint64_t len, shoal_pid_t pool)
{
    s->st.long_lines++;
    if (s->long_lines == LONG_FAIL) {
        int rc = seek(ctx, s, start);
        if (rc == SHOAL_OK)
            rc = answer(ctx, s, pool);
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "%s: the line at byte %" PRIu64 " is %" PRIu64 " bytes, longer than max_line "
                  "(%zu): failing (long_lines: truncate or skip would go on)",
                  s->path, start, len, s->max_line);
        return rc == SHOAL_OK ? SHOAL_EFAILED : rc;
    }
    if (!s->told_long)
        shoal_log(ctx, SHOAL_LOG_WARN,
                  "%s: the line at byte %" PRIu64 " is %" PRIu64 " bytes, longer than max_line "
                  "(%zu): %s (said once; long_lines counts them)",
                  s->path, start, len, s->max_line,
                  s->long_lines == LONG_SKIP ? "skipped" : "truncated");
    s->told_long = true;
    return s->long_lines == LONG_SKIP;
}

static int request(shoal_ctx_t *ctx, lines_t *s, const shoal_msg_t *msg)
{
    uint32_t n;
    int rc;
    if (msg->size != sizeof n) {
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "a SHOAL_PULL_REQUEST of %zu bytes: expected 4 (a uint32_t count)", msg->size);
        return SHOAL_EINVAL;
    }
    if (msg->from == SHOAL_PID_NONE) {
        shoal_log(ctx, SHOAL_LOG_WARN,
                  "a SHOAL_PULL_REQUEST from outside any actor: no pool to send to, ignored");
        return SHOAL_OK;
    }
    memcpy(&n, msg->data, sizeof n);
    s->st.requests++;
    for (uint32_t i = 0; i < n && !s->exhausted;) {
        uint64_t start = s->st.offset, len = 0, used = 0;
        if ((rc = read_line(ctx, s, &len, &used)) < 0)
            return rc;
        if (rc == 0) {
            s->exhausted = true;
            break;
        }
        if (len > s->max_line && (rc = long_line(ctx, s, start, len, msg->from)) != SHOAL_OK) {
            if (rc < 0)
                return rc;
            s->st.offset += used; /* skipped */
            continue;
        }
        size_t size = len > s->max_line ? s->max_line : (size_t)len;
        if ((rc = shoal_send(ctx, msg->from, s->type, s->buf, size)) != SHOAL_OK) {
            s->st.refused++;
            if (rc == SHOAL_ENOPROC) { /* draining or ended: it asks for nothing more */
                shoal_log(ctx, SHOAL_LOG_INFO,
                          "the pool has closed (draining or ended): %" PRIu32 " of %" PRIu32
                          " sent, none from the line at byte %" PRIu64 " on",
                          i, n, start);
            } else if (!s->told_refused) {
                shoal_log(ctx, SHOAL_LOG_WARN,
                          "the pool refused the line at byte %" PRIu64 " (%s): %" PRIu32
                          " of %" PRIu32 " sent, the rest comes at the next request (said once)",
                          start, shoal_strerror(rc), i, n);
                s->told_refused = true;
            }
            if ((rc = seek(ctx, s, start)) != SHOAL_OK)
                return rc;
            break;
        }
        s->st.items++;
        s->st.bytes += size;
        s->st.offset += used;
        i++;
    }
    if (!s->exhausted && at_end(s))
        s->exhausted = true;
    return answer(ctx, s, msg->from);
}

static int resume(shoal_ctx_t *ctx, lines_t *s, const shoal_msg_t *msg)
{
    lines_cursor_t c;
    struct stat st;
    if (msg->size != sizeof c && msg->size != sizeof c.offset) {
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "cannot resume: a cursor of %zu bytes, expected 24 (a lines_cursor_t, "
                  "lines.h) or 8 (its offset)",
                  msg->size);
        return SHOAL_EINVAL;
    }
    memcpy(&c, msg->data, msg->size);
    uint64_t at = c.offset;
    if (msg->size == sizeof c && (c.dev != s->dev || c.ino != s->ino)) {
        shoal_log(ctx, SHOAL_LOG_WARN,
                  "%s is another file than the cursor's (replaced since it was read to byte "
                  "%" PRIu64 "): reading it from its start",
                  s->path, at);
        at = 0;
    }
    if (fstat(fileno(s->f), &st) == 0 && S_ISREG(st.st_mode) && at > (uint64_t)st.st_size) {
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "cannot resume at byte %" PRIu64 ": %s has %" PRIu64
                  " bytes (truncated or replaced?)",
                  at, s->path, (uint64_t)st.st_size);
        return SHOAL_EINVAL;
    }
    /* A line starts at 0 or just after a '\n'. */
    if (seek(ctx, s, at == 0 ? 0 : at - 1) != SHOAL_OK)
        return SHOAL_EINVAL;
    if (at != 0 && getc_unlocked(s->f) != '\n') {
        shoal_log(ctx, SHOAL_LOG_ERROR,
                  "cannot resume at byte %" PRIu64 ": no line of %s starts there (replaced?)", at,
                  s->path);
        return SHOAL_EINVAL;
    }
    s->st.offset = at;
    s->st.done = 0;
    s->exhausted = false;
    s->st.resumes++;
    shoal_log(ctx, SHOAL_LOG_INFO, "%s: resuming at byte %" PRIu64, s->path, at);
    return SHOAL_OK;
}

/* Opens the file for init; on failure the reason goes where the args'
 * errors go, at the value of `path`. Only a regular file: a FIFO or a
 * device would block a dispatcher thread while it waits for bytes (opening
 * one is not waited on: O_NONBLOCK), and could not be resumed. */
static int open_file(shoal_ctx_t *ctx, const shoal_args_t *args, lines_t *s)
{
    char text[128];
    struct stat st;
    int rc, fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return shoal_arg_error(ctx, args, "path", "cannot open %s: %s", s->path,
                               error_text(errno, text, sizeof text));
    if (fstat(fd, &st) != 0) {
        rc = shoal_arg_error(ctx, args, "path", "cannot stat %s: %s", s->path,
                             error_text(errno, text, sizeof text));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = shoal_arg_error(ctx, args, "path", "%s is %s: expected a regular file", s->path,
                             S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
        goto fail;
    }
    s->dev = (uint64_t)st.st_dev;
    s->ino = (uint64_t)st.st_ino;
    if (fcntl(fd, F_SETFL, O_RDONLY) != 0 || (s->f = fdopen(fd, "r")) == NULL) {
        rc = errno == ENOMEM ? SHOAL_ENOMEM
                             : shoal_arg_error(ctx, args, "path", "cannot read %s: %s", s->path,
                                               error_text(errno, text, sizeof text));
        goto fail;
    }
    return SHOAL_OK;
fail:
    close(fd);
    return rc;
}

static int lines_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    lines_t *s = state;
    int64_t type = LINES_MSG_ITEM;
    uint64_t max_line = 65536;
    int rc;
    if ((rc = shoal_arg_string(ctx, args, "path", 0, &s->path)) ||
        (rc = shoal_arg_int(ctx, args, "type", SHOAL_ARG_OPTIONAL, 0, UINT32_MAX, &type)) ||
        (rc = shoal_arg_size(ctx, args, "max_line", SHOAL_ARG_OPTIONAL, &max_line)) ||
        (rc = shoal_arg_enum(ctx, args, "long_lines", SHOAL_ARG_OPTIONAL, long_modes,
                             &s->long_lines)))
        return rc;
    if (type >= SHOAL_TYPE_RESERVED_FIRST && type <= SHOAL_TYPE_RESERVED_LAST)
        return shoal_arg_error(ctx, args, "type",
                               "0x%" PRIX64 " is the runtime's (0xFFFE0000 .. 0xFFFEFFFF are "
                               "reserved): pick another type id",
                               (uint64_t)type);
    if (max_line == 0 || max_line > MAX_LINE) {
        const char *text = "?";
        (void)shoal_arg_string(NULL, args, "max_line", SHOAL_ARG_OPTIONAL, &text);
        return shoal_arg_error(ctx, args, "max_line", "%s is out of range: expected 1B to 16MiB",
                               text);
    }
    s->type = (uint32_t)type;
    s->max_line = (size_t)max_line;
    return open_file(ctx, args, s);
}

static int lines_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    switch (msg->type) {
    case SHOAL_PULL_REQUEST:
        return request(ctx, state, msg);
    case SHOAL_PULL_RESUME:
        return resume(ctx, state, msg);
    default:
        return 0; /* not the pool's: ignored */
    }
}

static int lines_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)msg; /* every call is a stats call */
    lines_t *s = state;
    int rc = shoal_reply_set(reply, LINES_MSG_STATS, &s->st, sizeof s->st);
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc);
    return 0;
}

static int lines_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    const lines_stats_t *st = &((const lines_t *)state)->st;
    shoal_inspect_uint(out, "requests", st->requests);
    shoal_inspect_uint(out, "items", st->items);
    shoal_inspect_uint(out, "bytes", st->bytes);
    shoal_inspect_uint(out, "refused", st->refused);
    shoal_inspect_uint(out, "resumes", st->resumes);
    shoal_inspect_uint(out, "long_lines", st->long_lines);
    shoal_inspect_uint(out, "offset", st->offset);
    shoal_inspect_uint(out, "done", st->done);
    shoal_inspect_uint(out, "buffer", st->buffer);
    return 0;
}

static void lines_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    lines_t *s = state;
    if (s->f != NULL)
        fclose(s->f);
    free(s->buf);
    s->f = NULL;
    s->buf = NULL;
    shoal_log(ctx, SHOAL_LOG_DEBUG,
              "lines ends (%s): %s, %" PRIu64 " lines, %" PRIu64 " bytes, %" PRIu64
              " long, %" PRIu64 " refused, at byte %" PRIu64 "%s",
              shoal_errname(reason), s->path, s->st.items, s->st.bytes, s->st.long_lines,
              s->st.refused, s->st.offset, s->exhausted ? " (done)" : "");
}

/* What init reads, for the host to check before init runs (shoal/args.h). */
static const shoal_arg_spec_t lines_args[] = {
    {.key = "path",
     .type = SHOAL_ARG_STRING,
     .flags = SHOAL_ARG_REQUIRED,
     .doc = "the file to read; relative to the host's working directory"},
    {.key = "type",
     .type = SHOAL_ARG_INT,
     .min = 0,
     .max = UINT32_MAX,
     .def = "0xFFFF0011",
     .doc = "the items' type id (not one of the runtime's 0xFFFE0000 .. 0xFFFEFFFF)"},
    {.key = "max_line",
     .type = SHOAL_ARG_SIZE,
     .min = 1,
     .max = (int64_t)MAX_LINE,
     .def = "64KiB",
     .doc = "the longest line, in bytes without its end"},
    {.key = "long_lines",
     .type = SHOAL_ARG_ENUM,
     .choices = long_modes,
     .def = "fail",
     .doc = "a line longer than max_line: fail the source, truncate it, or skip it"},
    {.key = NULL},
};

static const shoal_behaviour_t lines = {
    .name = "lines",
    .state_size = sizeof(lines_t),
    .init = lines_init,
    .handle_message = lines_message,
    .handle_call = lines_call,
    .terminate = lines_terminate,
    .inspect = lines_inspect,
    .args = lines_args,
};

SHOAL_PLUGIN(.name = "lines", .version = "1.0.0", .behaviours = SHOAL_BEHAVIOURS(&lines));
