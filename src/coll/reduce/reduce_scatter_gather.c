/* Reduce, reduce-scatter then gather ([rabenseifner04]'s reduce): the folding is spread over all
 * ranks instead of the root's alone.
 * Steps: (1) an alltoallv of slices (a rank's own stays where it is), (2) each rank folds the
 * P copies of its slice in rank order, (3) a gather of the reduced slices into the root's
 * result.
 * Bytes: each rank receives (P-1) m / P and does (P-1) m / P operations; the root receives
 * (P-1) m / P more (gather_reduce: the root (P-1) m of both).
 * When it wins: large vectors (docs/tuning.md, "Reductions"). Vectors beyond
 * RCOLL_REDUCE_SCRATCH run in parts. */
#include "coll/reduce.h"

static rcoll_status_t one_part(rcoll_args_t *a, unsigned char *tmp, unsigned char *mine_out,
                               rcoll_reduce_lists_t *l, size_t at, size_t n)
{
    struct rcoll_team *t = a->team;
    int P = a->size, me = a->rank;
    bool root = me == a->root;
    size_t es = rcoll_dtype_size(a->dtype);
    const char *send = (const char *)a->sendbuf + at * es;
    char *recv = root ? (char *)a->recvbuf + at * es : NULL;
    size_t mine = rcoll_slice_n(n, P, me) * es, lo = rcoll_slice_lo(n, P, me) * es;
    size_t *sc = l->v, *sd = l->v + P, *rc = l->v + 2 * P, *rd = l->v + 3 * P;
    for (int j = 0; j < P; j++) { /* my own slice stays where it is */
        sc[j] = j == me ? 0 : rcoll_slice_n(n, P, j) * es;
        sd[j] = rcoll_slice_lo(n, P, j) * es;
        rc[j] = j == me ? 0 : mine;
        rd[j] = (size_t)j * mine;
    }
    rcoll_status_t st = rcoll_alltoallv(t, send, sc, sd, tmp, rc, rd);
    if (st != RCOLL_OK)
        return st;
    /* The root folds straight into its result (its slice is in place for the gather). */
    unsigned char *out = root ? (unsigned char *)recv + lo : mine_out;
    rcoll_reduce_strided(l->in, tmp, mine, P);
    l->in[me] = send + lo;
    st = rcoll_op_fold(a->op, a->dtype, l->in, P, out, mine / es);
    if (st != RCOLL_OK)
        return st;
    const void *in = root ? RCOLL_IN_PLACE : (const void *)out;
    if (n % (size_t)P == 0)
        return rcoll_gather(t, in, recv, mine, a->root);
    sc[me] = mine;
    return rcoll_gatherv(t, in, mine, recv, sc, sd, a->root);
}

static rcoll_status_t reduce_reduce_scatter_gather(rcoll_args_t *a)
{
    int P = a->size;
    size_t es = rcoll_dtype_size(a->dtype), part = rcoll_reduce_part(a, 1);
    part = part < a->count ? part : a->count;
    size_t slice = rcoll_slice_n(part, P, 0) * es;
    unsigned char *tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)(P + 1) * slice, "reduce");
    rcoll_reduce_lists_t l;
    if (!tmp || !rcoll_reduce_lists(a, &l, "reduce"))
        return RCOLL_ERR_NOMEM;
    for (size_t at = 0; at < a->count; at += part) {
        size_t n = a->count - at < part ? a->count - at : part;
        rcoll_status_t st = one_part(a, tmp, tmp + (size_t)P * slice, &l, at, n);
        if (st != RCOLL_OK)
            return rcoll_reduce_failed(a, "reduce", st);
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_reduce_reduce_scatter_gather = {
    .name = "reduce_scatter_gather",
    .coll = RCOLL_COLL_REDUCE,
    .summary = "[rabenseifner04] alltoall of slices (one-sided on one node), each rank folds its "
               "slice, gather of the slices to the root",
    .run = reduce_reduce_scatter_gather,
    .nested = true,
};
