/* metrics.c - shoald's /metrics endpoint: the listening socket, the
 * libmicrohttpd daemon that serves it, and the snapshots the host thread
 * publishes for it (the protocol is in metrics.h; metrics_snap.c builds
 * them). Rendering is metrics_text.c. Built into shoald only.
 */
#include "host/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/listen.h"
#include "sched/futex.h" /* shoal__now_ns */

/* What clients may hold: connections at once (past it, a new one closes
 * the one open longest: see conns_t), seconds of
 * silence before a connection is closed (a request trickled or a reply not
 * read), and the memory a connection's request may take. HARD is
 * libmicrohttpd's own limit, past which a new connection is closed at once:
 * it leaves room for the evicted ones until libmicrohttpd has closed them
 * (its next turn). */
#define METRICS_CONNECTIONS 256u
#define METRICS_HARD_CONNECTIONS (METRICS_CONNECTIONS + 64u)
#define METRICS_TIMEOUT_S 10u
#define METRICS_CONN_MEMORY (32u * 1024u)
/* Connections the kernel queues until libmicrohttpd's thread accepts
 * them. Past it, a new connection's SYN is dropped and its client tries
 * again only a second later: a flood of clients that hang up (each
 * served in some 100 us) filled 128 in a few milliseconds, and a
 * scraper's SYN dropped with the flood's. The kernel caps it at
 * net.core.somaxconn (4096 on Linux 5.4 and later). */
#define METRICS_BACKLOG 1024
/* A reply this big (some 80 pools) is shared: rendered at most once every
 * METRICS_SHARE_NS, or ten times its render time if longer, and queued as
 * it is for the requests in between (see on_request). */
#define METRICS_SHARE_BYTES (256u * 1024u)
#define METRICS_SHARE_NS 1000000000u

/* One connection (its socket context), on its server's list while it
 * counts as open. */
typedef struct conn_s {
    struct conn_s *prev, *next;
    struct MHD_Connection *mhd;
    bool listed; /* false once evicted: closing */
} conn_t;

/* One server's open connections, oldest first. Each carries one request:
 * a reply is queued as soon as the request's head is read, and
 * libmicrohttpd then closes the connection after it (no keep-alive), so
 * the oldest connection is the oldest request. When a new one would be
 * one too many, the head is evicted: its socket shut down (libmicrohttpd
 * then closes it), so clients that trickle into every slot, or never
 * read, cannot keep a scraper out; a scrape is evicted only if the slots
 * turn over entirely while it runs. libmicrohttpd's thread only (every
 * callback below runs on it, and it closes a socket only after its CLOSED
 * notice), but the two counters. */
typedef struct conns_s {
    conn_t *head, *tail;
    size_t listed;
    shoal_metrics_t *m;
    /* The last big reply (a reference of our own: libmicrohttpd counts a
     * response's users and frees its text with the last), the snapshot it
     * was rendered from (its seq) and until when it is queued again
     * (shoal__now_ns). NULL: none. */
    struct MHD_Response *shared;
    uint64_t shared_seq, shared_until;
} conns_t;

/* One address served: its own daemon (and thread) on its own socket. */
typedef struct server_s {
    struct MHD_Daemon *daemon; /* NULL: not serving */
    conns_t *conns;            /* its connections (with daemon) */
    char listen[64];           /* as configured ("none" when not serving) */
    char shown[80];            /* host:port as bound (the kernel's port for 0) */
} server_t;

struct shoal_metrics_s {
    /* host thread only */
    server_t now;
    server_t next;      /* a reload's, between prepare and commit */
    bool next_pending;  /* prepared: commit makes next the one */
    shoal_host_t *host; /* for its log, once attached */
    /* shared with the servers' threads */
    pthread_mutex_t lock; /* cur, retired, and each snapshot's users */
    shoal_metrics_snap_t *cur;
    shoal_metrics_snap_t *retired;
    _Atomic uint64_t ledger_seen[5]; /* the snapshots' ledger_seen (metrics.h) */
    /* Statistics of every server's connections (relaxed: read alone, no
     * other memory depends on them): open now, and evicted ever. */
    _Atomic uint64_t http_open, http_evicted;
    uint64_t snaps; /* host thread: snapshots published (their seq) */
    /* Replies rendered, and queued from a shared render (relaxed, alike). */
    _Atomic uint64_t http_rendered, http_shared;
    uint64_t evicted_said;    /* host thread: evictions logged so far, */
    uint64_t evicted_said_at; /* and when (shoal__now_ns) */
};

/* ---- snapshots (host thread, but for take/give) --------------------------- */

/* The scrape's side: the current snapshot, counted as used, or NULL. */
static shoal_metrics_snap_t *snap_take(shoal_metrics_t *m)
{
    pthread_mutex_lock(&m->lock);
    shoal_metrics_snap_t *s = m->cur;
    if (s != NULL)
        s->users++;
    pthread_mutex_unlock(&m->lock);
    return s;
}

static void snap_give(shoal_metrics_t *m, shoal_metrics_snap_t *s)
{
    pthread_mutex_lock(&m->lock);
    s->users--;
    pthread_mutex_unlock(&m->lock);
}

/* Says, at most every 10 s, how many connections were evicted since it
 * last said. */
static void say_evicted(shoal_metrics_t *m, shoal_host_t *h)
{
    uint64_t n = atomic_load_explicit(&m->http_evicted, memory_order_relaxed);
    if (n == m->evicted_said)
        return;
    uint64_t t = shoal__now_ns();
    if (m->evicted_said != 0 && t - m->evicted_said_at < 10000000000u)
        return;
    shoal__host_log(h, SHOAL_LOG_WARN,
                    "metrics: %" PRIu64 " connections to /metrics closed to make room (%u were "
                    "open: clients that trickle requests, do not read, or hold many "
                    "connections; the one open longest goes first; "
                    "%" PRIu64 " in all)",
                    n - m->evicted_said, METRICS_CONNECTIONS, n);
    m->evicted_said = n;
    m->evicted_said_at = t;
}

void shoal__metrics_sync(shoal_metrics_t *m, shoal_host_t *h)
{
    if (m == NULL)
        return;
    say_evicted(m, h);
    shoal_metrics_snap_t *next = NULL;
    if (!shoal__metrics_snap_same(m->cur, h) &&
        (next = shoal__metrics_snap_new(h, m->ledger_seen, ++m->snaps)) == NULL)
        shoal__host_log(h, SHOAL_LOG_ERROR, "metrics: out of memory: /metrics shows older pools");
    shoal_metrics_snap_t *done = NULL;
    pthread_mutex_lock(&m->lock);
    if (next != NULL) {
        if (m->cur != NULL) {
            m->cur->next = m->retired;
            m->retired = m->cur;
        }
        m->cur = next;
    }
    for (shoal_metrics_snap_t **pp = &m->retired; *pp != NULL;) {
        shoal_metrics_snap_t *s = *pp;
        if (s->users == 0) {
            *pp = s->next;
            s->next = done;
            done = s;
        } else {
            pp = &s->next;
        }
    }
    pthread_mutex_unlock(&m->lock);
    while (done != NULL) { /* the record references go on this thread, outside the lock */
        shoal_metrics_snap_t *n = done->next;
        shoal__metrics_snap_free(done);
        done = n;
    }
}

/* ---- HTTP (libmicrohttpd's thread) ------------------------------------------ */

static void conn_unlist(conns_t *cs, conn_t *e)
{
    *(e->prev ? &e->prev->next : &cs->head) = e->next;
    *(e->next ? &e->next->prev : &cs->tail) = e->prev;
    e->prev = e->next = NULL;
    e->listed = false;
    cs->listed--;
}

static void conn_list(conns_t *cs, conn_t *e)
{
    e->prev = cs->tail;
    e->next = NULL;
    *(cs->tail ? &cs->tail->next : &cs->head) = e;
    cs->tail = e;
    e->listed = true;
    cs->listed++;
}

/* Closes e to make room: its socket shut down both ways, which
 * libmicrohttpd reads as the client gone (its CLOSED notice follows). */
static void conn_evict(conns_t *cs, conn_t *e)
{
    conn_unlist(cs, e);
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(e->mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (i != NULL)
        (void)shutdown(i->connect_fd, SHUT_RDWR);
    atomic_fetch_add_explicit(&cs->m->http_evicted, 1, memory_order_relaxed);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    conns_t *cs = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_t *e = calloc(1, sizeof *e);
        *ctx = e;
        if (e == NULL)
            return; /* out of memory: served, never evicted */
        e->mhd = c;
        if (cs->listed >= METRICS_CONNECTIONS)
            conn_evict(cs, cs->head);
        conn_list(cs, e);
        atomic_fetch_add_explicit(&cs->m->http_open, 1, memory_order_relaxed);
        return;
    }
    conn_t *e = *ctx; /* MHD_CONNECTION_NOTIFY_CLOSED */
    if (e == NULL)
        return;
    if (e->listed)
        conn_unlist(cs, e);
    free(e);
    *ctx = NULL;
    atomic_fetch_sub_explicit(&cs->m->http_open, 1, memory_order_relaxed);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *text,
                             bool allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* The endpoint's own connections. */
static void render_http(shoal_metrics_t *m, shoal_metrics_buf_t *b)
{
    shoal__metrics_family(b, "shoal_metrics_http_connections", "gauge",
                          "Connections open to /metrics (on every address served), this one "
                          "included.");
    shoal__metrics_put(b, "shoal_metrics_http_connections %" PRIu64 "\n",
                       atomic_load_explicit(&m->http_open, memory_order_relaxed));
    shoal__metrics_family(b, "shoal_metrics_http_evicted_total", "counter",
                          "Connections to /metrics closed to make room for a new one when "
                          "the most allowed were open: the one open longest.");
    shoal__metrics_put(b, "shoal_metrics_http_evicted_total %" PRIu64 "\n",
                       atomic_load_explicit(&m->http_evicted, memory_order_relaxed));
    shoal__metrics_family(b, "shoal_metrics_http_replies_total", "counter",
                          "Replies to GET /metrics: rendered (this one included when it is), "
                          "or shared (a reply of 256 KiB or more rendered less than a second, "
                          "or ten times its render time, earlier, queued again).");
    shoal__metrics_put(b,
                       "shoal_metrics_http_replies_total{reply=\"rendered\"} %" PRIu64 "\n"
                       "shoal_metrics_http_replies_total{reply=\"shared\"} %" PRIu64 "\n",
                       atomic_load_explicit(&m->http_rendered, memory_order_relaxed),
                       atomic_load_explicit(&m->http_shared, memory_order_relaxed));
}

static void share_drop(conns_t *cs)
{
    if (cs->shared != NULL)
        MHD_destroy_response(cs->shared); /* the queued ones keep theirs */
    cs->shared = NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)state;
    conns_t *cs = cls;
    shoal_metrics_t *m = cs->m;
    if (strcmp(url, "/metrics") != 0)
        return reply(conn, MHD_HTTP_NOT_FOUND, "not found: shoald serves GET /metrics\n", false);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET /metrics\n", true);
    shoal_metrics_snap_t *s = snap_take(m);
    if (s == NULL)
        return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "shoald is starting\n", false);
    /* A big reply rendered moments ago, of the pools that run now, is
     * queued again: a render costs this thread time in proportion to the
     * pools (70 ms for 2,000 in a Debug build), and every request -- one
     * whose client sent it and hung up included -- would cost one, so a
     * single client could keep scrapers waiting behind renders; and every
     * connection would hold a copy until it is read. */
    uint64_t seq = s->seq, t0 = shoal__now_ns();
    if (cs->shared != NULL && cs->shared_seq == seq && t0 < cs->shared_until) {
        snap_give(m, s);
        atomic_fetch_add_explicit(&m->http_shared, 1, memory_order_relaxed);
        return MHD_queue_response(conn, MHD_HTTP_OK, cs->shared);
    }
    atomic_fetch_add_explicit(&m->http_rendered, 1, memory_order_relaxed);
    shoal_metrics_buf_t b = {.cap = 16384};
    b.text = malloc(b.cap);
    b.failed = b.text == NULL;
    if (!b.failed) {
        shoal__metrics_render(s, &b);
        render_http(m, &b);
    }
    snap_give(m, s);
    if (b.failed) {
        free(b.text);
        return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", false);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(b.len, b.text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(b.text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8");
    enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
    share_drop(cs);
    if (b.len >= METRICS_SHARE_BYTES) {
        uint64_t t1 = shoal__now_ns(), took = (t1 - t0) * 10u;
        cs->shared = r; /* our reference */
        cs->shared_seq = seq;
        cs->shared_until = t1 + (took > METRICS_SHARE_NS ? took : METRICS_SHARE_NS);
    } else {
        MHD_destroy_response(r);
    }
    return rc;
}

/* ---- start and stop --------------------------------------------------------- */

/* Whether l names the port the server now serves on (its text's port). */
static bool same_port(const server_t *now, const shoal_listen_t *l)
{
    const char *a = now != NULL && now->daemon != NULL ? strrchr(now->shown, ':') : NULL;
    const char *b = strrchr(l->text, ':');
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* Whether descriptor b is a copy of a, which is open: the same socket.
 * (No other copy of a is made, so a number reused for another file since
 * names another inode.) */
static bool same_socket(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Binds l and starts a daemon on it into *sv; err at `at` when it cannot.
 * now: what serves until then (a reload), or NULL. */
static int serve(shoal_metrics_t *m, const shoal_listen_t *l, const shoal_node_t *at, server_t *sv,
                 const server_t *now, shoal_diag_t *err)
{
    memset(sv, 0, sizeof *sv);
    snprintf(sv->listen, sizeof sv->listen, "%s", l->text);
    uint16_t port;
    int fd = shoal__listen_open(l, METRICS_BACKLOG, &port);
    if (fd < 0) {
        int e = errno;
        bool ours = e == EADDRINUSE && same_port(now, l);
        shoal__diag_set(err, at->file, at->line, at->col,
                        "metrics.listen: cannot listen on %s: %s%s", l->text, strerror(e),
                        ours ? " (shoald itself serves that port, and the new address is bound "
                               "before the old one is closed: move to another port first, or "
                               "restart shoald)"
                        : e == EADDRINUSE ? " (another process has that port: pick another, or 0 "
                                            "for any free one)"
                        : e == EACCES     ? " (ports below 1024 need privileges)"
                                          : "");
        return SHOAL_ELOAD;
    }
    /* host:port as bound: the configured host, the port the kernel gave. */
    size_t hl = (size_t)(strrchr(l->text, ':') - l->text);
    snprintf(sv->shown, sizeof sv->shown, "%.*s:%u", (int)hl, l->text, (unsigned)port);
    /* One thread polls every connection (epoll); none of them can block it.
     * It is handed a copy of the socket: libmicrohttpd 0.9.75 closes the
     * socket it was given on some of its failures (its thread not started)
     * and not on others, and closing it again could close a descriptor
     * another thread has opened since under the same number. */
    int given = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    sv->conns = given >= 0 ? calloc(1, sizeof *sv->conns) : NULL;
    if (sv->conns != NULL) {
        sv->conns->m = m;
        sv->daemon = MHD_start_daemon(
            MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL, on_request, sv->conns,
            MHD_OPTION_LISTEN_SOCKET, given, MHD_OPTION_CONNECTION_LIMIT,
            (unsigned)METRICS_HARD_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)METRICS_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
            (size_t)METRICS_CONN_MEMORY, MHD_OPTION_NOTIFY_CONNECTION, on_connection, sv->conns,
            MHD_OPTION_END);
    }
    if (sv->daemon == NULL && given >= 0 && same_socket(fd, given))
        close(given); /* libmicrohttpd left it open */
    close(fd);        /* the daemon, if it started, has its copy */
    if (sv->daemon == NULL) {
        free(sv->conns);
        sv->conns = NULL;
        shoal__diag_set(err, at->file, at->line, at->col,
                        "metrics.listen: cannot serve %s: the HTTP server did not start", l->text);
        return SHOAL_ELOAD;
    }
    return SHOAL_OK;
}

static void unserve(server_t *sv)
{
    if (sv->daemon != NULL)
        MHD_stop_daemon(sv->daemon); /* joins its thread, closes every connection */
    if (sv->conns != NULL)
        share_drop(sv->conns);
    free(sv->conns); /* each closed one freed its conn_t */
    memset(sv, 0, sizeof *sv);
    snprintf(sv->listen, sizeof sv->listen, "none");
}

int shoal__metrics_open(const shoal_config_t *c, shoal_metrics_t **out, shoal_diag_t *err)
{
    *out = NULL;
    shoal_metrics_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return SHOAL_ENOMEM;
    pthread_mutex_init(&m->lock, NULL);
    unserve(&m->now);
    unserve(&m->next);
    int rc;
    if (c->metrics.listen != NULL &&
        (rc = serve(m, c->metrics.listen, c->metrics.listen_at, &m->now, NULL, err)) != SHOAL_OK) {
        pthread_mutex_destroy(&m->lock);
        free(m);
        return rc;
    }
    *out = m;
    return SHOAL_OK;
}

/* ---- reloads (shoal_host_hook_t) --------------------------------------- */

/* A changed metrics.listen: the new address bound and served beside the old
 * one, or the reload refused. */
static int reload_prepare(void *user, const shoal_config_t *next, shoal_diag_t *err)
{
    shoal_metrics_t *m = user;
    const char *want = next->metrics.listen ? next->metrics.listen->text : "none";
    m->next_pending = strcmp(want, m->now.listen) != 0;
    if (!m->next_pending || next->metrics.listen == NULL)
        return SHOAL_OK;
    int rc = serve(m, next->metrics.listen, next->metrics.listen_at, &m->next, &m->now, err);
    m->next_pending = rc == SHOAL_OK;
    return rc;
}

static void reload_commit(void *user)
{
    shoal_metrics_t *m = user;
    if (!m->next_pending)
        return;
    m->next_pending = false;
    server_t was = m->now;
    m->now = m->next; /* next's daemon is now's: cleared, not stopped */
    memset(&m->next, 0, sizeof m->next);
    snprintf(m->next.listen, sizeof m->next.listen, "none");
    if (m->now.daemon != NULL)
        shoal__host_log(m->host, SHOAL_LOG_INFO,
                        "metrics: serving GET /metrics on http://%s/metrics%s%s%s", m->now.shown,
                        was.daemon ? " (no longer on " : "", was.daemon ? was.shown : "",
                        was.daemon ? ")" : "");
    else
        shoal__host_log(m->host, SHOAL_LOG_INFO,
                        "metrics: no longer serving %s (metrics.listen removed)", was.shown);
    unserve(&was);
}

static void reload_abort(void *user)
{
    shoal_metrics_t *m = user;
    m->next_pending = false;
    unserve(&m->next);
}

void shoal__metrics_attach(shoal_metrics_t *m, shoal_host_t *h)
{
    m->host = h;
    if (shoal__host_hook(h, &(shoal_host_hook_t){.prepare = reload_prepare,
                                                 .commit = reload_commit,
                                                 .abort = reload_abort,
                                                 .user = m}) != SHOAL_OK)
        shoal__host_log(h, SHOAL_LOG_ERROR,
                        "metrics: cannot follow reloads (too many hooks): metrics.listen changes "
                        "take effect at the next start");
    if (m->now.daemon != NULL)
        shoal__host_log(h, SHOAL_LOG_INFO, "metrics: serving GET /metrics on http://%s/metrics",
                        m->now.shown);
    shoal__metrics_sync(m, h);
}

void shoal__metrics_close(shoal_metrics_t *m)
{
    if (m == NULL)
        return;
    if (m->host != NULL)
        shoal__host_unhook(m->host, m);
    unserve(&m->now); /* no scrape runs after this */
    unserve(&m->next);
    shoal__metrics_snap_free(m->cur);
    while (m->retired != NULL) {
        shoal_metrics_snap_t *n = m->retired->next;
        shoal__metrics_snap_free(m->retired);
        m->retired = n;
    }
    pthread_mutex_destroy(&m->lock);
    free(m);
}
