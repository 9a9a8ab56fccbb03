/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): the nonblocking reductions
 * MPI_Iallreduce, MPI_Ireduce, MPI_Ireduce_scatter_block, MPI_Ireduce_scatter, MPI_Iscan,
 * MPI_Iexscan and, where mpi.h declares them (MPI-4: MPICH), the persistent MPI_Allreduce_init
 * ... MPI_Exscan_init. Every result is compared element by element with a serial reference
 * folded in rank order from inputs every rank can compute; a guard after every receive buffer
 * must keep its poison, the send buffers must not change.
 * - Batches of 4 reductions outstanding at once on one communicator (MPI_COMM_WORLD, an
 *   odd/even split in reversed rank order): every reduction in turn, in place or not, MPI_Reduce
 *   with rotating roots, MPI_Reduce_scatter with uneven counts and a rank that gets none; MPI_INT
 *   (MPI_SUM, MPI_MAX), MPI_DOUBLE (MPI_SUM), MPI_DOUBLE_INT (MPI_MINLOC, MPI_MAXLOC), and user
 *   operations from MPI_Op_create: a commutative one on MPI_INT (a + b + 1) and a
 *   non-commutative one (the 2x2 matrix product) on a contiguous type of 4 doubles, whose
 *   function checks that it gets the caller's datatype handle (and that MPI_Type_size works on
 *   it). Each batch completed another way: MPI_Wait in reverse order, MPI_Test in a random
 *   order, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Testall and MPI_Test loops while the
 *   rank computes.
 * - An MPI_Isend/MPI_Irecv pair, an MPI_Iallreduce and an MPI_Ireduce in one MPI_Waitall.
 * - The matrix type freed (MPI_Type_free) while a reduction with the user operation on it is
 *   outstanding; the operation freed (MPI_Op_free) too.
 * - Persistent (MPI-4, `strict` only: MPICH 4.0's own persistent collectives have bugs): each
 *   form initialised once and started 3 times with the input changed between starts (MPI_Start
 *   and MPI_Wait, or MPI_Startall and MPI_Waitall), with a predefined and a user operation
 *   (its datatype freed by the program after the init, for half of them), and requests freed
 *   without ever being started.
 * - strict (rcoll runs the calls): an erroneous call (aliased buffers on one rank) returns
 *   MPI_ERR_BUFFER and MPI_REQUEST_NULL there while its peers' requests complete correctly.
 * Usage: test_mpi_reduce_nb [repetitions (default 1)] [strict | pairs-blocking | pairs-nb]:
 * pairs-* run only the pair types with padding (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT,
 * MPI_LONG_DOUBLE_INT) with MPI_MINLOC and MPI_MAXLOC, blocking resp. nonblocking (for the
 * log check that rcoll runs them). Prints "OK test_mpi_reduce_nb ..." on world rank 0. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xEE
#define GUARD 64 /* bytes after every receive buffer */
#define BATCH 4
#define MAXES 48 /* bytes of the largest element */

static int wrank, wsize, strict;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_reduce_nb (world rank %d): ", wrank);         \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

#define CHECK_MPI(call)                                                              \
    do {                                                                             \
        int rc_ = (call);                                                            \
        if (rc_ != MPI_SUCCESS)                                                      \
            FAIL("%s returned %d (line %d)", #call, rc_, __LINE__);                  \
    } while (0)

static uint64_t mix(int r, size_t g, unsigned s, int op)
{
    uint64_t h = (uint64_t)(r + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)g * 0xbf58476d1ce4e5b9ull ^
                 (uint64_t)s * 0x94d049bb133111ebull ^ (uint64_t)(op + 7);
    h ^= h >> 31;
    h *= 0xd6e8feb86659fd93ull;
    return h ^ (h >> 29);
}

/* ---- operations and types ---- */

enum { O_SUM, O_MAX, O_MINLOC, O_MAXLOC, O_UCOMM, O_UNC };
static const char *const OPNAME[] = {"MPI_SUM", "MPI_MAX", "MPI_MINLOC", "MPI_MAXLOC",
                                     "user a+b+1", "user matrix product"};
static MPI_Op OPS[6];

static long wrong_dt;          /* a user function got another datatype than the caller's */
static MPI_Datatype mat_type;  /* the program's matrix type (MPI_DATATYPE_NULL once freed) */
static MPI_Datatype mat_handle; /* its handle, kept after the program freed it */

static void ucomm_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT)
        wrong_dt++;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] + b[i] + 1;
}

/* inout = in * inout, 2x2 row-major matrices (in is the left operand, as MPI defines). */
static void mat_mul(const double *l, const double *r, double *out)
{
    double t[4] = {l[0] * r[0] + l[1] * r[2], l[0] * r[1] + l[1] * r[3],
                   l[2] * r[0] + l[3] * r[2], l[2] * r[1] + l[3] * r[3]};
    memcpy(out, t, sizeof t);
}

static void mat_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size = 0;
    if (*dt != mat_handle || MPI_Type_size(*dt, &size) != MPI_SUCCESS || size != 32)
        wrong_dt++;
    const double *a = in;
    double *b = inout;
    for (int i = 0; i < *len; i++)
        mat_mul(a + 4 * i, b + 4 * i, b + 4 * i);
}

#define PAIR(N, VT)                                                                     \
    typedef struct {                                                                    \
        VT v;                                                                           \
        int i;                                                                          \
    } N##_t;                                                                            \
    static void gen_##N(int op, int r, size_t g, unsigned s, void *out)                 \
    {                                                                                   \
        uint64_t h = mix(r, g, s, op);                                                  \
        N##_t p;                                                                        \
        memset(&p, 0x5A, sizeof p);                                                     \
        p.v = (VT)(h % 5);                                                              \
        p.i = (int)((h >> 16) % 1000) - 500;                                            \
        memcpy(out, &p, sizeof p);                                                      \
    }                                                                                   \
    static void comb_##N(int op, const void *right, void *acc)                          \
    {                                                                                   \
        N##_t a, b;                                                                     \
        memcpy(&a, acc, sizeof a);                                                      \
        memcpy(&b, right, sizeof b);                                                    \
        int better = op == O_MINLOC ? b.v < a.v : b.v > a.v;                            \
        if (better || (b.v == a.v && b.i < a.i))                                        \
            memcpy(acc, &b, sizeof b);                                                  \
    }                                                                                   \
    static int eq_##N(const void *x, const void *y)                                     \
    {                                                                                   \
        N##_t a, b;                                                                     \
        memcpy(&a, x, sizeof a);                                                        \
        memcpy(&b, y, sizeof b);                                                        \
        return a.v == b.v && a.i == b.i; /* (not the padding) */                        \
    }

PAIR(pdouble, double)
PAIR(plong, long)
PAIR(pshort, short)
PAIR(pldouble, long double)

static void gen_int(int op, int r, size_t g, unsigned s, void *out)
{
    int v = (int)(mix(r, g, s, op) % 2001) - 1000;
    memcpy(out, &v, sizeof v);
}

static void comb_int(int op, const void *right, void *acc)
{
    int a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, right, sizeof b);
    a = op == O_SUM ? a + b : op == O_MAX ? (b > a ? b : a) : a + b + 1;
    memcpy(acc, &a, sizeof a);
}

static int eq_int(const void *x, const void *y)
{
    return memcmp(x, y, sizeof(int)) == 0;
}

/* quarters: exact sums */
static void gen_double(int op, int r, size_t g, unsigned s, void *out)
{
    double v = (double)((int)(mix(r, g, s, op) % 801) - 400) * 0.25;
    memcpy(out, &v, sizeof v);
}

static void comb_double(int op, const void *right, void *acc)
{
    (void)op;
    double a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, right, sizeof b);
    a += b;
    memcpy(acc, &a, sizeof a);
}

static int eq_double(const void *x, const void *y)
{
    double a, b;
    memcpy(&a, x, sizeof a);
    memcpy(&b, y, sizeof b);
    return a == b;
}

/* entries in {-1, 0, 1, 2}: products over a few ranks stay exact */
static void gen_mat(int op, int r, size_t g, unsigned s, void *out)
{
    uint64_t h = mix(r, g, s, op);
    double m[4];
    for (int k = 0; k < 4; k++)
        m[k] = (double)((int)((h >> (8 * k)) % 4) - 1);
    memcpy(out, m, sizeof m);
}

static void comb_mat(int op, const void *right, void *acc)
{
    (void)op;
    double a[4], b[4];
    memcpy(a, acc, sizeof a);
    memcpy(b, right, sizeof b);
    mat_mul(a, b, a);
    memcpy(acc, a, sizeof a);
}

/* by value: an association other than the reference's may give -0 for 0 */
static int eq_mat(const void *x, const void *y)
{
    double a[4], b[4];
    memcpy(a, x, sizeof a);
    memcpy(b, y, sizeof b);
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

typedef struct {
    const char *name;
    MPI_Datatype t; /* (the matrix type: set in main) */
    size_t es;
    void (*gen)(int op, int r, size_t g, unsigned s, void *out);
    void (*comb)(int op, const void *right, void *acc); /* acc = acc op right */
    int (*eq)(const void *x, const void *y);
} rtype_t;

enum { T_INT, T_DOUBLE, T_DINT, T_LINT, T_SINT, T_LDINT, T_MAT, NTYPES };
static rtype_t T[NTYPES];

static void types_init(void)
{
    T[T_INT] = (rtype_t){"MPI_INT", MPI_INT, sizeof(int), gen_int, comb_int, eq_int};
    T[T_DOUBLE] = (rtype_t){"MPI_DOUBLE", MPI_DOUBLE, sizeof(double), gen_double, comb_double,
                            eq_double};
    T[T_DINT] = (rtype_t){"MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(pdouble_t), gen_pdouble,
                          comb_pdouble, eq_pdouble};
    T[T_LINT] = (rtype_t){"MPI_LONG_INT", MPI_LONG_INT, sizeof(plong_t), gen_plong, comb_plong,
                          eq_plong};
    T[T_SINT] = (rtype_t){"MPI_SHORT_INT", MPI_SHORT_INT, sizeof(pshort_t), gen_pshort,
                          comb_pshort, eq_pshort};
    T[T_LDINT] = (rtype_t){"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, sizeof(pldouble_t),
                           gen_pldouble, comb_pldouble, eq_pldouble};
    T[T_MAT] = (rtype_t){"matrix (contiguous 4 doubles)", MPI_DATATYPE_NULL, 4 * sizeof(double),
                         gen_mat, comb_mat, eq_mat};
}

/* A fresh matrix type (the previous one may have been freed by the program). */
static void mat_type_new(void)
{
    CHECK_MPI(MPI_Type_contiguous(4, MPI_DOUBLE, &mat_type));
    CHECK_MPI(MPI_Type_commit(&mat_type));
    mat_handle = mat_type;
    T[T_MAT].t = mat_type;
}

/* ---- one reduction ---- */

enum { C_ALLREDUCE, C_REDUCE, C_RSB, C_RS, C_SCAN, C_EXSCAN, NCOLLS };
static const char *const CNAME[] = {"allreduce", "reduce", "reduce_scatter_block",
                                    "reduce_scatter", "scan", "exscan"};

typedef struct {
    int coll, type, op, ip, root;
    size_t count; /* elements (per rank: reduce_scatter_block) */
    MPI_Comm comm;
    int rank, size;
    size_t in_n, out_n, out_at, rbytes;
    int *counts; /* reduce_scatter */
    unsigned char *send, *recv, *input;
    MPI_Request req;
    unsigned seed;
    char what[200];
} red_t;

static void *alloc_poison(size_t n)
{
    unsigned char *p = malloc(n + GUARD);
    if (p == NULL)
        FAIL("out of memory");
    memset(p, POISON, n + GUARD);
    return p;
}

static int all_poison(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != POISON)
            return 0;
    return 1;
}

static void red_setup(red_t *c, int coll, int type, int op, size_t count, int ip, int root,
                      MPI_Comm comm)
{
    memset(c, 0, sizeof *c);
    c->coll = coll;
    c->type = type;
    c->op = op;
    c->count = count;
    c->root = root;
    c->comm = comm;
    c->req = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    int P = c->size, me = c->rank;
    c->in_n = c->out_n = count;
    c->counts = calloc((size_t)P, sizeof(int));
    if (c->counts == NULL)
        FAIL("out of memory");
    if (coll == C_RSB) {
        c->in_n = count * (size_t)P;
        c->out_at = (size_t)me * count;
    } else if (coll == C_RS) { /* uneven, the last rank none (if P > 1) */
        size_t at = 0;
        for (int j = 0; j < P; j++) {
            c->counts[j] = P > 1 && j == P - 1 ? 0 : (int)(count + (size_t)j);
            if (j < me)
                at += (size_t)c->counts[j];
        }
        c->in_n = at;
        for (int j = me; j < P; j++)
            c->in_n += (size_t)c->counts[j];
        c->out_at = at;
        c->out_n = (size_t)c->counts[me];
    }
    int leaf = coll == C_REDUCE && me != root;
    c->ip = leaf ? 0 : ip;
    size_t es = T[type].es;
    c->rbytes = (c->ip ? c->in_n : c->out_n) * es;
    c->send = c->ip ? NULL : alloc_poison(c->in_n * es);
    c->recv = leaf ? NULL : alloc_poison(c->rbytes);
    c->input = alloc_poison(c->in_n * es);
    snprintf(c->what, sizeof c->what, "%s of %zu %s with %s%s (root %d, np %d)", CNAME[coll],
             count, T[type].name, OPNAME[op], c->ip ? ", in place" : "", root, P);
}

/* The input of `seed` in the buffers, the receive buffer poisoned (in place: the input). */
static void red_fill(red_t *c, unsigned seed)
{
    const rtype_t *t = &T[c->type];
    c->seed = seed;
    for (size_t g = 0; g < c->in_n; g++)
        t->gen(c->op, c->rank, g, seed, c->input + g * t->es);
    if (c->recv != NULL)
        memset(c->recv, POISON, c->rbytes + GUARD);
    memcpy(c->ip ? c->recv : c->send, c->input, c->in_n * t->es);
}

static void red_free(red_t *c)
{
    free(c->send);
    free(c->recv);
    free(c->input);
    free(c->counts);
    c->send = c->recv = c->input = NULL;
    c->counts = NULL;
}

static const void *sbuf(const red_t *c)
{
    return c->ip ? MPI_IN_PLACE : c->send;
}

static int red_post(red_t *c)
{
    MPI_Datatype dt = T[c->type].t;
    MPI_Op op = OPS[c->op];
    int n = (int)c->count;
    switch (c->coll) {
    case C_ALLREDUCE: return MPI_Iallreduce(sbuf(c), c->recv, n, dt, op, c->comm, &c->req);
    case C_REDUCE: return MPI_Ireduce(sbuf(c), c->recv, n, dt, op, c->root, c->comm, &c->req);
    case C_RSB:
        return MPI_Ireduce_scatter_block(sbuf(c), c->recv, n, dt, op, c->comm, &c->req);
    case C_RS:
        return MPI_Ireduce_scatter(sbuf(c), c->recv, c->counts, dt, op, c->comm, &c->req);
    case C_SCAN: return MPI_Iscan(sbuf(c), c->recv, n, dt, op, c->comm, &c->req);
    default: return MPI_Iexscan(sbuf(c), c->recv, n, dt, op, c->comm, &c->req);
    }
}

static int red_blocking(red_t *c)
{
    MPI_Datatype dt = T[c->type].t;
    MPI_Op op = OPS[c->op];
    int n = (int)c->count;
    switch (c->coll) {
    case C_ALLREDUCE: return MPI_Allreduce(sbuf(c), c->recv, n, dt, op, c->comm);
    case C_REDUCE: return MPI_Reduce(sbuf(c), c->recv, n, dt, op, c->root, c->comm);
    case C_RSB: return MPI_Reduce_scatter_block(sbuf(c), c->recv, n, dt, op, c->comm);
    case C_RS: return MPI_Reduce_scatter(sbuf(c), c->recv, c->counts, dt, op, c->comm);
    case C_SCAN: return MPI_Scan(sbuf(c), c->recv, n, dt, op, c->comm);
    default: return MPI_Exscan(sbuf(c), c->recv, n, dt, op, c->comm);
    }
}

#if MPI_VERSION >= 4
static int red_init(red_t *c)
{
    MPI_Datatype dt = T[c->type].t;
    MPI_Op op = OPS[c->op];
    int n = (int)c->count;
    MPI_Info i = MPI_INFO_NULL;
    switch (c->coll) {
    case C_ALLREDUCE: return MPI_Allreduce_init(sbuf(c), c->recv, n, dt, op, c->comm, i, &c->req);
    case C_REDUCE:
        return MPI_Reduce_init(sbuf(c), c->recv, n, dt, op, c->root, c->comm, i, &c->req);
    case C_RSB:
        return MPI_Reduce_scatter_block_init(sbuf(c), c->recv, n, dt, op, c->comm, i, &c->req);
    case C_RS:
        return MPI_Reduce_scatter_init(sbuf(c), c->recv, c->counts, dt, op, c->comm, i,
                                       &c->req);
    case C_SCAN: return MPI_Scan_init(sbuf(c), c->recv, n, dt, op, c->comm, i, &c->req);
    default: return MPI_Exscan_init(sbuf(c), c->recv, n, dt, op, c->comm, i, &c->req);
    }
}
#endif

/* The result against the serial reference (rank order), the guard, the send buffer. */
static void red_check(const red_t *c)
{
    const rtype_t *t = &T[c->type];
    size_t es = t->es;
    if (c->send != NULL && memcmp(c->send, c->input, c->in_n * es) != 0)
        FAIL("%s (seed %u, rank %d): the send buffer changed", c->what, c->seed, c->rank);
    if (c->recv == NULL)
        return; /* a leaf of MPI_Reduce */
    if (!all_poison(c->recv + c->rbytes, GUARD))
        FAIL("%s (seed %u, rank %d): written past the receive buffer", c->what, c->seed,
             c->rank);
    int lo = 0, hi = c->size - 1;
    if (c->coll == C_SCAN)
        hi = c->rank;
    else if (c->coll == C_EXSCAN)
        hi = c->rank - 1;
    if (hi < lo)
        return; /* MPI_Exscan at rank 0: undefined */
    unsigned char acc[MAXES], in[MAXES];
    for (size_t j = 0; j < c->out_n; j++) {
        size_t g = c->out_at + j;
        t->gen(c->op, lo, g, c->seed, acc);
        for (int r = lo + 1; r <= hi; r++) {
            t->gen(c->op, r, g, c->seed, in);
            t->comb(c->op, in, acc);
        }
        if (!t->eq(c->recv + j * es, acc))
            FAIL("%s (seed %u, rank %d): element %zu of %zu is wrong", c->what, c->seed,
                 c->rank, j, c->out_n);
    }
}

/* ---- completion ---- */

enum { M_WAIT_REVERSE, M_TEST_RANDOM, M_WAITALL, M_WAITANY, M_WAITSOME, M_TESTALL, M_TEST_COMPUTE,
       NMODES };

static volatile double sink;

/* MPI_STATUSES_IGNORE, through a variable: MPICH's mpi.h marks the statuses argument as written
 * (the compiler would see a write through a null pointer). */
static MPI_Status *volatile statuses_ignore;

/* Some work between tests: the program computes while its reductions run. */
static void compute(void)
{
    double x = 0;
    for (int i = 0; i < 2000; i++)
        x += (double)i * 0.5;
    sink += x;
}

static void complete(MPI_Request *reqs, int n, int mode, unsigned *rng)
{
    int done = 0, flag = 0, idx = 0, out = 0;
    int idxs[BATCH + 4];
    switch (mode) {
    case M_WAIT_REVERSE:
        for (int i = n - 1; i >= 0; i--)
            CHECK_MPI(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
        break;
    case M_TEST_RANDOM:
        while (done < n) {
            *rng = *rng * 1103515245u + 12345u;
            int i = (int)((*rng >> 16) % (unsigned)n);
            if (reqs[i] == MPI_REQUEST_NULL)
                continue;
            CHECK_MPI(MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE));
            if (flag) {
                if (reqs[i] != MPI_REQUEST_NULL)
                    FAIL("MPI_Test completed a request and left its handle");
                done++;
            }
        }
        break;
    case M_WAITALL: CHECK_MPI(MPI_Waitall(n, reqs, statuses_ignore)); break;
    case M_WAITANY:
        for (int k = 0; k < n; k++) {
            CHECK_MPI(MPI_Waitany(n, reqs, &idx, MPI_STATUS_IGNORE));
            if (idx == MPI_UNDEFINED)
                FAIL("MPI_Waitany: MPI_UNDEFINED with %d requests outstanding", n - k);
        }
        break;
    case M_WAITSOME:
        while (done < n) {
            CHECK_MPI(MPI_Waitsome(n, reqs, &out, idxs, statuses_ignore));
            if (out == MPI_UNDEFINED || out == 0)
                FAIL("MPI_Waitsome: %d with %d requests outstanding", out, n - done);
            done += out;
        }
        break;
    case M_TESTALL:
        while (!flag) {
            CHECK_MPI(MPI_Testall(n, reqs, &flag, statuses_ignore));
            if (!flag)
                compute();
        }
        break;
    default: /* M_TEST_COMPUTE */
        for (int i = 0; i < n; i++)
            for (flag = 0; !flag;) {
                CHECK_MPI(MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE));
                if (!flag)
                    compute();
            }
        break;
    }
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL)
            FAIL("completion mode %d left request %d", mode, i);
}

/* ---- the parts ---- */

/* The (type, op) pairs of the batches. */
static const int TO[][2] = {{T_INT, O_SUM},    {T_DOUBLE, O_SUM},   {T_DINT, O_MAXLOC},
                            {T_INT, O_UCOMM},  {T_MAT, O_UNC},      {T_INT, O_MAX},
                            {T_DINT, O_MINLOC}};
#define NTO ((int)(sizeof TO / sizeof TO[0]))
static const size_t COUNTS[] = {1, 7, 300, 5000};
#define NCOUNTS 4

/* Batches of BATCH reductions outstanding on comm, every reduction, (type, op), count, in place
 * or not and completion mode in turn. */
static long batches(MPI_Comm comm, int rep)
{
    int me = 0, P = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    unsigned rng = (unsigned)(wrank * 7919 + rep + 1);
    long calls = 0;
    red_t b[BATCH];
    MPI_Request reqs[BATCH];
    int k = 0;
    for (int round = 0; round < 2 * NCOLLS; round++) {
        for (int j = 0; j < BATCH; j++, k++) {
            /* (every reduction meets every (type, op), count and in place or not) */
            int coll = k % NCOLLS, to = (k + 2 * (k / NCOLLS)) % NTO;
            size_t count = COUNTS[(k + k / NCOLLS) % NCOUNTS];
            int ip = (k / 2) % 2, root = (k + rep) % P;
            red_setup(&b[j], coll, TO[to][0], TO[to][1], count, ip, root, comm);
            red_fill(&b[j], (unsigned)(rep * 1000 + k));
            CHECK_MPI(red_post(&b[j]));
            reqs[j] = b[j].req;
        }
        complete(reqs, BATCH, (round + rep) % NMODES, &rng);
        for (int j = 0; j < BATCH; j++) {
            red_check(&b[j]);
            red_free(&b[j]);
        }
        calls += BATCH;
    }
    return calls;
}

/* Native point-to-point requests and reductions in one MPI_Waitall. */
static void mixed(int rep)
{
    enum { N = 65536 };
    int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    if (out == NULL || in == NULL)
        FAIL("out of memory");
    for (int i = 0; i < N; i++)
        out[i] = wrank * 1000003 + i + rep;
    red_t a, r;
    red_setup(&a, C_ALLREDUCE, T_DOUBLE, O_SUM, 1000, rep % 2, 0, MPI_COMM_WORLD);
    red_setup(&r, C_REDUCE, T_INT, O_UCOMM, 77, 0, (rep + 1) % wsize, MPI_COMM_WORLD);
    red_fill(&a, 500u + (unsigned)rep);
    red_fill(&r, 600u + (unsigned)rep);
    MPI_Request q[4];
    CHECK_MPI(MPI_Irecv(in, N, MPI_INT, left, 5, MPI_COMM_WORLD, &q[0]));
    CHECK_MPI(red_post(&a));
    q[1] = a.req;
    CHECK_MPI(MPI_Isend(out, N, MPI_INT, right, 5, MPI_COMM_WORLD, &q[2]));
    CHECK_MPI(red_post(&r));
    q[3] = r.req;
    MPI_Status st[4];
    CHECK_MPI(MPI_Waitall(4, q, st));
    if (st[0].MPI_SOURCE != left || st[0].MPI_TAG != 5)
        FAIL("mixed MPI_Waitall: the receive's status is source %d tag %d", st[0].MPI_SOURCE,
             st[0].MPI_TAG);
    for (int i = 0; i < N; i++)
        if (in[i] != left * 1000003 + i + rep)
            FAIL("mixed MPI_Waitall: int %d received is wrong", i);
    red_check(&a);
    red_check(&r);
    red_free(&a);
    red_free(&r);
    free(out);
    free(in);
}

/* The program frees the matrix type and the operation while a reduction using both is
 * outstanding: the user function still gets the type's handle, and it still works. */
static void freed_while_outstanding(int rep)
{
    MPI_Op own;
    CHECK_MPI(MPI_Op_create(mat_fn, 0, &own));
    MPI_Op keep = OPS[O_UNC];
    OPS[O_UNC] = own;
    red_t c[2];
    red_setup(&c[0], C_ALLREDUCE, T_MAT, O_UNC, 100, 0, 0, MPI_COMM_WORLD);
    red_setup(&c[1], C_SCAN, T_MAT, O_UNC, 33, 1, 0, MPI_COMM_WORLD);
    MPI_Request q[2];
    for (int i = 0; i < 2; i++) {
        red_fill(&c[i], 700u + (unsigned)(rep + i));
        CHECK_MPI(red_post(&c[i]));
        q[i] = c[i].req;
    }
    OPS[O_UNC] = keep;
    CHECK_MPI(MPI_Op_free(&own));
    CHECK_MPI(MPI_Type_free(&mat_type));
    if (mat_type != MPI_DATATYPE_NULL)
        FAIL("MPI_Type_free did not set the handle to MPI_DATATYPE_NULL");
    compute();
    CHECK_MPI(MPI_Waitall(2, q, statuses_ignore));
    for (int i = 0; i < 2; i++) {
        red_check(&c[i]);
        red_free(&c[i]);
    }
    mat_type_new();
}

#if MPI_VERSION >= 4
/* Each form initialised once, started 3 times with the input changed between starts; then
 * requests freed without ever being started. */
static long persistent(MPI_Comm comm, int rep)
{
    int P = 1;
    MPI_Comm_size(comm, &P);
    long calls = 0;
    for (int coll = 0; coll < NCOLLS; coll++) {
        /* a predefined operation, and the user's non-commutative one */
        static const int pre[] = {0, 1, 2, 5, 6};
        red_t c[2];
        int to = pre[(coll + rep) % 5];
        red_setup(&c[0], coll, TO[to][0], TO[to][1], 7 + (size_t)coll * 50, coll % 2,
                  (coll + rep) % P, comm);
        red_setup(&c[1], coll, T_MAT, O_UNC, 5, (coll + 1) % 2, (coll + rep + 1) % P, comm);
        for (int i = 0; i < 2; i++) {
            red_fill(&c[i], 0);
            CHECK_MPI(red_init(&c[i]));
        }
        if (coll % 2 == 1) /* the program frees the type between the init and the starts */
            CHECK_MPI(MPI_Type_free(&mat_type));
        for (int start = 0; start < 3; start++) {
            for (int i = 0; i < 2; i++)
                red_fill(&c[i], (unsigned)(rep * 100 + coll * 10 + start + i));
            if (start == 1) {
                MPI_Request q[2] = {c[0].req, c[1].req};
                CHECK_MPI(MPI_Startall(2, q));
                CHECK_MPI(MPI_Waitall(2, q, statuses_ignore));
                if (q[0] != c[0].req || q[1] != c[1].req)
                    FAIL("MPI_Waitall changed a persistent request's handle");
            } else {
                for (int i = 0; i < 2; i++)
                    CHECK_MPI(MPI_Start(&c[i].req));
                for (int i = 1; i >= 0; i--)
                    CHECK_MPI(MPI_Wait(&c[i].req, MPI_STATUS_IGNORE));
            }
            for (int i = 0; i < 2; i++)
                red_check(&c[i]);
            calls += 2;
        }
        for (int i = 0; i < 2; i++) {
            CHECK_MPI(MPI_Request_free(&c[i].req));
            red_free(&c[i]);
        }
        if (coll % 2 == 1)
            mat_type_new();
        /* never started */
        red_t u;
        red_setup(&u, coll, T_MAT, O_UNC, 3, 0, 0, comm);
        CHECK_MPI(red_init(&u));
        CHECK_MPI(MPI_Request_free(&u.req));
        if (u.req != MPI_REQUEST_NULL)
            FAIL("MPI_Request_free left the handle");
        red_free(&u);
    }
    return calls;
}
#endif

/* An erroneous call (strict): aliased buffers on rank 1, MPI_ERR_BUFFER and no request there;
 * the peers' requests complete with every rank's input (rank 1's goes in). */
static void erroneous(void)
{
    MPI_Comm comm;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    red_t c;
    red_setup(&c, C_ALLREDUCE, T_INT, O_SUM, 40, 0, 0, comm);
    red_fill(&c, 900);
    if (wrank == 1) {
        memcpy(c.recv, c.input, 40 * sizeof(int));
        int rc = MPI_Iallreduce(c.recv, c.recv, 40, MPI_INT, MPI_SUM, comm, &c.req);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_BUFFER || c.req != MPI_REQUEST_NULL)
            FAIL("aliased MPI_Iallreduce: class %d (want MPI_ERR_BUFFER) and %s request", cls,
                 c.req == MPI_REQUEST_NULL ? "a null" : "a live");
    } else {
        CHECK_MPI(red_post(&c));
        CHECK_MPI(MPI_Wait(&c.req, MPI_STATUS_IGNORE));
        red_check(&c);
    }
    red_free(&c);
    /* the communicator's next reduction */
    red_setup(&c, C_REDUCE, T_DOUBLE, O_SUM, 9, 0, wsize - 1, comm);
    red_fill(&c, 901);
    CHECK_MPI(red_post(&c));
    CHECK_MPI(MPI_Wait(&c.req, MPI_STATUS_IGNORE));
    red_check(&c);
    red_free(&c);
    CHECK_MPI(MPI_Comm_free(&comm));
}

/* Only the pair types with padding, MPI_MINLOC and MPI_MAXLOC, every reduction. */
static long pairs(int nonblocking, int rep)
{
    static const int pt[] = {T_DINT, T_LINT, T_SINT, T_LDINT};
    static const size_t counts[] = {1, 13, 1000};
    long calls = 0;
    for (int ti = 0; ti < 4; ti++)
        for (int op = O_MINLOC; op <= O_MAXLOC; op++)
            for (int coll = 0; coll < NCOLLS; coll++)
                for (int ci = 0; ci < 3; ci++) {
                    red_t c;
                    red_setup(&c, coll, pt[ti], op, counts[ci], (ci + coll) % 2,
                              (ci + coll + rep) % wsize, MPI_COMM_WORLD);
                    red_fill(&c, (unsigned)(rep * 1000 + ti * 100 + coll * 10 + ci));
                    if (nonblocking) {
                        CHECK_MPI(red_post(&c));
                        CHECK_MPI(MPI_Wait(&c.req, MPI_STATUS_IGNORE));
                    } else {
                        CHECK_MPI(red_blocking(&c));
                    }
                    red_check(&c);
                    red_free(&c);
                    calls++;
                }
    return calls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    const char *mode = argc > 2 ? argv[2] : "";
    strict = strcmp(mode, "strict") == 0;
    double t0 = MPI_Wtime();
    statuses_ignore = MPI_STATUSES_IGNORE;
    types_init();
    mat_type_new();
    OPS[O_SUM] = MPI_SUM;
    OPS[O_MAX] = MPI_MAX;
    OPS[O_MINLOC] = MPI_MINLOC;
    OPS[O_MAXLOC] = MPI_MAXLOC;
    CHECK_MPI(MPI_Op_create(ucomm_fn, 1, &OPS[O_UCOMM]));
    CHECK_MPI(MPI_Op_create(mat_fn, 0, &OPS[O_UNC]));
    long calls = 0;
    if (strncmp(mode, "pairs-", 6) == 0) {
        for (int rep = 0; rep < reps; rep++)
            calls += pairs(strcmp(mode, "pairs-nb") == 0, rep);
    } else {
        MPI_Comm split;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &split));
        for (int rep = 0; rep < reps; rep++) {
            calls += batches(MPI_COMM_WORLD, rep);
            calls += batches(split, rep);
            mixed(rep);
            freed_while_outstanding(rep);
            calls += 4;
#if MPI_VERSION >= 4
            if (strict) {
                calls += persistent(MPI_COMM_WORLD, rep);
                calls += persistent(split, rep);
            }
#endif
            if (strict && wsize >= 2)
                erroneous();
        }
        CHECK_MPI(MPI_Comm_free(&split));
    }
    if (wrong_dt)
        FAIL("a user function got a datatype that is not the caller's (%ld calls)", wrong_dt);
    CHECK_MPI(MPI_Op_free(&OPS[O_UCOMM]));
    CHECK_MPI(MPI_Op_free(&OPS[O_UNC]));
    CHECK_MPI(MPI_Type_free(&mat_type));
    double t = MPI_Wtime() - t0;
    if (wrank == 0)
        printf("OK test_mpi_reduce_nb (np %d, %d repetitions, %ld calls%s%s, %.2f s)\n", wsize,
               reps, calls, mode[0] ? ", " : "", mode, t);
    MPI_Finalize();
    return 0;
}
