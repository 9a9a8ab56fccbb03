/* Moving sets of allgather blocks between ranks: the protocol choice shared by every allgather
 * algorithm (inline in the signal line, copy-based through the peer's inbox, or single copy
 * into the peer's receive buffer) and the send / receive of up to two block ranges. */
#ifndef RCOLL_COLL_ALLGATHER_BLOCKS_H
#define RCOLL_COLL_ALLGATHER_BLOCKS_H

#include "coll/coll.h"
#include "coll/msg.h"

typedef struct {
    int n;            /* number of ranges, 0..2 */
    int first[2];
    int count[2];
} ag_ranges_t;


/* `count` blocks from `first` on, wrapping around the team. */
ag_ranges_t ag_ring_ranges(int first, int count, int size);
ag_ranges_t ag_one_block(int block);
size_t ag_ranges_bytes(const rcoll_args_t *a, const ag_ranges_t *r);

/* Protocol for a message of `bytes` (the same on sender and receiver). The inbox mirrors the
 * receive buffer, so copy-based needs size * bytes-per-rank to fit in it. */
rcoll_msg_proto_t ag_proto(const rcoll_args_t *a, size_t bytes, int allow_inline);

rcoll_status_t ag_send(rcoll_args_t *a, int peer, unsigned step, const ag_ranges_t *r,
                       int allow_inline);
/* After the signal from `source` for `step` was seen: copy the ranges out if needed. */
void ag_finish_recv(rcoll_args_t *a, int source, const ag_ranges_t *r, int allow_inline);
/* Wait for the signal, then finish the receive. */
rcoll_status_t ag_recv(rcoll_args_t *a, int source, unsigned step, const ag_ranges_t *r,
                       int allow_inline);

/* One step of a pairwise schedule: send `out` to `to`, then receive `in` from `from`. */
rcoll_status_t ag_exchange(rcoll_args_t *a, int to, int from, unsigned step, const ag_ranges_t *out,
                           const ag_ranges_t *in, int allow_inline);

/* Direct with the peers served in rank order (allgather/direct.c; direct_fixed runs it). */
rcoll_status_t ag_direct_fixed_order(rcoll_args_t *a);

#endif
