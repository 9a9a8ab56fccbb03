/* The message layer: how one message of an algorithm travels, chosen by its size, the same way
 * for every algorithm (one place instead of one per family).
 *
 * Protocol of a message of `bytes` (sender and receiver decide alike, from values both know):
 *   inline  <= RCOLL_INLINE_MAX bytes, where the algorithm allows it (one payload per signal
 *           line: a sender that puts several messages to one receiver in a call cannot): in the
 *           signal's own cache line;
 *   copy    below the transport's zero-copy threshold (tl->zcopy_threshold: shm raises it when
 *           ranks outnumber cores, the node transport across nodes; docs/tuning.md), when the
 *           algorithm's inbox layout fits the receiver's inbox (`inbox_end`: where it ends);
 *   zcopy   otherwise: single copy into the buffer the receiver advertised (put_user).
 * `remote` of a put: the offset in the receiver's inbox (copy) or advertised buffer (zcopy);
 * inline data is the whole line. */
#ifndef RCOLL_COLL_MSG_H
#define RCOLL_COLL_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include "coll/coll.h"

typedef enum { RCOLL_MSG_INLINE, RCOLL_MSG_COPY, RCOLL_MSG_ZCOPY } rcoll_msg_proto_t;

static inline rcoll_msg_proto_t rcoll_msg_proto(const rcoll_args_t *a, size_t bytes, size_t inbox_end,
                                                bool allow_inline)
{
    if (allow_inline && bytes <= RCOLL_INLINE_MAX)
        return RCOLL_MSG_INLINE;
    if (bytes < a->tl->zcopy_threshold && inbox_end <= a->tl->inbox_bytes)
        return RCOLL_MSG_COPY;
    return RCOLL_MSG_ZCOPY;
}

/* len bytes from src to `peer` by `proto`, raising its signal `step` (RCOLL_NO_SIGNAL: data
 * only, more follows; inline: not allowed, a line is one message). */
rcoll_status_t rcoll_msg_put(rcoll_args_t *a, int peer, unsigned step, rcoll_msg_proto_t proto,
                             const void *src, size_t len, size_t remote);

/* After the signal from `source` was seen: where its message sits -- the inline line, the
 * inbox at `inbox_off` -- or NULL when it came single copy (already in place). */
const unsigned char *rcoll_msg_data(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto,
                                    size_t inbox_off);

/* The same, copied to `dst` unless already in place. */
void rcoll_msg_copy_out(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto, size_t inbox_off,
                        void *dst, size_t len);

/* A publication of a->bytes in parts, one to many (bcast direct_read's root, allreduce knomial's
 * release): part `step` ([off, off + len) of the data at `src`) staged in this rank's outbox
 * (transport stage) and signalled (step) to every other rank, which reads it while the next part
 * is staged; the readers' side reads every part of `root`'s publication, in parts of `part`, into
 * `dst` as each is signalled (the publication's length checked at the first). */
rcoll_status_t rcoll_msg_stage_part(rcoll_args_t *a, const void *src, unsigned step, size_t off,
                                    size_t len);
rcoll_status_t rcoll_msg_read_staged(rcoll_args_t *a, int root, void *dst, size_t part);

#endif
