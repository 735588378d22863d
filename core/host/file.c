/* file.c - see file.h. */
#include "host/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sched/futex.h"
#include "shoal/error.h"

static const char *kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a file";
}

/* Opens path for reading if it is a regular file; never blocks. Checked
 * before opening (opening a device may do something), and again on what
 * was opened: O_NONBLOCK, so that a FIFO put there in between cannot hold
 * the caller either. -1 with err set otherwise; *st is the opened file's. */
static int open_regular(const char *path, struct stat *st, shoal_diag_t *err)
{
    if (stat(path, st) == 0 && !S_ISREG(st->st_mode)) {
        shoal__diag_set(err, path, 0, 0, "not a regular file (%s)", kind(st->st_mode));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        shoal__diag_set(err, path, 0, 0, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0) {
        shoal__diag_set(err, path, 0, 0, "cannot read: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        shoal__diag_set(err, path, 0, 0, "not a regular file (%s)", kind(st->st_mode));
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether two stats are of the same file in the same state. */
static bool same(const struct stat *a, const struct stat *b)
{
    shoal_file_id_t x = shoal__file_id(a), y = shoal__file_id(b);
    return shoal__file_id_same(&x, &y);
}

/* Whether two stats are of the same file with the same data (file.h). */
static bool same_data(const struct stat *a, const struct stat *b)
{
    shoal_file_id_t x = shoal__file_id(a), y = shoal__file_id(b);
    return shoal__file_id_same_data(&x, &y);
}

/* One read of the whole file: *st is its state after, *moved whether it
 * changed while it was read. */
static int read_once(const char *path, size_t max, char **buf, size_t *len, struct stat *st,
                     bool *moved, shoal_diag_t *err)
{
    struct stat before;
    int fd = open_regular(path, &before, err);
    if (fd < 0)
        return SHOAL_ELOAD;
    size_t cap = (size_t)before.st_size + 1 > 4096 ? (size_t)before.st_size + 1 : 4096;
    char *b = NULL;
    size_t n = 0;
    int rc = SHOAL_OK;
    for (;;) {
        if (b == NULL || n == cap) {
            if (b != NULL)
                cap *= 2;
            if (cap > max + 1)
                cap = max + 1; /* one byte past max tells a file too large */
            char *nb = realloc(b, cap);
            if (nb == NULL) {
                rc = SHOAL_ENOMEM;
                break;
            }
            b = nb;
        }
        ssize_t got = read(fd, b + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            shoal__diag_set(err, path, 0, 0, "cannot read: %s", strerror(errno));
            rc = SHOAL_ELOAD;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max) {
            shoal__diag_set(err, path, 0, 0, "too large (at most %zu MiB)", max >> 20);
            rc = SHOAL_ELIMIT;
            break;
        }
    }
    if (rc == SHOAL_OK && fstat(fd, st) != 0) {
        shoal__diag_set(err, path, 0, 0, "cannot read: %s", strerror(errno));
        rc = SHOAL_ELOAD;
    }
    close(fd);
    if (rc != SHOAL_OK) {
        free(b);
        return rc;
    }
    if (n == cap) { /* room for the NUL */
        char *nb = realloc(b, n + 1);
        if (nb == NULL) {
            free(b);
            return SHOAL_ENOMEM;
        }
        b = nb;
    }
    b[n] = '\0';
    *moved = !same(&before, st) || (off_t)n != st->st_size;
    *buf = b;
    *len = n;
    return SHOAL_OK;
}

/* Milliseconds since the file's last change (its ctime, which no one can
 * set back), by the same clock; negative when the ctime is in the future. */
static int64_t age_ms(const struct stat *st)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)(now.tv_sec - st->st_ctim.tv_sec) * 1000 +
           ((int64_t)now.tv_nsec - st->st_ctim.tv_nsec) / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int shoal__file_read_settled(const char *path, size_t max, unsigned settle_ms,
                             unsigned settle_max_ms, char **buf, size_t *len, shoal_diag_t *err)
{
    *buf = NULL;
    *len = 0;
    uint64_t deadline = shoal__deadline_ns(shoal__now_ns(), settle_max_ms);
    /* The first read of the latest run of reads that agree (below). */
    char *prev = NULL;
    size_t prev_len = 0;
    struct stat prev_st = {0};
    uint64_t prev_at = 0;
    for (;;) {
        char *b;
        size_t n;
        struct stat st;
        bool moved;
        int rc = read_once(path, max, &b, &n, &st, &moved, err);
        if (rc != SHOAL_OK) {
            free(prev);
            return rc;
        }
        uint64_t now = shoal__now_ns();
        int64_t age = age_ms(&st);
        /* Settled: left alone long enough (its ctime that old); or the same
         * bytes of the same file, by inode, size and mtime, as a read at
         * least SETTLE_MS ago -- what a ctime in the future (the clock
         * stepped back) or one that only metadata moves (a chmod, a touch
         * of its times) needs. */
        bool agrees =
            prev != NULL && same_data(&prev_st, &st) && prev_len == n && memcmp(prev, b, n) == 0;
        if (!moved && (age >= (int64_t)settle_ms ||
                       (agrees && now - prev_at >= (uint64_t)settle_ms * 1000000u))) {
            free(prev);
            *buf = b;
            *len = n;
            return SHOAL_OK;
        }
        if (now >= deadline) {
            free(prev);
            free(b);
            shoal__diag_set(err, path, 0, 0,
                            "still being written: it changed within %u ms of every read for "
                            "%u ms; not read (try again once it is saved)",
                            settle_ms, settle_max_ms);
            return SHOAL_ELOAD;
        }
        if (agrees && !moved) {
            free(b); /* the run goes on from its first read */
        } else {
            free(prev);
            prev = b;
            prev_len = n;
            prev_st = st;
            prev_at = now;
        }
        /* Until the file's settle time is up (at least 1 ms), never past
         * the deadline. */
        int64_t wait = age >= 0 && age < (int64_t)settle_ms ? (int64_t)settle_ms - age + 1
                                                            : (int64_t)settle_ms;
        int64_t left = (int64_t)((deadline - now + 999999) / 1000000);
        sleep_ms(wait < left ? wait : left);
    }
}

int shoal__file_read_once(const char *path, size_t max, char **buf, size_t *len, shoal_diag_t *err)
{
    *buf = NULL;
    *len = 0;
    struct stat st;
    bool moved;
    int rc = read_once(path, max, buf, len, &st, &moved, err);
    if (rc != SHOAL_OK || !moved)
        return rc;
    free(*buf);
    *buf = NULL;
    *len = 0;
    shoal__diag_set(err, path, 0, 0,
                    "changed while it was read (it is being written, or it never stops "
                    "changing); not read: try again once it is saved");
    return SHOAL_ELOAD;
}

int shoal__file_read(const char *path, size_t max, char **buf, size_t *len, shoal_diag_t *err)
{
    return shoal__file_read_settled(path, max, SHOAL_FILE_SETTLE_MS, SHOAL_FILE_SETTLE_MAX_MS, buf,
                                    len, err);
}
