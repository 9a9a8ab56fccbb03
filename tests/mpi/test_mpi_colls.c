/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): MPI_Bcast, MPI_Gather,
 * MPI_Scatter, MPI_Alltoall, MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv and MPI_Scatterv on
 * MPI_COMM_WORLD, on an odd/even split in reversed rank order, on a duplicate and on
 * MPI_COMM_SELF: every root, with and without MPI_IN_PLACE, block sizes from 0 to 72 KB, the
 * v-forms with uneven and zero counts, all-zero counts, displacements in reversed rank order
 * with gaps and (one pattern) negative displacements; datatypes MPI_INT, contiguous(4),
 * a strided vector and a struct whose type map runs backwards in memory, the same or different
 * on the send and receive side and from rank to rank (signatures always match). Arguments MPI
 * calls insignificant are passed as NULL / MPI_DATATYPE_NULL. Every receive buffer is compared
 * whole (holes between strided elements and a guard after it must keep their poison), and
 * buffers that must not change are checked.
 * Usage: test_mpi_colls [repetitions (default 2)] [collective: bcast, gather, ..., scatterv
 * (default all)]. */
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xEE
#define GUARD 16 /* ints after every buffer */

static int wrank;
static int reps = 2;
static const char *only; /* run this collective only */

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_colls (world rank %d): ", wrank);             \
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

/* ---- datatypes: each element holds `nint` ints of the data stream, the j-th at int offset
 * pos[j] of an element `ext` ints wide ---- */

typedef struct {
    MPI_Datatype t;
    int nint, ext;
    int pos[4];
    const char *name;
} ttype_t;

enum { T_INT, T_CONTIG4, T_VEC3, T_SWAPPED, NTYPES };
static ttype_t T[NTYPES];
#define NCOMBO 6

static void make_types(void)
{
    T[T_INT] = (ttype_t){ MPI_INT, 1, 1, { 0 }, "MPI_INT" };
    MPI_Datatype c4, vec, vec3, st, swapped;
    MPI_Type_contiguous(4, MPI_INT, &c4);
    MPI_Type_commit(&c4);
    T[T_CONTIG4] = (ttype_t){ c4, 4, 4, { 0, 1, 2, 3 }, "contiguous(4)" };
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 6 * (MPI_Aint)sizeof(int), &vec3);
    MPI_Type_commit(&vec3);
    MPI_Type_free(&vec);
    T[T_VEC3] = (ttype_t){ vec3, 3, 6, { 0, 2, 4 }, "vector(3,1,2) resized to 6 ints" };
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { (MPI_Aint)sizeof(int), 0 };
    MPI_Datatype types[2] = { MPI_INT, MPI_INT };
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, 2 * (MPI_Aint)sizeof(int), &swapped);
    MPI_Type_commit(&swapped);
    MPI_Type_free(&st);
    T[T_SWAPPED] = (ttype_t){ swapped, 2, 2, { 1, 0 }, "swapped struct" };
}

static void free_types(void)
{
    for (int i = 1; i < NTYPES; i++)
        MPI_Type_free(&T[i].t);
}

/* The send and receive type of `rank` in combination `combo`; 4 and 5 differ from rank to rank. */
static void combo_types(int combo, int rank, const ttype_t **s, const ttype_t **r)
{
    static const int fixed[4][2] = {
        { T_INT, T_INT }, { T_VEC3, T_VEC3 }, { T_INT, T_SWAPPED }, { T_SWAPPED, T_CONTIG4 }
    };
    if (combo < 4) {
        *s = &T[fixed[combo][0]];
        *r = &T[fixed[combo][1]];
    } else if (combo == 4) {
        *s = &T[rank % NTYPES];
        *r = &T[(rank + 2) % NTYPES];
    } else {
        *s = &T[(rank + 3) % NTYPES];
        *r = &T[(rank + 1) % NTYPES];
    }
}

/* Data ints are multiples of 12, so every type holds whole elements. */
static int elems(const ttype_t *t, size_t nints)
{
    return (int)(nints / (size_t)t->nint);
}

/* Ints a block of nints data ints covers in layout t. */
static size_t span(const ttype_t *t, size_t nints)
{
    return nints / (size_t)t->nint * (size_t)t->ext;
}

static int val(int src, int dst, size_t k, int it)
{
    return (int)((unsigned)src * 1000003u + (unsigned)dst * 10007u + (unsigned)k * 7u +
                 (unsigned)it * 131u + 1u);
}

/* Writes the data stream from src to dst into a block of layout t. */
static void fill(int *blk, const ttype_t *t, size_t nints, int src, int dst, int it)
{
    for (size_t k = 0; k < nints; k++)
        blk[k / (size_t)t->nint * (size_t)t->ext + (size_t)t->pos[k % (size_t)t->nint]] =
            val(src, dst, k, it);
}

static int *alloc_poison(size_t nints)
{
    int *p = malloc((nints + GUARD) * sizeof(int));
    if (p == NULL)
        FAIL("out of memory (%zu ints)", nints);
    memset(p, POISON, (nints + GUARD) * sizeof(int));
    return p;
}

static int *copy_of(const int *p, size_t nints)
{
    int *c = alloc_poison(nints);
    memcpy(c, p, (nints + GUARD) * sizeof(int));
    return c;
}

/* got and exp over nints + GUARD ints. */
static void compare(const int *got, const int *exp, size_t nints, const char *fmt, ...)
{
    if (memcmp(got, exp, (nints + GUARD) * sizeof(int)) == 0)
        return;
    size_t i = 0;
    while (got[i] == exp[i])
        i++;
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    FAIL("%s on %s (rank %d of %d): int %zu of %zu%s is %d (0x%x), expected %d (0x%x)", what,
         C.name, C.rank, C.size, i, nints, i >= nints ? " (guard)" : "", got[i],
         (unsigned)got[i], exp[i], (unsigned)exp[i]);
}

static void check_rc(int rc, const char *call, int root, int combo, size_t n, int inplace)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        FAIL("%s on %s (root %d, combination %d, size/pattern %zu, %s) returned %d: %s", call,
             C.name, root, combo, n, inplace ? "in place" : "not in place", rc, msg);
    }
}

/* ---- rooted and uniform collectives ---- */

static void test_bcast(int root, int combo, size_t n, int it)
{
    const ttype_t *s, *t;
    combo_types(combo, C.rank, &s, &t);
    size_t sp = span(t, n);
    int *buf = alloc_poison(sp), *exp = alloc_poison(sp);
    fill(exp, t, n, root, 0, it);
    if (C.rank == root)
        fill(buf, t, n, root, 0, it);
    check_rc(MPI_Bcast(buf, elems(t, n), t->t, root, C.comm), "MPI_Bcast", root, combo, n, 0);
    compare(buf, exp, sp, "bcast root %d, %zu ints of %s (combination %d), iteration %d", root, n,
            t->name, combo, it);
    free(buf);
    free(exp);
}

static void test_gather(int root, int combo, size_t n, int inplace, int it)
{
    const ttype_t *s, *r;
    combo_types(combo, C.rank, &s, &r);
    size_t ss = span(s, n), rs = span(r, n), total = (size_t)C.size * rs;
    int *send = alloc_poison(ss);
    fill(send, s, n, C.rank, root, it);
    int *send_exp = copy_of(send, ss);
    int rc;
    if (C.rank != root) {
        rc = MPI_Gather(send, elems(s, n), s->t, NULL, 0, MPI_DATATYPE_NULL, root, C.comm);
        check_rc(rc, "MPI_Gather", root, combo, n, 0);
    } else {
        int *recv = alloc_poison(total), *exp = alloc_poison(total);
        for (int j = 0; j < C.size; j++)
            fill(exp + (size_t)j * rs, r, n, j, root, it);
        if (inplace) {
            fill(recv + (size_t)root * rs, r, n, root, root, it);
            rc = MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, elems(r, n), r->t, root,
                            C.comm);
        } else {
            rc = MPI_Gather(send, elems(s, n), s->t, recv, elems(r, n), r->t, root, C.comm);
        }
        check_rc(rc, "MPI_Gather", root, combo, n, inplace);
        compare(recv, exp, total, "gather root %d, %zu ints %s -> %s, %s, iteration %d", root,
                n, s->name, r->name, inplace ? "in place" : "not in place", it);
        free(recv);
        free(exp);
    }
    compare(send, send_exp, ss, "gather: the send buffer changed");
    free(send);
    free(send_exp);
}

static void test_scatter(int root, int combo, size_t n, int inplace, int it)
{
    const ttype_t *s, *r;
    combo_types(combo, C.rank, &s, &r);
    size_t ss = span(s, n), rs = span(r, n);
    int *recv = alloc_poison(rs), *exp = alloc_poison(rs);
    fill(exp, r, n, root, C.rank, it);
    int rc;
    if (C.rank != root) {
        rc = MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, recv, elems(r, n), r->t, root, C.comm);
        check_rc(rc, "MPI_Scatter", root, combo, n, 0);
    } else {
        size_t total = (size_t)C.size * ss;
        int *send = alloc_poison(total);
        for (int j = 0; j < C.size; j++)
            fill(send + (size_t)j * ss, s, n, root, j, it);
        int *send_exp = copy_of(send, total);
        if (inplace)
            rc = MPI_Scatter(send, elems(s, n), s->t, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                             C.comm);
        else
            rc = MPI_Scatter(send, elems(s, n), s->t, recv, elems(r, n), r->t, root, C.comm);
        check_rc(rc, "MPI_Scatter", root, combo, n, inplace);
        compare(send, send_exp, total, "scatter: the root's send buffer changed");
        if (inplace)
            memset(exp, POISON, rs * sizeof(int)); /* recv is not used */
        free(send);
        free(send_exp);
    }
    compare(recv, exp, rs, "scatter root %d, %zu ints %s -> %s, %s, iteration %d", root, n,
            s->name, r->name, inplace && C.rank == root ? "in place" : "not in place", it);
    free(recv);
    free(exp);
}

static void test_alltoall(int combo, size_t n, int inplace, int it)
{
    const ttype_t *s, *r;
    combo_types(combo, C.rank, &s, &r);
    size_t ss = span(s, n), rs = span(r, n);
    size_t stotal = (size_t)C.size * ss, rtotal = (size_t)C.size * rs;
    int *send = alloc_poison(stotal), *recv = alloc_poison(rtotal), *exp = alloc_poison(rtotal);
    for (int j = 0; j < C.size; j++) {
        fill(send + (size_t)j * ss, s, n, C.rank, j, it);
        fill(exp + (size_t)j * rs, r, n, j, C.rank, it);
        if (inplace)
            fill(recv + (size_t)j * rs, r, n, C.rank, j, it);
    }
    int *send_exp = copy_of(send, stotal);
    int rc;
    if (inplace)
        rc = MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, elems(r, n), r->t, C.comm);
    else
        rc = MPI_Alltoall(send, elems(s, n), s->t, recv, elems(r, n), r->t, C.comm);
    check_rc(rc, "MPI_Alltoall", -1, combo, n, inplace);
    compare(recv, exp, rtotal, "alltoall %zu ints %s -> %s, %s, iteration %d", n, s->name,
            r->name, inplace ? "in place" : "not in place", it);
    compare(send, send_exp, stotal, "alltoall: the send buffer changed");
    free(send);
    free(send_exp);
    free(recv);
    free(exp);
}

/* ---- v-forms ---- */

#define NPATTERN 4

/* Data ints src sends to dst in pattern p: 0 uneven with zeros, 1 larger (up to 9.3 KB),
 * 2 all zero, 3 small with zeros (laid out with negative displacements). */
static size_t vcount(int src, int dst, int p)
{
    switch (p) {
    case 0: return 12 * (size_t)((src * 3 + dst * 5 + 1) % 4);
    case 1: return 12 * 97 * (size_t)((src + 2 * dst + 1) % 3);
    case 2: return 0;
    default: return 12 * (size_t)((src * dst + src + 2 * dst) % 3);
    }
}

/* Symmetric in src and dst (for alltoallv in place, where a rank sends what it receives). */
static size_t vcount_sym(int a, int b, int p)
{
    return a < b ? vcount(a, b, p) : vcount(b, a, p);
}

/* A v-form buffer: blocks of ints[b] data ints in layout t, in reversed rank order with a gap
 * of one element after every other block (which ones depends on this rank, so displacements
 * differ between ranks even where the types agree, as MPI allows); pattern 3 puts the buffer
 * address in the middle of the layout, so the first blocks have negative displacements. */
typedef struct {
    const ttype_t *t;
    int *alloc, *exp; /* nints + GUARD each; exp: what alloc must hold */
    int *user;        /* the buffer address passed to MPI */
    size_t nints, shift;
    int *counts, *displs; /* in elements */
} vbuf_t;

static void vbuf_make(vbuf_t *v, const ttype_t *t, const size_t *ints, int n, int p)
{
    v->t = t;
    v->counts = malloc(2 * (size_t)n * sizeof(int));
    if (v->counts == NULL)
        FAIL("out of memory");
    v->displs = v->counts + n;
    size_t off = 0;
    for (int b = n - 1; b >= 0; b--) {
        v->counts[b] = elems(t, ints[b]);
        v->displs[b] = (int)off;
        off += (size_t)v->counts[b] + (size_t)((b + C.rank) % 2);
    }
    v->shift = p == 3 ? off / 2 : 0;
    for (int b = 0; b < n; b++)
        v->displs[b] -= (int)v->shift;
    v->nints = off * (size_t)t->ext;
    v->alloc = alloc_poison(v->nints);
    v->exp = alloc_poison(v->nints);
    v->user = v->alloc + v->shift * (size_t)t->ext;
}

static int *vblock(const vbuf_t *v, int *base, int b)
{
    return base + (v->shift + (size_t)(ptrdiff_t)v->displs[b]) * (size_t)v->t->ext;
}

static void vbuf_free(vbuf_t *v)
{
    free(v->alloc);
    free(v->exp);
    free(v->counts);
}

static void test_allgatherv(int combo, int p, int inplace, int it)
{
    const ttype_t *s, *r;
    combo_types(combo, C.rank, &s, &r);
    size_t *ints = malloc((size_t)C.size * sizeof(size_t));
    for (int j = 0; j < C.size; j++)
        ints[j] = vcount(j, 0, p);
    vbuf_t rv;
    vbuf_make(&rv, r, ints, C.size, p);
    for (int j = 0; j < C.size; j++)
        fill(vblock(&rv, rv.exp, j), r, ints[j], j, 0, it);
    size_t mine = ints[C.rank];
    int *send = alloc_poison(span(s, mine));
    fill(send, s, mine, C.rank, 0, it);
    int rc;
    if (inplace) {
        fill(vblock(&rv, rv.alloc, C.rank), r, mine, C.rank, 0, it);
        rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rv.user, rv.counts, rv.displs,
                            r->t, C.comm);
    } else {
        rc = MPI_Allgatherv(send, elems(s, mine), s->t, rv.user, rv.counts, rv.displs, r->t,
                            C.comm);
    }
    check_rc(rc, "MPI_Allgatherv", -1, combo, (size_t)p, inplace);
    compare(rv.alloc, rv.exp, rv.nints, "allgatherv pattern %d, %s -> %s, %s, iteration %d", p,
            s->name, r->name, inplace ? "in place" : "not in place", it);
    free(send);
    vbuf_free(&rv);
    free(ints);
}

static void test_alltoallv(int combo, int p, int inplace, int it)
{
    const ttype_t *s, *r;
    combo_types(combo, C.rank, &s, &r);
    size_t *sints = malloc(2 * (size_t)C.size * sizeof(size_t)), *rints = sints + C.size;
    for (int j = 0; j < C.size; j++) {
        sints[j] = inplace ? vcount_sym(C.rank, j, p) : vcount(C.rank, j, p);
        rints[j] = inplace ? vcount_sym(j, C.rank, p) : vcount(j, C.rank, p);
    }
    vbuf_t sv, rv;
    vbuf_make(&sv, s, sints, C.size, p);
    vbuf_make(&rv, r, rints, C.size, p);
    for (int j = 0; j < C.size; j++) {
        fill(vblock(&sv, sv.alloc, j), s, sints[j], C.rank, j, it);
        fill(vblock(&rv, rv.exp, j), r, rints[j], j, C.rank, it);
        if (inplace)
            fill(vblock(&rv, rv.alloc, j), r, sints[j], C.rank, j, it);
    }
    memcpy(sv.exp, sv.alloc, (sv.nints + GUARD) * sizeof(int));
    int rc;
    if (inplace)
        rc = MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rv.user, rv.counts,
                           rv.displs, r->t, C.comm);
    else
        rc = MPI_Alltoallv(sv.user, sv.counts, sv.displs, s->t, rv.user, rv.counts, rv.displs,
                           r->t, C.comm);
    check_rc(rc, "MPI_Alltoallv", -1, combo, (size_t)p, inplace);
    compare(rv.alloc, rv.exp, rv.nints, "alltoallv pattern %d, %s -> %s, %s, iteration %d", p,
            s->name, r->name, inplace ? "in place" : "not in place", it);
    compare(sv.alloc, sv.exp, sv.nints, "alltoallv: the send buffer changed");
    vbuf_free(&sv);
    vbuf_free(&rv);
    free(sints);
}

static void test_gatherv(int root, int combo, int p, int inplace, int it)
{
    const ttype_t *s, *r;
    combo_types(combo, C.rank, &s, &r);
    size_t *ints = malloc((size_t)C.size * sizeof(size_t));
    for (int j = 0; j < C.size; j++)
        ints[j] = vcount(j, root, p);
    size_t mine = ints[C.rank];
    int *send = alloc_poison(span(s, mine));
    fill(send, s, mine, C.rank, root, it);
    int rc;
    if (C.rank != root) {
        rc = MPI_Gatherv(send, elems(s, mine), s->t, NULL, NULL, NULL, MPI_DATATYPE_NULL, root,
                         C.comm);
        check_rc(rc, "MPI_Gatherv", root, combo, (size_t)p, 0);
    } else {
        vbuf_t rv;
        vbuf_make(&rv, r, ints, C.size, p);
        for (int j = 0; j < C.size; j++)
            fill(vblock(&rv, rv.exp, j), r, ints[j], j, root, it);
        if (inplace) {
            fill(vblock(&rv, rv.alloc, root), r, mine, root, root, it);
            rc = MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rv.user, rv.counts, rv.displs,
                             r->t, root, C.comm);
        } else {
            rc = MPI_Gatherv(send, elems(s, mine), s->t, rv.user, rv.counts, rv.displs, r->t,
                             root, C.comm);
        }
        check_rc(rc, "MPI_Gatherv", root, combo, (size_t)p, inplace);
        compare(rv.alloc, rv.exp, rv.nints, "gatherv root %d pattern %d, %s -> %s, %s, "
                "iteration %d", root, p, s->name, r->name, inplace ? "in place" : "not in place",
                it);
        vbuf_free(&rv);
    }
    free(send);
    free(ints);
}

static void test_scatterv(int root, int combo, int p, int inplace, int it)
{
    const ttype_t *s, *r;
    combo_types(combo, C.rank, &s, &r);
    size_t *ints = malloc((size_t)C.size * sizeof(size_t));
    for (int j = 0; j < C.size; j++)
        ints[j] = vcount(root, j, p);
    size_t mine = ints[C.rank], rs = span(r, mine);
    int *recv = alloc_poison(rs), *exp = alloc_poison(rs);
    fill(exp, r, mine, root, C.rank, it);
    int rc;
    if (C.rank != root) {
        rc = MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, recv, elems(r, mine), r->t, root,
                          C.comm);
        check_rc(rc, "MPI_Scatterv", root, combo, (size_t)p, 0);
    } else {
        vbuf_t sv;
        vbuf_make(&sv, s, ints, C.size, p);
        for (int j = 0; j < C.size; j++)
            fill(vblock(&sv, sv.alloc, j), s, ints[j], root, j, it);
        memcpy(sv.exp, sv.alloc, (sv.nints + GUARD) * sizeof(int));
        if (inplace)
            rc = MPI_Scatterv(sv.user, sv.counts, sv.displs, s->t, MPI_IN_PLACE, 0,
                              MPI_DATATYPE_NULL, root, C.comm);
        else
            rc = MPI_Scatterv(sv.user, sv.counts, sv.displs, s->t, recv, elems(r, mine), r->t,
                              root, C.comm);
        check_rc(rc, "MPI_Scatterv", root, combo, (size_t)p, inplace);
        compare(sv.alloc, sv.exp, sv.nints, "scatterv: the root's send buffer changed");
        if (inplace)
            memset(exp, POISON, rs * sizeof(int));
        vbuf_free(&sv);
    }
    compare(recv, exp, rs, "scatterv root %d pattern %d, %s -> %s, %s, iteration %d", root, p,
            s->name, r->name, inplace && C.rank == root ? "in place" : "not in place", it);
    free(recv);
    free(exp);
    free(ints);
}

/* ---- drivers ---- */

static int want(const char *coll)
{
    return only == NULL || strcmp(only, coll) == 0;
}

static const size_t sizes[] = { 0, 12, 1212, 18000 }; /* data ints per block */
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* The combinations run on this communicator: all, or one fixed and one varying by rank. */
static int combo_at(int i)
{
    return C.full ? i : (i == 0 ? 1 : 4);
}

static int ncombos(void)
{
    return C.full ? NCOMBO : 2;
}

static void run_rooted(int it)
{
    for (int root = 0; root < C.size; root++)
        for (int ci = 0; ci < ncombos(); ci++) {
            int combo = combo_at(ci);
            for (size_t si = 0; si < NSIZES; si++) {
                size_t n = sizes[si];
                int inplace = (int)((si + (size_t)ci + (size_t)root) % 2);
                if (want("bcast"))
                    test_bcast(root, combo, n, it);
                if (want("gather"))
                    test_gather(root, combo, n, inplace, it);
                if (want("scatter"))
                    test_scatter(root, combo, n, !inplace, it);
            }
            for (int p = 0; p < NPATTERN; p++) {
                int inplace = (p + ci + root) % 2;
                if (want("gatherv"))
                    test_gatherv(root, combo, p, inplace, it);
                if (want("scatterv"))
                    test_scatterv(root, combo, p, !inplace, it);
            }
        }
}

static void run_unrooted(int it)
{
    for (int ci = 0; ci < ncombos(); ci++) {
        int combo = combo_at(ci);
        for (int inplace = 0; inplace < 2; inplace++) {
            for (size_t si = 0; si < NSIZES; si++)
                if (want("alltoall"))
                    test_alltoall(combo, sizes[si], inplace, it);
            for (int p = 0; p < NPATTERN; p++) {
                if (want("allgatherv"))
                    test_allgatherv(combo, p, inplace, it);
                if (want("alltoallv"))
                    test_alltoallv(combo, p, inplace, it);
            }
        }
    }
}

static void run_on(MPI_Comm comm, const char *name, int full, int nreps)
{
    C.comm = comm;
    C.name = name;
    C.full = full;
    MPI_Comm_rank(comm, &C.rank);
    MPI_Comm_size(comm, &C.size);
    for (int it = 0; it < nreps; it++) {
        run_rooted(it);
        run_unrooted(it);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc > 1)
        reps = atoi(argv[1]);
    if (reps < 1)
        reps = 1;
    if (argc > 2 && strcmp(argv[2], "all") != 0)
        only = argv[2];
    double t0 = MPI_Wtime();
    make_types();

    run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD", 1, reps);

    /* A duplicate gets its own team; the original keeps working after it is freed. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run_on(dup, "a duplicate of MPI_COMM_WORLD", 0, 1);
    MPI_Comm_free(&dup);
    run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD after freeing a duplicate", 0, 1);

    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &split);
    run_on(split, wrank % 2 ? "odd ranks (reversed)" : "even ranks (reversed)", 0, reps);
    MPI_Comm_free(&split);

    run_on(MPI_COMM_SELF, "MPI_COMM_SELF", 0, 1);

    free_types();
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        FAIL("final MPI_Barrier failed");
    if (wrank == 0)
        printf("OK test_mpi_colls (np %d, %d repetitions, %s, %.2f s)\n", wsize, reps,
               only ? only : "all collectives", MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
