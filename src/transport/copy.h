/* Copies into memory a peer on this node reads (the node transport's slots, the board's inline
 * areas): plain stores, or non-temporal ones from a size where a peer holds the lines. */
#ifndef RCOLL_TRANSPORT_COPY_H
#define RCOLL_TRANSPORT_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Copy into a peer-visible slot. From RCOLL_COPY_STREAM_MIN on with non-temporal stores where
 * the CPU has them (`stream`): a peer read these lines in the last call, and taking each back
 * (read for ownership) made the writer's copy of 64 KB take 28 us instead of 3.3 us on the
 * 2-core test machine. Below, plain stores win: the reader then finds the lines in the writer's
 * cache rather than in memory. A publication staged in parts goes by its whole size: its 8 KB
 * parts in plain stores put reduce 16 KB-1 MB at 1.0-2.0x native in most runs of a sequence.
 * glibc's memcpy switches to such stores by itself only near 1 MB. The sfence orders them
 * before the signal that follows. The switch: docs/tuning.md, "Copies into shared memory";
 * on processors where plain stores are faster (an Intel Xeon), the node's store probe
 * (transport/node.c) turns it off, or moves it to 16 KB where they are faster at 8 KB only. */
#define RCOLL_COPY_STREAM_MIN (8 * 1024)

static inline void copy_stream(void *dst, const void *src, size_t len, bool stream)
{
#if defined(__SSE2__)
    if (stream && len >= 1024) { /* (a few lines: plain stores) */
        unsigned char *d = dst;
        const unsigned char *s = src;
        size_t head = (16 - ((uintptr_t)d & 15)) & 15;
        memcpy(d, s, head);
        d += head, s += head, len -= head;
        for (size_t n = len / 64; n > 0; n--, d += 64, s += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
            _mm_stream_si128((__m128i *)(void *)d, a);
            _mm_stream_si128((__m128i *)(void *)(d + 16), b);
            _mm_stream_si128((__m128i *)(void *)(d + 32), c);
            _mm_stream_si128((__m128i *)(void *)(d + 48), e);
        }
        _mm_sfence();
        memcpy(d, s, len % 64);
        return;
    }
#endif
    (void)stream;
    memcpy(dst, src, len);
}

/* After a copy of at most RCOLL_DEMOTE bytes into lines a peer on this node reads next, the
 * whole lines written (from the first line boundary in it: a partial first line is a signal's
 * own, which its writer still writes) are pushed out of the writer's private caches into the
 * shared last-level cache (CLDEMOTE, a hint: a no-op where the processor lacks it), so the
 * reader's miss on each is served there and not by a snoop into the writer's core. A
 * stand-alone exchange of two processes, data in lines apart from the flag, ns per round:
 * 64 B 230 -> 180, 1 KB 515 -> 425; in rcoll's calls with fresh data it gains up to 2 KB and
 * loses from 4 KB (docs/tuning.md, "Demoted lines"). */
static inline void copy_demote(const void *dst, size_t len, size_t max)
{
#if defined(__x86_64__) || defined(__i386__)
    if (!len || len > max)
        return;
    uintptr_t at = ((uintptr_t)dst + 63) & ~(uintptr_t)63, end = (uintptr_t)dst + len;
    for (; at < end; at += 64)
        __asm__ __volatile__("cldemote (%0)" ::"r"(at) : "memory");
#else
    (void)dst, (void)len, (void)max;
#endif
}

/* Unchanged data is not written again. A copy of at least `min` bytes (0: off) first looks
 * whether the slot already holds what it would write -- a rank that sends the same data to the
 * same place call after call (a benchmark's buffer, a constant table) -- and writes only from
 * the first chunk that differs: lines it does not write stay valid in the cache of the peer
 * that read them the last time, which then reads them again without fetching them from the
 * writer's core. So that changed data pays nothing for the look, the writer keeps, per slot
 * address (a small table of its own, `*seen`, made at the first such copy), the first line it
 * last wrote there: only when the new data begins with that line is the slot itself compared
 * (the memory compare, not this table, decides). docs/tuning.md, "Unchanged data". */
#define RCOLL_SEEN_SLOTS 256
#define RCOLL_SEEN_LINE 64
#define RCOLL_SEEN_CHUNK 1024
typedef struct {
    uintptr_t dst;
    unsigned char head[RCOLL_SEEN_LINE];
} rcoll_copy_seen_t;

static inline void copy_unchanged(rcoll_copy_seen_t **seen, size_t min, void *dst, const void *src,
                                  size_t len, bool stream, size_t demote)
{
    bool look = min && len >= min && len >= RCOLL_SEEN_LINE;
    if (look && !*seen) /* the first such copy (the owner frees the table) */
        *seen = calloc(RCOLL_SEEN_SLOTS, sizeof **seen);
    if (!look || !*seen) {
        copy_stream(dst, src, len, stream);
        copy_demote(dst, len, demote);
        return;
    }
    uintptr_t at = (uintptr_t)dst;
    rcoll_copy_seen_t *e = &(*seen)[((at >> 6) * 0x9E3779B97F4A7C15ull) >> 56]; /* of 256 */
    size_t off = 0;
    if (e->dst == at && !memcmp(e->head, src, RCOLL_SEEN_LINE)) {
        const unsigned char *d = dst, *s = src;
        while (off < len) {
            size_t n = len - off < RCOLL_SEEN_CHUNK ? len - off : RCOLL_SEEN_CHUNK;
            if (memcmp(d + off, s + off, n))
                break;
            off += n;
        }
    } else {
        e->dst = at;
        memcpy(e->head, src, RCOLL_SEEN_LINE);
    }
    if (off < len) {
        copy_stream((unsigned char *)dst + off, (const unsigned char *)src + off, len - off, stream);
        copy_demote((unsigned char *)dst + off, len - off, demote);
    }
}

#endif
