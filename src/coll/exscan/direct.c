/* Exscan, direct: as scan/direct.c without this rank's own vector (rank 0 receives nothing
 * and its receive buffer is not written).
 * Steps: 1 alltoallv; rank r does (r-1) m operations. Bytes: rank r receives r m.
 * When it wins: one synchronization for any P (docs/tuning.md, "Reductions"). */
#include "coll/reduce.h"

static rcoll_status_t exscan_direct(rcoll_args_t *a)
{
    return rcoll_scan_run(a, false, "exscan");
}

const rcoll_algo_t rcoll_exscan_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_EXSCAN,
    .summary = "alltoallv from every rank to the ranks above (one-sided on one node), each rank "
               "folds the vectors below it in rank order",
    .run = exscan_direct,
    .nested = true,
};
