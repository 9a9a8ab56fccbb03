/* Alltoall Direct: every rank writes each peer its block, at most k writes ahead of what it has
 * received, in arrival order.
 * Paper: [qian-phd] (Qian), section 3.4.4, Direct alltoall personalized exchange for k-port
 * modeling (at step i rank p sends to (p+(i-1)k+1) .. (p+ik) mod N), with the arrival-aware
 * order of its chapter 6: a rank writes first to the peers that have arrived and copies out the
 * blocks that have come in, so one late peer never holds up work that is ready.
 * Steps: one sweep. Rank p's block for peer (p+d) mod N, d = 1..N-1, goes inline in the signal's
 * cache line (<= 48 B), through the peer's inbox at slot p*m (below RCOLL_ZCOPY_THRESHOLD when
 * N*m fits the inbox) or by single copy straight to the peer's recvbuf + p*m. With
 * RCOLL_ALLTOALL_KPORT=k > 0 the write to distance d waits until the blocks from distances
 * 1..d-k have come in (the seed's k writes in flight, as a sliding window: no receiver has more
 * than about k writers at once); 0 (default) puts every write in flight at once.
 * Bytes on the wire per rank: (N-1)*m in N-1 messages, each block moved once, no forwarding.
 * When it wins: medium and large blocks (single copy, no staging), and small teams at every
 * size; the window helps when many ranks would otherwise pile onto one receiver. */
#include "coll/alltoall/slots.h"

static rcoll_status_t alltoall_direct(rcoll_args_t *a)
{
    a2a_sweep_t s;
    rcoll_msg_proto_t proto = a2a_proto(a, a->bytes, (size_t)a->size * a->bytes);
    a2a_sweep_init(&s, a, a->team->ctx->cfg.alltoall_kport, proto);
    for (int d = 1; d < a->size; d++)
        s.out[d] = s.in[d] = 1;
    a2a_sweep_start(&s);
    return a2a_sweep_run(&s);
}

/* Cost model: one step, every block one message. */
static double cost(const rcoll_cost_in_t *in)
{
    return rcoll_cost_fan(in, in->P - in->L, in->L - 1, (double)in->bytes);
}

const rcoll_algo_t rcoll_alltoall_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd]: one sweep, block to (p+d) mod N, k writes ahead (0: all), arrival order",
    .run = alltoall_direct,
    .cost = cost,
};
