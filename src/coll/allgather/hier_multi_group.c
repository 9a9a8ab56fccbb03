/* Allgather, G-group multi-leader across nodes: G leaders per node, each with its own group.
 * Paper: [qian-phd] 5.5.3, Multi-group Multi-connection Aware allgather (the 2-group form of
 * Fig. 5.4; the 4-group form of Fig. 5.5 on a 4-rank node is hier_multi_leader, every rank a
 * leader). G is RCOLL_ALLGATHER_GROUPS (default 2); local rank i belongs to group i mod G, whose
 * leader on each node is local rank i mod G (< G); G >= the ranks per node makes every rank a
 * leader (as hier_multi_leader) and G = 1 is one leader per node (as hier_gather_bcast).
 * Steps: (1) per-node, per-group shared-memory gather: every rank hands its block to its group's
 * leader (one node-team alltoallv in which each rank sends one block, to its leader, and each
 * leader receives its members'); (2) every group's leaders allgather their groups' blocks across
 * nodes (c = ceil or floor of L/G blocks each; the group teams of local index g < G, all groups at
 * once, each with its own selection); (3) every leader broadcasts its group's N c blocks to the
 * node (one node-team allgatherv in which only the leaders contribute); (4) each rank puts the
 * group-major blocks in rank order (one local copy of P m).
 * Bytes on the network: per leader an allgather of c m among N ranks, G of them at once per node
 * (G connections where Gather-and-Broadcast uses one).
 * When it wins: medium blocks (the seed: 4-64 KB), where one leader's connection and core are the
 * bottleneck and every rank a leader means too many connections; docs/tuning.md. */
#include <string.h>

#include "coll/hier.h"

/* The group-major layout of G groups: group g's blocks start at off[g] (in blocks); inside a
 * group, node chunks of c_g blocks in the group team's order, members by local index. */
typedef struct {
    int G;
    int off[RCOLL_HIER_MAX_GROUPS + 1];
} groups_t;

static int members(int L, int G, int g)
{
    return L / G + (g < L % G);
}

static void groups_init(groups_t *s, int L, int N, int G)
{
    s->G = G;
    s->off[0] = 0;
    for (int g = 0; g < G; g++)
        s->off[g + 1] = s->off[g] + N * members(L, G, g);
}

/* The position of team rank r in the group-major layout. */
static int position(const rcoll_hier_t *h, const struct rcoll_team *t, const groups_t *s, int r)
{
    int i = h->lidx_of[r], g = i % s->G, L = h->node_size[t->node_of[r]];
    int leader = h->rank_at[h->node_off[t->node_of[r]] + g];
    int chunk = h->group_major[leader] - h->group_off[g]; /* the node's place in group g's team */
    return s->off[g] + chunk * members(L, s->G, g) + i / s->G;
}

/* Step 1: each rank's block to its group's leader, as a node-team alltoallv. */
static rcoll_status_t to_leaders(rcoll_args_t *a, rcoll_hier_t *h, const groups_t *s, unsigned char *all)
{
    struct rcoll_team *t = a->team;
    int L = h->node->size, i = h->lidx_of[a->rank], base = h->node_off[t->node_of[a->rank]];
    size_t m = a->bytes, *sc = h->counts, *sd = sc + L, *rc = sd + L, *rd = rc + L;
    for (int j = 0; j < L; j++) {
        sc[j] = j == i % s->G ? m : 0;
        sd[j] = (size_t)a->rank * m;
        rc[j] = i < s->G && j % s->G == i ? m : 0;
        rd[j] = (size_t)position(h, t, s, h->rank_at[base + j]) * m;
    }
    return rcoll_alltoallv(h->node, a->recvbuf, sc, sd, all, rc, rd);
}

/* Step 3: every leader's group blocks to the whole node. */
static rcoll_status_t from_leaders(rcoll_args_t *a, rcoll_hier_t *h, const groups_t *s, unsigned char *all)
{
    int L = h->node->size, i = h->lidx_of[a->rank], N = a->team->node_count;
    size_t m = a->bytes, *c = h->counts, *d = c + L;
    if (s->G == L) /* every rank a leader of one block per node */
        return rcoll_allgather(h->node, RCOLL_IN_PLACE, all, (size_t)N * m);
    for (int j = 0; j < L; j++) {
        c[j] = j < s->G ? (size_t)N * (size_t)members(L, s->G, j) * m : 0;
        d[j] = j < s->G ? (size_t)s->off[j] * m : 0;
    }
    return rcoll_allgatherv(h->node, RCOLL_IN_PLACE, c[i], all, c, d);
}

rcoll_status_t rcoll_allgather_groups(rcoll_args_t *a, int G)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    int L = h->node->size, N = t->node_count;
    size_t m = a->bytes, total = (size_t)a->size * m;
    groups_t s;
    groups_init(&s, L, N, G < L ? G : L);
    unsigned char *all = rcoll_team_tmp(t, RCOLL_TMP_ALGO, total);
    if (!all)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "allgather: no memory for the group-major result");
    int i = h->lidx_of[a->rank];
    rcoll_status_t first = RCOLL_OK;
    if (s.G < L)
        HIER_STEP(a, h->node, to_leaders(a, h, &s, all), first);
    else
        memcpy(all + (size_t)position(h, t, &s, a->rank) * m, (unsigned char *)a->recvbuf + (size_t)a->rank * m, m);
    if (i < s.G)
        HIER_STEP(a, h->group, rcoll_allgather(h->group, RCOLL_IN_PLACE, all + (size_t)s.off[i] * m,
                                               (size_t)members(L, s.G, i) * m), first);
    HIER_STEP(a, h->node, from_leaders(a, h, &s, all), first);
    for (int r = 0; r < a->size; r++)
        if (r != a->rank)
            memcpy((unsigned char *)a->recvbuf + (size_t)r * m, all + (size_t)position(h, t, &s, r) * m, m);
    return first;
}

static rcoll_status_t allgather_hier_multi_group(rcoll_args_t *a)
{
    return rcoll_allgather_groups(a, a->team->ctx->cfg.allgather_groups);
}

/* Cost model: the gather to G leaders (c blocks each), G group allgathers of c m among N ranks
 * at once, the leaders' broadcast of the P m result on the node, the reordering copy. */
static double cost(const rcoll_cost_in_t *in)
{
    int G = in->cfg->allgather_groups < in->L ? in->cfg->allgather_groups : in->L;
    int c = (in->L + G - 1) / G;
    double m = (double)in->bytes, t = 0;
    if (G < in->L)
        t += in->sub(in, RCOLL_COLL_GATHER, in->bytes, c, 1, c, 1);
    t += in->sub(in, RCOLL_COLL_ALLGATHER, (size_t)c * in->bytes, in->N, in->N, 1, G);
    t += G < in->L ? in->sub(in, RCOLL_COLL_BCAST, (size_t)in->P * in->bytes, in->L, 1, in->L, 1)
                   : in->sub(in, RCOLL_COLL_ALLGATHER, (size_t)in->N * in->bytes, in->L, 1, in->L, 1);
    return t + rcoll_cost_copy(in, in->P * m);
}

const rcoll_algo_t rcoll_allgather_hier_multi_group = {
    .name = "hier_multi_group",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] 5.5.3 G-group multi-leader (RCOLL_ALLGATHER_GROUPS, default 2): "
               "gather to G leaders, G leaders' allgathers at once, node broadcast",
    .run = allgather_hier_multi_group,
    .not_for = rcoll_composed_even_not_for,
    .fallback = &rcoll_allgather_hier_gather_bcast,
    .limits = "teams spanning nodes with the same number (> 1) of ranks on every node",
    .composed = true,
    .cost = cost,
};
