/* code.c - a module and its workers' args, counted together (code.h). */
#include "host/code.h"

#include <stdatomic.h>
#include <stdlib.h>

struct shoal_code_s {
    _Atomic uint32_t refs;
    shoal_module_t *module; /* a reference */
    shoal_node_t *args;     /* owned copy, or NULL */
    /* a pull pool's source: its module (a reference) and args, or NULL */
    shoal_module_t *src_module;
    shoal_node_t *src_args;
};

shoal_code_t *shoal__code_new(shoal_module_t *m, const shoal_node_t *args)
{
    shoal_code_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if (args != NULL && (c->args = shoal__node_copy(args)) == NULL) {
        free(c);
        return NULL;
    }
    shoal__module_ref(m);
    c->module = m;
    atomic_init(&c->refs, 1);
    return c;
}

const shoal_node_t *shoal__code_args(const shoal_code_t *c) { return c->args; }

int shoal__code_set_source(shoal_code_t *c, shoal_module_t *m, const shoal_node_t *args)
{
    shoal_node_t *copy = NULL;
    if (args != NULL && (copy = shoal__node_copy(args)) == NULL)
        return SHOAL_ENOMEM;
    shoal__module_ref(m);
    c->src_module = m;
    c->src_args = copy;
    return SHOAL_OK;
}

const shoal_node_t *shoal__code_source_args(const shoal_code_t *c) { return c->src_args; }

static void acquire(void *what)
{
    shoal_code_t *c = what;
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void shoal__code_release(shoal_code_t *c)
{
    /* acq_rel: the last one out sees every other holder's reads of the
     * args and use of the code before it frees them. */
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    shoal__node_free(c->args);
    shoal__module_release(c->module);
    if (c->src_module != NULL) {
        shoal__node_free(c->src_args);
        shoal__module_release(c->src_module);
    }
    free(c);
}

static void release(void *what) { shoal__code_release(what); }

shoal_pool_hold_t shoal__code_hold(shoal_code_t *c)
{
    /* The origin names the plugin in a crash report: it lives as long as
     * the module, which outlives every holder. */
    return (shoal_pool_hold_t){acquire, release, c, shoal__module_origin(c->module)};
}
