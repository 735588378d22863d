/* pull_source.c - a pull pool's source (the seed's Epic): the pool's actor
 * spawns it as a child, asks it for at most as many items as there is room
 * for, and follows its answers (shoal/pull.h). Runs in the pool actor's
 * turns, except where said.
 *
 * Room. Before a request the pool's actor claims its n places in admits
 * itself, with a CAS under the same bound as any sender's (claim): the
 * room is counted admitted from then on, so no sender can be admitted into
 * it, and n is never more than there is. It notes n in `reserved`, and the
 * source's items (route, on the source's thread) each take one of those
 * places (a CAS that lowers it) and are admitted already. The answer
 * (SENT, DONE), the source's end and the epic's give back what is left:
 * an exchange of `reserved` to 0, then those places settled as a member
 * settles items (reserve_return). (The actor used to read admitted, then
 * store `reserved`: a sender admitted between the two took the same room,
 * and the pool held one more than its capacity.) With less room than a
 * batch (an eighth of the capacity) the pool's actor waits: it sets
 * room_below and want_room [seq_cst], then claims again [seq_cst reads]; a
 * member that settles an item lowers admitted [seq_cst], reads want_room
 * [seq_cst] and, below room_below, takes the flag (exchange) and sends the
 * pool SHOAL__POOL_TICK_ROOM. One of the two sees the other.
 *
 * An epic's own args (shoalctl epic POOL ARGS: SHOAL__POOL_EPIC_ARGS) are
 * counted: the record holds them until the next epic replaces them or it
 * is freed, and each source spawned with them holds them as its actor hold
 * (released when it ends), together with the record's code (its plugin
 * module), which they hold once. Whoever lets go last frees them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "shoal/pull.h"

/* The most items one request asks for. */
#define REQUEST_MAX 1024u

static void say(struct shoal_ctx_s *ctx, shoal_pool_t *p, int level, const char *fmt, ...)
    SHOAL_PRINTF(4, 5);
static void say(struct shoal_ctx_s *ctx, shoal_pool_t *p, int level, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    shoal__log(ctx->rt, level, ctx->self, p->name, "%s", line);
}

static const char *source_name(const shoal_pool_t *p)
{
    const char *n = p->spec.source != NULL ? p->spec.source->name : NULL;
    return n != NULL ? n : "?";
}

struct shoal_pull_epic_s {
    _Atomic uint32_t refs;
    shoal_pool_hold_t code; /* held once (the record's, when the epic began) */
    void *args;
    void (*free_args)(void *args);
};

static void epic_acquire(void *what)
{
    struct shoal_pull_epic_s *e = what;
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

static void epic_release(void *what)
{
    struct shoal_pull_epic_s *e = what;
    /* acq_rel: the last one out sees every other holder's reads of the
     * args before it frees them. */
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
        return;
    e->free_args(e->args);
    if (e->code.release != NULL)
        e->code.release(e->code.what);
    free(e);
}

void shoal__pull_epic_drop(struct shoal_pull_epic_s *e)
{
    if (e != NULL)
        epic_release(e);
}

/* What a request claimed and the source did not fill goes back: settled,
 * as a member settles items (pull.h: room), so whoever waits for that room
 * hears of it. */
static void reserve_return(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    /* relaxed: one word's RMWs with the source's takes (pull.c:
     * take_reserved): each place goes one way, once. */
    uint64_t k = atomic_exchange_explicit(&q->reserved, 0, memory_order_relaxed);
    if (k == 0)
        return;
    /* seq_cst: a settle, the member's half of the room pairs. */
    uint64_t out = atomic_fetch_add_explicit(&q->settles, k, memory_order_seq_cst) + k;
    shoal__pull_room_after_settle(ctx, p, out);
}

static int spawn_source(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    /* The source holds its code, and this epic's own args if it has some. */
    struct shoal_pull_epic_s *e = p->pull->epic;
    shoal_pool_hold_t eh = {epic_acquire, epic_release, e, p->hold.origin};
    const shoal_pool_hold_t *hold = e != NULL ? &eh : &p->hold;
    bool held = hold->acquire != NULL;
    shoal_actor_hold_t ah = {held ? hold->release : NULL, held ? hold->what : NULL,
                             held ? hold->origin : NULL};
    if (held)
        hold->acquire(hold->what);
    shoal_spawn_t s = {
        .parent = ctx->self,
        .beh = p->spec.source,
        .args = e != NULL ? e->args : p->spec.source_args,
        .limit = 64,
        .kind = SHOAL_ACTOR_PLAIN,
        .hold = held ? &ah : NULL,
        .notify_start = true, /* source_up */
    };
    atomic_store_explicit(&p->pull->source_up, 0, memory_order_relaxed);
    shoal_pid_t pid;
    int rc = shoal__actor_spawn_as(ctx->rt, ctx->tc, &s, &pid);
    if (rc != SHOAL_OK) {
        if (held)
            hold->release(hold->what);
        return rc;
    }
    if ((rc = shoal__children_add(ctx, pid)) != SHOAL_OK)
        return rc; /* it was stopped */
    shoal_pull_t *q = p->pull;
    q->asked = false;
    reserve_return(ctx, p); /* (none left: a source's goes back at its end) */
    /* relaxed: route compares senders with it; the source's items come
     * after its spawn, which the send to it orders. */
    atomic_store_explicit(&q->source_pid, pid, memory_order_relaxed);
    q->spawned = pid;
    if (q->cursor_len != 0) /* a restart: go on from the last cursor */
        shoal_send_priority(ctx, pid, SHOAL_PULL_RESUME, q->cursor, q->cursor_len);
    return SHOAL_OK;
}

/* A new epic: its source from the start. */
static int epic_start(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    q->cursor_len = 0;
    q->epic_start_ns = shoal__now_ns();
    atomic_store_explicit(&q->source_items, 0, memory_order_relaxed);
    atomic_store_explicit(&q->source_restarts, 0, memory_order_relaxed);
    int rc = spawn_source(ctx, p);
    if (rc != SHOAL_OK) {
        atomic_store_explicit(&q->source_state, SHOAL_SOURCE_FAILED, memory_order_relaxed);
        say(ctx, p, SHOAL_LOG_ERROR, "epic not started: source %s: %s", source_name(p),
            shoal_strerror(rc));
        return rc;
    }
    atomic_store_explicit(&q->source_state, SHOAL_SOURCE_RUNNING, memory_order_relaxed);
    atomic_store_explicit(&q->own_args, q->epic != NULL, memory_order_relaxed);
    /* A pool started held by a reload says its epic started at GO
     * (shoal__pull_go): a reload that fails runs no epic, and one that
     * hands an epic over runs that one. */
    if (p->held)
        say(ctx, p, SHOAL_LOG_INFO,
            "source %s started, held: asked for nothing until the reload commits", source_name(p));
    else
        say(ctx, p, SHOAL_LOG_INFO, "epic started: source %s%s", source_name(p),
            q->epic != NULL ? " (with its own args)" : "");
    return SHOAL_OK;
}

/* The epic ends as state says: logged with its count, which it returns. */
static uint64_t epic_say(struct shoal_ctx_s *ctx, shoal_pool_t *p, int state, const char *how)
{
    shoal_pull_t *q = p->pull;
    atomic_store_explicit(&q->source_state, (uint32_t)state, memory_order_relaxed);
    q->asked = false;
    uint64_t items = atomic_load_explicit(&q->source_items, memory_order_relaxed);
    double s = (double)(shoal__now_ns() - q->epic_start_ns) / 1e9;
    say(ctx, p, state == SHOAL_SOURCE_FAILED ? SHOAL_LOG_ERROR : SHOAL_LOG_INFO,
        "epic %s: %" PRIu64 " items in %.3f s (%.0f items/s), source %s", how, items, s,
        s > 0 ? (double)items / s : 0.0, source_name(p));
    return items;
}

/* As epic_say, the room a request left given back: the source sends no
 * more (it ended, or is no longer the one routed as the source). */
static uint64_t epic_end(struct shoal_ctx_s *ctx, shoal_pool_t *p, int state, const char *how)
{
    reserve_return(ctx, p);
    return epic_say(ctx, p, state, how);
}

int shoal__pull_source_start(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (p->pull == NULL || p->spec.source == NULL)
        return SHOAL_OK;
    return epic_start(ctx, p);
}

/* Whether a new epic may start: SHOAL_OK, or why not. */
static int epic_allowed(shoal_pool_t *p)
{
    if (p->pull == NULL || p->spec.source == NULL)
        return SHOAL_ENOTSUP;
    if (atomic_load_explicit(&p->pull->source_state, memory_order_relaxed) ==
            SHOAL_SOURCE_RUNNING ||
        p->state == SHOAL_POOL_DRAINING)
        return SHOAL_EBUSY; /* the seed's CurrentlyBusy */
    return SHOAL_OK;
}

int shoal__pull_epic(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    int rc = epic_allowed(p);
    if (rc != SHOAL_OK)
        return rc;
    shoal__pull_epic_drop(p->pull->epic); /* the spec's args again */
    p->pull->epic = NULL;
    return epic_start(ctx, p);
}

int shoal__pull_epic_with(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                          const shoal_pull_epic_args_t *ea)
{
    int rc = epic_allowed(p);
    struct shoal_pull_epic_s *e = rc == SHOAL_OK ? malloc(sizeof *e) : NULL;
    if (e == NULL) {
        ea->free_args(ea->args);
        return rc != SHOAL_OK ? rc : SHOAL_ENOMEM;
    }
    atomic_init(&e->refs, 1);
    e->code = p->hold;
    if (e->code.acquire != NULL)
        e->code.acquire(e->code.what);
    e->args = ea->args;
    e->free_args = ea->free_args;
    shoal__pull_epic_drop(p->pull->epic);
    p->pull->epic = e;
    return epic_start(ctx, p);
}

void shoal__pull_source_stop(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    if (q == NULL ||
        atomic_load_explicit(&q->source_state, memory_order_relaxed) != SHOAL_SOURCE_RUNNING)
        return;
    shoal_pid_t pid = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
    atomic_store_explicit(&q->source_pid, SHOAL_PID_NONE, memory_order_relaxed);
    shoal_stop(ctx, pid);
    epic_end(ctx, p, SHOAL_SOURCE_DONE, "stopped (the pool drains)");
}

void shoal__pull_hand_over(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pull_handover_t *out)
{
    shoal_pull_t *q = p->pull;
    memset(out, 0, sizeof *out);
    out->state = atomic_load_explicit(&q->source_state, memory_order_relaxed);
    out->own_args = q->epic != NULL;
    out->elapsed_ns = shoal__now_ns() - q->epic_start_ns;
    if (out->state == SHOAL_SOURCE_RUNNING && !out->own_args) {
        /* It stays the one routed as the source until its EXIT (source
         * _exit), so what it sends until it ends takes the room its
         * request set aside, never refused (given back then, not now: as
         * anyone's sends, they met a full pool, refused and counted);
         * its answer is ignored (the epic is no longer running), and it
         * is not started again. The new pool's source sends those items
         * again from the cursor. */
        shoal_stop(ctx, atomic_load_explicit(&q->source_pid, memory_order_relaxed));
        out->items =
            epic_say(ctx, p, SHOAL_SOURCE_DONE, "handed over to the pool that replaces it");
    } else {
        out->items = atomic_load_explicit(&q->source_items, memory_order_relaxed);
    }
    out->cursor_len = q->cursor_len;
    memcpy(out->cursor, q->cursor, q->cursor_len);
}

void shoal__pull_go(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_pull_handover_t *h)
{
    shoal_pull_t *q = p->pull;
    if (q == NULL ||
        atomic_load_explicit(&q->source_state, memory_order_relaxed) != SHOAL_SOURCE_RUNNING)
        return; /* no source, or it did not start (logged) */
    if (h == NULL || h->state == SHOAL_SOURCE_NONE) {
        say(ctx, p, SHOAL_LOG_INFO, "epic started: source %s%s", source_name(p),
            q->epic != NULL ? " (with its own args)" : "");
        return;
    }
    if (h->state == SHOAL_SOURCE_DONE) { /* its own args or the spec's: the last epic is over */
        shoal_pid_t pid = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
        atomic_store_explicit(&q->source_pid, SHOAL_PID_NONE, memory_order_relaxed);
        atomic_store_explicit(&q->source_state, SHOAL_SOURCE_DONE, memory_order_relaxed);
        atomic_store_explicit(&q->source_items, h->items, memory_order_relaxed);
        shoal_stop(ctx, pid);
        say(ctx, p, SHOAL_LOG_INFO,
            "epic done already in the pool it replaces (%" PRIu64
            " items): source %s not asked (shoalctl epic starts a new one)",
            h->items, source_name(p));
        return;
    }
    if (h->own_args || h->cursor_len == 0 || h->cursor_len > sizeof q->cursor) {
        if (h->own_args)
            say(ctx, p, SHOAL_LOG_WARN,
                "the epic of the pool it replaces runs with its own args (shoalctl epic; %" PRIu64
                " items sent) and is not taken over (it ends as that pool drains): source %s "
                "starts its epic from the start",
                h->items, source_name(p));
        else
            say(ctx, p, SHOAL_LOG_WARN,
                "the pool it replaces had no cursor from its source (%" PRIu64
                " items sent): source %s starts its epic from the start, and those items may "
                "come again",
                h->items, source_name(p));
        say(ctx, p, SHOAL_LOG_INFO, "epic started: source %s", source_name(p));
        return;
    }
    memcpy(q->cursor, h->cursor, h->cursor_len);
    q->cursor_len = h->cursor_len;
    atomic_store_explicit(&q->source_items, h->items, memory_order_relaxed);
    uint64_t now = shoal__now_ns();
    q->epic_start_ns = h->elapsed_ns < now ? now - h->elapsed_ns : 0;
    shoal_pid_t pid = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
    shoal_send_priority(ctx, pid, SHOAL_PULL_RESUME, q->cursor, q->cursor_len);
    say(ctx, p, SHOAL_LOG_INFO,
        "epic taken over from the pool it replaces (%" PRIu64
        " items sent there%s): source %s resumes at its last cursor",
        h->items, h->state == SHOAL_SOURCE_FAILED ? ", where its source had failed" : "",
        source_name(p));
}

bool shoal__pull_source_started(shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal_pull_t *q = p->pull;
    if (msg->from != q->spawned || q->spawned == SHOAL_PID_NONE)
        return false;
    /* One stopped before its init was over (a drain at once) tells of its
     * end: not the current source's. */
    if (msg->from == atomic_load_explicit(&q->source_pid, memory_order_relaxed))
        atomic_store_explicit(&q->source_up, msg->status == SHOAL_OK ? 1u : 2u,
                              memory_order_relaxed);
    return true;
}

/* Claims room for a request: at least batch places, at most REQUEST_MAX,
 * never more than capacity less admitted, by one CAS on admits (pull.h:
 * admission): their count. 0: less room than a batch (or admission closed). */
static uint32_t claim(shoal_pull_t *q, uint64_t cap, uint64_t batch)
{
    for (;;) {
        /* seq_cst: the pool's reads of the room pair (above); settles
         * first, so admits - settles is never below admitted. */
        uint64_t out = atomic_load_explicit(&q->settles, memory_order_seq_cst);
        uint64_t n = atomic_load_explicit(&q->admits, memory_order_seq_cst);
        if (n & PULL_CLOSED)
            return 0;
        uint64_t adm = n - out;
        if (cap < adm + batch)
            return 0;
        uint64_t k = cap - adm < REQUEST_MAX ? cap - adm : REQUEST_MAX;
        /* relaxed: as a sender's admission (it publishes nothing). */
        if (atomic_compare_exchange_weak_explicit(&q->admits, &n, n + k, memory_order_relaxed,
                                                  memory_order_relaxed))
            return (uint32_t)k;
    }
}

void shoal__pull_source_ask(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    if (q == NULL || q->asked || p->held ||
        atomic_load_explicit(&q->source_state, memory_order_relaxed) != SHOAL_SOURCE_RUNNING ||
        p->state == SHOAL_POOL_DRAINING)
        return;
    uint64_t cap = atomic_load_explicit(&q->capacity, memory_order_relaxed);
    uint64_t batch = cap / 8 != 0 ? cap / 8 : 1;
    uint32_t n = claim(q, cap, batch);
    if (n == 0) {
        if (cap < batch)
            return; /* no room at all (no workers, no buffer): a resize asks again */
        atomic_store_explicit(&q->room_below, cap - batch + 1, memory_order_relaxed);
        /* seq_cst: the pool's store of the room pair, then its reads again. */
        atomic_store_explicit(&q->want_room, 1, memory_order_seq_cst);
        if ((n = claim(q, cap, batch)) == 0)
            return; /* a member will tell (SHOAL__POOL_TICK_ROOM) */
        atomic_store_explicit(&q->want_room, 0, memory_order_relaxed);
    }
    /* relaxed: the source reads it on its items, after this request (the
     * send orders it). */
    atomic_store_explicit(&q->reserved, n, memory_order_relaxed);
    shoal_pid_t src = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
    if (shoal_send_priority(ctx, src, SHOAL_PULL_REQUEST, &n, sizeof n) == SHOAL_OK)
        q->asked = true;
    else
        reserve_return(ctx, p); /* it is ending: EXIT comes */
}

/* Members (any thread): after admitted went down to `left`. */
void shoal__pull_room(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t left)
{
    shoal_pull_t *q = p->pull;
    /* seq_cst: the member's read of the room pair. */
    if (atomic_load_explicit(&q->want_room, memory_order_seq_cst) == 0 ||
        left >= atomic_load_explicit(&q->room_below, memory_order_relaxed) ||
        atomic_exchange_explicit(&q->want_room, 0, memory_order_relaxed) == 0)
        return;
    shoal_send_priority(ctx, p->g.pid, SHOAL__POOL_TICK_ROOM, NULL, 0);
}

/* The cursor an answer carries (SENT, DONE), if any. */
static bool take_cursor(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal_pull_t *q = p->pull;
    if (msg->size > sizeof q->cursor) {
        say(ctx, p, SHOAL_LOG_ERROR,
            "source %s: a cursor of %zu bytes (at most %u): the source is stopped", source_name(p),
            msg->size, (unsigned)sizeof q->cursor);
        return false;
    }
    if (msg->size != 0) {
        memcpy(q->cursor, msg->data, msg->size);
        q->cursor_len = (uint32_t)msg->size;
    }
    return true;
}

bool shoal__pull_source_message(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal_pull_t *q = p->pull;
    if (q == NULL || msg->kind != SHOAL_MSG_CAST)
        return false;
    if (msg->type == SHOAL__POOL_TICK_ROOM) {
        shoal__pull_source_ask(ctx, p);
        return true;
    }
    if (msg->type != SHOAL_PULL_SENT && msg->type != SHOAL_PULL_DONE)
        return false;
    shoal_pid_t src = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
    if (msg->from != src || src == SHOAL_PID_NONE ||
        atomic_load_explicit(&q->source_state, memory_order_relaxed) != SHOAL_SOURCE_RUNNING)
        return true; /* a source of an earlier epic, or one stopped: ignored */
    q->asked = false;
    reserve_return(ctx, p); /* its items came before its answer (one sender, in order) */
    if (!take_cursor(ctx, p, msg)) {
        atomic_store_explicit(&q->source_pid, SHOAL_PID_NONE, memory_order_relaxed);
        shoal_stop(ctx, src);
        epic_end(ctx, p, SHOAL_SOURCE_FAILED, "failed");
        return true;
    }
    if (msg->type == SHOAL_PULL_DONE) {
        atomic_store_explicit(&q->source_pid, SHOAL_PID_NONE, memory_order_relaxed);
        shoal_stop(ctx, src); /* its work is over */
        epic_end(ctx, p, SHOAL_SOURCE_DONE, "done");
        return true;
    }
    shoal__pull_source_ask(ctx, p);
    return true;
}

bool shoal__pull_source_exit(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid, int reason)
{
    shoal_pull_t *q = p->pull;
    if (q == NULL || pid != atomic_load_explicit(&q->source_pid, memory_order_relaxed) ||
        pid == SHOAL_PID_NONE)
        return false;
    atomic_store_explicit(&q->source_pid, SHOAL_PID_NONE, memory_order_relaxed);
    reserve_return(ctx, p); /* it sends nothing more: the room it left goes back */
    if (atomic_load_explicit(&q->source_state, memory_order_relaxed) != SHOAL_SOURCE_RUNNING)
        return true;          /* stopped, its epic handed over: its end is all */
    if (reason == SHOAL_OK) { /* ended before DONE: the epic is over all the same */
        epic_end(ctx, p, SHOAL_SOURCE_DONE, "done (the source ended)");
        return true;
    }
    uint64_t now = shoal__now_ns();
    /* seq_cst (atomic_load): no pairing -- a flag, read relaxed everywhere
     * else in the pools (stop_all publishes nothing with it). */
    if (p->state != SHOAL_POOL_DRAINING && !atomic_load(&ctx->rt->stopping) &&
        shoal__pool_restart_allowed(p, now)) {
        shoal__pool_restart_note(p, now);
        atomic_fetch_add_explicit(&q->source_restarts, 1, memory_order_relaxed);
        int rc = spawn_source(ctx, p);
        if (rc == SHOAL_OK) {
            say(ctx, p, SHOAL_LOG_WARN, "source %s failed: %s (%d); started again, %s",
                source_name(p), shoal_strerror(reason), reason,
                q->cursor_len != 0 ? "resuming at its last cursor" : "from the start");
            shoal__pull_source_ask(ctx, p);
            return true;
        }
        reason = rc;
    }
    say(ctx, p, SHOAL_LOG_ERROR, "source %s failed: %s (%d); not started again", source_name(p),
        shoal_strerror(reason), reason);
    epic_end(ctx, p, SHOAL_SOURCE_FAILED, "failed");
    return true;
}
