/* log.c - one line per event, to the embedder's log_fn or to stderr.
 *
 * A line written as text (stderr here, shoald's text log) is one line:
 * what it says may come from a plugin, a config's strings or a payload a
 * plugin logs, and a newline in it would make a second line that reads as
 * the host's own (a forged event for a log shipper), a carriage return
 * would hide text, and an escape sequence would reach the operator's
 * terminal. shoal__log_clean writes control characters -- C0, DEL, and C1
 * as UTF-8 (U+0080..U+009F) -- as \n, \r, \t, \xNN or \u00NN; other bytes
 * as they are (a backslash too). An embedder's log_fn gets the line as it
 * was formatted: its format (JSON, say) escapes as it must.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* The bytes of the control character at p (C0, DEL, or a C1 one in UTF-8),
 * 0 if there is none. */
static size_t control_at(const unsigned char *p)
{
    if (p[0] < 0x20 || p[0] == 0x7f)
        return 1;
    return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f ? 2 : 0;
}

const char *shoal__log_clean(const char *line, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)line;
    while (*p != '\0' && control_at(p) == 0)
        p++;
    if (*p == '\0')
        return line;
    size_t n = 0;
    for (p = (const unsigned char *)line; *p != '\0'; p++) {
        char esc[8] = {(char)*p, '\0'};
        size_t c = control_at(p);
        if (c == 2)
            snprintf(esc, sizeof esc, "\\u%04x", p[1]);
        else if (c == 1)
            snprintf(esc, sizeof esc,
                     *p == '\n'   ? "\\n"
                     : *p == '\r' ? "\\r"
                     : *p == '\t' ? "\\t"
                                  : "\\x%02x",
                     *p);
        size_t k = strlen(esc);
        if (n + k >= size)
            break; /* cut, never mid-escape */
        memcpy(buf + n, esc, k);
        n += k;
        p += c == 2; /* both bytes of a C1 */
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
    if (rt->log_fn)
        rt->log_fn(rt->log_user, level, line);
    else
        fprintf(stderr, "shoal %s\n", shoal__log_clean(line, clean, sizeof clean));
}

void shoal__log(shoal_runtime_t *rt, int level, shoal_pid_t pid, const char *name, const char *fmt,
                ...)
{
    va_list ap;
    va_start(ap, fmt);
    shoal__vlog(rt, level, pid, name, fmt, ap);
    va_end(ap);
}
