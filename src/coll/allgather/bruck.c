/* Allgather by Bruck's algorithm (concatenation by dissemination).
 * Paper: seed 001 (Qian), section 3.4 (Bruck allgather over RDMA); Bruck et al. 1997.
 * Steps: ceil(log2 P); after step k-1 rank r holds blocks r .. r+2^k-1 (mod P); at step k it
 * sends min(2^k, P-2^k) of them, from block r on, to (r - 2^k) mod P and receives as many,
 * from block r+2^k on, from (r + 2^k) mod P. Blocks keep their final place in the receive
 * buffer (and the mirrored inbox), so the usual final rotation is not needed.
 * Bytes on the wire per rank: (P-1) * m in ceil(log2 P) messages of up to two ranges.
 * When it wins: small messages on teams that are not a power of two (log steps, no folding). */
#include "coll/allgather/blocks.h"
#include "coll/schedule.h"

static rcoll_status_t allgather_bruck(rcoll_args_t *a)
{
    int rounds = rcoll_ceil_log2(a->size);
    for (int k = 0; k < rounds; k++) {
        int dist = 1 << k, count = dist < a->size - dist ? dist : a->size - dist;
        int to = rcoll_dissemination_from(a->rank, a->size, k);
        int from = rcoll_dissemination_to(a->rank, a->size, k);
        ag_ranges_t out = ag_ring_ranges(a->rank, count, a->size);
        ag_ranges_t in = ag_ring_ranges(from, count, a->size);
        rcoll_status_t st = ag_exchange(a, to, from, (unsigned)k, &out, &in, 1);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_allgather_bruck = {
    "bruck", RCOLL_COLL_ALLGATHER,
    "seed 001: ceil(log2 P) steps to r-2^k, blocks kept in place", allgather_bruck, NULL};
