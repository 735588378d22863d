/* control_cmd.c - what each control request does (protocol in control.h).
 *
 * On the host thread, nothing here waits on an actor: send only queues,
 * diff waits for the main loop to run it (control_diff.c), reload waits
 * for the host's next reload (control_reload.c), status reads
 * the pools' records, and call, inspect and scale become a job for the
 * agent (agent.h), answered by shoal__control_answer when its results come
 * back, or when the host's deadline on the job passes first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/argcheck.h"
#include "host/config.h"
#include "host/node.h"
#include "host/source.h"
#include "host/control_conn.h"
#include "host/num.h"

#define ACTOR_TIMEOUT_MS 5000 /* inspect, scale, and call without its own timeout */
#define CALL_TIMEOUT_MAX_MS 3600000

/* The live entry of list[0..n) (pools or sources) called name: neither
 * draining nor started by a reload that has not committed yet (host.h:
 * shoal__host_committed), or NULL. */
static shoal_host_pool_t *live_named(shoal_host_t *h, shoal_host_pool_t *list, size_t n,
                                     const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!list[i].draining && shoal__host_committed(h, &list[i]) &&
            strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

static shoal_host_pool_t *pool_named(shoal_host_t *h, const char *name)
{
    return live_named(h, h->pools, h->npools, name);
}

/* The pool inspect NAME reads: the live one; while shoald stops (every
 * pool drains), the newest of that name. */
static shoal_host_pool_t *pool_to_inspect(shoal_control_t *c, const char *name)
{
    if (!c->stopping)
        return pool_named(c->h, name);
    for (size_t i = c->h->npools; i-- > 0;)
        if (shoal__host_committed(c->h, &c->h->pools[i]) && strcmp(c->h->pools[i].name, name) == 0)
            return &c->h->pools[i];
    return NULL;
}

/* The live pool or source called name (send and call reach either: both
 * are registered under their names), or NULL. */
static shoal_host_pool_t *actor_named(shoal_host_t *h, const char *name)
{
    shoal_host_pool_t *hp = pool_named(h, name);
    return hp != NULL ? hp : live_named(h, h->sources, h->nsources, name);
}

/* "1 unknown pool" for a name that is no pool, or, for a source's, what a
 * source is not (inspect and scale are about pools), or, for one the start
 * or a reload has yet to start, that. */
static void not_a_pool(shoal_control_t *c, shoal_control_conn_t *k, const char *name,
                       const char *cmd)
{
    if (live_named(c->h, c->h->sources, c->h->nsources, name) != NULL)
        shoal__control_say(k,
                           "1 '%s' is a source (one actor), not a pool: %s is about pools; "
                           "`status` shows what a source sent\n",
                           name, cmd);
    else if (!shoal__control_not_yet(c, k, name))
        shoal__control_say(k, "1 unknown pool '%s'\n", name);
}

/* Next space-separated word of *s (NUL-terminated in place), or NULL. */
static char *word(char **s)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0')
        return NULL;
    char *w = p;
    while (*p != '\0' && *p != ' ' && *p != '\t')
        p++;
    if (*p != '\0')
        *p++ = '\0';
    *s = p;
    return w;
}

static bool number(const char *s, uint64_t max, uint64_t *out)
{
    return shoal__num_parse(s, 10, max, out);
}

/* ---- jobs ------------------------------------------------------------------- */

/* Hands the agent op for the one pool hp, or for every pool (but the
 * draining ones if live_only); k waits for it. On failure k's reply is the
 * refusal. */
static void job(shoal_control_t *c, shoal_control_conn_t *k, shoal_control_op_t op,
                shoal_host_pool_t *hp, bool live_only, shoal_agent_op_t aop, uint32_t type,
                const void *data, size_t size, uint64_t timeout_ms)
{
    shoal_host_t *h = c->h;
    size_t n = 0, cap = hp != NULL ? 1 : h->npools;
    shoal_pid_t *pids = calloc(cap ? cap : 1, sizeof *pids);
    k->targets = calloc(cap ? cap : 1, sizeof *k->targets);
    if (pids == NULL || k->targets == NULL)
        goto fail;
    for (size_t i = 0; i < cap; i++) {
        shoal_host_pool_t *p = hp != NULL ? hp : &h->pools[i];
        if (hp == NULL && ((live_only && p->draining) || !shoal__host_committed(h, p)))
            continue;
        if ((k->targets[n].name = strdup(p->name)) == NULL)
            goto fail;
        k->targets[n].draining = p->draining;
        pids[n] = p->pid;
        k->ntargets = ++n;
    }
    uint64_t id = ++c->next_job;
    int rc = shoal__agent_submit(c->agent, id, aop, type, data, size, pids, n, timeout_ms);
    free(pids);
    if (rc == SHOAL_EFULL) {
        shoal__control_say(k,
                           "1 busy: %d requests already wait for the control agent (are the "
                           "dispatcher threads stuck?)\n",
                           SHOAL_AGENT_QUEUE_MAX);
        return;
    }
    if (rc != SHOAL_OK) {
        shoal__control_say(k, "1 %s\n", shoal_strerror(rc));
        return;
    }
    k->job = id;
    k->op = op;
    k->job_timeout_ms = timeout_ms;
    return;
fail:
    free(pids);
    shoal__control_say(k, "1 %s\n", shoal_strerror(SHOAL_ENOMEM));
}

/* A pool's answer, SHOAL_ETIMEDOUT when none came (d NULL: the agent did
 * not run in time). */
static const shoal_agent_result_t *result(const shoal_agent_done_t *d, size_t i)
{
    static const shoal_agent_result_t none = {.rc = SHOAL_ETIMEDOUT};
    static const shoal_agent_result_t lost = {.rc = SHOAL_ENOMEM};
    if (d == NULL)
        return &none;
    return i < d->n ? &d->results[i] : &lost;
}

static void inspect_json(shoal_control_conn_t *k, const shoal_agent_result_t *r)
{
    if (r->rc == SHOAL_OK && r->size > 0)
        shoal__control_put(k, r->data, r->size - 1); /* without the NUL */
    else if (r->rc == SHOAL_ETIMEDOUT)
        shoal__control_say(k, "{\"error\":\"unresponsive\"}");
    else if (r->rc == SHOAL_OK)
        shoal__control_say(k, "{\"error\":\"empty answer\"}");
    else
        shoal__control_say(k, "{\"error\":\"%s\"}", shoal_strerror(r->rc));
}

static void json_name(shoal_control_conn_t *k, const char *s)
{
    shoal__control_put(k, "\"", 1);
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            shoal__control_say(k, "\\%c", ch);
        else if (ch < 0x20)
            shoal__control_say(k, "\\u%04x", ch);
        else
            shoal__control_put(k, s, 1);
    }
    shoal__control_put(k, "\"", 1);
}

/* epic: started, or why not (the seed's CurrentlyBusy: an epic runs). */
static void epic_answer(shoal_control_t *c, shoal_control_conn_t *k, const shoal_agent_done_t *d,
                        const shoal_agent_result_t *r)
{
    const char *name = k->ntargets ? k->targets[0].name : "?";
    shoal_host_pool_t *hp = pool_named(c->h, name);
    shoal_pool_stats_t st = {0};
    if (hp != NULL)
        shoal__host_peek(hp, &st);
    int rc = d != NULL ? r->rc : SHOAL_ETIMEDOUT;
    bool with_args = k->epic_args;
    if (with_args) {
        /* The pool's own answer carries the status: it took the args. Any
         * other: it never did, and the agent freed them (agent.c: from the
         * submission they are the job's, even when this connection is gone
         * before its answer, or the agent before the job). */
        int32_t status;
        if (rc == SHOAL_OK && r->type == SHOAL__POOL_EPIC_ARGS && r->size == sizeof status) {
            memcpy(&status, r->data, sizeof status);
            rc = status;
        } else if (rc == SHOAL_OK) {
            rc = SHOAL_ENOTSUP;
        }
        k->epic_args = false;
    }
    if (rc == SHOAL_ETIMEDOUT) {
        shoal__control_say(k, "1 timed out: no answer from pool %s\n", name);
    } else if (rc == SHOAL_OK) {
        shoal__host_log(c->h, SHOAL_LOG_INFO, "control: epic %s: started%s", name,
                        with_args ? " with its own args" : "");
        shoal__control_say(k, "0 ok\n%s: epic started%s\n", name,
                           with_args ? " with its own args" : "");
    } else if (rc == SHOAL_EBUSY) {
        shoal__control_say(k,
                           "1 busy: %s is working through an epic (%" PRIu64
                           " items so far); a new one starts when it is done\n",
                           name, st.source_items);
    } else if (rc == SHOAL_ENOTSUP) {
        shoal__control_say(k, "1 %s has no source (an epic needs a pull pool with source:)\n",
                           name);
    } else {
        shoal__control_say(k, "1 %s\n", shoal_strerror(rc));
    }
}

static void free_node(void *n) { shoal__node_free(n); }

/* epic POOL [ARGS]: a new epic, with the source's args from the config, or
 * from ARGS -- a YAML mapping, checked against the source's args schema as
 * the config's source_args are ("epic args:1:8: ..."). */
static void epic(shoal_control_t *c, shoal_control_conn_t *k, char *rest)
{
    char *name = word(&rest);
    shoal_host_pool_t *hp = name != NULL ? pool_named(c->h, name) : NULL;
    if (name == NULL) {
        shoal__control_say(k, "2 usage: epic POOL [ARGS] (ARGS: the source's args as a YAML "
                              "mapping, e.g. '{from: 1, to: 1000}')\n");
        return;
    }
    if (hp == NULL) {
        not_a_pool(c, k, name, "epic");
        return;
    }
    while (*rest == ' ' || *rest == '\t')
        rest++;
    if (*rest == '\0') {
        job(c, k, SHOAL_CONTROL_OP_EPIC, hp, true, SHOAL_AGENT_CALL_PRIORITY, SHOAL_POOL_EPIC, NULL,
            0, ACTOR_TIMEOUT_MS);
        return;
    }
    const shoal_config_pool_t *cp = hp->cp;
    if (cp == NULL || cp->src_beh == NULL) {
        shoal__control_say(k, "1 %s has no source (an epic needs a pull pool with source:)\n",
                           name);
        return;
    }
    shoal_node_t *args = NULL;
    shoal_diag_t err = {0};
    char why[512], label[160];
    snprintf(label, sizeof label, "%s.%s", cp->src_plugin, cp->src_behaviour);
    int rc = shoal__node_parse("epic args", rest, strlen(rest), &args, &err);
    if (rc == SHOAL_OK && args->kind != SHOAL_NODE_MAP)
        rc = shoal__node_fail(&err, args,
                              "epic args: expected a mapping of %s's args, like '{from: 1, to: "
                              "1000}', got %s",
                              label, shoal__node_kind_name(args));
    if (rc == SHOAL_OK)
        rc = shoal__argcheck_args_at(cp->src_beh->args, args, args, "epic args", label, &err);
    if (rc != SHOAL_OK) {
        shoal__node_free(args);
        shoal__control_say(k, "2 %s\n", shoal__diag_format(&err, why, sizeof why));
        return;
    }
    shoal_pull_epic_args_t ea = {args, free_node};
    k->epic_args = true;
    job(c, k, SHOAL_CONTROL_OP_EPIC, hp, true, SHOAL_AGENT_CALL_PRIORITY, SHOAL__POOL_EPIC_ARGS,
        &ea, sizeof ea, ACTOR_TIMEOUT_MS);
    if (k->job == 0) { /* not handed to the agent (it answered why) */
        shoal__node_free(args);
        k->epic_args = false;
    }
}

void shoal__control_answer(shoal_control_t *c, shoal_control_conn_t *k, const shoal_agent_done_t *d)
{
    const shoal_agent_result_t *r = result(d, 0);
    switch (k->op) {
    case SHOAL_CONTROL_OP_INSPECT_ONE:
        shoal__control_say(k, "0 ok\n");
        inspect_json(k, r);
        shoal__control_say(k, "\n");
        break;
    case SHOAL_CONTROL_OP_INSPECT_ALL:
        shoal__control_say(k, "0 ok\n{");
        for (size_t i = 0; i < k->ntargets; i++) {
            if (i != 0)
                shoal__control_put(k, ",", 1);
            json_name(k, k->targets[i].name);
            shoal__control_put(k, ":", 1);
            inspect_json(k, result(d, i));
        }
        shoal__control_say(k, "}\n");
        break;
    case SHOAL_CONTROL_OP_CALL:
    case SHOAL_CONTROL_OP_SCALE:
    case SHOAL_CONTROL_OP_BOUNDS: {
        const char *name = k->ntargets ? k->targets[0].name : "?";
        static const shoal_agent_result_t odd = {.rc = SHOAL_ENOTSUP};
        uint32_t size = 0;
        if (r->rc == SHOAL_OK && k->op != SHOAL_CONTROL_OP_CALL) {
            if (r->size == sizeof size)
                memcpy(&size, r->data, sizeof size);
            else
                r = &odd; /* not a size */
        }
        if (d == NULL)
            shoal__control_say(k,
                               "1 timed out: no answer within %" PRIu64
                               " ms (the runtime did not run the control agent: are all its "
                               "threads busy?)\n",
                               k->job_timeout_ms + SHOAL_CONTROL_GRACE_MS);
        else if (r->rc == SHOAL_ETIMEDOUT)
            shoal__control_say(k, "1 timed out: no reply from pool %s within %" PRIu64 " ms\n",
                               name, k->job_timeout_ms);
        else if (r->rc != SHOAL_OK)
            shoal__control_say(k, "1 %s\n", shoal_strerror(r->rc));
        else if (k->op == SHOAL_CONTROL_OP_CALL) {
            shoal__control_say(k, "0 ok\n");
            shoal__control_put(k, r->data, r->size);
            shoal__control_say(k, "\n");
        } else if (k->op == SHOAL_CONTROL_OP_BOUNDS) {
            shoal__host_log(c->h, SHOAL_LOG_INFO,
                            "control: scale %s to bounds %" PRIu32 "..%" PRIu32 " (were %" PRIu32
                            "..%" PRIu32 "): size now %u (was %" PRIu32 ")",
                            name, k->arg_min, k->arg_max, k->was_min, k->was_max, size,
                            k->was_size);
            shoal__control_say(k, "0 ok\n%u bounds %" PRIu32 "..%" PRIu32 " from %" PRIu32 "\n",
                               size, k->arg_min, k->arg_max, k->was_size);
        } else {
            /* Parked: no worker, and nothing starts one -- every send is
             * refused (counted, SHOAL_EBUSY) until a scale or a reload. */
            bool parked = size == 0 && !k->self_starting;
            shoal__host_log(c->h, parked ? SHOAL_LOG_WARN : SHOAL_LOG_INFO,
                            "control: scale %s to %" PRIu32 ": size now %u%s", name, k->arg, size,
                            parked ? " (parked: every send is refused until it is scaled up)" : "");
            shoal__control_say(k, "0 ok\n%u asked %" PRIu32 " min %" PRIu32 " max %" PRIu32 "%s\n",
                               size, k->arg, k->arg_min, k->arg_max, parked ? " parked" : "");
        }
        break;
    }
    case SHOAL_CONTROL_OP_EPIC:
        epic_answer(c, k, d, r);
        break;
    }
    k->job = 0;
}

/* ---- requests -------------------------------------------------------------- */

/* A message type: decimal, or hex after 0x; at most UINT32_MAX. */
static bool msg_type(const char *s, uint32_t *out)
{
    uint64_t v;
    if (!shoal__num_parse(s, 0, UINT32_MAX, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

/* send [type=N] POOL DATA | call [type=N] POOL DATA [TIMEOUT_MS] */
static void send_or_call(shoal_control_t *c, shoal_control_conn_t *k, const char *cmd, char *rest)
{
    uint32_t type = SHOAL_CONTROL_TYPE_DEFAULT;
    char *name = word(&rest);
    if (name != NULL && strncmp(name, "type=", 5) == 0) {
        if (!msg_type(name + 5, &type)) {
            shoal__control_say(
                k, "2 usage: %s [type=N] POOL DATA (N a message type, 0 to %" PRIu32 ")\n", cmd,
                UINT32_MAX);
            return;
        }
        /* The runtime's own commands and notes (shoal/pool.h): a client's
         * would be taken as one -- a checkout pool took a forged "caller
         * gone" for its own and counted it nowhere in the ledger. */
        if (type >= SHOAL_TYPE_RESERVED_FIRST && type <= SHOAL_TYPE_RESERVED_LAST) {
            shoal__control_say(k,
                               "2 type 0x%" PRIX32 " is the runtime's (0x%" PRIX32 " .. 0x%" PRIX32
                               " are reserved): pick another type\n",
                               type, (uint32_t)SHOAL_TYPE_RESERVED_FIRST,
                               (uint32_t)SHOAL_TYPE_RESERVED_LAST);
            return;
        }
        name = word(&rest);
    }
    shoal_host_pool_t *hp = name ? actor_named(c->h, name) : NULL;
    if (name == NULL) {
        shoal__control_say(k, "2 usage: %s [type=N] POOL DATA\n", cmd);
        return;
    }
    if (hp == NULL) {
        if (!shoal__control_not_yet(c, k, name))
            shoal__control_say(k, "1 unknown pool '%s'\n", name);
        return;
    }
    /* DATA is the rest after POOL's one separator, as sent: its spaces
     * are its own. A call's last word, when it is a number, is the
     * timeout: shoalctl always sends one, so `call P  5000` is an empty
     * DATA with 5000 ms (taking DATA's leading spaces off first made
     * "5000" the DATA, and the default the timeout). */
    if (cmd[0] == 's') {
        int rc = shoal_runtime_send(c->h->rt, hp->pid, type, rest, strlen(rest));
        shoal__control_say(k, rc == SHOAL_OK ? "0 ok\n" : "1 %s\n", shoal_strerror(rc));
        return;
    }
    uint64_t timeout = ACTOR_TIMEOUT_MS, t;
    char *sp = strrchr(rest, ' '); /* a last word that is a number is the timeout */
    if (sp != NULL && number(sp + 1, CALL_TIMEOUT_MAX_MS, &t)) {
        if (t == 0) { /* shoalctl refuses it too: a call that never waits is none */
            shoal__control_say(k, "1 timeout 0 ms: a call waits 1 to %u ms\n",
                               (unsigned)CALL_TIMEOUT_MAX_MS);
            return;
        }
        timeout = t;
        *sp = '\0';
    } else if (sp != NULL && sp[1] != '\0' && strspn(sp + 1, "0123456789") == strlen(sp + 1)) {
        /* A number past the most: said, not taken as DATA with the
         * default timeout. */
        shoal__control_say(k, "1 timeout %s ms is past the most a call waits (%u ms)\n", sp + 1,
                           (unsigned)CALL_TIMEOUT_MAX_MS);
        return;
    }
    job(c, k, SHOAL_CONTROL_OP_CALL, hp, true, SHOAL_AGENT_CALL, type, rest, strlen(rest), timeout);
}

/* scale POOL N: SET_SIZE, clamped to the pool's bounds. scale POOL
 * MIN..MAX: SET_BOUNDS, the size clamped into them; a MAX past what the
 * pool was started for (its record's cap) is refused here, before the pool
 * is asked: only a new pool has room for more. */
static void scale(shoal_control_t *c, shoal_control_conn_t *k, char *rest)
{
    char *name = word(&rest), *num = word(&rest), why[200];
    uint64_t n = 0;
    uint32_t min = 0, max = 0;
    bool bounds = shoal__num_bounds(num, SHOAL_POOL_MAX_SIZE, &min, &max, why, sizeof why);
    shoal_host_pool_t *hp;
    if (name == NULL || num == NULL || word(&rest) != NULL ||
        (!bounds && why[0] == '\0' && !number(num, SHOAL_POOL_MAX_SIZE, &n))) {
        shoal__control_say(k, "2 usage: scale POOL N | scale POOL MIN..MAX (numbers of workers)\n");
        return;
    }
    if (!bounds && why[0] != '\0') {
        shoal__control_say(k, "2 scale: %s\n", why);
        return;
    }
    if ((hp = pool_named(c->h, name)) == NULL) {
        not_a_pool(c, k, name, "scale");
        return;
    }
    shoal_pool_stats_t st;
    shoal__host_peek(hp, &st); /* the bounds now, and the size */
    /* What kind it is and whether its own source feeds it: its config's
     * (the record's spec is the pool actor's, which a swap rewrites). */
    if (hp->cp != NULL && hp->cp->kind == SHOAL_POOL_KIND_CHECKOUT) {
        shoal__control_say(k,
                           "1 %s is a checkout pool: its members are set by init and max in the "
                           "config, which a reload applies live (members in use untouched)\n",
                           name);
        return;
    }
    /* As the config: a size of 0 is what it refuses (autoscale never
     * shrinks a pool below 1 worker, so bounds from 0 are fine while the
     * size is not 0; a MAX of 0 is refused above). */
    bool fed = hp->cp != NULL && shoal__config_pool_fed(hp->cp);
    if (shoal__pool_stays_empty(st.autoscale, st.idle_timeout_ms, fed) && !bounds && n == 0 &&
        st.min_size == 0) {
        shoal__control_say(k,
                           fed ? "1 %s: %s would leave it with no worker, and nothing would "
                                 "start one: its autoscale sees no busy time and no queue wait "
                                 "with no worker, and its own source's items are never "
                                 "refused; keep at least 1 worker (a reload with idle_timeout "
                                 "allows 0)\n"
                               : "1 %s: %s would leave it with no worker, and nothing would "
                                 "start one: its autoscale grows on busy or wait_p99 only (0%% "
                                 "and no queue wait with no worker) and it has no idle_timeout; "
                                 "keep at least 1 worker (a reload with up.when on refused, or "
                                 "idle_timeout, allows 0)\n",
                           name, "0 workers");
        return;
    }
    if (!bounds) {
        uint32_t size = (uint32_t)n;
        k->arg = size;
        k->arg_min = st.min_size;
        k->arg_max = st.max_size;
        k->self_starting = st.autoscale != 0 || st.idle_timeout_ms != 0;
        job(c, k, SHOAL_CONTROL_OP_SCALE, hp, true, SHOAL_AGENT_CALL_PRIORITY, SHOAL_POOL_SET_SIZE,
            &size, sizeof size, ACTOR_TIMEOUT_MS);
        return;
    }
    if (hp->rec->remote != NULL) {
        shoal__control_say(k,
                           "1 %s runs its workers in a process of its own (isolation: process): "
                           "its bounds change with a reload, which replaces it\n",
                           name);
        return;
    }
    if (max > hp->rec->cap) {
        shoal__control_say(k,
                           "1 %s: max %" PRIu32 " is past %" PRIu32
                           ", the most workers it was started for (its max at start); a reload "
                           "with max %" PRIu32 " replaces it with a new pool under its name\n",
                           name, max, hp->rec->cap, max);
        return;
    }
    uint32_t b[2] = {min, max};
    k->arg_min = min;
    k->arg_max = max;
    k->was_size = st.target_size;
    k->was_min = st.min_size;
    k->was_max = st.max_size;
    job(c, k, SHOAL_CONTROL_OP_BOUNDS, hp, true, SHOAL_AGENT_CALL_PRIORITY, SHOAL_POOL_SET_BOUNDS,
        b, sizeof b, ACTOR_TIMEOUT_MS);
}

void shoal__control_request(shoal_control_t *c, shoal_control_conn_t *k, char *line, bool *stop)
{
    char *rest = line;
    char *cmd = word(&rest);
    if (cmd == NULL) {
        shoal__control_say(k, "2 empty request\n");
    } else if (strcmp(cmd, "status") == 0) {
        if (word(&rest) != NULL)
            shoal__control_say(k, "2 usage: status\n");
        else
            shoal__control_status(c, k);
    } else if (strcmp(cmd, "groups") == 0) {
        if (word(&rest) != NULL)
            shoal__control_say(k, "2 usage: groups\n");
        else
            shoal__control_groups(c, k);
    } else if (strcmp(cmd, "inspect") == 0) {
        char *name = word(&rest);
        shoal_host_pool_t *hp = name != NULL ? pool_to_inspect(c, name) : NULL;
        if (name != NULL && hp == NULL)
            not_a_pool(c, k, name, "inspect");
        else if (hp != NULL && shoal__pool_is_ended(hp->rec))
            shoal__control_say(
                k, "1 pool '%s' has ended (shoald is stopping): `status` has its counts\n", name);
        else
            job(c, k, hp ? SHOAL_CONTROL_OP_INSPECT_ONE : SHOAL_CONTROL_OP_INSPECT_ALL, hp, true,
                SHOAL_AGENT_INSPECT, 0, NULL, 0, ACTOR_TIMEOUT_MS);
    } else if (c->stopping && strcmp(cmd, "stop") == 0) {
        if (c->h->starting)
            shoal__control_say(k, "0 ok\nstopping already: the start is given up\n");
        else
            shoal__control_say(k, "0 ok\nstopping already: draining every pool\n");
    } else if (c->stopping) {
        shoal__control_say(k, "1 shoald is stopping (draining every pool): only status, groups and "
                              "inspect are served\n");
    } else if (shoal__control_busy_refuses(c, k, cmd)) {
        /* said why */
    } else if (strcmp(cmd, "send") == 0 || strcmp(cmd, "call") == 0) {
        send_or_call(c, k, cmd, rest);
    } else if (strcmp(cmd, "scale") == 0) {
        scale(c, k, rest);
    } else if (strcmp(cmd, "epic") == 0) {
        epic(c, k, rest);
    } else if (strcmp(cmd, "reload") == 0) {
        if (word(&rest) != NULL)
            shoal__control_say(k, "2 usage: reload\n");
        else
            shoal__control_reload_ask(c, k); /* answered when the host's next reload ends */
    } else if (strcmp(cmd, "diff") == 0) {
        while (*rest == ' ')
            rest++;
        shoal__control_diff_ask(c, k, *rest != '\0' ? rest : NULL); /* the main loop runs it */
    } else if (strcmp(cmd, "stop") == 0) {
        *stop = true;
        c->stopping = true; /* at once, also when a reload runs (served from within it) */
        /* Diffs waiting behind the one that runs will not run: told so at
         * once, not once it ends. */
        if (c->diffing)
            shoal__control_set_stopping(c, NULL);
        if (c->h->starting) /* no pool has worked yet: the start stops (control_reload.c) */
            shoal__control_say(k, "0 ok\nstopping: the start is given up; every pool started "
                                  "stops\n");
        else
            shoal__control_say(k, "0 ok\nstopping: draining every pool\n");
    } else {
        shoal__control_say(
            k,
            "2 unknown command '%.64s' (status, groups, inspect, send, call, scale, epic, reload, "
            "diff, stop)\n",
            cmd);
    }
}
