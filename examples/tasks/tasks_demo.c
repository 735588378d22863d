/* tasks_demo.c - a task pool in a C program (shoal/tasks.h). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <shoal/shoal.h>

static atomic_long total;

static int square(shoal_ctx_t *ctx, void *arg)
{
    (void)ctx;
    long n = (long)(intptr_t)arg;
    atomic_fetch_add(&total, n * n);
    return 0;
}

/* 0 for an even number, an error code of our own for an odd one. */
static int even(shoal_ctx_t *ctx, void *arg)
{
    (void)ctx;
    int n = (int)(intptr_t)arg;
    return n % 2 == 0 ? 0 : 1000 + n;
}

static int explode(shoal_ctx_t *ctx, void *arg)
{
    shoal_panic(ctx, "task %d cannot go on", (int)(intptr_t)arg);
}

/* Called once for each task that panicked; its worker is replaced. */
static void on_panic(void *arg, const char *why, void *user)
{
    (void)user;
    fprintf(stderr, "task %d panicked: %s\n", (int)(intptr_t)arg, why);
}

static void check(int rc, const char *what)
{
    if (rc != SHOAL_OK) {
        fprintf(stderr, "%s: %s\n", what, shoal_strerror(rc));
        exit(1);
    }
}

int main(void)
{
    shoal_runtime_t *rt;
    check(shoal_runtime_create(&rt, NULL), "runtime");
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.size = 4;   /* workers */
    o.queue = 64; /* tasks waiting for a free worker, at most */
    o.panic_hook = on_panic;
    shoal_tasks_t *pool;
    check(shoal_tasks_create(rt, &o, &pool), "create");

    /* Fire and forget: while the pool is full, submit waits (1 s at most). */
    for (intptr_t i = 1; i <= 1000; i++)
        check(shoal_tasks_submit(pool, square, (void *)i, 1000), "submit");

    /* Run one task and get what it returned. */
    int result;
    check(shoal_tasks_submit_wait(pool, even, (void *)7, 1000, &result), "submit_wait");
    printf("even(7) returned %d\n", result);

    /* A group: wait for all of its tasks, get the first error; the others
     * still run. */
    shoal_task_group_t *group;
    check(shoal_task_group_create(pool, &group), "group");
    for (intptr_t i = 0; i < 10; i++)
        check(shoal_task_group_submit(group, even, (void *)(i * 2 + (i == 6)), 1000),
              "group submit");
    int first;
    check(shoal_task_group_wait(group, 1000, &first), "group wait");
    printf("group of 10: first error %d\n", first);
    shoal_task_group_free(group);

    /* A task that panics: the hook hears it, the caller gets SHOAL_EPANIC. */
    check(shoal_tasks_submit_wait(pool, explode, (void *)42, 1000, &result), "explode");
    printf("explode(42): %s\n", shoal_errname(result));

    /* No new tasks from here on; wait for every one submitted. */
    check(shoal_tasks_release(pool), "release");
    printf("sum of squares 1..1000: %ld\n", atomic_load(&total));
    printf("submitted %llu, completed %llu, panicked %llu\n",
           (unsigned long long)shoal_tasks_submitted(pool),
           (unsigned long long)shoal_tasks_completed(pool),
           (unsigned long long)shoal_tasks_panicked(pool));
    check(shoal_tasks_destroy(pool), "destroy");
    shoal_runtime_destroy(rt);
    return atomic_load(&total) == 333833500 ? 0 : 1;
}
