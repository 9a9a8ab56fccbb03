/* What the node-aware (composed) algorithms share: their applicability, the sub-teams, and the
 * rule for a sub-call's status (core/hier.h). A composed algorithm is a sequence of ordinary
 * calls on the node team and the group team; every rank of a sub-team makes the same calls in
 * the same order, so each sub-team's sequence numbers stay in step. */
#ifndef RCOLL_COLL_HIER_H
#define RCOLL_COLL_HIER_H

#include "coll/coll.h"
#include "core/hier.h"

/* not_for of every composed algorithm: the team spans nodes with several ranks on some. */
static inline const char *rcoll_composed_not_for(const rcoll_args_t *a)
{
    return rcoll_hier_not_for(a->team);
}

/* Whether every node has the same number of ranks (agreed: the layout is known to all). */
static inline bool rcoll_hier_even(const struct rcoll_team *t)
{
    return t->ppn_max * t->node_count == t->size;
}

/* The leaders' v-form layout of node blocks: node k's L_k m bytes at its node-order place
 * (h->counts[0..N) and [N..2N)); returns the counts, the displacements follow them. */
static inline size_t *rcoll_hier_node_blocks(rcoll_hier_t *h, const struct rcoll_team *t, size_t m)
{
    size_t *counts = h->counts, *displs = h->counts + t->node_count;
    for (int k = 0; k < t->node_count; k++) {
        counts[k] = (size_t)h->node_size[k] * m;
        displs[k] = (size_t)h->node_off[k] * m;
    }
    return counts;
}

/* A node-team v-form in which only local rank `from` (0: the leader) has data, `bytes` of it
 * for or from the rank it is exchanged with (h->counts[2N..), zero elsewhere). */
static inline size_t *rcoll_hier_one_block(rcoll_hier_t *h, const struct rcoll_team *t, size_t bytes)
{
    size_t *counts = h->counts + 2 * (size_t)t->node_count, *displs = counts + h->node->size;
    for (int i = 0; i < h->node->size; i++)
        counts[i] = displs[i] = 0;
    counts[0] = bytes;
    return counts;
}

/* Gather and scatter: where the root's P blocks are held in node order. The root's own buffer
 * `rootbuf` when it leads its node and node order is rank order; scratch on the other leaders
 * and on a root that must reorder; NULL elsewhere (and, with the team's error, when scratch is
 * out of memory: *nomem). */
static inline unsigned char *rcoll_hier_node_order(const rcoll_args_t *a, const rcoll_hier_t *h,
                                                   void *rootbuf, bool *nomem)
{
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    unsigned char *all = NULL;
    *nomem = false;
    if (root && h->lidx_of[a->root] == 0 && h->blocked)
        return rootbuf;
    if (leader || root) {
        all = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, (size_t)a->size * a->bytes);
        *nomem = !all;
    }
    return all;
}

/* The most groups of the G-group allgather (RCOLL_ALLGATHER_GROUPS). */
#define RCOLL_HIER_MAX_GROUPS 64

/* Allgather by G groups of leaders (allgather/hier_multi_group.c): G >= the ranks per node is
 * every rank a leader (hier_multi_leader). Even layouts only. */
rcoll_status_t rcoll_allgather_groups(rcoll_args_t *a, int G);

/* Goes on after a sub-call (see rcoll_hier_step); `first` keeps the first error. */
#define HIER_STEP(a, sub, call, first)                                                          \
    do {                                                                                         \
        if (!rcoll_hier_step((a)->team, (sub), (call), &(first)))                               \
            return (first);                                                                      \
    } while (0)

#endif
