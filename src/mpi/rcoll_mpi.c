/* librcoll-mpi: the MPI drop-in. Defines, through the PMPI profiling interface, MPI_Barrier,
 * MPI_Allgather (this file), MPI_Alltoall, MPI_Bcast, MPI_Gather, MPI_Scatter, MPI_Allgatherv,
 * MPI_Alltoallv, MPI_Gatherv and MPI_Scatterv (rcoll_mpi_colls.c), plus MPI_Init,
 * MPI_Init_thread and MPI_Finalize, so that an unchanged MPI program runs these collectives on
 * rcoll when this library is LD_PRELOADed (or linked before libmpi). Everything else
 * (non-blocking and persistent collectives, the MPI-4 large-count _c forms, reductions, ...) and
 * everything below goes to the PMPI_ function.
 *
 * - One rcoll context per process (created on the first team), one team per communicator,
 *   created lazily on the communicator's first collective of those above (bootstrap:
 *   PMPI_Allgather on that communicator) and cached in a communicator attribute. The attribute
 *   is not copied by MPI_Comm_dup; its delete callback destroys the team at MPI_Comm_free, and
 *   MPI_Finalize destroys the remaining teams and the context before PMPI_Finalize.
 * - Before a team is created the ranks agree (PMPI_Allreduce) that each has an rcoll context; a
 *   team creation that fails (agreed on every rank either way) caches a "use PMPI" marker
 *   instead, so the communicator never retries.
 * - Straight to PMPI_: intercommunicators; RCOLL_MPI_DISABLE set to anything but "" or "0" (read
 *   once, at MPI_Init); and the whole process when MPI provides MPI_THREAD_MULTIPLE, because
 *   collectives from several threads would otherwise share one rcoll context, which is used by
 *   one thread at a time. Both switches are agreed over MPI_COMM_WORLD at MPI_Init (when MPI_Init
 *   is not seen, e.g. MPI initialised before this library was loaded, each rank decides alone).
 *   A rooted collective with an invalid root goes to PMPI_ too (which reports it). Communicators
 *   of one rank use rcoll like any other.
 * - rcoll or PMPI_ is decided from what every rank knows alike (the communicator's team, the
 *   collective, the root), never from one rank's counts, displacements or datatype layout,
 *   which the others cannot see. Data is handed to rcoll in bytes: count * size(type) per
 *   block (equal where MPI's type-signature rule makes it so), displacements * extent for the
 *   v-forms. A layout that is not plain bytes in type-map order (derived types other than
 *   contiguous/dup of a padding-free predefined type; for a v-form side also a negative
 *   displacement) is packed with PMPI_Pack into a contiguous temporary and unpacked with
 *   PMPI_Unpack afterwards, on either side. MPI_IN_PLACE maps to RCOLL_IN_PLACE, and arguments
 *   MPI calls insignificant on a rank (e.g. recvtype at a gather's non-roots) are never read.
 *   MPI_Allgather with zero bytes per rank returns MPI_SUCCESS at once on every rank; the other
 *   collectives pass zero sizes to rcoll, which skips what is empty everywhere.
 * - An rcoll error prints "rcoll: <detail>" on stderr and raises MPI_ERR_OTHER through the
 *   communicator's error handler; a local problem (bad count or type, send and receive sizes
 *   that differ, no memory, PMPI_Pack failing) prints "rcoll: MPI_<Coll>: <what>" and raises
 *   the matching MPI error code the same way.
 * Packing assumes a homogeneous machine (MPI's internal pack format is the raw bytes); one
 * element of a non-plain datatype must be below 2 GiB.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rcoll_mpi_internal.h"
#include "rcoll/rcoll.h"
#include "rcoll/rcoll_mpi.h"

enum { STATE_UNSET = 0, STATE_ON, STATE_OFF, STATE_FINALIZED };

/* A live team, cached on its communicator. */
struct team_node {
    MPI_Comm comm;
    rcoll_team_t *team;
    struct team_node *prev, *next;
};

/* The only global: everything the drop-in keeps for the process. */
static struct {
    int state;           /* STATE_* */
    int keyval;          /* communicator attribute holding a struct team_node * or &g.pmpi_marker */
    int thread_level;    /* provided by MPI */
    int disabled;        /* RCOLL_MPI_DISABLE */
    int ctx_failed;      /* rcoll_context_create failed once: never retried */
    int warned;          /* the team-creation warning was printed */
    rcoll_context_t *ctx;
    struct team_node *live;
    char pmpi_marker;    /* its address is the attribute value meaning "use PMPI" */
} g = { STATE_UNSET, MPI_KEYVAL_INVALID, 0, 0, 0, 0, NULL, NULL, 0 };

#define PMPI_MARKER ((void *)&g.pmpi_marker)

static void unlink_node(struct team_node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else if (g.live == n)
        g.live = n->next;
    if (n->next)
        n->next->prev = n->prev;
    n->prev = n->next = NULL;
}

static int delete_attr_fn(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    (void)comm;
    (void)keyval;
    (void)extra_state;
    if (attribute_val == NULL || attribute_val == PMPI_MARKER)
        return MPI_SUCCESS;
    struct team_node *n = attribute_val;
    unlink_node(n);
    if (n->team)
        rcoll_team_destroy(n->team);
    free(n);
    return MPI_SUCCESS;
}

/* Reads the switches and creates the keyval; `agree` makes the result the same on every rank
 * of MPI_COMM_WORLD (only where every rank calls it, i.e. from MPI_Init). */
static void setup(int agree)
{
    const char *d = getenv("RCOLL_MPI_DISABLE");
    g.disabled = d != NULL && d[0] != '\0' && strcmp(d, "0") != 0;
    g.thread_level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&g.thread_level);
    int off = g.disabled || g.thread_level == MPI_THREAD_MULTIPLE;
    if (!off && PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attr_fn, &g.keyval, NULL)
                    != MPI_SUCCESS) {
        g.keyval = MPI_KEYVAL_INVALID;
        off = 1;
    }
    if (agree) {
        int any = 1;
        if (PMPI_Allreduce(&off, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
            any = 1;
        if (any && !off) {
            PMPI_Comm_free_keyval(&g.keyval);
            g.keyval = MPI_KEYVAL_INVALID;
        }
        off = any;
    }
    g.state = off ? STATE_OFF : STATE_ON;
}

static void set_attr_or_abort(MPI_Comm comm, void *val)
{
    if (PMPI_Comm_set_attr(comm, g.keyval, val) != MPI_SUCCESS) {
        /* Not recoverable consistently: the other ranks would take another path. */
        fprintf(stderr, "rcoll: cannot cache the team on the communicator (MPI_Comm_set_attr)\n");
        PMPI_Abort(comm, 1);
    }
}

/* Creates the team of an intracommunicator that has none yet (collective over comm). */
static rcoll_team_t *create_team(MPI_Comm comm)
{
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        set_attr_or_abort(comm, PMPI_MARKER);
        return NULL;
    }
    int local_fail = 0;
    rcoll_status_t st = RCOLL_OK;
    if (g.ctx == NULL && !g.ctx_failed) {
        st = rcoll_context_create(&g.ctx);
        if (st != RCOLL_OK) {
            g.ctx = NULL;
            g.ctx_failed = 1;
        }
    }
    if (g.ctx == NULL)
        local_fail = 1;
    struct team_node *n = calloc(1, sizeof(*n));
    if (n == NULL)
        local_fail = 1;
    /* Every rank takes the same path, even if only one of them lacks a context. */
    int any_fail = 1;
    if (PMPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        any_fail = 1;
    rcoll_team_t *team = NULL;
    if (!any_fail) {
        MPI_Comm oob_comm = comm; /* lives while the team is created */
        rcoll_oob_t oob;
        rcoll_oob_from_mpi_comm(&oob_comm, &oob);
        st = rcoll_team_create(g.ctx, &oob, &team);
        if (st != RCOLL_OK)
            team = NULL;
    } else if (st == RCOLL_OK) {
        st = g.ctx_failed ? RCOLL_ERR_INVALID : RCOLL_ERR_NOMEM;
    }
    if (team == NULL) {
        free(n);
        int rank = 0, size = 0;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Comm_size(comm, &size);
        if (!g.warned && rank == 0) {
            g.warned = 1;
            fprintf(stderr,
                    "rcoll: no team for a communicator of %d ranks (%s%s): its collectives use "
                    "the MPI library\n",
                    size, any_fail ? "a rank has no rcoll context: " : "", rcoll_strerror(st));
        }
        set_attr_or_abort(comm, PMPI_MARKER);
        return NULL;
    }
    n->comm = comm;
    n->team = team;
    n->next = g.live;
    if (g.live)
        g.live->prev = n;
    g.live = n;
    set_attr_or_abort(comm, n);
    return team;
}

/* The team that runs this communicator's collectives, or NULL for PMPI. */
rcoll_team_t *rmpi_team_for(MPI_Comm comm)
{
    if (g.state != STATE_ON) {
        if (g.state != STATE_UNSET)
            return NULL;
        int initialized = 0, finalized = 0;
        PMPI_Initialized(&initialized);
        PMPI_Finalized(&finalized);
        if (!initialized || finalized)
            return NULL;
        setup(0);
        if (g.state != STATE_ON)
            return NULL;
    }
    if (comm == MPI_COMM_NULL)
        return NULL;
    void *val = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, g.keyval, &val, &flag) != MPI_SUCCESS)
        return NULL;
    if (flag)
        return val == PMPI_MARKER ? NULL : ((struct team_node *)val)->team;
    return create_team(comm);
}

int rmpi_rcoll_failed(rcoll_team_t *team, rcoll_status_t st, MPI_Comm comm)
{
    const char *detail = rcoll_team_last_error(team);
    if (detail == NULL || detail[0] == '\0')
        detail = rcoll_strerror(st);
    fprintf(stderr, "rcoll: %s\n", detail);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
}

int rmpi_local_failed(MPI_Comm comm, int code, const char *coll, const char *what)
{
    fprintf(stderr, "rcoll: %s: %s\n", coll, what);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

/* Whether `count` elements of `type` are plain bytes in type-map order starting at the buffer
 * address: a padding-free predefined type, or contiguous/dup of one without resizing. */
static int layout_is_plain(MPI_Datatype type, int depth)
{
    int ni = 0, na = 0, nd = 0, combiner = 0;
    if (depth > 16 || PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS || lb != 0 || size != extent)
        return 0;
    if (combiner == MPI_COMBINER_NAMED) /* no padding: its bytes fill its extent */
        return 1;
    if (PMPI_Type_get_true_extent_x(type, &tlb, &textent) != MPI_SUCCESS || tlb != 0 ||
        textent != size)
        return 0;
    if ((combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) || nd != 1 ||
        ni > 1 || na > 0)
        return 0;
    int ints[1];
    MPI_Aint addrs[1];
    MPI_Datatype inner;
    if (PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, &inner) != MPI_SUCCESS)
        return 0;
    int plain = layout_is_plain(inner, depth + 1);
    int ii = 0, ia = 0, id = 0, ic = 0;
    if (PMPI_Type_get_envelope(inner, &ii, &ia, &id, &ic) == MPI_SUCCESS &&
        ic != MPI_COMBINER_NAMED)
        PMPI_Type_free(&inner);
    return plain;
}

/* Packs `count` elements of `type` at `in` into `out` (count * tsize bytes), in pieces that
 * fit MPI's int sizes. */
static int pack_elems(const void *in, size_t count, MPI_Datatype type, MPI_Count tsize,
                      MPI_Aint extent, char *out, MPI_Comm comm)
{
    if (count == 0 || tsize == 0)
        return MPI_SUCCESS;
    if (tsize > INT_MAX)
        return MPI_ERR_COUNT;
    size_t per = (size_t)INT_MAX / (size_t)tsize;
    for (size_t done = 0; done < count;) {
        size_t n = count - done < per ? count - done : per;
        int pos = 0;
        int rc = PMPI_Pack(rmpi_addr_add(in, (MPI_Aint)done * extent), (int)n, type,
                           out + done * (size_t)tsize, (int)(n * (size_t)tsize), &pos, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if ((size_t)pos != n * (size_t)tsize)
            return MPI_ERR_INTERN;
        done += n;
    }
    return MPI_SUCCESS;
}

static int unpack_elems(const char *in, size_t count, MPI_Datatype type, MPI_Count tsize,
                        MPI_Aint extent, void *out, MPI_Comm comm)
{
    if (count == 0 || tsize == 0)
        return MPI_SUCCESS;
    if (tsize > INT_MAX)
        return MPI_ERR_COUNT;
    size_t per = (size_t)INT_MAX / (size_t)tsize;
    for (size_t done = 0; done < count;) {
        size_t n = count - done < per ? count - done : per;
        int pos = 0;
        int rc = PMPI_Unpack(in + done * (size_t)tsize, (int)(n * (size_t)tsize), &pos,
                             rmpi_addr_add(out, (MPI_Aint)done * extent), (int)n, type, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if ((size_t)pos != n * (size_t)tsize)
            return MPI_ERR_INTERN;
        done += n;
    }
    return MPI_SUCCESS;
}

int rmpi_dtype(MPI_Datatype type, rmpi_dtype_t *d)
{
    MPI_Aint lb = 0;
    d->type = type;
    if (PMPI_Type_size_x(type, &d->size) != MPI_SUCCESS || d->size < 0 ||
        PMPI_Type_get_extent(type, &lb, &d->extent) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    d->plain = layout_is_plain(type, 0);
    return MPI_SUCCESS;
}

int rmpi_bytes(int count, const rmpi_dtype_t *d, size_t *bytes)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (count > 0 && (unsigned long long)d->size > SIZE_MAX / (size_t)count)
        return MPI_ERR_COUNT;
    *bytes = (size_t)count * (size_t)d->size;
    return MPI_SUCCESS;
}

int rmpi_pack(const void *in, size_t count, const rmpi_dtype_t *d, char *out, MPI_Comm comm)
{
    return pack_elems(in, count, d->type, d->size, d->extent, out, comm);
}

int rmpi_unpack(const char *in, size_t count, const rmpi_dtype_t *d, void *out, MPI_Comm comm)
{
    return unpack_elems(in, count, d->type, d->size, d->extent, out, comm);
}

static int ag_failed(MPI_Comm comm, int code, const char *what)
{
    return rmpi_local_failed(comm, code, "MPI_Allgather", what);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS && g.state == STATE_UNSET)
        setup(1);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS && g.state == STATE_UNSET)
        setup(1);
    return rc;
}

int MPI_Finalize(void)
{
    if (g.state == STATE_ON || g.state == STATE_OFF) {
        while (g.live != NULL) {
            struct team_node *n = g.live;
            PMPI_Comm_delete_attr(n->comm, g.keyval); /* runs delete_attr_fn */
            if (g.live == n) { /* the callback did not run: free it here */
                unlink_node(n);
                rcoll_team_destroy(n->team);
                free(n);
            }
        }
        if (g.keyval != MPI_KEYVAL_INVALID)
            PMPI_Comm_free_keyval(&g.keyval);
        if (g.ctx != NULL)
            rcoll_context_destroy(g.ctx);
        g.ctx = NULL;
    }
    g.state = STATE_FINALIZED;
    return PMPI_Finalize();
}

int MPI_Barrier(MPI_Comm comm)
{
    rcoll_team_t *team = rmpi_team_for(comm);
    if (team == NULL)
        return PMPI_Barrier(comm);
    rcoll_status_t st = rcoll_barrier(team);
    return st == RCOLL_OK ? MPI_SUCCESS : rmpi_rcoll_failed(team, st, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    rcoll_team_t *team = rmpi_team_for(comm);
    MPI_Count rsize = 0;
    if (team == NULL || recvcount < 0 || PMPI_Type_size_x(recvtype, &rsize) != MPI_SUCCESS ||
        rsize < 0)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    /* Bytes per rank: the same on every rank (type signatures match). */
    if (recvcount > 0 && (unsigned long long)rsize > SIZE_MAX / (size_t)recvcount)
        return ag_failed(comm, MPI_ERR_COUNT, "message too large");
    size_t bytes = (size_t)recvcount * (size_t)rsize;
    if (bytes == 0)
        return MPI_SUCCESS;

    int rank = rcoll_team_rank(team);
    size_t nranks = (size_t)rcoll_team_size(team);
    int in_place = sendbuf == MPI_IN_PLACE;
    MPI_Count ssize = 0;
    if (!in_place) {
        if (sendcount < 0 || PMPI_Type_size_x(sendtype, &ssize) != MPI_SUCCESS || ssize < 0)
            return ag_failed(comm, MPI_ERR_TYPE, "invalid send count or type");
        if ((unsigned long long)ssize * (unsigned long long)sendcount != bytes) {
            /* Erroneous program (type signatures differ): where possible still take part so
             * that the other ranks complete, then report. */
            if (layout_is_plain(recvtype, 0))
                rcoll_allgather(team, RCOLL_IN_PLACE, recvbuf, bytes);
            return ag_failed(comm, MPI_ERR_TRUNCATE,
                             "send and receive sizes differ (type signature mismatch)");
        }
    }
    MPI_Aint rlb = 0, rextent = 0;
    PMPI_Type_get_extent(recvtype, &rlb, &rextent);
    int recv_plain = layout_is_plain(recvtype, 0);
    int send_plain = in_place || layout_is_plain(sendtype, 0);

    if (recv_plain) {
        const void *src = sendbuf;
        if (in_place) {
            src = RCOLL_IN_PLACE;
        } else if (!send_plain) {
            MPI_Aint slb = 0, sextent = 0;
            PMPI_Type_get_extent(sendtype, &slb, &sextent);
            int rc = pack_elems(sendbuf, (size_t)sendcount, sendtype, ssize, sextent,
                                (char *)recvbuf + (size_t)rank * bytes, comm);
            if (rc != MPI_SUCCESS)
                return ag_failed(comm, rc, "PMPI_Pack of the send data failed");
            src = RCOLL_IN_PLACE;
        }
        rcoll_status_t st = rcoll_allgather(team, src, recvbuf, bytes);
        return st == RCOLL_OK ? MPI_SUCCESS : rmpi_rcoll_failed(team, st, comm);
    }

    /* Non-plain receive layout: gather into a contiguous temporary, then unpack. */
    if (nranks != 0 && bytes > SIZE_MAX / nranks)
        return ag_failed(comm, MPI_ERR_COUNT, "message too large");
    char *tmp = malloc(bytes * nranks);
    if (tmp == NULL)
        return ag_failed(comm, MPI_ERR_NO_MEM, "out of memory for the packing buffer");
    MPI_Aint block_stride = (MPI_Aint)recvcount * rextent;
    int rc;
    if (in_place) {
        rc = pack_elems(rmpi_addr_add(recvbuf, (MPI_Aint)rank * block_stride),
                        (size_t)recvcount, recvtype, rsize, rextent, tmp + (size_t)rank * bytes,
                        comm);
    } else if (send_plain) {
        memcpy(tmp + (size_t)rank * bytes, sendbuf, bytes);
        rc = MPI_SUCCESS;
    } else {
        MPI_Aint slb = 0, sextent = 0;
        PMPI_Type_get_extent(sendtype, &slb, &sextent);
        rc = pack_elems(sendbuf, (size_t)sendcount, sendtype, ssize, sextent,
                        tmp + (size_t)rank * bytes, comm);
    }
    if (rc != MPI_SUCCESS) {
        free(tmp);
        return ag_failed(comm, rc, "PMPI_Pack of the send data failed");
    }
    rcoll_status_t st = rcoll_allgather(team, RCOLL_IN_PLACE, tmp, bytes);
    if (st != RCOLL_OK) {
        free(tmp);
        return rmpi_rcoll_failed(team, st, comm);
    }
    for (size_t i = 0; i < nranks && rc == MPI_SUCCESS; i++) {
        if (in_place && i == (size_t)rank)
            continue;
        rc = unpack_elems(tmp + i * bytes, (size_t)recvcount, recvtype, rsize, rextent,
                          rmpi_addr_add(recvbuf, (MPI_Aint)i * block_stride), comm);
    }
    free(tmp);
    if (rc != MPI_SUCCESS)
        return ag_failed(comm, rc, "PMPI_Unpack of the received data failed");
    return MPI_SUCCESS;
}
