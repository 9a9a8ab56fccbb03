/* Barrier RPE: pairwise exchange (recursive doubling of signals).
 * Paper: Kini et al., "Fast and Scalable Barrier using RDMA and Multicast" ([kini-tr03], 3.1).
 * Steps: with P2 the largest power of two <= P, ranks r >= P2 first signal r - P2 and wait for
 * its release at the end; ranks r < P2 (after hearing from r + P2 if it exists) exchange a
 * signal with r XOR 2^k for k = 0 .. log2(P2)-1, then release r + P2.
 * Bytes on the wire: one 8-byte signal per rank per round, log2(P2) rounds, plus 2 steps when
 * P is not a power of two.
 * When it wins: powers of two, where every round is a symmetric exchange. */
#include "coll/coll.h"
#include "coll/schedule.h"

static rcoll_status_t wait_from(rcoll_args_t *a, int source, unsigned step)
{
    rcoll_event_t ev = rcoll_ev_signal(source, a->seq, step);
    return rcoll_tl_wait(a->tl, &ev);
}

static rcoll_status_t barrier_pairwise(rcoll_args_t *a)
{
    int p2 = rcoll_pof2_floor(a->size), extra = a->size - p2, rounds = rcoll_ceil_log2(p2);
    unsigned release_step = (unsigned)rounds + 1;
    if (a->rank >= p2) {
        a->tl->ops->signal(a->tl, a->rank - p2, a->seq, 0);
        return wait_from(a, a->rank - p2, release_step);
    }
    rcoll_status_t st = RCOLL_OK;
    if (a->rank < extra)
        st = wait_from(a, a->rank + p2, 0);
    for (int k = 0; st == RCOLL_OK && k < rounds; k++) {
        int partner = rcoll_rd_partner(a->rank, k);
        a->tl->ops->signal(a->tl, partner, a->seq, (unsigned)k + 1);
        st = wait_from(a, partner, (unsigned)k + 1);
    }
    if (st == RCOLL_OK && a->rank < extra)
        a->tl->ops->signal(a->tl, a->rank + p2, a->seq, release_step);
    return st;
}

/* Cost model: log2 of the largest power of two <= P rounds of one signal with the rank 2^i away
 * (XOR), two more where P is not a power of two. */
static double cost(const rcoll_cost_in_t *in)
{
    int pof2 = 1;
    while (pof2 * 2 <= in->P)
        pof2 *= 2;
    double t = pof2 < in->P ? 2 * rcoll_cost_round(in, pof2, false, 0) : 0;
    for (int d = 1; d < pof2; d *= 2)
        t += rcoll_cost_round(in, d, true, 0);
    return t;
}

const rcoll_algo_t rcoll_barrier_pairwise_exchange = {
    .name = "pairwise_exchange",
    .coll = RCOLL_COLL_BARRIER,
    .summary = "RPE [kini-tr03]: signal exchange with r XOR 2^k, extra ranks folded",
    .run = barrier_pairwise,
    .cost = cost,
};
