/* log.c - one line per event, to the embedder's log_fn or to stderr. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "runtime/runtime.h"

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void shoal__vlog(shoal_runtime_t *rt, int level, shoal_pid_t pid, const char *name, const char *fmt,
                 va_list ap)
{
    if (level > rt->log_level)
        return;
    char line[1024];
    int n;
    if (pid != SHOAL_PID_NONE)
        n = snprintf(line, sizeof line, "%s <%" PRIu32 ".%" PRIu32 ">%s%s: ",
                     level_names[level < 0   ? 0
                                 : level > 3 ? 3
                                             : level],
                     shoal__pid_slot(pid), shoal__pid_gen(pid), name ? " " : "", name ? name : "");
    else
        n = snprintf(line, sizeof line, "%s: ", level_names[level < 0 ? 0 : level > 3 ? 3 : level]);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (rt->log_fn)
        rt->log_fn(rt->log_user, level, line);
    else
        fprintf(stderr, "shoal %s\n", line);
}

void shoal__log(shoal_runtime_t *rt, int level, shoal_pid_t pid, const char *name, const char *fmt,
                ...)
{
    va_list ap;
    va_start(ap, fmt);
    shoal__vlog(rt, level, pid, name, fmt, ap);
    va_end(ap);
}
