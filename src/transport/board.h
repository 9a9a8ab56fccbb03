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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "signal/wait.h"
#include "transport/view.h"
#include "rcoll/rcoll.h"

/* An address with this bit is an offset into the owner's inline area of the same slot. */
#define RCOLL_BOARD_INLINE (1ull << 63)
/* An address with this bit is an offset into the owner's slot head: tiny data that travels in
 * the cache line of the arrival itself (RCOLL_BOARD_HEAD_BYTES at most). */
#define RCOLL_BOARD_HEAD (1ull << 62)
#define RCOLL_BOARD_HEAD_BYTES RCOLL_LINE_PAYLOAD
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

/* Bytes of board for a team of `size` ranks (0: no board for such a team). */
size_t rcoll_board_bytes(int size, unsigned slots, size_t inline_bytes);
/* Attaches to the region (mapped at `base` in every local rank; zeroed when created) of a team
 * on one node whose ranks may read and write each other's memory (CMA). */
rcoll_board_t *rcoll_board_attach(const rcoll_view_t *v, void *base, unsigned slots, size_t inline_bytes);
void rcoll_board_detach(rcoll_board_t *b);

unsigned rcoll_board_slots(const rcoll_board_t *b);
int rcoll_board_rank(const rcoll_board_t *b);
int rcoll_board_size(const rcoll_board_t *b);
size_t rcoll_board_inline_bytes(const rcoll_board_t *b);

/* My slot for collective `seq` (numbered from 1): may I write it? (every pair of seq - slots
 * between me and a peer it waits for is done: my peers no longer read it) */
bool rcoll_board_slot_free(rcoll_board_t *b, uint64_t seq);
/* The peers the call in my slot of seq waits for, as posted: bit p for the pairs from p to me
 * (out false) or from me to p (out true). */
uint64_t rcoll_board_waits(rcoll_board_t *b, uint64_t seq, bool out);
/* My slot's descriptors (one per rank, mine unused) and inline area, to fill before post. */
rcoll_board_desc_t *rcoll_board_descs(rcoll_board_t *b, uint64_t seq);
unsigned char *rcoll_board_inline(rcoll_board_t *b, uint64_t seq);
/* My slot head's payload (RCOLL_BOARD_HEAD_BYTES), to fill before post. */
unsigned char *rcoll_board_head(rcoll_board_t *b, uint64_t seq);
/* Raises my arrival for seq, with `word` (the algorithm's: what its head holds) beside it in
 * the same cache line, and rings every peer's bell. `in` and `out`: the peers (bit p) whose
 * pairs from them to me and from me to them carry something in this call, as both ends know;
 * the others are never moved, marked or waited for (a bcast's ranks but the root, say). */
void rcoll_board_post(rcoll_board_t *b, uint64_t seq, uint32_t word, uint64_t in, uint64_t out);
/* The head payload a peer posted with seq and its word (NULL before it posted seq, and once it
 * moved past it). One cache line: a reader learns the arrival and tiny data in one miss. */
const unsigned char *rcoll_board_peer_head(rcoll_board_t *b, int peer, uint64_t seq, uint32_t *word);
/* Peer's descriptors for seq once it posted it (NULL before; also NULL once it moved past it,
 * which it does only after everything of seq involving it is done). */
const rcoll_board_desc_t *rcoll_board_peer(rcoll_board_t *b, int peer, uint64_t seq);
/* Whether the peer has posted seq or a later one. */
bool rcoll_board_arrived(rcoll_board_t *b, int peer, uint64_t seq);

/* Pair (src -> dst) of seq: claim it (true for exactly one caller), mark it moved (rings both
 * bells; `mismatch`: the ends' lengths differ), ask whether it was moved. */
bool rcoll_board_claim(rcoll_board_t *b, int src, int dst, uint64_t seq);
void rcoll_board_done(rcoll_board_t *b, int src, int dst, uint64_t seq, bool mismatch);
bool rcoll_board_is_done(rcoll_board_t *b, int src, int dst, uint64_t seq);
/* Moved, and its mover found that the two ends' lengths differ (an erroneous program). */
bool rcoll_board_mismatch(rcoll_board_t *b, int src, int dst, uint64_t seq);

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
