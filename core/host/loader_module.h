/* loader_module.h - between loader.c (loading a plugin, the loader's list)
 * and loader_module.c (a loaded module's life: its references, its
 * release, what the host reads of it). Not for other modules: they use
 * loader.h, where both are opaque.
 */
#ifndef SHOAL_HOST_LOADER_MODULE_H
#define SHOAL_HOST_LOADER_MODULE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "host/file.h"
#include "host/loader.h"

struct shoal_module_s {
    shoal_loader_t *loader;
    shoal_module_t *next;
    _Atomic uint32_t refs;
    void *dl;
    const shoal_plugin_t *desc;
    /* The behaviours as the host reads them: full-size copies holding only
     * the fields the plugin's ABI minor has, the rest zero. */
    shoal_behaviour_t *behaviours;
    size_t nbehaviours;
    char *path;
    char *origin; /* "plugin NAME VERSION (PATH)", for crash reports */
    int copy_fd;  /* the sealed memfd the code was mapped from */
    /* the configured file's identity when it was copied: a reload of an
     * unchanged file finds this module again */
    shoal_file_id_t id;
};

struct shoal_loader_s {
    pthread_mutex_t load_lock; /* one load at a time: a file is never loaded twice */
    pthread_mutex_t lock;      /* the list, and the references it hands out */
    shoal_module_t *modules;
    void (*warn)(void *user, const char *line); /* under lock */
    void *warn_user;
    /* shoal__loader_set_tend's, under lock: called only on tend_thread */
    void (*tend)(void *user);
    void *tend_user;
    pthread_t tend_thread;
};

/* The tend of L for the calling thread (loader.h), or {NULL}: a fini on
 * another thread waits untended. */
typedef struct shoal_loader_tend_s {
    void (*fn)(void *user);
    void *user;
} shoal_loader_tend_t;

shoal_loader_tend_t shoal__loader_tend_here(shoal_loader_t *L);

#endif
