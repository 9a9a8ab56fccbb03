/* What the bcast algorithms share: ranks relative to the root, the k-nomial tree, the split of
 * the message into P pieces, and moving one byte range of the buffer to a peer with the
 * protocol its size calls for (inline in the signal line, copy through the peer's inbox, or
 * single copy into the peer's buffer). Pure functions of (rank, size, radix, bytes) apart from
 * the send / receive. */
#ifndef RCOLL_COLL_BCAST_TREE_H
#define RCOLL_COLL_BCAST_TREE_H

#include "coll/coll.h"
#include "coll/msg.h"

/* Rank relative to the root (the root is 0) and back. */
static inline int bc_vrank(int rank, int root, int size)
{
    return (rank - root + size) % size;
}
static inline int bc_real(int vrank, int root, int size)
{
    return (vrank + root) % size;
}

/* K-nomial tree of radix k over relative ranks 0..size-1: the parent of v clears v's lowest
 * non-zero base-k digit (-1 for the root); the children of v are v + j*k^l (j = 1..k-1) for
 * every level l below that digit, written to `out` largest subtree first. Returns their number
 * (at most (k-1) * ceil(log_k size)). */
int bc_knomial_parent(int vrank, int radix, int size);
int bc_knomial_children(int vrank, int radix, int size, int *out);

/* Piece i of P of a message of `bytes`: equal pieces rounded up to 64 bytes (cache lines),
 * so trailing pieces may be shorter or empty for small messages. */
typedef struct {
    size_t off, len;
} bc_piece_t;
bc_piece_t bc_piece(size_t bytes, int size, int i);


/* Protocol for `len` bytes of the message (the same on sender and receiver). The inbox mirrors
 * the buffer (byte i at offset i), so copy-based needs the whole message to fit in it. Inline
 * only where the sender puts one message to that receiver in the collective (one payload per
 * signal line). */
rcoll_msg_proto_t bc_proto(const rcoll_args_t *a, size_t len, int allow_inline);

/* Send bytes [off, off+len) of the buffer to the same place at `peer`, raising signal `step`. */
rcoll_status_t bc_send(rcoll_args_t *a, int peer, unsigned step, bc_piece_t p, rcoll_msg_proto_t proto);
/* After the signal from `source` was seen: copy the bytes to their place if they are not there
 * yet (inline or copy-based). */
void bc_finish_recv(rcoll_args_t *a, int source, bc_piece_t p, rcoll_msg_proto_t proto);
/* True once `source`'s signal `step` is there (the data with it). */
bool bc_ready(rcoll_args_t *a, int source, unsigned step);
/* True when a send to `peer` of protocol `proto` can start without waiting: single copy needs
 * the peer's arrival (its buffer's address), the others need nothing. */
bool bc_can_send(rcoll_args_t *a, int peer, rcoll_msg_proto_t proto);

#endif
