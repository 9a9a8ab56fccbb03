/* Scatterv Direct-read: the root publishes the small blocks once, behind a table of where each
 * one ends, and leaves; every rank reads its entry and its block. Larger blocks go as in direct.
 * Paper: [qian-phd] (Qian), 3.4.1 Direct scatter, turned around as in the shared-memory
 * collectives of chapter 6 (a buffer written once, read by all), as scatter's direct_read, for
 * counts that differ by rank. A rank knows only its own count, so the root says where each block
 * is: its publication is a table of P 32-bit words (rank r's word: where its block ends in the
 * data that follows, or a flag that its block is sent to it instead) and then the packed blocks
 * of at most SCATTERV_PACK_MAX bytes.
 * Steps: one.
 *   Root: copies the table and the small blocks once into its outbox (inline in its published
 *   line when they fit 48 B), raises one word, then sends the larger blocks as direct does
 *   (into the rank's inbox, or single copy: read by the rank, or written in arrival order).
 *   Where every block is of at most 48 B but the table and blocks together are more, none is
 *   packed: each goes inline in its rank's signal line as in direct (see pack_max). Teams of
 *   up to 12 ranks, so that the table alone always fits the line.
 *   Rank r (count > 0): waits for the word, reads words r-1 and r of the table; a packed block
 *   it copies out, a sent one it receives as in direct. A table that disagrees with its count (an
 *   erroneous program) is noted and nothing past its count is written.
 * Bytes per rank: its count, read once (plus 8 bytes of the table); the root copies the packed
 * blocks in once.
 * When it wins: ranks that share cores, with the root changing from call to call: the root no
 * longer waits for every receiver's inbox slot to be free (it waits only for the readers of its
 * own last publication in the slot, P calls back), and leaves after one copy.
 * docs/tuning.md, "Back-to-back rooted calls". */
#include "coll/xfer.h"

#include <stdint.h>
#include <string.h>

/* Blocks up to this size are packed into the publication (scatter's direct_read range where
 * ranks share cores; docs/tuning.md). */
#define SCATTERV_PACK_MAX 512u
#define SENT_FLAG 0x80000000u /* a table word: this rank's block is sent to it, not packed */

static size_t table_bytes(const rcoll_args_t *a)
{
    return (size_t)a->size * sizeof(uint32_t);
}

/* What the root may publish: the outbox, and offsets below the flag bit. */
static size_t publication_max(const rcoll_args_t *a)
{
    return a->tl->inbox_bytes < SENT_FLAG ? a->tl->inbox_bytes : SENT_FLAG - 1;
}

static rcoll_status_t scatterv_direct_read_prepare(rcoll_args_t *a)
{
    if (a->rank != a->root)
        return RCOLL_OK;
    gs_vblock_prepare(a);
    size_t most = table_bytes(a) + (size_t)(a->size - 1) * SCATTERV_PACK_MAX;
    size_t max = publication_max(a);
    a->tmp = rcoll_team_tmp(a->team, RCOLL_TMP_ALGO, most < max ? most : max);
    return a->tmp ? RCOLL_OK : RCOLL_ERR_NOMEM;
}

/* Blocks that all travel inline but would not fit the published line together are sent as
 * direct sends them (inline in each rank's signal line): packed, they would take a box, and a
 * root sending back to back could then run only 2 calls ahead (the boxes) instead of
 * RCOLL_DEPTH (np=4, fixed root, 16-32 B: 4.3-5.6x native packed, 1.0-1.1x sent). */
static size_t pack_max(const rcoll_args_t *a)
{
    size_t sum = 0;
    for (int r = 0; r < a->size; r++) {
        size_t c = r == a->root ? 0 : a->scounts[r];
        if (c > RCOLL_INLINE_MAX)
            return SCATTERV_PACK_MAX;
        sum += c;
    }
    return table_bytes(a) + sum <= RCOLL_INLINE_MAX ? RCOLL_INLINE_MAX : 0;
}

static rcoll_status_t root_side(rcoll_args_t *a)
{
    uint32_t *table = a->tmp;
    unsigned char *data = (unsigned char *)a->tmp + table_bytes(a);
    size_t room = publication_max(a) - table_bytes(a), end = 0, most = pack_max(a);
    int *pending = a->team->scratch, count = 0;
    for (int r = 0; r < a->size; r++) {
        size_t c = r == a->root ? 0 : a->scounts[r];
        if (r != a->root && c <= most && c <= room - end) {
            memcpy(data + end, (const char *)a->sendbuf + a->sdispls[r], c);
            end += c;
            table[r] = (uint32_t)end;
            continue;
        }
        table[r] = (uint32_t)end | SENT_FLAG;
        if (c)
            pending[count++] = r;
    }
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->tmp, table_bytes(a) + end);
    if (st != RCOLL_OK)
        return st;
    return gs_send_vblocks(a, pending, count);
}

static rcoll_status_t leaf_side(rcoll_args_t *a)
{
    rcoll_event_t ev = rcoll_ev_published(a->root, a->seq);
    rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
    uint32_t words[2] = {0, 0}; /* where the block before mine ends, where mine ends */
    if (st == RCOLL_OK && a->rank == 0)
        st = a->tl->ops->get(a->tl, a->root, a->seq, &words[1], sizeof words[1], 0);
    else if (st == RCOLL_OK)
        st = a->tl->ops->get(a->tl, a->root, a->seq, words, sizeof words,
                             (size_t)(a->rank - 1) * sizeof(uint32_t));
    if (st != RCOLL_OK)
        return st;
    if (words[1] & SENT_FLAG) /* not packed: sent as direct sends it */
        return gs_recv_vblock(a);
    size_t start = words[0] & ~SENT_FLAG, len = words[1] - start;
    if (len != a->bytes) {
        rcoll_team_note_size(a->team, a->root, len, a->bytes);
        len = len < a->bytes ? len : a->bytes;
    }
    return a->tl->ops->get(a->tl, a->root, a->seq, a->recvbuf, len, table_bytes(a) + start);
}

static rcoll_status_t scatterv_direct_read(rcoll_args_t *a)
{
    if (a->rank == a->root)
        return root_side(a);
    return a->bytes ? leaf_side(a) : RCOLL_OK;
}

static const char *scatterv_direct_read_not_for(const rcoll_args_t *a)
{
    if (a->team->node_count > 1)
        return "a team across nodes";
    return table_bytes(a) > RCOLL_INLINE_MAX ? "more than 12 ranks (the table would not fit the "
                                               "published line)" : NULL;
}

const rcoll_algo_t rcoll_scatterv_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_SCATTERV,
    .summary = "[qian-phd] 3.4.1 + ch. 6: the root publishes small blocks behind a table, every rank reads its own",
    .run = scatterv_direct_read,
    .prepare = scatterv_direct_read_prepare,
    .not_for = scatterv_direct_read_not_for,
    .fallback = &rcoll_scatterv_direct,
    .limits = "teams of up to 12 ranks on one node (a table of 4 bytes per rank in the published "
        "line); blocks above 512 bytes, and blocks of up to 48 that do not fit the line with "
        "the table, go as in direct",
};
