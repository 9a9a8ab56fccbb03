/* Pairwise exchange for reduce_scatter_block and reduce_scatter: see reduce_pairwise.h. */
#include "coll/reduce_pairwise.h"

#include "coll/msg.h"

#include <string.h>

/* Block r: its offset and length in the vector. */
static size_t block_off(const rcoll_args_t *a, bool counts, int r)
{
    return counts ? a->rdispls[r] : (size_t)r * a->bytes;
}
static size_t block_len(const rcoll_args_t *a, bool counts, int r)
{
    return counts ? a->rcounts[r] : a->bytes;
}

/* A message of block r's length to (or from) rank r: alike at both ends. */
static rcoll_msg_proto_t proto(const rcoll_args_t *a, size_t len)
{
    return rcoll_msg_proto(a, len, (size_t)(a->size - 1) * len, true);
}

rcoll_status_t rcoll_pairwise_prepare(rcoll_args_t *a, const char *coll, bool counts)
{
    size_t mine = block_len(a, counts, a->rank);
    a->tmp = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, (size_t)a->size * mine, coll);
    if (!a->tmp)
        return RCOLL_ERR_NOMEM;
    a->target = a->tmp;
    a->target_bytes = (size_t)(a->size - 1) * mine;
    return RCOLL_OK;
}

rcoll_status_t rcoll_pairwise_run(rcoll_args_t *a, const char *coll, bool counts)
{
    int P = a->size, me = a->rank;
    size_t mine = block_len(a, counts, me);
    unsigned char *acc = (unsigned char *)a->tmp + (size_t)(P - 1) * mine;
    const unsigned char *cur = (const unsigned char *)a->sendbuf + block_off(a, counts, me);
    for (int s = 1; s < P; s++) {
        int to = (me + s) % P, from = (me - s + P) % P;
        size_t len = block_len(a, counts, to);
        rcoll_status_t st = rcoll_msg_put(a, to, (unsigned)s, proto(a, len),
                                          (const unsigned char *)a->sendbuf + block_off(a, counts, to),
                                          len, (size_t)(s - 1) * len);
        if (st != RCOLL_OK)
            return st;
        rcoll_event_t ev = rcoll_ev_signal(from, a->seq, (unsigned)s);
        if ((st = rcoll_tl_wait(a->tl, &ev)) != RCOLL_OK)
            return st;
        rcoll_check_len(a, &ev, mine);
        size_t at = (size_t)(s - 1) * mine;
        const unsigned char *d = rcoll_msg_data(a, from, proto(a, mine), at);
        if ((st = rcoll_fold2(a, cur, d ? d : (const unsigned char *)a->tmp + at, acc, mine, coll)) != RCOLL_OK)
            return st;
        cur = acc;
    }
    if (mine && cur != a->recvbuf)
        memmove(a->recvbuf, cur, mine);
    return RCOLL_OK;
}

const char *rcoll_pairwise_not_for(const rcoll_args_t *a, bool counts)
{
    if (!rcoll_op_commutative(a->op))
        return "a non-commutative operation (it folds in step order)";
    size_t most = 0; /* alike on every rank: the largest block */
    for (int r = 0; r < (counts ? a->size : 1); r++)
        most = block_len(a, counts, r) > most ? block_len(a, counts, r) : most;
    if ((size_t)a->size * most > RCOLL_REDUCE_SCRATCH)
        return "P times the largest block exceeds RCOLL_REDUCE_SCRATCH";
    return NULL;
}
