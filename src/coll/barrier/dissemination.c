/* Barrier RDS: dissemination over one-sided signals.
 * Paper: Kini, Liu, Wu, Wyckoff, Panda, "Fast and Scalable Barrier using RDMA and Multicast"
 * ([kini-tr03], section 3.2).
 * Steps: ceil(log2 P) rounds; in round k rank r raises its signal at (r + 2^k) mod P and waits
 * for the one from (r - 2^k) mod P. Signals carry the barrier id (the team's sequence number),
 * so nothing is ever reset. Works for every P, not only powers of two.
 * Bytes on the wire: one 8-byte signal per rank per round, ceil(log2 P) rounds.
 * When it wins: small and medium teams, and any P that is not a power of two (pairwise exchange
 * then needs two extra steps). */
#include "coll/coll.h"
#include "coll/schedule.h"

static rcoll_status_t barrier_dissemination(rcoll_args_t *a)
{
    int rounds = rcoll_ceil_log2(a->size);
    for (int k = 0; k < rounds; k++) {
        a->tl->ops->signal(a->tl, rcoll_dissemination_to(a->rank, a->size, k), a->seq, (unsigned)k);
        rcoll_event_t ev = rcoll_ev_signal(rcoll_dissemination_from(a->rank, a->size, k), a->seq,
                                           (unsigned)k);
        rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* Cost model: ceil(log2 P) rounds of one signal, to the rank 2^i away. */
static double cost(const rcoll_cost_in_t *in)
{
    double t = 0;
    for (int d = 1; d < in->P; d *= 2)
        t += rcoll_cost_round(in, d, false, 0);
    return t;
}

const rcoll_algo_t rcoll_barrier_dissemination = {
    .name = "dissemination",
    .coll = RCOLL_COLL_BARRIER,
    .summary = "RDS [kini-tr03]: ceil(log2 P) rounds, signal r+2^k, wait r-2^k",
    .run = barrier_dissemination,
    .cost = cost,
};
