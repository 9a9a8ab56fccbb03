/* Pairwise exchange ([thakur05] section 4.2: MPICH's reduce-scatter for long messages), shared by
 * reduce_scatter_block and reduce_scatter (blocks of one size or of the counts): P - 1 steps; at
 * step s a rank sends its copy of block (rank + s) mod P to that rank and folds the copy of its
 * own block from (rank - s) mod P into its result. One message per rank in flight, each block
 * moved once: what direct's alltoall moves, without its P - 1 messages at once.
 * Messages: inline when tiny, through the receiver's inbox below the zero-copy threshold, else
 * single copy into its scratch, step s's at place s - 1 (a sender running ahead never overwrites
 * what the receiver has not folded). The result builds in scratch and is copied out at the end
 * (in place, block 0 of the input is the result's place and still to be sent).
 * Fold order: own, then (rank - 1), (rank - 2), ... -- commutative operations only,
 * RCOLL_REPRODUCIBLE=1 excludes it. */
#ifndef RCOLL_COLL_REDUCE_PAIRWISE_H
#define RCOLL_COLL_REDUCE_PAIRWISE_H

#include "coll/reduce.h"

/* counts: the blocks are reduce_scatter's (a->rcounts, a->rdispls in bytes), else P blocks of
 * a->bytes. */
/* The scratch (P - 1 incoming blocks of this rank's size, then the result), advertised. */
rcoll_status_t rcoll_pairwise_prepare(rcoll_args_t *a, const char *coll, bool counts);
rcoll_status_t rcoll_pairwise_run(rcoll_args_t *a, const char *coll, bool counts);
/* Why the exchange cannot run this call (a non-commutative operation, too large), or NULL. */
const char *rcoll_pairwise_not_for(const rcoll_args_t *a, bool counts);

#endif
