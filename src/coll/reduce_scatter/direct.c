/* Reduce_scatter, direct: an alltoallv of the blocks (block j, counts[j] elements, to rank j),
 * then each rank folds the P copies of its block in rank order (the v-form of
 * reduce_scatter_block's direct; [thakur05]'s pairwise exchange, all steps in flight).
 * Steps: 1 alltoallv; (P-1) c_rank operations per rank.
 * Bytes: rank r receives (P-1) c_r and sends the sum of the other ranks' counts.
 * When it wins: every size (docs/tuning.md, "Reductions"). Blocks beyond
 * RCOLL_REDUCE_SCRATCH / P run in parts; a part's exchange carries the same share of every
 * block, so every rank runs the same number of parts. */
#include "coll/reduce.h"

static rcoll_status_t reduce_scatter_direct(rcoll_args_t *a)
{
    int P = a->size, me = a->rank;
    size_t es = rcoll_dtype_size(a->dtype), part = rcoll_reduce_part(a, (size_t)P), most = 0;
    for (int j = 0; j < P; j++)
        most = a->rcounts[j] > most ? a->rcounts[j] : most;
    most /= es; /* elements of the largest block: every rank agrees on it */
    part = part < most ? part : most;
    unsigned char *all = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)P * part * es, "reduce_scatter");
    rcoll_reduce_lists_t l;
    if (!all || !rcoll_reduce_lists(a, &l, "reduce_scatter"))
        return RCOLL_ERR_NOMEM;
    size_t *v = l.v;
    size_t mine = a->rcounts[me] / es;
    for (size_t at = 0; at < most; at += part) {
        size_t off = 0, take = 0;
        for (int j = 0; j < P; j++) {
            size_t cj = a->rcounts[j] / es;
            size_t n = cj > at ? (cj - at < part ? cj - at : part) : 0;
            v[j] = n * es;                 /* my part of block j, sent to rank j */
            v[P + j] = off + at * es;
            off += a->rcounts[j];
        }
        take = mine > at ? (mine - at < part ? mine - at : part) : 0;
        for (int j = 0; j < P; j++) {
            v[2 * P + j] = take * es;      /* my block's part, from rank j */
            v[3 * P + j] = (size_t)j * take * es;
        }
        rcoll_status_t st = rcoll_alltoallv(a->team, a->sendbuf, v, v + P, all, v + 2 * P, v + 3 * P);
        if (st != RCOLL_OK)
            return rcoll_reduce_failed(a, "reduce_scatter", st);
        if (take)
            st = rcoll_op_fold(a->op, a->dtype, rcoll_reduce_strided(l.in, all, take * es, P), P,
                               (char *)a->recvbuf + at * es, take);
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, "reduce_scatter");
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_reduce_scatter_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_REDUCE_SCATTER,
    .summary = "alltoallv of the blocks (one-sided on one node), each rank folds its P copies in "
               "rank order",
    .run = reduce_scatter_direct,
    .nested = true,
};
