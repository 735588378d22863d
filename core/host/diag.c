/* diag.c - see diag.h. */
#include "host/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

void shoal__diag_set(shoal_diag_t *d, const char *file, uint32_t line, uint32_t col,
                     const char *fmt, ...)
{
    if (d == NULL)
        return;
    snprintf(d->file, sizeof d->file, "%s", file ? file : "");
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
}

const char *shoal__diag_format(const shoal_diag_t *d, char *buf, size_t size)
{
    char raw[sizeof d->file + sizeof d->msg + 32];
    if (d->file[0] && d->line)
        snprintf(raw, sizeof raw, "%s:%u:%u: %s", d->file, d->line, d->col, d->msg);
    else if (d->file[0])
        snprintf(raw, sizeof raw, "%s: %s", d->file, d->msg);
    else
        snprintf(raw, sizeof raw, "%s", d->msg);
    /* One line, whatever a value it quotes holds (runtime/runtime.h). */
    if (shoal__log_clean(raw, buf, size) == raw)
        snprintf(buf, size, "%s", raw);
    return buf;
}
