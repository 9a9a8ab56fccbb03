/* Messages of the rooted collectives: see xfer.h. */
#include "coll/xfer.h"

#include <stdint.h>
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
    if (m->proto != RCOLL_MSG_INLINE) /* its receiver takes it as it comes (rcoll_msg_recv) */
        return rcoll_msg_put_parts(m->a, m->peer, step, m->proto, src, len, remote);
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

/* Sweep callback: take what has come of rank r's block (ctx: per rank, the bytes taken). */
static int gs_collect_block(rcoll_args_t *a, void *ctx, int r)
{
    size_t *copied = ctx;
    rcoll_msg_proto_t proto = gs_proto(a, a->bytes, ((size_t)r + 1) * a->bytes);
    return rcoll_msg_recv_test(a, r, 0, proto, proto == RCOLL_MSG_INLINE ? 0 : (size_t)r * a->bytes,
                               (char *)a->recvbuf + (size_t)r * a->bytes, a->bytes, &copied[r]);
}

rcoll_status_t gs_collect(rcoll_args_t *a, int *pending, int count)
{
    size_t *copied = rcoll_team_tmp(a->team, RCOLL_TMP_PARTS, (size_t)a->size * sizeof(size_t));
    if (!copied)
        return RCOLL_ERR_NOMEM;
    memset(copied, 0, (size_t)a->size * sizeof(size_t));
    return rcoll_sweep(a, pending, count, gs_collect_block, gs_block_signal, copied);
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

/* What the root tells a rank that reads its block: where it is in the advertised send buffer,
 * its count, and a word that tells the descriptor from an erroneous call's data. */
typedef struct {
    uint64_t disp, count, tag;
} vblock_desc_t;

static uint64_t vblock_tag(const rcoll_args_t *a)
{
    return a->seq ^ 0x5ca77e2dbeadULL;
}

bool gs_vblock_read(const rcoll_args_t *a, size_t count)
{
    return a->tl->single_copy && a->team->node_count == 1 && gs_proto(a, count, count) == RCOLL_MSG_ZCOPY;
}

/* Root: the extent of its send buffer the readers may read, 0 if no block is read. */
static size_t gs_vblock_read_extent(const rcoll_args_t *a)
{
    size_t end = 0;
    for (int r = 0; r < a->size; r++)
        if (r != a->root && gs_vblock_read(a, a->scounts[r]) && a->sdispls[r] + a->scounts[r] > end)
            end = a->sdispls[r] + a->scounts[r];
    return end;
}

rcoll_status_t gs_vblock_prepare(rcoll_args_t *a)
{
    size_t end = a->rank == a->root ? gs_vblock_read_extent(a) : 0;
    if (end) {
        a->target = (void *)(uintptr_t)a->sendbuf;
        a->target_bytes = end;
    }
    return RCOLL_OK;
}

static rcoll_status_t gs_vblock_tell(rcoll_args_t *a, int r)
{
    vblock_desc_t d = {a->sdispls[r], a->scounts[r], vblock_tag(a)};
    return a->tl->ops->put_inline(a->tl, r, a->seq, 0, &d, sizeof d);
}

static rcoll_event_t gs_vblock_left_event(rcoll_args_t *a, void *ctx, int r);

static int gs_vblock_read_done(rcoll_args_t *a, void *ctx, int r)
{
    rcoll_event_t left = gs_vblock_left_event(a, ctx, r);
    if (!a->tl->ops->test(a->tl, &left))
        return 0;
    rcoll_event_t read = rcoll_ev_signal(r, a->seq, 1); /* raised before it left, if it read */
    if (!a->tl->ops->test(a->tl, &read))
        rcoll_team_note_size(a->team, r, 0, a->scounts[r]);
    return 1;
}

static rcoll_event_t gs_vblock_left_event(rcoll_args_t *a, void *ctx, int r)
{
    (void)ctx;
    return rcoll_ev_left(r, a->seq);
}

rcoll_status_t gs_send_vblocks(rcoll_args_t *a, int *ranks, int n)
{
    int *readers = a->team->scratch + a->size, count = 0, nread = 0;
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (!gs_vblock_read(a, a->scounts[r])) {
            ranks[count++] = r;
            continue;
        }
        rcoll_status_t st = gs_vblock_tell(a, r);
        if (st != RCOLL_OK)
            return st;
        readers[nread++] = r;
    }
    rcoll_status_t st = rcoll_sweep(a, ranks, count, gs_deliver_vblock, gs_arrival_event, NULL);
    if (st == RCOLL_OK)
        st = rcoll_sweep(a, readers, nread, gs_vblock_read_done, gs_vblock_left_event, NULL);
    return st;
}

rcoll_status_t gs_recv_vblock(rcoll_args_t *a)
{
    if (!gs_vblock_read(a, a->bytes))
        return gs_recv_one(a, a->root, gs_proto(a, a->bytes, a->bytes), a->recvbuf, a->bytes);
    rcoll_event_t ev = rcoll_ev_signal(a->root, a->seq, 0);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    if (st != RCOLL_OK)
        return st;
    size_t sent = 0;
    vblock_desc_t d = {0, 0, 0};
    if (a->tl->ops->sent_len(a->tl, &ev, &sent) && sent == sizeof d)
        memcpy(&d, a->tl->ops->inline_data(a->tl, a->root, a->seq), sizeof d);
    if (d.tag != vblock_tag(a)) { /* the root sent its block itself: its count differs */
        rcoll_team_note_size(a->team, a->root, sent, a->bytes);
        return RCOLL_OK;
    }
    if (d.count != a->bytes)
        rcoll_team_note_size(a->team, a->root, d.count, a->bytes);
    size_t len = d.count < a->bytes ? d.count : a->bytes;
    st = a->tl->ops->get_user(a->tl, a->root, a->seq, a->recvbuf, len, d.disp);
    if (st == RCOLL_OK)
        a->tl->ops->signal(a->tl, a->root, a->seq, 1);
    return st;
}

rcoll_status_t gs_recv_one(rcoll_args_t *a, int source, rcoll_msg_proto_t proto, void *dst, size_t bytes)
{
    return rcoll_msg_recv(a, source, 0, proto, 0, dst, bytes);
}
