/* host_log.c - the host's log lines: the runtime's and its own, each with
 * its time, the config generation and its level, in the config's format
 * (text, or one JSON object a line), to the host's log sink. See host.h.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "host/output.h"
#include "runtime/fault.h"
#include "runtime/runtime.h"

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

/* line: as the runtime formats it, "level <slot.gen> name: text" or
 * "level: text". */
static void emit(shoal_host_t *h, int level, const char *line)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[48];
    size_t w = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + w, sizeof when - w, ".%03dZ", (int)(ts.tv_nsec / 1000000));
    const char *lv = level_names[level < 0 ? 0 : level > 3 ? 3 : level];
    /* Skip the level word the runtime put first. */
    const char *rest = line;
    size_t n = strlen(lv);
    if (strncmp(rest, lv, n) == 0 && (rest[n] == ' ' || rest[n] == ':'))
        rest += n + (rest[n] == ':' ? 2 : 1);
    pthread_mutex_lock(&h->log_lock);
    if (h->log_format == SHOAL_LOG_FORMAT_JSON) {
        fprintf(h->log_out, "{\"ts\":\"%s\",\"gen\":%" PRIu64 ",\"level\":\"%s\"", when, h->log_gen,
                lv);
        const char *msg = rest;
        if (rest[0] == '<') { /* "<slot.gen> name: text" */
            const char *sp = strchr(rest, ' '), *colon = strstr(rest, ": ");
            if (sp != NULL && colon != NULL && colon > sp) {
                fprintf(h->log_out, ",\"pid\":\"%.*s\",\"actor\":", (int)(sp - rest - 2), rest + 1);
                char actor[160];
                snprintf(actor, sizeof actor, "%.*s", (int)(colon - sp - 1), sp + 1);
                json_string(h->log_out, actor);
                msg = colon + 2;
            }
        }
        if (h->log_tag[0] != '\0') {
            fputs(",\"process\":", h->log_out);
            json_string(h->log_out, h->log_tag);
        }
        fputs(",\"msg\":", h->log_out);
        json_string(h->log_out, msg);
        fputs("}\n", h->log_out);
    } else {
        char clean[2048]; /* one line, whatever the text (runtime.h) */
        fprintf(h->log_out, "%s gen=%" PRIu64 " %s %s%s%s%s\n", when, h->log_gen, lv,
                h->log_tag[0] ? "[" : "", h->log_tag, h->log_tag[0] ? "] " : "",
                shoal__log_clean(rest, clean, sizeof clean));
    }
    fflush(h->log_out);
    /* relaxed: a count the table compares with what it saw (table.c) */
    atomic_fetch_add_explicit(&h->log_lines, 1, memory_order_relaxed);
    pthread_mutex_unlock(&h->log_lock);
}

void shoal__host_runtime_log(void *user, int level, const char *line) { emit(user, level, line); }

void shoal__host_set_generation(shoal_host_t *h, uint64_t gen, int log_format)
{
    pthread_mutex_lock(&h->log_lock); /* emit() reads both under it, on any thread */
    h->log_gen = gen;
    h->log_format = log_format;
    pthread_mutex_unlock(&h->log_lock);
    /* A crash report says what the log lines say. */
    shoal__fault_set_generation(gen);
    shoal__fault_set_format(log_format == SHOAL_LOG_FORMAT_JSON ? SHOAL_FAULT_JSON
                                                                : SHOAL_FAULT_TEXT);
}

void shoal__host_log(shoal_host_t *h, int level, const char *fmt, ...)
{
    /* The runtime's level: fixed at start, like its own lines' (any thread). */
    if (level > h->rt_log_level)
        return;
    char line[2048]; /* a reload line names every change */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    emit(h, level, line);
}

void shoal__host_log_drops(shoal_host_t *h, shoal_output_t *log, uint64_t *said)
{
    uint64_t dropped = shoal__output_dropped(log);
    if (dropped != *said && shoal__output_pump(log) == 0) {
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "log: %" PRIu64 " line%s dropped while stderr was not read",
                        dropped - *said, dropped - *said == 1 ? "" : "s");
        *said = dropped;
    }
}
