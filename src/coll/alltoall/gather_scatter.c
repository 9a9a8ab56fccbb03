/* Alltoall Gather-Scatter: every rank sends its whole send buffer to one rank (rank 0), which
 * regroups the blocks by destination and sends each rank its P blocks in one message.
 * Paper: the leader-based message combining of [qian-phd] (Qian, chapter 4: the gather-based
 * multi-group and SMP-aware Gather-and-Broadcast designs, where ranks hand their data to a
 * leader so that fewer, larger messages cross the network), applied to alltoall with one leader
 * for the whole team: for tiny blocks the cost of a message (a system call on each side over
 * TCP, a context switch when ranks share cores) dwarfs the cost of its bytes.
 * Steps: (1) rank r != 0 writes its P*m send buffer to rank 0 (inline when P*m <= 48 B, else
 * into rank 0's inbox at r*P*m); (2) rank 0, once all P-1 rows are in (arrival order), builds
 * for each rank t the row [block s->t for s = 0..P-1] and writes it to t (inline or t's inbox);
 * t copies it to its receive buffer (its own block, already there, is rewritten unchanged).
 * Bytes on the wire: 2 (P-1) P m in 2 (P-1) messages, all through rank 0, in two hops; direct
 * moves P (P-1) m in P (P-1) messages.
 * When it wins: across nodes, tiny blocks and small teams, where messages cost and bytes do not
 * (np=4 over UCX tcp: docs/tuning.md). Needs P*P*m within rank 0's inbox and P*m below the
 * zero-copy threshold; otherwise it runs Direct. */
#include <string.h>

#include "coll/xfer.h"
#include "coll/sweep.h"

#define LEADER 0

static size_t row_bytes(const rcoll_args_t *a)
{
    return (size_t)a->size * a->bytes;
}

/* Both sides take the copy path (or inline) for every message; decided from values all ranks
 * share. */
static bool fits(const rcoll_args_t *a)
{
    size_t row = row_bytes(a);
    return gs_proto(a, row, row * (size_t)a->size) != RCOLL_MSG_ZCOPY;
}

/* The row rank `source` sent to the leader, once its signal was seen (never single copy). */
static const unsigned char *row_of(rcoll_args_t *a, int source)
{
    return source == LEADER ? a->sendbuf : gs_block_data(a, source, row_bytes(a));
}

static int row_in(rcoll_args_t *a, void *ctx, int r)
{
    rcoll_event_t ev = gs_block_signal(a, ctx, r);
    return a->tl->ops->test(a->tl, &ev) ? 1 : 0;
}

/* The leader: every row in, then one message per rank with its P blocks. */
static rcoll_status_t lead(rcoll_args_t *a)
{
    size_t m = a->bytes, row = row_bytes(a);
    int *pending = a->team->scratch;
    int count = rcoll_sweep_others(a, pending);
    rcoll_status_t st = rcoll_sweep(a, pending, count, row_in, gs_block_signal, NULL);
    unsigned char *out = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, row);
    if (st != RCOLL_OK)
        return st;
    if (!out)
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM, "alltoall gather_scatter: no memory");
    for (int s = 1; s < a->size; s++) /* the leader's own column (its block already there) */
        memcpy((char *)a->recvbuf + (size_t)s * m, row_of(a, s) + (size_t)LEADER * m, m);
    rcoll_msg_proto_t proto = gs_proto(a, row, row);
    for (int t = 1; t < a->size && st == RCOLL_OK; t++) {
        for (int s = 0; s < a->size; s++)
            memcpy(out + (size_t)s * m, row_of(a, s) + (size_t)t * m, m);
        gs_msg_t msg;
        gs_msg_begin(&msg, a, t, proto);
        st = gs_msg_part(&msg, out, row, 0, 0);
    }
    return st;
}

static rcoll_status_t alltoall_gather_scatter(rcoll_args_t *a)
{
    if (a->rank == LEADER)
        return lead(a);
    size_t row = row_bytes(a);
    rcoll_status_t st = gs_send_block(a, LEADER, a->sendbuf, row);
    return st == RCOLL_OK ? gs_recv_one(a, LEADER, gs_proto(a, row, row), a->recvbuf, row) : st;
}

static const char *alltoall_gather_scatter_not_for(const rcoll_args_t *a)
{
    return fits(a) ? NULL : "rows too large for the copy path";
}

/* Cost model: rank 0 hears P blocks from every rank, then writes P blocks to every rank. */
static double cost(const rcoll_cost_in_t *in)
{
    double row = in->P * (double)in->bytes;
    return 2 * rcoll_cost_root(in, row) + rcoll_cost_copy(in, in->P * row);
}

const rcoll_algo_t rcoll_alltoall_gather_scatter = {
    .name = "gather_scatter",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd] leader combining: all rows to rank 0, which sends each rank its P blocks in one message",
    .run = alltoall_gather_scatter,
    .not_for = alltoall_gather_scatter_not_for,
    .fallback = &rcoll_alltoall_direct,
    .limits = "rows of P blocks below the zero-copy threshold whose P rows fit RCOLL_INBOX_BYTES (rank 0's "
        "inbox)",
    .cost = cost,
};
