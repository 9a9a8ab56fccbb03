/* librcoll-mpi, the collectives besides MPI_Barrier (rcoll_mpi.c): MPI_Allgather, MPI_Alltoall,
 * MPI_Bcast, MPI_Gather, MPI_Scatter and the v-forms MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv,
 * MPI_Scatterv, on rcoll's byte-counted calls. Each has a body (rmpi_body_<coll>: the checks,
 * packing and the rcoll call once the route is decided) that its blocking wrapper here and its
 * nonblocking and persistent wrappers in rcoll_mpi_nb.c share: given a plan (rmpi_plan_t) the
 * body posts rcoll_i<coll> or binds rcoll_<coll>_init instead of calling rcoll_<coll>, and the
 * plan records the packing before and the unpacking after the call and owns the temporaries.
 * The rules of rcoll_mpi.c's first comment hold; what is particular to these:
 * - rcoll or PMPI_ is decided from the communicator (its team) and the root, as every rank
 *   knows them, and for the forms without v from a count of zero: MPI's type-signature rule
 *   makes it zero on every rank then, so every rank goes to PMPI_, which returns at once (and
 *   checks the other arguments), and rcoll's sequence numbers are untouched. Never from a v-form's
 *   counts, displacements or datatypes, which the other ranks cannot see. An invalid root goes
 *   to PMPI_, which reports it. A v-form rank whose counts are all zero still calls rcoll: it
 *   takes the call's sequence number and leaves without waiting for anyone.
 * - An argument MPI calls insignificant on this rank (the receive side of a gather and the send
 *   side of a scatter off the root, the send side of an in-place call) is never read.
 * - A plain datatype (its bytes back to back, see layout_is_plain) passes straight through:
 *   bytes = count * size, byte displacements = displ * extent. Any other datatype, and a v-form
 *   side with a negative displacement, goes through a contiguous temporary holding the blocks
 *   back to back in rank order: packed (PMPI_Pack) before the call, unpacked after. A block the
 *   caller holds in place is packed before and not unpacked.
 * - A local problem (invalid count or type, sizes that differ between the send and receive
 *   side, aliased buffers, MPI_IN_PLACE where MPI forbids it, no memory) prints
 *   "rcoll: MPI_<Coll>: rank R of P: <what>" and raises the MPI error class through the
 *   communicator's error handler, as does an rcoll error (rmpi_rcoll_failed). Its peers may
 *   already be in the call: where the sizes they expect are known (one side of the call is
 *   valid), the rank first takes part with scratch buffers (see "Erroneous calls" below).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rcoll_mpi_internal.h"

#define NONE (-1) /* no block to skip */

/* One call: its communicator, name (for the messages), team and plan (rcoll_mpi_internal.h). */
typedef rmpi_call_t call_t;

/* A non-NULL stand-in for a NULL buffer of zero bytes (MPI allows it, rcoll wants an address). */
static char dummy[1];

/* A temporary of the call: freed by c_free after a blocking call, owned by the plan otherwise. */
static void *c_alloc(const call_t *c, size_t n)
{
    return c->plan ? rmpi_plan_alloc(c->plan, n ? n : 1) : malloc(n ? n : 1);
}

static void c_free(const call_t *c, void *p)
{
    if (!c->plan)
        free(p);
}

static int fail(const call_t *c, int code, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, "rank %d of %d: %s", c->rank, c->size, what);
    return rmpi_local_failed(c->comm, code, c->name, msg);
}

static int finish(const call_t *c, rcoll_status_t st)
{
    return st == RCOLL_OK ? MPI_SUCCESS : rmpi_rcoll_failed(c->team, st, c->comm);
}

/* 1 if rcoll runs the call, 0 for PMPI_: the same answer on every rank. */
int rmpi_call_start(call_t *c, MPI_Comm comm, const char *name)
{
    c->comm = comm;
    c->name = name;
    c->plan = NULL;
    c->team = rmpi_team_for(comm);
    if (c->team == NULL)
        return 0;
    c->rank = rcoll_team_rank(c->team);
    c->size = rcoll_team_size(c->team);
    return 1;
}

static int start(call_t *c, MPI_Comm comm, const char *name)
{
    return rmpi_call_start(c, comm, name);
}

/* The same for a rooted collective: an invalid root is left to PMPI_ to report. */
static int start_rooted(call_t *c, MPI_Comm comm, const char *name, int root)
{
    return start(c, comm, name) && root >= 0 && root < c->size;
}

/* The datatype and the bytes of `count` elements of it. */
static int typed(const call_t *c, MPI_Datatype type, int count, rmpi_dtype_t *d, size_t *bytes)
{
    if (rmpi_dtype(type, d) != MPI_SUCCESS)
        return fail(c, MPI_ERR_TYPE, "invalid datatype");
    if (rmpi_bytes(count, d, bytes) != MPI_SUCCESS)
        return fail(c, MPI_ERR_COUNT, "negative count or message too large");
    return MPI_SUCCESS;
}

static int no_mem(const call_t *c)
{
    return fail(c, MPI_ERR_NO_MEM, "out of memory for the packing buffer");
}

static int mismatch(const call_t *c)
{
    return fail(c, MPI_ERR_TRUNCATE, "send and receive sizes differ (type signature mismatch)");
}

static int aliased(const call_t *c)
{
    return fail(c, MPI_ERR_BUFFER, "send and receive buffer alias (use MPI_IN_PLACE)");
}

/* The steps around the rcoll call: done at once by a blocking call, recorded by a plan (run
 * before the call at each post or start, resp. after it completes). An MPI error code. */
static int do_pack(const call_t *c, const void *in, size_t count, const rmpi_dtype_t *d, char *out)
{
    if (c->plan)
        return rmpi_plan_step(c->plan, 0, RMPI_STEP_PACK, in, count, d, out);
    return rmpi_pack(in, count, d, out, c->comm);
}

static int do_unpack(const call_t *c, int after, const char *in, size_t count,
                     const rmpi_dtype_t *d, void *out)
{
    if (c->plan)
        return rmpi_plan_step(c->plan, after, RMPI_STEP_UNPACK, in, count, d, out);
    return rmpi_unpack(in, count, d, out, c->comm);
}

static int copy_before(const call_t *c, void *out, const void *in, size_t bytes)
{
    if (c->plan)
        return rmpi_plan_step(c->plan, 0, RMPI_STEP_COPY, in, bytes, NULL, out);
    if (bytes)
        memcpy(out, in, bytes);
    return MPI_SUCCESS;
}

static int pack(const call_t *c, const void *in, size_t count, const rmpi_dtype_t *d, char *out)
{
    int rc = do_pack(c, in, count, d, out);
    return rc == MPI_SUCCESS ? rc : fail(c, rc, "PMPI_Pack of the send data failed");
}

/* Unpacks after the call. */
static int unpack(const call_t *c, const char *in, size_t count, const rmpi_dtype_t *d, void *out)
{
    int rc = do_unpack(c, 1, in, count, d, out);
    return rc == MPI_SUCCESS ? rc : fail(c, rc, "PMPI_Unpack of the received data failed");
}

/* ---- the rcoll call: at once, posted (nonblocking plan) or bound (persistent plan) ---- */

#define RUN(c, call, icall, initcall)                                                        \
    do {                                                                                     \
        if (!(c)->plan)                                                                      \
            return call;                                                                     \
        rcoll_request_t **q = rmpi_plan_request((c)->plan);                                  \
        return rmpi_plan_persistent((c)->plan) ? initcall : icall;                           \
    } while (0)

static rcoll_status_t run_allgather(const call_t *c, const void *s, void *r, size_t bytes)
{
    RUN(c, rcoll_allgather(c->team, s, r, bytes), rcoll_iallgather(c->team, s, r, bytes, q),
        rcoll_allgather_init(c->team, s, r, bytes, q));
}

static rcoll_status_t run_alltoall(const call_t *c, const void *s, void *r, size_t bytes)
{
    RUN(c, rcoll_alltoall(c->team, s, r, bytes), rcoll_ialltoall(c->team, s, r, bytes, q),
        rcoll_alltoall_init(c->team, s, r, bytes, q));
}

static rcoll_status_t run_bcast(const call_t *c, void *buf, size_t bytes, int root)
{
    RUN(c, rcoll_bcast(c->team, buf, bytes, root), rcoll_ibcast(c->team, buf, bytes, root, q),
        rcoll_bcast_init(c->team, buf, bytes, root, q));
}

static rcoll_status_t run_gather(const call_t *c, const void *s, void *r, size_t bytes, int root)
{
    RUN(c, rcoll_gather(c->team, s, r, bytes, root), rcoll_igather(c->team, s, r, bytes, root, q),
        rcoll_gather_init(c->team, s, r, bytes, root, q));
}

static rcoll_status_t run_scatter(const call_t *c, const void *s, void *r, size_t bytes, int root)
{
    RUN(c, rcoll_scatter(c->team, s, r, bytes, root),
        rcoll_iscatter(c->team, s, r, bytes, root, q),
        rcoll_scatter_init(c->team, s, r, bytes, root, q));
}

static rcoll_status_t run_allgatherv(const call_t *c, const void *s, size_t sbytes, void *r,
                                     const size_t *counts, const size_t *displs)
{
    RUN(c, rcoll_allgatherv(c->team, s, sbytes, r, counts, displs),
        rcoll_iallgatherv(c->team, s, sbytes, r, counts, displs, q),
        rcoll_allgatherv_init(c->team, s, sbytes, r, counts, displs, q));
}

static rcoll_status_t run_alltoallv(const call_t *c, const void *s, const size_t *scounts,
                                    const size_t *sdispls, void *r, const size_t *rcounts,
                                    const size_t *rdispls)
{
    RUN(c, rcoll_alltoallv(c->team, s, scounts, sdispls, r, rcounts, rdispls),
        rcoll_ialltoallv(c->team, s, scounts, sdispls, r, rcounts, rdispls, q),
        rcoll_alltoallv_init(c->team, s, scounts, sdispls, r, rcounts, rdispls, q));
}

static rcoll_status_t run_gatherv(const call_t *c, const void *s, size_t sbytes, void *r,
                                  const size_t *counts, const size_t *displs, int root)
{
    RUN(c, rcoll_gatherv(c->team, s, sbytes, r, counts, displs, root),
        rcoll_igatherv(c->team, s, sbytes, r, counts, displs, root, q),
        rcoll_gatherv_init(c->team, s, sbytes, r, counts, displs, root, q));
}

static rcoll_status_t run_scatterv(const call_t *c, const void *s, const size_t *counts,
                                   const size_t *displs, void *r, size_t rbytes, int root)
{
    RUN(c, rcoll_scatterv(c->team, s, counts, displs, r, rbytes, root),
        rcoll_iscatterv(c->team, s, counts, displs, r, rbytes, root, q),
        rcoll_scatterv_init(c->team, s, counts, displs, r, rbytes, root, q));
}

/* Block i of `count` elements of d in a typed buffer. */
static void *block_at(const void *buf, size_t i, int count, const rmpi_dtype_t *d)
{
    return rmpi_addr_add(buf, (MPI_Aint)i * (MPI_Aint)count * d->extent);
}

/* The send data as rcoll takes it: buf itself (plain datatype) or a packed copy in *tmp. */
static int send_view(const call_t *c, const void *buf, size_t count, const rmpi_dtype_t *d,
                     size_t bytes, const void **view, char **tmp)
{
    *tmp = NULL;
    *view = buf == NULL && bytes == 0 ? dummy : buf;
    if (d->plain)
        return MPI_SUCCESS;
    if ((*tmp = c_alloc(c, bytes)) == NULL)
        return no_mem(c);
    int rc = pack(c, buf, count, d, *tmp);
    if (rc != MPI_SUCCESS) {
        c_free(c, *tmp);
        *tmp = NULL;
        return rc;
    }
    *view = *tmp;
    return MPI_SUCCESS;
}

/* Unpacks n blocks of `count` elements (`block` bytes each) from tmp into buf, all but block
 * `skip` (NONE: none). */
static int unpack_blocks(const call_t *c, const char *tmp, size_t n, size_t block, int count,
                         const rmpi_dtype_t *d, void *buf, int skip)
{
    size_t first = skip < 0 ? n : (size_t)skip;
    int rc = unpack(c, tmp, first * (size_t)count, d, buf);
    if (rc != MPI_SUCCESS || first + 1 >= n)
        return rc;
    return unpack(c, tmp + (first + 1) * block, (n - first - 1) * (size_t)count, d,
                  block_at(buf, first + 1, count, d));
}

/* ---- one side of a v-form ---- */

/* Byte counts and displacements over `view`: the user's buffer (plain datatype and no negative
 * displacement) or `tmp`, the blocks packed back to back in rank order. */
#define VSIDE_LOCAL 16 /* ranks whose byte counts fit in the side itself: no allocation */
typedef struct {
    size_t *counts, *displs;
    char *view, *tmp;
    void *buf; /* the user's description */
    const int *ucounts, *udispls;
    rmpi_dtype_t d;
    int n;
    size_t local[2 * VSIDE_LOCAL];
} vside_t;

static void vside_free(const call_t *c, vside_t *v)
{
    if (v->counts != v->local)
        c_free(c, v->counts);
    c_free(c, v->tmp);
    v->counts = NULL;
    v->tmp = NULL;
}

/* The bytes of all blocks of a side. */
static size_t vside_total(const vside_t *v)
{
    size_t total = 0;
    for (int i = 0; i < v->n; i++)
        total += v->counts[i];
    return total;
}

static int vside_init(const call_t *c, vside_t *v, const void *buf, const int *counts,
                      const int *displs, MPI_Datatype type)
{
    memset(v, 0, offsetof(vside_t, local)); /* the local counts are written before use */
    v->buf = (void *)buf;
    v->ucounts = counts;
    v->udispls = displs;
    v->n = c->size;
    if (counts == NULL || displs == NULL)
        return fail(c, MPI_ERR_ARG, "NULL counts or displacements");
    if (rmpi_dtype(type, &v->d) != MPI_SUCCESS)
        return fail(c, MPI_ERR_TYPE, "invalid datatype");
    /* (a plan's arrays outlive this call: rcoll reads them until the request completes) */
    v->counts = v->n <= VSIDE_LOCAL && !c->plan ? v->local
                                                : c_alloc(c, 2 * (size_t)v->n * sizeof(size_t));
    if (v->counts == NULL)
        return no_mem(c);
    v->displs = v->counts + v->n;
    int direct = v->d.plain;
    size_t total = 0;
    for (int i = 0; i < v->n; i++) {
        if (rmpi_bytes(counts[i], &v->d, &v->counts[i]) != MPI_SUCCESS ||
            v->counts[i] > SIZE_MAX - total) {
            vside_free(c, v);
            return fail(c, MPI_ERR_COUNT, "negative count or message too large");
        }
        v->displs[i] = total; /* the packed layout */
        total += v->counts[i];
        if (v->counts[i] != 0 && displs[i] < 0)
            direct = 0;
    }
    if (direct) {
        for (int i = 0; i < v->n; i++)
            v->displs[i] = v->counts[i] ? (size_t)((MPI_Aint)displs[i] * v->d.extent) : 0;
        v->view = buf == NULL && total == 0 ? dummy : (char *)buf;
        return MPI_SUCCESS;
    }
    if ((v->tmp = c_alloc(c, total)) == NULL) {
        vside_free(c, v);
        return no_mem(c);
    }
    v->view = v->tmp;
    return MPI_SUCCESS;
}

static void *vside_user_block(const vside_t *v, int i)
{
    return rmpi_addr_add(v->buf, (MPI_Aint)v->udispls[i] * v->d.extent);
}

/* Packs the user's block i into the temporary (nothing when the view is the user's buffer). */
static int vside_pack(const call_t *c, vside_t *v, int i)
{
    if (v->tmp == NULL)
        return MPI_SUCCESS;
    return pack(c, vside_user_block(v, i), (size_t)v->ucounts[i], &v->d, v->tmp + v->displs[i]);
}

/* Packs every block but `skip` (NONE: all). */
static int vside_pack_all(const call_t *c, vside_t *v, int skip)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < v->n && rc == MPI_SUCCESS && v->tmp != NULL; i++)
        if (i != skip)
            rc = vside_pack(c, v, i);
    return rc;
}

/* Unpacks every block but `skip` (NONE: all) from the temporary into the user's buffer. */
static int vside_unpack_all(const call_t *c, vside_t *v, int skip)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < v->n && rc == MPI_SUCCESS && v->tmp != NULL; i++)
        if (i != skip)
            rc = unpack(c, v->tmp + v->displs[i], (size_t)v->ucounts[i], &v->d,
                        vside_user_block(v, i));
    return rc;
}

/* This rank's own block of a receive side v, where the call is not in place: checked against
 * the send side and, when v is packed, copied into it. Sets what rcoll gets as the send data. */
static int vside_own_send(const call_t *c, vside_t *v, int own, const void *sendbuf,
                          int sendcount, MPI_Datatype sendtype, const void **sview,
                          size_t *sbytes, char **stmp)
{
    rmpi_dtype_t sd = {0};
    int rc = typed(c, sendtype, sendcount, &sd, sbytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*sbytes != v->counts[own])
        return mismatch(c);
    if (v->tmp == NULL)
        return send_view(c, sendbuf, (size_t)sendcount, &sd, *sbytes, sview, stmp);
    *sview = RCOLL_IN_PLACE;
    if (sd.plain) {
        int rc = copy_before(c, v->tmp + v->displs[own], sendbuf, *sbytes);
        return rc == MPI_SUCCESS ? rc : no_mem(c);
    }
    return pack(c, sendbuf, (size_t)sendcount, &sd, v->tmp + v->displs[own]);
}

/* ---- erroneous calls ----
 * A rank whose own call is erroneous (its send and receive sizes differ, aliased buffers,
 * MPI_IN_PLACE where MPI forbids it, an invalid count or type on one side) while its peers may
 * already be in the call still takes part before it reports: with the sizes its peers expect
 * (from the side of its call that is valid) and scratch buffers, zeros going out and what comes
 * in dropped. Nobody waits for it, no user buffer of it is touched, the team's calls stay
 * numbered alike on every rank and the next collective on the communicator works. Where no
 * side is valid (or no scratch memory), it reports at once and its peers' waits end at
 * RCOLL_TIMEOUT naming it. */

#define UNKNOWN ((size_t)-1) /* the size a side would have: not known (the side is invalid) */

/* The first problem found in a call: its MPI error class and what it was. */
typedef struct {
    int code;
    const char *why;
} verdict_t;

static void note(verdict_t *v, int code, const char *why)
{
    if (v->code == MPI_SUCCESS) {
        v->code = code;
        v->why = why;
    }
}

/* The bytes of `count` elements of `type`, or UNKNOWN with the problem noted. */
static size_t side_bytes(verdict_t *v, MPI_Datatype type, int count, rmpi_dtype_t *d)
{
    size_t bytes = 0;
    if (rmpi_dtype(type, d) != MPI_SUCCESS) {
        note(v, MPI_ERR_TYPE, "invalid datatype");
        return UNKNOWN;
    }
    if (rmpi_bytes(count, d, &bytes) != MPI_SUCCESS) {
        note(v, MPI_ERR_COUNT, "negative count or message too large");
        return UNKNOWN;
    }
    return bytes;
}

/* n blocks of `block` bytes, or UNKNOWN (overflow noted). */
static size_t blocks_bytes(verdict_t *v, size_t n, size_t block)
{
    if (block == UNKNOWN)
        return UNKNOWN;
    if (n != 0 && block > SIZE_MAX / n) {
        note(v, MPI_ERR_COUNT, "message too large");
        return UNKNOWN;
    }
    return n * block;
}

/* The send and the receive side must hold the same bytes (MPI's type signatures). */
static void same_size(verdict_t *v, size_t a, size_t b)
{
    if (a != UNKNOWN && b != UNKNOWN && a != b)
        note(v, MPI_ERR_TRUNCATE, "send and receive sizes differ (type signature mismatch)");
}

/* Send and receive buffer the same address without MPI_IN_PLACE (MPI forbids aliasing). */
static void not_aliased(verdict_t *v, const void *sendbuf, size_t sbytes, const void *recvbuf,
                        size_t rbytes)
{
    if (sendbuf == recvbuf && sendbuf != NULL && sbytes != 0 && rbytes != 0 &&
        sbytes != UNKNOWN && rbytes != UNKNOWN)
        note(v, MPI_ERR_BUFFER, "send and receive buffer alias (use MPI_IN_PLACE)");
}

/* Zeroed scratch memory of the call (c_free frees it). */
static void *scratch(const call_t *c, size_t bytes)
{
    if (bytes == UNKNOWN)
        return NULL;
    return c->plan ? rmpi_plan_alloc(c->plan, bytes ? bytes : 1) : calloc(bytes ? bytes : 1, 1);
}

/* The erroneous rank's part, then its report. */
static int refuse(const call_t *c, const verdict_t *v)
{
    return fail(c, v->code, v->why);
}

static void stand_in_alltoall(const call_t *c, size_t block)
{
    char *tmp = scratch(c, blocks_bytes(&(verdict_t){0}, (size_t)c->size, block));
    if (tmp)
        run_alltoall(c, RCOLL_IN_PLACE, tmp, block);
    c_free(c, tmp);
}

static void stand_in_allgather(const call_t *c, size_t block)
{
    char *tmp = scratch(c, blocks_bytes(&(verdict_t){0}, (size_t)c->size, block));
    if (tmp)
        run_allgather(c, RCOLL_IN_PLACE, tmp, block);
    c_free(c, tmp);
}

/* A rooted call's part: the root gathers into / scatters from scratch, a leaf sends zeros or
 * receives into scratch. */
static void stand_in_rooted(const call_t *c, int gather, size_t block, int root)
{
    int am_root = c->rank == root;
    char *tmp =
        scratch(c, am_root ? blocks_bytes(&(verdict_t){0}, (size_t)c->size, block) : block);
    if (!tmp)
        return;
    if (gather)
        run_gather(c, am_root ? RCOLL_IN_PLACE : tmp, tmp, block, root);
    else
        run_scatter(c, tmp, am_root ? RCOLL_IN_PLACE : tmp, block, root);
    c_free(c, tmp);
}

static void stand_in_bcast(const call_t *c, size_t bytes, int root)
{
    char *tmp = scratch(c, bytes);
    if (tmp)
        run_bcast(c, tmp, bytes, root);
    c_free(c, tmp);
}

/* Packed displacements for counts (back to back in rank order); the total, or UNKNOWN. */
static size_t packed(const size_t *counts, size_t *displs, int n)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] > SIZE_MAX - at)
            return UNKNOWN;
        displs[i] = at;
        at += counts[i];
    }
    return at;
}

/* A v-form's part, from the byte counts of its valid sides (NULL: that side is not needed or
 * not known). kind: 'g' allgatherv, 'a' alltoallv, 'G' gatherv (root), 'S' scatterv (root). */
static void stand_in_v(const call_t *c, char kind, const size_t *scounts, const size_t *rcounts)
{
    size_t n = (size_t)c->size;
    size_t *arr = scratch(c, blocks_bytes(&(verdict_t){0}, 4 * n, sizeof *arr));
    if (!arr)
        return;
    size_t *sc = arr, *sd = arr + n, *rc = arr + 2 * n, *rd = arr + 3 * n;
    if (scounts)
        memcpy(sc, scounts, n * sizeof *sc);
    if (rcounts)
        memcpy(rc, rcounts, n * sizeof *rc);
    if (kind != 'g')
        sc[c->rank] = rc[c->rank] = 0; /* nothing moves to itself (allgatherv: its zeros go out) */
    size_t stotal = packed(sc, sd, c->size), rtotal = packed(rc, rd, c->size);
    char *sbuf = scratch(c, stotal), *rbuf = scratch(c, rtotal);
    if (sbuf && rbuf && kind == 'g')
        run_allgatherv(c, RCOLL_IN_PLACE, 0, rbuf, rc, rd);
    else if (sbuf && rbuf && kind == 'a')
        run_alltoallv(c, sbuf, sc, sd, rbuf, rc, rd);
    else if (sbuf && rbuf && kind == 'G')
        run_gatherv(c, RCOLL_IN_PLACE, 0, rbuf, rc, rd, c->rank);
    else if (sbuf && rbuf && kind == 'S')
        run_scatterv(c, sbuf, sc, sd, RCOLL_IN_PLACE, 0, c->rank);
    c_free(c, sbuf);
    c_free(c, rbuf);
    c_free(c, arr);
}

/* ---- MPI_Bcast ---- */

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    call_t c;
    if (count == 0 || !start_rooted(&c, comm, "MPI_Bcast", root))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    return rmpi_body_bcast(&c, buffer, count, datatype, root);
}

int rmpi_body_bcast(call_t *cp, void *buffer, int count, MPI_Datatype datatype, int root)
{
    const call_t c = *cp;
    rmpi_dtype_t d = {0};
    verdict_t v = {0};
    size_t bytes = side_bytes(&v, datatype, count, &d);
    if (buffer == MPI_IN_PLACE)
        note(&v, MPI_ERR_BUFFER, "MPI_IN_PLACE is not a buffer for MPI_Bcast");
    if (v.code != MPI_SUCCESS) {
        if (bytes != UNKNOWN)
            stand_in_bcast(&c, bytes, root);
        return refuse(&c, &v);
    }
    if (d.plain)
        return finish(&c, run_bcast(&c, buffer, bytes, root));
    char *tmp = c_alloc(&c, bytes);
    if (tmp == NULL) {
        stand_in_bcast(&c, bytes, root);
        return no_mem(&c);
    }
    int rc = MPI_SUCCESS;
    if (c.rank == root)
        rc = do_pack(&c, buffer, (size_t)count, &d, tmp);
    rcoll_status_t st = run_bcast(&c, tmp, bytes, root);
    if (rc != MPI_SUCCESS) {
        c_free(&c, tmp);
        return fail(&c, rc, "PMPI_Pack of the send data failed");
    }
    if (st == RCOLL_OK && c.rank != root)
        rc = unpack(&c, tmp, (size_t)count, &d, buffer);
    c_free(&c, tmp);
    return st == RCOLL_OK ? rc : finish(&c, st);
}

/* ---- MPI_Gather ---- */

/* A rank that is not the root, of MPI_Gather (v = 0) or MPI_Gatherv (v = 1): sends only. */
static int gather_leaf(const call_t *c, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, int root, int v)
{
    rmpi_dtype_t sd = {0};
    verdict_t ver = {0};
    size_t bytes = side_bytes(&ver, sendtype, sendcount, &sd);
    if (sendbuf == MPI_IN_PLACE)
        note(&ver, MPI_ERR_BUFFER, "MPI_IN_PLACE on a rank that is not the root");
    if (ver.code != MPI_SUCCESS) {
        if (bytes != UNKNOWN && !v)
            stand_in_rooted(c, 1, bytes, root);
        else if (bytes != UNKNOWN) {
            char *tmp = scratch(c, bytes);
            if (tmp)
                run_gatherv(c, tmp, bytes, NULL, NULL, NULL, root);
            c_free(c, tmp);
        }
        return refuse(c, &ver);
    }
    const void *view;
    char *tmp;
    int rc = send_view(c, sendbuf, (size_t)sendcount, &sd, bytes, &view, &tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    rcoll_status_t st = v ? run_gatherv(c, view, bytes, NULL, NULL, NULL, root)
                          : run_gather(c, view, NULL, bytes, root);
    c_free(c, tmp);
    return finish(c, st);
}

static int gather_root(const call_t *c, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype)
{
    rmpi_dtype_t rd = {0}, sd = {0};
    verdict_t v = {0};
    int in_place = sendbuf == MPI_IN_PLACE;
    size_t block = side_bytes(&v, recvtype, recvcount, &rd);
    size_t total = blocks_bytes(&v, (size_t)c->size, block);
    size_t sbytes = in_place ? block : side_bytes(&v, sendtype, sendcount, &sd);
    same_size(&v, sbytes, block);
    if (!in_place)
        not_aliased(&v, sendbuf, sbytes, recvbuf, total);
    if (v.code != MPI_SUCCESS) {
        size_t expect = total != UNKNOWN ? block : sbytes;
        if (expect != UNKNOWN)
            stand_in_rooted(c, 1, expect, c->rank);
        return refuse(c, &v);
    }
    char *rtmp = NULL;
    char *rview = recvbuf;
    if (!rd.plain && (rview = rtmp = c_alloc(c, total)) == NULL) {
        stand_in_rooted(c, 1, block, c->rank);
        return no_mem(c);
    }
    char *own = rview ? rview + (size_t)c->rank * block : NULL; /* NULL: 0 bytes */
    const void *sview = RCOLL_IN_PLACE;
    int rc = MPI_SUCCESS;
    if (in_place && rtmp)
        rc = do_pack(c, block_at(recvbuf, (size_t)c->rank, recvcount, &rd), (size_t)recvcount,
                     &rd, own);
    else if (!in_place && sd.plain)
        sview = sendbuf == NULL && sbytes == 0 ? dummy : sendbuf;
    else if (!in_place)
        rc = do_pack(c, sendbuf, (size_t)sendcount, &sd, own);
    rcoll_status_t st = run_gather(c, sview, rview, block, c->rank);
    if (rc != MPI_SUCCESS) {
        c_free(c, rtmp);
        return fail(c, rc, "PMPI_Pack of the send data failed");
    }
    if (st == RCOLL_OK && rtmp)
        rc = unpack_blocks(c, rtmp, (size_t)c->size, block, recvcount, &rd, recvbuf,
                           in_place ? c->rank : NONE);
    c_free(c, rtmp);
    return rc != MPI_SUCCESS ? rc : finish(c, st);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    call_t c;
    if ((sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0 ||
        !start_rooted(&c, comm, "MPI_Gather", root))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    return rmpi_body_gather(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
}

int rmpi_body_gather(call_t *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
{
    if (c->rank != root)
        return gather_leaf(c, sendbuf, sendcount, sendtype, root, 0);
    return gather_root(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

/* ---- MPI_Scatter ---- */

/* A rank that is not the root, of MPI_Scatter (v = 0) or MPI_Scatterv (v = 1): receives only. */
static rcoll_status_t scatter_call(const call_t *c, void *recvbuf, size_t bytes, int root, int v)
{
    return v ? run_scatterv(c, NULL, NULL, NULL, recvbuf, bytes, root)
             : run_scatter(c, NULL, recvbuf, bytes, root);
}

static int scatter_leaf(const call_t *c, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                        int root, int v)
{
    rmpi_dtype_t rd = {0};
    verdict_t ver = {0};
    size_t bytes = side_bytes(&ver, recvtype, recvcount, &rd);
    if (recvbuf == MPI_IN_PLACE)
        note(&ver, MPI_ERR_BUFFER, "MPI_IN_PLACE on a rank that is not the root");
    if (ver.code != MPI_SUCCESS) {
        char *tmp = scratch(c, bytes);
        if (tmp)
            scatter_call(c, tmp, bytes, root, v);
        c_free(c, tmp);
        return refuse(c, &ver);
    }
    if (rd.plain)
        return finish(c, scatter_call(c, recvbuf, bytes, root, v));
    char *tmp = c_alloc(c, bytes);
    if (tmp == NULL) {
        stand_in_rooted(c, 0, bytes, root);
        return no_mem(c);
    }
    int rc = MPI_SUCCESS;
    rcoll_status_t st = scatter_call(c, tmp, bytes, root, v);
    if (st == RCOLL_OK)
        rc = unpack(c, tmp, (size_t)recvcount, &rd, recvbuf);
    c_free(c, tmp);
    return st == RCOLL_OK ? rc : finish(c, st);
}

static int scatter_root(const call_t *c, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype)
{
    rmpi_dtype_t sd = {0}, rd = {0};
    verdict_t v = {0};
    int in_place = recvbuf == MPI_IN_PLACE;
    size_t block = side_bytes(&v, sendtype, sendcount, &sd);
    size_t total = blocks_bytes(&v, (size_t)c->size, block);
    size_t rbytes = in_place ? block : side_bytes(&v, recvtype, recvcount, &rd);
    same_size(&v, block, rbytes);
    if (!in_place)
        not_aliased(&v, sendbuf, total, recvbuf, rbytes);
    if (v.code != MPI_SUCCESS) {
        size_t expect = total != UNKNOWN ? block : rbytes;
        if (expect != UNKNOWN)
            stand_in_rooted(c, 0, expect, c->rank);
        return refuse(c, &v);
    }
    const void *sview;
    char *stmp;
    int rc = send_view(c, sendbuf, (size_t)c->size * (size_t)sendcount, &sd, total, &sview, &stmp);
    if (rc != MPI_SUCCESS) {
        stand_in_rooted(c, 0, block, c->rank);
        return rc;
    }
    /* A root whose receive layout is not plain unpacks its own block from the send data. */
    void *rview = in_place ? (void *)RCOLL_IN_PLACE : recvbuf;
    if (!in_place && !rd.plain) {
        rview = (void *)RCOLL_IN_PLACE;
        rc = do_unpack(c, 0, (const char *)sview + (size_t)c->rank * block, (size_t)recvcount,
                       &rd, recvbuf);
    }
    rcoll_status_t st = run_scatter(c, sview, rview, block, c->rank);
    c_free(c, stmp);
    if (rc != MPI_SUCCESS)
        return fail(c, rc, "PMPI_Unpack of the root's own block failed");
    return finish(c, st);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    call_t c;
    if ((recvbuf == MPI_IN_PLACE ? sendcount : recvcount) == 0 ||
        !start_rooted(&c, comm, "MPI_Scatter", root))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm);
    return rmpi_body_scatter(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             root);
}

int rmpi_body_scatter(call_t *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
{
    if (c->rank != root)
        return scatter_leaf(c, recvbuf, recvcount, recvtype, root, 0);
    return scatter_root(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

/* ---- MPI_Alltoall ---- */

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    call_t c;
    if ((sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0 || !start(&c, comm, "MPI_Alltoall"))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return rmpi_body_alltoall(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

int rmpi_body_alltoall(call_t *cp, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype)
{
    const call_t c = *cp;
    rmpi_dtype_t rd = {0}, sd = {0};
    verdict_t v = {0};
    size_t n = (size_t)c.size;
    int in_place = sendbuf == MPI_IN_PLACE;
    size_t block = side_bytes(&v, recvtype, recvcount, &rd);
    size_t total = blocks_bytes(&v, n, block);
    size_t sbytes = in_place ? block : side_bytes(&v, sendtype, sendcount, &sd);
    same_size(&v, sbytes, block);
    if (!in_place)
        not_aliased(&v, sendbuf, sbytes, recvbuf, block);
    if (v.code != MPI_SUCCESS) {
        stand_in_alltoall(&c, total != UNKNOWN ? block : sbytes);
        return refuse(&c, &v);
    }
    char *rtmp = NULL;
    void *rview = recvbuf;
    if (!rd.plain && (rview = rtmp = c_alloc(&c, total)) == NULL) {
        stand_in_alltoall(&c, block);
        return no_mem(&c);
    }
    const void *sview = RCOLL_IN_PLACE;
    char *stmp = NULL;
    int rc = MPI_SUCCESS;
    if (in_place && rtmp)
        rc = do_pack(&c, recvbuf, n * (size_t)recvcount, &rd, rtmp);
    else if (!in_place)
        rc = send_view(&c, sendbuf, n * (size_t)sendcount, &sd, total, &sview, &stmp);
    if (rc != MPI_SUCCESS) {
        c_free(&c, rtmp);
        stand_in_alltoall(&c, block);
        return in_place ? fail(&c, rc, "PMPI_Pack of the send data failed") : rc;
    }
    rcoll_status_t st = run_alltoall(&c, sview, rview, block);
    if (st == RCOLL_OK && rtmp)
        rc = unpack(&c, rtmp, n * (size_t)recvcount, &rd, recvbuf);
    c_free(&c, stmp);
    c_free(&c, rtmp);
    return rc != MPI_SUCCESS ? rc : finish(&c, st);
}
/* ---- MPI_Allgather ---- */

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    call_t c;
    if ((sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0 ||
        !start(&c, comm, "MPI_Allgather"))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return rmpi_body_allgather(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

/* A receive layout that is not plain: gathered into a contiguous temporary, then unpacked. */
static int allgather_packed(const call_t *c, const void *sendbuf, int sendcount,
                            const rmpi_dtype_t *sd, void *recvbuf, int recvcount,
                            const rmpi_dtype_t *rd, size_t bytes)
{
    size_t n = (size_t)c->size;
    int in_place = sendbuf == MPI_IN_PLACE;
    if (bytes > SIZE_MAX / n)
        return fail(c, MPI_ERR_COUNT, "message too large");
    char *tmp = c_alloc(c, bytes * n);
    if (tmp == NULL)
        return no_mem(c);
    char *own = tmp + (size_t)c->rank * bytes;
    int rc;
    if (in_place)
        rc = pack(c, block_at(recvbuf, (size_t)c->rank, recvcount, rd), (size_t)recvcount, rd,
                  own);
    else if (sd->plain)
        rc = copy_before(c, own, sendbuf, bytes) == MPI_SUCCESS ? MPI_SUCCESS : no_mem(c);
    else
        rc = pack(c, sendbuf, (size_t)sendcount, sd, own);
    if (rc != MPI_SUCCESS) {
        c_free(c, tmp);
        return rc;
    }
    rcoll_status_t st = run_allgather(c, RCOLL_IN_PLACE, tmp, bytes);
    if (st == RCOLL_OK)
        rc = unpack_blocks(c, tmp, n, bytes, recvcount, rd, recvbuf, in_place ? c->rank : NONE);
    c_free(c, tmp);
    return rc != MPI_SUCCESS ? rc : finish(c, st);
}

int rmpi_body_allgather(call_t *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype)
{
    rmpi_dtype_t rd = {0}, sd = {0};
    int in_place = sendbuf == MPI_IN_PLACE;
    int send_ok = !in_place && sendcount >= 0 && rmpi_dtype(sendtype, &sd) == MPI_SUCCESS;
    if (recvcount < 0 || rmpi_dtype(recvtype, &rd) != MPI_SUCCESS) {
        if (send_ok && (size_t)sendcount <= SIZE_MAX / ((size_t)sd.size + 1))
            stand_in_allgather(c, (size_t)sendcount * (size_t)sd.size);
        return fail(c, recvcount < 0 ? MPI_ERR_COUNT : MPI_ERR_TYPE,
                    "invalid receive count or type");
    }
    /* Bytes per rank: the same on every rank (type signatures match). */
    size_t bytes = 0;
    if (rmpi_bytes(recvcount, &rd, &bytes) != MPI_SUCCESS)
        return fail(c, MPI_ERR_COUNT, "message too large");
    if (bytes == 0)
        return MPI_SUCCESS;
    if (!in_place) {
        verdict_t v = {0};
        if (!send_ok)
            note(&v, sendcount < 0 ? MPI_ERR_COUNT : MPI_ERR_TYPE, "invalid send count or type");
        else if ((unsigned long long)sd.size * (unsigned long long)sendcount != bytes)
            note(&v, MPI_ERR_TRUNCATE, "send and receive sizes differ (type signature mismatch)");
        else if (sendbuf == recvbuf)
            note(&v, MPI_ERR_BUFFER, "send and receive buffer alias (use MPI_IN_PLACE)");
        if (v.code != MPI_SUCCESS) {
            stand_in_allgather(c, bytes);
            return refuse(c, &v);
        }
    }
    if (!rd.plain)
        return allgather_packed(c, sendbuf, sendcount, &sd, recvbuf, recvcount, &rd, bytes);
    const void *src = in_place ? RCOLL_IN_PLACE : sendbuf;
    if (!in_place && !sd.plain) {
        int rc = pack(c, sendbuf, (size_t)sendcount, &sd,
                      (char *)recvbuf + (size_t)c->rank * bytes);
        if (rc != MPI_SUCCESS)
            return rc;
        src = RCOLL_IN_PLACE;
    }
    return finish(c, run_allgather(c, src, recvbuf, bytes));
}

/* ---- MPI_Allgatherv ---- */

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    call_t c;
    if (!start(&c, comm, "MPI_Allgatherv"))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    return rmpi_body_allgatherv(&c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                recvtype);
}

int rmpi_body_allgatherv(call_t *cp, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype)
{
    const call_t c = *cp;
    vside_t r;
    int rc = vside_init(&c, &r, recvbuf, recvcounts, displs, recvtype);
    if (rc != MPI_SUCCESS)
        return rc;
    int in_place = sendbuf == MPI_IN_PLACE;
    const void *sview = RCOLL_IN_PLACE;
    size_t sbytes = 0;
    char *stmp = NULL;
    if (in_place)
        rc = vside_pack(&c, &r, c.rank);
    else if (sendbuf == recvbuf && sendcount > 0 && vside_total(&r) > 0)
        rc = aliased(&c);
    else
        rc = vside_own_send(&c, &r, c.rank, sendbuf, sendcount, sendtype, &sview, &sbytes,
                            &stmp);
    if (rc != MPI_SUCCESS)
        stand_in_v(&c, 'g', NULL, r.counts);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = run_allgatherv(&c, sview, sbytes, r.view, r.counts, r.displs);
    if (rc == MPI_SUCCESS && st == RCOLL_OK)
        rc = vside_unpack_all(&c, &r, in_place ? c.rank : NONE);
    c_free(&c, stmp);
    vside_free(&c, &r);
    return rc != MPI_SUCCESS ? rc : finish(&c, st);
}

/* ---- MPI_Alltoallv ---- */

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    call_t c;
    if (!start(&c, comm, "MPI_Alltoallv"))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    return rmpi_body_alltoallv(&c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype);
}

int rmpi_body_alltoallv(call_t *cp, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int rdispls[], MPI_Datatype recvtype)
{
    const call_t c = *cp;
    int in_place = sendbuf == MPI_IN_PLACE;
    vside_t r, s;
    memset(&s, 0, sizeof s);
    int rc = vside_init(&c, &r, recvbuf, recvcounts, rdispls, recvtype);
    if (rc != MPI_SUCCESS)
        return rc;
    if (in_place)
        rc = vside_pack_all(&c, &r, NONE); /* the data to send is in recvbuf */
    else if ((rc = vside_init(&c, &s, sendbuf, sendcounts, sdispls, sendtype)) != MPI_SUCCESS)
        ; /* the send side unknown: no part to take */
    else if (s.counts[c.rank] != r.counts[c.rank] ||
             (sendbuf == recvbuf && vside_total(&s) > 0 && vside_total(&r) > 0))
        rc = s.counts[c.rank] != r.counts[c.rank] ? mismatch(&c) : aliased(&c);
    else
        rc = vside_pack_all(&c, &s, NONE);
    if (rc != MPI_SUCCESS && (in_place || s.counts))
        stand_in_v(&c, 'a', in_place ? r.counts : s.counts, r.counts);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS && in_place)
        st = run_alltoallv(&c, RCOLL_IN_PLACE, NULL, NULL, r.view, r.counts, r.displs);
    else if (rc == MPI_SUCCESS)
        st = run_alltoallv(&c, s.view, s.counts, s.displs, r.view, r.counts, r.displs);
    if (rc == MPI_SUCCESS && st == RCOLL_OK)
        rc = vside_unpack_all(&c, &r, NONE);
    vside_free(&c, &s);
    vside_free(&c, &r);
    return rc != MPI_SUCCESS ? rc : finish(&c, st);
}

/* ---- MPI_Gatherv ---- */

static int gatherv_root(const call_t *c, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                        const int *displs, MPI_Datatype recvtype)
{
    vside_t r;
    int rc = vside_init(c, &r, recvbuf, recvcounts, displs, recvtype);
    if (rc != MPI_SUCCESS)
        return rc;
    int in_place = sendbuf == MPI_IN_PLACE;
    const void *sview = RCOLL_IN_PLACE;
    size_t sbytes = 0;
    char *stmp = NULL;
    if (in_place)
        rc = vside_pack(c, &r, c->rank);
    else if (sendbuf == recvbuf && sendcount > 0 && vside_total(&r) > 0)
        rc = aliased(c);
    else
        rc = vside_own_send(c, &r, c->rank, sendbuf, sendcount, sendtype, &sview, &sbytes,
                            &stmp);
    if (rc != MPI_SUCCESS)
        stand_in_v(c, 'G', NULL, r.counts);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = run_gatherv(c, sview, sbytes, r.view, r.counts, r.displs, c->rank);
    if (rc == MPI_SUCCESS && st == RCOLL_OK)
        rc = vside_unpack_all(c, &r, in_place ? c->rank : NONE);
    c_free(c, stmp);
    vside_free(c, &r);
    return rc != MPI_SUCCESS ? rc : finish(c, st);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    call_t c;
    if (!start_rooted(&c, comm, "MPI_Gatherv", root))
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
    return rmpi_body_gatherv(&c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, root);
}

int rmpi_body_gatherv(call_t *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root)
{
    if (c->rank != root)
        return gather_leaf(c, sendbuf, sendcount, sendtype, root, 1);
    return gatherv_root(c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
}

/* ---- MPI_Scatterv ---- */

static int scatterv_root(const call_t *c, const void *sendbuf, const int *sendcounts,
                         const int *displs, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype)
{
    vside_t s;
    int in_place = recvbuf == MPI_IN_PLACE;
    int rc = vside_init(c, &s, sendbuf, sendcounts, displs, sendtype);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = vside_pack_all(c, &s, in_place ? c->rank : NONE);
    void *rview = (void *)RCOLL_IN_PLACE;
    size_t rbytes = 0;
    rmpi_dtype_t rd = {0};
    if (rc == MPI_SUCCESS && !in_place)
        rc = typed(c, recvtype, recvcount, &rd, &rbytes);
    if (rc == MPI_SUCCESS && !in_place && rbytes != s.counts[c->rank])
        rc = mismatch(c);
    if (rc == MPI_SUCCESS && !in_place && sendbuf == recvbuf && rbytes > 0 && vside_total(&s) > 0)
        rc = aliased(c);
    if (rc != MPI_SUCCESS)
        stand_in_v(c, 'S', s.counts, NULL);
    /* A receive layout that is not plain: the root unpacks its own block from the send data. */
    if (rc == MPI_SUCCESS && !in_place && rd.plain)
        rview = recvbuf;
    else if (rc == MPI_SUCCESS && !in_place &&
             (rc = do_unpack(c, 0, s.view + s.displs[c->rank], (size_t)recvcount, &rd,
                             recvbuf)) != MPI_SUCCESS)
        rc = fail(c, rc, "PMPI_Unpack of the root's own block failed");
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = run_scatterv(c, s.view, s.counts, s.displs, rview, rbytes, c->rank);
    vside_free(c, &s);
    return rc != MPI_SUCCESS ? rc : finish(c, st);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    call_t c;
    if (!start_rooted(&c, comm, "MPI_Scatterv", root))
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm);
    return rmpi_body_scatterv(&c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                              recvtype, root);
}

int rmpi_body_scatterv(call_t *c, const void *sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root)
{
    if (c->rank != root)
        return scatter_leaf(c, recvbuf, recvcount, recvtype, root, 1);
    return scatterv_root(c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype);
}
