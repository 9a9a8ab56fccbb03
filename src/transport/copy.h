/* Copies into memory a peer on this node reads (the node transport's slots, the board's inline
 * areas): plain stores, or non-temporal ones from a size where a peer holds the lines. */
#ifndef RCOLL_TRANSPORT_COPY_H
#define RCOLL_TRANSPORT_COPY_H

#include <stdbool.h>
#include <stdint.h>
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
 * (transport/node.c) turns it off. */
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

#endif
