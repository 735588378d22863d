/* node.h - a YAML document as a tree of nodes, each with file:line:column.
 *
 * Parse, then build (STYLE.md): libyaml events become this neutral tree;
 * the config validator and plugins' args getters read the tree, never
 * libyaml. Parsing is strict at the YAML level: one document only, no
 * explicit tags, no duplicate or non-scalar keys, aliases expanded within a
 * fixed budget of nodes and of bytes, nesting within a fixed depth. A plugin sees a node
 * as the opaque shoal_args_t.
 */
#ifndef SHOAL_HOST_NODE_H
#define SHOAL_HOST_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/diag.h"

#define SHOAL_NODE_MAX_DEPTH 32
#define SHOAL_NODE_MAX_NODES 100000    /* after alias expansion */
#define SHOAL_NODE_MAX_TEXT (64 << 20) /* the values' bytes, after alias expansion */

typedef enum { SHOAL_NODE_SCALAR, SHOAL_NODE_LIST, SHOAL_NODE_MAP } shoal_node_kind_t;

typedef struct shoal_args_s shoal_node_t;

struct shoal_args_s {
    shoal_node_kind_t kind;
    bool quoted;      /* scalar written in quotes: never a number or a bool */
    uint32_t line;    /* 1-based */
    uint32_t col;     /* 1-based */
    const char *file; /* shared by the whole tree */
    char *text;       /* scalar: its value */
    size_t n;         /* list: items; map: pairs */
    size_t cap;
    shoal_node_t **items; /* list items, or map values */
    shoal_node_t **keys;  /* map keys (scalars), parallel to items */
};

/* Parses text (len bytes) named `file` in messages. On error returns a
 * negative SHOAL_E* and fills err with the location and reason. */
int shoal__node_parse(const char *file, const char *text, size_t len, shoal_node_t **root,
                      shoal_diag_t *err);
/* Reads and parses a file. */
int shoal__node_parse_file(const char *path, shoal_node_t **root, shoal_diag_t *err);
/* Frees a tree and the file name its nodes share (node_tree.c, as below). */
void shoal__node_free(shoal_node_t *root);
/* Frees n and everything below it, not the file name: a part of a tree
 * being built or copied. */
void shoal__node_free_nodes(shoal_node_t *n);
/* A deep copy of n and everything below it, owning its own strings (the
 * file name included): free it with shoal__node_free. NULL for NULL, or on
 * ENOMEM. Positions (file:line:col) are those of the original. */
shoal_node_t *shoal__node_copy(const shoal_node_t *n);
/* Whether two trees say the same (kinds, keys in order, scalars and their
 * quoting); NULL equals only NULL. */
bool shoal__node_equal(const shoal_node_t *a, const shoal_node_t *b);

/* The value for `key` in a map, or NULL. */
const shoal_node_t *shoal__node_get(const shoal_node_t *map, const char *key);

/* "a mapping", "a list", "a string" for messages. */
const char *shoal__node_kind_name(const shoal_node_t *n);

/* Sets err to fmt at node at (its file:line:col; at NULL: no place) and
 * returns SHOAL_EINVAL: the one way a config check reports a mistake. */
int shoal__node_fail(shoal_diag_t *err, const shoal_node_t *at, const char *fmt, ...)
    SHOAL_PRINTF(3, 4);

#endif
