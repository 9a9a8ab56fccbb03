/* Messages of the rooted collectives: see xfer.h. */
#include "coll/xfer.h"

#include <string.h>

void gs_msg_begin(gs_msg_t *m, rcoll_args_t *a, int peer, rcoll_msg_proto_t proto)
{
    m->a = a;
    m->peer = peer;
    m->proto = proto;
    m->line_len = 0;
}

rcoll_status_t gs_msg_part(gs_msg_t *m, const void *src, size_t len, size_t remote, unsigned step)
{
    if (m->proto != RCOLL_MSG_INLINE)
        return rcoll_msg_put(m->a, m->peer, step, m->proto, src, len, remote);
    if (len) /* an inline message gathers its parts in one line, sent with the last */
        memcpy(m->line + remote, src, len);
    if (remote + len > m->line_len)
        m->line_len = remote + len;
    if (step == RCOLL_NO_SIGNAL)
        return RCOLL_OK;
    return rcoll_msg_put(m->a, m->peer, step, RCOLL_MSG_INLINE, m->line, m->line_len, 0);
}

const unsigned char *gs_msg_data(rcoll_args_t *a, int source, rcoll_msg_proto_t proto, size_t inbox_off,
                                 const void *zbuf)
{
    const unsigned char *data = rcoll_msg_data(a, source, proto, inbox_off);
    return data ? data : zbuf;
}

rcoll_status_t gs_send_block(rcoll_args_t *a, int root, const void *src, size_t bytes)
{
    rcoll_msg_proto_t proto = gs_proto(a, bytes, ((size_t)a->rank + 1) * bytes);
    gs_msg_t msg;
    gs_msg_begin(&msg, a, root, proto);
    return gs_msg_part(&msg, src, bytes, proto == RCOLL_MSG_INLINE ? 0 : (size_t)a->rank * bytes, 0);
}

const unsigned char *gs_block_data(rcoll_args_t *a, int source, size_t bytes)
{
    rcoll_msg_proto_t proto = gs_proto(a, bytes, ((size_t)source + 1) * bytes);
    return gs_msg_data(a, source, proto, (size_t)source * bytes, NULL);
}

int gs_collect_block(rcoll_args_t *a, void *ctx, int r)
{
    rcoll_event_t ev = gs_block_signal(a, ctx, r);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_check_len(a, &ev, a->bytes);
    const unsigned char *data = gs_block_data(a, r, a->bytes);
    if (data)
        memcpy((char *)a->recvbuf + (size_t)r * a->bytes, data, a->bytes);
    return 1;
}

rcoll_event_t gs_block_signal(rcoll_args_t *a, void *ctx, int r)
{
    (void)ctx;
    return rcoll_ev_signal(r, a->seq, 0);
}

bool gs_arrived(rcoll_args_t *a, int peer)
{
    rcoll_event_t ev = rcoll_ev_arrival(peer, a->seq);
    return a->tl->ops->test(a->tl, &ev);
}

rcoll_event_t gs_arrival_event(rcoll_args_t *a, void *ctx, int r)
{
    (void)ctx;
    return rcoll_ev_arrival(r, a->seq);
}

int gs_deliver_vblock(rcoll_args_t *a, void *ctx, int r)
{
    (void)ctx;
    size_t count = a->scounts[r];
    rcoll_msg_proto_t proto = gs_proto(a, count, count);
    if (proto == RCOLL_MSG_ZCOPY && !gs_arrived(a, r))
        return 0;
    gs_msg_t msg;
    gs_msg_begin(&msg, a, r, proto);
    rcoll_status_t st = gs_msg_part(&msg, (const char *)a->sendbuf + a->sdispls[r], count, 0, 0);
    return st == RCOLL_OK ? 1 : (int)st;
}

/* One pass over the pending items, keeping the order of those left. Returns the number done,
 * or a negative status. */

rcoll_status_t gs_recv_one(rcoll_args_t *a, int source, rcoll_msg_proto_t proto, void *dst, size_t bytes)
{
    rcoll_event_t ev = rcoll_ev_signal(source, a->seq, 0);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st == RCOLL_OK)
        rcoll_check_len(a, &ev, bytes);
    if (st == RCOLL_OK && proto != RCOLL_MSG_ZCOPY)
        memcpy(dst, gs_msg_data(a, source, proto, 0, NULL), bytes);
    return st;
}
