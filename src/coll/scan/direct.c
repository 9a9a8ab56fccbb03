/* Scan, direct: every rank reads the vectors of the ranks below it and folds them with its own
 * in rank order (the one-sided form of [thakur05]'s linear scan: on one node the exchange is an
 * alltoallv whose blocks go from each rank to every higher rank, read out of the sender's
 * buffer; across nodes its own selection).
 * Steps: 1 alltoallv; rank r does r m operations.
 * Bytes: rank r receives r m; rank r sends (P-1-r) m (one copy published, read that many times).
 * When it wins: one synchronization for any P; a log-step scan ([thakur05]'s recursive
 * doubling) would fold in another order. Vectors beyond RCOLL_REDUCE_SCRATCH / P run in parts. */
#include "coll/reduce.h"

rcoll_status_t rcoll_scan_run(rcoll_args_t *a, bool inclusive, const char *coll)
{
    int P = a->size, me = a->rank;
    size_t es = rcoll_dtype_size(a->dtype), part = rcoll_reduce_part(a, (size_t)P);
    part = part < a->count ? part : a->count;
    unsigned char *below = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)P * part * es, coll);
    rcoll_reduce_lists_t l;
    if (!below || !rcoll_reduce_lists(a, &l, coll))
        return RCOLL_ERR_NOMEM;
    size_t *v = l.v;
    for (size_t at = 0; at < a->count; at += part) {
        size_t n = a->count - at < part ? a->count - at : part, bytes = n * es;
        for (int j = 0; j < P; j++) {
            v[j] = j > me ? bytes : 0;     /* to every rank above */
            v[P + j] = 0;                  /* the same vector to each */
            v[2 * P + j] = j < me ? bytes : 0; /* from every rank below */
            v[3 * P + j] = (size_t)j * bytes;
        }
        const char *mine = (const char *)a->sendbuf + at * es;
        rcoll_status_t st = rcoll_alltoallv(a->team, mine, v, v + P, below, v + 2 * P, v + 3 * P);
        if (st != RCOLL_OK)
            return rcoll_reduce_failed(a, coll, st);
        if (!inclusive && me == 0)
            continue; /* exscan's rank 0: no result (its receive buffer may be NULL) */
        rcoll_reduce_strided(l.in, below, bytes, me);
        l.in[me] = mine; /* where it is (the output itself, in place) */
        st = rcoll_op_fold(a->op, a->dtype, l.in, inclusive ? me + 1 : me, (char *)a->recvbuf + at * es, n);
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, coll);
    }
    return RCOLL_OK;
}

static rcoll_status_t scan_direct(rcoll_args_t *a)
{
    return rcoll_scan_run(a, true, "scan");
}

const rcoll_algo_t rcoll_scan_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_SCAN,
    .summary = "alltoallv from every rank to the ranks above (one-sided on one node), each rank "
               "folds the vectors below its own in rank order",
    .run = scan_direct,
    .nested = true,
};
