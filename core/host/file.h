/* file.h - reading a file the host reads (a config: at start, at reload,
 * for a diff) so that no path can make it wait and no writer can hand it
 * half a file:
 *
 * - only a regular file is read; a FIFO (whose open would wait for a
 *   writer), a device or a directory is refused with a message that says
 *   which it is;
 * - a file being written in place (an editor's truncate-then-write, `cat >
 *   shoal.yaml`, a script's several writes) is not taken mid-write. Half a
 *   config can itself be a valid config with fewer pools, and reloading it
 *   would drain the rest. So a file is taken only once nothing about it
 *   changed while it was read and either it has been left alone for
 *   SHOAL_FILE_SETTLE_MS (its ctime that old) or it read the same, bytes,
 *   inode, size and mtime, at least SETTLE_MS ago (a ctime in the future,
 *   or one that only a chmod or a touch keeps moving); until then it is
 *   read again, and one still changing after SHOAL_FILE_SETTLE_MAX_MS is
 *   refused. A file that was settled costs one read; one written just now
 *   costs SETTLE_MS of waiting.
 *
 * Settling waits on the calling thread, up to SETTLE_MAX_MS. A reload of
 * shoald's own config may (it is the operator's file, and a reload is the
 * one thing it asked for); a diff may not: any client names any file for
 * it (/proc/self/environ, a log being appended, neither ever settles),
 * several at once, and 2 s each held the host thread -- signals, the
 * watchdog, every other client -- for as long as they liked. A diff reads
 * once (shoal__file_read_once) and a file that moved meanwhile is refused.
 */
#ifndef SHOAL_HOST_FILE_H
#define SHOAL_HOST_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "host/diag.h"

/* A file's identity as the host compares it: the same device and inode,
 * the same size and times. mtime is what a write moves; ctime too, and
 * also what a copy that keeps the mtime (cp -p, install -p), a chmod or a
 * touch moves. */
typedef struct shoal_file_id_s {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtim, ctim;
} shoal_file_id_t;

static inline shoal_file_id_t shoal__file_id(const struct stat *st)
{
    return (shoal_file_id_t){.dev = st->st_dev,
                             .ino = st->st_ino,
                             .size = st->st_size,
                             .mtim = st->st_mtim,
                             .ctim = st->st_ctim};
}

/* The same file with the same data: all but the ctime. */
static inline bool shoal__file_id_same_data(const shoal_file_id_t *a, const shoal_file_id_t *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtim.tv_sec == b->mtim.tv_sec && a->mtim.tv_nsec == b->mtim.tv_nsec;
}

/* The same file, untouched: its ctime too. */
static inline bool shoal__file_id_same(const shoal_file_id_t *a, const shoal_file_id_t *b)
{
    return shoal__file_id_same_data(a, b) && a->ctim.tv_sec == b->ctim.tv_sec &&
           a->ctim.tv_nsec == b->ctim.tv_nsec;
}

#define SHOAL_FILE_SETTLE_MS 100
#define SHOAL_FILE_SETTLE_MAX_MS 2000

/* Reads the whole of path (at most max bytes) into *buf (malloc'd, NUL
 * after the *len bytes; the caller frees it) once it has settled. Returns
 * SHOAL_OK; SHOAL_ELOAD with err "PATH: cannot read: ...", "PATH: not a
 * regular file (a FIFO)" (a directory, ...) or "PATH: still being written
 * ..."; SHOAL_ELIMIT ("PATH: too large (at most N MiB)"); SHOAL_ENOMEM. */
int shoal__file_read(const char *path, size_t max, char **buf, size_t *len, shoal_diag_t *err);

/* One read, no settling: for what may not wait (a diff). The errors of
 * shoal__file_read, but for "PATH: changed while it was read ...; not read:
 * try again once it is saved" (SHOAL_ELOAD) in place of "still being
 * written": a file that changed while it was read (a write, or a size
 * that is not what was read: /proc files). One just saved and left alone
 * since is taken. */
int shoal__file_read_once(const char *path, size_t max, char **buf, size_t *len, shoal_diag_t *err);

/* The same with the settle times given (tests). */
int shoal__file_read_settled(const char *path, size_t max, unsigned settle_ms,
                             unsigned settle_max_ms, char **buf, size_t *len, shoal_diag_t *err);

#endif
