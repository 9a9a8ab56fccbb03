/* Reduce_scatter_block by recursive halving, on the transport itself.
 * Paper: [thakur05] section 4.2 (MPICH's reduce-scatter for commutative operations): log2 P2
 * steps, P2 the largest power of two <= P. At each step a rank keeps half of the blocks it is
 * still responsible for, sends the other half to its partner (distance halving: P2/2 first) and
 * folds the partner's copy of the half it keeps. Where P is not a power of two, the first
 * 2 (P - P2) ranks pair up first: even rank r hands its whole vector to r + 1 and waits for its
 * block; r + 1 folds the two and takes part responsible for blocks r and r + 1.
 * Messages: inline when tiny, through the receiver's inbox below the zero-copy threshold, else
 * single copy into its scratch, each step at its own place (a partner running ahead never
 * overwrites what this rank has not folded); a rank folds into its own accumulator only the
 * half it keeps, never what it sent (a network put's source stays untouched until it leaves).
 * Steps: log2 P2 (+2 where P is not a power of two). Bytes per rank: about (P-1)/P of the P
 * blocks sent and received, and as many operations (direct: the same bytes, all P-1 at once).
 * Fold order: a tree's: a commutative operation only, and RCOLL_REPRODUCIBLE=1 excludes it.
 * When it wins: teams across nodes, small and medium blocks, where direct's P-1 messages per
 * rank at once are the cost (docs/tuning.md, "Reductions"). */
#include "coll/msg.h"
#include "coll/reduce.h"
#include "coll/schedule.h"

#include <string.h>

typedef struct {
    int p2, rem, steps;
    int v;        /* my new rank, -1: an even rank of the pairs */
    size_t block; /* bytes of one block */
    size_t total; /* P blocks */
} rh_t;

static rh_t plan(const rcoll_args_t *a)
{
    rh_t p;
    p.p2 = rcoll_pof2_floor(a->size);
    p.rem = a->size - p.p2;
    p.steps = rcoll_ceil_log2(p.p2);
    p.v = a->rank < 2 * p.rem ? (a->rank % 2 ? a->rank / 2 : -1) : a->rank - p.rem;
    p.block = a->bytes;
    p.total = (size_t)a->size * a->bytes;
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
    return first_block(p, lo) * p->block;
}
static size_t range_len(const rh_t *p, int lo, int hi)
{
    return (first_block(p, hi) - first_block(p, lo)) * p->block;
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
static rcoll_status_t prepare(rcoll_args_t *a)
{
    rh_t p = plan(a);
    if (p.v < 0) /* receives its block only: straight into its receive buffer */
        return RCOLL_OK;
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, 4 * p.total, "reduce_scatter_block");
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
    rcoll_check_len(a, &ev, p->block);
    rcoll_msg_copy_out(a, a->rank + 1, proto(a, p, p->block), 0, a->recvbuf, p->block);
    return RCOLL_OK;
}

static rcoll_status_t rsb_rh(rcoll_args_t *a)
{
    rh_t p = plan(a);
    if (p.v < 0)
        return idle_rank(a, &p);
    unsigned char *acc = (unsigned char *)a->tmp + 3 * p.total;
    const unsigned char *cur = a->sendbuf, *in;
    rcoll_status_t st;
    if (a->sendbuf == a->recvbuf) /* the result lands where blocks were sent from */
        cur = memcpy(acc, a->sendbuf, p.total);
    if (a->rank < 2 * p.rem) { /* fold in the even neighbour's vector */
        if ((st = recv_part(a, &p, a->rank - 1, 0, 0, p.total, &in)) != RCOLL_OK ||
            (st = rcoll_fold2(a, in, cur, acc, p.total, "reduce_scatter_block")) != RCOLL_OK)
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
            (st = rcoll_fold2(a, cur + off, in, acc + off, in_len, "reduce_scatter_block")) != RCOLL_OK)
            return st;
        cur = acc;
    }
    memcpy(a->recvbuf, cur + (size_t)a->rank * p.block, p.block);
    if (a->rank < 2 * p.rem) /* the even neighbour's block, into its receive buffer */
        return rcoll_msg_put(a, a->rank - 1, (unsigned)p.steps + 1, proto(a, &p, p.block),
                             cur + (size_t)(a->rank - 1) * p.block, p.block, 0);
    return RCOLL_OK;
}

static const char *not_for(const rcoll_args_t *a)
{
    if (!rcoll_op_commutative(a->op))
        return "a non-commutative operation (its fold order is a tree's)";
    if (4 * (size_t)a->size * a->bytes > RCOLL_REDUCE_SCRATCH)
        return "four times the P blocks exceed RCOLL_REDUCE_SCRATCH";
    return NULL;
}

const rcoll_algo_t rcoll_reduce_scatter_block_recursive_halving = {
    .name = "recursive_halving",
    .coll = RCOLL_COLL_REDUCE_SCATTER_BLOCK,
    .summary = "[thakur05] log2 P steps, each sending half of the blocks still held to the partner "
               "and folding the half kept",
    .run = rsb_rh,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_reduce_scatter_block_direct,
    .limits = "commutative operations; P blocks up to RCOLL_REDUCE_SCRATCH / 4; not with "
              "RCOLL_REPRODUCIBLE=1",
};
