/* Alltoall PAP Shm-Direct: node gather, then the leaders' arrival-order Direct of node-blocks,
 * each rank's part of a node-block copied out as soon as it lands.
 * Paper: [qian-phd] 6.4.4 (RDMA-based Process Arrival Pattern and Shared Memory Aware
 * Alltoall): phase 1 a node gather by the Master, phase 2 the PAP Direct alltoall of 6.4.2
 * among the Masters, phase 3 "multiple shared done flags, one for data from each Master ...
 * intra-node processes poll on all done flags and copy out partial data as soon as any is
 * found": here one signal per landing and the leader's log of which node landed when
 * (coll/hier_pap.h says why).
 * Steps: (1) node-team gather of every local rank's P blocks to the leader (L P m there);
 * (2) each leader packs, for node k, the L L_k m blocks its ranks send to k's ranks (k's ranks
 * first, so that each of them finds its part in one piece) just before writing it to k's leader,
 * first to leaders that have arrived, and takes the others' node-blocks as they land; (3),
 * inside (2): each node-block that lands, its own node's first, goes to the node's ranks at once
 * (copied once into the leader's outbox, each local rank copying out its L_k m part; read out of
 * the leader's buffer by CMA, or written to each rank, when L P m passes the outbox) and each
 * local rank copies out its part of whatever has landed, in landing order.
 * Bytes on the network: N-1 messages of L L_k m per leader, all in flight (as hier_aggregate's
 * leaders' alltoallv). Copies on a node: the leader packs L P m and copies (L-1) P m into its
 * outbox; each local rank copies its P m out.
 * When it wins: small blocks on teams spanning nodes where leaders arrive at different times
 * (the seed: up to 256 B at MIF 32 on 4x4); without skew about hier_aggregate's cost on 2
 * nodes (less from 16 KB: no unpack pass), 1.2-1.3x at tiny blocks on 4 nodes of 2 (the
 * Direct's messages among the leaders). Not chosen by default (it runs by name):
 * docs/algorithms.md. */
#include <string.h>

#include "coll/hier_pap.h"

/* The node-block for node k, node k's ranks jl' first, then mine i: block i -> jl' at
 * (jl' L + i) m, from local rank i's row in `in`. */
static void pack(rcoll_pap_t *p, int k, unsigned char *dst)
{
    const rcoll_hier_t *h = p->h;
    size_t m = p->m, row = (size_t)p->a->size * m;
    for (int j = 0; j < h->node_size[k]; j++) {
        size_t to = (size_t)h->rank_at[h->node_off[k] + j] * m;
        for (int i = 0; i < p->L; i++)
            memcpy(dst + ((size_t)j * (size_t)p->L + (size_t)i) * m, p->in + (size_t)i * row + to, m);
    }
}

static rcoll_status_t alltoall_hier_pap(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t row = (size_t)a->size * a->bytes;
    int L = h->node_size[t->node_of[a->rank]];
    bool leader = h->lidx_of[a->rank] == 0;
    rcoll_pap_t p = {.a = a, .algo = &rcoll_alltoall_hier_pap, .personal = true, .pack = pack};
    unsigned char *in = NULL;
    if (leader) {
        size_t node_bytes = (size_t)L * row;
        in = L > 1 ? rcoll_team_tmp(t, RCOLL_TMP_ALGO, node_bytes) : NULL;
        p.packed = rcoll_team_tmp(t, RCOLL_TMP_ALGO2, node_bytes);
        p.base = rcoll_team_tmp(t, RCOLL_TMP_ALGO3, node_bytes);
        if ((L > 1 && !in) || !p.packed || !p.base)
            return rcoll_team_error(t, RCOLL_ERR_NOMEM, "alltoall: no memory for the node-blocks");
        p.in = L > 1 ? in : a->sendbuf; /* a node of one: its own row */
    }
    rcoll_status_t first = RCOLL_OK;
    if (L > 1)
        HIER_STEP(a, h->node, rcoll_gather(h->node, a->sendbuf, in, row, 0), first);
    return rcoll_pap_exchange(&p, &first);
}

/* Cost model: the node gather of P m per rank, the leader's packing (L P m), then one step of
 * the leaders (N-1 node-blocks of L^2 m, the host's link shared by H nodes), behind which the
 * node's hand-out of every node-block but the last is hidden: the last one's copy into the
 * outbox and each rank's L m out of it. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes, L = in->L, row = in->P * m;
    return in->sub(in, RCOLL_COLL_GATHER, (size_t)row, in->L, 1, in->L, 1) +
           rcoll_cost_copy(in, L * row) + in->m->call +
           rcoll_cost_step(&in->m->net, (double)(in->N - 1) * in->H, L * L * m) +
           rcoll_cost_copy(in, L * L * m) + rcoll_cost_step(&in->m->shm, 1, L * m);
}

const rcoll_algo_t rcoll_alltoall_hier_pap = {
    .name = "hier_pap",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd] 6.4.4 PAP Shm-Direct: node gather, leaders' arrival-order Direct of "
        "node-blocks, each rank's part copied out as it lands",
    .run = alltoall_hier_pap,
    .not_for = rcoll_pap_not_for,
    .fallback = &rcoll_alltoall_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .by_name = true,
    .cost = cost,
};
