/* Allgather Direct-read: each rank publishes its block once, every peer reads it.
 * Paper: seed 001 (Qian), the shared-memory-aware Direct allgather of chapter 6 (and the
 * SMP-aware Direct of 4.4.2, here on one node): instead of writing its block into each of the
 * P-1 peers' slots, a rank copies it once into its own outbox in shared memory (tiny blocks:
 * into its published cache line) and raises one word; each peer copies it out when it sees the
 * word, in whatever order the ranks arrive (arrival-aware, never waiting on one late rank while
 * another's block is ready). On an RDMA transport the same is a read of the peer's
 * registered outbox.
 * Steps: one. Copies per rank: m in, (P-1)*m out -- against (P-1)*m in and (P-1)*m out for
 * direct's writes, and no remote cache line is written.
 * Bytes on the wire per rank: (P-1) * m read.
 * When it wins: ranks sharing cores and medium blocks (less copying), tiny blocks (each rank
 * writes only its own line). Blocks larger than the outbox go to direct (single copy). */
#include "coll/allgather/blocks.h"

static rcoll_status_t allgather_direct_read(rcoll_args_t *a)
{
    if (a->bytes > a->tl->inbox_bytes)
        return rcoll_allgather_direct.run(a);
    char *rbuf = a->recvbuf;
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, rbuf + (size_t)a->rank * a->bytes, a->bytes);
    if (st != RCOLL_OK)
        return st;
    int *pending = a->team->scratch, count = a->size - 1;
    for (int i = 1; i < a->size; i++)
        pending[i - 1] = (a->rank + i) % a->size;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    while (count > 0) {
        int done = 0;
        for (int i = 0; i < count; i++) {
            rcoll_event_t ev = rcoll_ev_published(pending[i], a->seq);
            if (!a->tl->ops->test(a->tl, &ev))
                continue;
            a->tl->ops->get(a->tl, pending[i], a->seq, rbuf + (size_t)pending[i] * a->bytes, a->bytes, 0);
            pending[i--] = pending[--count];
            done++;
        }
        if (done || !count)
            continue;
        rcoll_event_t first = rcoll_ev_published(pending[0], a->seq);
        if ((st = a->tl->ops->pause(a->tl, &w, &first)) != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

const rcoll_algo_t rcoll_allgather_direct_read = {
    "direct_read", RCOLL_COLL_ALLGATHER,
    "seed 001 ch. 6: publish once in shared memory, every peer reads it, arrival order",
    allgather_direct_read, NULL};
