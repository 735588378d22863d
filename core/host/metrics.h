/* metrics.h - shoald's Prometheus endpoint: GET /metrics on the address of
 * `metrics.listen`, in the text exposition format 0.0.4. Built into shoald
 * only (with libmicrohttpd); libshoal knows nothing of it.
 *
 * THREADS
 *   libmicrohttpd's own thread (one per address served, polling every
 *   connection with epoll) accepts, reads and answers; it renders a reply from a snapshot and never
 *   waits on a pool, the dispatcher or the host thread. A client that sends
 *   nothing costs one of at most 256 connections for at most 10 s; one that
 *   trickles or never reads, until 256 newer connections have come (each
 *   past 256 closes the one open longest: metrics.c). A reply of 256 KiB
 *   or more is rendered at most once a second (or every ten times its
 *   render time) and shared by the requests between, so requests cannot
 *   keep the thread rendering, nor unread replies hold a copy each.
 *
 * WHAT THE RENDERER READS (and how it stays safe while the host reloads)
 *   The host thread alone changes shoal_host_t.pools (start, reload, tidy).
 *   After each change it publishes a snapshot (shoal__metrics_sync, called
 *   in every turn of its loop, compares and rebuilds when the pools,
 *   generation or reload counts differ): the name of each pool and source
 *   of the current config and a reference of its own on its record (none
 *   on a draining pool: that would keep it from ever being forgotten); the
 *   draining pools' counts, copied; the forgotten pools' final counts;
 *   generation and reloads. The swap is
 *   a pointer under `lock`, held for a few stores by either side. The
 *   renderer counts itself a user of the snapshot while it reads it; a
 *   snapshot replaced while in use is freed (its record references dropped)
 *   by the host thread at a later sync, once unused. The counters
 *   themselves are read live from the records at each scrape
 *   (shoal__pool_peek, shoal__pool_hist: lock-free), so a scrape is never
 *   staler than the last host-thread turn for which pools exist, and not at
 *   all for counts.
 */
#ifndef SHOAL_HOST_METRICS_H
#define SHOAL_HOST_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/diag.h"
#include "host/host.h"

typedef struct shoal_metrics_s shoal_metrics_t;

/* Binds c's metrics.listen and starts serving it (503 until attached);
 * with no metrics.listen, serves nothing (a reload may add one). Fails
 * (err at the listen key's file:line:col, naming the address and why: in
 * use, not permitted) when the address cannot be bound. Host thread,
 * before the host starts. */
int shoal__metrics_open(const shoal_config_t *c, shoal_metrics_t **out, shoal_diag_t *err);

/* Once h runs: logs the address served, publishes the first snapshot, and
 * hooks h's reloads (shoal__host_hook): a changed metrics.listen
 * is bound and served before the reload commits (if it cannot be, the
 * reload fails and nothing changes), the old address stops once it has
 * committed; a removed one stops. Host thread. */
void shoal__metrics_attach(shoal_metrics_t *m, shoal_host_t *h);

/* Publishes what h runs now if it changed since the last call (see above)
 * and frees the replaced snapshots no scrape uses any more. NULL m:
 * nothing. Host thread, each turn of its loop. */
void shoal__metrics_sync(shoal_metrics_t *m, shoal_host_t *h);

/* Stops serving (joins the servers' threads), unhooks the host's reloads,
 * drops every reference. NULL is fine. Host thread, before the host is
 * destroyed. */
void shoal__metrics_close(shoal_metrics_t *m);

/* ---- between metrics.c and metrics_text.c ---- */

typedef struct shoal_metrics_pool_s {
    char name[64];
    shoal_pool_t *rec; /* a reference of the snapshot's own */
} shoal_metrics_pool_t;

typedef struct shoal_metrics_snap_s {
    shoal_runtime_t *rt;
    uint64_t seq; /* which one: 1, 2, ... as published */
    uint64_t generation, reloads, reloads_failed;
    shoal_host_counts_t gone;     /* the forgotten pools' final counts, summed */
    shoal_host_counts_t draining; /* the draining pools' counts when it was taken */
    shoal_metrics_pool_t *pools;
    size_t npools;
    shoal_metrics_pool_t *sources; /* the running sources (source.h), their records */
    size_t nsources;
    /* The ledger's highest values rendered so far (accepted, handled,
     * failed, dropped, refused), the metrics object's, shared by every
     * snapshot: a scrape never shows one lower than an earlier scrape did
     * (render_host). */
    _Atomic uint64_t *ledger_seen;
    uint32_t users;                    /* scrapes reading it (under the owner's lock) */
    struct shoal_metrics_snap_s *next; /* in the retired list */
} shoal_metrics_snap_t;

/* metrics_snap.c: a snapshot of what h runs now (its pools, sources and
 * counts; references on the records of the current config's), numbered
 * seq, or NULL on ENOMEM; whether s still says what h runs; freeing one
 * (its references dropped; NULL is fine). Host thread. */
shoal_metrics_snap_t *shoal__metrics_snap_new(shoal_host_t *h, _Atomic uint64_t *ledger_seen,
                                              uint64_t seq);
bool shoal__metrics_snap_same(const shoal_metrics_snap_t *s, shoal_host_t *h);
void shoal__metrics_snap_free(shoal_metrics_snap_t *s);

/* A growing text buffer; on ENOMEM it stops growing and `failed` is set. */
typedef struct shoal_metrics_buf_s {
    char *text;
    size_t len, cap;
    bool failed;
} shoal_metrics_buf_t;

/* Renders every series from s into b (any thread holding s). */
void shoal__metrics_render(const shoal_metrics_snap_t *s, shoal_metrics_buf_t *b);

/* ---- between metrics_text.c and metrics_elastic.c ---- */

/* One pool as a scrape reads it: once, so every family shows the same
 * moment of it. */
typedef struct shoal_metrics_view_s {
    shoal_pool_stats_t st;
    shoal_pool_hist_t *hist;
    shoal_pull_worker_stats_t *workers; /* a pull pool's, by seat (the first ones) */
    size_t nworkers;
    char label[160]; /* the pool's name, escaped */
} shoal_metrics_view_t;

/* Appends to b as printf does (b->failed on ENOMEM). */
void shoal__metrics_put(shoal_metrics_buf_t *b, const char *fmt, ...) SHOAL_PRINTF(2, 3);
/* A family's # HELP and # TYPE lines. */
void shoal__metrics_family(shoal_metrics_buf_t *b, const char *name, const char *type,
                           const char *help);
/* The elastic families (shoal/pool.h: elastic pools) of the n pools in v. */
void shoal__metrics_render_elastic(shoal_metrics_buf_t *b, const shoal_metrics_view_t *v, size_t n);
/* The checkout pools' families (metrics_checkout.c); none without one. */
void shoal__metrics_render_checkout(shoal_metrics_buf_t *b, const shoal_metrics_view_t *v,
                                    size_t n);

#endif
