/* Reduce, the root gathers every vector and folds them ([thakur05]'s linear reduce, with the
 * gather one-sided: on one node every rank writes its vector straight into the root's scratch,
 * [qian-phd] ch. 3 direct gather; across nodes the gather's own selection).
 * Steps: 1 gather to the root; the root folds the P vectors in rank order.
 * Bytes: the root receives (P-1) m and does (P-1) m operations; every other rank sends m.
 * When it wins: small vectors (one synchronization, nothing for the others to wait on)
 * (docs/tuning.md, "Reductions"). Vectors beyond RCOLL_REDUCE_SCRATCH / P run in parts. */
#include "coll/reduce.h"

static rcoll_status_t reduce_gather_reduce(rcoll_args_t *a)
{
    bool root = a->rank == a->root;
    size_t es = rcoll_dtype_size(a->dtype), part = rcoll_reduce_part(a, (size_t)a->size);
    part = part < a->count ? part : a->count;
    unsigned char *all = NULL;
    rcoll_reduce_lists_t l;
    if (root && (!(all = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)a->size * part * es, "reduce")) ||
                 !rcoll_reduce_lists(a, &l, "reduce")))
        return RCOLL_ERR_NOMEM;
    for (size_t at = 0; at < a->count; at += part) {
        size_t n = a->count - at < part ? a->count - at : part, bytes = n * es;
        rcoll_status_t st = rcoll_gather(a->team, (const char *)a->sendbuf + at * es, all, bytes, a->root);
        if (st != RCOLL_OK)
            return rcoll_reduce_failed(a, "reduce", st);
        if (root)
            st = rcoll_op_fold(a->op, a->dtype, rcoll_reduce_strided(l.in, all, bytes, a->size), a->size,
                               (char *)a->recvbuf + at * es, n);
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, "reduce");
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_reduce_gather_reduce = {
    .name = "gather_reduce",
    .coll = RCOLL_COLL_REDUCE,
    .summary = "gather of the vectors to the root (one-sided on one node), the root folds all P "
               "in rank order",
    .run = reduce_gather_reduce,
    .nested = true,
};
