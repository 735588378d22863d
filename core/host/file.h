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
 */
#ifndef SHOAL_HOST_FILE_H
#define SHOAL_HOST_FILE_H

#include <stddef.h>

#include "host/diag.h"

#define SHOAL_FILE_SETTLE_MS 100
#define SHOAL_FILE_SETTLE_MAX_MS 2000

/* Reads the whole of path (at most max bytes) into *buf (malloc'd, NUL
 * after the *len bytes; the caller frees it) once it has settled. Returns
 * SHOAL_OK; SHOAL_ELOAD with err "PATH: cannot read: ...", "PATH: not a
 * regular file (a FIFO)" (a directory, ...) or "PATH: still being written
 * ..."; SHOAL_ELIMIT ("PATH: too large (at most N MiB)"); SHOAL_ENOMEM. */
int shoal__file_read(const char *path, size_t max, char **buf, size_t *len, shoal_diag_t *err);

/* The same with the settle times given (tests). */
int shoal__file_read_settled(const char *path, size_t max, unsigned settle_ms,
                             unsigned settle_max_ms, char **buf, size_t *len, shoal_diag_t *err);

#endif
