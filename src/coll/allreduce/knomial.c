/* Allreduce by a k-nomial fan-in with a one-step release (the xhc and MPICH release_gather
 * style, on the tree of [qian-phd] 3.4.1; k is RCOLL_KPORT, default 2).
 * Steps: (1) the fan-in of coll/reduce_tree.h to rank 0 (ceil(log_{k+1} P) levels: a rank folds
 * its children's partials, each in its own slot, with its own vector and sends the result up);
 * (2) the release: rank 0 publishes the result once (transport publish, in its published line
 * when tiny) and every rank reads it as soon as its published word is up -- one step, no
 * forwarding down a tree. Pipelined from 64 KB where ranks do not share cores (the fan-in in
 * parts of 16 KB, coll/reduce_tree.h): rank 0 stages each part of the result as soon as it is
 * folded and signals it, and every rank reads it while the next part comes up.
 * Bytes per rank: m up, m read; at most k ceil(log_{k+1} P) vectors in and folded per rank.
 * Fold order: rank order, bracketed as the tree (the same bits on every rank: rank 0 computes
 * them, the others copy): RCOLL_REPRODUCIBLE=1 excludes it.
 * When it wins: small vectors on many ranks, where direct_read's P - 1 reads per rank are the
 * cost (docs/tuning.md, "Reductions"). Vectors larger than the outbox go to
 * reduce_scatter_allgather. */
#include "coll/msg.h"
#include "coll/reduce_tree.h"

/* Rank 0, pipelined: part `step` of the result is final: staged in the outbox and signalled to
 * every rank, which reads it while the next part comes up the tree. */
static rcoll_status_t release_part(rcoll_args_t *a, unsigned step, size_t off, size_t len)
{
    return rcoll_msg_stage_part(a, a->recvbuf, step, off, len);
}

static rcoll_status_t allreduce_knomial(rcoll_args_t *a)
{
    size_t part = rcoll_fanin_part(a);
    bool parts = part < a->bytes;
    rcoll_status_t st = rcoll_fanin_parts(a, a->recvbuf, "allreduce", parts ? release_part : NULL);
    if (st != RCOLL_OK || (parts && a->rank == 0))
        return st;
    if (parts)
        return rcoll_msg_read_staged(a, 0, a->recvbuf, part);
    if (a->rank == 0)
        return a->tl->ops->publish(a->tl, a->seq, a->recvbuf, a->bytes);
    rcoll_event_t ev = rcoll_ev_published(0, a->seq);
    if ((st = rcoll_tl_wait(a->tl, &ev)) != RCOLL_OK)
        return st;
    rcoll_check_len(a, &ev, a->bytes);
    return a->tl->ops->get(a->tl, 0, a->seq, a->recvbuf, a->bytes, 0);
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_fanin_prepare(a, "allreduce");
}

static const char *not_for(const rcoll_args_t *a)
{
    return a->bytes > a->tl->inbox_bytes ? "the vector is larger than the outbox" : NULL;
}

const rcoll_algo_t rcoll_allreduce_knomial = {
    .name = "knomial",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "k-port binomial fan-in to rank 0, which publishes the result once for every rank "
               "to read (the xhc and release_gather style)",
    .run = allreduce_knomial,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_allreduce_reduce_scatter_allgather,
    .limits = "vectors of at most RCOLL_INBOX_BYTES (one publication in the outbox); "
              "not with RCOLL_REPRODUCIBLE=1",
};
