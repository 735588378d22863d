/* client.c - one exchange with shoald's control socket (see client.h). The
 * socket is non-blocking and every wait is a poll() bounded by what is left
 * of the one deadline, so a server that accepts and never answers, answers
 * slowly, or closes at once costs at most the timeout.
 */
#include "host/client.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for `events` or the deadline: false on timeout. */
static bool wait_for(int fd, short events, uint64_t end)
{
    for (;;) {
        uint64_t now = now_ms();
        if (now >= end)
            return false;
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, end - now > 60000 ? 60000 : (int)(end - now));
        if (rc > 0)
            return true;
        if (rc < 0 && errno != EINTR)
            return true; /* let the next call report the error */
    }
}

/* Connects within the deadline: 0, ETIMEDOUT, or the errno of the failure.
 * A Unix socket whose backlog is full answers EAGAIN: tried again. */
static int connect_by(int fd, const struct sockaddr_un *sa, uint64_t end)
{
    for (;;) {
        if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN) {
            if (now_ms() >= end)
                return ETIMEDOUT;
            struct timespec nap = {0, 10 * 1000000};
            nanosleep(&nap, NULL);
            continue;
        }
        if (errno != EINPROGRESS)
            return errno;
        if (!wait_for(fd, POLLOUT, end))
            return ETIMEDOUT;
        int e = 0;
        socklen_t len = sizeof e;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
            return errno;
        return e;
    }
}

int shoal__client_ask(const char *path, const char *req, size_t len, uint64_t timeout_ms,
                      const char *prog, FILE *out, FILE *err)
{
    shoal_client_t cl = {
        .path = path, .prog = prog, .timeout_ms = timeout_ms, .out = out, .err = err};
    return shoal__client_exchange(&cl, req, len);
}

/* The collected body of a "0" answer (for a body callback). */
typedef struct body_s {
    char *data;
    size_t len, cap;
    bool too_big;
} body_t;

static void collect(body_t *b, const char *s, size_t n)
{
    if (b->too_big || n == 0)
        return;
    if (b->len + n > SHOAL_CLIENT_BODY_MAX) {
        b->too_big = true;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 8192;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (d == NULL) {
            b->too_big = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

/* Writes shoald's text as it comes, with any control character but a
 * newline or a tab written as \xNN: shoald's own answers have none (a
 * plugin's text is escaped where it is made), and whatever listens at a
 * socket shoalctl was pointed at does not get to drive the terminal
 * (ESC sequences went through). */
static void write_plain(FILE *to, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch >= 0x20 && ch != 0x7f) || ch == '\n' || ch == '\t')
            continue;
        fwrite(s + from, 1, i - from, to);
        fprintf(to, "\\x%02x", ch);
        from = i + 1;
    }
    fwrite(s + from, 1, n - from, to);
}

int shoal__client_exchange(const shoal_client_t *cl, const char *req, size_t len)
{
    const char *path = cl->path, *prog = cl->prog;
    uint64_t timeout_ms = cl->timeout_ms;
    FILE *out = cl->out, *err = cl->err;
    body_t body = {0};
    signal(SIGPIPE, SIG_IGN); /* a server gone mid-write is an error, not a death */
    uint64_t end = now_ms() + timeout_ms;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(err, "%s: socket path too long: %s\n", prog, path);
        return 2;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int e = fd < 0 ? errno : connect_by(fd, &sa, end);
    if (e == ETIMEDOUT)
        goto timed_out;
    if (e != 0) {
        fprintf(err, "%s: cannot reach shoald at %s%s%s%s: %s\n", prog, path,
                cl->origin ? " (" : "", cl->origin ? cl->origin : "", cl->origin ? ")" : "",
                strerror(e));
        if (fd >= 0)
            close(fd);
        return 2;
    }
    /* The request. If the server closes before taking it all (a refusal),
     * what it said is still read below. */
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            if (!wait_for(fd, POLLOUT, end))
                goto timed_out;
            continue;
        }
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    /* The status line, then the body as it comes. */
    char line[2048];
    size_t ln = 0;
    int status = -1;
    char buf[8192];
    size_t total = 0; /* bytes read: shoald's answers are bounded */
    for (;;) {
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EAGAIN) {
            if (!wait_for(fd, POLLIN, end))
                goto timed_out;
            continue;
        }
        if (got <= 0)
            break; /* the end (a reset after the answer is an end too) */
        if ((total += (size_t)got) > SHOAL_CLIENT_ANSWER_MAX) {
            fprintf(err, "%s: the answer from %s goes on past %d bytes: not shoald's (stopped)\n",
                    prog, path, SHOAL_CLIENT_ANSWER_MAX);
            close(fd);
            free(body.data);
            return 2;
        }
        size_t off = 0;
        if (status < 0) {
            while (off < (size_t)got && buf[off] != '\n') {
                if (ln + 1 < sizeof line)
                    line[ln++] = buf[off];
                off++;
            }
            if (off == (size_t)got)
                continue;
            off++; /* the newline */
            line[ln] = '\0';
            status = line[0] == '0' ? 0 : line[0] == '1' ? 1 : 2;
            if (status != 0) {
                fprintf(err, "%s: ", prog);
                write_plain(err, ln > 2 ? line + 2 : line, ln > 2 ? ln - 2 : ln);
                fputc('\n', err);
            }
        }
        if (status == 0 && cl->body != NULL)
            collect(&body, buf + off, (size_t)got - off);
        else
            write_plain(status == 0 ? out : err, buf + off, (size_t)got - off);
    }
    close(fd);
    if (status < 0) {
        fprintf(err, "%s: shoald at %s closed the connection without an answer\n", prog, path);
        free(body.data);
        return 2;
    }
    if (status == 0 && cl->body != NULL) {
        if (body.too_big)
            fprintf(err, "%s: the answer is too large (over %d bytes)\n", prog,
                    SHOAL_CLIENT_BODY_MAX);
        else
            status = cl->body(cl->arg, body.data ? body.data : "", body.len, out, err);
        if (body.too_big)
            status = 2;
    }
    free(body.data);
    return status;
timed_out:
    free(body.data);
    fflush(out);
    fprintf(err, "%s: no answer from shoald at %s within %llu ms%s\n", prog, path,
            (unsigned long long)timeout_ms, cl->late != NULL ? cl->late : "");
    if (fd >= 0)
        close(fd);
    return 1;
}

/* ---- text for a terminal ----------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s (at most n bytes) encoding
 * a printable character, or 0: no overlong forms, no surrogates, nothing
 * past U+10FFFF, no C1 controls (U+0080..U+009F). */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80)
        return (c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t' ? 1 : 0;
    if ((c & 0xe0) == 0xc0)
        len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        len = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
        return 0;
    return len;
}

bool shoal__client_write_text(FILE *out, const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data;
    bool text = true;
    for (size_t i = 0, n; text && i < len; i += n)
        text = (n = utf8_printable(s + i, len - i)) != 0;
    if (text) {
        fwrite(data, 1, len, out);
        if (len == 0 || data[len - 1] != '\n')
            fputc('\n', out);
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = s[i];
        switch (ch) {
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        default:
            if (ch >= 0x20 && ch < 0x7f)
                fputc(ch, out);
            else
                fprintf(out, "\\x%02x", ch);
        }
    }
    fputc('\n', out);
    return true;
}
