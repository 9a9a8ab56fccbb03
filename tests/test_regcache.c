/* Registration cache test: three ranks, each its own emulated node (RCOLL_NODE_MAP=0,1,2, all
 * traffic over UCX), allgather forced to direct with a single-copy threshold of 4 KB, so every
 * call registers (or finds in the cache) the receive buffer peers write into. With data
 * checked at every call:
 *  - reuse: the same buffer again and again is registered once, then found (hits);
 *  - unmap then reuse of the same address: munmap, then mmap at that very address, and
 *    free then malloc of a large block (glibc maps and unmaps it): the cache must have dropped
 *    the old registration (invalidations) and register the new memory;
 *  - a bounded cache (RCOLL_REG_CACHE=2) cycling over four buffers evicts (LRU);
 *  - no cache (RCOLL_REG_CACHE=0): one registration per call, no hits. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bootstrap/oob_fork.h"
#include "rcoll/rcoll.h"

#define BLOCK (64 * 1024)
#define NP 3

static int fail(int rank, const char *what, const rcoll_reg_cache_stats_t *s)
{
    fprintf(stderr, "rank %d: %s (hits %llu misses %llu evictions %llu invalidations %llu "
            "registrations %llu entries %u capacity %u hooks %d)\n", rank, what, s->hits, s->misses,
            s->evictions, s->invalidations, s->registrations, s->entries, s->capacity, s->hooks);
    return 1;
}

/* One allgather into recv, checked. */
static int gather_into(rcoll_team_t *team, unsigned char *recv, int rank, int call)
{
    unsigned char send[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        send[i] = (unsigned char)(rank * 31 + call * 7 + i);
    memset(recv, 0xee, (size_t)NP * BLOCK);
    if (rcoll_allgather(team, send, recv, BLOCK) != RCOLL_OK) {
        fprintf(stderr, "rank %d: allgather failed: %s\n", rank, rcoll_team_last_error(team));
        return 1;
    }
    for (int r = 0; r < NP; r++)
        for (int i = 0; i < BLOCK; i++)
            if (recv[(size_t)r * BLOCK + i] != (unsigned char)(r * 31 + call * 7 + i)) {
                fprintf(stderr, "rank %d call %d: block of rank %d wrong at byte %d\n", rank, call, r, i);
                return 1;
            }
    return 0;
}

static int open_team(const rcoll_oob_t *oob, const char *cache, rcoll_context_t **ctx,
                     rcoll_team_t **team)
{
    setenv("RCOLL_REG_CACHE", cache, 1);
    if (rcoll_context_create(ctx) != RCOLL_OK || rcoll_team_create(*ctx, oob, team) != RCOLL_OK)
        return 1;
    return rcoll_team_force_algorithm(*team, RCOLL_COLL_ALLGATHER, "direct") != RCOLL_OK;
}

static int cached(int rank, const rcoll_oob_t *oob)
{
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    rcoll_reg_cache_stats_t s;
    size_t bytes = (size_t)NP * BLOCK;
    if (open_team(oob, "64", &ctx, &team))
        return 1;
    unsigned char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int call = 0, bad = buf == MAP_FAILED;
    for (int i = 0; i < 5 && !bad; i++)
        bad |= gather_into(team, buf, rank, call++);
    rcoll_context_reg_cache_stats(ctx, &s);
    if (!bad && (!s.hooks || s.hits < 4 || s.registrations != 1))
        return fail(rank, "reuse: one registration, then hits", &s);
    /* The same address, new memory. */
    unsigned long long inval = s.invalidations;
    munmap(buf, bytes);
    unsigned char *again = mmap(buf, bytes, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (again != buf)
        return fail(rank, "could not map the same address again", &s);
    bad |= gather_into(team, again, rank, call++);
    rcoll_context_reg_cache_stats(ctx, &s);
    if (!bad && (s.invalidations <= inval || s.registrations != 2))
        return fail(rank, "munmap then mmap at the same address: not re-registered", &s);
    munmap(again, bytes);
    /* free then malloc: large blocks are mapped and unmapped by glibc. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    unsigned char *m = malloc(bytes);
    bad |= !m || gather_into(team, m, rank, call++);
    free(m);
    unsigned char *m2 = malloc(bytes);
    inval = s.invalidations;
    bad |= !m2 || gather_into(team, m2, rank, call++);
    rcoll_context_reg_cache_stats(ctx, &s);
    if (!bad && m2 == m && s.invalidations <= inval)
        return fail(rank, "free then malloc at the same address: not re-registered", &s);
    free(m2);
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return bad;
}

static int bounded(int rank, const rcoll_oob_t *oob)
{
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    rcoll_reg_cache_stats_t s;
    if (open_team(oob, "2", &ctx, &team))
        return 1;
    unsigned char *bufs[4];
    int bad = 0;
    for (int b = 0; b < 4; b++)
        bad |= !(bufs[b] = malloc((size_t)NP * BLOCK));
    for (int i = 0; i < 8 && !bad; i++)
        bad |= gather_into(team, bufs[i % 4], rank, i);
    rcoll_context_reg_cache_stats(ctx, &s);
    if (!bad && (s.capacity != 2 || s.entries > 2 || s.evictions < 6))
        return fail(rank, "bounded cache of 2 over 4 buffers: expected LRU evictions", &s);
    for (int b = 0; b < 4; b++)
        free(bufs[b]);
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return bad;
}

static int uncached(int rank, const rcoll_oob_t *oob)
{
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    rcoll_reg_cache_stats_t s;
    if (open_team(oob, "0", &ctx, &team))
        return 1;
    unsigned char *buf = malloc((size_t)NP * BLOCK);
    int bad = !buf;
    for (int i = 0; i < 4 && !bad; i++)
        bad |= gather_into(team, buf, rank, i);
    rcoll_context_reg_cache_stats(ctx, &s);
    if (!bad && (s.hits != 0 || s.registrations != 4))
        return fail(rank, "no cache: one registration per call", &s);
    free(buf);
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return bad;
}

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)arg;
    return cached(rank, oob) || bounded(rank, oob) || uncached(rank, oob);
}

int main(void)
{
    setenv("RCOLL_NODE_MAP", "0,1,2", 1);
    setenv("RCOLL_ZCOPY_THRESHOLD", "4096", 1);
    setenv("RCOLL_TIMEOUT", "30", 1);
    int bad = rcoll_fork_run(NP, rank_main, NULL, 120);
    printf("%s registration cache: reuse, unmap/free then reuse of the same address, LRU bound, "
           "no cache\n", bad ? "FAIL" : "ok");
    return bad ? 1 : 0;
}
