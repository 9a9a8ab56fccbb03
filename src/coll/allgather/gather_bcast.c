/* Allgather Gather-Broadcast: every rank sends its block to one rank (rank 0), which sends the
 * whole result back to each rank in one message.
 * Paper: [qian-phd] (Qian), SMP-aware Gather-and-Broadcast (chapter 4): ranks hand their blocks
 * to a leader, the leader exchanges and broadcasts, so that fewer messages cross the network;
 * here with one leader for the whole team, for teams whose every rank is on its own node.
 * Steps: (1) rank r != 0 writes its m bytes to rank 0 (inline, inbox at r*m, or single copy
 * into rank 0's receive buffer, as Gather Direct); rank 0 collects them in arrival order;
 * (2) rank 0 writes the P*m result to every other rank (inline when P*m <= 48 B, its inbox, or
 * single copy into its receive buffer); each rank's own block is rewritten unchanged.
 * Bytes on the wire: (P-1) m up and (P-1) P m down, in 2 (P-1) messages and two hops;
 * recursive doubling moves (P-1) m per rank in P log2 P messages, direct in P (P-1).
 * When it wins: across nodes, small blocks and small teams, where the count of messages (a
 * system call on each side over TCP, a context switch when ranks share cores) is the cost
 * (np=4 over UCX tcp: docs/tuning.md). */
#include "coll/xfer.h"
#include "coll/sweep.h"

#define LEADER 0

static const void *my_block(const rcoll_args_t *a)
{
    return a->sendbuf == RCOLL_IN_PLACE ? (const char *)a->recvbuf + (size_t)a->rank * a->bytes
                                        : a->sendbuf;
}

static rcoll_status_t allgather_gather_bcast(rcoll_args_t *a)
{
    size_t all = (size_t)a->size * a->bytes;
    rcoll_msg_proto_t down = gs_proto(a, all, all);
    if (a->rank != LEADER) {
        rcoll_status_t st = gs_send_block(a, LEADER, my_block(a), a->bytes);
        return st == RCOLL_OK ? gs_recv_one(a, LEADER, down, a->recvbuf, all) : st;
    }
    int *pending = a->team->scratch;
    int count = rcoll_sweep_others(a, pending);
    rcoll_status_t st = gs_collect(a, pending, count);
    for (int t = 1; t < a->size && st == RCOLL_OK; t++) {
        gs_msg_t msg;
        gs_msg_begin(&msg, a, t, down);
        st = gs_msg_part(&msg, a->recvbuf, all, 0, 0);
    }
    return st;
}

/* Cost model: rank 0 hears P-1 blocks, then writes the P-block result to P-1 ranks. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes;
    return rcoll_cost_root(in, m) + rcoll_cost_root(in, in->P * m);
}

const rcoll_algo_t rcoll_allgather_gather_bcast = {
    .name = "gather_bcast",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] Gather-and-Broadcast with one leader: blocks to rank 0, the result back in one message",
    .run = allgather_gather_bcast,
    .cost = cost,
};
