/* loader.c - see loader.h.
 *
 * The host never maps the file at the configured path: an operator may
 * `cp` a new build over it while its code runs, and a mapping of a file
 * rewritten in place changes under the running code (SIGSEGV, SIGBUS). Every
 * load first copies the file into a private, sealed memfd ("shoal:NAME" in
 * /proc/PID/maps) and checks and maps that copy: what was checked is what
 * runs, and nothing outside can change it. The copy lives (and its fd stays
 * open, for a child process that must load the same code) until the
 * module's last reference goes, when it is unmapped and gone.
 *
 * Order of checks, each refused with a message naming the file: the file
 * exists and is a regular file; it is an ELF shared object (its header,
 * read before the copy is taken) of SHOAL_PLUGIN_MAX_SIZE at most; its
 * .note.shoal (written by SHOAL_PLUGIN) has our ABI major, a minor no
 * newer than ours and a descriptor no smaller than ABI 1.0's -- all read
 * from the copy, before dlopen runs any of the plugin's code; its ELF
 * constructors tried in a process of their own (plugin_trial.h: one that
 * hangs, crashes or exits there is refused); dlopen (RTLD_NOW | RTLD_LOCAL); the
 * exported descriptor exists and agrees with the note; its name and
 * behaviours are well formed and unique, and so is each behaviour's args
 * schema (ABI 1.3, argcheck.c); its init succeeds, within a deadline
 * (plugin_init.h: one that never returns fails the load). The behaviours
 * are then copied into host-side structs of today's size, holding only the
 * fields the plugin's ABI minor has, so the runtime never reads past what the
 * plugin defined.
 *
 * A loaded module's life -- its references, its release (fini, the .so
 * closed), what the host reads of it, spawning from it -- is
 * loader_module.c.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/argcheck.h"
#include "host/file.h"
#include "host/loader_module.h"
#include "host/plugin_init.h"
#include "host/plugin_trial.h"
#include "runtime/fault.h"

/* The part of the descriptor every ABI 1.x plugin has. */
#define DESC_MIN_SIZE offsetof(shoal_plugin_t, init)

/* loader_module.h */
shoal_loader_tend_t shoal__loader_tend_here(shoal_loader_t *L)
{
    shoal_loader_tend_t t = {NULL, NULL};
    if (L == NULL)
        return t;
    pthread_mutex_lock(&L->lock);
    if (L->tend != NULL && pthread_equal(L->tend_thread, pthread_self())) {
        t.fn = L->tend;
        t.user = L->tend_user;
    }
    pthread_mutex_unlock(&L->lock);
    return t;
}

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

/* Reads fd's ELF header into *eh: SHOAL_OK if it is a 64-bit shared
 * object's, else refused. */
static int read_header(const char *path, int fd, Elf64_Ehdr *eh, shoal_diag_t *err)
{
    if (pread(fd, eh, sizeof *eh, 0) != (ssize_t)sizeof *eh ||
        memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
        return refuse(err, path, "not a shared object (not an ELF file)");
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN)
        return refuse(err, path, "not a shared object (an ELF file, but not a 64-bit .so)");
    return SHOAL_OK;
}

/* The note sections read of one file, in all: a plugin's are a few dozen
 * bytes (a build id, the GNU properties, .note.shoal); a file whose
 * section table lists 4096 note sections of 1 MiB each held the host
 * thread for 1.8 s reading them (a 1.3 MiB file: they overlap). */
#define NOTES_READ_MAX (1u << 20)

/* Reads the .note.shoal payload from an ELF file without loading it. */
static int read_note(const char *path, int fd, shoal_plugin_note_t *note, bool *found,
                     shoal_diag_t *err)
{
    Elf64_Ehdr eh;
    *found = false;
    int rc = read_header(path, fd, &eh, err);
    if (rc != SHOAL_OK)
        return rc;
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096)
        return SHOAL_OK; /* no section table to read: treated as no note */
    uint64_t read_total = 0;
    for (unsigned i = 0; i < eh.e_shnum && !*found; i++) {
        Elf64_Shdr sh;
        if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + (uint64_t)i * sizeof sh)) !=
            (ssize_t)sizeof sh)
            return refuse(err, path, "truncated ELF section table");
        if (sh.sh_type != SHT_NOTE)
            continue;
        if (sh.sh_size > NOTES_READ_MAX - read_total)
            return refuse(err, path, "its note sections hold more than %u KiB: not read",
                          NOTES_READ_MAX >> 10);
        read_total += sh.sh_size;
        unsigned char *buf = malloc(sh.sh_size ? sh.sh_size : 1);
        if (buf == NULL) {
            shoal__diag_set(err, path, 0, 0, "plugin not read: no memory for its notes");
            return SHOAL_ENOMEM;
        }
        if (pread(fd, buf, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size) {
            free(buf);
            return refuse(err, path, "truncated ELF note");
        }
        for (size_t off = 0; off + sizeof(Elf64_Nhdr) <= sh.sh_size;) {
            Elf64_Nhdr nh;
            memcpy(&nh, buf + off, sizeof nh);
            /* Rounded up in size_t: in 32 bits a size of 4 GiB less 1-3
             * rounds to 0, and a note claiming a 4 GiB descriptor was read
             * past its section. */
            size_t name_at = off + sizeof nh;
            size_t desc_at = name_at + (((size_t)nh.n_namesz + 3) & ~(size_t)3);
            size_t end = desc_at + (((size_t)nh.n_descsz + 3) & ~(size_t)3);
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
    if (minor >= 3)
        return sizeof(shoal_behaviour_t);
    return minor >= 1 ? offsetof(shoal_behaviour_t, args) : offsetof(shoal_behaviour_t, inspect);
}

/* Whether a plugin of ABI 1.<minor> has the args schema field (1.3). */
static bool has_args(unsigned minor)
{
    return behaviour_size(minor) >= offsetof(shoal_behaviour_t, args) + sizeof(void *);
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
        char owner[140], why[400];
        snprintf(owner, sizeof owner, "%s.%s", d->name, b->name);
        int rc = has_args(d->abi_minor) ? shoal__argcheck_schema(owner, b->args, why, sizeof why)
                                        : SHOAL_OK;
        if (rc == SHOAL_ENOMEM)
            return rc;
        if (rc != SHOAL_OK)
            return refuse(err, path, "%s", why);
    }
    return SHOAL_OK;
}

static shoal_module_t *find(shoal_loader_t *L, const struct stat *st)
{
    shoal_file_id_t id = shoal__file_id(st);
    for (shoal_module_t *m = L->modules; m != NULL; m = m->next) {
        /* ctime too: a copy that keeps the mtime (cp -p, install -p) still
         * moves it. */
        if (!shoal__file_id_same(&m->id, &id))
            continue;
        /* Take a reference unless it is already on its way out. acquire:
         * no pairing -- the module was set up before it was listed under
         * L->lock, which we hold; a new reference publishes nothing. */
        uint32_t r = atomic_load_explicit(&m->refs, memory_order_relaxed);
        while (r != 0)
            if (atomic_compare_exchange_weak_explicit(&m->refs, &r, r + 1, memory_order_acquire,
                                                      memory_order_relaxed))
                return m;
    }
    return NULL;
}

/* Copies the open file fd (size bytes) into a fresh memfd named after
 * the file, sealed against any change, and returns it (or -1 with err set).
 * The copy is read with pread, never mapped: a file rewritten while we read
 * gives a copy the checks then refuse, never a fault. */
static int private_copy(const char *path, int fd, off_t size, shoal_diag_t *err)
{
    const char *base = strrchr(path, '/');
    char name[80];
    snprintf(name, sizeof name, "shoal:%s", base ? base + 1 : path);
    int out = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (out < 0) {
        refuse(err, path, "cannot make a private copy to load: memfd_create: %s", strerror(errno));
        return -1;
    }
    char chunk[65536];
    off_t off = 0;
    while (off < size) {
        size_t want = (size_t)(size - off) < sizeof chunk ? (size_t)(size - off) : sizeof chunk;
        ssize_t got = pread(fd, chunk, want, off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            refuse(err, path, got < 0 ? "cannot read: %s" : "changed while being read%s",
                   got < 0 ? strerror(errno) : " (shorter than it was)");
            goto fail;
        }
        for (ssize_t done = 0; done < got;) {
            ssize_t w = write(out, chunk + done, (size_t)(got - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                refuse(err, path, "cannot make a private copy to load: %s", strerror(errno));
                goto fail;
            }
            done += w;
        }
        off += got;
    }
    if (fcntl(out, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
        refuse(err, path, "cannot seal the private copy: %s", strerror(errno));
        goto fail;
    }
    return out;
fail:
    close(out);
    return -1;
}

/* loader.h */
int shoal__plugin_file_check(const char *path, int fd, off_t size, int *copy,
                             shoal_plugin_note_t *note, bool *found, shoal_diag_t *err)
{
    *copy = -1;
    *found = false;
    /* Before the copy, which reads the whole file on this thread (the host
     * thread, at a reload or a diff: 4 s for 1 GiB): its header, then its
     * size. The copy's header is read again below -- what is checked is
     * what runs. */
    Elf64_Ehdr eh;
    if (read_header(path, fd, &eh, err) != SHOAL_OK)
        return SHOAL_ELOAD;
    if (size > SHOAL_PLUGIN_MAX_SIZE)
        return refuse(err, path, "too large: %lld bytes, past the %d MiB a plugin may be",
                      (long long)size, SHOAL_PLUGIN_MAX_SIZE >> 20);
    int c = private_copy(path, fd, size, err);
    if (c < 0)
        return SHOAL_ELOAD;
    /* From here on only the copy is read: what is checked is what runs. */
    int rc = read_note(path, c, note, found, err);
    if (rc == SHOAL_OK && *found)
        rc = check_abi(path, note->abi_major, note->abi_minor, note->descriptor_size, err);
    if (rc != SHOAL_OK) {
        close(c);
        return rc;
    }
    *copy = c;
    return SHOAL_OK;
}

static int load(shoal_loader_t *L, const char *path, shoal_module_t **out, shoal_diag_t *err);

/* "plugin NAME VERSION (PATH)" (malloc'ed): what an actor running its code
 * is said to run in a crash report. */
static char *origin_of(const shoal_plugin_t *d, const char *path)
{
    const char *version = d->version != NULL ? d->version : "(no version)";
    size_t n = strlen(d->name) + strlen(version) + strlen(path) + sizeof "plugin   ()";
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "plugin %s %s (%s)", d->name, version, path);
    return s;
}

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
    /* O_NONBLOCK: a FIFO at the path must not hang the host in open(). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    int copy;
    int rc = shoal__plugin_file_check(path, fd, st.st_size, &copy, &note, &has_note, err);
    close(fd);
    if (rc != SHOAL_OK)
        return rc;
    /* Its constructors first in a child: one that hangs or crashes there
     * refuses the plugin before it can hold or kill the host. Waited for
     * tended (loader.h): the host thread's watchdog goes on. */
    shoal_loader_tend_t tend = shoal__loader_tend_here(L);
    char trial[256];
    if (shoal__plugin_trial_tended(copy, &st, SHOAL_PLUGIN_INIT_TIMEOUT_MS, tend.fn, tend.user,
                                   trial, sizeof trial) != 0) {
        close(copy);
        return refuse(err, path, "%s", trial);
    }
    char at[64];
    snprintf(at, sizeof at, "/proc/self/fd/%d", copy);
    void *dl = dlopen(at, RTLD_NOW | RTLD_LOCAL);
    if (dl == NULL) {
        close(copy);
        return refuse(err, path, "dlopen: %s", dlerror());
    }
    const shoal_plugin_t *d = dlsym(dl, SHOAL_PLUGIN_SYMBOL);
    if (d == NULL) {
        dlclose(dl);
        close(copy);
        return refuse(err, path,
                      "no '" SHOAL_PLUGIN_SYMBOL "' symbol: export a descriptor with "
                      "SHOAL_PLUGIN() from <shoal/plugin.h>");
    }
    if ((rc = check_abi(path, d->abi_major, d->abi_minor, d->size, err)) != SHOAL_OK ||
        (rc = check_descriptor(path, d, err)) != SHOAL_OK) {
        dlclose(dl);
        close(copy);
        return rc;
    }
    if (has_note && (note.abi_major != d->abi_major || note.abi_minor != d->abi_minor ||
                     note.descriptor_size != d->size)) {
        dlclose(dl);
        close(copy);
        return refuse(err, path, "the ABI note and the descriptor disagree");
    }
    bool has_init = d->size >= offsetof(shoal_plugin_t, init) + sizeof d->init;
    if (has_init && d->init != NULL) {
        /* The name lives in the plugin: copy it before closing. */
        char why[256] = "", name[65];
        snprintf(name, sizeof name, "%s", d->name);
        int r = 0;
        rc = shoal__plugin_hook_run_tended(d, false, dl, copy, SHOAL_PLUGIN_INIT_TIMEOUT_MS,
                                           tend.fn, tend.user, why, sizeof why, &r);
        if (rc == SHOAL_ETIMEDOUT) /* dl and copy are its thread's now */
            return refuse(err, path,
                          "init of plugin '%s' did not return within %u ms (left running, never "
                          "used)",
                          name, SHOAL_PLUGIN_INIT_TIMEOUT_MS);
        if (rc != SHOAL_OK || r != 0) {
            dlclose(dl);
            close(copy);
            if (rc != SHOAL_OK)
                return refuse(err, path, "init of plugin '%s' could not run: %s", name,
                              shoal_strerror(rc));
            return refuse(err, path, "init of plugin '%s' failed (%d)%s%s", name, r,
                          why[0] ? ": " : "", why);
        }
    }
    m = calloc(1, sizeof *m);
    size_t nb = 0;
    while (d->behaviours[nb] != NULL)
        nb++;
    if (m == NULL || (m->path = strdup(path)) == NULL || (m->origin = origin_of(d, path)) == NULL ||
        (m->behaviours = calloc(nb, sizeof *m->behaviours)) == NULL) {
        if (m != NULL) {
            free(m->path);
            free(m->origin);
        }
        free(m);
        if (d->size >= offsetof(shoal_plugin_t, fini) + sizeof d->fini && d->fini != NULL)
            d->fini(); /* its init ran: undo it */
        dlclose(dl);
        close(copy);
        return SHOAL_ENOMEM;
    }
    for (size_t i = 0; i < nb; i++)
        memcpy(&m->behaviours[i], d->behaviours[i], behaviour_size(d->abi_minor));
    m->nbehaviours = nb;
    m->dl = dl;
    m->desc = d;
    m->id = shoal__file_id(&st);
    m->copy_fd = copy;
    shoal__fault_name_fd(copy, m->path); /* a crash's frames name the file */
    atomic_init(&m->refs, 1);
    pthread_mutex_lock(&L->lock);
    m->loader = L;
    m->next = L->modules;
    L->modules = m;
    pthread_mutex_unlock(&L->lock);
    *out = m;
    return SHOAL_OK;
}

void shoal__loader_set_warn(shoal_loader_t *L, void (*warn)(void *user, const char *line),
                            void *user)
{
    pthread_mutex_lock(&L->lock);
    L->warn = warn;
    L->warn_user = user;
    pthread_mutex_unlock(&L->lock);
}

void shoal__loader_set_tend(shoal_loader_t *L, void (*tend)(void *user), void *user)
{
    pthread_mutex_lock(&L->lock);
    L->tend = tend;
    L->tend_user = user;
    L->tend_thread = pthread_self();
    pthread_mutex_unlock(&L->lock);
}

int shoal__module_show_as(shoal_module_t *m, const char *path)
{
    char *p = strdup(path), *o = origin_of(m->desc, path);
    if (p == NULL || o == NULL) {
        free(p);
        free(o);
        return SHOAL_ENOMEM;
    }
    free(m->path);
    free(m->origin);
    m->path = p;
    m->origin = o;
    shoal__fault_unname_fd(m->copy_fd);
    shoal__fault_name_fd(m->copy_fd, p);
    return SHOAL_OK;
}
