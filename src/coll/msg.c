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
    case RCOLL_MSG_ZCOPY:
    default:
        return tl->ops->put_user(tl, peer, a->seq, step, src, len, remote);
    }
}

const unsigned char *rcoll_msg_data(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto,
                                    size_t inbox_off)
{
    if (proto == RCOLL_MSG_INLINE)
        return a->tl->ops->inline_data(a->tl, source, a->seq);
    if (proto == RCOLL_MSG_COPY)
        return (const unsigned char *)a->tl->ops->inbox(a->tl, a->seq) + inbox_off;
    return NULL;
}

void rcoll_msg_copy_out(const rcoll_args_t *a, int source, rcoll_msg_proto_t proto, size_t inbox_off,
                        void *dst, size_t len)
{
    const unsigned char *from = rcoll_msg_data(a, source, proto, inbox_off);
    if (from && len)
        memcpy(dst, from, len);
}
