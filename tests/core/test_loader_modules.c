/* test_loader_modules.c - modules the loader (host/loader.c) loads: good.so's
 * descriptor and behaviours (the host's copies of them), a plugin without
 * the ABI note, one module per file (by any name), plugin init and fini
 * once each; the code run from a private copy, never from the file, kept
 * mapped while any actor spawned from it lives and closed when the last one
 * ends (seen in /proc/self/maps), also after the loader has gone; and a
 * file rebuilt or overwritten in place under a loaded module. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "host/node.h"
#include "loader_kit.h"

/* ---- loading good plugins --------------------------------------------------- */

static void test_no_note_loads(void)
{
    const char *path = lk_fixture("no_note.so");
    shoal_plugin_note_t note;
    CU_ASSERT(!lk_elf_note(path, &note)); /* the fixture really has none */
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(m)->name, "nonote");
    CU_ASSERT_PTR_NOT_NULL(shoal__module_behaviour(m, "plain"));
    shoal__module_release(m);
    CU_ASSERT(!lk_mapped(path));
    shoal__loader_destroy(L);
}

static void test_good_loads(void)
{
    const char *path = lk_fixture("good.so");
    shoal_plugin_note_t note;
    CU_ASSERT_FATAL(lk_elf_note(path, &note));
    CU_ASSERT_EQUAL(note.abi_major, SHOAL_ABI_MAJOR);
    CU_ASSERT_EQUAL(note.abi_minor, SHOAL_ABI_MINOR);
    CU_ASSERT_EQUAL(note.descriptor_size, sizeof(shoal_plugin_t));
    lk_good_log_reset();
    CU_ASSERT(!lk_mapped(path));

    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    /* The code runs from a private copy, never from the file at the path. */
    CU_ASSERT(!lk_mapped(path));
    ino_t ino = lk_copy_ino(m);
    CU_ASSERT(lk_copy_mapped(ino));
    CU_ASSERT_EQUAL(lk_good_log_count("init"), 1);
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 0);

    const shoal_plugin_t *d = shoal__module_plugin(m);
    CU_ASSERT_EQUAL(d->abi_major, SHOAL_ABI_MAJOR);
    CU_ASSERT_EQUAL(d->abi_minor, SHOAL_ABI_MINOR);
    CU_ASSERT_EQUAL(d->size, sizeof(shoal_plugin_t));
    CU_ASSERT_STRING_EQUAL(d->name, "good");
    CU_ASSERT_STRING_EQUAL(d->version, "1.2.3");
    CU_ASSERT_STRING_EQUAL(shoal__module_path(m), path);

    const shoal_behaviour_t *alpha = shoal__module_behaviour(m, "alpha");
    const shoal_behaviour_t *beta = shoal__module_behaviour(m, "beta");
    CU_ASSERT_PTR_NOT_NULL_FATAL(alpha);
    CU_ASSERT_PTR_NOT_NULL_FATAL(beta);
    CU_ASSERT_STRING_EQUAL(alpha->name, "alpha");
    CU_ASSERT_STRING_EQUAL(beta->name, "beta");
    /* The host's copies (loader.c), carrying the plugin's callbacks. */
    CU_ASSERT_PTR_NOT_EQUAL(alpha, d->behaviours[0]);
    CU_ASSERT_PTR_EQUAL(alpha->handle_message, d->behaviours[0]->handle_message);
    CU_ASSERT_PTR_EQUAL(beta->handle_message, d->behaviours[1]->handle_message);
    CU_ASSERT_EQUAL(shoal__module_behaviour_count(m), 2);
    CU_ASSERT_PTR_EQUAL(shoal__module_behaviour_at(m, 0), alpha);
    CU_ASSERT_PTR_EQUAL(shoal__module_behaviour_at(m, 1), beta);
    CU_ASSERT_PTR_NULL(shoal__module_behaviour_at(m, 2));
    CU_ASSERT_PTR_NULL(d->behaviours[2]);
    CU_ASSERT_PTR_NOT_NULL(alpha->handle_call);
    CU_ASSERT_PTR_NULL(beta->handle_call);
    CU_ASSERT_PTR_NULL(shoal__module_behaviour(m, "gamma"));
    CU_ASSERT_PTR_NULL(shoal__module_behaviour(m, "Alpha"));
    CU_ASSERT_PTR_NULL(shoal__module_behaviour(m, ""));

    /* The only reference: release runs fini and unmaps at once. */
    shoal__module_release(m);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 1);
    CU_ASSERT(!lk_copy_mapped(ino));
    shoal__loader_destroy(L);
}

static void test_load_twice_one_module(void)
{
    const char *path = lk_fixture("good.so");
    lk_good_log_reset();
    shoal_loader_t *L = NULL;
    shoal_module_t *m1 = lk_load(&L, path), *m2 = NULL, *m3 = NULL;
    shoal_diag_t err;
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m2, &err), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(m1, m2);
    ino_t ino = lk_copy_ino(m1);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    /* The same file by another name (a symlink) is the same module too. */
    char link[64];
    snprintf(link, sizeof link, "/tmp/shoal-test-link-%d.so", (int)getpid());
    unlink(link);
    CU_ASSERT_EQUAL_FATAL(symlink(path, link), 0);
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, link, &m3, &err), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(m1, m3);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    unlink(link);
    /* Plugin init ran once. */
    CU_ASSERT_EQUAL(lk_good_log_count("init"), 1);

    shoal__module_release(m3);
    shoal__module_release(m2);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT(lk_copy_mapped(ino));
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 0);
    shoal__module_release(m1);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    CU_ASSERT(!lk_copy_mapped(ino));
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 1);

    /* Loaded again after closing: a new module, init runs again. */
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &m1, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT_EQUAL(lk_good_log_count("init"), 2);
    shoal__module_release(m1);
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 2);
    shoal__loader_destroy(L);
}

/* Calls a good.alpha actor; returns its counts (all ones on failure). */
static lk_good_stats_t call_alpha(shoal_runtime_t *rt, shoal_pid_t pid)
{
    lk_good_stats_t st;
    memset(&st, 0xff, sizeof st);
    shoal_answer_t ans;
    int rc = shoal_runtime_call(rt, pid, LK_GOOD_MSG_TYPE, NULL, 0, 10000, &ans);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc != SHOAL_OK)
        return st;
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    CU_ASSERT_EQUAL(ans.type, LK_GOOD_MSG_TYPE);
    CU_ASSERT_EQUAL(ans.size, sizeof st);
    if (ans.size == sizeof st)
        memcpy(&st, ans.data, sizeof st);
    shoal_answer_release(&ans);
    return st;
}

/* The module stays mapped while an actor spawned from it lives, after the
 * holder let go; it is closed when the last one ends. */
static void test_actors_keep_module_mapped(void)
{
    const char *path = lk_fixture("good.so");
    lk_good_log_reset();
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    shoal_diag_t err;
    ino_t ino = lk_copy_ino(m);
    shoal_runtime_t *rt = lk_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t parent = shoal_test_recorder_spawn(rt);
    shoal_node_t *args = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse("pool.yaml", "start: 5\n", 9, &args, &err), SHOAL_OK);

    shoal_pid_t a = SHOAL_PID_NONE, b = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, parent, shoal__module_behaviour(m, "alpha"), args, 64, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, parent, shoal__module_behaviour(m, "beta"), NULL, 64, &b),
        SHOAL_OK);
    lk_good_stats_t st = call_alpha(rt, a); /* init has run: args no longer needed */
    CU_ASSERT_EQUAL(st.messages, 5);
    CU_ASSERT_EQUAL(st.calls, 1);
    shoal__node_free(args);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, LK_GOOD_MSG_TYPE, &i, sizeof i), SHOAL_OK);
    st = call_alpha(rt, a);
    CU_ASSERT_EQUAL(st.messages, 8);
    CU_ASSERT_EQUAL(st.calls, 2);
    /* beta has no handle_call: answered SHOAL_ENOTSUP by the runtime. */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, b, 1, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_ENOTSUP);
    shoal_answer_release(&ans);

    /* The holder lets go: two actors still run the code. */
    shoal__module_release(m);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT(lk_copy_mapped(ino));

    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, a), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(1, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(0), a);
    CU_ASSERT_EQUAL(shoal_test_exit_status(0), SHOAL_ESHUTDOWN);
    /* One actor left: still mapped, however long we wait. */
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    CU_ASSERT(lk_copy_mapped(ino));
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 0);
    /* beta still answers. */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, b, 1, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_ENOTSUP);
    shoal_answer_release(&ans);

    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, b), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(2, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(1), b);
    CU_ASSERT_EQUAL(shoal_test_exit_status(1), SHOAL_ESHUTDOWN);
    CU_ASSERT(lk_wait_unmapped(ino, 10.0));
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    CU_ASSERT_EQUAL(lk_good_log_count("init"), 1);
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 1);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

/* The loader may go before its modules: they close on their last release. */
static void test_loader_destroyed_before_module(void)
{
    const char *path = lk_fixture("good.so");
    lk_good_log_reset();
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    ino_t ino = lk_copy_ino(m);
    shoal__loader_destroy(L);
    CU_ASSERT(lk_copy_mapped(ino));
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(m)->name, "good");
    shoal__module_release(m);
    CU_ASSERT(!lk_copy_mapped(ino));
    CU_ASSERT_EQUAL(lk_good_log_count("fini"), 1);
}

/* ---- a file changed under a loaded module --------------------------------- */

/* Writes src's bytes into dst: a new file, or over an existing one in place
 * (the same inode, as `cp src dst` does). */
static int write_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    char buf[65536];
    ssize_t n;
    int rc = in < 0 || out < 0 ? -1 : 0;
    while (rc == 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            rc = -1;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return rc;
}

/* Makes a temporary directory from the template in dir, copies good.so to
 * path (dir/p.so) and loads it into a new loader *L: the module. */
static shoal_module_t *load_copy(char *dir, char path[PATH_MAX], shoal_loader_t **L)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, PATH_MAX, "%s/p.so", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(lk_fixture("good.so"), path), 0);
    return lk_load(L, path);
}

/* A plugin rebuilt (the same path, a new file there) while the old one is
 * loaded: the new load is the new code, from its own private copy; the old
 * module keeps its own. */
static void test_changed_file_loads_fresh(void)
{
    char dir[] = "/tmp/shoal-test-XXXXXX";
    char path[PATH_MAX];
    shoal_loader_t *L;
    shoal_module_t *a = load_copy(dir, path, &L), *b;
    shoal_diag_t err = {0};
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(a)->name, "good");
    struct stat before, after;
    CU_ASSERT_EQUAL(stat(path, &before), 0);
    /* Rebuilt: a new file renamed over the old name. */
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/p.so.new", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(lk_fixture("no_note.so"), tmp), 0);
    CU_ASSERT_EQUAL_FATAL(rename(tmp, path), 0);
    CU_ASSERT_EQUAL(stat(path, &after), 0);
    CU_ASSERT_NOT_EQUAL(before.st_ino, after.st_ino);
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &b, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_EQUAL(a, b);
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(b)->name, "nonote");
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(a)->name, "good"); /* old code still mapped */
    CU_ASSERT_STRING_EQUAL(shoal__module_path(b), path);           /* named by the real path */
    CU_ASSERT_EQUAL(shoal__loader_count(L), 2);
    shoal__module_release(a);
    shoal__module_release(b);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal__loader_destroy(L);
    unlink(path);
    rmdir(dir);
}

/* `cp new.so plugins/x.so` over a loaded plugin, in place, while an actor
 * runs its code: the running code is the private copy, so the actor goes on
 * answering; a truncated file (cp caught half way) is refused by the next
 * load, never mapped; the next load of the finished file is the new code. */
static void test_overwritten_in_place(void)
{
    char dir[] = "/tmp/shoal-test-XXXXXX";
    char path[PATH_MAX];
    shoal_loader_t *L;
    shoal_module_t *a = load_copy(dir, path, &L), *b;
    shoal_diag_t err = {0};
    shoal_runtime_t *rt = lk_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, a, SHOAL_PID_NONE,
                                              shoal__module_behaviour(a, "alpha"), NULL, 16, &pid),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 1);
    struct stat before, after;
    CU_ASSERT_EQUAL(stat(path, &before), 0);

    /* Caught half way: the first 200 bytes only. */
    CU_ASSERT_EQUAL_FATAL(truncate(path, 200), 0);
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 2);
    CU_ASSERT_EQUAL(shoal__module_load(L, path, &b, &err), SHOAL_ELOAD);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);

    /* Finished: another plugin's bytes in the same inode. */
    CU_ASSERT_EQUAL_FATAL(write_file(lk_fixture("no_note.so"), path), 0);
    CU_ASSERT_EQUAL(stat(path, &after), 0);
    CU_ASSERT_EQUAL(before.st_ino, after.st_ino);
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 3); /* the old code, untouched */
    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, path, &b, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_EQUAL(a, b);
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(b)->name, "nonote");
    CU_ASSERT_STRING_EQUAL(shoal__module_plugin(a)->name, "good");
    CU_ASSERT(!lk_mapped(path));
    shoal__module_release(b);
    shoal__module_release(a); /* the actor still holds a */
    CU_ASSERT_EQUAL(call_alpha(rt, pid).calls, 4);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 1);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal__loader_destroy(L);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"no note loads", test_no_note_loads},
        {"good loads", test_good_loads},
        {"load twice: one module", test_load_twice_one_module},
        {"actors keep the module mapped", test_actors_keep_module_mapped},
        {"loader destroyed before its module", test_loader_destroyed_before_module},
        {"a rebuilt file at a loaded path loads fresh", test_changed_file_loads_fresh},
        {"a file overwritten in place under running code", test_overwritten_in_place},
        {NULL, NULL},
    };
    return lk_run("loader_modules", cases);
}
