/* Bcast Direct-read: the root publishes the message once, every rank reads it.
 * Paper: [qian-phd] (Qian), chapter 6's shared-memory collectives (a shared buffer written once
 * and read by all, with arrival notification for free) and the Direct algorithm of 3.4.1
 * (one step, no forwarding), here with the root's writes replaced by the readers' copies.
 * Steps: one. The root copies the message into its outbox in shared memory (<= 48 bytes: into
 * its published cache line itself; <= 1 KB: the small ring beside it, as deep as the lines')
 * and raises one word; each other rank waits for that word
 * and copies the message out, in whatever order the ranks run -- no rank waits for another
 * reader, and the root leaves as soon as it has published (it need not wait for anyone's
 * arrival). On an RDMA transport the same is a read of the root's registered outbox.
 * Messages larger than the outbox (RCOLL_INBOX_BYTES, 1 MB) cannot be published in one piece
 * (one publication per rank per collective): they go to scatter_allgather, the large-message
 * algorithm, which the selection would choose there anyway.
 * Messages from 16 KB when every rank has its own core go in parts (8 KB below 64 KB, then 1/8
 * of the message, 16-128 KB): the root stages part i in its outbox and signals each reader,
 * which copies part i out while the root copies part i+1 in -- the two copies overlap instead
 * of following each other.
 * Bytes on the wire per rank: the root writes m once (into its own outbox), every other rank
 * reads m. Copies: P in all, each rank does its own.
 * When it wins: small and medium messages on one node, most of all when ranks outnumber cores
 * (a reader needs only the root to have run since, never a parent or a neighbour; each
 * dependency between ranks sharing a core is a context switch). */
#include "coll/msg.h"

/* Pipelined when every rank has its own core and the message is large: readers copy part i
 * out while the root copies part i+1 in (measured np=2, 128 KB-1 MB; 16-32 KB in 8 KB parts:
 * docs/tuning.md, "Copies in parts"). When ranks share cores each part would cost a reader a
 * wait (often a context switch): one publication there. */
#define PIPELINE_MIN (16 * 1024)

static size_t part_bytes(size_t bytes)
{
    if (bytes < 64 * 1024)
        return 8 * 1024;
    size_t part = bytes / 8;
    part = part < 16 * 1024 ? 16 * 1024 : part > 128 * 1024 ? 128 * 1024 : part;
    return (part + 63) & ~(size_t)63;
}

static rcoll_status_t root_staged(rcoll_args_t *a, size_t part)
{
    unsigned step = 0;
    for (size_t off = 0; off < a->bytes; off += part, step++) {
        size_t len = a->bytes - off < part ? a->bytes - off : part;
        rcoll_status_t st = rcoll_msg_stage_part(a, a->sendbuf, step, off, len);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

static rcoll_status_t bcast_direct_read(rcoll_args_t *a)
{
    if (a->bytes >= PIPELINE_MIN && !a->team->wait.crowded) {
        size_t part = part_bytes(a->bytes);
        return a->rank == a->root ? root_staged(a, part) : rcoll_msg_read_staged(a, a->root, a->recvbuf, part);
    }
    if (a->rank == a->root)
        return a->tl->ops->publish(a->tl, a->seq, a->recvbuf, a->bytes);
    rcoll_event_t ev = rcoll_ev_published(a->root, a->seq);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st == RCOLL_OK)
        rcoll_check_len(a, &ev, a->bytes);
    if (st == RCOLL_OK)
        st = a->tl->ops->get(a->tl, a->root, a->seq, a->recvbuf, a->bytes, 0);
    return st;
}

static const char *bcast_direct_read_not_for(const rcoll_args_t *a)
{
    return a->bytes > a->tl->inbox_bytes ? "the message is larger than the outbox" : NULL;
}

/* Cost model: one copy into the root's outbox, then every rank reads it. */
static double cost(const rcoll_cost_in_t *in)
{
    if (in->N > 1)
        return RCOLL_COST_NONE; /* reads across nodes (coll/cost.h) */
    double m = (double)in->bytes;
    return rcoll_cost_copy(in, m) + rcoll_cost_step(&in->m->shm, 1, m);
}

const rcoll_algo_t rcoll_bcast_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_BCAST,
    .summary = "[qian-phd] ch. 6: the root publishes once in shared memory (in parts, pipelined, when large), "
        "every rank reads it",
    .run = bcast_direct_read,
    .not_for = bcast_direct_read_not_for,
    .fallback = &rcoll_bcast_scatter_allgather,
    .limits = "messages of at most RCOLL_INBOX_BYTES (one publication in the root's outbox)",
    .cost = cost,
};
