/* Scatter over the k-port spanning binomial tree.
 * Paper: [qian-phd] (Qian), 3.4.1: the root sends k messages of P/(k+1) blocks to its k children
 * of the top level, each of them passes one (k+1)-th of what it got to each of its k children,
 * and so on; k is RCOLL_KPORT (default 2: a 3-nomial tree), any team size, any root (ranks
 * relative to it, see ../gather/tree.h).
 * Steps: ceil(log_{k+1} P). A rank u waits for its subtree's blocks [u, u+span) from its parent,
 * then sends each child c the run [c, c+span(c)) -- the farthest child (largest subtree) first;
 * single-copy runs to children that have arrived before those that have not -- and finally
 * copies its own block out. A message goes inline (<= 48 bytes), into the child's inbox (below the zero-copy
 * threshold; the child forwards straight out of its inbox, no arrival needed), or single copy
 * (put_user, once the child has arrived) into the child's staging buffer (prepare sets it up for
 * interior ranks) or, for a leaf, straight into its receive buffer. The root's runs come from
 * its send buffer by team rank (two pieces where a subtree wraps past rank P-1).
 * Bytes on the wire per rank u: span(u) * m received in one message; the root sends (P-1)*m in
 * at most k*ceil(log_{k+1} P) messages ([qian-phd], eq. 3.1).
 * When it wins: many ranks with tiny blocks across nodes, where the root's P-1 writes cost more
 * than the extra steps. On one node Direct wins: measured at 8 ranks on 2 cores, Direct
 * 2.1-26 us against 4.0-41 us for 1 B-64 KB. */
#include "coll/gather/tree.h"
#include "coll/xfer.h"

#include <string.h>

typedef struct {
    gs_tree_t tree;
    const unsigned char *data; /* my subtree's blocks, relative order from mine (not the root) */
} scatter_tree_t;

/* Protocol of the message to relative rank u (its whole subtree, at offset 0 of its inbox). */
static rcoll_msg_proto_t proto_down(const rcoll_args_t *a, const gs_tree_t *t, int u)
{
    size_t bytes = (size_t)gs_tree_span(t, u) * a->bytes;
    return gs_proto(a, bytes, bytes);
}

static rcoll_status_t scatter_binomial_prepare(rcoll_args_t *a)
{
    gs_tree_t t;
    gs_tree_init(&t, a, a->team->scratch);
    if (t.me == 0 || t.span == 1 || proto_down(a, &t, t.me) != RCOLL_MSG_ZCOPY)
        return RCOLL_OK; /* leaves get put_user data straight into their receive buffer */
    a->tmp = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, (size_t)t.span * a->bytes);
    if (!a->tmp)
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM, "scatter binomial: no memory for staging");
    a->target = a->tmp;
    a->target_bytes = (size_t)t.span * a->bytes;
    return RCOLL_OK;
}

/* Send child c its subtree's run, unless it goes single copy and c has not arrived yet. */
static int serve_child(rcoll_args_t *a, void *ctx, int i)
{
    scatter_tree_t *s = ctx;
    const gs_tree_t *t = &s->tree;
    int c = t->child[i], peer = gs_tree_abs(t, c), span = gs_tree_span(t, c);
    rcoll_msg_proto_t proto = proto_down(a, t, c);
    if (proto == RCOLL_MSG_ZCOPY && !gs_arrived(a, peer))
        return 0;
    gs_msg_t msg;
    gs_msg_begin(&msg, a, peer, proto);
    rcoll_status_t st;
    if (t->me != 0) {
        st = gs_msg_part(&msg, s->data + (size_t)(c - t->me) * a->bytes, (size_t)span * a->bytes, 0, 0);
    } else {
        size_t off[2], len[2];
        int n = gs_tree_pieces(t, c, span, a->bytes, off, len);
        const char *from = a->sendbuf;
        st = gs_msg_part(&msg, from + off[0], len[0], 0, n == 1 ? 0 : RCOLL_NO_SIGNAL);
        if (st == RCOLL_OK && n == 2)
            st = gs_msg_part(&msg, from + off[1], len[1], len[0], 0);
    }
    return st == RCOLL_OK ? 1 : (int)st;
}

static rcoll_event_t child_arrival(rcoll_args_t *a, void *ctx, int i)
{
    scatter_tree_t *s = ctx;
    return rcoll_ev_arrival(gs_tree_abs(&s->tree, s->tree.child[i]), a->seq);
}

static rcoll_status_t scatter_binomial(rcoll_args_t *a)
{
    scatter_tree_t s = {.data = NULL};
    gs_tree_t *t = &s.tree;
    gs_tree_init(t, a, a->team->scratch);
    rcoll_msg_proto_t in = RCOLL_MSG_ZCOPY;
    if (t->me != 0) {
        int parent = gs_tree_abs(t, t->parent);
        rcoll_event_t ev = rcoll_ev_signal(parent, a->seq, 0);
        rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
        if (st != RCOLL_OK)
            return st;
        in = proto_down(a, t, t->me);
        s.data = gs_msg_data(a, parent, in, 0, a->target);
    }
    int *pending = a->team->scratch + a->size;
    for (int i = 0; i < t->nchild; i++)
        pending[i] = t->nchild - 1 - i; /* farthest child, largest subtree, first */
    rcoll_status_t st = rcoll_sweep(a, pending, t->nchild, serve_child, child_arrival, &s);
    if (st == RCOLL_OK && t->me != 0 && s.data != a->recvbuf)
        memcpy(a->recvbuf, s.data, a->bytes);
    return st;
}

/* Cost model: ceil(log_{k+1} P) levels; at distance d a parent writes k children d blocks each. */
static double cost(const rcoll_cost_in_t *in)
{
    return rcoll_cost_binomial(in, in->cfg->kport);
}

const rcoll_algo_t rcoll_scatter_binomial = {
    .name = "binomial",
    .coll = RCOLL_COLL_SCATTER,
    .summary = "[qian-phd] 3.4.1: k-port binomial tree (RCOLL_KPORT), each rank passes on its subtree's part",
    .run = scatter_binomial,
    .prepare = scatter_binomial_prepare,
    .cost = cost,
};
