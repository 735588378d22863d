/* names.c - registered names: a host gives an actor (a pool) a name, any
 * actor or thread looks it up. And groups: PIDs that share a name (the
 * checkout pools of one group, pool/checkout.h). A name maps to a PID; when that actor ends
 * the name still maps to its PID, so a send answers SHOAL_ENOPROC until the
 * host registers the name again. A reader-writer lock: lookups are many,
 * changes are rare (start, reload). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/ctx.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"

typedef struct name_s {
    char *name;
    shoal_pid_t pid;
} name_t;

int shoal__names_init(shoal_runtime_t *rt)
{
    pthread_rwlock_init(&rt->names_lock, NULL);
    rt->names = NULL;
    rt->nnames = rt->names_cap = 0;
    return SHOAL_OK;
}

void shoal__names_fini(shoal_runtime_t *rt)
{
    name_t *v = rt->names;
    for (size_t i = 0; i < rt->nnames; i++)
        free(v[i].name);
    free(v);
    rt->names = NULL;
    free(rt->groups);
    rt->groups = NULL;
    rt->ngroups = rt->groups_cap = 0;
    pthread_rwlock_destroy(&rt->names_lock);
}

static bool valid(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n != 0 && n <= 255;
}

SHOAL_API int shoal_runtime_register(shoal_runtime_t *rt, const char *name, shoal_pid_t pid)
{
    if (!valid(name) || pid == SHOAL_PID_NONE)
        return SHOAL_EINVAL;
    int rc = SHOAL_OK;
    pthread_rwlock_wrlock(&rt->names_lock);
    name_t *v = rt->names;
    for (size_t i = 0; i < rt->nnames; i++) {
        if (strcmp(v[i].name, name) == 0) {
            v[i].pid = pid;
            goto out;
        }
    }
    name_t *nv = shoal__grow(v, rt->nnames, &rt->names_cap, sizeof *nv, 16);
    if (nv == NULL) {
        rc = SHOAL_ENOMEM;
        goto out;
    }
    rt->names = v = nv;
    if ((v[rt->nnames].name = strdup(name)) == NULL) {
        rc = SHOAL_ENOMEM;
        goto out;
    }
    v[rt->nnames++].pid = pid;
out:
    pthread_rwlock_unlock(&rt->names_lock);
    return rc;
}

SHOAL_API int shoal_runtime_unregister(shoal_runtime_t *rt, const char *name)
{
    int rc = SHOAL_ENOPROC;
    pthread_rwlock_wrlock(&rt->names_lock);
    name_t *v = rt->names;
    for (size_t i = 0; valid(name) && i < rt->nnames; i++) {
        if (strcmp(v[i].name, name) == 0) {
            free(v[i].name);
            v[i] = v[--rt->nnames];
            rc = SHOAL_OK;
            break;
        }
    }
    pthread_rwlock_unlock(&rt->names_lock);
    return rc;
}

SHOAL_API shoal_pid_t shoal_runtime_whereis(shoal_runtime_t *rt, const char *name)
{
    shoal_pid_t pid = SHOAL_PID_NONE;
    pthread_rwlock_rdlock(&rt->names_lock);
    const name_t *v = rt->names;
    for (size_t i = 0; valid(name) && i < rt->nnames; i++) {
        if (strcmp(v[i].name, name) == 0) {
            pid = v[i].pid;
            break;
        }
    }
    pthread_rwlock_unlock(&rt->names_lock);
    return pid;
}

SHOAL_API shoal_pid_t shoal_whereis(shoal_ctx_t *ctx, const char *name)
{
    return shoal_runtime_whereis(ctx->rt, name);
}

/* ---- groups ------------------------------------------------------------------- */

typedef struct group_entry_s {
    char name[64];
    shoal_pid_t pid;
    bool open; /* listed by shoal__group_members */
} group_entry_t;

int shoal__group_join(shoal_runtime_t *rt, const char *name, shoal_pid_t pid, bool open)
{
    if (name == NULL || name[0] == '\0' || strlen(name) >= sizeof((group_entry_t *)0)->name ||
        pid == SHOAL_PID_NONE)
        return SHOAL_EINVAL;
    int rc = SHOAL_OK;
    pthread_rwlock_wrlock(&rt->names_lock);
    group_entry_t *v = rt->groups;
    for (size_t i = 0; i < rt->ngroups; i++) {
        if (v[i].pid == pid && strcmp(v[i].name, name) == 0) {
            v[i].open = v[i].open || open;
            goto out;
        }
    }
    group_entry_t *nv = shoal__grow(v, rt->ngroups, &rt->groups_cap, sizeof *nv, 8);
    if (nv == NULL) {
        rc = SHOAL_ENOMEM;
        goto out;
    }
    rt->groups = nv;
    snprintf(nv[rt->ngroups].name, sizeof nv[rt->ngroups].name, "%s", name);
    nv[rt->ngroups].open = open;
    nv[rt->ngroups++].pid = pid;
out:
    pthread_rwlock_unlock(&rt->names_lock);
    return rc;
}

bool shoal__group_open(shoal_runtime_t *rt, const char *name, shoal_pid_t pid)
{
    bool found = false;
    pthread_rwlock_wrlock(&rt->names_lock);
    group_entry_t *v = rt->groups;
    for (size_t i = 0; name != NULL && i < rt->ngroups && !found; i++) {
        if (v[i].pid == pid && strcmp(v[i].name, name) == 0) {
            v[i].open = true;
            found = true;
        }
    }
    pthread_rwlock_unlock(&rt->names_lock);
    return found;
}

void shoal__group_leave(shoal_runtime_t *rt, const char *name, shoal_pid_t pid)
{
    pthread_rwlock_wrlock(&rt->names_lock);
    group_entry_t *v = rt->groups;
    for (size_t i = 0; name != NULL && i < rt->ngroups; i++) {
        if (v[i].pid == pid && strcmp(v[i].name, name) == 0) {
            v[i] = v[--rt->ngroups];
            break;
        }
    }
    pthread_rwlock_unlock(&rt->names_lock);
}

size_t shoal__group_members(shoal_runtime_t *rt, const char *name, shoal_pid_t *out, size_t max)
{
    size_t n = 0;
    pthread_rwlock_rdlock(&rt->names_lock);
    const group_entry_t *v = rt->groups;
    for (size_t i = 0; name != NULL && i < rt->ngroups; i++) {
        if (!v[i].open || strcmp(v[i].name, name) != 0)
            continue;
        if (n < max)
            out[n] = v[i].pid;
        n++;
    }
    pthread_rwlock_unlock(&rt->names_lock);
    return n;
}
