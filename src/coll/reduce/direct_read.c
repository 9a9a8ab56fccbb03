/* Reduce Direct-read: every rank publishes its vector and leaves; the root reads them in
 * arrival order and folds.
 * Design: gather_reduce's one-step form on the transport itself (no nested gather), the
 * one-to-one half of [qian-phd] ch. 6's Shm-Direct: a rank copies its vector once into its own
 * outbox in shared memory (tiny ones into its published cache line) and raises one word; the
 * root reads each where it lies when it sees the word (transport peek; across nodes a copy out,
 * on an RDMA transport a read of the peer's registered outbox), then folds the P vectors in
 * rank order (coll/reduce.h). A rank that is not the root waits for nobody: it may be a call
 * ahead, its outbox freed once the root has left the call.
 * Vectors from 16 KB when every rank has its own core go in parts of 8 KB (coll/reduce_read.h):
 * a rank stages part i in its outbox and signals the root, which folds part i from there
 * while the rank copies part i+1 in -- the root's work overlaps the others' instead of
 * following it, and each part is folded while it is in the first-level cache.
 * Steps: one. Copies: m in per rank; the root (P-1) m operations (and (P-1) m out across nodes).
 * When it wins: small and medium vectors (docs/tuning.md, "Reductions"). Vectors larger than
 * the outbox go to reduce_scatter_gather. */
#include "coll/reduce_read.h"

static rcoll_status_t reduce_direct_read(rcoll_args_t *a)
{
    if (a->rank != a->root) {
        a->tl->pull_reader = a->root; /* the others read nothing */
        return rcoll_staged(a) ? rcoll_staged_send(a, false)
                               : a->tl->ops->publish(a->tl, a->seq, a->sendbuf, a->bytes);
    }
    if (rcoll_staged(a))
        return rcoll_staged_fold(a, "reduce");
    rcoll_status_t st = rcoll_read_published(a, 0, a->bytes, a->sendbuf);
    if (st != RCOLL_OK)
        return st;
    st = rcoll_op_fold(a->op, a->dtype, rcoll_read_inputs(a), a->size, a->recvbuf, a->count);
    return rcoll_reduce_fold_status(a, st, "reduce");
}

/* The root's scratch (the others read nothing). */
static rcoll_status_t prepare(rcoll_args_t *a)
{
    return a->rank == a->root ? rcoll_read_prepare(a, "reduce") : RCOLL_OK;
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
