/* shoal/behaviour.h - what an actor does: a const struct of callbacks.
 *
 * The runtime allocates state_size zeroed bytes of state per actor and
 * passes them to every callback. Callbacks of one actor never run at the same
 * time, and always on one of the dispatcher's worker threads. All callbacks
 * but handle_message are optional (NULL).
 *
 * A callback ends its actor abnormally by returning a non-zero value (that
 * value becomes the exit reason) or by calling shoal_panic(). The actor's
 * parent is then told, with the reason.
 */
#ifndef SHOAL_BEHAVIOUR_H
#define SHOAL_BEHAVIOUR_H

#include "shoal/message.h"
#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* handle_call may return this to answer later with shoal_reply(). */
#define SHOAL_DEFER 1

typedef struct shoal_behaviour_s {
    const char *name;  /* for logs and inspection */
    size_t state_size; /* bytes of per-actor state, zeroed; 0 = none (state is NULL) */

    /* Runs first, before any message, with the args given at spawn (the
     * spawner keeps them alive until init has run). Non-zero: the actor ends
     * with that reason and never handles a message. In shoald, an actor a
     * reload starts runs init at once but handles its first message --
     * one its init sent itself, a timer's -- only once the reload has
     * committed; a reload that fails ends it before (terminate runs).
     * init runs even for a worker stopped before it began (a reload that
     * failed while the worker waited for a thread): it must not assume
     * its worker will be used. */
    int (*init)(shoal_ctx_t *ctx, void *state, const void *args);

    /* One message (CAST, and REPLY/TIMEOUT/EXIT notices). 0 = go on. */
    int (*handle_message)(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg);

    /* One call. Fill `reply` (shoal_reply_set / shoal_reply_error) and return
     * 0 to answer now; return SHOAL_DEFER to answer later with shoal_reply();
     * any other value ends the actor. Without handle_call, every call is
     * answered with status SHOAL_ENOTSUP. */
    int (*handle_call)(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply);

    /* Runs last, with the exit reason (0 normal, SHOAL_ESHUTDOWN when
     * stopped, SHOAL_EPANIC after a panic, or what a callback returned).
     * Not run when init failed. */
    void (*terminate)(shoal_ctx_t *ctx, void *state, int reason);

    /* Describes the actor when it is inspected (shoal/inspect.h): add
     * fields with shoal_inspect_*. 0 = go on; any other value ends the
     * actor, as for the other callbacks. */
    int (*inspect)(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out);

    /* ABI 1.3. The args this behaviour takes (shoal/args.h): an array of
     * specs ended by one whose key is NULL, living as long as the plugin.
     * The host checks a pool's `args:` against it before any worker starts;
     * an array holding only the terminator means "takes no args". NULL:
     * args are not checked (as for plugins built for ABI 1.0-1.2). */
    const shoal_arg_spec_t *args;
} shoal_behaviour_t;

#ifdef __cplusplus
}
#endif
#endif
