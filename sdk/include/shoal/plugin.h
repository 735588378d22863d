/* shoal/plugin.h - what a plugin exports: one const descriptor.
 *
 * A plugin is a shared object built against this SDK. It declares its
 * behaviours and exports them with SHOAL_PLUGIN(...), which stamps the ABI
 * version and the descriptor's size, emits the same version into an ELF note
 * (so the host checks it before any of the plugin's code, constructors
 * included, can run), and exports the one symbol the host looks up.
 *
 *     static const shoal_behaviour_t echo = {
 *         .name = "echo", .handle_message = echo_message, .handle_call = echo_call,
 *     };
 *     SHOAL_PLUGIN(.name = "echo", .version = "1.0.0",
 *                  .behaviours = SHOAL_BEHAVIOURS(&echo));
 *
 * A pool then names a behaviour as "<plugin>.<behaviour>", e.g. echo.echo.
 *
 * ABI rules. A host loads a plugin whose ABI major equals its own and whose
 * minor is not newer than its own. The descriptor only grows, at the end; the
 * host reads a field only when the plugin's declared size includes it.
 */
#ifndef SHOAL_PLUGIN_H
#define SHOAL_PLUGIN_H

#include "shoal/behaviour.h"
#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ABI history (a minor only appends):
 *   1.0  the descriptor; shoal_behaviour_t up to terminate
 *   1.1  shoal_behaviour_t.inspect
 *   1.2  pools (shoal/pool.h), shoal_call_priority, shoal_runtime_call_priority
 *   1.3  shoal_behaviour_t.args: the behaviour's args schema (shoal/args.h)
 *   1.4  pull pools: pool kinds, the source protocol (shoal/pull.h),
 *        shoal_notify_room and SHOAL_MSG_ROOM, a pull pool's worker stats
 *   1.5  forward pools' strategy (shoal_pool_spec_t, shoal_pool_stats_t,
 *        SHOAL_POOL_SET_STRATEGY), running/idle/resizes in the stats,
 *        room for every receiver (shoal_notify_room on bounded actors and
 *        forward pools, shoal_runtime_send_wait)
 *   1.6  elastic pools: idle_timeout_ms (and lazy grow), max_waiting
 *        (SHOAL_EOVERLOAD) and autoscale in shoal_pool_spec_t, their
 *        counters in shoal_pool_stats_t, SHOAL_POOL_SET_BOUNDS and
 *        SHOAL_POOL_SET_ELASTIC; the task pools of shoal/tasks.h
 *   1.7  checkout pools (shoal/checkout.h): SHOAL_POOL_KIND_CHECKOUT,
 *        shoal_pool_spec_t.checkout, their counters in shoal_pool_stats_t,
 *        SHOAL_ENOMEMBERS, take/return and transactions
 *   1.8  shoal_send_many and shoal_runtime_send_many: many messages, one
 *        step; shoal_try_take
 *   1.9  shoal_checkout_call_group: a transaction on a group of pools
 *   1.10 room for a checkout pool's transactions: shoal_runtime_send_wait
 *        and shoal_notify_room after its SHOAL_ENOMEMBERS; and for an
 *        isolated pool (it said SHOAL_ENOTSUP before)
 *   1.11 an args schema may bound a string's length (shoal_arg_spec_t's
 *        min and max on SHOAL_ARG_STRING), checked by --check and at load
 *   1.12 shoal_tasks_dropped; shoal_tasks_submit_wait says SHOAL_EBUSY, not
 *        SHOAL_ETIMEDOUT, for a task the pool had no room for by the
 *        deadline (it never runs): SHOAL_ETIMEDOUT is only a task still
 *        to finish, whose arg it may still use
 *   1.13 a checkout pool's strategy: SHOAL_POOL_STRATEGY_LIFO beside FIFO
 *        (shoal_pool_spec_t.strategy, shoal_pool_set_strategy)
 *   1.14 shoal_runtime_stats_t.held_back and held_back_total (members the
 *        bulkhead holds while stuck callbacks take every spare thread);
 *        shoal_runtime_stats fills only what the caller's struct has
 *        (shoal_runtime_stats_sized)
 * The host reads a behaviour field only if the plugin's minor has it. */
#define SHOAL_ABI_MAJOR 1
#define SHOAL_ABI_MINOR 14

/* The exported symbol's name, and the ELF note's owner. */
#define SHOAL_PLUGIN_SYMBOL "shoal_plugin"
#define SHOAL_NOTE_NAME "shoal"
#define SHOAL_NOTE_TYPE 0x53484f41u /* "SHOA" */

typedef struct shoal_plugin_s {
    uint16_t abi_major;  /* SHOAL_ABI_MAJOR the plugin was built with */
    uint16_t abi_minor;  /* SHOAL_ABI_MINOR the plugin was built with */
    uint32_t size;       /* sizeof(shoal_plugin_t) the plugin was built with */
    const char *name;    /* the plugin's name: [a-z0-9_-]+ */
    const char *version; /* free-form, e.g. "1.2.0" */
    /* NULL-terminated list of behaviours; names unique within the plugin */
    const shoal_behaviour_t *const *behaviours;
    /* Optional: runs once after the checks, before any actor, on a thread
     * of its own. Non-zero refuses the plugin; write the reason into err
     * (NUL-terminated). One that has not returned within 10 s refuses it
     * too (a reload then fails; nothing changes): if it returns later,
     * fini runs (when it returned 0) and the plugin is closed unused. */
    int (*init)(char *err, size_t err_size);
    /* Optional: runs once before the host closes the plugin, on a thread
     * of its own. One that has not returned within 10 s is left running
     * and the plugin stays loaded (shoald says so and goes on). */
    void (*fini)(void);
} shoal_plugin_t;

/* The note payload the host reads from the file before loading it. */
typedef struct shoal_plugin_note_s {
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t descriptor_size;
} shoal_plugin_note_t;

/* Builds a NULL-terminated behaviour list. */
#define SHOAL_BEHAVIOURS(...) ((const shoal_behaviour_t *const[]){__VA_ARGS__, NULL})

#define SHOAL__NOTE_SECTION __attribute__((section(".note.shoal"), aligned(4), used))

/* Defines and exports the descriptor. Arguments: designated initialisers
 * for name, version, behaviours, and optionally init and fini. */
#define SHOAL_PLUGIN(...)                                                                          \
    SHOAL__NOTE_SECTION static const struct {                                                      \
        uint32_t namesz, descsz, type;                                                             \
        char name[8];                                                                              \
        shoal_plugin_note_t desc;                                                                  \
    } shoal__plugin_note = {sizeof(SHOAL_NOTE_NAME),                                               \
                            sizeof(shoal_plugin_note_t),                                           \
                            SHOAL_NOTE_TYPE,                                                       \
                            SHOAL_NOTE_NAME,                                                       \
                            {SHOAL_ABI_MAJOR, SHOAL_ABI_MINOR, sizeof(shoal_plugin_t)}};           \
    SHOAL_API const shoal_plugin_t shoal_plugin = {.abi_major = SHOAL_ABI_MAJOR,                   \
                                                   .abi_minor = SHOAL_ABI_MINOR,                   \
                                                   .size = sizeof(shoal_plugin_t),                 \
                                                   __VA_ARGS__}

#ifdef __cplusplus
}
#endif
#endif
