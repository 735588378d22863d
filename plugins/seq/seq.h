/* seq.h - the seq plugin's protocol (see plugins/seq/README.md).
 *
 * seq.seq is a pull pool's source (shoal/pull.h): the integers `from` ..
 * `to` inclusive, `step` apart (step may be negative, never 0). Asked for n
 * items (SHOAL_PULL_REQUEST), it sends the pool up to n of them, each as one
 * message of type `type` (default SEQ_MSG_ITEM) whose payload is the integer
 * as an int64_t in the host's byte order (8 bytes), then answers with
 * SHOAL_PULL_SENT - or with SHOAL_PULL_DONE in the same turn as the last
 * integer, so the pool never has to ask again for nothing.
 *
 * The cursor (the data of SHOAL_PULL_SENT, and what SHOAL_PULL_RESUME must
 * carry) is the next integer to send: an int64_t, host byte order, 8 bytes.
 * SHOAL_PULL_DONE carries no cursor: nothing is left to resume.
 *
 * Type ids 0xFFFF0000 and up are kept for the bundled plugins (application
 * types stay below; 0xFFFE0000 .. 0xFFFEFFFF are the runtime's, and `type`
 * may not be one of those).
 */
#ifndef SHOAL_PLUGIN_SEQ_H
#define SHOAL_PLUGIN_SEQ_H

#include <shoal/types.h>

/* The items' type when the args set none. */
#define SEQ_MSG_ITEM 0xFFFF0010u

/* A call of this type is answered with a seq_stats_t (reply type the same).
 * seq takes no other requests: a call of any type gets the same answer. */
#define SEQ_MSG_STATS 0xFFFF0001u

typedef struct seq_stats_s {
    uint64_t requests; /* SHOAL_PULL_REQUESTs answered */
    uint64_t items;    /* integers sent (accepted by the pool) */
    uint64_t refused;  /* item sends the pool refused (the batch stopped there) */
    uint64_t resumes;  /* SHOAL_PULL_RESUMEs taken */
    int64_t next;      /* the cursor: the next integer to send (meaningless once done) */
    uint64_t done;     /* 1 once the last integer was sent (DONE answered) */
} seq_stats_t;

#endif
