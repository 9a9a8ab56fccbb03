/* The one-step reductions' reads: see reduce_read.h. */
#include "coll/reduce_read.h"

#include "coll/sweep.h"

/* From this size (measured np=2: docs/tuning.md, "Reductions"). */
#define STAGED_MIN (16 * 1024)

/* Room for the P vectors, then the list. */
static size_t room(const rcoll_args_t *a)
{
    return rcoll_reduce_ptr_align((size_t)a->size * a->bytes);
}

rcoll_status_t rcoll_read_prepare(rcoll_args_t *a, const char *coll)
{
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, room(a) + (size_t)a->size * sizeof(void *), coll);
    return a->tmp ? RCOLL_OK : RCOLL_ERR_NOMEM;
}

const void **rcoll_read_inputs(const rcoll_args_t *a)
{
    return (const void **)(void *)((unsigned char *)a->tmp + room(a));
}

/* One peer's publication, whole. */
typedef struct {
    size_t offset, total;
} whole_t;

/* Peer q's len bytes from `offset` of its publication, read where they lie (on this node) or
 * else copied to `dst`: the fold's input in[q]. */
static rcoll_status_t input(rcoll_args_t *a, int q, void *dst, size_t len, size_t offset)
{
    const void *p = a->tl->ops->peek(a->tl, q, a->seq, len, offset);
    if (!p) {
        rcoll_status_t st = a->tl->ops->get(a->tl, q, a->seq, dst, len, offset);
        if (st != RCOLL_OK)
            return st;
        p = dst;
    }
    rcoll_read_inputs(a)[q] = p;
    return RCOLL_OK;
}

static int take(rcoll_args_t *a, void *ctx, int q)
{
    const whole_t *w = ctx;
    size_t sent;
    const void *p = a->tl->ops->peek_published(a->tl, q, a->seq, w->offset, &sent);
    if (p) { /* there, and readable where it lies: the common case on one node */
        if (sent != w->total)
            rcoll_team_note_size(a->team, q, sent, w->total);
        rcoll_read_inputs(a)[q] = p;
        return 1;
    }
    rcoll_event_t ev = rcoll_ev_published(q, a->seq);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_check_len(a, &ev, w->total);
    rcoll_status_t st = input(a, q, (unsigned char *)a->tmp + (size_t)q * a->bytes, a->bytes, w->offset);
    return st != RCOLL_OK ? (int)st : 1;
}

static rcoll_event_t published(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    return rcoll_ev_published(q, a->seq);
}

rcoll_status_t rcoll_read_published(rcoll_args_t *a, size_t offset, size_t total, const void *mine)
{
    whole_t w = {offset, total};
    int *items = a->team->scratch, left = 0;
    /* The sweep's first pass inline (small vectors: the call is its overhead), in the sweep's
     * order; only peers not there yet go to the sweep. */
    for (int i = 1, q = a->rank; i < a->size; i++) {
        q = q + 1 == a->size ? 0 : q + 1;
        int r = take(a, &w, q);
        if (r < 0)
            return (rcoll_status_t)r;
        if (r == 0)
            items[left++] = q;
    }
    rcoll_status_t st = left ? rcoll_sweep(a, items, left, take, published, &w) : RCOLL_OK;
    if (st != RCOLL_OK)
        return st;
    rcoll_read_inputs(a)[a->rank] = mine;
    return RCOLL_OK;
}

bool rcoll_staged(const rcoll_args_t *a)
{
    return a->bytes >= STAGED_MIN && !a->team->wait.crowded;
}

/* Bytes of a part: 8 KB of whole elements, so that a reader's part of its own vector, of a
 * peer's copied out and of the result stay in the first-level cache while it folds them
 * (measured np=2: 8 KB parts beat 4, 16, 32 and 64 KB ones at every size from 32 KB to 1 MB,
 * docs/tuning.md "Reductions"). */
#define PART (8 * 1024)

static size_t part_bytes(const rcoll_args_t *a)
{
    size_t es = rcoll_dtype_size(a->dtype);
    return PART / es ? PART / es * es : es;
}

rcoll_status_t rcoll_staged_send(rcoll_args_t *a, bool to_all)
{
    size_t part = part_bytes(a);
    unsigned step = 0;
    for (size_t off = 0; off < a->bytes; off += part, step++) {
        size_t len = a->bytes - off < part ? a->bytes - off : part;
        rcoll_status_t st = a->tl->ops->stage(a->tl, a->seq, (const char *)a->sendbuf + off, len, off, a->bytes);
        if (st != RCOLL_OK)
            return st;
        for (int i = 1; to_all && i < a->size; i++)
            a->tl->ops->signal(a->tl, (a->rank + i) % a->size, a->seq, step);
        if (!to_all)
            a->tl->ops->signal(a->tl, a->root, a->seq, step);
    }
    return RCOLL_OK;
}

/* One part, as a reader sees it. */
typedef struct {
    unsigned char *all;
    size_t off, len;
    unsigned step;
} part_t;

static int take_part(rcoll_args_t *a, void *ctx, int q)
{
    part_t *p = ctx;
    rcoll_event_t ev = rcoll_ev_signal(q, a->seq, p->step);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    if (p->off == 0) { /* the publication's length is set before its first part */
        rcoll_event_t pub = rcoll_ev_published(q, a->seq);
        rcoll_check_len(a, &pub, a->bytes);
    }
    rcoll_status_t st = input(a, q, p->all + (size_t)q * a->bytes + p->off, p->len, p->off);
    return st != RCOLL_OK ? (int)st : 1;
}

static rcoll_event_t part_signal(rcoll_args_t *a, void *ctx, int q)
{
    return rcoll_ev_signal(q, a->seq, ((part_t *)ctx)->step);
}

rcoll_status_t rcoll_staged_fold(rcoll_args_t *a, const char *coll)
{
    unsigned char *all = a->tmp;
    const void **in = rcoll_read_inputs(a);
    size_t es = rcoll_dtype_size(a->dtype), part = part_bytes(a);
    part_t p = {all, 0, 0, 0};
    int *items = a->team->scratch;
    for (; p.off < a->bytes; p.off += part, p.step++) {
        p.len = a->bytes - p.off < part ? a->bytes - p.off : part;
        rcoll_status_t st = rcoll_sweep(a, items, rcoll_sweep_others(a, items), take_part, part_signal, &p);
        if (st != RCOLL_OK)
            return st;
        in[a->rank] = (const unsigned char *)a->sendbuf + p.off;
        st = rcoll_op_fold(a->op, a->dtype, in, a->size, (char *)a->recvbuf + p.off, p.len / es);
        if (st != RCOLL_OK)
            return rcoll_reduce_fold_status(a, st, coll);
    }
    return RCOLL_OK;
}
