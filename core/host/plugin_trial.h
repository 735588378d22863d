/* plugin_trial.h - a plugin's ELF constructors tried in a child process
 * before the host runs them.
 *
 * dlopen runs a shared object's constructors (__attribute__((constructor)),
 * C++ static initialisers) before it returns, holding the dynamic loader's
 * lock, and nothing in the host can bound them: one that never returns
 * holds the loading thread -- the host thread, at a reload -- and every
 * later dlopen for good; one that crashes kills the host. So before the
 * host's own dlopen, a forked child dlopens the same private copy, writes
 * a byte to a pipe and _exits (no destructors); the host waits for it at
 * most timeout_ms. A child killed by a signal, one that ended without the
 * byte (a constructor that called exit or _exit, whatever the status), or
 * one still running at the deadline (then killed) refuses the plugin and
 * says which.
 *
 * What it costs and what it does not catch: a fork and a dlopen per load of
 * a new file (about a millisecond; a file already loaded is found, not
 * loaded again). Constructors run twice, once in the child -- whose effects
 * on memory go with it, but a file it writes stays -- and once in the
 * host. One that hangs or crashes only sometimes can pass the trial and
 * still do so in the host: the trial catches the bug that always happens.
 * The child keeps the host's signal mask (shoald's HUP, INT and TERM stay
 * blocked: a signal to the process group is not its to act on), closes
 * every descriptor but the copy's, dies with the thread that forked it,
 * and leaves no core file.
 */
#ifndef SHOAL_HOST_PLUGIN_TRIAL_H
#define SHOAL_HOST_PLUGIN_TRIAL_H

#include <stddef.h>

/* Tries dlopen of the file open at copy in a child process. Returns 0 when
 * the child returned from dlopen (whether it loaded: a dlopen that fails
 * fails the same way in the host, which reports dlerror's words); else
 * SHOAL_ELOAD with why set: "its ELF constructors crashed (SIGSEGV) when
 * tried in a child process", "... did not return within N ms when tried in
 * a child process (killed)", or why the trial could not run. */
int shoal__plugin_trial(int copy, unsigned timeout_ms, char *why, size_t why_size);

#endif
