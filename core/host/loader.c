/* loader.c - see loader.h.
 *
 * Order of checks, each refused with a message naming the file: the file
 * exists; it is an ELF shared object; its .note.shoal (written by
 * SHOAL_PLUGIN) has our ABI major, a minor no newer than ours and a
 * descriptor no smaller than ABI 1.0's -- all read from the file, before
 * dlopen runs any of the plugin's code; dlopen (RTLD_NOW | RTLD_LOCAL); the
 * exported descriptor exists and agrees with the note; its name and
 * behaviours are well formed and unique; its init succeeds. The behaviours
 * are then copied into host-side structs of today's size, holding only the
 * fields the plugin's ABI minor has, so the runtime never reads past what the
 * plugin defined.
 */
#include "host/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actor/actor.h"
#include "runtime/runtime.h"

/* The part of the descriptor every ABI 1.x plugin has. */
#define DESC_MIN_SIZE offsetof(shoal_plugin_t, init)

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
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct shoal_loader_s {
    pthread_mutex_t load_lock; /* one load at a time: a file is never loaded twice */
    pthread_mutex_t lock;      /* the list, and the references it hands out */
    shoal_module_t *modules;
};

int shoal__loader_create(shoal_loader_t **loader)
{
    shoal_loader_t *L = calloc(1, sizeof *L);
    if (L == NULL)
        return SHOAL_ENOMEM;
    pthread_mutex_init(&L->load_lock, NULL);
    pthread_mutex_init(&L->lock, NULL);
    *loader = L;
    return SHOAL_OK;
}

void shoal__loader_destroy(shoal_loader_t *L)
{
    if (L == NULL)
        return;
    pthread_mutex_lock(&L->lock);
    for (shoal_module_t *m = L->modules; m != NULL; m = m->next)
        m->loader = NULL; /* they close on their own last release */
    L->modules = NULL;
    pthread_mutex_unlock(&L->lock);
    pthread_mutex_destroy(&L->lock);
    pthread_mutex_destroy(&L->load_lock);
    free(L);
}

unsigned shoal__loader_count(shoal_loader_t *L)
{
    unsigned n = 0;
    pthread_mutex_lock(&L->lock);
    for (shoal_module_t *m = L->modules; m != NULL; m = m->next)
        n++;
    pthread_mutex_unlock(&L->lock);
    return n;
}

static int refuse(shoal_diag_t *err, const char *path, const char *fmt, ...) SHOAL_PRINTF(3, 4);
static int refuse(shoal_diag_t *err, const char *path, const char *fmt, ...)
{
    char what[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    shoal__diag_set(err, path, 0, 0, "plugin refused: %s", what);
    return SHOAL_ELOAD;
}

/* Reads the .note.shoal payload from an ELF file without loading it. */
static int read_note(const char *path, int fd, shoal_plugin_note_t *note, bool *found,
                     shoal_diag_t *err)
{
    Elf64_Ehdr eh;
    *found = false;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return refuse(err, path, "not a shared object (not an ELF file)");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN)
        return refuse(err, path, "not a shared object (an ELF file, but not a 64-bit .so)");
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096)
        return SHOAL_OK; /* no section table to read: treated as no note */
    for (unsigned i = 0; i < eh.e_shnum && !*found; i++) {
        Elf64_Shdr sh;
        if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + (uint64_t)i * sizeof sh)) !=
            (ssize_t)sizeof sh)
            return refuse(err, path, "truncated ELF section table");
        if (sh.sh_type != SHT_NOTE || sh.sh_size > (1u << 20))
            continue;
        unsigned char *buf = malloc(sh.sh_size ? sh.sh_size : 1);
        if (buf == NULL)
            return SHOAL_ENOMEM;
        if (pread(fd, buf, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size) {
            free(buf);
            return refuse(err, path, "truncated ELF note");
        }
        for (size_t off = 0; off + sizeof(Elf64_Nhdr) <= sh.sh_size;) {
            Elf64_Nhdr nh;
            memcpy(&nh, buf + off, sizeof nh);
            size_t name_at = off + sizeof nh;
            size_t desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
            size_t end = desc_at + ((nh.n_descsz + 3u) & ~3u);
            if (end > sh.sh_size || end <= off)
                break;
            if (nh.n_type == SHOAL_NOTE_TYPE && nh.n_namesz == sizeof(SHOAL_NOTE_NAME) &&
                memcmp(buf + name_at, SHOAL_NOTE_NAME, sizeof(SHOAL_NOTE_NAME)) == 0 &&
                nh.n_descsz >= sizeof *note) {
                memcpy(note, buf + desc_at, sizeof *note);
                *found = true;
                break;
            }
            off = end;
        }
        free(buf);
    }
    return SHOAL_OK;
}

static int check_abi(const char *path, unsigned major, unsigned minor, size_t size,
                     shoal_diag_t *err)
{
    if (major != SHOAL_ABI_MAJOR)
        return refuse(err, path, "built for shoal ABI %u.%u; this host speaks ABI %u.%u", major,
                      minor, SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    if (minor > SHOAL_ABI_MINOR)
        return refuse(err, path,
                      "built for shoal ABI %u.%u, newer than this host's %u.%u: rebuild it "
                      "against this host's SDK, or upgrade the host",
                      major, minor, SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    if (size < DESC_MIN_SIZE)
        return refuse(err, path, "descriptor is %zu bytes, smaller than the %zu bytes of ABI %u.0",
                      size, (size_t)DESC_MIN_SIZE, SHOAL_ABI_MAJOR);
    return SHOAL_OK;
}

/* Bytes of shoal_behaviour_t a plugin of ABI 1.<minor> has (plugin.h). */
static size_t behaviour_size(unsigned minor)
{
    return minor >= 1 ? sizeof(shoal_behaviour_t) : offsetof(shoal_behaviour_t, inspect);
}

static bool good_name(const char *s)
{
    if (s == NULL || *s == '\0' || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return false;
    return true;
}

static int check_descriptor(const char *path, const shoal_plugin_t *d, shoal_diag_t *err)
{
    if (!good_name(d->name))
        return refuse(err, path, "plugin name '%s' must be 1-64 of [a-z0-9_-]",
                      d->name ? d->name : "(null)");
    if (d->behaviours == NULL || d->behaviours[0] == NULL)
        return refuse(err, path, "plugin '%s' declares no behaviours", d->name);
    for (size_t i = 0; d->behaviours[i] != NULL; i++) {
        const shoal_behaviour_t *b = d->behaviours[i];
        if (!good_name(b->name))
            return refuse(err, path,
                          "behaviour %zu of plugin '%s': name '%s' must be 1-64 of "
                          "[a-z0-9_-]",
                          i, d->name, b->name ? b->name : "(null)");
        if (b->handle_message == NULL)
            return refuse(err, path, "behaviour '%s.%s' has no handle_message", d->name, b->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(d->behaviours[j]->name, b->name) == 0)
                return refuse(err, path, "plugin '%s' has two behaviours named '%s'", d->name,
                              b->name);
    }
    return SHOAL_OK;
}

static shoal_module_t *find(shoal_loader_t *L, const struct stat *st)
{
    for (shoal_module_t *m = L->modules; m != NULL; m = m->next) {
        if (m->dev != st->st_dev || m->ino != st->st_ino || m->size != st->st_size ||
            m->mtime.tv_sec != st->st_mtim.tv_sec || m->mtime.tv_nsec != st->st_mtim.tv_nsec)
            continue;
        /* Take a reference unless it is already on its way out. */
        uint32_t r = atomic_load_explicit(&m->refs, memory_order_relaxed);
        while (r != 0)
            if (atomic_compare_exchange_weak_explicit(&m->refs, &r, r + 1, memory_order_acquire,
                                                      memory_order_relaxed))
                return m;
    }
    return NULL;
}

/* Whether a live module was loaded from this path. */
static bool path_loaded(shoal_loader_t *L, const char *path)
{
    bool found = false;
    pthread_mutex_lock(&L->lock);
    for (shoal_module_t *m = L->modules; m != NULL && !found; m = m->next)
        found = strcmp(m->path, path) == 0;
    pthread_mutex_unlock(&L->lock);
    return found;
}

/* Copies the open file fd to a fresh file of our own (0500, in $TMPDIR or
 * /tmp) and returns its path in buf: dlopen of a path it already has open
 * returns the mapping it has, even when the file there has changed since
 * (rebuilt in place, or replaced). The copy is unlinked once dlopen has
 * mapped it. */
static int fresh_copy(const char *path, int fd, char *buf, size_t size, shoal_diag_t *err)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, size, "%s/shoal-plugin-XXXXXX.so", dir && dir[0] ? dir : "/tmp");
    int out = mkstemps(buf, 3);
    if (out < 0)
        return refuse(err, path, "cannot make a fresh copy to load: %s", strerror(errno));
    char chunk[65536];
    ssize_t got;
    off_t off = 0;
    int rc = SHOAL_OK;
    while ((got = pread(fd, chunk, sizeof chunk, off)) > 0) {
        for (ssize_t done = 0; done < got;) {
            ssize_t w = write(out, chunk + done, (size_t)(got - done));
            if (w <= 0) {
                rc = refuse(err, path, "cannot make a fresh copy to load: %s", strerror(errno));
                goto out;
            }
            done += w;
        }
        off += got;
    }
    if (got < 0)
        rc = refuse(err, path, "cannot read: %s", strerror(errno));
    else if (fchmod(out, 0500) != 0)
        rc = refuse(err, path, "cannot make a fresh copy to load: %s", strerror(errno));
out:
    close(out);
    if (rc != SHOAL_OK)
        unlink(buf);
    return rc;
}

static int load(shoal_loader_t *L, const char *path, shoal_module_t **out, shoal_diag_t *err);

int shoal__module_load(shoal_loader_t *L, const char *path, shoal_module_t **out, shoal_diag_t *err)
{
    pthread_mutex_lock(&L->load_lock);
    int rc = load(L, path, out, err);
    pthread_mutex_unlock(&L->load_lock);
    return rc;
}

static int load(shoal_loader_t *L, const char *path, shoal_module_t **out, shoal_diag_t *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not hold us */
    if (fd < 0)
        return refuse(err, path, errno == ENOENT ? "no such file" : "cannot open: %s",
                      strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return refuse(err, path, "not a shared object (not a regular file)");
    }
    pthread_mutex_lock(&L->lock);
    shoal_module_t *m = find(L, &st);
    pthread_mutex_unlock(&L->lock);
    if (m != NULL) {
        close(fd);
        *out = m;
        return SHOAL_OK;
    }
    shoal_plugin_note_t note;
    bool has_note;
    int rc = read_note(path, fd, &note, &has_note, err);
    if (rc == SHOAL_OK && has_note)
        rc = check_abi(path, note.abi_major, note.abi_minor, note.descriptor_size, err);
    /* Another file was loaded from this path (the one there has changed
     * since): load this one from a fresh copy, beside the old. */
    char copy[4096] = "";
    if (rc == SHOAL_OK && path_loaded(L, path))
        rc = fresh_copy(path, fd, copy, sizeof copy, err);
    close(fd);
    if (rc != SHOAL_OK)
        return rc;

    void *dl = dlopen(copy[0] ? copy : path, RTLD_NOW | RTLD_LOCAL);
    if (copy[0])
        unlink(copy); /* mapped (or refused): the name is no longer needed */
    if (dl == NULL)
        return refuse(err, path, "dlopen: %s", dlerror());
    const shoal_plugin_t *d = dlsym(dl, SHOAL_PLUGIN_SYMBOL);
    if (d == NULL) {
        dlclose(dl);
        return refuse(err, path,
                      "no '" SHOAL_PLUGIN_SYMBOL "' symbol: export a descriptor with "
                      "SHOAL_PLUGIN() from <shoal/plugin.h>");
    }
    if ((rc = check_abi(path, d->abi_major, d->abi_minor, d->size, err)) != SHOAL_OK ||
        (rc = check_descriptor(path, d, err)) != SHOAL_OK) {
        dlclose(dl);
        return rc;
    }
    if (has_note && (note.abi_major != d->abi_major || note.abi_minor != d->abi_minor ||
                     note.descriptor_size != d->size)) {
        dlclose(dl);
        return refuse(err, path, "the ABI note and the descriptor disagree");
    }
    bool has_init = d->size >= offsetof(shoal_plugin_t, init) + sizeof d->init;
    if (has_init && d->init != NULL) {
        char why[256] = "";
        int r = d->init(why, sizeof why);
        if (r != 0) {
            /* The name lives in the plugin: copy it before closing. */
            char name[65];
            snprintf(name, sizeof name, "%s", d->name);
            dlclose(dl);
            why[sizeof why - 1] = '\0';
            return refuse(err, path, "init of plugin '%s' failed (%d)%s%s", name, r,
                          why[0] ? ": " : "", why);
        }
    }
    m = calloc(1, sizeof *m);
    size_t nb = 0;
    while (d->behaviours[nb] != NULL)
        nb++;
    if (m == NULL || (m->path = strdup(path)) == NULL ||
        (m->behaviours = calloc(nb, sizeof *m->behaviours)) == NULL) {
        if (m != NULL)
            free(m->path);
        free(m);
        if (d->size >= offsetof(shoal_plugin_t, fini) + sizeof d->fini && d->fini != NULL)
            d->fini(); /* its init ran: undo it */
        dlclose(dl);
        return SHOAL_ENOMEM;
    }
    for (size_t i = 0; i < nb; i++)
        memcpy(&m->behaviours[i], d->behaviours[i], behaviour_size(d->abi_minor));
    m->nbehaviours = nb;
    m->dl = dl;
    m->desc = d;
    m->dev = st.st_dev;
    m->ino = st.st_ino;
    m->size = st.st_size;
    m->mtime = st.st_mtim;
    atomic_init(&m->refs, 1);
    pthread_mutex_lock(&L->lock);
    m->loader = L;
    m->next = L->modules;
    L->modules = m;
    pthread_mutex_unlock(&L->lock);
    *out = m;
    return SHOAL_OK;
}

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
    if (d->size >= offsetof(shoal_plugin_t, fini) + sizeof d->fini && d->fini != NULL)
        d->fini();
    dlclose(m->dl);
    free(m->behaviours);
    free(m->path);
    free(m);
}

const shoal_plugin_t *shoal__module_plugin(const shoal_module_t *m) { return m->desc; }
const char *shoal__module_path(const shoal_module_t *m) { return m->path; }

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
                                SHOAL_ACTOR_PLAIN, &(shoal_actor_hold_t){release_hook, m}, pid);
    if (rc != SHOAL_OK)
        shoal__module_release(m);
    return rc;
}
