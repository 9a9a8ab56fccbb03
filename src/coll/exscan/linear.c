/* Exscan by a pipelined chain: scan/linear.c, where the prefix from r - 1 is this rank's result
 * as it comes (single copy into its receive buffer) and the prefix with its own vector goes on
 * to r + 1 from scratch (rank 0: its own vector; its receive buffer is not written).
 * Steps: P - 1 along the chain, overlapped part by part. Bytes per rank: m in, m out.
 * When it wins: large vectors (docs/tuning.md, "Reductions"). */
#include "coll/reduce.h"

static rcoll_status_t exscan_linear(rcoll_args_t *a)
{
    return rcoll_scan_linear_run(a, false, "exscan");
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_scan_linear_prepare(a, false, "exscan");
}

const rcoll_algo_t rcoll_exscan_linear = {
    .name = "linear",
    .coll = RCOLL_COLL_EXSCAN,
    .summary = "[thakur05] chain from rank 0 up, in parts: each rank's result is the prefix from "
               "below, which it passes on with its own vector folded in",
    .run = exscan_linear,
    .prepare = prepare,
    .reorders = true,
    .fallback = &rcoll_exscan_direct,
    .limits = "not with RCOLL_REPRODUCIBLE=1",
};
