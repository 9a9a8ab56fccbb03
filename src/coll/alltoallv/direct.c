/* Alltoallv Direct: every rank writes each peer its block of the size both sides know, in
 * arrival order.
 * Paper: [qian-phd] (Qian), section 3.4.4 (Direct alltoall personalized exchange), as alltoall
 * direct (src/coll/alltoall/direct.c) with per-pair counts.
 * Counts and displacements are rank-local: the sender knows scounts[q] (== the receiver's
 * rcounts[p]) and its own sdispls, never the receiver's rdispls. So the path of each pair is
 * chosen from its count alone, the same way on both sides:
 *   0 bytes                       nothing moves, nothing is waited for;
 *   <= 48 B                       inline in the signal's cache line;
 *   < RCOLL_ZCOPY_THRESHOLD and   through the receiver's inbox, in a fixed slot of
 *   <= S = inbox / N (64-aligned) S bytes per source (a layout both sides can compute);
 *   otherwise                     single copy to the receiver's recvbuf + rdispls[p]: a
 *                                 receiver expecting any such block publishes its rdispls
 *                                 and the sender reads just rdispls[p] of it (one get).
 * Steps: one sweep, as alltoall direct: writes to peers (p+d) mod N that can take them now (a
 * single-copy write needs the receiver's published displacements), blocks copied out as they
 * come, RCOLL_ALLTOALL_KPORT=k > 0 limiting writes to distance d until the blocks from
 * distances 1..d-k have come in.
 * Bytes on the wire per rank: the sum of its send counts, each block moved once, plus 8 B read
 * per single-copy peer. Needs N * 8 bytes <= RCOLL_INBOX_BYTES (N <= 131072 by default).
 * When it wins: it is the only alltoallv here; the counts differ by rank, so no rank could
 * choose a log-step algorithm the others would agree on. */
#include <string.h>

#include "coll/alltoall/slots.h"

typedef struct {
    size_t slot; /* inbox bytes per source */
} v_ctx_t;

static rcoll_msg_proto_t pair_proto(const a2a_sweep_t *s, size_t count)
{
    const v_ctx_t *c = s->ctx;
    return a2a_proto(s->a, count, count <= c->slot ? 0 : (size_t)-1);
}

static bool v_ready(a2a_sweep_t *s, int peer, rcoll_event_t *wait)
{
    if (pair_proto(s, s->a->scounts[peer]) != RCOLL_MSG_ZCOPY)
        return true;
    *wait = rcoll_ev_published(peer, s->a->seq);
    return s->a->tl->ops->test(s->a->tl, wait);
}

static rcoll_status_t v_send(a2a_sweep_t *s, int peer)
{
    rcoll_args_t *a = s->a;
    const rcoll_tl_ops_t *ops = a->tl->ops;
    const v_ctx_t *c = s->ctx;
    size_t count = a->scounts[peer];
    const char *src = (const char *)a->sendbuf + a->sdispls[peer];
    rcoll_msg_proto_t proto = pair_proto(s, count);
    size_t remote = (size_t)a->rank * c->slot;
    if (proto == RCOLL_MSG_ZCOPY) { /* where my block goes: the displacement the peer published */
        rcoll_status_t st = ops->get(a->tl, peer, a->seq, &remote, sizeof remote,
                                     (size_t)a->rank * sizeof remote);
        if (st != RCOLL_OK)
            return st;
    }
    return rcoll_msg_put(a, peer, 0, proto, src, count, remote);
}

static void v_finish(a2a_sweep_t *s, int source)
{
    rcoll_args_t *a = s->a;
    const v_ctx_t *c = s->ctx;
    size_t count = a->rcounts[source];
    rcoll_msg_copy_out(a, source, pair_proto(s, count), (size_t)source * c->slot,
                       (char *)a->recvbuf + a->rdispls[source], count);
}

/* Marks the non-empty pairs; true if some block comes to me by single copy. */
static bool mark_pairs(a2a_sweep_t *s)
{
    const rcoll_args_t *a = s->a;
    int n = a->size;
    bool zcopy_in = false;
    for (int d = 1; d < n; d++) {
        int to = (a->rank + d) % n, from = (a->rank - d + n) % n;
        s->out[d] = a->scounts[to] > 0;
        s->in[d] = a->rcounts[from] > 0;
        if (s->in[d] && pair_proto(s, a->rcounts[from]) == RCOLL_MSG_ZCOPY)
            zcopy_in = true;
    }
    return zcopy_in;
}

static rcoll_status_t alltoallv_direct(rcoll_args_t *a)
{
    if ((size_t)a->size * sizeof(size_t) > a->tl->inbox_bytes)
        return rcoll_team_error(a->team, RCOLL_ERR_UNSUPPORTED,
                                "alltoallv direct: %d ranks need RCOLL_INBOX_BYTES >= %zu",
                                a->size, (size_t)a->size * sizeof(size_t));
    v_ctx_t c = {(a->tl->inbox_bytes / (size_t)a->size) & ~(size_t)63};
    a->tl->pull_reader = RCOLL_PULL_SIGNALLED; /* a displacement read is followed by its block */
    a2a_sweep_t s;
    a2a_sweep_init(&s, a, a->team->ctx->cfg.alltoall_kport, RCOLL_MSG_COPY);
    s.ctx = &c;
    s.ready = v_ready;
    s.send = v_send;
    s.finish = v_finish;
    if (mark_pairs(&s)) {
        rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->rdispls,
                                                (size_t)a->size * sizeof(size_t));
        if (st != RCOLL_OK)
            return st;
    }
    a2a_sweep_start(&s);
    return a2a_sweep_run(&s);
}

const rcoll_algo_t rcoll_alltoallv_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_ALLTOALLV,
    .summary = "[qian-phd]: one sweep, per-pair path from the count, rdispls published for single copy",
    .run = alltoallv_direct,
};
