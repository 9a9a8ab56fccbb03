/* Shared helpers of the application kernels in apps/ (plain MPI programs, no rcoll header):
 * timing of the collective calls (APP_COLL wraps one call and adds its time to app_coll_s),
 * reductions of the results over the ranks (these call PMPI_Reduce and PMPI_Allreduce, which
 * the rcoll drop-in does not see, so the checks do not rest on the collectives under test),
 * option parsing and the failure message. */
#ifndef RCOLL_APP_COMMON_H
#define RCOLL_APP_COMMON_H

#include <mpi.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Seconds spent inside the wrapped collective calls on this rank since the last reset. */
static double app_coll_s;

/* Calls one collective (an expression giving an MPI error code) and times it. */
#define APP_COLL(call)                                                          \
    do {                                                                        \
        double app_t0_ = MPI_Wtime();                                           \
        int app_rc_ = (call);                                                   \
        app_coll_s += MPI_Wtime() - app_t0_;                                    \
        if (app_rc_ != MPI_SUCCESS)                                             \
            app_mpi_fail(#call, app_rc_);                                       \
    } while (0)

static inline void app_mpi_fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "MPI error in %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static inline int app_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int app_size(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

/* A failed check: one line on stderr naming the program and rank. */
static inline void app_check_failed(const char *app, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: CHECK FAILED on rank %d: ", app, app_rank());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Bad usage: the message on rank 0, then every rank leaves with status 2. */
static inline void app_usage_fail(const char *usage, const char *fmt, ...)
{
    if (app_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nusage: %s\n", usage);
    }
    MPI_Finalize();
    exit(2);
}

/* A positive integer option value, or a usage failure. */
static inline long app_parse_long(const char *usage, const char *opt, const char *text, long max)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > max)
        app_usage_fail(usage, "option %s: expected an integer in 1..%ld, got '%s'", opt, max,
                       text);
    return v;
}

static inline double app_max(double v)
{
    double m = 0;
    PMPI_Reduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}

/* 1 when ok is true on every rank. */
static inline int app_all_ok(int ok)
{
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static inline void *app_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "rank %d: out of memory (%zu bytes)\n", app_rank(), bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* splitmix64: the kernels' deterministic pseudo-random data, a function of (seed, index). */
static inline uint64_t app_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A double in [-1, 1) from (seed, index). */
static inline double app_uniform(uint64_t seed, uint64_t index)
{
    return (double)(app_mix(seed * 0x100000001B3ull ^ app_mix(index)) >> 11) * 0x1p-52 - 1.0;
}

#endif
