/* Allreduce Direct-read: each rank publishes its vector once, reads every peer's, and folds.
 * Design: gather_all's one-step form on the transport itself (no nested allgather): the
 * allgather of [qian-phd] ch. 6's Shm-Direct (each rank copies its vector once into its own
 * outbox in shared memory, tiny ones into its published cache line, and raises one word; each
 * peer copies it out when it sees the word, in arrival order; on an RDMA transport a read of
 * the peer's registered outbox), then the fold of the P vectors in rank order (coll/reduce.h).
 * The MVAPICH and xhc shared-memory allreduce for small vectors works the same way.
 * Steps: one. Copies per rank: m in, (P-1) m out; (P-1) m operations (its own vector read where it is).
 * When it wins: small vectors, where the one synchronization is the whole cost (docs/tuning.md,
 * "Reductions"). Vectors larger than the outbox go to reduce_scatter_allgather. */
#include "coll/reduce.h"
#include "coll/reduce_staged.h"
#include "coll/sweep.h"

/* Peer q's vector is published: copy it into its place among the P. */
static int take(rcoll_args_t *a, void *ctx, int q)
{
    rcoll_event_t ev = rcoll_ev_published(q, a->seq);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_status_t st = a->tl->ops->get(a->tl, q, a->seq, (char *)ctx + (size_t)q * a->bytes, a->bytes, 0);
    return st != RCOLL_OK ? (int)st : 1;
}

static rcoll_event_t published(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    return rcoll_ev_published(q, a->seq);
}

static rcoll_status_t allreduce_direct_read(rcoll_args_t *a)
{
    unsigned char *all = a->tmp;
    if (rcoll_staged(a)) {
        rcoll_status_t st = rcoll_staged_send(a, true);
        const void **in = (const void **)(void *)(all + rcoll_reduce_ptr_align((size_t)a->size * a->bytes));
        return st != RCOLL_OK ? st : rcoll_staged_fold(a, all, in, "allreduce");
    }
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->sendbuf, a->bytes);
    if (st != RCOLL_OK)
        return st;
    int *items = a->team->scratch;
    st = rcoll_sweep(a, items, rcoll_sweep_others(a, items), take, published, all);
    if (st != RCOLL_OK)
        return st;
    const void **in = rcoll_reduce_strided((const void **)(void *)(all + rcoll_reduce_ptr_align((size_t)a->size * a->bytes)), all, a->bytes,
                                           a->size);
    in[a->rank] = a->sendbuf; /* my own vector where it is */
    return rcoll_reduce_fold_status(a, rcoll_op_fold(a->op, a->dtype, in, a->size, a->recvbuf, a->count),
                                    "allreduce");
}

/* The peers' vectors' place and the list of inputs after them, taken before the rank enters. */
static rcoll_status_t prepare(rcoll_args_t *a)
{
    size_t bytes = rcoll_reduce_ptr_align((size_t)a->size * a->bytes);
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, bytes + (size_t)a->size * sizeof(void *), "allreduce");
    return a->tmp ? RCOLL_OK : RCOLL_ERR_NOMEM;
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
