/* What the node-aware (composed) algorithms share: their applicability, the sub-teams, and the
 * rule for a sub-call's status (core/hier.h). A composed algorithm is a sequence of ordinary
 * calls on the node team and the group team; every rank of a sub-team makes the same calls in
 * the same order, so each sub-team's sequence numbers stay in step. */
#ifndef RCOLL_COLL_HIER_H
#define RCOLL_COLL_HIER_H

#include <string.h>

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

/* not_for of the composed algorithms that need every node to hold the same number of ranks
 * (one member of every group on every node: the multi-leader and multi-group forms). */
static inline const char *rcoll_composed_even_not_for(const rcoll_args_t *a)
{
    const char *why = rcoll_composed_not_for(a);
    if (why)
        return why;
    return rcoll_hier_even(a->team) ? NULL : "nodes with different numbers of ranks";
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

/* not_for of the node-aware reductions (they fold each node's ranks first, then the nodes):
 * the layout's (`why`, from one of the above), then a non-commutative operation where the
 * nodes' ranks are not consecutive in the team. */
static inline const char *rcoll_composed_fold_not_for(const rcoll_args_t *a, const char *why, bool commutative)
{
    if (why)
        return why;
    if (!commutative && (!a->team->hier || !a->team->hier->blocked))
        return "a non-commutative operation on nodes whose ranks are not consecutive";
    return NULL;
}

/* The most groups of the G-group allgather (RCOLL_ALLGATHER_GROUPS). */
#define RCOLL_HIER_MAX_GROUPS 64

/* Allgather by G groups of leaders (allgather/hier_multi_group.c): G >= the ranks per node is
 * every rank a leader (hier_multi_leader). Even layouts only. */
rcoll_status_t rcoll_allgather_groups(rcoll_args_t *a, int G);

/* ---- gatherv and scatterv: the v-forms' node-order layout ----
 * The root's own block is in place already (the entry copied it): it counts 0 here. In
 * h->counts: the node totals [0, N) and their displacements [N, 2N) (at the root and its node's
 * leader), a leader's local counts [2N, 2N+L) and their displacements after them (where
 * rcoll_hier_one_block writes: used only once they are done with). */
typedef struct {
    unsigned char *all;  /* every block in node order (total bytes): the root, its node's leader */
    unsigned char *node; /* this node's blocks (node_bytes): every leader (in `all` on the root's node) */
    size_t total, node_bytes;
} rcoll_hier_v_t;

static inline size_t *rcoll_hier_local_counts(rcoll_hier_t *h, const struct rcoll_team *t)
{
    return h->counts + 2 * (size_t)t->node_count;
}

/* The displacements of `n` counts packed in order, stored after them; returns their sum. */
static inline size_t rcoll_hier_displs(size_t *counts, int n)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        counts[n + i] = at;
        at += counts[i];
    }
    return at;
}

/* At the root: the node totals of `counts` (its own as 0) and their displacements; the sum. */
static inline size_t rcoll_hier_totals(const rcoll_args_t *a, rcoll_hier_t *h, const size_t *counts)
{
    const struct rcoll_team *t = a->team;
    for (int k = 0; k < t->node_count; k++)
        h->counts[k] = 0;
    for (int r = 0; r < a->size; r++)
        if (r != a->root)
            h->counts[t->node_of[r]] += counts[r];
    return rcoll_hier_displs(h->counts, t->node_count);
}

/* At the root, scatterv: every other rank's block from its displacement in `user` to its
 * node-order place in `all`. */
static inline void rcoll_hier_v_pack(const rcoll_args_t *a, const rcoll_hier_t *h, unsigned char *all,
                                     const unsigned char *user, const size_t *counts, const size_t *displs)
{
    size_t at = 0;
    for (int pos = 0; pos < a->size; pos++) {
        int r = h->rank_at[pos];
        if (r != a->root && counts[r]) {
            memcpy(all + at, user + displs[r], counts[r]);
            at += counts[r];
        }
    }
}

/* The mirror, gatherv: from `all` to every other rank's displacement in `user`. */
static inline void rcoll_hier_v_unpack(const rcoll_args_t *a, const rcoll_hier_t *h, const unsigned char *all,
                                       unsigned char *user, const size_t *counts, const size_t *displs)
{
    size_t at = 0;
    for (int pos = 0; pos < a->size; pos++) {
        int r = h->rank_at[pos];
        if (r != a->root && counts[r]) {
            memcpy(user + displs[r], all + at, counts[r]);
            at += counts[r];
        }
    }
}

/* On the root's node, where the root does not lead it: `len` bytes from the root's `from` to
 * the leader's `to` (a node-team scatterv in which only the leader receives). */
static inline rcoll_status_t rcoll_hier_to_leader(const rcoll_args_t *a, rcoll_hier_t *h,
                                                  const void *from, void *to, size_t len)
{
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    size_t *counts = root ? rcoll_hier_one_block(h, a->team, len) : NULL; /* (a leader's are in use) */
    return rcoll_scatterv(h->node, root ? from : NULL, counts, root ? counts + h->node->size : NULL,
                          leader ? to : root ? RCOLL_IN_PLACE : NULL, leader ? len : 0,
                          h->lidx_of[a->root]);
}

/* The mirror: `len` bytes from the leader's `from` to the root's `to` (a node-team gatherv in
 * which only the leader sends; a rank that sends nothing names any buffer). */
static inline rcoll_status_t rcoll_hier_from_leader(const rcoll_args_t *a, rcoll_hier_t *h,
                                                    const void *from, void *to, size_t len)
{
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    size_t *counts = root ? rcoll_hier_one_block(h, a->team, len) : NULL;
    const void *send = leader ? from : root ? RCOLL_IN_PLACE : (const void *)h;
    return rcoll_gatherv(h->node, send, leader ? len : 0, root ? to : NULL, counts,
                         root ? counts + h->node->size : NULL, h->lidx_of[a->root]);
}

/* The buffers of rcoll_hier_v_t, once the counts are known (sizes that differ between ranks
 * stay within them); false with the team's error when out of memory. */
static inline bool rcoll_hier_v_buffers(const rcoll_args_t *a, rcoll_hier_t *h, rcoll_hier_v_t *v)
{
    struct rcoll_team *t = a->team;
    int rnode = t->node_of[a->root], node = t->node_of[a->rank];
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    size_t at = node == rnode ? h->counts[t->node_count + rnode] : 0, len = v->node_bytes;
    if (root || (leader && node == rnode))
        len = at + v->node_bytes > v->total ? at + v->node_bytes : v->total;
    else if (!leader)
        return true;
    unsigned char *buf = rcoll_team_tmp(t, RCOLL_TMP_ALGO, len ? len : 1);
    if (!buf) {
        rcoll_team_error(t, RCOLL_ERR_NOMEM, "%s: no memory for the node-order blocks", t->coll);
        return false;
    }
    v->all = node == rnode ? buf : NULL;
    v->node = leader ? buf + at : NULL;
    return true;
}

/* Gatherv and scatterv, before any data moves: what each rank needs, learnt through shared
 * memory only. Every leader gathers its ranks' counts (a size_t each); where the root does not
 * lead its node, it gives the leader its node totals; then the buffers. False when the call
 * stops (*first: why). */
static inline bool rcoll_hier_v_begin(const rcoll_args_t *a, rcoll_hier_t *h, const size_t *root_counts,
                                      rcoll_hier_v_t *v, rcoll_status_t *first)
{
    struct rcoll_team *t = a->team;
    int N = t->node_count, rnode = t->node_of[a->root], node = t->node_of[a->rank];
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    size_t mine = root ? 0 : a->bytes, *local = rcoll_hier_local_counts(h, t);
    *v = (rcoll_hier_v_t){0};
    if (root)
        v->total = rcoll_hier_totals(a, h, root_counts);
    if (!rcoll_hier_step(t, h->node, rcoll_gather(h->node, &mine, leader ? local : NULL, sizeof mine, 0), first))
        return false;
    if (node == rnode && h->lidx_of[a->root] != 0 &&
        !rcoll_hier_step(t, h->node, rcoll_hier_to_leader(a, h, h->counts, h->counts, (size_t)N * sizeof(size_t)),
                         first))
        return false;
    if (leader)
        v->node_bytes = rcoll_hier_displs(local, h->node->size);
    if (leader && node == rnode && !root)
        v->total = rcoll_hier_displs(h->counts, N);
    if (leader && node == rnode && v->node_bytes != h->counts[rnode] && *first == RCOLL_OK)
        *first = rcoll_team_error(t, RCOLL_ERR_TRUNCATE, "%s: the counts of node %d's ranks sum to %zu "
                                  "bytes where the root's give %zu (sizes must match between ranks)",
                                  t->coll, rnode, v->node_bytes, h->counts[rnode]);
    if (!rcoll_hier_v_buffers(a, h, v)) {
        *first = RCOLL_ERR_NOMEM;
        return false;
    }
    return true;
}

/* ---- a composed algorithm's own call on a sub-team (core/team.h: bind, open, close) ----
 * Instead of an ordinary sub-call, a composed algorithm may run a call of its own on a
 * sub-team: rcoll_hier_open binds `a` to `sub` for a call of `algo`'s collective of `bytes`,
 * takes the sub-team's next sequence number and enters its transport advertising `target`
 * (`target_bytes`; NULL: nothing for single copies or reads); the algorithm then moves data
 * with the transport operations of `a` as a flat algorithm does (a->tl, a->seq), and
 * rcoll_hier_close ends the call (the sizes check, leave), whatever open returned. A rank may
 * hold a call on its node team and one on its group team open at once and make progress on
 * both (hier_pap); every rank of a sub-team opens its calls there in the same order, and
 * makes no other call on that sub-team until it has closed the one it opened. */
static inline rcoll_status_t rcoll_hier_open(struct rcoll_team *sub, const rcoll_algo_t *algo,
                                             rcoll_args_t *a, size_t bytes, void *target,
                                             size_t target_bytes)
{
    memset(a, 0, sizeof *a);
    a->bytes = bytes;
    a->target = target;
    a->target_bytes = target ? target_bytes : 0;
    rcoll_team_bind(sub, algo->coll, a);
    return rcoll_team_open(sub, algo, a);
}

static inline rcoll_status_t rcoll_hier_close(rcoll_args_t *a, rcoll_status_t st)
{
    return rcoll_team_close(a->team, a, st);
}

/* Goes on after a sub-call (see rcoll_hier_step); `first` keeps the first error. */
#define HIER_STEP(a, sub, call, first)                                                          \
    do {                                                                                         \
        if (!rcoll_hier_step((a)->team, (sub), (call), &(first)))                               \
            return (first);                                                                      \
    } while (0)

#endif
