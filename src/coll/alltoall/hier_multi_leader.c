/* Alltoall, multi-leader across nodes: every local rank exchanges its node's share with its group.
 * Paper: [qian-phd] chapter 5 (multi-connection and multi-core aware collectives, Fig. 5.4-5.5:
 * several leaders per node use several connections and cores at once); here the number of
 * groups is the number of ranks per node, group g being the ranks of local index g.
 * Steps: (1) each rank packs, for every local rank j, its N blocks for the ranks of local index
 * j (node order) and the node team alltoalls them (blocks of N m, shared memory); (2) each rank
 * now holds, from every local rank, the N blocks for its own group's members; it repacks them
 * per destination node (the L blocks its node sends there) and the group team alltoalls them
 * (blocks of L m; all L groups at once, each with the group team's own selection); (3) the L
 * blocks from node k go to their sources' places in the result (straight into the result where
 * nodes' ranks are consecutive).
 * Bytes on the network: per rank those of an alltoall of L m among N ranks, all L groups in
 * parallel (L (N-1) messages of L m per node instead of L (P-L) of m); shared memory moves N m
 * between every pair of local ranks; local copies of 2 P m (3 P m where nodes are not
 * consecutive).
 * When it wins: medium and large blocks on teams spanning nodes with several ranks per node,
 * where hier_aggregate's single leader (its link, its core's copies of L P m) is the bottleneck
 * and L leaders share the work, with messages L times larger than a flat alltoall's. Nodes of
 * different sizes: a group missing from a node would leave its blocks unsent, so it gives way
 * to hier_aggregate. */
#include <string.h>

#include "coll/hier.h"

/* The team rank of local index j on node k. */
static inline size_t rank_on(const rcoll_hier_t *h, int k, int j)
{
    return (size_t)h->rank_at[h->node_off[k] + j];
}

/* The group-team rank of my group's member on node k (group teams are in team-rank order,
 * which need not be node order: RCOLL_NODE_MAP=0,1,1,0). */
static inline size_t group_rank_on(const rcoll_hier_t *h, int k, int g)
{
    return (size_t)(h->group_major[rank_on(h, k, g)] - h->group_off[g]);
}

/* Step 1: for local rank j at j N m, my blocks for (node k, local j), k in node order. */
static void pack_node(const rcoll_args_t *a, const rcoll_hier_t *h, unsigned char *out)
{
    const unsigned char *send = a->sendbuf;
    size_t m = a->bytes;
    int N = a->team->node_count, L = h->groups;
    for (int j = 0; j < L; j++)
        for (int k = 0; k < N; k++)
            memcpy(out + ((size_t)j * (size_t)N + (size_t)k) * m, send + rank_on(h, k, j) * m, m);
}

/* Step 2: local rank i's blocks (at i N m, for (node k, me)) into, for the group member on node
 * k, the L blocks of local ranks i at its group-team place. */
static void pack_group(const rcoll_args_t *a, const rcoll_hier_t *h, const unsigned char *in, unsigned char *out)
{
    size_t m = a->bytes;
    int N = a->team->node_count, L = h->groups, g = h->lidx_of[a->rank];
    for (int k = 0; k < N; k++) {
        unsigned char *to = out + group_rank_on(h, k, g) * (size_t)L * m;
        for (int i = 0; i < L; i++)
            memcpy(to + (size_t)i * m, in + ((size_t)i * (size_t)N + (size_t)k) * m, m);
    }
}

/* Step 3 where nodes are not consecutive: from the group member on node k, the blocks of
 * sources (k, i) to their places in the result. */
static void unpack(const rcoll_args_t *a, const rcoll_hier_t *h, const unsigned char *in)
{
    unsigned char *recv = a->recvbuf;
    size_t m = a->bytes;
    int N = a->team->node_count, L = h->groups, g = h->lidx_of[a->rank];
    for (int k = 0; k < N; k++) {
        const unsigned char *from = in + group_rank_on(h, k, g) * (size_t)L * m;
        for (int i = 0; i < L; i++)
            memcpy(recv + rank_on(h, k, i) * m, from + (size_t)i * m, m);
    }
}

/* My own block travels through both sub-calls to itself (each sub-call moves it as its own
 * block) and is written back to its place unchanged. */
static rcoll_status_t alltoall_hier_multi_leader(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t m = a->bytes, total = (size_t)a->size * m;
    unsigned char *packed = rcoll_team_tmp(t, RCOLL_TMP_ALGO, total);
    unsigned char *got = rcoll_team_tmp(t, RCOLL_TMP_ALGO2, total);
    if (!packed || !got)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "alltoall: no memory for the group blocks");
    /* Consecutive nodes: group-team rank k is node k and node k's L blocks are its ranks'. */
    unsigned char *result = h->blocked ? a->recvbuf : got;
    int N = t->node_count, L = h->groups;
    rcoll_status_t first = RCOLL_OK;
    pack_node(a, h, packed);
    HIER_STEP(a, h->node, rcoll_alltoall(h->node, packed, got, (size_t)N * m), first);
    pack_group(a, h, got, packed);
    HIER_STEP(a, h->group, rcoll_alltoall(h->group, packed, result, (size_t)L * m), first);
    if (!h->blocked)
        unpack(a, h, got);
    return first;
}

/* Cost model: a node alltoall of N-block shares, L group alltoalls of L m among N ranks at once
 * (their messages share each node's link), the two packing copies of P m (the model's nodes are
 * consecutive: no unpacking). */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes;
    return in->sub(in, RCOLL_COLL_ALLTOALL, (size_t)in->N * in->bytes, in->L, 1, in->L, 1) +
           in->sub(in, RCOLL_COLL_ALLTOALL, (size_t)in->L * in->bytes, in->N, in->N, 1, in->L) +
           2 * rcoll_cost_copy(in, in->P * m);
}

const rcoll_algo_t rcoll_alltoall_hier_multi_leader = {
    .name = "hier_multi_leader",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd] multi-leader: node alltoall of shares, then every local rank's group alltoall across nodes",
    .run = alltoall_hier_multi_leader,
    .not_for = rcoll_composed_even_not_for,
    .fallback = &rcoll_alltoall_hier_aggregate,
    .limits = "teams spanning nodes with the same number (> 1) of ranks on every node",
    .composed = true,
    .cost = cost,
};
