/* actor_kit.c - the actor suites' family of a recording parent and
 * children that end on command (actor_kit.h). */
#include "actor_kit.h"

#include <string.h>

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, AK_WAIT_S)

/* Polls until pid is gone (its mailboxes closed). A stop request to an actor
 * that is already ending is harmless. */
bool ak_gone(shoal_runtime_t *rt, shoal_pid_t pid)
{
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, pid) == SHOAL_ENOPROC);
    return shoal_runtime_stop_actor(rt, pid) == SHOAL_ENOPROC;
}

_Atomic shoal_pid_t ak_kid_pid[AK_MAX_KIDS];
atomic_int ak_kids_spawned;
static atomic_int ak_kid_spawn_rc;
_Atomic shoal_pid_t ak_exit_from[AK_MAX_EXITS];
atomic_int ak_exit_status[AK_MAX_EXITS], ak_exit_kind_bad;
atomic_int ak_exits; /* published last */
atomic_int ak_parent_terms, ak_parent_term_reason, ak_parent_stop_rc;

void ak_parent_reset(void)
{
    for (int i = 0; i < AK_MAX_KIDS; i++)
        atomic_store(&ak_kid_pid[i], SHOAL_PID_NONE);
    for (int i = 0; i < AK_MAX_EXITS; i++) {
        atomic_store(&ak_exit_from[i], SHOAL_PID_NONE);
        atomic_store(&ak_exit_status[i], 12345);
    }
    atomic_store(&ak_kids_spawned, 0);
    atomic_store(&ak_kid_spawn_rc, 0);
    atomic_store(&ak_exit_kind_bad, 0);
    atomic_store(&ak_exits, 0);
    atomic_store(&ak_parent_terms, 0);
    atomic_store(&ak_parent_term_reason, 12345);
    atomic_store(&ak_parent_stop_rc, 12345);
}

static int parent_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    const ak_kids_t *k = args;
    for (int i = 0; i < k->n; i++) {
        shoal_pid_t c;
        int rc = shoal_spawn(ctx, k->beh[i], k->args[i], NULL, &c);
        if (rc != SHOAL_OK) {
            atomic_store(&ak_kid_spawn_rc, rc);
            return rc;
        }
        atomic_store(&ak_kid_pid[i], c);
    }
    atomic_store(&ak_kids_spawned, k->n);
    return 0;
}

static int parent_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        int i = atomic_load(&ak_exits);
        if (i < AK_MAX_EXITS) {
            atomic_store(&ak_exit_from[i], msg->from);
            atomic_store(&ak_exit_status[i], msg->status);
        }
        if (msg->type != 0 || msg->size != 0)
            atomic_fetch_add(&ak_exit_kind_bad, 1);
        atomic_store(&ak_exits, i + 1);
        return 0;
    }
    if (msg->type == T_STOPCHILD) {
        int idx;
        memcpy(&idx, msg->data, sizeof idx);
        atomic_store(&ak_parent_stop_rc, shoal_stop(ctx, atomic_load(&ak_kid_pid[idx])));
    } else if (msg->type == T_DIE) {
        shoal_exit(ctx, 0);
    }
    return 0;
}

static void parent_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    atomic_store(&ak_parent_term_reason, reason);
    atomic_fetch_add(&ak_parent_terms, 1);
}

const shoal_behaviour_t ak_parent_beh = {.name = "parent",
                                         .init = parent_init,
                                         .handle_message = parent_handle,
                                         .terminate = parent_term};

/* ---- a child that ends on command, recording terminate ------------------------- */

typedef struct {
    int slot;
} kid_state_t;

atomic_int ak_kid_terms[AK_KID_SLOTS], ak_kid_term_reason[AK_KID_SLOTS],
    ak_kid_handled[AK_KID_SLOTS];
atomic_int ak_kid_entered, ak_kid_release;

void ak_kid_reset(void)
{
    for (int i = 0; i < AK_KID_SLOTS; i++) {
        atomic_store(&ak_kid_terms[i], 0);
        atomic_store(&ak_kid_term_reason[i], 12345);
        atomic_store(&ak_kid_handled[i], 0);
    }
    atomic_store(&ak_kid_entered, 0);
    atomic_store(&ak_kid_release, 0);
}

static int kid_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((kid_state_t *)state)->slot = *(const int *)args;
    return 0;
}

static int kid_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    kid_state_t *s = state;
    atomic_fetch_add(&ak_kid_handled[s->slot], 1);
    switch (msg->type) {
    case T_EXIT0:
        shoal_exit(ctx, 0);
        return 0;
    case T_RET:
        return 42;
    case T_PANIC:
        shoal_panic(ctx, "kid %d panics", s->slot);
    case T_BLOCK:
        atomic_store(&ak_kid_entered, 1);
        shoal_test_wait_flag(&ak_kid_release, AK_WAIT_S);
        return -77; /* crash after the release */
    default:
        return 0;
    }
}

static void kid_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    kid_state_t *s = state;
    atomic_store(&ak_kid_term_reason[s->slot], reason);
    atomic_fetch_add(&ak_kid_terms[s->slot], 1);
}

const shoal_behaviour_t ak_kid_beh = {.name = "kid",
                                      .state_size = sizeof(kid_state_t),
                                      .init = kid_init,
                                      .handle_message = kid_handle,
                                      .terminate = kid_term};

static const int slot_ids[AK_KID_SLOTS] = {0, 1, 2, 3, 4, 5, 6, 7};

/* Spawns a parent with n kids (slots 0..n-1) and waits for their PIDs. */
shoal_pid_t ak_spawn_family(shoal_runtime_t *rt, ak_kids_t *k, int n)
{
    k->n = n;
    for (int i = 0; i < n; i++) {
        k->beh[i] = &ak_kid_beh;
        k->args[i] = &slot_ids[i];
    }
    shoal_pid_t parent = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &ak_parent_beh, k, NULL, &parent), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ak_kids_spawned) == n);
    CU_ASSERT_EQUAL(atomic_load(&ak_kids_spawned), n);
    return parent;
}

shoal_runtime_t *ak_runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    ak_parent_reset();
    ak_kid_reset();
    return rt;
}
