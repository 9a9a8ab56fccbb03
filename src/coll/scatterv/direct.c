/* Scatterv Direct: the root writes each rank's block (of that rank's count) straight to it;
 * single-copy writes to arrived ranks first.
 * Paper: [qian-phd] (Qian), 3.4.1 Direct scatter with the arrival-aware order of chapter 6, for
 * counts that differ by rank. The root knows every count and displacement, a rank only its own
 * count: the protocol of a message is decided from that count, which both sides know --
 * 0 bytes: nothing is sent; <= 48: inline in the signal's cache line; below the zero-copy
 * threshold: into the rank's inbox at 0 (neither needs the rank to have arrived: these go out
 * at once); otherwise single copy: on one node with CMA the rank reads its block out of the
 * root's send buffer (the root tells it where in an inline line at once and waits for it to
 * have left: coll/xfer.h, gs_vblock_read), elsewhere the root writes it straight into its
 * receive buffer (put_user) in the order the ranks arrive. A rank waits for the root's signal
 * and copies its block out of the line or the inbox, or reads it.
 * Steps: one. Bytes on the wire per rank: its count, in one message; the root sends the sum.
 * When it wins: ranks with a core each (direct_read where they share cores). Reading rather
 * than writing the single-copy blocks: with the root rotating and no barrier between calls, a
 * write waited for its rank to enter (np=2, 64 KB-1 MB: 1.95-2.91x native, read: 1.05-1.23x;
 * docs/tuning.md, "Back-to-back rooted calls"). */
#include "coll/xfer.h"

static rcoll_status_t scatterv_direct(rcoll_args_t *a)
{
    if (a->rank != a->root)
        return a->bytes ? gs_recv_vblock(a) : RCOLL_OK;
    int *pending = a->team->scratch, count = 0;
    for (int i = 1; i < a->size; i++) {
        int r = (a->root + i) % a->size;
        if (a->scounts[r])
            pending[count++] = r;
    }
    return gs_send_vblocks(a, pending, count);
}

const rcoll_algo_t rcoll_scatterv_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_SCATTERV,
    .summary = "[qian-phd] 3.4.1: Direct, the root writes every block to its rank, arrival order",
    .run = scatterv_direct,
    .prepare = gs_vblock_prepare,
};
