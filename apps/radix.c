/* radix: parallel LSD radix sort of 32-bit keys, the RADIX application of seed 001 (PAP-aware
 * MPI_Allgather, section 6.5.3: allgathers of about 4 KB). Rank r holds n + r % 3 keys
 * (seeded pseudo-random; -k sets n, default 65536) and keeps that many through the sort. Each
 * pass over a digit of D bits (-d, default 10: 4 passes of 2^10 buckets):
 *   1. a local histogram of the digit (2^D ints, 4 KB at D=10);
 *   2. MPI_Allgather of the histograms (every rank then knows where every key goes);
 *   3. each key's global position: buckets in order, within a bucket the ranks in order, then
 *      the rank's own order (stable), and the rank owning that position;
 *   4. MPI_Alltoall of the key counts for each rank, then MPI_Alltoallv of the keys;
 *   5. the received keys put in place from the histograms.
 * A sort is repeated ITERS times (-i, default 250; each iteration sorts fresh keys), plus one
 * warm-up. Check after every sort: each rank's keys ascending, the last key of rank r not above
 * the first of rank r+1 (point-to-point), and the multiset kept: count, sum, xor and sum of
 * squares of all keys (mod 2^64) as before the sort.
 * Usage: radix [-k KEYS_PER_RANK] [-d DIGIT_BITS] [-i ITERS]; rank 0 prints one JSON line. */
#include "app_common.h"

#include <getopt.h>
#include <string.h>

static const char usage[] = "radix [-k KEYS_PER_RANK (default 65536)] [-d DIGIT_BITS 1..16 "
                            "(default 10)] [-i ITERS (default 250)]";

struct sorter {
    int p, rank, bits, nb;     /* ranks, digit bits, buckets */
    long n;                    /* keys on this rank */
    long *start;               /* global position of each rank's first key (p + 1 entries) */
    int *hist, *allhist;       /* nb; p x nb */
    int *scount, *sdispl, *rcount, *rdispl; /* p each */
    uint32_t *keys, *tmp, *recv;
};

static long keys_of(long n, int r) { return n + r % 3; }

static struct sorter make_sorter(long n, int bits)
{
    struct sorter s = { .p = app_size(), .rank = app_rank(), .bits = bits, .nb = 1 << bits };
    s.n = keys_of(n, s.rank);
    s.start = app_alloc(sizeof(long) * (s.p + 1));
    s.start[0] = 0;
    for (int r = 0; r < s.p; r++)
        s.start[r + 1] = s.start[r] + keys_of(n, r);
    s.hist = app_alloc(sizeof(int) * s.nb);
    s.allhist = app_alloc(sizeof(int) * s.nb * s.p);
    s.scount = app_alloc(sizeof(int) * s.p);
    s.sdispl = app_alloc(sizeof(int) * s.p);
    s.rcount = app_alloc(sizeof(int) * s.p);
    s.rdispl = app_alloc(sizeof(int) * s.p);
    s.keys = app_alloc(sizeof(uint32_t) * s.n);
    s.tmp = app_alloc(sizeof(uint32_t) * s.n);
    s.recv = app_alloc(sizeof(uint32_t) * s.n);
    return s;
}

static void free_sorter(struct sorter *s)
{
    free(s->start);
    free(s->hist);
    free(s->allhist);
    free(s->scount);
    free(s->sdispl);
    free(s->rcount);
    free(s->rdispl);
    free(s->keys);
    free(s->tmp);
    free(s->recv);
}

static void fill_keys(struct sorter *s, long iter)
{
    uint64_t seed = app_mix((uint64_t)iter * 7919 + 17);
    for (long i = 0; i < s->n; i++)
        s->keys[i] = (uint32_t)(app_mix(seed ^ (uint64_t)(s->start[s->rank] + i)) >> 32);
}

static unsigned digit(uint32_t key, int shift, int nb) { return (key >> shift) & (nb - 1); }

/* The rank owning global position g. */
static int owner(const struct sorter *s, long g, int from)
{
    while (from + 1 < s->p && s->start[from + 1] <= g)
        from++;
    return from;
}

/* Global position of the first key of (bucket b, rank r): all smaller buckets, then bucket b
 * of the lower ranks. Computed for every (b, r) at once into base (nb x p, bucket-major). */
static void bucket_bases(const struct sorter *s, long *base)
{
    long at = 0;
    for (int b = 0; b < s->nb; b++)
        for (int r = 0; r < s->p; r++) {
            base[(long)b * s->p + r] = at;
            at += s->allhist[(long)r * s->nb + b];
        }
}

/* Local stable counting sort by the digit into tmp, and the counts for every destination. */
static void local_pass(struct sorter *s, int shift, const long *base)
{
    long *at = app_alloc(sizeof(long) * s->nb);
    long pos = 0;
    for (int b = 0; b < s->nb; b++) {
        at[b] = pos;
        pos += s->hist[b];
    }
    for (long i = 0; i < s->n; i++)
        s->tmp[at[digit(s->keys[i], shift, s->nb)]++] = s->keys[i];
    memset(s->scount, 0, sizeof(int) * s->p);
    int dest = 0;
    for (int b = 0; b < s->nb; b++) {
        long g = base[(long)b * s->p + s->rank], end = g + s->hist[b];
        while (g < end) { /* this bucket's global range, split over the ranks owning it */
            dest = owner(s, g, g < s->start[dest] ? 0 : dest);
            long upto = s->start[dest + 1] < end ? s->start[dest + 1] : end;
            s->scount[dest] += (int)(upto - g);
            g = upto;
        }
    }
    s->sdispl[0] = 0;
    for (int r = 1; r < s->p; r++)
        s->sdispl[r] = s->sdispl[r - 1] + s->scount[r - 1];
    free(at);
}

/* Received keys (grouped by source, each in its bucket order) to their global positions. */
static void place_received(struct sorter *s, const long *base)
{
    long lo = s->start[s->rank], hi = s->start[s->rank + 1];
    for (int src = 0; src < s->p; src++) {
        const uint32_t *in = s->recv + s->rdispl[src];
        for (int b = 0; b < s->nb; b++) {
            long g = base[(long)b * s->p + src], end = g + s->allhist[(long)src * s->nb + b];
            long from = g > lo ? g : lo, to = end < hi ? end : hi;
            for (long x = from; x < to; x++)
                s->keys[x - lo] = *in++;
        }
    }
}

static void pass(struct sorter *s, int shift, long *base)
{
    memset(s->hist, 0, sizeof(int) * s->nb);
    for (long i = 0; i < s->n; i++)
        s->hist[digit(s->keys[i], shift, s->nb)]++;
    APP_COLL(MPI_Allgather(s->hist, s->nb, MPI_INT, s->allhist, s->nb, MPI_INT, MPI_COMM_WORLD));
    bucket_bases(s, base);
    local_pass(s, shift, base);
    APP_COLL(MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, MPI_COMM_WORLD));
    s->rdispl[0] = 0;
    for (int r = 1; r < s->p; r++)
        s->rdispl[r] = s->rdispl[r - 1] + s->rcount[r - 1];
    APP_COLL(MPI_Alltoallv(s->tmp, s->scount, s->sdispl, MPI_UINT32_T, s->recv, s->rcount,
                           s->rdispl, MPI_UINT32_T, MPI_COMM_WORLD));
    place_received(s, base);
}

static void sort(struct sorter *s)
{
    long *base = app_alloc(sizeof(long) * s->nb * s->p);
    for (int shift = 0; shift < 32; shift += s->bits)
        pass(s, shift, base);
    free(base);
}

/* count, sum, xor, sum of squares of all keys on all ranks (PMPI_Allreduce: not under test) */
static void fingerprint(const struct sorter *s, uint64_t out[4])
{
    uint64_t mine[4] = { (uint64_t)s->n, 0, 0, 0 };
    for (long i = 0; i < s->n; i++) {
        mine[1] += s->keys[i];
        mine[2] ^= s->keys[i];
        mine[3] += (uint64_t)s->keys[i] * s->keys[i];
    }
    PMPI_Allreduce(mine, out, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(mine + 2, out + 2, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    PMPI_Allreduce(mine + 3, out + 3, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

static int check(const struct sorter *s, const uint64_t before[4], long iter)
{
    for (long i = 1; i < s->n; i++)
        if (s->keys[i - 1] > s->keys[i]) {
            app_check_failed("radix", "iteration %ld: keys %ld and %ld out of order (%u > %u)",
                             iter, i - 1, i, s->keys[i - 1], s->keys[i]);
            return 0;
        }
    /* the last key of the rank before (none: 0) must not exceed my first */
    uint32_t last = s->n ? s->keys[s->n - 1] : 0, prev = 0;
    int up = s->rank + 1 < s->p ? s->rank + 1 : MPI_PROC_NULL;
    int down = s->rank > 0 ? s->rank - 1 : MPI_PROC_NULL;
    MPI_Sendrecv(&last, 1, MPI_UINT32_T, up, 7, &prev, 1, MPI_UINT32_T, down, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (s->n && prev > s->keys[0]) {
        app_check_failed("radix", "iteration %ld: rank %d's last key %u above my first %u",
                         iter, s->rank - 1, prev, s->keys[0]);
        return 0;
    }
    uint64_t after[4];
    fingerprint(s, after);
    if (memcmp(before, after, sizeof(after))) {
        app_check_failed("radix", "iteration %ld: keys lost or changed (count %llu -> %llu, "
                         "sum %llu -> %llu)", iter, (unsigned long long)before[0],
                         (unsigned long long)after[0], (unsigned long long)before[1],
                         (unsigned long long)after[1]);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long n = 65536, iters = 250, bits = 10;
    int c;
    while ((c = getopt(argc, argv, "k:d:i:")) != -1) {
        if (c == 'k')
            n = app_parse_long(usage, "-k", optarg, 1L << 26);
        else if (c == 'd')
            bits = app_parse_long(usage, "-d", optarg, 16);
        else if (c == 'i')
            iters = app_parse_long(usage, "-i", optarg, 1000000);
        else
            app_usage_fail(usage, "unknown option");
    }
    if (optind < argc)
        app_usage_fail(usage, "unexpected argument '%s'", argv[optind]);
    if ((double)(n + 2) * app_size() >= 2147483647.0)
        app_usage_fail(usage, "-k %ld: more keys than an int counts", n);

    struct sorter s = make_sorter(n, (int)bits);
    int ok = 1;
    double total = 0;
    for (long it = -1; it < iters; it++) { /* it = -1: the warm-up, not timed */
        uint64_t before[4];
        fill_keys(&s, it + 1);
        fingerprint(&s, before);
        if (it == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            app_coll_s = 0;
        }
        double t0 = MPI_Wtime();
        sort(&s);
        if (it >= 0)
            total += MPI_Wtime() - t0;
        ok = app_all_ok(ok && check(&s, before, it + 1));
        if (!ok)
            break;
    }
    double coll = app_max(app_coll_s), tot = app_max(total);
    if (s.rank == 0) {
        printf("{\"app\":\"radix\",\"size\":\"%ld keys/rank\",\"keys_per_rank\":%ld,"
               "\"digit_bits\":%ld,\"hist_bytes\":%ld,\"np\":%d,\"iters\":%ld,\"total_s\":%.6f,"
               "\"coll_s\":%.6f,\"coll\":\"allgather+alltoall+alltoallv\",\"ok\":%s}\n",
               n, n, bits, (long)sizeof(int) << bits, s.p, iters, tot, coll,
               ok ? "true" : "false");
        if (!ok)
            fprintf(stderr, "radix: FAILED: the keys are not sorted or not the same keys\n");
    }
    free_sorter(&s);
    MPI_Finalize();
    return ok ? 0 : 1;
}
