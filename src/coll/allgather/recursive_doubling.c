/* Allgather by recursive doubling with the copy-based to zero-copy switch.
 * Paper: Sur, Bondhugula, Mamidala, Jin, Panda, "High Performance RDMA Based All-to-all
 * Broadcast for InfiniBand Clusters" ([sur-hipc05], section 4.2; slides: [sur-hipc05]).
 * Steps: log2(P2) exchanges, P2 the largest power of two <= P; at step k rank v swaps with
 * v XOR 2^k everything its group of 2^k ranks holds. While a step's message is below
 * RCOLL_ZCOPY_THRESHOLD (M_T, 4 KB) it is copied through the peer's collective buffer
 * (the inbox); from the step k where it crosses M_T on, it is written once, straight into the
 * peer's receive buffer (single copy) - the paper's switch at step k. Ranks r >= P2 first hand
 * their block to r - P2 and get the full result back at the end (two extra steps).
 * Bytes on the wire per rank: (P2-1) * m in log2(P2) messages, plus m and (P-1) * m for the
 * folded ranks when P is not a power of two.
 * When it wins: small and medium messages (few steps, each a single put), powers of two. */
#include "coll/allgather/blocks.h"
#include "coll/schedule.h"

static ag_ranges_t group_ranges(int vrank, int k, int size)
{
    ag_ranges_t r;
    r.n = rcoll_rd_group_ranges(vrank, k, size, r.first, r.count);
    return r;
}

/* Everything except block `skip`. */
static ag_ranges_t all_but(int skip, int size)
{
    return ag_ring_ranges(skip + 1, size - 1, size);
}

static rcoll_status_t allgather_rd(rcoll_args_t *a)
{
    int p2 = rcoll_pof2_floor(a->size), extra = a->size - p2, rounds = rcoll_ceil_log2(p2);
    unsigned last_step = (unsigned)rounds + 1;
    rcoll_status_t st;
    if (a->rank >= p2) {
        ag_ranges_t mine = ag_one_block(a->rank), rest = all_but(a->rank, a->size);
        st = ag_send(a, a->rank - p2, 0, &mine, 1);
        return st == RCOLL_OK ? ag_recv(a, a->rank - p2, last_step, &rest, 1) : st;
    }
    st = RCOLL_OK;
    if (a->rank < extra) {
        ag_ranges_t folded = ag_one_block(a->rank + p2);
        st = ag_recv(a, a->rank + p2, 0, &folded, 1);
    }
    for (int k = 0; st == RCOLL_OK && k < rounds; k++) {
        int partner = rcoll_rd_partner(a->rank, k);
        ag_ranges_t out = group_ranges(a->rank, k, a->size), in = group_ranges(partner, k, a->size);
        st = ag_exchange(a, partner, partner, (unsigned)k + 1, &out, &in, 1);
    }
    if (st == RCOLL_OK && a->rank < extra) {
        ag_ranges_t rest = all_but(a->rank + p2, a->size);
        st = ag_send(a, a->rank + p2, last_step, &rest, 1);
    }
    return st;
}

/* Cost model: log2 P exchanges (XOR) of 2^i blocks; where P is not a power of two, the extra
 * ranks' blocks in and the whole result out. */
static double cost(const rcoll_cost_in_t *in)
{
    int pof2 = 1;
    while (pof2 * 2 <= in->P)
        pof2 *= 2;
    double m = (double)in->bytes, t = 0;
    for (int d = 1; d < pof2; d *= 2)
        t += rcoll_cost_round(in, d, true, d * m);
    if (pof2 < in->P)
        t += rcoll_cost_round(in, pof2, false, m) + rcoll_cost_round(in, pof2, false, in->P * m);
    return t;
}

const rcoll_algo_t rcoll_allgather_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[sur-hipc05]: log2 P exchanges, copy-based below M_T then zero-copy from step k",
    .run = allgather_rd,
    .cost = cost,
};
