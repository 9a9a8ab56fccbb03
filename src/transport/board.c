/* The board of the nonblocking engine (board.h): layout, slots, pair words and the CMA copies.
 *
 * Region: per rank a bell line and a presence line; then slot[P][K] (a head line whose value is
 * the collective the slot holds, with the algorithm's word and tiny data beside it; P
 * descriptors; the inline area); then claim[K][P][P] and done[K][P][P] words. A done word
 * holds (seq << 1) | mismatch, mismatch telling that the two ends posted lengths that differ.
 * All pair words of a slot reused K collectives later hold smaller numbers, which every test
 * reads as "not yet". */
#include "transport/board.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Teams larger than this get no board (its pair words grow as P^2). */
#define BOARD_MAX_RANKS 64


struct rcoll_board {
    const rcoll_view_t *v;
    unsigned char *base;
    unsigned slots;
    uint64_t slot_mask; /* slots - 1 when a power of two (no division on every access) */
    size_t inline_bytes;
    size_t slot_bytes, desc_off, inline_off;
    size_t off_slots, off_claims, off_dones, row_bytes;
    int rank, size;
    /* Per slot, the peers whose pairs with me its last call moves (bit p: from p to me, and
     * from me to p); pairs outside them carried nothing and are not waited for. */
    uint64_t (*waits)[2];
};

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static size_t slot_bytes_of(int size, size_t inline_bytes)
{
    return sizeof(rcoll_line_t) + align64((size_t)size * sizeof(rcoll_board_desc_t)) + align64(inline_bytes);
}

/* The inline area of a slot: as configured, but all of them together at most
 * BOARD_INLINE_TOTAL (the same on every rank: it depends on the team size only). */
#define BOARD_INLINE_TOTAL (64u << 20)
static size_t inline_of(int size, unsigned slots, size_t inline_bytes)
{
    size_t cap = BOARD_INLINE_TOTAL / ((size_t)slots * (size_t)size);
    return align64(inline_bytes < cap ? inline_bytes : cap);
}

size_t rcoll_board_bytes(int size, unsigned slots, size_t inline_bytes)
{
    if (size < 2 || size > BOARD_MAX_RANKS || slots == 0)
        return 0;
    inline_bytes = inline_of(size, slots, inline_bytes);
    size_t n = (size_t)size;
    return 2 * n * sizeof(rcoll_line_t) + n * slots * slot_bytes_of(size, inline_bytes) +
           2 * (size_t)slots * n * align64(n * sizeof(uint64_t));
}

rcoll_board_t *rcoll_board_attach(const rcoll_view_t *v, void *base, unsigned slots, size_t inline_bytes)
{
    if (!rcoll_board_bytes(v->size, slots, inline_bytes) || v->node_count != 1)
        return NULL;
    rcoll_board_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    inline_bytes = inline_of(v->size, slots, inline_bytes);
    b->waits = calloc(slots, sizeof *b->waits);
    if (!b->waits) {
        free(b);
        return NULL;
    }
    b->v = v;
    b->base = base;
    b->slots = slots;
    b->slot_mask = (slots & (slots - 1)) == 0 ? slots - 1 : 0;
    b->inline_bytes = align64(inline_bytes);
    b->rank = v->rank;
    b->size = v->size;
    b->desc_off = sizeof(rcoll_line_t);
    b->inline_off = b->desc_off + align64((size_t)v->size * sizeof(rcoll_board_desc_t));
    b->slot_bytes = slot_bytes_of(v->size, inline_bytes);
    b->off_slots = 2 * (size_t)v->size * sizeof(rcoll_line_t);
    b->row_bytes = align64((size_t)v->size * sizeof(uint64_t));
    b->off_claims = b->off_slots + (size_t)v->size * slots * b->slot_bytes;
    b->off_dones = b->off_claims + (size_t)slots * (size_t)v->size * b->row_bytes;
    return b;
}

void rcoll_board_detach(rcoll_board_t *b)
{
    if (b)
        free(b->waits);
    free(b);
}

unsigned rcoll_board_slots(const rcoll_board_t *b) { return b->slots; }
int rcoll_board_rank(const rcoll_board_t *b) { return b->rank; }
int rcoll_board_size(const rcoll_board_t *b) { return b->size; }
size_t rcoll_board_inline_bytes(const rcoll_board_t *b) { return b->inline_bytes; }

static size_t slot_index(const rcoll_board_t *b, uint64_t seq)
{
    return (size_t)(b->slot_mask || b->slots == 1 ? seq & b->slot_mask : seq % b->slots);
}

static unsigned char *slot_of(rcoll_board_t *b, int rank, uint64_t seq)
{
    return b->base + b->off_slots + ((size_t)rank * b->slots + slot_index(b, seq)) * b->slot_bytes;
}

static rcoll_line_t *head_of(rcoll_board_t *b, int rank, uint64_t seq)
{
    return (rcoll_line_t *)(void *)slot_of(b, rank, seq);
}

/* One row per (slot, destination), a cache line apart: the pairs into a rank, which it claims
 * and marks itself most of the time, share no line with the pairs into another. Claims and
 * done words in separate rows: a peer reads my done words when it reuses its slot, and my
 * claim (an atomic exchange, which waits for its line) then still finds its line mine. */
static _Atomic uint64_t *word_of(rcoll_board_t *b, size_t off, int src, int dst, uint64_t seq)
{
    size_t k = slot_index(b, seq), n = (size_t)b->size;
    unsigned char *row = b->base + off + (k * n + (size_t)dst) * b->row_bytes;
    return (_Atomic uint64_t *)(void *)row + src;
}

static _Atomic uint64_t *claim_of(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    return word_of(b, b->off_claims, src, dst, seq);
}

static _Atomic uint64_t *done_of(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    return word_of(b, b->off_dones, src, dst, seq);
}

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

bool rcoll_board_is_done(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    return atomic_load_explicit(done_of(b, src, dst, seq), memory_order_acquire) >> 1 >= seq;
}

/* Done with the ends' lengths differing (read after rcoll_board_is_done). */
bool rcoll_board_mismatch(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    uint64_t w = atomic_load_explicit(done_of(b, src, dst, seq), memory_order_acquire);
    return w >> 1 == seq && (w & 1);
}

bool rcoll_board_slot_free(rcoll_board_t *b, uint64_t seq)
{
    if (seq <= b->slots)
        return true;
    uint64_t prev = seq - b->slots;
    const uint64_t *w = b->waits[slot_index(b, seq)];
    for (int p = 0; p < b->size; p++)
        if (((w[0] >> p) & 1 && !rcoll_board_is_done(b, p, b->rank, prev)) ||
            ((w[1] >> p) & 1 && !rcoll_board_is_done(b, b->rank, p, prev)))
            return false;
    return true;
}

uint64_t rcoll_board_waits(rcoll_board_t *b, uint64_t seq, bool out)
{
    return b->waits[slot_index(b, seq)][out];
}

rcoll_board_desc_t *rcoll_board_descs(rcoll_board_t *b, uint64_t seq)
{
    return (rcoll_board_desc_t *)(void *)(slot_of(b, b->rank, seq) + b->desc_off);
}

unsigned char *rcoll_board_inline(rcoll_board_t *b, uint64_t seq)
{
    return slot_of(b, b->rank, seq) + b->inline_off;
}

unsigned char *rcoll_board_head(rcoll_board_t *b, uint64_t seq)
{
    return head_of(b, b->rank, seq)->payload;
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
    b->waits[slot_index(b, seq)][0] = in & ~(1ull << b->rank);
    b->waits[slot_index(b, seq)][1] = out & ~(1ull << b->rank);
    rcoll_line_t *h = head_of(b, b->rank, seq);
    h->len = word;
    atomic_store_explicit(&h->value, seq, memory_order_release);
    /* The done words the next post's rcoll_board_slot_free reads, written by the peers long
     * ago: fetched now, off the next call's path. */
    if (seq + 1 > b->slots)
        for (int p = 0; p < b->size; p++)
            if (p != b->rank) {
                __builtin_prefetch(done_of(b, b->rank, p, seq + 1 - b->slots), 0, 3);
                __builtin_prefetch(done_of(b, p, b->rank, seq + 1 - b->slots), 0, 3);
            }
    for (int p = 0; p < b->size; p++)
        if (p != b->rank)
            rcoll_board_ring(b, p);
}

bool rcoll_board_arrived(rcoll_board_t *b, int peer, uint64_t seq)
{
    return atomic_load_explicit(&head_of(b, peer, seq)->value, memory_order_acquire) >= seq;
}

const rcoll_board_desc_t *rcoll_board_peer(rcoll_board_t *b, int peer, uint64_t seq)
{
    if (atomic_load_explicit(&head_of(b, peer, seq)->value, memory_order_acquire) != seq)
        return NULL;
    return (const rcoll_board_desc_t *)(void *)(slot_of(b, peer, seq) + b->desc_off);
}

const unsigned char *rcoll_board_peer_head(rcoll_board_t *b, int peer, uint64_t seq, uint32_t *word)
{
    rcoll_line_t *h = head_of(b, peer, seq);
    if (atomic_load_explicit(&h->value, memory_order_acquire) != seq)
        return NULL;
    *word = h->len;
    return h->payload;
}

bool rcoll_board_claim(rcoll_board_t *b, int src, int dst, uint64_t seq)
{
    _Atomic uint64_t *w = claim_of(b, src, dst, seq);
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
    while (v < seq)
        if (atomic_compare_exchange_weak_explicit(w, &v, seq, memory_order_acq_rel, memory_order_relaxed))
            return true;
    return false;
}

void rcoll_board_done(rcoll_board_t *b, int src, int dst, uint64_t seq, bool mismatch)
{
    atomic_store_explicit(done_of(b, src, dst, seq), (seq << 1) | (mismatch ? 1u : 0u),
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
        memcpy(dst, head_of(b, peer, seq)->payload + (addr & ~RCOLL_BOARD_HELD), len);
        return RCOLL_OK;
    }
    if (addr & RCOLL_BOARD_INLINE) {
        memcpy(dst, slot_of(b, peer, seq) + b->inline_off + (addr & ~RCOLL_BOARD_INLINE), len);
        return RCOLL_OK;
    }
    return cma(b, peer, dst, addr, len, false);
}

rcoll_status_t rcoll_board_write(rcoll_board_t *b, int peer, uint64_t addr, const void *src, size_t len)
{
    return len ? cma(b, peer, (void *)(uintptr_t)src, addr, len, true) : RCOLL_OK;
}

bool rcoll_board_gone(rcoll_board_t *b, int rank)
{
    return b->v->process_gone(b->v->owner, rank);
}
