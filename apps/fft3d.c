/* fft3d: 3-D complex FFT as in NAS FT (the FT benchmark of seed 001, section 6.5.3, whose
 * MPI_Alltoall it speeds up): an NX x NY x NZ grid of complex doubles (class S: 64x64x64,
 * class W: 128x128x32, as NAS FT), slab decomposition along z (rank r owns planes
 * r*LZ .. r*LZ+LZ-1, LZ = ceil(NZ/P)). Forward transform: radix-2 FFTs along x and y of the
 * local planes, a transpose by MPI_Alltoall to y-slabs (LY = ceil(NY/P) rows each, all z; the
 * blocks are LZ x LY x NX complex doubles, padded where P divides neither NZ nor NY: 16*NX*NY*NZ
 * /P^2 bytes per pair at best, 256 KB for class S at np=4), then FFTs along z. The inverse
 * runs the same steps backwards (FFT along z, the transpose back by MPI_Alltoall, FFTs along y
 * and x) and scales by 1/(NX NY NZ). Each iteration does a forward and an inverse transform
 * (two alltoalls); ITERS iterations (default 30; NAS FT runs 6 for S and W) after one warm-up.
 * Checks: the forward spectrum of the first transform at a few frequencies per rank against a
 * direct DFT sum (1e-8 relative to the spectrum's norm), and after the last iteration the
 * grid against the input (max error below 1e-10: forward then inverse gives the input back).
 * Usage: fft3d [-c S|W|NXxNYxNZ (powers of two)] [-i ITERS]; rank 0 prints one JSON line. */
#include "app_common.h"

#include <complex.h>
#include <getopt.h>
#include <math.h>
#include <string.h>

static const char usage[] = "fft3d [-c S|W|NXxNYxNZ (powers of two; default S)] [-i ITERS "
                            "(default 30)]";

typedef double complex cplx;

#define APP_PI 3.14159265358979323846

/* A 1-D FFT plan of length n (a power of two): twiddles and the bit-reversal permutation. */
struct plan {
    long n;
    cplx *tw;       /* exp(-2 pi i k / n), k < n/2 */
    long *rev;
};

struct grid {
    int p, rank;
    long nx, ny, nz, lz, ly;   /* dims; planes per rank, y rows per rank after the transpose */
    long myz, myy;             /* valid local planes / rows of this rank (<= lz / ly) */
    cplx *slab;                /* lz x ny x nx: z-slabs (local plane, y, x) */
    cplx *pencil;              /* ly x nz x nx: y-slabs (local row, z, x) */
    cplx *sendbuf, *recvbuf;   /* p x (lz x ly x nx) */
    cplx *line;                /* scratch line of the longest dimension */
    struct plan px, py, pz;
};

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

static struct plan make_plan(long n)
{
    struct plan pl = { .n = n };
    pl.tw = app_alloc(sizeof(cplx) * (n / 2 + 1));
    pl.rev = app_alloc(sizeof(long) * n);
    for (long k = 0; k < n / 2; k++)
        pl.tw[k] = cexp(-2.0 * APP_PI * I * (double)k / (double)n);
    int bits = 0;
    while ((1L << bits) < n)
        bits++;
    for (long i = 0; i < n; i++) {
        long r = 0;
        for (int b = 0; b < bits; b++)
            r |= ((i >> b) & 1) << (bits - 1 - b);
        pl.rev[i] = r;
    }
    return pl;
}

static void free_plan(struct plan *pl)
{
    free(pl->tw);
    free(pl->rev);
}

/* In-place iterative radix-2 FFT of a contiguous line; sign -1 forward, +1 inverse
 * (unscaled). */
static void fft_line(const struct plan *pl, cplx *a, int sign)
{
    long n = pl->n;
    for (long i = 0; i < n; i++)
        if (i < pl->rev[i]) {
            cplx t = a[i];
            a[i] = a[pl->rev[i]];
            a[pl->rev[i]] = t;
        }
    for (long len = 2; len <= n; len <<= 1) {
        long half = len / 2, step = n / len;
        for (long s = 0; s < n; s += len)
            for (long k = 0; k < half; k++) {
                cplx w = pl->tw[k * step];
                if (sign > 0)
                    w = conj(w);
                cplx u = a[s + k], v = a[s + k + half] * w;
                a[s + k] = u + v;
                a[s + k + half] = u - v;
            }
    }
}

/* FFTs of count lines of length pl->n: element j of line l at base + l*lstride + j*stride. */
static void fft_lines(const struct plan *pl, cplx *base, long count, long lstride, long stride,
                      int sign, cplx *line)
{
    for (long l = 0; l < count; l++) {
        cplx *a = base + l * lstride;
        if (stride == 1) {
            fft_line(pl, a, sign);
            continue;
        }
        for (long j = 0; j < pl->n; j++)
            line[j] = a[j * stride];
        fft_line(pl, line, sign);
        for (long j = 0; j < pl->n; j++)
            a[j * stride] = line[j];
    }
}

static long clamp(long v, long lo, long hi) { return v < lo ? lo : v > hi ? hi : v; }

static struct grid make_grid(long nx, long ny, long nz)
{
    struct grid g = { .p = app_size(), .rank = app_rank(), .nx = nx, .ny = ny, .nz = nz };
    g.lz = (nz + g.p - 1) / g.p;
    g.ly = (ny + g.p - 1) / g.p;
    g.myz = clamp(nz - g.rank * g.lz, 0, g.lz);
    g.myy = clamp(ny - g.rank * g.ly, 0, g.ly);
    long block = g.lz * g.ly * nx, longest = nx > ny ? (nx > nz ? nx : nz) : (ny > nz ? ny : nz);
    g.slab = app_alloc(sizeof(cplx) * g.lz * ny * nx);
    g.pencil = app_alloc(sizeof(cplx) * g.ly * nz * nx);
    g.sendbuf = app_alloc(sizeof(cplx) * block * g.p);
    g.recvbuf = app_alloc(sizeof(cplx) * block * g.p);
    g.line = app_alloc(sizeof(cplx) * longest);
    memset(g.sendbuf, 0, sizeof(cplx) * block * g.p); /* the padding is sent as zeros */
    g.px = make_plan(nx);
    g.py = make_plan(ny);
    g.pz = make_plan(nz);
    return g;
}

static void free_grid(struct grid *g)
{
    free(g->slab);
    free(g->pencil);
    free(g->sendbuf);
    free(g->recvbuf);
    free(g->line);
    free_plan(&g->px);
    free_plan(&g->py);
    free_plan(&g->pz);
}

/* The input: a pseudo-random value in [-1,1)^2 per global point (as NAS FT's, not the same). */
static cplx input_at(long x, long y, long z, long nx, long ny)
{
    uint64_t idx = ((uint64_t)z * ny + y) * nx + x;
    return app_uniform(11, idx) + I * app_uniform(12, idx);
}

static void fill_input(struct grid *g)
{
    for (long zl = 0; zl < g->myz; zl++)
        for (long y = 0; y < g->ny; y++)
            for (long x = 0; x < g->nx; x++)
                g->slab[(zl * g->ny + y) * g->nx + x] =
                    input_at(x, y, g->rank * g->lz + zl, g->nx, g->ny);
}

/* z-slabs -> y-slabs: block for rank d holds my planes x d's rows; MPI_Alltoall. */
static void transpose_forward(struct grid *g)
{
    long block = g->lz * g->ly * g->nx, row = g->nx;
    for (int d = 0; d < g->p; d++) {
        long dy = clamp(g->ny - d * g->ly, 0, g->ly);
        for (long zl = 0; zl < g->myz; zl++)
            for (long yl = 0; yl < dy; yl++)
                memcpy(g->sendbuf + d * block + (zl * g->ly + yl) * row,
                       g->slab + (zl * g->ny + d * g->ly + yl) * row, sizeof(cplx) * row);
    }
    APP_COLL(MPI_Alltoall(g->sendbuf, (int)(2 * block), MPI_DOUBLE, g->recvbuf, (int)(2 * block),
                          MPI_DOUBLE, MPI_COMM_WORLD));
    for (int s = 0; s < g->p; s++) {
        long sz = clamp(g->nz - s * g->lz, 0, g->lz);
        for (long zl = 0; zl < sz; zl++)
            for (long yl = 0; yl < g->myy; yl++)
                memcpy(g->pencil + (yl * g->nz + s * g->lz + zl) * row,
                       g->recvbuf + s * block + (zl * g->ly + yl) * row, sizeof(cplx) * row);
    }
}

/* y-slabs -> z-slabs: the inverse of transpose_forward. */
static void transpose_back(struct grid *g)
{
    long block = g->lz * g->ly * g->nx, row = g->nx;
    for (int d = 0; d < g->p; d++) {
        long dz = clamp(g->nz - d * g->lz, 0, g->lz);
        for (long zl = 0; zl < dz; zl++)
            for (long yl = 0; yl < g->myy; yl++)
                memcpy(g->sendbuf + d * block + (zl * g->ly + yl) * row,
                       g->pencil + (yl * g->nz + d * g->lz + zl) * row, sizeof(cplx) * row);
    }
    APP_COLL(MPI_Alltoall(g->sendbuf, (int)(2 * block), MPI_DOUBLE, g->recvbuf, (int)(2 * block),
                          MPI_DOUBLE, MPI_COMM_WORLD));
    for (int s = 0; s < g->p; s++) {
        long sy = clamp(g->ny - s * g->ly, 0, g->ly);
        for (long zl = 0; zl < g->myz; zl++)
            for (long yl = 0; yl < sy; yl++)
                memcpy(g->slab + (zl * g->ny + s * g->ly + yl) * row,
                       g->recvbuf + s * block + (zl * g->ly + yl) * row, sizeof(cplx) * row);
    }
}

static void fft_forward(struct grid *g)
{
    long plane = g->nx * g->ny;
    for (long zl = 0; zl < g->myz; zl++) {
        fft_lines(&g->px, g->slab + zl * plane, g->ny, g->nx, 1, -1, g->line);
        fft_lines(&g->py, g->slab + zl * plane, g->nx, 1, g->nx, -1, g->line);
    }
    transpose_forward(g);
    for (long yl = 0; yl < g->myy; yl++)
        fft_lines(&g->pz, g->pencil + yl * g->nz * g->nx, g->nx, 1, g->nx, -1, g->line);
}

static void fft_inverse(struct grid *g)
{
    long plane = g->nx * g->ny;
    for (long yl = 0; yl < g->myy; yl++)
        fft_lines(&g->pz, g->pencil + yl * g->nz * g->nx, g->nx, 1, g->nx, 1, g->line);
    transpose_back(g);
    double scale = 1.0 / ((double)g->nx * g->ny * g->nz);
    for (long zl = 0; zl < g->myz; zl++) {
        fft_lines(&g->py, g->slab + zl * plane, g->nx, 1, g->nx, 1, g->line);
        fft_lines(&g->px, g->slab + zl * plane, g->ny, g->nx, 1, 1, g->line);
        for (long i = 0; i < plane; i++)
            g->slab[zl * plane + i] *= scale;
    }
}

/* exp(-2 pi i k j / n) for j < n, with k j reduced mod n first (exact phase index). */
static cplx *twiddle_row(long k, long n)
{
    cplx *w = app_alloc(sizeof(cplx) * n);
    for (long j = 0; j < n; j++)
        w[j] = cexp(-2.0 * APP_PI * I * (double)(k * j % n) / (double)n);
    return w;
}

/* The DFT of the input at (kx, ky, kz), summed directly: an independent check of the FFTs. */
static cplx direct_dft(const struct grid *g, long kx, long ky, long kz)
{
    cplx *wx = twiddle_row(kx, g->nx), *wy = twiddle_row(ky, g->ny), *wz = twiddle_row(kz, g->nz);
    cplx sz = 0;
    for (long z = 0; z < g->nz; z++) {
        cplx sy = 0;
        for (long y = 0; y < g->ny; y++) {
            cplx sx = 0;
            for (long x = 0; x < g->nx; x++)
                sx += input_at(x, y, z, g->nx, g->ny) * wx[x];
            sy += sx * wy[y];
        }
        sz += sy * wz[z];
    }
    free(wx);
    free(wy);
    free(wz);
    return sz;
}

/* A few of my frequencies (y-slab layout) against the direct sum. */
static int check_spectrum(const struct grid *g)
{
    double norm = sqrt((double)g->nx * g->ny * g->nz); /* |spectrum| of unit-size noise */
    for (int t = 0; t < 3 && g->myy > 0; t++) {
        uint64_t h = app_mix((uint64_t)g->rank * 3 + t);
        long yl = (long)(h % (uint64_t)g->myy), kz = (long)((h >> 20) % (uint64_t)g->nz);
        long kx = (long)((h >> 40) % (uint64_t)g->nx), ky = g->rank * g->ly + yl;
        if (t == 0 && g->rank == 0)
            yl = ky = kz = kx = 0; /* the mean */
        cplx got = g->pencil[(yl * g->nz + kz) * g->nx + kx], want = direct_dft(g, kx, ky, kz);
        if (cabs(got - want) > 1e-8 * norm) {
            app_check_failed("fft3d", "spectrum at (%ld,%ld,%ld) = %.12g%+.12gi, direct DFT "
                             "%.12g%+.12gi", kx, ky, kz, creal(got), cimag(got), creal(want),
                             cimag(want));
            return 0;
        }
    }
    return 1;
}

static int check_roundtrip(const struct grid *g, long iters)
{
    double worst = 0;
    for (long zl = 0; zl < g->myz; zl++)
        for (long y = 0; y < g->ny; y++)
            for (long x = 0; x < g->nx; x++) {
                cplx want = input_at(x, y, g->rank * g->lz + zl, g->nx, g->ny);
                double e = cabs(g->slab[(zl * g->ny + y) * g->nx + x] - want);
                if (!(e <= worst)) /* also catches NaN */
                    worst = e;
            }
    if (!(worst < 1e-10)) {
        app_check_failed("fft3d", "after %ld forward+inverse transforms the grid differs from "
                         "the input by %g", iters, worst);
        return 0;
    }
    return 1;
}

static int parse_class(const char *text, long dims[3], char *name, size_t cap)
{
    if (!strcmp(text, "S")) {
        dims[0] = dims[1] = dims[2] = 64;
    } else if (!strcmp(text, "W")) {
        dims[0] = dims[1] = 128;
        dims[2] = 32;
    } else if (sscanf(text, "%ldx%ldx%ld", &dims[0], &dims[1], &dims[2]) != 3) {
        return 0;
    }
    for (int d = 0; d < 3; d++)
        if (!is_pow2(dims[d]) || dims[d] < 2 || dims[d] > 4096)
            return 0;
    snprintf(name, cap, "%s (%ldx%ldx%ld)", strlen(text) == 1 ? text : "custom", dims[0],
             dims[1], dims[2]);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long dims[3], iters = 30;
    char cls[64];
    parse_class("S", dims, cls, sizeof cls);
    int c;
    while ((c = getopt(argc, argv, "c:i:")) != -1) {
        if (c == 'c') {
            if (!parse_class(optarg, dims, cls, sizeof cls))
                app_usage_fail(usage, "-c %s: expected S, W or NXxNYxNZ, powers of two 2..4096",
                               optarg);
        } else if (c == 'i') {
            iters = app_parse_long(usage, "-i", optarg, 1000000);
        } else {
            app_usage_fail(usage, "unknown option");
        }
    }
    if (optind < argc)
        app_usage_fail(usage, "unexpected argument '%s'", argv[optind]);
    if ((double)dims[0] * dims[1] * dims[2] * 2 >= 2147483647.0)
        app_usage_fail(usage, "-c: grid too large for one MPI_Alltoall count");

    struct grid g = make_grid(dims[0], dims[1], dims[2]);
    fill_input(&g);
    int ok = 1;
    double total = 0;
    for (long it = -1; it < iters; it++) { /* it = -1: the warm-up, not timed */
        if (it == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            app_coll_s = 0;
        }
        double t0 = MPI_Wtime();
        fft_forward(&g);
        double t1 = MPI_Wtime();
        if (it == -1)
            ok = check_spectrum(&g);
        double t2 = MPI_Wtime();
        fft_inverse(&g);
        if (it >= 0)
            total += (t1 - t0) + (MPI_Wtime() - t2);
    }
    ok = app_all_ok(ok && check_roundtrip(&g, iters + 1));
    double coll = app_max(app_coll_s), tot = app_max(total);
    if (g.rank == 0) {
        printf("{\"app\":\"fft3d\",\"size\":\"%s\",\"nx\":%ld,\"ny\":%ld,\"nz\":%ld,\"np\":%d,"
               "\"iters\":%ld,\"block_bytes\":%ld,\"total_s\":%.6f,\"coll_s\":%.6f,"
               "\"coll\":\"alltoall\",\"ok\":%s}\n",
               cls, dims[0], dims[1], dims[2], g.p, iters,
               (long)sizeof(cplx) * g.lz * g.ly * g.nx, tot, coll, ok ? "true" : "false");
        if (!ok)
            fprintf(stderr, "fft3d: FAILED: wrong transform (see the CHECK FAILED lines)\n");
    }
    free_grid(&g);
    MPI_Finalize();
    return ok ? 0 : 1;
}
