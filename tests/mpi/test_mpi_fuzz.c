/* test_mpi_fuzz: a randomized sequence of MPI collectives, every result checked against one
 * computed locally. usage: test_mpi_fuzz SEED NCALLS [only_coll] [only_mode] [trace] [nopersist]
 *
 * Every rank draws the same sequence from SEED (each call from its own generator, seeded by the
 * seed and the call's index): the 16 collectives (barrier to exscan, v-forms with zero counts,
 * gaps and shuffled blocks), on MPI_COMM_WORLD, a dup, two halves in reversed rank order and
 * a communicator without the last rank; roots changing from call to call; MPI_IN_PLACE where
 * the standard allows it; bytes, ints, doubles and a contiguous pair type; predefined and user
 * operations, commutative or not; blocking calls, up to four nonblocking ones outstanding
 * (with a point-to-point ring in the same request array, completed by MPI_Waitall, a loop of
 * MPI_Waitany, MPI_Testall or MPI_Wait in reverse order) and, with an MPI-4 library, persistent
 * ones started several times with other data. Every receive buffer has 64 guard bytes on each
 * side; the bytes MPI must not touch (gaps, send buffers) are checked too, and every return
 * code (MPI_ERRORS_RETURN). Prints "OK test_mpi_fuzz ..." from rank 0 when every rank passed.
 *
 * Written to compare the drop-in with the native library call by call: with FUZZ_NATIVE_WA=1
 * it avoids four cases where the native libraries themselves fail (Open MPI 4.1: an in-place
 * MPI_Ialltoallv with zero counts hangs the next one or gives wrong data; MPICH 4.0: a
 * one-rank MPI_Allgatherv ignores displs[0], an in-place MPI_Reduce at a root other than 0
 * crashes from ~600 ints; docs/mpi.md, "Randomized sequences"). FUZZ_FROM / FUZZ_TO run only
 * a range of calls, FUZZ_HOW forces the completion call, FUZZ_INJECT corrupts one receive to
 * check the checker. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define G 64
#define MAXMSG 20

static uint64_t g_seed;
static int wrank, wsize, nmsg = 0, nerr = 0;
static MPI_Comm comms[4];
static const char *cname[4] = {"world", "dup", "halves_rev", "nolast"};
static MPI_Datatype pairt;
static MPI_Op uc_op, unc_op;
static int g_nopersist = 0, g_only_coll = -1, g_only_mode = -1;
static long g_trace = 0; static int g_wa = 0;

static inline uint64_t smix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static inline uint64_t mix2(uint64_t a, uint64_t b) { return smix(smix(a) ^ (b * 0xD6E8FEB86659FD93ULL + 0x1234567ULL)); }
typedef struct { uint64_t s; } rng_t;
static inline uint64_t rnext(rng_t *r) { r->s += 0x9E3779B97F4A7C15ULL; return smix(r->s); }
static inline uint32_t rb(rng_t *r, uint32_t n) { return n ? (uint32_t)(rnext(r) % n) : 0; }

static uint64_t K(long op, int gen, int src, int dst) {
  return mix2(mix2(mix2(mix2(g_seed, (uint64_t)op), (uint64_t)gen), (uint64_t)src), (uint64_t)dst);
}

enum { C_BARRIER, C_BCAST, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_ALLGATHER, C_ALLGATHERV,
       C_ALLTOALL, C_ALLTOALLV, C_REDUCE, C_ALLREDUCE, C_RSCAT, C_RSCATB, C_SCAN, C_EXSCAN, NCOLL };
static const char *collname[NCOLL] = {"barrier", "bcast", "gather", "gatherv", "scatter", "scatterv",
  "allgather", "allgatherv", "alltoall", "alltoallv", "reduce", "allreduce", "reduce_scatter",
  "reduce_scatter_block", "scan", "exscan"};
enum { OP_SUM, OP_MAX, OP_MIN, OP_BAND, OP_UC, OP_UNC };
static const char *opname[] = {"SUM", "MAX", "MIN", "BAND", "user_comm", "user_noncomm"};
static const char *mkname[] = {"BYTE", "CHAR", "INT"};
static const char *rtname[] = {"INT", "DOUBLE", "PAIR(contig2int)"};

typedef struct { uint8_t *raw, *p; size_t n; } gbuf;
static void galloc(gbuf *b, size_t n) {
  b->n = n;
  b->raw = malloc(n + 2 * G);
  if (!b->raw) { fprintf(stderr, "oom\n"); MPI_Abort(MPI_COMM_WORLD, 3); }
  for (int i = 0; i < G; i++) { b->raw[i] = (uint8_t)(0xA5 ^ i); b->raw[G + n + i] = (uint8_t)(0x5A ^ i); }
  b->p = b->raw + G;
  memset(b->p, 0xEE, n);
}
static void gfree(gbuf *b) { free(b->raw); b->raw = b->p = NULL; }

typedef struct {
  long id; int coll, ci; MPI_Comm comm; int P, r, root, inplace;
  int red; int mk, rtk, opk; MPI_Datatype dt; MPI_Op mop; int es;
  int n; int *cnt, *dsp, *sc, *sd, *rc, *rd; int ext, sext, rext, T;
  int snull, rnull, ipnull;
  gbuf sb, rbuf, scopy; int has_sb, has_rb;
  int gen; const char *mode; MPI_Request req;
} Op;

static int draw_count(rng_t *g) {
  uint32_t r = rb(g, 100);
  if (r < 6) return 0;
  if (r < 75) return rb(g, 301);
  if (r < 94) return rb(g, 3001);
  return rb(g, 40001);
}
static int draw_vcount(rng_t *g, int base) {
  if (rb(g, 5) == 0) return 0;
  return rb(g, base + 1);
}
/* displacements for P blocks of cnt[] elements; returns extent */
static int make_displs(rng_t *g, int P, const int *cnt, int *dsp) {
  int mode = rb(g, 3), cur = 0;
  int *ord = malloc(sizeof(int) * P);
  for (int i = 0; i < P; i++) ord[i] = i;
  if (mode == 2) for (int i = P - 1; i > 0; i--) { int j = rb(g, i + 1), t = ord[i]; ord[i] = ord[j]; ord[j] = t; }
  for (int k = 0; k < P; k++) { int j = ord[k]; if (mode) cur += rb(g, 17); dsp[j] = cur; cur += cnt[j]; }
  free(ord);
  return cur + (mode ? (int)rb(g, 5) : 0);
}

static void fill_move(void *b, int mk, int n, uint64_t key) {
  if (mk == 2) { int32_t *p = b; for (int i = 0; i < n; i++) p[i] = (int32_t)smix(key + i); }
  else { uint8_t *p = b; for (int i = 0; i < n; i++) p[i] = (uint8_t)smix(key + i); }
}
static void fill_red(void *b, int rtk, int opk, int n, uint64_t key) {
  for (int i = 0; i < n; i++) {
    uint64_t h = smix(key + i);
    if (rtk == 0) {
      int32_t v;
      if (opk == OP_SUM) v = (int32_t)(h % 201) - 100;
      else if (opk == OP_BAND) v = (int32_t)(uint32_t)(h | (h >> 21) | (h >> 42));
      else if (opk == OP_UC) v = (int32_t)((uint32_t)h | 1u);
      else v = (int32_t)(uint32_t)h;
      ((int32_t *)b)[i] = v;
    } else if (rtk == 1) {
      ((double *)b)[i] = opk == OP_SUM ? (double)((int)(h % 201) - 100) : (double)((int)(h % 2000001) - 1000000);
    } else {
      ((uint32_t *)b)[2 * i] = (uint32_t)h; ((uint32_t *)b)[2 * i + 1] = (uint32_t)(h >> 32);
    }
  }
}
/* acc = acc op in (acc holds the lower ranks) */
static void fold(void *acc, const void *in, int rtk, int opk, int n) {
  for (int i = 0; i < n; i++) {
    if (rtk == 0) {
      int32_t *a = acc; const int32_t *b = in;
      switch (opk) {
        case OP_SUM: a[i] += b[i]; break;
        case OP_MAX: if (b[i] > a[i]) a[i] = b[i]; break;
        case OP_MIN: if (b[i] < a[i]) a[i] = b[i]; break;
        case OP_BAND: a[i] &= b[i]; break;
        case OP_UC: a[i] = (int32_t)((uint32_t)a[i] * (uint32_t)b[i]); break;
      }
    } else if (rtk == 1) {
      double *a = acc; const double *b = in;
      switch (opk) {
        case OP_SUM: a[i] += b[i]; break;
        case OP_MAX: if (b[i] > a[i]) a[i] = b[i]; break;
        case OP_MIN: if (b[i] < a[i]) a[i] = b[i]; break;
      }
    } else {
      uint32_t *a = acc; const uint32_t *b = in;
      uint32_t m = a[2 * i] * b[2 * i], c = b[2 * i] * a[2 * i + 1] + b[2 * i + 1];
      a[2 * i] = m; a[2 * i + 1] = c;
    }
  }
}
static void uc_fn(void *in, void *io, int *len, MPI_Datatype *dt) {
  (void)dt; uint32_t *a = in, *b = io;
  for (int i = 0; i < *len; i++) b[i] = a[i] * b[i];
}
static void unc_fn(void *in, void *io, int *len, MPI_Datatype *dt) {
  (void)dt; uint32_t *a = in, *b = io;
  for (int i = 0; i < *len; i++) {
    uint32_t m = a[2 * i] * b[2 * i], c = b[2 * i] * a[2 * i + 1] + b[2 * i + 1];
    b[2 * i] = m; b[2 * i + 1] = c;
  }
}

static void report(Op *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void report(Op *o, const char *fmt, ...) {
  nerr++;
  if (nmsg >= MAXMSG) return;
  nmsg++;
  char msg[512]; va_list ap; va_start(ap, fmt); vsnprintf(msg, sizeof msg, fmt, ap); va_end(ap);
  if (o)
    printf("MISMATCH call=%ld coll=%s comm=%s mode=%s count=%d root=%d inplace=%d rank=%d wrank=%d P=%d type=%s op=%s gen=%d: %s\n",
           o->id, collname[o->coll], cname[o->ci], o->mode, o->n, o->root, o->inplace, o->r, wrank, o->P,
           o->red ? rtname[o->rtk] : mkname[o->mk], o->red ? opname[o->opk] : "-", o->gen, msg);
  else
    printf("MISMATCH wrank=%d: %s\n", wrank, msg);
  fflush(stdout);
}

static void hexel(char *s, const uint8_t *p, int es) {
  for (int i = 0; i < es; i++) sprintf(s + 2 * i, "%02x", p[i]);
}

static void check_guards(Op *o, gbuf *b, const char *which) {
  if (!b->raw) return;
  for (int i = 0; i < G; i++) {
    if (b->raw[i] != (uint8_t)(0xA5 ^ i)) { report(o, "%s front guard overwritten at -%d (got %02x)", which, G - i, b->raw[i]); return; }
    if (b->raw[G + b->n + i] != (uint8_t)(0x5A ^ i)) {
      report(o, "%s back guard overwritten at +%d past end (len %zu bytes, got %02x)", which, i, b->n, b->raw[G + b->n + i]);
      return;
    }
  }
}

/* pick op parameters */
static int op_setup(Op *o, long id) {
  memset(o, 0, sizeof *o);
  rng_t g = {mix2(g_seed ^ 0xC0FFEE, (uint64_t)id)};
  o->id = id; o->req = MPI_REQUEST_NULL;
  o->ci = rb(&g, 4);
  o->coll = rb(&g, NCOLL);
  if (g_only_coll >= 0) o->coll = g_only_coll;
  o->comm = comms[o->ci];
  uint32_t rootdraw = rb(&g, 1 << 20);
  int ipdraw = rb(&g, 100) < 30;
  o->mk = rb(&g, 3); o->es = o->mk == 2 ? 4 : 1;
  o->dt = o->mk == 0 ? MPI_BYTE : o->mk == 1 ? MPI_CHAR : MPI_INT;
  o->opk = rb(&g, 6);
  if (o->opk == OP_BAND || o->opk == OP_UC) o->rtk = 0;
  else if (o->opk == OP_UNC) o->rtk = 2;
  else o->rtk = rb(&g, 2);
  o->snull = rb(&g, 2); o->rnull = rb(&g, 2); o->ipnull = rb(&g, 2);
  o->n = draw_count(&g);
  if (o->comm == MPI_COMM_NULL) return 0;
  MPI_Comm_size(o->comm, &o->P); MPI_Comm_rank(o->comm, &o->r);
  int P = o->P, r = o->r;
  o->root = rootdraw % P;
  int c = o->coll;
  o->red = c >= C_REDUCE;
  if (o->red) {
    o->es = o->rtk == 0 ? 4 : 8;
    o->dt = o->rtk == 0 ? MPI_INT : o->rtk == 1 ? MPI_DOUBLE : pairt;
    o->mop = o->opk == OP_SUM ? MPI_SUM : o->opk == OP_MAX ? MPI_MAX : o->opk == OP_MIN ? MPI_MIN :
             o->opk == OP_BAND ? MPI_BAND : o->opk == OP_UC ? uc_op : unc_op;
  }
  int allow_ip = c == C_ALLGATHER || c == C_ALLGATHERV || c == C_ALLTOALL || c == C_ALLTOALLV || c == C_ALLREDUCE ||
                 c == C_RSCAT || c == C_RSCATB || c == C_SCAN || c == C_EXSCAN ||
                 ((c == C_REDUCE || c == C_GATHER || c == C_GATHERV || c == C_SCATTER || c == C_SCATTERV) && r == o->root);
  /* same decision on all ranks; for rooted ones only the root applies it */
  o->inplace = allow_ip && ipdraw;
#ifdef MPICH_VERSION
  /* native MPICH 4.0.2: MPI_Reduce with MPI_IN_PLACE at a root != 0 crashes for count >= ~512 ints
     (native/mpich_reduce_inplace.c) */
  if (g_wa && c == C_REDUCE && o->root != 0) o->inplace = 0;
#endif
  o->cnt = calloc(P, sizeof(int)); o->dsp = calloc(P, sizeof(int));
  o->sc = calloc(P, sizeof(int)); o->sd = calloc(P, sizeof(int));
  o->rc = calloc(P, sizeof(int)); o->rd = calloc(P, sizeof(int));
  int n = o->n, es = o->es;
  size_t sbytes = 0, rbytes = 0; int has_sb = 0, has_rb = 0;
  switch (c) {
    case C_BARRIER: break;
    case C_BCAST: has_rb = 1; rbytes = (size_t)n * es; break;
    case C_GATHER:
      if (!(o->inplace)) { has_sb = 1; sbytes = (size_t)n * es; }
      if (r == o->root) { has_rb = 1; rbytes = (size_t)P * n * es; }
      else if (!o->rnull) { has_rb = 1; rbytes = 16; }
      break;
    case C_GATHERV:
      for (int j = 0; j < P; j++) o->cnt[j] = draw_vcount(&g, n);
      o->ext = make_displs(&g, P, o->cnt, o->dsp);
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)o->cnt[r] * es; }
      if (r == o->root) { has_rb = 1; rbytes = (size_t)o->ext * es; }
      else if (!o->rnull) { has_rb = 1; rbytes = 16; }
      break;
    case C_SCATTER:
      if (r == o->root) { has_sb = 1; sbytes = (size_t)P * n * es; }
      else if (!o->snull) { has_sb = 1; sbytes = 16; }
      if (!o->inplace) { has_rb = 1; rbytes = (size_t)n * es; }
      break;
    case C_SCATTERV:
      for (int j = 0; j < P; j++) o->cnt[j] = draw_vcount(&g, n);
      o->ext = make_displs(&g, P, o->cnt, o->dsp);
      if (r == o->root) { has_sb = 1; sbytes = (size_t)o->ext * es; }
      else if (!o->snull) { has_sb = 1; sbytes = 16; }
      if (!o->inplace) { has_rb = 1; rbytes = (size_t)o->cnt[r] * es; }
      break;
    case C_ALLGATHER:
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)n * es; }
      has_rb = 1; rbytes = (size_t)P * n * es; break;
    case C_ALLGATHERV:
      for (int j = 0; j < P; j++) o->cnt[j] = draw_vcount(&g, n);
      o->ext = make_displs(&g, P, o->cnt, o->dsp);
#ifdef MPICH_VERSION
      /* native MPICH 4.0.2: allgatherv on 1 rank ignores displs[0] (native/mpich_allgatherv_p1.c) */
      if (g_wa && P == 1) o->dsp[0] = 0;
#endif
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)o->cnt[r] * es; }
      has_rb = 1; rbytes = (size_t)o->ext * es; break;
    case C_ALLTOALL: {
      int m = n / (P > 1 ? P / 2 + 1 : 1); o->n = n = m;
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)P * n * es; }
      has_rb = 1; rbytes = (size_t)P * n * es; break;
    }
    case C_ALLTOALLV: {
      int base = n / (P > 1 ? P / 2 + 1 : 1); o->n = base;
      int *C = malloc(sizeof(int) * P * P);
      for (int i = 0; i < P; i++) for (int j = 0; j < P; j++) C[i * P + j] = draw_vcount(&g, base);
      if (o->inplace) for (int i = 0; i < P; i++) for (int j = 0; j < i; j++) C[i * P + j] = C[j * P + i];
#ifdef OPEN_MPI
      /* native Open MPI 4.1.4 libnbc, in-place MPI_Ialltoallv: (a) some ranks with all-zero counts and others not
         leaves the communicator's next nonblocking collective hanging (native/ompi_ialltoallv_inplace_hang.c);
         (b) a zero-count block delivers wrong data into the following block
         (native/ompi_ialltoallv_inplace_zeroblock.c). Avoid: no zero counts unless all are zero. */
      if (g_wa && o->inplace) {
        int any = 0; for (int i = 0; i < P * P; i++) any |= C[i] != 0;
        if (any) for (int i = 0; i < P * P; i++) if (!C[i]) C[i] = 1;
      }
#endif
      for (int j = 0; j < P; j++) { o->sc[j] = C[r * P + j]; o->rc[j] = C[j * P + r]; }
      free(C);
      o->sext = make_displs(&g, P, o->sc, o->sd);
      o->rext = make_displs(&g, P, o->rc, o->rd);
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)o->sext * es; }
      has_rb = 1; rbytes = (size_t)o->rext * es; break;
    }
    case C_REDUCE:
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)n * es; }
      if (r == o->root) { has_rb = 1; rbytes = (size_t)n * es; }
      else if (!o->rnull) { has_rb = 1; rbytes = 16; }
      break;
    case C_ALLREDUCE: case C_SCAN: case C_EXSCAN:
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)n * es; }
      has_rb = 1; rbytes = (size_t)n * es; break;
    case C_RSCAT:
      o->T = 0;
      for (int j = 0; j < P; j++) { o->cnt[j] = draw_vcount(&g, n); o->T += o->cnt[j]; }
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)o->T * es; has_rb = 1; rbytes = (size_t)o->cnt[r] * es; }
      else { has_rb = 1; rbytes = (size_t)o->T * es; }
      break;
    case C_RSCATB: {
      int m = n / (P > 1 ? P / 2 + 1 : 1); o->n = n = m; o->T = n * P;
      if (!o->inplace) { has_sb = 1; sbytes = (size_t)o->T * es; has_rb = 1; rbytes = (size_t)n * es; }
      else { has_rb = 1; rbytes = (size_t)o->T * es; }
      break;
    }
  }
  o->has_sb = has_sb; o->has_rb = has_rb;
  if (has_sb) { galloc(&o->sb, sbytes); galloc(&o->scopy, sbytes); }
  if (has_rb) galloc(&o->rbuf, rbytes);
  return 1;
}

static void op_free(Op *o) {
  free(o->cnt); free(o->dsp); free(o->sc); free(o->sd); free(o->rc); free(o->rd);
  if (o->has_sb) { gfree(&o->sb); gfree(&o->scopy); }
  if (o->has_rb) gfree(&o->rbuf);
}

static void op_fill(Op *o, int gen) {
  o->gen = gen;
  int c = o->coll, P = o->P, r = o->r, n = o->n, es = o->es;
  uint8_t *sb = o->has_sb ? o->sb.p : NULL, *rbp = o->has_rb ? o->rbuf.p : NULL;
  if (o->has_rb) memset(rbp, 0xEE, o->rbuf.n);
  if (o->has_sb) memset(sb, 0xDD, o->sb.n);
  long id = o->id;
  switch (c) {
    case C_BARRIER: break;
    case C_BCAST: if (r == o->root) fill_move(rbp, o->mk, n, K(id, gen, r, 0)); break;
    case C_GATHER:
      if (o->inplace) fill_move(rbp + (size_t)r * n * es, o->mk, n, K(id, gen, r, 0));
      else fill_move(sb, o->mk, n, K(id, gen, r, 0));
      break;
    case C_GATHERV: case C_ALLGATHERV:
      if (o->inplace) fill_move(rbp + (size_t)o->dsp[r] * es, o->mk, o->cnt[r], K(id, gen, r, 0));
      else fill_move(sb, o->mk, o->cnt[r], K(id, gen, r, 0));
      break;
    case C_ALLGATHER:
      if (o->inplace) fill_move(rbp + (size_t)r * n * es, o->mk, n, K(id, gen, r, 0));
      else fill_move(sb, o->mk, n, K(id, gen, r, 0));
      break;
    case C_SCATTER:
      if (r == o->root) for (int j = 0; j < P; j++) fill_move(sb + (size_t)j * n * es, o->mk, n, K(id, gen, r, j));
      break;
    case C_SCATTERV:
      if (r == o->root) for (int j = 0; j < P; j++) fill_move(sb + (size_t)o->dsp[j] * es, o->mk, o->cnt[j], K(id, gen, r, j));
      break;
    case C_ALLTOALL:
      for (int j = 0; j < P; j++) fill_move((o->inplace ? rbp : sb) + (size_t)j * n * es, o->mk, n, K(id, gen, r, j));
      break;
    case C_ALLTOALLV:
      for (int j = 0; j < P; j++) {
        if (o->inplace) fill_move(rbp + (size_t)o->rd[j] * es, o->mk, o->rc[j], K(id, gen, r, j));
        else fill_move(sb + (size_t)o->sd[j] * es, o->mk, o->sc[j], K(id, gen, r, j));
      }
      break;
    case C_REDUCE: case C_ALLREDUCE: case C_SCAN: case C_EXSCAN:
      fill_red(o->inplace ? rbp : sb, o->rtk, o->opk, n, K(id, gen, r, 0));
      break;
    case C_RSCAT: case C_RSCATB:
      fill_red(o->inplace ? rbp : sb, o->rtk, o->opk, o->T, K(id, gen, r, 0));
      break;
  }
  if (o->has_sb) memcpy(o->scopy.p, sb, o->sb.n);
}

static void *fold_all(Op *o, int upto, int nel) {
  /* fold ranks 0..upto-1 of nel elements */
  size_t bytes = (size_t)nel * o->es + 8;
  void *acc = malloc(bytes), *tmp = malloc(bytes);
  fill_red(acc, o->rtk, o->opk, nel, K(o->id, o->gen, 0, 0));
  for (int j = 1; j < upto; j++) { fill_red(tmp, o->rtk, o->opk, nel, K(o->id, o->gen, j, 0)); fold(acc, tmp, o->rtk, o->opk, nel); }
  free(tmp);
  return acc;
}

static void op_check(Op *o) {
  int c = o->coll, P = o->P, r = o->r, n = o->n, es = o->es, gen = o->gen;
  long id = o->id;
  static long inj = -2; if (inj == -2) inj = getenv("FUZZ_INJECT") ? atol(getenv("FUZZ_INJECT")) : -1;
  if (o->id == inj && o->has_rb) { o->rbuf.p[0] ^= 1; o->rbuf.raw[G + o->rbuf.n] ^= 1; }
  check_guards(o, &o->sb, "sendbuf");
  check_guards(o, &o->rbuf, "recvbuf");
  if (o->has_sb && memcmp(o->sb.p, o->scopy.p, o->sb.n)) {
    size_t i = 0; while (o->sb.p[i] == o->scopy.p[i]) i++;
    report(o, "sendbuf modified at byte %zu", i);
  }
  if (!o->has_rb) return;
  size_t nb = o->rbuf.n;
  uint8_t *exp = malloc(nb + 8), *care = malloc(nb + 8);
  memset(exp, 0xEE, nb); memset(care, 1, nb);
  int signif = 1;
  switch (c) {
    case C_BCAST: fill_move(exp, o->mk, n, K(id, gen, o->root, 0)); break;
    case C_GATHER:
      if (r == o->root) for (int j = 0; j < P; j++) fill_move(exp + (size_t)j * n * es, o->mk, n, K(id, gen, j, 0));
      break; /* non-root: must stay untouched */
    case C_GATHERV:
      if (r == o->root) for (int j = 0; j < P; j++) fill_move(exp + (size_t)o->dsp[j] * es, o->mk, o->cnt[j], K(id, gen, j, 0));
      break;
    case C_SCATTER: fill_move(exp, o->mk, n, K(id, gen, o->root, r)); break;
    case C_SCATTERV: fill_move(exp, o->mk, o->cnt[r], K(id, gen, o->root, r)); break;
    case C_ALLGATHER: for (int j = 0; j < P; j++) fill_move(exp + (size_t)j * n * es, o->mk, n, K(id, gen, j, 0)); break;
    case C_ALLGATHERV: for (int j = 0; j < P; j++) fill_move(exp + (size_t)o->dsp[j] * es, o->mk, o->cnt[j], K(id, gen, j, 0)); break;
    case C_ALLTOALL: for (int j = 0; j < P; j++) fill_move(exp + (size_t)j * n * es, o->mk, n, K(id, gen, j, r)); break;
    case C_ALLTOALLV: for (int j = 0; j < P; j++) fill_move(exp + (size_t)o->rd[j] * es, o->mk, o->rc[j], K(id, gen, j, r)); break;
    case C_REDUCE:
      if (r != o->root) { signif = 1; break; } /* insignificant buffer: must stay untouched */
      /* fallthrough */
    case C_ALLREDUCE: { void *a = fold_all(o, P, n); memcpy(exp, a, (size_t)n * es); free(a); break; }
    case C_SCAN: { void *a = fold_all(o, r + 1, n); memcpy(exp, a, (size_t)n * es); free(a); break; }
    case C_EXSCAN:
      if (r == 0) { memset(care, 0, nb); break; }
      { void *a = fold_all(o, r, n); memcpy(exp, a, (size_t)n * es); free(a); break; }
    case C_RSCAT: case C_RSCATB: {
      void *a = fold_all(o, P, o->T);
      int off = 0, mine = c == C_RSCAT ? o->cnt[r] : n;
      if (c == C_RSCAT) for (int j = 0; j < r; j++) off += o->cnt[j]; else off = r * n;
      memcpy(exp, (uint8_t *)a + (size_t)off * es, (size_t)mine * es);
      if (o->inplace) memset(care + (size_t)mine * es, 0, nb - (size_t)mine * es);
      free(a);
      break;
    }
  }
  (void)signif;
  for (size_t i = 0; i < nb; i++) {
    if (care[i] && exp[i] != o->rbuf.p[i]) {
      size_t bad = 0; for (size_t k = i; k < nb; k++) bad += care[k] && exp[k] != o->rbuf.p[k];
      size_t el = i / es; char e[40], gbuf_[40];
      hexel(e, exp + el * es, es); hexel(gbuf_, o->rbuf.p + el * es, es);
      report(o, "recvbuf first bad elem %zu (byte %zu of %zu) expected=%s got=%s bad_bytes=%zu", el, i, nb, e, gbuf_, bad);
      break;
    }
  }
  free(exp); free(care);
}

static long g_from = 0, g_to = -1;
static int op_setup_w(Op *o, long id) {
  int p = op_setup(o, id);
  if (p && (id < g_from || (g_to >= 0 && id > g_to))) { op_free(o); o->comm = MPI_COMM_NULL; return 0; }
  return p;
}
/* mode: 0 blocking, 1 nonblocking, 2 persistent init */
#if MPI_VERSION >= 4
#define CALL3(B, I, Q) (mode == 0 ? (B) : mode == 1 ? (I) : (Q))
#else
#define CALL3(B, I, Q) (mode == 0 ? (B) : (I))
#endif
static int op_post(Op *o, int mode) {
  int P = o->P, r = o->r, n = o->n, root = o->root, ip = o->inplace;
  MPI_Comm cm = o->comm; MPI_Datatype dt = o->dt; MPI_Request *q = &o->req;
  void *sb = o->has_sb ? o->sb.p : NULL, *rbp = o->has_rb ? o->rbuf.p : NULL;
  MPI_Info inf = MPI_INFO_NULL; (void)inf; (void)P;
  int rc = MPI_SUCCESS;
  switch (o->coll) {
    case C_BARRIER: rc = CALL3(MPI_Barrier(cm), MPI_Ibarrier(cm, q), MPI_Barrier_init(cm, inf, q)); break;
    case C_BCAST: rc = CALL3(MPI_Bcast(rbp, n, dt, root, cm), MPI_Ibcast(rbp, n, dt, root, cm, q),
                             MPI_Bcast_init(rbp, n, dt, root, cm, inf, q)); break;
    case C_GATHER: {
      void *s = ip ? MPI_IN_PLACE : sb; int scount = (ip && o->ipnull) ? 0 : n; MPI_Datatype st = (ip && o->ipnull) ? MPI_DATATYPE_NULL : dt;
      rc = CALL3(MPI_Gather(s, scount, st, rbp, n, dt, root, cm), MPI_Igather(s, scount, st, rbp, n, dt, root, cm, q),
                 MPI_Gather_init(s, scount, st, rbp, n, dt, root, cm, inf, q));
      break;
    }
    case C_GATHERV: {
      void *s = ip ? MPI_IN_PLACE : sb; int scount = ip ? 0 : o->cnt[r];
      int *rcn = (r == root || !o->rnull) ? o->cnt : NULL, *rdp = (r == root || !o->rnull) ? o->dsp : NULL;
      rc = CALL3(MPI_Gatherv(s, scount, dt, rbp, rcn, rdp, dt, root, cm), MPI_Igatherv(s, scount, dt, rbp, rcn, rdp, dt, root, cm, q),
                 MPI_Gatherv_init(s, scount, dt, rbp, rcn, rdp, dt, root, cm, inf, q));
      break;
    }
    case C_SCATTER: {
      void *rr = ip ? MPI_IN_PLACE : rbp;
      rc = CALL3(MPI_Scatter(sb, n, dt, rr, n, dt, root, cm), MPI_Iscatter(sb, n, dt, rr, n, dt, root, cm, q),
                 MPI_Scatter_init(sb, n, dt, rr, n, dt, root, cm, inf, q));
      break;
    }
    case C_SCATTERV: {
      void *rr = ip ? MPI_IN_PLACE : rbp; int rcount = o->cnt[r];
      int *scn = (r == root || !o->snull) ? o->cnt : NULL, *sdp = (r == root || !o->snull) ? o->dsp : NULL;
      rc = CALL3(MPI_Scatterv(sb, scn, sdp, dt, rr, rcount, dt, root, cm), MPI_Iscatterv(sb, scn, sdp, dt, rr, rcount, dt, root, cm, q),
                 MPI_Scatterv_init(sb, scn, sdp, dt, rr, rcount, dt, root, cm, inf, q));
      break;
    }
    case C_ALLGATHER: {
      void *s = ip ? MPI_IN_PLACE : sb; int scount = (ip && o->ipnull) ? 0 : n; MPI_Datatype st = (ip && o->ipnull) ? MPI_DATATYPE_NULL : dt;
      rc = CALL3(MPI_Allgather(s, scount, st, rbp, n, dt, cm), MPI_Iallgather(s, scount, st, rbp, n, dt, cm, q),
                 MPI_Allgather_init(s, scount, st, rbp, n, dt, cm, inf, q));
      break;
    }
    case C_ALLGATHERV: {
      void *s = ip ? MPI_IN_PLACE : sb; int scount = ip ? 0 : o->cnt[r];
      rc = CALL3(MPI_Allgatherv(s, scount, dt, rbp, o->cnt, o->dsp, dt, cm), MPI_Iallgatherv(s, scount, dt, rbp, o->cnt, o->dsp, dt, cm, q),
                 MPI_Allgatherv_init(s, scount, dt, rbp, o->cnt, o->dsp, dt, cm, inf, q));
      break;
    }
    case C_ALLTOALL: {
      void *s = ip ? MPI_IN_PLACE : sb; int scount = (ip && o->ipnull) ? 0 : n; MPI_Datatype st = (ip && o->ipnull) ? MPI_DATATYPE_NULL : dt;
      rc = CALL3(MPI_Alltoall(s, scount, st, rbp, n, dt, cm), MPI_Ialltoall(s, scount, st, rbp, n, dt, cm, q),
                 MPI_Alltoall_init(s, scount, st, rbp, n, dt, cm, inf, q));
      break;
    }
    case C_ALLTOALLV: {
      void *s = ip ? MPI_IN_PLACE : sb;
      int *scn = (ip && o->ipnull) ? NULL : o->sc, *sdp = (ip && o->ipnull) ? NULL : o->sd;
      MPI_Datatype st = (ip && o->ipnull) ? MPI_DATATYPE_NULL : dt;
      rc = CALL3(MPI_Alltoallv(s, scn, sdp, st, rbp, o->rc, o->rd, dt, cm), MPI_Ialltoallv(s, scn, sdp, st, rbp, o->rc, o->rd, dt, cm, q),
                 MPI_Alltoallv_init(s, scn, sdp, st, rbp, o->rc, o->rd, dt, cm, inf, q));
      break;
    }
    case C_REDUCE: {
      void *s = ip ? MPI_IN_PLACE : sb;
      rc = CALL3(MPI_Reduce(s, rbp, n, dt, o->mop, root, cm), MPI_Ireduce(s, rbp, n, dt, o->mop, root, cm, q),
                 MPI_Reduce_init(s, rbp, n, dt, o->mop, root, cm, inf, q));
      break;
    }
    case C_ALLREDUCE: {
      void *s = ip ? MPI_IN_PLACE : sb;
      rc = CALL3(MPI_Allreduce(s, rbp, n, dt, o->mop, cm), MPI_Iallreduce(s, rbp, n, dt, o->mop, cm, q),
                 MPI_Allreduce_init(s, rbp, n, dt, o->mop, cm, inf, q));
      break;
    }
    case C_SCAN: {
      void *s = ip ? MPI_IN_PLACE : sb;
      rc = CALL3(MPI_Scan(s, rbp, n, dt, o->mop, cm), MPI_Iscan(s, rbp, n, dt, o->mop, cm, q),
                 MPI_Scan_init(s, rbp, n, dt, o->mop, cm, inf, q));
      break;
    }
    case C_EXSCAN: {
      void *s = ip ? MPI_IN_PLACE : sb;
      rc = CALL3(MPI_Exscan(s, rbp, n, dt, o->mop, cm), MPI_Iexscan(s, rbp, n, dt, o->mop, cm, q),
                 MPI_Exscan_init(s, rbp, n, dt, o->mop, cm, inf, q));
      break;
    }
    case C_RSCAT: {
      void *s = ip ? MPI_IN_PLACE : sb;
      rc = CALL3(MPI_Reduce_scatter(s, rbp, o->cnt, dt, o->mop, cm), MPI_Ireduce_scatter(s, rbp, o->cnt, dt, o->mop, cm, q),
                 MPI_Reduce_scatter_init(s, rbp, o->cnt, dt, o->mop, cm, inf, q));
      break;
    }
    case C_RSCATB: {
      void *s = ip ? MPI_IN_PLACE : sb;
      rc = CALL3(MPI_Reduce_scatter_block(s, rbp, n, dt, o->mop, cm), MPI_Ireduce_scatter_block(s, rbp, n, dt, o->mop, cm, q),
                 MPI_Reduce_scatter_block_init(s, rbp, n, dt, o->mop, cm, inf, q));
      break;
    }
  }
  if (rc != MPI_SUCCESS) {
    char es[MPI_MAX_ERROR_STRING]; int l = 0; MPI_Error_string(rc, es, &l);
    report(o, "post returned error %d (%s)", rc, es);
  }
  return rc;
}

static void trace(Op *o) {
  if (!g_trace) return;
  printf("TRACE wrank=%d call=%ld coll=%s comm=%s mode=%s n=%d root=%d ip=%d P=%d r=%d type=%s op=%s\n", wrank, o->id,
         collname[o->coll], cname[o->ci], o->mode, o->n, o->root, o->inplace, o->P, o->r,
         o->red ? rtname[o->rtk] : mkname[o->mk], o->red ? opname[o->opk] : "-");
  if (g_trace > 1) {
    int *arrs[6] = {o->cnt, o->dsp, o->sc, o->sd, o->rc, o->rd}; const char *an[6] = {"cnt", "dsp", "sc", "sd", "rc", "rd"};
    for (int a = 0; a < 6; a++) { printf("  wrank=%d %s:", wrank, an[a]); for (int j = 0; j < o->P; j++) printf(" %d", arrs[a][j]); printf("\n"); }
    printf("  wrank=%d snull=%d rnull=%d ipnull=%d ext=%d sext=%d rext=%d T=%d\n", wrank, o->snull, o->rnull, o->ipnull, o->ext, o->sext, o->rext, o->T);
  }
  fflush(stdout);
}

static void rc_check(int rc, const char *what, long id) {
  if (rc != MPI_SUCCESS) {
    char es[MPI_MAX_ERROR_STRING]; int l = 0; MPI_Error_string(rc, es, &l);
    char m[600]; snprintf(m, sizeof m, "batch at call=%ld: %s returned %d (%s)", id, what, rc, es);
    report(NULL, "%s", m);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank); MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (argc < 3) { if (!wrank) fprintf(stderr, "usage: test_mpi_fuzz SEED NCALLS [only_coll] [only_mode] [trace] [nopersist]\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
  g_seed = strtoull(argv[1], 0, 10);
  if (getenv("FUZZ_NATIVE_WA")) g_wa = atoi(getenv("FUZZ_NATIVE_WA")) != 0;
  if (getenv("FUZZ_FROM")) g_from = atol(getenv("FUZZ_FROM"));
  if (getenv("FUZZ_TO")) g_to = atol(getenv("FUZZ_TO"));
  long ncalls = atol(argv[2]);
  if (argc > 3) g_only_coll = atoi(argv[3]);
  if (argc > 4) g_only_mode = atoi(argv[4]);
  if (argc > 5) g_trace = atol(argv[5]);
  if (argc > 6) g_nopersist = atoi(argv[6]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  comms[0] = MPI_COMM_WORLD;
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2 ? 0 : 1, wsize - wrank, &comms[2]);
  MPI_Comm_split(MPI_COMM_WORLD, wrank == wsize - 1 ? MPI_UNDEFINED : 0, wrank, &comms[3]);
  for (int i = 1; i < 4; i++) if (comms[i] != MPI_COMM_NULL) MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
  MPI_Type_contiguous(2, MPI_INT, &pairt); MPI_Type_commit(&pairt);
  MPI_Op_create(uc_fn, 1, &uc_op);
  MPI_Op_create(unc_fn, 0, &unc_op);

  double t0 = MPI_Wtime();
  long id = 0, batch = 0;
  while (id < ncalls) {
    rng_t g = {mix2(g_seed ^ 0xBA7C4, (uint64_t)batch++)};
    uint32_t m = rb(&g, 100);
    int mode = m < 55 ? 0 : m < 90 ? 1 : 2;
#if MPI_VERSION < 4
    if (mode == 2) mode = 1;
#endif
    if (g_nopersist && mode == 2) mode = 1;
    if (g_only_mode >= 0) mode = g_only_mode;
    if (mode == 0) {
      Op o;
      int part = op_setup_w(&o, id++);
      o.mode = "blocking";
      if (part) {
        op_fill(&o, 0); trace(&o);
        if (op_post(&o, 0) == MPI_SUCCESS) op_check(&o);
        op_free(&o);
      }
    } else if (mode == 1) {
      int k = 1 + rb(&g, 4), how = rb(&g, 4), ring = rb(&g, 4) == 0, ringpos = rb(&g, k + 1);
      int rlen = rb(&g, 2000);
      static const char *hows[] = {"nb-waitall", "nb-waitany", "nb-testall", "nb-waitrev"};
      Op ops[4]; int part[4];
      MPI_Request reqs[6]; MPI_Status sts[6]; int nr = 0; int idx[6]; /* idx: op index or -1/-2 for ring */
      int *rsend = NULL, *rrecv = NULL; long bid = id;
      for (int i = 0; i < k; i++) {
        part[i] = op_setup_w(&ops[i], id++);
        ops[i].mode = hows[how];
      }
      for (int i = 0; i <= k; i++) {
        if (ring && i == ringpos && bid >= g_from && (g_to < 0 || bid <= g_to)) {
          rsend = malloc(sizeof(int) * (rlen + 1)); rrecv = malloc(sizeof(int) * (rlen + 1));
          fill_move(rsend, 2, rlen, K(bid, 99, wrank, 0)); memset(rrecv, 0xEE, sizeof(int) * rlen);
          int to = (wrank + 1) % wsize, from = (wrank + wsize - 1) % wsize;
          if (rb(&g, 2)) {
            MPI_Irecv(rrecv, rlen, MPI_INT, from, 77, comms[1], &reqs[nr]); idx[nr++] = -2;
            MPI_Isend(rsend, rlen, MPI_INT, to, 77, comms[1], &reqs[nr]); idx[nr++] = -1;
          } else {
            MPI_Isend(rsend, rlen, MPI_INT, to, 77, MPI_COMM_WORLD, &reqs[nr]); idx[nr++] = -1;
            MPI_Irecv(rrecv, rlen, MPI_INT, from, 77, MPI_COMM_WORLD, &reqs[nr]); idx[nr++] = -2;
          }
        }
        if (i < k && part[i]) {
          op_fill(&ops[i], 0); trace(&ops[i]);
          if (op_post(&ops[i], 1) == MPI_SUCCESS) { reqs[nr] = ops[i].req; idx[nr++] = i; }
          else part[i] = 0;
        }
      }
      if (getenv("FUZZ_HOW")) how = atoi(getenv("FUZZ_HOW"));
      if (g_trace) { printf("TRACE wrank=%d batch call=%ld k=%d how=%d ring=%d ringpos=%d rlen=%d nr=%d\n", wrank, bid, k, how, ring, ringpos, rlen, nr); fflush(stdout); }
      int rc;
      if (how == 0) { rc = MPI_Waitall(nr, reqs, sts); rc_check(rc, "MPI_Waitall", bid); }
      else if (how == 1) {
        for (;;) { int ix; rc = MPI_Waitany(nr, reqs, &ix, MPI_STATUS_IGNORE); rc_check(rc, "MPI_Waitany", bid); if (rc || ix == MPI_UNDEFINED) break; }
      } else if (how == 2) {
        int flag = 0; long spins = 0;
        while (!flag) { rc = MPI_Testall(nr, reqs, &flag, sts); rc_check(rc, "MPI_Testall", bid); if (rc) break; spins++;
          if (spins == 20000000) { for (int q = 0; q < nr; q++) { int f = -1; if (reqs[q] != MPI_REQUEST_NULL) MPI_Request_get_status(reqs[q], &f, MPI_STATUS_IGNORE);
              printf("STUCK wrank=%d batch=%ld req %d idx %d op=%s comm=%s done=%d\n", wrank, bid, q, idx[q], idx[q] >= 0 ? collname[ops[idx[q]].coll] : "ring", idx[q] >= 0 ? cname[ops[idx[q]].ci] : "-", f); } fflush(stdout); } }
      } else {
        for (int i = nr - 1; i >= 0; i--) { rc = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE); rc_check(rc, "MPI_Wait", bid); }
      }
      for (int i = 0; i < nr; i++) if (reqs[i] != MPI_REQUEST_NULL) report(NULL, "batch call=%ld request %d not MPI_REQUEST_NULL after completion", bid, i);
      for (int i = 0; i < k; i++) if (part[i]) op_check(&ops[i]);
      for (int i = 0; i < k; i++) if (ops[i].comm != MPI_COMM_NULL) op_free(&ops[i]);
      if (rsend) {
        int from = (wrank + wsize - 1) % wsize;
        int *e = malloc(sizeof(int) * (rlen + 1)); fill_move(e, 2, rlen, K(bid, 99, from, 0));
        if (memcmp(e, rrecv, sizeof(int) * rlen)) report(NULL, "ring exchange data wrong at batch call=%ld", bid);
        free(e); free(rsend); free(rrecv);
      }
    } else {
#if MPI_VERSION >= 4
      int k = 1 + rb(&g, 3), nst = 1 + rb(&g, 3), useall = rb(&g, 2);
      Op ops[3]; int part[3]; MPI_Request reqs[3]; MPI_Status sts[3]; int nr = 0, map[3]; long bid = id;
      for (int i = 0; i < k; i++) { part[i] = op_setup_w(&ops[i], id++); ops[i].mode = useall ? "persist-startall" : "persist-start"; }
      for (int i = 0; i < k; i++) if (part[i]) {
        op_fill(&ops[i], 0); trace(&ops[i]);
        if (op_post(&ops[i], 2) == MPI_SUCCESS) { reqs[nr] = ops[i].req; map[nr++] = i; } else part[i] = 0;
      }
      for (int s = 0; s < nst; s++) {
        for (int j = 0; j < nr; j++) op_fill(&ops[map[j]], s + 1);
        int rc;
        if (useall) { rc = MPI_Startall(nr, reqs); rc_check(rc, "MPI_Startall", bid); }
        else for (int j = 0; j < nr; j++) { rc = MPI_Start(&reqs[j]); rc_check(rc, "MPI_Start", bid); }
        rc = MPI_Waitall(nr, reqs, sts); rc_check(rc, "MPI_Waitall(persistent)", bid);
        for (int j = 0; j < nr; j++) op_check(&ops[map[j]]);
      }
      for (int j = 0; j < nr; j++) { int rc = MPI_Request_free(&reqs[j]); rc_check(rc, "MPI_Request_free", bid); }
      for (int i = 0; i < k; i++) if (ops[i].comm != MPI_COMM_NULL) op_free(&ops[i]);
#endif
    }
  }
  double t1 = MPI_Wtime();
  int bad = nerr > 0, anybad = 0;
  PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (nerr) printf("rank %d: %d mismatches\n", wrank, nerr);
  if (!wrank) {
    if (!anybad) printf("OK test_mpi_fuzz calls=%ld seed=%llu np=%d time=%.2fs\n", ncalls, (unsigned long long)g_seed, wsize, t1 - t0);
    else printf("FAIL test_mpi_fuzz calls=%ld seed=%llu np=%d time=%.2fs\n", ncalls, (unsigned long long)g_seed, wsize, t1 - t0);
  }
  MPI_Op_free(&uc_op); MPI_Op_free(&unc_op); MPI_Type_free(&pairt);
  for (int i = 1; i < 4; i++) if (comms[i] != MPI_COMM_NULL) MPI_Comm_free(&comms[i]);
  MPI_Finalize();
  return anybad ? 1 : 0;
}
