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
    if (d->file[0] && d->line)
        snprintf(buf, size, "%s:%u:%u: %s", d->file, d->line, d->col, d->msg);
    else if (d->file[0])
        snprintf(buf, size, "%s: %s", d->file, d->msg);
    else
        snprintf(buf, size, "%s", d->msg);
    /* One line, whatever a value it quotes holds (runtime/runtime.h). */
    char clean[sizeof d->file + sizeof d->msg + 32];
    const char *c = shoal__log_clean(buf, clean, sizeof clean);
    if (c != buf)
        snprintf(buf, size, "%s", c);
    return buf;
}
