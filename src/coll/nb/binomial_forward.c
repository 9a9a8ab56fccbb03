/* Nonblocking allgather by all-to-all broadcast with forwarding on a binomial topology
 * ("binomial_forward"), [yu-tr04] section 3: every rank's block travels its own binomial tree
 * rooted at its origin, as the paper's "hopping packets"; a rank that holds a block forwards it
 * to its children in that block's tree.
 *
 * On the board: in the tree of origin i, the rank at distance d = (r - i) mod P received the
 * block from distance d - 2^h (2^h the highest bit of d) and forwards it to d + 2^k for every
 * k > h with d + 2^k < P (the origin, d = 0, to every 2^k). The paper's status bit vector is
 * the board's done words of pairs (i -> r): "block i has reached rank r". Progress is
 * one-sided both ways: a holder inside rcoll writes the block into a posted child (CMA), and a
 * rank inside rcoll that lacks a block reads it from its parent in that tree once the parent
 * holds it (the paper's receiver-driven retransmission), so blocks keep hopping while ranks
 * compute. Block i sits at every holder's receive region for i (the origin's own block is in
 * its receive buffer: the entry point put it there).
 * Bytes: each block crosses P-1 times in all, as with direct exchange, but a rank writes or
 * reads up to P-1 blocks per tree level instead of all at once; steps: log2 P hops per block.
 * A rank completes once every block has reached every rank (nobody reads its buffer any more).
 * Measured against "pairs" in docs/tuning.md ("Nonblocking collectives"). */
#include "coll/nb/nb.h"
#include "core/team.h"

static bool allgather_only(rcoll_coll_t coll)
{
    return coll == RCOLL_COLL_ALLGATHER;
}

static rcoll_status_t forward_start(struct rcoll_request *r, rcoll_board_t *b)
{
    int size = r->args.size, me = r->args.rank;
    rcoll_board_desc_t *d = rcoll_board_descs(b, r->seq);
    for (int p = 0; p < size; p++) {
        rcoll_nb_regions(r, p, &d[p].send, &d[p].recv);
        if (p == me) { /* where my own block sits, for the readers of my children */
            rcoll_region_t s, g;
            rcoll_nb_regions(r, (me + 1) % size, &s, &g);
            d[p].recv = s;
            d[p].send.addr = d[p].send.len = 0;
        }
    }
    rcoll_board_post(b, r->seq, 0, ~0ull, ~0ull);
    return RCOLL_OK;
}

static int highest_bit(int d)
{
    int h = 0;
    while ((2 << h) <= d)
        h++;
    return h;
}

/* Rank r holds block i (its own, or delivered). */
static bool holds(rcoll_board_t *b, int i, int r, uint64_t seq)
{
    return i == r || rcoll_board_is_done(b, i, r, seq);
}

/* Copies block i from `from` to `to`, one of them me, claimed. */
static rcoll_status_t hop(rcoll_board_t *b, uint64_t seq, int i, int from, int to, int me)
{
    const rcoll_board_desc_t *fd = from == me ? rcoll_board_descs(b, seq) : rcoll_board_peer(b, from, seq);
    const rcoll_board_desc_t *td = to == me ? rcoll_board_descs(b, seq) : rcoll_board_peer(b, to, seq);
    if (!fd || !td) { /* cannot happen while the pair is not done: give the claim back by moving nothing */
        rcoll_board_done(b, i, to, seq, true);
        return RCOLL_ERR_TRUNCATE;
    }
    const rcoll_region_t *src = &fd[i].recv, *dst = &td[i].recv;
    size_t len = src->len < dst->len ? src->len : dst->len;
    rcoll_status_t st = to == me ? rcoll_board_read(b, from, seq, (void *)(uintptr_t)dst->addr, src->addr, len)
                                 : rcoll_board_write(b, to, dst->addr, (const void *)(uintptr_t)src->addr, len);
    rcoll_board_done(b, i, to, seq, src->len != dst->len);
    return st;
}

static void keep(rcoll_status_t *st, rcoll_status_t e)
{
    if (*st == RCOLL_OK && e != RCOLL_OK)
        *st = e;
}

static bool forward_progress(struct rcoll_request *r, rcoll_board_t *b, rcoll_status_t *st)
{
    int size = r->args.size, me = r->args.rank;
    uint64_t seq = r->seq;
    for (int i = 0; i < size; i++) {
        int d = (me - i + size) % size;
        if (holds(b, i, me, seq)) { /* forward to my children in i's tree */
            int k = d ? highest_bit(d) + 1 : 0;
            for (; d + (1 << k) < size; k++) {
                int c = (i + d + (1 << k)) % size;
                if (!rcoll_board_is_done(b, i, c, seq) && rcoll_board_peer(b, c, seq) &&
                    rcoll_board_claim(b, i, c, seq))
                    keep(st, hop(b, seq, i, me, c, me));
            }
        } else { /* pull it from my parent once the parent holds it */
            int parent = (i + d - (1 << highest_bit(d))) % size;
            if (rcoll_board_peer(b, parent, seq) && holds(b, i, parent, seq) &&
                rcoll_board_claim(b, i, me, seq))
                keep(st, hop(b, seq, i, parent, me, me));
        }
    }
    for (int i = 0; i < size; i++)
        for (int c = 0; c < size; c++)
            if (c != i && !rcoll_board_is_done(b, i, c, seq))
                return false;
    for (int i = 0; i < size && *st == RCOLL_OK; i++)
        if (i != me && rcoll_board_mismatch(b, i, me, seq))
            *st = RCOLL_ERR_TRUNCATE;
    return true;
}

const rcoll_nb_algo_t rcoll_nb_binomial_forward = {
    .name = "binomial_forward",
    .summary = "[yu-tr04] all-to-all broadcast by forwarding: every block hops down its own binomial "
               "tree, tracked by per-pair done words (the bit vector), pushed by holders or pulled "
               "from the parent",
    .applies = allgather_only,
    .start = forward_start,
    .progress = forward_progress,
};
