/* Allreduce, reduce-scatter then allgather ([rabenseifner04]; the one-node form of Open MPI xhc and
 * UCC's shared-memory layer: each rank reduces its own slice by reading it from every peer).
 * Steps: (1) an alltoallv of slices (slices differ by at most one element; a rank's own slice
 * stays where it is), (2) each rank
 * folds the P copies of its slice in rank order into its slice of the result, (3) an allgather
 * in place of the reduced slices.
 * Bytes: each rank receives 2 (P-1) m / P and does (P-1) m / P operations (gather_all: (P-1) m
 * of both); two synchronizations instead of one.
 * When it wins: medium and large vectors, where copying and operations are the cost
 * (docs/tuning.md, "Reductions"). Vectors beyond RCOLL_REDUCE_SCRATCH run in parts. */
#include "coll/reduce.h"

/* The exchange of a part's slices: block j of this rank's part (slice j) to rank j, this
 * rank's slice from every peer at `tmp` + j * mine; its own slice stays where it is (a zero
 * count: no copy). */
static rcoll_status_t exchange(rcoll_args_t *a, const char *send, unsigned char *tmp, size_t *v, size_t n)
{
    int P = a->size, me = a->rank;
    size_t es = rcoll_dtype_size(a->dtype), mine = rcoll_slice_n(n, P, me) * es;
    size_t *sc = v, *sd = v + P, *rc = v + 2 * P, *rd = v + 3 * P;
    for (int j = 0; j < P; j++) {
        sc[j] = j == me ? 0 : rcoll_slice_n(n, P, j) * es;
        sd[j] = rcoll_slice_lo(n, P, j) * es;
        rc[j] = j == me ? 0 : mine;
        rd[j] = (size_t)j * mine;
    }
    return rcoll_alltoallv(a->team, send, sc, sd, tmp, rc, rd);
}

/* One part of `n` elements at element `at`: its P slices exchanged, folded, gathered. */
static rcoll_status_t one_part(rcoll_args_t *a, unsigned char *tmp, rcoll_reduce_lists_t *l, size_t at, size_t n)
{
    int P = a->size, me = a->rank;
    size_t es = rcoll_dtype_size(a->dtype);
    const char *send = (const char *)a->sendbuf + at * es;
    char *recv = (char *)a->recvbuf + at * es;
    size_t mine = rcoll_slice_n(n, P, me) * es, lo = rcoll_slice_lo(n, P, me) * es;
    rcoll_status_t st = exchange(a, send, tmp, l->v, n);
    if (st != RCOLL_OK)
        return st;
    rcoll_reduce_strided(l->in, tmp, mine, P);
    l->in[me] = send + lo;
    st = rcoll_op_fold(a->op, a->dtype, l->in, P, recv + lo, mine / es);
    if (st != RCOLL_OK)
        return st;
    if (n % (size_t)P == 0)
        return rcoll_allgather(a->team, RCOLL_IN_PLACE, recv, mine);
    l->v[me] = mine; /* the slices' sizes and places, mine included */
    return rcoll_allgatherv(a->team, RCOLL_IN_PLACE, mine, recv, l->v, l->v + P);
}

static rcoll_status_t allreduce_reduce_scatter_allgather(rcoll_args_t *a)
{
    int P = a->size;
    size_t es = rcoll_dtype_size(a->dtype), part = rcoll_reduce_part(a, 1);
    part = part < a->count ? part : a->count;
    size_t slice = rcoll_slice_n(part, P, 0) * es;
    unsigned char *tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)P * slice, "allreduce");
    rcoll_reduce_lists_t l;
    if (!tmp || !rcoll_reduce_lists(a, &l, "allreduce"))
        return RCOLL_ERR_NOMEM;
    for (size_t at = 0; at < a->count; at += part) {
        size_t n = a->count - at < part ? a->count - at : part;
        rcoll_status_t st = one_part(a, tmp, &l, at, n);
        if (st != RCOLL_OK)
            return rcoll_reduce_failed(a, "allreduce", st);
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_allreduce_reduce_scatter_allgather = {
    .name = "reduce_scatter_allgather",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "[rabenseifner04] alltoall of slices (one-sided on one node), each rank folds its "
               "slice, allgather of the slices",
    .run = allreduce_reduce_scatter_allgather,
    .nested = true,
};
