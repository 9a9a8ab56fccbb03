/* Alltoall by Bruck's index algorithm, k-port.
 * Paper: [qian-phd] (Qian), section 3.4.4 (Bruck alltoall personalized exchange for k-port
 * modeling, figure 3.7); Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for
 * all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11), 1997 (the
 * index algorithm with radix r = k+1; k = RCOLL_KPORT, default 2, so radix 3; RCOLL_KPORT=1 is
 * the classic radix 2).
 * Steps: ceil(log_r N), each with up to k transfers in flight. Index i (0..N-1) of rank p starts
 * as p's block for (p+i) mod N (phase 1 of the paper, a local rotation). At step j, for each
 * digit value d = 1..r-1, rank p sends every index whose base-r digit j is d to
 * (p + d r^j) mod N, which stores them under the same indices, and receives those indices from
 * (p - d r^j) mod N. Afterwards index i holds the block of (p-i) mod N. Index i is kept all
 * along at block (p-i) mod N of the receive buffer, so the final inverse rotation (phase 3)
 * costs nothing, and an index still holding original data (digits below j all zero) is read
 * straight from sendbuf (no phase-1 copy). Messages: inline when they fit the signal's line,
 * else through a region of the receiver's inbox per transfer (blocks below
 * RCOLL_ZCOPY_THRESHOLD, when all steps fit the inbox); otherwise single copy: the receiver
 * copies the indices it will be sent over to local staging, signals its sender "ready", and the
 * sender writes straight into its receive buffer.
 * Bytes on the wire per rank: about N (r-1)/r ceil(log_r N) m in (r-1) ceil(log_r N) messages
 * (blocks are forwarded: more bytes than direct, far fewer messages); k = 1 gives the fewest
 * bytes, larger k fewer steps.
 * When it wins: tiny and small blocks on larger teams, where the N-1 per-message costs of
 * direct dominate; never for large blocks (log_r(N) (r-1)/r times the bytes, plus staging). */
#include <string.h>

#include "coll/alltoall/slots.h"
#include "coll/schedule.h"

/* Digit j of i in base r, given weight = r^j. */
static int digit(int i, int weight, int r)
{
    return (i / weight) % r;
}

/* Indices 1..n-1 whose digit j (weight r^j) is d, and those of them that no longer hold
 * original data (a lower digit is not zero). */
static int digit_count(int n, int weight, int r, int d, int *forwarded)
{
    int count = 0, fw = 0;
    for (int i = 1; i < n; i++) {
        if (digit(i, weight, r) != d)
            continue;
        count++;
        fw += (i % weight) != 0;
    }
    if (forwarded)
        *forwarded = fw;
    return count;
}

typedef struct {
    int radix, steps;
    bool zcopy;
    size_t staging_bytes;
} bruck_shape_t;

static bruck_shape_t bruck_shape(const rcoll_args_t *a)
{
    bruck_shape_t s = {0, 0, false, 0};
    s.radix = rcoll_kport_radix(a->team->ctx->cfg.kport, a->size);
    s.steps = rcoll_ceil_log(a->size, s.radix);
    size_t need = 0;
    int most = 0;
    for (int j = 0, weight = 1; j < s.steps; j++, weight *= s.radix) {
        int step_fw = 0;
        for (int d = 1; d < s.radix; d++) {
            int fw, n = digit_count(a->size, weight, s.radix, d, &fw);
            need += (size_t)n * a->bytes;
            step_fw += fw;
        }
        most = step_fw > most ? step_fw : most;
    }
    s.zcopy = a2a_steps_zcopy(a, need);
    if (s.zcopy)
        s.staging_bytes = (size_t)most * a->bytes;
    return s;
}

/* The plan of the transfer for digit d at step j (destination p + d r^j, source p - d r^j);
 * `plan` has room for 3 N ints. */
static void plan_transfer(const rcoll_args_t *a, int weight, int r, int d, int *plan, a2a_xfer_t *x)
{
    int n = a->size, p = a->rank, dist = d * weight;
    memset(x, 0, sizeof *x);
    x->local = plan;
    x->initial = plan + n;
    x->remote = plan + 2 * n;
    x->to = (p + dist) % n;
    x->from = (p - dist + n) % n;
    for (int i = 1; i < n; i++) {
        if (digit(i, weight, r) != d)
            continue;
        x->local[x->n] = (p - i + n) % n;
        x->initial[x->n] = (i % weight) ? -1 : (p + i) % n;
        x->remote[x->n] = (x->to - i + n) % n;
        x->n++;
    }
}

/* The plan buffer: up to r-1 transfer records, then 3 N block indices for each. */
static size_t plan_bytes(const rcoll_args_t *a, int radix)
{
    return (size_t)(radix - 1) * (sizeof(a2a_xfer_t) + 3 * (size_t)a->size * sizeof(int));
}

static rcoll_status_t bruck_prepare(rcoll_args_t *a)
{
    bruck_shape_t s = bruck_shape(a);
    if (!rcoll_team_tmp(a->team, RCOLL_TMP_ALGO2, plan_bytes(a, s.radix)))
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM, "alltoall bruck: no memory for the plan");
    a->tmp = s.staging_bytes ? rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, s.staging_bytes) : NULL;
    if (s.staging_bytes && !a->tmp)
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM,
                                "alltoall bruck: no memory for %zu bytes of staging", s.staging_bytes);
    return RCOLL_OK;
}

static rcoll_status_t alltoall_bruck(rcoll_args_t *a)
{
    bruck_shape_t s = bruck_shape(a);
    /* The records first (the buffer is malloc-aligned), then their block lists. */
    a2a_xfer_t *x = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO2, plan_bytes(a, s.radix));
    int *plan = (int *)(void *)(x + s.radix - 1);
    size_t off = 0;
    for (int j = 0, weight = 1; j < s.steps; j++, weight *= s.radix) {
        int nx = 0;
        for (int d = 1; d < s.radix; d++) {
            plan_transfer(a, weight, s.radix, d, plan + (size_t)(d - 1) * 3 * (size_t)a->size, &x[nx]);
            if (!x[nx].n)
                continue; /* d r^j beyond the team: nothing has that digit */
            x[nx].send_off = x[nx].recv_off = off;
            off += (size_t)x[nx].n * a->bytes;
            nx++;
        }
        rcoll_status_t st = a2a_step(a, (unsigned)j, x, nx, s.zcopy, a->tmp);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* Cost model: ceil(log2 P) rounds (k = 1) of about P/2 blocks to the rank 2^i away, packing
 * and the final rotation copied locally. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes, half = (in->P + 1) / 2 * m, t = 2 * rcoll_cost_copy(in, in->P * m);
    for (int d = 1; d < in->P; d *= 2)
        t += rcoll_cost_round(in, d, false, half) + rcoll_cost_copy(in, half);
    return t;
}

const rcoll_algo_t rcoll_alltoall_bruck = {
    .name = "bruck",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "Bruck et al. 1997 index algorithm, k-port [qian-phd]: ceil(log_{k+1} N) steps of k "
        "transfers to p+d(k+1)^j, blocks kept in recvbuf",
    .run = alltoall_bruck,
    .prepare = bruck_prepare,
    .cost = cost,
};
