/* fault.c - the crash reporter (fault.h): the handler of the fatal signals,
 * and each thread's alternate signal stack.
 *
 * PROCESS-GLOBAL STATE
 * Everything else in shoal hangs off a shoal_runtime_t. This file cannot:
 * a signal's disposition belongs to the process, and a handler gets no
 * argument to find a runtime by. So the reporter's settings (`R` below: the
 * log descriptor, the format, the generation, the file to unlink) are one
 * static record, and the thread a signal lands on is found through
 * thread-locals set when shoal starts the thread (shoal__fault_thread_start):
 * its dispatcher worker, whose ctx names the actor in a callback, or its
 * role. Nothing else in shoal may grow from this.
 *
 * WHAT THE HANDLER MAY DO
 * Only async-signal-safe things: no stdio, no malloc, no locks. It reads
 * atomics and thread-locals (initial-exec TLS: no allocation on first
 * touch), formats by hand (fault_fmt.c) into a static buffer, and writes
 * with write(2) to a descriptor opened at install. Frames are symbolised by
 * backtrace_symbols_fd (AS-safe) into a pipe opened at install and read
 * back, so that a JSON report can quote them; backtrace() itself ran once
 * at install, so its first-call set-up (dlopen of libgcc_s, malloc) is done.
 *
 * PROTOCOL
 *   - One report at a time: the handler takes `busy` (exchange).
 *     A fatal signal on a second thread meanwhile waits for the first to
 *     end the process (bounded: 10 s, then it dies of its own signal).
 *   - A fatal signal inside the handler cannot re-enter it: every signal is
 *     blocked while it runs (sa_mask), and the kernel delivers a fault whose
 *     signal is blocked with the default action. So a report that faults
 *     ends the process at once, with that signal.
 *   - After the report: unlink the control socket (if it is still the one
 *     this process made: shoal__unlink_own), restore SIG_DFL for the
 *     signal and raise it (it stays pending while the handler runs), then
 *     return: the process dies of the same signal, with or without a fault
 *     to re-execute (abort(), kill -SEGV).
 *   - The settings are atomics written by the host thread and read by the
 *     handler [relaxed: each is one value; nothing else is published with
 *     it]. The unlink path (and its dev, ino) is copied into `R` before `has_unlink`
 *     is set [release; the handler's acquire load pairs with it].
 */
#include "runtime/fault.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "actor/ctx.h"
#include "runtime/runtime.h"
#include "actor/group.h"
#include "sched/worker.h"

#define MAX_FRAMES 64
#define FRAME_MAX 512           /* bytes of one symbolised frame kept */
#define ALT_STACK (64u * 1024u) /* per thread, beside a guard page */

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static struct {
    _Atomic int installed;
    int fd;           /* the log, dup'ed at install */
    int sym_r, sym_w; /* the pipe frames are symbolised through */
    struct sigaction old[NFATAL];
    _Atomic int format; /* SHOAL_FAULT_* */
    _Atomic uint64_t generation;
    _Atomic int has_unlink; /* unlink_path is set (see PROTOCOL) */
    char unlink_path[PATH_MAX];
    dev_t unlink_dev; /* the file made there (shoal__unlink_own) */
    ino_t unlink_ino;
    _Atomic int busy; /* a report is being written */
    /* the handler's, while it holds busy */
    char line[8192];
    char trace[32768];
    char frames[MAX_FRAMES][FRAME_MAX];
    /* Names of the private copies' descriptors (fault.h): a slot's name is
     * written, then its fd stored [release]; the handler loads fd
     * [acquire], then reads the name. Freed by storing -1 [release]. */
    struct {
        _Atomic int fd;
        char name[PATH_MAX];
    } names[SHOAL_FAULT_NAMES];
    pthread_mutex_t names_lock; /* writers only */
} R = {.fd = -1, .sym_r = -1, .sym_w = -1, .names_lock = PTHREAD_MUTEX_INITIALIZER};

void shoal__fault_name_fd(int fd, const char *name)
{
    pthread_mutex_lock(&R.names_lock);
    for (size_t i = 0; i < SHOAL_FAULT_NAMES; i++) {
        /* A slot never used has fd 0, which no copy has (stdin). */
        int at = atomic_load_explicit(&R.names[i].fd, memory_order_relaxed);
        if (at != 0 && at != -1)
            continue;
        size_t n =
            strlen(name) < sizeof R.names[i].name - 1 ? strlen(name) : sizeof R.names[i].name - 1;
        memcpy(R.names[i].name, name, n);
        R.names[i].name[n] = '\0';
        /* release: the name is written before a handler can find it. */
        atomic_store_explicit(&R.names[i].fd, fd, memory_order_release);
        break;
    }
    pthread_mutex_unlock(&R.names_lock);
}

void shoal__fault_unname_fd(int fd)
{
    pthread_mutex_lock(&R.names_lock);
    /* release (the store of -1): no pairing -- -1 matches no descriptor the
     * handler looks up (rename_frame's acquire load), and nothing is
     * published with it. */
    for (size_t i = 0; i < SHOAL_FAULT_NAMES; i++)
        if (atomic_load_explicit(&R.names[i].fd, memory_order_relaxed) == fd)
            atomic_store_explicit(&R.names[i].fd, -1, memory_order_release);
    pthread_mutex_unlock(&R.names_lock);
}

/* "/proc/self/fd/N(...": the name given to N instead, in place (AS-safe). */
static void rename_frame(char *frame)
{
    static const char prefix[] = "/proc/self/fd/";
    if (strncmp(frame, prefix, sizeof prefix - 1) != 0)
        return;
    int fd = 0;
    char *p = frame + sizeof prefix - 1;
    while (*p >= '0' && *p <= '9')
        fd = fd * 10 + (*p++ - '0');
    for (size_t i = 0; i < SHOAL_FAULT_NAMES; i++) {
        /* acquire: pairs with shoal__fault_name_fd's release. */
        if (atomic_load_explicit(&R.names[i].fd, memory_order_acquire) != fd)
            continue;
        const char *name = R.names[i].name;
        size_t nl = strlen(name), rest = strlen(p);
        if (nl + rest >= FRAME_MAX)
            return;
        memmove(frame + nl, p, rest + 1);
        memcpy(frame, name, nl);
        return;
    }
}

/* The calling thread, for a report. initial-exec: read by the handler,
 * which must not allocate (a dynamic TLS block may be made on first use). */
#define FAULT_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static FAULT_TLS struct shoal_worker_s *tls_worker;
static FAULT_TLS const char *tls_role;
static FAULT_TLS void *tls_stack; /* our mapping: guard page + ALT_STACK */
static FAULT_TLS size_t tls_stack_len;
static FAULT_TLS stack_t tls_prev; /* the alternate stack before ours */

/* ---- settings ------------------------------------------------------------ */

void shoal__fault_set_generation(uint64_t generation)
{
    atomic_store_explicit(&R.generation, generation, memory_order_relaxed);
}

void shoal__fault_set_format(int format)
{
    atomic_store_explicit(&R.format, format, memory_order_relaxed);
}

bool shoal__unlink_own(const char *path, dev_t dev, ino_t ino)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_dev != dev || st.st_ino != ino)
        return false;
    return unlink(path) == 0;
}

int shoal__fault_set_unlink(const char *path, dev_t dev, ino_t ino)
{
    atomic_store_explicit(&R.has_unlink, 0, memory_order_relaxed);
    if (path == NULL)
        return 0;
    size_t n = strlen(path);
    if (n >= sizeof R.unlink_path)
        return -ENAMETOOLONG;
    memcpy(R.unlink_path, path, n + 1);
    R.unlink_dev = dev;
    R.unlink_ino = ino;
    /* release: pairs with the handler's acquire: the path is copied. */
    atomic_store_explicit(&R.has_unlink, 1, memory_order_release);
    return 0;
}

/* ---- the handler --------------------------------------------------------- */

/* fd may be non-blocking (shoald's stderr, host/output.h): a reader that
 * does not read is waited for, 2 s in all at most, and then the report is
 * cut rather than the process kept from dying. It goes in writes of whole
 * lines of at most PIPE_BUF bytes, each atomic into a pipe, so that another
 * writer of the same pipe (an isolated pool's child and shoald share
 * stderr) cuts none of its lines, nor it theirs. */
static void write_all(int fd, const char *p, size_t n)
{
    int patience_ms = 2000;
    while (n != 0) {
        ssize_t w = write(fd, p, shoal__line_piece(p, n));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && patience_ms > 0) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            poll(&pf, 1, 100); /* async-signal-safe */
            patience_ms -= 100;
            continue;
        }
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* The program counter the signal interrupted, or 0. */
static uintptr_t interrupted_pc(const void *uctx)
{
    const ucontext_t *uc = uctx;
    if (uc == NULL)
        return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    return 0;
#endif
}

/* Fills r with what this thread was doing. */
static void describe_thread(shoal_fault_report_t *r, char *thread, size_t size)
{
    shoal_fault_buf_t t = {thread, 0, size, false};
    struct shoal_worker_s *w = tls_worker;
    r->pid = SHOAL_PID_NONE;
    if (w != NULL) {
        shoal__fault_put(&t, "dispatcher thread ");
        shoal__fault_put_u64(&t, w->id);
        const struct shoal_ctx_s *ctx = &w->ctx;
        if (ctx->cur == NULL) {
            r->in_runtime = true;
        } else {
            /* In a callback: the worker owns the actor, its record is
             * stable, and the module its code came from is held by it. */
            r->pid = ctx->self;
            r->label = ctx->name;
            r->behaviour = ctx->b->beh->name;
            r->pool = ctx->group != NULL ? ctx->group->name : NULL;
            r->origin = ctx->b->ext != NULL ? ctx->b->ext->hold.origin : NULL;
        }
    } else if (tls_role != NULL) {
        shoal__fault_put(&t, tls_role);
    } else {
        shoal__fault_put(&t, "a thread shoal did not start (tid ");
        shoal__fault_put_u64(&t, (uint64_t)syscall(SYS_gettid));
        shoal__fault_put(&t, ")");
    }
    r->thread = thread;
}

/* Symbolises frame through the pipe into R.frames[i]. */
static const char *symbolise(void *frame, size_t i)
{
    char *out = R.frames[i];
    backtrace_symbols_fd(&frame, 1, R.sym_w);
    ssize_t n = read(R.sym_r, out, FRAME_MAX - 1);
    /* Empty the pipe: what a frame had past FRAME_MAX is dropped. */
    char rest[256];
    while (read(R.sym_r, rest, sizeof rest) > 0)
        ;
    if (n <= 0)
        return "?";
    if (out[n - 1] == '\n')
        n--;
    out[n] = '\0';
    rename_frame(out);
    return out;
}

static void report(int sig, const siginfo_t *si, void *uctx)
{
    int format = atomic_load_explicit(&R.format, memory_order_relaxed);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char thread[96];
    shoal_fault_report_t r = {
        .sec = now.tv_sec,
        .nsec = now.tv_nsec,
        .generation = atomic_load_explicit(&R.generation, memory_order_relaxed),
        .sig = sig,
        .code = si != NULL ? si->si_code : 0,
        .addr = si != NULL ? (uint64_t)(uintptr_t)si->si_addr : 0,
        .sender = si != NULL ? si->si_pid : 0,
    };
    r.sender_is_self = r.sender == getpid();
    describe_thread(&r, thread, sizeof thread);

    /* The line first: if unwinding faults, it is out already. */
    shoal_fault_buf_t b = {R.line, 0, sizeof R.line, false};
    shoal__fault_format_line(&b, &r, format);
    write_all(R.fd, b.p, b.len);

    void *frames[MAX_FRAMES];
    int n = backtrace(frames, MAX_FRAMES);
    /* Start at the frame the signal interrupted: the ones before it are
     * this handler's (and a sanitizer's around it), and the trampoline. */
    int first = 0;
    uintptr_t pc = interrupted_pc(uctx);
    for (int i = 0; i < n && pc != 0; i++) {
        if ((uintptr_t)frames[i] == pc) {
            first = i;
            break;
        }
    }
    const char *text[MAX_FRAMES];
    size_t k = 0;
    for (int i = first; i < n; i++, k++)
        text[k] = symbolise(frames[i], k);
    shoal_fault_buf_t t = {R.trace, 0, sizeof R.trace, false};
    shoal__fault_format_backtrace(&t, &r, format, text, k, n == MAX_FRAMES);
    write_all(R.fd, t.p, t.len);
}

/* Restores the default action and raises sig: it is delivered (and ends
 * the process) when the handler returns and the mask is restored. */
static void die(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void on_fatal(int sig, siginfo_t *si, void *uctx)
{
    int saved = errno;
    /* relaxed: a flag; nothing is published with it. */
    if (atomic_exchange_explicit(&R.busy, 1, memory_order_relaxed) == 0) {
        report(sig, si, uctx);
        /* acquire: pairs with shoal__fault_set_unlink's release. */
        if (atomic_load_explicit(&R.has_unlink, memory_order_acquire))
            (void)shoal__unlink_own(R.unlink_path, R.unlink_dev, R.unlink_ino);
    } else {
        /* Another thread is reporting, and will end the process. */
        struct timespec tick = {0, 10 * 1000 * 1000};
        for (int i = 0; i < 1000; i++)
            nanosleep(&tick, NULL);
    }
    die(sig);
    errno = saved;
}

/* ---- installing ---------------------------------------------------------- */

int shoal__fault_install(int log_fd, int format)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&R.installed, &expected, 1, memory_order_relaxed,
                                                 memory_order_relaxed))
        return -EALREADY;
    int rc = 0, pipefd[2] = {-1, -1};
    int fd = fcntl(log_fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) {
        rc = -errno;
        goto fail;
    }
    /* The first backtrace() loads the unwinder (malloc, dlopen): here, not
     * in the handler. Symbolising once does the same for dladdr's paths. */
    void *warm[4];
    int n = backtrace(warm, 4);
    char sink[FRAME_MAX];
    backtrace_symbols_fd(warm, n, pipefd[1]);
    while (read(pipefd[0], sink, sizeof sink) > 0)
        ;
    R.fd = fd;
    R.sym_r = pipefd[0];
    R.sym_w = pipefd[1];
    atomic_store_explicit(&R.format, format, memory_order_relaxed);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&sa.sa_mask); /* nothing re-enters it (see PROTOCOL) */
    size_t done = 0;
    for (; done < NFATAL; done++) {
        if (sigaction(fatal_signals[done], &sa, &R.old[done]) != 0) {
            rc = -errno;
            while (done-- != 0)
                sigaction(fatal_signals[done], &R.old[done], NULL);
            R.fd = R.sym_r = R.sym_w = -1;
            goto fail;
        }
    }
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    if (pipefd[0] >= 0) {
        close(pipefd[0]);
        close(pipefd[1]);
    }
    atomic_store_explicit(&R.installed, 0, memory_order_relaxed);
    return rc;
}

void shoal__fault_uninstall(void)
{
    if (!atomic_load_explicit(&R.installed, memory_order_relaxed))
        return;
    for (size_t i = 0; i < NFATAL; i++)
        sigaction(fatal_signals[i], &R.old[i], NULL);
    close(R.fd);
    close(R.sym_r);
    close(R.sym_w);
    R.fd = R.sym_r = R.sym_w = -1;
    atomic_store_explicit(&R.has_unlink, 0, memory_order_relaxed);
    atomic_store_explicit(&R.installed, 0, memory_order_relaxed);
}

/* ---- threads ------------------------------------------------------------- */

void shoal__fault_thread_start(struct shoal_worker_s *w, const char *role)
{
    if (tls_stack != NULL)
        shoal__fault_thread_end(); /* started twice: one stack, not two */
    tls_worker = w;
    tls_role = role;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = ALT_STACK;
    long min = sysconf(_SC_MINSIGSTKSZ);
    if (min > 0 && (size_t)min * 4 > size)
        size = ((size_t)min * 4 + page - 1) / page * page;
    void *m =
        mmap(NULL, page + size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return;
    /* The lowest page stays PROT_NONE: the stack grows down into it. */
    stack_t ss = {.ss_sp = (char *)m + page, .ss_size = size, .ss_flags = 0};
    if (mprotect(ss.ss_sp, size, PROT_READ | PROT_WRITE) != 0 || sigaltstack(&ss, &tls_prev) != 0) {
        munmap(m, page + size);
        return;
    }
    tls_stack = m;
    tls_stack_len = page + size;
}

void shoal__fault_thread_role(const char *role) { tls_role = role; }

void shoal__fault_thread_end(void)
{
    tls_worker = NULL;
    tls_role = NULL;
    if (tls_stack == NULL)
        return;
    /* The one before ours back (a sanitizer unmaps its own at thread exit,
     * whichever is in place then), or none. */
    stack_t prev = tls_prev;
    if (prev.ss_flags & SS_DISABLE) {
        prev.ss_sp = NULL;
        prev.ss_size = 0;
        prev.ss_flags = SS_DISABLE;
    }
    sigaltstack(&prev, NULL);
    munmap(tls_stack, tls_stack_len);
    tls_stack = NULL;
    tls_stack_len = 0;
}
