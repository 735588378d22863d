/* fault_fmt.c - the words of a crash report (fault.h), written by hand into
 * a caller's buffer: the signal handler may not use stdio, malloc or
 * gmtime, so numbers, the UTC timestamp and JSON strings are formatted
 * here (strlen is async-signal-safe since POSIX.1-2016). Everything is pure and async-signal-safe;
 * tests/core/test_fault_format.c checks it against snprintf, strftime and a JSON parser's rules.
 */
#include "runtime/fault.h"

#include <signal.h>
#include <string.h>

#include "actor/actor.h"

void shoal__fault_put_n(shoal_fault_buf_t *b, const char *s, size_t n)
{
    if (b->cap == 0)
        return;
    size_t room = b->cap - 1 - b->len;
    if (n > room) {
        n = room;
        b->cut = true;
    }
    for (size_t i = 0; i < n; i++)
        b->p[b->len + i] = s[i];
    b->len += n;
    b->p[b->len] = '\0';
}

void shoal__fault_put(shoal_fault_buf_t *b, const char *s) { shoal__fault_put_n(b, s, strlen(s)); }

void shoal__fault_put_u64(shoal_fault_buf_t *b, uint64_t v)
{
    char d[20];
    size_t i = sizeof d;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    shoal__fault_put_n(b, d + i, sizeof d - i);
}

void shoal__fault_put_hex(shoal_fault_buf_t *b, uint64_t v)
{
    char d[18];
    size_t i = sizeof d;
    do {
        d[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v != 0);
    d[--i] = 'x';
    d[--i] = '0';
    shoal__fault_put_n(b, d + i, sizeof d - i);
}

void shoal__fault_put_json(shoal_fault_buf_t *b, const char *s, size_t n)
{
    shoal__fault_put_n(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            shoal__fault_put_n(b, esc, 2);
        } else if (ch < 0x20) {
            char esc[6] = {
                '\\', 'u', '0', '0', "0123456789abcdef"[ch >> 4], "0123456789abcdef"[ch & 15]};
            shoal__fault_put_n(b, esc, 6);
        } else {
            shoal__fault_put_n(b, s + i, 1);
        }
    }
    shoal__fault_put_n(b, "\"", 1);
}

/* v in exactly `width` digits, zero-padded (v < 10^width). */
static void put_padded(shoal_fault_buf_t *b, uint64_t v, int width)
{
    char d[8];
    for (int i = width - 1; i >= 0; i--) {
        d[i] = (char)('0' + v % 10);
        v /= 10;
    }
    shoal__fault_put_n(b, d, (size_t)width);
}

void shoal__fault_put_time(shoal_fault_buf_t *b, int64_t sec, long nsec)
{
    /* Days since 1970-01-01 to a civil date (H. Hinnant's days_from_civil,
     * inverted): eras of 400 years, March-based years. */
    int64_t days = sec / 86400, rem = sec % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;                                      /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
    int64_t day = doy - (153 * mp + 2) / 5 + 1;
    int64_t month = mp < 10 ? mp + 3 : mp - 9;
    int64_t year = yoe + era * 400 + (month <= 2);
    put_padded(b, (uint64_t)(year < 0 ? 0 : year > 9999 ? 9999 : year), 4);
    shoal__fault_put_n(b, "-", 1);
    put_padded(b, (uint64_t)month, 2);
    shoal__fault_put_n(b, "-", 1);
    put_padded(b, (uint64_t)day, 2);
    shoal__fault_put_n(b, "T", 1);
    put_padded(b, (uint64_t)(rem / 3600), 2);
    shoal__fault_put_n(b, ":", 1);
    put_padded(b, (uint64_t)(rem / 60 % 60), 2);
    shoal__fault_put_n(b, ":", 1);
    put_padded(b, (uint64_t)(rem % 60), 2);
    shoal__fault_put_n(b, ".", 1);
    put_padded(b, (uint64_t)(nsec / 1000000) % 1000, 3);
    shoal__fault_put_n(b, "Z", 1);
}

const char *shoal__fault_signame(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    default:
        return NULL;
    }
}

static void put_signal(shoal_fault_buf_t *b, int sig)
{
    const char *name = shoal__fault_signame(sig);
    if (name != NULL) {
        shoal__fault_put(b, name);
    } else {
        shoal__fault_put(b, "signal ");
        shoal__fault_put_u64(b, (uint64_t)(sig < 0 ? 0 : sig));
    }
}

/* "fatal signal SIGSEGV (address 0x0, not mapped) in pool ..., on ...;
 * the process ends" */
static void put_msg(shoal_fault_buf_t *b, const shoal_fault_report_t *r)
{
    shoal__fault_put(b, "fatal signal ");
    put_signal(b, r->sig);
    if (r->code > 0) { /* from the kernel: a fault at an address */
        shoal__fault_put(b, r->sig == SIGSEGV || r->sig == SIGBUS ? " (address "
                                                                  : " (instruction at ");
        shoal__fault_put_hex(b, r->addr);
        if (r->sig == SIGSEGV && r->code == SEGV_MAPERR)
            shoal__fault_put(b, ", not mapped");
        else if (r->sig == SIGSEGV && r->code == SEGV_ACCERR)
            shoal__fault_put(b, ", no access");
        shoal__fault_put(b, ")");
    } else if (r->sender_is_self) {
        shoal__fault_put(b, " (raised by this process)");
    } else {
        shoal__fault_put(b, " (sent by process ");
        shoal__fault_put_u64(b, (uint64_t)(r->sender < 0 ? 0 : r->sender));
        shoal__fault_put(b, ")");
    }
    if (r->pid != SHOAL_PID_NONE) {
        if (r->pool != NULL) {
            shoal__fault_put(b, " in pool ");
            shoal__fault_put(b, r->pool);
            shoal__fault_put(b, ", behaviour ");
            shoal__fault_put(b, r->behaviour);
        } else {
            shoal__fault_put(b, " in behaviour ");
            shoal__fault_put(b, r->behaviour);
            shoal__fault_put(b, " (not a pool's worker)");
        }
        shoal__fault_put(b, ", ");
        shoal__fault_put(b, r->origin != NULL ? r->origin : "built in (no plugin)");
        shoal__fault_put(b, ",");
    } else if (r->in_runtime) {
        shoal__fault_put(b, " in runtime code, not in any actor,");
    }
    shoal__fault_put(b, " on ");
    shoal__fault_put(b, r->thread);
    shoal__fault_put(b, "; the process ends");
}

/* The fields every line of a report starts with, as host_log.c's emit(). */
static void put_head(shoal_fault_buf_t *b, const shoal_fault_report_t *r, int format)
{
    if (format == SHOAL_FAULT_JSON) {
        shoal__fault_put(b, "{\"ts\":\"");
        shoal__fault_put_time(b, r->sec, r->nsec);
        shoal__fault_put(b, "\",\"gen\":");
        shoal__fault_put_u64(b, r->generation);
        shoal__fault_put(b, ",\"level\":\"error\"");
        if (r->pid != SHOAL_PID_NONE) {
            shoal__fault_put(b, ",\"pid\":\"");
            shoal__fault_put_u64(b, shoal__pid_slot(r->pid));
            shoal__fault_put(b, ".");
            shoal__fault_put_u64(b, shoal__pid_gen(r->pid));
            shoal__fault_put(b, "\",\"actor\":");
            shoal__fault_put_json(b, r->label, strlen(r->label));
        }
        shoal__fault_put(b, ",\"msg\":");
        return;
    }
    shoal__fault_put_time(b, r->sec, r->nsec);
    shoal__fault_put(b, " gen=");
    shoal__fault_put_u64(b, r->generation);
    shoal__fault_put(b, " error ");
    if (r->pid != SHOAL_PID_NONE) {
        shoal__fault_put(b, "<");
        shoal__fault_put_u64(b, shoal__pid_slot(r->pid));
        shoal__fault_put(b, ".");
        shoal__fault_put_u64(b, shoal__pid_gen(r->pid));
        shoal__fault_put(b, "> ");
        shoal__fault_put(b, r->label);
        shoal__fault_put(b, ": ");
    }
}

/* A JSON field: ,"key":"value" (null for NULL). */
static void put_field(shoal_fault_buf_t *b, const char *key, const char *value)
{
    shoal__fault_put(b, ",\"");
    shoal__fault_put(b, key);
    shoal__fault_put(b, "\":");
    if (value == NULL)
        shoal__fault_put(b, "null");
    else
        shoal__fault_put_json(b, value, strlen(value));
}

void shoal__fault_format_line(shoal_fault_buf_t *b, const shoal_fault_report_t *r, int format)
{
    put_head(b, r, format);
    if (format != SHOAL_FAULT_JSON) {
        put_msg(b, r);
        shoal__fault_put(b, "\n");
        return;
    }
    char text[2048];
    shoal_fault_buf_t msg = {text, 0, sizeof text, false};
    put_msg(&msg, r);
    shoal__fault_put_json(b, msg.p, msg.len);
    char sig[24];
    shoal_fault_buf_t s = {sig, 0, sizeof sig, false};
    put_signal(&s, r->sig);
    put_field(b, "signal", sig);
    if (r->pid != SHOAL_PID_NONE) {
        put_field(b, "pool", r->pool);
        put_field(b, "behaviour", r->behaviour);
        put_field(b, "origin", r->origin);
    }
    put_field(b, "thread", r->thread);
    shoal__fault_put(b, "}\n");
}

/* Room kept for the end of the block while frames are added. */
#define TAIL_ROOM 128u

/* Text: "    #i FRAME\n", or for a run of the same frame (a recursion)
 * "    #i-#j: the frame above, N more times\n". Returns the frames used. */
static size_t put_text_frame(shoal_fault_buf_t *b, const char *const *frames, size_t i,
                             size_t nframes)
{
    size_t same = 0;
    if (i != 0)
        while (i + same < nframes && strcmp(frames[i + same], frames[i - 1]) == 0)
            same++;
    shoal__fault_put(b, "    #");
    shoal__fault_put_u64(b, i);
    if (same != 0) {
        shoal__fault_put(b, "-#");
        shoal__fault_put_u64(b, i + same - 1);
        shoal__fault_put(b, ": the frame above, ");
        shoal__fault_put_u64(b, same);
        shoal__fault_put(b, same == 1 ? " more time\n" : " more times\n");
        return same;
    }
    shoal__fault_put(b, " ");
    shoal__fault_put(b, frames[i]);
    shoal__fault_put(b, "\n");
    return 1;
}

void shoal__fault_format_backtrace(shoal_fault_buf_t *b, const shoal_fault_report_t *r, int format,
                                   const char *const *frames, size_t nframes, bool deeper)
{
    bool json = format == SHOAL_FAULT_JSON;
    if (json) {
        put_head(b, r, format);
        shoal__fault_put(b, "\"backtrace\",\"backtrace\":[");
    } else {
        shoal__fault_put(b, nframes ? "  backtrace:\n" : "  backtrace: no frames found\n");
    }
    if (b->cut)
        return;
    /* Frames go in while TAIL_ROOM stays free; the first that does not
     * fit is taken out again, and the count of what is left out said. */
    size_t cap = b->cap;
    b->cap = cap > b->len + TAIL_ROOM ? cap - TAIL_ROOM : b->len + 1;
    size_t shown = 0;
    while (shown < nframes) {
        size_t mark = b->len, used = 1;
        if (json) {
            if (shown != 0)
                shoal__fault_put(b, ",");
            shoal__fault_put_json(b, frames[shown], strlen(frames[shown]));
        } else {
            used = put_text_frame(b, frames, shown, nframes);
        }
        if (b->cut) {
            b->len = mark;
            b->p[mark] = '\0';
            b->cut = false;
            break;
        }
        shown += used;
    }
    b->cap = cap;
    size_t left = nframes - shown;
    if (json) {
        shoal__fault_put(b, "]");
        if (left != 0) {
            shoal__fault_put(b, ",\"frames_left_out\":");
            shoal__fault_put_u64(b, left);
        }
        if (deeper)
            shoal__fault_put(b, ",\"deeper_frames_not_taken\":true");
        shoal__fault_put(b, "}\n");
        return;
    }
    if (left != 0) {
        shoal__fault_put(b, "    (");
        shoal__fault_put_u64(b, left);
        shoal__fault_put(b, " more frames left out: the report is full)\n");
    }
    if (deeper)
        shoal__fault_put(b, "    (deeper frames not taken)\n");
}
