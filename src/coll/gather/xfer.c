/* Messages of the rooted collectives: see xfer.h. */
#include "coll/gather/xfer.h"

#include <string.h>

/* Ranks outnumber cores (one node, automatic waiting): a single-copy write must wait until its
 * receiver has run and arrived -- a context switch at least, often several -- while a copy
 * into its inbox goes out as soon as the sender runs. Measured with 4 ranks on 2 cores
 * (rcoll-bench, direct, avg over ranks, two runs) at 8 / 16 / 32 / 64 KB:
 *   gather   copy-based 1.9 / 3.2 / 5.1 / 7.7-8.1 us, single copy 4.7 / 5.2-5.5 / 6.7-7.9 / 11.8
 *   scatter  copy-based 1.6-2.2 / 3.0-3.6 / 5.6-9.2 / 12-16 us, single copy 10-15 / 11-15 /
 *            11-15 / 17-22
 * Unless RCOLL_ZCOPY_THRESHOLD is set, messages up to this size go copy-based there (when they
 * fit the inbox). */
#define GS_CROWDED_COPY_MAX (64 * 1024)

/* Largest message that goes copy-based. */
static size_t copy_max(const rcoll_args_t *a)
{
    const struct rcoll_team *t = a->team;
    size_t max = a->tl->zcopy_threshold ? a->tl->zcopy_threshold - 1 : 0;
    if (t->wait.crowded && t->node_count == 1 && !t->ctx->cfg.zcopy_threshold &&
        max < GS_CROWDED_COPY_MAX)
        max = GS_CROWDED_COPY_MAX;
    return max;
}

gs_proto_t gs_proto(const rcoll_args_t *a, size_t bytes, size_t inbox_end)
{
    if (bytes <= RCOLL_INLINE_MAX)
        return GS_INLINE;
    if (bytes <= copy_max(a) && inbox_end <= a->tl->inbox_bytes)
        return GS_COPY;
    return GS_ZCOPY;
}

void gs_msg_begin(gs_msg_t *m, rcoll_args_t *a, int peer, gs_proto_t proto)
{
    m->a = a;
    m->peer = peer;
    m->proto = proto;
    m->line_len = 0;
}

rcoll_status_t gs_msg_part(gs_msg_t *m, const void *src, size_t len, size_t remote, unsigned step)
{
    rcoll_tl_t *tl = m->a->tl;
    uint64_t seq = m->a->seq;
    switch (m->proto) {
    case GS_INLINE:
        if (len)
            memcpy(m->line + remote, src, len);
        if (remote + len > m->line_len)
            m->line_len = remote + len;
        if (step == RCOLL_NO_SIGNAL)
            return RCOLL_OK;
        return tl->ops->put_inline(tl, m->peer, seq, step, m->line, m->line_len);
    case GS_COPY:
        return tl->ops->put(tl, m->peer, seq, step, src, len, remote);
    case GS_ZCOPY:
    default:
        return tl->ops->put_user(tl, m->peer, seq, step, src, len, remote);
    }
}

const unsigned char *gs_msg_data(rcoll_args_t *a, int source, gs_proto_t proto, size_t inbox_off,
                                 const void *zbuf)
{
    if (proto == GS_INLINE)
        return a->tl->ops->inline_data(a->tl, source, a->seq);
    if (proto == GS_COPY)
        return (const unsigned char *)a->tl->ops->inbox(a->tl, a->seq) + inbox_off;
    return zbuf;
}

bool gs_arrived(rcoll_args_t *a, int peer)
{
    rcoll_event_t ev = rcoll_ev_arrival(peer, a->seq);
    return a->tl->ops->test(a->tl, &ev);
}

/* One pass over the pending items, keeping the order of those left. Returns the number done,
 * or a negative status. */
static int pass(rcoll_args_t *a, int *items, int *count, gs_step_fn step, void *ctx)
{
    int left = 0, done = 0;
    for (int i = 0; i < *count; i++) {
        int r = step(a, ctx, items[i]);
        if (r < 0)
            return r;
        if (r > 0)
            done++;
        else
            items[left++] = items[i];
    }
    *count = left;
    return done;
}

rcoll_status_t gs_sweep(rcoll_args_t *a, int *items, int count, gs_step_fn step, gs_event_fn event,
                        void *ctx)
{
    rcoll_waiter_t w;
    bool waiting = false; /* the waiter starts (reads the clock) at the first pause only */
    while (count > 0) {
        int done = pass(a, items, &count, step, ctx);
        if (done < 0)
            return (rcoll_status_t)done;
        if (done > 0 || count == 0)
            continue;
        if (!waiting)
            rcoll_waiter_start(&w, &a->team->wait), waiting = true;
        rcoll_event_t ev = event(a, ctx, items[0]);
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}
