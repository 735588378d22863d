/* test_fault_handler.c - the crash reporter's handler (runtime/fault.h), in
 * forked children that die of the signal: what they write, which signal
 * ends them, that the socket file this process made is gone after, and
 * that a fault inside the handler ends the child instead of looping; and
 * its setting up: installed once, the old handlers put back, only the
 * socket made is unlinked, each thread's alternate stack with its guard.
 * The report's words and lines: test_fault_format.c.
 * tests/host/test_faults.sh does the same through shoald and a plugin.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actor/ctx.h"
#include "actor/group.h"
#include "runtime/fault.h"
#include "sched/worker.h"
#include "support.h"

/* ---- the handler, in forked children ------------------------------------- */

/* A child's end: how it died and what it wrote. */
typedef struct child_s {
    int status; /* waitpid's, or -1: still alive after 20 s (killed) */
    char out[16384];
} child_t;

/* Runs body in a child whose crash reports go to a pipe; waits for it. */
static void run_child(void (*body)(int fd), child_t *c)
{
    int p[2];
    CU_ASSERT_FATAL(pipe(p) == 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        body(p[1]);
        _exit(0); /* body did not die: the parent sees exit 0 */
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    size_t len = 0;
    c->status = -1;
    double end = shoal_test_now() + 20;
    bool eof = false;
    while (shoal_test_now() < end) {
        ssize_t n = eof ? -1 : read(p[0], c->out + len, sizeof c->out - 1 - len);
        if (n > 0) {
            len += (size_t)n;
            continue;
        }
        eof |= n == 0 || len == sizeof c->out - 1;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            c->status = st;
            while ((n = read(p[0], c->out + len, sizeof c->out - 1 - len)) > 0)
                len += (size_t)n; /* what it wrote last */
            break;
        }
        shoal_test_nap();
    }
    if (c->status == -1) { /* a hang: the test fails, the child goes */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    c->out[len] = '\0';
    close(p[0]);
}

static bool died_of(const child_t *c, int sig)
{
    if (c->status == -1 || !WIFSIGNALED(c->status) || WTERMSIG(c->status) != sig) {
        printf("\n  child status %d (wanted signal %d); it wrote:\n%s", c->status, sig, c->out);
        return false;
    }
    return true;
}

static char unlink_me[PATH_MAX];
static struct stat unlink_id; /* the socket made at unlink_me */
static int raised;

/* A socket file at path, as the control socket is made; its stat in *st.
 * The descriptor is closed: the file stays. */
static bool make_socket_file(const char *path, struct stat *st)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && lstat(path, st) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static void raise_on_main_thread(int fd)
{
    shoal__fault_thread_start(NULL, "the test's main thread");
    if (shoal__fault_install(fd, SHOAL_FAULT_TEXT) != 0)
        return;
    shoal__fault_set_generation(7);
    shoal__fault_set_unlink(unlink_me, unlink_id.st_dev, unlink_id.st_ino);
    raise(raised);
}

static void each_fatal_signal_is_reported_then_kills(void)
{
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        snprintf(unlink_me, sizeof unlink_me, "/tmp/test_fault.%d.sock", (int)getpid());
        unlink(unlink_me);
        CU_ASSERT_FATAL(make_socket_file(unlink_me, &unlink_id));
        raised = sigs[i];
        child_t c;
        run_child(raise_on_main_thread, &c);
        CU_ASSERT(died_of(&c, sigs[i]));
        char want[160];
        snprintf(want, sizeof want,
                 " gen=7 error fatal signal %s (raised by this process) on the test's main "
                 "thread; the process ends\n  backtrace:\n    #0 ",
                 shoal__fault_signame(sigs[i]));
        /* A timestamp (checked above), then the rest. */
        const char *at = strchr(c.out, ' ');
        CU_ASSERT(at == c.out + 24 && c.out[23] == 'Z');
        CU_ASSERT(at != NULL && strncmp(at, want, strlen(want)) == 0);
        struct stat st;
        CU_ASSERT(stat(unlink_me, &st) != 0 && errno == ENOENT); /* removed on the way out */
        unlink(unlink_me);
    }
}

/* A dispatcher worker in a callback, made by hand: what a report reads. */
static shoal_worker_t fake_worker;
static shoal_actor_back_t fake_back;
static shoal_actor_ext_t fake_ext;
static shoal_group_t fake_pool = {.name = "bad"};
static const shoal_behaviour_t fake_beh = {.name = "fault"};
static void fake_callback(const char *origin)
{
    fake_worker.id = 1;
    fake_worker.ctx.cur = (shoal_env_t *)&fake_ext; /* not NULL: in a callback */
    fake_worker.ctx.self = (shoal_pid_t)5 << 32 | 17;
    fake_worker.ctx.name = "bad/fault";
    fake_worker.ctx.b = &fake_back;
    fake_worker.ctx.group = &fake_pool;
    fake_back.beh = &fake_beh;
    fake_back.ext = &fake_ext;
    fake_ext.hold.origin = origin;
    shoal__fault_thread_start(&fake_worker, NULL);
}

static int *volatile nowhere;

/* A real SIGSEGV at 0: neither UBSan's null check nor TSan's shadow lookup
 * may get there first. */
__attribute__((no_sanitize("null", "thread"))) static void store_to_null(void) { *nowhere = 1; }

static void segv_in_callback(int fd)
{
    if (shoal__fault_install(fd, SHOAL_FAULT_JSON) != 0)
        return;
    shoal__fault_set_generation(3);
    fake_callback("plugin fault 1.0.0 (/x/fault.so)");
    store_to_null();
}

static void a_callback_names_its_actor_pool_and_plugin(void)
{
    child_t c;
    run_child(segv_in_callback, &c);
    CU_ASSERT(died_of(&c, SIGSEGV));
    const char *want =
        ",\"gen\":3,\"level\":\"error\",\"pid\":\"17.5\",\"actor\":\"bad/fault\",\"msg\":\"fatal "
        "signal SIGSEGV (address 0x0, not mapped) in pool bad, behaviour fault, plugin fault 1.0.0 "
        "(/x/fault.so), on dispatcher thread 1; the process ends\",\"signal\":\"SIGSEGV\","
        "\"pool\":\"bad\",\"behaviour\":\"fault\",\"origin\":\"plugin fault 1.0.0 (/x/fault.so)\","
        "\"thread\":\"dispatcher thread 1\"}\n{";
    const char *at = strstr(c.out, "\",\"gen\"");
    CU_ASSERT(strncmp(c.out, "{\"ts\":\"", 7) == 0);
    CU_ASSERT(at != NULL && strncmp(at + 1, want, strlen(want)) == 0);
    CU_ASSERT(strstr(c.out, ",\"msg\":\"backtrace\",\"backtrace\":[\"") != NULL);
    if (at == NULL || strncmp(at + 1, want, strlen(want)) != 0)
        printf("\n  child wrote:\n%s", c.out);
}

static void segv_with_bad_origin(int fd)
{
    if (shoal__fault_install(fd, SHOAL_FAULT_TEXT) != 0)
        return;
    fake_callback((const char *)16); /* reading it faults inside the handler */
    raise(SIGBUS);
}

static void a_fault_in_the_handler_ends_the_process(void)
{
    child_t c;
    run_child(segv_with_bad_origin, &c);
    /* The second fault (SIGSEGV, blocked in the handler) ends the child at
     * once: no loop, no hang, and no line (it was being formatted). */
    CU_ASSERT(died_of(&c, SIGSEGV));
    CU_ASSERT_STRING_EQUAL(c.out, "");
}

/* ---- installing, threads ------------------------------------------------------ */

static void install_is_once_and_uninstall_puts_back(void)
{
    struct sigaction before[5], now;
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (int i = 0; i < 5; i++)
        sigaction(sigs[i], NULL, &before[i]);
    int fd = open("/dev/null", O_WRONLY);
    CU_ASSERT_EQUAL(shoal__fault_install(fd, SHOAL_FAULT_TEXT), 0);
    CU_ASSERT_EQUAL(shoal__fault_install(fd, SHOAL_FAULT_TEXT), -EALREADY);
    for (int i = 0; i < 5; i++) {
        sigaction(sigs[i], NULL, &now);
        CU_ASSERT((now.sa_flags & (SA_SIGINFO | SA_ONSTACK)) == (SA_SIGINFO | SA_ONSTACK));
    }
    shoal__fault_uninstall();
    for (int i = 0; i < 5; i++) {
        sigaction(sigs[i], NULL, &now);
        CU_ASSERT(now.sa_handler == before[i].sa_handler);
        int ours = SA_SIGINFO | SA_ONSTACK;
        CU_ASSERT((now.sa_flags & ours) == (before[i].sa_flags & ours));
    }
    /* Installed again after that. */
    CU_ASSERT_EQUAL(shoal__fault_install(fd, SHOAL_FAULT_TEXT), 0);
    shoal__fault_uninstall();
    close(fd);
    char longer[PATH_MAX + 8];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    CU_ASSERT_EQUAL(shoal__fault_set_unlink(longer, 0, 0), -ENAMETOOLONG);
    CU_ASSERT_EQUAL(shoal__fault_set_unlink(NULL, 0, 0), 0);
}

/* A crash (or a stop) removes the socket file this process made, and
 * nothing that has taken its path since: another process's socket, a
 * regular file (an adversarial run: kill -SEGV removed a file put there). */
static void only_the_socket_made_is_unlinked(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "/tmp/test_fault_own.%d.sock", (int)getpid());
    unlink(path);
    struct stat made, other, st;
    CU_ASSERT_FATAL(make_socket_file(path, &made));
    /* Held as the control socket holds its file (control.c: path_fd): its
     * inode number is not given to the next file made there. */
    int held = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    CU_ASSERT_FATAL(held >= 0);
    /* Removed by hand, and a second socket made there. */
    CU_ASSERT_EQUAL(unlink(path), 0);
    CU_ASSERT_FATAL(make_socket_file(path, &other));
    CU_ASSERT_FALSE(shoal__unlink_own(path, made.st_dev, made.st_ino));
    CU_ASSERT_EQUAL(lstat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_ino, other.st_ino);
    /* A regular file there now. */
    CU_ASSERT_EQUAL(unlink(path), 0);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(fstat(fd, &other) == 0);
    close(fd);
    CU_ASSERT_FALSE(shoal__unlink_own(path, other.st_dev, other.st_ino)); /* not a socket */
    CU_ASSERT_EQUAL(lstat(path, &st), 0);
    /* Nothing there. */
    CU_ASSERT_EQUAL(unlink(path), 0);
    CU_ASSERT_FALSE(shoal__unlink_own(path, made.st_dev, made.st_ino));
    close(held);
    /* Its own: removed. */
    CU_ASSERT_FATAL(make_socket_file(path, &made));
    CU_ASSERT_TRUE(shoal__unlink_own(path, made.st_dev, made.st_ino));
    CU_ASSERT(lstat(path, &st) != 0 && errno == ENOENT);
}

/* The permissions of the mapping holding addr (/proc/self/maps), or "". */
static const char *perms_at(uintptr_t addr)
{
    static char perms[8];
    perms[0] = '\0';
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return perms;
    char row[512];
    while (fgets(row, sizeof row, f) != NULL) {
        uintptr_t lo, hi;
        char p[8];
        if (sscanf(row, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, p) == 3 && lo <= addr &&
            addr < hi) {
            snprintf(perms, sizeof perms, "%s", p);
            break;
        }
    }
    fclose(f);
    return perms;
}

static void a_thread_gets_an_alternate_stack_and_gives_it_back(void)
{
    stack_t before, mine, after;
    CU_ASSERT_EQUAL(sigaltstack(NULL, &before), 0);
    shoal__fault_thread_start(NULL, "the test's main thread");
    CU_ASSERT_EQUAL(sigaltstack(NULL, &mine), 0);
    CU_ASSERT(!(mine.ss_flags & SS_DISABLE));
    CU_ASSERT(mine.ss_size >= 64 * 1024);
    CU_ASSERT(mine.ss_sp != before.ss_sp);
    /* The page below it is the guard: mapped, no access. */
    CU_ASSERT_STRING_EQUAL(perms_at((uintptr_t)mine.ss_sp - 1), "---p");
    CU_ASSERT_STRING_EQUAL(perms_at((uintptr_t)mine.ss_sp), "rw-p");
    shoal__fault_thread_end();
    CU_ASSERT_EQUAL(sigaltstack(NULL, &after), 0);
    CU_ASSERT_EQUAL(after.ss_flags & SS_DISABLE, before.ss_flags & SS_DISABLE);
    if (!(before.ss_flags & SS_DISABLE))
        CU_ASSERT(after.ss_sp == before.ss_sp && after.ss_size == before.ss_size);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"each fatal signal is reported, then kills", each_fatal_signal_is_reported_then_kills},
        {"a callback names its actor, pool and plugin", a_callback_names_its_actor_pool_and_plugin},
        {"a fault in the handler ends the process", a_fault_in_the_handler_ends_the_process},
        {"install is once, uninstall puts back", install_is_once_and_uninstall_puts_back},
        {"only the socket made is unlinked", only_the_socket_made_is_unlinked},
        {"a thread gets an alternate stack and gives it back",
         a_thread_gets_an_alternate_stack_and_gives_it_back},
        {NULL, NULL},
    };
    return shoal_test_run("fault: the handler, installed", cases);
}
