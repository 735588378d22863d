/* node_tree.c - a node tree once built (node.h): freed, copied,
 * compared, looked into, and the place a config error names. Building it
 * from libyaml's events is node.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/node.h"
#include "shoal/error.h"

void shoal__node_free_nodes(shoal_node_t *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->n; i++) {
        shoal__node_free_nodes(n->items[i]);
        if (n->keys)
            shoal__node_free_nodes(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->text);
    free(n);
}

void shoal__node_free(shoal_node_t *root)
{
    if (root == NULL)
        return;
    char *file = (char *)root->file;
    shoal__node_free_nodes(root);
    free(file);
}

/* A copy of n and everything below it, every node naming `file`. */
static shoal_node_t *copy_of(const shoal_node_t *n, const char *file)
{
    shoal_node_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->kind = n->kind;
    c->quoted = n->quoted;
    c->line = n->line;
    c->col = n->col;
    c->file = file;
    if (n->text != NULL && (c->text = strdup(n->text)) == NULL)
        goto fail;
    if (n->n == 0)
        return c;
    if ((c->items = calloc(n->n, sizeof *c->items)) == NULL ||
        (n->keys != NULL && (c->keys = calloc(n->n, sizeof *c->keys)) == NULL))
        goto fail;
    c->cap = n->n;
    for (; c->n < n->n; c->n++) {
        c->items[c->n] = copy_of(n->items[c->n], file);
        if (c->keys != NULL && c->items[c->n] != NULL &&
            (c->keys[c->n] = copy_of(n->keys[c->n], file)) == NULL) {
            shoal__node_free_nodes(c->items[c->n]);
            goto fail;
        }
        if (c->items[c->n] == NULL)
            goto fail;
    }
    return c;
fail:
    shoal__node_free_nodes(c);
    return NULL;
}

shoal_node_t *shoal__node_copy(const shoal_node_t *n)
{
    if (n == NULL)
        return NULL;
    char *file = strdup(n->file ? n->file : "<args>");
    shoal_node_t *c = file ? copy_of(n, file) : NULL;
    if (c == NULL)
        free(file);
    return c;
}

const shoal_node_t *shoal__node_get(const shoal_node_t *map, const char *key)
{
    if (map == NULL || map->kind != SHOAL_NODE_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return map->items[i];
    return NULL;
}

const char *shoal__node_kind_name(const shoal_node_t *n)
{
    switch (n->kind) {
    case SHOAL_NODE_MAP:
        return "a mapping";
    case SHOAL_NODE_LIST:
        return "a list";
    default:
        return n->quoted ? "a quoted string" : "a value";
    }
}

int shoal__node_fail(shoal_diag_t *err, const shoal_node_t *at, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shoal__diag_set(err, at ? at->file : NULL, at ? at->line : 0, at ? at->col : 0, "%s", msg);
    return SHOAL_EINVAL;
}

bool shoal__node_equal(const shoal_node_t *a, const shoal_node_t *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    if (a->kind != b->kind || a->n != b->n)
        return false;
    if (a->kind == SHOAL_NODE_SCALAR)
        return a->quoted == b->quoted && strcmp(a->text, b->text) == 0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->kind == SHOAL_NODE_MAP && strcmp(a->keys[i]->text, b->keys[i]->text) != 0)
            return false;
        if (!shoal__node_equal(a->items[i], b->items[i]))
            return false;
    }
    return true;
}
