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
#include "runtime/hash.h"
#include "runtime/runtime.h"

/* The names: a table of 2^k slots, open addressing with linear probing,
 * at most half full (names_cap is its size, nnames the names in it); an
 * empty slot has name NULL. A removal shifts back the names after it that
 * probed past its slot, so no slot is ever a tombstone. Register,
 * unregister and whereis cost the same with 10 names or 100,000 (a
 * list, scanned, made a host of 15,000 pools take seconds to start and to
 * drop them). */
typedef struct name_s {
    char *name;
    shoal_pid_t pid;
} name_t;

/* The slot that holds name, or the empty one where it would go. */
static size_t slot_of(const name_t *v, size_t cap, const char *name)
{
    size_t i = (size_t)shoal__name_hash(name) & (cap - 1);
    while (v[i].name != NULL && strcmp(v[i].name, name) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

/* A table twice the size, every name moved into it; false on ENOMEM. */
static bool names_grow(shoal_runtime_t *rt)
{
    size_t cap = rt->names_cap != 0 ? rt->names_cap * 2 : 16;
    name_t *nv = calloc(cap, sizeof *nv), *v = rt->names;
    if (nv == NULL)
        return false;
    for (size_t i = 0; i < rt->names_cap; i++)
        if (v[i].name != NULL)
            nv[slot_of(nv, cap, v[i].name)] = v[i];
    free(v);
    rt->names = nv;
    rt->names_cap = cap;
    return true;
}

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
    for (size_t i = 0; i < rt->names_cap; i++)
        free(v[i].name);
    free(v);
    rt->names = NULL;
    rt->nnames = rt->names_cap = 0;
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
    size_t i = v != NULL ? slot_of(v, rt->names_cap, name) : 0;
    if (v != NULL && v[i].name != NULL) {
        v[i].pid = pid;
        goto out;
    }
    if ((rt->nnames + 1) * 2 > rt->names_cap) {
        if (!names_grow(rt)) {
            rc = SHOAL_ENOMEM;
            goto out;
        }
        v = rt->names;
        i = slot_of(v, rt->names_cap, name);
    }
    if ((v[i].name = strdup(name)) == NULL) {
        rc = SHOAL_ENOMEM;
        goto out;
    }
    v[i].pid = pid;
    rt->nnames++;
out:
    pthread_rwlock_unlock(&rt->names_lock);
    return rc;
}

/* Removes name; only while it names `only` unless that is SHOAL_PID_NONE. */
static int unregister(shoal_runtime_t *rt, const char *name, shoal_pid_t only)
{
    int rc = SHOAL_ENOPROC;
    pthread_rwlock_wrlock(&rt->names_lock);
    name_t *v = rt->names;
    size_t cap = rt->names_cap;
    size_t i = valid(name) && v != NULL ? slot_of(v, cap, name) : 0;
    if (valid(name) && v != NULL && v[i].name != NULL &&
        (only == SHOAL_PID_NONE || v[i].pid == only)) {
        free(v[i].name);
        v[i].name = NULL;
        rt->nnames--;
        /* The names after it in its run that probed past slot i move back
         * into it: a lookup stops at the first empty slot. */
        for (size_t j = (i + 1) & (cap - 1); v[j].name != NULL; j = (j + 1) & (cap - 1)) {
            size_t home = (size_t)shoal__name_hash(v[j].name) & (cap - 1);
            /* j stays when its home is cyclically in (i, j] */
            if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
                continue;
            v[i] = v[j];
            v[j].name = NULL;
            i = j;
        }
        rc = SHOAL_OK;
    }
    pthread_rwlock_unlock(&rt->names_lock);
    return rc;
}

SHOAL_API int shoal_runtime_unregister(shoal_runtime_t *rt, const char *name)
{
    return unregister(rt, name, SHOAL_PID_NONE);
}

int shoal__names_unregister_pid(shoal_runtime_t *rt, const char *name, shoal_pid_t pid)
{
    return pid == SHOAL_PID_NONE ? SHOAL_ENOPROC : unregister(rt, name, pid);
}

SHOAL_API shoal_pid_t shoal_runtime_whereis(shoal_runtime_t *rt, const char *name)
{
    shoal_pid_t pid = SHOAL_PID_NONE;
    pthread_rwlock_rdlock(&rt->names_lock);
    const name_t *v = rt->names;
    if (valid(name) && v != NULL) {
        size_t i = slot_of(v, rt->names_cap, name);
        if (v[i].name != NULL)
            pid = v[i].pid;
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
