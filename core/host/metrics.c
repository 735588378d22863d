/* metrics.c - shoald's /metrics endpoint: the listening socket, the
 * libmicrohttpd daemon that serves it, and the snapshots the host thread
 * publishes for it (the protocol is in metrics.h). Rendering is
 * metrics_text.c. Built into shoald only.
 */
#include "host/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/listen.h"
#include "pool/pool.h"

/* What one client may hold: connections at once (past it, a new one is
 * closed at once), seconds of silence before a connection is closed
 * (a request trickled or a reply not read), and the memory a connection's
 * request may take. */
#define METRICS_CONNECTIONS 256u
#define METRICS_TIMEOUT_S 10u
#define METRICS_CONN_MEMORY (32u * 1024u)

struct shoal_metrics_s {
    struct MHD_Daemon *daemon;
    int fd;
    uint16_t port;
    char listen[64];      /* as configured */
    char shown[80];       /* host:port actually bound */
    bool told;            /* the address was logged */
    uint64_t told_change; /* the generation whose changed listen was logged */
    pthread_mutex_t lock; /* cur, retired, and each snapshot's users */
    shoal_metrics_snap_t *cur;
    shoal_metrics_snap_t *retired;
};

/* ---- snapshots (host thread, but for take/give) --------------------------- */

static void snap_free(shoal_metrics_snap_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->npools; i++)
        shoal__pool_unref(s->rt, s->pools[i].rec);
    free(s->pools);
    free(s);
}

static shoal_metrics_snap_t *snap_new(shoal_host_t *h)
{
    shoal_metrics_snap_t *s = calloc(1, sizeof *s);
    if (s == NULL || (h->npools && (s->pools = calloc(h->npools, sizeof *s->pools)) == NULL)) {
        free(s);
        return NULL;
    }
    s->rt = h->rt;
    s->generation = h->generation;
    s->reloads = h->reloads;
    s->reloads_failed = h->reloads_failed;
    for (size_t i = 0; i < h->ngone; i++) {
        s->gone.accepted += h->gone[i].accepted;
        s->gone.handled += h->gone[i].handled;
        s->gone.failed += h->gone[i].failed;
        s->gone.dropped += h->gone[i].dropped;
        s->gone.refused += h->gone[i].refused;
    }
    for (size_t i = 0; i < h->npools; i++) {
        shoal_metrics_pool_t *mp = &s->pools[s->npools++];
        snprintf(mp->name, sizeof mp->name, "%s", h->pools[i].name);
        shoal__pool_ref(h->pools[i].rec);
        mp->rec = h->pools[i].rec;
        mp->current = !h->pools[i].draining;
    }
    return s;
}

/* Whether s still says what h runs. */
static bool snap_same(const shoal_metrics_snap_t *s, const shoal_host_t *h)
{
    if (s == NULL || s->rt != h->rt || s->generation != h->generation || s->reloads != h->reloads ||
        s->reloads_failed != h->reloads_failed || s->npools != h->npools)
        return false;
    for (size_t i = 0; i < h->npools; i++)
        if (s->pools[i].rec != h->pools[i].rec || s->pools[i].current == h->pools[i].draining)
            return false;
    return true;
}

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

void shoal__metrics_sync(shoal_metrics_t *m, shoal_host_t *h)
{
    if (m == NULL)
        return;
    if (!m->told) {
        m->told = true;
        shoal__host_log(h, SHOAL_LOG_INFO, "metrics: serving GET /metrics on http://%s/metrics",
                        m->shown);
    }
    const char *want = h->config->metrics.listen ? h->config->metrics.listen->text : "none";
    if (strcmp(want, m->listen) != 0 && m->told_change != h->generation) {
        m->told_change = h->generation;
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "metrics.listen: %s -> %s takes effect at the next start (still serving "
                        "%s)",
                        m->listen, want, m->shown);
    }
    shoal_metrics_snap_t *next = NULL;
    if (!snap_same(m->cur, h) && (next = snap_new(h)) == NULL)
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
        snap_free(done);
        done = n;
    }
}

/* ---- HTTP (libmicrohttpd's thread) ------------------------------------------ */

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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)state;
    shoal_metrics_t *m = cls;
    if (strcmp(url, "/metrics") != 0)
        return reply(conn, MHD_HTTP_NOT_FOUND, "not found: shoald serves GET /metrics\n", false);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET /metrics\n", true);
    shoal_metrics_snap_t *s = snap_take(m);
    if (s == NULL)
        return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "shoald is starting\n", false);
    shoal_metrics_buf_t b = {.cap = 16384};
    b.text = malloc(b.cap);
    b.failed = b.text == NULL;
    if (!b.failed)
        shoal__metrics_render(s, &b);
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
    MHD_destroy_response(r);
    return rc;
}

/* ---- start and stop --------------------------------------------------------- */

int shoal__metrics_open(const shoal_config_t *c, shoal_metrics_t **out, shoal_diag_t *err)
{
    *out = NULL;
    const shoal_listen_t *l = c->metrics.listen;
    if (l == NULL)
        return SHOAL_OK;
    const shoal_node_t *at = c->metrics.listen_at;
    shoal_metrics_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return SHOAL_ENOMEM;
    pthread_mutex_init(&m->lock, NULL);
    snprintf(m->listen, sizeof m->listen, "%s", l->text);
    int rc = SHOAL_ELOAD;
    m->fd = shoal__listen_open(l, 128, &m->port);
    if (m->fd < 0) {
        int e = errno;
        shoal__diag_set(err, at->file, at->line, at->col,
                        "metrics.listen: cannot listen on %s: %s%s", l->text, strerror(e),
                        e == EADDRINUSE ? " (another process has that port: pick another, or 0 "
                                          "for any free one)"
                        : e == EACCES   ? " (ports below 1024 need privileges)"
                                        : "");
        goto fail;
    }
    /* host:port as bound: the configured host, the port the kernel gave. */
    size_t hl = (size_t)(strrchr(l->text, ':') - l->text);
    snprintf(m->shown, sizeof m->shown, "%.*s:%u", (int)hl, l->text, (unsigned)m->port);
    m->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL, on_request, m,
        MHD_OPTION_LISTEN_SOCKET, m->fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_CONN_MEMORY, MHD_OPTION_END);
    if (m->daemon == NULL) {
        shoal__diag_set(err, at->file, at->line, at->col,
                        "metrics.listen: cannot serve %s: the HTTP server did not start", l->text);
        close(m->fd);
        goto fail;
    }
    *out = m;
    return SHOAL_OK;
fail:
    pthread_mutex_destroy(&m->lock);
    free(m);
    return rc;
}

void shoal__metrics_close(shoal_metrics_t *m)
{
    if (m == NULL)
        return;
    MHD_stop_daemon(m->daemon); /* joins its thread, closes the listening socket */
    snap_free(m->cur);
    while (m->retired != NULL) {
        shoal_metrics_snap_t *n = m->retired->next;
        snap_free(m->retired);
        m->retired = n;
    }
    pthread_mutex_destroy(&m->lock);
    free(m);
}
