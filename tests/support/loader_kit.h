/* loader_kit.h - what the plugin loader suites share (test_loader_refusals,
 * test_loader_abi, test_loader_modules, test_loader_cycles,
 * test_loader_handlers, test_loader_plugin_check): the fixtures' paths
 * (tests/fixtures/plugins, built into SHOAL_FIXTURE_DIR), good.so's
 * init/fini log, what /proc/self/maps shows of a file or of a module's
 * private copy, the ELF note read independently of the loader, a runtime
 * that keeps its log, the check that a load is refused with a given
 * reason, and a main that sets good.so's log up around the suite.
 *
 * good.so's plugin init and fini append "init"/"fini" lines to the file
 * named by SHOAL_FIXTURE_GOOD_LOG, set by lk_run before any thread starts.
 */
#ifndef SHOAL_TEST_LOADER_KIT_H
#define SHOAL_TEST_LOADER_KIT_H

#include <sys/types.h>

#include "host/loader.h"
#include "support.h"

#define LK_GOOD_MSG_TYPE 0x600du

/* ---- paths, messages ---------------------------------------------------------- */

/* The fixture's absolute path (as /proc/self/maps would show it); missing
 * files keep their name. The last 8 results stay valid. */
const char *lk_fixture(const char *name);

/* good.so's init/fini log (set by lk_run), emptied by lk_good_log_reset. */
extern char lk_good_log[64];
void lk_good_log_reset(void);
/* Lines of good.so's init/fini log equal to what ("init" or "fini"). */
int lk_good_log_count(const char *what);

/* What good.alpha answers a call of LK_GOOD_MSG_TYPE with: its counts. */
typedef struct good_stats_s {
    uint64_t messages;
    uint64_t calls;
} lk_good_stats_t;

/* ---- /proc/self/maps ---------------------------------------------------------- */

/* Whether a mapping of the file at path exists. */
bool lk_mapped(const char *path);
/* The inode of a module's private copy (the memfd its code is mapped from). */
ino_t lk_copy_ino(const shoal_module_t *m);
/* Whether the private copy with this inode is mapped: a "/memfd:shoal:..."
 * line of /proc/self/maps with that inode. */
bool lk_copy_mapped(ino_t ino);
/* Waits up to timeout_s for it to be unmapped; whether it is. */
bool lk_wait_unmapped(ino_t ino, double timeout_s);

/* ---- the ELF note, read here independently of the loader ---------------------- */

/* Finds the shoal note in the file; true with *note filled when present.
 * Used to show each fixture is what it claims to be. */
bool lk_elf_note(const char *path, shoal_plugin_note_t *note);

/* ---- a runtime that keeps its log, a load, a refusal, a suite ----------------- */

/* 2 threads, warnings kept for shoal_test_log_has. */
shoal_runtime_t *lk_runtime(void);

/* A new loader in *L with path loaded into it: the module (both asserted,
 * fatally). */
shoal_module_t *lk_load(shoal_loader_t **L, const char *path);

/* Loads path, which must be refused with "<path>: plugin refused: <why>";
 * nothing stays loaded or mapped. */
void lk_assert_refused(const char *path, const char *why);

/* Runs the suite (shoal_test_run) with good.so's log set up before and
 * removed after; the process exit status. */
int lk_run(const char *suite, const shoal_test_case_t *cases);

#endif
