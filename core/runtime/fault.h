/* fault.h - the crash reporter: a fatal signal (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT) is reported in one log line before the process dies.
 *
 * Signal dispositions belong to the process, not to a runtime, so this is
 * the one place in shoal with process-global state (fault.c says why). A
 * host installs the reporter once, early (shoald, shoal-plugin-check); a
 * program that embeds shoal may install it or not. Without it, nothing here
 * changes what a fatal signal does.
 *
 * What a report says (fault_fmt.c writes it, in the host's log format):
 *
 *   text: TS gen=N error <SLOT.GEN> POOL/BEHAVIOUR: fatal signal SIGSEGV
 *         (address 0x0, not mapped) in pool POOL, behaviour BEHAVIOUR,
 *         plugin NAME VERSION (FILE), on dispatcher thread I; the process ends
 *           backtrace:
 *             #0 FILE(+0x1139)[0x7f0c9a5f5139]
 *             ...
 *   json: one object with the host's fields (ts, gen, level, pid, actor,
 *         msg) and signal, pool, behaviour, origin, thread; then a second
 *         object with the same ts, gen, level, pid and actor, msg
 *         "backtrace", and backtrace: ["FILE(+0x1139)[0x7f...]", ...].
 *
 * A frame is what backtrace_symbols_fd writes: FILE(SYMBOL+OFF)[ADDR] for
 * an exported symbol, else FILE(+OFF)[ADDR], OFF the offset into FILE
 * (addr2line -f -e FILE OFF).
 *
 * The line is written before the backtrace is taken: unwinding a smashed
 * stack may fault, and then the line is already out. Outside a callback
 * (a dispatcher thread between actors, the host thread, the timer thread,
 * a thread shoal did not start) the line has no <pid> name: prefix and
 * says where it happened instead. After the report the control socket
 * (shoal__fault_set_unlink) is removed, the signal's default action is
 * restored and the signal raised again: the process dies of it, and its
 * exit status (128 + signal in a shell) says so as before.
 */
#ifndef SHOAL_RUNTIME_FAULT_H
#define SHOAL_RUNTIME_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "shoal/types.h"

struct shoal_worker_s;

/* A plugin's code runs from a private copy (host/loader.c), mapped from
 * /proc/self/fd/FD: its frames would be named so. The loader names each
 * copy's FD after the configured file while the copy is mapped, and a
 * report's frames say that file instead (+OFF is the same in both while
 * the file is unchanged). At most SHOAL_FAULT_NAMES at once; more are
 * shown as /proc/self/fd/FD. Any thread. */
#define SHOAL_FAULT_NAMES 64
void shoal__fault_name_fd(int fd, const char *name);
void shoal__fault_unname_fd(int fd);

/* Log formats, as the host's log.format (host/config.h). */
enum { SHOAL_FAULT_TEXT = 0, SHOAL_FAULT_JSON = 1 };

/* Installs the reporter for the whole process: a handler (SA_SIGINFO |
 * SA_ONSTACK, every signal blocked while it runs) for SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL and SIGABRT, replacing what was there; log_fd is dup'ed
 * (the caller keeps its own), a pipe is opened for symbolising frames, and
 * backtrace() runs once so that its first-call set-up (loading libgcc_s)
 * is not left for the handler. format: SHOAL_FAULT_TEXT or _JSON. Call from
 * one thread, before the threads it should cover could crash. Returns 0,
 * or -errno: -EALREADY (installed already), or why a descriptor or a
 * sigaction failed (then nothing was changed). */
int shoal__fault_install(int log_fd, int format);

/* Puts back the dispositions shoal__fault_install replaced and closes its
 * descriptors. For tests and programs that stop reporting. */
void shoal__fault_uninstall(void);

/* The config generation a report names (gen=N), the one the host's log
 * lines carry: the host sets it at start and whenever its generation
 * changes (a reload counts up before it starts new pools, so that their
 * init's lines say the new one, and back if the reload fails). 0 until
 * set: a crash while shoald loads its first config, or in
 * shoal-plugin-check, says gen=0. Any thread. */
void shoal__fault_set_generation(uint64_t generation);

/* The log format a report is written in (SHOAL_FAULT_*): at install, and
 * after a reload that changed log.format. Any thread. */
void shoal__fault_set_format(int format);

/* A file to unlink on the way out (the control socket), copied, with the
 * device and inode it had when made: only that file is removed, not
 * whatever took its path since (another shoald's socket, a file someone
 * put there). NULL for none. Set it once the file exists and clear it
 * before the owner removes it. Returns 0, or -ENAMETOOLONG (nothing is
 * kept then). */
int shoal__fault_set_unlink(const char *path, dev_t dev, ino_t ino);

/* Unlinks path if it is still the socket (dev, ino) that was made there;
 * async-signal-safe (lstat, unlink). True when it was removed. Between
 * the look and the unlink another process could put a file there: a
 * window of two system calls, against removing whatever is there. */
bool shoal__unlink_own(const char *path, dev_t dev, ino_t ino);

/* Called first thing on a thread shoal starts: gives it an alternate
 * signal stack (mmap'ed, with a guard page below it), so that a handler
 * that overflows its stack is reported too, and tells a report what the
 * thread is: w, a dispatcher worker (the report reads the actor it runs
 * from w->ctx), or role, a noun phrase ("the host thread", "the timer
 * thread"). Both NULL: "a thread shoal did not start". Without a stack
 * (mmap failed) the thread still runs; only an overflow goes unreported. */
void shoal__fault_thread_start(struct shoal_worker_s *w, const char *role);

/* What this thread is now, for a thread that started with a role and
 * takes on another (a plugin's init, then its fini): role as above. */
void shoal__fault_thread_role(const char *role);

/* Called last on that thread: puts back the alternate stack it had before
 * (a sanitizer's, or none) and unmaps ours. */
void shoal__fault_thread_end(void);

/* ---- formatting (fault_fmt.c): pure, async-signal-safe, tested alone --- */

/* A bounded buffer: what does not fit is cut (cut set), the text stays
 * NUL-terminated. cap includes the NUL. */
typedef struct shoal_fault_buf_s {
    char *p;
    size_t len, cap;
    bool cut;
} shoal_fault_buf_t;

void shoal__fault_put(shoal_fault_buf_t *b, const char *s);
void shoal__fault_put_n(shoal_fault_buf_t *b, const char *s, size_t n);
/* Decimal. */
void shoal__fault_put_u64(shoal_fault_buf_t *b, uint64_t v);
/* 0x and lower-case hex digits, no leading zeros (0x0 for 0). */
void shoal__fault_put_hex(shoal_fault_buf_t *b, uint64_t v);
/* A JSON string: quoted, '"' and '\\' escaped, control bytes as \u00XX,
 * everything else as is (as host_log.c's json_string). */
void shoal__fault_put_json(shoal_fault_buf_t *b, const char *s, size_t n);
/* UTC, as the host's log lines: 2026-11-22T10:41:32.390Z (milliseconds,
 * truncated). sec may be any time from year 0 to 9999. */
void shoal__fault_put_time(shoal_fault_buf_t *b, int64_t sec, long nsec);
/* "SIGSEGV", ..., for the five fatal signals; NULL for any other. */
const char *shoal__fault_signame(int sig);

/* What a report says, gathered by the handler. */
typedef struct shoal_fault_report_s {
    int64_t sec; /* CLOCK_REALTIME */
    long nsec;
    uint64_t generation;
    int sig;
    int code;            /* si_code: > 0 from the kernel (a fault), else sent */
    uint64_t addr;       /* si_addr, for a fault */
    int sender;          /* si_pid, for a sent signal */
    bool sender_is_self; /* sent by this process (abort(), raise()) */
    shoal_pid_t pid;     /* the actor in a callback, or SHOAL_PID_NONE */
    const char *label;   /* its log name: "pool/behaviour", or the behaviour's */
    const char *pool;    /* NULL: not a pool's worker */
    const char *behaviour;
    const char *origin; /* "plugin NAME VERSION (FILE)", or NULL: built in */
    const char *thread; /* "dispatcher thread 1", "the host thread", ... */
    bool in_runtime;    /* a dispatcher thread outside any callback */
} shoal_fault_report_t;

/* The report's line, newline included. */
void shoal__fault_format_line(shoal_fault_buf_t *b, const shoal_fault_report_t *r, int format);

/* The backtrace block: text "  backtrace:\n" then one "    #i FRAME\n" per
 * frame (a run of one frame repeated, as in a recursion, is one line:
 * "    #i-#j: the frame above, N more times"); JSON one line (see the top).
 * frames[i] is what backtrace_symbols_fd wrote for frame i, without its
 * newline. A frame that does not fit is left out, with the ones after it,
 * and the block says how many were. deeper: the unwinder stopped at its
 * limit, and the block says so. */
void shoal__fault_format_backtrace(shoal_fault_buf_t *b, const shoal_fault_report_t *r, int format,
                                   const char *const *frames, size_t nframes, bool deeper);

#endif
