/* Allgather Direct in fixed order: the baseline the arrival-aware Direct is measured against.
 * Paper: [qian-phd] 6.4.2-6.4.3, the non-PAP Direct: "each process p first posts its RDMA Writes
 * to all other processes in sequence (after it receives the destination buffer addresses) ...
 * finally it waits to receive the incoming messages from all processes".
 * Steps: one; rank r writes its block to (r+1), (r+2), ... mod P strictly in that order, a
 * single-copy write waiting for its receiver's advertised buffer (its arrival); then it takes
 * the blocks from (r-1), (r-2), ... in that order. The same protocols as direct (inline, the
 * peer's inbox, single copy), the same bytes: (P-1) m in P-1 messages.
 * When it wins: never by design: kept, selectable only by name (RCOLL_TUNE, rcoll-bench
 * rcoll:direct_fixed), to show what serving peers in arrival order gains under skew
 * (rcoll-bench --mif; docs/tuning.md, "Process arrival patterns"). */
#include "coll/allgather/blocks.h"

const rcoll_algo_t rcoll_allgather_direct_fixed = {
    .name = "direct_fixed",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] 6.4 non-PAP baseline: Direct with peers served in rank order",
    .run = ag_direct_fixed_order,
    .by_name = true, /* a baseline: never the rules' or the model's pick */
};
