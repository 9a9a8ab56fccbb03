/* Bcast by scatter, then ring allgather (van de Geijn; MPICH's scatter_ring_allgather).
 * Paper: [qian-phd] (Qian), section 3.4: the Direct scatter (3.4.1, the root writes each rank its
 * piece) followed by the ring allgather of [sur-hipc05], section 4.3 (every rank writes straight
 * into its right neighbour's buffer, advertised once on arrival).
 * Steps: the message is cut into P pieces of ceil(m/P) bytes rounded up to a cache line (the
 * last ones shorter, empty for tiny messages; empty pieces are neither sent nor waited for).
 * Ranks are numbered relative to the root (v = (r - root) mod P), piece v belongs to v.
 * 1. scatter: the root writes piece v into rank v's buffer at its place (step 0), to ranks in
 *    the order they arrive;
 * 2. ring: at step j = 0..P-2 rank v writes piece (v - j) mod P to v+1 and receives piece
 *    (v - j - 1) mod P from v-1 (signal j+1). The root holds every piece from the start, so its
 *    ring writes to rank 1 wait for nothing, and rank P-1 writes nothing to the root. A rank
 *    receives whenever data is there and writes whenever its right neighbour can take it (a
 *    piece is written on as soon as it has come in).
 * Pieces below the zero-copy threshold go through the receiver's inbox (at the piece's offset:
 * the inbox mirrors the buffer), larger ones by one copy into the receiver's buffer. Never
 * inline: a sender writes several pieces to the same receiver.
 * Bytes on the wire per rank: the root sends (P-1)/P * m in the scatter and (P-1)/P * m to rank
 * 1; every other rank receives m and sends (P-2)/P * m (rank P-1: nothing). 2(P-1) messages on
 * the critical path, but no rank sends more than about 2m (a tree's root sends log_k P * m).
 * When it wins: large messages (bandwidth-bound, copying spread over all ranks and cores). */
#include "coll/bcast/tree.h"

/* The root: scatter to whoever has arrived; between sweeps, the ring pieces to rank 1 once its
 * own piece is out (signals from one source to one receiver must rise). */
typedef struct {
    int *pending; /* relative ranks still owed their scatter piece */
    int count;
    int ring;     /* next ring step to rank 1 (0..P-2) */
    int one_done; /* rank 1 has its scatter piece */
} root_state_t;

static rcoll_status_t send_piece(rcoll_args_t *a, int vpeer, int piece, unsigned step, int *sent)
{
    bc_piece_t p = bc_piece(a->bytes, a->size, piece);
    rcoll_msg_proto_t proto = bc_proto(a, p.len, 0);
    int peer = bc_real(vpeer, a->root, a->size);
    *sent = 0;
    if (!bc_can_send(a, peer, proto))
        return RCOLL_OK;
    *sent = 1;
    return bc_send(a, peer, step, p, proto);
}

/* Scatter pieces to every pending rank that has arrived. Returns sends done, or < 0. */
static int scatter_sweep(rcoll_args_t *a, root_state_t *s)
{
    int done = 0;
    for (int i = 0; i < s->count; i++) {
        int sent, v = s->pending[i];
        rcoll_status_t st = send_piece(a, v, v, 0, &sent);
        if (st != RCOLL_OK)
            return st;
        if (!sent)
            continue;
        s->one_done |= v == 1;
        s->pending[i--] = s->pending[--s->count];
        done++;
    }
    return done;
}

static int ring_to_one(rcoll_args_t *a, root_state_t *s)
{
    if (!s->one_done || s->ring >= a->size - 1)
        return 0;
    int piece = (a->size - s->ring) % a->size, sent = 1;
    if (bc_piece(a->bytes, a->size, piece).len) {
        rcoll_status_t st = send_piece(a, 1, piece, (unsigned)s->ring + 1, &sent);
        if (st != RCOLL_OK)
            return st;
    }
    s->ring += sent;
    return sent;
}

static rcoll_status_t root_run(rcoll_args_t *a)
{
    root_state_t s = {a->team->scratch, 0, 0, 1};
    for (int v = 1; v < a->size; v++)
        if (bc_piece(a->bytes, a->size, v).len) {
            s.pending[s.count++] = v;
            s.one_done &= v != 1;
        }
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    while (s.count || s.ring < a->size - 1) {
        int done = scatter_sweep(a, &s);
        if (done < 0)
            return (rcoll_status_t)done;
        int ring = ring_to_one(a, &s);
        if (ring < 0)
            return (rcoll_status_t)ring;
        if (done + ring)
            continue;
        int wait_for = s.count ? s.pending[0] : 1;
        rcoll_event_t ev = rcoll_ev_arrival(bc_real(wait_for, a->root, a->size), a->seq);
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* A rank other than the root. Receive r = 0..P-1 is piece (v - r) mod P with signal r, from the
 * root (r = 0, the scatter) or the left neighbour (the ring; for v = 1 that is the root too).
 * Send s = 0..P-2 is piece (v - s) mod P to the right neighbour with signal s + 1: receive s
 * brought it, so send s needs s < r. */
typedef struct {
    int v, left, right;
    int r, nrecv, s, nsend;
} ring_state_t;

static int source_of(const rcoll_args_t *a, const ring_state_t *g)
{
    return g->r == 0 ? a->root : g->left;
}

static int receive_ready(rcoll_args_t *a, ring_state_t *g)
{
    int done = 0;
    while (g->r < g->nrecv) {
        bc_piece_t p = bc_piece(a->bytes, a->size, (g->v - g->r + a->size) % a->size);
        if (p.len) {
            int source = source_of(a, g);
            if (!bc_ready(a, source, (unsigned)g->r))
                break;
            bc_finish_recv(a, source, p, bc_proto(a, p.len, 0));
        }
        g->r++;
        done++;
    }
    return done;
}

static int send_ready(rcoll_args_t *a, ring_state_t *g, int *blocked)
{
    int done = 0;
    *blocked = 0;
    while (g->s < g->nsend && g->s < g->r) {
        int piece = (g->v - g->s + a->size) % a->size, sent = 1;
        if (bc_piece(a->bytes, a->size, piece).len) {
            rcoll_status_t st = send_piece(a, g->v + 1, piece, (unsigned)g->s + 1, &sent);
            if (st != RCOLL_OK)
                return st;
        }
        if (!sent) {
            *blocked = 1;
            break;
        }
        g->s++;
        done++;
    }
    return done;
}

static rcoll_status_t nonroot_run(rcoll_args_t *a, int v)
{
    ring_state_t g = {v, bc_real(v - 1, a->root, a->size), bc_real(v + 1, a->root, a->size),
                      0, a->size, 0, v + 1 < a->size ? a->size - 1 : 0};
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    while (g.r < g.nrecv || g.s < g.nsend) {
        int blocked, in = receive_ready(a, &g), out = send_ready(a, &g, &blocked);
        if (out < 0)
            return (rcoll_status_t)out;
        if (in + out)
            continue;
        /* Nothing moved: a write waits for the right neighbour's arrival, else a piece is due. */
        rcoll_event_t ev = blocked ? rcoll_ev_arrival(g.right, a->seq)
                                   : rcoll_ev_signal(source_of(a, &g), a->seq, (unsigned)g.r);
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

static rcoll_status_t bcast_scatter_allgather(rcoll_args_t *a)
{
    int v = bc_vrank(a->rank, a->root, a->size);
    return v == 0 ? root_run(a) : nonroot_run(a, v);
}

/* Cost model: the root writes P pieces of m/P, then P-1 ring steps of one piece. */
static double cost(const rcoll_cost_in_t *in)
{
    double piece = (double)in->bytes / in->P;
    return rcoll_cost_root(in, piece) + (in->P - 1) * rcoll_cost_round(in, 1, false, piece);
}

const rcoll_algo_t rcoll_bcast_scatter_allgather = {
    .name = "scatter_allgather",
    .coll = RCOLL_COLL_BCAST,
    .summary = "[qian-phd] 3.4 + [sur-hipc05] 4.3: scatter P pieces from the root, then ring allgather, "
        "zero-copy above M_T",
    .run = bcast_scatter_allgather,
    .cost = cost,
};
