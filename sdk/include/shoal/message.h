/* shoal/message.h - what a handler receives.
 *
 * A message is a type id (uint32_t, chosen by the application) plus a
 * payload. Sending copies the payload by default: up to SHOAL_INLINE_MAX
 * bytes live inside the message envelope with no allocation; larger ones are
 * copied once to the heap. A sender may instead hand over a heap buffer it
 * owns (shoal_send_owned); the runtime then frees it with the function the
 * sender named, after the handler returns or when the message is dropped.
 *
 * Delivery is at most once. Messages from one sender to one actor arrive in
 * the order they were sent; nothing else is ordered.
 */
#ifndef SHOAL_MESSAGE_H
#define SHOAL_MESSAGE_H

#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Payloads up to this many bytes travel inside the envelope. */
#define SHOAL_INLINE_MAX 32u

/* What a message is. */
typedef enum shoal_msg_kind_e {
    SHOAL_MSG_CAST = 0,    /* an ordinary message (shoal_send) */
    SHOAL_MSG_CALL = 1,    /* a call: answer it from handle_call */
    SHOAL_MSG_REPLY = 2,   /* the reply to one of your calls; ref says which */
    SHOAL_MSG_TIMEOUT = 3, /* one of your calls got no reply in time; status = SHOAL_ETIMEDOUT */
    SHOAL_MSG_EXIT = 4,    /* a child of yours ended: from = the child, status = its reason */
    SHOAL_MSG_ROOM = 5,    /* the receiver you asked about (shoal_notify_room) has room again:
                              from = it; status SHOAL_ENOPROC: it has ended (ABI 1.4) */
} shoal_msg_kind_t;

/* Flags of a message. */
#define SHOAL_MSG_PRIORITY 0x1u /* came through the system mailbox (high priority) */

/* A message as a handler sees it. The struct and the payload it points to
 * belong to the runtime and are valid only until the handler returns; copy
 * what you need to keep. New fields are only ever appended. */
typedef struct shoal_msg_s {
    uint32_t type;    /* application type id (REPLY: the reply's type) */
    uint32_t kind;    /* shoal_msg_kind_t */
    const void *data; /* payload, NULL when size == 0; 8-byte aligned */
    size_t size;      /* payload bytes */
    shoal_pid_t from; /* sender, SHOAL_PID_NONE from outside any actor */
    shoal_ref_t ref;  /* CALL: reply to this; REPLY/TIMEOUT: your call's ref */
    int status;       /* REPLY: 0 or the callee's error; TIMEOUT: SHOAL_ETIMEDOUT;
                         EXIT: the child's exit reason (0 = normal) */
    uint32_t flags;   /* SHOAL_MSG_PRIORITY */
} shoal_msg_t;

/* Releases a heap payload handed over with shoal_send_owned(). */
typedef void (*shoal_free_fn)(void *payload);

#ifdef __cplusplus
}
#endif
#endif
