/* Bcast by k-nomial tree (k-port binomial), any root, radix RCOLL_BCAST_RADIX (default 4).
 * Paper: [qian-phd] (Qian), section 3.4.1: the spanning binomial tree extended to k ports --
 * each informed rank informs k-1 more per round, all ranks have the message after
 * ceil(log_k P) rounds. Ranks are numbered relative to the root (v = (r - root) mod P); the
 * parent of v clears v's lowest non-zero base-k digit, its children are v + j*k^l (j = 1..k-1)
 * for every level l below that digit.
 * Steps: a rank waits for the whole message from its parent, then writes it to each of its
 * children, largest subtree first among those that have arrived (single copy needs the
 * child's advertised buffer; a late child never holds up its siblings). Tiny messages travel
 * inline in the signal line, small ones through the child's inbox, large ones (>= the zero-copy
 * threshold) by one copy straight into the child's buffer.
 * Bytes on the wire per rank: m received (the root: none), m per child sent -- the root sends
 * (k-1) * ceil(log_k P) * m at most; P-1 messages of m in all.
 * When it wins: small messages on larger teams when ranks have their own cores (log_k P hops,
 * no piece bookkeeping), and medium messages where scatter_allgather's P-1 ring steps cost
 * more than the extra bytes. */
#include "coll/bcast/tree.h"

#include <string.h>

static bc_piece_t whole(const rcoll_args_t *a)
{
    bc_piece_t p = {0, a->bytes};
    return p;
}

static rcoll_status_t receive_from_parent(rcoll_args_t *a, int parent, rcoll_msg_proto_t proto)
{
    rcoll_event_t ev = rcoll_ev_signal(parent, a->seq, 0);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st == RCOLL_OK) {
        rcoll_check_len(a, &ev, a->bytes); /* the whole message, from one parent */
        bc_finish_recv(a, parent, whole(a), proto);
    }
    return st;
}

/* The first pending child (largest subtree first) a send can start to, or -1. */
static int first_sendable(rcoll_args_t *a, const int *pending, int count, rcoll_msg_proto_t proto)
{
    for (int i = 0; i < count; i++)
        if (bc_can_send(a, pending[i], proto))
            return i;
    return -1;
}

static rcoll_status_t send_to_children(rcoll_args_t *a, int *pending, int count, rcoll_msg_proto_t proto)
{
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    while (count > 0) {
        int i = first_sendable(a, pending, count, proto);
        rcoll_status_t st;
        if (i < 0) {
            rcoll_event_t ev = rcoll_ev_arrival(pending[0], a->seq);
            if ((st = a->tl->ops->pause(a->tl, &w, &ev)) != RCOLL_OK)
                return st;
            continue;
        }
        if ((st = bc_send(a, pending[i], 0, whole(a), proto)) != RCOLL_OK)
            return st;
        memmove(pending + i, pending + i + 1, (size_t)(count - i - 1) * sizeof *pending);
        count--;
    }
    return RCOLL_OK;
}

static rcoll_status_t bcast_knomial(rcoll_args_t *a)
{
    int radix = a->team->ctx->cfg.bcast_radix < 2 ? 2 : a->team->ctx->cfg.bcast_radix;
    int v = bc_vrank(a->rank, a->root, a->size);
    rcoll_msg_proto_t proto = bc_proto(a, a->bytes, 1);
    if (v != 0) {
        int parent = bc_real(bc_knomial_parent(v, radix, a->size), a->root, a->size);
        rcoll_status_t st = receive_from_parent(a, parent, proto);
        if (st != RCOLL_OK)
            return st;
    }
    int *children = a->team->scratch;
    int count = bc_knomial_children(v, radix, a->size, children);
    for (int i = 0; i < count; i++)
        children[i] = bc_real(children[i], a->root, a->size);
    return send_to_children(a, children, count, proto);
}

/* Cost model: ceil(log_k P) levels, each parent writing the message to up to k-1 children
 * (across nodes once the distance reaches a node). */
static double cost(const rcoll_cost_in_t *in)
{
    int k = in->cfg->bcast_radix;
    double t = 0;
    for (long d = 1; d < in->P; d *= k) {
        bool local = in->N == 1 || d * k <= in->L;
        long children = (in->P - 1) / d < k - 1 ? (in->P - 1) / d : k - 1;
        t += rcoll_cost_step(local ? &in->m->shm : &in->m->net, (double)children, (double)in->bytes);
    }
    return t;
}

const rcoll_algo_t rcoll_bcast_knomial = {
    .name = "knomial",
    .coll = RCOLL_COLL_BCAST,
    .summary = "[qian-phd] 3.4.1: k-port binomial tree (radix RCOLL_BCAST_RADIX), arrival order, zero-copy "
        "above M_T",
    .run = bcast_knomial,
    .cost = cost,
};
