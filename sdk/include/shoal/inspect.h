/* shoal/inspect.h - what an actor tells about itself when inspected.
 *
 * shoal_runtime_inspect (from a thread) or shoal_inspect (from an actor) asks
 * a live actor to describe itself. The request travels in its system mailbox,
 * so it is answered before queued work and never refused as full. The answer
 * is one JSON object, NUL-terminated:
 *
 *     {"pid":"12.3","behaviour":"burn","mailbox_depth":17,"mailbox_limit":100,
 *      "info":{ ...what the behaviour's inspect callback added... }}
 *
 * mailbox_limit is null when the mailbox is unbounded. The behaviour's
 * optional inspect callback (behaviour.h) fills "info" with the functions
 * below; keys are the callback's to choose (write them as identifiers), each
 * once. They copy what they are given. Only from inside that callback.
 */
#ifndef SHOAL_INSPECT_H
#define SHOAL_INSPECT_H

#include <stdbool.h>

#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

SHOAL_API void shoal_inspect_int(shoal_inspect_t *out, const char *key, int64_t value);
SHOAL_API void shoal_inspect_uint(shoal_inspect_t *out, const char *key, uint64_t value);
SHOAL_API void shoal_inspect_double(shoal_inspect_t *out, const char *key, double value);
SHOAL_API void shoal_inspect_bool(shoal_inspect_t *out, const char *key, bool value);
/* value is copied and escaped; NULL writes null. */
SHOAL_API void shoal_inspect_str(shoal_inspect_t *out, const char *key, const char *value);

#ifdef __cplusplus
}
#endif
#endif
