/* fakepool.h - a pull pool played by hand, to test the bundled sources
 * (shoal/pull.h) through their real .so, loaded by the host's loader.
 *
 * The pool is an actor of the test's (one at a time). On the test thread's
 * command it spawns a source as its child with shoal_spawn, sends it
 * SHOAL_PULL_REQUEST, SHOAL_PULL_RESUME or anything else with
 * shoal_send_priority, and records what comes back - items, answers (SENT,
 * DONE), the child's exit - into arrays the test thread reads through the
 * functions below. Its handlers never call CUnit; every wait ends.
 *
 * A source's items are ordinary messages and its answer a priority one:
 * the answer can be handled before the items it follows, so a test waits
 * for the items it expects (fp_wait_items) after the answer.
 */
#ifndef SHOAL_TEST_FAKEPOOL_H
#define SHOAL_TEST_FAKEPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/loader.h"
#include "host/node.h"
#include "shoal/pull.h"
#include "support.h"

/* Loads nothing yet: sets up the loader. Once per process, before the
 * suite; fp_teardown after it. */
int fp_setup(void);
void fp_teardown(void);

/* A runtime (2 threads, info logs kept for shoal_test_log_has) with the
 * pool in it; its mailbox holds `limit` messages (0: no limit). NULL, with
 * a failed assertion, on failure. */
shoal_runtime_t *fp_start(uint32_t limit);
/* The same on `threads` dispatcher threads. */
shoal_runtime_t *fp_start_on(uint32_t limit, unsigned threads);
/* Destroys the runtime and the args trees of the test. */
void fp_stop(void);

/* Spawns <plugin>.<plugin> (build/plugins/<plugin>/<plugin>.so) as the
 * pool's child with args (YAML text, NULL for none) and makes it the
 * source the pool talks to. Returns its PID once spawned; its init may
 * still fail: fp_exit says. */
shoal_pid_t fp_spawn(const char *plugin, const char *yaml);

/* <plugin>.<plugin>, the host's copy (loaded on first use; NULL, with a
 * failed assertion, when the .so is missing or refused). */
const shoal_behaviour_t *fp_behaviour(const char *plugin);

/* An args tree parsed from YAML text ("pool.yaml"), freed by fp_stop. */
const shoal_node_t *fp_yaml(const char *text);

/* The source's exit reason, waiting up to `seconds`; SHOAL_TEST_NO_EXIT
 * while it lives. */
int fp_exit(double seconds);

/* What the source sent back: an item, or an answer. */
typedef struct fp_msg_s {
    uint32_t type, flags;
    shoal_pid_t from;
    size_t size;                               /* the payload's whole size */
    unsigned char data[SHOAL_PULL_CURSOR_MAX]; /* its first bytes */
} fp_msg_t;

/* Sends the source `type` with data, with priority, from the pool. */
void fp_tell(uint32_t type, const void *data, size_t size);

/* SHOAL_PULL_REQUEST(n), then waits for the answer (SENT or DONE); NULL
 * when none came in 10 s, or the source ended first. */
const fp_msg_t *fp_ask(uint32_t n);

/* Answers heard so far, and answer i. */
unsigned fp_answers(void);
const fp_msg_t *fp_answer(unsigned i);

/* Items heard so far (every one is counted; the first FP_MAX_ITEMS kept),
 * item i, and a wait until n were heard (whether they were). */
#define FP_MAX_ITEMS 4096u
unsigned fp_items(void);
const fp_msg_t *fp_item(unsigned i);
bool fp_wait_items(unsigned n);

/* Messages the pool heard that were neither the source's items, nor its
 * answers (priority, SENT or DONE), nor its exit: 0 unless a source errs. */
unsigned fp_strays(void);

/* SHOAL_PULL_REQUEST(n), then the pool's handler waits (up to 10 s) for
 * fp_release() before it returns: the source's items meet a mailbox that
 * nobody empties. Returns once the request went out. */
void fp_ask_held(uint32_t n);
void fp_release(void);

/* SHOAL_PULL_REQUEST(n), and the pool ends in the same turn (its child,
 * the source, is stopped after it). On one dispatcher thread the pool has
 * ended before the source reads the request: every item meets a closed
 * mailbox. Returns once the command went out. */
void fp_ask_and_end(uint32_t n);

/* Streams the whole epic (once per pool): REQUEST(batch) whenever the last
 * answer came and every item asked for so far arrived (a buffer of `batch`
 * that workers empty at once). Each item goes to check(i, data, size) on
 * the pool's thread instead of the record; a false is counted as bad.
 * Waits until DONE and `expect` items came (or `seconds` passed, or the
 * source ended); returns whether DONE came, with the items and bad ones. */
bool fp_stream(uint32_t batch, bool (*check)(uint64_t i, const void *data, size_t size),
               uint64_t expect, double seconds, uint64_t *items, uint64_t *bad);

/* A stats call to the source (every call is one, for seq and lines): the
 * reply's payload into st, whose size it must be. */
void fp_stats(void *st, size_t size);

/* The "info" object of the source's inspect answer, into out. */
void fp_info(char *out, size_t size);

#endif
