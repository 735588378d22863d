/* file.h - opening a file the host reads (a config: at start, at reload,
 * for a diff) so that no path can make it wait: only a regular file is
 * read; a FIFO (whose open would wait for a writer), a device or a
 * directory is refused with a message that says which it is.
 */
#ifndef SHOAL_HOST_FILE_H
#define SHOAL_HOST_FILE_H

#include <stdio.h>

#include "host/diag.h"

/* Opens path for reading if it is a regular file; never blocks. NULL with
 * err set to "PATH: cannot read: ..." or "PATH: not a regular file (a
 * FIFO)" (a directory, a character device, a block device, a socket)
 * otherwise. The caller fcloses what it gets. */
FILE *shoal__file_open(const char *path, shoal_diag_t *err);

#endif
