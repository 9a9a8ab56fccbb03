/* Allgather by Bruck's algorithm (concatenation by dissemination), k-port.
 * Paper: seed 001 (Qian), section 3.4 (k-port Bruck allgather over RDMA); Bruck et al. 1997.
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
#include "coll/sweep.h"

typedef struct {
    unsigned step;
    int weight;
} bruck_step_t;

static int radix_of(const rcoll_args_t *a)
{
    int k = a->team->ctx->cfg.kport > 0 ? a->team->ctx->cfg.kport : 1;
    return k + 1 < a->size ? k + 1 : a->size;
}

static ag_ranges_t incoming(const rcoll_args_t *a, int weight, int d)
{
    int dist = d * weight, count = weight < a->size - dist ? weight : a->size - dist;
    return ag_ring_ranges((a->rank + dist) % a->size, count, a->size);
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
        int dist = d * b->weight, n = b->weight < a->size - dist ? b->weight : a->size - dist;
        ag_ranges_t out = ag_ring_ranges(a->rank, n, a->size);
        rcoll_status_t st = ag_send(a, (a->rank - dist + a->size) % a->size, b->step, &out, 1);
        if (st != RCOLL_OK)
            return st;
        pending[count++] = d;
    }
    return rcoll_sweep(a, pending, count, take, awaited, b);
}

static rcoll_status_t allgather_bruck(rcoll_args_t *a)
{
    int r = radix_of(a);
    bruck_step_t b = {0, 1};
    for (; b.weight < a->size; b.step++, b.weight *= r) {
        rcoll_status_t st = bruck_step(a, r, &b);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_allgather_bruck = {
    "bruck", RCOLL_COLL_ALLGATHER,
    "seed 001 k-port Bruck: ceil(log_{k+1} P) steps of k transfers to p-d(k+1)^j, blocks kept in "
    "place", allgather_bruck, NULL};
