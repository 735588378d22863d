/* actor_kit.h - what the actor suites share (test_actor_init,
 * test_actor_links, test_actor_crashes, test_actor_spawn): the message
 * types the handlers obey, a parent that records its children's exits, a
 * child that ends on command (recording terminate), and a wait for an
 * actor to be gone.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (ak_parent_reset() and
 * ak_kid_reset() clear them before a case).
 */
#ifndef SHOAL_TEST_ACTOR_KIT_H
#define SHOAL_TEST_ACTOR_KIT_H

#include <stdbool.h>

#include "support.h"

#define AK_WAIT_S 20.0
#define AK_MAX_KIDS 8
#define AK_MAX_EXITS 32
#define AK_KID_SLOTS 8

/* Polls until pid is gone (its mailboxes closed). A stop request to an actor
 * that is already ending is harmless. */
bool ak_gone(shoal_runtime_t *rt, shoal_pid_t pid);

enum {
    T_PING = 1,
    T_EXIT0 = 2,
    T_RET = 3,
    T_PANIC = 4,
    T_BLOCK = 5,
    T_STOPCHILD = 6,
    T_SPAWN = 7,
    T_DIE = 8
};

/* ---- a parent that records its children's exits ----------------------------------
 *
 * The parent's init spawns one child per entry of its args (an ak_kids_t: a
 * behaviour and args each), publishing their PIDs in ak_kid_pid. EXIT
 * notices are recorded in order (ak_exits is published last); T_STOPCHILD
 * (an int index) stops that child, T_DIE ends the parent. */

typedef struct {
    const shoal_behaviour_t *beh[AK_MAX_KIDS];
    const void *args[AK_MAX_KIDS];
    int n;
} ak_kids_t;

extern _Atomic shoal_pid_t ak_kid_pid[AK_MAX_KIDS];
extern atomic_int ak_kids_spawned;
extern _Atomic shoal_pid_t ak_exit_from[AK_MAX_EXITS];
extern atomic_int ak_exit_status[AK_MAX_EXITS], ak_exit_kind_bad;
extern atomic_int ak_exits;
extern atomic_int ak_parent_terms, ak_parent_term_reason, ak_parent_stop_rc;
extern const shoal_behaviour_t ak_parent_beh;

void ak_parent_reset(void);

/* ---- a child that ends on command, recording terminate ------------------------- *
 *
 * Its args is its slot (an int). T_EXIT0 exits with 0, T_RET returns 42,
 * T_PANIC panics, T_BLOCK raises ak_kid_entered and waits for
 * ak_kid_release, then returns -77. */

extern atomic_int ak_kid_terms[AK_KID_SLOTS], ak_kid_term_reason[AK_KID_SLOTS],
    ak_kid_handled[AK_KID_SLOTS];
extern atomic_int ak_kid_entered, ak_kid_release;
extern const shoal_behaviour_t ak_kid_beh;

void ak_kid_reset(void);
/* Spawns a parent with n kids (slots 0..n-1) and waits for their PIDs. */
shoal_pid_t ak_spawn_family(shoal_runtime_t *rt, ak_kids_t *k, int n);
/* A runtime of 2 threads (asserted, fatally), the family's records
 * cleared. */
shoal_runtime_t *ak_runtime(void);

#endif
