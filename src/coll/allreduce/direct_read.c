/* Allreduce Direct-read: each rank publishes its vector once, reads every peer's, and folds.
 * Design: gather_all's one-step form on the transport itself (no nested allgather): the
 * allgather of [qian-phd] ch. 6's Shm-Direct (each rank copies its vector once into its own
 * outbox in shared memory, tiny ones into its published cache line, and raises one word; each
 * peer copies it out when it sees the word, in arrival order; on an RDMA transport a read of
 * the peer's registered outbox), then the fold of the P vectors in rank order (coll/reduce.h).
 * On one node the fold reads each peer's vector where it lies, in the peer's outbox (transport
 * peek): no copy out, the reader's work is the fold alone.
 * The MVAPICH and xhc shared-memory allreduce for small vectors works the same way.
 * Vectors from 16 KB when every rank has its own core go in parts of 8 KB (coll/reduce_read.h):
 * each part of a peer is folded as soon as it is staged, while it is in the
 * first-level cache, and while the peer stages the next.
 * Steps: one. Copies per rank: m in, (P-1) m out across nodes only (its own vector and, on
 * one node, the peers' are read where they are); (P-1) m
 * operations.
 * When it wins: small vectors, where the one synchronization is the whole cost (docs/tuning.md,
 * "Reductions"). Vectors larger than the outbox go to reduce_scatter_allgather. */
#include "coll/reduce_read.h"

static rcoll_status_t allreduce_direct_read(rcoll_args_t *a)
{
    if (rcoll_staged(a)) {
        rcoll_status_t st = rcoll_staged_send(a, true);
        return st != RCOLL_OK ? st : rcoll_staged_fold(a, "allreduce");
    }
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->sendbuf, a->bytes);
    if (st == RCOLL_OK) /* my own vector read where it is */
        st = rcoll_read_published(a, 0, a->bytes, a->sendbuf);
    if (st != RCOLL_OK)
        return st;
    st = rcoll_op_fold(a->op, a->dtype, rcoll_read_inputs(a), a->size, a->recvbuf, a->count);
    return rcoll_reduce_fold_status(a, st, "allreduce");
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_read_prepare(a, "allreduce");
}

static const char *not_for(const rcoll_args_t *a)
{
    return a->bytes > a->tl->inbox_bytes ? "the vector is larger than the outbox" : NULL;
}

const rcoll_algo_t rcoll_allreduce_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "[qian-phd] ch. 6 Shm-Direct: publish the vector once, read every peer's in arrival "
               "order, fold all P in rank order: one step",
    .run = allreduce_direct_read,
    .prepare = prepare,
    .not_for = not_for,
    .fallback = &rcoll_allreduce_reduce_scatter_allgather,
    .limits = "vectors of at most RCOLL_INBOX_BYTES (one publication in the outbox)",
};
