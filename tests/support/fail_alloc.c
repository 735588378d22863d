/* fail_alloc.c - see fail_alloc.h. The linker sends the executable's calls
 * to malloc, calloc, realloc and aligned_alloc to the __wrap_ functions
 * here; __real_ ones are the C library's (or a sanitizer's, which stands
 * in for it). */
#include "fail_alloc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);

static _Thread_local fa_rule_t rule; /* the calling thread's: no other reads it */
static atomic_ulong refused;

void fa_arm(unsigned fns, size_t bytes, unsigned times) { rule = (fa_rule_t){fns, bytes, times}; }

void fa_disarm(void) { rule.times = 0; }

unsigned long fa_refused(void) { return atomic_load_explicit(&refused, memory_order_relaxed); }

/* Whether the thread's rule refuses this call (then it counts it). */
static bool refuse(unsigned fn, size_t bytes)
{
    if (rule.times == 0 || (rule.fns & fn) == 0 || (rule.bytes != 0 && rule.bytes != bytes))
        return false;
    rule.times--;
    atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
    errno = ENOMEM;
    return true;
}

void *__wrap_malloc(size_t size) { return refuse(FA_MALLOC, size) ? NULL : __real_malloc(size); }

void *__wrap_calloc(size_t n, size_t size)
{
    size_t bytes = size != 0 && n > SIZE_MAX / size ? SIZE_MAX : n * size;
    return refuse(FA_CALLOC, bytes) ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
    return refuse(FA_REALLOC, size) ? NULL : __real_realloc(ptr, size);
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
    return refuse(FA_ALIGNED, size) ? NULL : __real_aligned_alloc(align, size);
}

/* ---- the manager that arms a rule in its pool's init --------------------------- */

static int manager_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    const fa_rule_t *r = args;
    fa_arm(r->fns, r->bytes, r->times);
    return SHOAL_OK;
}

static int manager_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}

const shoal_behaviour_t fa_manager = {
    .name = "fa_manager", .init = manager_init, .handle_message = manager_message};
