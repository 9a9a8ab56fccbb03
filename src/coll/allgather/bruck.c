/* Allgather by Bruck's algorithm (concatenation by dissemination), k-port.
 * Paper: [qian-phd] (Qian), section 3.4 (k-port Bruck allgather over RDMA); Bruck et al. 1997.
 * Radix r = k+1 (RCOLL_KPORT, default 2: radix 3; 1: the classic radix 2).
 * Steps: ceil(log_r P). Before step j (weight w = r^j) rank p holds blocks p .. p+w-1 (mod P);
 * for each d = 1..r-1 with d w < P it sends min(w, P - d w) of them, from block p on, to
 * (p - d w) mod P and receives as many, from block p + d w on, from (p + d w) mod P: up to k
 * transfers in flight per step, received in the order they come. Blocks keep their final place
 * in the receive buffer (and the mirrored inbox), so the usual final rotation is not needed.
 * Bytes on the wire per rank: (P-1) * m in about (r-1) ceil(log_r P) messages of up to two
 * ranges.
 * When it wins: small messages on teams that are not a power of two (log steps, no folding);
 * larger k trades messages for steps. */
#include "coll/allgather/blocks.h"
#include "coll/schedule.h"
#include "coll/sweep.h"

typedef struct {
    unsigned step;
    int weight;
} bruck_step_t;

/* Blocks of the transfer at distance d w: w, or what is left of the team. */
static int step_count(const rcoll_args_t *a, int weight, int d)
{
    int dist = d * weight;
    return weight < a->size - dist ? weight : a->size - dist;
}

static ag_ranges_t incoming(const rcoll_args_t *a, int weight, int d)
{
    return ag_ring_ranges((a->rank + d * weight) % a->size, step_count(a, weight, d), a->size);
}

/* Item d: the transfer from rank + d w, if its signal is there. */
static int take(rcoll_args_t *a, void *ctx, int d)
{
    const bruck_step_t *b = ctx;
    int from = (a->rank + d * b->weight) % a->size;
    rcoll_event_t ev = rcoll_ev_signal(from, a->seq, b->step);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    ag_ranges_t in = incoming(a, b->weight, d);
    ag_finish_recv(a, from, &in, 1);
    return 1;
}

static rcoll_event_t awaited(rcoll_args_t *a, void *ctx, int d)
{
    const bruck_step_t *b = ctx;
    return rcoll_ev_signal((a->rank + d * b->weight) % a->size, a->seq, b->step);
}

static rcoll_status_t bruck_step(rcoll_args_t *a, int r, bruck_step_t *b)
{
    int *pending = a->team->scratch, count = 0;
    for (int d = 1; d < r && d * b->weight < a->size; d++) {
        int to = (a->rank - d * b->weight + a->size) % a->size;
        ag_ranges_t out = ag_ring_ranges(a->rank, step_count(a, b->weight, d), a->size);
        rcoll_status_t st = ag_send(a, to, b->step, &out, 1);
        if (st != RCOLL_OK)
            return st;
        pending[count++] = d;
    }
    return rcoll_sweep(a, pending, count, take, awaited, b);
}

static rcoll_status_t allgather_bruck(rcoll_args_t *a)
{
    int r = rcoll_kport_radix(a->team->ctx->cfg.kport, a->size);
    bruck_step_t b = {0, 1};
    for (; b.weight < a->size; b.step++, b.weight *= r) {
        rcoll_status_t st = bruck_step(a, r, &b);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* Cost model: ceil(log2 P) rounds (k = 1) to the rank 2^i away, min(2^i, P - 2^i) blocks each,
 * then the rotation of the result. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes, t = rcoll_cost_copy(in, in->P * m);
    for (int d = 1; d < in->P; d *= 2)
        t += rcoll_cost_round(in, d, false, (d < in->P - d ? d : in->P - d) * m);
    return t;
}

const rcoll_algo_t rcoll_allgather_bruck = {
    .name = "bruck",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] k-port Bruck: ceil(log_{k+1} P) steps of k transfers to p-d(k+1)^j, blocks kept in "
        "place",
    .run = allgather_bruck,
    .cost = cost,
};
