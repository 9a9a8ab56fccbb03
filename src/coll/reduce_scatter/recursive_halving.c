/* Reduce_scatter by recursive halving, on the transport itself: reduce_scatter_block's
 * recursive halving with blocks of the counts.
 * Paper: [thakur05] section 4.2 (MPICH's reduce-scatter for commutative operations): log2 P2
 * steps, P2 the largest power of two <= P; at each step a rank sends the blocks of the half of
 * the ranks it is no longer responsible for to its partner and folds the partner's copy of the
 * half it keeps (halves split by ranks, so by bytes only as evenly as the counts are); pairs
 * fold first where P is not a power of two (coll/reduce_halving.h has the steps and messages).
 * Steps: log2 P2 (+2 where P is not a power of two). Bytes per rank: with equal counts about
 * (P-1)/P of the vector sent and received and as many operations; with skewed counts a step
 * moves what the half's ranks own (direct: every rank's block to it, P-1 messages at once).
 * Fold order: a tree's: a commutative operation only, and RCOLL_REPRODUCIBLE=1 excludes it.
 * When it wins: teams across nodes, small and medium vectors, where direct's P-1 messages per
 * rank at once are the cost (docs/tuning.md, "Reductions"). */
#include "coll/reduce_halving.h"

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_halving_prepare(a, "reduce_scatter", true);
}

static rcoll_status_t run(rcoll_args_t *a)
{
    return rcoll_halving_run(a, "reduce_scatter", true);
}

static const char *not_for(const rcoll_args_t *a)
{
    return rcoll_halving_not_for(a, true);
}

const rcoll_algo_t rcoll_reduce_scatter_recursive_halving = {
    .name = "recursive_halving",
    .coll = RCOLL_COLL_REDUCE_SCATTER,
    .summary = "[thakur05] log2 P steps, each sending the blocks of half of the ranks still held "
               "to the partner and folding the half kept (blocks of the counts)",
    .run = run,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_reduce_scatter_direct,
    .limits = "commutative operations; the whole vector up to RCOLL_REDUCE_SCRATCH / 4; not with "
              "RCOLL_REPRODUCIBLE=1",
};
