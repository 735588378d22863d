/* control_conn.h - between control.c (the socket, its connections, their
 * buffers and deadlines), control_cmd.c (what each request does) and
 * control_reload.c (the socket while a reload runs). Not for other
 * modules: they use control.h.
 *
 * A connection goes READING (its request line arrives) -> WAITING (for a
 * job the agent runs; only some requests), RELOAD (for the host's next
 * reload: `reload`) or DIFF (for the main loop to run it: `diff`,
 * control_diff.c) -> WRITING (the reply, whole, leaves as the socket
 * takes it) -> closed. All on the host thread.
 */
#ifndef SHOAL_HOST_CONTROL_CONN_H
#define SHOAL_HOST_CONTROL_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/agent.h"
#include "host/control.h"

#define SHOAL_CONTROL_REQUEST_MAX (64 * 1024)     /* bytes of a request line, newline included */
#define SHOAL_CONTROL_REQUEST_MS 2000             /* for the whole request, from accept */
#define SHOAL_CONTROL_REPLY_MAX (4 * 1024 * 1024) /* bytes of a reply */
#define SHOAL_CONTROL_REPLY_MS 5000               /* for the whole reply, from when it is ready */
#define SHOAL_CONTROL_GRACE_MS 500   /* the host's deadline on a job: its timeout plus this */
#define SHOAL_CONTROL_RELOADS_MAX 16 /* `reload` requests waiting at once (control_reload.c) */
#define SHOAL_CONTROL_DIFFS_MAX 4    /* `diff` requests waiting at once (control_diff.c) */

typedef enum shoal_control_state_e {
    SHOAL_CONTROL_READING = 0,
    SHOAL_CONTROL_WAITING = 1,
    SHOAL_CONTROL_WRITING = 2,
    SHOAL_CONTROL_RELOAD = 3, /* no deadline: a reload ends (control_reload.c) */
    SHOAL_CONTROL_DIFF = 4,   /* no deadline: the loader's bound each plugin (control_diff.c) */
} shoal_control_state_t;

/* What a job's answer is made into (control_cmd.c). */
typedef enum shoal_control_op_e {
    SHOAL_CONTROL_OP_INSPECT_ONE = 2,
    SHOAL_CONTROL_OP_INSPECT_ALL = 3,
    SHOAL_CONTROL_OP_CALL = 4,
    SHOAL_CONTROL_OP_SCALE = 5,
    SHOAL_CONTROL_OP_EPIC = 6,
    SHOAL_CONTROL_OP_BOUNDS = 7, /* scale POOL MIN..MAX */
} shoal_control_op_t;

/* A pool a job asked, by the name and state it had then. */
typedef struct shoal_control_target_s {
    char *name;
    bool draining;
} shoal_control_target_t;

typedef struct shoal_control_conn_s {
    int fd; /* -1 once closed */
    shoal_control_state_t state;
    uint64_t deadline_ms; /* of the current state, on the monotonic clock */
    char *in;             /* the request so far */
    size_t in_len, in_cap;
    char *out; /* the reply */
    size_t out_len, out_cap, out_sent;
    bool too_large; /* something was not added to out: over SHOAL_CONTROL_REPLY_MAX */
    /* WAITING: the job (set by control_cmd.c) */
    uint64_t job;
    shoal_control_op_t op;
    uint64_t job_timeout_ms;
    shoal_control_target_t *targets;
    size_t ntargets;
    uint32_t arg;              /* scale: the size asked */
    uint32_t arg_min, arg_max; /* scale: the pool's bounds, which the size is clamped to;
                                  scale MIN..MAX: the bounds asked */
    bool self_starting;        /* scale: autoscale or idle_timeout starts a worker when it has
                                  none; else at 0 it refuses every send until scaled up */
    uint32_t was_size;         /* scale MIN..MAX: the target before, */
    uint32_t was_min, was_max; /* and the bounds */
    /* epic with ARGS: its answer is the pool's status for them (the args
     * are the agent's from the submission: agent.c frees them unless the
     * pool took them) */
    bool epic_args;
    /* RELOAD: the reloads begun when it asked (control_reload.c); DIFF:
     * its place in the order requests came (c->asked) */
    uint64_t ticket;
    char *diff_path; /* DIFF: the file, until its diff runs */
} shoal_control_conn_t;

struct shoal_control_s {
    int fd;
    char *path;
    dev_t dev; /* the socket file bound at path: only it is unlinked */
    ino_t ino;
    int path_fd; /* an O_PATH descriptor of it, held: while it is open no
                  * other file can get its inode number (-1: none) */
    shoal_host_t *h;
    const char *config;
    shoal_agent_t *agent;
    shoal_control_conn_t *conns[SHOAL_CONTROL_CONNS_MAX];
    size_t nconns;
    size_t npolled; /* conns[0..npolled) were in the last pollfds, in order */
    uint64_t next_job;
    uint64_t accepted, dropped, refused; /* connections, since start */
    bool stopping; /* shoald drains every pool: only status, groups and inspect */
    /* The host's reloads (control_reload.c, through a host hook): whether
     * one runs (then the socket is served from inside it, and what would
     * change the pools waits), since when, how many have begun, and
     * whether a `reload` asked since the last one began. */
    bool reloading;
    uint64_t reload_since_ns;
    uint64_t reload_from; /* the generation it began from */
    uint64_t reloads_begun;
    bool reload_asked;
    bool serving; /* inside shoal__control_handle: never entered twice */
    /* `diff` and `reload` requests in the order they came: each diff's
     * ticket and the first reload asked since the last began (when
     * reload_asked) are numbered from it; the diffs asked before that
     * reload run before it (control_diff.c). */
    uint64_t asked;
    uint64_t reload_asked_at;
    /* Diffs (control_diff.c): whether one runs (then the socket is served
     * from inside it), since when, its file and what it does. */
    bool diffing;
    uint64_t diff_since_ns;
    const char *diff_running, *diff_step;
};

/* Appends to k's reply; past SHOAL_CONTROL_REPLY_MAX, nothing more is
 * added and k->too_large is set (the reply is then refused whole). */
void shoal__control_put(shoal_control_conn_t *k, const void *s, size_t n);
void shoal__control_say(shoal_control_conn_t *k, const char *fmt, ...) SHOAL_PRINTF(2, 3);

/* The reply in k->out is whole: it goes out from now on, under its
 * deadline (control.c). */
void shoal__control_reply_ready(shoal_control_t *c, shoal_control_conn_t *k);

/* control_reload.c: a `reload` request: k waits (RELOAD) for the host's
 * next reload, which the main loop runs (shoal__control_reload_wanted). */
void shoal__control_reload_ask(shoal_control_t *c, shoal_control_conn_t *k);
/* Whether request `cmd` waits for shoald's start (send, call, scale,
 * epic, diff) or for the reload that runs (scale, epic: they would change
 * what the reload is changing; diff: a plan against a host half
 * reloaded). Then k's reply says so ("1 busy: ..."). */
bool shoal__control_busy_refuses(shoal_control_t *c, shoal_control_conn_t *k, const char *cmd);
/* Whether name is a pool or source that shoald's start or the running
 * reload has yet to start or commit; then k's reply says so ("1 pool 'db'
 * is not running yet: ..."), where it would say "unknown pool". */
bool shoal__control_not_yet(shoal_control_t *c, shoal_control_conn_t *k, const char *name);
/* control_diff.c: a `diff` of path (NULL: the host's own config file):
 * k waits (DIFF) for the main loop to run it (shoal__control_diff_run),
 * or is told busy. */
void shoal__control_diff_ask(shoal_control_t *c, shoal_control_conn_t *k, const char *path);
/* Whether a diff asked before the reload asked waits: it runs first. */
bool shoal__control_diff_first(const shoal_control_t *c);
/* Hooks c into h's reloads (host.h): SHOAL_OK or SHOAL_ELIMIT. */
int shoal__control_reload_hook(shoal_control_t *c, shoal_host_t *h);

/* Does the request `line` (NUL-terminated, without its newline) of k. Either
 * the whole reply is in k->out when it returns, or k->job is set (with op,
 * job_timeout_ms, targets) and the job was handed to the agent. Sets *stop
 * for `stop`. */
void shoal__control_request(shoal_control_t *c, shoal_control_conn_t *k, char *line, bool *stop);

/* status: every fact of the host in one reply, from the pools' records
 * (control_status.c). */
void shoal__control_status(shoal_control_t *c, shoal_control_conn_t *k);
/* groups: each checkout group's pools and members (control_status.c). */
void shoal__control_groups(shoal_control_t *c, shoal_control_conn_t *k);

/* Completes k's reply from its job's answer d, or from nothing (d NULL:
 * the host's deadline passed first: each pool is unresponsive). */
void shoal__control_answer(shoal_control_t *c, shoal_control_conn_t *k,
                           const shoal_agent_done_t *d);

#endif
