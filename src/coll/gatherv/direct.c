/* Gatherv Direct: every rank writes its block (of its own count) straight to the root, the root
 * takes them in the order they come.
 * Paper: [qian-phd] (Qian), 3.4.2 Direct gather with the arrival-aware root of chapter 6, for
 * counts that differ by rank. Only the root knows the counts and displacements; a sender knows
 * its own count, so the protocol of a message is decided from that count alone (the root reads
 * it from its counts):
 *   0 bytes          nothing is sent (both sides know);
 *   <= 48 bytes      inline in the signal's cache line;
 *   copy-based       below the zero-copy threshold and within a fixed slot of the root's small
 *                    inbox (small inbox / P bytes, 64-byte aligned, slot r for rank r: a ring as
 *                    deep as the signal lines', so a sender may run that many calls ahead of a
 *                    fixed root), else of its inbox (inbox / P bytes): the root copies it out to
 *                    its displacement;
 *   single copy      otherwise: the root publishes its displacement array once (when any
 *                    sender needs it); such a sender reads just its own entry (get with offset)
 *                    and writes its block straight to that place of the root's receive buffer.
 * Steps: one (plus the displacement read for single-copy senders).
 * Bytes on the wire per rank: its count, in one message; the root receives the sum of counts.
 * When it wins: the only gatherv here; Direct is what wins for gather on one node. */
#include "coll/xfer.h"

#include <stdint.h>
#include <string.h>

static size_t slot_bytes(const rcoll_args_t *a)
{
    return (a->tl->inbox_bytes / (size_t)a->size) & ~(size_t)63;
}

static size_t small_slot_bytes(const rcoll_args_t *a)
{
    return (a->tl->small_inbox_bytes / (size_t)a->size) & ~(size_t)63;
}

static rcoll_msg_proto_t proto_of(const rcoll_args_t *a, int r, size_t count)
{
    size_t small = small_slot_bytes(a), slot = slot_bytes(a);
    if (count <= small) /* inline, or the small inbox (gs_proto) */
        return gs_proto(a, count, (size_t)r * small + count);
    return rcoll_msg_proto_from(a, count, count <= slot ? (size_t)r * slot + count : SIZE_MAX, true,
                                rcoll_msg_zcopy_rooted(a));
}

/* Where rank r's block sits in the root's inbox (copied) or line (inline: 0). */
static size_t inbox_off(const rcoll_args_t *a, int r, rcoll_msg_proto_t proto)
{
    if (proto == RCOLL_MSG_COPY_SMALL)
        return (size_t)r * small_slot_bytes(a);
    return proto == RCOLL_MSG_COPY ? (size_t)r * slot_bytes(a) : 0;
}

/* Root: take what has come of rank r's block (ctx: per rank, the bytes taken so far). */
static int collect(rcoll_args_t *a, void *ctx, int r)
{
    size_t *copied = ctx, count = a->rcounts[r];
    rcoll_msg_proto_t proto = proto_of(a, r, count);
    return rcoll_msg_recv_test(a, r, 0, proto, inbox_off(a, r, proto), (char *)a->recvbuf + a->rdispls[r],
                               count, &copied[r]);
}

static rcoll_event_t signal_of(rcoll_args_t *a, void *ctx, int r)
{
    (void)ctx;
    return rcoll_ev_signal(r, a->seq, 0);
}

static rcoll_status_t too_many_ranks(rcoll_args_t *a)
{
    return rcoll_team_error(a->team, RCOLL_ERR_UNSUPPORTED, "gatherv direct: %d displacements "
                            "do not fit the outbox (RCOLL_INBOX_BYTES)", a->size);
}

static rcoll_status_t root_side(rcoll_args_t *a)
{
    int *pending = a->team->scratch, count = 0;
    bool publish = false;
    for (int i = 1; i < a->size; i++) {
        int r = (a->root + i) % a->size;
        if (!a->rcounts[r])
            continue;
        pending[count++] = r;
        publish |= proto_of(a, r, a->rcounts[r]) == RCOLL_MSG_ZCOPY;
    }
    if (publish) {
        size_t len = (size_t)a->size * sizeof(size_t);
        if (len > a->tl->inbox_bytes)
            return too_many_ranks(a);
        rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->rdispls, len);
        if (st != RCOLL_OK)
            return st;
    }
    size_t *copied = rcoll_team_tmp(a->team, RCOLL_TMP_PARTS, (size_t)a->size * sizeof(size_t));
    if (!copied)
        return RCOLL_ERR_NOMEM;
    memset(copied, 0, (size_t)a->size * sizeof(size_t));
    return rcoll_sweep(a, pending, count, collect, signal_of, copied);
}

static rcoll_status_t sender_side(rcoll_args_t *a)
{
    rcoll_msg_proto_t proto = proto_of(a, a->rank, a->bytes);
    size_t remote = inbox_off(a, a->rank, proto);
    if (proto == RCOLL_MSG_ZCOPY) {
        if ((size_t)a->size * sizeof(size_t) > a->tl->inbox_bytes)
            return too_many_ranks(a);
        rcoll_event_t ev = rcoll_ev_published(a->root, a->seq);
        rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
        if (st != RCOLL_OK)
            return st;
        st = a->tl->ops->get(a->tl, a->root, a->seq, &remote, sizeof remote,
                             (size_t)a->rank * sizeof remote);
        if (st != RCOLL_OK)
            return st;
    }
    gs_msg_t msg;
    gs_msg_begin(&msg, a, a->root, proto);
    return gs_msg_part(&msg, a->sendbuf, a->bytes, remote, 0);
}

static rcoll_status_t gatherv_direct(rcoll_args_t *a)
{
    a->tl->pull_reader = RCOLL_PULL_SIGNALLED; /* a displacement read is followed by its block */
    if (a->rank == a->root)
        return root_side(a);
    return a->bytes ? sender_side(a) : RCOLL_OK;
}

const rcoll_algo_t rcoll_gatherv_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_GATHERV,
    .summary = "[qian-phd] 3.4.2: Direct, arrival order; single-copy senders read their displacement from the root",
    .run = gatherv_direct,
};
