/* rcoll-bench: OSU-compatible latency benchmark of barrier and allgather that times, in one run
 * and interleaved size by size, the native MPI collective and rcoll (automatic and forced
 * algorithms). Native MPI is reached only through PMPI_ functions, so the numbers stay native
 * even when librcoll-mpi.so is LD_PRELOADed; rcoll is reached through its C API on a team built
 * over MPI_COMM_WORLD. Prints OSU-style tables and, with --json, one JSON object per line. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcoll/rcoll_mpi.h"

#define MAX_IMPLS 32
#define MAX_COLLS 8
#define ALGO_LEN 64
#define BIG_BYTES 65536      /* above this, iteration counts are scaled down */
#define MAX_ERROR_LINES 5    /* data errors printed per rank and block */

enum impl_kind { IMPL_NATIVE, IMPL_RCOLL };

struct impl {
    enum impl_kind kind;
    char algo[ALGO_LEN];     /* forced rcoll algorithm; "" = automatic */
    char label[ALGO_LEN + 8]; /* as given on the command line: native, rcoll, rcoll:<algo> */
    int skip_reported;
};

struct options {
    rcoll_coll_t colls[MAX_COLLS];
    int ncolls;
    struct impl impls[MAX_IMPLS];
    int nimpls;
    size_t min_bytes, max_bytes;
    int iters, warmup;
    int check, no_reuse;
    const char *json_path;
};

/* Run-wide state main passes to the measuring functions. */
struct bench {
    MPI_Comm comm;
    int rank, size, ppn;
    rcoll_team_t *team;      /* NULL when no rcoll impl was asked for */
    FILE *json;              /* rank 0 only, NULL without --json */
    void *sendbuf, *recvbuf; /* reused buffers, sized for max_bytes */
    double *times, *maxtimes;
    long errors;             /* data-check errors seen by this rank */
};

/* One measured (coll, impl, size) point, as rank 0 knows it. */
struct result {
    size_t bytes;
    char algo[ALGO_LEN];
    double avg_us, min_us, max_us, iter_max_us;
    int iters;
};

struct impl_results {
    struct result *rows;
    int n;
};

/* ------------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: rcoll-bench [options]\n"
        "  --coll LIST      collectives, comma separated: barrier,allgather (default both)\n"
        "  --impl LIST      implementations, comma separated, measured interleaved in one run:\n"
        "                   native (PMPI_ collective), rcoll (automatic selection),\n"
        "                   rcoll:<algo> (forced algorithm; skipped if not applicable)\n"
        "                   default native,rcoll. List rcoll before rcoll:<algo> so that the\n"
        "                   report can tell the automatic rows from the forced ones.\n"
        "  -m MIN:MAX       allgather bytes per rank, doubling from MIN to MAX; a single N\n"
        "                   measures only N (default 1:1048576; K and M suffixes accepted)\n"
        "  -i ITERS         timed iterations (default 1000); above 64 KB per rank:\n"
        "                   max(min(ITERS,20), ITERS*8192/bytes)\n"
        "  -x WARMUP        warmup iterations (default 100); above 64 KB per rank:\n"
        "                   max(min(WARMUP,5), WARMUP*8192/bytes)\n"
        "  -c, --check      check the data of every iteration (pattern depends on rank,\n"
        "                   iteration and byte); exit status 1 if any rank saw an error\n"
        "  --no-reuse       fresh malloc'ed buffers every iteration (allocation, memset and\n"
        "                   free are not timed; only the collective call is)\n"
        "  --json FILE      rank 0 appends one JSON object per (coll, impl, size) to FILE\n"
        "  -h, --help       this text\n"
        "Each iteration is timed alone; Avg/Min/Max are over ranks of each rank's mean time\n"
        "(OSU style), iter_max_us (JSON) is the mean over iterations of the slowest rank.\n");
}

/* Parses "123", "64K", "1M" into *out; returns 0 on success. */
static int parse_bytes(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    if (*end == 'k' || *end == 'K') {
        v <<= 10;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v <<= 20;
        end++;
    }
    if (*end != '\0' || v > (unsigned long long)INT_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < 0 || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_range(const char *s, struct options *o)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    char *colon = strchr(buf, ':');
    if (!colon)
        return parse_bytes(buf, &o->min_bytes) || parse_bytes(buf, &o->max_bytes) ? -1 : 0;
    *colon = '\0';
    if (parse_bytes(buf, &o->min_bytes) || parse_bytes(colon + 1, &o->max_bytes))
        return -1;
    return o->min_bytes <= o->max_bytes ? 0 : -1;
}

static int parse_colls(const char *s, struct options *o, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->ncolls = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int c = rcoll_coll_from_name(tok);
        if (c != RCOLL_COLL_BARRIER && c != RCOLL_COLL_ALLGATHER) {
            snprintf(err, errlen, "unknown or unsupported collective '%s'", tok);
            return -1;
        }
        if (o->ncolls == MAX_COLLS) {
            snprintf(err, errlen, "too many collectives");
            return -1;
        }
        o->colls[o->ncolls++] = (rcoll_coll_t)c;
    }
    if (o->ncolls == 0) {
        snprintf(err, errlen, "empty --coll list");
        return -1;
    }
    return 0;
}

static int parse_impl(const char *tok, struct impl *im, char *err, size_t errlen)
{
    memset(im, 0, sizeof *im);
    snprintf(im->label, sizeof im->label, "%s", tok);
    if (strcmp(tok, "native") == 0) {
        im->kind = IMPL_NATIVE;
        return 0;
    }
    if (strcmp(tok, "rcoll") == 0 || strcmp(tok, "rcoll:auto") == 0) {
        im->kind = IMPL_RCOLL;
        snprintf(im->label, sizeof im->label, "rcoll");
        return 0;
    }
    if (strncmp(tok, "rcoll:", 6) == 0 && tok[6] != '\0' && strlen(tok + 6) < ALGO_LEN) {
        im->kind = IMPL_RCOLL;
        snprintf(im->algo, sizeof im->algo, "%s", tok + 6);
        return 0;
    }
    snprintf(err, errlen, "bad implementation '%s' (native, rcoll or rcoll:<algo>)", tok);
    return -1;
}

static int parse_impls(const char *s, struct options *o, char *err, size_t errlen)
{
    char buf[1024];
    if (strlen(s) >= sizeof buf) {
        snprintf(err, errlen, "--impl list too long");
        return -1;
    }
    strcpy(buf, s);
    o->nimpls = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nimpls == MAX_IMPLS) {
            snprintf(err, errlen, "too many implementations (max %d)", MAX_IMPLS);
            return -1;
        }
        if (parse_impl(tok, &o->impls[o->nimpls], err, errlen))
            return -1;
        o->nimpls++;
    }
    if (o->nimpls == 0) {
        snprintf(err, errlen, "empty --impl list");
        return -1;
    }
    return 0;
}

static void default_options(struct options *o)
{
    memset(o, 0, sizeof *o);
    o->colls[0] = RCOLL_COLL_BARRIER;
    o->colls[1] = RCOLL_COLL_ALLGATHER;
    o->ncolls = 2;
    char err[8];
    parse_impls("native,rcoll", o, err, sizeof err);
    o->min_bytes = 1;
    o->max_bytes = 1u << 20;
    o->iters = 1000;
    o->warmup = 100;
}

/* Returns 0 to run, 1 for --help, -1 on a bad command line (message in err). */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    enum { OPT_COLL = 256, OPT_IMPL, OPT_JSON, OPT_NO_REUSE };
    static const struct option longopts[] = {
        {"coll", required_argument, NULL, OPT_COLL},
        {"impl", required_argument, NULL, OPT_IMPL},
        {"json", required_argument, NULL, OPT_JSON},
        {"no-reuse", no_argument, NULL, OPT_NO_REUSE},
        {"check", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    default_options(o);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "m:i:x:ch", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_COLL:
            if (parse_colls(optarg, o, err, errlen))
                return -1;
            break;
        case OPT_IMPL:
            if (parse_impls(optarg, o, err, errlen))
                return -1;
            break;
        case OPT_JSON:
            o->json_path = optarg;
            break;
        case OPT_NO_REUSE:
            o->no_reuse = 1;
            break;
        case 'm':
            if (parse_range(optarg, o)) {
                snprintf(err, errlen, "bad -m '%s' (MIN:MAX or N, MIN <= MAX)", optarg);
                return -1;
            }
            break;
        case 'i':
            if (parse_int(optarg, &o->iters) || o->iters < 1) {
                snprintf(err, errlen, "bad -i '%s'", optarg);
                return -1;
            }
            break;
        case 'x':
            if (parse_int(optarg, &o->warmup)) {
                snprintf(err, errlen, "bad -x '%s'", optarg);
                return -1;
            }
            break;
        case 'c':
            o->check = 1;
            break;
        case 'h':
            return 1;
        default:
            snprintf(err, errlen, "unknown option or missing argument: %s",
                     optind > 0 && optind <= argc ? argv[optind - 1] : "?");
            return -1;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ helpers */

static int scaled_count(int n, int floor_n, size_t bytes)
{
    if (bytes <= BIG_BYTES)
        return n;
    long long s = (long long)n * 8192 / (long long)bytes;
    int f = n < floor_n ? n : floor_n;
    return s > f ? (int)s : f;
}

static int timed_iters(const struct options *o, size_t bytes)
{
    return scaled_count(o->iters, 20, bytes);
}

static int warmup_iters(const struct options *o, size_t bytes)
{
    return scaled_count(o->warmup, 5, bytes);
}

/* Sizes measured for a collective: barrier has the single size 0. */
static int next_size(const struct options *o, rcoll_coll_t coll, size_t cur, int first, size_t *out)
{
    if (coll == RCOLL_COLL_BARRIER) {
        *out = 0;
        return first;
    }
    if (first) {
        *out = o->min_bytes;
        return 1;
    }
    size_t nxt = cur == 0 ? 1 : cur * 2;
    if (nxt > o->max_bytes)
        return 0;
    *out = nxt;
    return 1;
}

__attribute__((format(printf, 2, 3), noreturn))
static void die(struct bench *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rcoll-bench rank %d: ", b->rank);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    PMPI_Abort(b->comm, 2);
    exit(2);
}

static void die_rcoll(struct bench *b, rcoll_coll_t coll, size_t bytes, rcoll_status_t st)
{
    die(b, "rcoll %s bytes=%zu algo=%s failed: %s: %s", rcoll_coll_name(coll), bytes,
        rcoll_team_last_algorithm(b->team), rcoll_strerror(st), rcoll_team_last_error(b->team));
}

static void *xmalloc(struct bench *b, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die(b, "%s", "out of memory");
    return p;
}

static int node_ppn(MPI_Comm comm)
{
    MPI_Comm node;
    int ppn = 0;
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &ppn);
    PMPI_Comm_free(&node);
    PMPI_Bcast(&ppn, 1, MPI_INT, 0, comm);
    return ppn;
}

/* ------------------------------------------------------------------ data check */

/* Never 0, so a block the collective did not write is always seen in a zeroed buffer. */
static inline unsigned char pattern(int rank, int iter, size_t j)
{
    uint32_t x = (uint32_t)rank * 0x9E3779B1u ^ (uint32_t)iter * 0x85EBCA77u ^ (uint32_t)j * 0xC2B2AE3Du;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 13;
    return (unsigned char)(x % 255u + 1u);
}

static void fill_send(unsigned char *s, size_t bytes, int rank, int iter)
{
    for (size_t j = 0; j < bytes; j++)
        s[j] = pattern(rank, iter, j);
}

static long verify_recv(struct bench *b, const struct impl *im, const unsigned char *r, size_t bytes,
                        int iter, long printed)
{
    long errs = 0;
    for (int src = 0; src < b->size; src++) {
        const unsigned char *blk = r + (size_t)src * bytes;
        for (size_t j = 0; j < bytes; j++) {
            unsigned char want = pattern(src, iter, j);
            if (blk[j] == want)
                continue;
            if (printed + errs < MAX_ERROR_LINES)
                fprintf(stderr,
                        "rcoll-bench rank %d: DATA ERROR allgather impl=%s bytes=%zu iter=%d "
                        "block of rank %d offset %zu: expected 0x%02x got 0x%02x\n",
                        b->rank, im->label, bytes, iter, src, j, want, blk[j]);
            errs++;
        }
    }
    return errs;
}

/* ------------------------------------------------------------------ measuring */

/* Runs one collective call and returns its duration in seconds. */
static double timed_call(struct bench *b, rcoll_coll_t coll, const struct impl *im,
                         const void *s, void *r, size_t bytes)
{
    rcoll_status_t st = RCOLL_OK;
    int rc = MPI_SUCCESS;
    double t0 = PMPI_Wtime();
    if (im->kind == IMPL_NATIVE) {
        if (coll == RCOLL_COLL_BARRIER)
            rc = PMPI_Barrier(b->comm);
        else
            rc = PMPI_Allgather(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, b->comm);
    } else {
        if (coll == RCOLL_COLL_BARRIER)
            st = rcoll_barrier(b->team);
        else
            st = rcoll_allgather(b->team, s, r, bytes);
    }
    double t1 = PMPI_Wtime();
    if (rc != MPI_SUCCESS)
        die(b, "native %s failed", rcoll_coll_name(coll));
    if (st != RCOLL_OK)
        die_rcoll(b, coll, bytes, st);
    return t1 - t0;
}

/* One iteration (untimed preparation + timed call + untimed check). Returns its time. */
static double one_iteration(struct bench *b, const struct options *o, rcoll_coll_t coll,
                            const struct impl *im, size_t bytes, int iter, long *errs)
{
    size_t rbytes = (size_t)b->size * bytes;
    unsigned char *s = b->sendbuf, *r = b->recvbuf;
    int data = coll == RCOLL_COLL_ALLGATHER;
    if (data && o->no_reuse) {
        s = xmalloc(b, bytes);
        r = xmalloc(b, rbytes);
        memset(s, 0, bytes);
        memset(r, 0, rbytes);
    }
    if (data && o->check) {
        fill_send(s, bytes, b->rank, iter);
        memset(r, 0, rbytes);
    }
    double t = timed_call(b, coll, im, s, r, bytes);
    if (data && o->check)
        *errs += verify_recv(b, im, r, bytes, iter, *errs);
    if (data && o->no_reuse) {
        free(s);
        free(r);
    }
    return t;
}

/* Forces im's algorithm (if any) on every rank. Returns 0 to measure, -1 to skip (agreed). */
static int force_algorithm(struct bench *b, rcoll_coll_t coll, struct impl *im)
{
    if (im->kind != IMPL_RCOLL || im->algo[0] == '\0')
        return 0;
    rcoll_status_t st = rcoll_team_force_algorithm(b->team, coll, im->algo);
    char msg[1024] = "";
    if (st != RCOLL_OK)
        snprintf(msg, sizeof msg, "%s", rcoll_team_last_error(b->team));
    int ok = st == RCOLL_OK, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, b->comm);
    if (all_ok)
        return 0;
    if (ok)
        rcoll_team_force_algorithm(b->team, coll, NULL);
    if (b->rank == 0 && !im->skip_reported) {
        printf("# skipped: %s impl=%s: %s%s%s\n", rcoll_coll_name(coll), im->label,
               st == RCOLL_OK ? "refused on another rank" : rcoll_strerror(st),
               msg[0] ? ": " : "", msg);
        fflush(stdout);
    }
    im->skip_reported = 1;
    return -1;
}

static void unforce_algorithm(struct bench *b, rcoll_coll_t coll, const struct impl *im)
{
    if (im->kind != IMPL_RCOLL || im->algo[0] == '\0')
        return;
    rcoll_status_t st = rcoll_team_force_algorithm(b->team, coll, NULL);
    if (st != RCOLL_OK)
        die_rcoll(b, coll, 0, st);
}

/* Reduces this rank's per-iteration times into rank 0's result. */
static void reduce_times(struct bench *b, int iters, struct result *res)
{
    double sum = 0;
    for (int i = 0; i < iters; i++)
        sum += b->times[i];
    double mine = sum / iters * 1e6, tot = 0, mn = 0, mx = 0;
    PMPI_Reduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, b->comm);
    PMPI_Reduce(&mine, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, b->comm);
    PMPI_Reduce(&mine, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    PMPI_Reduce(b->times, b->maxtimes, iters, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    if (b->rank != 0)
        return;
    double msum = 0;
    for (int i = 0; i < iters; i++)
        msum += b->maxtimes[i];
    res->avg_us = tot / b->size;
    res->min_us = mn;
    res->max_us = mx;
    res->iter_max_us = msum / iters * 1e6;
    res->iters = iters;
}

/* Measures one (coll, impl, size) block. Returns 0 with *res filled on rank 0, -1 if skipped. */
static int measure(struct bench *b, const struct options *o, rcoll_coll_t coll, struct impl *im,
                   size_t bytes, struct result *res)
{
    if (force_algorithm(b, coll, im))
        return -1;
    int warm = warmup_iters(o, bytes), iters = timed_iters(o, bytes);
    long errs = 0;
    PMPI_Barrier(b->comm);
    for (int i = 0; i < warm; i++)
        one_iteration(b, o, coll, im, bytes, i, &errs);
    for (int i = 0; i < iters; i++)
        b->times[i] = one_iteration(b, o, coll, im, bytes, warm + i, &errs);
    memset(res, 0, sizeof *res);
    res->bytes = bytes;
    snprintf(res->algo, sizeof res->algo, "%s",
             im->kind == IMPL_NATIVE ? "native" : rcoll_team_last_algorithm(b->team));
    unforce_algorithm(b, coll, im);
    reduce_times(b, iters, res);
    if (errs)
        fprintf(stderr, "rcoll-bench rank %d: %ld data errors in %s impl=%s bytes=%zu\n", b->rank,
                errs, rcoll_coll_name(coll), im->label, bytes);
    b->errors += errs;
    return 0;
}

/* ------------------------------------------------------------------ output */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void write_json(const struct bench *b, rcoll_coll_t coll, const struct impl *im,
                       const struct result *r)
{
    FILE *f = b->json;
    fprintf(f, "{\"coll\":");
    json_string(f, rcoll_coll_name(coll));
    fprintf(f, ",\"impl\":\"%s\",\"algo\":", im->kind == IMPL_NATIVE ? "native" : "rcoll");
    json_string(f, r->algo);
    fprintf(f,
            ",\"np\":%d,\"ppn\":%d,\"bytes\":%zu,\"avg_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,"
            "\"iter_max_us\":%.3f,\"iters\":%d}\n",
            b->size, b->ppn, r->bytes, r->avg_us, r->min_us, r->max_us, r->iter_max_us, r->iters);
    fflush(f);
}

static void print_header(const struct bench *b, rcoll_coll_t coll, const struct impl *im,
                         const char *algo)
{
    printf("\n# rcoll-bench %s impl=%s algo=%s np=%d ppn=%d\n", rcoll_coll_name(coll), im->label,
           algo, b->size, b->ppn);
    printf("# Size  Avg Latency(us)  Min Latency(us)  Max Latency(us)  Iterations\n");
}

/* Prints one impl's rows; a new header starts whenever the resolved algorithm changes. */
static void print_block(const struct bench *b, rcoll_coll_t coll, const struct impl *im,
                        const struct impl_results *ir)
{
    const char *cur = NULL;
    for (int k = 0; k < ir->n; k++) {
        const struct result *r = &ir->rows[k];
        if (!cur || strcmp(cur, r->algo) != 0) {
            print_header(b, coll, im, r->algo);
            cur = r->algo;
        }
        printf("%-10zu%18.2f%18.2f%18.2f%12d\n", r->bytes, r->avg_us, r->min_us, r->max_us,
               r->iters);
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------ driver */

static void run_coll(struct bench *b, struct options *o, rcoll_coll_t coll)
{
    struct impl_results ir[MAX_IMPLS];
    int maxrows = 2 + (coll == RCOLL_COLL_BARRIER ? 0 : 64);
    for (int k = 0; k < o->nimpls; k++) {
        ir[k].rows = xmalloc(b, sizeof(struct result) * (size_t)maxrows);
        ir[k].n = 0;
        o->impls[k].skip_reported = 0;
    }
    size_t bytes = 0;
    for (int first = 1; next_size(o, coll, bytes, first, &bytes); first = 0) {
        for (int k = 0; k < o->nimpls; k++) {
            struct impl *im = &o->impls[k];
            if (im->kind == IMPL_RCOLL && !b->team)
                continue;
            struct result *res = &ir[k].rows[ir[k].n];
            if (measure(b, o, coll, im, bytes, res))
                continue;
            ir[k].n++;
            if (b->rank == 0 && b->json)
                write_json(b, coll, im, res);
        }
    }
    for (int k = 0; k < o->nimpls; k++) {
        if (b->rank == 0 && ir[k].n > 0)
            print_block(b, coll, &o->impls[k], &ir[k]);
        free(ir[k].rows);
    }
}

static int wants_rcoll(const struct options *o)
{
    for (int k = 0; k < o->nimpls; k++)
        if (o->impls[k].kind == IMPL_RCOLL)
            return 1;
    return 0;
}

static void setup(struct bench *b, const struct options *o, rcoll_context_t **ctx)
{
    PMPI_Comm_rank(b->comm, &b->rank);
    PMPI_Comm_size(b->comm, &b->size);
    b->ppn = node_ppn(b->comm);
    if (o->max_bytes > (size_t)INT_MAX / (size_t)b->size)
        die(b, "%s", "-m MAX times np does not fit in an int count");
    size_t maxb = 0;
    for (int k = 0; k < o->ncolls; k++)
        if (o->colls[k] == RCOLL_COLL_ALLGATHER)
            maxb = o->max_bytes;
    b->sendbuf = xmalloc(b, maxb);
    b->recvbuf = xmalloc(b, maxb * (size_t)b->size);
    memset(b->sendbuf, 1, maxb);
    memset(b->recvbuf, 0, maxb * (size_t)b->size);
    int n = o->iters > 1 ? o->iters : 1;
    b->times = xmalloc(b, sizeof(double) * (size_t)n);
    b->maxtimes = xmalloc(b, sizeof(double) * (size_t)n);
    if (b->rank == 0 && o->json_path) {
        b->json = fopen(o->json_path, "a");
        if (!b->json)
            die(b, "cannot open --json file %s", o->json_path);
    }
    if (!wants_rcoll(o))
        return;
    rcoll_status_t st = rcoll_context_create(ctx);
    if (st != RCOLL_OK)
        die(b, "rcoll_context_create: %s", rcoll_strerror(st));
    rcoll_oob_t oob;
    rcoll_oob_from_mpi_comm(&b->comm, &oob);
    st = rcoll_team_create(*ctx, &oob, &b->team);
    if (st != RCOLL_OK)
        die(b, "rcoll_team_create: %s", rcoll_strerror(st));
}

static void teardown(struct bench *b, rcoll_context_t *ctx)
{
    PMPI_Barrier(b->comm);
    if (b->team)
        rcoll_team_destroy(b->team);
    if (ctx)
        rcoll_context_destroy(ctx);
    if (b->json)
        fclose(b->json);
    free(b->sendbuf);
    free(b->recvbuf);
    free(b->times);
    free(b->maxtimes);
}

static void print_preamble(const struct bench *b, const struct options *o)
{
    if (b->rank != 0)
        return;
    printf("# rcoll-bench np=%d ppn=%d iters=%d warmup=%d (scaled down above %d bytes) "
           "check=%s buffers=%s impls=", b->size, b->ppn, o->iters, o->warmup, BIG_BYTES,
           o->check ? "on" : "off", o->no_reuse ? "fresh" : "reused");
    for (int k = 0; k < o->nimpls; k++)
        printf("%s%s", k ? "," : "", o->impls[k].label);
    printf("\n");
    fflush(stdout);
}

/* Sums data errors; rank 0 lists the ranks that saw any. Returns the total. */
static long report_errors(struct bench *b)
{
    long total = 0;
    PMPI_Allreduce(&b->errors, &total, 1, MPI_LONG, MPI_SUM, b->comm);
    if (total == 0)
        return 0;
    long *per = b->rank == 0 ? xmalloc(b, sizeof(long) * (size_t)b->size) : NULL;
    PMPI_Gather(&b->errors, 1, MPI_LONG, per, 1, MPI_LONG, 0, b->comm);
    if (b->rank == 0) {
        fprintf(stderr, "rcoll-bench: FAILED: %ld data errors; ranks with errors:", total);
        for (int r = 0; r < b->size; r++)
            if (per[r])
                fprintf(stderr, " %d (%ld)", r, per[r]);
        fprintf(stderr, "\n");
    }
    free(per);
    return total;
}

int main(int argc, char **argv)
{
    PMPI_Init(&argc, &argv);
    struct options o;
    struct bench b;
    memset(&b, 0, sizeof b);
    b.comm = MPI_COMM_WORLD;
    PMPI_Comm_rank(b.comm, &b.rank);
    char err[256] = "";
    int pr = parse_options(argc, argv, &o, err, sizeof err);
    if (pr != 0) {
        if (b.rank == 0) {
            if (pr < 0)
                fprintf(stderr, "rcoll-bench: %s\n", err);
            usage(pr < 0 ? stderr : stdout);
        }
        PMPI_Finalize();
        return pr < 0 ? 1 : 0;
    }
    rcoll_context_t *ctx = NULL;
    setup(&b, &o, &ctx);
    print_preamble(&b, &o);
    for (int k = 0; k < o.ncolls; k++)
        run_coll(&b, &o, o.colls[k]);
    long errors = o.check ? report_errors(&b) : 0;
    teardown(&b, ctx);
    PMPI_Finalize();
    return errors ? 1 : 0;
}
