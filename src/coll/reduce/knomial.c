/* Reduce over the k-port binomial tree (a (k+1)-nomial tree; k is RCOLL_KPORT, default 2).
 * Paper: [thakur05] section 4.5 (MPICH's binomial reduce for short vectors) on the tree of
 * [qian-phd] 3.4.1, rooted at the root (ranks relative to it). The fan-in is coll/reduce_tree.h:
 * a rank waits for its children's partials (each in its own slot: inline, through the inbox or
 * single copy into its scratch), folds own op (child 1 op (child 2 ...)), sends the result up.
 * Steps: ceil(log_{k+1} P); per rank at most k ceil(log_{k+1} P) vectors in, one out, as many
 * operations; the root receives k per level instead of P - 1.
 * Fold order: rank order from the root on, bracketed as the tree: a non-commutative operation
 * only with root 0, and RCOLL_REPRODUCIBLE=1 excludes it.
 * When it wins: small vectors on many ranks, where P - 1 vectors into one root are the cost
 * (docs/tuning.md, "Reductions"). */
#include "coll/reduce_tree.h"
#include "coll/schedule.h"

static rcoll_status_t reduce_knomial(rcoll_args_t *a)
{
    return rcoll_fanin(a, a->recvbuf, "reduce");
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    return rcoll_fanin_prepare(a, "reduce");
}

static const char *not_for(const rcoll_args_t *a)
{
    if (!rcoll_op_commutative(a->op) && a->root != 0)
        return "a non-commutative operation with a root other than 0";
    int k = a->team->ctx->cfg.kport < 1 ? 1 : a->team->ctx->cfg.kport;
    size_t slots = (size_t)k * (size_t)rcoll_ceil_log(a->size, k + 1) + 1; /* the root's */
    if (slots * a->bytes > RCOLL_REDUCE_SCRATCH)
        return "the vector times the root's children + 1 exceeds RCOLL_REDUCE_SCRATCH";
    return NULL;
}

const rcoll_algo_t rcoll_reduce_knomial = {
    .name = "knomial",
    .coll = RCOLL_COLL_REDUCE,
    .summary = "[thakur05] k-port binomial fan-in to the root, each rank folds its children's "
               "partials: ceil(log_{k+1} P) steps",
    .run = reduce_knomial,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_reduce_gather_reduce,
    .limits = "vectors up to RCOLL_REDUCE_SCRATCH / (k ceil(log_{k+1} P) + 1); a non-commutative "
              "operation with root 0 only; not with RCOLL_REPRODUCIBLE=1",
};
