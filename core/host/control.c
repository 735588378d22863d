/* control.c - the control socket: one request per connection, answered by
 * the host thread (protocol in control.h). A request is read with a short
 * timeout and a size limit, so a slow or malformed client costs at most
 * that and gets an error line, never a crash.
 */
#include "host/control.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/runtime.h"

#define REQUEST_MAX (64 * 1024)
#define READ_TIMEOUT_MS 2000
#define CALL_TIMEOUT_MS 5000

struct shoal_control_s {
    int fd;
    char *path;
};

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
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(path);
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
        shoal__diag_set(err, NULL, 0, 0, "control socket %s: %s", path, strerror(errno));
        if (c->fd >= 0)
            close(c->fd);
        free(c->path);
        free(c);
        return SHOAL_EFAILED;
    }
    *out = c;
    return SHOAL_OK;
}

void shoal__control_close(shoal_control_t *c)
{
    if (c == NULL)
        return;
    close(c->fd);
    unlink(c->path);
    free(c->path);
    free(c);
}

int shoal__control_fd(const shoal_control_t *c) { return c->fd; }

/* ---- answering ------------------------------------------------------------ */

typedef struct reply_s {
    int fd;
} reply_t;

static void put(reply_t *r, const char *s, size_t n)
{
    while (n != 0) {
        ssize_t w = send(r->fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the client went away */
        s += w;
        n -= (size_t)w;
    }
}

static void say(reply_t *r, const char *fmt, ...) SHOAL_PRINTF(2, 3);
static void say(reply_t *r, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(r, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Reads one line (without the newline) into buf; false on timeout, EOF
 * before a newline, or a line longer than REQUEST_MAX. */
static bool read_line(int fd, char *buf, size_t *len)
{
    *len = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, READ_TIMEOUT_MS) <= 0)
            return false;
        ssize_t got = recv(fd, buf + *len, REQUEST_MAX - *len, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        char *nl = memchr(buf + *len, '\n', (size_t)got);
        *len += (size_t)got;
        if (nl != NULL) {
            *len = (size_t)(nl - buf);
            buf[*len] = '\0';
            return true;
        }
        if (*len >= REQUEST_MAX)
            return false;
    }
}

static shoal_host_pool_t *pool_named(shoal_host_t *h, const char *name)
{
    for (size_t i = 0; i < h->npools; i++)
        if (!h->pools[i].draining && strcmp(h->pools[i].name, name) == 0)
            return &h->pools[i];
    return NULL;
}

/* Next space-separated word of *s (NUL-terminated in place), or NULL. */
static char *word(char **s)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0')
        return NULL;
    char *w = p;
    while (*p != '\0' && *p != ' ' && *p != '\t')
        p++;
    if (*p != '\0')
        *p++ = '\0';
    *s = p;
    return w;
}

static bool number(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0 || v > max)
        return false;
    *out = v;
    return true;
}

static void refused(reply_t *r, int rc) { say(r, "1 %s\n", shoal_strerror(rc)); }

static void inspect_one(shoal_host_t *h, reply_t *r, shoal_host_pool_t *hp, bool *ok)
{
    shoal_answer_t a;
    int rc = shoal_runtime_inspect(h->rt, hp->pid, CALL_TIMEOUT_MS, &a);
    if (rc == SHOAL_OK && a.status == SHOAL_OK && a.size > 0) {
        put(r, a.data, a.size - 1); /* without the NUL */
    } else {
        say(r, "{\"error\":\"%s\"}", shoal_strerror(rc != SHOAL_OK ? rc : a.status));
        *ok = false;
    }
    shoal_answer_release(&a);
}

static void serve(shoal_host_t *h, reply_t *r, char *line, const char *config, bool *stop)
{
    char *rest = line;
    char *cmd = word(&rest);
    if (cmd == NULL) {
        say(r, "2 empty request\n");
        return;
    }
    if (strcmp(cmd, "status") == 0) {
        /* Read from the pools' records: answers whatever the pools do. */
        static char ledgers[16384];
        shoal__host_ledgers(h, ledgers, sizeof ledgers);
        say(r, "0 ok\n");
        say(r, "generation %" PRIu64 "\nreloads %" PRIu64 " ok, %" PRIu64 " failed\nthreads %u\n",
            h->generation, h->reloads, h->reloads_failed, shoal_runtime_threads(h->rt));
        put(r, ledgers, strlen(ledgers));
        for (size_t i = 0; i < h->npools; i++) {
            shoal_pool_stats_t st;
            shoal__host_peek(&h->pools[i], &st);
            say(r, "pool %s size %u target %u in_flight %" PRIu64 " forwarded %" PRIu64 "%s\n",
                h->pools[i].name, st.pool_size, st.target_size, st.queue_depth,
                st.messages_forwarded,
                shoal__pool_is_ended(h->pools[i].rec) ? " ended"
                : h->pools[i].draining                ? " draining"
                                                      : "");
        }
        say(r, "%s", shoal__host_stall_lines(h));
        return;
    }
    if (strcmp(cmd, "inspect") == 0) {
        char *name = word(&rest);
        if (name != NULL) {
            shoal_host_pool_t *hp = pool_named(h, name);
            if (hp == NULL) {
                say(r, "1 unknown pool '%s'\n", name);
                return;
            }
            bool ok = true;
            say(r, "0 ok\n");
            inspect_one(h, r, hp, &ok);
            say(r, "\n");
            return;
        }
        say(r, "0 ok\n{");
        bool ok = true, first = true;
        for (size_t i = 0; i < h->npools; i++) {
            if (h->pools[i].draining)
                continue;
            say(r, "%s\"%s\":", first ? "" : ",", h->pools[i].name);
            inspect_one(h, r, &h->pools[i], &ok);
            first = false;
        }
        say(r, "}\n");
        return;
    }
    if (strcmp(cmd, "send") == 0 || strcmp(cmd, "call") == 0) {
        char *name = word(&rest);
        shoal_host_pool_t *hp = name ? pool_named(h, name) : NULL;
        if (name == NULL) {
            say(r, "2 usage: %s POOL DATA\n", cmd);
            return;
        }
        if (hp == NULL) {
            say(r, "1 unknown pool '%s'\n", name);
            return;
        }
        while (*rest == ' ')
            rest++;
        uint64_t timeout = CALL_TIMEOUT_MS;
        if (cmd[0] == 'c') { /* a last word that is a number is the timeout */
            char *sp = strrchr(rest, ' ');
            uint64_t t;
            if (sp != NULL && number(sp + 1, 3600000, &t)) {
                timeout = t;
                *sp = '\0';
            }
        }
        size_t n = strlen(rest);
        if (cmd[0] == 's') {
            int rc = shoal_runtime_send(h->rt, hp->pid, 1, rest, n);
            if (rc != SHOAL_OK)
                refused(r, rc);
            else
                say(r, "0 ok\n");
            return;
        }
        shoal_answer_t a;
        int rc = shoal_runtime_call(h->rt, hp->pid, 1, rest, n, timeout, &a);
        if (rc == SHOAL_OK && a.status != SHOAL_OK)
            rc = a.status;
        if (rc != SHOAL_OK) {
            refused(r, rc);
        } else {
            say(r, "0 ok\n");
            put(r, a.data, a.size);
            say(r, "\n");
        }
        shoal_answer_release(&a);
        return;
    }
    if (strcmp(cmd, "scale") == 0) {
        char *name = word(&rest), *num = word(&rest);
        uint64_t n;
        if (name == NULL || !number(num, SHOAL_POOL_MAX_SIZE, &n) || word(&rest) != NULL) {
            say(r, "2 usage: scale POOL N (N a number of workers)\n");
            return;
        }
        shoal_host_pool_t *hp = pool_named(h, name);
        if (hp == NULL) {
            say(r, "1 unknown pool '%s'\n", name);
            return;
        }
        int size = shoal_pool_set_size(h->rt, hp->pid, (uint32_t)n, CALL_TIMEOUT_MS);
        if (size < 0) {
            refused(r, size);
            return;
        }

        shoal__host_log(h, SHOAL_LOG_INFO, "control: scale %s to %" PRIu64 ": size now %d", name, n,
                        size);
        say(r, "0 ok\n%d\n", size);
        return;
    }
    if (strcmp(cmd, "reload") == 0) {
        uint64_t before = h->generation;
        char why[1200];
        int rc = shoal__host_reload(h, config, why, sizeof why);
        if (rc != SHOAL_OK)
            say(r, "1 reload failed: %s; generation %" PRIu64 " keeps running\n", why,
                h->generation);
        else
            say(r, "0 ok\ngeneration %" PRIu64 " (was %" PRIu64 ")\n", h->generation, before);
        return;
    }
    if (strcmp(cmd, "diff") == 0) {
        /* What a reload from PATH would do (shoald --check --diff). */
        while (*rest == ' ')
            rest++;
        if (*rest == '\0') {
            say(r, "2 usage: diff PATH\n");
            return;
        }
        shoal_config_t *c = NULL;
        shoal_diag_t err = {0};
        char buf[1200];
        int rc = shoal__config_load(rest, &c, &err);
        if (rc == SHOAL_OK)
            rc = shoal__config_resolve(c, h->loader, &err);
        if (rc != SHOAL_OK) {
            say(r, "1 %s\n", shoal__diag_format(&err, buf, sizeof buf));
        } else {
            shoal__host_plan(h, c, buf, sizeof buf);
            say(r, "0 ok\ngeneration %" PRIu64 " -> %" PRIu64 ": %s\n", h->generation,
                h->generation + 1, buf);
        }
        shoal__config_free(c);
        return;
    }
    if (strcmp(cmd, "stop") == 0) {
        *stop = true;
        say(r, "0 ok\nstopping: draining every pool\n");
        return;
    }
    say(r, "2 unknown command '%.64s' (status, inspect, send, call, scale, reload, stop)\n", cmd);
}

void shoal__control_serve(shoal_control_t *c, shoal_host_t *h, const char *config, bool *stop)
{
    int fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    char *buf = malloc(REQUEST_MAX + 1);
    reply_t r = {fd};
    size_t len;
    if (buf == NULL)
        say(&r, "1 out of memory\n");
    else if (!read_line(fd, buf, &len))
        say(&r, "2 expected one line of at most %d bytes, ended by a newline\n", REQUEST_MAX);
    else
        serve(h, &r, buf, config, stop);
    free(buf);
    close(fd);
}
