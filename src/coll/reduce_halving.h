/* Recursive halving ([thakur05] section 4.2, MPICH's reduce-scatter for commutative operations),
 * shared by reduce_scatter_block and reduce_scatter (blocks of one size or of the counts): log2
 * P2 steps, P2 the largest power of two <= P. At each step a rank keeps half of the blocks it is
 * still responsible for (a range of whole blocks, split at the middle rank), sends the other
 * half to its partner (distance halving: P2/2 first) and folds the partner's copy of the half it
 * keeps. Where P is not a power of two, the first 2 (P - P2) ranks pair up first: even rank r
 * hands its whole vector to r + 1 and waits for its block; r + 1 folds the two and takes part
 * responsible for blocks r and r + 1.
 * Messages: inline when tiny, through the receiver's inbox below the zero-copy threshold, else
 * single copy into its scratch, each step at its own place (a partner running ahead never
 * overwrites what this rank has not folded); a rank folds into its own accumulator only the half
 * it keeps, never what it sent (a network put's source stays untouched until it leaves).
 * Fold order: a tree's (commutative operations only; RCOLL_REPRODUCIBLE=1 excludes it). */
#ifndef RCOLL_COLL_REDUCE_HALVING_H
#define RCOLL_COLL_REDUCE_HALVING_H

#include "coll/reduce.h"

/* counts: the blocks are reduce_scatter's (a->rcounts, a->rdispls in bytes), else P blocks of
 * a->bytes. */
/* The scratch of a rank that takes part in the halving (4 times the P blocks), advertised. */
rcoll_status_t rcoll_halving_prepare(rcoll_args_t *a, const char *coll, bool counts);
rcoll_status_t rcoll_halving_run(rcoll_args_t *a, const char *coll, bool counts);
/* Why the halving cannot run this call (a non-commutative operation, too large), or NULL. */
const char *rcoll_halving_not_for(const rcoll_args_t *a, bool counts);

#endif
