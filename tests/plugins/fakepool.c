/* fakepool.c - a pull pool played by hand (fakepool.h).
 *
 * The record: the pool's handler (one actor: one thread at a time) writes
 * an entry, then publishes it by storing the count [release]; the test
 * thread loads the count [acquire] and reads only entries below it. Each
 * command from the test thread waits until the pool has done it, so the
 * test never writes what the pool reads while it runs.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fakepool.h"

#define CMD_SPAWN 0x70000001u
#define CMD_TELL 0x70000002u
#define CMD_HOLD 0x70000003u
#define CMD_STREAM 0x70000004u
#define CMD_QUIT 0x70000005u
#define MAX_ANSWERS 1024u

typedef struct spawn_cmd_s {
    const shoal_behaviour_t *behaviour;
    const void *args;
} spawn_cmd_t;

typedef struct tell_cmd_s {
    uint32_t type;
    uint32_t size;
    unsigned char data[SHOAL_PULL_CURSOR_MAX + 8];
} tell_cmd_t;

/* ---- the record ------------------------------------------------------------ */

static fp_msg_t items[FP_MAX_ITEMS], answers[MAX_ANSWERS];
static atomic_uint nitems, nanswers, nstrays;
static _Atomic shoal_pid_t source;
static atomic_uint spawned, told;
static atomic_int spawn_rc, exit_reason;
static atomic_int holding, released;
/* streaming: the command's arguments (written before the command is sent),
 * and the results */
static uint32_t stream_batch;
static bool (*stream_check)(uint64_t, const void *, size_t);
static _Atomic uint64_t stream_items, stream_bad;
static atomic_int stream_done;

typedef struct pool_s {
    bool streaming, answered, done; /* streaming: every item goes to the check */
    uint64_t asked, got;
} pool_t;

static void keep(fp_msg_t *to, const shoal_msg_t *msg)
{
    to->type = msg->type;
    to->flags = msg->flags;
    to->from = msg->from;
    to->size = msg->size;
    if (msg->size != 0) /* data is NULL then */
        memcpy(to->data, msg->data, msg->size < sizeof to->data ? msg->size : sizeof to->data);
}

static void request(shoal_ctx_t *ctx, uint32_t n)
{
    (void)shoal_send_priority(ctx, atomic_load(&source), SHOAL_PULL_REQUEST, &n, sizeof n);
}

/* Streaming: the next request, once the last one is answered and its items
 * are all here (every batch but the last is full: nothing is refused). */
static void stream_on(shoal_ctx_t *ctx, pool_t *p)
{
    if (!p->done && p->answered && p->got == p->asked) {
        p->answered = false;
        p->asked += stream_batch;
        request(ctx, stream_batch);
    }
}

static void command(shoal_ctx_t *ctx, pool_t *p, const shoal_msg_t *msg)
{
    switch (msg->type) {
    case CMD_SPAWN: {
        spawn_cmd_t c;
        shoal_pid_t pid = SHOAL_PID_NONE;
        memcpy(&c, msg->data, sizeof c);
        atomic_store(&exit_reason, SHOAL_TEST_NO_EXIT);
        atomic_store(&spawn_rc, shoal_spawn(ctx, c.behaviour, c.args, NULL, &pid));
        atomic_store(&source, pid);
        atomic_fetch_add(&spawned, 1);
        break;
    }
    case CMD_TELL: {
        tell_cmd_t c;
        memcpy(&c, msg->data, sizeof c);
        (void)shoal_send_priority(ctx, atomic_load(&source), c.type, c.data, c.size);
        atomic_fetch_add(&told, 1);
        break;
    }
    case CMD_HOLD: {
        uint32_t n;
        memcpy(&n, msg->data, sizeof n);
        request(ctx, n);
        atomic_store(&holding, 1);
        double end = shoal_test_now() + 10;
        while (!atomic_load(&released) && shoal_test_now() < end)
            shoal_test_nap();
        atomic_store(&holding, 0);
        break;
    }
    case CMD_STREAM:
        *p = (pool_t){.streaming = true, .asked = stream_batch};
        request(ctx, stream_batch);
        break;
    case CMD_QUIT: {
        uint32_t n;
        memcpy(&n, msg->data, sizeof n);
        request(ctx, n);
        shoal_exit(ctx, SHOAL_OK);
        break;
    }
    }
}

static int pool_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    pool_t *p = state;
    shoal_pid_t src = atomic_load(&source);
    if (msg->kind == SHOAL_MSG_EXIT) {
        if (msg->from == src)
            atomic_store(&exit_reason, msg->status);
        return 0;
    }
    if (msg->kind != SHOAL_MSG_CAST || (msg->from != src && msg->from != SHOAL_PID_NONE)) {
        atomic_fetch_add(&nstrays, 1);
        return 0;
    }
    if (msg->from == SHOAL_PID_NONE) {
        command(ctx, p, msg);
        return 0;
    }
    bool answer = msg->type == SHOAL_PULL_SENT || msg->type == SHOAL_PULL_DONE;
    if (answer != ((msg->flags & SHOAL_MSG_PRIORITY) != 0)) {
        atomic_fetch_add(&nstrays, 1); /* an item with priority, or an answer without */
        return 0;
    }
    if (p->streaming) {
        if (answer) {
            p->answered = true;
            p->done = msg->type == SHOAL_PULL_DONE;
            if (p->done)
                atomic_store(&stream_done, 1);
        } else {
            if (!stream_check(p->got, msg->data, msg->size))
                atomic_fetch_add(&stream_bad, 1);
            p->got++;
            atomic_store(&stream_items, p->got);
        }
        stream_on(ctx, p);
        return 0;
    }
    /* Each count is published [release] after its entry is written; the
     * test thread's load [acquire] of it makes the entry visible. */
    if (answer) {
        unsigned i = atomic_load_explicit(&nanswers, memory_order_relaxed);
        if (i < MAX_ANSWERS) {
            keep(&answers[i], msg);
            atomic_store_explicit(&nanswers, i + 1, memory_order_release);
        }
    } else {
        unsigned i = atomic_load_explicit(&nitems, memory_order_relaxed);
        if (i < FP_MAX_ITEMS)
            keep(&items[i], msg);
        atomic_store_explicit(&nitems, i + 1, memory_order_release);
    }
    return 0;
}

static const shoal_behaviour_t fake_pool = {
    .name = "fakepool",
    .state_size = sizeof(pool_t),
    .handle_message = pool_message,
};

/* ---- the plugins and the runtime ---------------------------------------------- */

static shoal_loader_t *loader;
static const char *const names[] = {"seq", "lines"};
#define NPLUGINS (sizeof names / sizeof names[0])
static shoal_module_t *modules[NPLUGINS];

#define MAX_TREES 64
static shoal_node_t *trees[MAX_TREES];
static unsigned ntrees;

static shoal_runtime_t *rt;
static shoal_pid_t pool_pid;

int fp_setup(void) { return shoal__loader_create(&loader); }

void fp_teardown(void)
{
    for (size_t i = 0; i < NPLUGINS; i++)
        if (modules[i] != NULL)
            shoal__module_release(modules[i]);
    shoal__loader_destroy(loader);
}

const shoal_behaviour_t *fp_behaviour(const char *plugin)
{
    for (size_t i = 0; i < NPLUGINS; i++) {
        if (strcmp(names[i], plugin) != 0)
            continue;
        if (modules[i] == NULL) {
            char path[PATH_MAX];
            shoal_diag_t err;
            snprintf(path, sizeof path, "%s/%s/%s.so", SHOAL_PLUGIN_DIR, plugin, plugin);
            if (shoal__module_load(loader, path, &modules[i], &err) != SHOAL_OK) {
                char buf[1200];
                fprintf(stderr, "\n    %s\n", shoal__diag_format(&err, buf, sizeof buf));
                CU_FAIL("a bundled source is missing or refused");
                modules[i] = NULL;
                return NULL;
            }
        }
        return shoal__module_behaviour(modules[i], plugin);
    }
    CU_FAIL("not a bundled source");
    return NULL;
}

const shoal_node_t *fp_yaml(const char *text)
{
    shoal_diag_t err;
    shoal_node_t *root = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__node_parse("pool.yaml", text, strlen(text), &root, &err),
                          SHOAL_OK);
    CU_ASSERT_FATAL(ntrees < MAX_TREES);
    trees[ntrees++] = root;
    return root;
}

shoal_runtime_t *fp_start(uint32_t limit) { return fp_start_on(limit, 2); }

shoal_runtime_t *fp_start_on(uint32_t limit, unsigned threads)
{
    atomic_store(&nitems, 0);
    atomic_store(&nanswers, 0);
    atomic_store(&nstrays, 0);
    atomic_store(&source, SHOAL_PID_NONE);
    atomic_store(&exit_reason, SHOAL_TEST_NO_EXIT);
    rt = shoal_test_runtime_logged(threads, SHOAL_LOG_INFO);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_spawn_opts_t opts = {.mailbox_limit = limit};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &fake_pool, NULL, &opts, &pool_pid), SHOAL_OK);
    return rt;
}

void fp_stop(void)
{
    shoal_runtime_destroy(rt);
    rt = NULL;
    for (unsigned i = 0; i < ntrees; i++)
        shoal__node_free(trees[i]);
    ntrees = 0;
}

/* Sends the pool a command and waits until `counter` moved past `before`. */
static void command_wait(uint32_t type, const void *data, size_t size, atomic_uint *counter)
{
    unsigned before = atomic_load(counter);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pool_pid, type, data, size), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(counter) != before, 10.0);
    CU_ASSERT_FATAL(atomic_load(counter) != before);
}

shoal_pid_t fp_spawn(const char *plugin, const char *yaml)
{
    spawn_cmd_t c = {.behaviour = fp_behaviour(plugin), .args = yaml ? fp_yaml(yaml) : NULL};
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.behaviour);
    command_wait(CMD_SPAWN, &c, sizeof c, &spawned);
    CU_ASSERT_EQUAL(atomic_load(&spawn_rc), SHOAL_OK);
    return atomic_load(&source);
}

int fp_exit(double seconds)
{
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&exit_reason) != SHOAL_TEST_NO_EXIT, seconds);
    return atomic_load(&exit_reason);
}

void fp_tell(uint32_t type, const void *data, size_t size)
{
    tell_cmd_t c = {.type = type, .size = (uint32_t)size};
    CU_ASSERT_FATAL(size <= sizeof c.data);
    if (size != 0)
        memcpy(c.data, data, size);
    command_wait(CMD_TELL, &c, sizeof c, &told);
}

const fp_msg_t *fp_ask(uint32_t n)
{
    unsigned before = fp_answers();
    fp_tell(SHOAL_PULL_REQUEST, &n, sizeof n);
    SHOAL_TEST_WAIT_UNTIL(fp_answers() != before || fp_exit(0) != SHOAL_TEST_NO_EXIT, 10.0);
    return fp_answers() != before ? fp_answer(before) : NULL;
}

void fp_ask_and_end(uint32_t n)
{
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pool_pid, CMD_QUIT, &n, sizeof n), SHOAL_OK);
}

unsigned fp_answers(void) { return atomic_load_explicit(&nanswers, memory_order_acquire); }
const fp_msg_t *fp_answer(unsigned i) { return i < fp_answers() ? &answers[i] : NULL; }
unsigned fp_items(void) { return atomic_load_explicit(&nitems, memory_order_acquire); }
const fp_msg_t *fp_item(unsigned i)
{
    return i < fp_items() && i < FP_MAX_ITEMS ? &items[i] : NULL;
}
unsigned fp_strays(void) { return atomic_load(&nstrays); }

bool fp_wait_items(unsigned n)
{
    SHOAL_TEST_WAIT_UNTIL(fp_items() >= n, 10.0);
    return fp_items() >= n;
}

void fp_ask_held(uint32_t n)
{
    atomic_store(&released, 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pool_pid, CMD_HOLD, &n, sizeof n), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&holding), 10.0);
    CU_ASSERT_FATAL(atomic_load(&holding));
}

void fp_release(void)
{
    atomic_store(&released, 1);
    SHOAL_TEST_WAIT_UNTIL(!atomic_load(&holding), 10.0);
}

bool fp_stream(uint32_t batch, bool (*check)(uint64_t, const void *, size_t), uint64_t expect,
               double seconds, uint64_t *got, uint64_t *bad)
{
    stream_batch = batch; /* read by the pool after the send below */
    stream_check = check;
    atomic_store(&stream_items, 0);
    atomic_store(&stream_bad, 0);
    atomic_store(&stream_done, 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pool_pid, CMD_STREAM, NULL, 0), SHOAL_OK);
    /* DONE may overtake the last items (it has priority): wait for both. */
    SHOAL_TEST_WAIT_UNTIL((atomic_load(&stream_done) && atomic_load(&stream_items) >= expect) ||
                              fp_exit(0) != SHOAL_TEST_NO_EXIT,
                          seconds);
    *got = atomic_load(&stream_items);
    *bad = atomic_load(&stream_bad);
    return atomic_load(&stream_done);
}

void fp_stats(void *st, size_t size)
{
    shoal_answer_t ans;
    memset(st, 0xff, size);
    CU_ASSERT_EQUAL_FATAL(
        shoal_runtime_call(rt, atomic_load(&source), 0xFFFF0001u, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    CU_ASSERT_EQUAL(ans.type, 0xFFFF0001u);
    CU_ASSERT_EQUAL(ans.size, size);
    if (ans.status == SHOAL_OK && ans.size == size)
        memcpy(st, ans.data, size);
    shoal_answer_release(&ans);
}

void fp_info(char *out, size_t size)
{
    shoal_answer_t ans;
    snprintf(out, size, "(no answer)");
    if (shoal_runtime_inspect(rt, atomic_load(&source), 10000, &ans) != SHOAL_OK)
        return;
    const char *info = ans.status == SHOAL_OK ? strstr(ans.data, "\"info\":") : NULL;
    snprintf(out, size, "%s", info ? info + strlen("\"info\":") : "(no info)");
    size_t n = strlen(out);
    if (n > 0 && out[n - 1] == '}' && info != NULL)
        out[n - 1] = '\0'; /* the whole answer's closing brace */
    shoal_answer_release(&ans);
}
