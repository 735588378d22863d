/* schema.c - the tables of the config schema (schema.h), and printing them
 * (shoald --help-config).
 */
#include "host/schema.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/un.h>

#include "host/config.h"
#include "shoal/runtime.h"

#define NKEYS(a) (sizeof(a) / sizeof(a)[0])
#define YEAR_MS INT64_C(31536000000) /* the longest duration a key takes */

static const char *const log_formats[] = {"text", "json", NULL};
static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const isolations[] = {"none", "process", NULL};
/* Indexes are SHOAL_POOL_KIND_FORWARD, _PULL and _CHECKOUT. */
static const char *const kinds[] = {"forward", "pull", "checkout", NULL};
/* By SHOAL_POOL_STRATEGY_* (shoal/pool.h). */
/* By value: SHOAL_POOL_STRATEGY_* (lifo is 3). */
static const char *const strategies[] = {"fifo", "least_loaded", "round_robin", "lifo", NULL};

/* The longest socket path (sockaddr_un's sun_path, less its NUL). */
#define SOCKET_PATH_MAX ((int64_t)sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

#define RT(f) offsetof(shoal_config_t, runtime.f)
static const shoal_schema_key_t runtime_keys[] = {
    {"threads", SHOAL_KEY_THREADS, RT(threads), 1, 1024, NULL, NULL, "auto",
     "dispatcher threads; auto = max(online CPUs, 2)"},
    {"throughput", SHOAL_KEY_U32, RT(throughput), 1, 1 << 20, NULL, NULL, "32",
     "messages an actor handles per turn before others run"},
    {"spin", SHOAL_KEY_SPIN, RT(spin_us), 0, 1000000, NULL, NULL, "50us",
     "how long an idle thread looks for work before it sleeps"},
    {"max_actors", SHOAL_KEY_U32, RT(max_actors), 16, 1 << 30, NULL, NULL, "16777216",
     "live actors at most"},
    /* max: the resolved path's bytes, at most (a socket's address holds no
     * more: shoald would refuse it only at its start). */
    {"control", SHOAL_KEY_PATH, RT(control), 0, SOCKET_PATH_MAX, NULL, NULL, "none",
     "control socket (mode 0600), relative to this file"},
    {"max_queued", SHOAL_KEY_LIMIT, RT(max_queued), 1, INT64_C(1) << 40, NULL, NULL, "off",
     "messages all unbounded mailboxes may hold; past it sends into them get SHOAL_EBUSY"},
    {"stall_warn", SHOAL_KEY_DURATION, RT(stall_warn_ms), 1, SHOAL_STALL_WARN_MAX_MS, NULL, NULL,
     "1s", "a handler running longer is logged and shown in status and inspect"},
    {"max_extra_threads", SHOAL_KEY_AUTO_U32, RT(max_extra_threads), 0, 1024, NULL, NULL, "auto",
     "threads started while handlers are stuck; auto = threads, 0 = none. With that many "
     "stuck, their pools' other members wait (new members too, while inits are stuck)"},
    {"plugin_path", SHOAL_KEY_DIRS, RT(plugin_path), 0, 0, NULL, NULL, "[]",
     "directories searched first for a plugin NAME.so, relative to this file; then "
     "$SHOAL_PLUGIN_PATH, then the install's lib/shoal/plugins"},
};
static const shoal_schema_t runtime_schema = {"runtime", runtime_keys, NKEYS(runtime_keys)};

static const shoal_schema_key_t log_keys[] = {
    {"format", SHOAL_KEY_ENUM, offsetof(shoal_config_t, log.format), 0, 0, log_formats, NULL,
     "text", "text or json (one object per line)"},
    {"level", SHOAL_KEY_ENUM, offsetof(shoal_config_t, log.level), 0, 0, log_levels, NULL, "info",
     "error, warn, info or debug"},
};
static const shoal_schema_t log_schema = {"log", log_keys, NKEYS(log_keys)};

static const shoal_schema_key_t shutdown_keys[] = {
    {"drain", SHOAL_KEY_DURATION, offsetof(shoal_config_t, shutdown.drain_ms), 0, YEAR_MS, NULL,
     NULL, "10s", "on SIGTERM/SIGINT, how long pools may drain; still busy then: shoald exits 3"},
};
static const shoal_schema_t shutdown_schema = {"shutdown", shutdown_keys, NKEYS(shutdown_keys)};

#define RS(f) offsetof(shoal_config_pool_t, restart.f)
static const shoal_schema_key_t restart_keys[] = {
    {"max", SHOAL_KEY_U32, RS(max), 0, 1000000, NULL, NULL, "5",
     "restarts allowed within `within`; past it the pool is degraded"},
    {"within", SHOAL_KEY_DURATION, RS(within_ms), 1, YEAR_MS, NULL, NULL, "5s",
     "the restart window"},
    {"backoff", SHOAL_KEY_DURATION, RS(backoff_ms), 1, YEAR_MS, NULL, NULL, "100ms",
     "first retry once degraded; doubles up to 64x"},
};
static const shoal_schema_t restart_schema = {"restart", restart_keys, NKEYS(restart_keys)};

/* A source's: the same keys, in a source's words (down, not degraded). */
static const shoal_schema_key_t source_restart_keys[] = {
    {"max", SHOAL_KEY_U32, RS(max), 0, 1000000, NULL, NULL, "5",
     "restarts allowed within `within`; past it the source is down"},
    {"within", SHOAL_KEY_DURATION, RS(within_ms), 1, YEAR_MS, NULL, NULL, "5s",
     "the restart window"},
    {"backoff", SHOAL_KEY_DURATION, RS(backoff_ms), 1, YEAR_MS, NULL, NULL, "100ms",
     "first retry once down; doubles up to 64x"},
};
static const shoal_schema_t source_restart_schema = {"restart", source_restart_keys,
                                                     NKEYS(source_restart_keys)};

#define PL(f) offsetof(shoal_config_pool_t, f)
#define AS(f) offsetof(shoal_config_pool_t, autoscale.f)
#define CO(f) offsetof(shoal_config_pool_t, checkout.f)
static const shoal_schema_key_t up_keys[] = {
    {"when", SHOAL_KEY_WHEN, PL(up_when_at), 0, 0, NULL, NULL, "busy > 80%",
     "pressure: one condition or a list of them, any of which holds -- busy > N% (time in "
     "handlers over wall time), wait_p99 > DURATION (queue wait), refused > N (sends refused "
     "a second)"},
    {"for", SHOAL_KEY_DURATION, AS(up_for_ms), 0, YEAR_MS, NULL, NULL, "1s",
     "pressure this long (at every reading, 4 a second) before the pool grows"},
    {"step", SHOAL_KEY_U32, AS(up_step), 1, SHOAL_POOL_MAX_SIZE, NULL, NULL, "1",
     "workers a growth adds at least (it adds as many as the load needs)"},
};
static const shoal_schema_t up_schema = {"up", up_keys, NKEYS(up_keys)};

static const shoal_schema_key_t down_keys[] = {
    {"when", SHOAL_KEY_WHEN, PL(down_when_at), 0, 0, NULL, NULL, "half of up's",
     "calm: conditions on the signals up.when names, all of which hold -- busy < N%, wait_p99 "
     "< DURATION, refused < N; below up's: between the two nothing moves"},
    {"idle", SHOAL_KEY_DURATION, AS(down_idle_ms), 0, YEAR_MS, NULL, NULL, "30s",
     "calm this long before the pool shrinks"},
    {"step", SHOAL_KEY_U32, AS(down_step), 1, SHOAL_POOL_MAX_SIZE, NULL, NULL, "1",
     "workers a shrink removes (never below the size whose busy ratio would be the target)"},
};
static const shoal_schema_t down_schema = {"down", down_keys, NKEYS(down_keys)};

static const shoal_schema_key_t autoscale_keys[] = {
    {"min", SHOAL_KEY_U32, PL(as_min), 0, SHOAL_POOL_MAX_SIZE, NULL, NULL, "the pool's min",
     "fewest workers (the pool's min: give it here or there)"},
    {"max", SHOAL_KEY_U32, PL(as_max), 1, SHOAL_POOL_MAX_SIZE, NULL, NULL, "(required)",
     "most workers (the pool's max)"},
    {"up", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &up_schema, "", "when and how the pool grows"},
    {"down", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &down_schema, "", "when and how it shrinks"},
    {"cooldown", SHOAL_KEY_DURATION, AS(cooldown_ms), 0, YEAR_MS, NULL, NULL, "5s",
     "no decision this long after any change of size (a decision, a scale, a reload)"},
};
static const shoal_schema_t autoscale_schema = {"autoscale", autoscale_keys, NKEYS(autoscale_keys)};

static const shoal_schema_key_t pool_keys[] = {
    {"worker", SHOAL_KEY_WORKER, 0, 0, 0, NULL, NULL, "(required)",
     "PLUGIN.BEHAVIOUR, or a pool mapping (each worker is then a pool)"},
    {"size", SHOAL_KEY_U32, PL(size), 0, SHOAL_POOL_MAX_SIZE, NULL, NULL, "4", "workers at start"},
    {"min", SHOAL_KEY_U32, PL(min_size), 0, SHOAL_POOL_MAX_SIZE, NULL, NULL, "1",
     "fewest workers resizing may leave"},
    {"max", SHOAL_KEY_U32, PL(max_size), 1, SHOAL_POOL_MAX_SIZE, NULL, NULL, "max(size, 1024)",
     "most workers resizing may add"},
    {"mailbox", SHOAL_KEY_MAILBOX, PL(mailbox), 1, SHOAL_MAILBOX_MAX, NULL, NULL, "64",
     "per worker: a number >= 1, or unbounded"},
    {"args", SHOAL_KEY_ARGS, 0, 0, 0, NULL, NULL, "{}",
     "checked against the behaviour's args schema, given to each worker's init"},
    {"restart", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &restart_schema, "", "restart policy"},
    {"warn_queue", SHOAL_KEY_LIMIT, PL(warn_queue), 1, INT64_C(1) << 40, NULL, NULL, "100000",
     "log once when more messages than this are queued in the pool (and once below)"},
    {"isolation", SHOAL_KEY_ENUM, PL(isolation), 0, 0, isolations, NULL, "none",
     "process: the workers run in a child process; a crash there ends only it"},
    {"kind", SHOAL_KEY_ENUM, PL(kind), 0, 0, kinds, NULL, "forward",
     "forward: a send goes to a worker's mailbox; pull: into the pool's buffer, and workers "
     "take items when they have room (see PULL POOLS below); checkout: consumers take a "
     "member for themselves and give it back (see CHECKOUT POOLS below)"},
    {"strategy", SHOAL_KEY_ENUM, PL(strategy), 0, 0, strategies, NULL, "fifo",
     "forward: how a send picks its worker -- fifo: each sender rotates on its own; "
     "least_loaded: the fewest queued, idle first; round_robin: one rotation for all senders. "
     "checkout: which free member a take gets -- fifo: the one free the longest (use spreads "
     "over every member); lifo: the one given back last (a light load keeps few members busy, "
     "and max_age culls the rest). A reload applies it live"},
    {"prefetch", SHOAL_KEY_U32, PL(prefetch), 1, SHOAL_POOL_MAX_PREFETCH, NULL, NULL, "1",
     "pull only: items one worker holds at most; a reload applies it live"},
    {"buffer", SHOAL_KEY_U32, PL(buffer), 0, SHOAL_POOL_MAX_BUFFER, NULL, NULL, "1024",
     "pull only: items the pool holds for its workers; a send past it gets SHOAL_EBUSY; a "
     "reload applies it live"},
    {"redeliver", SHOAL_KEY_U32, PL(redeliver), 0, SHOAL_CONFIG_MAX_REDELIVER, NULL, NULL, "0",
     "pull only: times an item whose worker failed goes to another worker (0: at most once)"},
    {"dead_letter", SHOAL_KEY_POOL_REF, 0, 0, 0, NULL, NULL, "none",
     "pull only: NAME of another pool under pools: that gets an item after its last "
     "redelivery (none: it is dropped, counted); no cycles"},
    {"source", SHOAL_KEY_SOURCE, 0, 0, 0, NULL, NULL, "none",
     "pull only: PLUGIN.BEHAVIOUR asked for items when the buffer has room (shoal/pull.h)"},
    {"source_args", SHOAL_KEY_SOURCE_ARGS, 0, 0, 0, NULL, NULL, "{}",
     "pull only: checked against the source behaviour's args schema, given to its init"},
    {"idle_timeout", SHOAL_KEY_TIMEOUT, PL(idle_timeout_ms), 10, YEAR_MS, NULL, NULL, "never",
     "a worker idle this long ends, down to min; then a send that finds every worker full "
     "starts one (up to max); a reload applies it live"},
    {"max_waiting", SHOAL_KEY_U32, PL(max_waiting), 0, 1 << 24, NULL, NULL, "0",
     "senders that may wait for room at once (send_wait, SHOAL_MSG_ROOM); one more gets "
     "SHOAL_EOVERLOAD; 0: no bound; a reload applies it live"},
    {"member", SHOAL_KEY_MEMBER, 0, 0, 0, NULL, NULL, "(checkout)",
     "checkout only, instead of worker: PLUGIN.BEHAVIOUR every member runs"},
    {"init", SHOAL_KEY_U32, PL(size), 0, SHOAL_POOL_MAX_SIZE, NULL, NULL, "1",
     "checkout only, instead of size: members started with the pool (and culled down to)"},
    {"add_member_retry", SHOAL_KEY_U32, CO(add_member_retry), 1, 1000, NULL, NULL, "1",
     "checkout only: starts tried for a member a taker waits for, before takers and "
     "transactions hear SHOAL_ENOMEMBERS (then starts wait restart.backoff, doubling)"},
    {"member_start_timeout", SHOAL_KEY_DURATION, CO(member_start_timeout_ms), 1, YEAR_MS, NULL,
     NULL, "10s",
     "checkout only: a member's init must end within this (else the pool's start fails; "
     "later, it is a failed start, counting against max until its init ends)"},
    {"cull_interval", SHOAL_KEY_TIMEOUT, CO(cull_interval_ms), 10, YEAR_MS, NULL, NULL, "1m",
     "checkout only: how often free members unused past max_age end, down to init (never: "
     "no culling)"},
    {"max_age", SHOAL_KEY_DURATION, CO(max_age_ms), 0, YEAR_MS, NULL, NULL, "30s",
     "checkout only: a free member unused this long is culled"},
    {"max_lifetime", SHOAL_KEY_TIMEOUT, CO(max_lifetime_ms), 10, YEAR_MS, NULL, NULL, "never",
     "checkout only: a member this old is replaced when it is next returned (never in use)"},
    {"max_lifetime_jitter", SHOAL_KEY_DURATION, CO(max_lifetime_jitter_ms), 0, YEAR_MS, NULL, NULL,
     "0", "checkout only: each member's max_lifetime, plus or minus up to this"},
    {"queue_max", SHOAL_KEY_U32, CO(queue_max), 0, 1 << 20, NULL, NULL, "50",
     "checkout only: takers that may wait for a member at once; one more (or any, at 0) gets "
     "SHOAL_ENOMEMBERS"},
    {"lease", SHOAL_KEY_DURATION, CO(lease_ms), 1, YEAR_MS, NULL, NULL, "30s",
     "checkout only: a thread (not an actor) holds a member this long at most; then it is "
     "destroyed and replaced"},
    {"group", SHOAL_KEY_GROUP, 0, 0, 0, NULL, NULL, "none",
     "checkout only: NAME of the group of checkout pools it is in (shoal_take_group)"},
    {"autoscale", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &autoscale_schema, "off",
     "the pool sizes itself within min..max on pressure and calm (see ELASTIC POOLS below); a "
     "reload applies it live"},
};
const shoal_schema_t shoal__schema_pool = {"POOL", pool_keys, NKEYS(pool_keys)};

static const shoal_schema_key_t metrics_keys[] = {
    {"listen", SHOAL_KEY_LISTEN, offsetof(shoal_config_t, metrics.listen), 0, 0, NULL, NULL, "none",
     "serve Prometheus GET /metrics here (port 0: any free port, logged); a reload rebinds it"},
};
static const shoal_schema_t metrics_schema = {"metrics", metrics_keys, NKEYS(metrics_keys)};

static const shoal_schema_key_t source_keys[] = {
    {"actor", SHOAL_KEY_ACTOR, 0, 0, 0, NULL, NULL, "(required)",
     "PLUGIN.BEHAVIOUR: one actor, spawned after every pool, stopped before they drain"},
    {"args", SHOAL_KEY_ARGS, 0, 0, 0, NULL, NULL, "{}",
     "checked against the behaviour's args schema, given to its init"},
    {"restart", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &source_restart_schema, "",
     "restart policy: past max within `within` it stays down, retried after backoff"},
};
const shoal_schema_t shoal__schema_source = {"SOURCE", source_keys, NKEYS(source_keys)};

static const shoal_schema_key_t top_keys[] = {
    {"runtime", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &runtime_schema, "", "the dispatcher"},
    {"log", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &log_schema, "", "log lines"},
    {"shutdown", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &shutdown_schema, "", "stopping"},
    {"metrics", SHOAL_KEY_SECTION, 0, 0, 0, NULL, &metrics_schema, "", "the Prometheus endpoint"},
    {"plugins", SHOAL_KEY_PLUGINS, 0, 0, 0, NULL, NULL, "{}",
     "NAME: path of a .so (relative to this file) or a plugin name (no '/': NAME.so on the "
     "plugin path); or a list of names"},
    {"pools", SHOAL_KEY_POOLS, 0, 0, 0, NULL, &shoal__schema_pool, "(required)",
     "NAME: POOL (write `pools: {}` for none)"},
    {"sources", SHOAL_KEY_SOURCES, 0, 0, 0, NULL, &shoal__schema_source, "{}",
     "NAME: SOURCE (singleton actors that feed pools; names distinct from pools')"},
};
const shoal_schema_t shoal__schema_top = {"", top_keys, NKEYS(top_keys)};

/* ---- --help-config ------------------------------------------------------- */

static const char *type_name(const shoal_schema_key_t *k, char *buf, size_t size)
{
    switch (k->type) {
    case SHOAL_KEY_U32:
        snprintf(buf, size, "integer %" PRId64 "..%" PRId64, k->min, k->max);
        return buf;
    case SHOAL_KEY_THREADS:
    case SHOAL_KEY_AUTO_U32:
        snprintf(buf, size, "auto | %" PRId64 "..%" PRId64, k->min, k->max);
        return buf;
    case SHOAL_KEY_DURATION:
        return "duration (250ms, 2s, 1m)";
    case SHOAL_KEY_TIMEOUT:
        return "never | duration >= 10ms";
    case SHOAL_KEY_SPIN:
        return "duration (us, ms, s), <= 1s";
    case SHOAL_KEY_ENUM: {
        size_t n = 0;
        buf[0] = '\0';
        for (size_t i = 0; k->choices[i] && n < size; i++)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? " | " : "", k->choices[i]);
        return buf;
    }
    case SHOAL_KEY_PATH:
        return "path";
    case SHOAL_KEY_MAILBOX:
        return "1.. | unbounded";
    case SHOAL_KEY_SECTION:
        return "mapping";
    case SHOAL_KEY_PLUGINS:
        return "NAME: path | name; or [name]";
    case SHOAL_KEY_DIRS:
        return "list of paths";
    case SHOAL_KEY_POOLS:
        return "mapping NAME: POOL";
    case SHOAL_KEY_WORKER:
        return "PLUGIN.BEHAVIOUR | POOL";
    case SHOAL_KEY_SOURCES:
        return "mapping NAME: SOURCE";
    case SHOAL_KEY_ACTOR:
        return "PLUGIN.BEHAVIOUR";
    case SHOAL_KEY_ARGS:
    case SHOAL_KEY_SOURCE_ARGS:
        return "mapping";
    case SHOAL_KEY_WHEN:
        return "condition | [condition]";
    case SHOAL_KEY_MEMBER:
        return "PLUGIN.BEHAVIOUR";
    case SHOAL_KEY_GROUP:
        return "NAME";
    case SHOAL_KEY_SOURCE:
        return "PLUGIN.BEHAVIOUR";
    case SHOAL_KEY_POOL_REF:
        return "NAME (a pool)";
    case SHOAL_KEY_LIMIT:
        snprintf(buf, size, "off | %" PRId64 "..%" PRId64, k->min, k->max);
        return buf;
    case SHOAL_KEY_LISTEN:
        return "IPv4:PORT | [IPv6]:PORT";
    }
    return "?";
}

static void help_schema(FILE *out, const shoal_schema_t *s, const char *prefix)
{
    char type[128], path[128];
    for (size_t i = 0; i < s->nkeys; i++) {
        const shoal_schema_key_t *k = &s->keys[i];
        snprintf(path, sizeof path, "%s%s", prefix, k->key);
        fprintf(out, "  %-26s %-30s %-16s %s\n", path, type_name(k, type, sizeof type), k->def,
                k->doc);
        if (k->type == SHOAL_KEY_SECTION) {
            char sub[160];
            snprintf(sub, sizeof sub, "%s.", path);
            help_schema(out, k->sub, sub);
        }
    }
}

void shoal__config_help(FILE *out)
{
    fprintf(out, "shoald config (YAML). Paths are relative to the config file.\n\n");
    fprintf(out, "  %-26s %-30s %-16s %s\n", "key", "type", "default", "what");
    help_schema(out, &shoal__schema_top, "");
    fprintf(out, "\nPOOL (each entry under pools:):\n");
    help_schema(out, &shoal__schema_pool, "");
    fprintf(out,
            "\nPULL POOLS (kind: pull):\n"
            "  Only a pull pool takes prefetch, buffer, redeliver, dead_letter, source and\n"
            "  source_args; a forward pool refuses them. Its mailbox stays: each worker's own,\n"
            "  for messages sent to that worker directly (work comes from the buffer).\n"
            "  A pull pool is a pool under pools: with worker: PLUGIN.BEHAVIOUR: nested pools\n"
            "  (either way) and isolation: process are not supported for pull pools.\n"
            "  Reload: size, prefetch and buffer are applied live; a new worker or args swaps\n"
            "  the workers; a new kind, source, source_args, redeliver or dead_letter (or a\n"
            "  dead_letter pool that is itself replaced) replaces the pool: a new one starts\n"
            "  under the name and the old one drains what it holds, so nothing is lost.\n");
    fprintf(out,
            "\nELASTIC POOLS (idle_timeout, max_waiting, autoscale):\n"
            "  For a pool under pools: whose worker is PLUGIN.BEHAVIOUR (forward or pull), not\n"
            "  isolated. autoscale reads three signals 4 times a second: busy (time in handlers\n"
            "  over wall time, per worker), wait_p99 (queue wait) and refused (sends refused a\n"
            "  second). Pressure (any up.when condition) at every reading for up.for grows the\n"
            "  pool at once to what the load needs (at least up.step more); calm (every\n"
            "  down.when condition) for down.idle shrinks it by down.step, never below what the\n"
            "  load needs; nothing is decided for cooldown after any change. Each decision is\n"
            "  one log line with the signals.\n"
            "  autoscale.min and .max are the pool's bounds (max is given there; min there or\n"
            "  as the pool's min, not both); size, if not given, starts at min. Example:\n"
            "    autoscale: { max: 32, up: { when: [busy > 80%%, refused > 0], for: 1s },\n"
            "                 down: { idle: 30s }, cooldown: 5s }\n"
            "  Reload: these, min and max are applied live (max up to the pool's max at its\n"
            "  start; past it the pool is replaced); the running size is kept unless size\n"
            "  changed in the file. A worker that blocks holds a dispatcher thread: a pool of\n"
            "  blocking handlers grown past runtime.threads gains mailboxes, not concurrency.\n");
    fprintf(out,
            "\nCHECKOUT POOLS (kind: checkout):\n"
            "  A consumer takes a member for itself (shoal_take, shoal_runtime_take), uses its\n"
            "  PID, and gives it back; a send or call to the pool is a transaction on one\n"
            "  member (shoalctl call POOL ... does one). It takes member and init (not worker\n"
            "  and size), max (default: init), the checkout keys above, args, mailbox,\n"
            "  restart and strategy (fifo: a take gets the member free the longest; lifo:\n"
            "  the one given back last, so a light load leaves the rest to be culled); never\n"
            "  the pull or elastic keys, nesting, or isolation.\n"
            "  Example:\n"
            "    db: { kind: checkout, member: conn.conn, init: 2, max: 8, queue_max: 50,\n"
            "          group: dbs, args: { connect: 5ms } }\n"
            "  Reload: init, max, strategy and the checkout keys are applied live (members in\n"
            "  use are not touched); a new member, args, group or restart replaces the pool:\n"
            "  a new one starts under the name, the old one drains (each member in use ends\n"
            "  when returned).\n");
    fprintf(out, "\nSOURCE (each entry under sources:):\n");
    help_schema(out, &shoal__schema_source, "");
}
