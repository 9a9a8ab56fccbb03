/* The tree reductions' fan-in: see reduce_tree.h. */
#include "coll/reduce_tree.h"

#include "coll/gather/tree.h"
#include "coll/msg.h"
#include "coll/schedule.h"

/* The most children a rank has (the root's): k per level. */
static size_t max_children(const gs_tree_t *t)
{
    return (size_t)(t->radix - 1) * (size_t)rcoll_ceil_log(t->size, t->radix);
}

/* Every message's protocol, alike on every rank (the vector's size, the team's tree). */
static rcoll_msg_proto_t proto(const rcoll_args_t *a, const gs_tree_t *t)
{
    return rcoll_msg_proto(a, a->bytes, max_children(t) * a->bytes, true);
}

/* The slot of relative child c at its parent p: children nearest first, k per place. */
static size_t child_slot(const gs_tree_t *t, int c, int p)
{
    int diff = c - p, j = 0;
    while (diff % t->radix == 0) {
        diff /= t->radix;
        j++;
    }
    return (size_t)j * (size_t)(t->radix - 1) + (size_t)(diff - 1);
}

rcoll_status_t rcoll_fanin_prepare(rcoll_args_t *a, const char *coll)
{
    gs_tree_t t;
    gs_tree_init(&t, a, a->team->scratch);
    if (t.nchild == 0)
        return RCOLL_OK;
    size_t bytes = ((size_t)t.nchild + 1) * a->bytes;
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, bytes, coll);
    if (!a->tmp)
        return RCOLL_ERR_NOMEM;
    a->target = a->tmp;
    a->target_bytes = bytes;
    return RCOLL_OK;
}

rcoll_status_t rcoll_fanin(rcoll_args_t *a, void *out, const char *coll)
{
    gs_tree_t t;
    gs_tree_init(&t, a, a->team->scratch);
    rcoll_msg_proto_t pr = proto(a, &t);
    const void *result = a->sendbuf;
    if (t.nchild) {
        rcoll_reduce_lists_t l;
        if (!rcoll_reduce_lists(a, &l, coll))
            return RCOLL_ERR_NOMEM;
        l.in[0] = a->sendbuf;
        for (int i = 0; i < t.nchild; i++) {
            int child = gs_tree_abs(&t, t.child[i]);
            rcoll_event_t ev = rcoll_ev_signal(child, a->seq, 0);
            rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
            if (st != RCOLL_OK)
                return st;
            rcoll_check_len(a, &ev, a->bytes);
            const unsigned char *d = rcoll_msg_data(a, child, pr, (size_t)i * a->bytes);
            l.in[i + 1] = d ? (const void *)d : (const unsigned char *)a->tmp + (size_t)i * a->bytes;
        }
        void *to = t.me == 0 ? out : (unsigned char *)a->tmp + (size_t)t.nchild * a->bytes;
        rcoll_status_t st = rcoll_op_fold(a->op, a->dtype, l.in, t.nchild + 1, to, a->count);
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, coll);
        result = to;
    } else if (t.me == 0 && out != a->sendbuf) { /* one rank */
        memcpy(out, a->sendbuf, a->bytes);
    }
    if (t.me == 0)
        return RCOLL_OK;
    size_t slot = child_slot(&t, t.me, t.parent);
    return rcoll_msg_put(a, gs_tree_abs(&t, t.parent), 0, pr, result, a->bytes, slot * a->bytes);
}
