/* Alltoall by pairwise exchange.
 * Paper: [qian-phd] (Qian), section 3.4.4: the Direct algorithm with one port (k = 1), each
 * step completed before the next -- the classic pairwise exchange of MPI libraries.
 * Steps: N-1; at step i rank p writes its block for (p+i) mod N to that rank (slot p of its
 * receive buffer: inline <= 48 B, through its inbox below RCOLL_ZCOPY_THRESHOLD when N*m fits,
 * single copy otherwise), then waits for the block of (p-i) mod N. Every rank sends to one
 * peer and receives from one peer per step, so no receiver is written by two ranks at once.
 * Bytes on the wire per rank: (N-1)*m in N-1 messages.
 * When it wins: large blocks on teams whose ranks have their own cores (one writer per
 * receiver, memory bandwidth not split), and 16-64 KB blocks where ranks share cores (single
 * copies, one peer at a time, where direct_read first copies all P blocks into its outbox:
 * 0.4-0.9x its time at 32-64 KB, np 3-8; docs/tuning.md); it loses to direct when ranks
 * arrive unevenly on their own cores (it waits for peers in a fixed order). */
#include "coll/alltoall/slots.h"

static rcoll_status_t alltoall_pairwise(rcoll_args_t *a)
{
    rcoll_msg_proto_t proto = a2a_proto(a, a->bytes, (size_t)a->size * a->bytes);
    for (int i = 1; i < a->size; i++) {
        int to = (a->rank + i) % a->size, from = (a->rank - i + a->size) % a->size;
        rcoll_status_t st = a2a_send_block(a, to, proto);
        if (st != RCOLL_OK)
            return st;
        rcoll_event_t ev = rcoll_ev_signal(from, a->seq, 0);
        if ((st = rcoll_tl_wait(a->tl, &ev)) != RCOLL_OK)
            return st;
        a2a_finish_block(a, from, proto);
    }
    return RCOLL_OK;
}

/* Cost model: P-1 steps of one block each, most of them across nodes. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes, local = in->L - 1, remote = in->P - in->L;
    return local * rcoll_cost_step(&in->m->shm, 1, m) + remote * rcoll_cost_step(&in->m->net, (double)in->L * in->H, m);
}

const rcoll_algo_t rcoll_alltoall_pairwise = {
    .name = "pairwise",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd]: N-1 steps, write to p+i, receive from p-i",
    .run = alltoall_pairwise,
    .cost = cost,
};
