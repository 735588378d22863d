/* output.h - shoald's stdout and stderr (the table, the log) as streams
 * that never make their writer wait.
 *
 * A reader that stops reading (`shoald x.yaml | less` left on its first
 * page, a terminal stopped with Ctrl-S, a log shipper that hangs) fills the
 * pipe; a blocking write would then hold the thread that logs or prints the
 * table -- the host thread (signals, reloads, the control socket) or a
 * dispatcher thread -- until that reader reads again. An output writes
 * what the descriptor takes now, holds the rest in memory up to a bound
 * and drops whole writes past it, counted. What it holds goes out on the
 * next write or pump, in order.
 *
 * The descriptor's own open file description is left as it is (a shell
 * shares it): the output writes through a second one opened without
 * blocking (/proc/self/fd/N) for a pipe, a FIFO or a terminal, and with
 * MSG_DONTWAIT for a socket. A regular file is written as before (a disk
 * does not stop reading); so is anything it cannot reopen.
 *
 * Writes to a pipe, a FIFO, a terminal or a socket go in pieces of at most
 * PIPE_BUF bytes that end at a line's end, so that each line is one write:
 * an isolated pool's child shares shoald's stderr, and two writers of one
 * pipe must not cut each other's lines. A pipe, a FIFO and a unix socket
 * take such a piece whole or not at all; a TCP socket may take part of
 * one, and a line longer than PIPE_BUF goes in parts anywhere.
 *
 * Threads: every function may be called from any thread. The output's
 * state is under its own mutex (taken inside stdio's stream lock when a
 * flush reaches it), not under stdio's lock alone, which ThreadSanitizer
 * cannot see.
 */
#ifndef SHOAL_HOST_OUTPUT_H
#define SHOAL_HOST_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct shoal_output_s shoal_output_t;

/* An output over fd, holding at most cap bytes that fd did not take (the
 * rest of a write fd took in part is always held, whatever cap). fd stays
 * the caller's. Returns 0 or SHOAL_ENOMEM. */
int shoal__output_open(int fd, size_t cap, shoal_output_t **out);

/* The stream to write to: fully buffered, written out at each fflush (a
 * writer flushes after each whole line or block, so that what is dropped
 * is whole). A write fd refuses for good (EPIPE: its reader is gone) sets
 * the stream's error (ferror). A file on a full disk (ENOSPC, EDQUOT) is
 * not refused for good: what it did not take is held as for a reader that
 * does not read -- the line it cut is finished, the rest whole or dropped
 * and counted -- and written once it takes writes again. */
FILE *shoal__output_file(shoal_output_t *o);

/* The descriptor writes go to (non-blocking where it could be made so):
 * for a writer that cannot use stdio (the crash reporter). */
int shoal__output_fd(const shoal_output_t *o);

/* Writes what is held, as much as the descriptor takes now. Returns the
 * bytes still held. */
size_t shoal__output_pump(shoal_output_t *o);

/* The writes (each a flush: a line, a table block) dropped so far because
 * the held bytes were at their bound. */
uint64_t shoal__output_dropped(shoal_output_t *o);

/* Flushes the stream and writes what is held, waiting at most wait_ms for
 * the descriptor to take it. Returns the bytes still held. */
size_t shoal__output_drain(shoal_output_t *o, int wait_ms);

/* shoal__output_drain, then frees o (NULL: nothing); no thread may write
 * to its stream any more. Returns the bytes it could not write. */
size_t shoal__output_close(shoal_output_t *o, int wait_ms);

#endif
