/* The element types, the predefined operations' kernels and the fold: see op.h. The kernels are
 * plain loops over restrict pointers that the compiler vectorizes at -O2 -ftree-vectorize and
 * above (docs/reductions.md, "Kernels", has the check and the measured speed against memcpy). */
#include "coll/op.h"

#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct { float v; int i; } float_int_t;
typedef struct { double v; int i; } double_int_t;
typedef struct { long v; int i; } long_int_t;
typedef struct { int v; int i; } int_int_t;
typedef struct { short v; int i; } short_int_t;
typedef struct { long double v; int i; } long_double_int_t;

#define OPAQUE_BASE 0x1000000

static const struct {
    const char *name;
    size_t size;
} dtypes[RCOLL_DTYPE_COUNT] = {
    [RCOLL_DTYPE_INT8] = {"int8", 1},
    [RCOLL_DTYPE_UINT8] = {"uint8", 1},
    [RCOLL_DTYPE_INT16] = {"int16", 2},
    [RCOLL_DTYPE_UINT16] = {"uint16", 2},
    [RCOLL_DTYPE_INT32] = {"int32", 4},
    [RCOLL_DTYPE_UINT32] = {"uint32", 4},
    [RCOLL_DTYPE_INT64] = {"int64", 8},
    [RCOLL_DTYPE_UINT64] = {"uint64", 8},
    [RCOLL_DTYPE_FLOAT] = {"float", sizeof(float)},
    [RCOLL_DTYPE_DOUBLE] = {"double", sizeof(double)},
    [RCOLL_DTYPE_LONG_DOUBLE] = {"long_double", sizeof(long double)},
    [RCOLL_DTYPE_FLOAT_COMPLEX] = {"float_complex", sizeof(float complex)},
    [RCOLL_DTYPE_DOUBLE_COMPLEX] = {"double_complex", sizeof(double complex)},
    [RCOLL_DTYPE_LONG_DOUBLE_COMPLEX] = {"long_double_complex", sizeof(long double complex)},
    [RCOLL_DTYPE_BOOL] = {"bool", sizeof(_Bool)},
    [RCOLL_DTYPE_FLOAT_INT] = {"float_int", sizeof(float_int_t)},
    [RCOLL_DTYPE_DOUBLE_INT] = {"double_int", sizeof(double_int_t)},
    [RCOLL_DTYPE_LONG_INT] = {"long_int", sizeof(long_int_t)},
    [RCOLL_DTYPE_2INT] = {"2int", sizeof(int_int_t)},
    [RCOLL_DTYPE_SHORT_INT] = {"short_int", sizeof(short_int_t)},
    [RCOLL_DTYPE_LONG_DOUBLE_INT] = {"long_double_int", sizeof(long_double_int_t)},
};

static const char *const op_names[RCOLL_OPI_COUNT] = {
    "user", "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "minloc",
    "maxloc"};

size_t rcoll_dtype_size(rcoll_dtype_t d)
{
    if (d >= 0 && d < RCOLL_DTYPE_COUNT)
        return dtypes[d].size;
    if (d > OPAQUE_BASE && d < OPAQUE_BASE + (1 << 24))
        return (size_t)(d - OPAQUE_BASE);
    return 0;
}

const char *rcoll_dtype_name(rcoll_dtype_t d)
{
    return d >= 0 && d < RCOLL_DTYPE_COUNT ? dtypes[d].name : rcoll_dtype_size(d) ? "bytes" : NULL;
}

int rcoll_dtype_from_name(const char *name)
{
    for (int d = 0; name && d < RCOLL_DTYPE_COUNT; d++)
        if (strcasecmp(name, dtypes[d].name) == 0)
            return d;
    return -1;
}

int rcoll_op_index(rcoll_op_t op)
{
    uintptr_t v = (uintptr_t)op;
    if (!op)
        return -1;
    return v < RCOLL_OPI_COUNT ? (int)v : RCOLL_OPI_USER;
}

const char *rcoll_op_name(rcoll_op_t op)
{
    int i = rcoll_op_index(op);
    return i < 0 ? NULL : op_names[i];
}

rcoll_op_t rcoll_op_from_name(const char *name)
{
    for (int i = 1; name && i < RCOLL_OPI_COUNT; i++)
        if (strcasecmp(name, op_names[i]) == 0)
            return (rcoll_op_t)(uintptr_t)i;
    return NULL;
}

bool rcoll_op_commutative(rcoll_op_t op)
{
    return rcoll_op_index(op) != RCOLL_OPI_USER || op->commutative;
}

rcoll_status_t rcoll_op_create(rcoll_user_fn_t fn, void *arg, int commutative, rcoll_op_t *op)
{
    if (!fn || !op)
        return RCOLL_ERR_INVALID;
    struct rcoll_op *o = malloc(sizeof *o);
    if (!o)
        return RCOLL_ERR_NOMEM;
    o->fn = fn;
    o->arg = arg;
    o->commutative = commutative != 0;
    *op = o;
    return RCOLL_OK;
}

void rcoll_op_free(rcoll_op_t op)
{
    if (rcoll_op_index(op) == RCOLL_OPI_USER)
        free(op);
}

/* ---- kernels: y[i] = x[i] op y[i] (two operands), z[i] = x[i] op y[i] (three) ---- */

typedef void (*kernel_t)(const void *restrict x, void *restrict y, size_t n);
typedef void (*kernel3_t)(const void *restrict x, const void *restrict y, void *restrict z, size_t n);
typedef struct {
    kernel_t two;
    kernel3_t three;
} kernels_t;

/* Each kernel in two builds, chosen once when the library is loaded (GCC's target_clones, an
 * ifunc on x86-64 Linux): for processors with AVX2 (32-byte vectors) and for any x86-64 (16-byte
 * SSE2, the -O2 default). The element operations are the same IEEE ones in both, so results do
 * not depend on which ran (no contraction into fused multiply-adds: FMA is not in the "avx2"
 * target). Measured np=2 against the SSE2 build alone: docs/tuning.md, "Reduction kernels". */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef KERNEL_CLONES
#define KERNEL_CLONES
#endif

#define K(name, T, expr)                                                                     \
    KERNEL_CLONES                                                                            \
    static void name##_2(const void *restrict xv, void *restrict yv, size_t n)               \
    {                                                                                        \
        const T *restrict x = xv;                                                            \
        T *restrict y = yv;                                                                  \
        for (size_t i = 0; i < n; i++) {                                                     \
            T a = x[i], b = y[i];                                                            \
            y[i] = (expr);                                                                   \
        }                                                                                    \
    }                                                                                        \
    KERNEL_CLONES                                                                            \
    static void name##_3(const void *restrict xv, const void *restrict yv, void *restrict zv, \
                         size_t n)                                                           \
    {                                                                                        \
        const T *restrict x = xv, *restrict y = yv;                                          \
        T *restrict z = zv;                                                                  \
        for (size_t i = 0; i < n; i++) {                                                     \
            T a = x[i], b = y[i];                                                            \
            z[i] = (expr);                                                                   \
        }                                                                                    \
    }                                                                                        \
    static const kernels_t name = {name##_2, name##_3};

#define NUMERIC(tag, T)                         \
    K(sum_##tag, T, (T)(a + b))                 \
    K(prod_##tag, T, (T)(a * b))
#define ORDERED(tag, T)                         \
    K(min_##tag, T, a < b ? a : b)              \
    K(max_##tag, T, a > b ? a : b)
#define LOGICAL(tag, T)                         \
    K(land_##tag, T, (T)((a != 0) && (b != 0))) \
    K(lor_##tag, T, (T)((a != 0) || (b != 0)))  \
    K(lxor_##tag, T, (T)((a != 0) != (b != 0)))
#define BITWISE(tag, T)                         \
    K(band_##tag, T, (T)(a & b))                \
    K(bor_##tag, T, (T)(a | b))                 \
    K(bxor_##tag, T, (T)(a ^ b))
/* Integer sums and products wrap around (two's complement, as MPI libraries compute them): in
 * the unsigned type of at least int's width U, never a signed overflow. */
#define WRAPPING(tag, T, U)                     \
    K(sum_##tag, T, (T)((U)a + (U)b))           \
    K(prod_##tag, T, (T)((U)a * (U)b))
#define INTEGER(tag, T, U) WRAPPING(tag, T, U) ORDERED(tag, T) LOGICAL(tag, T) BITWISE(tag, T)

INTEGER(i8, int8_t, unsigned)
INTEGER(u8, uint8_t, unsigned)
INTEGER(i16, int16_t, unsigned)
INTEGER(u16, uint16_t, unsigned)
INTEGER(i32, int32_t, uint32_t)
INTEGER(u32, uint32_t, uint32_t)
INTEGER(i64, int64_t, uint64_t)
INTEGER(u64, uint64_t, uint64_t)
NUMERIC(f, float)
ORDERED(f, float)
NUMERIC(d, double)
ORDERED(d, double)
NUMERIC(ld, long double)
ORDERED(ld, long double)
NUMERIC(cf, float complex)
NUMERIC(cd, double complex)
NUMERIC(cld, long double complex)
LOGICAL(b, _Bool)

/* minloc and maxloc: the better value, the smaller index on a tie. */
#define LOC(tag, T)                                                                    \
    K(minloc_##tag, T, (a.v < b.v || (a.v == b.v && a.i < b.i)) ? a : b)              \
    K(maxloc_##tag, T, (a.v > b.v || (a.v == b.v && a.i < b.i)) ? a : b)
LOC(fi, float_int_t)
LOC(di, double_int_t)
LOC(li, long_int_t)
LOC(ii, int_int_t)
LOC(si, short_int_t)
LOC(ldi, long_double_int_t)

#define ROW_INT(tag)                                                                          \
    {NULL, &sum_##tag, &prod_##tag, &min_##tag, &max_##tag, &land_##tag, &lor_##tag, &lxor_##tag, \
     &band_##tag, &bor_##tag, &bxor_##tag, NULL, NULL}
#define ROW_REAL(tag) {NULL, &sum_##tag, &prod_##tag, &min_##tag, &max_##tag}
#define ROW_COMPLEX(tag) {NULL, &sum_##tag, &prod_##tag}
#define ROW_LOC(tag) {[RCOLL_OPI_MINLOC] = &minloc_##tag, [RCOLL_OPI_MAXLOC] = &maxloc_##tag}

/* [dtype][operation index]; NULL where the operation does not apply. */
static const kernels_t *const kernels[RCOLL_DTYPE_COUNT][RCOLL_OPI_COUNT] = {
    [RCOLL_DTYPE_INT8] = ROW_INT(i8),
    [RCOLL_DTYPE_UINT8] = ROW_INT(u8),
    [RCOLL_DTYPE_INT16] = ROW_INT(i16),
    [RCOLL_DTYPE_UINT16] = ROW_INT(u16),
    [RCOLL_DTYPE_INT32] = ROW_INT(i32),
    [RCOLL_DTYPE_UINT32] = ROW_INT(u32),
    [RCOLL_DTYPE_INT64] = ROW_INT(i64),
    [RCOLL_DTYPE_UINT64] = ROW_INT(u64),
    [RCOLL_DTYPE_FLOAT] = ROW_REAL(f),
    [RCOLL_DTYPE_DOUBLE] = ROW_REAL(d),
    [RCOLL_DTYPE_LONG_DOUBLE] = ROW_REAL(ld),
    [RCOLL_DTYPE_FLOAT_COMPLEX] = ROW_COMPLEX(cf),
    [RCOLL_DTYPE_DOUBLE_COMPLEX] = ROW_COMPLEX(cd),
    [RCOLL_DTYPE_LONG_DOUBLE_COMPLEX] = ROW_COMPLEX(cld),
    [RCOLL_DTYPE_BOOL] = {[RCOLL_OPI_LAND] = &land_b, [RCOLL_OPI_LOR] = &lor_b, [RCOLL_OPI_LXOR] = &lxor_b},
    [RCOLL_DTYPE_FLOAT_INT] = ROW_LOC(fi),
    [RCOLL_DTYPE_DOUBLE_INT] = ROW_LOC(di),
    [RCOLL_DTYPE_LONG_INT] = ROW_LOC(li),
    [RCOLL_DTYPE_2INT] = ROW_LOC(ii),
    [RCOLL_DTYPE_SHORT_INT] = ROW_LOC(si),
    [RCOLL_DTYPE_LONG_DOUBLE_INT] = ROW_LOC(ldi),
};

const char *rcoll_op_check(rcoll_op_t op, rcoll_dtype_t dtype)
{
    int i = rcoll_op_index(op);
    if (i < 0)
        return "NULL operation";
    if (!rcoll_dtype_size(dtype))
        return "unknown element type";
    if (i == RCOLL_OPI_USER)
        return op->fn ? NULL : "user operation without a function";
    if (dtype >= RCOLL_DTYPE_COUNT)
        return "opaque elements need a user operation";
    return kernels[dtype][i] ? NULL : "operation not defined for this element type";
}

int rcoll_op_valid(rcoll_op_t op, rcoll_dtype_t dtype)
{
    return rcoll_op_check(op, dtype) == NULL;
}

void rcoll_op_apply(rcoll_op_t op, rcoll_dtype_t dtype, const void *in, void *inout, size_t count)
{
    if (!count)
        return;
    int i = rcoll_op_index(op);
    if (i == RCOLL_OPI_USER)
        op->fn(in, inout, count, dtype, op->arg);
    else
        kernels[dtype][i]->two(in, inout, count);
}

/* out = x op y, out apart from both. */
static void apply3(rcoll_op_t op, rcoll_dtype_t dtype, const void *x, const void *y, void *out, size_t count)
{
    int i = rcoll_op_index(op);
    if (i == RCOLL_OPI_USER) {
        memcpy(out, y, count * rcoll_dtype_size(dtype));
        op->fn(x, out, count, dtype, op->arg);
    } else {
        kernels[dtype][i]->three(x, y, out, count);
    }
}

/* Bytes per part of a fold: the output and a copy of one input stay in the first-level cache
 * while every input passes over them. */
#define FOLD_PART 8192

/* The kernels of a predefined operation on its element type; NULL for a user operation. */
static const kernels_t *kernels_of(rcoll_op_t op, rcoll_dtype_t dtype)
{
    int i = rcoll_op_index(op);
    return i == RCOLL_OPI_USER ? NULL : kernels[dtype][i];
}

/* out = in[0] op (in[1] op (... op in[n-1])), in that order, n > 1, out none of in[0..n-2];
 * k: the operation's kernels (kernels_of), looked up once for the whole fold. */
static void fold_part(rcoll_op_t op, const kernels_t *k, rcoll_dtype_t dtype, const void *const *in,
                      int n, void *out, size_t count)
{
    if (k) {
        if (out == in[n - 1])
            k->two(in[n - 2], out, count);
        else
            k->three(in[n - 2], in[n - 1], out, count);
        for (int j = n - 3; j >= 0; j--)
            k->two(in[j], out, count);
        return;
    }
    if (out == in[n - 1])
        rcoll_op_apply(op, dtype, in[n - 2], out, count);
    else
        apply3(op, dtype, in[n - 2], in[n - 1], out, count);
    for (int j = n - 3; j >= 0; j--)
        rcoll_op_apply(op, dtype, in[j], out, count);
}

/* rcoll_op_fold in parts of FOLD_PART, the aliased input (-1: none) held aside per part; apart
 * from the common case so that its stack part costs that case nothing. */
static __attribute__((noinline)) rcoll_status_t fold_parts(rcoll_op_t op, rcoll_dtype_t dtype,
                                                           const void *const *in, int n, void *out,
                                                           size_t count, size_t es, int alias)
{
    size_t part = FOLD_PART / es ? FOLD_PART / es : 1;
    _Alignas(64) unsigned char stack[FOLD_PART];
    unsigned char *held = stack;
    if (alias >= 0 && count && es > sizeof stack && !(held = malloc(es))) /* one huge element */
        return RCOLL_ERR_NOMEM;
    for (size_t at = 0; at < count; at += part) {
        size_t m = count - at < part ? count - at : part, off = at * es;
        char *o = (char *)out + off;
#define IN(j) ((j) == alias ? (const void *)held : (const void *)((const char *)in[j] + off))
        if (alias >= 0)
            memcpy(held, o, m * es);
        const void *last = (const char *)in[n - 1] + off;
        if (n == 1) {
            if (o != last)
                memcpy(o, last, m * es);
            continue;
        }
        if (o == last)
            rcoll_op_apply(op, dtype, IN(n - 2), o, m);
        else
            apply3(op, dtype, IN(n - 2), last, o, m);
        for (int j = n - 3; j >= 0; j--)
            rcoll_op_apply(op, dtype, IN(j), o, m);
#undef IN
    }
    if (held != stack)
        free(held);
    return RCOLL_OK;
}

rcoll_status_t rcoll_op_fold(rcoll_op_t op, rcoll_dtype_t dtype, const void *const *in, int n, void *out,
                             size_t count)
{
    size_t es = rcoll_dtype_size(dtype);
    int alias = -1; /* an input other than the last that is the output itself (in place) */
    for (int j = 0; j < n - 1; j++)
        if (in[j] == out)
            alias = j;
    if (count && alias < 0 && n > 1 && count * es <= FOLD_PART) { /* one part, no copy */
        fold_part(op, kernels_of(op, dtype), dtype, in, n, out, count);
        return RCOLL_OK;
    }
    return fold_parts(op, dtype, in, n, out, count, es, alias);
}

rcoll_status_t rcoll_reduce_local(const void *in, void *inout, size_t count, rcoll_dtype_t dtype,
                                  rcoll_op_t op)
{
    if (rcoll_op_check(op, dtype) || (count && (!in || !inout)))
        return RCOLL_ERR_INVALID;
    rcoll_op_apply(op, dtype, in, inout, count);
    return RCOLL_OK;
}
