/* control.c - the control socket's connections, served by the host thread
 * without blocking it (protocol, deadlines and limits in control.h; what
 * each request does is control_cmd.c).
 *
 * The listening socket, every connection and the agent's eventfd are
 * non-blocking and in the host thread's poll set. A connection reads its
 * request line as bytes come, under one deadline for the whole request;
 * a request that waits on an actor becomes a job for the agent (agent.h)
 * under the job's deadline; the reply is written as the socket takes it,
 * under one deadline for the whole reply. A connection past its deadline is
 * closed, counted and logged at debug; nothing a client does makes the host
 * thread wait.
 */
#include "host/control.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "host/control_conn.h"
#include "runtime/fault.h"

#define ACCEPT_BATCH 256 /* connections accepted per call, at most */

int shoal__control_open(const char *path, shoal_control_t **out, shoal_diag_t *err)
{
    *out = NULL;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        shoal__diag_set(err, NULL, 0, 0, "control socket %s: path too long (at most %zu bytes)",
                        path, sizeof sa.sun_path - 1);
        return SHOAL_EINVAL;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    /* A socket file left by a shoald that died: replace it; one that a live
     * server answers on: refuse. */
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
        close(probe);
        shoal__diag_set(err, NULL, 0, 0, "control socket %s: another shoald answers there", path);
        return SHOAL_EBUSY;
    }
    if (probe >= 0)
        close(probe);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
        unlink(path);
    } else if (lstat(path, &st) == 0) {
        shoal__diag_set(err, NULL, 0, 0,
                        "control socket %s: a %s is there, not a socket: left as it is (name "
                        "another path)",
                        path,
                        S_ISDIR(st.st_mode)    ? "directory"
                        : S_ISFIFO(st.st_mode) ? "FIFO"
                        : S_ISREG(st.st_mode)  ? "regular file"
                                               : "file");
        return SHOAL_EINVAL;
    }
    shoal_control_t *c = calloc(1, sizeof *c);
    if (c == NULL || (c->path = strdup(path)) == NULL) {
        free(c);
        return SHOAL_ENOMEM;
    }
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    mode_t old = umask(0177); /* the socket file is created 0600 */
    int rc = c->fd < 0 ? -1 : bind(c->fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || listen(c->fd, 64) != 0) {
        int e = errno;
        shoal__diag_set(err, NULL, 0, 0, "control socket %s: %s%s", path, strerror(e),
                        e == ENOENT   ? " (its directory does not exist: create it; under systemd, "
                                        "RuntimeDirectory=shoal makes /run/shoal)"
                        : e == EACCES ? " (this user may not create a file there)"
                                      : "");
        if (c->fd >= 0)
            close(c->fd);
        free(c->path);
        free(c);
        return SHOAL_EFAILED;
    }
    /* What is ours to unlink at the end: this file, known by its device
     * and inode, held open (O_PATH) so that its inode number is not given
     * to another file while we run (a file unlinked and made again often
     * gets the same one). */
    struct stat made;
    c->path_fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if ((c->path_fd >= 0 && fstat(c->path_fd, &made) == 0) ||
        (c->path_fd < 0 && lstat(path, &made) == 0)) {
        c->dev = made.st_dev;
        c->ino = made.st_ino;
    }
    *out = c;
    return SHOAL_OK;
}

int shoal__control_unlink_on_crash(const shoal_control_t *c)
{
    return shoal__fault_set_unlink(c->path, c->dev, c->ino);
}

int shoal__control_start(shoal_control_t *c, shoal_host_t *h, const char *config)
{
    int rc = shoal__control_reload_hook(c, h);
    if (rc != SHOAL_OK)
        return rc;
    if ((rc = shoal__agent_start(h->rt, &c->agent)) != SHOAL_OK) {
        shoal__host_unhook(h, c);
        return rc;
    }
    c->h = h;
    c->config = config;
    return SHOAL_OK;
}

/* ---- one connection ---------------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void shoal__control_put(shoal_control_conn_t *k, const void *s, size_t n)
{
    if (k->too_large || n == 0)
        return;
    if (n > SHOAL_CONTROL_REPLY_MAX - k->out_len) {
        k->too_large = true;
        return;
    }
    if (k->out_len + n > k->out_cap) {
        size_t cap = k->out_cap ? k->out_cap : 256;
        while (cap < k->out_len + n)
            cap *= 2;
        char *o = realloc(k->out, cap);
        if (o == NULL) {
            k->too_large = true; /* refused as too large for this host now */
            return;
        }
        k->out = o;
        k->out_cap = cap;
    }
    memcpy(k->out + k->out_len, s, n);
    k->out_len += n;
}

void shoal__control_say(shoal_control_conn_t *k, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        shoal__control_put(k, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Closes k (its slot is freed by sweep). Unread input is discarded first,
 * so the client reads the reply and then an end of file, not a reset. The
 * end of file is a shutdown, not only the close: a process that plugin
 * code forked holds a copy of the descriptor, and the last close of the
 * connection would be its. */
static void conn_end(shoal_control_conn_t *k)
{
    if (k->fd < 0)
        return;
    char scratch[4096];
    for (int i = 0; i < 16 && recv(k->fd, scratch, sizeof scratch, MSG_DONTWAIT) > 0; i++)
        continue;
    shutdown(k->fd, SHUT_RDWR);
    close(k->fd);
    k->fd = -1;
}

static void conn_free(shoal_control_conn_t *k)
{
    conn_end(k);
    for (size_t i = 0; i < k->ntargets; i++)
        free(k->targets[i].name);
    free(k->targets);
    free(k->diff_path);
    free(k->in);
    free(k->out);
    free(k);
}

/* Closes k before its reply was done: counted and logged at debug. */
static void drop(shoal_control_t *c, shoal_control_conn_t *k, const char *fmt, ...)
    SHOAL_PRINTF(3, 4);
static void drop(shoal_control_t *c, shoal_control_conn_t *k, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    c->dropped++;
    shoal__host_log(c->h, SHOAL_LOG_DEBUG, "control: dropped a client (fd %d): %s", k->fd, why);
    conn_end(k);
}

/* Writes what the socket takes now; closes k once its reply is out. */
static void conn_write(shoal_control_t *c, shoal_control_conn_t *k)
{
    while (k->fd >= 0 && k->out_sent < k->out_len) {
        ssize_t w = send(k->fd, k->out + k->out_sent, k->out_len - k->out_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (w <= 0) {
            drop(c, k, "it went away before its reply (%s)", strerror(errno));
            return;
        }
        k->out_sent += (size_t)w;
    }
    if (k->fd >= 0 && k->state == SHOAL_CONTROL_WRITING)
        conn_end(k);
}

/* The reply is whole: write it from now on, under its deadline. */
static void reply_ready(shoal_control_t *c, shoal_control_conn_t *k, uint64_t now)
{
    if (k->too_large) { /* refused whole, never cut short */
        k->out_len = 0;
        k->too_large = false;
        shoal__control_say(k, "1 reply too large (over %d bytes): ask for less (inspect POOL)\n",
                           SHOAL_CONTROL_REPLY_MAX);
    }
    k->state = SHOAL_CONTROL_WRITING;
    k->deadline_ms = now + SHOAL_CONTROL_REPLY_MS;
    conn_write(c, k);
}

void shoal__control_reply_ready(shoal_control_t *c, shoal_control_conn_t *k)
{
    reply_ready(c, k, now_ms());
}

/* The request is in: do it, then write the reply or wait for its job. */
static void request(shoal_control_t *c, shoal_control_conn_t *k, bool *stop)
{
    shoal__control_request(c, k, k->in, stop);
    uint64_t now = now_ms();
    if (k->state == SHOAL_CONTROL_RELOAD || k->state == SHOAL_CONTROL_DIFF) {
        k->deadline_ms = UINT64_MAX; /* answered when the reload, or its diff, ends */
    } else if (k->job != 0) {
        k->state = SHOAL_CONTROL_WAITING;
        k->deadline_ms = now + k->job_timeout_ms + SHOAL_CONTROL_GRACE_MS;
    } else {
        reply_ready(c, k, now);
    }
}

/* Reads what has come of the request; does it once its line is whole. */
static void conn_read(shoal_control_t *c, shoal_control_conn_t *k, bool *stop)
{
    while (k->fd >= 0 && k->state == SHOAL_CONTROL_READING) {
        if (k->in_len == k->in_cap) {
            if (k->in_len >= SHOAL_CONTROL_REQUEST_MAX)
                goto malformed;
            size_t cap = k->in_cap ? k->in_cap * 2 : 512;
            if (cap > SHOAL_CONTROL_REQUEST_MAX)
                cap = SHOAL_CONTROL_REQUEST_MAX;
            char *in = realloc(k->in, cap + 1); /* + the NUL */
            if (in == NULL) {
                drop(c, k, "out of memory for its request");
                return;
            }
            k->in = in;
            k->in_cap = cap;
        }
        ssize_t got = recv(k->fd, k->in + k->in_len, k->in_cap - k->in_len, MSG_DONTWAIT);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (got < 0) {
            drop(c, k, "reading its request: %s", strerror(errno));
            return;
        }
        if (got == 0)
            goto malformed; /* the end before a newline */
        char *nl = memchr(k->in + k->in_len, '\n', (size_t)got);
        k->in_len += (size_t)got;
        if (nl != NULL) {
            /* A NUL would end the line for every reader after this one:
             * a call's DATA cut short without a word. */
            if (memchr(k->in, '\0', (size_t)(nl - k->in)) != NULL) {
                shoal__control_say(k, "2 a request line holds a NUL byte: not read\n");
                reply_ready(c, k, now_ms());
                return;
            }
            *nl = '\0';
            if (nl > k->in && nl[-1] == '\r') /* a line from telnet, or nc -C */
                nl[-1] = '\0';
            request(c, k, stop);
            return;
        }
    }
    return;
malformed:
    shoal__control_say(k, "2 expected one line of at most %d bytes, ended by a newline\n",
                       SHOAL_CONTROL_REQUEST_MAX);
    reply_ready(c, k, now_ms());
}

/* Frees the slots of closed connections, keeping the others' order. */
static void sweep(shoal_control_t *c)
{
    size_t j = 0;
    for (size_t i = 0; i < c->nconns; i++) {
        if (c->conns[i]->fd < 0)
            conn_free(c->conns[i]);
        else
            c->conns[j++] = c->conns[i];
    }
    c->nconns = j;
}

/* A new connection: served, or refused at once past the cap. */
static void conn_accept(shoal_control_t *c, int fd, bool *stop)
{
    shoal_control_conn_t *k = NULL;
    if (c->nconns == SHOAL_CONTROL_CONNS_MAX)
        sweep(c); /* one answered in this batch (status is) is closed, not open */
    if (c->nconns == SHOAL_CONTROL_CONNS_MAX || (k = calloc(1, sizeof *k)) == NULL) {
        static const char busy[] = "1 busy: too many control connections open (at most 64)\n";
        ssize_t w = send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w; /* best effort: it is closed either way */
        shoal_control_conn_t gone = {.fd = fd};
        conn_end(&gone);
        c->refused++;
        shoal__host_log(c->h, SHOAL_LOG_DEBUG,
                        "control: refused a client: %zu connections open (at most %d)", c->nconns,
                        SHOAL_CONTROL_CONNS_MAX);
        return;
    }
    k->fd = fd;
    k->state = SHOAL_CONTROL_READING;
    k->deadline_ms = now_ms() + SHOAL_CONTROL_REQUEST_MS;
    c->conns[c->nconns++] = k;
    c->accepted++;
    conn_read(c, k, stop); /* the request often came with the connection */
}

/* ---- the host thread's loop --------------------------------------------------- */

size_t shoal__control_pollfds(shoal_control_t *c, struct pollfd *fds)
{
    c->npolled = 0;
    if (c->h == NULL)
        return 0; /* not started */
    size_t n = 0;
    fds[n++] = (struct pollfd){.fd = c->fd, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = shoal__agent_fd(c->agent), .events = POLLIN};
    for (size_t i = 0; i < c->nconns; i++) {
        const shoal_control_conn_t *k = c->conns[i];
        short ev = k->state == SHOAL_CONTROL_READING                               ? POLLIN
                   : k->state == SHOAL_CONTROL_WRITING && k->out_sent < k->out_len ? POLLOUT
                                                                                   : 0;
        fds[n++] = (struct pollfd){.fd = k->fd, .events = ev};
    }
    c->npolled = c->nconns;
    return n;
}

int shoal__control_timeout(const shoal_control_t *c)
{
    if (c->nconns == 0)
        return -1;
    uint64_t now = now_ms(), first = UINT64_MAX;
    for (size_t i = 0; i < c->nconns; i++)
        if (c->conns[i]->deadline_ms < first)
            first = c->conns[i]->deadline_ms;
    if (first <= now)
        return 0;
    return first - now > INT32_MAX ? INT32_MAX : (int)(first - now);
}

/* Results the agent posted: each completes its connection's reply (a
 * result whose connection is gone, or answered at its deadline, is
 * dropped). */
static void take_results(shoal_control_t *c)
{
    shoal_agent_done_t *d = shoal__agent_take(c->agent);
    while (d != NULL) {
        shoal_agent_done_t *next = d->next;
        for (size_t i = 0; i < c->nconns; i++) {
            shoal_control_conn_t *k = c->conns[i];
            if (k->fd >= 0 && k->state == SHOAL_CONTROL_WAITING && k->job == d->id) {
                shoal__control_answer(c, k, d);
                reply_ready(c, k, now_ms());
                break;
            }
        }
        shoal__agent_done_free(d);
        d = next;
    }
}

static void deadlines(shoal_control_t *c)
{
    uint64_t now = now_ms();
    for (size_t i = 0; i < c->nconns; i++) {
        shoal_control_conn_t *k = c->conns[i];
        if (k->fd < 0 || k->deadline_ms > now)
            continue;
        switch (k->state) {
        case SHOAL_CONTROL_READING: {
            static const char late[] = "2 no whole request line within 2000 ms\n";
            ssize_t w = send(k->fd, late, sizeof late - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w; /* best effort */
            drop(c, k, "no whole request within %d ms (%zu bytes came)", SHOAL_CONTROL_REQUEST_MS,
                 k->in_len);
            break;
        }
        case SHOAL_CONTROL_WAITING: /* the agent did not answer: answer without it */
            shoal__control_answer(c, k, NULL);
            reply_ready(c, k, now);
            break;
        case SHOAL_CONTROL_WRITING:
            drop(c, k, "its reply was not taken within %d ms (%zu of %zu bytes)",
                 SHOAL_CONTROL_REPLY_MS, k->out_sent, k->out_len);
            break;
        case SHOAL_CONTROL_RELOAD: /* no deadline */
        case SHOAL_CONTROL_DIFF:
            break;
        }
    }
}

void shoal__control_handle(shoal_control_t *c, const struct pollfd *fds, size_t n, bool *stop)
{
    if (c->h == NULL || n < 2 || c->serving)
        return;
    c->serving = true;
    for (size_t i = 0; i < c->npolled && 2 + i < n; i++) {
        shoal_control_conn_t *k = c->conns[i];
        short re = fds[2 + i].revents;
        if (re == 0 || k->fd != fds[2 + i].fd)
            continue;
        if (k->state == SHOAL_CONTROL_READING)
            conn_read(c, k, stop);
        else if (k->state == SHOAL_CONTROL_WRITING)
            conn_write(c, k);
        else if (re & (POLLHUP | POLLERR)) /* WAITING, RELOAD or DIFF */
            drop(c, k, "it went away while its request ran");
    }
    c->npolled = 0;
    if (fds[1].revents & POLLIN)
        take_results(c);
    deadlines(c);
    sweep(c);
    for (int i = 0; i < ACCEPT_BATCH && (fds[0].revents & POLLIN); i++) {
        int fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            break; /* EAGAIN: none left (or a transient error: next time) */
        conn_accept(c, fd, stop);
    }
    sweep(c);
    c->serving = false;
}

void shoal__control_set_stopping(shoal_control_t *c, const char *why)
{
    if (c == NULL)
        return;
    c->stopping = true;
    /* A reload or diff asked is not done now (the diff that runs, its path
     * taken, is answered when it ends: control_diff.c). */
    for (size_t i = 0; i < c->nconns; i++) {
        shoal_control_conn_t *k = c->conns[i];
        if (k->fd >= 0 && (k->state == SHOAL_CONTROL_RELOAD ||
                           (k->state == SHOAL_CONTROL_DIFF && k->diff_path != NULL))) {
            shoal__control_say(k, "1 shoald is stopping%s%s: the %s asked was not done\n",
                               why != NULL ? ": " : "", why != NULL ? why : "",
                               k->state == SHOAL_CONTROL_RELOAD ? "reload" : "diff");
            reply_ready(c, k, now_ms());
        }
    }
}

void shoal__control_close(shoal_control_t *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->nconns; i++) {
        shoal_control_conn_t *k = c->conns[i];
        if (k->state == SHOAL_CONTROL_WAITING || k->state == SHOAL_CONTROL_RELOAD ||
            k->state == SHOAL_CONTROL_DIFF) {
            k->out_len = 0;
            shoal__control_say(k, "1 shoald is stopping\n");
            k->state = SHOAL_CONTROL_WRITING;
        }
        if (k->state == SHOAL_CONTROL_WRITING)
            conn_write(c, k); /* one last try, without waiting */
        conn_free(k);
    }
    c->nconns = 0;
    close(c->fd);
    /* Only the socket this process made: since, the path may have become
     * another shoald's (its socket removed by hand and a second shoald
     * started) or a file someone put there. */
    (void)shoal__unlink_own(c->path, c->dev, c->ino);
    if (c->path_fd >= 0)
        close(c->path_fd);
    shoal__agent_stop(c->agent);
    if (c->h != NULL)
        shoal__host_unhook(c->h, c);
    free(c->path);
    free(c);
}
