/* notify.c - shoald's side of systemd's notify protocol and watchdog (see
 * notify.h). Everything but the heartbeat actor's handler and the sender
 * thread runs on the host thread.
 *
 * sd_notify blocks while the receiver's queue is full (a service manager
 * that does not read): so the host thread only queues each message, and a
 * thread of its own sends them, in order. When SENDQ_CAP are waiting, a new
 * one is dropped, counted and logged once.
 */
#include "host/notify.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "sched/futex.h"
#include "shoal/shoal.h"

#define HEARTBEAT_MSG 1u
#define SENDQ_CAP 64u
#define CLOSE_WAIT_MS 1000       /* at exit, for a sender stuck in sd_notify */
#define STARTING_SAY_US 1000000u /* a step of the start said once it lasts this long */

struct shoal_notify_s {
    /* The host thread's (set at open and ready, read by it after). */
    bool on;              /* NOTIFY_SOCKET was set */
    uint64_t watchdog_us; /* WATCHDOG_USEC for this process; 0: no watchdog */
    uint64_t period_us;   /* a pet (or none) every watchdog_us / 4 */
    uint64_t next_us;     /* the next turn, on the monotonic clock */
    shoal_pid_t beat;     /* the heartbeat actor; SHOAL_PID_NONE: none */
    uint64_t sent;        /* the last heartbeat's number */
    uint64_t sent_us;     /* when it was sent */
    bool stuck;           /* not petting since the last warning */
    char status[256];     /* the last STATUS= sent */
    char step[192];       /* the start's step last seen (shoal__notify_starting) */
    uint64_t step_us;     /* ... since then */
    uint64_t dropped;     /* messages the full queue refused */
    pthread_t sender;
    bool sender_started;
    /* The heartbeat actor's (a dispatcher thread), read by the host
     * thread: the last heartbeat handled. Once per turn: no cache line of
     * its own. */
    _Atomic uint64_t handled;
    /* The sender's FIFO of messages (heap strings): under lock, between
     * the host thread (say, close) and the sender thread. */
    pthread_mutex_t lock;
    pthread_cond_t cond; /* something queued, stop, or done */
    char *queue[SENDQ_CAP];
    size_t head, len;
    bool stop, done;
    int send_error;   /* the sender's last sd_notify failure (-errno), 0: none */
    bool told_error;  /* the host thread said it (once) */
    char socket[108]; /* NOTIFY_SOCKET, for that line */
};

/* A notifier whose sender did not finish at close (stuck in sd_notify):
 * kept reachable, never freed, as the process ends. */
static shoal_notify_t *abandoned;

static uint64_t mono_us(void) { return shoal__now_ns() / 1000u; }

/* "generation 2: 6 pools running, 1 draining". */
static void status_text(const shoal_host_t *h, char *buf, size_t size)
{
    size_t running = 0, draining = 0;
    for (size_t i = 0; i < h->npools; i++) {
        if (h->pools[i].draining)
            draining++;
        else
            running++;
    }
    int len = snprintf(buf, size, "generation %" PRIu64 ": %zu pool%s running", h->generation,
                       running, running == 1 ? "" : "s");
    if (draining > 0 && len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ", %zu draining", draining);
}

/* ---- the sender thread --------------------------------------------------- */

static void *sender_main(void *arg)
{
    shoal_notify_t *n = arg;
    pthread_mutex_lock(&n->lock);
    for (;;) {
        while (n->len == 0 && !n->stop)
            pthread_cond_wait(&n->cond, &n->lock);
        if (n->len == 0)
            break; /* stopped, everything sent */
        char *text = n->queue[n->head];
        n->head = (n->head + 1) % SENDQ_CAP;
        n->len--;
        pthread_mutex_unlock(&n->lock);
        int rc = sd_notify(0, text); /* may block: the receiver's queue is full */
        free(text);
        pthread_mutex_lock(&n->lock);
        if (rc < 0)
            n->send_error = rc;
    }
    n->done = true;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
    return NULL;
}

/* Queues one message (printf-style) for the sender; never blocks but for
 * the lock. A full queue drops it (logged the first time). */
static void say(shoal_notify_t *n, shoal_host_t *h, const char *fmt, ...) SHOAL_PRINTF(3, 4);
static void say(shoal_notify_t *n, shoal_host_t *h, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = vasprintf(&text, fmt, ap);
    va_end(ap);
    bool queued = false;
    if (len >= 0) {
        pthread_mutex_lock(&n->lock);
        if (n->len < SENDQ_CAP) {
            n->queue[(n->head + n->len) % SENDQ_CAP] = text;
            n->len++;
            queued = true;
            pthread_cond_signal(&n->cond);
        }
        pthread_mutex_unlock(&n->lock);
    }
    if (queued)
        return;
    free(len >= 0 ? text : NULL);
    if (n->dropped++ == 0)
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "systemd: the notify socket is not read (%u messages waiting): dropping "
                        "messages to it",
                        SENDQ_CAP);
}

/* ---- the heartbeat actor (a dispatcher thread) -------------------------- */

static int beat_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    *(shoal_notify_t **)state = (shoal_notify_t *)args;
    return 0;
}

static int beat_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    shoal_notify_t *n = *(shoal_notify_t **)state;
    uint64_t seq;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != HEARTBEAT_MSG || msg->size != sizeof seq)
        return 0;
    memcpy(&seq, msg->data, sizeof seq);
    /* release: pairs with the host thread's acquire load in tick */
    atomic_store_explicit(&n->handled, seq, memory_order_release);
    return 0;
}

static const shoal_behaviour_t beat_behaviour = {
    .name = "shoald.heartbeat",
    .state_size = sizeof(shoal_notify_t *),
    .init = beat_init,
    .handle_message = beat_handle,
};

/* ---- the host thread ---------------------------------------------------- */

/* One line of text for STATUS=: newlines become spaces. */
static void one_line(char *s)
{
    for (; *s != '\0'; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

static void reload_begin(shoal_host_t *h, void *user)
{
    shoal_notify_t *n = user;
    if (!n->on)
        return;
    /* systemd >= 253 (Type=notify-reload) wants both in one datagram. */
    say(n, h,
        "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=reloading (generation %" PRIu64
        " running)",
        mono_us(), h->generation);
}

static void reload_end(shoal_host_t *h, void *user, int rc, const char *why)
{
    shoal_notify_t *n = user;
    if (!n->on)
        return;
    status_text(h, n->status, sizeof n->status);
    if (rc == SHOAL_OK) {
        say(n, h, "READY=1\nSTATUS=%s (reloaded)", n->status);
        return;
    }
    char text[1200];
    snprintf(text, sizeof text, "%s", why[0] ? why : shoal_strerror(rc));
    one_line(text);
    say(n, h, "READY=1\nSTATUS=reload failed: %s; generation %" PRIu64 " keeps running", text,
        h->generation);
}

shoal_notify_t *shoal__notify_open(void)
{
    shoal_notify_t *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    const char *sock = getenv("NOTIFY_SOCKET");
    n->on = sock != NULL && sock[0] != '\0';
    if (n->on)
        snprintf(n->socket, sizeof n->socket, "%s", sock);
    n->beat = SHOAL_PID_NONE;
    pthread_mutex_init(&n->lock, NULL);
    pthread_cond_init(&n->cond, NULL);
    uint64_t usec = 0;
    /* 1: unsets WATCHDOG_USEC and WATCHDOG_PID (they are ours, not a
     * child's); > 0 only when WATCHDOG_PID is this process (or unset). */
    if (sd_watchdog_enabled(1, &usec) > 0 && n->on && usec > 0) {
        n->watchdog_us = usec;
        n->period_us = usec / 4 > 0 ? usec / 4 : 1;
    }
    if (n->on && pthread_create(&n->sender, NULL, sender_main, n) != 0) {
        fprintf(stderr, "shoald: warning: cannot start the systemd notify thread: %s\n",
                strerror(errno));
        n->on = false;
        n->watchdog_us = 0;
    }
    n->sender_started = n->on;
    return n;
}

int shoal__notify_ready(shoal_notify_t *n, shoal_host_t *h)
{
    if (n == NULL || !n->on)
        return SHOAL_OK;
    if (shoal__host_hook(h, &(shoal_host_hook_t){
                                .begin = reload_begin, .end = reload_end, .user = n}) != SHOAL_OK)
        shoal__host_log(h, SHOAL_LOG_ERROR,
                        "systemd: cannot follow reloads (too many hooks): no RELOADING=1");
    int rc = SHOAL_OK;
    if (n->watchdog_us > 0) {
        rc = shoal_runtime_spawn(h->rt, &beat_behaviour, n, NULL, &n->beat);
        if (rc != SHOAL_OK) {
            n->beat = SHOAL_PID_NONE;
            shoal__host_log(h, SHOAL_LOG_ERROR,
                            "systemd: cannot spawn the heartbeat actor (%s): the watchdog will "
                            "not be petted",
                            shoal_strerror(rc));
        }
        n->next_us = mono_us(); /* the first turn sends the first heartbeat */
    }
    if (n->watchdog_us > 0)
        shoal__host_log(h, SHOAL_LOG_INFO,
                        "systemd: notify socket %s; watchdog %" PRIu64 " ms, petted every %" PRIu64
                        " ms while the dispatcher handles heartbeats",
                        getenv("NOTIFY_SOCKET"), n->watchdog_us / 1000, n->period_us / 1000);
    else
        shoal__host_log(h, SHOAL_LOG_INFO, "systemd: notify socket %s; no watchdog",
                        getenv("NOTIFY_SOCKET"));
    status_text(h, n->status, sizeof n->status);
    say(n, h, "READY=1\nSTATUS=%s", n->status);
    return rc;
}

void shoal__notify_tick(shoal_notify_t *n, shoal_host_t *h)
{
    if (n == NULL || n->watchdog_us == 0)
        return;
    uint64_t now = mono_us();
    if (now < n->next_us)
        return;
    n->next_us = now + n->period_us;
    if (n->beat == SHOAL_PID_NONE)
        return;
    /* acquire: pairs with beat_handle's release store */
    if (atomic_load_explicit(&n->handled, memory_order_acquire) != n->sent) {
        if (!n->stuck)
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "systemd: watchdog: the dispatcher has not handled a heartbeat for "
                            "%" PRIu64 " ms: not petting the watchdog (systemd restarts shoald "
                            "after %" PRIu64 " ms)",
                            (now - n->sent_us) / 1000, n->watchdog_us / 1000);
        n->stuck = true;
        return;
    }
    if (n->stuck)
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "systemd: watchdog: the dispatcher handled the heartbeat after %" PRIu64
                        " ms: petting the watchdog again",
                        (now - n->sent_us) / 1000);
    n->stuck = false;
    if (n->sent != 0)
        say(n, h, "WATCHDOG=1");
    /* The next heartbeat: handled by the next turn, or no pet then. A send
     * that fails leaves it unhandled: the pets stop. */
    n->sent++;
    n->sent_us = now;
    shoal_runtime_send_priority(h->rt, n->beat, HEARTBEAT_MSG, &n->sent, sizeof n->sent);
}

int shoal__notify_timeout(const shoal_notify_t *n)
{
    if (n == NULL || n->watchdog_us == 0)
        return -1;
    uint64_t now = mono_us();
    return now >= n->next_us ? 0 : (int)((n->next_us - now + 999) / 1000);
}

void shoal__notify_status(shoal_notify_t *n, shoal_host_t *h)
{
    if (n == NULL || !n->on)
        return;
    /* A socket that cannot be sent to (missing, not a socket, refused):
     * said once, as systemd will then time out waiting for us. */
    pthread_mutex_lock(&n->lock);
    int e = n->send_error;
    pthread_mutex_unlock(&n->lock);
    if (e != 0 && !n->told_error) {
        n->told_error = true;
        shoal__host_log(h, SHOAL_LOG_ERROR,
                        "systemd: cannot send to the notify socket %s: %s (systemd does not hear "
                        "READY=1, reloads or the watchdog)",
                        n->socket, strerror(-e));
    }
    char now[sizeof n->status];
    status_text(h, now, sizeof now);
    if (strcmp(now, n->status) == 0)
        return;
    memcpy(n->status, now, sizeof now);
    say(n, h, "STATUS=%s", n->status);
}

void shoal__notify_starting(shoal_notify_t *n, shoal_host_t *h)
{
    if (n == NULL || !n->on || !h->starting)
        return;
    uint64_t now = mono_us();
    if (strcmp(h->step, n->step) != 0) {
        snprintf(n->step, sizeof n->step, "%s", h->step);
        n->step_us = now;
    }
    if (now - n->step_us < STARTING_SAY_US)
        return;
    char text[sizeof n->status];
    snprintf(text, sizeof text, "starting generation %" PRIu64 ": %s", h->generation, n->step);
    if (strcmp(text, n->status) == 0)
        return;
    memcpy(n->status, text, sizeof text);
    say(n, h, "STATUS=%s", n->status);
}

void shoal__notify_stopping(shoal_notify_t *n, shoal_host_t *h, const char *why, uint64_t drain_ms)
{
    if (n == NULL || !n->on)
        return;
    size_t running = 0;
    for (size_t i = 0; i < h->npools; i++)
        running += !h->pools[i].draining;
    say(n, h, "STOPPING=1\nSTATUS=stopping (%s): draining %zu pool%s within %" PRIu64 " ms", why,
        running, running == 1 ? "" : "s", drain_ms);
}

/* Stops the sender once everything queued is sent; waits CLOSE_WAIT_MS at
 * most for that. Whether it finished. */
static bool stop_sender(shoal_notify_t *n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += CLOSE_WAIT_MS / 1000;
    pthread_mutex_lock(&n->lock);
    n->stop = true;
    pthread_cond_broadcast(&n->cond);
    int rc = 0;
    while (!n->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&n->cond, &n->lock, &until);
    bool done = n->done;
    pthread_mutex_unlock(&n->lock);
    return done;
}

void shoal__notify_flush(shoal_notify_t *n)
{
    /* A sender that finished is joined: an exit with a finished thread not
     * joined is a leak to ThreadSanitizer. */
    if (n != NULL && n->sender_started && stop_sender(n)) {
        pthread_join(n->sender, NULL);
        n->sender_started = false;
    }
}

void shoal__notify_close(shoal_notify_t *n)
{
    if (n == NULL)
        return;
    if (n->sender_started) {
        bool done = stop_sender(n);
        if (!done) {
            abandoned = n; /* its sender may still use it */
            return;
        }
        pthread_join(n->sender, NULL);
    }
    while (n->len > 0) {
        free(n->queue[n->head]);
        n->head = (n->head + 1) % SENDQ_CAP;
        n->len--;
    }
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->cond);
    free(n);
}
