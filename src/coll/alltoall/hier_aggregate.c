/* Alltoall, node aggregation: whole node-blocks between the nodes' leaders.
 * Paper: [qian-phd] chapters 4-5 (SMP-aware collectives: aggregate a node's messages at a
 * leader so that one large message per pair of nodes crosses the network).
 * Steps: (1) node-team gather of every local rank's P blocks to the leader (L P m there);
 * (2) the leader packs, for each node k, the blocks its L ranks send to k's ranks (L L_k m) and
 * the leaders run an alltoallv of these node-blocks (the group-0 team's own algorithm);
 * (3) the leader unpacks what arrived into each local rank's P blocks in source order and
 * (4) scatters them through shared memory (node-team scatter of P m per rank).
 * Bytes on the network: (N-1) messages per leader of L^2 m each, instead of L (P-L) messages of m
 * from every node; the leader copies 2 L P m locally.
 * When it wins: small blocks on teams spanning nodes with several ranks per node, where the
 * count of network messages is the cost; large blocks pay the leader's copies and its single
 * link (docs/tuning.md, "Node-aware collectives"). */
#include <string.h>

#include "coll/hier.h"

/* Leader: the node-block for every node, from the gathered blocks `in` (local rank i's P
 * blocks at i P m), into `out`; counts and displacements of both directions. */
static void pack(const rcoll_args_t *a, const rcoll_hier_t *h, const unsigned char *in, unsigned char *out)
{
    const struct rcoll_team *t = a->team;
    size_t m = a->bytes, P = (size_t)a->size;
    int N = t->node_count, L = h->node_size[t->node_of[a->rank]];
    size_t *sc = h->counts, *sd = sc + N, *rc = sd + N, *rd = rc + N, off = 0, roff = 0;
    for (int k = 0; k < N; k++) {
        sd[k] = off;
        for (int i = 0; i < L; i++)
            for (int j = 0; j < h->node_size[k]; j++) {
                int dst = h->rank_at[h->node_off[k] + j];
                memcpy(out + off, in + ((size_t)i * P + (size_t)dst) * m, m);
                off += m;
            }
        sc[k] = off - sd[k];
        rc[k] = (size_t)h->node_size[k] * (size_t)L * m;
        rd[k] = roff;
        roff += rc[k];
    }
}

/* Leader: from node k's node-block (its ranks i, then my ranks j), local rank j's P blocks in
 * source order, at j P m of `out`. */
static void unpack(const rcoll_args_t *a, const rcoll_hier_t *h, const unsigned char *in, unsigned char *out)
{
    const struct rcoll_team *t = a->team;
    size_t m = a->bytes, P = (size_t)a->size;
    int N = t->node_count, L = h->node_size[t->node_of[a->rank]];
    const size_t *rd = h->counts + 3 * (size_t)N;
    for (int k = 0; k < N; k++)
        for (int i = 0; i < h->node_size[k]; i++) {
            size_t src = (size_t)h->rank_at[h->node_off[k] + i];
            for (int j = 0; j < L; j++)
                memcpy(out + ((size_t)j * P + src) * m, in + rd[k] + ((size_t)i * (size_t)L + (size_t)j) * m, m);
        }
}

/* The leaders' exchange of node-blocks: an alltoall of L^2 m blocks where every node has L
 * ranks (the group-0 team's own selection, as for any alltoall), else an alltoallv. */
static rcoll_status_t leaders_exchange(rcoll_args_t *a, rcoll_hier_t *h, const unsigned char *packed,
                                       unsigned char *got)
{
    const size_t *c = h->counts;
    int N = a->team->node_count;
    if (rcoll_hier_even(a->team))
        return rcoll_alltoall(h->group, packed, got, c[0]);
    return rcoll_alltoallv(h->group, packed, c, c + N, got, c + 2 * N, c + 3 * N);
}

static rcoll_status_t alltoall_hier_aggregate(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t m = a->bytes, row = (size_t)a->size * m;
    bool leader = h->lidx_of[a->rank] == 0;
    size_t node_bytes = (size_t)h->node_size[t->node_of[a->rank]] * row;
    unsigned char *in = NULL, *packed = NULL, *got = NULL;
    if (leader) {
        in = rcoll_team_tmp(t, RCOLL_TMP_ALGO, node_bytes);
        packed = rcoll_team_tmp(t, RCOLL_TMP_ALGO2, node_bytes);
        got = rcoll_team_tmp(t, RCOLL_TMP_ALGO3, node_bytes);
        if (!in || !packed || !got)
            return rcoll_team_error(t, RCOLL_ERR_NOMEM, "alltoall: no memory for the node-blocks");
    }
    rcoll_status_t first = RCOLL_OK;
    HIER_STEP(a, h->node, rcoll_gather(h->node, a->sendbuf, in, row, 0), first);
    if (leader) {
        pack(a, h, in, packed);
        HIER_STEP(a, h->group, leaders_exchange(a, h, packed, got), first);
        unpack(a, h, got, in);
    }
    HIER_STEP(a, h->node, rcoll_scatter(h->node, in, a->recvbuf, row, 0), first);
    return first;
}

/* Cost model: node gather of P m per rank, the leaders' alltoall of L^2 m node-blocks (as the
 * selection runs it among N), two local copies of L P m, node scatter of P m. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes, row = in->P * m, L = in->L;
    return in->sub(in, RCOLL_COLL_GATHER, (size_t)row, in->L, 1, in->L, 1) +
           in->sub(in, RCOLL_COLL_ALLTOALL, (size_t)(L * L * m), in->N, in->N, 1, 1) +
           in->sub(in, RCOLL_COLL_SCATTER, (size_t)row, in->L, 1, in->L, 1) + 2 * rcoll_cost_copy(in, L * row);
}

const rcoll_algo_t rcoll_alltoall_hier_aggregate = {
    .name = "hier_aggregate",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd] node aggregation: node gather, node-blocks between leaders, node scatter",
    .run = alltoall_hier_aggregate,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_alltoall_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = cost,
};
