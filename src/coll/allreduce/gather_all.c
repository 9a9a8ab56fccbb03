/* Allreduce, every rank gathers every vector and folds them itself.
 * Design: the one-node tiny-vector form of the shared-memory reductions ([thakur05]; Open MPI xhc
 * "allgather then local reduce"): one allgather of the vectors (on one node the one-sided
 * direct_read of [qian-phd] ch. 6's Shm-Direct: each rank publishes its vector once and reads
 * its peers' in arrival order; across nodes the allgather's own selection), then each rank folds
 * the P vectors in rank order. One synchronization; every rank computes the same fold, so the
 * result is the same bits everywhere.
 * Steps: 1 allgather; then (P-1) m of local operations per rank.
 * Bytes: each rank receives (P-1) m, sends m (published once; read P-1 times).
 * When it wins: small vectors, where one synchronization is the cost (docs/tuning.md,
 * "Reductions"). Vectors beyond RCOLL_REDUCE_SCRATCH / P run in parts. */
#include "coll/reduce.h"

static rcoll_status_t allreduce_gather_all(rcoll_args_t *a)
{
    size_t es = rcoll_dtype_size(a->dtype), part = rcoll_reduce_part(a, (size_t)a->size);
    part = part < a->count ? part : a->count;
    unsigned char *all = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)a->size * part * es, "allreduce");
    rcoll_reduce_lists_t l;
    if (!all || !rcoll_reduce_lists(a, &l, "allreduce"))
        return RCOLL_ERR_NOMEM;
    for (size_t at = 0; at < a->count; at += part) {
        size_t n = a->count - at < part ? a->count - at : part, bytes = n * es;
        rcoll_status_t st = rcoll_allgather(a->team, (const char *)a->sendbuf + at * es, all, bytes);
        if (st != RCOLL_OK)
            return rcoll_reduce_failed(a, "allreduce", st);
        rcoll_reduce_strided(l.in, all, bytes, a->size);
        st = rcoll_op_fold(a->op, a->dtype, l.in, a->size, (char *)a->recvbuf + at * es, n);
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, "allreduce");
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_allreduce_gather_all = {
    .name = "gather_all",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "allgather of the vectors (one-sided on one node), every rank folds all P in rank "
               "order: one synchronization",
    .run = allreduce_gather_all,
    .nested = true,
};
