/* test_stats.c - what a pool tells operators about itself (core/pool/
 * stats.c, shoal__pool_inspect): every pool's inspection names its kind; a
 * pull pool's carries a "pull" object with its buffer, demand, what its
 * workers hold, its own names for the ledger's counts (received, completed,
 * refused), and its source. Exact values after a known sequence: two
 * workers blocked on a gate, 12 items accepted and 28 refused; then the
 * gate opens and one item panics. Every inspection must parse as JSON.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <stdio.h>
#include <string.h>

#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u

enum { T_JOB = 1 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2 };

static atomic_int done, entered, gate;

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    uint32_t act;
    if (msg->type != T_JOB || msg->size != sizeof act)
        return 0;
    memcpy(&act, msg->data, sizeof act);
    if (act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (act & A_PANIC)
        shoal_panic(ctx, "test panic");
    atomic_fetch_add(&done, 1);
    return 0;
}

static const shoal_behaviour_t wk = {.name = "wk", .handle_message = wk_message};

static int job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t act)
{
    return shoal_runtime_send(rt, to, T_JOB, &act, sizeof act);
}

/* ---- a JSON checker (RFC 8259's grammar; numbers without exponents) ----- */

static const char *value(const char *s, int depth);

static const char *ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

static const char *string(const char *s)
{
    if (*s++ != '"')
        return NULL;
    for (; *s != '"'; s++) {
        if ((unsigned char)*s < 0x20)
            return NULL;
        if (*s == '\\' && strchr("\"\\/bfnrtu", *++s) == NULL)
            return NULL;
    }
    return s + 1;
}

static const char *number(const char *s)
{
    const char *start = s += *s == '-';
    while (*s >= '0' && *s <= '9')
        s++;
    if (s == start || (*start == '0' && s - start > 1))
        return NULL;
    if (*s == '.' && (++s, *s < '0' || *s > '9'))
        return NULL;
    while (*s >= '0' && *s <= '9')
        s++;
    return s;
}

/* '{' members '}' or '[' elements ']': close is '}' or ']'. */
static const char *compound(const char *s, char close, int depth)
{
    s = ws(s + 1);
    if (*s == close)
        return s + 1;
    for (;;) {
        if (close == '}') {
            if ((s = string(ws(s))) == NULL || *(s = ws(s)) != ':')
                return NULL;
            s++;
        }
        if ((s = value(s, depth + 1)) == NULL)
            return NULL;
        s = ws(s);
        if (*s == close)
            return s + 1;
        if (*s++ != ',')
            return NULL;
    }
}

static const char *value(const char *s, int depth)
{
    s = ws(s);
    if (depth > 32)
        return NULL;
    if (*s == '{' || *s == '[')
        return compound(s, *s == '{' ? '}' : ']', depth);
    if (*s == '"')
        return string(s);
    for (const char *const *w = (const char *const[]){"true", "false", "null", NULL}; *w; w++)
        if (strncmp(s, *w, strlen(*w)) == 0)
            return s + strlen(*w);
    return number(s);
}

static bool json_valid(const char *s)
{
    const char *end = value(s, 0);
    return end != NULL && *ws(end) == '\0';
}

/* The checker itself: what it must refuse. */
static void the_checker_refuses_bad_json(void)
{
    CU_ASSERT(json_valid("{\"a\":[1,-2.5,\"x\\n\",true,null,{}],\"b\":{\"c\":0}}"));
    static const char *const bad[] = {
        "{\"a\":1,}", "{\"a\" 1}",       "{\"a\":01}", "{a:1}",      "[1,]",
        "{\"a\":1}}", "{\"a\":\"\\q\"}", "{\"a\":1",   "{\"a\":1.}", "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT(!json_valid(bad[i]));
        if (json_valid(bad[i]))
            fprintf(stderr, "\n    taken: %s\n", bad[i]);
    }
}

/* ---- inspections -------------------------------------------------------- */

static int inspect(shoal_runtime_t *rt, shoal_pid_t pid, char *out, size_t cap)
{
    shoal_answer_t a;
    out[0] = '\0';
    int rc = shoal_runtime_inspect(rt, pid, TMO, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && a.data != NULL)
        snprintf(out, cap, "%s", (const char *)a.data);
    shoal_answer_release(&a);
    return rc;
}

static void has(const char *json, const char *part)
{
    CU_ASSERT_PTR_NOT_NULL(strstr(json, part));
    if (strstr(json, part) == NULL)
        fprintf(stderr, "\n    in:      %s\n    missing: %s\n", json, part);
}

static void valid(const char *json)
{
    CU_ASSERT(json_valid(json));
    if (!json_valid(json))
        fprintf(stderr, "\n    not JSON: %s\n", json);
}

static uint64_t handled(shoal_runtime_t *rt, shoal_pid_t p)
{
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    return st.messages_handled + st.messages_failed;
}

/* The worker that panicked is replaced (its demand counts again). */
static bool replaced(shoal_runtime_t *rt, shoal_pid_t p)
{
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    return st.worker_restarts == 1 && st.pool_size == 2;
}

/* Two workers with prefetch 1 block on their first item; the buffer (10)
 * takes ten more; 28 sends are refused. Then the gate opens, everything is
 * completed, and one more item panics its worker. */
static void a_pull_pools_inspection(void)
{
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "jobs";
    s.worker = &wk;
    s.kind = SHOAL_POOL_KIND_PULL;
    s.size = s.min_size = 2;
    s.prefetch = 1;
    s.buffer = 10;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    char json[4096];
    CU_ASSERT_EQUAL(inspect(rt, p, json, sizeof json), SHOAL_OK);
    valid(json);
    has(json, "\"pool\":\"jobs\",\"state\":\"running\",\"pool_size\":2,\"target_size\":2,");
    has(json, "\"kind\":\"pull\",\"worker_is_pool\":false,");
    has(json, "\"pull\":{\"prefetch\":1,\"buffer\":10,\"buffer_depth\":0,\"held\":0,\"demand\":2,"
              "\"received\":0,\"delivered\":0,\"completed\":0,\"failed\":0,\"refused\":0,"
              "\"redelivered\":0,\"dead_lettered\":0,\"dropped\":0,"
              "\"source\":{\"state\":\"none\",\"items\":0,\"restarts\":0}}");

    CU_ASSERT_EQUAL(job(rt, p, A_BLOCK), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, A_BLOCK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 2);
    int ok = 2, busy = 0;
    for (int i = 2; i < 40; i++) {
        int rc = job(rt, p, A_OK);
        ok += rc == SHOAL_OK;
        busy += rc == SHOAL_EBUSY;
    }
    CU_ASSERT_EQUAL(ok, 12);
    CU_ASSERT_EQUAL(busy, 28);
    CU_ASSERT_EQUAL(inspect(rt, p, json, sizeof json), SHOAL_OK);
    valid(json);
    has(json, "\"pull\":{\"prefetch\":1,\"buffer\":10,\"buffer_depth\":10,\"held\":2,\"demand\":0,"
              "\"received\":12,\"delivered\":2,\"completed\":0,\"failed\":0,\"refused\":28,"
              "\"redelivered\":0,\"dead_lettered\":0,\"dropped\":0,"
              "\"source\":{\"state\":\"none\",\"items\":0,\"restarts\":0}}");
    /* The ledger keeps its names and agrees. */
    has(json, "\"messages_forwarded\":12,\"messages_unhandled\":28,\"messages_handled\":0,");
    has(json, "\"messages_in_flight\":12,\"queue_depth\":12,");

    atomic_store(&gate, 1);
    WAIT_UNTIL(handled(rt, p) == 12);
    CU_ASSERT_EQUAL(atomic_load(&done), 12);
    CU_ASSERT_EQUAL(job(rt, p, A_PANIC), SHOAL_OK);
    WAIT_UNTIL(handled(rt, p) == 13);
    CU_ASSERT_EQUAL(handled(rt, p), 13);
    WAIT_UNTIL(replaced(rt, p));
    CU_ASSERT(replaced(rt, p));
    CU_ASSERT_EQUAL(inspect(rt, p, json, sizeof json), SHOAL_OK);
    valid(json);
    has(json, "\"pull\":{\"prefetch\":1,\"buffer\":10,\"buffer_depth\":0,\"held\":0,\"demand\":2,"
              "\"received\":13,\"delivered\":13,\"completed\":12,\"failed\":1,\"refused\":28,"
              "\"redelivered\":0,\"dead_lettered\":0,\"dropped\":0,"
              "\"source\":{\"state\":\"none\",\"items\":0,\"restarts\":0}}");
    has(json, "\"worker_restarts\":1,");
    has(json, "\"messages_in_flight\":0,\"queue_depth\":0,");
    shoal_runtime_destroy(rt);
}

/* A forward pool says so, and has no "pull" object. */
static void a_forward_pool_says_its_kind(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "api";
    s.worker = &wk;
    s.size = 2;
    s.max_size = 4;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    char json[4096];
    CU_ASSERT_EQUAL(inspect(rt, p, json, sizeof json), SHOAL_OK);
    valid(json);
    has(json, "\"max_size\":4,\"worker_behaviour\":\"wk\",\"kind\":\"forward\",\"strategy\":"
              "\"fifo\",\"worker_is_pool\":false,\"worker_mailbox_size\":64,");
    CU_ASSERT_PTR_NULL(strstr(json, "\"pull\""));
    CU_ASSERT_PTR_NULL(strstr(json, "buffer"));
    shoal_runtime_destroy(rt);
}

/* Its workers now, with pond's names: 3 workers, 2 blocked on a gate --
 * running 2, idle 1, in stats and inspect alike; the gate opens: running
 * 0, idle 3. Resizes count only those that changed the target: 3 -> 5,
 * 5 again (none), 5 -> 2: 2. For each kind. */
static void running_idle_case(uint32_t kind)
{
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "now";
    s.worker = &wk;
    s.kind = kind;
    s.size = 3;
    s.max_size = 6;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).idle == 3);
    CU_ASSERT_EQUAL(job(rt, p, A_BLOCK), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, p, A_BLOCK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 2);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).idle == 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.running, 2);
    CU_ASSERT_EQUAL(st.idle, 1);
    char json[4096];
    CU_ASSERT_EQUAL(inspect(rt, p, json, sizeof json), SHOAL_OK);
    valid(json);
    has(json, "\"running\":2,\"idle\":1,\"submitted\":2,\"completed\":0,\"failed\":0,"
              "\"dropped\":0,\"resizes\":0");
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 2 && shoal_test_pool_stats(rt, p).idle == 3);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.running, 0);
    CU_ASSERT_EQUAL(st.idle, 3);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, TMO), 2);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).resizes, 2);
    shoal_runtime_destroy(rt);
}

static void forward_running_and_idle(void) { running_idle_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_running_and_idle(void) { running_idle_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"the checker refuses bad JSON", the_checker_refuses_bad_json},
        {"a pull pool's inspection", a_pull_pools_inspection},
        {"a forward pool says its kind", a_forward_pool_says_its_kind},
        {"forward: running and idle, resizes", forward_running_and_idle},
        {"pull: running and idle, resizes", pull_running_and_idle},
        {NULL, NULL}};
    return shoal_test_run("stats", cases);
}
