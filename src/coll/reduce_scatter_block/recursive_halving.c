/* Reduce_scatter_block by recursive halving, on the transport itself.
 * Paper: [thakur05] section 4.2 (MPICH's reduce-scatter for commutative operations): log2 P2
 * steps, P2 the largest power of two <= P; at each step a rank sends half of the blocks it is
 * still responsible for to its partner and folds the partner's copy of the half it keeps; pairs
 * fold first where P is not a power of two (coll/reduce_halving.h has the steps and messages).
 * Steps: log2 P2 (+2 where P is not a power of two). Bytes per rank: about (P-1)/P of the P
 * blocks sent and received, and as many operations (direct: the same bytes, all P-1 at once).
 * Fold order: a tree's: a commutative operation only, and RCOLL_REPRODUCIBLE=1 excludes it.
 * When it wins: teams across nodes, small and medium blocks, where direct's P-1 messages per
 * rank at once are the cost (docs/tuning.md, "Reductions"). */
#include "coll/reduce_halving.h"

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_halving_prepare(a, "reduce_scatter_block", false);
}

static rcoll_status_t run(rcoll_args_t *a)
{
    return rcoll_halving_run(a, "reduce_scatter_block", false);
}

static const char *not_for(const rcoll_args_t *a)
{
    return rcoll_halving_not_for(a, false);
}

const rcoll_algo_t rcoll_reduce_scatter_block_recursive_halving = {
    .name = "recursive_halving",
    .coll = RCOLL_COLL_REDUCE_SCATTER_BLOCK,
    .summary = "[thakur05] log2 P steps, each sending half of the blocks still held to the partner "
               "and folding the half kept",
    .run = run,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_reduce_scatter_block_direct,
    .limits = "commutative operations; P blocks up to RCOLL_REDUCE_SCRATCH / 4; not with "
              "RCOLL_REPRODUCIBLE=1",
};
