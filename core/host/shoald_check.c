/* shoald_check.c - shoald's commands that read a config file without
 * running it (shoald_check.h): --check, --check --diff, --help-config, and
 * the load that running starts with.
 */
#include "host/shoald_check.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/argcheck.h"
#include "host/client.h"
#include "host/plugin_path.h"

/* --help-config FILE: the schema, then the args of every behaviour of
 * FILE's plugins. Only the plugins are loaded: the pools need not be valid.
 * 2 when FILE or a plugin cannot be read. */
int shoald_help_config(const char *path)
{
    shoal_diag_t err = {0};
    char buf[1200];
    shoal_config_t *c = NULL;
    shoal_loader_t *loader = NULL;
    int rc = shoal__config_load(path, &c, &err);
    if (rc == SHOAL_OK && (rc = shoal__loader_create(&loader)) != SHOAL_OK)
        shoal__diag_set(&err, NULL, 0, 0, "cannot create the plugin loader: %s",
                        shoal_strerror(rc));
    if (rc == SHOAL_OK)
        rc = shoal__config_find_plugins(c, &err); /* names on the plugin path */
    if (rc != SHOAL_OK)
        goto fail;
    shoal__config_help(stdout);
    printf("\nARGS (what each behaviour of %s's plugins takes under a pool's args:, or a pull "
           "pool's source_args: for its source):\n",
           path);
    for (size_t i = 0; i < c->nplugins; i++) {
        shoal_config_plugin_t *pl = &c->plugins[i];
        shoal_module_t *m;
        shoal_diag_t why = {0};
        if ((rc = shoal__module_load(loader, pl->path, &m, &why)) != SHOAL_OK) {
            shoal__diag_set(&err, pl->at->file, pl->at->line, pl->at->col, "plugins.%s: %s: %s",
                            pl->name, pl->path, why.msg[0] ? why.msg : shoal_strerror(rc));
            goto fail;
        }
        printf("\n");
        shoal__argcheck_describe(stdout, m, pl->name);
        shoal__module_release(m);
    }
    shoal__config_free(c);
    shoal__loader_destroy(loader);
    return 0;
fail:
    fflush(stdout);
    fprintf(stderr, "%s\n", shoal__diag_format(&err, buf, sizeof buf));
    shoal__config_free(c);
    shoal__loader_destroy(loader);
    return 2;
}

/* shoald_load's stop, as config_resolve asks it. */
typedef struct load_stop_s {
    const char *(*fn)(void *);
    void *arg;
    const char *name; /* the stop that came, once one did */
} load_stop_t;

static bool load_stopped(void *arg)
{
    load_stop_t *s = arg;
    return s->fn != NULL && (s->name = s->fn(s->arg)) != NULL;
}

int shoald_load(const char *path, const char *(*stop)(void *), void *arg, shoal_config_t **c,
                shoal_loader_t **loader)
{
    load_stop_t st = {.fn = stop, .arg = arg};
    shoal_diag_t err = {0};
    char buf[1200];
    *c = NULL;
    *loader = NULL;
    int rc = shoal__config_load(path, c, &err);
    if (rc == SHOAL_OK && (rc = shoal__loader_create(loader)) != SHOAL_OK)
        shoal__diag_set(&err, NULL, 0, 0, "cannot create the plugin loader: %s",
                        shoal_strerror(rc));
    if (rc == SHOAL_OK)
        rc = shoal__config_resolve_until(*c, *loader, load_stopped, &st, &err);
    if (rc == SHOAL_OK)
        return 0;
    int status = rc == SHOAL_ESHUTDOWN ? 1 : 2;
    if (rc == SHOAL_ESHUTDOWN)
        fprintf(stderr, "shoald: %s while its plugins loaded: stopped (%s)\n", st.name,
                shoal__diag_format(&err, buf, sizeof buf));
    else
        fprintf(stderr, "%s\n", shoal__diag_format(&err, buf, sizeof buf));
    shoal__config_free(*c);
    if (*loader != NULL)
        shoal__loader_destroy(*loader);
    *c = NULL;
    *loader = NULL;
    return status;
}

/* --check: 0 valid (and *control, when control is not NULL, a copy of
 * FILE's runtime.control or NULL), else 2. */
int shoald_check(const char *path, char **control)
{
    shoal_config_t *c;
    shoal_loader_t *loader;
    if (shoald_load(path, NULL, NULL, &c, &loader) != 0)
        return 2;
    if (control != NULL && c->runtime.control != NULL &&
        (*control = strdup(c->runtime.control)) == NULL) {
        fprintf(stderr, "shoald: %s\n", shoal_strerror(SHOAL_ENOMEM));
        shoal__config_free(c);
        shoal__loader_destroy(loader);
        return 2;
    }
    size_t nested = 0;
    for (size_t i = 0; i < c->npools; i++)
        for (const shoal_config_pool_t *p = c->pools[i].nested; p != NULL; p = p->nested)
            nested++;
    char sources[48] = ""; /* said when there are any */
    if (c->nsources != 0)
        snprintf(sources, sizeof sources, ", %zu source%s", c->nsources,
                 c->nsources == 1 ? "" : "s");
    printf("%s: ok: %zu plugin%s, %zu pool%s (%zu nested)%s\n", path, c->nplugins,
           c->nplugins == 1 ? "" : "s", c->npools, c->npools == 1 ? "" : "s", nested, sources);
    for (size_t i = 0; i < c->nplugins; i++) /* where each was found */
        printf("plugin %s: %s (%s)\n", c->plugins[i].name, c->plugins[i].path, c->plugins[i].found);
    for (size_t i = 0; i < c->npools; i++) { /* what a pull or checkout pool is made of */
        if (c->pools[i].kind == SHOAL_POOL_KIND_FORWARD)
            continue;
        char line[600];
        if (c->pools[i].kind == SHOAL_POOL_KIND_PULL)
            shoal__config_pull_describe(&c->pools[i], line, sizeof line);
        else
            shoal__config_checkout_describe(&c->pools[i], line, sizeof line);
        printf("%s\n", line);
    }
    for (size_t i = 0; i < c->npools; i++) { /* what an elastic pool does */
        const shoal_config_pool_t *p = &c->pools[i];
        if (p->autoscale.when == 0 && p->idle_timeout_ms == 0 && p->max_waiting == 0)
            continue;
        char as[400];
        shoal__config_autoscale_text(&p->autoscale, as, sizeof as);
        printf("pool %s: elastic, %u..%u workers (starts with %u), idle_timeout %" PRIu64
               "ms%s, max_waiting %u%s, autoscale %s\n",
               p->name, p->min_size, p->max_size, p->size, p->idle_timeout_ms,
               p->idle_timeout_ms == 0 ? " (never)" : "", p->max_waiting,
               p->max_waiting == 0 ? " (no bound)" : "", as);
    }
    shoal__config_free(c);
    shoal__loader_destroy(loader);
    return 0;
}

/* Asks the shoald at socket (named by origin) for the plan of a reload
 * from path. */
int shoald_diff(const char *path, const char *socket_path, const char *origin)
{
    char abs[PATH_MAX];
    if (realpath(path, abs) == NULL) {
        fprintf(stderr, "shoald: %s: %s\n", path, strerror(errno));
        return 2;
    }
    char req[PATH_MAX + 16];
    int n = snprintf(req, sizeof req, "diff %s\n", abs);
    shoal_client_t cl = {.path = socket_path,
                         .origin = origin,
                         .prog = "shoald",
                         .timeout_ms = 5000,
                         .out = stdout,
                         .err = stderr};
    return shoal__client_exchange(&cl, req, (size_t)n);
}
