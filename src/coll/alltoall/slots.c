/* Alltoall block movement: see slots.h. */
#include "coll/alltoall/slots.h"

#include <string.h>

rcoll_msg_proto_t a2a_proto(const rcoll_args_t *a, size_t bytes, size_t inbox_need)
{
    return rcoll_msg_proto_exchange(a, bytes, inbox_need, true);
}

static const char *send_block(const rcoll_args_t *a, int block)
{
    return (const char *)a->sendbuf + (size_t)block * a->bytes;
}

static char *recv_block(const rcoll_args_t *a, int block)
{
    return (char *)a->recvbuf + (size_t)block * a->bytes;
}

rcoll_status_t a2a_send_block(rcoll_args_t *a, int peer, rcoll_msg_proto_t proto)
{
    return rcoll_msg_put(a, peer, 0, proto, send_block(a, peer), a->bytes, (size_t)a->rank * a->bytes);
}

void a2a_finish_block(rcoll_args_t *a, int source, rcoll_msg_proto_t proto)
{
    rcoll_msg_copy_out(a, source, proto, (size_t)source * a->bytes, recv_block(a, source), a->bytes);
}

/* ---- one message per pair, in arrival order ---- */

static bool block_ready(a2a_sweep_t *s, int peer, rcoll_event_t *wait)
{
    if (s->proto != RCOLL_MSG_ZCOPY)
        return true;
    *wait = rcoll_ev_arrival(peer, s->a->seq);
    return s->a->tl->ops->test(s->a->tl, wait);
}

static rcoll_status_t block_send(a2a_sweep_t *s, int peer)
{
    return a2a_send_block(s->a, peer, s->proto);
}

static void block_finish(a2a_sweep_t *s, int source)
{
    a2a_finish_block(s->a, source, s->proto);
}

void a2a_sweep_init(a2a_sweep_t *s, rcoll_args_t *a, int window, rcoll_msg_proto_t proto)
{
    memset(s, 0, sizeof *s);
    s->a = a;
    s->window = window;
    s->proto = proto;
    s->out = a->team->scratch;
    s->in = a->team->scratch + a->size;
    memset(s->out, 0, 2 * (size_t)a->size * sizeof *s->out);
    s->ready = block_ready;
    s->send = block_send;
    s->finish = block_finish;
}

void a2a_sweep_start(a2a_sweep_t *s)
{
    int n = s->a->size;
    s->out_left = s->in_left = 0;
    s->out[0] = s->in[0] = 0;
    for (int d = 1; d < n; d++) {
        s->out_left += s->out[d] != 0;
        s->in_left += s->in[d] != 0;
    }
    s->in_first = 1;
    while (s->in_first < n && !s->in[s->in_first])
        s->in_first++;
}

/* Farthest distance a write may go to now. */
static int write_limit(const a2a_sweep_t *s)
{
    int last = s->a->size - 1;
    if (s->window <= 0 || s->in_first - 1 >= last - s->window)
        return last;
    return s->in_first - 1 + s->window;
}

static int sweep_writes(a2a_sweep_t *s, rcoll_event_t *wait, bool *waiting)
{
    int n = s->a->size, limit = write_limit(s), done = 0;
    for (int d = 1; d <= limit && s->out_left; d++) {
        if (!s->out[d])
            continue;
        int peer = (s->a->rank + d) % n;
        rcoll_event_t ev;
        if (!s->ready(s, peer, &ev)) {
            if (!*waiting)
                *wait = ev;
            *waiting = true;
            if (s->in_order)
                break;
            continue;
        }
        rcoll_status_t st = s->send(s, peer);
        if (st != RCOLL_OK)
            return st;
        s->out[d] = 0;
        s->out_left--;
        done++;
    }
    return done;
}

static int sweep_reads(a2a_sweep_t *s, rcoll_event_t *wait, bool *waiting)
{
    int n = s->a->size, done = 0;
    if (s->in_order && s->out_left)
        return 0;
    for (int d = s->in_first; d < n && s->in_left; d++) {
        if (!s->in[d])
            continue;
        int source = (s->a->rank - d + n) % n;
        rcoll_event_t ev = rcoll_ev_signal(source, s->a->seq, 0);
        if (!s->a->tl->ops->test(s->a->tl, &ev)) {
            if (!*waiting)
                *wait = ev;
            *waiting = true;
            if (s->in_order)
                break;
            continue;
        }
        s->finish(s, source);
        s->in[d] = 0;
        s->in_left--;
        done++;
    }
    while (s->in_first < n && !s->in[s->in_first])
        s->in_first++;
    return done;
}

int a2a_sweep_pass(a2a_sweep_t *s, rcoll_event_t *wait)
{
    bool waiting = false;
    int w = sweep_writes(s, wait, &waiting);
    if (w < 0)
        return w;
    int r = sweep_reads(s, wait, &waiting);
    return w + r;
}

rcoll_status_t a2a_sweep_run(a2a_sweep_t *s)
{
    rcoll_args_t *a = s->a;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    while (s->out_left + s->in_left > 0) {
        rcoll_event_t ev;
        int done = a2a_sweep_pass(s, &ev);
        if (done < 0)
            return (rcoll_status_t)done;
        if (done > 0) { /* progress: spin again before giving the core away */
            rcoll_waiter_start(&w, &a->team->wait);
            continue;
        }
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* ---- store-and-forward steps ---- */

#define READY_STEP(step) (2u * (step))
#define DATA_STEP(step) (2u * (step) + 1u)

bool a2a_steps_zcopy(const rcoll_args_t *a, size_t inbox_need)
{
    return rcoll_msg_proto_exchange(a, a->bytes, inbox_need, false) == RCOLL_MSG_ZCOPY;
}

/* Where block b of a transfer is read from; `staged` counts the staged blocks passed. */
static const char *xfer_src(const rcoll_args_t *a, const a2a_xfer_t *x, int b, const char *staging,
                            size_t *staged)
{
    if (x->initial[b] >= 0)
        return send_block(a, x->initial[b]);
    if (staging)
        return staging + (x->staged + (*staged)++) * a->bytes;
    return recv_block(a, x->local[b]);
}

static rcoll_status_t put_run(rcoll_args_t *a, int peer, const char *src, size_t len, size_t dst,
                              bool zcopy, unsigned step)
{
    return rcoll_msg_put(a, peer, step, zcopy ? RCOLL_MSG_ZCOPY : RCOLL_MSG_COPY, src, len, dst);
}

/* Copy-based (into the inbox at send_off) or single copy (into recvbuf at `remote`), blocks
 * merged into one write where both sides are contiguous; the last write signals. */
static rcoll_status_t xfer_send(rcoll_args_t *a, a2a_xfer_t *x, unsigned step, bool zcopy,
                                const char *staging)
{
    size_t m = a->bytes, staged = 0, run_len = 0, run_dst = 0;
    const char *run = NULL;
    for (int b = 0; b < x->n; b++) {
        const char *src = xfer_src(a, x, b, zcopy ? staging : NULL, &staged);
        size_t dst = zcopy ? (size_t)x->remote[b] * m : x->send_off + (size_t)b * m;
        if (run && src == run + run_len && dst == run_dst + run_len) {
            run_len += m;
            continue;
        }
        if (run) {
            rcoll_status_t st = put_run(a, x->to, run, run_len, run_dst, zcopy, RCOLL_NO_SIGNAL);
            if (st != RCOLL_OK)
                return st;
        }
        run = src;
        run_len = m;
        run_dst = dst;
    }
    return put_run(a, x->to, run, run_len, run_dst, zcopy, step);
}

static rcoll_status_t xfer_send_inline(rcoll_args_t *a, a2a_xfer_t *x, unsigned step)
{
    unsigned char line[RCOLL_INLINE_MAX];
    size_t staged = 0;
    for (int b = 0; b < x->n; b++)
        memcpy(line + (size_t)b * a->bytes, xfer_src(a, x, b, NULL, &staged), a->bytes);
    return rcoll_msg_put(a, x->to, step, RCOLL_MSG_INLINE, line, (size_t)x->n * a->bytes, 0);
}

static bool xfer_inline(const rcoll_args_t *a, const a2a_xfer_t *x)
{
    return (size_t)x->n * a->bytes <= RCOLL_INLINE_MAX;
}

static void xfer_copy_out(rcoll_args_t *a, const a2a_xfer_t *x)
{
    const unsigned char *from = rcoll_msg_data(a, x->from, xfer_inline(a, x) ? RCOLL_MSG_INLINE
                                                                             : RCOLL_MSG_COPY,
                                               x->recv_off);
    for (int b = 0; b < x->n; b++)
        memcpy(recv_block(a, x->local[b]), from + (size_t)b * a->bytes, a->bytes);
}

/* Single copy: keep what peers will overwrite, then tell the writers they may go ahead. */
static void stage_and_signal_ready(rcoll_args_t *a, a2a_xfer_t *x, int nx, unsigned step,
                                   char *staging)
{
    size_t staged = 0;
    for (int i = 0; i < nx; i++) {
        x[i].staged = staged;
        for (int b = 0; b < x[i].n; b++)
            if (x[i].initial[b] < 0)
                memcpy(staging + (staged++) * a->bytes, recv_block(a, x[i].local[b]), a->bytes);
    }
    for (int i = 0; i < nx; i++)
        a->tl->ops->signal(a->tl, x[i].from, a->seq, READY_STEP(step));
}

/* One pass: sends whose receiver is ready (single copy), messages that came in. */
static int step_pass(rcoll_args_t *a, a2a_xfer_t *x, int nx, unsigned step, bool zcopy,
                     const char *staging, rcoll_event_t *wait)
{
    const rcoll_tl_ops_t *ops = a->tl->ops;
    int done = 0;
    bool waiting = false;
    for (int i = 0; i < nx; i++) {
        if (x[i].sent)
            continue;
        rcoll_event_t ev = rcoll_ev_signal(x[i].to, a->seq, READY_STEP(step));
        if (!ops->test(a->tl, &ev)) {
            if (!waiting)
                *wait = ev;
            waiting = true;
            continue;
        }
        rcoll_status_t st = xfer_send(a, &x[i], DATA_STEP(step), true, staging);
        if (st != RCOLL_OK)
            return st;
        x[i].sent = true;
        done++;
    }
    for (int i = 0; i < nx; i++) {
        if (x[i].received)
            continue;
        rcoll_event_t ev = rcoll_ev_signal(x[i].from, a->seq, DATA_STEP(step));
        if (!ops->test(a->tl, &ev)) {
            if (!waiting)
                *wait = ev;
            waiting = true;
            continue;
        }
        if (!zcopy)
            xfer_copy_out(a, &x[i]);
        x[i].received = true;
        done++;
    }
    return done;
}

rcoll_status_t a2a_step(rcoll_args_t *a, unsigned step, a2a_xfer_t *x, int nx, bool zcopy,
                        void *staging)
{
    int left = 2 * nx;
    for (int i = 0; i < nx; i++)
        x[i].sent = x[i].received = false;
    if (zcopy) {
        stage_and_signal_ready(a, x, nx, step, staging);
    } else {
        for (int i = 0; i < nx; i++) {
            rcoll_status_t st = xfer_inline(a, &x[i]) ? xfer_send_inline(a, &x[i], DATA_STEP(step))
                                    : xfer_send(a, &x[i], DATA_STEP(step), false, NULL);
            if (st != RCOLL_OK)
                return st;
            x[i].sent = true;
            left--;
        }
    }
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    while (left > 0) {
        rcoll_event_t ev;
        int done = step_pass(a, x, nx, step, zcopy, staging, &ev);
        if (done < 0)
            return (rcoll_status_t)done;
        left -= done;
        if (done > 0) {
            rcoll_waiter_start(&w, &a->team->wait);
            continue;
        }
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}
