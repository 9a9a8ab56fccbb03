/* rcoll-bench: OSU-compatible latency benchmark of every rcoll collective (barrier, allgather,
 * alltoall, bcast, gather, scatter, the v-forms allgatherv, alltoallv, gatherv, scatterv, and
 * the reductions allreduce, reduce, reduce_scatter_block, reduce_scatter, scan, exscan of one
 * element type and operation, --dtype and --op) that times, in one run and interleaved size by
 * size, the native MPI collective and rcoll (automatic and forced algorithms). Before any
 * timing, one call per size and implementation is checked (data, and that nothing outside the
 * expected blocks was written; a reduction's result against a locally computed one): a failure
 * is printed, written to the JSON file, and makes the exit status non-zero. Native MPI is reached only
 * through PMPI_ functions, so the numbers stay native even when librcoll-mpi.so is LD_PRELOADed;
 * rcoll is reached through its C API on a team built over MPI_COMM_WORLD. Prints OSU-style
 * tables and, with --json, one JSON object per line. Besides the blocking calls it times the
 * nonblocking forms (--nonblocking: post, then wait at once), the persistent ones (--persistent:
 * init once, start and wait per iteration) and, as OSU's osu_iallgather, the overlap of a
 * nonblocking collective with computation (--overlap). */
#include <complex.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/colls.h" /* what each collective is: its table */
#include "rcoll/rcoll_mpi.h"

/* The native persistent collectives: MPI-4's (MPICH 4), else Open MPI's MPIX_ extension
 * (mpi-ext.h, Open MPI 4.1: the same calls), else none (the blocking call stands in). */
#if MPI_VERSION >= 4
#define NATIVE_PERSISTENT "MPI-4"
#define PINIT(name) PMPI_##name##_init
#elif defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NATIVE_PERSISTENT "MPIX"
#define PINIT(name) PMPIX_##name##_init
#endif
#endif

#define MAX_IMPLS 32
#define MAX_COLLS 32
#define ALGO_LEN 64
#define MSG_LEN 512
#define BIG_BYTES 65536      /* above this, iteration counts are scaled down */
#define MAX_ERROR_LINES 5    /* data errors printed per rank and block */
#define GUARD 64             /* zeroed bytes after the receive data, checked untouched */
#define ROOT_ROTATE (-1)     /* --root rotate: iteration i uses root i % np */

/* --sync: which collectives get an untimed PMPI_Barrier after every iteration (OSU does it for
 * all). Without it, the root of a rooted collective runs ahead and the next call's data is
 * often there before it starts: the time is no longer a latency. */
enum sync_mode { SYNC_ROOTED, SYNC_ALL, SYNC_NONE };

enum impl_kind { IMPL_NATIVE, IMPL_RCOLL };

/* How each iteration calls the collective: the blocking call; post then wait at once; start
 * and wait a persistent request made before the timing; post, compute, wait (--overlap). */
enum bench_mode { MODE_BLOCKING, MODE_NONBLOCKING, MODE_PERSISTENT, MODE_OVERLAP };

static const char *const mode_names[] = {"blocking", "nonblocking", "persistent", "overlap"};

/* --compute-for: what each rank computes between post and wait in --overlap. */
enum compute_choice { COMPUTE_AUTO, COMPUTE_MEAN, COMPUTE_ITER };

struct impl {
    enum impl_kind kind;
    enum bench_mode mode;    /* the run's (--nonblocking, ...) or its own (@mode) */
    int mode_set;            /* given as @mode */
    char algo[ALGO_LEN];     /* forced rcoll algorithm; "" = automatic */
    char label[ALGO_LEN + 24]; /* as given on the command line: native, rcoll, rcoll:<algo>,
                              * each optionally @<mode> */
    int skip_reported;
    int failed;              /* its check failed for the current collective: not measured further */
};

struct options {
    rcoll_coll_t colls[MAX_COLLS];
    int ncolls;
    struct impl impls[MAX_IMPLS];
    int nimpls;
    size_t min_bytes, max_bytes;
    int iters, warmup;
    int check, no_reuse;
    int root;                /* >= 0, or ROOT_ROTATE */
    int skewed;
    enum sync_mode sync;
    double mif;              /* --mif X: random compute of 0..X message times before each call */
    double late_frac, late_us; /* --late-frac F --late-us U: F of the ranks arrive U us late */
    int late_same;           /* --late-same: the same ranks are late in every iteration */
    unsigned long seed;      /* --seed: of the delays (the same for every implementation) */
    enum bench_mode mode;    /* --nonblocking, --persistent, --overlap; default blocking */
    double late_pure;        /* --late-pure X: late-us = X times the pure time (--overlap) */
    enum compute_choice compute; /* --compute-for: --overlap's per rank mean or per iteration */
    const char *json_path;
    const char *calibrate_path; /* --calibrate FILE: measure the cost model, write FILE, stop */
    rcoll_dtype_t dtype;     /* --dtype: the reductions' element type (default double) */
    rcoll_op_t op;           /* --op: their operation (default sum) */
    int coll_from_all[MAX_COLLS]; /* colls[k] came from --coll all (not named) */
    char dropped[160];       /* the reductions --coll all left out in a mode they lack */
};

/* Where one call's data sits in this rank's buffers: per block k, a count and a displacement in
 * bytes (also as int for MPI). Send block k goes to rank k when send_each, else to everyone;
 * receive block k comes from rank k when recv_each, else from the root. */
struct layout {
    size_t *scounts, *sdispls, *rcounts, *rdispls;
    int *iscounts, *isdispls, *ircounts, *irdispls;
    size_t *ecounts;         /* reductions: the elements of block k (reduce_scatter's counts) */
    int *iecounts;
    int nsend, nrecv;
    int send_each, recv_each;
    size_t sbytes, rbytes;   /* extent of the send and receive data */
};

/* Run-wide state main passes to the measuring functions. */
struct bench {
    MPI_Comm comm;
    int rank, size, ppn;
    rcoll_context_t *ctx;
    rcoll_team_t *team;      /* NULL when no rcoll impl was asked for */
    FILE *json;              /* rank 0 only, NULL without --json */
    void *sendbuf, *recvbuf; /* reused buffers, sized for max_bytes plus GUARD */
    struct layout lay;       /* of the collective and size being measured */
    double *times, *maxtimes;
    double *delays;          /* per timed iteration: this rank's injected delay (us) and arrival
                              * (PMPI_Wtime) */
    double *arrivals;        /* with skew: every rank's arrivals of the iterations, by rank */
    double msg_us;           /* --mif: one native message of the current size, one way (us) */
    double late_us;          /* the late ranks' delay: --late-us, or --late-pure's for the size */
    double *posts, *computes, *waits, *pure; /* --overlap, per timed iteration (seconds) */
    MPI_Request *nreq;       /* --persistent: native requests, one per root (rotate) or one */
    rcoll_request_t **rreq;  /* the same for rcoll */
    int npreq;               /* how many of them are made */
    char algo[ALGO_LEN];     /* what the last rcoll request ran (its algorithm) */
    int keep_algo;           /* wait_call keeps it (an untimed call, or the last timed one) */
    long errors;             /* data errors seen by this rank in checked timed iterations */
    int failures;            /* failed pre-timing checks (every rank counts alike) */
    /* The reductions' element type and operation (--dtype, --op), rcoll's and native MPI's */
    rcoll_dtype_t dtype;
    rcoll_op_t op;
    int rop;                 /* enum red_op of op */
    size_t esize;            /* bytes of one element */
    MPI_Datatype mdtype;
    MPI_Op mop;
};

/* One measured (coll, impl, size) point, as rank 0 knows it. */
struct result {
    size_t bytes;
    char algo[ALGO_LEN];
    double avg_us, min_us, max_us, iter_max_us;
    double delay_us, msg_us; /* with skew: mean injected delay; --mif's message time */
    double floor_max_us, after_last_us; /* with skew: see reduce_delays */
    /* --overlap (reduce_overlap): means over ranks of each rank's mean pure (post then wait),
     * compute and post times; the largest over ranks of the mean wait, and of the mean over
     * the iterations where the rank was not late (-1: none); the pure time without skew */
    double pure_us, compute_us, post_us, wait_us, wait_early_us, pure_noskew_us, overlap_pct;
    int iters;
};

struct impl_results {
    struct result *rows;
    int n;
};

/* What a collective is, from rcoll's table of collectives (coll/colls.h). */
static int is_rooted(rcoll_coll_t c)
{
    return rcoll_coll_info(c)->rooted;
}

static int is_vform(rcoll_coll_t c)
{
    return rcoll_coll_info(c)->vform;
}

/* Moves data (barrier does not): sizes are measured. */
static int has_data(rcoll_coll_t c)
{
    return rcoll_coll_info(c)->recv.blocks != RCOLL_BLOCKS_NONE;
}

/* Combines the ranks' vectors (element type and operation: --dtype, --op). */
static int is_reduction(rcoll_coll_t c)
{
    return rcoll_coll_info(c)->reduction;
}

/* The predefined operations, in rcoll's order (RCOLL_OP_*); rcoll-bench's own index of them. */
enum red_op { ROP_SUM, ROP_PROD, ROP_MIN, ROP_MAX, ROP_LAND, ROP_LOR, ROP_LXOR, ROP_BAND, ROP_BOR,
              ROP_BXOR, ROP_MINLOC, ROP_MAXLOC, ROP_COUNT };

static rcoll_op_t rcoll_op_of(int rop)
{
    static const rcoll_op_t ops[ROP_COUNT] = {
        RCOLL_OP_SUM, RCOLL_OP_PROD, RCOLL_OP_MIN, RCOLL_OP_MAX, RCOLL_OP_LAND, RCOLL_OP_LOR,
        RCOLL_OP_LXOR, RCOLL_OP_BAND, RCOLL_OP_BOR, RCOLL_OP_BXOR, RCOLL_OP_MINLOC, RCOLL_OP_MAXLOC};
    return rop >= 0 && rop < ROP_COUNT ? ops[rop] : NULL;
}

static int red_op_of(rcoll_op_t op)
{
    for (int k = 0; k < ROP_COUNT; k++)
        if (rcoll_op_of(k) == op)
            return k;
    return -1;
}

/* Native MPI's operation and element type for rcoll's (the same C layout). */
static MPI_Op mpi_op_of(int rop)
{
    switch (rop) {
    case ROP_SUM: return MPI_SUM;
    case ROP_PROD: return MPI_PROD;
    case ROP_MIN: return MPI_MIN;
    case ROP_MAX: return MPI_MAX;
    case ROP_LAND: return MPI_LAND;
    case ROP_LOR: return MPI_LOR;
    case ROP_LXOR: return MPI_LXOR;
    case ROP_BAND: return MPI_BAND;
    case ROP_BOR: return MPI_BOR;
    case ROP_BXOR: return MPI_BXOR;
    case ROP_MINLOC: return MPI_MINLOC;
    case ROP_MAXLOC: return MPI_MAXLOC;
    default: return MPI_OP_NULL;
    }
}

static MPI_Datatype mpi_dtype_of(rcoll_dtype_t d)
{
    switch (d) {
    case RCOLL_DTYPE_INT8: return MPI_INT8_T;
    case RCOLL_DTYPE_UINT8: return MPI_UINT8_T;
    case RCOLL_DTYPE_INT16: return MPI_INT16_T;
    case RCOLL_DTYPE_UINT16: return MPI_UINT16_T;
    case RCOLL_DTYPE_INT32: return MPI_INT32_T;
    case RCOLL_DTYPE_UINT32: return MPI_UINT32_T;
    case RCOLL_DTYPE_INT64: return MPI_INT64_T;
    case RCOLL_DTYPE_UINT64: return MPI_UINT64_T;
    case RCOLL_DTYPE_FLOAT: return MPI_FLOAT;
    case RCOLL_DTYPE_DOUBLE: return MPI_DOUBLE;
    case RCOLL_DTYPE_LONG_DOUBLE: return MPI_LONG_DOUBLE;
    case RCOLL_DTYPE_FLOAT_COMPLEX: return MPI_C_FLOAT_COMPLEX;
    case RCOLL_DTYPE_DOUBLE_COMPLEX: return MPI_C_DOUBLE_COMPLEX;
    case RCOLL_DTYPE_LONG_DOUBLE_COMPLEX: return MPI_C_LONG_DOUBLE_COMPLEX;
    case RCOLL_DTYPE_BOOL: return MPI_C_BOOL;
    case RCOLL_DTYPE_FLOAT_INT: return MPI_FLOAT_INT;
    case RCOLL_DTYPE_DOUBLE_INT: return MPI_DOUBLE_INT;
    case RCOLL_DTYPE_LONG_INT: return MPI_LONG_INT;
    case RCOLL_DTYPE_2INT: return MPI_2INT;
    case RCOLL_DTYPE_SHORT_INT: return MPI_SHORT_INT;
    case RCOLL_DTYPE_LONG_DOUBLE_INT: return MPI_LONG_DOUBLE_INT;
    default: return MPI_DATATYPE_NULL;
    }
}

/* ------------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: rcoll-bench [options]\n"
        "  --coll LIST      collectives, comma separated (default barrier,allgather; all = every\n"
        "                   one): barrier, allgather, alltoall, bcast, gather, scatter,\n"
        "                   allgatherv, alltoallv, gatherv, scatterv, and the reductions\n"
        "                   allreduce, reduce, reduce_scatter_block, reduce_scatter, scan, exscan\n"
        "                   (blocking only: with --nonblocking, --persistent, --overlap or an\n"
        "                   @mode a named reduction is an error, and all leaves them out)\n"
        "  --op NAME        the reductions' operation, for rcoll and native alike (default sum):\n"
        "                   sum, prod, min, max, land, lor, lxor, band, bor, bxor, minloc, maxloc\n"
        "  --dtype NAME     the reductions' element type (default double): int8, uint8, int16,\n"
        "                   uint16, int32, uint32, int64, uint64, float, double, long_double,\n"
        "                   float_complex, double_complex, long_double_complex, bool, and for\n"
        "                   minloc/maxloc float_int, double_int, long_int, 2int, short_int,\n"
        "                   long_double_int (native: MPI_INT8_T ... MPI_C_BOOL, MPI_FLOAT_INT ...);\n"
        "                   an operation that does not apply to the type is refused\n"
        "  --impl LIST      implementations, comma separated, measured interleaved in one run:\n"
        "                   native (PMPI_ collective, MPI_BYTE; reductions: --dtype's type),\n"
        "                   rcoll (automatic selection),\n"
        "                   rcoll:<algo> (forced algorithm; skipped if unknown; a call it does\n"
        "                   not apply to runs its fallback, which the algo field names)\n"
        "                   default native,rcoll. List rcoll before rcoll:<algo> so that the\n"
        "                   report can tell the automatic rows from the forced ones.\n"
        "  -m MIN:MAX       size m in bytes, doubling from MIN to MAX; a single N measures only N\n"
        "                   (default 1:1048576; K and M suffixes accepted). As in OSU, m is the\n"
        "                   block per rank: what each rank contributes (allgather, gather), sends\n"
        "                   to each rank (alltoall) or receives (scatter); bcast: the message;\n"
        "                   v-forms: every count is m (see --skewed-counts). Reductions: m is\n"
        "                   the vector's bytes (count = m / element size; sizes that are not a\n"
        "                   multiple of it are skipped), for reduce_scatter_block and\n"
        "                   reduce_scatter the block each rank receives (counts equal unless\n"
        "                   --skewed-counts)\n"
        "  --root N|rotate  root of bcast, gather, scatter, gatherv, scatterv, reduce (default 0);\n"
        "                   rotate: iteration i uses root i %% np (warmup and timed alike)\n"
        "  --sync rooted|all|none  untimed PMPI_Barrier after every iteration (as OSU), for the\n"
        "                   rooted collectives, scan and exscan only (default: without it their\n"
        "                   root, or rank 0, runs ahead and the time is not a latency), for every\n"
        "                   collective but barrier, or for none\n"
        "  --skewed-counts  v-forms with unequal counts, in bytes (integer division):\n"
        "                     alltoallv: rank r sends ((r + j) %% 4) * m / 2 to rank j\n"
        "                     allgatherv, gatherv, scatterv: rank r's block is (r %% 4) * m / 2\n"
        "                     reduce_scatter: rank r's count is (r %% 4) * (m / size) / 2 elements\n"
        "                   some are zero; displacements are packed in rank order. Native MPI\n"
        "                   gets exactly the same counts and displacements.\n"
        "  -i ITERS         timed iterations (default 1000); above 64 KB per rank:\n"
        "                   max(min(ITERS,20), ITERS*8192/bytes)\n"
        "  -x WARMUP        warmup iterations (default 100); above 64 KB per rank:\n"
        "                   max(min(WARMUP,5), WARMUP*8192/bytes)\n"
        "  -c, --check      check the data of every iteration (pattern depends on source,\n"
        "                   destination, iteration and byte; reductions: small values of source,\n"
        "                   iteration and element whose result is exact, checked against one\n"
        "                   computed locally); exit status 1 if any rank saw an\n"
        "                   error. Without it, one call per size and implementation (one per\n"
        "                   root with --root rotate) is still checked before timing.\n"
        "  --no-reuse       fresh malloc'ed buffers every iteration, written with a byte that\n"
        "                   changes from iteration to iteration (allocation, memset and free\n"
        "                   are not timed; only the collective call is)\n"
        "  --mif X          process arrival skew ([qian-phd] 6.3.2, maximum imbalance factor):\n"
        "                   before each call every rank computes (spins) for a seeded random\n"
        "                   time of 0 to X times one message of that size (native one-way\n"
        "                   ping-pong time of m bytes between ranks 0 and 1, measured per size)\n"
        "  --late-frac F    with --late-us U: in each iteration round(F * np) ranks, chosen\n"
        "  --late-us U      afresh from the seed, compute U microseconds before the call\n"
        "  --late-same      with --late-frac: the late ranks are chosen once (those of the\n"
        "                   first iteration) and are late in every iteration\n"
        "  --seed S         seed of the delays (default 1); the same delays for every --impl\n"
        "                   With skew, every iteration starts after an untimed PMPI_Barrier, each\n"
        "                   rank's time runs from its own arrival (after its delay) to its return,\n"
        "                   and four columns follow: IterMax (mean over iterations of the\n"
        "                   slowest rank's time), Delay (mean injected delay), Floor (the Max\n"
        "                   column's floor: per rank, the mean wait from its arrival to the last\n"
        "                   arrival its result depends on, which no algorithm can beat; the\n"
        "                   largest over ranks) and AfterLast (mean time from that arrival to a\n"
        "                   rank's return: what the algorithm itself takes). Arrivals are on\n"
        "                   the host's monotonic clock: one host (emulated nodes, not real ones)\n"
        "  --nonblocking    each iteration posts the collective and waits for it at once:\n"
        "                   native PMPI_I<coll> + PMPI_Wait, rcoll rcoll_i<coll> + rcoll_wait +\n"
        "                   rcoll_request_free\n"
        "  --persistent     a persistent request per (collective, size, impl) (one per root with\n"
        "                   --root rotate), made and freed outside the timing; each iteration\n"
        "                   starts and waits it: native PMPI_<Coll>_init (MPI-4; Open MPI 4.1:\n"
        "                   its MPIX_ extension; an MPI with neither: its blocking call, said in\n"
        "                   the header and as \"native_form\"), rcoll rcoll_<coll>_init +\n"
        "                   rcoll_start + rcoll_wait. Not with --no-reuse\n"
        "  --overlap        as OSU's osu_iallgather: per size, first the pure time (post, then\n"
        "                   wait at once) of every rank, then iterations of post, compute (spin)\n"
        "                   for that time, wait. Columns Pure, Compute (means over ranks), Wait\n"
        "                   (the largest over ranks of the mean time inside wait), Overlap(%%) =\n"
        "                   max(0, 100 (1 - (overall - compute) / pure)), overall the Avg column;\n"
        "                   with skew PureNoSkew (the pure time without it) and, with\n"
        "                   --late-frac, WaitEarly (as Wait, over the iterations where the rank\n"
        "                   was not late). Every iteration is followed by an untimed PMPI_Barrier\n"
        "  --late-pure X    with --overlap and --late-frac, instead of --late-us: the late ranks\n"
        "                   compute X times the pure time without skew of that size and impl\n"
        "  --compute-for mean|iteration  what --overlap computes: each rank's mean pure time\n"
        "                   (OSU; the default without skew) or, per iteration, the rank's own\n"
        "                   pure time of that iteration under the same seeded skew (the default\n"
        "                   with skew: a rank that arrives early computes as long as it waited)\n"
        "  IMPL@MODE        in --impl: that implementation in another mode (blocking,\n"
        "                   nonblocking, persistent) in the same run, interleaved with the\n"
        "                   others, e.g. --persistent --impl native,rcoll,rcoll@blocking\n"
        "  --json FILE      rank 0 appends one JSON object per (coll, impl, size) to FILE; a\n"
        "                   failed check writes an object with an \"error\" key instead;\n"
        "                   reductions' objects add \"op\" and \"dtype\"\n"
        "  --calibrate FILE measure the cost model's parameters on this job's nodes (it must\n"
        "                   span at least two nodes with several ranks on one: e.g. RCOLL_PPN)\n"
        "                   and write them to FILE for RCOLL_MODEL=FILE; nothing else runs\n"
        "  -h, --help       this text\n"
        "Each iteration is timed alone; Avg/Min/Max are over ranks of each rank's mean time\n"
        "(OSU style), iter_max_us (JSON) is the mean over iterations of the slowest rank.\n"
        "A failed check (rcoll error or wrong data) is printed as '# FAILED', that impl is not\n"
        "measured further for that collective, and the exit status is 1.\n");
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
    if (strlen(s) >= sizeof buf) {
        snprintf(err, errlen, "--coll list too long");
        return -1;
    }
    strcpy(buf, s);
    o->ncolls = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int all = strcmp(tok, "all") == 0, c = rcoll_coll_from_name(tok);
        if (!all && !rcoll_coll_info((rcoll_coll_t)c)) {
            snprintf(err, errlen, "unknown collective '%s'", tok);
            return -1;
        }
        for (int k = all ? 0 : c; k <= (all ? RCOLL_COLL_COUNT - 1 : c); k++) {
            if (o->ncolls == MAX_COLLS) {
                snprintf(err, errlen, "too many collectives (max %d)", MAX_COLLS);
                return -1;
            }
            o->coll_from_all[o->ncolls] = all;
            o->colls[o->ncolls++] = (rcoll_coll_t)k;
        }
    }
    if (o->ncolls == 0) {
        snprintf(err, errlen, "empty --coll list");
        return -1;
    }
    return 0;
}

/* Parses "@blocking", "@nonblocking", "@persistent" (after an implementation) into *mode. */
static int parse_mode_suffix(const char *at, enum bench_mode *mode)
{
    for (int k = MODE_BLOCKING; k < MODE_OVERLAP; k++)
        if (strcmp(at + 1, mode_names[k]) == 0) {
            *mode = (enum bench_mode)k;
            return 0;
        }
    return -1;
}

/* One --impl entry: native, rcoll, rcoll:<algo>, each optionally @<mode> (im->mode_set). */
static int parse_impl(const char *tok, struct impl *im, char *err, size_t errlen)
{
    char name[ALGO_LEN + 24];
    memset(im, 0, sizeof *im);
    snprintf(name, sizeof name, "%s", tok);
    char *at = strchr(name, '@');
    if (at) {
        if (parse_mode_suffix(at, &im->mode)) {
            snprintf(err, errlen, "bad mode in '%s' (@blocking, @nonblocking or @persistent)", tok);
            return -1;
        }
        im->mode_set = 1;
        *at = '\0';
    }
    snprintf(im->label, sizeof im->label, "%s", tok);
    if (strcmp(name, "native") == 0) {
        im->kind = IMPL_NATIVE;
        return 0;
    }
    if (strcmp(name, "rcoll") == 0 || strcmp(name, "rcoll:auto") == 0) {
        im->kind = IMPL_RCOLL;
        snprintf(im->label, sizeof im->label, "rcoll%s", at ? tok + (at - name) : "");
        return 0;
    }
    if (strncmp(name, "rcoll:", 6) == 0 && name[6] != '\0' && strlen(name + 6) < ALGO_LEN) {
        im->kind = IMPL_RCOLL;
        snprintf(im->algo, sizeof im->algo, "%s", name + 6);
        return 0;
    }
    snprintf(err, errlen, "bad implementation '%s' (native, rcoll or rcoll:<algo>, optionally "
             "@<mode>)", tok);
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

static int parse_double(const char *s, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(v >= 0) || v > max)
        return -1;
    *out = v;
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
    o->root = 0;
    o->seed = 1;
    o->dtype = RCOLL_DTYPE_DOUBLE;
    o->op = RCOLL_OP_SUM;
}

/* --op NAME: a predefined operation. */
static int parse_op(const char *s, struct options *o, char *err, size_t errlen)
{
    rcoll_op_t op = rcoll_op_from_name(s);
    if (!op || red_op_of(op) < 0) {
        snprintf(err, errlen, "unknown --op '%s' (sum, prod, min, max, land, lor, lxor, band, bor, "
                 "bxor, minloc or maxloc)", s);
        return -1;
    }
    o->op = op;
    return 0;
}

/* --dtype NAME: one of rcoll's element types (not the opaque ones: no predefined operation). */
static int parse_dtype(const char *s, struct options *o, char *err, size_t errlen)
{
    int d = rcoll_dtype_from_name(s);
    if (d < 0 || d >= RCOLL_DTYPE_COUNT) {
        size_t n = (size_t)snprintf(err, errlen, "unknown --dtype '%s' (", s);
        for (int k = 0; k < RCOLL_DTYPE_COUNT && n < errlen; k++)
            n += (size_t)snprintf(err + n, errlen - n, "%s%s", k ? ", " : "", rcoll_dtype_name(k));
        if (n < errlen)
            snprintf(err + n, errlen - n, ")");
        return -1;
    }
    o->dtype = d;
    return 0;
}

/* After the options: the operation must apply to the element type (as rcoll_op_valid says; MPI
 * defines the same pairs), else the message lists the operations that do. */
static int check_op_dtype(const struct options *o, char *err, size_t errlen)
{
    if (rcoll_op_valid(o->op, o->dtype))
        return 0;
    size_t n = (size_t)snprintf(err, errlen, "--op %s does not apply to --dtype %s (for %s: ",
                                rcoll_op_name(o->op), rcoll_dtype_name(o->dtype),
                                rcoll_dtype_name(o->dtype));
    int any = 0;
    for (int k = 0; k < ROP_COUNT && n < errlen; k++)
        if (rcoll_op_valid(rcoll_op_of(k), o->dtype)) {
            n += (size_t)snprintf(err + n, errlen - n, "%s%s", any ? ", " : "",
                                  rcoll_op_name(rcoll_op_of(k)));
            any = 1;
        }
    if (n < errlen)
        snprintf(err + n, errlen - n, "%s)", any ? "" : "none");
    return -1;
}

/* The reductions have no nonblocking or persistent form in rcoll (yet): in a run where some
 * implementation is not blocking, a reduction named in --coll is an error and --coll all
 * leaves them out (said in o->dropped, which the preamble prints). */
static int check_reduction_modes(struct options *o, char *err, size_t errlen)
{
    const char *mode = NULL;
    for (int k = 0; k < o->nimpls && !mode; k++)
        if (o->impls[k].mode != MODE_BLOCKING)
            mode = mode_names[o->impls[k].mode];
    if (!mode)
        return 0;
    int kept = 0;
    size_t n = 0;
    for (int k = 0; k < o->ncolls; k++) {
        rcoll_coll_t c = o->colls[k];
        if (!is_reduction(c)) {
            o->coll_from_all[kept] = o->coll_from_all[k];
            o->colls[kept++] = c;
            continue;
        }
        if (!o->coll_from_all[k]) {
            snprintf(err, errlen, "%s: the %s mode is not available for reductions (rcoll has no "
                     "nonblocking or persistent reductions yet); measure them blocking, without "
                     "--nonblocking, --persistent, --overlap and @mode", rcoll_coll_name(c), mode);
            return -1;
        }
        if (n < sizeof o->dropped)
            n += (size_t)snprintf(o->dropped + n, sizeof o->dropped - n, "%s%s", n ? "," : "",
                                  rcoll_coll_name(c));
    }
    o->ncolls = kept;
    if (kept == 0) {
        snprintf(err, errlen, "no collective left to measure in the %s mode (reductions are "
                 "blocking only)", mode);
        return -1;
    }
    return 0;
}

/* After the options: every implementation's mode (its @mode or the run's) and the
 * combinations that make no sense refused. */
static int check_modes(struct options *o, char *err, size_t errlen)
{
    for (int k = 0; k < o->nimpls; k++) {
        struct impl *im = &o->impls[k];
        if (im->mode_set && o->mode == MODE_OVERLAP) {
            snprintf(err, errlen, "--overlap takes no @mode in --impl ('%s')", im->label);
            return -1;
        }
        if (!im->mode_set)
            im->mode = o->mode;
        if (im->mode == MODE_PERSISTENT && o->no_reuse) {
            snprintf(err, errlen, "a persistent request is bound to its buffers: --persistent "
                     "(or @persistent) and --no-reuse exclude each other");
            return -1;
        }
    }
    if (o->late_pure > 0 && o->mode != MODE_OVERLAP) {
        snprintf(err, errlen, "--late-pure needs --overlap (its pure time)");
        return -1;
    }
    if (o->compute != COMPUTE_AUTO && o->mode != MODE_OVERLAP) {
        snprintf(err, errlen, "--compute-for needs --overlap");
        return -1;
    }
    return check_reduction_modes(o, err, errlen);
}

/* Returns 0 to run, 1 for --help, -1 on a bad command line (message in err). */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    enum { OPT_COLL = 256, OPT_IMPL, OPT_JSON, OPT_NO_REUSE, OPT_ROOT, OPT_SKEWED, OPT_SYNC,
           OPT_CALIBRATE, OPT_MIF, OPT_LATE_FRAC, OPT_LATE_US, OPT_SEED, OPT_NONBLOCKING,
           OPT_PERSISTENT, OPT_OVERLAP, OPT_LATE_PURE, OPT_COMPUTE_FOR, OPT_OP, OPT_DTYPE,
           OPT_LATE_SAME };
    static const struct option longopts[] = {
        {"coll", required_argument, NULL, OPT_COLL},
        {"impl", required_argument, NULL, OPT_IMPL},
        {"json", required_argument, NULL, OPT_JSON},
        {"calibrate", required_argument, NULL, OPT_CALIBRATE},
        {"no-reuse", no_argument, NULL, OPT_NO_REUSE},
        {"root", required_argument, NULL, OPT_ROOT},
        {"skewed-counts", no_argument, NULL, OPT_SKEWED},
        {"sync", required_argument, NULL, OPT_SYNC},
        {"mif", required_argument, NULL, OPT_MIF},
        {"late-frac", required_argument, NULL, OPT_LATE_FRAC},
        {"late-us", required_argument, NULL, OPT_LATE_US},
        {"late-same", no_argument, NULL, OPT_LATE_SAME},
        {"seed", required_argument, NULL, OPT_SEED},
        {"nonblocking", no_argument, NULL, OPT_NONBLOCKING},
        {"persistent", no_argument, NULL, OPT_PERSISTENT},
        {"overlap", no_argument, NULL, OPT_OVERLAP},
        {"late-pure", required_argument, NULL, OPT_LATE_PURE},
        {"compute-for", required_argument, NULL, OPT_COMPUTE_FOR},
        {"op", required_argument, NULL, OPT_OP},
        {"dtype", required_argument, NULL, OPT_DTYPE},
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
        case OPT_OP:
            if (parse_op(optarg, o, err, errlen))
                return -1;
            break;
        case OPT_DTYPE:
            if (parse_dtype(optarg, o, err, errlen))
                return -1;
            break;
        case OPT_CALIBRATE:
            o->calibrate_path = optarg;
            break;
        case OPT_NO_REUSE:
            o->no_reuse = 1;
            break;
        case OPT_ROOT:
            if (strcmp(optarg, "rotate") == 0)
                o->root = ROOT_ROTATE;
            else if (parse_int(optarg, &o->root)) {
                snprintf(err, errlen, "bad --root '%s' (a rank or 'rotate')", optarg);
                return -1;
            }
            break;
        case OPT_SKEWED:
            o->skewed = 1;
            break;
        case OPT_SYNC:
            if (strcmp(optarg, "rooted") == 0)
                o->sync = SYNC_ROOTED;
            else if (strcmp(optarg, "all") == 0)
                o->sync = SYNC_ALL;
            else if (strcmp(optarg, "none") == 0)
                o->sync = SYNC_NONE;
            else {
                snprintf(err, errlen, "bad --sync '%s' (rooted, all or none)", optarg);
                return -1;
            }
            break;
        case OPT_MIF:
            if (parse_double(optarg, 1e6, &o->mif)) {
                snprintf(err, errlen, "bad --mif '%s' (a number >= 0)", optarg);
                return -1;
            }
            break;
        case OPT_LATE_FRAC:
            if (parse_double(optarg, 1.0, &o->late_frac)) {
                snprintf(err, errlen, "bad --late-frac '%s' (0 to 1)", optarg);
                return -1;
            }
            break;
        case OPT_LATE_SAME:
            o->late_same = 1;
            break;
        case OPT_LATE_US:
            if (parse_double(optarg, 1e8, &o->late_us)) {
                snprintf(err, errlen, "bad --late-us '%s' (microseconds >= 0)", optarg);
                return -1;
            }
            break;
        case OPT_SEED: {
            int v;
            if (parse_int(optarg, &v)) {
                snprintf(err, errlen, "bad --seed '%s'", optarg);
                return -1;
            }
            o->seed = (unsigned long)v;
            break;
        }
        case OPT_NONBLOCKING:
        case OPT_PERSISTENT:
        case OPT_OVERLAP: {
            enum bench_mode m = c == OPT_NONBLOCKING ? MODE_NONBLOCKING :
                                c == OPT_PERSISTENT ? MODE_PERSISTENT : MODE_OVERLAP;
            if (o->mode != MODE_BLOCKING && o->mode != m) {
                snprintf(err, errlen, "--%s and --%s exclude each other", mode_names[o->mode],
                         mode_names[m]);
                return -1;
            }
            o->mode = m;
            break;
        }
        case OPT_LATE_PURE:
            if (parse_double(optarg, 1e4, &o->late_pure) || o->late_pure <= 0) {
                snprintf(err, errlen, "bad --late-pure '%s' (a number > 0)", optarg);
                return -1;
            }
            break;
        case OPT_COMPUTE_FOR:
            if (strcmp(optarg, "mean") == 0)
                o->compute = COMPUTE_MEAN;
            else if (strcmp(optarg, "iteration") == 0)
                o->compute = COMPUTE_ITER;
            else {
                snprintf(err, errlen, "bad --compute-for '%s' (mean or iteration)", optarg);
                return -1;
            }
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
    if (o->late_pure > 0 && o->late_us > 0) {
        snprintf(err, errlen, "--late-pure and --late-us exclude each other");
        return -1;
    }
    if ((o->late_frac > 0) != (o->late_us > 0 || o->late_pure > 0)) {
        snprintf(err, errlen, "--late-frac and --late-us (or --late-pure) go together");
        return -1;
    }
    if (o->late_same && o->late_frac <= 0) {
        snprintf(err, errlen, "--late-same needs --late-frac");
        return -1;
    }
    if (o->calibrate_path && (o->mif > 0 || o->late_frac > 0 || o->mode != MODE_BLOCKING)) {
        snprintf(err, errlen, "--calibrate takes no skew or mode options");
        return -1;
    }
    if (check_op_dtype(o, err, errlen))
        return -1;
    return check_modes(o, err, errlen);
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
    if (!has_data(coll)) {
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

/* Whether iterations of coll are separated by an untimed barrier. */
static int skewed_arrival(const struct options *o)
{
    return o->mif > 0 || o->late_us > 0 || o->late_pure > 0;
}

/* --overlap's compute: per iteration (--compute-for iteration; by default with skew) or each
 * rank's mean pure time. */
static int per_iteration_compute(const struct options *o)
{
    return o->compute == COMPUTE_ITER || (o->compute == COMPUTE_AUTO && skewed_arrival(o));
}

/* Whether some rank's result depends on no other rank's data, so that it may run ahead into
 * the next call: the root of a rooted collective, rank 0 of scan and exscan. */
static int runs_ahead(rcoll_coll_t coll)
{
    return is_rooted(coll) || coll == RCOLL_COLL_SCAN || coll == RCOLL_COLL_EXSCAN;
}

static int synced(const struct options *o, rcoll_coll_t coll)
{
    if (skewed_arrival(o)) /* the seed's benchmark: every iteration starts together */
        return 1;
    if (o->mode == MODE_OVERLAP) /* as OSU's nonblocking benchmarks */
        return 1;
    if (!has_data(coll) || o->sync == SYNC_NONE)
        return 0;
    return o->sync == SYNC_ALL || runs_ahead(coll);
}

/* Root of iteration `iter` (0 for the collectives without one). */
static int root_of(const struct bench *b, const struct options *o, rcoll_coll_t coll, int iter)
{
    if (!is_rooted(coll))
        return 0;
    return o->root == ROOT_ROTATE ? iter % b->size : o->root;
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

static void die_rcoll(struct bench *b, rcoll_coll_t coll, size_t bytes, int root, rcoll_status_t st)
{
    die(b, "rcoll %s bytes=%zu root=%d algo=%s failed: %s: %s", rcoll_coll_name(coll), bytes, root,
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

/* ------------------------------------------------------------------ layout */

/* Bytes rank `from` sends to rank `to` in alltoallv (documented in usage()). */
static size_t pair_count(const struct options *o, int from, int to, size_t m)
{
    return o->skewed ? (size_t)((from + to) % 4) * m / 2 : m;
}

/* Rank r's block in allgatherv, gatherv and scatterv (documented in usage()). */
static size_t rank_count(const struct options *o, int r, size_t m)
{
    return pair_count(o, r, 0, m);
}

static void layout_alloc(struct bench *b)
{
    struct layout *l = &b->lay;
    size_t n = (size_t)b->size;
    l->scounts = xmalloc(b, n * sizeof(size_t));
    l->sdispls = xmalloc(b, n * sizeof(size_t));
    l->rcounts = xmalloc(b, n * sizeof(size_t));
    l->rdispls = xmalloc(b, n * sizeof(size_t));
    l->iscounts = xmalloc(b, n * sizeof(int));
    l->isdispls = xmalloc(b, n * sizeof(int));
    l->ircounts = xmalloc(b, n * sizeof(int));
    l->irdispls = xmalloc(b, n * sizeof(int));
    l->ecounts = xmalloc(b, n * sizeof(size_t));
    l->iecounts = xmalloc(b, n * sizeof(int));
}

static void layout_free(struct layout *l)
{
    free(l->scounts);
    free(l->sdispls);
    free(l->rcounts);
    free(l->rdispls);
    free(l->iscounts);
    free(l->isdispls);
    free(l->ircounts);
    free(l->irdispls);
    free(l->ecounts);
    free(l->iecounts);
}

/* Fills b->lay for one call of coll with size m (the same for every root), from what the
 * collective's table says each rank sends and receives: a block per rank on both sides (block
 * j to and from rank j: alltoall), on the receiving side (block j from rank j: allgather,
 * gather), on the sending side (block j to rank j: scatter, reduce_scatter), or one block
 * (bcast, sent from its receive buffer; the reductions' vector). A reduction's counts are whole
 * elements (m a multiple of the element size; reduce_scatter's skewed counts in elements), also
 * in l->ecounts. Returns -1 if a count, displacement or extent does not fit in an int (MPI
 * counts). */
static int set_layout(struct bench *b, const struct options *o, rcoll_coll_t coll, size_t m)
{
    struct layout *l = &b->lay;
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    int P = b->size, me = b->rank, v = c->vform;
    size_t unit = c->reduction ? b->esize : 1;
    memset(l->scounts, 0, (size_t)P * sizeof(size_t));
    memset(l->rcounts, 0, (size_t)P * sizeof(size_t));
    l->nsend = l->nrecv = 0;
    l->send_each = l->recv_each = 0;
    if (c->send.blocks == RCOLL_BLOCKS_EACH && c->recv.blocks == RCOLL_BLOCKS_EACH) {
        for (int j = 0; j < P; j++) {
            l->scounts[j] = v ? pair_count(o, me, j, m) : m;
            l->rcounts[j] = v ? pair_count(o, j, me, m) : m;
        }
        l->nsend = l->nrecv = P;
        l->send_each = l->recv_each = 1;
    } else if (c->recv.blocks == RCOLL_BLOCKS_EACH) {
        for (int j = 0; j < P; j++)
            l->rcounts[j] = v ? rank_count(o, j, m / unit) * unit : m;
        l->scounts[0] = l->rcounts[me];
        l->nsend = 1;
        l->nrecv = P;
        l->recv_each = 1;
    } else if (c->send.blocks == RCOLL_BLOCKS_EACH) {
        for (int j = 0; j < P; j++)
            l->scounts[j] = v ? rank_count(o, j, m / unit) * unit : m;
        l->rcounts[0] = l->scounts[me];
        l->nsend = P;
        l->nrecv = 1;
        l->send_each = 1;
    } else if (c->recv.blocks == RCOLL_BLOCKS_ONE) {
        l->rcounts[0] = m;
        l->nrecv = 1;
        if (!c->one_buffer) {
            l->scounts[0] = m;
            l->nsend = 1;
        }
    }
    size_t so = 0, ro = 0;
    for (int k = 0; k < P; k++) {
        l->sdispls[k] = so;
        l->rdispls[k] = ro;
        so += l->scounts[k];
        ro += l->rcounts[k];
    }
    l->sbytes = so;
    l->rbytes = ro;
    if (so > (size_t)INT_MAX || ro > (size_t)INT_MAX)
        return -1;
    for (int k = 0; k < P; k++) {
        l->iscounts[k] = (int)l->scounts[k];
        l->isdispls[k] = (int)l->sdispls[k];
        l->ircounts[k] = (int)l->rcounts[k];
        l->irdispls[k] = (int)l->rdispls[k];
        l->ecounts[k] = l->scounts[k] / unit;
        l->iecounts[k] = (int)l->ecounts[k];
    }
    return 0;
}

/* ------------------------------------------------------------------ data check */

#define ANY_DST (-1) /* a block every destination receives alike (allgather, gather, bcast) */
#define CHECK_ITER (INT_MAX - 65535) /* pattern iterations of the checks before timing: INT_MAX - k */

/* Never 0, so a block the collective did not write is always seen in a zeroed buffer. */
static inline unsigned char pattern(int src, int dst, int iter, size_t j)
{
    uint32_t x = (uint32_t)src * 0x9E3779B1u ^ (uint32_t)dst * 0x7FEB352Du ^
                 (uint32_t)iter * 0x85EBCA77u ^ (uint32_t)j * 0xC2B2AE3Du;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 13;
    return (unsigned char)(x % 255u + 1u);
}

/* Whether this rank's send data matters in this call (scatter: the root's only). */
static int sends_here(const struct bench *b, rcoll_coll_t coll, int root)
{
    return !rcoll_coll_info(coll)->send.root_only || b->rank == root;
}

/* Whether this rank receives in this call (gather: the root only). */
static int receives_here(const struct bench *b, rcoll_coll_t coll, int root)
{
    return !rcoll_coll_info(coll)->recv.root_only || b->rank == root;
}

/* Whose data the send blocks are (scatter: the root's). */
static int send_src(const struct bench *b, rcoll_coll_t coll, int root)
{
    return rcoll_coll_info(coll)->send.root_only ? root : b->rank;
}

static void fill_pattern(unsigned char *p, size_t n, int src, int dst, int iter)
{
    for (size_t j = 0; j < n; j++)
        p[j] = pattern(src, dst, iter, j);
}

static void fill_reduction(const struct bench *b, int iter, unsigned char *s, unsigned char *r);

/* Prepares one checked call: send blocks set, receive buffer (and its guard) zeroed, the root's
 * message set where it sends from its receive buffer (bcast). A reduction's: fill_reduction. */
static void fill_call(const struct bench *b, rcoll_coll_t coll, int root, int iter, unsigned char *s,
                      unsigned char *r)
{
    if (is_reduction(coll)) {
        fill_reduction(b, iter, s, r);
        return;
    }
    const struct layout *l = &b->lay;
    memset(r, 0, l->rbytes + GUARD);
    if (sends_here(b, coll, root))
        for (int k = 0; k < l->nsend; k++)
            fill_pattern(s + l->sdispls[k], l->scounts[k], send_src(b, coll, root),
                         l->send_each ? k : ANY_DST, iter);
    if (rcoll_coll_info(coll)->one_buffer && b->rank == root)
        fill_pattern(r, l->rcounts[0], root, ANY_DST, iter);
}

/* Compares n bytes at p with the pattern; prints the first mismatches. Returns the count and
 * writes the first one's description into first (if still empty). */
static long compare_block(const struct bench *b, const char *what, const unsigned char *p, size_t n,
                          int src, int dst, int iter, long printed, const char *where, char *first,
                          size_t first_len)
{
    long errs = 0;
    for (size_t j = 0; j < n; j++) {
        unsigned char want = pattern(src, dst, iter, j);
        if (p[j] == want)
            continue;
        if (errs == 0 && first[0] == '\0')
            snprintf(first, first_len, "%s block %s offset %zu: expected 0x%02x got 0x%02x", what,
                     where, j, want, p[j]);
        if (printed + errs < MAX_ERROR_LINES)
            fprintf(stderr, "rcoll-bench rank %d: DATA ERROR: %s block %s offset %zu: expected "
                    "0x%02x got 0x%02x\n", b->rank, what, where, j, want, p[j]);
        errs++;
    }
    return errs;
}

/* The receive buffer's bytes from `covered` (the end of the data this rank receives) to GUARD
 * bytes past the receive data must still be zero. Returns the wrong ones; the first is
 * described in first if still empty and `describe`. */
static long check_untouched(const struct bench *b, const unsigned char *r, size_t covered, long printed,
                            int describe, char *first, size_t first_len)
{
    long errs = 0;
    for (size_t j = covered; j < b->lay.rbytes + GUARD; j++) {
        if (r[j] == 0)
            continue;
        if (describe && errs == 0 && first[0] == '\0')
            snprintf(first, first_len, "receive buffer written at byte %zu, outside the expected "
                     "data (0..%zu): 0x%02x", j, covered, r[j]);
        if (printed + errs < MAX_ERROR_LINES)
            fprintf(stderr, "rcoll-bench rank %d: DATA ERROR: receive buffer written at byte %zu, "
                    "outside the expected data (0..%zu): 0x%02x\n", b->rank, j, covered, r[j]);
        errs++;
    }
    return errs;
}

/* ------------------------------------------------------------------ reductions' data */

/* The pairs of minloc and maxloc, laid out as rcoll's and MPI's (rcoll.h). */
struct pair_float { float v; int i; };
struct pair_double { double v; int i; };
struct pair_long { long v; int i; };
struct pair_int { int v; int i; };
struct pair_short { short v; int i; };
struct pair_ldouble { long double v; int i; };

/* One element of any type as a value: integers and bool in iv (two's complement, 64 bits),
 * real and complex numbers in re and im, a pair's value in re and its index in idx. Every input
 * is a small integer (or a half, or i), so every result is exact in every type and order. */
struct elem {
    int64_t iv;
    long double re, im;
    int idx;
};

enum elem_kind { EK_SIGNED, EK_UNSIGNED, EK_REAL, EK_COMPLEX, EK_BOOL, EK_PAIR };

static enum elem_kind elem_kind(rcoll_dtype_t d)
{
    switch (d) {
    case RCOLL_DTYPE_INT8: case RCOLL_DTYPE_INT16: case RCOLL_DTYPE_INT32: case RCOLL_DTYPE_INT64:
        return EK_SIGNED;
    case RCOLL_DTYPE_UINT8: case RCOLL_DTYPE_UINT16: case RCOLL_DTYPE_UINT32: case RCOLL_DTYPE_UINT64:
        return EK_UNSIGNED;
    case RCOLL_DTYPE_FLOAT: case RCOLL_DTYPE_DOUBLE: case RCOLL_DTYPE_LONG_DOUBLE:
        return EK_REAL;
    case RCOLL_DTYPE_FLOAT_COMPLEX: case RCOLL_DTYPE_DOUBLE_COMPLEX: case RCOLL_DTYPE_LONG_DOUBLE_COMPLEX:
        return EK_COMPLEX;
    case RCOLL_DTYPE_BOOL:
        return EK_BOOL;
    default:
        return EK_PAIR;
    }
}

#define LOAD(T, body) { T v; memcpy(&v, p, sizeof v); body; break; }
#define LOAD_PAIR(T) { T v; memcpy(&v, p, sizeof v); e.re = v.v; e.idx = v.i; break; }

/* The element at p (bool as its byte, so that a byte other than 0 or 1 shows as it is). */
static struct elem load_elem(rcoll_dtype_t d, const unsigned char *p)
{
    struct elem e;
    memset(&e, 0, sizeof e);
    switch (d) {
    case RCOLL_DTYPE_INT8: LOAD(int8_t, e.iv = v)
    case RCOLL_DTYPE_UINT8: LOAD(uint8_t, e.iv = v)
    case RCOLL_DTYPE_INT16: LOAD(int16_t, e.iv = v)
    case RCOLL_DTYPE_UINT16: LOAD(uint16_t, e.iv = v)
    case RCOLL_DTYPE_INT32: LOAD(int32_t, e.iv = v)
    case RCOLL_DTYPE_UINT32: LOAD(uint32_t, e.iv = v)
    case RCOLL_DTYPE_INT64: LOAD(int64_t, e.iv = v)
    case RCOLL_DTYPE_UINT64: LOAD(uint64_t, e.iv = (int64_t)v)
    case RCOLL_DTYPE_FLOAT: LOAD(float, e.re = v)
    case RCOLL_DTYPE_DOUBLE: LOAD(double, e.re = v)
    case RCOLL_DTYPE_LONG_DOUBLE: LOAD(long double, e.re = v)
    case RCOLL_DTYPE_FLOAT_COMPLEX: LOAD(float complex, e.re = crealf(v); e.im = cimagf(v))
    case RCOLL_DTYPE_DOUBLE_COMPLEX: LOAD(double complex, e.re = creal(v); e.im = cimag(v))
    case RCOLL_DTYPE_LONG_DOUBLE_COMPLEX: LOAD(long double complex, e.re = creall(v); e.im = cimagl(v))
    case RCOLL_DTYPE_BOOL: LOAD(uint8_t, e.iv = v)
    case RCOLL_DTYPE_FLOAT_INT: LOAD_PAIR(struct pair_float)
    case RCOLL_DTYPE_DOUBLE_INT: LOAD_PAIR(struct pair_double)
    case RCOLL_DTYPE_LONG_INT: LOAD_PAIR(struct pair_long)
    case RCOLL_DTYPE_2INT: LOAD_PAIR(struct pair_int)
    case RCOLL_DTYPE_SHORT_INT: LOAD_PAIR(struct pair_short)
    case RCOLL_DTYPE_LONG_DOUBLE_INT: LOAD_PAIR(struct pair_ldouble)
    default: break;
    }
    return e;
}

#define STORE(T, x) { T v = (x); memcpy(p, &v, sizeof v); break; }
#define STORE_PAIR(T, VT) { VT v = (VT)e.re; memcpy(p + offsetof(T, v), &v, sizeof v); \
                            memcpy(p + offsetof(T, i), &e.idx, sizeof e.idx); break; }

/* Writes e as an element of type d at p (integers wrap to the type's width; the pairs' padding
 * zero). */
static void store_elem(rcoll_dtype_t d, unsigned char *p, struct elem e)
{
    memset(p, 0, rcoll_dtype_size(d));
    switch (d) {
    case RCOLL_DTYPE_INT8: STORE(int8_t, (int8_t)e.iv)
    case RCOLL_DTYPE_UINT8: STORE(uint8_t, (uint8_t)e.iv)
    case RCOLL_DTYPE_INT16: STORE(int16_t, (int16_t)e.iv)
    case RCOLL_DTYPE_UINT16: STORE(uint16_t, (uint16_t)e.iv)
    case RCOLL_DTYPE_INT32: STORE(int32_t, (int32_t)e.iv)
    case RCOLL_DTYPE_UINT32: STORE(uint32_t, (uint32_t)e.iv)
    case RCOLL_DTYPE_INT64: STORE(int64_t, e.iv)
    case RCOLL_DTYPE_UINT64: STORE(uint64_t, (uint64_t)e.iv)
    case RCOLL_DTYPE_FLOAT: STORE(float, (float)e.re)
    case RCOLL_DTYPE_DOUBLE: STORE(double, (double)e.re)
    case RCOLL_DTYPE_LONG_DOUBLE: STORE(long double, e.re)
    case RCOLL_DTYPE_FLOAT_COMPLEX: STORE(float complex, CMPLXF((float)e.re, (float)e.im))
    case RCOLL_DTYPE_DOUBLE_COMPLEX: STORE(double complex, CMPLX((double)e.re, (double)e.im))
    case RCOLL_DTYPE_LONG_DOUBLE_COMPLEX: STORE(long double complex, CMPLXL(e.re, e.im))
    case RCOLL_DTYPE_BOOL: STORE(uint8_t, e.iv != 0)
    case RCOLL_DTYPE_FLOAT_INT: STORE_PAIR(struct pair_float, float)
    case RCOLL_DTYPE_DOUBLE_INT: STORE_PAIR(struct pair_double, double)
    case RCOLL_DTYPE_LONG_INT: STORE_PAIR(struct pair_long, long)
    case RCOLL_DTYPE_2INT: STORE_PAIR(struct pair_int, int)
    case RCOLL_DTYPE_SHORT_INT: STORE_PAIR(struct pair_short, short)
    case RCOLL_DTYPE_LONG_DOUBLE_INT: STORE_PAIR(struct pair_ldouble, long double)
    default: break;
    }
}

/* e as an element of type d holds it (wrapped, rounded). */
static struct elem as_type(rcoll_dtype_t d, struct elem e)
{
    unsigned char tmp[64];
    store_elem(d, tmp, e);
    return load_elem(d, tmp);
}

/* a op b, a holding the lower ranks (the predefined operations, as MPI defines them; minloc
 * and maxloc take the smaller index on a tie). */
static struct elem combine(int rop, enum elem_kind k, struct elem a, struct elem b)
{
    struct elem r = a;
    uint64_t x = (uint64_t)a.iv, y = (uint64_t)b.iv;
    int less = k == EK_UNSIGNED ? x < y : k == EK_REAL ? a.re < b.re : a.iv < b.iv; /* a < b */
    switch (rop) {
    case ROP_SUM:
        r.iv = (int64_t)(x + y);
        r.re = a.re + b.re;
        r.im = a.im + b.im;
        break;
    case ROP_PROD:
        r.iv = (int64_t)(x * y);
        r.re = a.re * b.re - a.im * b.im;
        r.im = a.re * b.im + a.im * b.re;
        break;
    case ROP_MIN: r = less ? a : b; break;
    case ROP_MAX: r = less ? b : a; break;
    case ROP_LAND: r.iv = a.iv && b.iv; break;
    case ROP_LOR: r.iv = a.iv || b.iv; break;
    case ROP_LXOR: r.iv = !a.iv != !b.iv; break;
    case ROP_BAND: r.iv = (int64_t)(x & y); break;
    case ROP_BOR: r.iv = (int64_t)(x | y); break;
    case ROP_BXOR: r.iv = (int64_t)(x ^ y); break;
    case ROP_MINLOC: r = a.re < b.re || (a.re == b.re && a.idx < b.idx) ? a : b; break;
    case ROP_MAXLOC: r = a.re > b.re || (a.re == b.re && a.idx < b.idx) ? a : b; break;
    default: break;
    }
    return r;
}

static int elem_equal(enum elem_kind k, struct elem a, struct elem b)
{
    switch (k) {
    case EK_REAL: return a.re == b.re;
    case EK_COMPLEX: return a.re == b.re && a.im == b.im;
    case EK_PAIR: return a.re == b.re && a.idx == b.idx;
    default: return a.iv == b.iv;
    }
}

static void format_elem(enum elem_kind k, struct elem e, char *buf, size_t len)
{
    switch (k) {
    case EK_UNSIGNED: snprintf(buf, len, "%llu", (unsigned long long)e.iv); break;
    case EK_REAL: snprintf(buf, len, "%Lg", e.re); break;
    case EK_COMPLEX: snprintf(buf, len, "%Lg%+Lgi", e.re, e.im); break;
    case EK_PAIR: snprintf(buf, len, "(%Lg, %d)", e.re, e.idx); break;
    default: snprintf(buf, len, "%lld", (long long)e.iv); break;
    }
}

static uint32_t elem_hash(int src, int iter, size_t j, uint32_t salt)
{
    uint32_t x = (uint32_t)src * 0x9E3779B1u ^ (uint32_t)iter * 0x85EBCA77u ^ (uint32_t)j * 0xC2B2AE3Du ^
                 (uint32_t)((uint64_t)j >> 32) * 0x27D4EB2Fu ^ salt * 0x165667B1u;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 13;
    x *= 0x297A2D39u;
    x ^= x >> 16;
    return x;
}

/* Element j of rank src's vector in iteration iter, for the run's operation: small integers
 * for sum (every partial sum exact); mostly 1 and now and then 2, -1 (complex: i, -i) for prod;
 * -100..99 (reals: halves) for min and max; zeros and values other than 1 for the logical
 * operations; every bit for the bitwise ones; few values (ties) with hashed indices for minloc
 * and maxloc. As the type holds it. */
static struct elem input_elem(const struct bench *b, int src, int iter, size_t j)
{
    enum elem_kind k = elem_kind(b->dtype);
    uint32_t h = elem_hash(src, iter, j, 0);
    struct elem e;
    memset(&e, 0, sizeof e);
    long v = 0;
    switch (b->rop) {
    case ROP_SUM:
        v = (long)(h % 8) - (k == EK_UNSIGNED ? 0 : 3);
        e.im = (long double)((long)((h >> 8) % 8) - 3);
        break;
    case ROP_PROD:
        v = h % 16 == 0 ? 2 : h % 16 == 1 && k != EK_UNSIGNED ? -1 : 1;
        if (k == EK_COMPLEX && (h % 16 == 1 || h % 16 == 2)) { /* i, -i */
            v = 0;
            e.im = h % 16 == 1 ? 1 : -1;
        }
        break;
    case ROP_MIN:
    case ROP_MAX:
        v = k == EK_UNSIGNED ? (long)(h % 250) : (long)(h % 200) - 100;
        break;
    case ROP_LAND:
    case ROP_LOR:
    case ROP_LXOR:
        v = h % 4 == 0 ? 0 : k == EK_BOOL ? 1 : 1 + (long)((h >> 8) % 5);
        break;
    case ROP_BAND:
    case ROP_BOR:
    case ROP_BXOR:
        v = (long)(int64_t)(((uint64_t)h << 32) | elem_hash(src, iter, j, 1));
        break;
    case ROP_MINLOC:
    case ROP_MAXLOC:
        v = (long)(h % 8) - 3;
        e.idx = (int)((h >> 8) % 1000);
        break;
    default:
        break;
    }
    e.iv = v;
    e.re = k == EK_REAL && (b->rop == ROP_MIN || b->rop == ROP_MAX) ? (long double)v / 2 : (long double)v;
    return as_type(b->dtype, e);
}

/* Element j of ranks lo..hi's vectors combined in rank order, as the type holds each step. */
static struct elem reference_elem(const struct bench *b, int lo, int hi, int iter, size_t j)
{
    enum elem_kind k = elem_kind(b->dtype);
    struct elem acc = input_elem(b, lo, iter, j);
    for (int src = lo + 1; src <= hi; src++)
        acc = as_type(b->dtype, combine(b->rop, k, acc, input_elem(b, src, iter, j)));
    return acc;
}

/* A reduction's checked call: this rank's send vector (each block's elements numbered from the
 * send buffer's start, so every block differs) and the receive buffer zeroed with its guard. */
static void fill_reduction(const struct bench *b, int iter, unsigned char *s, unsigned char *r)
{
    const struct layout *l = &b->lay;
    memset(r, 0, l->rbytes + GUARD);
    for (int k = 0; k < l->nsend; k++) {
        size_t base = l->sdispls[k] / b->esize;
        for (size_t i = 0; i < l->ecounts[k]; i++)
            store_elem(b->dtype, s + l->sdispls[k] + i * b->esize, input_elem(b, b->rank, iter, base + i));
    }
}

/* Reports one wrong element (stderr, and the first into first). */
static void elem_error(const struct bench *b, const char *what, size_t i, size_t n, struct elem want,
                       struct elem got, long nth, long printed, char *first, size_t first_len)
{
    enum elem_kind k = elem_kind(b->dtype);
    char w[96], g[96];
    format_elem(k, want, w, sizeof w);
    format_elem(k, got, g, sizeof g);
    if (nth == 0 && first[0] == '\0')
        snprintf(first, first_len, "%s element %zu of %zu: expected %s got %s", what, i, n, w, g);
    if (printed < MAX_ERROR_LINES)
        fprintf(stderr, "rcoll-bench rank %d: DATA ERROR: %s element %zu of %zu: expected %s got %s\n",
                b->rank, what, i, n, w, g);
}

/* Verifies a reduction's call as verify_call does, by value (a type's padding is not data):
 * the result against one computed here from every contributing rank's inputs (all of them;
 * ranks 0..r for scan, 0..r-1 for exscan; reduce_scatter(_block): this rank's block of the
 * vector), nothing written past it (at a reduce's non-root, and rank 0 of rcoll's exscan, which
 * writes nothing there: nothing at all; MPI leaves exscan's rank 0 undefined), the send vector
 * unchanged. Returns the number of wrong elements and bytes. */
static long verify_reduction(const struct bench *b, const struct impl *im, rcoll_coll_t coll, size_t m,
                             int root, int iter, const unsigned char *s, const unsigned char *r,
                             long printed, char *first, size_t first_len)
{
    const struct layout *l = &b->lay;
    enum elem_kind k = elem_kind(b->dtype);
    size_t es = b->esize, covered = 0;
    long errs = 0;
    int me = b->rank, lo = 0, hi = b->size - 1, recv = receives_here(b, coll, root);
    char what[96];
    first[0] = '\0';
    if (coll == RCOLL_COLL_SCAN)
        hi = me;
    if (coll == RCOLL_COLL_EXSCAN) {
        hi = me - 1;
        if (me == 0) {
            recv = 0;
            if (im->kind == IMPL_NATIVE)
                covered = l->rbytes;
        }
    }
    if (recv) {
        size_t base = l->send_each ? l->sdispls[me] / es : 0, n = l->rcounts[0] / es;
        snprintf(what, sizeof what, "result (ranks %d..%d combined%s)", lo, hi,
                 l->send_each ? ", this rank's block" : "");
        for (size_t i = 0; i < n; i++) {
            struct elem want = reference_elem(b, lo, hi, iter, base + i);
            struct elem got = load_elem(b->dtype, r + i * es);
            if (elem_equal(k, want, got))
                continue;
            elem_error(b, what, i, n, want, got, errs, printed + errs, first, first_len);
            errs++;
        }
        covered = l->rbytes;
    }
    errs += check_untouched(b, r, covered, printed + errs, errs == 0, first, first_len);
    for (int kb = 0; kb < l->nsend; kb++) {
        size_t base = l->sdispls[kb] / es;
        snprintf(what, sizeof what, "send (block %d, changed by the call)", kb);
        for (size_t i = 0; i < l->ecounts[kb]; i++) {
            struct elem want = input_elem(b, me, iter, base + i);
            struct elem got = load_elem(b->dtype, s + l->sdispls[kb] + i * es);
            if (elem_equal(k, want, got))
                continue;
            elem_error(b, what, i, l->ecounts[kb], want, got, errs, printed + errs, first, first_len);
            errs++;
        }
    }
    if (errs && printed < MAX_ERROR_LINES)
        fprintf(stderr, "rcoll-bench rank %d: ... in %s impl=%s bytes=%zu op=%s dtype=%s root=%d %s %d: "
                "%ld wrong elements or bytes\n", b->rank, rcoll_coll_name(coll), im->label, m,
                rcoll_op_name(b->op), rcoll_dtype_name(b->dtype), root,
                iter >= CHECK_ITER ? "check before timing, call" : "iteration",
                iter >= CHECK_ITER ? INT_MAX - iter : iter, errs);
    return errs;
}

/* Verifies one call: every receive block, nothing written past the receive data (up to GUARD
 * bytes; the whole buffer where nothing is received) and the send blocks unchanged. Returns the
 * number of wrong bytes; the first is described in first (first_len bytes). A reduction's:
 * verify_reduction. */
static long verify_call(const struct bench *b, const struct impl *im, rcoll_coll_t coll, size_t m,
                        int root, int iter, const unsigned char *s, const unsigned char *r, long printed,
                        char *first, size_t first_len)
{
    if (is_reduction(coll))
        return verify_reduction(b, im, coll, m, root, iter, s, r, printed, first, first_len);
    const struct layout *l = &b->lay;
    long errs = 0;
    char where[96];
    size_t covered = 0;
    first[0] = '\0';
    if (receives_here(b, coll, root)) {
        for (int k = 0; k < l->nrecv; k++) {
            int src = l->recv_each ? k : root;
            snprintf(where, sizeof where, "from rank %d (%zu bytes at %zu)", src, l->rcounts[k],
                     l->rdispls[k]);
            errs += compare_block(b, "receive", r + l->rdispls[k], l->rcounts[k], src,
                                  l->send_each ? b->rank : ANY_DST, iter, printed + errs, where, first,
                                  first_len);
        }
        covered = l->rbytes;
    }
    errs += check_untouched(b, r, covered, printed + errs, errs == 0, first, first_len);
    if (sends_here(b, coll, root))
        for (int k = 0; k < l->nsend; k++) {
            int dst = l->send_each ? k : ANY_DST;
            if (dst == ANY_DST)
                snprintf(where, sizeof where, "(%zu bytes at %zu), changed by the call",
                         l->scounts[k], l->sdispls[k]);
            else
                snprintf(where, sizeof where, "to rank %d (%zu bytes at %zu), changed by the call",
                         dst, l->scounts[k], l->sdispls[k]);
            errs += compare_block(b, "send", s + l->sdispls[k], l->scounts[k],
                                  send_src(b, coll, root), dst, iter, printed + errs, where, first,
                                  first_len);
        }
    if (errs && printed < MAX_ERROR_LINES)
        fprintf(stderr, "rcoll-bench rank %d: ... in %s impl=%s bytes=%zu root=%d %s %d: %ld wrong "
                "bytes\n", b->rank, rcoll_coll_name(coll), im->label, m, root,
                iter >= CHECK_ITER ? "check before timing, call" : "iteration",
                iter >= CHECK_ITER ? INT_MAX - iter : iter, errs);
    return errs;
}

/* ------------------------------------------------------------------ calls */

static int native_call(struct bench *b, rcoll_coll_t coll, void *s, void *r, size_t m, int root)
{
    const struct layout *l = &b->lay;
    int n = (int)m;
    MPI_Comm c = b->comm;
    switch (coll) {
    case RCOLL_COLL_BARRIER:
        return PMPI_Barrier(c);
    case RCOLL_COLL_ALLGATHER:
        return PMPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, c);
    case RCOLL_COLL_ALLTOALL:
        return PMPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, c);
    case RCOLL_COLL_BCAST:
        return PMPI_Bcast(r, n, MPI_BYTE, root, c);
    case RCOLL_COLL_GATHER:
        return PMPI_Gather(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c);
    case RCOLL_COLL_SCATTER:
        return PMPI_Scatter(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c);
    case RCOLL_COLL_ALLGATHERV:
        return PMPI_Allgatherv(s, l->iscounts[0], MPI_BYTE, r, l->ircounts, l->irdispls, MPI_BYTE, c);
    case RCOLL_COLL_ALLTOALLV:
        return PMPI_Alltoallv(s, l->iscounts, l->isdispls, MPI_BYTE, r, l->ircounts, l->irdispls,
                              MPI_BYTE, c);
    case RCOLL_COLL_GATHERV:
        return PMPI_Gatherv(s, l->iscounts[0], MPI_BYTE, r, l->ircounts, l->irdispls, MPI_BYTE, root,
                            c);
    case RCOLL_COLL_SCATTERV:
        return PMPI_Scatterv(s, l->iscounts, l->isdispls, MPI_BYTE, r, l->ircounts[0], MPI_BYTE, root,
                             c);
    default:
        break;
    }
    /* The reductions: counts in elements of the run's type (m / element size). */
    int e = (int)(m / b->esize);
    MPI_Datatype t = b->mdtype;
    MPI_Op op = b->mop;
    switch (coll) {
    case RCOLL_COLL_ALLREDUCE:
        return PMPI_Allreduce(s, r, e, t, op, c);
    case RCOLL_COLL_REDUCE:
        return PMPI_Reduce(s, r, e, t, op, root, c);
    case RCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return PMPI_Reduce_scatter_block(s, r, e, t, op, c);
    case RCOLL_COLL_REDUCE_SCATTER:
        return PMPI_Reduce_scatter(s, r, l->iecounts, t, op, c);
    case RCOLL_COLL_SCAN:
        return PMPI_Scan(s, r, e, t, op, c);
    case RCOLL_COLL_EXSCAN:
        return PMPI_Exscan(s, r, e, t, op, c);
    default:
        return MPI_ERR_OTHER;
    }
}

static rcoll_status_t rcoll_call(struct bench *b, rcoll_coll_t coll, void *s, void *r, size_t m, int root)
{
    const struct layout *l = &b->lay;
    rcoll_team_t *t = b->team;
    switch (coll) {
    case RCOLL_COLL_BARRIER:
        return rcoll_barrier(t);
    case RCOLL_COLL_ALLGATHER:
        return rcoll_allgather(t, s, r, m);
    case RCOLL_COLL_ALLTOALL:
        return rcoll_alltoall(t, s, r, m);
    case RCOLL_COLL_BCAST:
        return rcoll_bcast(t, r, m, root);
    case RCOLL_COLL_GATHER:
        return rcoll_gather(t, s, r, m, root);
    case RCOLL_COLL_SCATTER:
        return rcoll_scatter(t, s, r, m, root);
    case RCOLL_COLL_ALLGATHERV:
        return rcoll_allgatherv(t, s, l->scounts[0], r, l->rcounts, l->rdispls);
    case RCOLL_COLL_ALLTOALLV:
        return rcoll_alltoallv(t, s, l->scounts, l->sdispls, r, l->rcounts, l->rdispls);
    case RCOLL_COLL_GATHERV:
        return rcoll_gatherv(t, s, l->scounts[0], r, l->rcounts, l->rdispls, root);
    case RCOLL_COLL_SCATTERV:
        return rcoll_scatterv(t, s, l->scounts, l->sdispls, r, l->rcounts[0], root);
    case RCOLL_COLL_ALLREDUCE:
        return rcoll_allreduce(t, s, r, m / b->esize, b->dtype, b->op);
    case RCOLL_COLL_REDUCE:
        return rcoll_reduce(t, s, r, m / b->esize, b->dtype, b->op, root);
    case RCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return rcoll_reduce_scatter_block(t, s, r, m / b->esize, b->dtype, b->op);
    case RCOLL_COLL_REDUCE_SCATTER:
        return rcoll_reduce_scatter(t, s, r, l->ecounts, b->dtype, b->op);
    case RCOLL_COLL_SCAN:
        return rcoll_scan(t, s, r, m / b->esize, b->dtype, b->op);
    case RCOLL_COLL_EXSCAN:
        return rcoll_exscan(t, s, r, m / b->esize, b->dtype, b->op);
    default:
        return RCOLL_ERR_INVALID;
    }
}

/* Posts the nonblocking form of native_call's collective into *req. */
static int native_icall(struct bench *b, rcoll_coll_t coll, void *s, void *r, size_t m, int root,
                        MPI_Request *req)
{
    const struct layout *l = &b->lay;
    int n = (int)m;
    MPI_Comm c = b->comm;
    switch (coll) {
    case RCOLL_COLL_BARRIER:
        return PMPI_Ibarrier(c, req);
    case RCOLL_COLL_ALLGATHER:
        return PMPI_Iallgather(s, n, MPI_BYTE, r, n, MPI_BYTE, c, req);
    case RCOLL_COLL_ALLTOALL:
        return PMPI_Ialltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, c, req);
    case RCOLL_COLL_BCAST:
        return PMPI_Ibcast(r, n, MPI_BYTE, root, c, req);
    case RCOLL_COLL_GATHER:
        return PMPI_Igather(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c, req);
    case RCOLL_COLL_SCATTER:
        return PMPI_Iscatter(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c, req);
    case RCOLL_COLL_ALLGATHERV:
        return PMPI_Iallgatherv(s, l->iscounts[0], MPI_BYTE, r, l->ircounts, l->irdispls, MPI_BYTE, c,
                                req);
    case RCOLL_COLL_ALLTOALLV:
        return PMPI_Ialltoallv(s, l->iscounts, l->isdispls, MPI_BYTE, r, l->ircounts, l->irdispls,
                               MPI_BYTE, c, req);
    case RCOLL_COLL_GATHERV:
        return PMPI_Igatherv(s, l->iscounts[0], MPI_BYTE, r, l->ircounts, l->irdispls, MPI_BYTE, root,
                             c, req);
    case RCOLL_COLL_SCATTERV:
        return PMPI_Iscatterv(s, l->iscounts, l->isdispls, MPI_BYTE, r, l->ircounts[0], MPI_BYTE, root,
                              c, req);
    default:
        return MPI_ERR_OTHER;
    }
}

/* Whether this MPI has persistent collectives (else --persistent times its blocking call). */
static int native_persistent(void)
{
#ifdef NATIVE_PERSISTENT
    return 1;
#else
    return 0;
#endif
}

/* Makes the native persistent request of native_call's collective (with root) in *req. */
static int native_pinit(struct bench *b, rcoll_coll_t coll, void *s, void *r, size_t m, int root,
                        MPI_Request *req)
{
#ifdef NATIVE_PERSISTENT
    const struct layout *l = &b->lay;
    int n = (int)m;
    MPI_Comm c = b->comm;
    MPI_Info i = MPI_INFO_NULL;
    switch (coll) {
    case RCOLL_COLL_BARRIER:
        return PINIT(Barrier)(c, i, req);
    case RCOLL_COLL_ALLGATHER:
        return PINIT(Allgather)(s, n, MPI_BYTE, r, n, MPI_BYTE, c, i, req);
    case RCOLL_COLL_ALLTOALL:
        return PINIT(Alltoall)(s, n, MPI_BYTE, r, n, MPI_BYTE, c, i, req);
    case RCOLL_COLL_BCAST:
        return PINIT(Bcast)(r, n, MPI_BYTE, root, c, i, req);
    case RCOLL_COLL_GATHER:
        return PINIT(Gather)(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c, i, req);
    case RCOLL_COLL_SCATTER:
        return PINIT(Scatter)(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c, i, req);
    case RCOLL_COLL_ALLGATHERV:
        return PINIT(Allgatherv)(s, l->iscounts[0], MPI_BYTE, r, l->ircounts, l->irdispls, MPI_BYTE, c,
                                 i, req);
    case RCOLL_COLL_ALLTOALLV:
        return PINIT(Alltoallv)(s, l->iscounts, l->isdispls, MPI_BYTE, r, l->ircounts, l->irdispls,
                                MPI_BYTE, c, i, req);
    case RCOLL_COLL_GATHERV:
        return PINIT(Gatherv)(s, l->iscounts[0], MPI_BYTE, r, l->ircounts, l->irdispls, MPI_BYTE, root,
                              c, i, req);
    case RCOLL_COLL_SCATTERV:
        return PINIT(Scatterv)(s, l->iscounts, l->isdispls, MPI_BYTE, r, l->ircounts[0], MPI_BYTE, root,
                               c, i, req);
    default:
        return MPI_ERR_OTHER;
    }
#else
    (void)b, (void)coll, (void)s, (void)r, (void)m, (void)root;
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
#endif
}

/* Posts rcoll's nonblocking form of rcoll_call's collective into *req. */
static rcoll_status_t rcoll_icall(struct bench *b, rcoll_coll_t coll, void *s, void *r, size_t m, int root,
                                  rcoll_request_t **req)
{
    const struct layout *l = &b->lay;
    rcoll_team_t *t = b->team;
    switch (coll) {
    case RCOLL_COLL_BARRIER:
        return rcoll_ibarrier(t, req);
    case RCOLL_COLL_ALLGATHER:
        return rcoll_iallgather(t, s, r, m, req);
    case RCOLL_COLL_ALLTOALL:
        return rcoll_ialltoall(t, s, r, m, req);
    case RCOLL_COLL_BCAST:
        return rcoll_ibcast(t, r, m, root, req);
    case RCOLL_COLL_GATHER:
        return rcoll_igather(t, s, r, m, root, req);
    case RCOLL_COLL_SCATTER:
        return rcoll_iscatter(t, s, r, m, root, req);
    case RCOLL_COLL_ALLGATHERV:
        return rcoll_iallgatherv(t, s, l->scounts[0], r, l->rcounts, l->rdispls, req);
    case RCOLL_COLL_ALLTOALLV:
        return rcoll_ialltoallv(t, s, l->scounts, l->sdispls, r, l->rcounts, l->rdispls, req);
    case RCOLL_COLL_GATHERV:
        return rcoll_igatherv(t, s, l->scounts[0], r, l->rcounts, l->rdispls, root, req);
    case RCOLL_COLL_SCATTERV:
        return rcoll_iscatterv(t, s, l->scounts, l->sdispls, r, l->rcounts[0], root, req);
    default:
        return RCOLL_ERR_INVALID;
    }
}

/* Makes rcoll's persistent request of rcoll_call's collective (with root) in *req. */
static rcoll_status_t rcoll_pinit(struct bench *b, rcoll_coll_t coll, void *s, void *r, size_t m, int root,
                                  rcoll_request_t **req)
{
    const struct layout *l = &b->lay;
    rcoll_team_t *t = b->team;
    switch (coll) {
    case RCOLL_COLL_BARRIER:
        return rcoll_barrier_init(t, req);
    case RCOLL_COLL_ALLGATHER:
        return rcoll_allgather_init(t, s, r, m, req);
    case RCOLL_COLL_ALLTOALL:
        return rcoll_alltoall_init(t, s, r, m, req);
    case RCOLL_COLL_BCAST:
        return rcoll_bcast_init(t, r, m, root, req);
    case RCOLL_COLL_GATHER:
        return rcoll_gather_init(t, s, r, m, root, req);
    case RCOLL_COLL_SCATTER:
        return rcoll_scatter_init(t, s, r, m, root, req);
    case RCOLL_COLL_ALLGATHERV:
        return rcoll_allgatherv_init(t, s, l->scounts[0], r, l->rcounts, l->rdispls, req);
    case RCOLL_COLL_ALLTOALLV:
        return rcoll_alltoallv_init(t, s, l->scounts, l->sdispls, r, l->rcounts, l->rdispls, req);
    case RCOLL_COLL_GATHERV:
        return rcoll_gatherv_init(t, s, l->scounts[0], r, l->rcounts, l->rdispls, root, req);
    case RCOLL_COLL_SCATTERV:
        return rcoll_scatterv_init(t, s, l->scounts, l->sdispls, r, l->rcounts[0], root, req);
    default:
        return RCOLL_ERR_INVALID;
    }
}

/* ------------------------------------------------------------------ arrival skew */

/* A 64-bit mix (splitmix64's finaliser): the delays are a function of (seed, iteration, rank),
 * so every implementation meets exactly the same arrival pattern. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) for (seed, iteration, rank, what). */
static double uniform(const struct options *o, int iter, int rank, unsigned what)
{
    uint64_t h = mix64(mix64(mix64(o->seed ^ ((uint64_t)what << 56)) ^ (uint64_t)(unsigned)iter) ^
                       (uint64_t)(unsigned)rank);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* Whether `rank` is one of the round(F * np) late ranks of iteration `iter`: the ranks with the
 * smallest keys of that iteration (every rank computes the same set). */
static int is_late(const struct bench *b, const struct options *o, int iter, int rank)
{
    int k = (int)(o->late_frac * b->size + 0.5), before = 0;
    if (k <= 0)
        return 0;
    if (o->late_same)
        iter = 0;
    double mine = uniform(o, iter, rank, 2);
    for (int r = 0; r < b->size; r++) {
        double theirs = uniform(o, iter, r, 2);
        before += theirs < mine || (theirs == mine && r < rank);
    }
    return before < k;
}

/* The delay of `rank` before the call of iteration `iter`, microseconds. */
static double delay_of(const struct bench *b, const struct options *o, int iter, int rank)
{
    double d = 0;
    if (o->mif > 0)
        d += o->mif * b->msg_us * uniform(o, iter, rank, 1);
    if (b->late_us > 0 && is_late(b, o, iter, rank))
        d += b->late_us;
    return d;
}



/* Seconds on the host's monotonic clock, which every process of the host shares (MPI_Wtime
 * need not: Open MPI's counts from each process's own start). */
static double host_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Computes (the core stays busy, as an imbalanced program's would) for `us` microseconds. */
static void compute_for(double us)
{
    if (us <= 0)
        return;
    double end = PMPI_Wtime() + us * 1e-6;
    volatile double x = 1.0;
    while (PMPI_Wtime() < end)
        for (int k = 0; k < 64; k++)
            x = x * 1.0000001 + 1e-9;
}

/* --mif: the time of one message of m bytes, one way: native ping-pong between ranks 0 and 1,
 * the fastest of 50 round trips after 10, halved, known to every rank. The fastest, not the
 * mean: with more ranks than cores the others wait meanwhile, and an MPI that busy-polls
 * (MPICH) would otherwise measure the scheduler's time slices instead of a message. */
static double message_time_us(struct bench *b, size_t m)
{
    double us = 0;
    if (b->size > 1 && b->rank <= 1) {
        int peer = 1 - b->rank, reps = m > BIG_BYTES ? 20 : 50;
        void *buf = xmalloc(b, m ? m : 1);
        memset(buf, 0, m ? m : 1);
        double best = 1e30;
        for (int i = 0; i < 10 + reps; i++) {
            double t0 = PMPI_Wtime();
            if (b->rank == 0) {
                PMPI_Send(buf, (int)m, MPI_BYTE, peer, 77, b->comm);
                PMPI_Recv(buf, (int)m, MPI_BYTE, peer, 77, b->comm, MPI_STATUS_IGNORE);
            } else {
                PMPI_Recv(buf, (int)m, MPI_BYTE, peer, 77, b->comm, MPI_STATUS_IGNORE);
                PMPI_Send(buf, (int)m, MPI_BYTE, peer, 77, b->comm);
            }
            double t = PMPI_Wtime() - t0;
            if (i >= 10 && t < best)
                best = t;
        }
        us = best / 2 * 1e6;
        free(buf);
    }
    PMPI_Bcast(&us, 1, MPI_DOUBLE, 0, b->comm);
    return us;
}

/* One nonblocking or persistent call between its post (or start) and its completion. */
struct pending {
    MPI_Request own, *nreq;  /* native: its request (own, or a persistent one of b->nreq) */
    rcoll_request_t *rreq;   /* rcoll: its request (NULL if the post failed) */
};

/* Index in b->nreq / b->rreq of the persistent request for root (one per root with rotate). */
static int persistent_index(const struct bench *b, rcoll_coll_t coll, int root)
{
    return is_rooted(coll) && b->npreq > 1 ? root : 0;
}

/* Posts (nonblocking, overlap) or starts (persistent) im's call. A native error aborts; an
 * rcoll error is returned in *st. Native without persistent collectives: the blocking call. */
static void post_call(struct bench *b, rcoll_coll_t coll, const struct impl *im, void *s, void *r,
                      size_t m, int root, struct pending *p, rcoll_status_t *st)
{
    int rc = MPI_SUCCESS, k = persistent_index(b, coll, root);
    p->own = MPI_REQUEST_NULL;
    p->nreq = &p->own;
    p->rreq = NULL;
    if (im->mode != MODE_PERSISTENT) {
        if (im->kind == IMPL_NATIVE)
            rc = native_icall(b, coll, s, r, m, root, &p->own);
        else if ((*st = rcoll_icall(b, coll, s, r, m, root, &p->rreq)) != RCOLL_OK)
            p->rreq = NULL; /* a failed post makes no request */
    } else if (im->kind == IMPL_NATIVE) {
        if (native_persistent()) {
            p->nreq = &b->nreq[k];
            rc = PMPI_Start(p->nreq);
        } else {
            rc = native_call(b, coll, s, r, m, root);
        }
    } else {
        p->rreq = b->rreq[k];
        *st = rcoll_start(p->rreq);
        if (*st != RCOLL_OK)
            p->rreq = NULL;
    }
    if (rc != MPI_SUCCESS)
        die(b, "native %s %s bytes=%zu root=%d failed (MPI error %d)", mode_names[im->mode],
            rcoll_coll_name(coll), m, root, rc);
}

/* Completes what post_call started: PMPI_Wait, or rcoll_wait then rcoll_request_free (not a
 * persistent request). With b->keep_algo, the algorithm that ran is kept in b->algo. */
static void wait_call(struct bench *b, const struct impl *im, struct pending *p, rcoll_status_t *st)
{
    if (im->kind == IMPL_NATIVE) {
        int rc = PMPI_Wait(p->nreq, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            die(b, "native %s wait failed (MPI error %d)", mode_names[im->mode], rc);
        return;
    }
    if (!p->rreq)
        return;
    rcoll_status_t w = rcoll_wait(p->rreq);
    if (*st == RCOLL_OK)
        *st = w;
    if (b->keep_algo)
        snprintf(b->algo, sizeof b->algo, "%s", rcoll_request_algorithm(p->rreq));
    if (im->mode != MODE_PERSISTENT)
        rcoll_request_free(p->rreq);
}

/* Runs one collective call in im's mode (the overlap mode's pure call: post, then wait) and
 * returns its duration in seconds; an rcoll error is returned in *st (a native error aborts:
 * MPI_ERRORS_ARE_FATAL, or die here). */
static double timed_call(struct bench *b, rcoll_coll_t coll, const struct impl *im, void *s, void *r,
                         size_t m, int root, rcoll_status_t *st)
{
    int rc = MPI_SUCCESS;
    if (im->mode != MODE_BLOCKING) {
        struct pending p;
        double t0 = PMPI_Wtime();
        post_call(b, coll, im, s, r, m, root, &p, st);
        wait_call(b, im, &p, st);
        return PMPI_Wtime() - t0;
    }
    double t0 = PMPI_Wtime();
    if (im->kind == IMPL_NATIVE)
        rc = native_call(b, coll, s, r, m, root);
    else
        *st = rcoll_call(b, coll, s, r, m, root);
    double t1 = PMPI_Wtime();
    if (rc != MPI_SUCCESS)
        die(b, "native %s bytes=%zu root=%d failed (MPI error %d)", rcoll_coll_name(coll), m, root, rc);
    return t1 - t0;
}

/* --overlap: post, compute for compute_us, wait. Returns the whole time (seconds) and puts the
 * post, compute and wait times in part[0..2]. */
static double overlap_call(struct bench *b, rcoll_coll_t coll, const struct impl *im, void *s, void *r,
                           size_t m, int root, double compute_us, double part[3], rcoll_status_t *st)
{
    struct pending p;
    double t0 = PMPI_Wtime();
    post_call(b, coll, im, s, r, m, root, &p, st);
    double t1 = PMPI_Wtime();
    compute_for(compute_us);
    double t2 = PMPI_Wtime();
    wait_call(b, im, &p, st);
    double t3 = PMPI_Wtime();
    part[0] = t1 - t0;
    part[1] = t2 - t1;
    part[2] = t3 - t2;
    return t3 - t0;
}

/* One timed iteration (untimed preparation + timed call + untimed check). Returns its time.
 * With part (--overlap), the call is post, compute for compute_us, wait (overlap_call). */
static double one_iteration(struct bench *b, const struct options *o, rcoll_coll_t coll,
                            const struct impl *im, size_t m, int iter, long *errs, double *delay,
                            double compute_us, double *part)
{
    const struct layout *l = &b->lay;
    unsigned char *s = b->sendbuf, *r = b->recvbuf;
    int data = has_data(coll);
    int root = root_of(b, o, coll, iter);
    if (data && o->no_reuse) { /* new memory and new contents: a byte that changes every
                                * iteration (1..120: doubles of it are normal numbers) */
        int fill = 1 + iter % 120;
        s = xmalloc(b, l->sbytes + GUARD);
        r = xmalloc(b, l->rbytes + GUARD);
        memset(s, fill, l->sbytes + GUARD);
        memset(r, fill, l->rbytes + GUARD);
    }
    if (o->check)
        fill_call(b, coll, root, iter, s, r);
    if (skewed_arrival(o)) {
        double d = delay_of(b, o, iter, b->rank);
        compute_for(d);
        if (delay) {
            delay[0] = d;
            delay[1] = host_clock(); /* this rank's arrival */
        }
    }
    rcoll_status_t st = RCOLL_OK;
    double t = part ? overlap_call(b, coll, im, s, r, m, root, compute_us, part, &st)
                    : timed_call(b, coll, im, s, r, m, root, &st); /* from this rank's own arrival */
    if (st != RCOLL_OK)
        die_rcoll(b, coll, m, root, st);
    if (o->check) {
        char first[MSG_LEN];
        *errs += verify_call(b, im, coll, m, root, iter, s, r, *errs, first, sizeof first);
    }
    if (data && o->no_reuse) {
        free(s);
        free(r);
    }
    return t;
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

/* The keys every record starts with: coll, impl, algo (what ran: a forced algorithm that does
 * not apply to a call gives way to its fallback, named here), np, ppn, bytes, op and dtype
 * (reductions), then root
 * (rooted collectives: a rank or "rotate"), skewed (v-forms), forced (rcoll) and forced_algo
 * (the algorithm asked for, when forced). */
static void json_head(const struct bench *b, const struct options *o, rcoll_coll_t coll,
                      const struct impl *im, const char *algo, size_t bytes)
{
    FILE *f = b->json;
    fprintf(f, "{\"coll\":");
    json_string(f, rcoll_coll_name(coll));
    fprintf(f, ",\"impl\":\"%s\",\"algo\":", im->kind == IMPL_NATIVE ? "native" : "rcoll");
    json_string(f, algo);
    fprintf(f, ",\"np\":%d,\"ppn\":%d,\"bytes\":%zu", b->size, b->ppn, bytes);
    if (is_reduction(coll))
        fprintf(f, ",\"op\":\"%s\",\"dtype\":\"%s\"", rcoll_op_name(b->op), rcoll_dtype_name(b->dtype));
    if (is_rooted(coll)) {
        if (o->root == ROOT_ROTATE)
            fprintf(f, ",\"root\":\"rotate\"");
        else
            fprintf(f, ",\"root\":%d", o->root);
    }
    if (is_vform(coll))
        fprintf(f, ",\"skewed\":%s", o->skewed ? "true" : "false");
    if (im->kind == IMPL_RCOLL)
        fprintf(f, ",\"forced\":%s", im->algo[0] ? "true" : "false");
    if (im->kind == IMPL_RCOLL && im->algo[0]) {
        fprintf(f, ",\"forced_algo\":");
        json_string(f, im->algo);
    }
    fprintf(f, ",\"sync\":%s", synced(o, coll) ? "true" : "false");
    if (o->no_reuse)
        fprintf(f, ",\"no_reuse\":true");
    fprintf(f, ",\"mode\":\"%s\"", mode_names[im->mode]);
    if (im->mode_set) /* IMPL@MODE: the run's own mode, of the implementations beside it */
        fprintf(f, ",\"run_mode\":\"%s\"", mode_names[o->mode]);
    if (im->mode == MODE_PERSISTENT && im->kind == IMPL_NATIVE)
        fprintf(f, ",\"native_form\":\"%s\"", native_persistent() ? "persistent" : "blocking");
    if (im->mode != MODE_BLOCKING && im->kind == IMPL_RCOLL && b->team) {
        fprintf(f, ",\"progress\":");
        json_string(f, rcoll_team_progress_mode(b->team));
    }
    if (skewed_arrival(o))
        fprintf(f, ",\"mif\":%g,\"late_frac\":%g,\"late_us\":%g,\"seed\":%lu", o->mif,
                o->late_frac, b->late_us, o->seed);
    if (o->late_pure > 0)
        fprintf(f, ",\"late_pure\":%g", o->late_pure);
    if (o->late_same)
        fprintf(f, ",\"late_same\":true");
}

/* --overlap's keys (reduce_overlap): OSU's pure, overall (the Avg column), compute and
 * overlap, with the post and wait times, and under skew the early ranks' wait and the pure
 * time without skew. */
static void json_overlap(FILE *f, const struct options *o, const struct result *r)
{
    fprintf(f, ",\"compute_for\":\"%s\",\"pure_us\":%.3f,\"overall_us\":%.3f,\"compute_us\":%.3f,"
            "\"post_us\":%.3f,\"wait_us\":%.3f,\"overlap_pct\":%.2f",
            per_iteration_compute(o) ? "iteration" : "mean", r->pure_us, r->avg_us, r->compute_us,
            r->post_us, r->wait_us, r->overlap_pct);
    if (r->wait_early_us >= 0)
        fprintf(f, ",\"wait_early_us\":%.3f", r->wait_early_us);
    if (r->pure_noskew_us >= 0)
        fprintf(f, ",\"pure_noskew_us\":%.3f", r->pure_noskew_us);
}

static void write_json(const struct bench *b, const struct options *o, rcoll_coll_t coll,
                       const struct impl *im, const struct result *r)
{
    FILE *f = b->json;
    json_head(b, o, coll, im, r->algo, r->bytes);
    fprintf(f, ",\"avg_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,\"iter_max_us\":%.3f",
            r->avg_us, r->min_us, r->max_us, r->iter_max_us);
    if (skewed_arrival(o))
        fprintf(f, ",\"delay_us\":%.3f,\"msg_us\":%.3f,\"floor_us\":%.3f,\"after_last_us\":%.3f",
                r->delay_us, r->msg_us, r->floor_max_us, r->after_last_us);
    if (im->mode == MODE_OVERLAP)
        json_overlap(f, o, r);
    fprintf(f, ",\"iters\":%d}\n", r->iters);
    fflush(f);
}

static void write_json_error(const struct bench *b, const struct options *o, rcoll_coll_t coll,
                             const struct impl *im, const char *algo, size_t bytes, const char *msg)
{
    FILE *f = b->json;
    json_head(b, o, coll, im, algo, bytes);
    fprintf(f, ",\"error\":");
    json_string(f, msg);
    fprintf(f, "}\n");
    fflush(f);
}

static void describe_variant(const struct options *o, rcoll_coll_t coll, char *buf, size_t len)
{
    buf[0] = '\0';
    if (is_reduction(coll))
        snprintf(buf, len, " op=%s dtype=%s", rcoll_op_name(o->op), rcoll_dtype_name(o->dtype));
    if (is_rooted(coll)) {
        size_t n = strlen(buf);
        buf += n;
        len -= n;
        if (o->root == ROOT_ROTATE)
            snprintf(buf, len, " root=rotate");
        else
            snprintf(buf, len, " root=%d", o->root);
    }
    if (is_vform(coll)) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, " counts=%s", o->skewed ? "skewed" : "equal");
    }
}

/* The mode words of a table's title (nothing for the blocking mode): mode=..., for native
 * MPI's persistent form what it is, for rcoll how its requests progressed (known once the team
 * has made one: the tables are printed after the measurements). */
static void describe_mode(const struct bench *b, const struct impl *im, char *buf, size_t len)
{
    buf[0] = '\0';
    if (im->mode == MODE_BLOCKING)
        return;
    size_t n = (size_t)snprintf(buf, len, " mode=%s", mode_names[im->mode]);
    if (im->kind == IMPL_RCOLL && b->team && n < len)
        snprintf(buf + n, len - n, " progress=%s", rcoll_team_progress_mode(b->team));
    if (im->mode == MODE_PERSISTENT && im->kind == IMPL_NATIVE && n < len)
#ifdef NATIVE_PERSISTENT
        snprintf(buf + n, len - n, " native_form=persistent(%s)", NATIVE_PERSISTENT);
#else
        snprintf(buf + n, len - n, " native_form=blocking(this MPI has no persistent collectives)");
#endif
}

static void print_header(const struct bench *b, const struct options *o, rcoll_coll_t coll,
                         const struct impl *im, const char *algo)
{
    char variant[128], mode[96];
    describe_variant(o, coll, variant, sizeof variant);
    describe_mode(b, im, mode, sizeof mode);
    printf("\n# rcoll-bench %s impl=%s algo=%s np=%d ppn=%d%s%s\n", rcoll_coll_name(coll), im->label,
           algo, b->size, b->ppn, variant, mode);
    printf("# Size  Avg Latency(us)  Min Latency(us)  Max Latency(us)  Iterations");
    if (skewed_arrival(o))
        printf("  IterMax(us)  Delay(us)  Floor(us)  AfterLast(us)");
    if (im->mode == MODE_OVERLAP)
        printf("  Pure(us)  Compute(us)  Wait(us)  Overlap(%%)");
    if (im->mode == MODE_OVERLAP && o->late_frac > 0)
        printf("  WaitEarly(us)");
    if (im->mode == MODE_OVERLAP && skewed_arrival(o))
        printf("  PureNoSkew(us)");
    printf("\n");
}

/* Prints one impl's rows; a new header starts whenever the resolved algorithm changes. */
static void print_block(const struct bench *b, const struct options *o, rcoll_coll_t coll,
                        const struct impl *im, const struct impl_results *ir)
{
    const char *cur = NULL;
    for (int k = 0; k < ir->n; k++) {
        const struct result *r = &ir->rows[k];
        if (!cur || strcmp(cur, r->algo) != 0) {
            print_header(b, o, coll, im, r->algo);
            cur = r->algo;
        }
        printf("%-10zu%18.2f%18.2f%18.2f%12d", r->bytes, r->avg_us, r->min_us, r->max_us,
               r->iters);
        if (skewed_arrival(o))
            printf("%13.2f%11.2f%11.2f%15.2f", r->iter_max_us, r->delay_us, r->floor_max_us,
                   r->after_last_us);
        if (im->mode == MODE_OVERLAP)
            printf("%10.2f%13.2f%10.2f%12.1f", r->pure_us, r->compute_us, r->wait_us,
                   r->overlap_pct);
        if (im->mode == MODE_OVERLAP && o->late_frac > 0)
            printf("%15.2f", r->wait_early_us);
        if (im->mode == MODE_OVERLAP && skewed_arrival(o))
            printf("%16.2f", r->pure_noskew_us);
        printf("\n");
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------ measuring */

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
        die_rcoll(b, coll, 0, 0, st);
}

/* A fresh team after an rcoll error, so that nothing of the failed call (sequence numbers,
 * forced algorithm) carries over to the next measurements. Every rank calls it. */
static void persistent_free(struct bench *b);

static void recreate_team(struct bench *b)
{
    PMPI_Barrier(b->comm);
    persistent_free(b); /* its requests belong to the team */
    rcoll_team_destroy(b->team);
    b->team = NULL;
    rcoll_oob_t oob;
    rcoll_oob_from_mpi_comm(&b->comm, &oob);
    rcoll_status_t st = rcoll_team_create(b->ctx, &oob, &b->team);
    if (st != RCOLL_OK)
        die(b, "rcoll_team_create after an rcoll error: %s", rcoll_strerror(st));
}

/* After a failed check, agreed by all: rank 0 gathers every rank's message, prints them (stderr)
 * and a '# FAILED' line (stdout), and writes the JSON error record. */
static void report_failure(struct bench *b, const struct options *o, rcoll_coll_t coll,
                           const struct impl *im, size_t m, int root, const char *mine,
                           const char *algo)
{
    char *all = b->rank == 0 ? xmalloc(b, (size_t)b->size * MSG_LEN) : NULL;
    char buf[MSG_LEN];
    snprintf(buf, sizeof buf, "%s", mine);
    PMPI_Gather(buf, MSG_LEN, MPI_CHAR, all, MSG_LEN, MPI_CHAR, 0, b->comm);
    b->failures++;
    if (b->rank != 0)
        return;
    char variant[128];
    describe_variant(o, coll, variant, sizeof variant);
    int nbad = 0, first = -1;
    for (int r = 0; r < b->size; r++) {
        const char *msg = all + (size_t)r * MSG_LEN;
        if (!msg[0])
            continue;
        nbad++;
        if (first < 0)
            first = r;
        int seen = 0; /* the same message from several ranks is printed once, with their list */
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(all + (size_t)q * MSG_LEN, msg) == 0;
        if (seen)
            continue;
        fprintf(stderr, "rcoll-bench: FAILED %s impl=%s bytes=%zu%s on rank(s)", rcoll_coll_name(coll),
                im->label, m, variant);
        for (int q = r; q < b->size; q++)
            if (strcmp(all + (size_t)q * MSG_LEN, msg) == 0)
                fprintf(stderr, " %d", q);
        fprintf(stderr, ": %s\n", msg);
    }
    char at_root[32] = "";
    if (o->root == ROOT_ROTATE && is_rooted(coll))
        snprintf(at_root, sizeof at_root, "call with root %d: ", root);
    char summary[MSG_LEN + 96];
    snprintf(summary, sizeof summary, "%s%d of %d ranks, first rank %d: %s", at_root, nbad, b->size,
             first, first >= 0 ? all + (size_t)first * MSG_LEN : "?");
    printf("# FAILED: %s impl=%s algo=%s bytes=%zu%s: %s; not measured further for %s\n",
           rcoll_coll_name(coll), im->label, algo, m, variant, summary, rcoll_coll_name(coll));
    fflush(stdout);
    fflush(stderr);
    if (b->json)
        write_json_error(b, o, coll, im, algo, m, summary);
    free(all);
}

/* The algorithm that ran im's last call: "native"; rcoll's of the team's last blocking call,
 * or of the last request kept by wait_call (b->algo). */
static const char *ran_algo(const struct bench *b, const struct impl *im)
{
    if (im->kind == IMPL_NATIVE)
        return "native";
    if (im->mode != MODE_BLOCKING && b->algo[0])
        return b->algo;
    return rcoll_team_last_algorithm(b->team);
}

/* --persistent: frees the requests persistent_init made (inactive ones). */
static void persistent_free(struct bench *b)
{
    for (int k = 0; k < b->npreq; k++) {
        if (b->nreq[k] != MPI_REQUEST_NULL)
            PMPI_Request_free(&b->nreq[k]);
        if (b->rreq[k])
            rcoll_request_free(b->rreq[k]);
        b->nreq[k] = MPI_REQUEST_NULL;
        b->rreq[k] = NULL;
    }
    b->npreq = 0;
}

/* --persistent: makes im's requests for (coll, size m) on the reused buffers, outside the
 * timing: one per root with --root rotate (request k has root k), else one. Returns 0, or -1
 * after a failure agreed by every rank and reported as a failed check (team recreated). */
static int persistent_init(struct bench *b, const struct options *o, rcoll_coll_t coll,
                           struct impl *im, size_t m)
{
    int n = is_rooted(coll) && o->root == ROOT_ROTATE ? b->size : 1;
    rcoll_status_t st = RCOLL_OK;
    for (int k = 0; k < n; k++) {
        int root = is_rooted(coll) ? (o->root == ROOT_ROTATE ? k : o->root) : 0;
        b->nreq[k] = MPI_REQUEST_NULL;
        b->rreq[k] = NULL;
        b->npreq = k + 1;
        if (im->kind == IMPL_NATIVE) {
            int rc = native_pinit(b, coll, b->sendbuf, b->recvbuf, m, root, &b->nreq[k]);
            if (rc != MPI_SUCCESS)
                die(b, "native persistent %s bytes=%zu root=%d: init failed (MPI error %d)",
                    rcoll_coll_name(coll), m, root, rc);
        } else if (st == RCOLL_OK) {
            st = rcoll_pinit(b, coll, b->sendbuf, b->recvbuf, m, root, &b->rreq[k]);
        }
    }
    char msg[MSG_LEN] = "";
    if (st != RCOLL_OK) {
        const char *detail = rcoll_team_last_error(b->team);
        snprintf(msg, sizeof msg, "rcoll_%s_init: %s%s%s", rcoll_coll_name(coll), rcoll_strerror(st),
                 detail[0] ? ": " : "", detail);
    }
    int bad = msg[0] != '\0', nbad = 0;
    PMPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, b->comm);
    if (!nbad)
        return 0;
    report_failure(b, o, coll, im, m, is_rooted(coll) && o->root >= 0 ? o->root : 0, msg,
                   rcoll_team_last_algorithm(b->team));
    recreate_team(b); /* frees the requests made */
    return -1;
}

/* Untimed check of one (coll, impl, size) before timing it: one call (one per root with --root
 * rotate; a persistent request is started twice, with other data the second time, as a
 * restart that moved nothing or the data of its first start would go unseen), its data
 * verified, the outcome agreed by every rank. Returns 0 if it passed; else the failure is
 * reported and, for rcoll, the team recreated. */
static int check_block(struct bench *b, const struct options *o, rcoll_coll_t coll, struct impl *im,
                       size_t m)
{
    int nroots = is_rooted(coll) && o->root == ROOT_ROTATE ? b->size : 1;
    int ncalls = nroots * (im->mode == MODE_PERSISTENT ? 2 : 1);
    for (int k = 0; k < ncalls; k++) {
        int root = is_rooted(coll) ? (o->root == ROOT_ROTATE ? k % nroots : o->root) : 0;
        int iter = INT_MAX - k;
        unsigned char *s = b->sendbuf, *r = b->recvbuf;
        fill_call(b, coll, root, iter, s, r);
        rcoll_status_t st = RCOLL_OK;
        b->keep_algo = 1;
        b->algo[0] = '\0';
        timed_call(b, coll, im, s, r, m, root, &st);
        b->keep_algo = 0;
        char msg[MSG_LEN] = "";
        if (st != RCOLL_OK) {
            const char *detail = rcoll_team_last_error(b->team);
            snprintf(msg, sizeof msg, "rcoll error: %s%s%s", rcoll_strerror(st), detail[0] ? ": " : "",
                     detail);
        }
        else if (verify_call(b, im, coll, m, root, iter, s, r, 0, msg, sizeof msg) && !msg[0])
            snprintf(msg, sizeof msg, "wrong data");
        int bad = msg[0] != '\0', nbad = 0;
        PMPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, b->comm);
        if (!nbad)
            continue;
        char algo[ALGO_LEN];
        snprintf(algo, sizeof algo, "%s", ran_algo(b, im));
        report_failure(b, o, coll, im, m, root, msg, algo);
        if (im->kind == IMPL_RCOLL)
            recreate_team(b);
        return -1;
    }
    return 0;
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

/* Whether this rank's call cannot return before `peer` has arrived (its result needs that
 * rank's data or, for barrier, its arrival): every rank for the all-to-all kinds (allreduce and
 * reduce_scatter(_block) too); the root for those that fan out from it; a fan-in's root (gather,
 * reduce) needs every rank, the others no one; scan rank r ranks 0..r, exscan 0..r-1. */
static int depends_on(const struct bench *b, rcoll_coll_t coll, int root, int peer)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    if (coll == RCOLL_COLL_SCAN)           /* ranks 0..r */
        return peer <= b->rank;
    if (coll == RCOLL_COLL_EXSCAN)         /* ranks 0..r-1 */
        return peer < b->rank;
    if (coll == RCOLL_COLL_REDUCE)         /* a fan-in: the root needs every rank */
        return b->rank == root;
    if (!c->rooted)
        return 1;
    if (c->recv.blocks == RCOLL_BLOCKS_ONE) /* bcast, scatter(v): the root's data */
        return b->rank != root && peer == root;
    return b->rank == root;                 /* gather(v) */
}

/* With skew, on rank 0, from every rank's arrivals (the host's clock, so arrivals compare
 * across ranks of one host): the mean injected delay; the Max column's floor (per rank the mean
 * wait from its own arrival to the last arrival its result depends on, which no algorithm can
 * beat; the largest over ranks); and the mean time from that arrival to a rank's return (what
 * the algorithm itself still takes once its inputs are there), over ranks and iterations. */
static void reduce_delays(struct bench *b, const struct options *o, rcoll_coll_t coll, int warm,
                          int iters, struct result *res)
{
    double *mine = b->maxtimes; /* scratch: this rank's arrivals, then gathered by iteration */
    for (int i = 0; i < iters; i++)
        mine[i] = b->delays[2 * i + 1];
    PMPI_Allgather(mine, iters, MPI_DOUBLE, b->arrivals, iters, MPI_DOUBLE, b->comm);
    double sum[2] = {0, 0}, tot[2] = {0, 0}, floor = 0, mx = 0;
    for (int i = 0; i < iters; i++) {
        double arrive = b->delays[2 * i + 1], last = arrive;
        int root = root_of(b, o, coll, warm + i);
        for (int r = 0; r < b->size; r++)
            if (depends_on(b, coll, root, r) && b->arrivals[(size_t)r * iters + i] > last)
                last = b->arrivals[(size_t)r * iters + i];
        sum[0] += b->delays[2 * i];
        sum[1] += (arrive + b->times[i] - last) * 1e6;
        floor += (last - arrive) * 1e6;
    }
    sum[0] /= iters;
    sum[1] /= iters;
    floor /= iters;
    PMPI_Reduce(sum, tot, 2, MPI_DOUBLE, MPI_SUM, 0, b->comm);
    PMPI_Reduce(&floor, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    res->delay_us = tot[0] / b->size;
    res->after_last_us = tot[1] / b->size;
    res->floor_max_us = mx;
}

/* Runs warm then iters iterations (pattern and delay indices 0.., the timed ones warm..), an
 * untimed barrier after each where synced; the timed ones' times go to b->times, their delays
 * and arrivals to b->delays. With compute (--overlap), each is post, compute for compute[i]
 * microseconds (the warmup: compute[i % iters]), wait, its parts in b->posts, b->computes and
 * b->waits; without, the call (the pure time in --overlap). Returns the data errors seen. */
static long run_iterations(struct bench *b, const struct options *o, rcoll_coll_t coll,
                           const struct impl *im, size_t m, int warm, int iters, const double *compute)
{
    long errs = 0;
    double part[3];
    int sync = synced(o, coll);
    PMPI_Barrier(b->comm);
    for (int i = 0; i < warm; i++) {
        one_iteration(b, o, coll, im, m, i, &errs, NULL, compute ? compute[i % iters] : 0,
                      compute ? part : NULL);
        if (sync)
            PMPI_Barrier(b->comm);
    }
    for (int i = 0; i < iters; i++) {
        b->keep_algo = i == iters - 1;
        b->times[i] = one_iteration(b, o, coll, im, m, warm + i, &errs, &b->delays[2 * i],
                                    compute ? compute[i] : 0, compute ? part : NULL);
        b->keep_algo = 0;
        if (compute) {
            b->posts[i] = part[0];
            b->computes[i] = part[1];
            b->waits[i] = part[2];
        }
        if (sync)
            PMPI_Barrier(b->comm);
    }
    return errs;
}

static double mean_of(const double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    return sum / n;
}

/* The mean over ranks of each rank's mean of v (seconds), in microseconds, on every rank. */
static double rank_mean_us(struct bench *b, const double *v, int n)
{
    double mine = mean_of(v, n) * 1e6, tot = 0;
    PMPI_Allreduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, b->comm);
    return tot / b->size;
}

/* --overlap, on rank 0 (after reduce_times): OSU's means over ranks of the pure time (pure_us
 * per rank), of compute and of post; the largest over ranks of the mean wait and, with late
 * ranks, of the mean wait over the iterations where the rank was not late (-1: none); the
 * overlap max(0, 100 (1 - (overall - compute) / pure)), overall the Avg column. */
static void reduce_overlap(struct bench *b, const struct options *o, int warm, int iters,
                           double pure_us, struct result *res)
{
    double early = 0;
    int nearly = 0;
    for (int i = 0; i < iters; i++)
        if (o->late_frac > 0 && !is_late(b, o, warm + i, b->rank)) {
            early += b->waits[i];
            nearly++;
        }
    double sums[3] = {pure_us, mean_of(b->computes, iters) * 1e6, mean_of(b->posts, iters) * 1e6};
    double maxs[2] = {mean_of(b->waits, iters) * 1e6, nearly ? early / nearly * 1e6 : -1};
    double tot[3], mx[2];
    PMPI_Reduce(sums, tot, 3, MPI_DOUBLE, MPI_SUM, 0, b->comm);
    PMPI_Reduce(maxs, mx, 2, MPI_DOUBLE, MPI_MAX, 0, b->comm);
    if (b->rank != 0)
        return;
    res->pure_us = tot[0] / b->size;
    res->compute_us = tot[1] / b->size;
    res->post_us = tot[2] / b->size;
    res->wait_us = mx[0];
    res->wait_early_us = mx[1];
    double ov = res->pure_us > 0 ? 100.0 * (1.0 - (res->avg_us - res->compute_us) / res->pure_us) : 0;
    res->overlap_pct = ov > 0 ? ov : 0;
}

/* --overlap's timed part, as OSU's osu_iallgather: with skew, first the pure time (post, then
 * wait at once) without it (PureNoSkew; --late-pure's unit), then the pure time of every rank
 * under the skew, then the iterations of post, compute, wait with the same seeded delays. Each
 * rank computes its mean pure time, or (per_iteration_compute) its own pure time of the same
 * iteration. Returns the data errors seen; this rank's mean pure time in *pure_us. */
static long overlap_phases(struct bench *b, const struct options *o, rcoll_coll_t coll,
                           const struct impl *im, size_t m, int warm, int iters, struct result *res,
                           double *pure_us)
{
    long errs = 0;
    res->pure_noskew_us = -1;
    if (skewed_arrival(o)) {
        struct options plain = *o;
        plain.mif = plain.late_frac = plain.late_us = plain.late_pure = 0;
        errs += run_iterations(b, &plain, coll, im, m, warm, iters, NULL);
        res->pure_noskew_us = rank_mean_us(b, b->times, iters);
        if (o->late_pure > 0)
            b->late_us = o->late_pure * res->pure_noskew_us;
    }
    errs += run_iterations(b, o, coll, im, m, warm, iters, NULL);
    double mine = mean_of(b->times, iters) * 1e6;
    for (int i = 0; i < iters; i++)
        b->pure[i] = per_iteration_compute(o) ? b->times[i] * 1e6 : mine;
    errs += run_iterations(b, o, coll, im, m, warm, iters, b->pure);
    *pure_us = mine;
    return errs;
}

/* Measures one (coll, impl, size) block. Returns 0 with *res filled on rank 0, -1 if skipped
 * or failed (im->failed set). */
static int measure(struct bench *b, const struct options *o, rcoll_coll_t coll, struct impl *im,
                   size_t m, struct result *res)
{
    if (force_algorithm(b, coll, im))
        return -1;
    if (im->mode == MODE_PERSISTENT && persistent_init(b, o, coll, im, m)) {
        im->failed = 1;
        return -1;
    }
    b->algo[0] = '\0';
    b->late_us = o->late_us;
    if (check_block(b, o, coll, im, m)) { /* reported; an rcoll team was recreated (unforced) */
        persistent_free(b);
        im->failed = 1;
        return -1;
    }
    int warm = warmup_iters(o, m), iters = timed_iters(o, m);
    double pure_us = 0;
    memset(res, 0, sizeof *res);
    long errs = im->mode == MODE_OVERLAP
                    ? overlap_phases(b, o, coll, im, m, warm, iters, res, &pure_us)
                    : run_iterations(b, o, coll, im, m, warm, iters, NULL);
    res->bytes = m;
    snprintf(res->algo, sizeof res->algo, "%s", ran_algo(b, im));
    if (im->mode == MODE_PERSISTENT)
        persistent_free(b);
    unforce_algorithm(b, coll, im);
    if (skewed_arrival(o)) /* before reduce_times, whose maxtimes it borrows */
        reduce_delays(b, o, coll, warm, iters, res);
    reduce_times(b, iters, res);
    if (im->mode == MODE_OVERLAP)
        reduce_overlap(b, o, warm, iters, pure_us, res);
    res->msg_us = b->msg_us;
    if (errs)
        fprintf(stderr, "rcoll-bench rank %d: %ld data errors in %s impl=%s bytes=%zu\n", b->rank,
                errs, rcoll_coll_name(coll), im->label, m);
    b->errors += errs;
    return 0;
}

/* ------------------------------------------------------------------ driver */

static void run_coll(struct bench *b, struct options *o, rcoll_coll_t coll)
{
    struct impl_results ir[MAX_IMPLS];
    int maxrows = 2 + (has_data(coll) ? 64 : 0);
    for (int k = 0; k < o->nimpls; k++) {
        ir[k].rows = xmalloc(b, sizeof(struct result) * (size_t)maxrows);
        ir[k].n = 0;
        o->impls[k].skip_reported = 0;
        o->impls[k].failed = 0;
    }
    size_t bytes = 0;
    for (int first = 1; next_size(o, coll, bytes, first, &bytes); first = 0) {
        if (is_reduction(coll) && bytes % b->esize != 0)
            continue; /* not a whole number of elements */
        if (set_layout(b, o, coll, bytes))
            die(b, "%s bytes=%zu: counts do not fit in an int", rcoll_coll_name(coll), bytes);
        if (o->mif > 0)
            b->msg_us = message_time_us(b, bytes);
        for (int k = 0; k < o->nimpls; k++) {
            struct impl *im = &o->impls[k];
            if ((im->kind == IMPL_RCOLL && !b->team) || im->failed)
                continue;
            struct result *res = &ir[k].rows[ir[k].n];
            if (measure(b, o, coll, im, bytes, res))
                continue;
            ir[k].n++;
            if (b->rank == 0 && b->json)
                write_json(b, o, coll, im, res);
        }
    }
    for (int k = 0; k < o->nimpls; k++) {
        if (b->rank == 0 && ir[k].n > 0)
            print_block(b, o, coll, &o->impls[k], &ir[k]);
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

/* The reductions' element type and operation, rcoll's and native MPI's; native MPI's type must
 * span the same bytes as rcoll's (the same C layout). */
static void setup_reduction(struct bench *b, const struct options *o)
{
    b->dtype = o->dtype;
    b->op = o->op;
    b->rop = red_op_of(o->op);
    b->esize = rcoll_dtype_size(o->dtype);
    b->mdtype = mpi_dtype_of(o->dtype);
    b->mop = mpi_op_of(b->rop);
    int any = 0;
    for (int k = 0; k < o->ncolls; k++)
        any |= is_reduction(o->colls[k]);
    if (!any)
        return;
    MPI_Aint lb = 0, extent = 0;
    if (b->mdtype == MPI_DATATYPE_NULL || b->mop == MPI_OP_NULL)
        die(b, "no native MPI type or operation for --dtype %s --op %s", rcoll_dtype_name(o->dtype),
            rcoll_op_name(o->op));
    PMPI_Type_get_extent(b->mdtype, &lb, &extent);
    if (lb != 0 || (size_t)extent != b->esize)
        die(b, "--dtype %s: native MPI's type spans %ld bytes from %ld, rcoll's element %zu: not "
            "comparable", rcoll_dtype_name(o->dtype), (long)extent, (long)lb, b->esize);
}

static void setup(struct bench *b, const struct options *o)
{
    PMPI_Comm_rank(b->comm, &b->rank);
    PMPI_Comm_size(b->comm, &b->size);
    b->ppn = node_ppn(b->comm);
    setup_reduction(b, o);
    layout_alloc(b);
    size_t maxs = 0, maxr = 0;
    for (int k = 0; k < o->ncolls; k++) {
        /* the extents grow with the size: the largest is at max_bytes */
        if (set_layout(b, o, o->colls[k], has_data(o->colls[k]) ? o->max_bytes : 0))
            die(b, "-m MAX %zu is too large for %s at np=%d: a count or extent exceeds INT_MAX",
                o->max_bytes, rcoll_coll_name(o->colls[k]), b->size);
        if (b->lay.sbytes > maxs)
            maxs = b->lay.sbytes;
        if (b->lay.rbytes > maxr)
            maxr = b->lay.rbytes;
    }
    b->sendbuf = xmalloc(b, maxs + GUARD);
    b->recvbuf = xmalloc(b, maxr + GUARD);
    memset(b->sendbuf, 1, maxs + GUARD);
    memset(b->recvbuf, 0, maxr + GUARD);
    int n = o->iters > 1 ? o->iters : 1;
    b->times = xmalloc(b, sizeof(double) * (size_t)n);
    b->maxtimes = xmalloc(b, sizeof(double) * (size_t)n);
    b->delays = xmalloc(b, 2 * sizeof(double) * (size_t)n);
    b->arrivals = xmalloc(b, sizeof(double) * (size_t)n * (size_t)b->size);
    memset(b->delays, 0, 2 * sizeof(double) * (size_t)n);
    b->posts = xmalloc(b, sizeof(double) * (size_t)n);
    b->computes = xmalloc(b, sizeof(double) * (size_t)n);
    b->waits = xmalloc(b, sizeof(double) * (size_t)n);
    b->pure = xmalloc(b, sizeof(double) * (size_t)n);
    b->nreq = xmalloc(b, sizeof(MPI_Request) * (size_t)b->size);
    b->rreq = xmalloc(b, sizeof(rcoll_request_t *) * (size_t)b->size);
    b->late_us = o->late_us;
    if (b->rank == 0 && o->json_path) {
        b->json = fopen(o->json_path, "a");
        if (!b->json)
            die(b, "cannot open --json file %s", o->json_path);
    }
    if (!wants_rcoll(o))
        return;
    rcoll_status_t st = rcoll_context_create(&b->ctx);
    if (st != RCOLL_OK)
        die(b, "rcoll_context_create: %s", rcoll_strerror(st));
    rcoll_oob_t oob;
    rcoll_oob_from_mpi_comm(&b->comm, &oob);
    st = rcoll_team_create(b->ctx, &oob, &b->team);
    if (st != RCOLL_OK)
        die(b, "rcoll_team_create: %s", rcoll_strerror(st));
}

static void teardown(struct bench *b)
{
    PMPI_Barrier(b->comm);
    if (b->team)
        rcoll_team_destroy(b->team);
    if (b->ctx)
        rcoll_context_destroy(b->ctx);
    if (b->json)
        fclose(b->json);
    layout_free(&b->lay);
    free(b->sendbuf);
    free(b->recvbuf);
    free(b->times);
    free(b->delays);
    free(b->arrivals);
    free(b->maxtimes);
    free(b->posts);
    free(b->computes);
    free(b->waits);
    free(b->pure);
    free(b->nreq);
    free(b->rreq);
}

static void print_preamble(const struct bench *b, const struct options *o)
{
    if (b->rank != 0)
        return;
    printf("# rcoll-bench np=%d ppn=%d iters=%d warmup=%d (scaled down above %d bytes) "
           "check=%s buffers=%s", b->size, b->ppn, o->iters, o->warmup, BIG_BYTES,
           o->check ? "every-iteration" : "first-call", o->no_reuse ? "fresh" : "reused");
    if (o->root == ROOT_ROTATE)
        printf(" root=rotate");
    else
        printf(" root=%d", o->root);
    printf(" counts=%s sync=%s", o->skewed ? "skewed" : "equal",
           skewed_arrival(o) ? "all" : o->sync == SYNC_ALL ? "all" : o->sync == SYNC_NONE ? "none" : "rooted");
    for (int k = 0; k < o->ncolls; k++)
        if (is_reduction(o->colls[k])) {
            printf(" op=%s dtype=%s", rcoll_op_name(o->op), rcoll_dtype_name(o->dtype));
            break;
        }
    if (o->mif > 0)
        printf(" mif=%g", o->mif);
    if (o->late_us > 0)
        printf(" late-frac=%g late-us=%g", o->late_frac, o->late_us);
    if (o->late_pure > 0)
        printf(" late-frac=%g late-pure=%g", o->late_frac, o->late_pure);
    if (o->late_same)
        printf(" late-same");
    if (skewed_arrival(o))
        printf(" seed=%lu", o->seed);
    if (o->mode != MODE_BLOCKING)
        printf(" mode=%s", mode_names[o->mode]);
    if (o->mode == MODE_OVERLAP)
        printf(" compute-for=%s", per_iteration_compute(o) ? "iteration" : "mean");
    printf(" impls=");
    for (int k = 0; k < o->nimpls; k++)
        printf("%s%s", k ? "," : "", o->impls[k].label);
    printf("\n");
    if (o->dropped[0])
        printf("# skipped: %s: reductions are blocking only (rcoll has no nonblocking or "
               "persistent reductions yet)\n", o->dropped);
    fflush(stdout);
}

/* Sums data errors of checked timed iterations; rank 0 lists the ranks that saw any. */
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

/* --calibrate FILE: rcoll_team_calibrate on MPI_COMM_WORLD, rank 0 writes FILE. */
static int calibrate(struct bench *b, const char *path)
{
    rcoll_context_t *ctx = NULL;
    rcoll_team_t *team = NULL;
    rcoll_oob_t oob;
    char text[2048];
    rcoll_status_t st = rcoll_context_create(&ctx);
    rcoll_oob_from_mpi_comm(&b->comm, &oob);
    if (st == RCOLL_OK)
        st = rcoll_team_create(ctx, &oob, &team);
    if (st == RCOLL_OK)
        st = rcoll_team_calibrate(team, text, sizeof text);
    if (b->rank == 0 && st != RCOLL_OK)
        fprintf(stderr, "rcoll-bench: --calibrate: %s: %s\n", rcoll_strerror(st),
                team ? rcoll_team_last_error(team) : "no team");
    if (b->rank == 0 && st == RCOLL_OK) {
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "rcoll-bench: --calibrate: cannot write %s\n", path);
            st = RCOLL_ERR_INVALID;
        } else {
            fputs(text, stdout);
        }
    }
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    PMPI_Finalize();
    return st == RCOLL_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    PMPI_Init(&argc, &argv);
    struct options o;
    struct bench b;
    memset(&b, 0, sizeof b);
    b.comm = MPI_COMM_WORLD;
    PMPI_Comm_rank(b.comm, &b.rank);
    PMPI_Comm_size(b.comm, &b.size);
    char err[512] = "";
    int pr = parse_options(argc, argv, &o, err, sizeof err);
    if (pr == 0 && o.root >= b.size) {
        snprintf(err, sizeof err, "--root %d is not a rank (np=%d)", o.root, b.size);
        pr = -1;
    }
    if (pr != 0) {
        if (b.rank == 0) {
            if (pr < 0)
                fprintf(stderr, "rcoll-bench: %s\n", err);
            usage(pr < 0 ? stderr : stdout);
        }
        PMPI_Finalize();
        return pr < 0 ? 1 : 0;
    }
    if (o.calibrate_path)
        return calibrate(&b, o.calibrate_path);
    setup(&b, &o);
    print_preamble(&b, &o);
    for (int k = 0; k < o.ncolls; k++)
        run_coll(&b, &o, o.colls[k]);
    long errors = o.check ? report_errors(&b) : 0;
    if (b.failures && b.rank == 0) {
        fprintf(stderr, "rcoll-bench: FAILED: %d checks before timing failed (the '# FAILED' "
                "lines)\n", b.failures);
        printf("# FAILED: %d checks failed; exit status 1\n", b.failures);
        fflush(stdout);
    }
    teardown(&b);
    PMPI_Finalize();
    return errors || b.failures ? 1 : 0;
}
