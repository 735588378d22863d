/* shoald.c - the host's command line. This step: checking a config file
 * (parse, validate, load every plugin, find every behaviour) and printing
 * the config schema. Running the pools of a config, reload and the control
 * socket come next (issue 5).
 *
 *   shoald --check FILE     exit 0: valid; 2: an error, printed as
 *                           file:line:col: what was expected
 *   shoald --help-config    the schema: every key, type, default, doc
 */
#include <stdio.h>
#include <string.h>

#include "host/config.h"
#include "host/loader.h"

static void usage(FILE *to)
{
    fprintf(to, "usage: shoald --check FILE\n"
                "       shoald --help-config\n"
                "  --check FILE    validate FILE (YAML), load its plugins, resolve its\n"
                "                  workers; exit 0 if it is valid, 2 if not\n"
                "  --help-config   print every config key with its type, default and meaning\n");
}

/* Parse, validate, resolve. Prints the outcome; returns the exit status. */
static int check(const char *path)
{
    shoal_config_t *c = NULL;
    shoal_loader_t *loader = NULL;
    shoal_diag_t err = {0};
    char buf[1200];
    int rc = shoal__config_load(path, &c, &err);
    if (rc == SHOAL_OK && (rc = shoal__loader_create(&loader)) != SHOAL_OK)
        shoal__diag_set(&err, NULL, 0, 0, "cannot create the plugin loader: %s",
                        shoal_strerror(rc));
    if (rc == SHOAL_OK)
        rc = shoal__config_resolve(c, loader, &err);
    if (rc == SHOAL_OK) {
        size_t nested = 0;
        for (size_t i = 0; i < c->npools; i++)
            for (const shoal_config_pool_t *p = c->pools[i].nested; p != NULL; p = p->nested)
                nested++;
        printf("%s: ok: %zu plugin%s, %zu pool%s (%zu nested)\n", path, c->nplugins,
               c->nplugins == 1 ? "" : "s", c->npools, c->npools == 1 ? "" : "s", nested);
    } else {
        fprintf(stderr, "%s\n", shoal__diag_format(&err, buf, sizeof buf));
    }
    shoal__config_free(c);
    if (loader != NULL)
        shoal__loader_destroy(loader);
    return rc == SHOAL_OK ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help-config") == 0) {
        shoal__config_help(stdout);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--check") == 0)
        return check(argv[2]);
    usage(stderr);
    return 2;
}
