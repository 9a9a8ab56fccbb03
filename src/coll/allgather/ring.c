/* Allgather by ring.
 * Paper: [sur-hipc05], section 4.3 ("RDMA ring for large messages"): every rank writes straight
 * into its right neighbour's receive buffer, no per-step address exchange (the neighbour
 * advertised its buffer once, on arrival).
 * Steps: P-1; at step j rank r forwards block (r - j) mod P to r+1 and receives block
 * (r - j - 1) mod P from r-1. Blocks below RCOLL_ZCOPY_THRESHOLD go through the neighbour's
 * inbox (copy-based), larger ones by single copy.
 * Bytes on the wire per rank: (P-1) * m, each link used once per step, only neighbours talk.
 * When it wins: large messages and large teams (bandwidth-bound, no link contention). */
#include "coll/allgather/blocks.h"

static rcoll_status_t allgather_ring(rcoll_args_t *a)
{
    int right = (a->rank + 1) % a->size, left = (a->rank - 1 + a->size) % a->size;
    for (int j = 0; j < a->size - 1; j++) {
        ag_ranges_t out = ag_one_block((a->rank - j + a->size) % a->size);
        ag_ranges_t in = ag_one_block((a->rank - j - 1 + 2 * a->size) % a->size);
        rcoll_status_t st = ag_exchange(a, right, left, (unsigned)j, &out, &in, 0);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* Cost model: P-1 steps of one block to the right neighbour; across nodes a step waits for the
 * one message that crosses each node's edge. */
static double cost(const rcoll_cost_in_t *in)
{
    return (in->P - 1) * rcoll_cost_round(in, 1, false, (double)in->bytes);
}

const rcoll_algo_t rcoll_allgather_ring = {
    .name = "ring",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[sur-hipc05]: P-1 steps to the right neighbour, zero-copy above M_T",
    .run = allgather_ring,
    .cost = cost,
};
