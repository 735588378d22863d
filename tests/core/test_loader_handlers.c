/* test_loader_handlers.c - handlers of a loaded plugin (host/loader.c) that
 * fail or panic: the actor ends with the handler's code or SHOAL_EPANIC, a
 * caller gets SHOAL_EPANIC as the status, the parent hears each end, the
 * log says why, and the module is closed once its last actor has ended. */
#include "loader_kit.h"

/* ---- crashing handlers ---------------------------------------------------- */

static void test_handler_error(void)
{
    const char *path = lk_fixture("handler_error.so");
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    ino_t ino = lk_copy_ino(m);
    shoal_runtime_t *rt = lk_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t parent = shoal_test_recorder_spawn(rt), pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(
        shoal__module_spawn(rt, m, parent, shoal__module_behaviour(m, "fail"), NULL, 0, &pid),
        SHOAL_OK);
    /* Calls are fine... */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pid, 5, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    CU_ASSERT_EQUAL(ans.size, 0);
    shoal_answer_release(&ans);
    shoal__module_release(m); /* only the actor holds it now */
    /* ...a message makes handle_message return 77: the actor ends with it. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 5, NULL, 0), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(1, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(0), pid);
    CU_ASSERT_EQUAL(shoal_test_exit_status(0), 77);
    CU_ASSERT(lk_wait_unmapped(ino, 10.0));
    CU_ASSERT(shoal_test_log_has("fail: ended: unknown error (77)"));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 5, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_test_exits(), 1);
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

static void test_handler_panic(void)
{
    const char *path = lk_fixture("handler_panic.so");
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    ino_t ino = lk_copy_ino(m);
    const shoal_behaviour_t *beh = shoal__module_behaviour(m, "panic");
    CU_ASSERT_PTR_NOT_NULL_FATAL(beh);
    shoal_runtime_t *rt = lk_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t parent = shoal_test_recorder_spawn(rt), a = SHOAL_PID_NONE, b = SHOAL_PID_NONE;

    /* A message: handle_message panics, the actor ends with SHOAL_EPANIC. */
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, parent, beh, NULL, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 9, NULL, 0), SHOAL_OK);
    CU_ASSERT_FATAL(shoal_test_wait_exits(1, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(0), a);
    CU_ASSERT_EQUAL(shoal_test_exit_status(0), SHOAL_EPANIC);
    CU_ASSERT(shoal_test_log_has("panic: panic: fixture panic on message type 9"));

    /* A call: handle_call panics; the caller gets SHOAL_EPANIC as status. */
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, parent, beh, NULL, 0, &b), SHOAL_OK);
    shoal__module_release(m);
    CU_ASSERT(lk_copy_mapped(ino));
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, b, 3, NULL, 0, 10000, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_EPANIC);
    shoal_answer_release(&ans);
    CU_ASSERT_FATAL(shoal_test_wait_exits(2, 10.0));
    CU_ASSERT_EQUAL(shoal_test_exit_from(1), b);
    CU_ASSERT_EQUAL(shoal_test_exit_status(1), SHOAL_EPANIC);
    CU_ASSERT(shoal_test_log_has("panic: panic: fixture panic on call type 3"));
    CU_ASSERT(lk_wait_unmapped(ino, 10.0));
    CU_ASSERT_EQUAL(shoal__loader_count(L), 0);
    shoal_runtime_destroy(rt);
    shoal__loader_destroy(L);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"handler returns an error", test_handler_error},
        {"handler panics", test_handler_panic},
        {NULL, NULL},
    };
    return lk_run("loader_handlers", cases);
}
