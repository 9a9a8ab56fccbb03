/* Reduce_scatter_block Direct-read: each rank publishes its P blocks once, reads its own block
 * out of every peer's publication, and folds.
 * Design: the one-step form of `direct` on the transport itself (no nested alltoall), as
 * alltoall direct_read ([qian-phd] ch. 6 Shm-Direct: one copy of the P blocks into the outbox in
 * shared memory, each peer reads its own block in arrival order; on an RDMA transport a read
 * of the peer's registered outbox), then the fold of the P copies of this rank's block in rank
 * order (coll/reduce.h). On one node the fold reads each peer's block where it lies, in the
 * peer's outbox (transport peek): no copy out.
 * Steps: one. Copies per rank: P m in, (P-1) m out across nodes only; (P-1) m operations.
 * When it wins: small blocks, where the nested alltoall's second call frame is the cost
 * (docs/tuning.md, "Reductions"). P blocks larger than the outbox go to direct. */
#include "coll/reduce_read.h"

static rcoll_status_t reduce_scatter_block_direct_read(rcoll_args_t *a)
{
    size_t P = (size_t)a->size, mine = (size_t)a->rank * a->bytes;
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->sendbuf, P * a->bytes);
    if (st == RCOLL_OK) /* my own block read where it is */
        st = rcoll_read_published(a, mine, P * a->bytes, (const char *)a->sendbuf + mine);
    if (st != RCOLL_OK)
        return st;
    st = rcoll_op_fold(a->op, a->dtype, rcoll_read_inputs(a), a->size, a->recvbuf, a->count);
    return rcoll_reduce_fold_status(a, st, "reduce_scatter_block");
}

/* The peers' copies of this rank's block and the list of inputs. */
static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_read_prepare(a, "reduce_scatter_block");
}

static const char *not_for(const rcoll_args_t *a)
{
    return (size_t)a->size * a->bytes > a->tl->inbox_bytes ? "the P blocks are larger than the outbox" : NULL;
}

const rcoll_algo_t rcoll_reduce_scatter_block_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_REDUCE_SCATTER_BLOCK,
    .summary = "[qian-phd] ch. 6 Shm-Direct: publish the P blocks once, read this rank's block of "
               "every peer in arrival order, fold in rank order: one step",
    .run = reduce_scatter_block_direct_read,
    .prepare = prepare,
    .not_for = not_for,
    .fallback = &rcoll_reduce_scatter_block_direct,
    .limits = "P blocks of at most RCOLL_INBOX_BYTES (one publication in the outbox)",
};
