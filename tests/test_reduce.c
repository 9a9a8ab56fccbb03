/* Correctness of the reductions' C API (rcoll.h, "Reductions"), multi-process like test_matrix:
 * ranks are real processes forked by the test launcher, more of them than cores.
 *
 * - local: rcoll_reduce_local for every (operation x element type): the valid pairs against a
 *   serial reference, the others RCOLL_ERR_INVALID with the buffer untouched (and rcoll_op_valid
 *   saying the same), type sizes and names, user operations (commutative and not).
 * - the matrix: every reduction x every algorithm of it (forced; one that does not apply falls
 *   back by itself, and the team must say it ran the forced one or its fallback, the forced
 *   one at least once) x team sizes (1..9 and 16) x counts 0, 1, 7, 1001 and > 1 MB x in place
 *   or not x roots (reduce: every root for a quarter of the pairs, a rotating one for the
 *   others) x operation/type pairs (sum/prod/min/max on int32, uint8, int64, float, double; sum
 *   on double complex; land/lor/lxor/band/bor/bxor on uint32, land/lor/lxor on bool (rcoll.h:
 *   the bitwise ones apply to integers only); minloc/maxloc on double_int and 2int with many
 *   ties; a commutative user sum on int64). Inputs are deterministic and exact (small integers,
 *   powers of two), so the serial reference in rank order is the exact answer. Guard bytes
 *   around every receive buffer, the send buffer unchanged, a non-root's receive buffer of
 *   reduce untouched, exscan's rank-0 buffer untouched; every other call passes NULL where a
 *   buffer does not matter (a non-root's recvbuf, an empty call's buffers, the recvbuf of an
 *   empty reduce_scatter block). Team sizes above 8 and --quick run a reduced set of pairs;
 *   counts above 1 MB run two pairs; vectors above the reductions' 8 MB of scratch (which run in
 *   parts) one, at team sizes 2 and 3 (not --quick).
 * - non-commutative: user operations in rank order for every reduction (reduce at every root):
 *   2x2 matrix product of integer-valued doubles on RCOLL_DTYPE_BYTES(32) elements, affine maps
 *   mod 256 on RCOLL_DTYPE_BYTES(3) (odd size, unaligned elements), and elements larger than the
 *   library's 8 KB fold part (RCOLL_DTYPE_BYTES(8202), counts 1 and 3; --no-big leaves them out).
 * - bitwise: allreduce of random doubles and floats (inexact sums): every rank's result gathered
 *   (rcoll_allgather; a hash of it past 1 MB of gathered data) and compared bytewise; with
 *   RCOLL_REPRODUCIBLE=1 in the environment also equal across all algorithms (and in place or
 *   not) for the team size.
 * - racing: many calls back to back without a barrier, rotating roots, the reduction under test
 *   alternating with the other reductions (as the team chooses), bcast, allgather and alltoall.
 * - nonblocking and persistent forms (rcoll_i<coll>, <coll>_init): one request at a time over
 *   the pair classes, counts and in place, checked as the blocking calls; three requests
 *   outstanding at once, completed in reverse order.
 * - errors: bad root, NULL buffers with count > 0, NULL counts, counts whose bytes overflow, an
 *   operation invalid for the type, an unknown type, operation or algorithm: RCOLL_ERR_INVALID
 *   on every rank without a hang, then good calls on the same team.
 * Options (as test_matrix): --coll NAME[,NAME..] (the reductions, and "local"; default all, but
 * not local with --nodes), --algo NAME, --np 1,2,..., --quick (reduced matrix, fewer calls),
 * --nodes N (emulated nodes, RCOLL_NODE_MAP in blocks; node-aware algorithms then run too),
 * --calls N (racing calls), --no-big (without the elements larger than 8 KB). */
#include <complex.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/oob_fork.h"
#include "coll/colls.h"
#include "rcoll/rcoll.h"
#include "select/select.h"

#define MAX_ALGOS 16
#define MAX_P 64
#define GUARD 64
#define PERIOD 4099                    /* inputs repeat along a vector with this period (prime) */
#define LARGE_COUNT ((1u << 18) + 37)  /* elements: 2.1 MB of doubles */
#define MAX_ELEM 32
#define MAX_PRINTED 8                  /* failures printed per rank */

/* ---- element types ---- */

typedef struct { float v; int i; } float_int_t;
typedef struct { double v; int i; } double_int_t;
typedef struct { long v; int i; } long_int_t;
typedef struct { int v; int i; } int2_t;
typedef struct { short v; int i; } short_int_t;
typedef struct { long double v; int i; } ldouble_int_t;

typedef enum { K_SINT, K_UINT, K_FLOAT, K_COMPLEX, K_BOOL, K_PAIR, K_MAT, K_AFF, K_BIG, K_OPAQUE } kind_t;

typedef struct {
    rcoll_dtype_t dt;
    const char *name;
    size_t size;
    kind_t kind;
} dtype_info_t;

#define MAT_DTYPE RCOLL_DTYPE_BYTES(32)
#define AFF_DTYPE RCOLL_DTYPE_BYTES(3)
#define BIG_ES 8202 /* 2734 affine maps: an element larger than the library's 8 KB fold part */
#define BIG_DTYPE RCOLL_DTYPE_BYTES(BIG_ES)

static const dtype_info_t dtypes[] = {
    {RCOLL_DTYPE_INT8, "int8", sizeof(int8_t), K_SINT},
    {RCOLL_DTYPE_UINT8, "uint8", sizeof(uint8_t), K_UINT},
    {RCOLL_DTYPE_INT16, "int16", sizeof(int16_t), K_SINT},
    {RCOLL_DTYPE_UINT16, "uint16", sizeof(uint16_t), K_UINT},
    {RCOLL_DTYPE_INT32, "int32", sizeof(int32_t), K_SINT},
    {RCOLL_DTYPE_UINT32, "uint32", sizeof(uint32_t), K_UINT},
    {RCOLL_DTYPE_INT64, "int64", sizeof(int64_t), K_SINT},
    {RCOLL_DTYPE_UINT64, "uint64", sizeof(uint64_t), K_UINT},
    {RCOLL_DTYPE_FLOAT, "float", sizeof(float), K_FLOAT},
    {RCOLL_DTYPE_DOUBLE, "double", sizeof(double), K_FLOAT},
    {RCOLL_DTYPE_LONG_DOUBLE, "long double", sizeof(long double), K_FLOAT},
    {RCOLL_DTYPE_FLOAT_COMPLEX, "float complex", sizeof(float complex), K_COMPLEX},
    {RCOLL_DTYPE_DOUBLE_COMPLEX, "double complex", sizeof(double complex), K_COMPLEX},
    {RCOLL_DTYPE_LONG_DOUBLE_COMPLEX, "long double complex", sizeof(long double complex), K_COMPLEX},
    {RCOLL_DTYPE_BOOL, "bool", sizeof(bool), K_BOOL},
    {RCOLL_DTYPE_FLOAT_INT, "float_int", sizeof(float_int_t), K_PAIR},
    {RCOLL_DTYPE_DOUBLE_INT, "double_int", sizeof(double_int_t), K_PAIR},
    {RCOLL_DTYPE_LONG_INT, "long_int", sizeof(long_int_t), K_PAIR},
    {RCOLL_DTYPE_2INT, "2int", sizeof(int2_t), K_PAIR},
    {RCOLL_DTYPE_SHORT_INT, "short_int", sizeof(short_int_t), K_PAIR},
    {RCOLL_DTYPE_LONG_DOUBLE_INT, "long_double_int", sizeof(ldouble_int_t), K_PAIR},
    {MAT_DTYPE, "bytes32 (2x2 matrix)", 32, K_MAT},
    {AFF_DTYPE, "bytes3 (affine map mod 256)", 3, K_AFF},
    {BIG_DTYPE, "bytes8202 (2734 affine maps)", BIG_ES, K_BIG},
    {RCOLL_DTYPE_BYTES(8), "bytes8", 8, K_OPAQUE},
};
#define NDTYPES ((int)(sizeof dtypes / sizeof *dtypes))

static const dtype_info_t *dinfo(rcoll_dtype_t dt)
{
    for (int i = 0; i < NDTYPES; i++)
        if (dtypes[i].dt == dt)
            return &dtypes[i];
    return NULL;
}

/* ---- operations: the predefined ones by number, then the test's user operations ---- */

enum { O_SUM = 1, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MINLOC,
       O_MAXLOC, O_USUM, O_MAT, O_AFF, O_BIG, O_END };

static const char *const op_names[O_END] = {
    "?", "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "minloc",
    "maxloc", "user_sum(commutative)", "user_matmul(non-commutative)", "user_affine(non-commutative)",
    "user_affine8202(non-commutative)"};

static rcoll_op_t user_sum_op, user_mat_op, user_aff_op, user_big_op;
static int user_sum_tag, user_mat_tag, user_aff_tag, user_big_tag;
static volatile int user_fn_bad; /* a user function saw a wrong dtype or arg */

static rcoll_op_t op_of(int opc)
{
    switch (opc) {
    case O_USUM: return user_sum_op;
    case O_MAT: return user_mat_op;
    case O_AFF: return user_aff_op;
    case O_BIG: return user_big_op;
    default: return (rcoll_op_t)(uintptr_t)opc;
    }
}

/* inout[i] = in[i] + inout[i] on int64. */
static void user_sum_fn(const void *in, void *inout, size_t count, rcoll_dtype_t dt, void *arg)
{
    if (dt != RCOLL_DTYPE_INT64 || arg != &user_sum_tag)
        user_fn_bad = 1;
    for (size_t i = 0; i < count; i++) {
        int64_t a, b;
        memcpy(&a, (const char *)in + i * 8, 8);
        memcpy(&b, (char *)inout + i * 8, 8);
        b = (int64_t)((uint64_t)a + (uint64_t)b);
        memcpy((char *)inout + i * 8, &b, 8);
    }
}

/* 2x2 matrices, row major: c = a * b. */
static void matmul(const double *a, const double *b, double *c)
{
    double r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                   a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(c, r, sizeof r);
}

/* inout[i] = in[i] x inout[i]: `in` holds the lower ranks, so the result is M0 M1 ... in rank
 * order. Elements are copied out: nothing promises their alignment. */
static void user_mat_fn(const void *in, void *inout, size_t count, rcoll_dtype_t dt, void *arg)
{
    if (dt != MAT_DTYPE || arg != &user_mat_tag)
        user_fn_bad = 1;
    for (size_t i = 0; i < count; i++) {
        double a[4], b[4];
        memcpy(a, (const char *)in + i * 32, 32);
        memcpy(b, (char *)inout + i * 32, 32);
        matmul(a, b, b);
        memcpy((char *)inout + i * 32, b, 32);
    }
}

/* Elements of 3 bytes (odd: no alignment): x -> m x + c mod 256 with m odd, and a byte whose
 * maximum is kept. inout = in then inout (the lower ranks' map applied first): m = m_in m_io,
 * c = m_io c_in + c_io. Associative, not commutative. */
static void affine(const unsigned char *a, unsigned char *b)
{
    unsigned char r[3] = {(unsigned char)(a[0] * b[0]), (unsigned char)(b[0] * a[1] + b[1]),
                          a[2] > b[2] ? a[2] : b[2]};
    memcpy(b, r, 3);
}

static void user_aff_fn(const void *in, void *inout, size_t count, rcoll_dtype_t dt, void *arg)
{
    if (dt != AFF_DTYPE || arg != &user_aff_tag)
        user_fn_bad = 1;
    for (size_t i = 0; i < count; i++)
        affine((const unsigned char *)in + 3 * i, (unsigned char *)inout + 3 * i);
}

/* Elements of BIG_ES bytes: BIG_ES / 3 affine maps each. */
static void user_big_fn(const void *in, void *inout, size_t count, rcoll_dtype_t dt, void *arg)
{
    if (dt != BIG_DTYPE || arg != &user_big_tag)
        user_fn_bad = 1;
    for (size_t i = 0; i < count * BIG_ES; i += 3)
        affine((const unsigned char *)in + i, (unsigned char *)inout + i);
}

/* What rcoll.h says: sum and prod on numbers (complex included), min and max on integers and
 * real floating types, the logical operations on integers and bool, the bitwise ones on
 * integers, minloc and maxloc on the pairs; user operations on anything. */
static bool expect_valid(int opc, const dtype_info_t *d)
{
    kind_t k = d->kind;
    switch (opc) {
    case O_SUM: case O_PROD:
        return k == K_SINT || k == K_UINT || k == K_FLOAT || k == K_COMPLEX;
    case O_MIN: case O_MAX:
        return k == K_SINT || k == K_UINT || k == K_FLOAT;
    case O_LAND: case O_LOR: case O_LXOR:
        return k == K_SINT || k == K_UINT || k == K_BOOL;
    case O_BAND: case O_BOR: case O_BXOR:
        return k == K_SINT || k == K_UINT;
    case O_MINLOC: case O_MAXLOC:
        return k == K_PAIR;
    case O_USUM: case O_MAT: case O_AFF: case O_BIG:
        return true;
    default:
        return false;
    }
}

/* ---- deterministic inputs ---- */

static uint32_t mix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x7feb352dU;
    h ^= h >> 15;
    h *= 0x846ca68bU;
    h ^= h >> 16;
    return h;
}

static uint32_t hash_of(int rank, size_t i, unsigned salt, unsigned tag)
{
    return mix((uint32_t)(i % PERIOD) * 0x9E3779B1U ^
               mix((uint32_t)rank * 0x85EBCA77U ^ mix(salt * 0xC2B2AE3DU ^ tag)));
}

static void store_uint(void *out, uint64_t v, size_t size)
{
    uint8_t b8 = (uint8_t)v;
    uint16_t b16 = (uint16_t)v;
    uint32_t b32 = (uint32_t)v;
    switch (size) {
    case 1: memcpy(out, &b8, 1); break;
    case 2: memcpy(out, &b16, 2); break;
    case 4: memcpy(out, &b32, 4); break;
    default: memcpy(out, &v, 8); break;
    }
}

static void store_real(void *out, rcoll_dtype_t dt, double v)
{
    float f = (float)v;
    long double l = v;
    if (dt == RCOLL_DTYPE_FLOAT)
        memcpy(out, &f, sizeof f);
    else if (dt == RCOLL_DTYPE_DOUBLE)
        memcpy(out, &v, sizeof v);
    else
        memcpy(out, &l, sizeof l);
}

static void store_complex(void *out, rcoll_dtype_t dt, double re, double im)
{
    if (dt == RCOLL_DTYPE_FLOAT_COMPLEX) {
        float c[2] = {(float)re, (float)im};
        memcpy(out, c, sizeof c);
    } else if (dt == RCOLL_DTYPE_DOUBLE_COMPLEX) {
        double c[2] = {re, im};
        memcpy(out, c, sizeof c);
    } else {
        long double c[2] = {re, im};
        memcpy(out, c, sizeof c);
    }
}

/* Element i of rank `rank`'s vector for a call of `opc` on a team of `p` (salt: the call). Values
 * keep every result exact and interesting: small integers for sums, mostly 1 with a few 2, -1
 * and 1/2 for products, full ranges for min/max, truth values whose combination over p ranks is
 * true about half of the time, one-bit patterns for band/bor, values with many ties for
 * minloc/maxloc, shear and permutation matrices for the matrix product. */
static void gen(const dtype_info_t *d, int opc, int p, int rank, size_t i, unsigned salt, void *out)
{
    uint32_t h = hash_of(rank, i, salt, (unsigned)opc * 64u + (unsigned)(d - dtypes));
    uint32_t h2 = mix(h ^ 0x5bd1e995U);
    unsigned two_p = 2u * (unsigned)p;
    switch (d->kind) {
    case K_SINT: case K_UINT: {
        bool s = d->kind == K_SINT;
        unsigned bits = (unsigned)d->size * 8;
        uint64_t nz = 1 + (h2 >> 1) % 3;
        if (s && (h2 & 1))
            nz = (uint64_t)-(int64_t)nz;
        uint64_t rnd = (uint64_t)h << 32 | h2, v;
        switch (opc) {
        case O_SUM: case O_USUM:
            if (!s)
                v = rnd;
            else if (bits == 8)
                v = (uint64_t)((int64_t)(h % 7) - 3);
            else
                v = (uint64_t)(((int64_t)(h % 201) - 100) * (bits == 64 ? (int64_t)1 << 33 : 1));
            break;
        case O_PROD: v = h % 8 == 0 ? 2 : h % 8 == 1 ? (s ? (uint64_t)-1 : 3) : 1; break;
        case O_LAND: v = h % two_p == 0 ? 0 : nz; break;
        case O_LOR: v = h % two_p == 0 ? nz : 0; break;
        case O_LXOR: v = h & 1 ? nz : 0; break;
        case O_BAND: v = ~((uint64_t)1 << (h2 % bits)); break;
        case O_BOR: v = (uint64_t)1 << (h2 % bits); break;
        default: v = rnd; break; /* min, max, bxor: any bits */
        }
        store_uint(out, v, d->size);
        break;
    }
    case K_FLOAT: {
        double v;
        switch (opc) {
        case O_SUM: v = (double)((int)(h % 201) - 100); break;
        case O_PROD: v = h % 8 == 0 ? 2 : h % 8 == 1 ? -1 : h % 8 == 2 ? 0.5 : 1; break;
        case O_MIN: case O_MAX: v = ldexp((double)((int)(h % 2001) - 1000), (int)(h2 % 20)); break;
        default: v = (double)((int)(h % 21) - 10); break;
        }
        store_real(out, d->dt, v);
        break;
    }
    case K_COMPLEX: {
        double re = (double)((int)(h % 21) - 10), im = (double)((int)(h2 % 21) - 10);
        if (opc == O_PROD) {
            static const double pick[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1},
                                              {1, 0}, {1, 0}, {1, 0}};
            re = pick[h % 8][0];
            im = pick[h % 8][1];
        }
        store_complex(out, d->dt, re, im);
        break;
    }
    case K_BOOL: {
        bool b;
        switch (opc) {
        case O_LAND: case O_BAND: b = h % two_p != 0; break;
        case O_LOR: case O_BOR: b = h % two_p == 0; break;
        default: b = h & 1; break;
        }
        memcpy(out, &b, sizeof b);
        break;
    }
    case K_PAIR: {
        int iv = (int)(h % 4) - 1, idx = (int)(h2 % 50);
        double fv = iv * 0.5;
        switch (d->dt) {
        case RCOLL_DTYPE_FLOAT_INT: { float_int_t x; memset(&x, 0, sizeof x); x.v = (float)fv; x.i = idx; memcpy(out, &x, sizeof x); break; }
        case RCOLL_DTYPE_DOUBLE_INT: { double_int_t x; memset(&x, 0, sizeof x); x.v = fv; x.i = idx; memcpy(out, &x, sizeof x); break; }
        case RCOLL_DTYPE_LONG_INT: { long_int_t x; memset(&x, 0, sizeof x); x.v = iv; x.i = idx; memcpy(out, &x, sizeof x); break; }
        case RCOLL_DTYPE_2INT: { int2_t x; memset(&x, 0, sizeof x); x.v = iv; x.i = idx; memcpy(out, &x, sizeof x); break; }
        case RCOLL_DTYPE_SHORT_INT: { short_int_t x; memset(&x, 0, sizeof x); x.v = (short)iv; x.i = idx; memcpy(out, &x, sizeof x); break; }
        default: { ldouble_int_t x; memset(&x, 0, sizeof x); x.v = fv; x.i = idx; memcpy(out, &x, sizeof x); break; }
        }
        break;
    }
    case K_MAT: {
        double k = (double)((int)(h2 % 5) - 2), m[4];
        switch (h % 5) {
        case 0: m[0] = 1, m[1] = k, m[2] = 0, m[3] = 1; break;   /* shears */
        case 1: m[0] = 1, m[1] = 0, m[2] = k, m[3] = 1; break;
        case 2: m[0] = 0, m[1] = 1, m[2] = 1, m[3] = 0; break;   /* swap */
        case 3: m[0] = -1, m[1] = 0, m[2] = 0, m[3] = 1; break;  /* reflection */
        default: m[0] = 1, m[1] = 1, m[2] = 1, m[3] = 2; break;
        }
        memcpy(out, m, sizeof m);
        break;
    }
    case K_AFF: {
        unsigned char e[3] = {(unsigned char)(h | 1), (unsigned char)h2, (unsigned char)(h >> 8)};
        memcpy(out, e, 3);
        break;
    }
    case K_BIG:
        for (size_t t = 0; t < BIG_ES; t += 3) {
            uint32_t ht = mix(h ^ (uint32_t)t * 0x9E3779B1U);
            unsigned char e[3] = {(unsigned char)(ht | 1), (unsigned char)(ht >> 8), (unsigned char)(ht >> 16)};
            memcpy((unsigned char *)out + t, e, 3);
        }
        break;
    case K_OPAQUE:
        memset(out, (int)(h & 0xff), d->size);
        break;
    }
}

/* ---- the serial reference: inout = in op inout for one element ---- */

#define INT_REF(T) do { \
        T a, b, c; \
        memcpy(&a, in, sizeof a); \
        memcpy(&b, inout, sizeof b); \
        switch (opc) { \
        case O_SUM: case O_USUM: c = (T)((uint64_t)a + (uint64_t)b); break; \
        case O_PROD: c = (T)((uint64_t)a * (uint64_t)b); break; \
        case O_MIN: c = a < b ? a : b; break; \
        case O_MAX: c = a > b ? a : b; break; \
        case O_LAND: c = (T)(a && b); break; \
        case O_LOR: c = (T)(a || b); break; \
        case O_LXOR: c = (T)(!a != !b); break; \
        case O_BAND: c = (T)(a & b); break; \
        case O_BOR: c = (T)(a | b); break; \
        case O_BXOR: c = (T)(a ^ b); break; \
        default: c = b; break; \
        } \
        memcpy(inout, &c, sizeof c); \
    } while (0)

#define REAL_REF(T) do { \
        T a, b, c; \
        memcpy(&a, in, sizeof a); \
        memcpy(&b, inout, sizeof b); \
        switch (opc) { \
        case O_SUM: c = a + b; break; \
        case O_PROD: c = a * b; break; \
        case O_MIN: c = a < b ? a : b; break; \
        case O_MAX: c = a > b ? a : b; break; \
        default: c = b; break; \
        } \
        memcpy(inout, &c, sizeof c); \
    } while (0)

#define COMPLEX_REF(T) do { \
        T a, b, c; \
        memcpy(&a, in, sizeof a); \
        memcpy(&b, inout, sizeof b); \
        c = opc == O_SUM ? a + b : opc == O_PROD ? a * b : b; \
        memcpy(inout, &c, sizeof c); \
    } while (0)

/* minloc/maxloc: the smaller (larger) value, the smaller index on a tie. */
#define PAIR_REF(T) do { \
        T a, b, c; \
        memcpy(&a, in, sizeof a); \
        memcpy(&b, inout, sizeof b); \
        if (a.v == b.v) \
            c = a.i < b.i ? a : b; \
        else if (opc == O_MINLOC) \
            c = a.v < b.v ? a : b; \
        else \
            c = a.v > b.v ? a : b; \
        memcpy(inout, &c, sizeof c); \
    } while (0)

static void ref_combine(const dtype_info_t *d, int opc, const void *in, void *inout)
{
    switch (d->dt) {
    case RCOLL_DTYPE_INT8: INT_REF(int8_t); break;
    case RCOLL_DTYPE_UINT8: INT_REF(uint8_t); break;
    case RCOLL_DTYPE_INT16: INT_REF(int16_t); break;
    case RCOLL_DTYPE_UINT16: INT_REF(uint16_t); break;
    case RCOLL_DTYPE_INT32: INT_REF(int32_t); break;
    case RCOLL_DTYPE_UINT32: INT_REF(uint32_t); break;
    case RCOLL_DTYPE_INT64: INT_REF(int64_t); break;
    case RCOLL_DTYPE_UINT64: INT_REF(uint64_t); break;
    case RCOLL_DTYPE_BOOL: {
        bool a, b, c;
        memcpy(&a, in, sizeof a);
        memcpy(&b, inout, sizeof b);
        switch (opc) {
        case O_LAND: c = a && b; break;
        case O_LOR: c = a || b; break;
        case O_LXOR: case O_BXOR: c = a != b; break;
        case O_BAND: c = a & b; break;
        case O_BOR: c = a | b; break;
        default: c = b; break;
        }
        memcpy(inout, &c, sizeof c);
        break;
    }
    case RCOLL_DTYPE_FLOAT: REAL_REF(float); break;
    case RCOLL_DTYPE_DOUBLE: REAL_REF(double); break;
    case RCOLL_DTYPE_LONG_DOUBLE: REAL_REF(long double); break;
    case RCOLL_DTYPE_FLOAT_COMPLEX: COMPLEX_REF(float complex); break;
    case RCOLL_DTYPE_DOUBLE_COMPLEX: COMPLEX_REF(double complex); break;
    case RCOLL_DTYPE_LONG_DOUBLE_COMPLEX: COMPLEX_REF(long double complex); break;
    case RCOLL_DTYPE_FLOAT_INT: PAIR_REF(float_int_t); break;
    case RCOLL_DTYPE_DOUBLE_INT: PAIR_REF(double_int_t); break;
    case RCOLL_DTYPE_LONG_INT: PAIR_REF(long_int_t); break;
    case RCOLL_DTYPE_2INT: PAIR_REF(int2_t); break;
    case RCOLL_DTYPE_SHORT_INT: PAIR_REF(short_int_t); break;
    case RCOLL_DTYPE_LONG_DOUBLE_INT: PAIR_REF(ldouble_int_t); break;
    default:
        if (d->kind == K_MAT) {
            double a[4], b[4];
            memcpy(a, in, 32);
            memcpy(b, inout, 32);
            matmul(a, b, b);
            memcpy(inout, b, 32);
        } else if (d->kind == K_AFF) {
            affine(in, inout);
        } else if (d->kind == K_BIG) {
            for (size_t t = 0; t < BIG_ES; t += 3)
                affine((const unsigned char *)in + t, (unsigned char *)inout + t);
        }
        break;
    }
}

/* Equality by value (padding bytes of long double and of the pairs do not count). */
#define EQ_REAL(T) do { T x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x == y; } while (0)
#define EQ_CPLX(T) do { T x[2], y[2]; memcpy(x, a, sizeof x); memcpy(y, b, sizeof y); return x[0] == y[0] && x[1] == y[1]; } while (0)
#define EQ_PAIR(T) do { T x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x.v == y.v && x.i == y.i; } while (0)

static bool elem_eq(const dtype_info_t *d, const void *a, const void *b)
{
    switch (d->dt) {
    case RCOLL_DTYPE_FLOAT: EQ_REAL(float);
    case RCOLL_DTYPE_DOUBLE: EQ_REAL(double);
    case RCOLL_DTYPE_LONG_DOUBLE: EQ_REAL(long double);
    case RCOLL_DTYPE_FLOAT_COMPLEX: EQ_CPLX(float);
    case RCOLL_DTYPE_DOUBLE_COMPLEX: EQ_CPLX(double);
    case RCOLL_DTYPE_LONG_DOUBLE_COMPLEX: EQ_CPLX(long double);
    case RCOLL_DTYPE_FLOAT_INT: EQ_PAIR(float_int_t);
    case RCOLL_DTYPE_DOUBLE_INT: EQ_PAIR(double_int_t);
    case RCOLL_DTYPE_LONG_INT: EQ_PAIR(long_int_t);
    case RCOLL_DTYPE_2INT: EQ_PAIR(int2_t);
    case RCOLL_DTYPE_SHORT_INT: EQ_PAIR(short_int_t);
    case RCOLL_DTYPE_LONG_DOUBLE_INT: EQ_PAIR(ldouble_int_t);
    default:
        if (d->kind == K_MAT) {
            double x[4], y[4];
            memcpy(x, a, 32);
            memcpy(y, b, 32);
            return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
        }
        return memcmp(a, b, d->size) == 0;
    }
}

/* A readable element, for messages. */
static const char *fmt_elem(const dtype_info_t *d, const void *p, char *buf, size_t len)
{
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64;
            uint64_t u64; float f; double g; long double l; bool b; float_int_t fi; double_int_t di;
            long_int_t li; int2_t ii; short_int_t si; ldouble_int_t ldi; double m[4];
            float fc[2]; double dc[2]; long double lc[2]; } u;
    memcpy(&u, p, d->size < sizeof u ? d->size : sizeof u);
    switch (d->dt) {
    case RCOLL_DTYPE_INT8: snprintf(buf, len, "%d", u.i8); break;
    case RCOLL_DTYPE_UINT8: snprintf(buf, len, "%u", u.u8); break;
    case RCOLL_DTYPE_INT16: snprintf(buf, len, "%d", u.i16); break;
    case RCOLL_DTYPE_UINT16: snprintf(buf, len, "%u", u.u16); break;
    case RCOLL_DTYPE_INT32: snprintf(buf, len, "%d", u.i32); break;
    case RCOLL_DTYPE_UINT32: snprintf(buf, len, "0x%x", u.u32); break;
    case RCOLL_DTYPE_INT64: snprintf(buf, len, "%lld", (long long)u.i64); break;
    case RCOLL_DTYPE_UINT64: snprintf(buf, len, "0x%llx", (unsigned long long)u.u64); break;
    case RCOLL_DTYPE_FLOAT: snprintf(buf, len, "%.9g", u.f); break;
    case RCOLL_DTYPE_DOUBLE: snprintf(buf, len, "%.17g", u.g); break;
    case RCOLL_DTYPE_LONG_DOUBLE: snprintf(buf, len, "%.21Lg", u.l); break;
    case RCOLL_DTYPE_FLOAT_COMPLEX: snprintf(buf, len, "(%g,%g)", u.fc[0], u.fc[1]); break;
    case RCOLL_DTYPE_DOUBLE_COMPLEX: snprintf(buf, len, "(%g,%g)", u.dc[0], u.dc[1]); break;
    case RCOLL_DTYPE_LONG_DOUBLE_COMPLEX: snprintf(buf, len, "(%Lg,%Lg)", u.lc[0], u.lc[1]); break;
    case RCOLL_DTYPE_BOOL: snprintf(buf, len, "bool byte %u", u.u8); break;
    case RCOLL_DTYPE_FLOAT_INT: snprintf(buf, len, "(%g,%d)", u.fi.v, u.fi.i); break;
    case RCOLL_DTYPE_DOUBLE_INT: snprintf(buf, len, "(%g,%d)", u.di.v, u.di.i); break;
    case RCOLL_DTYPE_LONG_INT: snprintf(buf, len, "(%ld,%d)", u.li.v, u.li.i); break;
    case RCOLL_DTYPE_2INT: snprintf(buf, len, "(%d,%d)", u.ii.v, u.ii.i); break;
    case RCOLL_DTYPE_SHORT_INT: snprintf(buf, len, "(%d,%d)", u.si.v, u.si.i); break;
    case RCOLL_DTYPE_LONG_DOUBLE_INT: snprintf(buf, len, "(%Lg,%d)", u.ldi.v, u.ldi.i); break;
    default:
        if (d->kind == K_MAT)
            snprintf(buf, len, "[[%g,%g],[%g,%g]]", u.m[0], u.m[1], u.m[2], u.m[3]);
        else
            snprintf(buf, len, "bytes %02x%02x..", u.u8, ((const unsigned char *)p)[1]);
        break;
    }
    return buf;
}

/* ---- helpers shared in spirit with test_matrix ---- */

static void maybe_stall(int rank, unsigned call)
{
    unsigned h = (unsigned)rank * 2654435761u ^ call * 40503u;
    if (h % 7 == 0)
        usleep(h % 200);
    else if (h % 5 == 0)
        sched_yield();
}

static int parse_list(const char *text, int *out, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        out[n++] = atoi(p);
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return n;
}

static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

static void set_node_map(int np, int nodes, char *map, size_t len)
{
    int n = nodes < np ? nodes : np, r = 0;
    size_t used = 0;
    map[0] = '\0';
    for (int node = 0; node < n; node++)
        for (int k = 0; k < np / n + (node < np % n); k++, r++)
            used += (size_t)snprintf(map + used, len - used, "%s%d", r ? "," : "", node);
    setenv("RCOLL_NODE_MAP", map, 1);
}

static bool forced_or_fallback(rcoll_coll_t coll, const char *algo, const char *ran)
{
    if (!strcmp(ran, "trivial"))
        return true;
    for (const rcoll_algo_t *a = rcoll_algo_find(coll, algo); a;
         a = a->not_for || a->reorders ? a->fallback : NULL) /* as rcoll_fallback */
        if (!strcmp(ran, a->name))
            return true;
    return false;
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcasecmp(v, "true"));
}

/* ---- the local test (one process) ---- */

static int local_failures;

static void local_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL local: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    local_failures++;
}

#define LOCAL_N 37

static void local_pair(int opc, const dtype_info_t *d)
{
    size_t es = d->size, n = LOCAL_N;
    unsigned char *in = malloc(n * es), *in0 = malloc(n * es), *io = malloc(n * es + GUARD),
                  *io0 = malloc(n * es), *want = malloc(es);
    if (!in || !in0 || !io || !io0 || !want) {
        local_fail("out of memory");
        goto out;
    }
    unsigned salt = (unsigned)opc * 131u + (unsigned)(d - dtypes);
    memset(io, 0xEE, n * es + GUARD);
    for (size_t i = 0; i < n; i++) {
        gen(d, opc, 2, 0, i, salt, in + i * es);
        gen(d, opc, 2, 1, i, salt, io + i * es);
    }
    memcpy(in0, in, n * es);
    memcpy(io0, io, n * es);
    rcoll_op_t op = op_of(opc);
    bool valid = expect_valid(opc, d);
    if (opc < O_USUM && rcoll_op_valid(op, d->dt) != (int)valid)
        local_fail("rcoll_op_valid(%s, %s) = %d, expected %d", op_names[opc], d->name,
                   rcoll_op_valid(op, d->dt), valid);
    rcoll_status_t st = rcoll_reduce_local(in, io, n, d->dt, op);
    if (!valid) {
        if (st != RCOLL_ERR_INVALID)
            local_fail("reduce_local %s on %s: %s, expected RCOLL_ERR_INVALID", op_names[opc], d->name,
                       rcoll_strerror(st));
        if (memcmp(io, io0, n * es))
            local_fail("reduce_local %s on %s (invalid) wrote its inout buffer", op_names[opc], d->name);
        goto out;
    }
    if (st != RCOLL_OK) {
        local_fail("reduce_local %s on %s: %s", op_names[opc], d->name, rcoll_strerror(st));
        goto out;
    }
    if (user_fn_bad) {
        local_fail("reduce_local %s on %s: the user function saw a wrong dtype or arg", op_names[opc], d->name);
        user_fn_bad = 0;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(want, io0 + i * es, es);
        ref_combine(d, opc, in0 + i * es, want);
        if (!elem_eq(d, io + i * es, want)) {
            char g[128], w[128], a[128], b[128];
            local_fail("reduce_local %s on %s: element %zu: %s op %s gave %s, expected %s", op_names[opc],
                       d->name, i, fmt_elem(d, in0 + i * es, a, sizeof a), fmt_elem(d, io0 + i * es, b, sizeof b),
                       fmt_elem(d, io + i * es, g, sizeof g), fmt_elem(d, want, w, sizeof w));
            break;
        }
    }
    if (memcmp(in, in0, n * es))
        local_fail("reduce_local %s on %s wrote its in buffer", op_names[opc], d->name);
    for (size_t i = n * es; i < n * es + GUARD; i++)
        if (io[i] != 0xEE) {
            local_fail("reduce_local %s on %s wrote past its inout buffer (byte %zu)", op_names[opc],
                       d->name, i);
            break;
        }
    /* count 0: nothing happens */
    memcpy(io, io0, n * es);
    st = rcoll_reduce_local(in, io, 0, d->dt, op);
    if (st != RCOLL_OK || memcmp(io, io0, n * es))
        local_fail("reduce_local %s on %s, count 0: %s%s", op_names[opc], d->name, rcoll_strerror(st),
                   memcmp(io, io0, n * es) ? ", buffer written" : "");
out:
    free(in);
    free(in0);
    free(io);
    free(io0);
    free(want);
}

static int local_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)rank;
    (void)oob;
    (void)arg;
    for (int k = 0; k < NDTYPES; k++) {
        const dtype_info_t *d = &dtypes[k];
        if (rcoll_dtype_size(d->dt) != d->size)
            local_fail("rcoll_dtype_size(%s) = %zu, expected %zu", d->name, rcoll_dtype_size(d->dt), d->size);
        if (d->dt < RCOLL_DTYPE_COUNT) {
            const char *name = rcoll_dtype_name(d->dt);
            if (!name || rcoll_dtype_from_name(name) != d->dt)
                local_fail("dtype %s: name %s does not parse back", d->name, name ? name : "NULL");
        }
        for (int opc = O_SUM; opc <= O_MAXLOC; opc++)
            local_pair(opc, d);
    }
    local_pair(O_USUM, dinfo(RCOLL_DTYPE_INT64));
    local_pair(O_MAT, dinfo(MAT_DTYPE));
    local_pair(O_AFF, dinfo(AFF_DTYPE));
    local_pair(O_BIG, dinfo(BIG_DTYPE));
    if (!rcoll_op_valid(user_sum_op, RCOLL_DTYPE_INT64) || !rcoll_op_valid(user_mat_op, MAT_DTYPE) ||
        !rcoll_op_valid(user_aff_op, AFF_DTYPE))
        local_fail("rcoll_op_valid says a user operation does not apply");
    for (int opc = O_SUM; opc <= O_MAXLOC; opc++) {
        const char *name = rcoll_op_name(op_of(opc));
        if (!name || strcmp(name, op_names[opc]) || rcoll_op_from_name(name) != op_of(opc))
            local_fail("op %s: name %s does not parse back", op_names[opc], name ? name : "NULL");
    }
    /* values that name no type or operation, and bad arguments */
    int a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
    if (rcoll_dtype_size(RCOLL_DTYPE_COUNT) != 0 || rcoll_dtype_size(-1) != 0 || rcoll_dtype_size(RCOLL_DTYPE_BYTES(0)) != 0)
        local_fail("rcoll_dtype_size of a value that names no type is not 0");
    if (rcoll_dtype_name(RCOLL_DTYPE_COUNT) || rcoll_dtype_from_name("no-such-type") != -1)
        local_fail("a dtype name of a value that names no type");
    struct { rcoll_dtype_t dt; rcoll_op_t op; const void *in; void *io; const char *what; } bad[] = {
        {RCOLL_DTYPE_COUNT, RCOLL_OP_SUM, a, b, "dtype RCOLL_DTYPE_COUNT"},
        {-1, RCOLL_OP_SUM, a, b, "dtype -1"},
        {RCOLL_DTYPE_BYTES(0), user_sum_op, a, b, "dtype RCOLL_DTYPE_BYTES(0)"},
        {RCOLL_DTYPE_INT32, (rcoll_op_t)NULL, a, b, "op NULL"},
        {RCOLL_DTYPE_INT32, RCOLL_OP_SUM, NULL, b, "in NULL"},
        {RCOLL_DTYPE_INT32, RCOLL_OP_SUM, a, NULL, "inout NULL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rcoll_status_t st = rcoll_reduce_local(bad[i].in, bad[i].io, 4, bad[i].dt, bad[i].op);
        if (st != RCOLL_ERR_INVALID)
            local_fail("reduce_local with %s, count 4: %s, expected RCOLL_ERR_INVALID", bad[i].what,
                       rcoll_strerror(st));
    }
    rcoll_op_t op = NULL;
    if (rcoll_op_create(NULL, NULL, 1, &op) != RCOLL_ERR_INVALID)
        local_fail("rcoll_op_create with a NULL function is not RCOLL_ERR_INVALID");
    printf("%s local: every operation x type (%d types x %d operations, and user operations)\n",
           local_failures ? "FAIL" : "ok", NDTYPES, O_MAXLOC);
    return local_failures ? 1 : 0;
}

/* ---- the multi-process part ---- */

typedef struct {
    int opc;
    rcoll_dtype_t dt;
} pair_t;

static const pair_t full_pairs[] = {
    {O_SUM, RCOLL_DTYPE_INT32}, {O_PROD, RCOLL_DTYPE_INT32}, {O_MIN, RCOLL_DTYPE_INT32}, {O_MAX, RCOLL_DTYPE_INT32},
    {O_SUM, RCOLL_DTYPE_UINT8}, {O_PROD, RCOLL_DTYPE_UINT8}, {O_MIN, RCOLL_DTYPE_UINT8}, {O_MAX, RCOLL_DTYPE_UINT8},
    {O_SUM, RCOLL_DTYPE_INT64}, {O_PROD, RCOLL_DTYPE_INT64}, {O_MIN, RCOLL_DTYPE_INT64}, {O_MAX, RCOLL_DTYPE_INT64},
    {O_SUM, RCOLL_DTYPE_FLOAT}, {O_PROD, RCOLL_DTYPE_FLOAT}, {O_MIN, RCOLL_DTYPE_FLOAT}, {O_MAX, RCOLL_DTYPE_FLOAT},
    {O_SUM, RCOLL_DTYPE_DOUBLE}, {O_PROD, RCOLL_DTYPE_DOUBLE}, {O_MIN, RCOLL_DTYPE_DOUBLE}, {O_MAX, RCOLL_DTYPE_DOUBLE},
    {O_SUM, RCOLL_DTYPE_DOUBLE_COMPLEX},
    {O_LAND, RCOLL_DTYPE_UINT32}, {O_LOR, RCOLL_DTYPE_UINT32}, {O_LXOR, RCOLL_DTYPE_UINT32},
    {O_BAND, RCOLL_DTYPE_UINT32}, {O_BOR, RCOLL_DTYPE_UINT32}, {O_BXOR, RCOLL_DTYPE_UINT32},
    {O_LAND, RCOLL_DTYPE_BOOL}, {O_LOR, RCOLL_DTYPE_BOOL}, {O_LXOR, RCOLL_DTYPE_BOOL},
    {O_MINLOC, RCOLL_DTYPE_DOUBLE_INT}, {O_MAXLOC, RCOLL_DTYPE_DOUBLE_INT},
    {O_MINLOC, RCOLL_DTYPE_2INT}, {O_MAXLOC, RCOLL_DTYPE_2INT},
    {O_USUM, RCOLL_DTYPE_INT64},
};
static const pair_t reduced_pairs[] = {
    {O_SUM, RCOLL_DTYPE_INT32}, {O_MIN, RCOLL_DTYPE_UINT8}, {O_MAX, RCOLL_DTYPE_INT64},
    {O_PROD, RCOLL_DTYPE_DOUBLE}, {O_SUM, RCOLL_DTYPE_FLOAT}, {O_SUM, RCOLL_DTYPE_DOUBLE_COMPLEX},
    {O_BAND, RCOLL_DTYPE_UINT32}, {O_LXOR, RCOLL_DTYPE_BOOL}, {O_LAND, RCOLL_DTYPE_BOOL},
    {O_MINLOC, RCOLL_DTYPE_DOUBLE_INT}, {O_MAXLOC, RCOLL_DTYPE_2INT}, {O_USUM, RCOLL_DTYPE_INT64},
};
static const pair_t large_pairs[] = {{O_SUM, RCOLL_DTYPE_DOUBLE}, {O_MINLOC, RCOLL_DTYPE_DOUBLE_INT}};
/* non-commutative: 2x2 matrices of doubles, and affine maps on odd-sized elements */
static const pair_t nc_pairs[] = {{O_MAT, MAT_DTYPE}, {O_AFF, AFF_DTYPE}};
/* elements larger than the library's fold part (8 KB): counts 1 and 3 */
static const pair_t big_pair = {O_BIG, BIG_DTYPE};
/* above RCOLL_REDUCE_SCRATCH (8 MB) per rank: every algorithm runs in parts (team sizes 2, 3) */
static const pair_t huge_pair = {O_SUM, RCOLL_DTYPE_UINT8};
#define HUGE_COUNT ((8u << 20) + 4097)
#define NPAIRS(a) ((int)(sizeof a / sizeof *a))

static const size_t small_counts[] = {0, 1, 7, 1001};
#define NSMALL ((int)(sizeof small_counts / sizeof *small_counts))

typedef struct {
    rcoll_coll_t coll;
    const char *algos[MAX_ALGOS];
    int nalgos;
    int quick, calls, reproducible, no_big;
} job_t;

/* One rank's state. */
typedef struct {
    rcoll_team_t *team;
    const job_t *job;
    const char *algo; /* forced for job->coll */
    int rank, size;
    unsigned call;    /* calls so far: the salt of the next one, alike on every rank */
    long calls_checked;
    long ran_forced; /* calls of the forced algorithm that ran it (not its fallback, not trivial) */
    int failures;
    unsigned char *cache, *cache_ok; /* the reference of the current call, by i % PERIOD */
    unsigned char elem[MAX_ELEM], *big; /* scratch of the reference (big: 2 x BIG_ES) */
    /* RCOLL_REPRODUCIBLE: the first result of each bitwise case (hash and length) */
    uint64_t repro_hash[64];
    const char *repro_algo[64];
    int repro_inplace[64];
} rank_t;

typedef struct {
    rcoll_coll_t coll;
    const pair_t *pair;
    size_t n; /* elements: the vector (allreduce, reduce, scan, exscan), the block
               * (reduce_scatter_block), the base of the counts (reduce_scatter) */
    int inplace, root;
    bool forced; /* the call's collective is the one forced: check what ran */
    int mode;    /* 0: blocking, 1: nonblocking (rcoll_i<coll>, wait), 2: persistent (init, start, wait) */
} spec_t;

static void vfail(rank_t *s, const spec_t *sp, const char *fmt, va_list ap)
{
    s->failures++;
    if (s->failures > MAX_PRINTED)
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (sp)
        fprintf(stderr, "FAIL %s%s algo=%s p=%d op=%s dtype=%s count=%zu in-place=%d root=%d call=%u: rank %d: %s\n",
                sp->mode == 1 ? "nonblocking " : sp->mode == 2 ? "persistent " : "", rcoll_coll_name(sp->coll),
                sp->forced ? s->algo : "auto", s->size, op_names[sp->pair->opc],
                dinfo(sp->pair->dt)->name, sp->n, sp->inplace, sp->root, s->call, s->rank, msg);
    else
        fprintf(stderr, "FAIL %s algo=%s p=%d call=%u: rank %d: %s\n", rcoll_coll_name(s->job->coll),
                s->algo ? s->algo : "auto", s->size, s->call, s->rank, msg);
}

static void fail(rank_t *s, const spec_t *sp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(s, sp, fmt, ap);
    va_end(ap);
}

/* reduce_scatter's counts: 0 to n by rank and call, some zero. */
static size_t rs_count(size_t n, int j, unsigned salt)
{
    return n * (size_t)((j + (int)salt) % 3) / 2;
}

/* The reference of element i combined over ranks lo..hi in rank order, cached by i % PERIOD. */
static const unsigned char *expected(rank_t *s, const dtype_info_t *d, int opc, size_t i, int lo, int hi,
                                     unsigned salt)
{
    size_t k = i % PERIOD;
    bool big = d->size > MAX_ELEM; /* not cached (few of them): one at a time in s->big */
    unsigned char *e = big ? s->big : s->cache + k * MAX_ELEM, *v = big ? s->big + d->size : s->elem;
    if (big || !s->cache_ok[k]) {
        gen(d, opc, s->size, lo, i, salt, e);
        for (int r = lo + 1; r <= hi; r++) {
            gen(d, opc, s->size, r, i, salt, v);
            ref_combine(d, opc, e, v); /* v = acc op v: the lower ranks on the left */
            memcpy(e, v, d->size);
        }
        s->cache_ok[k] = !big;
    }
    return e;
}

static bool untouched(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xEE)
            return false;
    return true;
}

static rcoll_status_t call_reduction(rcoll_team_t *team, rcoll_coll_t coll, const void *sbuf, void *rbuf,
                                     size_t n, const size_t *counts, rcoll_dtype_t dt, rcoll_op_t op, int root)
{
    switch (coll) {
    case RCOLL_COLL_ALLREDUCE: return rcoll_allreduce(team, sbuf, rbuf, n, dt, op);
    case RCOLL_COLL_REDUCE: return rcoll_reduce(team, sbuf, rbuf, n, dt, op, root);
    case RCOLL_COLL_REDUCE_SCATTER_BLOCK: return rcoll_reduce_scatter_block(team, sbuf, rbuf, n, dt, op);
    case RCOLL_COLL_REDUCE_SCATTER: return rcoll_reduce_scatter(team, sbuf, rbuf, counts, dt, op);
    case RCOLL_COLL_SCAN: return rcoll_scan(team, sbuf, rbuf, n, dt, op);
    case RCOLL_COLL_EXSCAN: return rcoll_exscan(team, sbuf, rbuf, n, dt, op);
    default: return RCOLL_ERR_INVALID;
    }
}

/* The nonblocking (mode 1) or persistent (mode 2) form, completed by rcoll_wait. */
static rcoll_status_t call_request(rcoll_team_t *team, int mode, rcoll_coll_t coll, const void *sbuf, void *rbuf,
                                   size_t n, const size_t *counts, rcoll_dtype_t dt, rcoll_op_t op, int root)
{
    rcoll_request_t *req = NULL;
    rcoll_status_t st;
    bool nb = mode == 1;
    switch (coll) {
    case RCOLL_COLL_ALLREDUCE:
        st = nb ? rcoll_iallreduce(team, sbuf, rbuf, n, dt, op, &req) : rcoll_allreduce_init(team, sbuf, rbuf, n, dt, op, &req);
        break;
    case RCOLL_COLL_REDUCE:
        st = nb ? rcoll_ireduce(team, sbuf, rbuf, n, dt, op, root, &req)
                : rcoll_reduce_init(team, sbuf, rbuf, n, dt, op, root, &req);
        break;
    case RCOLL_COLL_REDUCE_SCATTER_BLOCK:
        st = nb ? rcoll_ireduce_scatter_block(team, sbuf, rbuf, n, dt, op, &req)
                : rcoll_reduce_scatter_block_init(team, sbuf, rbuf, n, dt, op, &req);
        break;
    case RCOLL_COLL_REDUCE_SCATTER:
        st = nb ? rcoll_ireduce_scatter(team, sbuf, rbuf, counts, dt, op, &req)
                : rcoll_reduce_scatter_init(team, sbuf, rbuf, counts, dt, op, &req);
        break;
    case RCOLL_COLL_SCAN:
        st = nb ? rcoll_iscan(team, sbuf, rbuf, n, dt, op, &req) : rcoll_scan_init(team, sbuf, rbuf, n, dt, op, &req);
        break;
    default:
        st = nb ? rcoll_iexscan(team, sbuf, rbuf, n, dt, op, &req) : rcoll_exscan_init(team, sbuf, rbuf, n, dt, op, &req);
        break;
    }
    if (st == RCOLL_OK && !nb)
        st = rcoll_start(req);
    if (st == RCOLL_OK)
        st = rcoll_wait(req);
    if (req)
        rcoll_request_free(req);
    return st;
}

/* What the team says it ran: the forced algorithm, its fallback, or "trivial". */
static void check_ran(rank_t *s, const spec_t *sp)
{
    const char *ran = rcoll_team_last_algorithm(s->team);
    if (!forced_or_fallback(sp->coll, s->algo, ran))
        fail(s, sp, "the team says it ran %s", ran);
    s->ran_forced += !strcmp(ran, s->algo);
}

/* One call of a reduction with deterministic inputs, every byte of its outcome checked. */
static void run_call(rank_t *s, const spec_t *sp)
{
    const dtype_info_t *d = dinfo(sp->pair->dt);
    int opc = sp->pair->opc, p = s->size, me = s->rank;
    size_t es = d->size, n = sp->n, counts[MAX_P], total = n, res_n = n, res_off = 0;
    int lo = 0, hi = p - 1;
    bool rooted = sp->coll == RCOLL_COLL_REDUCE, has_result = true;
    unsigned salt = s->call;
    switch (sp->coll) {
    case RCOLL_COLL_REDUCE: has_result = me == sp->root; break;
    case RCOLL_COLL_SCAN: hi = me; break;
    case RCOLL_COLL_EXSCAN: hi = me - 1; has_result = me > 0; break;
    case RCOLL_COLL_REDUCE_SCATTER_BLOCK: total = (size_t)p * n; res_off = (size_t)me * n; break;
    case RCOLL_COLL_REDUCE_SCATTER:
        total = 0;
        for (int j = 0; j < p; j++) {
            counts[j] = rs_count(n, j, salt);
            if (j == me)
                res_off = total;
            total += counts[j];
        }
        res_n = counts[me];
        break;
    default: break;
    }
    bool inplace = sp->inplace && (!rooted || me == sp->root);
    /* The receive buffer: in place it holds the input; exscan's and a non-root's are whole too. */
    size_t rlen = (inplace || sp->coll == RCOLL_COLL_EXSCAN || (rooted && me != sp->root) ? total : res_n) * es;
    unsigned char *orig = malloc(total * es + 1), *sbuf = inplace ? NULL : malloc(total * es + 1),
                  *rbase = malloc(rlen + 2 * GUARD), *rbuf = rbase + GUARD;
    if (!orig || (!inplace && !sbuf) || !rbase) {
        fail(s, sp, "out of memory");
        free(orig), free(sbuf), free(rbase);
        return;
    }
    for (size_t i = 0; i < total && i < PERIOD; i++)
        gen(d, opc, p, me, i, salt, orig + i * es);
    for (size_t i = PERIOD; i < total; i += PERIOD) /* inputs repeat with the period */
        memcpy(orig + i * es, orig, (total - i < PERIOD ? total - i : PERIOD) * es);
    memset(rbase, 0xEE, rlen + 2 * GUARD);
    if (inplace)
        memcpy(rbuf, orig, total * es);
    else
        memcpy(sbuf, orig, total * es);
    /* NULL where a buffer does not matter (every other call): a non-root's recvbuf (reduce),
     * both buffers of an empty call, the recvbuf of a rank whose block is empty (reduce_scatter) */
    bool odd = salt & 1, rnull = odd && ((rooted && me != sp->root) || (!inplace && !total) ||
                                         (sp->coll == RCOLL_COLL_REDUCE_SCATTER && !res_n && !inplace));
    const void *sarg = inplace ? RCOLL_IN_PLACE : odd && !total ? NULL : sbuf;
    maybe_stall(me, salt);
    user_fn_bad = 0;
    rcoll_status_t st = sp->mode ? call_request(s->team, sp->mode, sp->coll, sarg, rnull ? NULL : rbuf, n, counts,
                                                d->dt, op_of(opc), sp->root)
                                 : call_reduction(s->team, sp->coll, sarg, rnull ? NULL : rbuf, n, counts, d->dt,
                                                  op_of(opc), sp->root);
    s->calls_checked++;
    if (st != RCOLL_OK) {
        fail(s, sp, "%s: %s", rcoll_strerror(st), rcoll_team_last_error(s->team));
        goto out;
    }
    if (sp->forced)
        check_ran(s, sp);
    if (user_fn_bad)
        fail(s, sp, "the user function was called with a wrong dtype or arg");
    if (!untouched(rbase, GUARD) || !untouched(rbuf + rlen, GUARD))
        fail(s, sp, "wrote outside its receive buffer (%zu bytes): guard %s", rlen,
             untouched(rbase, GUARD) ? "after" : "before");
    if (!inplace && memcmp(sbuf, orig, total * es))
        fail(s, sp, "changed its send buffer");
    if (has_result) {
        memset(s->cache_ok, 0, PERIOD);
        size_t k0 = 0; /* checked so far: long vectors of integers compare by bytes, a period at a time */
        if (res_n > PERIOD && (d->kind == K_SINT || d->kind == K_UINT || d->kind == K_BOOL || d->kind == K_AFF)) {
            unsigned char *tile = malloc((size_t)PERIOD * es);
            for (size_t k = 0; tile && k < PERIOD; k++)
                memcpy(tile + k * es, expected(s, d, opc, res_off + k, lo, hi, salt), es);
            while (tile && k0 < res_n) {
                size_t m = res_n - k0 < PERIOD ? res_n - k0 : PERIOD;
                if (memcmp(rbuf + k0 * es, tile, m * es))
                    break;
                k0 += m;
            }
            free(tile);
        }
        for (size_t k = k0; k < res_n; k++) {
            const unsigned char *want = expected(s, d, opc, res_off + k, lo, hi, salt);
            if (!elem_eq(d, rbuf + k * es, want)) {
                char g[128], w[128];
                size_t bad = 0, byte = 0;
                fmt_elem(d, rbuf + k * es, g, sizeof g);
                fmt_elem(d, want, w, sizeof w);
                while (byte < es && rbuf[k * es + byte] == want[byte])
                    byte++;
                for (size_t j = k; j < res_n; j++) /* (overwrites `want` for big elements) */
                    bad += !elem_eq(d, rbuf + j * es, expected(s, d, opc, res_off + j, lo, hi, salt));
                fail(s, sp, "element %zu of %zu is %s, expected %s (byte %zu of it differs first; %zu wrong "
                     "elements)", k, res_n, g, w, byte, bad);
                break;
            }
        }
    } else if (sp->coll == RCOLL_COLL_EXSCAN) {
        if (inplace ? memcmp(rbuf, orig, total * es) != 0 : !untouched(rbuf, rlen))
            fail(s, sp, "rank 0's receive buffer was written");
    } else if (!rnull && !untouched(rbuf, rlen)) {
        fail(s, sp, "a non-root's receive buffer was written");
    }
    if (rnull && has_result && res_n)
        fail(s, sp, "test error: NULL receive buffer where a result is due");
out:
    s->call++; /* (after the checks: messages name the call by its salt) */
    free(orig);
    free(sbuf);
    free(rbase);
}

/* The count of a call whose send vector holds about `total` elements: the vector, the block
 * (reduce_scatter_block), the base of the counts (reduce_scatter, whose blocks are 0, base / 2
 * and base by rank). */
static size_t vector_count(rcoll_coll_t coll, size_t total, int p)
{
    if (coll == RCOLL_COLL_REDUCE_SCATTER_BLOCK)
        return total / (size_t)p + 1;
    if (coll == RCOLL_COLL_REDUCE_SCATTER)
        return 2 * total / (size_t)p + 1;
    return total;
}

static int pair_count(const rank_t *s, const pair_t **pairs)
{
    if (s->size <= 8 && !s->job->quick) {
        *pairs = full_pairs;
        return NPAIRS(full_pairs);
    }
    *pairs = reduced_pairs;
    return NPAIRS(reduced_pairs);
}

/* The matrix for the forced algorithm: pairs x counts x in place x roots, then the large
 * counts and the non-commutative operation. */
/* Whether every node of the team holds the same number of ranks (every rank's local size
 * gathered: collective). */
static bool even_nodes(rcoll_team_t *team)
{
    int mine = rcoll_team_local_size(team), size = rcoll_team_size(team);
    int *all = malloc((size_t)size * sizeof *all);
    bool even = all && rcoll_allgather(team, &mine, all, sizeof mine) == RCOLL_OK;
    for (int r = 0; even && r < size; r++)
        even = all[r] == mine;
    free(all);
    return even;
}

static void run_matrix(rank_t *s)
{
    rcoll_coll_t coll = s->job->coll;
    int p = s->size;
    bool rooted = coll == RCOLL_COLL_REDUCE;
    const pair_t *pairs;
    int npairs = pair_count(s, &pairs);
    for (int c = 0; c < NSMALL; c++)
        for (int inplace = 0; inplace < 2; inplace++)
            for (int k = 0; k < npairs; k++) {
                bool all_roots = rooted && k % 4 == 0;
                for (int root = 0; root < (all_roots ? p : 1); root++) {
                    spec_t sp = {coll, &pairs[k], small_counts[c], inplace,
                                 all_roots ? root : (k + c + inplace) % p, true, 0};
                    run_call(s, &sp);
                }
            }
    /* above 1 MB: the vector (the block, reduce_scatter(_block)) */
    for (int k = 0; k < (s->job->quick ? 1 : NPAIRS(large_pairs)); k++)
        for (int inplace = 0; inplace < 2; inplace++) {
            spec_t sp = {coll, &large_pairs[k], vector_count(coll, LARGE_COUNT, p), inplace,
                         (inplace ? p - 1 : 0) % p, true, 0};
            run_call(s, &sp);
        }
    /* above the reductions' scratch: in parts */
    for (int inplace = 0; inplace < (p <= 3 && !s->job->quick ? 2 : 0); inplace++) {
        spec_t sp = {coll, &huge_pair, vector_count(coll, HUGE_COUNT, p), inplace, inplace % p, true, 0};
        run_call(s, &sp);
    }
    /* non-commutative: rank order */
    for (int k = 0; k < NPAIRS(nc_pairs); k++)
        for (int c = 0; c < NSMALL; c++)
            for (int inplace = 0; inplace < 2; inplace++)
                for (int root = 0; root < (rooted ? p : 1); root++) {
                    spec_t sp = {coll, &nc_pairs[k], small_counts[c], inplace, root, true, 0};
                    run_call(s, &sp);
                }
    for (int n = 1; n <= 3 && !s->job->no_big; n += 2)
        for (int inplace = 0; inplace < 2; inplace++)
            for (int root = 0; root < (rooted ? p : 1); root++) {
                spec_t sp = {coll, &big_pair, (size_t)n, inplace, root, true, 0};
                run_call(s, &sp);
            }
}

/* Random doubles (floats) of many magnitudes: sums that depend on the order. */
static void gen_random(rcoll_dtype_t dt, int rank, size_t n, unsigned salt, void *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t h = mix((uint32_t)i * 0x9E3779B1U ^ mix((uint32_t)rank * 0x85EBCA77U ^ salt));
        uint32_t h2 = mix(h ^ 0x27d4eb2dU);
        double m = ((double)h + ldexp((double)h2, -32)) / 4294967296.0 - 0.5;
        double v = ldexp(m, (int)(h2 % 48) - 24);
        if (dt == RCOLL_DTYPE_FLOAT) {
            float f = (float)v;
            memcpy((char *)out + i * 4, &f, 4);
        } else {
            memcpy((char *)out + i * 8, &v, 8);
        }
    }
}

/* allreduce of random values: bitwise alike on every rank; with RCOLL_REPRODUCIBLE=1 alike
 * across algorithms (and in place or not). */
static void run_bitwise(rank_t *s)
{
    static const rcoll_dtype_t dts[] = {RCOLL_DTYPE_DOUBLE, RCOLL_DTYPE_FLOAT};
    static const size_t counts[] = {1, 7, 1001, LARGE_COUNT};
    static const pair_t sum_pairs[] = {{O_SUM, RCOLL_DTYPE_DOUBLE}, {O_SUM, RCOLL_DTYPE_FLOAT}};
    int p = s->size;
    for (int t = 0; t < 2; t++)
        for (int c = s->job->quick ? 1 : 0; c < 4; c++)
            for (int inplace = 0; inplace < 2; inplace++) {
                size_t n = counts[c], es = rcoll_dtype_size(dts[t]), bytes = n * es;
                spec_t sp = {RCOLL_COLL_ALLREDUCE, &sum_pairs[t], n, inplace, 0, true, 0};
                unsigned salt = 7777u + (unsigned)(t * 8 + c); /* alike across algorithms */
                unsigned char *in = malloc(bytes), *out = malloc(bytes + GUARD);
                bool full = (size_t)p * bytes <= (1u << 20);
                size_t gbytes = full ? bytes : sizeof(uint64_t);
                unsigned char *all = malloc((size_t)p * gbytes);
                if (!in || !out || !all) {
                    fail(s, &sp, "out of memory");
                    free(in), free(out), free(all);
                    return;
                }
                gen_random(dts[t], s->rank, n, salt, inplace ? out : in);
                memset(out + bytes, 0xEE, GUARD);
                maybe_stall(s->rank, s->call);
                rcoll_status_t st = rcoll_allreduce(s->team, inplace ? RCOLL_IN_PLACE : in, out, n, dts[t], RCOLL_OP_SUM);
                s->call++;
                s->calls_checked++;
                if (st != RCOLL_OK) {
                    fail(s, &sp, "%s: %s", rcoll_strerror(st), rcoll_team_last_error(s->team));
                    free(in), free(out), free(all);
                    continue;
                }
                check_ran(s, &sp);
                if (!untouched(out + bytes, GUARD))
                    fail(s, &sp, "wrote past its receive buffer");
                uint64_t h = fnv(out, bytes);
                st = rcoll_allgather(s->team, full ? (const void *)out : &h, all, gbytes);
                s->call++;
                if (st != RCOLL_OK) {
                    fail(s, &sp, "allgather of the results: %s", rcoll_strerror(st));
                } else {
                    for (int r = 0; r < p; r++)
                        if (memcmp(all + (size_t)r * gbytes, full ? (const void *)out : &h, gbytes)) {
                            size_t at = 0;
                            while (full && at + es <= bytes && !memcmp(all + (size_t)r * gbytes + at, out + at, es))
                                at += es;
                            fail(s, &sp, "random values: rank %d's result differs from this rank's%s (element %zu)", r,
                                 full ? "" : " (hash)", full ? at / es : (size_t)0);
                            break;
                        }
                }
                if (s->job->reproducible) {
                    int key = t * 8 + c;
                    if (!s->repro_algo[key]) {
                        s->repro_algo[key] = s->algo;
                        s->repro_hash[key] = h;
                        s->repro_inplace[key] = inplace;
                    } else if (s->repro_hash[key] != h) {
                        fail(s, &sp, "RCOLL_REPRODUCIBLE=1: random values: the result differs from %s's (in-place=%d)",
                             s->repro_algo[key], s->repro_inplace[key]);
                    }
                }
                free(in);
                free(out);
                free(all);
            }
}

static void fill_bytes(unsigned char *p, size_t n, int src, unsigned call)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7 + (size_t)src * 131 + call * 31 + 1);
}

static bool bytes_ok(const unsigned char *p, size_t n, int src, unsigned call)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 7 + (size_t)src * 131 + call * 31 + 1))
            return false;
    return true;
}

/* Back to back without a barrier: the reduction under test (forced), the other reductions (as
 * the team chooses), bcast, allgather, alltoall; roots rotating, counts changing. */
static void run_racing(rank_t *s)
{
    static const rcoll_coll_t reds[] = {RCOLL_COLL_ALLREDUCE, RCOLL_COLL_REDUCE, RCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                        RCOLL_COLL_REDUCE_SCATTER, RCOLL_COLL_SCAN, RCOLL_COLL_EXSCAN};
    static const size_t ns[] = {1, 7, 64, 1001};
    int p = s->size, me = s->rank;
    unsigned char buf[MAX_P * 64];
    for (int k = 0; k < s->job->calls; k++) {
        const pair_t *pairs;
        int npairs = pair_count(s, &pairs);
        const pair_t *pair = k % 7 == 6 ? &nc_pairs[(k / 7) % 2] : &pairs[(k * 5) % npairs];
        spec_t sp = {s->job->coll, pair, ns[(k / 5) % 4], (k / 2) & 1, (k * 3) % p, true, 0};
        switch (k % 5) {
        case 0: case 2:
            run_call(s, &sp);
            break;
        case 3:
            sp.coll = reds[(k / 5) % 6];
            sp.forced = sp.coll == s->job->coll;
            sp.root = (k * 7) % p;
            run_call(s, &sp);
            break;
        case 1: {
            int root = (k + 1) % p;
            memset(buf, 0xEE, sizeof buf);
            if (me == root)
                fill_bytes(buf, 1001, root, s->call);
            maybe_stall(me, s->call);
            rcoll_status_t st = rcoll_bcast(s->team, buf, 1001, root);
            if (st != RCOLL_OK || !bytes_ok(buf, 1001, root, s->call) || !untouched(buf + 1001, 64))
                fail(s, NULL, "racing: bcast from root %d: %s", root, st ? rcoll_strerror(st) : "wrong data");
            s->call++;
            break;
        }
        default: {
            unsigned char mine[64 * MAX_P];
            bool a2a = (k / 5) % 2;
            for (int j = 0; j < (a2a ? p : 1); j++)
                fill_bytes(mine + j * 64, 64, me * 100 + j, s->call);
            memset(buf, 0xEE, sizeof buf);
            maybe_stall(me, s->call);
            rcoll_status_t st = a2a ? rcoll_alltoall(s->team, mine, buf, 64) : rcoll_allgather(s->team, mine, buf, 64);
            bool ok = st == RCOLL_OK && untouched(buf + p * 64, sizeof buf - (size_t)p * 64);
            for (int r = 0; r < p && ok; r++)
                ok = bytes_ok(buf + r * 64, 64, a2a ? r * 100 + me : r * 100, s->call);
            if (!ok)
                fail(s, NULL, "racing: %s: %s", a2a ? "alltoall" : "allgather", st ? rcoll_strerror(st) : "wrong data");
            s->call++;
            break;
        }
        }
    }
}

/* The nonblocking and persistent forms (as the team runs them: no algorithm forced), one
 * request at a time: the reduced pairs (a third of them above 8 ranks and with --quick), the
 * non-commutative ones, counts 0, 1, 7, 1001 (persistent: 1, 1001) and the large one, in
 * place or not, roots rotating; then several requests outstanding at once, completed in
 * reverse order. */
static void run_nonblocking(rank_t *s)
{
    rcoll_coll_t coll = s->job->coll;
    int p = s->size;
    int step = p > 8 || s->job->quick ? 3 : 1; /* a third of the pairs at 9 and 16 ranks */
    for (int mode = 1; mode <= 2; mode++) {
        for (int c = mode == 2 ? 1 : 0; c < NSMALL; c += mode) /* persistent: counts 1 and 1001 */
            for (int inplace = 0; inplace < 2; inplace++)
                for (int k = c % step; k < NPAIRS(reduced_pairs) + NPAIRS(nc_pairs); k += step) {
                    const pair_t *pair = k < NPAIRS(reduced_pairs) ? &reduced_pairs[k] : &nc_pairs[k - NPAIRS(reduced_pairs)];
                    spec_t sp = {coll, pair, small_counts[c], inplace, (k + c + mode) % p, false, mode};
                    run_call(s, &sp);
                }
        for (int inplace = 0; inplace < 2; inplace++) {
            spec_t sp = {coll, &large_pairs[0], vector_count(coll, LARGE_COUNT, p), inplace, (inplace + mode) % p,
                         false, mode};
            run_call(s, &sp);
            spec_t big = {coll, &big_pair, 3, inplace, (inplace + mode + 1) % p, false, mode};
            if (!s->job->no_big)
                run_call(s, &big);
        }
    }
    /* outstanding together: three allreduces/this reduction of int32 sums, waited in reverse */
    enum { OUT = 3 };
    static const pair_t sum_i32 = {O_SUM, RCOLL_DTYPE_INT32};
    const dtype_info_t *d = dinfo(RCOLL_DTYPE_INT32);
    for (int round = 0; round < 4; round++) {
        int32_t in[OUT][64 * MAX_P], out[OUT][64 * MAX_P + 16];
        size_t counts[MAX_P], n = 7 + (size_t)round * 13, total = n, res_n = n, res_off = 0;
        if (coll == RCOLL_COLL_REDUCE_SCATTER_BLOCK) {
            total = n * (size_t)p;
            res_off = n * (size_t)s->rank;
        } else if (coll == RCOLL_COLL_REDUCE_SCATTER) {
            for (int j = 0; j < p; j++)
                counts[j] = n;
            total = n * (size_t)p;
            res_off = n * (size_t)s->rank;
        }
        rcoll_request_t *req[OUT] = {NULL};
        unsigned salt[OUT];
        int root = round % p, lo = 0, hi = coll == RCOLL_COLL_SCAN ? s->rank : coll == RCOLL_COLL_EXSCAN ? s->rank - 1 : p - 1;
        bool has_result = (coll != RCOLL_COLL_REDUCE || s->rank == root) && hi >= 0;
        spec_t sp = {coll, &sum_i32, n, 0, root, false, 1};
        for (int k = 0; k < OUT; k++) {
            salt[k] = s->call++;
            for (size_t i = 0; i < total; i++)
                gen(d, O_SUM, p, s->rank, i, salt[k], &in[k][i]);
            memset(out[k], 0xEE, sizeof out[k]);
            rcoll_status_t st;
            switch (coll) {
            case RCOLL_COLL_ALLREDUCE: st = rcoll_iallreduce(s->team, in[k], out[k], n, d->dt, RCOLL_OP_SUM, &req[k]); break;
            case RCOLL_COLL_REDUCE: st = rcoll_ireduce(s->team, in[k], out[k], n, d->dt, RCOLL_OP_SUM, root, &req[k]); break;
            case RCOLL_COLL_REDUCE_SCATTER_BLOCK: st = rcoll_ireduce_scatter_block(s->team, in[k], out[k], n, d->dt, RCOLL_OP_SUM, &req[k]); break;
            case RCOLL_COLL_REDUCE_SCATTER: st = rcoll_ireduce_scatter(s->team, in[k], out[k], counts, d->dt, RCOLL_OP_SUM, &req[k]); break;
            case RCOLL_COLL_SCAN: st = rcoll_iscan(s->team, in[k], out[k], n, d->dt, RCOLL_OP_SUM, &req[k]); break;
            default: st = rcoll_iexscan(s->team, in[k], out[k], n, d->dt, RCOLL_OP_SUM, &req[k]); break;
            }
            if (st != RCOLL_OK)
                fail(s, &sp, "outstanding request %d: %s: %s", k, rcoll_strerror(st), rcoll_team_last_error(s->team));
        }
        for (int k = OUT - 1; k >= 0; k--) {
            if (!req[k])
                continue;
            rcoll_status_t st = rcoll_wait(req[k]);
            rcoll_request_free(req[k]);
            if (st != RCOLL_OK) {
                fail(s, &sp, "outstanding request %d: wait: %s", k, rcoll_strerror(st));
                continue;
            }
            s->calls_checked++;
            memset(s->cache_ok, 0, PERIOD);
            for (size_t i = 0; has_result && i < res_n; i++)
                if (memcmp(&out[k][i], expected(s, d, O_SUM, res_off + i, lo, hi, salt[k]), 4)) {
                    fail(s, &sp, "outstanding request %d of %d: element %zu wrong", k, OUT, i);
                    break;
                }
            if (!untouched((unsigned char *)&out[k][has_result ? res_n : 0], 16 * 4))
                fail(s, &sp, "outstanding request %d of %d: wrote past its result", k, OUT);
        }
    }
}

static void expect_invalid(rank_t *s, const char *what, rcoll_status_t st)
{
    if (st != RCOLL_ERR_INVALID)
        fail(s, NULL, "errors: %s: %s, expected RCOLL_ERR_INVALID", what, rcoll_strerror(st));
    else if (!rcoll_team_last_error(s->team)[0])
        fail(s, NULL, "errors: %s: no message in rcoll_team_last_error", what);
}

/* Bad calls, alike on every rank: each returns RCOLL_ERR_INVALID at once; then a good call. */
static void run_errors(rank_t *s)
{
    int p = s->size;
    double sb[8 * MAX_P] = {0}, rb[8 * MAX_P];
    size_t counts[MAX_P];
    for (int j = 0; j < p; j++)
        counts[j] = 1;
    rcoll_team_t *t = s->team;
#define EXPECT_INVALID(what, call) expect_invalid(s, what, (call))
    EXPECT_INVALID("reduce with root = size", rcoll_reduce(t, sb, rb, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM, p));
    EXPECT_INVALID("reduce with root = -1", rcoll_reduce(t, sb, rb, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM, -1));
    EXPECT_INVALID("allreduce with sendbuf NULL", rcoll_allreduce(t, NULL, rb, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM));
    EXPECT_INVALID("allreduce with recvbuf NULL", rcoll_allreduce(t, sb, NULL, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM));
    EXPECT_INVALID("allreduce in place with recvbuf NULL",
                   rcoll_allreduce(t, RCOLL_IN_PLACE, NULL, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM));
    EXPECT_INVALID("reduce with sendbuf NULL", rcoll_reduce(t, NULL, rb, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM, 0));
    EXPECT_INVALID("reduce_scatter_block with sendbuf NULL",
                   rcoll_reduce_scatter_block(t, NULL, rb, 2, RCOLL_DTYPE_INT32, RCOLL_OP_SUM));
    EXPECT_INVALID("reduce_scatter_block with recvbuf NULL",
                   rcoll_reduce_scatter_block(t, sb, NULL, 2, RCOLL_DTYPE_INT32, RCOLL_OP_SUM));
    EXPECT_INVALID("reduce_scatter with sendbuf NULL",
                   rcoll_reduce_scatter(t, NULL, rb, counts, RCOLL_DTYPE_INT32, RCOLL_OP_SUM));
    EXPECT_INVALID("reduce_scatter with recvbuf NULL",
                   rcoll_reduce_scatter(t, sb, NULL, counts, RCOLL_DTYPE_INT32, RCOLL_OP_SUM));
    EXPECT_INVALID("reduce_scatter with counts NULL",
                   rcoll_reduce_scatter(t, sb, rb, NULL, RCOLL_DTYPE_INT32, RCOLL_OP_SUM));
    EXPECT_INVALID("scan with sendbuf NULL", rcoll_scan(t, NULL, rb, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM));
    EXPECT_INVALID("scan with recvbuf NULL", rcoll_scan(t, sb, NULL, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM));
    EXPECT_INVALID("exscan with sendbuf NULL", rcoll_exscan(t, NULL, rb, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM));
    EXPECT_INVALID("allreduce band on double", rcoll_allreduce(t, sb, rb, 8, RCOLL_DTYPE_DOUBLE, RCOLL_OP_BAND));
    EXPECT_INVALID("allreduce min on double complex",
                   rcoll_allreduce(t, sb, rb, 4, RCOLL_DTYPE_DOUBLE_COMPLEX, RCOLL_OP_MIN));
    EXPECT_INVALID("reduce minloc on int32", rcoll_reduce(t, sb, rb, 8, RCOLL_DTYPE_INT32, RCOLL_OP_MINLOC, 0));
    EXPECT_INVALID("reduce_scatter_block lor on float",
                   rcoll_reduce_scatter_block(t, sb, rb, 2, RCOLL_DTYPE_FLOAT, RCOLL_OP_LOR));
    EXPECT_INVALID("reduce_scatter sum on 2int", rcoll_reduce_scatter(t, sb, rb, counts, RCOLL_DTYPE_2INT, RCOLL_OP_SUM));
    EXPECT_INVALID("scan sum on bytes(8)", rcoll_scan(t, sb, rb, 8, RCOLL_DTYPE_BYTES(8), RCOLL_OP_SUM));
    EXPECT_INVALID("exscan bxor on float", rcoll_exscan(t, sb, rb, 8, RCOLL_DTYPE_FLOAT, RCOLL_OP_BXOR));
    EXPECT_INVALID("allreduce on dtype RCOLL_DTYPE_COUNT",
                   rcoll_allreduce(t, sb, rb, 8, RCOLL_DTYPE_COUNT, RCOLL_OP_SUM));
    EXPECT_INVALID("allreduce with op NULL", rcoll_allreduce(t, sb, rb, 8, RCOLL_DTYPE_DOUBLE, (rcoll_op_t)NULL));
    EXPECT_INVALID("allreduce of SIZE_MAX / 4 doubles (bytes overflow)",
                   rcoll_allreduce(t, sb, rb, SIZE_MAX / 4, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM));
    EXPECT_INVALID("reduce_scatter_block of SIZE_MAX / 2 int32 per rank (bytes overflow)",
                   rcoll_reduce_scatter_block(t, sb, rb, SIZE_MAX / 2, RCOLL_DTYPE_INT32, RCOLL_OP_SUM));
    size_t huge_counts[MAX_P];
    for (int j = 0; j < p; j++)
        huge_counts[j] = SIZE_MAX / 2;
    EXPECT_INVALID("reduce_scatter with counts of SIZE_MAX / 2 int32 (bytes overflow)",
                   rcoll_reduce_scatter(t, sb, rb, huge_counts, RCOLL_DTYPE_INT32, RCOLL_OP_SUM));
#undef EXPECT_INVALID
    if (rcoll_team_force_algorithm(t, s->job->coll, "no_such_algorithm") != RCOLL_ERR_INVALID)
        fail(s, NULL, "errors: forcing an unknown algorithm is not RCOLL_ERR_INVALID");
    /* count 0: the buffers do not matter */
    rcoll_status_t st = rcoll_allreduce(t, NULL, NULL, 0, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM);
    if (st != RCOLL_OK)
        fail(s, NULL, "errors: allreduce of count 0 with NULL buffers: %s", rcoll_strerror(st));
    /* the team still works */
    static const pair_t sum_i32 = {O_SUM, RCOLL_DTYPE_INT32};
    spec_t ok1 = {RCOLL_COLL_ALLREDUCE, &sum_i32, 7, 0, 0, false, 0};
    spec_t ok2 = {RCOLL_COLL_REDUCE, &sum_i32, 7, 0, p - 1, false, 0};
    run_call(s, &ok1);
    run_call(s, &ok2);
}

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const job_t *job = arg;
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 2;
    rcoll_status_t st = rcoll_team_create(ctx, oob, &team);
    if (st != RCOLL_OK) {
        fprintf(stderr, "FAIL team creation on rank %d: %s\n", rank, rcoll_strerror(st));
        return 3;
    }
    rank_t *s = calloc(1, sizeof *s);
    s->team = team;
    s->job = job;
    s->rank = rank;
    s->size = oob->size;
    s->cache = malloc((size_t)PERIOD * MAX_ELEM);
    s->cache_ok = malloc(PERIOD);
    s->big = malloc(2 * BIG_ES);
    for (int i = 0; i < job->nalgos; i++) {
        s->algo = job->algos[i];
        if (rcoll_team_force_algorithm(team, job->coll, s->algo) != RCOLL_OK) {
            fail(s, NULL, "forcing: %s", rcoll_team_last_error(team));
            break;
        }
        s->ran_forced = 0;
        run_matrix(s);
        /* (an algorithm folding in another order gives way under RCOLL_REPRODUCIBLE=1, the
         * node-aware ones on nodes of different sizes, by design) */
        const rcoll_algo_t *al = rcoll_algo_find(job->coll, s->algo);
        if (s->size > 1 && !s->ran_forced &&
            !(al && ((al->reorders && job->reproducible) || (al->composed && !even_nodes(team)))))
            fail(s, NULL, "forced, the algorithm never ran (the team named only fallbacks)");
        if (job->coll == RCOLL_COLL_ALLREDUCE)
            run_bitwise(s);
        run_racing(s);
    }
    s->algo = NULL;
    rcoll_team_force_algorithm(team, job->coll, NULL);
    run_nonblocking(s);
    run_errors(s);
    int rc = s->failures ? 1 : 0;
    if (s->failures > MAX_PRINTED)
        fprintf(stderr, "FAIL rank %d: %d failures in all (%d printed)\n", rank, s->failures, MAX_PRINTED);
    if (rank == 0 && getenv("VERBOSE"))
        fprintf(stderr, "rank 0: %ld calls checked on %d node(s)\n", s->calls_checked, rcoll_team_node_count(team));
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return rc;
}

/* Whether a team of np ranks spans nodes with several ranks on one (as test_matrix). */
static int composed_applies(int np, int nodes)
{
    if (nodes)
        return nodes > 1 && nodes < np;
    const char *map = getenv("RCOLL_NODE_MAP");
    int ids[64], n = 0;
    for (const char *p = map; p && *p && n < 64; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        ids[n++] = atoi(p);
    int distinct = 0, repeated = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= ids[j] == ids[i];
        distinct += !seen;
        repeated |= seen;
    }
    return n == np && distinct > 1 && repeated;
}

int main(int argc, char **argv)
{
    int nps[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16}, nnp = 10, quick = 0, nodes = 0, calls = 0, no_big = 0;
    const char *only_coll = NULL, *only_algo = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--coll") && i + 1 < argc) only_coll = argv[++i];
        else if (!strcmp(argv[i], "--algo") && i + 1 < argc) only_algo = argv[++i];
        else if (!strcmp(argv[i], "--np") && i + 1 < argc) nnp = parse_list(argv[++i], nps, 32);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) nodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-big")) no_big = 1;
        else { fprintf(stderr, "usage: %s [--coll C[,C..]|local] [--algo A] [--np 1,2,..] [--quick] [--nodes N] [--calls N] [--no-big]\n", argv[0]); return 2; }
    }
    for (int i = 0; i < nnp; i++)
        if (nps[i] < 1 || nps[i] > MAX_P) {
            fprintf(stderr, "--np: team sizes 1..%d\n", MAX_P);
            return 2;
        }
    if (rcoll_op_create(user_sum_fn, &user_sum_tag, 1, &user_sum_op) != RCOLL_OK ||
        rcoll_op_create(user_mat_fn, &user_mat_tag, 0, &user_mat_op) != RCOLL_OK ||
        rcoll_op_create(user_aff_fn, &user_aff_tag, 0, &user_aff_op) != RCOLL_OK ||
        rcoll_op_create(user_big_fn, &user_big_tag, 0, &user_big_op) != RCOLL_OK) {
        fprintf(stderr, "FAIL rcoll_op_create\n");
        return 1;
    }
    int passed = 0, failed = 0;
    double t0 = now_s();
    /* the local test: not with --nodes (nothing there depends on nodes) unless --coll names it */
    if (only_coll ? listed(only_coll, "local") : !nodes) {
        int bad = rcoll_fork_run(1, local_main, NULL, 60);
        (bad ? failed++ : passed++);
        if (bad)
            printf("FAIL local\n");
    }
    static const rcoll_coll_t reds[] = {RCOLL_COLL_ALLREDUCE, RCOLL_COLL_REDUCE, RCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                        RCOLL_COLL_REDUCE_SCATTER, RCOLL_COLL_SCAN, RCOLL_COLL_EXSCAN};
    job_t job = {0};
    job.quick = quick;
    job.calls = calls > 0 ? calls : quick ? 15 : 40;
    job.reproducible = env_on("RCOLL_REPRODUCIBLE");
    job.no_big = no_big;
    for (size_t c = 0; c < sizeof reds / sizeof *reds; c++) {
        const rcoll_coll_info_t *ci = rcoll_coll_info(reds[c]);
        if (!ci || (only_coll && !listed(only_coll, ci->name)))
            continue;
        job.coll = ci->coll;
        for (int i = 0; i < nnp; i++) {
            int np = nps[i], composed_run = composed_applies(np, nodes);
            job.nalgos = 0;
            for (int k = 0; ci->algos && ci->algos[k] && job.nalgos < MAX_ALGOS; k++) {
                const rcoll_algo_t *al = ci->algos[k];
                if ((only_algo && strcmp(only_algo, al->name)) || (al->composed && !composed_run && !only_algo))
                    continue;
                job.algos[job.nalgos++] = al->name;
            }
            if (!job.nalgos)
                continue;
            char map[512] = "";
            if (nodes)
                set_node_map(np, nodes, map, sizeof map);
            double t = now_s();
            int bad = rcoll_fork_run(np, rank_main, &job, 300);
            char names[512] = "";
            for (int a = 0, n = 0; a < job.nalgos; a++)
                n += snprintf(names + n, sizeof names - (size_t)n, "%s%s", a ? "," : "", job.algos[a]);
            printf("%s %s %s p=%d%s%s%s (%.1f s)\n", bad ? "FAIL" : "ok", ci->name, names, np,
                   job.reproducible ? ", RCOLL_REPRODUCIBLE=1" : "", map[0] ? ", nodes " : "", map, now_s() - t);
            fflush(stdout);
            (bad ? failed++ : passed++);
        }
    }
    printf("%d passed, %d failed (%.1f s)\n", passed, failed, now_s() - t0);
    rcoll_op_free(user_sum_op);
    rcoll_op_free(user_mat_op);
    rcoll_op_free(user_aff_op);
    rcoll_op_free(user_big_op);
    return failed ? 1 : 0;
}
