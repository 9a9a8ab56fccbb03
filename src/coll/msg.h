/* The message layer: how one message of an algorithm travels, chosen by its size, the same way
 * for every algorithm (one place instead of one per family).
 *
 * Protocol of a message of `bytes` (sender and receiver decide alike, from values both know):
 *   inline  <= RCOLL_INLINE_MAX bytes, where the algorithm allows it (one payload per signal
 *           line: a sender that puts several messages to one receiver in a call cannot): in the
 *           signal's own cache line;
 *   copy    below the transport's zero-copy threshold (tl->zcopy_threshold: the node transport
 *           raises it across nodes; docs/tuning.md; an exchange's blocks, where every rank sends
 *           and receives at once, by tl->zcopy_exchange), when the
 *           algorithm's inbox layout fits the receiver's inbox (`inbox_end`: where it ends);
 *   zcopy   otherwise: single copy into the buffer the receiver advertised (put_user).
 *   copy_small  (rcoll_msg_proto_rooted only) a copy whose inbox layout ends within the
 *           transport's small inbox: the same offsets, in a ring as deep as the signal lines'
 *           instead of the boxes' 2, so a sender may run that many calls ahead of its receiver
 *           (a fixed root's back-to-back gathers of 49-256 B).
 * `remote` of a put: the offset in the receiver's inbox (copy) or advertised buffer (zcopy);
 * inline data is the whole line. */
#ifndef RCOLL_COLL_MSG_H
#define RCOLL_COLL_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include "coll/coll.h"

typedef enum { RCOLL_MSG_INLINE, RCOLL_MSG_COPY, RCOLL_MSG_ZCOPY, RCOLL_MSG_COPY_SMALL } rcoll_msg_proto_t;

/* Copied into an inbox (the big or the small one): its data sits at its inbox offset. */
static inline bool rcoll_msg_copied(rcoll_msg_proto_t proto)
{
    return proto == RCOLL_MSG_COPY || proto == RCOLL_MSG_COPY_SMALL;
}

/* The protocol with single copy from `zcopy` bytes. */
static inline rcoll_msg_proto_t rcoll_msg_proto_from(const rcoll_args_t *a, size_t bytes, size_t inbox_end,
                                                     bool allow_inline, size_t zcopy)
{
    if (allow_inline && bytes <= RCOLL_INLINE_MAX)
        return RCOLL_MSG_INLINE;
    if (bytes < zcopy && inbox_end <= a->tl->inbox_bytes)
        return RCOLL_MSG_COPY;
    return RCOLL_MSG_ZCOPY;
}

static inline rcoll_msg_proto_t rcoll_msg_proto(const rcoll_args_t *a, size_t bytes, size_t inbox_end,
                                                bool allow_inline)
{
    return rcoll_msg_proto_from(a, bytes, inbox_end, allow_inline, a->tl->zcopy_threshold);
}

/* rcoll_msg_proto for the blocks of an exchange (every rank sends and receives in the step:
 * allgather's and alltoall's algorithms), by the transport's threshold for those. */
static inline rcoll_msg_proto_t rcoll_msg_proto_exchange(const rcoll_args_t *a, size_t bytes, size_t inbox_end,
                                                         bool allow_inline)
{
    size_t zcopy = a->tl->zcopy_exchange ? a->tl->zcopy_exchange : a->tl->zcopy_threshold;
    return rcoll_msg_proto_from(a, bytes, inbox_end, allow_inline, zcopy);
}

/* The rooted collectives' messages (coll/xfer.h, gatherv): inline allowed, single copy from the
 * transport's threshold for them (tl->zcopy_rooted), and copy_small where the copy's inbox
 * layout ends within the small inbox. Only for callers whose inbox_end is exact (no offset of
 * the message, nor of any other message of the call to that receiver read from the same
 * inbox, lies beyond it). */
static inline size_t rcoll_msg_zcopy_rooted(const rcoll_args_t *a)
{
    return a->tl->zcopy_rooted ? a->tl->zcopy_rooted : a->tl->zcopy_threshold;
}

static inline rcoll_msg_proto_t rcoll_msg_proto_rooted(const rcoll_args_t *a, size_t bytes, size_t inbox_end)
{
    rcoll_msg_proto_t p = rcoll_msg_proto_from(a, bytes, inbox_end, true, rcoll_msg_zcopy_rooted(a));
    return p == RCOLL_MSG_COPY && inbox_end <= a->tl->small_inbox_bytes ? RCOLL_MSG_COPY_SMALL : p;
}

/* len bytes from src to `peer` by `proto`, raising its signal `step` (RCOLL_NO_SIGNAL: data
 * only, more follows; inline: not allowed, a line is one message). */
rcoll_status_t rcoll_msg_put(rcoll_args_t *a, int peer, unsigned step, rcoll_msg_proto_t proto,
                             const void *src, size_t len, size_t remote);

/* As rcoll_msg_put, for a receiver that takes it with rcoll_msg_recv(_test): a copy goes in
 * parts it copies out as they come (transport put_parts). */
rcoll_status_t rcoll_msg_put_parts(rcoll_args_t *a, int peer, unsigned step, rcoll_msg_proto_t proto,
                                   const void *src, size_t len, size_t remote);

/* After the signal from `source` was seen: where its message sits -- the inline line, the
 * inbox at `inbox_off` -- or NULL when it came single copy (already in place). */
const unsigned char *rcoll_msg_data(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto,
                                    size_t inbox_off);

/* The same, copied to `dst` unless already in place. */
void rcoll_msg_copy_out(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto, size_t inbox_off,
                        void *dst, size_t len);

/* A message of `len` bytes from `source` with signal `step`, sent by `proto` as one put at
 * `inbox_off` (copy; any puts of it without a signal first) or inline or single copy: wait for
 * it and put it in `dst` (unless single copy put it there). A copy is copied out as its parts
 * arrive (transport copy_arrived), overlapping the sender's copy in. The length its line
 * carries is checked against len. The sender's side: rcoll_msg_put_parts. */
rcoll_status_t rcoll_msg_recv(rcoll_args_t *a, int source, unsigned step, rcoll_msg_proto_t proto,
                              size_t inbox_off, void *dst, size_t len);
/* The same without waiting, for sweeps over several sources: true once the whole message is in
 * dst; *done: the bytes copied so far (0 at the start). */
bool rcoll_msg_recv_test(rcoll_args_t *a, int source, unsigned step, rcoll_msg_proto_t proto,
                         size_t inbox_off, void *dst, size_t len, size_t *done);

/* A publication of a->bytes in parts, one to many (bcast direct_read's root, allreduce knomial's
 * release): part `step` ([off, off + len) of the data at `src`) staged in this rank's outbox
 * (transport stage) and signalled (step) to every other rank, which reads it while the next part
 * is staged; the readers' side reads every part of `root`'s publication, in parts of `part`, into
 * `dst` as each is signalled (the publication's length checked at the first). */
rcoll_status_t rcoll_msg_stage_part(rcoll_args_t *a, const void *src, unsigned step, size_t off,
                                    size_t len);
rcoll_status_t rcoll_msg_read_staged(rcoll_args_t *a, int root, void *dst, size_t part);

#endif
