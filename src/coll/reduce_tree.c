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

/* Bytes of a part: the whole vector, or where the fan-in goes in parts (rcoll_fanin_parts)
 * FANIN_PART of whole elements through the parent's inbox, and an eighth of the vector (64 KB to
 * 256 KB) where the parts go single copy into the parent's scratch (the inbox cannot hold the
 * children's vectors): each single copy is a system call and a signal, and 16 KB ones made a
 * 1 MB reduce at np=2 2x native (docs/tuning.md, "Reductions"). */
#define FANIN_PIPE_MIN (64 * 1024)
#define FANIN_PART (16 * 1024)

size_t rcoll_fanin_part(const rcoll_args_t *a)
{
    size_t es = rcoll_dtype_size(a->dtype), part = FANIN_PART;
    if (a->bytes < FANIN_PIPE_MIN || a->team->wait.crowded)
        return a->bytes;
    gs_tree_t t;
    gs_tree_init(&t, a, a->team->scratch);
    if (rcoll_msg_proto(a, part, max_children(&t) * a->bytes, false) == RCOLL_MSG_ZCOPY)
        part = a->bytes / 8 < 64 * 1024 ? 64 * 1024 : a->bytes / 8 > 256 * 1024 ? 256 * 1024 : a->bytes / 8;
    part = part / es ? part / es * es : es;
    if (a->bytes / part >= 0x8000) /* a signal counts steps to 0xfffe */
        part = (a->bytes / 0x8000 + es) / es * es;
    return part;
}

/* Every message's protocol, alike on every rank (the part's size, the team's tree). */
static rcoll_msg_proto_t part_proto(const rcoll_args_t *a, const gs_tree_t *t, size_t part)
{
    return rcoll_msg_proto(a, part, max_children(t) * a->bytes, part == a->bytes);
}

/* Part `step` (at `off`, `len` bytes) of my children's partials folded with my own vector into
 * `to` (or my own part alone, a leaf), then sent up. */
static rcoll_status_t fanin_part(rcoll_args_t *a, const gs_tree_t *t, rcoll_reduce_lists_t *l,
                                 rcoll_msg_proto_t pr, unsigned step, size_t off, size_t len,
                                 void *to, const char *coll)
{
    const unsigned char *result = (const unsigned char *)a->sendbuf + off;
    if (t->nchild) {
        l->in[0] = result;
        for (int i = 0; i < t->nchild; i++) {
            int child = gs_tree_abs(t, t->child[i]);
            rcoll_event_t ev = rcoll_ev_signal(child, a->seq, step);
            rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
            if (st != RCOLL_OK)
                return st;
            if (len == a->bytes) /* one message: its line tells its length (parts: a later one's) */
                rcoll_check_len(a, &ev, a->bytes);
            size_t at = (size_t)i * a->bytes + off;
            const unsigned char *d = rcoll_msg_data(a, child, pr, at);
            l->in[i + 1] = d ? (const void *)d : (const unsigned char *)a->tmp + at;
        }
        rcoll_status_t st = rcoll_op_fold(a->op, a->dtype, l->in, t->nchild + 1,
                                          (unsigned char *)to + off, len / rcoll_dtype_size(a->dtype));
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, coll);
        result = (const unsigned char *)to + off;
    } else if (t->me == 0 && to != a->sendbuf) { /* one rank */
        memcpy((unsigned char *)to + off, result, len);
    }
    if (t->me == 0)
        return RCOLL_OK;
    size_t slot = child_slot(t, t->me, t->parent);
    return rcoll_msg_put(a, gs_tree_abs(t, t->parent), step, pr, result, len, slot * a->bytes + off);
}

rcoll_status_t rcoll_fanin_parts(rcoll_args_t *a, void *out, const char *coll,
                                 rcoll_status_t (*done)(rcoll_args_t *a, unsigned step, size_t off,
                                                        size_t len))
{
    gs_tree_t t;
    gs_tree_init(&t, a, a->team->scratch);
    size_t part = rcoll_fanin_part(a);
    rcoll_msg_proto_t pr = part_proto(a, &t, part);
    rcoll_reduce_lists_t l = {0};
    if (t.nchild && !rcoll_reduce_lists(a, &l, coll))
        return RCOLL_ERR_NOMEM;
    void *to = t.me == 0 ? out : (unsigned char *)a->tmp + (size_t)t.nchild * a->bytes;
    size_t parts = a->bytes > part ? (a->bytes + part - 1) / part : 1;
    for (unsigned step = 0; step < parts; step++) {
        size_t off = step * part, len = a->bytes - off < part ? a->bytes - off : part;
        rcoll_status_t st = fanin_part(a, &t, &l, pr, step, off, len, to, coll);
        if (st == RCOLL_OK && t.me == 0 && done)
            st = done(a, step, off, len);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

rcoll_status_t rcoll_fanin(rcoll_args_t *a, void *out, const char *coll)
{
    return rcoll_fanin_parts(a, out, coll, NULL);
}
