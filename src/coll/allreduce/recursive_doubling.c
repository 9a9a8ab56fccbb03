/* Allreduce by recursive doubling, on the transport itself (no nested calls).
 * Paper: [thakur05] section 4.4 (MPICH's short-vector allreduce): log2 P2 exchanges of the whole
 * vector, P2 the largest power of two <= P. Where P is not a power of two, the first 2 (P - P2)
 * ranks pair up first: even rank r hands its vector to r + 1 and waits; r + 1 folds the two and
 * takes part as virtual rank r / 2; the others are virtual rank r - (P - P2); at the end r + 1
 * hands the result back to r. A group always holds consecutive ranks, and at each step both
 * partners fold lower group op higher group, so the two compute the same bits from the same
 * operands: the result is identical on every rank and a non-commutative operation is applied in
 * rank order (bracketed as the tree brackets it, not as the flat algorithms' linear fold:
 * RCOLL_REPRODUCIBLE=1 excludes it).
 * Messages: inline in the signal line when tiny, through the receiver's inbox below the
 * zero-copy threshold, else single copy into its scratch (advertised); step s lands in slot s,
 * so a partner running ahead never overwrites what this rank has not folded. A fold never
 * writes a buffer sent from in the same call (a network put's source stays untouched until the
 * rank leaves): each fold has its own output, the last one the receive buffer.
 * Steps: log2 P2 (+2 where P is not a power of two). Bytes per rank: m per step sent and
 * received; m operations per step.
 * When it wins: small vectors across nodes, where the steps are the cost: log2 P messages of m
 * instead of gather_all's P - 1 vectors in (docs/tuning.md, "Reductions"). */
#include "coll/msg.h"
#include "coll/reduce.h"
#include "coll/schedule.h"

typedef struct {
    int p2, rem, rounds;
    int vrank;   /* -1: an even rank of the pairs, idle until the result comes back */
} rd_plan_t;

static rd_plan_t plan(const rcoll_args_t *a)
{
    rd_plan_t p;
    p.p2 = rcoll_pof2_floor(a->size);
    p.rem = a->size - p.p2;
    p.rounds = rcoll_ceil_log2(p.p2);
    if (a->rank < 2 * p.rem)
        p.vrank = a->rank % 2 ? a->rank / 2 : -1;
    else
        p.vrank = a->rank - p.rem;
    return p;
}

static int real_rank(const rd_plan_t *p, int vrank)
{
    return vrank < p->rem ? 2 * vrank + 1 : vrank + p->rem;
}

/* Slots of m bytes in an active rank's scratch: incoming of step s (0: the pair's fold-in,
 * 1..rounds), then the outputs of folds 0..rounds-1, then the in-place copy of the input. */
static size_t slots(const rd_plan_t *p)
{
    return 2 * (size_t)p->rounds + 2;
}

/* The protocol of every message of the call (alike on every rank: the vector's size). */
static rcoll_msg_proto_t proto(const rcoll_args_t *a, const rd_plan_t *p)
{
    return rcoll_msg_proto(a, a->bytes, ((size_t)p->rounds + 2) * a->bytes, true);
}

static rcoll_status_t prepare(rcoll_args_t *a)
{
    rd_plan_t p = plan(a);
    if (p.vrank < 0) /* receives the result only: straight into its receive buffer */
        return RCOLL_OK;
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, slots(&p) * a->bytes, "allreduce");
    if (!a->tmp)
        return RCOLL_ERR_NOMEM;
    a->target = a->tmp;
    a->target_bytes = slots(&p) * a->bytes;
    return RCOLL_OK;
}

/* Send `src` to `peer` as step `step` into its slot `slot`. */
static rcoll_status_t send(rcoll_args_t *a, rcoll_msg_proto_t pr, int peer, unsigned step, size_t slot,
                           const void *src)
{
    return rcoll_msg_put(a, peer, step, pr, src, a->bytes, slot * a->bytes);
}

/* Wait for step `step` from `peer`; where its vector sits (slot `slot`). */
static rcoll_status_t recv(rcoll_args_t *a, rcoll_msg_proto_t pr, int peer, unsigned step, size_t slot,
                           const unsigned char **at)
{
    rcoll_event_t ev = rcoll_ev_signal(peer, a->seq, step);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st != RCOLL_OK)
        return st;
    rcoll_check_len(a, &ev, a->bytes);
    const unsigned char *d = rcoll_msg_data(a, peer, pr, slot * a->bytes);
    *at = d ? d : (const unsigned char *)a->target + slot * a->bytes;
    return RCOLL_OK;
}

/* An even rank of the pairs: its vector to r + 1, the result back into its receive buffer. */
static rcoll_status_t idle_rank(rcoll_args_t *a, const rd_plan_t *p, rcoll_msg_proto_t pr)
{
    rcoll_status_t st = send(a, pr, a->rank + 1, 0, 0, a->sendbuf);
    if (st != RCOLL_OK)
        return st;
    rcoll_event_t ev = rcoll_ev_signal(a->rank + 1, a->seq, (unsigned)p->rounds + 1);
    st = rcoll_tl_wait(a->tl, &ev);
    if (st != RCOLL_OK)
        return st;
    rcoll_check_len(a, &ev, a->bytes);
    rcoll_msg_copy_out(a, a->rank + 1, pr, 0, a->recvbuf, a->bytes);
    return RCOLL_OK;
}

static rcoll_status_t allreduce_rd(rcoll_args_t *a)
{
    rd_plan_t p = plan(a);
    rcoll_msg_proto_t pr = proto(a, &p);
    if (p.vrank < 0)
        return idle_rank(a, &p, pr);
    unsigned char *tmp = a->tmp;
    size_t m = a->bytes, out_slot = (size_t)p.rounds + 1;
    const void *cur = a->sendbuf;
    const unsigned char *in;
    rcoll_status_t st = RCOLL_OK;
    if (a->sendbuf == a->recvbuf && p.rounds > 0) { /* the last fold writes what was sent */
        cur = memcpy(tmp + (slots(&p) - 1) * m, a->sendbuf, m);
    }
    if (a->rank < 2 * p.rem) { /* fold in the even neighbour's vector: it is the lower */
        if ((st = recv(a, pr, a->rank - 1, 0, 0, &in)) != RCOLL_OK)
            return st;
        void *out = p.rounds ? (void *)(tmp + out_slot * m) : a->recvbuf;
        if ((st = rcoll_fold2(a, in, cur, out, a->bytes, "allreduce")) != RCOLL_OK)
            return st;
        cur = out;
    }
    for (int k = 0; k < p.rounds; k++) {
        int vpartner = rcoll_rd_partner(p.vrank, k), partner = real_rank(&p, vpartner);
        unsigned step = (unsigned)k + 1;
        if ((st = send(a, pr, partner, step, step, cur)) != RCOLL_OK ||
            (st = recv(a, pr, partner, step, step, &in)) != RCOLL_OK)
            return st;
        void *out = k == p.rounds - 1 ? a->recvbuf : (void *)(tmp + (out_slot + (size_t)k + 1) * m);
        bool below = vpartner > p.vrank; /* this rank's group is the lower */
        st = rcoll_fold2(a, below ? cur : in, below ? in : cur, out, a->bytes, "allreduce");
        if (st != RCOLL_OK)
            return st;
        cur = out;
    }
    if (cur != a->recvbuf) /* one rank: its own vector */
        memmove(a->recvbuf, cur, m);
    if (a->rank < 2 * p.rem) /* the result back to the even neighbour, into its receive buffer */
        st = send(a, pr, a->rank - 1, (unsigned)p.rounds + 1, 0, a->recvbuf);
    return st;
}

static const char *not_for(const rcoll_args_t *a)
{
    rd_plan_t p = plan(a);
    if (slots(&p) * a->bytes > RCOLL_REDUCE_SCRATCH)
        return "the vector times 2 log2 P + 2 exceeds RCOLL_REDUCE_SCRATCH";
    return NULL;
}

const rcoll_algo_t rcoll_allreduce_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "[thakur05] log2 P exchanges of the whole vector, each partner folds lower op "
               "higher (the same bits on both)",
    .run = allreduce_rd,
    .prepare = prepare,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_allreduce_gather_all, /* its range's other choice under RCOLL_REPRODUCIBLE=1 */
    .limits = "vectors up to RCOLL_REDUCE_SCRATCH / (2 log2 P + 2); not with RCOLL_REPRODUCIBLE=1",
};
