/* config_load.c - a config from a file (a regular file, read without
 * blocking, at most 64 MiB, not while it is being written: file.h; for a
 * diff, read once) or from text in memory: parsed into a node tree
 * (node.c), refused when empty, then checked (config.c). See config.h.
 */
#include "host/config.h"

#include <stdlib.h>
#include <string.h>

#include "host/file.h"

static void defaults(shoal_config_t *c)
{
    c->runtime.threads = 0;
    c->runtime.throughput = 32;
    c->runtime.spin_us = 50;
    c->runtime.max_actors = 0;
    c->runtime.stall_warn_ms = 1000;
    c->runtime.max_extra_threads = SHOAL_CONFIG_AUTO;
    c->log.format = SHOAL_LOG_FORMAT_TEXT;
    c->log.level = SHOAL_LOG_INFO;
    c->shutdown.drain_ms = 10000;
}

/* Whether text holds no YAML at all: blank lines and comments only. */
static bool blank(const char *text, size_t len)
{
    bool comment = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '\n')
            comment = false;
        else if (ch == '#' && !comment)
            comment = true;
        else if (!comment && ch != ' ' && ch != '\t' && ch != '\r')
            return false;
    }
    return true;
}

int shoal__config_parse(const char *file, const char *text, size_t len, shoal_config_t **out,
                        shoal_diag_t *err)
{
    *out = NULL;
    shoal_config_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return SHOAL_ENOMEM;
    defaults(c);
    int rc = SHOAL_ENOMEM;
    if ((c->file = strdup(file)) == NULL || (c->dir = strdup(file)) == NULL ||
        (c->text = malloc(len + 1)) == NULL)
        goto fail;
    memcpy(c->text, text, len);
    c->text[len] = '\0';
    c->text_len = len;
    char *slash = strrchr(c->dir, '/');
    if (slash != NULL)
        slash[slash == c->dir ? 1 : 0] = '\0';
    else
        c->dir[0] = '\0';
    if ((rc = shoal__node_parse(file, text, len, &c->root, err)) != SHOAL_OK)
        goto fail;
    /* An empty file (truncated to nothing, only comments, an empty
     * document) is a mistake, not "no pools": reloading it would drain
     * every pool. */
    if (blank(text, len) ||
        (c->root->kind == SHOAL_NODE_SCALAR && c->root->text[0] == '\0' && !c->root->quoted)) {
        shoal__diag_set(err, c->file, 1, 1,
                        "the file is empty: a config declares its pools (write `pools: {}` for "
                        "none)");
        rc = SHOAL_EINVAL;
        goto fail;
    }
    if ((rc = shoal__config_check_top(c, c->root, err)) != SHOAL_OK)
        goto fail;
    shoal__config_index_pools(c);
    *out = c;
    return SHOAL_OK;
fail:
    shoal__config_free(c);
    return rc;
}

static int load(const char *path, bool settle, shoal_config_t **out, shoal_diag_t *err)
{
    *out = NULL;
    char *buf;
    size_t len;
    /* A regular file, read without blocking, once no one is writing it
     * (or, for a diff, not while anyone was). */
    int rc = settle ? shoal__file_read(path, 64u << 20, &buf, &len, err)
                    : shoal__file_read_once(path, 64u << 20, &buf, &len, err);
    if (rc == SHOAL_OK)
        rc = shoal__config_parse(path, buf, len, out, err);
    free(buf);
    return rc;
}

int shoal__config_load(const char *path, shoal_config_t **out, shoal_diag_t *err)
{
    return load(path, true, out, err);
}

int shoal__config_load_once(const char *path, shoal_config_t **out, shoal_diag_t *err)
{
    return load(path, false, out, err);
}
