/* node.c - libyaml events to a node tree; see node.h. */
#include "host/node.h"
#include "host/node_keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "runtime/grow.h"
#include "runtime/hash.h"
#include "shoal/error.h"

typedef struct anchor_s {
    char *name;
    uint64_t hash;
    shoal_node_t *node; /* the last node anchored under the name */
} anchor_t;

typedef struct parser_s {
    yaml_parser_t yp;
    const char *file;
    const char *text; /* the input, to place reader errors */
    size_t len;
    int rc; /* why node_new failed: SHOAL_EINVAL (budget) or SHOAL_ENOMEM */
    shoal_diag_t *err;
    size_t nodes;
    size_t text_bytes; /* the values' bytes in the tree, aliases' copies included */
    /* The anchors, each name once, and an index of them by name: open
     * addressing over aslots (2^k) slots, at most half full, a slot holding
     * an anchor's position + 1 (0: empty). Found by a scan of the anchors,
     * a file of 49,000 anchors and as many aliases held shoald's thread
     * (a `shoalctl diff` of it, any control client's) for 17 s. */
    anchor_t *anchors;
    size_t nanchors, anchors_cap;
    uint32_t *aslot;
    size_t aslots;
} parser_t;

static uint32_t line_of(yaml_mark_t m) { return (uint32_t)m.line + 1; }
static uint32_t col_of(yaml_mark_t m) { return (uint32_t)m.column + 1; }

static int next_event(parser_t *p, yaml_event_t *ev)
{
    if (yaml_parser_parse(&p->yp, ev))
        return SHOAL_OK;
    yaml_mark_t m = p->yp.problem_mark;
    if (p->yp.error == YAML_READER_ERROR) {
        /* The reader reports a byte offset, not a mark: count lines. */
        size_t off = p->yp.problem_offset < p->len ? p->yp.problem_offset : p->len;
        m.line = m.column = 0;
        for (size_t i = 0; i < off; i++) {
            if (p->text[i] == '\n') {
                m.line++;
                m.column = 0;
            } else {
                m.column++;
            }
        }
    }
    if (p->yp.context)
        shoal__diag_set(p->err, p->file, line_of(m), col_of(m), "%s %s", p->yp.context,
                        p->yp.problem ? p->yp.problem : "");
    else
        shoal__diag_set(p->err, p->file, line_of(m), col_of(m), "%s",
                        p->yp.problem ? p->yp.problem : "YAML syntax error");
    return SHOAL_EINVAL;
}

/* Out of memory at `at`: said, and p->rc says why the parse failed. */
static int oom(parser_t *p, uint32_t line, uint32_t col)
{
    shoal__diag_set(p->err, p->file, line, col, "out of memory");
    p->rc = SHOAL_ENOMEM;
    return SHOAL_ENOMEM;
}

/* n more bytes of values in the tree, within SHOAL_NODE_MAX_TEXT: the node
 * budget bounds how many values an alias may copy, not how long each is --
 * a 1 MB value aliased 2,000 times (a 1 MB file) took 2 GB. */
static bool text_budget(parser_t *p, size_t n, yaml_mark_t at)
{
    if (n <= SHOAL_NODE_MAX_TEXT - p->text_bytes) {
        p->text_bytes += n;
        return true;
    }
    shoal__diag_set(p->err, p->file, line_of(at), col_of(at),
                    "document too large: its values come to more than %d MiB (aliases "
                    "included)",
                    SHOAL_NODE_MAX_TEXT >> 20);
    p->rc = SHOAL_EINVAL;
    return false;
}

static shoal_node_t *node_new(parser_t *p, shoal_node_kind_t kind, yaml_mark_t at)
{
    if (++p->nodes > SHOAL_NODE_MAX_NODES) {
        shoal__diag_set(p->err, p->file, line_of(at), col_of(at),
                        "document too large: more than %d nodes (aliases included)",
                        SHOAL_NODE_MAX_NODES);
        p->rc = SHOAL_EINVAL;
        return NULL;
    }
    shoal_node_t *n = calloc(1, sizeof *n);
    if (n == NULL) {
        oom(p, line_of(at), col_of(at));
        return NULL;
    }
    n->kind = kind;
    n->file = p->file;
    n->line = line_of(at);
    n->col = col_of(at);
    return n;
}

static int append(shoal_node_t *parent, shoal_node_t *key, shoal_node_t *value)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 4;
        shoal_node_t **ni = realloc(parent->items, cap * sizeof *ni);
        if (ni == NULL)
            return SHOAL_ENOMEM;
        parent->items = ni;
        if (parent->kind == SHOAL_NODE_MAP) {
            shoal_node_t **nk = realloc(parent->keys, cap * sizeof *nk);
            if (nk == NULL)
                return SHOAL_ENOMEM;
            parent->keys = nk;
        }
        parent->cap = cap;
    }
    parent->items[parent->n] = value;
    if (parent->kind == SHOAL_NODE_MAP)
        parent->keys[parent->n] = key;
    parent->n++;
    return SHOAL_OK;
}

/* A copy of src for an alias at `at`, within the parse's budgets; NULL
 * with p->err and p->rc set. */
static shoal_node_t *copy(parser_t *p, const shoal_node_t *src, yaml_mark_t at)
{
    shoal_node_t *n = node_new(p, src->kind, at);
    if (n == NULL)
        return NULL;
    n->quoted = src->quoted;
    n->line = src->line;
    n->col = src->col;
    if (src->text != NULL) {
        size_t len = strlen(src->text);
        if (!text_budget(p, len, at))
            goto fail;
        if ((n->text = malloc(len + 1)) == NULL) {
            oom(p, line_of(at), col_of(at));
            goto fail;
        }
        memcpy(n->text, src->text, len + 1);
    }
    for (size_t i = 0; i < src->n; i++) {
        shoal_node_t *k = NULL, *v = copy(p, src->items[i], at);
        if (v == NULL)
            goto fail;
        if (src->keys != NULL && (k = copy(p, src->keys[i], at)) == NULL) {
            shoal__node_free_nodes(v);
            goto fail;
        }
        if (append(n, k, v) != SHOAL_OK) {
            shoal__node_free_nodes(k);
            shoal__node_free_nodes(v);
            oom(p, line_of(at), col_of(at));
            goto fail;
        }
    }
    return n;
fail:
    shoal__node_free_nodes(n);
    return NULL;
}

/* ---- anchors ------------------------------------------------------------------ */

/* The slot of the anchor called name (hash h), or the empty one where it
 * would go. p->aslots != 0. */
static size_t anchor_slot(const parser_t *p, const char *name, uint64_t h)
{
    size_t s = (size_t)h & (p->aslots - 1);
    for (; p->aslot[s] != 0; s = (s + 1) & (p->aslots - 1)) {
        const anchor_t *a = &p->anchors[p->aslot[s] - 1];
        if (a->hash == h && strcmp(a->name, name) == 0)
            break;
    }
    return s;
}

/* The node last anchored as name, or NULL. */
static shoal_node_t *anchor_find(const parser_t *p, const char *name)
{
    if (p->aslots == 0)
        return NULL;
    size_t s = anchor_slot(p, name, shoal__name_hash(name));
    return p->aslot[s] != 0 ? p->anchors[p->aslot[s] - 1].node : NULL;
}

/* node is anchored as name (none when NULL): an alias of that name from
 * now on copies it, as YAML says, whatever it named before. */
static int remember(parser_t *p, const char *name, shoal_node_t *node, yaml_mark_t at)
{
    if (name == NULL)
        return SHOAL_OK;
    uint64_t h = shoal__name_hash(name);
    if ((p->nanchors + 1) * 2 > p->aslots) { /* at most half full: twice the size */
        size_t n = p->aslots != 0 ? p->aslots * 2 : 16;
        uint32_t *slot = calloc(n, sizeof *slot);
        if (slot == NULL || p->nanchors >= UINT32_MAX / 2) {
            free(slot);
            return oom(p, line_of(at), col_of(at));
        }
        free(p->aslot);
        p->aslot = slot;
        p->aslots = n;
        for (size_t i = 0; i < p->nanchors; i++)
            slot[anchor_slot(p, p->anchors[i].name, p->anchors[i].hash)] = (uint32_t)i + 1;
    }
    size_t s = anchor_slot(p, name, h);
    if (p->aslot[s] != 0) { /* defined again */
        p->anchors[p->aslot[s] - 1].node = node;
        return SHOAL_OK;
    }
    anchor_t *na = shoal__grow(p->anchors, p->nanchors, &p->anchors_cap, sizeof *na, 8);
    if (na == NULL)
        return oom(p, line_of(at), col_of(at));
    p->anchors = na;
    char *dup = strdup(name);
    if (dup == NULL)
        return oom(p, line_of(at), col_of(at));
    p->anchors[p->nanchors++] = (anchor_t){.name = dup, .hash = h, .node = node};
    p->aslot[s] = (uint32_t)p->nanchors;
    return SHOAL_OK;
}

static int parse_node(parser_t *p, yaml_event_t *ev, int depth, shoal_node_t **out);

static int no_tag(parser_t *p, const yaml_event_t *ev, const yaml_char_t *tag)
{
    if (tag == NULL)
        return SHOAL_OK;
    shoal__diag_set(p->err, p->file, line_of(ev->start_mark), col_of(ev->start_mark),
                    "explicit tag '%s' is not allowed: write plain values", (const char *)tag);
    return SHOAL_EINVAL;
}

static int parse_collection(parser_t *p, yaml_event_t *start, int depth, shoal_node_t **out)
{
    bool map = start->type == YAML_MAPPING_START_EVENT;
    yaml_event_type_t end = map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
    const yaml_char_t *anchor =
        map ? start->data.mapping_start.anchor : start->data.sequence_start.anchor;
    int rc = no_tag(p, start, map ? start->data.mapping_start.tag : start->data.sequence_start.tag);
    if (rc != SHOAL_OK)
        return rc;
    if (depth >= SHOAL_NODE_MAX_DEPTH) {
        shoal__diag_set(p->err, p->file, line_of(start->start_mark), col_of(start->start_mark),
                        "nesting deeper than %d levels", SHOAL_NODE_MAX_DEPTH);
        return SHOAL_EINVAL;
    }
    shoal_node_t *n = node_new(p, map ? SHOAL_NODE_MAP : SHOAL_NODE_LIST, start->start_mark);
    if (n == NULL)
        return p->rc;
    shoal_node_keys_t ix = {NULL, 0};
    for (;;) {
        yaml_event_t ev;
        if ((rc = next_event(p, &ev)) != SHOAL_OK)
            goto fail;
        if (ev.type == end) {
            yaml_event_delete(&ev);
            break;
        }
        shoal_node_t *key = NULL, *value = NULL;
        if (map) {
            if (ev.type != YAML_SCALAR_EVENT && ev.type != YAML_ALIAS_EVENT) {
                shoal__diag_set(p->err, p->file, line_of(ev.start_mark), col_of(ev.start_mark),
                                "a key must be a plain string, not a %s",
                                ev.type == YAML_MAPPING_START_EVENT ? "mapping" : "list");
                yaml_event_delete(&ev);
                rc = SHOAL_EINVAL;
                goto fail;
            }
            yaml_mark_t key_at = ev.start_mark; /* where the key is written (an alias's use) */
            rc = parse_node(p, &ev, depth + 1, &key);
            if (rc != SHOAL_OK)
                goto fail;
            if (key->kind != SHOAL_NODE_SCALAR) {
                shoal__diag_set(p->err, p->file, line_of(key_at), col_of(key_at),
                                "a key must be a plain string, not %s", shoal__node_kind_name(key));
                shoal__node_free_nodes(key);
                rc = SHOAL_EINVAL;
                goto fail;
            }
            size_t i = shoal__node_keys_find_add(&ix, n->keys, n->n, key->text);
            if (i == SIZE_MAX) {
                rc = oom(p, key->line, key->col);
                shoal__node_free_nodes(key);
                goto fail;
            }
            if (i != n->n) {
                shoal__diag_set(p->err, p->file, key->line, key->col,
                                "duplicate key '%s' (first at line %u, column %u)", key->text,
                                n->keys[i]->line, n->keys[i]->col);
                shoal__node_free_nodes(key);
                rc = SHOAL_EINVAL;
                goto fail;
            }
            if ((rc = next_event(p, &ev)) != SHOAL_OK) {
                shoal__node_free_nodes(key);
                goto fail;
            }
        }
        rc = parse_node(p, &ev, depth + 1, &value);
        if (rc == SHOAL_OK && append(n, key, value) != SHOAL_OK) {
            rc = oom(p, n->line, n->col);
            shoal__node_free_nodes(value);
        }
        if (rc != SHOAL_OK) {
            shoal__node_free_nodes(key);
            goto fail;
        }
    }
    if ((rc = remember(p, (const char *)anchor, n, start->start_mark)) != SHOAL_OK)
        goto fail;
    free(ix.slot);
    *out = n;
    return SHOAL_OK;
fail:
    free(ix.slot);
    shoal__node_free_nodes(n);
    return rc;
}

/* Consumes ev (already read) and what belongs to it. */
static int parse_node(parser_t *p, yaml_event_t *ev, int depth, shoal_node_t **out)
{
    int rc = SHOAL_OK;
    *out = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if ((rc = no_tag(p, ev, ev->data.scalar.tag)) != SHOAL_OK)
            break;
        shoal_node_t *n = node_new(p, SHOAL_NODE_SCALAR, ev->start_mark);
        if (n == NULL) {
            rc = p->rc;
            break;
        }
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        if (!text_budget(p, ev->data.scalar.length, ev->start_mark)) {
            shoal__node_free_nodes(n);
            rc = p->rc;
            break;
        }
        n->text = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (n->text == NULL) {
            rc = oom(p, n->line, n->col);
            shoal__node_free_nodes(n);
            break;
        }
        if (strlen(n->text) != ev->data.scalar.length) {
            shoal__diag_set(p->err, p->file, n->line, n->col,
                            "a NUL character is not allowed in a value");
            shoal__node_free_nodes(n);
            rc = SHOAL_EINVAL;
            break;
        }
        if ((rc = remember(p, (const char *)ev->data.scalar.anchor, n, ev->start_mark)) !=
            SHOAL_OK) {
            shoal__node_free_nodes(n);
            break;
        }
        *out = n;
        break;
    }
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        shoal_node_t *target = anchor_find(p, name);
        if (target == NULL) {
            shoal__diag_set(p->err, p->file, line_of(ev->start_mark), col_of(ev->start_mark),
                            "unknown alias '*%s'", name);
            rc = SHOAL_EINVAL;
            break;
        }
        if ((*out = copy(p, target, ev->start_mark)) == NULL)
            rc = p->rc;
        break;
    }
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
        rc = parse_collection(p, ev, depth, out);
        break;
    default:
        shoal__diag_set(p->err, p->file, line_of(ev->start_mark), col_of(ev->start_mark),
                        "unexpected YAML event");
        rc = SHOAL_EINVAL;
        break;
    }
    yaml_event_delete(ev);
    return rc;
}

static int expect(parser_t *p, yaml_event_type_t type, yaml_event_t *ev)
{
    int rc = next_event(p, ev);
    if (rc == SHOAL_OK && ev->type != type) {
        shoal__diag_set(p->err, p->file, line_of(ev->start_mark), col_of(ev->start_mark),
                        "unexpected YAML structure");
        yaml_event_delete(ev);
        rc = SHOAL_EINVAL;
    }
    return rc;
}

int shoal__node_parse(const char *file, const char *text, size_t len, shoal_node_t **root,
                      shoal_diag_t *err)
{
    parser_t p = {.err = err, .text = text, .len = len, .rc = SHOAL_EINVAL};
    *root = NULL;
    char *name = strdup(file ? file : "<args>");
    if (name == NULL) {
        shoal__diag_set(err, file ? file : "<args>", 0, 0, "out of memory");
        return SHOAL_ENOMEM;
    }
    p.file = name;
    if (!yaml_parser_initialize(&p.yp)) {
        shoal__diag_set(err, name, 0, 0, "out of memory");
        free(name);
        return SHOAL_ENOMEM;
    }
    yaml_parser_set_input_string(&p.yp, (const unsigned char *)text, len);
    shoal_node_t *doc = NULL;
    yaml_event_t ev;
    int rc = expect(&p, YAML_STREAM_START_EVENT, &ev);
    if (rc != SHOAL_OK)
        goto done;
    yaml_event_delete(&ev);
    if ((rc = next_event(&p, &ev)) != SHOAL_OK)
        goto done;
    if (ev.type == YAML_STREAM_END_EVENT) { /* empty: an empty mapping */
        yaml_mark_t at = ev.start_mark;
        yaml_event_delete(&ev);
        at.line = at.column = 0;
        doc = node_new(&p, SHOAL_NODE_MAP, at);
        rc = doc ? SHOAL_OK : p.rc;
        goto done;
    }
    yaml_event_delete(&ev); /* DOCUMENT_START */
    if ((rc = next_event(&p, &ev)) != SHOAL_OK)
        goto done;
    if ((rc = parse_node(&p, &ev, 0, &doc)) != SHOAL_OK)
        goto done;
    if ((rc = expect(&p, YAML_DOCUMENT_END_EVENT, &ev)) != SHOAL_OK)
        goto done;
    yaml_event_delete(&ev);
    if ((rc = next_event(&p, &ev)) != SHOAL_OK)
        goto done;
    if (ev.type != YAML_STREAM_END_EVENT) {
        shoal__diag_set(err, p.file, line_of(ev.start_mark), col_of(ev.start_mark),
                        "several YAML documents in one file: write one");
        rc = SHOAL_EINVAL;
    }
    yaml_event_delete(&ev);
done:
    for (size_t i = 0; i < p.nanchors; i++)
        free(p.anchors[i].name);
    free(p.anchors);
    free(p.aslot);
    yaml_parser_delete(&p.yp);
    if (rc != SHOAL_OK) {
        shoal__node_free_nodes(doc);
        free(name);
        return rc;
    }
    /* A scalar document is not args or config: keep it, callers check kind. */
    *root = doc;
    return SHOAL_OK;
}

int shoal__node_parse_file(const char *path, shoal_node_t **root, shoal_diag_t *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        shoal__diag_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
        return SHOAL_EINVAL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            if (cap > (64u << 20)) {
                shoal__diag_set(err, path, 0, 0, "file larger than 64 MiB");
                free(buf);
                fclose(f);
                return SHOAL_EINVAL;
            }
            char *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return SHOAL_ENOMEM;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        shoal__diag_set(err, path, 0, 0, "read error");
        free(buf);
        return SHOAL_EINVAL;
    }
    int rc = shoal__node_parse(path, buf, len, root, err);
    free(buf);
    return rc;
}
