/* The message layer: see msg.h. */
#include "coll/msg.h"

#include <string.h>

rcoll_status_t rcoll_msg_put(rcoll_args_t *a, int peer, unsigned step, rcoll_msg_proto_t proto,
                             const void *src, size_t len, size_t remote)
{
    rcoll_tl_t *tl = a->tl;
    switch (proto) {
    case RCOLL_MSG_INLINE:
        return tl->ops->put_inline(tl, peer, a->seq, step, src, len);
    case RCOLL_MSG_COPY:
        return tl->ops->put(tl, peer, a->seq, step, src, len, remote);
    case RCOLL_MSG_COPY_SMALL:
        return tl->ops->put_small(tl, peer, a->seq, step, src, len, remote);
    case RCOLL_MSG_ZCOPY:
    default:
        return tl->ops->put_user(tl, peer, a->seq, step, src, len, remote);
    }
}

rcoll_status_t rcoll_msg_put_parts(rcoll_args_t *a, int peer, unsigned step, rcoll_msg_proto_t proto,
                                   const void *src, size_t len, size_t remote)
{
    if (proto == RCOLL_MSG_COPY)
        return a->tl->ops->put_parts(a->tl, peer, a->seq, step, src, len, remote);
    return rcoll_msg_put(a, peer, step, proto, src, len, remote);
}

const unsigned char *rcoll_msg_data(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto,
                                    size_t inbox_off)
{
    if (proto == RCOLL_MSG_INLINE)
        return a->tl->ops->inline_data(a->tl, source, a->seq);
    if (proto == RCOLL_MSG_COPY)
        return (const unsigned char *)a->tl->ops->inbox(a->tl, a->seq) + inbox_off;
    if (proto == RCOLL_MSG_COPY_SMALL)
        return (const unsigned char *)a->tl->ops->small_inbox(a->tl, a->seq) + inbox_off;
    return NULL;
}

void rcoll_msg_copy_out(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto, size_t inbox_off,
                        void *dst, size_t len)
{
    const unsigned char *from = rcoll_msg_data(a, source, proto, inbox_off);
    if (from && len)
        memcpy(dst, from, len);
}

bool rcoll_msg_recv_test(rcoll_args_t *a, int source, unsigned step, rcoll_msg_proto_t proto,
                         size_t inbox_off, void *dst, size_t len, size_t *done)
{
    rcoll_event_t ev = rcoll_ev_signal(source, a->seq, step);
    if (proto == RCOLL_MSG_COPY) {
        if (!a->tl->ops->copy_arrived(a->tl, source, a->seq, step, dst, len, inbox_off, done))
            return false;
    } else {
        if (!a->tl->ops->test(a->tl, &ev))
            return false;
        rcoll_msg_copy_out(a, source, proto, inbox_off, dst, len);
    }
    rcoll_check_len(a, &ev, len);
    return true;
}

rcoll_status_t rcoll_msg_recv(rcoll_args_t *a, int source, unsigned step, rcoll_msg_proto_t proto,
                              size_t inbox_off, void *dst, size_t len)
{
    size_t done = 0;
    if (rcoll_msg_recv_test(a, source, step, proto, inbox_off, dst, len, &done))
        return RCOLL_OK;
    rcoll_event_t ev = rcoll_ev_signal(source, a->seq, step);
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, a->tl->wait);
    while (!rcoll_msg_recv_test(a, source, step, proto, inbox_off, dst, len, &done)) {
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

rcoll_status_t rcoll_msg_stage_part(rcoll_args_t *a, const void *src, unsigned step, size_t off,
                                    size_t len)
{
    rcoll_status_t st = a->tl->ops->stage(a->tl, a->seq, (const char *)src + off, len, off, a->bytes);
    for (int i = 1; st == RCOLL_OK && i < a->size; i++)
        a->tl->ops->signal(a->tl, (a->rank + i) % a->size, a->seq, step);
    return st;
}

rcoll_status_t rcoll_msg_read_staged(rcoll_args_t *a, int root, void *dst, size_t part)
{
    unsigned step = 0;
    for (size_t off = 0; off < a->bytes; off += part, step++) {
        size_t len = a->bytes - off < part ? a->bytes - off : part;
        rcoll_event_t ev = rcoll_ev_signal(root, a->seq, step);
        rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
        if (st != RCOLL_OK)
            return st;
        if (off == 0) { /* the publication's length is set before its first part */
            rcoll_event_t pub = rcoll_ev_published(root, a->seq);
            rcoll_check_len(a, &pub, a->bytes);
        }
        if ((st = a->tl->ops->get(a->tl, root, a->seq, (char *)dst + off, len, off)) != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}
