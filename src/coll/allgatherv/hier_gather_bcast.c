/* Allgatherv, SMP-aware Gather-and-Broadcast across nodes (one leader per node).
 * Paper: [qian-phd] chapter 4 (SMP-aware Gather-and-Broadcast), for counts that differ by rank:
 * every rank of an allgatherv knows every count, so each can lay the blocks out compactly in
 * node order without asking anybody.
 * Steps: (1) node-team gatherv of every local block to the leader (local index 0), at the
 * block's place of a compact node-order result (the sum of the counts before it in node
 * order); (2) the leaders allgatherv their node blocks (a node's total each) over the group-0
 * team, with its own selection; (3) node-team bcast of the whole result from the leader
 * (readers copy out of the leader's buffer in parallel); (4) each rank copies every block to its
 * displacement. Where node order is rank order and the displacements are the compact ones,
 * steps (1)-(3) work in the receive buffer itself and (4) is not needed.
 * Bytes on the network: each leader sends its node's total to N-1 leaders (in the leaders'
 * algorithm); no other rank touches the network; a flat allgatherv sends every rank's block
 * from every rank, L times as many messages per node.
 * When it wins: small and medium counts on teams spanning nodes with several ranks per node
 * (as the allgather form; docs/tuning.md, "Node-aware collectives"). The selection keys this
 * v-form on its mean count, which every rank knows. */
#include <string.h>

#include "coll/hier.h"

/* Every rank's offset in the compact node-order result (h->counts[0..P)); returns the total.
 * `inplace`: the offsets are rank order's and equal the displacements. */
static size_t compact_offsets(const rcoll_args_t *a, const rcoll_hier_t *h, bool *inplace)
{
    size_t *off = h->counts, at = 0;
    *inplace = h->blocked;
    for (int pos = 0; pos < a->size; pos++) {
        int r = h->rank_at[pos];
        off[r] = at;
        at += a->rcounts[r];
        *inplace = *inplace && a->rdispls[r] == off[r];
    }
    return at;
}

/* The node-team gatherv's counts and displacements (relative to the node's first block), in
 * node-team rank (local index) order, at h->counts[P..P + 2 L). */
static size_t *node_layout(const rcoll_args_t *a, const rcoll_hier_t *h, int node)
{
    size_t *off = h->counts, *c = h->counts + a->size;
    int L = h->node_size[node], first = h->rank_at[h->node_off[node]];
    for (int i = 0; i < L; i++) {
        int r = h->rank_at[h->node_off[node] + i];
        c[i] = a->rcounts[r];
        c[L + i] = off[r] - off[first];
    }
    return c;
}

/* The leaders' counts and displacements, each node's total at its first block's offset, after
 * the node layout (P + 2 L + 2 N <= 4 P: a node of L ranks leaves at most P - L others). */
static size_t *leader_layout(const rcoll_args_t *a, const rcoll_hier_t *h, int node, size_t total)
{
    const struct rcoll_team *t = a->team;
    int N = t->node_count;
    size_t *off = h->counts, *c = h->counts + a->size + 2 * (size_t)h->node_size[node];
    for (int k = 0; k < N; k++) {
        size_t start = off[h->rank_at[h->node_off[k]]];
        size_t end = k + 1 < N ? off[h->rank_at[h->node_off[k + 1]]] : total;
        c[k] = end - start;
        c[N + k] = start;
    }
    return c;
}

static rcoll_status_t allgatherv_hier_gather_bcast(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    int node = t->node_of[a->rank];
    bool inplace, leader = h->lidx_of[a->rank] == 0;
    size_t total = compact_offsets(a, h, &inplace);
    unsigned char *all = inplace ? a->recvbuf : rcoll_team_tmp(t, RCOLL_TMP_ALGO, total);
    if (!all)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "allgatherv: no memory for the node-order result");
    unsigned char *rbuf = a->recvbuf;
    const unsigned char *mine = rbuf + a->rdispls[a->rank];
    unsigned char *nodebuf = all + h->counts[h->rank_at[h->node_off[node]]];
    size_t *nc = node_layout(a, h, node);
    rcoll_status_t first = RCOLL_OK;
    const void *send = leader && inplace ? RCOLL_IN_PLACE : (const void *)mine;
    HIER_STEP(a, h->node, rcoll_gatherv(h->node, send, a->bytes, nodebuf, nc, nc + h->node_size[node], 0), first);
    if (leader) {
        size_t *lc = leader_layout(a, h, node, total);
        HIER_STEP(a, h->group, rcoll_allgatherv(h->group, RCOLL_IN_PLACE, lc[node], all, lc, lc + t->node_count), first);
    }
    HIER_STEP(a, h->node, rcoll_bcast(h->node, all, total, 0), first);
    if (!inplace)
        for (int r = 0; r < a->size; r++)
            if (r != a->rank)
                memcpy(rbuf + a->rdispls[r], all + h->counts[r], a->rcounts[r]);
    return first;
}

/* Cost model (keyed on the mean count m): as the allgather form, node gather of m, the
 * leaders' allgather of L m blocks, node bcast of P m, and the copy-out. */
static double cost(const rcoll_cost_in_t *in)
{
    double all = (double)in->P * (double)in->bytes;
    return in->sub(in, RCOLL_COLL_GATHER, in->bytes, in->L, 1, in->L, 1) +
           in->sub(in, RCOLL_COLL_ALLGATHER, (size_t)in->L * in->bytes, in->N, in->N, 1, 1) +
           in->sub(in, RCOLL_COLL_BCAST, (size_t)all, in->L, 1, in->L, 1) + rcoll_cost_copy(in, all);
}

const rcoll_algo_t rcoll_allgatherv_hier_gather_bcast = {
    .name = "hier_gather_bcast",
    .coll = RCOLL_COLL_ALLGATHERV,
    .summary = "[qian-phd] SMP-aware Gather-and-Broadcast for v-counts: node gatherv, leaders' allgatherv, node bcast",
    .run = allgatherv_hier_gather_bcast,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_allgatherv_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = cost,
};
