/* librcoll-mpi, the collectives besides MPI_Barrier and MPI_Allgather (rcoll_mpi.c): MPI_Alltoall,
 * MPI_Bcast, MPI_Gather, MPI_Scatter and the v-forms MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv,
 * MPI_Scatterv, on rcoll's byte-counted calls. The rules of rcoll_mpi.c's first comment hold;
 * what is particular to these:
 * - rcoll or PMPI_ is decided from the communicator (its team) and the root only, as every rank
 *   knows them; never from a rank's counts, displacements or datatypes, which the other ranks
 *   cannot see (a v-form's counts, recvtype at the non-roots). An invalid root goes to PMPI_,
 *   which reports it. Zero bytes go through rcoll as well: it skips calls that are empty on
 *   every rank by itself, so all ranks keep counting the team's collectives alike.
 * - An argument MPI calls insignificant on this rank (the receive side of a gather and the send
 *   side of a scatter off the root, the send side of an in-place call) is never read.
 * - A plain datatype (its bytes back to back, see layout_is_plain) passes straight through:
 *   bytes = count * size, byte displacements = displ * extent. Any other datatype, and a v-form
 *   side with a negative displacement, goes through a contiguous temporary holding the blocks
 *   back to back in rank order: packed (PMPI_Pack) before the call, unpacked after. A block the
 *   caller holds in place is packed before and not unpacked.
 * - A local problem (invalid count or type, sizes that differ between the send and receive
 *   side, no memory) prints "rcoll: MPI_<Coll>: <what>" and raises the MPI error code through the
 *   communicator's error handler, as does an rcoll error (MPI_ERR_OTHER).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rcoll_mpi_internal.h"

#define NONE (-1) /* no block to skip */

/* One call: its communicator, name (for the messages) and team. */
typedef struct {
    MPI_Comm comm;
    const char *name;
    rcoll_team_t *team;
    int rank, size;
} call_t;

/* A non-NULL stand-in for a NULL buffer of zero bytes (MPI allows it, rcoll wants an address). */
static char dummy[1];

static void *xalloc(size_t n)
{
    return malloc(n ? n : 1);
}

static int fail(const call_t *c, int code, const char *what)
{
    return rmpi_local_failed(c->comm, code, c->name, what);
}

static int finish(const call_t *c, rcoll_status_t st)
{
    return st == RCOLL_OK ? MPI_SUCCESS : rmpi_rcoll_failed(c->team, st, c->comm);
}

/* 1 if rcoll runs the call, 0 for PMPI_: the same answer on every rank. */
static int start(call_t *c, MPI_Comm comm, const char *name)
{
    c->comm = comm;
    c->name = name;
    c->team = rmpi_team_for(comm);
    if (c->team == NULL)
        return 0;
    c->rank = rcoll_team_rank(c->team);
    c->size = rcoll_team_size(c->team);
    return 1;
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

/* n * block bytes, or MPI_ERR_COUNT. */
static int times(const call_t *c, size_t n, size_t block, size_t *total)
{
    if (n != 0 && block > SIZE_MAX / n)
        return fail(c, MPI_ERR_COUNT, "message too large");
    *total = n * block;
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

static int pack(const call_t *c, const void *in, size_t count, const rmpi_dtype_t *d, char *out)
{
    int rc = rmpi_pack(in, count, d, out, c->comm);
    return rc == MPI_SUCCESS ? rc : fail(c, rc, "PMPI_Pack of the send data failed");
}

static int unpack(const call_t *c, const char *in, size_t count, const rmpi_dtype_t *d, void *out)
{
    int rc = rmpi_unpack(in, count, d, out, c->comm);
    return rc == MPI_SUCCESS ? rc : fail(c, rc, "PMPI_Unpack of the received data failed");
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
    if ((*tmp = xalloc(bytes)) == NULL)
        return no_mem(c);
    int rc = pack(c, buf, count, d, *tmp);
    if (rc != MPI_SUCCESS) {
        free(*tmp);
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
typedef struct {
    size_t *counts, *displs;
    char *view, *tmp;
    void *buf; /* the user's description */
    const int *ucounts, *udispls;
    rmpi_dtype_t d;
    int n;
} vside_t;

static void vside_free(vside_t *v)
{
    free(v->counts);
    free(v->tmp);
    v->counts = NULL;
    v->tmp = NULL;
}

static int vside_init(const call_t *c, vside_t *v, const void *buf, const int *counts,
                      const int *displs, MPI_Datatype type)
{
    memset(v, 0, sizeof *v);
    v->buf = (void *)buf;
    v->ucounts = counts;
    v->udispls = displs;
    v->n = c->size;
    if (counts == NULL || displs == NULL)
        return fail(c, MPI_ERR_ARG, "NULL counts or displacements");
    if (rmpi_dtype(type, &v->d) != MPI_SUCCESS)
        return fail(c, MPI_ERR_TYPE, "invalid datatype");
    if ((v->counts = malloc(2 * (size_t)v->n * sizeof(size_t))) == NULL)
        return no_mem(c);
    v->displs = v->counts + v->n;
    int direct = v->d.plain;
    size_t total = 0;
    for (int i = 0; i < v->n; i++) {
        if (rmpi_bytes(counts[i], &v->d, &v->counts[i]) != MPI_SUCCESS ||
            v->counts[i] > SIZE_MAX - total) {
            vside_free(v);
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
    if ((v->tmp = xalloc(total)) == NULL) {
        vside_free(v);
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
        if (*sbytes)
            memcpy(v->tmp + v->displs[own], sendbuf, *sbytes);
        return MPI_SUCCESS;
    }
    return pack(c, sendbuf, (size_t)sendcount, &sd, v->tmp + v->displs[own]);
}

/* ---- MPI_Bcast ---- */

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    call_t c;
    if (!start_rooted(&c, comm, "MPI_Bcast", root))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    rmpi_dtype_t d = {0};
    size_t bytes = 0;
    int rc = typed(&c, datatype, count, &d, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (d.plain)
        return finish(&c, rcoll_bcast(c.team, buffer, bytes, root));
    char *tmp = xalloc(bytes);
    if (tmp == NULL)
        return no_mem(&c);
    if (c.rank == root && (rc = pack(&c, buffer, (size_t)count, &d, tmp)) != MPI_SUCCESS) {
        free(tmp);
        return rc;
    }
    rcoll_status_t st = rcoll_bcast(c.team, tmp, bytes, root);
    if (st == RCOLL_OK && c.rank != root)
        rc = unpack(&c, tmp, (size_t)count, &d, buffer);
    free(tmp);
    return st == RCOLL_OK ? rc : finish(&c, st);
}

/* ---- MPI_Gather ---- */

/* A rank that is not the root, of MPI_Gather (v = 0) or MPI_Gatherv (v = 1): sends only. */
static int gather_leaf(const call_t *c, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, int root, int v)
{
    if (sendbuf == MPI_IN_PLACE)
        return fail(c, MPI_ERR_BUFFER, "MPI_IN_PLACE on a rank that is not the root");
    rmpi_dtype_t sd = {0};
    size_t bytes = 0;
    const void *view;
    char *tmp;
    int rc = typed(c, sendtype, sendcount, &sd, &bytes);
    if (rc == MPI_SUCCESS)
        rc = send_view(c, sendbuf, (size_t)sendcount, &sd, bytes, &view, &tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    rcoll_status_t st = v ? rcoll_gatherv(c->team, view, bytes, NULL, NULL, NULL, root)
                          : rcoll_gather(c->team, view, NULL, bytes, root);
    free(tmp);
    return finish(c, st);
}

static int gather_root(const call_t *c, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype)
{
    rmpi_dtype_t rd = {0}, sd = {0};
    size_t block = 0, sbytes = 0, total = 0;
    int in_place = sendbuf == MPI_IN_PLACE;
    int rc = typed(c, recvtype, recvcount, &rd, &block);
    if (rc == MPI_SUCCESS)
        rc = times(c, (size_t)c->size, block, &total);
    if (rc == MPI_SUCCESS && !in_place)
        rc = typed(c, sendtype, sendcount, &sd, &sbytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!in_place && sbytes != block)
        return mismatch(c);
    char *rtmp = NULL;
    char *rview = recvbuf;
    if (!rd.plain && (rview = rtmp = xalloc(total)) == NULL)
        return no_mem(c);
    char *own = rview ? rview + (size_t)c->rank * block : NULL; /* NULL: 0 bytes */
    const void *sview = RCOLL_IN_PLACE;
    if (in_place && rtmp)
        rc = pack(c, block_at(recvbuf, (size_t)c->rank, recvcount, &rd), (size_t)recvcount,
                  &rd, own);
    else if (!in_place && sd.plain)
        sview = sendbuf == NULL && sbytes == 0 ? dummy : sendbuf;
    else if (!in_place)
        rc = pack(c, sendbuf, (size_t)sendcount, &sd, own);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = rcoll_gather(c->team, sview, rview, block, c->rank);
    if (rc == MPI_SUCCESS && st == RCOLL_OK && rtmp)
        rc = unpack_blocks(c, rtmp, (size_t)c->size, block, recvcount, &rd, recvbuf,
                           in_place ? c->rank : NONE);
    free(rtmp);
    return rc != MPI_SUCCESS ? rc : finish(c, st);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    call_t c;
    if (!start_rooted(&c, comm, "MPI_Gather", root))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    if (c.rank != root)
        return gather_leaf(&c, sendbuf, sendcount, sendtype, root, 0);
    return gather_root(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

/* ---- MPI_Scatter ---- */

/* A rank that is not the root, of MPI_Scatter (v = 0) or MPI_Scatterv (v = 1): receives only. */
static rcoll_status_t scatter_call(const call_t *c, void *recvbuf, size_t bytes, int root, int v)
{
    return v ? rcoll_scatterv(c->team, NULL, NULL, NULL, recvbuf, bytes, root)
             : rcoll_scatter(c->team, NULL, recvbuf, bytes, root);
}

static int scatter_leaf(const call_t *c, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                        int root, int v)
{
    if (recvbuf == MPI_IN_PLACE)
        return fail(c, MPI_ERR_BUFFER, "MPI_IN_PLACE on a rank that is not the root");
    rmpi_dtype_t rd = {0};
    size_t bytes = 0;
    int rc = typed(c, recvtype, recvcount, &rd, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rd.plain)
        return finish(c, scatter_call(c, recvbuf, bytes, root, v));
    char *tmp = xalloc(bytes);
    if (tmp == NULL)
        return no_mem(c);
    rcoll_status_t st = scatter_call(c, tmp, bytes, root, v);
    if (st == RCOLL_OK)
        rc = unpack(c, tmp, (size_t)recvcount, &rd, recvbuf);
    free(tmp);
    return st == RCOLL_OK ? rc : finish(c, st);
}

static int scatter_root(const call_t *c, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype)
{
    rmpi_dtype_t sd = {0}, rd = {0};
    size_t block = 0, rbytes = 0, total = 0;
    int in_place = recvbuf == MPI_IN_PLACE;
    int rc = typed(c, sendtype, sendcount, &sd, &block);
    if (rc == MPI_SUCCESS)
        rc = times(c, (size_t)c->size, block, &total);
    if (rc == MPI_SUCCESS && !in_place)
        rc = typed(c, recvtype, recvcount, &rd, &rbytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!in_place && rbytes != block)
        return mismatch(c);
    const void *sview;
    char *stmp;
    rc = send_view(c, sendbuf, (size_t)c->size * (size_t)sendcount, &sd, total, &sview, &stmp);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A root whose receive layout is not plain unpacks its own block from the send data. */
    void *rview = in_place ? (void *)RCOLL_IN_PLACE : recvbuf;
    if (!in_place && !rd.plain) {
        rview = (void *)RCOLL_IN_PLACE;
        rc = unpack(c, (const char *)sview + (size_t)c->rank * block, (size_t)recvcount, &rd,
                    recvbuf);
    }
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = rcoll_scatter(c->team, sview, rview, block, c->rank);
    free(stmp);
    return rc != MPI_SUCCESS ? rc : finish(c, st);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    call_t c;
    if (!start_rooted(&c, comm, "MPI_Scatter", root))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm);
    if (c.rank != root)
        return scatter_leaf(&c, recvbuf, recvcount, recvtype, root, 0);
    return scatter_root(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
}

/* ---- MPI_Alltoall ---- */

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    call_t c;
    if (!start(&c, comm, "MPI_Alltoall"))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    rmpi_dtype_t rd = {0}, sd = {0};
    size_t block = 0, sbytes = 0, total = 0;
    size_t n = (size_t)c.size;
    int in_place = sendbuf == MPI_IN_PLACE;
    int rc = typed(&c, recvtype, recvcount, &rd, &block);
    if (rc == MPI_SUCCESS)
        rc = times(&c, n, block, &total);
    if (rc == MPI_SUCCESS && !in_place)
        rc = typed(&c, sendtype, sendcount, &sd, &sbytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!in_place && sbytes != block)
        return mismatch(&c);
    char *rtmp = NULL;
    void *rview = recvbuf;
    if (!rd.plain && (rview = rtmp = xalloc(total)) == NULL)
        return no_mem(&c);
    const void *sview = RCOLL_IN_PLACE;
    char *stmp = NULL;
    if (in_place && rtmp)
        rc = pack(&c, recvbuf, n * (size_t)recvcount, &rd, rtmp);
    else if (!in_place)
        rc = send_view(&c, sendbuf, n * (size_t)sendcount, &sd, total, &sview, &stmp);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = rcoll_alltoall(c.team, sview, rview, block);
    if (rc == MPI_SUCCESS && st == RCOLL_OK && rtmp)
        rc = unpack(&c, rtmp, n * (size_t)recvcount, &rd, recvbuf);
    free(stmp);
    free(rtmp);
    return rc != MPI_SUCCESS ? rc : finish(&c, st);
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
    else
        rc = vside_own_send(&c, &r, c.rank, sendbuf, sendcount, sendtype, &sview, &sbytes,
                            &stmp);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = rcoll_allgatherv(c.team, sview, sbytes, r.view, r.counts, r.displs);
    if (rc == MPI_SUCCESS && st == RCOLL_OK)
        rc = vside_unpack_all(&c, &r, in_place ? c.rank : NONE);
    free(stmp);
    vside_free(&r);
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
    int in_place = sendbuf == MPI_IN_PLACE;
    vside_t r, s;
    memset(&s, 0, sizeof s);
    int rc = vside_init(&c, &r, recvbuf, recvcounts, rdispls, recvtype);
    if (rc != MPI_SUCCESS)
        return rc;
    if (in_place)
        rc = vside_pack_all(&c, &r, NONE); /* the data to send is in recvbuf */
    else if ((rc = vside_init(&c, &s, sendbuf, sendcounts, sdispls, sendtype)) == MPI_SUCCESS &&
             s.counts[c.rank] != r.counts[c.rank])
        rc = mismatch(&c);
    else if (rc == MPI_SUCCESS)
        rc = vside_pack_all(&c, &s, NONE);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS && in_place)
        st = rcoll_alltoallv(c.team, RCOLL_IN_PLACE, NULL, NULL, r.view, r.counts, r.displs);
    else if (rc == MPI_SUCCESS)
        st = rcoll_alltoallv(c.team, s.view, s.counts, s.displs, r.view, r.counts, r.displs);
    if (rc == MPI_SUCCESS && st == RCOLL_OK)
        rc = vside_unpack_all(&c, &r, NONE);
    vside_free(&s);
    vside_free(&r);
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
    else
        rc = vside_own_send(c, &r, c->rank, sendbuf, sendcount, sendtype, &sview, &sbytes,
                            &stmp);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = rcoll_gatherv(c->team, sview, sbytes, r.view, r.counts, r.displs, c->rank);
    if (rc == MPI_SUCCESS && st == RCOLL_OK)
        rc = vside_unpack_all(c, &r, in_place ? c->rank : NONE);
    free(stmp);
    vside_free(&r);
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
    if (c.rank != root)
        return gather_leaf(&c, sendbuf, sendcount, sendtype, root, 1);
    return gatherv_root(&c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                        recvtype);
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
    /* A receive layout that is not plain: the root unpacks its own block from the send data. */
    if (rc == MPI_SUCCESS && !in_place && rd.plain)
        rview = recvbuf;
    else if (rc == MPI_SUCCESS && !in_place)
        rc = unpack(c, s.view + s.displs[c->rank], (size_t)recvcount, &rd, recvbuf);
    rcoll_status_t st = RCOLL_OK;
    if (rc == MPI_SUCCESS)
        st = rcoll_scatterv(c->team, s.view, s.counts, s.displs, rview, rbytes, c->rank);
    vside_free(&s);
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
    if (c.rank != root)
        return scatter_leaf(&c, recvbuf, recvcount, recvtype, root, 1);
    return scatterv_root(&c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype);
}
