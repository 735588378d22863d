/* fuzz_control_host.c - the host behind the fuzz_control target's control
 * socket (fuzz_control.c drives the requests), made once (the first input),
 * and the files it reads.
 *
 * THE HOST: a config of five pools and a source -- api (forward), jobs
 * (pull, with a source), db (checkout, in a group), lazy (elastic: min 0,
 * idle_timeout, max_waiting), fan (a pool of pools) -- and a source, tick.
 * Their behaviours are this file's (echo: answers a call with its payload;
 * src: a pull source of at most 100 items), in a module made here and put
 * on the loader's list under the identity of an empty file fz.so: every
 * load of that path (the start, a reload, a diff) finds it, so no plugin .so
 * is built or loaded.
 *
 * THE FILES diff PATH reads instead of PATH (fuzz_control.c rewrites it):
 * the host's config, a changed one, bad YAML, an unknown behaviour, a
 * missing plugin, a plugin that is no ELF file, a missing file, a
 * directory, a FIFO; all in one temporary directory, removed at exit.
 * After every input each pool's bounds and size are put back (scale). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_control.h"
#include "host/control.h"
#include "host/host.h"
#include "host/loader_module.h"
#include "shoal/args.h"
#include "shoal/ctx.h"
#include "shoal/inspect.h"
#include "shoal/plugin.h"
#include "runtime/runtime.h"
#include "shoal/pull.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define LSAN_ROOT(p, n) __lsan_register_root_region(p, n)
#endif
#endif
#ifndef LSAN_ROOT
#define LSAN_ROOT(p, n) ((void)(p), (void)(n))
#endif

/* ---- the behaviours: echo and a pull source ------------------------------- */

typedef struct echo_s {
    uint64_t calls, casts;
} echo_t;

static int echo_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)msg;
    ((echo_t *)state)->casts++;
    return 0;
}

static int echo_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    ((echo_t *)state)->calls++;
    int rc = shoal_reply_set(reply, msg->type, msg->data, msg->size);
    if (rc != SHOAL_OK)
        shoal_reply_error(reply, rc);
    return 0;
}

static int echo_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    const echo_t *s = state;
    shoal_inspect_uint(out, "calls", s->calls);
    shoal_inspect_uint(out, "casts", s->casts);
    return 0;
}

static const shoal_arg_spec_t echo_args[] = {
    {.key = "tag", .type = SHOAL_ARG_STRING, .max = 32},
    {.key = NULL},
};

typedef struct src_s {
    int64_t next, to;
} src_t;

static int src_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    src_t *s = state;
    int rc = shoal_arg_int(ctx, args, "from", SHOAL_ARG_OPTIONAL, 0, 100, &s->next);
    return rc != SHOAL_OK ? rc : shoal_arg_int(ctx, args, "to", 0, 0, 100, &s->to);
}

static int src_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    src_t *s = state;
    uint32_t n;
    if (msg->kind != SHOAL_MSG_CAST || msg->from == SHOAL_PID_NONE)
        return 0;
    if (msg->type == SHOAL_PULL_RESUME && msg->size == sizeof s->next) {
        memcpy(&s->next, msg->data, sizeof s->next);
        return 0;
    }
    if (msg->type != SHOAL_PULL_REQUEST || msg->size != sizeof n)
        return 0;
    memcpy(&n, msg->data, sizeof n);
    for (; n > 0 && s->next <= s->to; n--, s->next++)
        if (shoal_send(ctx, msg->from, 1, &s->next, sizeof s->next) != SHOAL_OK)
            break;
    if (s->next > s->to)
        (void)shoal_send_priority(ctx, msg->from, SHOAL_PULL_DONE, NULL, 0);
    else
        (void)shoal_send_priority(ctx, msg->from, SHOAL_PULL_SENT, &s->next, sizeof s->next);
    return 0;
}

/* Every type of arg, for epic's args check: to and from are read, the
 * rest only checked. */
static const char *const src_modes[] = {"fast", "slow", NULL};
static const shoal_arg_spec_t src_args[] = {
    {.key = "from", .type = SHOAL_ARG_INT, .min = 0, .max = 100, .def = "0"},
    {.key = "to", .type = SHOAL_ARG_INT, .flags = SHOAL_ARG_REQUIRED, .min = 0, .max = 100},
    {.key = "label", .type = SHOAL_ARG_STRING, .min = 1, .max = 16},
    {.key = "mode", .type = SHOAL_ARG_ENUM, .choices = src_modes, .def = "fast"},
    {.key = "pause", .type = SHOAL_ARG_DURATION, .min = 0, .max = 1000, .def = "0"},
    {.key = "spin", .type = SHOAL_ARG_DURATION_US, .min = 0, .max = 1000},
    {.key = "chunk", .type = SHOAL_ARG_SIZE, .min = 1, .max = 1 << 20, .def = "4KiB"},
    {.key = "check", .type = SHOAL_ARG_BOOL, .def = "false"},
    {.key = "items", .type = SHOAL_ARG_LIST},
    {.key = "meta", .type = SHOAL_ARG_MAP},
    {.key = NULL},
};

static const shoal_behaviour_t echo_beh = {
    .name = "echo",
    .state_size = sizeof(echo_t),
    .handle_message = echo_message,
    .handle_call = echo_call,
    .inspect = echo_inspect,
    .args = echo_args,
};

static const shoal_behaviour_t src_beh = {
    .name = "src",
    .state_size = sizeof(src_t),
    .init = src_init,
    .handle_message = src_message,
    .args = src_args,
};

static const shoal_behaviour_t *const fz_list[] = {&echo_beh, &src_beh, NULL};
static const shoal_plugin_t fz_plugin = {.abi_major = SHOAL_ABI_MAJOR,
                                         .abi_minor = SHOAL_ABI_MINOR,
                                         .size = sizeof(shoal_plugin_t),
                                         .name = "fz",
                                         .version = "1.0.0",
                                         .behaviours = fz_list};

/* ---- the host, made once ------------------------------------------------------ */

#define CONFIG_HEAD                                                                                \
    "runtime: { threads: 2, max_extra_threads: 0, max_actors: 4096 }\n"                            \
    "log: { level: error }\n"                                                                      \
    "shutdown: { drain: 1s }\n"

static const char host_yaml[] = CONFIG_HEAD
    "plugins: { fz: ./fz.so }\n"
    "pools:\n"
    "  api: { worker: fz.echo, size: 2, max: 4 }\n"
    "  jobs: { kind: pull, worker: fz.echo, size: 1, max: 2, buffer: 16, source: fz.src,\n"
    "          source_args: { to: 3 } }\n"
    "  db: { kind: checkout, member: fz.echo, init: 1, max: 2, group: g }\n"
    "  lazy: { worker: fz.echo, size: 1, min: 0, max: 2, idle_timeout: 1s, max_waiting: 4 }\n"
    "  fan: { worker: { worker: fz.echo, size: 1 }, size: 2, max: 3 }\n"
    "sources:\n"
    "  tick: { actor: fz.echo }\n";

/* What diff PATH reads instead of PATH (index 0 is the host's config). */
static const char *const diff_yaml[] = {
    NULL,
    CONFIG_HEAD "plugins: { fz: ./fz.so }\npools:\n"
                "  api: { worker: fz.echo, size: 3, max: 4, args: { tag: x } }\n"
                "  extra: { worker: fz.echo, size: 1 }\n"
                "sources:\n  tick: { actor: fz.echo, args: { tag: y } }\n",
    "pools: [\n  api: {\n",
    CONFIG_HEAD "plugins: { fz: ./fz.so }\npools:\n  api: { worker: fz.nope }\n",
    CONFIG_HEAD "plugins: { fz: ./fz.so, gone: ./gone.so }\npools:\n  api: { worker: gone.x }\n",
    CONFIG_HEAD "plugins: { fz: ./fz.so, txt: ./d2.yaml }\npools:\n  api: { worker: txt.x }\n",
};

static char dir[64], cfg[128];
char fctl_sock[96], fctl_diffs[NDIFF][128];
shoal_host_t *fctl_host;
static shoal_loader_t *loader;
shoal_control_t *fctl_control;
bool fctl_stopping;
static shoal_behaviour_t fz_behaviours[2];
static char fz_path[128], fz_origin[160];
static shoal_module_t fz_module;

/* Bounds and size each pool started with, put back after every input. */
typedef struct shape_s {
    const char *name;
    bool elastic; /* sizes itself: only its bounds are put back */
    uint32_t min, max, size;
} shape_t;
static shape_t shapes[] = {
    {"api", false, 0, 0, 0},
    {"jobs", false, 0, 0, 0},
    {"lazy", true, 0, 0, 0},
    {"fan", false, 0, 0, 0},
};

void fctl_fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_control: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        fctl_fail("cannot write", path);
}

/* The module fz: the behaviours above, found by the loader as the file
 * fz_path (its identity now), never released (our reference). */
static void module_make(void)
{
    struct stat st;
    write_file(fz_path, "");
    if (stat(fz_path, &st) != 0)
        fctl_fail("cannot stat", fz_path);
    fz_behaviours[0] = echo_beh;
    fz_behaviours[1] = src_beh;
    snprintf(fz_origin, sizeof fz_origin, "plugin fz 1.0.0 (%s)", fz_path);
    fz_module = (shoal_module_t){.loader = loader,
                                 .desc = &fz_plugin,
                                 .behaviours = fz_behaviours,
                                 .nbehaviours = 2,
                                 .path = fz_path,
                                 .origin = fz_origin,
                                 .copy_fd = -1,
                                 .id = shoal__file_id(&st)};
    atomic_init(&fz_module.refs, 1);
    pthread_mutex_lock(&loader->lock);
    fz_module.next = loader->modules;
    loader->modules = &fz_module;
    pthread_mutex_unlock(&loader->lock);
}

void fctl_control_up(void)
{
    shoal_diag_t err = {0};
    if (shoal__control_open(fctl_sock, &fctl_control, &err) != SHOAL_OK ||
        shoal__control_start(fctl_control, fctl_host, cfg) != SHOAL_OK)
        fctl_fail("cannot open the control socket", err.msg);
    fctl_stopping = false;
}

static shoal_host_pool_t *live_pool(const char *name)
{
    for (size_t i = 0; i < fctl_host->npools; i++)
        if (!fctl_host->pools[i].draining && strcmp(fctl_host->pools[i].name, name) == 0)
            return &fctl_host->pools[i];
    return NULL;
}

/* At exit: the files made here go (the host is left running). */
static void tidy(void)
{
    unlink(fctl_sock);
    unlink(cfg);
    unlink(fz_path);
    for (size_t i = 1; i < NDIFF; i++)
        unlink(fctl_diffs[i]);
    rmdir(dir);
}

void fctl_setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/shoal-fzctl-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        fctl_fail("mkdtemp", strerror(errno));
    atexit(tidy);
    snprintf(fctl_sock, sizeof fctl_sock, "%s/ctl.sock", dir);
    snprintf(cfg, sizeof cfg, "%s/s.yaml", dir);
    snprintf(fz_path, sizeof fz_path, "%s/fz.so", dir);
    write_file(cfg, host_yaml);
    snprintf(fctl_diffs[0], sizeof fctl_diffs[0], "%s", cfg);
    for (size_t i = 1; i < sizeof diff_yaml / sizeof diff_yaml[0]; i++) {
        snprintf(fctl_diffs[i], sizeof fctl_diffs[i], "%s/d%zu.yaml", dir, i);
        write_file(fctl_diffs[i], diff_yaml[i]);
    }
    snprintf(fctl_diffs[6], sizeof fctl_diffs[6], "%s/none.yaml", dir);
    snprintf(fctl_diffs[7], sizeof fctl_diffs[7], "%s", dir);
    snprintf(fctl_diffs[8], sizeof fctl_diffs[8], "%s/fifo.yaml", dir);
    if (mkfifo(fctl_diffs[8], 0600) != 0)
        fctl_fail("mkfifo", strerror(errno));
    if (shoal__loader_create(&loader) != SHOAL_OK)
        fctl_fail("cannot make a loader", NULL);
    module_make();
    shoal_config_t *c = NULL;
    shoal_diag_t err = {0};
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull == NULL || shoal__config_load(cfg, &c, &err) != SHOAL_OK ||
        shoal__config_resolve(c, loader, &err) != SHOAL_OK ||
        shoal__host_start(c, loader, devnull, &fctl_host, &err) != SHOAL_OK)
        fctl_fail("cannot start the host", err.msg);
    /* The actors' records are mapped, not allocated: what they point at
     * is not a leak. */
    LSAN_ROOT(fctl_host->rt->recs, fctl_host->rt->recs_bytes);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        shoal_host_pool_t *hp = live_pool(shapes[i].name);
        shoal_pool_stats_t st;
        if (hp == NULL)
            fctl_fail("no pool", shapes[i].name);
        shoal__host_peek(hp, &st);
        shapes[i].min = st.min_size;
        shapes[i].max = st.max_size;
        shapes[i].size = st.target_size;
    }
    fctl_control_up();
}

/* Puts back what scale changed. */
void fctl_reshape(void)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape_t *s = &shapes[i];
        shoal_host_pool_t *hp = live_pool(s->name);
        shoal_pool_stats_t st;
        if (hp == NULL)
            fctl_fail("a pool is gone", s->name);
        shoal__host_peek(hp, &st);
        if (st.min_size != s->min || st.max_size != s->max)
            (void)shoal_pool_set_bounds(fctl_host->rt, hp->pid, s->min, s->max, 2000);
        if (!s->elastic && st.target_size != s->size)
            (void)shoal_pool_set_size(fctl_host->rt, hp->pid, s->size, 2000);
    }
}
