/* loader.h - loading plugins (shoal/plugin.h) and keeping them mapped while
 * their code can run.
 *
 * A module is one loaded .so. It is counted: one reference for each holder
 * (the config generation that named it, a caller of shoal__module_load) and
 * one for each live actor spawned from one of its behaviours, dropped when
 * that actor ends. When the last goes, fini runs and the .so is closed.
 * Loading a file that is already loaded (same device, inode, size,
 * modification and change times) returns the same module.
 *
 * The code that runs is never the configured file itself but a private,
 * sealed copy taken and checked at load (loader.c): overwriting the file
 * (`cp new.so plugins/x.so`) cannot touch running code, and is picked up by
 * the next load of that path.
 */
#ifndef SHOAL_HOST_LOADER_H
#define SHOAL_HOST_LOADER_H

#include <stdbool.h>
#include <sys/types.h>

#include "host/diag.h"
#include "shoal/plugin.h"
#include "shoal/runtime.h"

typedef struct shoal_module_s shoal_module_t;
typedef struct shoal_loader_s shoal_loader_t;

int shoal__loader_create(shoal_loader_t **loader);
/* Drops nothing the modules' holders own; call after every holder let go
 * (modules still referenced stay valid and close on their last release). */
void shoal__loader_destroy(shoal_loader_t *loader);

/* The largest plugin file loaded: the whole file is copied before it is
 * mapped (on the host thread at a reload or a diff: ~4 ms per MiB), so a
 * huge file named as a plugin (a 1 GiB one held the host 4 s, 3 GiB 13.6 s)
 * is refused unread: "too large: N bytes, past the 256 MiB a plugin may
 * be". */
#define SHOAL_PLUGIN_MAX_SIZE (256 << 20)

/* What the host reads of a plugin file before any of its code runs -- the
 * first steps of shoal__module_load, apart so that fuzz_plugin_file
 * (tests/fuzz/) can feed them any bytes without a dlopen. fd is open on
 * path, a regular file of size bytes (its st_size); it stays the caller's.
 * Checks the ELF header and the size, copies the file into a private sealed
 * memfd, reads the copy's .note.shoal (*found, *note: what it says, also
 * when the ABI it names is refused) and checks that ABI. SHOAL_OK: *copy is
 * the copy (close-on-exec), the caller's to close. Else *copy is -1:
 * SHOAL_ELOAD, err names path and the reason, or SHOAL_ENOMEM. */
int shoal__plugin_file_check(const char *path, int fd, off_t size, int *copy,
                             shoal_plugin_note_t *note, bool *found, shoal_diag_t *err);

/* Loads (or finds) the plugin at path; on SHOAL_OK the caller holds one
 * reference. On error (SHOAL_ELOAD, SHOAL_ENOMEM) err names the file and the
 * reason. */
int shoal__module_load(shoal_loader_t *loader, const char *path, shoal_module_t **module,
                       shoal_diag_t *err);
/* Where the loader says what no caller hears of: a plugin's fini that did
 * not return in time (plugin_init.h). warn NULL: nowhere. warn is called
 * on the thread that released the plugin, under the loader's lock. */
void shoal__loader_set_warn(shoal_loader_t *loader, void (*warn)(void *user, const char *line),
                            void *user);
/* What the thread that calls this (shoald's host thread) does while it
 * waits on a plugin it loads or releases -- its ELF constructors' trial,
 * its init, its fini, each up to SHOAL_PLUGIN_INIT_TIMEOUT_MS: tend(user)
 * every SHOAL_ASK_EVERY_MS (sched/futex.h) at most. shoald pets systemd's
 * watchdog there, as its main loop does (only while the dispatcher handles
 * the heartbeat: notify.h): a reload or a diff naming a plugin whose
 * constructor hangs held the host thread 10 s with no WATCHDOG=1, and
 * under WatchdogSec=10s systemd killed shoald for a reload that was to
 * fail and change nothing. Called on that thread only (a fini on a
 * dispatcher thread waits untended), never under the loader's list lock (a
 * load's lock may be held: tend must not load). tend NULL: nothing. */
void shoal__loader_set_tend(shoal_loader_t *loader, void (*tend)(void *user), void *user);
void shoal__module_ref(shoal_module_t *m);
void shoal__module_release(shoal_module_t *m);

const shoal_plugin_t *shoal__module_plugin(const shoal_module_t *m);
const char *shoal__module_path(const shoal_module_t *m);
/* Names the module by path from now on (its origin, a crash's frames):
 * what an isolated pool's child does with the copy it was handed as a
 * descriptor, so its reports name the configured file. Before anything
 * else reads the module's names. */
int shoal__module_show_as(shoal_module_t *m, const char *path);
/* The private copy's descriptor (a sealed memfd, close-on-exec), valid
 * while the module is: what a child process is given to load the same
 * code. */
int shoal__module_fd(const shoal_module_t *m);
/* "plugin NAME VERSION (PATH)", PATH as it was loaded: how a crash report
 * names the code an actor runs (actor.h: shoal_actor_hold_t.origin). Lives
 * as long as m. */
const char *shoal__module_origin(const shoal_module_t *m);
/* The behaviour named `name`, or NULL: the host's copy (loader.c), valid
 * while the module is. Spawn from these, not from the plugin's own structs. */
const shoal_behaviour_t *shoal__module_behaviour(const shoal_module_t *m, const char *name);
size_t shoal__module_behaviour_count(const shoal_module_t *m);
const shoal_behaviour_t *shoal__module_behaviour_at(const shoal_module_t *m, size_t i);

/* Spawns an actor running a behaviour of m (parent may be SHOAL_PID_NONE);
 * the actor holds a reference to m until it ends. */
int shoal__module_spawn(shoal_runtime_t *rt, shoal_module_t *m, shoal_pid_t parent,
                        const shoal_behaviour_t *beh, const void *args, uint32_t mailbox_limit,
                        shoal_pid_t *pid);

/* Modules currently loaded by this loader (for tests and inspection). */
unsigned shoal__loader_count(shoal_loader_t *loader);

#endif
