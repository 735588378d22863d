/* malloc_count.c - counts the process's heap allocation calls.
 *
 * Defining malloc and friends in the executable interposes them for the
 * whole process (the static libshoal, libc's own internal calls through the
 * PLT, every thread). Each forwards to glibc's implementation (__libc_*) and
 * bumps a relaxed counter; shoal-bench reads the counter at both ends of a
 * timed interval and prints the difference as `mallocs=`. The point is the
 * evidence that the steady message path does not allocate (envelopes come
 * from per-thread caches; payloads <= 32 bytes travel inline).
 *
 * Counted as allocations: malloc, calloc, realloc, aligned_alloc, memalign,
 * posix_memalign, valloc, pvalloc. Frees are counted separately.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *p);

/* Declared here rather than in bench.h's includes so this file stays free of
 * <stdlib.h> (whose prototypes carry attributes we do not want to clash with). */
uint64_t bench_malloc_calls(void);
uint64_t bench_free_calls(void);
void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void *aligned_alloc(size_t align, size_t size);
void *memalign(size_t align, size_t size);
int posix_memalign(void **out, size_t align, size_t size);
void *valloc(size_t size);
void *pvalloc(size_t size);
void free(void *p);

static _Atomic uint64_t alloc_calls;
static _Atomic uint64_t free_calls;

static inline void count_alloc(void)
{
    atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
}

uint64_t bench_malloc_calls(void)
{
    return atomic_load_explicit(&alloc_calls, memory_order_relaxed);
}
uint64_t bench_free_calls(void) { return atomic_load_explicit(&free_calls, memory_order_relaxed); }

void *malloc(size_t size)
{
    count_alloc();
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    count_alloc();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    count_alloc();
    return __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    count_alloc();
    return __libc_memalign(align, size);
}

void *memalign(size_t align, size_t size)
{
    count_alloc();
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    count_alloc();
    if (align == 0 || (align & (align - 1)) != 0 || align % sizeof(void *) != 0)
        return EINVAL;
    void *p = __libc_memalign(align, size);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t size)
{
    count_alloc();
    return __libc_valloc(size);
}

void *pvalloc(size_t size)
{
    count_alloc();
    return __libc_pvalloc(size);
}

void free(void *p)
{
    if (p != NULL)
        atomic_fetch_add_explicit(&free_calls, 1, memory_order_relaxed);
    __libc_free(p);
}
