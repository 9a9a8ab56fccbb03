/* Reduce_scatter_block, direct: an alltoall of the blocks, then each rank folds the P copies
 * of its block ([thakur05]'s pairwise exchange with its P-1 steps in flight at once; on one node
 * the alltoall is one-sided: every rank reads its block out of each peer's buffer).
 * Steps: 1 alltoall of m bytes per pair; (P-1) m operations per rank, in rank order.
 * Bytes: each rank receives (P-1) m and sends (P-1) m.
 * When it wins: every size (the data each rank must see is (P-1) m; docs/tuning.md,
 * "Reductions"). Blocks beyond RCOLL_REDUCE_SCRATCH / P run in parts. */
#include "coll/reduce.h"

static rcoll_status_t reduce_scatter_block_direct(rcoll_args_t *a)
{
    int P = a->size;
    size_t es = rcoll_dtype_size(a->dtype), part = rcoll_reduce_part(a, (size_t)P);
    part = part < a->count ? part : a->count;
    unsigned char *all = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)P * part * es, "reduce_scatter_block");
    rcoll_reduce_lists_t l;
    if (!all || !rcoll_reduce_lists(a, &l, "reduce_scatter_block"))
        return RCOLL_ERR_NOMEM;
    size_t *v = l.v;
    size_t block = a->count * es;
    for (size_t at = 0; at < a->count; at += part) {
        size_t n = a->count - at < part ? a->count - at : part, bytes = n * es;
        rcoll_status_t st;
        if (n == a->count) {
            st = rcoll_alltoall(a->team, a->sendbuf, all, bytes);
        } else { /* a part of every block: strided, the v-form */
            for (int j = 0; j < P; j++) {
                v[j] = v[2 * P + j] = bytes;
                v[P + j] = (size_t)j * block + at * es;
                v[3 * P + j] = (size_t)j * bytes;
            }
            st = rcoll_alltoallv(a->team, a->sendbuf, v, v + P, all, v + 2 * P, v + 3 * P);
        }
        if (st != RCOLL_OK)
            return rcoll_reduce_failed(a, "reduce_scatter_block", st);
        st = rcoll_op_fold(a->op, a->dtype, rcoll_reduce_strided(l.in, all, bytes, P), P,
                           (char *)a->recvbuf + at * es, n);
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, "reduce_scatter_block");
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_reduce_scatter_block_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_REDUCE_SCATTER_BLOCK,
    .summary = "alltoall of the blocks (one-sided on one node), each rank folds its P copies in "
               "rank order",
    .run = reduce_scatter_block_direct,
    .nested = true,
};
