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

rcoll_msg_proto_t bc_proto(const rcoll_args_t *a, size_t len, int allow_inline)
{
    return rcoll_msg_proto(a, len, a->bytes, allow_inline); /* the inbox mirrors the buffer */
}

rcoll_status_t bc_send(rcoll_args_t *a, int peer, unsigned step, bc_piece_t p, rcoll_msg_proto_t proto)
{
    return rcoll_msg_put(a, peer, step, proto, (const char *)a->recvbuf + p.off, p.len, p.off);
}

void bc_finish_recv(rcoll_args_t *a, int source, bc_piece_t p, rcoll_msg_proto_t proto)
{
    rcoll_msg_copy_out(a, source, proto, p.off, (char *)a->recvbuf + p.off, p.len);
}

bool bc_ready(rcoll_args_t *a, int source, unsigned step)
{
    rcoll_event_t ev = rcoll_ev_signal(source, a->seq, step);
    return a->tl->ops->test(a->tl, &ev);
}

bool bc_can_send(rcoll_args_t *a, int peer, rcoll_msg_proto_t proto)
{
    if (proto != RCOLL_MSG_ZCOPY)
        return true;
    rcoll_event_t ev = rcoll_ev_arrival(peer, a->seq);
    return a->tl->ops->test(a->tl, &ev);
}
