/* Alltoall by Bruck's index algorithm.
 * Paper: seed 001 (Qian), section 3.4.4 (Bruck alltoall personalized exchange, figure 3.7);
 * Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all communications in
 * multiport message-passing systems", IEEE TPDS 8(11), 1997 (the index algorithm, radix 2).
 * Steps: ceil(log2 N). Index i (0..N-1) of rank p starts as p's block for (p+i) mod N (phase 1
 * of the paper, a local rotation). At step k rank p sends every index with bit k set to
 * (p + 2^k) mod N, which stores them under the same indices, and receives those indices from
 * (p - 2^k) mod N. Afterwards index i holds the block of (p-i) mod N. Index i is kept all along
 * at block (p-i) mod N of the receive buffer, so the final inverse rotation (phase 3) costs
 * nothing, and an index still holding original data is read straight from sendbuf (no phase-1
 * copy). Messages: inline when they fit the signal's line, else through a region of the
 * receiver's inbox per step (blocks below RCOLL_ZCOPY_THRESHOLD, when all steps fit the inbox);
 * otherwise single copy: the receiver copies the indices it will be sent over to local staging,
 * signals its sender "ready", and the sender writes straight into its receive buffer.
 * Bytes on the wire per rank: about (N/2) * ceil(log2 N) * m in ceil(log2 N) messages (blocks
 * are forwarded: more bytes than direct, far fewer messages).
 * When it wins: tiny and small blocks on larger teams, where the N-1 per-message costs of
 * direct dominate; never for large blocks (log2(N)/2 times the bytes, plus staging). */
#include "coll/alltoall/slots.h"
#include "coll/schedule.h"

/* Indices 1..n-1 with bit k set, and those of them that no longer hold original data. */
static int bit_count(int n, int k, int *forwarded)
{
    int count = 0, fw = 0;
    for (int i = 1; i < n; i++) {
        if (!((i >> k) & 1))
            continue;
        count++;
        fw += (i & ((1 << k) - 1)) != 0;
    }
    if (forwarded)
        *forwarded = fw;
    return count;
}

typedef struct {
    bool zcopy;
    size_t staging_bytes;
} bruck_shape_t;

static bruck_shape_t bruck_shape(const rcoll_args_t *a)
{
    size_t need = 0;
    int most = 0;
    for (int k = 0; k < rcoll_ceil_log2(a->size); k++) {
        int fw, n = bit_count(a->size, k, &fw);
        need += (size_t)n * a->bytes;
        most = fw > most ? fw : most;
    }
    bruck_shape_t s = {a2a_steps_zcopy(a, need), 0};
    if (s.zcopy)
        s.staging_bytes = (size_t)most * a->bytes;
    return s;
}

/* The plan of step k (destinations p+2^k, sources p-2^k). */
static void plan_step(const rcoll_args_t *a, int k, a2a_xfer_t *x)
{
    int n = a->size, p = a->rank, dist = 1 << k;
    x->to = (p + dist) % n;
    x->from = (p - dist + n) % n;
    x->n = 0;
    for (int i = 1; i < n; i++) {
        if (!((i >> k) & 1))
            continue;
        x->local[x->n] = (p - i + n) % n;
        x->initial[x->n] = (i & (dist - 1)) ? -1 : (p + i) % n;
        x->remote[x->n] = (x->to - i + n) % n;
        x->n++;
    }
}

static rcoll_status_t bruck_prepare(rcoll_args_t *a)
{
    bruck_shape_t s = bruck_shape(a);
    if (!rcoll_team_tmp(a->team, RCOLL_TMP_ALGO2, 3 * (size_t)a->size * sizeof(int)))
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
    int *plan = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO2, 3 * (size_t)a->size * sizeof(int));
    a2a_xfer_t x = {0};
    x.local = plan;
    x.initial = plan + a->size;
    x.remote = plan + 2 * a->size;
    size_t off = 0;
    for (int k = 0; k < rcoll_ceil_log2(a->size); k++) {
        plan_step(a, k, &x);
        x.send_off = x.recv_off = off;
        off += (size_t)x.n * a->bytes;
        rcoll_status_t st = a2a_step(a, (unsigned)k, &x, 1, s.zcopy, a->tmp);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_alltoall_bruck = {
    "bruck", RCOLL_COLL_ALLTOALL,
    "Bruck et al. 1997 index algorithm: ceil(log2 N) steps to p+2^k, blocks kept in recvbuf",
    alltoall_bruck, bruck_prepare};
