/* plugin_trial.h - a plugin's ELF constructors tried in a child process
 * before the host runs them.
 *
 * dlopen runs a shared object's constructors (__attribute__((constructor)),
 * C++ static initialisers) before it returns, holding the dynamic loader's
 * lock, and nothing in the host can bound them: one that never returns
 * holds the loading thread -- the host thread, at a reload -- and every
 * later dlopen for good; one that crashes, exits or raises SIGTERM ends the
 * host. So before the host's own dlopen, the program starts itself again
 * (posix_spawn of /proc/self/exe, marked by an environment variable that a
 * constructor of this file reads before main): a fresh, single-threaded
 * process -- a plain fork would inherit locks other threads hold (glibc's
 * time-zone lock, taken by every log line, made a localtime() in a
 * constructor hang there) -- that dlopens the same private copy, writes a
 * byte to a pipe and _exits (no destructors). The host waits for it at
 * most timeout_ms. One killed by a signal, one that ended without the byte
 * (a constructor that called exit or _exit, whatever the status), or one
 * still running at the deadline (then killed) refuses the plugin and says
 * which. Its stdin, stdout and stderr are /dev/null, every other
 * descriptor but the copy and the pipe closed; every signal is at its
 * default and unblocked; it leaves no core file and dies with the host.
 *
 * What it costs and what it does not catch: a process start and a dlopen
 * per new file (a few milliseconds); a file that passed is not tried again
 * while it stays the same file (device, inode, size, times). Constructors
 * run twice, once in the trial -- whose effects on memory go with it, but a
 * file it writes stays -- and once in the host, so a slow one costs twice
 * and one slower than the deadline is refused. One that hangs or crashes
 * only sometimes, or only in the host (it can tell the two apart), can
 * pass: the trial catches the bug that always happens, not a hostile
 * plugin.
 */
#ifndef SHOAL_HOST_PLUGIN_TRIAL_H
#define SHOAL_HOST_PLUGIN_TRIAL_H

#include <stddef.h>
#include <sys/stat.h>

/* Tries dlopen of the file open at copy (st: the file it was copied from)
 * in a child process. Returns 0 when the child returned from dlopen
 * (whether it loaded: a dlopen that fails fails the same way in the host,
 * which reports dlerror's words) or the file passed before; else
 * SHOAL_ELOAD with why set: "its ELF constructors were killed by SIGSEGV
 * when tried in a child process", "... ended the process (exit status N)
 * ...", "... did not return within N ms when tried in a child process
 * (killed)", or why the trial could not run. */
int shoal__plugin_trial(int copy, const struct stat *st, unsigned timeout_ms, char *why,
                        size_t why_size);

/* The same, calling tend(tend_arg) (NULL: nothing) every SHOAL_ASK_EVERY_MS at most
 * while it waits for the child: the host thread waits here up to
 * timeout_ms, and shoald pets systemd's watchdog meanwhile (loader.h,
 * shoal__loader_set_tend). */
int shoal__plugin_trial_tended(int copy, const struct stat *st, unsigned timeout_ms,
                               void (*tend)(void *), void *tend_arg, char *why, size_t why_size);

#endif
