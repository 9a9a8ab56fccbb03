/* Bcast trees, pieces and byte-range movement: see tree.h. */
#include "coll/bcast/tree.h"

#include <string.h>

int bc_knomial_parent(int vrank, int radix, int size)
{
    for (long m = 1; m < size; m *= radix) {
        long digit = (vrank / m) % radix;
        if (digit)
            return (int)(vrank - digit * m);
    }
    return -1;
}

/* k^l of v's lowest non-zero digit; for the root, the smallest power of k >= size. */
static long lowest_digit_mask(int vrank, int radix, int size)
{
    long m = 1;
    if (vrank == 0) {
        while (m < size)
            m *= radix;
        return m;
    }
    while ((vrank / m) % radix == 0)
        m *= radix;
    return m;
}

int bc_knomial_children(int vrank, int radix, int size, int *out)
{
    int n = 0;
    for (long m = lowest_digit_mask(vrank, radix, size) / radix; m >= 1; m /= radix)
        for (int j = 1; j < radix; j++) {
            long c = vrank + j * m;
            if (c >= size)
                break;
            out[n++] = (int)c;
        }
    return n;
}

bc_piece_t bc_piece(size_t bytes, int size, int i)
{
    size_t each = (bytes + (size_t)size - 1) / (size_t)size;
    if (each > 64)
        each = (each + 63) & ~(size_t)63;
    bc_piece_t p;
    p.off = (size_t)i * each < bytes ? (size_t)i * each : bytes;
    p.len = bytes - p.off < each ? bytes - p.off : each;
    return p;
}

bc_proto_t bc_proto(const rcoll_args_t *a, size_t len, int allow_inline)
{
    if (allow_inline && len <= RCOLL_INLINE_MAX)
        return BC_INLINE;
    if (len < a->tl->zcopy_threshold && a->bytes <= a->tl->inbox_bytes)
        return BC_COPY;
    return BC_ZCOPY;
}

rcoll_status_t bc_send(rcoll_args_t *a, int peer, unsigned step, bc_piece_t p, bc_proto_t proto)
{
    const char *src = (const char *)a->recvbuf + p.off;
    switch (proto) {
    case BC_INLINE:
        return a->tl->ops->put_inline(a->tl, peer, a->seq, step, src, p.len);
    case BC_COPY:
        return a->tl->ops->put(a->tl, peer, a->seq, step, src, p.len, p.off);
    case BC_ZCOPY:
    default:
        return a->tl->ops->put_user(a->tl, peer, a->seq, step, src, p.len, p.off);
    }
}

void bc_finish_recv(rcoll_args_t *a, int source, bc_piece_t p, bc_proto_t proto)
{
    char *dst = (char *)a->recvbuf + p.off;
    if (proto == BC_INLINE)
        memcpy(dst, a->tl->ops->inline_data(a->tl, source, a->seq), p.len);
    else if (proto == BC_COPY)
        memcpy(dst, (const char *)a->tl->ops->inbox(a->tl, a->seq) + p.off, p.len);
}

bool bc_ready(rcoll_args_t *a, int source, unsigned step)
{
    rcoll_event_t ev = rcoll_ev_signal(source, a->seq, step);
    return a->tl->ops->test(a->tl, &ev);
}

bool bc_can_send(rcoll_args_t *a, int peer, bc_proto_t proto)
{
    if (proto != BC_ZCOPY)
        return true;
    rcoll_event_t ev = rcoll_ev_arrival(peer, a->seq);
    return a->tl->ops->test(a->tl, &ev);
}
