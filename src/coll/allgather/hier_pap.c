/* Allgather PAP Shm-Direct: node gather, then the leaders' arrival-order Direct, each node block
 * handed to the node's ranks as soon as it lands.
 * Paper: [qian-phd] 6.4.5 (RDMA-based Process Arrival Pattern and Shared Memory Aware
 * Allgather), with 6.4.3's PAP Direct among the Masters and 6.4.4's phase 3: "multiple shared
 * done flags, one for data from each Master": here one signal per landing and the leader's log
 * of which node landed when (coll/hier_pap.h says why).
 * Steps: (1) node-team gather of every local block to the leader, into the node's place of the
 * node-order result (cannot be arrival-aware: the leader needs all of them); (2) each leader
 * writes its L m node block to every other leader, first to those that have arrived (inline,
 * through the receiver's inbox, or single copy into its advertised result by size), and takes
 * theirs as they land; (3), inside (2): every block that lands, its own first, goes to the
 * node's ranks at once -- copied once into the leader's outbox, where every local rank copies
 * it out in parallel (read out of the leader's result by CMA, or written to each rank, when the
 * P m result passes the outbox) -- and each local rank copies out whatever has landed, in
 * landing order, never waiting for all leaders first.
 * Bytes on the network: (N-1) L m per leader in N-1 messages, all in flight, nothing from the
 * other ranks (as hier_gather_bcast). Copies on a node: the leader's P m into its outbox, each
 * local rank's P m out of it.
 * When it wins: leaders that arrive at different times (the seed: up to 1 KB at MIF 32 on 4x4),
 * where hier_gather_bcast's leaders' allgather and node bcast wait for the last leader before
 * any rank gets a block. Without skew it costs about what hier_gather_bcast costs on 2 nodes;
 * on more, the Direct's N(N-1) messages among the leaders lose to the fewer of the leaders'
 * algorithm there at small blocks (4x2: 1.1-1.5x up to 8 KB). Not chosen by default (it runs by
 * name): docs/algorithms.md. */
#include "coll/hier_pap.h"

static rcoll_status_t allgather_hier_pap(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t m = a->bytes;
    bool leader = h->lidx_of[a->rank] == 0;
    unsigned char *all = NULL;
    if (leader) {
        all = h->blocked ? a->recvbuf : rcoll_team_tmp(t, RCOLL_TMP_ALGO, (size_t)a->size * m);
        if (!all)
            return rcoll_team_error(t, RCOLL_ERR_NOMEM, "allgather: no memory for the node-order result");
    }
    const unsigned char *mine = (const unsigned char *)a->recvbuf + (size_t)a->rank * m;
    /* In place at a leader whose block already sits at its node's first place. */
    const void *send = leader && h->blocked ? RCOLL_IN_PLACE : (const void *)mine;
    unsigned char *nodebuf = leader ? all + (size_t)h->node_off[t->node_of[a->rank]] * m : NULL;
    rcoll_status_t first = RCOLL_OK;
    HIER_STEP(a, h->node, rcoll_gather(h->node, send, nodebuf, m, 0), first);
    rcoll_pap_t p = {.a = a, .algo = &rcoll_allgather_hier_pap, .personal = false, .base = all};
    return rcoll_pap_exchange(&p, &first);
}

/* Cost model: the node gather; then one step of the leaders (N-1 node blocks of L m each, the
 * host's link shared by H nodes), behind which the node's hand-out of every block but the last
 * is hidden: the last one's copy into the outbox and out of it. */
static double cost(const rcoll_cost_in_t *in)
{
    double block = (double)in->L * (double)in->bytes;
    return in->sub(in, RCOLL_COLL_GATHER, in->bytes, in->L, 1, in->L, 1) + in->m->call +
           rcoll_cost_step(&in->m->net, (double)(in->N - 1) * in->H, block) +
           rcoll_cost_copy(in, block) + rcoll_cost_step(&in->m->shm, 1, block);
}

const rcoll_algo_t rcoll_allgather_hier_pap = {
    .name = "hier_pap",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] 6.4.5 PAP Shm-Direct: node gather, leaders' arrival-order Direct, each "
        "node block handed out as it lands",
    .run = allgather_hier_pap,
    .not_for = rcoll_pap_not_for,
    .fallback = &rcoll_allgather_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .by_name = true,
    .cost = cost,
};
