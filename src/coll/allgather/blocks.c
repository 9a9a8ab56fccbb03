/* Allgather block movement: see blocks.h. */
#include "coll/allgather/blocks.h"

#include <string.h>

ag_ranges_t ag_ring_ranges(int first, int count, int size)
{
    ag_ranges_t r = {0, {0, 0}, {0, 0}};
    if (count <= 0)
        return r;
    first %= size;
    int head = count < size - first ? count : size - first;
    r.first[r.n] = first;
    r.count[r.n++] = head;
    if (count > head) {
        r.first[r.n] = 0;
        r.count[r.n++] = count - head;
    }
    return r;
}

ag_ranges_t ag_one_block(int block)
{
    ag_ranges_t r = {1, {block, 0}, {1, 0}};
    return r;
}

size_t ag_ranges_bytes(const rcoll_args_t *a, const ag_ranges_t *r)
{
    size_t blocks = 0;
    for (int i = 0; i < r->n; i++)
        blocks += (size_t)r->count[i];
    return blocks * a->bytes;
}

rcoll_msg_proto_t ag_proto(const rcoll_args_t *a, size_t bytes, int allow_inline)
{
    /* The inbox mirrors recvbuf: every block at its own place. */
    return rcoll_msg_proto_exchange(a, bytes, (size_t)a->size * a->bytes, allow_inline);
}

static char *block_ptr(const rcoll_args_t *a, int block)
{
    return (char *)a->recvbuf + (size_t)block * a->bytes;
}

static rcoll_status_t send_inline(rcoll_args_t *a, int peer, unsigned step, const ag_ranges_t *r)
{
    unsigned char line[RCOLL_INLINE_MAX];
    size_t len = 0;
    for (int i = 0; i < r->n; i++) {
        size_t n = (size_t)r->count[i] * a->bytes;
        memcpy(line + len, block_ptr(a, r->first[i]), n);
        len += n;
    }
    return rcoll_msg_put(a, peer, step, RCOLL_MSG_INLINE, line, len, 0);
}

rcoll_status_t ag_send(rcoll_args_t *a, int peer, unsigned step, const ag_ranges_t *r,
                       int allow_inline)
{
    rcoll_msg_proto_t proto = ag_proto(a, ag_ranges_bytes(a, r), allow_inline);
    if (proto == RCOLL_MSG_INLINE)
        return send_inline(a, peer, step, r);
    rcoll_status_t st = RCOLL_OK;
    for (int i = 0; st == RCOLL_OK && i < r->n; i++) {
        unsigned s = i == r->n - 1 ? step : RCOLL_NO_SIGNAL;
        size_t off = (size_t)r->first[i] * a->bytes, len = (size_t)r->count[i] * a->bytes;
        st = rcoll_msg_put(a, peer, s, proto, block_ptr(a, r->first[i]), len, off);
    }
    return st;
}

void ag_finish_recv(rcoll_args_t *a, int source, const ag_ranges_t *r, int allow_inline)
{
    rcoll_msg_proto_t proto = ag_proto(a, ag_ranges_bytes(a, r), allow_inline);
    const unsigned char *from = rcoll_msg_data(a, source, proto, 0);
    if (!from)
        return;
    size_t len = 0;
    for (int i = 0; i < r->n; i++) {
        size_t off = (size_t)r->first[i] * a->bytes, n = (size_t)r->count[i] * a->bytes;
        memcpy(block_ptr(a, r->first[i]), proto == RCOLL_MSG_INLINE ? from + len : from + off, n);
        len += n;
    }
}

rcoll_status_t ag_exchange(rcoll_args_t *a, int to, int from, unsigned step, const ag_ranges_t *out,
                           const ag_ranges_t *in, int allow_inline)
{
    rcoll_status_t st = ag_send(a, to, step, out, allow_inline);
    return st == RCOLL_OK ? ag_recv(a, from, step, in, allow_inline) : st;
}

rcoll_status_t ag_recv(rcoll_args_t *a, int source, unsigned step, const ag_ranges_t *r,
                       int allow_inline)
{
    rcoll_event_t ev = rcoll_ev_signal(source, a->seq, step);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st == RCOLL_OK)
        ag_finish_recv(a, source, r, allow_inline);
    return st;
}
