/* hello.c - a complete shoal plugin: one behaviour, `hello`.
 *
 * Every call is answered with "hello, <name>" (a NUL-terminated string, reply
 * type HELLO_REPLY), where <name> comes from the pool's args:
 *
 *     pools:
 *       greeter:
 *         worker: hello.hello        # <plugin>.<behaviour>
 *         args: { name: shoal }      # optional; the default is "world"
 *
 * The behaviour declares the args it takes (hello_args below): the host
 * checks a pool's args against that schema before any worker starts, so a
 * typo (`nmae: shoal`) or a list where a string belongs is an error with
 * file:line:column at `shoald --check` and at reload, not a surprise at run
 * time; `shoal-plugin-check --describe hello.so` prints it.
 *
 * Every other message (casts, and the notices an actor gets) is only
 * counted; the counts are logged when the actor ends, and an inspection
 * (shoal_runtime_inspect, shoal_inspect) reports them while it runs.
 *
 * A plugin includes only <shoal/...> headers and exports exactly one symbol,
 * the descriptor made by SHOAL_PLUGIN() at the bottom. Everything else is
 * static, and the build hides whatever is not (-fvisibility=hidden).
 */
#include <shoal/args.h>
#include <shoal/ctx.h>
#include <shoal/error.h>
#include <shoal/inspect.h>
#include <shoal/plugin.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The type id of our replies. Type ids are the application's to choose. */
#define HELLO_REPLY 1u

/* The longest name we accept; checked in init, so the greeting always fits. */
#define HELLO_NAME_MAX 64

/* Per-actor state. The runtime allocates state_size zeroed bytes for each
 * actor and hands them to every callback; callbacks of one actor never run
 * at the same time, so no locking is needed. */
typedef struct hello_state_s {
    char greeting[sizeof "hello, " + HELLO_NAME_MAX]; /* built once, in init */
    size_t greeting_size;                             /* bytes, with the NUL */
    uint64_t calls;                                   /* calls answered */
    uint64_t messages;                                /* everything else seen */
} hello_state_t;

/* Runs once per actor, before any message. `args` is the pool's args:
 * mapping (or NULL when there is none); the typed getters check it and log a
 * clear error (with file:line:column) when it is wrong. A non-zero return
 * ends the actor with that reason. */
static int hello_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    hello_state_t *st = state;
    const char *name = "world"; /* kept when `name` is absent */
    int rc = shoal_arg_string(ctx, args, "name", SHOAL_ARG_OPTIONAL, &name);
    if (rc != SHOAL_OK)
        return rc;
    /* A check of our own: reported like a getter's error, at the value. */
    if (strlen(name) > HELLO_NAME_MAX)
        return shoal_arg_error(ctx, args, "name", "longer than %d bytes", HELLO_NAME_MAX);
    int n = snprintf(st->greeting, sizeof st->greeting, "hello, %s", name);
    st->greeting_size = (size_t)n + 1;
    return SHOAL_OK;
}

/* Every message that is not a call: count it. Returning 0 keeps the actor
 * running. The message and its payload belong to the runtime and are only
 * valid during this callback. */
static int hello_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)msg;
    hello_state_t *st = state;
    st->messages++;
    return 0;
}

/* A call: answer now. shoal_reply_set copies the bytes, so pointing it at
 * our state is fine. */
static int hello_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)msg;
    hello_state_t *st = state;
    st->calls++;
    return shoal_reply_set(reply, HELLO_REPLY, st->greeting, st->greeting_size);
}

/* Describes the actor when it is inspected: the runtime writes its pid,
 * behaviour and mailbox, and this adds the fields of "info". Optional. */
static int hello_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    hello_state_t *st = state;
    shoal_inspect_uint(out, "calls", st->calls);
    shoal_inspect_uint(out, "messages", st->messages);
    return 0;
}

/* Runs last (not when init failed), with the reason the actor ends. */
static void hello_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    hello_state_t *st = state;
    shoal_log(ctx, SHOAL_LOG_INFO, "%" PRIu64 " calls, %" PRIu64 " messages, ended: %s", st->calls,
              st->messages, reason ? shoal_errname(reason) : "normal");
}

/* The args init reads: key, type, its length (min and max bytes), default
 * (as written in YAML) and a line of doc, ended by a NULL key. The schema
 * only checks -- shoald --check and a reload refuse a longer name before
 * any init runs; init above still applies the default itself, and checks
 * the length for a host that has no schema. */
static const shoal_arg_spec_t hello_args[] = {
    {.key = "name",
     .type = SHOAL_ARG_STRING,
     .min = 0,
     .max = HELLO_NAME_MAX,
     .def = "world",
     .doc = "who to greet, at most 64 bytes: calls are answered \"hello, <name>\""},
    {.key = NULL},
};

static const shoal_behaviour_t hello = {
    .name = "hello",
    .state_size = sizeof(hello_state_t),
    .init = hello_init,
    .handle_message = hello_message, /* the only required callback */
    .handle_call = hello_call,
    .terminate = hello_terminate,
    .inspect = hello_inspect,
    .args = hello_args, /* optional: without it, args go unchecked to init */
};

/* The plugin's one export: name, version and behaviours. The macro also
 * stamps the SDK's ABI version into the descriptor and into an ELF note
 * (.note.shoal) that the host checks before running any of this code. */
SHOAL_PLUGIN(.name = "hello", .version = "0.1.0", .behaviours = SHOAL_BEHAVIOURS(&hello));
