/* Alltoall by k-port Standard Exchange, with the ranks beyond the largest power of the radix
 * exchanging directly.
 * Paper: [qian-phd] (Qian), section 3.4.4 (Standard Exchange alltoall personalized exchange, the
 * grouping of figure 3.5); Bokhari / Bruck et al. 1997 for the store-and-forward exchange.
 * Radix r = k+1 (RCOLL_KPORT, default 2), lowered when a smaller radix covers more ranks: r in
 * 2..k+1 maximizing P' = r^L <= N (ties: the larger r, fewer steps).
 * Steps: L, on the P' "main" ranks 0..P'-1. Position y (0..P'-1) of rank p's receive buffer
 * starts as p's block for y. At step j rank p exchanges with the r-1 ranks w that differ from
 * it only in base-r digit j: it sends w every position whose digit j equals w's (P'/r blocks)
 * and stores what w sends at the same positions (w's digit j replaced by p's). After step j,
 * position y holds the block from (y's digits 0..j, p's digits above) to (p's digits 0..j, y's
 * above); after step L-1 position y holds the block from y, in place. A position still holding
 * original data is read from sendbuf. Messages: inline when they fit the signal's line, else
 * through a region of the receiver's inbox per (step, sender digit) (blocks below
 * RCOLL_ZCOPY_THRESHOLD, when everything fits), else single copy after a "ready" signal from
 * the receiver (which first copies the positions it will be sent over to local staging).
 * Correction for N not a power of r: the N-P' extra ranks take no part in the steps; every
 * block from or to an extra rank goes directly, one message per pair as in direct (main ranks
 * post their writes to the extras before the steps and collect the extras' blocks after).
 * Bytes on the wire per main rank: L*(r-1)/r * P' * m in L*(r-1) messages, + (N-P') * m each
 * way with the extras; an extra rank: (N-1) * m in N-1 messages.
 * When it wins: small blocks on teams that are a power of r (log steps, k partners per step);
 * it loses to bruck when N is just above a power (the extras pay N-1 messages). */
#include "coll/alltoall/slots.h"

typedef struct {
    int radix, power, levels; /* r, P' = r^L, L */
    bool zcopy;
    size_t direct_bytes;      /* inbox bytes kept for the extras' one-block messages */
} se_shape_t;

static se_shape_t se_shape(const rcoll_args_t *a)
{
    se_shape_t s = {2, 1, 0, false, 0};
    int kport = a->team->ctx->cfg.kport;
    for (int r = 2; r <= kport + 1 && r <= a->size; r++) {
        int p = 1, l = 0;
        while (p <= a->size / r) {
            p *= r;
            l++;
        }
        if (p >= s.power) {
            s.radix = r;
            s.power = p;
            s.levels = l;
        }
    }
    size_t step_bytes = (size_t)(s.radix - 1) * (size_t)(s.power / s.radix) * a->bytes;
    s.direct_bytes = s.power < a->size ? (size_t)a->size * a->bytes : 0;
    s.zcopy = a2a_steps_zcopy(a, s.direct_bytes + (size_t)s.levels * step_bytes);
    return s;
}

/* Index of digit `sender` among the r-1 digits other than `receiver`. */
static int digit_slot(int sender, int receiver)
{
    return sender < receiver ? sender : sender - 1;
}

/* Plan of step j for the partner whose digit j is t. */
static void plan_partner(const rcoll_args_t *a, const se_shape_t *s, int j, int t, a2a_xfer_t *x)
{
    int r = s->radix, p = a->rank, rj = 1, nb = s->power / r;
    for (int i = 0; i < j; i++)
        rj *= r;
    int pd = (p / rj) % r, low = p % rj;
    x->to = x->from = p + (t - pd) * rj;
    x->n = nb;
    int b = 0;
    for (int hi = 0; hi < s->power; hi += rj * r)
        for (int lo = 0; lo < rj; lo++, b++) {
            int y = hi + t * rj + lo;
            x->local[b] = y;
            x->initial[b] = lo == low ? y : -1;
            x->remote[b] = y + (pd - t) * rj;
        }
    size_t msg = (size_t)nb * a->bytes;
    size_t region = s->direct_bytes + (size_t)j * (size_t)(r - 1) * msg;
    x->send_off = region + (size_t)digit_slot(pd, t) * msg;
    x->recv_off = region + (size_t)digit_slot(t, pd) * msg;
}

/* The transfers of step j: one per other digit value. */
static int plan_step(const rcoll_args_t *a, const se_shape_t *s, int j, a2a_xfer_t *x, int *ints)
{
    int r = s->radix, rj = 1, nb = s->power / r, nx = 0;
    for (int i = 0; i < j; i++)
        rj *= r;
    int pd = (a->rank / rj) % r;
    for (int t = 0; t < r; t++) {
        if (t == pd)
            continue;
        x[nx].local = ints + 3 * nx * nb;
        x[nx].initial = x[nx].local + nb;
        x[nx].remote = x[nx].initial + nb;
        plan_partner(a, s, j, t, &x[nx]);
        nx++;
    }
    return nx;
}

static size_t plan_bytes(const se_shape_t *s)
{
    return (size_t)(s->radix - 1) * sizeof(a2a_xfer_t) + 3 * (size_t)s->power * sizeof(int);
}

static rcoll_status_t se_prepare(rcoll_args_t *a)
{
    se_shape_t s = se_shape(a);
    if (!rcoll_team_tmp(a->team, RCOLL_TMP_ALGO2, plan_bytes(&s)))
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM, "alltoall standard_exchange: no memory");
    size_t staging = s.zcopy && a->rank < s.power
                         ? (size_t)(s.radix - 1) * (size_t)(s.power / s.radix) * a->bytes : 0;
    a->tmp = staging ? rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, staging) : NULL;
    if (staging && !a->tmp)
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM,
                                "alltoall standard_exchange: no memory for %zu bytes of staging",
                                staging);
    return RCOLL_OK;
}

/* The pairs with an extra rank: all of an extra's, a main rank's with the extras. */
static void mark_direct(a2a_sweep_t *sw, const rcoll_args_t *a, int power)
{
    int n = a->size, p = a->rank;
    for (int d = 1; d < n; d++) {
        sw->out[d] = p >= power || (p + d) % n >= power;
        sw->in[d] = p >= power || (p - d + n) % n >= power;
    }
}

static rcoll_status_t alltoall_standard_exchange(rcoll_args_t *a)
{
    se_shape_t s = se_shape(a);
    rcoll_msg_proto_t proto = a->bytes <= RCOLL_INLINE_MAX ? RCOLL_MSG_INLINE : s.zcopy ? RCOLL_MSG_ZCOPY : RCOLL_MSG_COPY;
    a2a_sweep_t sw;
    a2a_sweep_init(&sw, a, 0, proto);
    mark_direct(&sw, a, s.power);
    a2a_sweep_start(&sw);
    if (a->rank < s.power) {
        a2a_xfer_t *x = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO2, plan_bytes(&s));
        int *ints = (int *)(void *)(x + (s.radix - 1));
        rcoll_event_t unused;
        if (sw.out_left + sw.in_left > 0) { /* post the writes to the extras that can go now */
            int st = a2a_sweep_pass(&sw, &unused);
            if (st < 0)
                return (rcoll_status_t)st;
        }
        for (int j = 0; j < s.levels; j++) {
            int nx = plan_step(a, &s, j, x, ints);
            rcoll_status_t st = a2a_step(a, (unsigned)j, x, nx, s.zcopy, a->tmp);
            if (st != RCOLL_OK)
                return st;
        }
    }
    return a2a_sweep_run(&sw);
}

/* Cost model: the radix and levels as se_shape picks them; at step j every main rank sends r-1
 * messages of P'/r blocks to the ranks r^j apart (on its node while r^(j+1) <= L, the ranks of
 * a node being consecutive) and copies what it received; the extra ranks' blocks go directly. */
static double cost(const rcoll_cost_in_t *in)
{
    int radix = 2, power = 1;
    for (int r = 2; r <= in->cfg->kport + 1 && r <= in->P; r++) {
        int p = 1;
        while (p <= in->P / r)
            p *= r;
        if (p >= power) {
            radix = r;
            power = p;
        }
    }
    double m = (double)in->bytes, part = (double)(power / radix) * m, t = 0;
    for (long d = 1; d < power; d *= radix) {
        bool local = in->N == 1 || d * radix <= in->L;
        t += local ? rcoll_cost_step(&in->m->shm, radix - 1, part)
                   : rcoll_cost_step(&in->m->net, (double)(radix - 1) * in->L * in->H, part);
        t += rcoll_cost_copy(in, (radix - 1) * part);
    }
    if (power < in->P)
        t += rcoll_cost_fan(in, in->P - power, 0, m);
    return t;
}

const rcoll_algo_t rcoll_alltoall_standard_exchange = {
    .name = "standard_exchange",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd]: k-port exchange by base-(k+1) digit, log steps; extra ranks go direct",
    .run = alltoall_standard_exchange,
    .prepare = se_prepare,
    .cost = cost,
};
