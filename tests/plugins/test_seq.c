/* test_seq.c - plugins/seq, the integers as a pull pool's source, loaded
 * from build/plugins/seq/seq.so by the host's loader and driven by a pool
 * played by hand (fakepool.h): exact items and answers for every batch
 * size, counting down, empty ranges, the ends of int64_t, RESUME from a
 * cursor (and a bad one failing it), refused items, bad args with their
 * messages, and its args schema agreeing with its init. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../plugins/seq/seq.h"
#include "actor/actor.h"
#include "fakepool.h"
#include "host/argcheck.h"

static shoal_runtime_t *rt;
static shoal_pid_t src;
static uint32_t item_type;
static uint64_t items_sent; /* what the source's stats must say */

static void start(const char *args)
{
    rt = fp_start(0);
    src = fp_spawn("seq", args);
    item_type = SEQ_MSG_ITEM;
    items_sent = 0;
}

/* A new source with args in the same pool (after the last one ended). */
static void respawn(const char *args)
{
    src = fp_spawn("seq", args);
    items_sent = 0;
}

/* Asks for n: the answer must be `answer` (SENT carrying `cursor`, or DONE
 * carrying nothing), sent with priority by the source, and the items that
 * came with it exactly want[0 .. k), in order, each an int64_t of
 * item_type. The source's stats must count exactly the items heard. */
static void ask(uint32_t n, uint32_t answer, int64_t cursor, const int64_t *want, unsigned k)
{
    unsigned before = fp_items();
    const fp_msg_t *a = fp_ask(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->type, answer);
    CU_ASSERT_EQUAL(a->from, src);
    CU_ASSERT(a->flags & SHOAL_MSG_PRIORITY);
    if (answer == SHOAL_PULL_SENT) {
        int64_t got = 0;
        CU_ASSERT_EQUAL_FATAL(a->size, sizeof got);
        memcpy(&got, a->data, sizeof got);
        CU_ASSERT_EQUAL(got, cursor);
        if (got != cursor)
            fprintf(stderr, "\n    cursor %" PRId64 ", want %" PRId64 "\n", got, cursor);
    } else {
        CU_ASSERT_EQUAL(a->size, 0);
    }
    CU_ASSERT_FATAL(fp_wait_items(before + k));
    for (unsigned i = 0; i < k; i++) {
        const fp_msg_t *m = fp_item(before + i);
        int64_t v = 0;
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(m->type, item_type);
        CU_ASSERT_EQUAL(m->from, src);
        CU_ASSERT_EQUAL(m->flags & SHOAL_MSG_PRIORITY, 0);
        CU_ASSERT_EQUAL_FATAL(m->size, sizeof v);
        memcpy(&v, m->data, sizeof v);
        CU_ASSERT_EQUAL(v, want[i]);
        if (v != want[i])
            fprintf(stderr, "\n    item %u: %" PRId64 ", want %" PRId64 "\n", i, v, want[i]);
    }
    items_sent += k;
    seq_stats_t st;
    fp_stats(&st, sizeof st); /* handled after the request: its items are all sent */
    CU_ASSERT_EQUAL(st.items, items_sent);
    CU_ASSERT_EQUAL(st.done, answer == SHOAL_PULL_DONE);
    CU_ASSERT_EQUAL(fp_items(), before + k);
    CU_ASSERT_EQUAL(fp_strays(), 0);
}

#define INTS(...) (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / 8
#define NONE NULL, 0

static void tell_cursor(int64_t v) { fp_tell(SHOAL_PULL_RESUME, &v, sizeof v); }

/* Init must fail with `reason`, logging "seq: <message>" (the whole line). */
static void bad_args(const char *args, int reason, const char *message)
{
    char line[700];
    fp_spawn("seq", args);
    CU_ASSERT_EQUAL(fp_exit(10), reason);
    snprintf(line, sizeof line, "> seq: %s\n", message);
    shoal_test_assert_logged(line);
}

/* The source must fail with SHOAL_EINVAL and the error line "seq: <message>". */
static void fails(const char *message)
{
    char line[700];
    CU_ASSERT_EQUAL(fp_exit(10), SHOAL_EINVAL);
    snprintf(line, sizeof line, "error <%u.%u> seq: %s\n", (unsigned)shoal__pid_slot(src),
             (unsigned)shoal__pid_gen(src), message);
    shoal_test_assert_logged(line);
}

/* ---- cases --------------------------------------------------------------------------- */

static void one_to_ten_by_three(void)
{
    start("from: 1\nto: 10\nstep: 3\n");
    char info[256];
    fp_info(info, sizeof info);
    CU_ASSERT_STRING_EQUAL(info, "{\"requests\":0,\"items\":0,\"refused\":0,\"resumes\":0,"
                                 "\"next\":1,\"done\":0}");
    ask(100, SHOAL_PULL_DONE, 0, INTS(1, 4, 7, 10));
    /* Asked again after DONE: DONE again, and nothing else. */
    ask(5, SHOAL_PULL_DONE, 0, NONE);
    fp_info(info, sizeof info);
    CU_ASSERT_STRING_EQUAL(info, "{\"requests\":2,\"items\":4,\"refused\":0,\"resumes\":0,"
                                 "\"next\":10,\"done\":1}");
    fp_stop();
}

static void batches_of_three(void)
{
    start("from: 1\nto: 10\n");
    ask(3, SHOAL_PULL_SENT, 4, INTS(1, 2, 3));
    ask(3, SHOAL_PULL_SENT, 7, INTS(4, 5, 6));
    ask(3, SHOAL_PULL_SENT, 10, INTS(7, 8, 9));
    ask(3, SHOAL_PULL_DONE, 0, INTS(10));
    /* A batch that takes the last integer exactly says DONE with it. */
    respawn("from: 1\nto: 6\n");
    ask(3, SHOAL_PULL_SENT, 4, INTS(1, 2, 3));
    ask(3, SHOAL_PULL_DONE, 0, INTS(4, 5, 6));
    /* One at a time; the default from is 0. */
    respawn("to: 2\n");
    ask(1, SHOAL_PULL_SENT, 1, INTS(0));
    ask(1, SHOAL_PULL_SENT, 2, INTS(1));
    ask(1, SHOAL_PULL_DONE, 0, INTS(2));
    fp_stop();
}

static void resumes_from_the_cursor(void)
{
    start("to: 99\n");
    ask(5, SHOAL_PULL_SENT, 5, INTS(0, 1, 2, 3, 4));
    /* The source ends; the pool starts another with the same args and
     * hands it the last cursor before the next request. */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, src), SHOAL_OK);
    CU_ASSERT_EQUAL(fp_exit(10), SHOAL_ESHUTDOWN);
    respawn("to: 99\n");
    tell_cursor(5);
    ask(3, SHOAL_PULL_SENT, 8, INTS(5, 6, 7));
    shoal_test_assert_logged("seq: resuming at 5\n");
    seq_stats_t st;
    fp_stats(&st, sizeof st);
    CU_ASSERT_EQUAL(st.resumes, 1);
    CU_ASSERT_EQUAL(st.next, 8);
    /* Counting down, resumed at the last one: it alone, then DONE. */
    respawn("from: 10\nto: 1\nstep: -3\n");
    tell_cursor(1);
    ask(10, SHOAL_PULL_DONE, 0, INTS(1));
    /* A resume after DONE starts the range again from the cursor. */
    tell_cursor(7);
    ask(10, SHOAL_PULL_DONE, 0, INTS(7, 4, 1));
    fp_stop();
}

static void counts_down_and_empty(void)
{
    start("from: 10\nto: 1\nstep: -3\n");
    ask(10, SHOAL_PULL_DONE, 0, INTS(10, 7, 4, 1));
    respawn("from: 5\nto: -5\nstep: -4\n");
    ask(2, SHOAL_PULL_SENT, -3, INTS(5, 1));
    ask(2, SHOAL_PULL_DONE, 0, INTS(-3));
    respawn("from: 3\nto: 3\n"); /* one integer */
    ask(1, SHOAL_PULL_DONE, 0, INTS(3));
    respawn("from: 5\nto: 1\n"); /* empty: up from above */
    ask(4, SHOAL_PULL_DONE, 0, NONE);
    respawn("from: 1\nto: 5\nstep: -1\n"); /* empty: down from below */
    ask(4, SHOAL_PULL_DONE, 0, NONE);
    fp_stop();
}

static void stops_at_the_ends_of_int64(void)
{
    start("from: 9223372036854775805\nto: 9223372036854775807\n");
    ask(10, SHOAL_PULL_DONE, 0, INTS(INT64_MAX - 2, INT64_MAX - 1, INT64_MAX));
    respawn("from: 9223372036854775802\nto: 9223372036854775807\nstep: 4\n");
    ask(10, SHOAL_PULL_DONE, 0, INTS(INT64_MAX - 5, INT64_MAX - 1)); /* + 4 would wrap */
    respawn("from: -9223372036854775807\nto: -9223372036854775808\nstep: -1\n");
    ask(1, SHOAL_PULL_SENT, INT64_MIN, INTS(INT64_MIN + 1));
    ask(1, SHOAL_PULL_DONE, 0, INTS(INT64_MIN));
    /* The widest steps there are: no gap overflows either. */
    respawn("from: -9223372036854775808\nto: 9223372036854775807\nstep: 9223372036854775807\n");
    ask(10, SHOAL_PULL_DONE, 0, INTS(INT64_MIN, -1, INT64_MAX - 1));
    respawn("from: 9223372036854775807\nto: -9223372036854775808\nstep: -9223372036854775808\n");
    ask(10, SHOAL_PULL_DONE, 0, INTS(INT64_MAX, -1));
    respawn("from: -9223372036854775808\nto: 9223372036854775807\nstep: -1\n"); /* empty */
    ask(10, SHOAL_PULL_DONE, 0, NONE);
    /* A cursor at the very end resumes there. */
    respawn("from: 9223372036854775805\nto: 9223372036854775807\n");
    tell_cursor(INT64_MAX);
    ask(10, SHOAL_PULL_DONE, 0, INTS(INT64_MAX));
    fp_stop();
}

/* The pool's mailbox holds 3 and the pool does not empty it while the
 * source answers: the 4th item is refused, SENT carries it, and the next
 * request sends it first. Logged once, counted each time. */
static void refused_items_come_next_time(void)
{
    rt = fp_start(3);
    src = fp_spawn("seq", "from: 1\nto: 100\ntype: 42\n");
    item_type = 42;
    items_sent = 0;
    for (int round = 0; round < 2; round++) {
        unsigned answers = fp_answers(), before = fp_items();
        fp_ask_held(10);
        seq_stats_t st;
        fp_stats(&st, sizeof st); /* after the request: it is handled */
        CU_ASSERT_EQUAL(st.items, 3u * (unsigned)(round + 1));
        CU_ASSERT_EQUAL(st.refused, (unsigned)(round + 1));
        fp_release();
        SHOAL_TEST_WAIT_UNTIL(fp_answers() > answers, 10.0);
        const fp_msg_t *a = fp_answer(answers);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->type, SHOAL_PULL_SENT);
        int64_t cursor = 0;
        memcpy(&cursor, a->data, sizeof cursor);
        CU_ASSERT_EQUAL(cursor, 4 + 3 * round);
        CU_ASSERT_FATAL(fp_wait_items(before + 3));
        for (unsigned i = 0; i < 3; i++) {
            int64_t v = 0;
            memcpy(&v, fp_item(before + i)->data, sizeof v);
            CU_ASSERT_EQUAL(v, 1 + 3 * round + (int64_t)i);
        }
        items_sent += 3;
    }
    CU_ASSERT_EQUAL(shoal_test_log_count("seq: the pool refused item"), 1);
    shoal_test_assert_logged("seq: the pool refused item 4 (mailbox full): 3 of 10 sent, the rest "
                             "comes at the next request (said once)\n");
    ask(2, SHOAL_PULL_SENT, 9, INTS(7, 8));
    fp_stop();
}

/* The pool ends in the turn it asks (its mailbox closed, as a draining
 * pool's): no item goes, and the source says so at info -- not that the
 * rest comes at the next request, which never comes -- counting the one
 * it tried. One dispatcher thread: the pool has ended before the source
 * reads the request. */
static void an_ended_pool_is_told_apart(void)
{
    rt = fp_start_on(0, 1);
    src = fp_spawn("seq", "from: 1\nto: 100\n");
    fp_ask_and_end(10);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_log_has("seq: the pool has closed"), 10.0);
    shoal_test_assert_logged(
        "seq: the pool has closed (draining or ended): 0 of 10 sent, none from item 1 on\n");
    CU_ASSERT_EQUAL(shoal_test_log_count("next request"), 0);
    CU_ASSERT_EQUAL(shoal_test_log_count("seq: the pool"), 1);
    CU_ASSERT_EQUAL(fp_items(), 0);
    fp_stop();
}

static void bad_cursors_and_requests_fail_it(void)
{
    start("from: 1\nto: 10\nstep: 3\n");
    /* Not the pool's: ignored. A request from outside any actor has no
     * pool to send to: logged, ignored. */
    fp_tell(0x1234u, "x", 1);
    uint32_t n = 5;
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, src, SHOAL_PULL_REQUEST, &n, sizeof n),
                    SHOAL_OK);
    ask(1, SHOAL_PULL_SENT, 4, INTS(1));
    shoal_test_assert_logged(
        "seq: a SHOAL_PULL_REQUEST from outside any actor: no pool to send to, ignored\n");

    int32_t small = 4;
    fp_tell(SHOAL_PULL_RESUME, &small, sizeof small);
    fails("cannot resume: a cursor of 4 bytes, expected 8 (an int64_t, seq.h)");
    respawn("from: 1\nto: 10\nstep: 3\n");
    tell_cursor(5);
    fails("cannot resume at 5: not one of 1 .. 10 step 3");
    respawn("from: 1\nto: 10\nstep: 3\n");
    tell_cursor(13);
    fails("cannot resume at 13: not one of 1 .. 10 step 3");
    respawn("from: 1\nto: 10\nstep: 3\n");
    tell_cursor(-2);
    fails("cannot resume at -2: not one of 1 .. 10 step 3");
    respawn("from: 1\nto: 10\nstep: 3\n");
    fp_tell(SHOAL_PULL_REQUEST, "ab", 2);
    fails("a SHOAL_PULL_REQUEST of 2 bytes: expected 4 (a uint32_t count)");
    fp_stop();
}

static void bad_args_fail_init(void)
{
    start("to: 1\n");
    bad_args("step: 0\nto: 5\n", SHOAL_EINVAL,
             "pool.yaml:1:7: args 'step': 0 is out of range: expected a non-zero integer");
    bad_args("from: 1\n", SHOAL_ENOKEY, "pool.yaml:1:1: args: missing required key 'to'");
    bad_args("to: 5\ntype: 0xFFFE0201\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'type': 0xFFFE0201 is the runtime's (0xFFFE0000 .. 0xFFFEFFFF "
             "are reserved): pick another type id");
    bad_args("to: ten\n", SHOAL_EINVAL, "pool.yaml:1:5: args 'to': expected an integer, got 'ten'");
    bad_args("to: 5\ntype: 4294967296\n", SHOAL_EINVAL,
             "pool.yaml:2:7: args 'type': 4294967296 is out of range: expected 0 to 4294967295");
    /* The edges of `type` that are allowed. */
    respawn("to: 0\ntype: 0xFFFDFFFF\n");
    item_type = 0xFFFDFFFFu;
    ask(1, SHOAL_PULL_DONE, 0, INTS(0));
    respawn("to: 0\ntype: 0xFFFF0000\n");
    item_type = 0xFFFF0000u;
    ask(1, SHOAL_PULL_DONE, 0, INTS(0));
    fp_stop();
}

/* Each key: the host's schema check and init accept the same values, and
 * refuse the others for the same reason at the same place. */
static void schema_agrees_with_init(void)
{
    static const struct {
        const char *args;
        const char *refused; /* the key refused, or NULL: accepted */
    } probes[] = {
        {"to: 5\n", NULL},
        {"from: -9223372036854775808\nto: 9223372036854775807\n", NULL},
        {"to: 5\nfrom: 1.5\n", "from"},
        {"to: 5\nstep: -1\n", NULL},
        {"to: 5\nstep: x\n", "step"},
        {"to: 5\ntype: 0\n", NULL},
        {"to: 5\ntype: 4294967295\n", NULL},
        {"to: 5\ntype: -1\n", "type"},
        {"to: 5\ntype: 0xFFFF0010\n", NULL}, /* the default as declared */
        {"to: 5\nstep: 1\nfrom: 0\n", NULL}, /* the defaults as declared */
        {"to: [5]\n", "to"},
    };
    const shoal_behaviour_t *b = fp_behaviour("seq");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    start("to: 1\n");
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        const shoal_node_t *args = fp_yaml(probes[i].args);
        shoal_diag_t err;
        memset(&err, 0, sizeof err);
        int schema = shoal__argcheck_args(b->args, args, args, "p", "seq.seq", &err);
        const char *key = probes[i].refused;
        CU_ASSERT_EQUAL(schema == SHOAL_OK, key == NULL);
        if ((schema == SHOAL_OK) != (key == NULL))
            fprintf(stderr, "\n    schema on %s: %s\n", probes[i].args, err.msg);
        respawn(probes[i].args);
        char info[256];
        fp_info(info, sizeof info);
        bool alive = info[0] == '{';
        CU_ASSERT_EQUAL(alive, key == NULL);
        if (alive || key == NULL || schema == SHOAL_OK)
            continue;
        /* The same reason at the same place: "p.args.<key>: <reason>". */
        char head[64], line[700];
        CU_ASSERT_NOT_EQUAL(fp_exit(10), SHOAL_OK);
        snprintf(head, sizeof head, "p.args.%s: ", key);
        CU_ASSERT_NSTRING_EQUAL(err.msg, head, strlen(head));
        snprintf(line, sizeof line, "> seq: pool.yaml:%u:%u: args '%s': %s\n", err.line, err.col,
                 key, err.msg + strlen(head));
        shoal_test_assert_logged(line);
    }
    fp_stop();
}

int main(void)
{
    if (fp_setup() != SHOAL_OK)
        return 1;
    static const shoal_test_case_t cases[] = {
        {"1 to 10 by 3, then DONE", one_to_ten_by_three},
        {"batches of 3, DONE with the last", batches_of_three},
        {"RESUME from the cursor", resumes_from_the_cursor},
        {"counting down, and empty ranges", counts_down_and_empty},
        {"stops at the ends of int64_t", stops_at_the_ends_of_int64},
        {"a refused item comes next time", refused_items_come_next_time},
        {"an ended pool is told apart", an_ended_pool_is_told_apart},
        {"bad cursors and requests fail it", bad_cursors_and_requests_fail_it},
        {"bad args fail init", bad_args_fail_init},
        {"the schema agrees with init", schema_agrees_with_init},
        {NULL, NULL},
    };
    int rc = shoal_test_run("seq", cases);
    fp_teardown();
    return rc;
}
