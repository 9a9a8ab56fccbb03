/* Moving one message of a rooted collective (gather, scatter and their v-forms, allgatherv):
 * the protocol choice both sides make alike, a message sent in parts, where a received message
 * sits, and the arrival-order sweep over pending peers (alltoall gather_scatter uses them too).
 * The protocol is the message layer's (coll/msg.h), inline
 * allowed; the inbox layout of a gather puts rank r's block at r * bytes. */
#ifndef RCOLL_COLL_XFER_H
#define RCOLL_COLL_XFER_H

#include <stdbool.h>
#include "coll/coll.h"
#include "coll/msg.h"
#include "coll/sweep.h"

/* The message layer's protocol (coll/msg.h), inline and the small inbox allowed (every
 * caller's inbox_end is exact), single copy from the transport's threshold for rooted
 * messages. */
static inline rcoll_msg_proto_t gs_proto(const rcoll_args_t *a, size_t bytes, size_t inbox_end)
{
    return rcoll_msg_proto_rooted(a, bytes, inbox_end);
}

/* One message to one peer, sent in parts. `remote` of a part: its offset in the receiver's
 * inbox (copy), in its advertised buffer (zcopy), or in the message (inline). The part sent with
 * a real step (not RCOLL_NO_SIGNAL) is the last: it raises the receiver's signal. */
typedef struct {
    rcoll_args_t *a;
    int peer;
    rcoll_msg_proto_t proto;
    size_t line_len;
    unsigned char line[RCOLL_INLINE_MAX];
} gs_msg_t;

void gs_msg_begin(gs_msg_t *m, rcoll_args_t *a, int peer, rcoll_msg_proto_t proto);
rcoll_status_t gs_msg_part(gs_msg_t *m, const void *src, size_t len, size_t remote, unsigned step);

/* Where a message from `source` sits once its signal was seen: the inline line, the inbox at
 * `inbox_off`, or `zbuf` (where put_user wrote it). */
const unsigned char *gs_msg_data(rcoll_args_t *a, int source, rcoll_msg_proto_t proto, size_t inbox_off,
                                 const void *zbuf);

/* Receive one whole message of `bytes` from `source` into `dst` (signal step 0, inbox offset
 * 0): rcoll_msg_recv (a copy taken out as its parts come; nothing to copy if single copy). */
rcoll_status_t gs_recv_one(rcoll_args_t *a, int source, rcoll_msg_proto_t proto, void *dst, size_t bytes);

/* Gathered blocks: rank r's `bytes` go to the root's slot r*bytes (inline, its inbox, or
 * single copy into its advertised buffer, by gs_proto(a, bytes, (r+1)*bytes)), signal step 0.
 * The sender's side: */
rcoll_status_t gs_send_block(rcoll_args_t *a, int root, const void *src, size_t bytes);
/* The root's: where the block from `source` sits once its signal was seen (NULL: it came single
 * copy, already in place). */
const unsigned char *gs_block_data(rcoll_args_t *a, int source, size_t bytes);
/* The root of a gather of m-byte blocks into its recvbuf: take the blocks of pending[0..count)
 * in the order they come (a block copied in parts is copied out as its parts come). */
rcoll_status_t gs_collect(rcoll_args_t *a, int *pending, int count);
/* Sweep callback: the event of rank r's block (its signal, step 0). */
rcoll_event_t gs_block_signal(rcoll_args_t *a, void *ctx, int r);

/* Has `peer` entered this collective? (Its inbox is then free and its buffer advertised.) */
bool gs_arrived(rcoll_args_t *a, int peer);
/* Sweep callback: the event of rank r's arrival in this collective. */
rcoll_event_t gs_arrival_event(rcoll_args_t *a, void *ctx, int r);
/* Sweep callback of a scatterv root: write rank r's block (scounts[r] bytes at sdispls[r], by
 * gs_proto(a, count, count), signal step 0), unless it goes single copy and r has not arrived. */
int gs_deliver_vblock(rcoll_args_t *a, void *ctx, int r);

/* Scatterv blocks that their rank reads itself (docs/tuning.md, "Back-to-back rooted calls"):
 * a block of `count` bytes that would go single copy, on a team on one node whose transport
 * reads single copy, is not written by the root (which would wait for the rank to have
 * entered) but read by the rank out of the root's send buffer. The root tells the rank where
 * (an inline descriptor, signal step 0, at once), the rank reads and signals step 1, the root
 * waits for the rank to have left. Both sides decide by their own count. */
bool gs_vblock_read(const rcoll_args_t *a, size_t count);
/* Root, an algorithm's prepare: advertise the send buffer where some block is read. */
rcoll_status_t gs_vblock_prepare(rcoll_args_t *a);
/* Root: the blocks of ranks[0..n) (non-zero counts; `ranks` in the first P entries of the team's
 * scratch): those read told at once, the others written (gs_deliver_vblock) in arrival order,
 * then it waits for the readers to have left (one that left without reading, its count
 * differing, is noted). */
rcoll_status_t gs_send_vblocks(rcoll_args_t *a, int *ranks, int n);
/* A scatterv rank's receive of its block of a->bytes: read where the root said, or as
 * gs_recv_one. Never writes past a->bytes. */
rcoll_status_t gs_recv_vblock(rcoll_args_t *a);

#endif
