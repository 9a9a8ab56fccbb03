/* Reduce_scatter_block Direct-read: each rank publishes its P blocks once, reads its own block
 * out of every peer's publication, and folds.
 * Design: the one-step form of `direct` on the transport itself (no nested alltoall), as
 * alltoall direct_read ([qian-phd] ch. 6 Shm-Direct: one copy of the P blocks into the outbox in
 * shared memory, each peer reads its own block in arrival order; on an RDMA transport a read
 * of the peer's registered outbox), then the fold of the P copies of this rank's block in rank
 * order (coll/reduce.h).
 * Steps: one. Copies per rank: P m in, (P-1) m out; (P-1) m operations.
 * When it wins: small blocks, where the nested alltoall's second call frame is the cost
 * (docs/tuning.md, "Reductions"). P blocks larger than the outbox go to direct. */
#include "coll/reduce.h"
#include "coll/sweep.h"

/* Peer q's blocks are published: copy out the one for this rank. */
static int take(rcoll_args_t *a, void *ctx, int q)
{
    rcoll_event_t ev = rcoll_ev_published(q, a->seq);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_check_len(a, &ev, (size_t)a->size * a->bytes);
    rcoll_status_t st = a->tl->ops->get(a->tl, q, a->seq, (char *)ctx + (size_t)q * a->bytes, a->bytes,
                                        (size_t)a->rank * a->bytes);
    return st != RCOLL_OK ? (int)st : 1;
}

static rcoll_event_t published(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    return rcoll_ev_published(q, a->seq);
}

static rcoll_status_t reduce_scatter_block_direct_read(rcoll_args_t *a)
{
    size_t P = (size_t)a->size;
    unsigned char *all = a->tmp;
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->sendbuf, P * a->bytes);
    if (st != RCOLL_OK)
        return st;
    int *items = a->team->scratch;
    st = rcoll_sweep(a, items, rcoll_sweep_others(a, items), take, published, all);
    if (st != RCOLL_OK)
        return st;
    const void **in = rcoll_reduce_strided((const void **)(void *)(all + rcoll_reduce_ptr_align(P * a->bytes)),
                                           all, a->bytes, a->size);
    in[a->rank] = (const char *)a->sendbuf + (size_t)a->rank * a->bytes; /* my own block where it is */
    return rcoll_reduce_fold_status(a, rcoll_op_fold(a->op, a->dtype, in, a->size, a->recvbuf, a->count),
                                    "reduce_scatter_block");
}

/* The peers' copies of this rank's block and the list of inputs after them. */
static rcoll_status_t prepare(rcoll_args_t *a)
{
    size_t room = rcoll_reduce_ptr_align((size_t)a->size * a->bytes);
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, room + (size_t)a->size * sizeof(void *), "reduce_scatter_block");
    return a->tmp ? RCOLL_OK : RCOLL_ERR_NOMEM;
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
