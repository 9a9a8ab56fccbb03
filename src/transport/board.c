/* The board of the nonblocking engine (board.h): layout, slots, pair words and the CMA copies.
 *
 * Region: per rank a bell line and a presence line; then slot[P][K] (a head line whose value is
 * the collective the slot holds, with the algorithm's word and tiny data beside it, the rest of
 * the head run for small data, then P descriptors); then area[P][A], the inline areas (A <= K,
 * a call uses area seq % A); then claim[K][P][P] and done[K][P][P] words. A done word holds
 * (seq << 1) | mismatch, mismatch telling that the two ends posted lengths that differ. All pair
 * words of a slot reused K collectives later hold smaller numbers, which every test reads as
 * "not yet".
 *
 * Slots, areas and rows of pair words start 128 bytes apart: processors fetch lines in adjacent
 * pairs, and lines of a pair written by different ranks move between cores as one line would.
 * Slots are many and small (a call whose data fits its head run needs nothing else: a rank may
 * run K calls ahead), inline areas few and large. */
#include "transport/board.h"
#include "transport/copy.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Teams larger than this get no board (its pair words grow as P^2). */
#define BOARD_MAX_RANKS 64
/* What lines that must not share a fetched pair are apart (see above). */
#define BOARD_APART 128u

static size_t apart(size_t n)
{
    return (n + BOARD_APART - 1) & ~(size_t)(BOARD_APART - 1);
}

static size_t slot_bytes_of(int size)
{
    return apart(RCOLL_BOARD_HEAD_RUN + (size_t)size * sizeof(rcoll_board_desc_t));
}

/* An inline area: as configured, but all of them together at most BOARD_INLINE_TOTAL (the
 * same on every rank: it depends on the team size only). */
#define BOARD_INLINE_TOTAL (64u << 20)
static size_t inline_of(int size, unsigned areas, size_t inline_bytes)
{
    size_t cap = BOARD_INLINE_TOTAL / ((size_t)areas * (size_t)size);
    return (inline_bytes < cap ? inline_bytes : cap) & ~(size_t)63;
}

static unsigned pow2_floor(unsigned n)
{
    return n ? 1u << (31 - __builtin_clz(n)) : 0;
}

/* Slots and areas as the board uses them: powers of two, areas at most slots. */
static bool shape_ok(int size, unsigned *slots, unsigned *areas)
{
    *slots = pow2_floor(*slots);
    *areas = pow2_floor(*areas < *slots ? *areas : *slots);
    return size >= 2 && size <= BOARD_MAX_RANKS && *areas >= 1;
}

size_t rcoll_board_bytes(int size, unsigned slots, unsigned areas, size_t inline_bytes)
{
    if (!shape_ok(size, &slots, &areas))
        return 0;
    size_t n = (size_t)size, row = apart(n * sizeof(uint64_t));
    return 2 * n * sizeof(rcoll_line_t) + n * slots * slot_bytes_of(size) +
           n * areas * apart(inline_of(size, areas, inline_bytes)) + 2 * (size_t)slots * n * row;
}

rcoll_board_t *rcoll_board_attach(const rcoll_view_t *v, void *base, unsigned slots, unsigned areas,
                                  size_t inline_bytes, size_t send_inline, bool cma_slow,
                                  const _Atomic uint64_t *stream_min)
{
    if (!rcoll_board_bytes(v->size, slots, areas, inline_bytes) || v->node_count != 1 ||
        !shape_ok(v->size, &slots, &areas))
        return NULL;
    rcoll_board_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->waits = calloc(slots, sizeof *b->waits);
    b->area_user = calloc(areas, sizeof *b->area_user);
    b->unchanged_min = v->cfg->unchanged_min;
    b->demote_max = v->wait && v->wait->crowded ? 0 : v->cfg->demote_max; /* as the node's */
    if (!b->waits || !b->area_user) {
        rcoll_board_detach(b);
        return NULL;
    }
    size_t n = (size_t)v->size;
    b->v = v;
    b->base = base;
    b->stream_min = stream_min;
    b->slots = slots;
    b->slot_mask = slots - 1;
    b->areas = areas;
    b->area_mask = areas - 1;
    b->inline_bytes = inline_of(v->size, areas, inline_bytes);
    b->area_bytes = apart(b->inline_bytes);
    b->cma_slow = cma_slow;
    b->send_inline = send_inline < b->inline_bytes ? send_inline : b->inline_bytes;
    b->rank = v->rank;
    b->size = v->size;
    b->desc_off = RCOLL_BOARD_HEAD_RUN;
    b->slot_bytes = slot_bytes_of(v->size);
    b->off_slots = 2 * n * sizeof(rcoll_line_t);
    b->off_areas = b->off_slots + n * slots * b->slot_bytes;
    b->row_bytes = apart(n * sizeof(uint64_t));
    b->off_claims = b->off_areas + n * areas * b->area_bytes;
    b->off_dones = b->off_claims + (size_t)slots * n * b->row_bytes;
    return b;
}

void rcoll_board_detach(rcoll_board_t *b)
{
    if (b) {
        free(b->waits);
        free(b->area_user);
        free(b->seen);
    }
    free(b);
}

unsigned rcoll_board_slots(const rcoll_board_t *b) { return b->slots; }
unsigned rcoll_board_areas(const rcoll_board_t *b) { return b->areas; }
int rcoll_board_rank(const rcoll_board_t *b) { return b->rank; }
uint64_t rcoll_board_last_seq(const rcoll_board_t *b) { return b->last_seq; }
int rcoll_board_size(const rcoll_board_t *b) { return b->size; }
size_t rcoll_board_inline_bytes(const rcoll_board_t *b) { return b->inline_bytes; }
bool rcoll_board_cma_slow(const rcoll_board_t *b) { return b->cma_slow; }
size_t rcoll_board_send_inline(const rcoll_board_t *b) { return b->send_inline; }

/* Per rank two lines: its bell, then its presence word (written often, so apart from the
 * bell, whose sleeper count every ring reads). */
static rcoll_line_t *bell_of(rcoll_board_t *b, int rank)
{
    return (rcoll_line_t *)(void *)b->base + 2 * rank;
}

rcoll_line_t *rcoll_board_bell(rcoll_board_t *b)
{
    return bell_of(b, b->rank);
}

void rcoll_board_ring(rcoll_board_t *b, int rank)
{
    rcoll_line_ring(bell_of(b, rank));
}

static _Atomic uint32_t *presence(rcoll_board_t *b, int rank)
{
    return (_Atomic uint32_t *)(void *)(bell_of(b, rank) + 1);
}

void rcoll_board_present(rcoll_board_t *b, bool present)
{
    atomic_store_explicit(presence(b, b->rank), present, memory_order_relaxed);
}

bool rcoll_board_is_present(rcoll_board_t *b, int rank)
{
    return atomic_load_explicit(presence(b, rank), memory_order_relaxed) != 0;
}

/* Every pair of `prev` that its post said it waits for is done. */
static bool pairs_done(rcoll_board_t *b, uint64_t prev)
{
    const uint64_t *w = b->waits[rcoll_board_slot_index(b, prev)];
    for (uint64_t in = w[0]; in; in &= in - 1)
        if (!rcoll_board_is_done(b, __builtin_ctzll(in), b->rank, prev))
            return false;
    for (uint64_t out = w[1]; out; out &= out - 1)
        if (!rcoll_board_is_done(b, b->rank, __builtin_ctzll(out), prev))
            return false;
    return true;
}

bool rcoll_board_slot_free(rcoll_board_t *b, uint64_t seq)
{
    return seq <= b->slots || pairs_done(b, seq - b->slots);
}

static size_t area_index(const rcoll_board_t *b, uint64_t seq)
{
    return (size_t)(seq & b->area_mask);
}

uint64_t rcoll_board_area_last(rcoll_board_t *b, uint64_t seq)
{
    return b->area_user[area_index(b, seq)];
}

/* A last user `slots` or more calls back: its slot's reuse (rcoll_board_slot_free, asked for
 * every call) already waited for its pairs. */
bool rcoll_board_area_free(rcoll_board_t *b, uint64_t seq)
{
    uint64_t last = rcoll_board_area_last(b, seq);
    return !last || last + b->slots <= seq || pairs_done(b, last);
}

void rcoll_board_use_area(rcoll_board_t *b, uint64_t seq)
{
    b->area_user[area_index(b, seq)] = seq;
}

uint64_t rcoll_board_waits(rcoll_board_t *b, uint64_t seq, bool out)
{
    return b->waits[rcoll_board_slot_index(b, seq)][out];
}

const void *rcoll_board_local(rcoll_board_t *b, uint64_t seq, uint64_t addr)
{
    if (addr & RCOLL_BOARD_HEAD)
        return rcoll_board_head(b, seq) + (addr & ~RCOLL_BOARD_HELD);
    if (addr & RCOLL_BOARD_INLINE)
        return rcoll_board_inline(b, seq) + (addr & ~RCOLL_BOARD_INLINE);
    return (const void *)(uintptr_t)addr;
}

void rcoll_board_post(rcoll_board_t *b, uint64_t seq, uint32_t word, uint64_t in, uint64_t out)
{
    uint64_t peers = (b->size < 64 ? (1ull << b->size) - 1 : ~0ull) & ~(1ull << b->rank);
    b->waits[rcoll_board_slot_index(b, seq)][0] = in & peers;
    b->waits[rcoll_board_slot_index(b, seq)][1] = out & peers;
    rcoll_line_t *h = rcoll_board_head_at(b, b->rank, seq);
    h->len = word;
    atomic_store_explicit(&h->value, seq, memory_order_release);
    if (seq > b->last_seq)
        b->last_seq = seq;
    /* The done words the next post's rcoll_board_slot_free reads, written by the peers long
     * ago: fetched now, off the next call's path. */
    if (seq + 1 > b->slots)
        for (int p = 0; p < b->size; p++)
            if (p != b->rank) {
                __builtin_prefetch(rcoll_board_done_word(b, b->rank, p, seq + 1 - b->slots), 0, 3);
                __builtin_prefetch(rcoll_board_done_word(b, p, b->rank, seq + 1 - b->slots), 0, 3);
            }
    for (int p = 0; p < b->size; p++)
        if (p != b->rank)
            rcoll_board_ring(b, p);
}

void rcoll_board_done(rcoll_board_t *b, int src, int dst, uint64_t seq, bool mismatch)
{
    atomic_store_explicit(rcoll_board_done_word(b, src, dst, seq), (seq << 1) | (mismatch ? 1u : 0u),
                          memory_order_release);
    if (src != b->rank)
        rcoll_board_ring(b, src);
    if (dst != b->rank)
        rcoll_board_ring(b, dst);
}

/* One CMA transfer of len bytes, continued over partial returns. */
static rcoll_status_t cma(rcoll_board_t *b, int peer, void *local, uint64_t remote, size_t len, bool write)
{
    while (len) {
        struct iovec mine = {local, len}, theirs = {(void *)(uintptr_t)remote, len};
        ssize_t n = write ? process_vm_writev(b->v->pid_of[peer], &mine, 1, &theirs, 1, 0)
                          : process_vm_readv(b->v->pid_of[peer], &mine, 1, &theirs, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return rcoll_view_error(b->v, n < 0 && errno == ESRCH ? RCOLL_ERR_PEER_DEAD : RCOLL_ERR_SYSTEM,
                                    "%s: %s rank %d's memory failed: %s", rcoll_view_coll(b->v, "nonblocking"),
                                    write ? "writing" : "reading", peer,
                                    n < 0 ? strerror(errno) : "nothing copied");
        }
        local = (char *)local + n;
        remote += (uint64_t)n;
        len -= (size_t)n;
    }
    return RCOLL_OK;
}

rcoll_status_t rcoll_board_read(rcoll_board_t *b, int peer, uint64_t seq, void *dst, uint64_t addr, size_t len)
{
    if (!len)
        return RCOLL_OK;
    if (addr & RCOLL_BOARD_HEAD) {
        memcpy(dst, rcoll_board_head_at(b, peer, seq)->payload + (addr & ~RCOLL_BOARD_HELD), len);
        return RCOLL_OK;
    }
    if (addr & RCOLL_BOARD_INLINE) {
        memcpy(dst, rcoll_board_area_at(b, peer, seq) + (addr & ~RCOLL_BOARD_INLINE), len);
        return RCOLL_OK;
    }
    return cma(b, peer, dst, addr, len, false);
}

void rcoll_board_stream_open(rcoll_board_t *b, uint64_t seq)
{
    /* Before the post's release: a reader that sees the post sees 0 or more of this call. The
     * line lies in the head run, where an earlier call's data (up to 1 KB) left its bytes in
     * the sleeper count too: nobody sleeps on it now (the slot's last call is done), and a
     * stale count made every part's post a futex wake (ibcast of 16-64 KB after 1 KB calls:
     * 2-2.5x the blocking call; docs/tuning.md, "Nonblocking collectives"). */
    rcoll_line_t *line = rcoll_board_stream_line(b, b->rank, seq);
    atomic_store_explicit(&line->waiters, 0, memory_order_relaxed);
    atomic_store_explicit(&line->value, 0, memory_order_relaxed);
}

void rcoll_board_fill(rcoll_board_t *b, void *dst, const void *src, size_t len)
{
    /* As the node transport's copies (its store probe; unchanged data not written again) */
    copy_unchanged(&b->seen, b->unchanged_min, dst, src, len,
                   len >= atomic_load_explicit(b->stream_min, memory_order_relaxed), b->demote_max);
}

void rcoll_board_stream_fill(rcoll_board_t *b, uint64_t seq, size_t off, const void *src, size_t len)
{
    /* a streamed block (>= 16 KB): non-temporal unless the node's copies are all plain */
    copy_unchanged(&b->seen, b->unchanged_min, rcoll_board_inline(b, seq) + off, src, len,
                   atomic_load_explicit(b->stream_min, memory_order_relaxed) != UINT64_MAX, 0);
    rcoll_line_post(rcoll_board_stream_line(b, b->rank, seq), off + len);
}

rcoll_status_t rcoll_board_read_stream(rcoll_board_t *b, int peer, uint64_t seq, void *dst,
                                       uint64_t addr, size_t len)
{
    rcoll_line_t *line = rcoll_board_stream_line(b, peer, seq);
    const unsigned char *from = rcoll_board_area_at(b, peer, seq) + (addr & ~RCOLL_BOARD_INLINE);
    size_t at = addr & ~RCOLL_BOARD_INLINE, done = 0;
    rcoll_waiter_t w;
    bool waited = false;
    while (done < len) {
        uint64_t there = atomic_load_explicit(&line->value, memory_order_acquire);
        size_t upto = there > at ? (size_t)(there - at) : 0;
        if (upto > len)
            upto = len;
        if (upto > done) {
            memcpy((unsigned char *)dst + done, from + done, upto - done);
            done = upto;
            continue;
        }
        if (!waited)
            rcoll_waiter_start(&w, b->v->wait);
        waited = true;
        rcoll_status_t st = rcoll_waiter_pause(&w, line, at + done + 1);
        if (st != RCOLL_OK)
            return rcoll_view_error(b->v, st, "%s: rank %d's streamed data stopped after %zu of %zu "
                                    "bytes", rcoll_view_coll(b->v, "nonblocking"), peer, done, len);
    }
    return RCOLL_OK;
}

rcoll_status_t rcoll_board_write(rcoll_board_t *b, int peer, uint64_t addr, const void *src, size_t len)
{
    return len ? cma(b, peer, (void *)(uintptr_t)src, addr, len, true) : RCOLL_OK;
}

bool rcoll_board_gone(rcoll_board_t *b, int rank)
{
    return b->v->process_gone(b->v->owner, rank);
}
