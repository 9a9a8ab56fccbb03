/* Allgatherv Direct: every rank writes its block (of its own count) to every peer at once,
 * arrived peers first, and copies out the blocks of the others in the order they come.
 * Paper: [qian-phd] (Qian), 3.4 Direct allgather with the arrival-aware order of chapter 6, for
 * counts that differ by rank (every rank knows all counts and displacements).
 * Steps: one. Rank r's message (counts[r] bytes) goes, the same to every peer:
 *   0 bytes       nowhere (every rank knows);
 *   <= 48 bytes   inline in the signal's cache line;
 *   copy-based    below the exchange threshold (an exchange's blocks: 32 KB on one node)
 *                 when it fits the receiver's inbox, laid out
 *                 compactly by rank (offset: sum of the 64-byte-rounded counts before r), so
 *                 skewed or sparse displacements do not waste inbox room; the receiver copies
 *                 it out to displs[r];
 *   single copy   otherwise, straight into the peer's receive buffer (put_user). The counts
 *                 are the same on every rank but each rank's displacements describe its own
 *                 buffer, so when any block goes single copy every rank that receives one
 *                 publishes its displacement array once; a sender reads just its own entry
 *                 from each peer (get with offset) when that peer has published.
 * Bytes on the wire per rank: (P-1) * counts[r] sent in P-1 messages; the sum of the others'
 * counts received.
 * When it wins: small teams and any counts on one node (one write latency); large teams with
 * large totals would rather use a ring (not written yet). */
#include "coll/xfer.h"

#include <string.h>

typedef struct {
    const size_t *off; /* per rank: its block's place in every inbox (copy-based) */
} agv_t;

/* An exchange's block (every rank sends and receives at once): single copy from the
 * transport's exchange threshold, as allgather's (docs/tuning.md, "An exchange's blocks go
 * single copy from 32 KB"); the small inbox where the layout ends within it. */
static rcoll_msg_proto_t proto_of(const rcoll_args_t *a, const agv_t *v, int r)
{
    size_t end = v->off[r] + a->rcounts[r];
    rcoll_msg_proto_t p = rcoll_msg_proto_exchange(a, a->rcounts[r], end, true);
    return p == RCOLL_MSG_COPY && end <= a->tl->small_inbox_bytes ? RCOLL_MSG_COPY_SMALL : p;
}

/* Does any rank but `me` (-1: any rank) send its block single copy? Then `me` publishes its
 * displacements. */
static bool zcopy_to(const rcoll_args_t *a, const agv_t *v, int me)
{
    for (int r = 0; r < a->size; r++)
        if (r != me && a->rcounts[r] && proto_of(a, v, r) == RCOLL_MSG_ZCOPY)
            return true;
    return false;
}

static rcoll_status_t allgatherv_direct_prepare(rcoll_args_t *a)
{
    a->tmp = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, (size_t)a->size * sizeof(size_t));
    if (!a->tmp)
        return rcoll_team_error(a->team, RCOLL_ERR_NOMEM, "allgatherv direct: out of memory");
    return RCOLL_OK;
}

/* Items: peer q (< P) is "send my block to q", q + P is "take q's block". */
static int step(rcoll_args_t *a, void *ctx, int item)
{
    const agv_t *v = ctx;
    char *rbuf = a->recvbuf;
    if (item < a->size) {
        rcoll_msg_proto_t proto = proto_of(a, v, a->rank);
        size_t remote = rcoll_msg_copied(proto) ? v->off[a->rank] : 0;
        if (proto == RCOLL_MSG_ZCOPY) {
            rcoll_event_t ev = rcoll_ev_published(item, a->seq);
            if (!a->tl->ops->test(a->tl, &ev))
                return 0;
            rcoll_status_t got = a->tl->ops->get(a->tl, item, a->seq, &remote, sizeof remote,
                                                 (size_t)a->rank * sizeof remote);
            if (got != RCOLL_OK)
                return got;
        }
        /* one whole put: the receivers take blocks whole, while sending their own */
        rcoll_status_t st = rcoll_msg_put(a, item, 0, proto, rbuf + a->rdispls[a->rank], a->bytes, remote);
        return st == RCOLL_OK ? 1 : (int)st;
    }
    int q = item - a->size;
    rcoll_event_t ev = rcoll_ev_signal(q, a->seq, 0);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_msg_proto_t proto = proto_of(a, v, q);
    if (proto != RCOLL_MSG_ZCOPY)
        memcpy(rbuf + a->rdispls[q], gs_msg_data(a, q, proto, v->off[q], NULL), a->rcounts[q]);
    return 1;
}

static rcoll_event_t event_of(rcoll_args_t *a, void *ctx, int item)
{
    (void)ctx;
    if (item < a->size)
        return rcoll_ev_published(item, a->seq);
    return rcoll_ev_signal(item - a->size, a->seq, 0);
}

/* My displacements, for the peers that write to me single copy. Every rank fails alike when
 * they do not fit the outbox (it depends on counts and team size only). */
static rcoll_status_t publish_displs(rcoll_args_t *a, const agv_t *v)
{
    size_t len = (size_t)a->size * sizeof(size_t);
    if (!zcopy_to(a, v, -1))
        return RCOLL_OK;
    if (len > a->tl->inbox_bytes)
        return rcoll_team_error(a->team, RCOLL_ERR_UNSUPPORTED, "allgatherv direct: %d "
                                "displacements do not fit the outbox (RCOLL_INBOX_BYTES)", a->size);
    if (!zcopy_to(a, v, a->rank))
        return RCOLL_OK;
    return a->tl->ops->publish(a->tl, a->seq, a->rdispls, len);
}

static rcoll_status_t allgatherv_direct(rcoll_args_t *a)
{
    size_t *off = a->tmp, at = 0;
    for (int r = 0; r < a->size; r++) {
        off[r] = at;
        at += (a->rcounts[r] + 63) & ~(size_t)63;
    }
    agv_t v = {off};
    a->tl->pull_reader = RCOLL_PULL_SIGNALLED; /* a displacement read is followed by its block */
    rcoll_status_t st = publish_displs(a, &v);
    if (st != RCOLL_OK)
        return st;
    int *items = a->team->scratch, count = 0;
    for (int i = 1; a->bytes && i < a->size; i++)
        items[count++] = (a->rank + i) % a->size;
    for (int i = 1; i < a->size; i++) {
        int q = (a->rank - i + a->size) % a->size;
        if (a->rcounts[q])
            items[count++] = q + a->size;
    }
    return rcoll_sweep(a, items, count, step, event_of, &v);
}

/* Cost model (keyed on the mean count m): as the allgather's Direct, P - 1 messages of m in
 * flight from every rank. */
static double cost(const rcoll_cost_in_t *in)
{
    return rcoll_cost_fan(in, in->P - in->L, in->L - 1, (double)in->bytes);
}

const rcoll_algo_t rcoll_allgatherv_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_ALLGATHERV,
    .summary = "[qian-phd] 3.4: Direct, all P-1 writes in flight, arrival order, compact inbox layout",
    .run = allgatherv_direct,
    .prepare = allgatherv_direct_prepare,
    .cost = cost,
};
