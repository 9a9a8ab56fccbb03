/* Allreduce by ring: a ring reduce-scatter, then a ring allgather, on the transport itself.
 * Paper: [patarasuk09] (bandwidth-optimal allreduce: every rank sends and receives
 * 2 (P-1)/P m, only to and from its neighbours, each link used once per step), with
 * [sur-hipc05]'s RDMA ring (section 4.3): every message is written straight into the right
 * neighbour's receive buffer (advertised once, on arrival), small ones through its inbox.
 * Steps: 2 (P-1). The vector is cut into P slices (coll/reduce.h). Reduce-scatter step j: rank r
 * sends its partial of slice (r - j) mod P to r + 1 (at j = 0 its own input) and folds the
 * partial of slice (r - j - 1) mod P from r - 1 with its own input of it; after P-1 steps it
 * holds slice (r + 1) mod P reduced. Allgather step j: it forwards slice (r + 1 - j) mod P and
 * receives slice (r - j) mod P, in place in its receive buffer.
 * A received partial lands where its slice belongs in the receive buffer (single copy) or in
 * the inbox at the same place (the allgather's half after the reduce-scatter's), so a
 * neighbour running ahead never overwrites what this rank has not folded; an in-place input is
 * copied to scratch before the rank advertises its buffer.
 * Fold order: each slice's ranks folded around the ring from the slice's own rank on, not in rank
 * order: a commutative operation only, and RCOLL_REPRODUCIBLE=1 excludes it. Every rank gets
 * the same bits (one rank folds each slice, the allgather copies it).
 * Bytes per rank: 2 (P-1)/P m sent and received, (P-1)/P m operations.
 * When it wins: large vectors across nodes, where each rank's link is the cost and Rabenseifner's
 * alltoallv puts P-1 messages on it at once (docs/tuning.md, "Reductions"). */
#include "coll/msg.h"
#include "coll/reduce.h"

#include <string.h>

/* Slice c's place and size in bytes. */
static size_t slice_off(const rcoll_args_t *a, int c)
{
    return rcoll_slice_lo(a->count, a->size, c) * rcoll_dtype_size(a->dtype);
}
static size_t slice_len(const rcoll_args_t *a, int c)
{
    return rcoll_slice_n(a->count, a->size, c) * rcoll_dtype_size(a->dtype);
}

/* Every message's protocol (alike on every rank): the largest slice, the inbox holding both
 * halves. */
static rcoll_msg_proto_t proto(const rcoll_args_t *a)
{
    return rcoll_msg_proto(a, slice_len(a, 0), 2 * a->bytes, false);
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    if (a->sendbuf != a->recvbuf || a->size < 2)
        return RCOLL_OK;
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, a->bytes, "allreduce");
    if (!a->tmp)
        return RCOLL_ERR_NOMEM;
    memcpy(a->tmp, a->recvbuf, a->bytes); /* before peers may write into the receive buffer */
    a->sendbuf = a->tmp;
    return RCOLL_OK;
}

/* Wait for step `step` from the left (its length is not checked: the left's later messages
 * may have raised the line since); where slice c sits (`half`: 0 reduce-scatter, 1
 * allgather), NULL when it came single copy into place. */
static rcoll_status_t recv_slice(rcoll_args_t *a, rcoll_msg_proto_t pr, unsigned step, int c, int half,
                                 const unsigned char **at)
{
    int left = (a->rank - 1 + a->size) % a->size;
    rcoll_event_t ev = rcoll_ev_signal(left, a->seq, step);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st != RCOLL_OK)
        return st;
    *at = rcoll_msg_data(a, left, pr, (size_t)half * a->bytes + slice_off(a, c));
    return RCOLL_OK;
}

static rcoll_status_t send_slice(rcoll_args_t *a, rcoll_msg_proto_t pr, unsigned step, int c, int half,
                                 const unsigned char *base)
{
    int right = (a->rank + 1) % a->size;
    size_t off = slice_off(a, c), remote = pr == RCOLL_MSG_COPY ? (size_t)half * a->bytes + off : off;
    return rcoll_msg_put(a, right, step, pr, base + off, slice_len(a, c), remote);
}

static rcoll_status_t reduce_scatter(rcoll_args_t *a, rcoll_msg_proto_t pr)
{
    int P = a->size, r = a->rank;
    const unsigned char *own = a->sendbuf;
    unsigned char *res = a->recvbuf;
    for (int j = 0; j < P - 1; j++) {
        int s = (r - j + P) % P, c = (r - j - 1 + 2 * P) % P;
        const unsigned char *at;
        rcoll_status_t st = send_slice(a, pr, (unsigned)j, s, 0, j == 0 ? own : res);
        if (st == RCOLL_OK)
            st = recv_slice(a, pr, (unsigned)j, c, 0, &at);
        if (st != RCOLL_OK)
            return st;
        size_t off = slice_off(a, c);
        if ((st = rcoll_fold2(a, at ? at : res + off, own + off, res + off, slice_len(a, c), "allreduce")) != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

static rcoll_status_t allgather(rcoll_args_t *a, rcoll_msg_proto_t pr)
{
    int P = a->size, r = a->rank;
    unsigned char *res = a->recvbuf;
    for (int j = 0; j < P - 1; j++) {
        int s = (r + 1 - j + P) % P, c = (r - j + P) % P;
        unsigned step = (unsigned)(P - 1 + j);
        const unsigned char *at;
        rcoll_status_t st = send_slice(a, pr, step, s, 1, res);
        if (st == RCOLL_OK)
            st = recv_slice(a, pr, step, c, 1, &at);
        if (st != RCOLL_OK)
            return st;
        if (at)
            memcpy(res + slice_off(a, c), at, slice_len(a, c));
    }
    return RCOLL_OK;
}

static rcoll_status_t allreduce_ring(rcoll_args_t *a)
{
    if (a->size < 2) {
        if (a->sendbuf != a->recvbuf)
            memcpy(a->recvbuf, a->sendbuf, a->bytes);
        return RCOLL_OK;
    }
    rcoll_msg_proto_t pr = proto(a);
    rcoll_status_t st = reduce_scatter(a, pr);
    return st == RCOLL_OK ? allgather(a, pr) : st;
}

static const char *not_for(const rcoll_args_t *a)
{
    if (!rcoll_op_commutative(a->op))
        return "a non-commutative operation (its fold order follows the ring)";
    return NULL;
}

const rcoll_algo_t rcoll_allreduce_ring = {
    .name = "ring",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "[patarasuk09] ring reduce-scatter then ring allgather, single copies to the right "
               "neighbour: 2 (P-1)/P m per rank",
    .run = allreduce_ring,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_allreduce_reduce_scatter_allgather,
    .limits = "commutative operations; not with RCOLL_REPRODUCIBLE=1",
};
