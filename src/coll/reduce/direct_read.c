/* Reduce Direct-read: every rank publishes its vector and leaves; the root reads them in
 * arrival order and folds.
 * Design: gather_reduce's one-step form on the transport itself (no nested gather), the
 * one-to-one half of [qian-phd] ch. 6's Shm-Direct: a rank copies its vector once into its own
 * outbox in shared memory (tiny ones into its published cache line) and raises one word; the
 * root copies each out when it sees the word (on an RDMA transport a read of the peer's
 * registered outbox), then folds the P vectors in rank order (coll/reduce.h). A rank that is
 * not the root waits for nobody: it may be a call ahead, its outbox freed by the root's read.
 * Vectors from 16 KB when every rank has its own core go in parts of 8 KB (coll/reduce_staged.h):
 * a rank stages part i in its outbox and signals the root, which copies part i out and folds it
 * while the rank copies part i+1 in -- the root's work overlaps the others' instead of
 * following it, and each part is folded while it is in the first-level cache.
 * Steps: one. Copies: m in per rank; the root (P-1) m out and (P-1) m operations.
 * When it wins: small and medium vectors (docs/tuning.md, "Reductions"). Vectors larger than
 * the outbox go to reduce_scatter_gather. */
#include "coll/reduce.h"
#include "coll/reduce_staged.h"
#include "coll/sweep.h"

static int take(rcoll_args_t *a, void *ctx, int q)
{
    rcoll_event_t ev = rcoll_ev_published(q, a->seq);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_check_len(a, &ev, a->bytes);
    rcoll_status_t st = a->tl->ops->get(a->tl, q, a->seq, (char *)ctx + (size_t)q * a->bytes, a->bytes, 0);
    return st != RCOLL_OK ? (int)st : 1;
}

static rcoll_event_t published(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    return rcoll_ev_published(q, a->seq);
}

static rcoll_status_t reduce_direct_read(rcoll_args_t *a)
{
    if (a->rank != a->root)
        return rcoll_staged(a) ? rcoll_staged_send(a, false)
                               : a->tl->ops->publish(a->tl, a->seq, a->sendbuf, a->bytes);
    unsigned char *all = a->tmp;
    const void **in = (const void **)(void *)(all + rcoll_reduce_ptr_align((size_t)a->size * a->bytes));
    if (rcoll_staged(a))
        return rcoll_staged_fold(a, all, in, "reduce");
    int *items = a->team->scratch;
    rcoll_status_t st = rcoll_sweep(a, items, rcoll_sweep_others(a, items), take, published, all);
    if (st != RCOLL_OK)
        return st;
    rcoll_reduce_strided(in, all, a->bytes, a->size);
    in[a->rank] = a->sendbuf;
    return rcoll_reduce_fold_status(a, rcoll_op_fold(a->op, a->dtype, in, a->size, a->recvbuf, a->count),
                                    "reduce");
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    if (a->rank != a->root)
        return RCOLL_OK;
    size_t bytes = rcoll_reduce_ptr_align((size_t)a->size * a->bytes);
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, bytes + (size_t)a->size * sizeof(void *), "reduce");
    return a->tmp ? RCOLL_OK : RCOLL_ERR_NOMEM;
}

static const char *not_for(const rcoll_args_t *a)
{
    return a->bytes > a->tl->inbox_bytes ? "the vector is larger than the outbox" : NULL;
}

const rcoll_algo_t rcoll_reduce_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_REDUCE,
    .summary = "[qian-phd] ch. 6 Shm-Direct: every rank publishes its vector and leaves, the root "
               "reads them in arrival order and folds: one step",
    .run = reduce_direct_read,
    .prepare = prepare,
    .not_for = not_for,
    .fallback = &rcoll_reduce_reduce_scatter_gather,
    .limits = "vectors of at most RCOLL_INBOX_BYTES (one publication in the outbox)",
};
