/* plugin_path.c - plugins by name: the plugin path and the search along it
 * (plugin_path.h).
 */
#include "host/plugin_path.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shoal/error.h"

/* The install's plugin directory relative to its bindir, from CMake
 * (cmake/Install.cmake); the default is GNUInstallDirs' layout. */
#ifndef SHOAL_PLUGINDIR_FROM_BINDIR
#define SHOAL_PLUGINDIR_FROM_BINDIR "../lib/shoal/plugins"
#endif

/* One plugins: entry: text with a '/' is a path relative to the config; one
 * without is a name ("echo" or "echo.so"), searched at resolve. */
static int set_plugin(const shoal_config_t *c, shoal_config_plugin_t *pl, const char *text)
{
    if (strchr(text, '/') != NULL)
        return (pl->path = shoal__config_path(c->dir, text)) ? SHOAL_OK : SHOAL_ENOMEM;
    size_t n = strlen(text);
    bool has_so = n > 3 && strcmp(text + n - 3, ".so") == 0;
    if ((pl->file = malloc(n + 4)) == NULL)
        return SHOAL_ENOMEM;
    snprintf(pl->file, n + 4, "%s%s", text, has_so ? "" : ".so");
    return SHOAL_OK;
}

/* plugin_path.h */
int shoal__config_plugins(shoal_config_t *c, const shoal_node_t *plugins, shoal_diag_t *err)
{
    if (plugins->kind == SHOAL_NODE_SCALAR)
        return shoal__node_fail(
            err, plugins, "plugins: expected a mapping of NAME: path or a list of names, got %s",
            shoal__node_kind_name(plugins));
    if ((c->plugins = calloc(plugins->n ? plugins->n : 1, sizeof *c->plugins)) == NULL)
        return SHOAL_ENOMEM;
    bool list = plugins->kind == SHOAL_NODE_LIST;
    for (size_t i = 0; i < plugins->n; i++) {
        const shoal_node_t *val = plugins->items[i];
        shoal_config_plugin_t *pl = &c->plugins[c->nplugins++];
        pl->at = val;
        if (list) {
            if (val->kind != SHOAL_NODE_SCALAR || val->text[0] == '\0' ||
                strchr(val->text, '/') != NULL || strcmp(val->text, ".so") == 0)
                return shoal__node_fail(
                    err, val,
                    "plugins[%zu]: expected a plugin name (write NAME: path for a file), "
                    "got %s",
                    i,
                    val->kind == SHOAL_NODE_SCALAR ? val->text[0] ? val->text : "''"
                                                   : shoal__node_kind_name(val));
            size_t n = strlen(val->text);
            if (n > 3 && strcmp(val->text + n - 3, ".so") == 0)
                n -= 3;
            if ((pl->name = strndup(val->text, n)) == NULL)
                return SHOAL_ENOMEM;
            for (size_t j = 0; j + 1 < c->nplugins; j++)
                if (strcmp(c->plugins[j].name, pl->name) == 0)
                    return shoal__node_fail(err, val, "plugins[%zu]: '%s' is listed twice", i,
                                            pl->name);
        } else if ((pl->name = strdup(plugins->keys[i]->text)) == NULL) {
            return SHOAL_ENOMEM;
        }
        if (!list && (val->kind != SHOAL_NODE_SCALAR || val->text[0] == '\0'))
            return shoal__node_fail(
                err, val, "plugins.%s: expected the path of a .so or a plugin name, got %s",
                pl->name,
                val->kind == SHOAL_NODE_SCALAR ? "an empty string" : shoal__node_kind_name(val));
        int rc = set_plugin(c, pl, val->text);
        if (rc != SHOAL_OK)
            return rc;
    }
    return SHOAL_OK;
}

int shoal__plugin_path_install_dir(char *buf, size_t size)
{
    char exe[PATH_MAX], dir[PATH_MAX + sizeof SHOAL_PLUGINDIR_FROM_BINDIR + 1];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return SHOAL_EINVAL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return SHOAL_EINVAL;
    *slash = '\0';
    snprintf(dir, sizeof dir, "%s/%s", exe, SHOAL_PLUGINDIR_FROM_BINDIR);
    char real[PATH_MAX];
    const char *d = realpath(dir, real) != NULL ? real : dir;
    if (strlen(d) >= size)
        return SHOAL_EINVAL;
    memcpy(buf, d, strlen(d) + 1);
    return SHOAL_OK;
}

/* What was searched for one plugin, for the not-found message. */
typedef struct search_s {
    const char *file; /* "echo.so" */
    char *path;       /* found: malloc'd */
    const char *found;
    char tried[400]; /* "/a, /b (SHOAL_PLUGIN_PATH), ..." */
    size_t ntried;
    char bad[400]; /* an entry that is there but is no plugin file: why */
} search_t;

/* Looks for s->file in dir (whose length is len: a part of a list). True
 * when found (s->path set) or out of memory (s->path NULL, *nomem set). */
static bool look(search_t *s, const char *base, const char *dir, size_t len, const char *from,
                 bool *nomem)
{
    if (len == 0)
        return false; /* an empty part of $SHOAL_PLUGIN_PATH */
    size_t blen = base != NULL && dir[0] != '/' ? strlen(base) : 0;
    size_t n = blen + 1 + len + 1 + strlen(s->file) + 1;
    char *p = malloc(n);
    if (p == NULL) {
        *nomem = true;
        return true;
    }
    if (blen > 0)
        snprintf(p, n, "%s/%.*s/%s", base, (int)len, dir, s->file);
    else
        snprintf(p, n, "%.*s/%s", (int)len, dir, s->file);
    struct stat st;
    int rc = stat(p, &st);
    if (rc == 0 && S_ISREG(st.st_mode)) {
        s->path = p;
        s->found = from;
        return true;
    }
    /* There, but no file to load (a directory, a device, a symlink loop,
     * no permission): the search stops here, as a junk file would, and
     * says why; only a name that is not there at all goes on. */
    if ((rc == 0 && !S_ISREG(st.st_mode)) || (rc != 0 && errno != ENOENT && errno != ENOTDIR)) {
        snprintf(s->bad, sizeof s->bad, "%s (%s) %s%s", p, from,
                 rc == 0 ? (S_ISDIR(st.st_mode) ? "is a directory, not a plugin file"
                                                : "is not a regular file")
                         : "cannot be read: ",
                 rc == 0 ? "" : strerror(errno));
        free(p);
        return true;
    }
    size_t shown = blen > 0 ? blen + 1 + len : len; /* the directory: p without "/file" */
    p[shown] = '\0';
    if (s->ntried < sizeof s->tried)
        s->ntried += (size_t)snprintf(s->tried + s->ntried, sizeof s->tried - s->ntried,
                                      "%s%s (%s)", s->ntried ? ", " : "", p, from);
    free(p);
    return false;
}

/* The search along the whole path: true when found or out of memory. */
static bool search(const shoal_config_t *c, search_t *s, bool *nomem)
{
    const shoal_node_t *list = c->runtime.plugin_path;
    const char *base = c->dir[0] != '\0' ? c->dir : ".";
    for (size_t i = 0; list != NULL && i < list->n; i++) {
        const char *d = list->items[i]->text;
        if (look(s, base, d, strlen(d), SHOAL_FOUND_CONFIG, nomem))
            return true;
    }
    const char *env = getenv("SHOAL_PLUGIN_PATH");
    for (const char *p = env; p != NULL && *p != '\0';) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (look(s, NULL, p, len, SHOAL_FOUND_ENV, nomem))
            return true;
        p = colon ? colon + 1 : p + len;
    }
    char dir[PATH_MAX];
    if (shoal__plugin_path_install_dir(dir, sizeof dir) == SHOAL_OK &&
        look(s, NULL, dir, strlen(dir), SHOAL_FOUND_INSTALL, nomem))
        return true;
    return false;
}

int shoal__config_find_plugins(shoal_config_t *c, shoal_diag_t *err)
{
    for (size_t i = 0; i < c->nplugins; i++) {
        shoal_config_plugin_t *pl = &c->plugins[i];
        if (pl->path != NULL) {
            if (pl->found == NULL)
                pl->found = SHOAL_FOUND_FILE;
            continue;
        }
        search_t s = {.file = pl->file};
        bool nomem = false;
        if (search(c, &s, &nomem)) {
            if (nomem)
                return SHOAL_ENOMEM;
            if (s.path == NULL) { /* an entry there that is not a plugin file */
                shoal__diag_set(err, pl->at->file, pl->at->line, pl->at->col, "plugins.%s: %s",
                                pl->name, s.bad);
                return SHOAL_ELOAD;
            }
            pl->path = s.path;
            pl->found = s.found;
            continue;
        }
        /* Not found: the directories searched, and a hint when the old rule
         * (a bare file name beside the config) is what was meant. */
        char beside[PATH_MAX];
        struct stat st;
        snprintf(beside, sizeof beside, "%s/%s", c->dir[0] != '\0' ? c->dir : ".", pl->file);
        bool there = stat(beside, &st) == 0 && S_ISREG(st.st_mode);
        shoal__diag_set(err, pl->at->file, pl->at->line, pl->at->col,
                        "plugins.%s: %s not found in %s%s%s", pl->name, pl->file,
                        s.ntried ? s.tried : "no directory (the plugin path is empty)",
                        there ? "; write ./" : "", there ? pl->file : "");
        if (there) {
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n, " for the file beside this config");
        }
        return SHOAL_ELOAD;
    }
    return SHOAL_OK;
}
