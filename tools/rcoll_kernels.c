/* rcoll-kernels: the speed of the reduction kernels (src/coll/op.c) against a plain memcpy of
 * the same bytes, on one core: a fold of two vectors of n bytes into a third (the first step of
 * every fold: reads 2n, writes n) and one more input folded into it (reads 2n, writes n), for
 * the operation and type given, by vector size. Usage: rcoll-kernels [op] [dtype] (sum double). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/op.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best of 5 runs of `reps` calls, in GB/s of n bytes (the output vector). */
static double rate(int kind, rcoll_op_t op, rcoll_dtype_t dt, unsigned char **v, size_t n, int reps)
{
    size_t count = n / rcoll_dtype_size(dt);
    double best = 1e30;
    for (int run = 0; run < 5; run++) {
        double t0 = now_s();
        for (int r = 0; r < reps; r++) {
            if (kind == 0) {
                memcpy(v[2], v[0], n);
            } else {
                const void *in[3] = {v[0], v[1], v[3]};
                rcoll_op_fold(op, dt, in, kind == 1 ? 2 : 3, v[2], count);
            }
        }
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return (double)n * reps / best / 1e9;
}

int main(int argc, char **argv)
{
    rcoll_op_t op = rcoll_op_from_name(argc > 1 ? argv[1] : "sum");
    int dt = rcoll_dtype_from_name(argc > 2 ? argv[2] : "double");
    if (!op || dt < 0 || !rcoll_op_valid(op, dt)) {
        fprintf(stderr, "usage: rcoll-kernels [op] [dtype]: an operation valid for the type\n");
        return 2;
    }
    size_t max = 16u << 20;
    unsigned char *v[4];
    for (int i = 0; i < 4; i++) {
        v[i] = aligned_alloc(64, max);
        for (size_t k = 0; k < max; k++)
            v[i][k] = (unsigned char)(k * 7 + (size_t)i);
    }
    printf("# %s of %s, one core: GB/s of the output vector (best of 5)\n", rcoll_op_name(op), rcoll_dtype_name(dt));
    printf("%10s %10s %12s %12s %10s\n", "bytes", "memcpy", "fold of 2", "fold of 3", "2 / memcpy");
    for (size_t n = 4096; n <= max; n *= 4) {
        int reps = (int)((256u << 20) / n);
        double m = rate(0, op, dt, v, n, reps), f2 = rate(1, op, dt, v, n, reps), f3 = rate(2, op, dt, v, n, reps);
        printf("%10zu %10.2f %12.2f %12.2f %10.2f\n", n, m, f2, f3, f2 / m);
    }
    for (int i = 0; i < 4; i++)
        free(v[i]);
    return 0;
}
