/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): the reductions MPI_Allreduce,
 * MPI_Reduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan and MPI_Exscan, each
 * result compared element by element with a serial reference folded in rank order from the
 * same known inputs (every rank can compute every rank's input; values chosen so that integer
 * and floating results are exact: small integers, halves and quarters, products of 1, 2, -1):
 * - every predefined operation on the types it applies to: int, unsigned char, long long,
 *   float, double, long double, float and double complex, bool, and the pair types of
 *   MPI_MINLOC / MPI_MAXLOC (MPI_2INT, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
 *   MPI_SHORT_INT, MPI_LONG_DOUBLE_INT: those with padding run on rcoll too, which may write
 *   the padding but nothing past the buffer; MPI_DOUBLE_INT in the quick subset too), counts
 *   0, 1, 7, 1000 (and 300000 or 100000 for a few), with and without MPI_IN_PLACE, MPI_Reduce
 *   at every root (recvbuf NULL off the root);
 *   MPI_Reduce_scatter with uneven counts and a rank that gets none; MPI_Exscan's rank 0
 *   recvbuf untouched; a guard after every receive buffer, the send buffers unchanged;
 * - contiguous derived types with predefined operations (3 doubles with MPI_SUM, 2 MPI_2INT
 *   with MPI_MINLOC), a strided vector (which the drop-in leaves to MPI: holes untouched);
 * - user operations from MPI_Op_create: a non-commutative 2x2 matrix product on a struct of 4
 *   doubles (MPI_Type_contiguous), checked in rank order, the datatype the function gets
 *   checked too; a commutative one (a + b + 1) and a non-commutative one (the left operand) on
 *   MPI_INT;
 * - a float and a double sum of values of many magnitudes: bitwise the same on every rank;
 * - back-to-back reductions with rotating roots and no barrier.
 * On MPI_COMM_WORLD (everything), a duplicate, an odd/even split in reversed rank order and
 * MPI_COMM_SELF (a subset). Usage: test_mpi_reduce [repetitions (default 1)] [quick]: quick
 * runs the subset on MPI_COMM_WORLD too. Prints "OK test_mpi_reduce ..." on world rank 0. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xEE
#define GUARD 64 /* bytes after every buffer */

static int wrank;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_reduce (world rank %d): ", wrank);            \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

/* The communicator under test. */
static struct {
    MPI_Comm comm;
    const char *name;
    int rank, size;
    int full; /* every combination, or a subset */
} C;

/* ---- operations ---- */

enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MINLOC,
       O_MAXLOC, NOPS, O_USER = NOPS };
static MPI_Op OPS[NOPS];
static const char *const OPNAMES[NOPS] = {"MPI_SUM", "MPI_PROD", "MPI_MIN", "MPI_MAX",
                                          "MPI_LAND", "MPI_LOR", "MPI_LXOR", "MPI_BAND",
                                          "MPI_BOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC"};

#define B(o) (1u << (o))
/* The operations MPI defines on each class of type (MPI-3.1 5.9.2). */
enum { K_INT, K_FLOAT, K_COMPLEX, K_BOOL, K_PAIR, K_USER };
static const unsigned class_ops[] = {
    [K_INT] = B(O_SUM) | B(O_PROD) | B(O_MIN) | B(O_MAX) | B(O_LAND) | B(O_LOR) | B(O_LXOR) |
              B(O_BAND) | B(O_BOR) | B(O_BXOR),
    [K_FLOAT] = B(O_SUM) | B(O_PROD) | B(O_MIN) | B(O_MAX),
    [K_COMPLEX] = B(O_SUM) | B(O_PROD),
    [K_BOOL] = B(O_LAND) | B(O_LOR) | B(O_LXOR),
    [K_PAIR] = B(O_MINLOC) | B(O_MAXLOC),
    [K_USER] = B(O_USER),
};

/* ---- inputs: element g of rank r's vector, for operation op and seed s ---- */

static uint64_t mix(int r, size_t g, unsigned s, int op)
{
    uint64_t x = (uint64_t)g * 0x9E3779B97F4A7C15ull ^ (uint64_t)(r + 1) * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)(s * 16u + (unsigned)op + 1u) * 0x165667B19E3779F9ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return x;
}

/* An integer input: small where the operation adds or multiplies. (Unsigned values above
 * 127 for MPI_MIN / MPI_MAX: MPICH 4.0.2's own reductions compare MPI_UNSIGNED_CHAR as signed,
 * so this test fails there without the drop-in, which runs these on rcoll.) */
static uint64_t int_value(int op, uint64_t h, int is_signed, int bits)
{
    switch (op) {
    case O_SUM: return is_signed ? (uint64_t)((int64_t)(h % 11) - 5) : h % 11;
    case O_PROD: return h % 4 == 0 ? 2 : is_signed && h % 4 == 1 ? (uint64_t)-1 : 1;
    case O_MIN:
    case O_MAX: return is_signed ? (uint64_t)((int64_t)(h % 201) - 100) : h % 201;
    case O_LAND: return h % 5 == 0 ? 0 : 1 + (h >> 8) % 3; /* mostly true */
    case O_LOR: return h % 5 == 0 ? 1 + (h >> 8) % 3 : 0;  /* mostly false */
    case O_LXOR: return h % 3;
    case O_BAND: return ~(1ull << ((h >> 8) % (unsigned)bits));
    case O_BOR: return 1ull << ((h >> 8) % (unsigned)bits);
    case O_BXOR: return h >> 3;
    default: return (h >> 3) % 1000; /* user operations */
    }
}

/* A floating input: exact in float (quarters, eighths, 1, 2, -1, 0.5). */
static double float_value(int op, uint64_t h)
{
    static const double prod[4] = {1.0, 2.0, -1.0, 0.5};
    switch (op) {
    case O_SUM: return ((double)(h % 41) - 20.0) / 4.0;
    case O_PROD: return prod[h % 4];
    default: return ((double)(h % 2001) - 1000.0) / 8.0;
    }
}

/* ---- the types under test: generator, reference step (acc = acc op in, acc holding the
 * lower ranks) and comparison of one element ---- */

typedef struct {
    const char *name;
    MPI_Datatype t;
    size_t size; /* C size = MPI extent of one element */
    int cls;
    void (*gen)(int op, int r, size_t g, unsigned s, void *out);
    void (*comb)(int op, const void *in, void *acc);
    int (*eq)(const void *a, const void *b);
    MPI_Op user; /* K_USER: the operation */
} rtype_t;

#define INT_TYPE(N, CT, SGN)                                                            \
    static void gen_##N(int op, int r, size_t g, unsigned s, void *out)                 \
    {                                                                                   \
        CT v = (CT)int_value(op, mix(r, g, s, op), SGN, (int)(8 * sizeof(CT)));         \
        memcpy(out, &v, sizeof v);                                                      \
    }                                                                                   \
    static void comb_##N(int op, const void *in, void *acc)                             \
    {                                                                                   \
        CT a, b, v;                                                                     \
        memcpy(&a, acc, sizeof a);                                                      \
        memcpy(&b, in, sizeof b);                                                       \
        switch (op) {                                                                   \
        case O_SUM: v = (CT)(a + b); break;                                             \
        case O_PROD: v = (CT)(a * b); break;                                            \
        case O_MIN: v = a < b ? a : b; break;                                           \
        case O_MAX: v = a > b ? a : b; break;                                           \
        case O_LAND: v = (CT)(a && b); break;                                           \
        case O_LOR: v = (CT)(a || b); break;                                            \
        case O_LXOR: v = (CT)(!a != !b); break;                                         \
        case O_BAND: v = (CT)(a & b); break;                                            \
        case O_BOR: v = (CT)(a | b); break;                                             \
        default: v = (CT)(a ^ b); break;                                                \
        }                                                                               \
        memcpy(acc, &v, sizeof v);                                                      \
    }                                                                                   \
    static int eq_##N(const void *x, const void *y) { return memcmp(x, y, sizeof(CT)) == 0; }

#define FLT_TYPE(N, CT)                                                                 \
    static void gen_##N(int op, int r, size_t g, unsigned s, void *out)                 \
    {                                                                                   \
        CT v = (CT)float_value(op, mix(r, g, s, op));                                   \
        memcpy(out, &v, sizeof v);                                                      \
    }                                                                                   \
    static void comb_##N(int op, const void *in, void *acc)                             \
    {                                                                                   \
        CT a, b, v;                                                                     \
        memcpy(&a, acc, sizeof a);                                                      \
        memcpy(&b, in, sizeof b);                                                       \
        v = op == O_SUM ? a + b : op == O_PROD ? a * b : op == O_MIN ? (a < b ? a : b)  \
                                                                    : (a > b ? a : b);  \
        memcpy(acc, &v, sizeof v);                                                      \
    }                                                                                   \
    static int eq_##N(const void *x, const void *y)                                     \
    {                                                                                   \
        CT a, b;                                                                        \
        memcpy(&a, x, sizeof a);                                                        \
        memcpy(&b, y, sizeof b);                                                        \
        return a == b;                                                                  \
    }

#define CPLX_TYPE(N, CT, RT)                                                            \
    static void gen_##N(int op, int r, size_t g, unsigned s, void *out)                 \
    {                                                                                   \
        static const CT prod[4] = {1, 0, -1, 0};                                        \
        uint64_t h = mix(r, g, s, op);                                                  \
        CT v;                                                                           \
        if (op == O_PROD) { /* 1, i, -1, 1 + i */                                       \
            v = h % 4 == 1 ? (CT)I : h % 4 == 3 ? (CT)(1 + I) : prod[h % 4];            \
        } else {                                                                        \
            v = (RT)float_value(op, h) + (RT)float_value(op, h >> 16) * (CT)I;          \
        }                                                                               \
        memcpy(out, &v, sizeof v);                                                      \
    }                                                                                   \
    static void comb_##N(int op, const void *in, void *acc)                             \
    {                                                                                   \
        CT a, b, v;                                                                     \
        memcpy(&a, acc, sizeof a);                                                      \
        memcpy(&b, in, sizeof b);                                                       \
        v = op == O_SUM ? a + b : a * b;                                                \
        memcpy(acc, &v, sizeof v);                                                      \
    }                                                                                   \
    static int eq_##N(const void *x, const void *y)                                     \
    {                                                                                   \
        CT a, b;                                                                        \
        memcpy(&a, x, sizeof a);                                                        \
        memcpy(&b, y, sizeof b);                                                        \
        return a == b;                                                                  \
    }

/* A pair of MPI_MINLOC / MPI_MAXLOC: few values (ties are frequent: the smaller index wins),
 * any index. The padding after the value is never compared. */
#define PAIR_TYPE(N, VT)                                                                \
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
    static void comb_##N(int op, const void *in, void *acc)                             \
    {                                                                                   \
        N##_t a, b;                                                                     \
        memcpy(&a, acc, sizeof a);                                                      \
        memcpy(&b, in, sizeof b);                                                       \
        int better = op == O_MINLOC ? b.v < a.v : b.v > a.v;                            \
        if (better || (b.v == a.v && b.i < a.i))                                        \
            memcpy(acc, &b, sizeof b);                                                  \
    }                                                                                   \
    static int eq_##N(const void *x, const void *y)                                     \
    {                                                                                   \
        N##_t a, b;                                                                     \
        memcpy(&a, x, sizeof a);                                                        \
        memcpy(&b, y, sizeof b);                                                        \
        return a.v == b.v && a.i == b.i;                                                \
    }

INT_TYPE(int, int, 1)
INT_TYPE(uchar, unsigned char, 0)
INT_TYPE(llong, long long, 1)
FLT_TYPE(float, float)
FLT_TYPE(double, double)
FLT_TYPE(ldouble, long double)
CPLX_TYPE(fcomplex, float complex, float)
CPLX_TYPE(dcomplex, double complex, double)
PAIR_TYPE(p2int, int)
PAIR_TYPE(pfloat, float)
PAIR_TYPE(pdouble, double)
PAIR_TYPE(plong, long)
PAIR_TYPE(pshort, short)
PAIR_TYPE(pldouble, long double)

static void gen_bool(int op, int r, size_t g, unsigned s, void *out)
{
    uint64_t h = mix(r, g, s, op);
    bool v = op == O_LAND ? h % 5 != 0 : op == O_LOR ? h % 5 == 0 : h % 2 == 0;
    memcpy(out, &v, sizeof v);
}

static void comb_bool(int op, const void *in, void *acc)
{
    bool a, b, v;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, in, sizeof b);
    v = op == O_LAND ? a && b : op == O_LOR ? a || b : a != b;
    memcpy(acc, &v, sizeof v);
}

static int eq_bool(const void *x, const void *y)
{
    return memcmp(x, y, sizeof(bool)) == 0;
}

/* ---- user operations ---- */

/* A 2x2 matrix [[a, b], [c, d]]: the product is associative, not commutative. */
typedef struct {
    double a, b, c, d;
} mat_t;
static MPI_Datatype mat_type;
static long wrong_dt; /* calls of a user function with a datatype that is not the caller's */

static mat_t mat_mul(mat_t x, mat_t y)
{
    return (mat_t){x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
                   x.c * y.b + x.d * y.d};
}

static void mat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mat_type)
        wrong_dt++;
    const mat_t *x = in;
    mat_t *y = inout;
    for (int k = 0; k < *len; k++)
        y[k] = mat_mul(x[k], y[k]); /* MPI: inout = in op inout, in from the lower ranks */
}

static void gen_mat(int op, int r, size_t g, unsigned s, void *out)
{
    uint64_t h = mix(r, g, s, op);
    mat_t m = {1.0, (double)(h % 3), (double)((h >> 8) % 2), 1.0};
    if ((h >> 16) % 4 == 0)
        m.d = -1.0;
    memcpy(out, &m, sizeof m);
}

static void comb_mat(int op, const void *in, void *acc)
{
    (void)op;
    mat_t a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, in, sizeof b);
    a = mat_mul(a, b);
    memcpy(acc, &a, sizeof a);
}

static int eq_mat(const void *x, const void *y)
{
    mat_t a, b;
    memcpy(&a, x, sizeof a);
    memcpy(&b, y, sizeof b);
    return a.a == b.a && a.b == b.b && a.c == b.c && a.d == b.d;
}

/* On MPI_INT: a + b + 1 (commutative), and the left operand (not commutative). */
static void plus1_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT)
        wrong_dt++;
    const int *x = in;
    int *y = inout;
    for (int k = 0; k < *len; k++)
        y[k] = x[k] + y[k] + 1;
}

static void left_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT)
        wrong_dt++;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

static void comb_plus1(int op, const void *in, void *acc)
{
    (void)op;
    int a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, in, sizeof b);
    a = a + b + 1;
    memcpy(acc, &a, sizeof a);
}

static void comb_left(int op, const void *in, void *acc)
{
    (void)op;
    (void)in;
    (void)acc; /* the lower ranks' value stays */
}

/* ---- the table ---- */

enum { T_INT, T_UCHAR, T_LLONG, T_FLOAT, T_DOUBLE, T_LDOUBLE, T_FCOMPLEX, T_DCOMPLEX, T_BOOL,
       T_2INT, T_FLOAT_INT, T_DOUBLE_INT, T_LONG_INT, T_SHORT_INT, T_LDOUBLE_INT, T_MAT,
       T_PLUS1, T_LEFT, NTYPES };
static rtype_t T[NTYPES];
static int usable[NTYPES];

#define ENTRY(N, MT, CT, K) {#MT, MT, sizeof(CT), K, gen_##N, comb_##N, eq_##N, MPI_OP_NULL}

static void make_types(void)
{
    OPS[O_SUM] = MPI_SUM, OPS[O_PROD] = MPI_PROD, OPS[O_MIN] = MPI_MIN, OPS[O_MAX] = MPI_MAX;
    OPS[O_LAND] = MPI_LAND, OPS[O_LOR] = MPI_LOR, OPS[O_LXOR] = MPI_LXOR;
    OPS[O_BAND] = MPI_BAND, OPS[O_BOR] = MPI_BOR, OPS[O_BXOR] = MPI_BXOR;
    OPS[O_MINLOC] = MPI_MINLOC, OPS[O_MAXLOC] = MPI_MAXLOC;
    MPI_Type_contiguous(4, MPI_DOUBLE, &mat_type);
    MPI_Type_commit(&mat_type);
    rtype_t t[NTYPES] = {
        ENTRY(int, MPI_INT, int, K_INT),
        ENTRY(uchar, MPI_UNSIGNED_CHAR, unsigned char, K_INT),
        ENTRY(llong, MPI_LONG_LONG, long long, K_INT),
        ENTRY(float, MPI_FLOAT, float, K_FLOAT),
        ENTRY(double, MPI_DOUBLE, double, K_FLOAT),
        ENTRY(ldouble, MPI_LONG_DOUBLE, long double, K_FLOAT),
        ENTRY(fcomplex, MPI_C_FLOAT_COMPLEX, float complex, K_COMPLEX),
        ENTRY(dcomplex, MPI_C_DOUBLE_COMPLEX, double complex, K_COMPLEX),
        ENTRY(bool, MPI_C_BOOL, bool, K_BOOL),
        ENTRY(p2int, MPI_2INT, p2int_t, K_PAIR),
        ENTRY(pfloat, MPI_FLOAT_INT, pfloat_t, K_PAIR),
        ENTRY(pdouble, MPI_DOUBLE_INT, pdouble_t, K_PAIR),
        ENTRY(plong, MPI_LONG_INT, plong_t, K_PAIR),
        ENTRY(pshort, MPI_SHORT_INT, pshort_t, K_PAIR),
        ENTRY(pldouble, MPI_LONG_DOUBLE_INT, pldouble_t, K_PAIR),
        {"2x2 matrix product (contiguous(4, MPI_DOUBLE))", mat_type, sizeof(mat_t), K_USER,
         gen_mat, comb_mat, eq_mat, MPI_OP_NULL},
        {"MPI_INT a + b + 1", MPI_INT, sizeof(int), K_USER, gen_int, comb_plus1, eq_int,
         MPI_OP_NULL},
        {"MPI_INT left operand", MPI_INT, sizeof(int), K_USER, gen_int, comb_left, eq_int,
         MPI_OP_NULL},
    };
    memcpy(T, t, sizeof T);
    MPI_Op_create(mat_op, 0, &T[T_MAT].user);
    MPI_Op_create(plus1_op, 1, &T[T_PLUS1].user);
    MPI_Op_create(left_op, 0, &T[T_LEFT].user);
    /* The test lays elements out as C does: the MPI extent must be the C size. */
    for (int i = 0; i < NTYPES; i++) {
        MPI_Aint lb = 0, extent = 0;
        usable[i] = T[i].t != MPI_DATATYPE_NULL &&
                    MPI_Type_get_extent(T[i].t, &lb, &extent) == MPI_SUCCESS && lb == 0 &&
                    (size_t)extent == T[i].size;
        if (!usable[i] && wrank == 0)
            printf("note: %s skipped (its MPI extent is not the C struct's size)\n", T[i].name);
    }
}

static void free_types(void)
{
    for (int i = 0; i < NTYPES; i++)
        if (T[i].user != MPI_OP_NULL)
            MPI_Op_free(&T[i].user);
    MPI_Type_free(&mat_type);
}

/* ---- one call, checked ---- */

enum { C_ALLREDUCE, C_REDUCE, C_RSB, C_RS, C_SCAN, C_EXSCAN, NCOLLS };
static const char *const CNAMES[NCOLLS] = {"MPI_Allreduce", "MPI_Reduce",
                                           "MPI_Reduce_scatter_block", "MPI_Reduce_scatter",
                                           "MPI_Scan", "MPI_Exscan"};

static unsigned char *alloc_poison(size_t bytes)
{
    unsigned char *p = malloc(bytes + GUARD);
    if (p == NULL)
        FAIL("out of memory (%zu bytes)", bytes);
    memset(p, POISON, bytes + GUARD);
    return p;
}

static void check_rc(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        FAIL("%s on %s returned %d: %s", what, C.name, rc, msg);
    }
}

static int all_poison(const unsigned char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != POISON)
            return 0;
    return 1;
}

/* MPI_Reduce_scatter's counts for `count` elements in all: even shares, rank 1 (of 3 or more)
 * gets none and rank 0 its share too. */
static void rs_counts(size_t count, int *counts, int *displs)
{
    int P = C.size;
    for (int i = 0; i < P; i++)
        counts[i] = (int)(count / (size_t)P + ((size_t)i < count % (size_t)P ? 1 : 0));
    if (P > 2) {
        counts[0] += counts[1];
        counts[1] = 0;
    }
    for (int i = 0, at = 0; i < P; at += counts[i], i++)
        displs[i] = at;
}

/* Runs one reduction of `count` elements (MPI_Reduce_scatter: in all; _block: per rank, rounded
 * up from count / size) and checks it against the reference. */
static void run_case(int coll, const rtype_t *t, int op, size_t count, int in_place, int root,
                     unsigned seed)
{
    int P = C.size, me = C.rank;
    size_t es = t->size, in_n = count, out_at = 0, out_n = count;
    int *counts = malloc((size_t)P * sizeof(int)), *displs = malloc((size_t)P * sizeof(int));
    if (counts == NULL || displs == NULL)
        FAIL("out of memory");
    if (coll == C_RSB) {
        out_n = (count + (size_t)P - 1) / (size_t)P;
        in_n = out_n * (size_t)P;
        out_at = (size_t)me * out_n;
    } else if (coll == C_RS) {
        rs_counts(count, counts, displs);
        out_at = (size_t)displs[me];
        out_n = (size_t)counts[me];
    }
#ifdef MPICH_VERSION
    /* MPICH 4.0.2's own MPI_Reduce crashes in place at a root other than 0 from about 4 KB
     * (where the drop-in gives a call to MPICH): root 0 instead. */
    if (coll == C_REDUCE && in_place && count > 7)
        root = 0;
#endif
    int leaf = coll == C_REDUCE && me != root;
    if (leaf)
        in_place = 0; /* (MPI_IN_PLACE only at the root) */
    size_t rbytes = (in_place ? in_n : out_n) * es;
    unsigned char *send = in_place ? NULL : alloc_poison(in_n * es);
    /* Off the root recvbuf is insignificant: NULL, for small counts (MPICH 4.0's own
     * MPI_Reduce writes there for large ones, in its reduce-scatter-gather algorithm). */
    unsigned char *recv = leaf && count <= 7 ? NULL : alloc_poison(rbytes);
    unsigned char *input = alloc_poison(in_n * es);
    MPI_Op mop = op == O_USER ? t->user : OPS[op];
    for (size_t g = 0; g < in_n; g++)
        t->gen(op, me, g, seed, input + g * es);
    memcpy(in_place ? recv : send, input, in_n * es);
    char what[300];
    snprintf(what, sizeof what, "%s of %zu %s with %s%s (root %d, seed %u)", CNAMES[coll], count,
             t->name, op == O_USER ? "its user operation" : OPNAMES[op],
             in_place ? ", in place" : "", root, seed);
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "rank %d: %s\n", me, what);
    int rc;
    int n = (int)(coll == C_RSB ? out_n : count);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    switch (coll) {
    case C_ALLREDUCE: rc = MPI_Allreduce(sb, recv, n, t->t, mop, C.comm); break;
    case C_REDUCE: rc = MPI_Reduce(sb, recv, n, t->t, mop, root, C.comm); break;
    case C_RSB: rc = MPI_Reduce_scatter_block(sb, recv, n, t->t, mop, C.comm); break;
    case C_RS: rc = MPI_Reduce_scatter(sb, recv, counts, t->t, mop, C.comm); break;
    case C_SCAN: rc = MPI_Scan(sb, recv, n, t->t, mop, C.comm); break;
    default: rc = MPI_Exscan(sb, recv, n, t->t, mop, C.comm); break;
    }
    check_rc(rc, what);
    if (send != NULL && memcmp(send, input, in_n * es) != 0)
        FAIL("%s on %s (rank %d of %d): the send buffer changed", what, C.name, me, P);
    /* the ranks folded into this rank's result */
    int lo = 0, hi = P - 1;
    if (coll == C_SCAN)
        hi = me;
    else if (coll == C_EXSCAN)
        hi = me - 1;
    if (leaf) {
        ; /* nothing lands here */
    } else if (hi < lo) { /* MPI_Exscan at rank 0: recvbuf untouched */
        if (in_place ? memcmp(recv, input, in_n * es) != 0 : !all_poison(recv, rbytes + GUARD))
            FAIL("%s on %s: rank 0's receive buffer was written", what, C.name);
    } else {
        unsigned char acc[64], in[64];
        for (size_t j = 0; j < out_n; j++) {
            size_t g = out_at + j;
            t->gen(op, lo, g, seed, acc);
            for (int r = lo + 1; r <= hi; r++) {
                t->gen(op, r, g, seed, in);
                t->comb(op, in, acc);
            }
            if (!t->eq(recv + j * es, acc)) {
                char got[64] = "", want[64] = "";
                for (size_t b = 0; b < es && b < 16; b++) {
                    snprintf(got + 2 * b, 3, "%02x", recv[j * es + b]);
                    snprintf(want + 2 * b, 3, "%02x", acc[b]);
                }
                FAIL("%s on %s (rank %d of %d): element %zu of %zu (%zu of the vector) is "
                     "wrong: bytes %s, expected %s", what, C.name, me, P, j, out_n, g, got,
                     want);
            }
        }
        if (!all_poison(recv + rbytes, GUARD))
            FAIL("%s on %s (rank %d of %d): written past the receive buffer", what, C.name, me,
                 P);
    }
    free(send);
    free(recv);
    free(input);
    free(counts);
    free(displs);
}

/* Every collective, in place or not, at every root (MPI_Reduce). */
static void all_colls(const rtype_t *t, int op, size_t count, unsigned seed, int roots)
{
    for (int coll = 0; coll < NCOLLS; coll++)
        for (int ip = 0; ip < 2; ip++) {
            int nroots = coll == C_REDUCE ? roots : 1;
            for (int k = 0; k < nroots; k++) {
                int root = (int)((seed + (unsigned)k) % (unsigned)C.size);
                run_case(coll, t, op, count, ip, root, seed + (unsigned)k);
            }
        }
}

/* ---- the parts ---- */

/* Every predefined operation on every type it applies to. */
static void test_predefined(unsigned seed)
{
    static const size_t counts[] = {0, 1, 7, 1000};
    for (int ti = 0; ti <= T_LDOUBLE_INT; ti++) {
        if (!usable[ti] ||
            (!C.full && ti != T_INT && ti != T_DOUBLE && ti != T_2INT && ti != T_DOUBLE_INT))
            continue;
        for (int op = 0; op < NOPS; op++) {
            if (!(class_ops[T[ti].cls] & B(op)) ||
                (!C.full && op != O_SUM && op != O_MAX && op != O_MINLOC))
                continue;
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                all_colls(&T[ti], op, counts[c], seed + (unsigned)c, C.full ? C.size : 2);
        }
    }
    if (!C.full)
        return;
    /* large: a few pairs */
    all_colls(&T[T_DOUBLE], O_SUM, 300000, seed, 2);
    all_colls(&T[T_INT], O_MAX, 300000, seed + 1, 1);
    all_colls(&T[T_UCHAR], O_BXOR, 300000, seed + 2, 1);
    all_colls(&T[T_2INT], O_MINLOC, 300000, seed + 3, 1);
    all_colls(&T[T_DOUBLE_INT], O_MAXLOC, 100000, seed + 4, 1);
}

static void test_user(unsigned seed)
{
    static const size_t counts[] = {1, 7, 1000};
    for (int ti = T_MAT; ti <= T_LEFT; ti++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            all_colls(&T[ti], O_USER, counts[c], seed + (unsigned)c, C.full ? C.size : 1);
    if (C.full)
        all_colls(&T[T_MAT], O_USER, 100000, seed, 1);
    if (wrong_dt)
        FAIL("a user function got a datatype that is not the caller's (%ld calls)", wrong_dt);
}

/* A user operation on vector(2, 1, 2, MPI_INT): a + b + 1 on the 2 ints of each element. */
static MPI_Datatype vec_type;

static void vec_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != vec_type)
        wrong_dt++;
    const int *x = in;
    int *y = inout;
    for (int k = 0; k < *len; k++) {
        y[3 * k] = x[3 * k] + y[3 * k] + 1;
        y[3 * k + 2] = x[3 * k + 2] + y[3 * k + 2] + 1;
    }
}

/* A predefined operation on a derived type: MPI defines it where every element of the type is
 * of one basic type the operation applies to, and rcoll runs it for a contiguous one, but Open
 * MPI 4.1's own reductions refuse any derived type (MPI_ERR_OP): 1 if the call ran. */
static int derived_ran(int rc, const char *what)
{
    static int said;
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_OP) {
        if (!said++ && wrank == 0)
            printf("note: the MPI library refuses %s (MPI_ERR_OP): not checked\n", what);
        return 0;
    }
    check_rc(rc, what);
    return 1;
}

/* Contiguous derived types with predefined operations (rcoll: count * n elements of the base
 * type), and a strided vector with MPI_SUM and with a user operation (the MPI library's: the
 * holes between the ints stay as they were). */
static void test_derived(unsigned seed)
{
    int P = C.size, me = C.rank;
    MPI_Datatype d3, p2;
    MPI_Type_contiguous(3, MPI_DOUBLE, &d3);
    MPI_Type_commit(&d3);
    MPI_Type_contiguous(2, MPI_2INT, &p2);
    MPI_Type_commit(&p2);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec_type); /* ints 0 and 2 of every 3 */
    MPI_Type_commit(&vec_type);
    MPI_Op vop;
    MPI_Op_create(vec_op, 1, &vop);
    const int n = 333;
    double *ds = malloc(3 * n * sizeof(double)), *dr = malloc(3 * n * sizeof(double));
    p2int_t *ps = malloc(2 * n * sizeof(p2int_t)), *pr = malloc(2 * n * sizeof(p2int_t));
    int *vs = malloc(3 * n * sizeof(int)), *vr = malloc(3 * n * sizeof(int));
    if (!ds || !dr || !ps || !pr || !vs || !vr)
        FAIL("out of memory");
    for (int it = 0; it < 4; it++) {
        int root = (int)(seed + (unsigned)it) % P, red = it % 2, user = it >= 2;
        for (int g = 0; g < 3 * n; g++)
            gen_double(O_SUM, me, (size_t)g, seed, &ds[g]);
        for (int g = 0; g < 2 * n; g++)
            gen_p2int(O_MINLOC, me, (size_t)g, seed, &ps[g]);
        for (int g = 0; g < 3 * n; g++) {
            vs[g] = g % 3 == 1 ? -7 : (int)(mix(me, (size_t)g, seed, 0) % 1000);
            vr[g] = -9;
        }
        MPI_Op vo = user ? vop : MPI_SUM;
        int d_ok = derived_ran(red ? MPI_Reduce(ds, dr, n, d3, MPI_SUM, root, C.comm)
                                   : MPI_Allreduce(ds, dr, n, d3, MPI_SUM, C.comm),
                               "MPI_SUM on contiguous(3, MPI_DOUBLE)");
        int p_ok = derived_ran(red ? MPI_Reduce(ps, pr, n, p2, MPI_MINLOC, root, C.comm)
                                   : MPI_Allreduce(ps, pr, n, p2, MPI_MINLOC, C.comm),
                               "MPI_MINLOC on contiguous(2, MPI_2INT)");
        int rc = red ? MPI_Reduce(vs, vr, n, vec_type, vo, root, C.comm)
                     : MPI_Allreduce(vs, vr, n, vec_type, vo, C.comm);
        int v_ok = user ? (check_rc(rc, "a user operation on vector(2, 1, 2, MPI_INT)"), 1)
                        : derived_ran(rc, "MPI_SUM on vector(2, 1, 2, MPI_INT)");
        if (red && me != root)
            continue;
        for (int g = 0; d_ok && g < 3 * n; g++) {
            double acc = 0, x;
            for (int r = 0; r < P; r++) {
                gen_double(O_SUM, r, (size_t)g, seed, &x);
                acc += x;
            }
            if (dr[g] != acc)
                FAIL("contiguous(3, MPI_DOUBLE) sum on %s: double %d is %g, expected %g", C.name,
                     g, dr[g], acc);
        }
        for (int g = 0; p_ok && g < 2 * n; g++) {
            p2int_t acc, x;
            gen_p2int(O_MINLOC, 0, (size_t)g, seed, &acc);
            for (int r = 1; r < P; r++) {
                gen_p2int(O_MINLOC, r, (size_t)g, seed, &x);
                comb_p2int(O_MINLOC, &x, &acc);
            }
            if (!eq_p2int(&pr[g], &acc))
                FAIL("contiguous(2, MPI_2INT) minloc on %s: pair %d is wrong", C.name, g);
        }
        for (int g = 0; v_ok && g < 3 * n; g++) {
            int acc = user ? P - 1 : 0;
            for (int r = 0; r < P; r++)
                acc += (int)(mix(r, (size_t)g, seed, 0) % 1000);
            int want = g % 3 == 1 ? -9 : acc;
            if (vr[g] != want)
                FAIL("vector(2, 1, 2, MPI_INT) %s on %s: int %d is %d, expected %d%s",
                     user ? "user operation" : "sum", C.name, g, vr[g], want,
                     g % 3 == 1 ? " (a hole)" : "");
        }
    }
    if (wrong_dt)
        FAIL("a user function got a datatype that is not the caller's (%ld calls)", wrong_dt);
    free(ds);
    free(dr);
    free(ps);
    free(pr);
    free(vs);
    free(vr);
    MPI_Op_free(&vop);
    MPI_Type_free(&d3);
    MPI_Type_free(&p2);
    MPI_Type_free(&vec_type);
}

static uint64_t fnv(const void *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

/* A float and a double sum of values of many magnitudes (rounding depends on the order):
 * bitwise the same result on every rank. */
static void test_bitwise(unsigned seed)
{
    const size_t sizes[] = {1000, 100000};
    for (size_t k = 0; k < 2; k++) {
        size_t n = sizes[k];
        float *fs = malloc(n * sizeof(float)), *fr = malloc(n * sizeof(float));
        double *ds = malloc(n * sizeof(double)), *dr = malloc(n * sizeof(double));
        uint64_t mine[2], *all = malloc((size_t)C.size * 2 * sizeof(uint64_t));
        if (!fs || !fr || !ds || !dr || !all)
            FAIL("out of memory");
        for (size_t i = 0; i < n; i++) {
            uint64_t h = mix(C.rank, i, seed, 99);
            double v = ldexp((double)(h % 2000003) - 1000001.0, (int)((h >> 40) % 40) - 30);
            fs[i] = (float)v;
            ds[i] = v * 1.000000119;
        }
        check_rc(MPI_Allreduce(fs, fr, (int)n, MPI_FLOAT, MPI_SUM, C.comm), "float sum");
        check_rc(MPI_Allreduce(ds, dr, (int)n, MPI_DOUBLE, MPI_SUM, C.comm), "double sum");
        mine[0] = fnv(fr, n * sizeof(float));
        mine[1] = fnv(dr, n * sizeof(double));
        check_rc(MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, C.comm),
                 "MPI_Allgather of the sums' hashes");
        for (int r = 0; r < C.size; r++)
            if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
                FAIL("%zu-element %s sum on %s: rank %d's result differs from rank 0's", n,
                     all[2 * r] != all[0] ? "float" : "double", C.name, r);
        if (n <= 1000) { /* the bytes themselves */
            float *every = malloc((size_t)C.size * n * sizeof(float));
            if (every == NULL)
                FAIL("out of memory");
            check_rc(MPI_Allgather(fr, (int)n, MPI_FLOAT, every, (int)n, MPI_FLOAT, C.comm),
                     "MPI_Allgather of the float sums");
            for (int r = 0; r < C.size; r++)
                if (memcmp(every + (size_t)r * n, fr, n * sizeof(float)) != 0)
                    FAIL("float sum on %s: rank %d's bytes differ from this rank's", C.name, r);
            free(every);
        }
        free(fs);
        free(fr);
        free(ds);
        free(dr);
        free(all);
    }
}

/* Back to back, no barrier: reduce at a rotating root, allreduce, scan and reduce_scatter_block
 * with changing counts, each checked at once. */
static void test_back_to_back(unsigned seed)
{
    int P = C.size;
    for (int it = 0; it < (C.full ? 200 : 50); it++) {
        int root = it % P;
        size_t count = (size_t)(1 + it % 9) * (it % 5 == 4 ? 700 : 1);
        unsigned s = seed * 1000u + (unsigned)it;
        run_case(C_REDUCE, &T[T_INT], O_SUM, count, it % 3 == 0, root, s);
        run_case(C_ALLREDUCE, &T[T_DOUBLE], O_MAX, count, it % 2, 0, s);
        run_case(C_SCAN, &T[T_LLONG], O_BXOR, count, 0, 0, s);
        run_case(C_RSB, &T[T_UCHAR], O_BOR, count, it % 2, 0, s);
    }
}

static void run_on(MPI_Comm comm, const char *name, int full, int reps)
{
    C.comm = comm;
    C.name = name;
    C.full = full;
    MPI_Comm_rank(comm, &C.rank);
    MPI_Comm_size(comm, &C.size);
    for (int it = 0; it < reps; it++) {
        unsigned seed = 17u * (unsigned)it + 3u;
        test_predefined(seed);
        test_user(seed);
        test_derived(seed);
        test_bitwise(seed);
        test_back_to_back(seed);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int wsize, reps = argc > 1 ? atoi(argv[1]) : 1;
    int quick = argc > 2 && strcmp(argv[2], "quick") == 0;
    if (reps < 1)
        reps = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    double t0 = MPI_Wtime();
    make_types();

    run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD", !quick, reps);

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    run_on(dup, "a duplicate of MPI_COMM_WORLD", 0, 1);
    MPI_Comm_free(&dup);

    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &split);
    MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN);
    run_on(split, wrank % 2 ? "odd ranks (reversed)" : "even ranks (reversed)", 0, 1);
    MPI_Comm_free(&split);

    run_on(MPI_COMM_SELF, "MPI_COMM_SELF", 0, 1);

    free_types();
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        FAIL("final MPI_Barrier failed");
    if (wrank == 0)
        printf("OK test_mpi_reduce (np %d, %d repetitions%s, %.2f s)\n", wsize, reps,
               quick ? ", quick" : "", MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
