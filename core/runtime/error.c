/* error.c - names and messages, generated from SHOAL_ERRNO_MAP. */
#include "shoal/error.h"

SHOAL_API const char *shoal_strerror(int err)
{
    switch (err) {
    case SHOAL_OK:
        return "ok";
#define SHOAL__ERR_MSG(name, n, msg)                                                               \
    case SHOAL_##name:                                                                             \
        return msg;
        SHOAL_ERRNO_MAP(SHOAL__ERR_MSG)
#undef SHOAL__ERR_MSG
    default:
        return "unknown error";
    }
}

SHOAL_API const char *shoal_errname(int err)
{
    switch (err) {
    case SHOAL_OK:
        return "SHOAL_OK";
#define SHOAL__ERR_NAME(name, n, msg)                                                              \
    case SHOAL_##name:                                                                             \
        return "SHOAL_" #name;
        SHOAL_ERRNO_MAP(SHOAL__ERR_NAME)
#undef SHOAL__ERR_NAME
    default:
        return "SHOAL_E?";
    }
}
