/* Reduce_scatter by pairwise exchange, on the transport itself.
 * Paper: [thakur05] section 4.2 (MPICH's reduce-scatter for long messages): P - 1 steps; at
 * step s a rank sends its copy of block (rank + s) mod P to that rank and folds the copy of its
 * own block from (rank - s) mod P into its result (coll/reduce_pairwise.h has the messages).
 * Steps: P - 1, one message out and one in per step. Bytes per rank: the other ranks' blocks sent,
 * P - 1 copies of its own block received and folded (direct: the same bytes, all at once).
 * Fold order: own, then (rank - 1), (rank - 2), ...: a commutative operation only, and
 * RCOLL_REPRODUCIBLE=1 excludes it.
 * When it wins: large blocks across nodes, where one message per rank in flight beats direct's
 * P - 1 at once (docs/tuning.md, "Reductions"). */
#include "coll/reduce_pairwise.h"

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_pairwise_prepare(a, "reduce_scatter", true);
}

static rcoll_status_t run(rcoll_args_t *a)
{
    return rcoll_pairwise_run(a, "reduce_scatter", true);
}

static const char *not_for(const rcoll_args_t *a)
{
    return rcoll_pairwise_not_for(a, true);
}

const rcoll_algo_t rcoll_reduce_scatter_pairwise = {
    .name = "pairwise",
    .coll = RCOLL_COLL_REDUCE_SCATTER,
    .summary = "[thakur05] P - 1 steps, each sending one block to rank + s and folding the copy of "
               "this rank's block from rank - s",
    .run = run,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_reduce_scatter_direct,
    .limits = "commutative operations; P times the largest block up to RCOLL_REDUCE_SCRATCH; not "
              "with RCOLL_REPRODUCIBLE=1",
};
