/* lines.h - the lines plugin's protocol (see plugins/lines/README.md).
 *
 * lines.lines is a pull pool's source (shoal/pull.h): the lines of the file
 * at `path`, read as they are asked for. Asked for n items
 * (SHOAL_PULL_REQUEST), it sends the pool up to n lines, each as one message
 * of type `type` (default LINES_MSG_ITEM) whose payload is the line's bytes
 * without its end: no '\n', and no '\r' before it (CRLF files give the same
 * items as LF files). An empty line is an item of size 0; a last line
 * without a '\n' is an item too. No NUL is added, and a NUL inside a line
 * is kept. A line longer than `max_line` bytes fails the source, or is
 * truncated, or skipped, as `long_lines` says (README).
 *
 * The cursor (the data of SHOAL_PULL_SENT, and what SHOAL_PULL_RESUME
 * carries) is a lines_cursor_t: the byte offset in the file of the next
 * line to send, and which file that is (its device and inode), host byte
 * order, 24 bytes. A RESUME of 8 bytes, an offset alone (the cursor before
 * it named its file), is taken too. SHOAL_PULL_DONE carries no cursor, and
 * comes in the same turn as the last line.
 *
 * Type ids 0xFFFF0000 and up are kept for the bundled plugins (application
 * types stay below; 0xFFFE0000 .. 0xFFFEFFFF are the runtime's, and `type`
 * may not be one of those).
 */
#ifndef SHOAL_PLUGIN_LINES_H
#define SHOAL_PLUGIN_LINES_H

#include <shoal/types.h>

/* The items' type when the args set none. */
#define LINES_MSG_ITEM 0xFFFF0011u

/* A call of this type is answered with a lines_stats_t (reply type the
 * same). lines takes no other requests: a call of any type gets the same
 * answer. */
#define LINES_MSG_STATS 0xFFFF0001u

/* Where the next line is: its offset in the file that st_dev and st_ino
 * (fstat) named when the source opened it. */
typedef struct lines_cursor_s {
    uint64_t offset;
    uint64_t dev, ino;
} lines_cursor_t;

typedef struct lines_stats_s {
    uint64_t requests;   /* SHOAL_PULL_REQUESTs answered */
    uint64_t items;      /* lines sent (accepted by the pool) */
    uint64_t bytes;      /* their payload bytes */
    uint64_t refused;    /* item sends the pool refused (the batch stopped there) */
    uint64_t resumes;    /* SHOAL_PULL_RESUMEs taken */
    uint64_t long_lines; /* lines longer than max_line met: truncated, skipped or failed on */
    uint64_t offset;     /* the cursor: the byte offset of the next line */
    uint64_t done;       /* 1 once the last line was sent (DONE answered) */
    uint64_t buffer;     /* bytes held for reading one line (at most max_line + 1) */
} lines_stats_t;

#endif
