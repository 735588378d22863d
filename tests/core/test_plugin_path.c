/* test_plugin_path.c - plugins by name (host/plugin_path.c): the list form
 * of plugins:, the search order (runtime.plugin_path relative to the file,
 * then $SHOAL_PLUGIN_PATH, then the install's plugin directory beside the
 * running program: here build/bin/ -> build/lib/shoal/plugins), the exact
 * not-found message (with the hint for a file beside the config), a path
 * with a '/' never searched, and a resolve of names that loads the bundled
 * plugins from the build's plugin directory. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/config.h"
#include "host/plugin_path.h"
#include "support.h"

static char tmp[64]; /* the test's directory: conf/ a/ b/ env1/ env2/ */

static void same(const char *got, const char *want)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:  %s\n    want: %s\n", got, want);
}

static void touch(const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
}

static void rm(const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    CU_ASSERT_EQUAL(unlink(p), 0);
}

/* text parsed as <tmp>/conf/t.yaml, its plugins searched: the code of
 * shoal__config_find_plugins; *out the config (free it), err its error. */
static int find(const char *text, shoal_config_t **out, char *err, size_t size)
{
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/conf/t.yaml", tmp);
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    *out = NULL;
    err[0] = '\0';
    int rc = shoal__config_parse(file, text, strlen(text), out, &d);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    rc = shoal__config_find_plugins(*out, &d);
    shoal__diag_format(&d, err, size);
    return rc;
}

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/shoal-test-plugin-path-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
    static const char *const dirs[] = {"conf", "a", "b", "env1", "env2"};
    for (size_t i = 0; i < 5; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", tmp, dirs[i]);
        CU_ASSERT_EQUAL_FATAL(mkdir(p, 0700), 0);
    }
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The install's directory: <dir of this program>/../lib/shoal/plugins. */
static void test_install_dir(void)
{
    char dir[PATH_MAX], exe[PATH_MAX], want[PATH_MAX + 32], real[PATH_MAX];
    CU_ASSERT_EQUAL_FATAL(shoal__plugin_path_install_dir(dir, sizeof dir), SHOAL_OK);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CU_ASSERT_FATAL(n > 0);
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(want, sizeof want, "%s/../lib/shoal/plugins", exe);
    CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(want, real)); /* the build made it */
    same(dir, real);
    char small[8];
    CU_ASSERT_EQUAL(shoal__plugin_path_install_dir(small, sizeof small), SHOAL_EINVAL);
}

/* The list form: each name is its own key, .so or not. */
static void test_list(void)
{
    shoal_config_t *c;
    char err[1200];
    setenv("SHOAL_PLUGIN_PATH", "", 1);
    CU_ASSERT_EQUAL(
        find("plugins: [echo, burn.so]\npools: {a: {worker: burn.burn}}\n", &c, err, sizeof err),
        SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(c->nplugins, 2);
    same(c->plugins[0].name, "echo");
    same(c->plugins[0].file, "echo.so");
    same(c->plugins[1].name, "burn");
    same(c->plugins[1].file, "burn.so");
    char dir[PATH_MAX], want[PATH_MAX + 16];
    CU_ASSERT_EQUAL_FATAL(shoal__plugin_path_install_dir(dir, sizeof dir), SHOAL_OK);
    snprintf(want, sizeof want, "%s/burn.so", dir);
    same(c->plugins[1].path, want);
    same(c->plugins[1].found, SHOAL_FOUND_INSTALL);
    shoal__config_free(c);
}

/* touch(file), then plugins[i] of text is found at tmp/rel, from where. */
static void found_at(const char *text, const char *file, size_t i, const char *rel,
                     const char *where)
{
    shoal_config_t *c;
    char err[1200], want[PATH_MAX];
    touch(file);
    CU_ASSERT_EQUAL(find(text, &c, err, sizeof err), SHOAL_OK);
    snprintf(want, sizeof want, "%s/%s", tmp, rel);
    same(c->plugins[i].path, want);
    same(c->plugins[i].found, where);
    shoal__config_free(c);
}

/* runtime.plugin_path in its order, then $SHOAL_PLUGIN_PATH in its order
 * (empty parts skipped), then the install; a path is never searched. */
static void test_order(void)
{
    shoal_config_t *c;
    char err[1200], want[PATH_MAX], env[PATH_MAX];
    const char *text = "runtime: {plugin_path: [../a, ../b]}\n"
                       "plugins: {x: x, p: ../a/x.so, e: echo}\npools: {}\n";
    snprintf(env, sizeof env, "%s/env1::%s/env2", tmp, tmp);
    setenv("SHOAL_PLUGIN_PATH", env, 1);
    touch("env2/x.so");
    CU_ASSERT_EQUAL(find(text, &c, err, sizeof err), SHOAL_OK);
    snprintf(want, sizeof want, "%s/env2/x.so", tmp);
    same(c->plugins[0].path, want);
    same(c->plugins[0].found, SHOAL_FOUND_ENV);
    snprintf(want, sizeof want, "%s/conf/../a/x.so", tmp); /* not searched: not there */
    same(c->plugins[1].path, want);
    same(c->plugins[1].found, SHOAL_FOUND_FILE);
    same(c->plugins[2].found, SHOAL_FOUND_INSTALL); /* echo: only there */
    shoal__config_free(c);

    /* Each file put earlier on the path wins over the ones after it. */
    found_at(text, "env1/x.so", 0, "env1/x.so", SHOAL_FOUND_ENV);
    found_at(text, "b/x.so", 0, "conf/../b/x.so", SHOAL_FOUND_CONFIG);
    found_at(text, "a/x.so", 0, "conf/../a/x.so", SHOAL_FOUND_CONFIG);
    /* The install's directory comes last: an echo.so earlier wins. */
    found_at(text, "env2/echo.so", 2, "env2/echo.so", SHOAL_FOUND_ENV);

    /* A directory named x.so is not a plugin: the search stops there and
     * says so, as it would for a junk file (never a silent skip to a later
     * directory's x.so). */
    rm("a/x.so");
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/a/x.so", tmp);
    CU_ASSERT_EQUAL_FATAL(mkdir(p, 0700), 0);
    CU_ASSERT_EQUAL(find(text, &c, err, sizeof err), SHOAL_ELOAD);
    snprintf(want, sizeof want,
             "%s/conf/t.yaml:2:14: plugins.x: %s/conf/../a/x.so (runtime.plugin_path) is a "
             "directory, not a plugin file",
             tmp, tmp);
    same(err, want);
    shoal__config_free(c);
    CU_ASSERT_EQUAL(rmdir(p), 0);
    /* A symlink loop: its own reason. */
    snprintf(p, sizeof p, "%s/a/x.so", tmp);
    CU_ASSERT_EQUAL_FATAL(symlink(p, p), 0);
    CU_ASSERT_EQUAL(find(text, &c, err, sizeof err), SHOAL_ELOAD);
    snprintf(want, sizeof want,
             "%s/conf/t.yaml:2:14: plugins.x: %s/conf/../a/x.so (runtime.plugin_path) cannot be "
             "read: Too many levels of symbolic links",
             tmp, tmp);
    same(err, want);
    shoal__config_free(c);
    CU_ASSERT_EQUAL(unlink(p), 0);
    rm("b/x.so");
    rm("env1/x.so");
    rm("env2/x.so");
    rm("env2/echo.so");
    unsetenv("SHOAL_PLUGIN_PATH");
}

/* Not found: the message lists every directory searched, with where it
 * came from, and points at a file of that name beside the config. */
static void test_not_found(void)
{
    shoal_config_t *c;
    char err[1200], want[4 * PATH_MAX], inst[PATH_MAX], env[PATH_MAX];
    CU_ASSERT_EQUAL_FATAL(shoal__plugin_path_install_dir(inst, sizeof inst), SHOAL_OK);
    snprintf(env, sizeof env, "%s/env1", tmp);
    setenv("SHOAL_PLUGIN_PATH", env, 1);
    const char *text = "runtime: {plugin_path: [../a]}\nplugins:\n  e: nope.so\npools: {}\n";
    CU_ASSERT_EQUAL(find(text, &c, err, sizeof err), SHOAL_ELOAD);
    snprintf(want, sizeof want,
             "%s/conf/t.yaml:3:6: plugins.e: nope.so not found in %s/conf/../a "
             "(runtime.plugin_path), %s/env1 (SHOAL_PLUGIN_PATH), %s (the install's plugin "
             "directory)",
             tmp, tmp, tmp, inst);
    same(err, want);
    shoal__config_free(c);

    touch("conf/nope.so");
    unsetenv("SHOAL_PLUGIN_PATH");
    CU_ASSERT_EQUAL(find("plugins: [nope]\npools: {}\n", &c, err, sizeof err), SHOAL_ELOAD);
    snprintf(want, sizeof want,
             "%s/conf/t.yaml:1:11: plugins.nope: nope.so not found in %s (the install's "
             "plugin directory); write ./nope.so for the file beside this config",
             tmp, inst);
    same(err, want);
    shoal__config_free(c);
    rm("conf/nope.so");
}

/* Names resolved for real: the bundled plugins from the build's plugin
 * directory, loaded, their behaviours found. */
static void test_resolve(void)
{
    shoal_config_t *c;
    char err[1200];
    unsetenv("SHOAL_PLUGIN_PATH");
    const char *text = "plugins: [echo, burn]\n"
                       "pools:\n  a: {worker: echo.echo}\n  n: {worker: {worker: burn.burn}}\n";
    shoal_diag_t d;
    memset(&d, 0, sizeof d);
    CU_ASSERT_EQUAL_FATAL(shoal__config_parse("t.yaml", text, strlen(text), &c, &d), SHOAL_OK);
    shoal_loader_t *L = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__loader_create(&L), SHOAL_OK);
    int rc = shoal__config_resolve(c, L, &d);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    %s\n", shoal__diag_format(&d, err, sizeof err));
    CU_ASSERT_EQUAL(shoal__loader_count(L), 2);
    const shoal_config_pool_t *a = shoal__config_pool(c, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->beh);
    same(a->beh->name, "echo");
    shoal__config_free(c);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal__loader_destroy(L);
}

static void test_all(void)
{
    setup();
    test_install_dir();
    test_list();
    test_order();
    test_not_found();
    test_resolve();
    teardown();
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"plugins by name: install dir, list, order, not found, resolve", test_all},
        {NULL, NULL},
    };
    return shoal_test_run("plugin_path", cases);
}
