/* output.c - streams that never make their writer wait (see output.h).
 *
 * The stream is a stdio cookie stream: stdio formats and buffers, and each
 * flush reaches out_write() below under the stream's lock. out_write first
 * writes what is held (older bytes first), then, if nothing is held any
 * more, the new bytes, and holds what the descriptor did not take. While
 * bytes are held, a new write is held whole behind them, or dropped whole
 * (counted) when it would pass the bound: so the reader gets whole lines,
 * in order, with a gap where some were dropped.
 *
 * Lock order: the stream's (stdio's, held around out_write) before o->lock;
 * pump and dropped take o->lock alone.
 */
#include "host/output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <shoal/shoal.h>

#include "runtime/runtime.h"

#define STREAM_BUFFER (64u << 10) /* a flush bigger than this reaches us in parts */

struct shoal_output_s {
    FILE *f;
    int fd;               /* where the bytes go */
    bool own_fd;          /* a second open of the caller's, closed with o */
    bool sock;            /* sent with MSG_DONTWAIT */
    bool shared;          /* not a file: written in whole lines (<= PIPE_BUF) at a time */
    pthread_mutex_t lock; /* what follows */
    int broken;           /* the errno that refused a write for good, or 0 */
    char *held;           /* what fd has not taken yet, in order */
    size_t held_len, held_cap, cap;
    uint64_t dropped;
    char *buf; /* stdio's */
};

/* Writes of p what fd takes now: the count, or -1 (errno) when fd refuses
 * for good. */
static ssize_t put(shoal_output_t *o, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t k = o->shared ? shoal__line_piece(p + done, n - done) : n - done;
        ssize_t w = o->sock ? send(o->fd, p + done, k, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : write(o->fd, p + done, k);
        if (w < 0 && errno == EINTR)
            continue;
        /* Not now: a reader behind, or a full disk (space comes back --
         * the log went silent for the rest of the process when a full
         * disk counted as for good). */
        if (w < 0 &&
            (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOSPC || errno == EDQUOT))
            break;
        if (w <= 0) {
            o->broken = w < 0 ? errno : EIO;
            return -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)done;
}

/* Holds p after what is held; false when there is no memory for it. */
static bool hold(shoal_output_t *o, const char *p, size_t n)
{
    if (n > o->held_cap - o->held_len) {
        size_t cap = o->held_cap ? o->held_cap : 4096;
        while (cap < o->held_len + n)
            cap *= 2;
        char *h = realloc(o->held, cap);
        if (h == NULL)
            return false;
        o->held = h;
        o->held_cap = cap;
    }
    memcpy(o->held + o->held_len, p, n);
    o->held_len += n;
    return true;
}

/* Writes what is held, as much as fd takes; -1 when fd refuses for good
 * (what was held is then let go). */
static int flush_held(shoal_output_t *o)
{
    if (o->broken == 0 && o->held_len != 0) {
        ssize_t w = put(o, o->held, o->held_len);
        if (w > 0) {
            memmove(o->held, o->held + w, o->held_len - (size_t)w);
            o->held_len -= (size_t)w;
        }
    }
    if (o->broken != 0) {
        o->held_len = 0;
        errno = o->broken;
        return -1;
    }
    return 0;
}

static ssize_t write_locked(shoal_output_t *o, const char *p, size_t n)
{
    if (flush_held(o) != 0)
        return -1;
    if (o->held_len != 0) { /* behind what is held, whole, or not at all */
        if (n > o->cap - (o->held_len < o->cap ? o->held_len : o->cap) || !hold(o, p, n))
            o->dropped++;
        return (ssize_t)n;
    }
    ssize_t w = put(o, p, n);
    if (w < 0)
        return -1;
    /* Begun: the rest is held, whatever the bound, so no write is cut. */
    if ((size_t)w < n && !hold(o, p + w, n - (size_t)w))
        o->dropped++;
    return (ssize_t)n;
}

static ssize_t out_write(void *cookie, const char *p, size_t n)
{
    shoal_output_t *o = cookie;
    pthread_mutex_lock(&o->lock);
    ssize_t w = write_locked(o, p, n);
    pthread_mutex_unlock(&o->lock);
    return w;
}

static int out_close(void *cookie)
{
    (void)cookie; /* freed by shoal__output_close */
    return 0;
}

int shoal__output_open(int fd, size_t cap, shoal_output_t **out)
{
    *out = NULL;
    shoal_output_t *o = calloc(1, sizeof *o);
    if (o == NULL || (o->buf = malloc(STREAM_BUFFER)) == NULL)
        goto fail;
    pthread_mutex_init(&o->lock, NULL);
    o->fd = fd;
    o->cap = cap;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
        o->sock = o->shared = true;
    } else if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        /* A second open file description of the same pipe or terminal,
         * non-blocking; fd's own is shared (a shell's terminal) and is
         * left blocking. Where it cannot be (no /proc, a FIFO whose reader
         * is gone), fd as it is. */
        o->shared = true; /* a terminal too: Ctrl-Q lets out what was held */
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int nb = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (nb >= 0) {
            o->fd = nb;
            o->own_fd = true;
        }
    }
    cookie_io_functions_t fns = {.write = out_write, .close = out_close};
    if ((o->f = fopencookie(o, "w", fns)) == NULL)
        goto fail;
    setvbuf(o->f, o->buf, _IOFBF, STREAM_BUFFER);
    *out = o;
    return 0;
fail:
    if (o != NULL && o->own_fd)
        close(o->fd);
    if (o != NULL && o->buf != NULL) {
        pthread_mutex_destroy(&o->lock);
        free(o->buf);
    }
    free(o);
    return SHOAL_ENOMEM;
}

FILE *shoal__output_file(shoal_output_t *o) { return o->f; }

int shoal__output_fd(const shoal_output_t *o) { return o->fd; }

size_t shoal__output_pump(shoal_output_t *o)
{
    pthread_mutex_lock(&o->lock);
    flush_held(o);
    size_t left = o->held_len;
    pthread_mutex_unlock(&o->lock);
    return left;
}

uint64_t shoal__output_dropped(shoal_output_t *o)
{
    pthread_mutex_lock(&o->lock);
    uint64_t n = o->dropped;
    pthread_mutex_unlock(&o->lock);
    return n;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

size_t shoal__output_drain(shoal_output_t *o, int wait_ms)
{
    fflush(o->f); /* into what is held, if fd does not take it */
    uint64_t end = now_ms() + (uint64_t)(wait_ms > 0 ? wait_ms : 0);
    size_t left;
    while ((left = shoal__output_pump(o)) != 0) {
        uint64_t now = now_ms();
        if (now >= end)
            break;
        struct pollfd p = {.fd = o->fd, .events = POLLOUT};
        poll(&p, 1, (int)(end - now));
    }
    return left;
}

size_t shoal__output_close(shoal_output_t *o, int wait_ms)
{
    if (o == NULL)
        return 0;
    size_t left = shoal__output_drain(o, wait_ms);
    fclose(o->f);
    if (o->own_fd)
        close(o->fd);
    pthread_mutex_destroy(&o->lock);
    free(o->held);
    free(o->buf);
    free(o);
    return left;
}
