/* librcoll-mpi: the MPI drop-in. Defines, through the PMPI profiling interface, MPI_Barrier
 * (this file), MPI_Allgather, MPI_Alltoall, MPI_Bcast, MPI_Gather, MPI_Scatter, MPI_Allgatherv,
 * MPI_Alltoallv, MPI_Gatherv and MPI_Scatterv (rcoll_mpi_colls.c), their nonblocking and
 * persistent forms with the completion calls for their requests (rcoll_mpi_nb.c), the blocking
 * reductions MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan
 * and MPI_Exscan with MPI_Op_create and MPI_Op_free (rcoll_mpi_reduce.c, which has its own
 * rules for the route), plus MPI_Init, MPI_Init_thread and MPI_Finalize, so that an unchanged
 * MPI program runs these collectives on rcoll when this library is LD_PRELOADed (or linked
 * before libmpi). Everything else (the MPI-4 large-count _c forms, nonblocking and persistent
 * reductions, MPI_Reduce_local, neighbourhood collectives, ...) and everything below goes to
 * the PMPI_ function.
 *
 * - One rcoll context per process (created on the first team), one team per communicator,
 *   created lazily on the communicator's first collective of those above (bootstrap:
 *   PMPI_Allgather on that communicator) and cached in a communicator attribute. The attribute
 *   is not copied by MPI_Comm_dup; its delete callback destroys the team at MPI_Comm_free, and
 *   MPI_Finalize destroys the remaining teams and the context before PMPI_Finalize.
 * - A rank without an rcoll context takes part in the team's creation without one (its first
 *   exchange only), so every rank's creation fails alike; a team creation that fails (agreed on
 *   every rank either way) caches a "use PMPI" marker instead, so the communicator never
 *   retries.
 * - Threads: any thread level. Under MPI_THREAD_MULTIPLE threads call collectives on different
 *   communicators at once (the program orders the calls on any one communicator, MPI's rule),
 *   each on that communicator's team; the context is shared (rcoll_context_set_threaded). The
 *   per-call lookup takes no lock (an atomic load of the state, then the thread's cached
 *   attribute, last_attr, or MPI_Comm_get_attr); a
 *   mutex guards only the list of live teams, the context's creation and a late set-up, and is
 *   never held across a collective or a team creation (thread A of rank 0 holding it for comm1
 *   while thread B of rank 1 holds it for comm2 would deadlock).
 * - Straight to PMPI_: intercommunicators; RCOLL_MPI_DISABLE set to anything but "" or "0" (read
 *   once, at MPI_Init); a process without an rcoll context (a rejected RCOLL_* value). Under
 *   MPI_THREAD_MULTIPLE the context is threaded: its threads take turns at the network worker
 *   that teams across nodes share (docs/design.md). The switch and the thread level
 *   (the highest of any rank) are agreed over MPI_COMM_WORLD at MPI_Init (when MPI_Init is not
 *   seen, e.g. MPI initialised before this library was loaded, each rank decides alone). Each
 *   of these reasons is logged once per process at RCOLL_LOG=info ("rcoll[pid]: ...: ... go to
 *   the MPI library"; RCOLL_LOG is read here too, as the context may not exist). A rooted
 *   collective with an invalid root goes to PMPI_ too (which reports it). Communicators of one
 *   rank use rcoll like any other.
 * - rcoll or PMPI_ is decided from what every rank knows alike (the communicator's team, the
 *   collective, the root), never from one rank's counts, displacements or datatype layout,
 *   which the others cannot see. Data is handed to rcoll in bytes: count * size(type) per
 *   block (equal where MPI's type-signature rule makes it so), displacements * extent for the
 *   v-forms. A layout that is not plain bytes in type-map order (derived types other than
 *   contiguous/dup of a padding-free predefined type; for a v-form side also a negative
 *   displacement) is packed with PMPI_Pack into a contiguous temporary and unpacked with
 *   PMPI_Unpack afterwards, on either side. MPI_IN_PLACE maps to RCOLL_IN_PLACE, and arguments
 *   MPI calls insignificant on a rank (e.g. recvtype at a gather's non-roots) are never read.
 *   A count of zero in a collective without v (zero on every rank, by the type-signature rule)
 *   goes to PMPI_, which returns at once; the v-forms pass zero sizes to rcoll, where a rank
 *   that moves nothing takes the call's number and leaves without waiting (under a node-aware
 *   gatherv or scatterv it takes part: its node's calls need it).
 * - An rcoll error prints "rcoll: <detail>" on stderr and raises its MPI error class through
 *   the communicator's error handler (MPI_ERR_TRUNCATE for sizes that differ between ranks,
 *   MPI_ERR_OTHER for a peer gone or a timeout); a local problem (bad count or type, send and
 *   receive sizes that differ, aliased buffers, no memory, PMPI_Pack failing) prints
 *   "rcoll: MPI_<Coll>: rank R of P: <what>" and raises the matching MPI error class the same
 *   way, after taking part with scratch buffers where its peers may be in the call
 *   (rcoll_mpi_colls.c, "Erroneous calls").
 * Packing assumes a homogeneous machine (MPI's internal pack format is the raw bytes); one
 * element of a non-plain datatype must be below 2 GiB.
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mpi/rcoll_mpi_internal.h"
#include "rcoll/rcoll.h"
#include "rcoll/rcoll_mpi.h"

enum { STATE_UNSET = 0, STATE_ON, STATE_OFF, STATE_FINALIZED };
/* RCOLL_LOG's levels, as the core reads them (the drop-in logs before any context exists). */
enum { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };
/* Why collectives go to PMPI_: each reason is logged once per process. */
enum {
    ASIDE_PROCESS,
    ASIDE_INTERCOMM,
    ASIDE_NO_CONTEXT,
    ASIDE_TEAM,
    ASIDE_CALLER, /* nonblocking and persistent only */
    ASIDE_COUNT
};

/* A live team, cached on its communicator; `refs`: one for the communicator's attribute and
 * one per request that still uses it (rmpi_hold_t); the last to let go destroys the team (a
 * count rather than a flag under g.lock: a nonblocking call takes and lets go of a hold, and
 * two mutex pairs were a tenth of a small MPI_Ibcast+MPI_Wait). */
struct team_node {
    MPI_Comm comm;
    rcoll_team_t *team;
    struct team_node *prev, *next;
    _Atomic int refs;
};

/* The only global: everything the drop-in keeps for the process. state is read without a
 * lock on every call; ctx, ctx_status and live change under `lock`, which is held only for
 * such local work, never across an MPI collective or a team creation. */
static struct {
    _Atomic int state;   /* STATE_* */
    int keyval;          /* communicator attribute holding a struct team_node * or &g.pmpi_marker */
    int thread_level;    /* provided by MPI (the highest of all ranks where agreed) */
    int host_procs;      /* processes of the job on this host (MPI_Init), 0: not known */
    int disabled;        /* RCOLL_MPI_DISABLE */
    int log_level;       /* RCOLL_LOG (LOG_*) */
    _Atomic int logged[ASIDE_COUNT]; /* the line for this reason was printed */
    pthread_mutex_t lock;
    rcoll_status_t ctx_status; /* of rcoll_context_create, called once */
    rcoll_context_t *ctx;
    struct team_node *live;
    char pmpi_marker;    /* its address is the attribute value meaning "use PMPI" */
    _Atomic unsigned attr_epoch; /* moves whenever an attribute of keyval goes (last_attr) */
    rmpi_nb_t nb;        /* rcoll_mpi_nb.c's requests */
} g = {.state = STATE_UNSET, .keyval = MPI_KEYVAL_INVALID, .lock = PTHREAD_MUTEX_INITIALIZER,
       .nb = {.lock = PTHREAD_MUTEX_INITIALIZER}};

#define PMPI_MARKER ((void *)&g.pmpi_marker)

/* Per thread, the communicator of its last collective and its attribute value: valid while
 * g.attr_epoch has not moved since. MPI_Comm_get_attr's hash lookup was a tenth of a small
 * MPI_Bcast (perf, np=2, 8 B back to back); a handle reused after MPI_Comm_free is no hit,
 * since the free ran delete_attr_fn. Thread-local so that threads calling at once
 * (MPI_THREAD_MULTIPLE) never see each other's half-written entries; in the static TLS block
 * (initial-exec: the library is preloaded or linked, and 32 bytes fit the surplus glibc keeps
 * for a later dlopen), so that a read is one instruction rather than a __tls_get_addr call. */
static _Thread_local struct {
    MPI_Comm comm;
    void *val;
    unsigned epoch;
    bool set;
} last_attr __attribute__((tls_model("initial-exec")));

static void link_node(struct team_node *n)
{
    pthread_mutex_lock(&g.lock);
    n->next = g.live;
    if (g.live)
        g.live->prev = n;
    g.live = n;
    pthread_mutex_unlock(&g.lock);
}

static void unlink_node(struct team_node *n)
{
    pthread_mutex_lock(&g.lock);
    if (n->prev)
        n->prev->next = n->next;
    else if (g.live == n)
        g.live = n->next;
    if (n->next)
        n->next->prev = n->prev;
    n->prev = n->next = NULL;
    pthread_mutex_unlock(&g.lock);
}

static struct team_node *first_live(void)
{
    pthread_mutex_lock(&g.lock);
    struct team_node *n = g.live;
    pthread_mutex_unlock(&g.lock);
    return n;
}

static int read_log_level(void)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    const char *v = getenv("RCOLL_LOG");
    for (int i = 0; v != NULL && i < 4; i++)
        if (strcasecmp(v, names[i]) == 0)
            return i;
    return LOG_WARN; /* unset, or invalid (the context then reports it) */
}

/* Says why collectives go to the MPI library: one line per reason and process, at `level` and
 * above, in the core's log format. */
static void log_aside(int reason, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void log_aside(int reason, int level, const char *fmt, ...)
{
    if (g.log_level < level || atomic_exchange(&g.logged[reason], 1))
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "rcoll[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

/* "MPI_COMM_WORLD (4 ranks)", or "a communicator of 4 ranks" if it has no name (an
 * intercommunicator: the ranks of the local group). */
static const char *comm_label(MPI_Comm comm, char *buf, size_t len)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int nlen = 0, size = 0;
    PMPI_Comm_size(comm, &size);
    const char *s = size == 1 ? "" : "s";
    if (PMPI_Comm_get_name(comm, name, &nlen) == MPI_SUCCESS && nlen > 0)
        snprintf(buf, len, "%s (%d rank%s)", name, size, s);
    else
        snprintf(buf, len, "a communicator of %d rank%s", size, s);
    return buf;
}

/* Lets go of one reference to n: the last destroys its team (outside any lock). */
static void node_release(struct team_node *n)
{
    if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (n->team)
        rcoll_team_destroy(n->team);
    free(n);
}

static int delete_attr_fn(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    (void)comm;
    (void)keyval;
    (void)extra_state;
    atomic_fetch_add_explicit(&g.attr_epoch, 1, memory_order_acq_rel); /* before n goes */
    if (attribute_val == NULL || attribute_val == PMPI_MARKER)
        return MPI_SUCCESS;
    struct team_node *n = attribute_val;
    unlink_node(n);
    node_release(n); /* requests still running on it: the last one's release destroys it */
    return MPI_SUCCESS;
}

/* The communicator's attribute of g.keyval: 1 and *val, 0 if it has none, -1 if the lookup
 * failed; from this thread's last_attr where it still holds. */
static int attr_of(MPI_Comm comm, void **val)
{
    unsigned epoch = atomic_load_explicit(&g.attr_epoch, memory_order_acquire);
    if (last_attr.set && last_attr.comm == comm && last_attr.epoch == epoch) {
        *val = last_attr.val;
        return 1;
    }
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, g.keyval, val, &flag) != MPI_SUCCESS)
        return -1;
    if (!flag)
        return 0;
    last_attr.comm = comm;
    last_attr.val = *val;
    last_attr.epoch = epoch;
    last_attr.set = true;
    return 1;
}

rmpi_hold_t *rmpi_team_hold(MPI_Comm comm)
{
    void *val = NULL;
    if (g.keyval == MPI_KEYVAL_INVALID || attr_of(comm, &val) != 1 || val == NULL ||
        val == PMPI_MARKER)
        return NULL;
    struct team_node *n = val;
    atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
    return (rmpi_hold_t *)n;
}

void rmpi_team_release(rmpi_hold_t *h)
{
    if (h != NULL)
        node_release((struct team_node *)h);
}

int rmpi_thread_level(void)
{
    return g.thread_level;
}

rmpi_nb_t *rmpi_nb(void)
{
    return &g.nb;
}

/* Why this process sends every collective to PMPI_ (setup agreed on "off"). */
static void log_process_off(int keyval_failed)
{
    const char *d = getenv("RCOLL_MPI_DISABLE");
    if (g.disabled)
        log_aside(ASIDE_PROCESS, LOG_INFO, "RCOLL_MPI_DISABLE=%s: every collective goes to the "
                  "MPI library", d);
    else if (keyval_failed)
        log_aside(ASIDE_PROCESS, LOG_WARN, "MPI_Comm_create_keyval failed: every collective goes "
                  "to the MPI library");
    else
        log_aside(ASIDE_PROCESS, LOG_INFO, "another rank of MPI_COMM_WORLD has RCOLL_MPI_DISABLE "
                  "set (or no communicator attribute): every collective goes to the MPI library");
}

/* Reads the switches and creates the keyval; `agree` makes the result (and the thread level)
 * the same on every rank of MPI_COMM_WORLD (only where every rank calls it: from MPI_Init). */
/* The job's processes on this host (MPI_COMM_TYPE_SHARED; collective over MPI_COMM_WORLD):
 * a team on a sub-communicator sees only its members, but waits must know who else shares the
 * cores. 0 if MPI cannot tell. */
static int host_procs(void)
{
    MPI_Comm host;
    int n = 0;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) !=
        MPI_SUCCESS)
        return 0;
    if (PMPI_Comm_size(host, &n) != MPI_SUCCESS)
        n = 0;
    PMPI_Comm_free(&host);
    return n;
}

static void setup(int agree)
{
    const char *d = getenv("RCOLL_MPI_DISABLE");
    g.disabled = d != NULL && d[0] != '\0' && strcmp(d, "0") != 0;
    g.log_level = read_log_level();
    g.thread_level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&g.thread_level);
    int keyval_failed = 0;
    if (!g.disabled && PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attr_fn, &g.keyval,
                                               NULL) != MPI_SUCCESS) {
        g.keyval = MPI_KEYVAL_INVALID;
        keyval_failed = 1;
    }
    /* off, and the thread level: MPI_THREAD_SINGLE < ... < MPI_THREAD_MULTIPLE (the standard) */
    int mine[2] = {g.disabled || keyval_failed, g.thread_level};
    int all[2] = {mine[0], mine[1]};
    if (agree && PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        all[0] = 1;
    g.thread_level = all[1];
    g.nb.locking = g.thread_level == MPI_THREAD_MULTIPLE;
    if (agree && !all[0])
        g.host_procs = host_procs();
    if (all[0]) {
        if (g.keyval != MPI_KEYVAL_INVALID)
            PMPI_Comm_free_keyval(&g.keyval);
        g.keyval = MPI_KEYVAL_INVALID;
        log_process_off(keyval_failed);
    }
    atomic_store_explicit(&g.state, all[0] ? STATE_OFF : STATE_ON, memory_order_release);
}

/* MPI initialised without our MPI_Init (e.g. before this library was loaded): each rank sets up
 * alone, once, on its first collective. Whether rcoll is on. */
static int late_setup(void)
{
    if (atomic_load_explicit(&g.state, memory_order_acquire) != STATE_UNSET)
        return 0;
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return 0;
    pthread_mutex_lock(&g.lock); /* threads on their first collectives at once: one sets up */
    if (atomic_load_explicit(&g.state, memory_order_acquire) == STATE_UNSET)
        setup(0);
    pthread_mutex_unlock(&g.lock);
    return atomic_load_explicit(&g.state, memory_order_acquire) == STATE_ON;
}

static void set_attr_or_abort(MPI_Comm comm, void *val)
{
    if (PMPI_Comm_set_attr(comm, g.keyval, val) != MPI_SUCCESS) {
        /* Not recoverable consistently: the other ranks would take another path. */
        fprintf(stderr, "rcoll: cannot cache the team on the communicator (MPI_Comm_set_attr)\n");
        PMPI_Abort(comm, 1);
    }
}

/* The process's rcoll context, created on first use; NULL if that failed (never retried). */
static rcoll_context_t *get_context(void)
{
    pthread_mutex_lock(&g.lock);
    if (g.ctx == NULL && g.ctx_status == RCOLL_OK) {
        g.ctx_status = rcoll_context_create(&g.ctx);
        if (g.ctx_status != RCOLL_OK)
            g.ctx = NULL;
        else if (g.thread_level == MPI_THREAD_MULTIPLE)
            rcoll_context_set_threaded(g.ctx, 1); /* threads take turns at the network */
        if (g.ctx)
            rcoll_context_set_host_procs(g.ctx, g.host_procs);
    }
    rcoll_context_t *ctx = g.ctx;
    pthread_mutex_unlock(&g.lock);
    return ctx;
}

/* Says (once per process and reason) why comm got no team: its collectives go to PMPI_. An
 * unexpected failure is a warning on the communicator's rank 0, the rest is information. */
static void log_no_team(MPI_Comm comm, rcoll_context_t *ctx, int local_fail, rcoll_status_t st)
{
    char label[MPI_MAX_OBJECT_NAME + 64];
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    comm_label(comm, label, sizeof label);
    int level = rank == 0 ? LOG_WARN : LOG_INFO;
    if (ctx == NULL)
        log_aside(ASIDE_NO_CONTEXT, level, "no rcoll context on this rank (%s): collectives go "
                  "to the MPI library", rcoll_strerror(g.ctx_status));
    else if (local_fail)
        log_aside(ASIDE_NO_CONTEXT, level, "%s: out of memory: its collectives go to the MPI "
                  "library", label);
    else
        log_aside(ASIDE_TEAM, level, "%s: team creation failed (%s%s): its collectives go to the "
                  "MPI library", label, rcoll_strerror(st),
                  st == RCOLL_ERR_INVALID ? "; e.g. a rank without an rcoll context" : "");
}

void rmpi_log_caller_mode(MPI_Comm comm, const char *how)
{
    char label[MPI_MAX_OBJECT_NAME + 64];
    if (g.log_level >= LOG_INFO && !atomic_load(&g.logged[ASIDE_CALLER]))
        log_aside(ASIDE_CALLER, LOG_INFO, "%s: its requests progress only inside rcoll calls of "
                  "each rank (progress mode %s): its nonblocking and persistent collectives go "
                  "to the MPI library", comm_label(comm, label, sizeof label),
                  how ? how : "unknown");
}

void rmpi_log_request(MPI_Comm comm, const char *name, const rcoll_request_t *req,
                      const rcoll_team_t *team)
{
    if (g.log_level < LOG_INFO)
        return;
    char label[MPI_MAX_OBJECT_NAME + 64];
    const char *algo = req ? rcoll_request_algorithm(req) : "";
    fprintf(stderr, "rcoll[%d]: %s on %s: request, algorithm %s (progress: %s)\n", (int)getpid(),
            name, comm_label(comm, label, sizeof label), algo && algo[0] ? algo : "none",
            rcoll_team_progress_mode(team));
}

/* Creates the team of an intracommunicator that has none yet (collective over comm). */
static rcoll_team_t *create_team(MPI_Comm comm)
{
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        char label[MPI_MAX_OBJECT_NAME + 64];
        log_aside(ASIDE_INTERCOMM, LOG_INFO, "%s (local group) is an intercommunicator: "
                  "collectives on intercommunicators go to the MPI library",
                  comm_label(comm, label, sizeof label));
        set_attr_or_abort(comm, PMPI_MARKER);
        return NULL;
    }
    rcoll_context_t *ctx = get_context();
    struct team_node *n = calloc(1, sizeof(*n));
    int local_fail = ctx == NULL || n == NULL;
    /* Every rank takes the same path, even if only one of them lacks a context: that one takes
     * part in the team's first exchange without one (no agreement of its own before it). */
    MPI_Comm oob_comm = comm; /* lives while the team is created */
    rcoll_oob_t oob;
    rcoll_oob_from_mpi_comm(&oob_comm, &oob);
    rcoll_team_t *team = NULL;
    rcoll_status_t st = rcoll_team_create(local_fail ? NULL : ctx, &oob, &team);
    if (st != RCOLL_OK)
        team = NULL;
    if (team == NULL) {
        free(n);
        log_no_team(comm, ctx, local_fail, st);
        set_attr_or_abort(comm, PMPI_MARKER);
        return NULL;
    }
    n->comm = comm;
    n->team = team;
    atomic_init(&n->refs, 1);
    link_node(n);
    set_attr_or_abort(comm, n);
    return team;
}

/* The team that runs this communicator's collectives, or NULL for PMPI. No lock: threads
 * calling at once use different communicators (MPI's rule), and the attribute is MPI's. */
rcoll_team_t *rmpi_team_for(MPI_Comm comm)
{
    if (atomic_load_explicit(&g.state, memory_order_acquire) != STATE_ON && !late_setup())
        return NULL;
    if (comm == MPI_COMM_NULL)
        return NULL;
    void *val = NULL;
    int found = attr_of(comm, &val);
    if (found < 0)
        return NULL;
    if (found == 0)
        return create_team(comm);
    return val == PMPI_MARKER ? NULL : ((struct team_node *)val)->team;
}

int rmpi_rcoll_failed(rcoll_team_t *team, rcoll_status_t st, MPI_Comm comm)
{
    const char *detail = rcoll_team_last_error(team);
    if (detail == NULL || detail[0] == '\0')
        detail = rcoll_strerror(st);
    fprintf(stderr, "rcoll: %s\n", detail);
    int code = rmpi_rcoll_code(st);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int rmpi_rcoll_code(rcoll_status_t st)
{
    return st == RCOLL_ERR_TRUNCATE ? MPI_ERR_TRUNCATE
           : st == RCOLL_ERR_ARG    ? MPI_ERR_ARG
                                    : MPI_ERR_OTHER;
}

int rmpi_local_failed(MPI_Comm comm, int code, const char *coll, const char *what)
{
    fprintf(stderr, "rcoll: %s: %s\n", coll, what);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

/* The size of a common predefined type whose bytes fill its extent (size == extent, lb 0),
 * by comparing handles: no MPI call on the path of most calls; 0 for any other type. */
static int named_plain_size(MPI_Datatype t)
{
    if (t == MPI_BYTE || t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR ||
        t == MPI_INT8_T || t == MPI_UINT8_T)
        return 1;
    if (t == MPI_INT || t == MPI_DOUBLE || t == MPI_FLOAT || t == MPI_UNSIGNED ||
        t == MPI_INT32_T || t == MPI_UINT32_T)
        return t == MPI_DOUBLE ? (int)sizeof(double) : 4;
    if (t == MPI_LONG || t == MPI_UNSIGNED_LONG)
        return (int)sizeof(long);
    if (t == MPI_LONG_LONG || t == MPI_UNSIGNED_LONG_LONG || t == MPI_INT64_T ||
        t == MPI_UINT64_T)
        return 8;
    if (t == MPI_SHORT || t == MPI_UNSIGNED_SHORT || t == MPI_INT16_T || t == MPI_UINT16_T)
        return 2;
    return 0;
}

/* Whether `count` elements of `type` are plain bytes in type-map order starting at the buffer
 * address: a padding-free predefined type, or contiguous/dup of one without resizing. */
static int layout_is_plain(MPI_Datatype type, int depth)
{
    if (named_plain_size(type))
        return 1;
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
    int named = named_plain_size(type);
    if (named) {
        d->size = d->extent = named;
        d->plain = 1;
        return MPI_SUCCESS;
    }
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

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS && atomic_load(&g.state) == STATE_UNSET)
        setup(1);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS && atomic_load(&g.state) == STATE_UNSET)
        setup(1);
    return rc;
}

/* Called once no other thread is in MPI (MPI's rule). */
int MPI_Finalize(void)
{
    int state = atomic_load(&g.state);
    if (state == STATE_ON || state == STATE_OFF) {
        rmpi_nb_finalize();
        rmpi_reduce_finalize();
        struct team_node *n;
        while ((n = first_live()) != NULL) {
            PMPI_Comm_delete_attr(n->comm, g.keyval); /* runs delete_attr_fn */
            if (first_live() == n) { /* the callback did not run: free it here */
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
    atomic_store(&g.state, STATE_FINALIZED);
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
