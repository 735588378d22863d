/* test_loader_abi.c - the plugin ABI as the loader (host/loader.c) checks
 * and reads it: a major version from the ELF note or from the descriptor,
 * a newer minor, a descriptor too small, a note and a descriptor that
 * disagree -- each refused before dlopen, so a refused plugin's constructor
 * never runs; plugins built by older SDKs read without what they lack (ABI
 * 1.0: no inspect, ABI 1.2: no args schema); and the SDK symbols plugins
 * bind to resolved in this executable. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/args.h"
#include "loader_kit.h"

#ifndef SHOAL_FIXTURE_DIR
#error "SHOAL_FIXTURE_DIR must name the directory of the built fixtures"
#endif

/* ---- the ABI fields ------------------------------------------------------- */

static void test_abi_major_from_note(void)
{
    shoal_plugin_note_t note;
    CU_ASSERT_FATAL(lk_elf_note(lk_fixture("abi_major.so"), &note));
    CU_ASSERT_EQUAL(note.abi_major, 99);
    char why[300];
    snprintf(why, sizeof why, "built for shoal ABI 99.0; this host speaks ABI %d.%d",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    lk_assert_refused(lk_fixture("abi_major.so"), why);
}

static void test_abi_major_from_descriptor(void)
{
    shoal_plugin_note_t note;
    CU_ASSERT(!lk_elf_note(lk_fixture("desc_major.so"), &note));
    char why[300];
    snprintf(why, sizeof why, "built for shoal ABI 99.0; this host speaks ABI %d.%d",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    lk_assert_refused(lk_fixture("desc_major.so"), why);
}

static void test_abi_minor_newer(void)
{
    char why[300];
    snprintf(why, sizeof why,
             "built for shoal ABI %d.%d, newer than this host's %d.%d: rebuild it against this "
             "host's SDK, or upgrade the host",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR + 1, SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    lk_assert_refused(lk_fixture("abi_minor.so"), why);
}

static void test_descriptor_too_small(void)
{
    char why[300];
    snprintf(why, sizeof why, "descriptor is 24 bytes, smaller than the %zu bytes of ABI %d.0",
             offsetof(shoal_plugin_t, init), SHOAL_ABI_MAJOR);
    lk_assert_refused(lk_fixture("short_desc.so"), why);
}

static void test_note_and_descriptor_disagree(void)
{
    lk_assert_refused(lk_fixture("note_mismatch.so"), "the ABI note and the descriptor disagree");
}

/* ctor_marker.so has a constructor that sets SHOAL_FIXTURE_CTOR_MARKER and
 * an ABI 99 note: refused before dlopen, so the constructor never ran.
 * ctor_ok.so, the same code with this ABI, shows the mark works. */
static void test_constructor_not_run_before_abi_check(void)
{
    unsetenv("SHOAL_FIXTURE_CTOR_MARKER");
    unsetenv("SHOAL_FIXTURE_CTOR_OK");
    char why[300];
    snprintf(why, sizeof why, "built for shoal ABI 99.0; this host speaks ABI %d.%d",
             SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR);
    lk_assert_refused(lk_fixture("ctor_marker.so"), why);
    CU_ASSERT_PTR_NULL(getenv("SHOAL_FIXTURE_CTOR_MARKER"));

    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, lk_fixture("ctor_ok.so"));
    CU_ASSERT_PTR_NOT_NULL(getenv("SHOAL_FIXTURE_CTOR_OK"));
    CU_ASSERT_PTR_NULL(getenv("SHOAL_FIXTURE_CTOR_MARKER"));
    shoal__module_release(m);
    CU_ASSERT(!lk_mapped(lk_fixture("ctor_ok.so")));
    shoal__loader_destroy(L);
    unsetenv("SHOAL_FIXTURE_CTOR_OK");
}

/* ---- plugins built by older SDKs ------------------------------------------ */

/* A plugin built by an ABI 1.2 SDK has no args schema: the host's copy of
 * its behaviour has args NULL, whatever follows the plugin's struct. A 1.3
 * plugin's schema is the plugin's own array. */
static void abi_1_2_plugin_has_no_schema(void)
{
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, lk_fixture("abi_1_2.so"));
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__module_plugin(m)->abi_minor, 2);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, "old");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NULL(b->args);
    /* What a host reading past the 1.2 size would have taken for a schema. */
    CU_ASSERT_PTR_EQUAL(shoal__module_plugin(m)->behaviours[0]->args, (void *)0x10);
    shoal__module_release(m);

    CU_ASSERT_EQUAL_FATAL(shoal__module_load(L, lk_fixture("fault.so"), &m, &err), SHOAL_OK);
    b = shoal__module_behaviour(m, "fault");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_EQUAL(b->args, shoal__module_plugin(m)->behaviours[0]->args);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b->args);
    CU_ASSERT_STRING_EQUAL(b->args[0].key, "mode");
    CU_ASSERT_STRING_EQUAL(b->args[6].key, "announce");
    CU_ASSERT_STRING_EQUAL(b->args[7].key, "chatter");
    CU_ASSERT_STRING_EQUAL(b->args[8].key, "sends");
    CU_ASSERT_PTR_NULL(b->args[9].key);
    shoal__module_release(m);
    shoal__loader_destroy(L);
}

/* A plugin built by an ABI 1.0 SDK has no inspect: the host's copy of its
 * behaviour has inspect NULL, whatever follows the plugin's struct, and
 * inspecting its actor answers with an empty "info". */
static void abi_1_0_plugin_has_no_inspect(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/abi_1_0.so", SHOAL_FIXTURE_DIR);
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, path);
    CU_ASSERT_EQUAL(shoal__module_plugin(m)->abi_minor, 0);
    const shoal_behaviour_t *b = shoal__module_behaviour(m, "old");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NULL(b->inspect);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal__module_spawn(rt, m, SHOAL_PID_NONE, b, NULL, 0, &pid), SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, pid, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    if (a.status == SHOAL_OK)
        CU_ASSERT_PTR_NOT_NULL(strstr((const char *)a.data, "\"behaviour\":\"old\""));
    if (a.status == SHOAL_OK)
        CU_ASSERT_PTR_NOT_NULL(strstr((const char *)a.data, "\"info\":{}}"));
    shoal_answer_release(&a);
    shoal_runtime_destroy(rt);
    shoal__module_release(m);
    shoal__loader_destroy(L);
}

/* ---- the SDK the plugins bind to ------------------------------------------- */

/* Plugins bind their shoal_* references to the test's (static) libshoal,
 * exported with ENABLE_EXPORTS. Pull in what good.so calls, then check that
 * each resolves to this executable, not to a second copy of libshoal. */
typedef void (*any_fn_t)(void);
__attribute__((used)) static const any_fn_t sdk_fns[] = {
    (any_fn_t)shoal_arg_int, (any_fn_t)shoal_reply_set, (any_fn_t)shoal_reply_error,
    (any_fn_t)shoal_panic,   (any_fn_t)shoal_send,
};

static void test_sdk_exported_from_executable(void)
{
    static const char *const names[] = {"shoal_arg_int", "shoal_reply_set", "shoal_reply_error",
                                        "shoal_panic", "shoal_send"};
    Dl_info self;
    CU_ASSERT_FATAL(dladdr(lk_good_log, &self) != 0); /* an object of this executable */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *sym = dlsym(RTLD_DEFAULT, names[i]);
        CU_ASSERT_PTR_NOT_NULL(sym);
        Dl_info where;
        CU_ASSERT(sym != NULL && dladdr(sym, &where) != 0 && where.dli_fbase == self.dli_fbase);
        CU_ASSERT(sdk_fns[i] != NULL);
    }
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"ABI major from the note", test_abi_major_from_note},
        {"ABI major from the descriptor", test_abi_major_from_descriptor},
        {"ABI minor newer", test_abi_minor_newer},
        {"descriptor too small", test_descriptor_too_small},
        {"note and descriptor disagree", test_note_and_descriptor_disagree},
        {"constructor not run before the ABI check", test_constructor_not_run_before_abi_check},
        {"an ABI 1.0 plugin has no inspect", abi_1_0_plugin_has_no_inspect},
        {"SDK exported from the executable", test_sdk_exported_from_executable},
        {"an ABI 1.2 plugin has no args schema", abi_1_2_plugin_has_no_schema},
        {NULL, NULL},
    };
    return lk_run("loader_abi", cases);
}
