/* fuzz_control.c - libFuzzer target: the control socket's request handling
 * (control.c: connections, line reading, limits; control_cmd.c: every
 * command and its arguments; control_status.c; agent.c) with a host behind
 * it, served as shoald serves it: pollfds, poll, handle, on this thread.
 *
 * The host behind it (five pools and a source, their behaviours this
 * target's own, made once) is fuzz_control_host.c's; what both files
 * share is fuzz_control.h.
 *
 * ONE INPUT: byte 0 is the chunk byte C, byte 1 the end modes M, the rest
 * the streams, separated by 0x1e; each stream is one client connection (at
 * most 80, all open at once: past 64 the server refuses). A stream's bytes
 * are written in chunks cut at each C (C itself not sent), one chunk of
 * every stream per turn of the server loop, so a line comes in pieces,
 * several lines in one write, NUL bytes too; a stream that starts 0x1f X
 * is its rest repeated to X KiB (a line past the 64 KiB limit). Then each
 * stream ends as its two bits of M (by its index mod 4) say: 0 the write
 * side shut down, the answer read; 1 the same, but left open when a
 * newline was sent; 2 closed without reading; 3 closed after its first
 * chunk. Every answer read to its end must be a status line "0 ok", or
 * "1 REASON" / "2 REASON" and nothing after it (control.h); the input
 * ends when every answer is read and the server holds no connection.
 *
 * WHAT WOULD MAKE LATER INPUTS MEANINGLESS, kept from doing so:
 *   - diff PATH: PATH is replaced (in the request's first line, as the
 *     server will read it) by one of nine files fuzz_control_host.c
 *     makes: the host's config, a changed one, bad YAML, an unknown
 *     behaviour, a missing plugin, a plugin that is no ELF file, a missing
 *     file, a directory, a FIFO. No file outside them is read.
 *   - reload re-reads the host's config, which never changes: it succeeds
 *     and changes nothing (the generation goes up).
 *   - stop is answered as shoald does, the rest of the input is served in
 *     stopping mode (shoal__control_set_stopping: only status, groups,
 *     inspect), and then the control socket is closed and opened again; the
 *     pools are never drained.
 *   - scale: every pool's bounds and size are put back after the input.
 * A chunk byte C of 0x80 or more serves the input as while shoald starts
 * its pools (host.h: starting; send, call, scale, epic and diff refused
 * busy, reloads waiting), until every chunk is sent; then the start ends,
 * and the reloads asked meanwhile run.
 * Every 4096 inputs the process's descriptors are counted: more than a
 * few past those after the first inputs is a finding (a leak per input).
 * FUZZ_CONTROL_SHOW=1 prints each request and its answer (for seeds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* SOCK_NONBLOCK */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_control.h"
#include "host/control.h"
#include "host/control_conn.h"
#include "host/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STREAMS_MAX 80
#define CHUNKS_MAX 64
#define STREAM_SEP 0x1e
#define REPEAT 0x1f    /* a stream that starts 0x1f X: its rest repeated to X KiB */
#define BUDGET_MS 8000 /* for one input: every request is answered well before */

/* ---- the clients ---------------------------------------------------------------- */

typedef struct client_s {
    int fd;     /* -1: closed */
    int mode;   /* how it ends (the top of this file) */
    bool reads; /* its answer is read and checked */
    bool ended; /* its answer has been read to the end */
    char *buf;  /* the stream: its bytes as sent */
    size_t len;
    size_t cuts[CHUNKS_MAX + 1]; /* chunk k is buf[cuts[k] .. cuts[k + 1]) */
    size_t nchunks;
    char *ans; /* the answer so far */
    size_t ans_len, ans_cap;
} client_t;

static client_t clients[STREAMS_MAX];
static size_t nclients;

/* diff PATH in the stream's first line (as control_cmd.c splits it): PATH
 * becomes one of fctl_diffs[], by its first byte; cuts inside it move to its
 * start, those after it with it. */
static void rewrite_diff(client_t *k)
{
    char *nl = memchr(k->buf, '\n', k->len);
    if (nl == NULL || memchr(k->buf, '\0', (size_t)(nl - k->buf)) != NULL)
        return;
    size_t end = (size_t)(nl - k->buf), p = 0;
    if (end > 0 && k->buf[end - 1] == '\r')
        end--;
    while (p < end && (k->buf[p] == ' ' || k->buf[p] == '\t'))
        p++;
    size_t w = p;
    while (p < end && k->buf[p] != ' ' && k->buf[p] != '\t')
        p++;
    if (p - w != 4 || memcmp(k->buf + w, "diff", 4) != 0)
        return;
    if (p < end)
        p++; /* its one separator */
    while (p < end && k->buf[p] == ' ')
        p++;
    if (p == end)
        return; /* no PATH: the host's own config */
    const char *to = fctl_diffs[(unsigned char)k->buf[p] % NDIFF];
    size_t old = end - p, new = strlen(to);
    char *b = malloc(k->len - old + new);
    if (b == NULL)
        fctl_fail("out of memory", NULL);
    memcpy(b, k->buf, p);
    memcpy(b + p, to, new);
    memcpy(b + p + new, k->buf + end, k->len - end);
    for (size_t i = 0; i <= k->nchunks; i++)
        k->cuts[i] = k->cuts[i] <= p ? k->cuts[i] : k->cuts[i] < end ? p : k->cuts[i] - old + new;
    free(k->buf);
    k->buf = b;
    k->len = k->len - old + new;
}

/* Stream s (its bytes, cut at every byte c) as client i. */
static void client_make(size_t i, const uint8_t *s, size_t n, uint8_t c, uint8_t modes)
{
    client_t *k = &clients[i];
    size_t want = n; /* 0x1f X: the rest, repeated up to X KiB */
    if (n >= 3 && s[0] == REPEAT) {
        want = (size_t)s[1] * 1024;
        s += 2, n -= 2;
    }
    *k = (client_t){.fd = -1, .mode = (modes >> (2 * (i % 4))) & 3};
    k->buf = malloc(want > n ? want : n ? n : 1);
    if (k->buf == NULL)
        fctl_fail("out of memory", NULL);
    k->cuts[0] = 0;
    do {
        for (size_t j = 0; j < n && (k->len < want || want <= n); j++) {
            if (s[j] != c)
                k->buf[k->len++] = (char)s[j];
            else if (k->nchunks + 1 < CHUNKS_MAX)
                k->cuts[++k->nchunks] = k->len;
        }
    } while (want > n && k->len > 0 && k->len < want);
    k->cuts[++k->nchunks] = k->len;
    rewrite_diff(k);
    k->reads = k->mode <= 1;
}

static void client_close(client_t *k)
{
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
}

/* Reads what k's answer has now; at its end (or a reset after it) k has
 * ended. */
static void client_read(client_t *k)
{
    while (k->fd >= 0 && k->reads && !k->ended) {
        if (k->ans_cap - k->ans_len < 4096) {
            size_t cap = k->ans_cap ? 2 * k->ans_cap : 8192;
            char *a = realloc(k->ans, cap);
            if (a == NULL)
                fctl_fail("out of memory", NULL);
            k->ans = a;
            k->ans_cap = cap;
        }
        ssize_t got = recv(k->fd, k->ans + k->ans_len, k->ans_cap - k->ans_len, MSG_DONTWAIT);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (got <= 0) {
            k->ended = true;
            client_close(k);
            return;
        }
        k->ans_len += (size_t)got;
    }
}

/* One turn of the host thread's loop (shoald_run.c), waiting at most ms,
 * then every client's answer read as far as it came. */
static void serve(int ms)
{
    struct pollfd fds[SHOAL_CONTROL_POLLFDS + STREAMS_MAX];
    client_t *of[STREAMS_MAX];
    size_t n = shoal__control_pollfds(fctl_control, fds), all = n;
    for (size_t i = 0; i < nclients; i++)
        if (clients[i].fd >= 0 && clients[i].reads && !clients[i].ended) {
            of[all - n] = &clients[i];
            fds[all++] = (struct pollfd){.fd = clients[i].fd, .events = POLLIN};
        }
    int t = shoal__control_timeout(fctl_control);
    (void)poll(fds, all, t < 0 || t > ms ? ms : t);
    bool stop = false;
    shoal__control_handle(fctl_control, fds, n, &stop);
    /* as shoald: after the handling, and not while it starts (the main
     * loop runs the reloads asked then, once the start has ended) */
    if (!stop && !fctl_host->starting && shoal__control_diff_wanted(fctl_control))
        shoal__control_diff_run(fctl_control);
    if (!stop && !fctl_host->starting && shoal__control_reload_wanted(fctl_control))
        (void)shoal__host_reload(fctl_host, fctl_control->config, NULL, 0);
    if (stop && !fctl_stopping) { /* as shoald: served while it drains */
        shoal__control_set_stopping(fctl_control, NULL);
        fctl_stopping = true;
    }
    for (size_t i = n; i < all; i++)
        if (fds[i].revents != 0)
            client_read(of[i - n]);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void client_connect(client_t *k)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", fctl_sock);
    for (int tries = 0; tries < 1000; tries++) {
        k->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (k->fd < 0)
            fctl_fail("socket", strerror(errno));
        if (connect(k->fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            return;
        int e = errno;
        client_close(k);
        if (e != EAGAIN)
            fctl_fail("connect", strerror(e));
        serve(1); /* the backlog is full: let the server accept */
    }
    fctl_fail("connect: the server accepts nothing", NULL);
}

/* Writes chunk r of k (what the socket takes; the server may have closed
 * it already: then the rest is not sent), then ends k if that was its last
 * (or first, for mode 3). */
static void client_turn(client_t *k, size_t r)
{
    if (k->fd < 0 || r >= k->nchunks)
        return;
    for (size_t off = k->cuts[r]; off < k->cuts[r + 1];) {
        ssize_t w = send(k->fd, k->buf + off, k->cuts[r + 1] - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            serve(1);
            continue;
        }
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    bool last = r + 1 == k->nchunks;
    if (k->mode == 3 || (k->mode == 2 && last)) {
        client_close(k); /* gone mid-request, or before its answer */
    } else if (last && (k->mode == 0 || memchr(k->buf, '\n', k->len) == NULL)) {
        shutdown(k->fd, SHUT_WR);
    }
}

/* An answer read to its end: "0 ok\n" and a body, or one line "1 ..." or
 * "2 ..." (control.h). */
static void check_answer(const client_t *k)
{
    const char *a = k->ans;
    const char *nl = k->ans_len ? memchr(a, '\n', k->ans_len) : NULL;
    char req[120];
    snprintf(req, sizeof req, "%.*s", (int)(k->len < 100 ? k->len : 100), k->buf);
    if (nl == NULL) {
        fprintf(stderr, "fuzz_control: request %s\n", req);
        fctl_fail("an answer without a status line", k->ans_len ? "(no newline)" : "(nothing)");
    }
    size_t line = (size_t)(nl - a);
    bool ok = (line == 4 && memcmp(a, "0 ok", 4) == 0) ||
              (line > 2 && (a[0] == '1' || a[0] == '2') && a[1] == ' ' && line + 1 == k->ans_len);
    if (!ok) {
        fprintf(stderr, "fuzz_control: request %s\nfuzz_control: answer %.*s\n", req,
                (int)(k->ans_len < 400 ? k->ans_len : 400), a);
        fctl_fail("an answer not as the protocol says", NULL);
    }
}

/* No more descriptors than after the first inputs (a few spare). */
static void check_fds(void)
{
    static long runs, base = -1;
    if (++runs % 4096 != 64)
        return;
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    if (d == NULL)
        return;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    if (base < 0)
        base = n;
    else if (n > base + 8) {
        fprintf(stderr, "fuzz_control: %ld descriptors open, %ld after the first inputs\n", n,
                base);
        fctl_fail("descriptors leak", NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fctl_host == NULL)
        fctl_setup();
    uint8_t c = size > 0 ? data[0] : 0, modes = size > 1 ? data[1] : 0;
    if (c & 0x80) { /* served as while shoald starts its pools (control_reload.c) */
        fctl_host->starting = true;
        fctl_host->starting_since_ns = shoal__now_ns();
        shoal__host_step(fctl_host, "starting pool fz, 1 of 1 (its first workers run init)");
    }
    const uint8_t *p = size > 2 ? data + 2 : data, *end = data + size;
    nclients = 0;
    while (p <= end && nclients < STREAMS_MAX) {
        const uint8_t *e = memchr(p, STREAM_SEP, (size_t)(end - p));
        e = e ? e : end;
        client_make(nclients++, p, (size_t)(e - p), c, modes);
        p = e + 1;
    }
    for (size_t i = 0; i < nclients; i++) {
        client_connect(&clients[i]);
        serve(0);
    }
    size_t rounds = 0;
    for (size_t i = 0; i < nclients; i++)
        rounds = clients[i].nchunks > rounds ? clients[i].nchunks : rounds;
    for (size_t r = 0; r < rounds; r++) {
        for (size_t i = 0; i < nclients; i++)
            client_turn(&clients[i], r);
        serve(0);
    }
    if (fctl_host->starting) { /* the start ends: the reloads asked meanwhile run */
        fctl_host->starting = false;
        fctl_host->step[0] = '\0';
    }
    uint64_t deadline = now_ms() + BUDGET_MS;
    for (;;) {
        bool waiting = fctl_control->nconns != 0;
        for (size_t i = 0; i < nclients && !waiting; i++)
            waiting = clients[i].reads && !clients[i].ended;
        if (!waiting)
            break;
        if (now_ms() > deadline) {
            for (size_t i = 0; i < nclients; i++)
                if (clients[i].reads && !clients[i].ended)
                    fprintf(stderr, "fuzz_control: unanswered: %.*s\n",
                            (int)(clients[i].len < 100 ? clients[i].len : 100), clients[i].buf);
            fctl_fail("requests unanswered", NULL);
        }
        serve(20);
    }
    static int show = -1; /* FUZZ_CONTROL_SHOW=1: each request and its answer on stderr */
    if (show < 0)
        show = getenv("FUZZ_CONTROL_SHOW") != NULL;
    for (size_t i = 0; i < nclients; i++) {
        client_t *k = &clients[i];
        if (show)
            fprintf(stderr, "> [mode %d] %.*s\n< %.*s\n", k->mode, (int)k->len, k->buf,
                    (int)k->ans_len, k->ans ? k->ans : "");
        if (k->reads)
            check_answer(k);
        client_close(k);
        free(k->buf);
        free(k->ans);
    }
    if (fctl_stopping) { /* a fresh control socket: the host never stopped */
        shoal__control_close(fctl_control);
        fctl_control_up();
    }
    fctl_reshape();
    check_fds();
    return 0;
}
