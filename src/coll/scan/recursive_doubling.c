/* Scan by recursive doubling, on the transport itself (exscan/recursive_doubling.c runs it too).
 * Paper: [thakur05] section 4.6 (MPICH's scan): ceil(log2 P) exchanges. At step k rank r swaps
 * with r XOR 2^k (where that rank exists) the fold of its aligned group of 2^k ranks; a group is
 * always consecutive ranks and a rank folds lower op higher, so a non-commutative operation gets
 * its operands in rank order. From a lower partner the rank also folds the partner's group into
 * its result (exscan: the first one becomes it).
 * Messages as allreduce/recursive_doubling.c: inline when tiny, through the inbox below the
 * zero-copy threshold, else single copy into the partner's scratch, step k in slot k; each fold
 * of the group's vector has its own output (a network put's source stays untouched until the
 * rank leaves); an in-place input is copied first.
 * Fold order: rank order, bracketed as the exchanges go: RCOLL_REPRODUCIBLE=1 excludes it.
 * Steps: ceil(log2 P). Bytes per rank: m sent and received per step; up to 2 m operations.
 * When it wins: teams across nodes, where direct's alltoallv gives rank r the r vectors below it
 * (docs/tuning.md, "Reductions"). */
#include "coll/msg.h"
#include "coll/reduce.h"
#include "coll/schedule.h"

/* Slots of m bytes: incoming of step k, then the group's folds 0..steps-1, the in-place copy. */
static size_t slots(int steps)
{
    return 2 * (size_t)steps + 1;
}

rcoll_status_t rcoll_scan_rd_prepare(rcoll_args_t *a, const char *coll)
{
    size_t bytes = slots(rcoll_ceil_log2(a->size)) * a->bytes;
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, bytes, coll);
    if (!a->tmp)
        return RCOLL_ERR_NOMEM;
    a->target = a->tmp;
    a->target_bytes = bytes;
    return RCOLL_OK;
}

/* One exchange with `partner` at step k: where its group's vector sits. */
static rcoll_status_t exchange(rcoll_args_t *a, rcoll_msg_proto_t pr, int partner, int k, const void *group,
                               const unsigned char **in)
{
    size_t slot = (size_t)k * a->bytes;
    rcoll_status_t st = rcoll_msg_put(a, partner, (unsigned)k, pr, group, a->bytes, slot);
    if (st != RCOLL_OK)
        return st;
    rcoll_event_t ev = rcoll_ev_signal(partner, a->seq, (unsigned)k);
    if ((st = rcoll_tl_wait(a->tl, &ev)) != RCOLL_OK)
        return st;
    rcoll_check_len(a, &ev, a->bytes);
    const unsigned char *d = rcoll_msg_data(a, partner, pr, slot);
    *in = d ? d : (const unsigned char *)a->tmp + slot;
    return RCOLL_OK;
}

rcoll_status_t rcoll_scan_rd_run(rcoll_args_t *a, bool inclusive, const char *coll)
{
    int P = a->size, r = a->rank, steps = rcoll_ceil_log2(P);
    size_t m = a->bytes;
    unsigned char *tmp = a->tmp;
    rcoll_msg_proto_t pr = rcoll_msg_proto(a, m, (size_t)steps * m, true);
    const void *group = a->sendbuf;
    if (a->sendbuf == a->recvbuf) /* the result is written while the input may be in flight */
        group = memcpy(tmp + (slots(steps) - 1) * m, a->sendbuf, m);
    const void *result = inclusive ? group : NULL;
    for (int k = 0; k < steps; k++) {
        int partner = r ^ (1 << k);
        if (partner >= P)
            continue;
        const unsigned char *in;
        rcoll_status_t st = exchange(a, pr, partner, k, group, &in);
        if (st != RCOLL_OK)
            return st;
        void *next = tmp + ((size_t)steps + (size_t)k) * m;
        bool lower = partner < r;
        if ((st = rcoll_fold2(a, lower ? in : group, lower ? group : in, next, a->bytes, coll)) != RCOLL_OK)
            return st;
        group = next;
        if (!lower)
            continue;
        if (!result) { /* exscan's first lower group */
            result = in;
            continue;
        }
        if ((st = rcoll_fold2(a, in, result, a->recvbuf, a->bytes, coll)) != RCOLL_OK) /* never sent: in place */
            return st;
        result = a->recvbuf;
    }
    if (result && result != a->recvbuf)
        memcpy(a->recvbuf, result, m);
    return RCOLL_OK;
}

static rcoll_status_t scan_rd(rcoll_args_t *a)
{
    return rcoll_scan_rd_run(a, true, "scan");
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_scan_rd_prepare(a, "scan");
}

const char *rcoll_scan_rd_not_for(const rcoll_args_t *a)
{
    if (slots(rcoll_ceil_log2(a->size)) * a->bytes > RCOLL_REDUCE_SCRATCH)
        return "the vector times 2 ceil(log2 P) + 1 exceeds RCOLL_REDUCE_SCRATCH";
    return NULL;
}

const rcoll_algo_t rcoll_scan_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = RCOLL_COLL_SCAN,
    .summary = "[thakur05] ceil(log2 P) exchanges of the group's fold, lower op higher",
    .run = scan_rd,
    .prepare = prepare,
    .not_for = rcoll_scan_rd_not_for,
    .reorders = true,
    .fallback = &rcoll_scan_direct,
    .limits = "vectors up to RCOLL_REDUCE_SCRATCH / (2 ceil(log2 P) + 1); not with RCOLL_REPRODUCIBLE=1",
};
