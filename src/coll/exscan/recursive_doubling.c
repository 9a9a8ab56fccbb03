/* Exscan by recursive doubling: scan/recursive_doubling.c without this rank's own vector in its
 * result (the first lower group's fold becomes it; rank 0 gets none and its receive buffer is
 * not written).
 * Steps: ceil(log2 P). Bytes per rank: m sent and received per step.
 * When it wins: as the scan's (docs/tuning.md, "Reductions"). */
#include "coll/reduce.h"

static rcoll_status_t exscan_rd(rcoll_args_t *a)
{
    return rcoll_scan_rd_run(a, false, "exscan");
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_scan_rd_prepare(a, "exscan");
}

const rcoll_algo_t rcoll_exscan_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = RCOLL_COLL_EXSCAN,
    .summary = "[thakur05] ceil(log2 P) exchanges of the group's fold, lower op higher",
    .run = exscan_rd,
    .prepare = prepare,
    .not_for = rcoll_scan_rd_not_for,
    .reorders = true,
    .fallback = &rcoll_exscan_direct,
    .limits = "vectors up to RCOLL_REDUCE_SCRATCH / (2 ceil(log2 P) + 1); not with RCOLL_REPRODUCIBLE=1",
};
