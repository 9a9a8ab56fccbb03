/* The board: the one-sided meeting place of the nonblocking engine on one node (docs/
 * nonblocking.md). A region of the node transport's shared segment holding, per rank, a ring
 * of request slots; in a slot a rank posts one collective: per peer the region of its memory
 * that goes to that peer and the region that comes from it (addresses in its own process, or
 * in the slot's inline area for small data copied there at post), then raises its arrival.
 * Every (source, destination) pair of a collective has a claim word and a done word: any rank
 * that sees both ends posted may claim the pair and move it by one CMA copy (a read of the
 * source's region or a write into the destination's), so a rank that is computing outside
 * rcoll gets its data from whichever peer comes later. Words hold the collective's number and
 * are tested for "at least", so slots are reused without reset. Every rank has a bell (a
 * waitable line) rung whenever something it may wait for changes.
 *
 * The board knows nothing of collectives, teams or requests: ranks, numbers and regions. */
#ifndef RCOLL_TRANSPORT_BOARD_H
#define RCOLL_TRANSPORT_BOARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "signal/wait.h"
#include "transport/copy.h"
#include "transport/view.h"
#include "rcoll/rcoll.h"

/* An address with this bit is an offset into the owner's inline area of the call. */
#define RCOLL_BOARD_INLINE (1ull << 63)
/* An address with this bit is an offset into the owner's slot head, from its payload on: the
 * head line is the first of a run of RCOLL_BOARD_HEAD_RUN bytes that every slot has, so data of
 * up to RCOLL_BOARD_HEAD_BYTES travels with the arrival (up to RCOLL_LINE_PAYLOAD in the cache
 * line of the arrival itself, one miss for both) and needs no inline area. */
#define RCOLL_BOARD_HEAD (1ull << 62)
#define RCOLL_BOARD_HEAD_RUN 1088u /* 17 lines: a message of 1 KB fits */
#define RCOLL_BOARD_HEAD_BYTES (RCOLL_BOARD_HEAD_RUN - offsetof(rcoll_line_t, payload))
/* Data held on the board (inline area or head) rather than in the owner's buffers. */
#define RCOLL_BOARD_HELD (RCOLL_BOARD_INLINE | RCOLL_BOARD_HEAD)

typedef struct {
    uint64_t addr, len;
} rcoll_region_t;

/* What a rank posts per peer. */
typedef struct {
    rcoll_region_t send; /* mine that goes to the peer */
    rcoll_region_t recv; /* where the peer's data for me goes */
} rcoll_board_desc_t;

typedef struct rcoll_board rcoll_board_t;

/* Visible for the accessors below, which the engine calls many times per collective and the
 * compiler inlines; only board.c writes it. */
struct rcoll_board {
    const rcoll_view_t *v;
    unsigned char *base;
    unsigned slots, areas; /* the ring of calls, of inline areas: powers of two, areas <= slots */
    uint64_t slot_mask, area_mask; /* slots - 1, areas - 1 (powers of two: no division) */
    size_t inline_bytes, area_bytes;
    bool cma_slow; /* rcoll_board_attach's */
    size_t send_inline; /* ... at most inline_bytes */
    size_t slot_bytes, desc_off;
    size_t off_slots, off_areas, off_claims, off_dones, row_bytes;
    int rank, size;
    /* Per slot, the peers whose pairs with me its last call moves (bit p: from p to me, and
     * from me to p); pairs outside them carried nothing and are not waited for. */
    uint64_t (*waits)[2];
    uint64_t *area_user; /* per inline area, the last call that put data in it (0: none) */
    uint64_t last_seq;   /* the last call I posted (0: none) */
    const _Atomic uint64_t *stream_min; /* the node's copies from this size non-temporal */
    rcoll_copy_seen_t *seen; /* what I last wrote where: unchanged data is not written again
                              * (copy_unchanged, RCOLL_UNCHANGED; made at first use) */
    size_t unchanged_min;
    size_t demote_max; /* RCOLL_DEMOTE (copy_demote) */
};

/* ---- layout (board.c describes it) ---- */

static inline size_t rcoll_board_slot_index(const rcoll_board_t *b, uint64_t seq)
{
    return (size_t)(seq & b->slot_mask);
}

static inline unsigned char *rcoll_board_slot_at(rcoll_board_t *b, int rank, uint64_t seq)
{
    return b->base + b->off_slots + ((size_t)rank * b->slots + rcoll_board_slot_index(b, seq)) * b->slot_bytes;
}

/* The inline area of call seq of `rank` (shared by the calls seq + k * areas). */
static inline unsigned char *rcoll_board_area_at(rcoll_board_t *b, int rank, uint64_t seq)
{
    size_t k = (size_t)(seq & b->area_mask);
    return b->base + b->off_areas + ((size_t)rank * b->areas + k) * b->area_bytes;
}

static inline rcoll_line_t *rcoll_board_head_at(rcoll_board_t *b, int rank, uint64_t seq)
{
    return (rcoll_line_t *)(void *)rcoll_board_slot_at(b, rank, seq);
}

/* One row per (slot, destination), 128 bytes apart: the pairs into a rank, which it claims
 * and marks itself most of the time, share no line with the pairs into another. Claims and
 * done words in separate rows: a peer reads my done words when it reuses its slot, and my
 * claim (an atomic exchange, which waits for its line) then still finds its line mine. */
static inline _Atomic uint64_t *rcoll_board_word_at(rcoll_board_t *b, size_t off, int src, int dst, uint64_t seq)
{
    size_t k = rcoll_board_slot_index(b, seq), n = (size_t)b->size;
    unsigned char *row = b->base + off + (k * n + (size_t)dst) * b->row_bytes;
    return (_Atomic uint64_t *)(void *)row + src;
}

static inline _Atomic uint64_t *rcoll_board_claim_word(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    return rcoll_board_word_at(b, b->off_claims, src, dst, seq);
}

static inline _Atomic uint64_t *rcoll_board_done_word(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    return rcoll_board_word_at(b, b->off_dones, src, dst, seq);
}

/* Bytes of board for a team of `size` ranks (0: no board for such a team). Slots and areas
 * are rounded down to powers of two (areas to at most slots). */
size_t rcoll_board_bytes(int size, unsigned slots, unsigned areas, size_t inline_bytes);
/* Attaches to the region (mapped at `base` in every local rank; zeroed when created) of a team
 * on one node whose ranks may read and write each other's memory (CMA); `cma_slow`: a single
 * copy measured slower than two copies through shared memory (transport/cma_probe.c), its
 * inline areas then larger than `send_inline`, the most that a rank which receives nothing in
 * the call puts inline (rcoll_board_send_inline). */
rcoll_board_t *rcoll_board_attach(const rcoll_view_t *v, void *base, unsigned slots, unsigned areas,
                                  size_t inline_bytes, size_t send_inline, bool cma_slow,
                                  const _Atomic uint64_t *stream_min);
void rcoll_board_detach(rcoll_board_t *b);

unsigned rcoll_board_slots(const rcoll_board_t *b);
unsigned rcoll_board_areas(const rcoll_board_t *b);
int rcoll_board_rank(const rcoll_board_t *b);
/* The last call this rank posted (0: none): where a later board on the same region numbers on. */
uint64_t rcoll_board_last_seq(const rcoll_board_t *b);
int rcoll_board_size(const rcoll_board_t *b);
size_t rcoll_board_inline_bytes(const rcoll_board_t *b);
bool rcoll_board_cma_slow(const rcoll_board_t *b);
size_t rcoll_board_send_inline(const rcoll_board_t *b);

/* My slot for collective `seq` (numbered from 1): may I write it? (every pair of seq - slots
 * between me and a peer it waits for is done: my peers no longer read it) */
bool rcoll_board_slot_free(rcoll_board_t *b, uint64_t seq);
/* My inline area of seq, likewise: every pair of the last call that put data in it is done. A
 * call whose data all rides in its head line needs only its slot. */
bool rcoll_board_area_free(rcoll_board_t *b, uint64_t seq);
/* That last call (0: none). */
uint64_t rcoll_board_area_last(rcoll_board_t *b, uint64_t seq);
/* Call seq puts data in my inline area (before writing it; once rcoll_board_area_free). */
void rcoll_board_use_area(rcoll_board_t *b, uint64_t seq);
/* The peers the call in my slot of seq waits for, as posted: bit p for the pairs from p to me
 * (out false) or from me to p (out true). */
uint64_t rcoll_board_waits(rcoll_board_t *b, uint64_t seq, bool out);
/* My slot's descriptors (one per rank, mine unused) and my inline area of seq (once
 * rcoll_board_area_free), to fill before post. */
static inline rcoll_board_desc_t *rcoll_board_descs(rcoll_board_t *b, uint64_t seq)
{
    return (rcoll_board_desc_t *)(void *)(rcoll_board_slot_at(b, b->rank, seq) + b->desc_off);
}
static inline unsigned char *rcoll_board_inline(rcoll_board_t *b, uint64_t seq)
{
    return rcoll_board_area_at(b, b->rank, seq);
}
/* The line that tells how many bytes of a streamed block are there: the one after the head,
 * in the head run (which a streamed call does not use for data). */
static inline rcoll_line_t *rcoll_board_stream_line(rcoll_board_t *b, int rank, uint64_t seq)
{
    return rcoll_board_head_at(b, rank, seq) + 1;
}
/* My slot head's payload (RCOLL_BOARD_HEAD_BYTES), to fill before post. */
static inline unsigned char *rcoll_board_head(rcoll_board_t *b, uint64_t seq)
{
    return rcoll_board_head_at(b, b->rank, seq)->payload;
}
/* Raises my arrival for seq, with `word` (the algorithm's: what its head holds) beside it in
 * the same cache line, and rings every peer's bell. `in` and `out`: the peers (bit p) whose
 * pairs from them to me and from me to them carry something in this call, as both ends know;
 * the others are never moved, marked or waited for (a bcast's ranks but the root, say). */
void rcoll_board_post(rcoll_board_t *b, uint64_t seq, uint32_t word, uint64_t in, uint64_t out);
/* The head payload a peer posted with seq and its word (NULL before it posted seq, and once it
 * moved past it). One cache line: a reader learns the arrival and tiny data in one miss. */
static inline const unsigned char *rcoll_board_peer_head(rcoll_board_t *b, int peer, uint64_t seq,
                                                         uint32_t *word)
{
    rcoll_line_t *h = rcoll_board_head_at(b, peer, seq);
    if (atomic_load_explicit(&h->value, memory_order_acquire) != seq)
        return NULL;
    *word = h->len;
    return h->payload;
}
/* Peer's descriptors for seq once it posted it (NULL before; also NULL once it moved past it,
 * which it does only after everything of seq involving it is done). */
static inline const rcoll_board_desc_t *rcoll_board_peer(rcoll_board_t *b, int peer, uint64_t seq)
{
    if (atomic_load_explicit(&rcoll_board_head_at(b, peer, seq)->value, memory_order_acquire) != seq)
        return NULL;
    return (const rcoll_board_desc_t *)(void *)(rcoll_board_slot_at(b, peer, seq) + b->desc_off);
}
/* Whether the peer has posted seq or a later one. */
static inline bool rcoll_board_arrived(rcoll_board_t *b, int peer, uint64_t seq)
{
    return atomic_load_explicit(&rcoll_board_head_at(b, peer, seq)->value, memory_order_acquire) >= seq;
}

/* Pair (src -> dst) of seq: claim it (true for exactly one caller), mark it moved (rings both
 * bells; `mismatch`: the ends' lengths differ), ask whether it was moved. */
static inline bool rcoll_board_claim(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    _Atomic uint64_t *w = rcoll_board_claim_word(b, src, dst, seq);
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
    while (v < seq)
        if (atomic_compare_exchange_weak_explicit(w, &v, seq, memory_order_acq_rel, memory_order_relaxed))
            return true;
    return false;
}
void rcoll_board_done(rcoll_board_t *b, int src, int dst, uint64_t seq, bool mismatch);
static inline bool rcoll_board_is_done(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    return atomic_load_explicit(rcoll_board_done_word(b, src, dst, seq), memory_order_acquire) >> 1 >= seq;
}
/* Moved, and its mover found that the two ends' lengths differ (an erroneous program). */
static inline bool rcoll_board_mismatch(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    uint64_t w = atomic_load_explicit(rcoll_board_done_word(b, src, dst, seq), memory_order_acquire);
    return w >> 1 == seq && (w & 1);
}

/* Copies my data into my inline area or head run (`dst` there), from 8 KB with non-temporal
 * stores (transport/copy.h): a peer read these lines in an earlier call, and taking each back for writing made a
 * copy of 64 KB take ~30 us instead of ~3 in some runs (transport/copy.h). */
void rcoll_board_fill(rcoll_board_t *b, void *dst, const void *src, size_t len);

/* Streamed data: a call whose one shared block goes to its inline area may copy it there after
 * its post, part by part, each part's end told on the line after its head line (the head run
 * holds no data then); its readers copy each part out as soon as it is there, so a bcast root's
 * copy in overlaps its receivers' copies out instead of preceding them. open: before the post
 * (nothing there yet); fill: copies one part in at `off` and tells it. */
void rcoll_board_stream_open(rcoll_board_t *b, uint64_t seq);
void rcoll_board_stream_fill(rcoll_board_t *b, uint64_t seq, size_t off, const void *src, size_t len);
/* As rcoll_board_read of a peer's streamed inline address: waits (the team's wait policy) for
 * each part it copies out. */
rcoll_status_t rcoll_board_read_stream(rcoll_board_t *b, int peer, uint64_t seq, void *dst,
                                       uint64_t addr, size_t len);

/* Copies between my memory and `peer`'s posted region of seq: an inline or head address reads
 * the peer's slot directly, any other goes by CMA. */
rcoll_status_t rcoll_board_read(rcoll_board_t *b, int peer, uint64_t seq, void *dst, uint64_t addr,
                                size_t len);
rcoll_status_t rcoll_board_write(rcoll_board_t *b, int peer, uint64_t addr, const void *src, size_t len);
/* My own inline or head address `addr` of seq (or a plain one) as a pointer. */
const void *rcoll_board_local(rcoll_board_t *b, uint64_t seq, uint64_t addr);

/* My bell: read its value before looking, then wait on (line, value + 1). */
rcoll_line_t *rcoll_board_bell(rcoll_board_t *b);
void rcoll_board_ring(rcoll_board_t *b, int rank);
/* Whether a rank is waiting inside rcoll on this board now (it moves its own blocks then: a
 * peer leaves them to it, so that present ranks copy in parallel). */
void rcoll_board_present(rcoll_board_t *b, bool present);
bool rcoll_board_is_present(rcoll_board_t *b, int rank);
/* Rank r's process has ended (for waits that must not outlive a dead peer). */
bool rcoll_board_gone(rcoll_board_t *b, int rank);

#endif
