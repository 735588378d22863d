/* shoal/error.h - error codes, from one table.
 *
 * Every public function that can fail returns int: 0 (SHOAL_OK) or one of the
 * negative codes below. SHOAL_ERRNO_MAP is the only list: the enum, the names
 * and the messages are all generated from it.
 */
#ifndef SHOAL_ERROR_H
#define SHOAL_ERROR_H

#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, number, message) */
#define SHOAL_ERRNO_MAP(X)                                                                         \
    X(EINVAL, 1, "invalid argument")                                                               \
    X(ENOMEM, 2, "out of memory")                                                                  \
    X(EFULL, 3, "mailbox full")                                                                    \
    X(EBUSY, 4, "every worker of the pool is busy")                                                \
    X(ENOPROC, 5, "no such actor")                                                                 \
    X(ETIMEDOUT, 6, "timed out")                                                                   \
    X(ESTOPPED, 7, "runtime is stopping")                                                          \
    X(EPANIC, 8, "handler panicked")                                                               \
    X(ENOTSUP, 9, "not supported by this actor")                                                   \
    X(ELIMIT, 10, "actor limit reached")                                                           \
    X(ESHUTDOWN, 11, "stopped")                                                                    \
    X(EFAILED, 12, "handler failed")                                                               \
    X(ENOKEY, 13, "required key is missing")                                                       \
    X(ELOAD, 14, "plugin refused")                                                                 \
    X(EOVERLOAD, 15, "too many senders wait for room in it")                                       \
    X(ENOMEMBERS, 16, "no free member in the pool")

enum {
    SHOAL_OK = 0,
#define SHOAL__ERR_ENUM(name, n, msg) SHOAL_##name = -(n),
    SHOAL_ERRNO_MAP(SHOAL__ERR_ENUM)
#undef SHOAL__ERR_ENUM
};

/* The message for an error code ("mailbox full"), or "unknown error" for a
 * value that is not in the table. Never NULL; the string is static. Any
 * thread. */
SHOAL_API const char *shoal_strerror(int err);

/* The symbolic name of an error code ("SHOAL_EFULL", "SHOAL_OK"), or
 * "SHOAL_E?" for a value not in the table. Never NULL; static. Any thread. */
SHOAL_API const char *shoal_errname(int err);

#ifdef __cplusplus
}
#endif
#endif
