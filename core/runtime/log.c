/* log.c - one line per event, to the embedder's log_fn or to stderr.
 *
 * One line: what a line says may come from a plugin, a config's strings or
 * a payload a plugin logs, and a newline in it would make a second line
 * that looks like the host's own (a forged event for a log shipper), a
 * carriage return would hide text, and an escape sequence would drive the
 * operator's terminal. Control characters are written as \n, \r, \t or
 * \xNN; other bytes (UTF-8 included) as they are.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

const char *shoal__log_clean(const char *line, char *buf, size_t size)
{
    const char *p = line;
    while (*p != '\0' && !is_control((unsigned char)*p))
        p++;
    if (*p == '\0')
        return line;
    size_t n = 0;
    for (p = line; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        char esc[5] = {(char)c, '\0'};
        if (c == '\n')
            memcpy(esc, "\\n", 3);
        else if (c == '\r')
            memcpy(esc, "\\r", 3);
        else if (c == '\t')
            memcpy(esc, "\\t", 3);
        else if (is_control(c))
            snprintf(esc, sizeof esc, "\\x%02x", c);
        size_t k = strlen(esc);
        if (n + k >= size)
            break; /* cut, never mid-escape */
        memcpy(buf + n, esc, k);
        n += k;
    }
    buf[n] = '\0';
    return buf;
}

void shoal__vlog(shoal_runtime_t *rt, int level, shoal_pid_t pid, const char *name, const char *fmt,
                 va_list ap)
{
    if (level > rt->log_level)
        return;
    char line[1024], clean[1024];
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
    const char *out = shoal__log_clean(line, clean, sizeof clean);
    if (rt->log_fn)
        rt->log_fn(rt->log_user, level, out);
    else
        fprintf(stderr, "shoal %s\n", out);
}

void shoal__log(shoal_runtime_t *rt, int level, shoal_pid_t pid, const char *name, const char *fmt,
                ...)
{
    va_list ap;
    va_start(ap, fmt);
    shoal__vlog(rt, level, pid, name, fmt, ap);
    va_end(ap);
}
