/* Gather over the k-port spanning binomial tree.
 * Paper: [qian-phd] (Qian), 3.4.2 (gather is scatter reversed, on the tree of 3.4.1); k is
 * RCOLL_KPORT (default 2: a 3-nomial tree), any team size, any root (ranks relative to it).
 * Steps: ceil(log_{k+1} P). A rank u collects the blocks of its subtree [u, u+span) from its
 * children in whatever order they come, then sends them, with its own block, as one message
 * to its parent: inline (<= 48 bytes), into the parent's inbox at the subtree's offset from the
 * parent (below the zero-copy threshold and within the inbox) -- a rank forwards what its
 * children left in its inbox straight out of it -- or single copy (put_user) into the parent's
 * staging buffer (tree.h: relative order, set up by prepare) or, at the root, straight into the
 * receive buffer (one or two runs where the subtree wraps past rank P-1). The root copies out
 * what came through its inbox or inline, child by child as they arrive.
 * Bytes on the wire per rank u: span(u) * m sent in one message; each block crosses once per
 * tree level below it; the root receives (P-1) * m in at most k * ceil(log_{k+1} P) messages
 * ([qian-phd], eq. 3.1).
 * When it wins: many ranks with tiny blocks across nodes, where P-1 messages into the root
 * cost more than the extra steps. On one node Direct wins: measured at 8 ranks on 2 cores,
 * Direct 1.4-5.2 us against 2.7-26 us for 1 B-64 KB (every tree step waits for a rank to be
 * scheduled); at P = 4 and k = 2 the tree is Direct. */
#include "coll/gather/tree.h"
#include "coll/xfer.h"

#include <stdint.h>
#include <string.h>

typedef struct {
    gs_tree_t tree;
    char *staging; /* where zero-copy children wrote (interior ranks) */
} gather_tree_t;

/* Protocol of the message from child c to its parent p (relative ranks). */
static rcoll_msg_proto_t proto_up(const rcoll_args_t *a, const gs_tree_t *t, int c, int p)
{
    size_t span = (size_t)gs_tree_span(t, c);
    return gs_proto(a, span * a->bytes, ((size_t)(c - p) + span) * a->bytes);
}

static rcoll_status_t gather_binomial_prepare(rcoll_args_t *a)
{
    gs_tree_t t;
    gs_tree_init(&t, a, a->team->scratch);
    bool staging = false;
    for (int i = 0; t.me != 0 && i < t.nchild; i++)
        staging |= proto_up(a, &t, t.child[i], t.me) == RCOLL_MSG_ZCOPY;
    if (!staging)
        return RCOLL_OK;
    a->tmp = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, (size_t)t.span * a->bytes);
    if (!a->tmp)
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM, "gather binomial: no memory for staging");
    a->target = a->tmp;
    a->target_bytes = (size_t)t.span * a->bytes;
    return RCOLL_OK;
}

/* Root: child c's subtree arrived inline or in the inbox; copy it to its place (1-2 runs). */
static void root_copy_out(rcoll_args_t *a, const gs_tree_t *t, int c, rcoll_msg_proto_t proto)
{
    int span = gs_tree_span(t, c);
    const unsigned char *from = gs_msg_data(a, gs_tree_abs(t, c), proto, (size_t)c * a->bytes, NULL);
    size_t off[2], len[2];
    int n = gs_tree_pieces(t, c, span, a->bytes, off, len);
    for (int j = 0; j < n; j++) {
        memcpy((char *)a->recvbuf + off[j], from, len[j]);
        from += len[j];
    }
}

static int take_child(rcoll_args_t *a, void *ctx, int i)
{
    gather_tree_t *g = ctx;
    int c = g->tree.child[i];
    rcoll_event_t ev = rcoll_ev_signal(gs_tree_abs(&g->tree, c), a->seq, 0);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_msg_proto_t proto = proto_up(a, &g->tree, c, g->tree.me);
    if (g->tree.me == 0 && proto != RCOLL_MSG_ZCOPY)
        root_copy_out(a, &g->tree, c, proto);
    return 1;
}

static rcoll_event_t child_signal(rcoll_args_t *a, void *ctx, int i)
{
    gather_tree_t *g = ctx;
    return rcoll_ev_signal(gs_tree_abs(&g->tree, g->tree.child[i]), a->seq, 0);
}

/* Send the run of blocks [u, u + len/m) held at src to the parent, as part of the message. */
static rcoll_status_t send_run(gs_msg_t *msg, const gs_tree_t *t, const void *src, size_t len,
                               int u, unsigned step)
{
    size_t m = msg->a->bytes;
    if (msg->proto == RCOLL_MSG_INLINE)
        return gs_msg_part(msg, src, len, (size_t)(u - t->me) * m, step);
    if (rcoll_msg_copied(msg->proto) || t->parent != 0)
        return gs_msg_part(msg, src, len, (size_t)(u - t->parent) * m, step);
    size_t off[2], n_len[2]; /* zero copy into the root's receive buffer: by team rank */
    int n = gs_tree_pieces(t, u, (int)(len / m), m, off, n_len);
    rcoll_status_t st = RCOLL_OK;
    for (int j = 0; j < n && st == RCOLL_OK; j++) {
        st = gs_msg_part(msg, src, n_len[j], off[j], j == n - 1 ? step : RCOLL_NO_SIGNAL);
        src = (const char *)src + n_len[j];
    }
    return st;
}

/* My block and my children's subtrees, as one message to my parent; runs that lie next to
 * each other in memory (the children's in my inbox or staging) go as one part. */
static rcoll_status_t send_up(rcoll_args_t *a, gather_tree_t *g)
{
    const gs_tree_t *t = &g->tree;
    size_t m = a->bytes;
    gs_msg_t msg;
    gs_msg_begin(&msg, a, gs_tree_abs(t, t->parent), proto_up(a, t, t->me, t->parent));
    const unsigned char *run = a->sendbuf;
    size_t run_len = m;
    int run_first = t->me;
    for (int i = 0; i < t->nchild; i++) {
        int c = t->child[i];
        size_t len = (size_t)gs_tree_span(t, c) * m, off = (size_t)(c - t->me) * m;
        const unsigned char *at = gs_msg_data(a, gs_tree_abs(t, c), proto_up(a, t, c, t->me), off,
                                              g->staging ? g->staging + off : NULL);
        if ((uintptr_t)(run + run_len) == (uintptr_t)at) {
            run_len += len;
            continue;
        }
        rcoll_status_t st = send_run(&msg, t, run, run_len, run_first, RCOLL_NO_SIGNAL);
        if (st != RCOLL_OK)
            return st;
        run = at, run_len = len, run_first = c;
    }
    return send_run(&msg, t, run, run_len, run_first, 0);
}

static rcoll_status_t gather_binomial(rcoll_args_t *a)
{
    gather_tree_t g = {.staging = a->tmp};
    gs_tree_init(&g.tree, a, a->team->scratch);
    int *pending = a->team->scratch + a->size;
    for (int i = 0; i < g.tree.nchild; i++)
        pending[i] = i;
    rcoll_status_t st = rcoll_sweep(a, pending, g.tree.nchild, take_child, child_signal, &g);
    if (st != RCOLL_OK || g.tree.me == 0)
        return st;
    return send_up(a, &g);
}

/* Cost model: ceil(log_{k+1} P) levels; at distance d a parent hears k children carrying d
 * blocks each. */
static double cost(const rcoll_cost_in_t *in)
{
    return rcoll_cost_binomial(in, in->cfg->kport);
}

const rcoll_algo_t rcoll_gather_binomial = {
    .name = "binomial",
    .coll = RCOLL_COLL_GATHER,
    .summary = "[qian-phd] 3.4.2: k-port binomial tree (RCOLL_KPORT), subtrees combined on the way up",
    .run = gather_binomial,
    .prepare = gather_binomial_prepare,
    .cost = cost,
};
