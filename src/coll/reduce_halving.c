/* Recursive halving for reduce_scatter_block and reduce_scatter: see reduce_halving.h. */
#include "coll/reduce_halving.h"

#include "coll/msg.h"
#include "coll/schedule.h"

#include <string.h>

typedef struct {
    int p2, rem, steps;
    int v, size;          /* my new rank (-1: an even rank of the pairs); P */
    size_t block;         /* bytes of one block (reduce_scatter_block) */
    const size_t *displs; /* ... or each block's offset (reduce_scatter: packed, by count) */
    size_t total;         /* P blocks */
} rh_t;

static size_t block_off(const rh_t *p, size_t b)
{
    return b >= (size_t)p->size ? p->total : p->displs ? p->displs[b] : b * p->block;
}
static size_t block_len(const rh_t *p, int r)
{
    return block_off(p, (size_t)r + 1) - block_off(p, (size_t)r);
}

static rh_t plan(const rcoll_args_t *a, bool counts)
{
    rh_t p;
    p.size = a->size;
    p.p2 = rcoll_pof2_floor(a->size);
    p.rem = a->size - p.p2;
    p.steps = rcoll_ceil_log2(p.p2);
    p.v = a->rank < 2 * p.rem ? (a->rank % 2 ? a->rank / 2 : -1) : a->rank - p.rem;
    p.block = a->bytes;
    p.displs = counts ? a->rdispls : NULL;
    p.total = p.displs ? a->rdispls[a->size - 1] + a->rcounts[a->size - 1] : (size_t)a->size * a->bytes;
    return p;
}

/* The team rank of new rank v, and the first block of new ranks [v, ...) (v = P2: all P). */
static int real_rank(const rh_t *p, int v)
{
    return v < p->rem ? 2 * v + 1 : v + p->rem;
}
static size_t first_block(const rh_t *p, int v)
{
    return v < p->rem ? 2 * (size_t)v : (size_t)v + (size_t)p->rem;
}

/* Byte range of new ranks [lo, hi). */
static size_t range_off(const rh_t *p, int lo)
{
    return block_off(p, first_block(p, lo));
}
static size_t range_len(const rh_t *p, int lo, int hi)
{
    return block_off(p, first_block(p, hi)) - block_off(p, first_block(p, lo));
}

/* The range new rank v keeps after step s ([*lo, *hi)) and where the part it receives at step
 * s sits in its incoming scratch (after the pair's whole vector, steps one after another). */
static size_t step_range(const rh_t *p, int v, int s, int *lo, int *hi)
{
    size_t at = p->total;
    *lo = 0, *hi = p->p2;
    for (int t = 0; t <= s; t++) {
        int mid = *lo + (*hi - *lo) / 2;
        if (v < mid)
            *hi = mid;
        else
            *lo = mid;
        if (t < s)
            at += range_len(p, *lo, *hi);
    }
    return at;
}

/* Scratch of an active rank: incoming (the pair's vector, then the steps' parts: step s's at
 * most 2 P2 / 2^(s+1) blocks, so at most 2 total in all), then the accumulator (total). */
rcoll_status_t rcoll_halving_prepare(rcoll_args_t *a, const char *coll, bool counts)
{
    rh_t p = plan(a, counts);
    if (p.v < 0) /* receives its block only: straight into its receive buffer */
        return RCOLL_OK;
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, 4 * p.total, coll);
    if (!a->tmp)
        return RCOLL_ERR_NOMEM;
    a->target = a->tmp;
    a->target_bytes = 3 * p.total;
    return RCOLL_OK;
}

static rcoll_msg_proto_t proto(const rcoll_args_t *a, const rh_t *p, size_t len)
{
    return rcoll_msg_proto(a, len, 3 * p->total, true);
}

/* Wait for `step` from `peer`, `len` bytes at `slot` of my scratch: where they sit. */
static rcoll_status_t recv_part(rcoll_args_t *a, const rh_t *p, int peer, unsigned step, size_t slot, size_t len,
                                const unsigned char **at)
{
    rcoll_event_t ev = rcoll_ev_signal(peer, a->seq, step);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st != RCOLL_OK)
        return st;
    rcoll_check_len(a, &ev, len);
    const unsigned char *d = rcoll_msg_data(a, peer, proto(a, p, len), slot);
    *at = d ? d : (const unsigned char *)a->tmp + slot;
    return RCOLL_OK;
}

/* An even rank of the pairs: its vector to r + 1, its block back into its receive buffer. */
static rcoll_status_t idle_rank(rcoll_args_t *a, const rh_t *p)
{
    rcoll_status_t st = rcoll_msg_put(a, a->rank + 1, 0, proto(a, p, p->total), a->sendbuf, p->total, 0);
    if (st != RCOLL_OK)
        return st;
    rcoll_event_t ev = rcoll_ev_signal(a->rank + 1, a->seq, (unsigned)p->steps + 1);
    if ((st = rcoll_tl_wait(a->tl, &ev)) != RCOLL_OK)
        return st;
    size_t mine = block_len(p, a->rank);
    rcoll_check_len(a, &ev, mine);
    rcoll_msg_copy_out(a, a->rank + 1, proto(a, p, mine), 0, a->recvbuf, mine);
    return RCOLL_OK;
}

rcoll_status_t rcoll_halving_run(rcoll_args_t *a, const char *coll, bool counts)
{
    rh_t p = plan(a, counts);
    if (p.v < 0)
        return idle_rank(a, &p);
    unsigned char *acc = (unsigned char *)a->tmp + 3 * p.total;
    const unsigned char *cur = a->sendbuf, *in;
    rcoll_status_t st;
    if (a->sendbuf == a->recvbuf) /* the result lands where blocks were sent from */
        cur = memcpy(acc, a->sendbuf, p.total);
    if (a->rank < 2 * p.rem) { /* fold in the even neighbour's vector */
        if ((st = recv_part(a, &p, a->rank - 1, 0, 0, p.total, &in)) != RCOLL_OK ||
            (st = rcoll_fold2(a, in, cur, acc, p.total, coll)) != RCOLL_OK)
            return st;
        cur = acc;
    }
    for (int s = 0; s < p.steps; s++) {
        int mask = p.p2 >> (s + 1), w = p.v ^ mask, lo, hi, wlo, whi;
        size_t slot = step_range(&p, p.v, s, &lo, &hi), wslot = step_range(&p, w, s, &wlo, &whi);
        size_t out_len = range_len(&p, wlo, whi), in_len = range_len(&p, lo, hi), off = range_off(&p, lo);
        if ((st = rcoll_msg_put(a, real_rank(&p, w), (unsigned)s + 1, proto(a, &p, out_len),
                                cur + range_off(&p, wlo), out_len, wslot)) != RCOLL_OK ||
            (st = recv_part(a, &p, real_rank(&p, w), (unsigned)s + 1, slot, in_len, &in)) != RCOLL_OK ||
            (st = rcoll_fold2(a, cur + off, in, acc + off, in_len, coll)) != RCOLL_OK)
            return st;
        cur = acc;
    }
    if (block_len(&p, a->rank)) /* (a receive buffer for no elements may be NULL) */
        memcpy(a->recvbuf, cur + block_off(&p, (size_t)a->rank), block_len(&p, a->rank));
    if (a->rank < 2 * p.rem) { /* the even neighbour's block, into its receive buffer */
        size_t len = block_len(&p, a->rank - 1);
        return rcoll_msg_put(a, a->rank - 1, (unsigned)p.steps + 1, proto(a, &p, len),
                             cur + block_off(&p, (size_t)a->rank - 1), len, 0);
    }
    return RCOLL_OK;
}

const char *rcoll_halving_not_for(const rcoll_args_t *a, bool counts)
{
    if (!rcoll_op_commutative(a->op))
        return "a non-commutative operation (its fold order is a tree's)";
    if (plan(a, counts).total > RCOLL_REDUCE_SCRATCH / 4)
        return "four times the P blocks exceed RCOLL_REDUCE_SCRATCH";
    return NULL;
}
