/* file.c - see file.h. */
#include "host/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a file";
}

FILE *shoal__file_open(const char *path, shoal_diag_t *err)
{
    /* Checked before opening (opening a device may do something), and
     * again on what was opened: O_NONBLOCK, so that a FIFO put there in
     * between cannot hold the caller either. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        shoal__diag_set(err, path, 0, 0, "not a regular file (%s)", kind(st.st_mode));
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        shoal__diag_set(err, path, 0, 0, "cannot read: %s", strerror(errno));
        return NULL;
    }
    FILE *f = NULL;
    if (fstat(fd, &st) != 0)
        shoal__diag_set(err, path, 0, 0, "cannot read: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        shoal__diag_set(err, path, 0, 0, "not a regular file (%s)", kind(st.st_mode));
    else if ((f = fdopen(fd, "rb")) == NULL)
        shoal__diag_set(err, path, 0, 0, "cannot read: %s", strerror(errno));
    if (f == NULL)
        close(fd);
    return f;
}
