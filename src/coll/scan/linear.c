/* Scan by a pipelined chain (exscan/linear.c runs it too).
 * Paper: [thakur05] section 4.6 (MPICH's linear scan for long vectors; Open MPI's basic scan),
 * pipelined in parts. Rank r receives the prefix of ranks 0..r-1 from r - 1, part by part,
 * folds its own vector into each part and passes it on to r + 1 while the next part comes in.
 * Messages: each part single copy straight into the receiver's receive buffer (scan: where its
 * result goes; advertised on arrival) or, for small vectors, through its inbox at the same place;
 * exscan's receive buffer already holds the result, so the prefix with the own vector goes on
 * from scratch. An in-place input is copied to scratch before the rank advertises its buffer.
 * Steps: P - 1 along the chain, overlapped part by part: about (P - 1 + parts) part times.
 * Bytes per rank: m in, m out, m operations.
 * Fold order: ((rank 0 op rank 1) op rank 2) ..., rank order but bracketed from the left, not
 * the linear fold's: RCOLL_REPRODUCIBLE=1 excludes it.
 * When it wins: large vectors, where direct's r vectors into rank r are the cost
 * (docs/tuning.md, "Reductions"). */
#include "coll/msg.h"
#include "coll/reduce.h"

#include <string.h>

/* Bytes of a part: 32 KB of whole elements on one node (measured np=8: 0.5-0.8x native from
 * 64 KB, 1.03-1.08x with 64 KB parts), 64 KB across nodes, the last part taking the rest (so up
 * to two parts), more where the vector would need more parts than a signal's steps count.
 * Never smaller across nodes on purpose: from 64 KB a message over UCX goes by rendezvous, complete only once
 * the receiver has it; a chain of smaller (eager) messages left its last one's tail in the
 * sender's tcp buffer, and the sender, gone on into native MPI, never wrote it out (measured:
 * 4 MB at 4 nodes over UCX tcp hung with 32 KB parts). */
static size_t part_bytes(const rcoll_args_t *a)
{
    size_t es = rcoll_dtype_size(a->dtype), part = a->team->node_count > 1 ? 64 * 1024 : 32 * 1024;
    if (a->bytes / part >= 0x8000)
        part = a->bytes / 0x8000 + 1;
    part = part / es * es;
    return part ? part : es;
}

/* Part `off`'s length: a whole part, or the rest where less than two parts are left. */
static size_t part_len(size_t m, size_t off, size_t part)
{
    return m - off < 2 * part ? m - off : part;
}

/* Scratch (RCOLL_TMP_REDUCE): exscan's prefix with the own vector (m), then the copy of an
 * in-place input (m). */
rcoll_status_t rcoll_scan_linear_prepare(rcoll_args_t *a, bool inclusive, const char *coll)
{
    bool inplace = a->sendbuf == a->recvbuf;
    size_t bytes = (inclusive ? 0 : a->bytes) + (inplace ? a->bytes : 0);
    if (!bytes || a->size < 2)
        return RCOLL_OK;
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, bytes, coll);
    if (!a->tmp)
        return RCOLL_ERR_NOMEM;
    if (inplace) /* before peers may write into the receive buffer */
        a->sendbuf = memcpy((unsigned char *)a->tmp + (inclusive ? 0 : a->bytes), a->recvbuf, a->bytes);
    return RCOLL_OK;
}

rcoll_status_t rcoll_scan_linear_run(rcoll_args_t *a, bool inclusive, const char *coll)
{
    int P = a->size, r = a->rank;
    size_t part = part_bytes(a), m = a->bytes;
    rcoll_msg_proto_t pr = rcoll_msg_proto(a, part_len(m, 0, part), m, false);
    const unsigned char *own = a->sendbuf;
    unsigned char *res = a->recvbuf, *out = inclusive ? res : a->tmp; /* what goes on to r + 1 */
    unsigned step = 0;
    for (size_t off = 0, len; off < m; off += len, step++) {
        len = part_len(m, off, part);
        const unsigned char *send = own + off;
        if (r > 0) {
            rcoll_event_t ev = rcoll_ev_signal(r - 1, a->seq, step);
            rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
            if (st != RCOLL_OK)
                return st;
            rcoll_msg_copy_out(a, r - 1, pr, off, res + off, len); /* the prefix below: in place */
            if (r < P - 1 || inclusive) {
                if ((st = rcoll_fold2(a, res + off, own + off, out + off, len, coll)) != RCOLL_OK)
                    return st;
            }
            send = out + off;
        } else if (inclusive && res != own) {
            memcpy(res + off, own + off, len);
        }
        if (r < P - 1) {
            rcoll_status_t st = rcoll_msg_put(a, r + 1, step, pr, send, len, off);
            if (st != RCOLL_OK)
                return st;
        }
    }
    return RCOLL_OK;
}

static rcoll_status_t scan_linear(rcoll_args_t *a)
{
    return rcoll_scan_linear_run(a, true, "scan");
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_scan_linear_prepare(a, true, "scan");
}

const rcoll_algo_t rcoll_scan_linear = {
    .name = "linear",
    .coll = RCOLL_COLL_SCAN,
    .summary = "[thakur05] chain from rank 0 up, in parts: each rank folds its vector into the "
               "prefix below and passes it on",
    .run = scan_linear,
    .prepare = prepare,
    .reorders = true,
    .fallback = &rcoll_scan_direct,
    .limits = "not with RCOLL_REPRODUCIBLE=1",
};
