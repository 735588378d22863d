/* loader_module.c - a loaded module's life (loader.h; the load itself and
 * its checks are loader.c): the references its holders and its actors
 * take, its release -- the plugin's fini under a deadline (plugin_init.h),
 * the .so closed and its private copy with it when the last reference goes
 * -- what the host reads of it (its descriptor, path, origin, copy, and the
 * host-side copies of its behaviours), and spawning actors from it.
 */
#include "host/loader_module.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actor/actor.h"
#include "host/plugin_init.h"
#include "runtime/fault.h"
#include "runtime/runtime.h"

void shoal__module_ref(shoal_module_t *m)
{
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void shoal__module_release(shoal_module_t *m)
{
    /* acq_rel: the last holder sees every other holder's use of the code. */
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    shoal_loader_t *L = m->loader;
    if (L != NULL) {
        pthread_mutex_lock(&L->lock);
        for (shoal_module_t **p = &L->modules; *p != NULL; p = &(*p)->next)
            if (*p == m) {
                *p = m->next;
                break;
            }
        pthread_mutex_unlock(&L->lock);
    }
    const shoal_plugin_t *d = m->desc;
    int rc = SHOAL_OK, r;
    char why[8];
    /* the host thread's, at a reload or a diff */
    shoal_loader_tend_t tend = shoal__loader_tend_here(L);
    if (d->size >= offsetof(shoal_plugin_t, fini) + sizeof d->fini && d->fini != NULL &&
        (rc =
             shoal__plugin_hook_run_tended(d, true, m->dl, m->copy_fd, SHOAL_PLUGIN_INIT_TIMEOUT_MS,
                                           tend.fn, tend.user, why, sizeof why, &r)) != SHOAL_OK &&
        rc != SHOAL_ETIMEDOUT)
        d->fini(); /* no thread for it: here, as ever */
    shoal__fault_unname_fd(m->copy_fd);
    if (rc == SHOAL_ETIMEDOUT) { /* the plugin stays loaded, its thread's now */
        char line[600];
        snprintf(line, sizeof line,
                 "%s: fini did not return within %u ms: left running, the plugin stays loaded",
                 m->origin, SHOAL_PLUGIN_INIT_TIMEOUT_MS);
        if (L != NULL)
            pthread_mutex_lock(&L->lock);
        if (L != NULL && L->warn != NULL)
            L->warn(L->warn_user, line);
        if (L != NULL)
            pthread_mutex_unlock(&L->lock);
    } else {
        dlclose(m->dl);
        close(m->copy_fd); /* the private copy goes with its last mapping */
    }
    free(m->behaviours);
    free(m->path);
    free(m->origin);
    free(m);
}

const shoal_plugin_t *shoal__module_plugin(const shoal_module_t *m) { return m->desc; }
const char *shoal__module_path(const shoal_module_t *m) { return m->path; }

int shoal__module_fd(const shoal_module_t *m) { return m->copy_fd; }
const char *shoal__module_origin(const shoal_module_t *m) { return m->origin; }

const shoal_behaviour_t *shoal__module_behaviour(const shoal_module_t *m, const char *name)
{
    for (size_t i = 0; i < m->nbehaviours; i++)
        if (strcmp(m->behaviours[i].name, name) == 0)
            return &m->behaviours[i];
    return NULL;
}

size_t shoal__module_behaviour_count(const shoal_module_t *m) { return m->nbehaviours; }

const shoal_behaviour_t *shoal__module_behaviour_at(const shoal_module_t *m, size_t i)
{
    return i < m->nbehaviours ? &m->behaviours[i] : NULL;
}

static void release_hook(void *m) { shoal__module_release(m); }

int shoal__module_spawn(shoal_runtime_t *rt, shoal_module_t *m, shoal_pid_t parent,
                        const shoal_behaviour_t *beh, const void *args, uint32_t mailbox_limit,
                        shoal_pid_t *pid)
{
    shoal__module_ref(m);
    int rc = shoal__actor_spawn(rt, shoal__tcache_get(rt), parent, beh, args, mailbox_limit,
                                SHOAL_ACTOR_PLAIN,
                                &(shoal_actor_hold_t){release_hook, m, m->origin}, pid);
    if (rc != SHOAL_OK)
        shoal__module_release(m);
    return rc;
}
