/* librcoll-mpi, nonblocking and persistent collectives: MPI_Ibarrier, MPI_Iallgather,
 * MPI_Ialltoall, MPI_Ibcast, MPI_Igather, MPI_Iscatter, MPI_Iallgatherv, MPI_Ialltoallv,
 * MPI_Igatherv, MPI_Iscatterv, the reductions MPI_Iallreduce, MPI_Ireduce,
 * MPI_Ireduce_scatter_block, MPI_Ireduce_scatter, MPI_Iscan, MPI_Iexscan (route and bodies:
 * rcoll_mpi_reduce.c's), the MPI-4 persistent forms MPI_<Coll>_init where mpi.h declares
 * them (MPI_VERSION >= 4: MPICH 4; Open MPI 4.1 has only MPIX_ ones, left to it), and the
 * completion calls of their requests: MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testall,
 * MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome, MPI_Request_get_status,
 * MPI_Request_free, MPI_Start, MPI_Startall, MPI_Cancel.
 * - Route: as the blocking call (the same body, rcoll_mpi_colls.c: communicator, root, a count
 *   of zero, checks and erroneous calls alike), and only where the team's requests progress
 *   without this rank (rcoll_team_progress_mode "peers" or "thread", alike on every rank; or
 *   a communicator of one rank): in "caller" mode a valid program could deadlock (rank 0
 *   posts, then waits in a native MPI_Recv for rank 1, which waits for the collective), so
 *   such a communicator's nonblocking and persistent collectives go to PMPI_ (said once at
 *   RCOLL_LOG=info). A reduction with a user operation also goes to PMPI_ on a "thread" team
 *   below MPI_THREAD_MULTIPLE (see route()).
 * - On one node a persistent request runs on a team of its own (own_team: a split of the
 *   communicator made at its initialization, freed with the request), because MPI matches persistent collectives
 *   at their initialization and lets ranks start them in any order, while rcoll numbers a
 *   team's requests as they start. Across nodes too (progress mode "thread").
 * - A plan owns what its request needs until it is freed: temporaries, datatype duplicates,
 *   and whatever the body hooked to its release (rmpi_plan_on_free: a user operation's rcoll
 *   op and its hold on the caller's datatype), released after the rcoll request.
 * - Handles are MPI's own requests, so they mix with native ones in arrays: every call,
 *   nonblocking or persistent, gets an inactive persistent request of MPI that is never
 *   started (PMPI_Recv_init on MPI_COMM_SELF). MPI treats it as inactive; the table below
 *   knows whether it is active. A released plan keeps its handle while it waits among the
 *   spares for the next call, so a call makes and frees no MPI request (up to 16 requests at
 *   once). A completed nonblocking call's handle becomes
 *   MPI_REQUEST_NULL in the completion call (ours, below), as MPI's own would. A plan
 *   (rmpi_plan_t) is the record of either. (A generalized request per nonblocking call, as
 *   before, cost about 500 of the 2,700 instructions of an MPI_Ibcast+MPI_Wait in Open MPI:
 *   its start, query, completion and free.)
 * - The table from handle to plan (a hash in the process state, rmpi_nb_t) is empty in a
 *   program that never posts through rcoll: every completion wrapper first reads its count and
 *   goes straight to PMPI_ when it is 0.
 * - Completion: rcoll requests are tested (rcoll_test) in a loop that keeps MPI's progress
 *   going (PMPI_Iprobe on MPI_COMM_WORLD every 32 spinning pauses and after each yield or
 *   sleep: the native requests of the array, and a peer waiting for our native send, keep
 *   moving) and between tests pauses as rcoll_wait would (rcoll_team_pause: the team's wait
 *   policy); once every rcoll request the call needs is complete, the PMPI_ form of the call
 *   runs on the whole array (ours are inactive to MPI), so statuses, MPI_REQUEST_NULL and
 *   native requests are MPI's own. A collective's status is what MPI gives
 *   its own collective requests (source 0, tag 0, count 0, not cancelled; MPI_ERROR as MPI
 *   sets it per call). An rcoll error prints "rcoll: <detail>" when found and raises its MPI
 *   class (rmpi_rcoll_code) through the request's communicator's error handler in the call
 *   that completes it (MPI_ERR_IN_STATUS with MPI_ERROR set per request for the all and some
 *   forms).
 * - MPI_Cancel on an rcoll request raises what the MPI library raises for its own collective
 *   requests, through MPI_COMM_WORLD's handler, and leaves the request as it was (Open MPI:
 *   MPI_ERR_REQUEST, MPICH: MPI_ERR_INTERN). MPI_Request_free on a request still under way (MPI
 *   calls it erroneous) is refused as both libraries refuse it for their own collective
 *   requests; the request stays. MPI_Start on an active persistent request, or on a
 *   nonblocking one, raises MPI_ERR_REQUEST through MPI_COMM_WORLD's handler, as both
 *   libraries do for their own. Orphans are the stand-ins of erroneous calls, under way with no handle.
 * - A request keeps its communicator's team alive (rmpi_team_hold): MPI_Comm_free with
 *   requests outstanding, as MPI allows, destroys the team after the last one.
 * - Threads: under MPI_THREAD_MULTIPLE the table, the orphans and the spares are under a lock,
 *   never held across an MPI or rcoll call; MPI's rule that one request is used by one thread
 *   at a time covers the rest. */
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rcoll_mpi_internal.h"

/* What MPI_Cancel raises for a collective request: the MPI library's own answer. */
#if defined(OPEN_MPI)
#define CANCEL_CLASS MPI_ERR_REQUEST
#elif defined(MPICH)
#define CANCEL_CLASS MPI_ERR_INTERN
#else
#define CANCEL_CLASS MPI_ERR_REQUEST
#endif
/* What MPI_Request_free of an active collective request raises (erroneous in MPI): the MPI
 * library's own answer for its own requests, which stay active. */
#if defined(MPICH)
#define FREE_ACTIVE_CLASS MPI_ERR_OTHER
#else
#define FREE_ACTIVE_CLASS MPI_ERR_REQUEST
#endif

#define NOROOT (-1)

typedef struct {
    int kind, after;
    const void *in;
    void *out;
    size_t count; /* elements (pack, unpack) or bytes (copy) */
    rmpi_dtype_t d;
    int dup; /* d.type is our duplicate of the program's datatype (it may free its own) */
} step_t;

struct mem {
    struct mem *next;
    alignas(max_align_t) unsigned char data[];
};

struct hook {
    struct hook *next;
    void (*fn)(void *);
    void *arg;
};

enum { IN_NONE, IN_TABLE, IN_ORPHANS };

struct rmpi_plan {
    rmpi_mode_t mode;
    MPI_Comm comm;
    const char *name;
    rcoll_team_t *team;
    rmpi_hold_t *hold;
    MPI_Comm own;         /* a persistent request's own communicator (MPI_COMM_NULL: none) */
    rcoll_request_t *req; /* NULL: nothing to move (completes at once) */
    MPI_Request handle;   /* the program's handle (MPI_REQUEST_NULL: none) */
    int where;            /* IN_* */
    struct rmpi_plan *next;
    int active; /* posted, or started and not yet completed by a completion call */
    int done;   /* this start's rcoll request completed and the steps after it ran */
    int code;   /* its MPI error class (MPI_SUCCESS) */
    step_t *steps;
    int nsteps, cap;
    struct mem *mem;
    struct hook *hooks; /* run when the plan is freed (in its memory) */
};

/* ---- the table and the orphans (rmpi_nb_t, in the process state) ---- */

static void lock(rmpi_nb_t *nb)
{
    if (nb->locking)
        pthread_mutex_lock(&nb->lock);
}

static void unlock(rmpi_nb_t *nb)
{
    if (nb->locking)
        pthread_mutex_unlock(&nb->lock);
}

static int none_live(void)
{
    return atomic_load_explicit(&rmpi_nb()->live, memory_order_acquire) == 0;
}

static unsigned bucket_of(MPI_Request h)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 40) % RMPI_NB_BUCKETS;
}

static void table_add(rmpi_plan_t *p)
{
    rmpi_nb_t *nb = rmpi_nb();
    unsigned b = bucket_of(p->handle);
    lock(nb);
    p->next = nb->bucket[b];
    nb->bucket[b] = p;
    p->where = IN_TABLE;
    atomic_fetch_add(&nb->live, 1);
    unlock(nb);
}

/* Takes p out of the table or the orphans, wherever it is. */
static void unlist(rmpi_plan_t *p)
{
    rmpi_nb_t *nb = rmpi_nb();
    lock(nb);
    rmpi_plan_t **at = p->where == IN_TABLE     ? &nb->bucket[bucket_of(p->handle)]
                       : p->where == IN_ORPHANS ? &nb->orphans
                                                : NULL;
    while (at && *at && *at != p)
        at = &(*at)->next;
    if (at && *at) {
        *at = p->next;
        atomic_fetch_sub(&nb->live, 1);
    }
    p->where = IN_NONE;
    p->next = NULL;
    unlock(nb);
}

static rmpi_plan_t *lookup(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL || none_live())
        return NULL;
    rmpi_nb_t *nb = rmpi_nb();
    lock(nb);
    rmpi_plan_t *p = nb->bucket[bucket_of(h)];
    while (p && p->handle != h)
        p = p->next;
    unlock(nb);
    return p;
}

static void orphan_add(rmpi_plan_t *p)
{
    rmpi_nb_t *nb = rmpi_nb();
    lock(nb);
    p->next = nb->orphans;
    nb->orphans = p;
    p->where = IN_ORPHANS;
    atomic_fetch_add(&nb->live, 1);
    unlock(nb);
}

/* ---- handles ---- */

/* A new handle: an inactive persistent request of MPI (a receive from rank 0 of MPI_COMM_SELF,
 * never started. Not from MPI_PROC_NULL: in MPICH 4.0 a freed persistent request on
 * MPI_PROC_NULL makes a later persistent collective of count 0 hang, without rcoll too). A
 * plan keeps its handle while it waits among the spares, so that a call makes none. */
static int handle_make(MPI_Request *h)
{
    static char none[1];
    int rc = PMPI_Recv_init(none, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, h);
    if (rc != MPI_SUCCESS)
        *h = MPI_REQUEST_NULL;
    return rc;
}

static void handle_free(MPI_Request *h)
{
    if (*h != MPI_REQUEST_NULL)
        PMPI_Request_free(h);
}

/* ---- plans ---- */

/* A released plan kept with its step array and its handle, cleared, or a new one (no handle
 * yet). */
static rmpi_plan_t *plan_get(void)
{
    rmpi_nb_t *nb = rmpi_nb();
    rmpi_plan_t *p = NULL;
    lock(nb);
    if (nb->spares)
        p = nb->spare[--nb->spares];
    unlock(nb);
    if (p == NULL) {
        if ((p = calloc(1, sizeof *p)) != NULL)
            p->handle = MPI_REQUEST_NULL;
        return p;
    }
    step_t *steps = p->steps;
    int cap = p->cap;
    MPI_Request handle = p->handle;
    memset(p, 0, sizeof *p);
    p->steps = steps;
    p->cap = cap;
    p->handle = handle;
    return p;
}

/* A plan's own memory and handle freed. */
static void plan_destroy(rmpi_plan_t *p)
{
    handle_free(&p->handle);
    free(p->steps);
    free(p);
}

/* Keeps a released plan (its steps and memory already let go, its handle kept) for plan_get,
 * or destroys it. */
static void plan_put(rmpi_plan_t *p)
{
    rmpi_nb_t *nb = rmpi_nb();
    lock(nb);
    int kept = nb->spares < RMPI_NB_SPARES;
    if (kept)
        nb->spare[nb->spares++] = p;
    unlock(nb);
    if (!kept)
        plan_destroy(p);
}

/* A plan for the call on c->team; `own`: the communicator of that team when it is the
 * persistent request's own (freed with the plan), else MPI_COMM_NULL. */
static rmpi_plan_t *plan_new(const rmpi_call_t *c, rmpi_mode_t mode, MPI_Comm own)
{
    rmpi_plan_t *p = plan_get();
    if (p == NULL)
        return NULL;
    p->mode = mode;
    p->comm = c->comm;
    p->name = c->name;
    p->team = c->team;
    p->own = own;
    p->hold = rmpi_team_hold(own != MPI_COMM_NULL ? own : c->comm);
    return p;
}

static void plan_free(rmpi_plan_t *p)
{
    if (p == NULL)
        return;
    if (p->req)
        rcoll_request_free(p->req);
    for (struct hook *h = p->hooks; h != NULL; h = h->next)
        h->fn(h->arg);
    for (int i = 0; i < p->nsteps; i++)
        if (p->steps[i].dup)
            PMPI_Type_free(&p->steps[i].d.type);
    while (p->mem) {
        struct mem *m = p->mem;
        p->mem = m->next;
        free(m);
    }
    rmpi_team_release(p->hold);
    if (p->own != MPI_COMM_NULL)
        PMPI_Comm_free(&p->own); /* local; its team goes with the last hold */
    plan_put(p);
}

void *rmpi_plan_alloc(rmpi_plan_t *p, size_t bytes)
{
    if (bytes > SIZE_MAX - sizeof(struct mem))
        return NULL;
    struct mem *m = calloc(1, sizeof *m + bytes);
    if (m == NULL)
        return NULL;
    m->next = p->mem;
    p->mem = m;
    return m->data;
}

int rmpi_plan_on_free(rmpi_plan_t *p, void (*fn)(void *), void *arg)
{
    struct hook *h = rmpi_plan_alloc(p, sizeof *h);
    if (h == NULL)
        return MPI_ERR_NO_MEM;
    h->fn = fn;
    h->arg = arg;
    h->next = p->hooks;
    p->hooks = h;
    return MPI_SUCCESS;
}

static int named_type(MPI_Datatype t)
{
    int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

int rmpi_plan_step(rmpi_plan_t *p, int after, int kind, const void *in, size_t count,
                   const rmpi_dtype_t *d, void *out)
{
    if (p->nsteps == p->cap) {
        int cap = p->cap ? 2 * p->cap : 4;
        step_t *s = realloc(p->steps, (size_t)cap * sizeof *s);
        if (s == NULL)
            return MPI_ERR_NO_MEM;
        p->steps = s;
        p->cap = cap;
    }
    step_t *s = &p->steps[p->nsteps];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->after = after;
    s->in = in;
    s->out = out;
    s->count = count;
    if (d != NULL) {
        s->d = *d;
        if (!named_type(d->type)) {
            if (PMPI_Type_dup(d->type, &s->d.type) != MPI_SUCCESS)
                return MPI_ERR_TYPE;
            s->dup = 1;
        }
    }
    p->nsteps++;
    return MPI_SUCCESS;
}

/* Runs the steps before the call (after = 0) or after it (1); the first MPI error. */
static int run_steps(rmpi_plan_t *p, int after)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < p->nsteps && rc == MPI_SUCCESS; i++) {
        const step_t *s = &p->steps[i];
        if (s->after != after)
            continue;
        if (s->kind == RMPI_STEP_PACK)
            rc = rmpi_pack(s->in, s->count, &s->d, s->out, p->comm);
        else if (s->kind == RMPI_STEP_UNPACK)
            rc = rmpi_unpack(s->in, s->count, &s->d, s->out, p->comm);
        else if (s->count)
            memcpy(s->out, s->in, s->count);
    }
    return rc;
}

/* A local problem found while the call is under way: printed now, raised at completion. */
static void plan_problem(rmpi_plan_t *p, int code, const char *what)
{
    if (p->code != MPI_SUCCESS)
        return;
    p->code = code;
    int rank = 0, size = 0;
    PMPI_Comm_rank(p->comm, &rank);
    PMPI_Comm_size(p->comm, &size);
    fprintf(stderr, "rcoll: %s: rank %d of %d: %s\n", p->name, rank, size, what);
}

rcoll_request_t **rmpi_plan_request(rmpi_plan_t *p)
{
    if (p == NULL)
        return NULL;
    if (p->mode == RMPI_POST && run_steps(p, 0) != MPI_SUCCESS)
        plan_problem(p, MPI_ERR_OTHER, "PMPI_Pack of the send data failed");
    return &p->req;
}

int rmpi_plan_persistent(const rmpi_plan_t *p)
{
    return p->mode == RMPI_INIT;
}

/* rcoll reported completion with st: the steps after the call, and the outcome. */
static void plan_completed(rmpi_plan_t *p, rcoll_status_t st)
{
    p->done = 1;
    if (st != RCOLL_OK && p->code == MPI_SUCCESS) {
        const char *detail = rcoll_team_last_error(p->team);
        fprintf(stderr, "rcoll: %s\n", detail && detail[0] ? detail : rcoll_strerror(st));
        p->code = rmpi_rcoll_code(st);
    }
    if (st == RCOLL_OK && run_steps(p, 1) != MPI_SUCCESS)
        plan_problem(p, MPI_ERR_OTHER, "PMPI_Unpack of the received data failed");
}

/* One test of p's current start: 1 once complete. */
static int plan_test(rmpi_plan_t *p)
{
    if (p->done)
        return 1;
    int done = 1;
    rcoll_status_t st = p->req ? rcoll_test(p->req, &done) : RCOLL_OK;
    if (!done && st == RCOLL_OK)
        return 0;
    plan_completed(p, st);
    return 1;
}

/* Keeps MPI's own requests moving while we wait for rcoll's: a probe progresses them all and
 * neither matches nor completes anything. On MPI_COMM_WORLD: MPICH answers a probe on
 * MPI_COMM_SELF without its progress engine (a peer waiting for our native send would
 * starve). */
static void poke(void)
{
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

/* A wait loop of ours: the team whose policy it pauses by, its pauses so far, and whether the
 * last one gave the core away. */
typedef struct {
    rcoll_team_t *team;
    uint64_t polls;
    int away;
} waiting_t;

/* One pause between tests: MPI's own progress at the first pause, every 32nd while the team's
 * pauses spin (a few microseconds) and after every pause that yielded or slept; then
 * rcoll_team_pause, which spins, yields or sleeps as rcoll_wait would. Yielding at every
 * pause made a rank with a core of its own give it away where rcoll's own waits spin (np=2,
 * MPI_Ibarrier + MPI_Wait: a fifth of the time in sched_yield), and a probe of MPI's progress
 * engine per test, or a clock read per pause, cost as much again. */
static void wait_pause(waiting_t *w)
{
    if (w->away || (w->polls & 31) == 0)
        poke();
    if (w->team) {
        w->away = rcoll_team_pause(w->team, &w->polls);
    } else {
        w->polls++;
        w->away = 1;
        sched_yield();
    }
}

static void drive(rmpi_plan_t *p)
{
    waiting_t w = {p->team, 0, 0};
    while (!plan_test(p))
        wait_pause(&w);
}

/* Releases a plan the program is done with: out of the table, and freed with its handle
 * kept for the next call. */
static void plan_release(rmpi_plan_t *p)
{
    unlist(p);
    plan_free(p);
}

/* A completed nonblocking request's end in a completion call: released, and the program's
 * handle MPI_REQUEST_NULL as MPI's own would be. */
static void plan_finished(rmpi_plan_t *p, MPI_Request *handle)
{
    plan_release(p);
    *handle = MPI_REQUEST_NULL;
}

/* Takes the orphans of `team` (NULL: all) out of the list. */
static rmpi_plan_t *take_orphans(const rcoll_team_t *team)
{
    rmpi_nb_t *nb = rmpi_nb();
    rmpi_plan_t *mine = NULL;
    lock(nb);
    for (rmpi_plan_t **at = &nb->orphans; *at;) {
        rmpi_plan_t *o = *at;
        if (team != NULL && o->team != team) {
            at = &o->next;
            continue;
        }
        *at = o->next;
        o->next = mine;
        o->where = IN_NONE;
        mine = o;
        atomic_fetch_sub(&nb->live, 1);
    }
    unlock(nb);
    return mine;
}

/* The team's orphans, tested once before its next call: released if done, else kept. */
static void tend_orphans(const rcoll_team_t *team)
{
    if (none_live())
        return;
    rmpi_plan_t *mine = take_orphans(team);
    while (mine) {
        rmpi_plan_t *o = mine;
        mine = o->next;
        o->next = NULL;
        if (plan_test(o))
            plan_release(o);
        else
            orphan_add(o);
    }
}

/* ---- statuses ---- */

/* What MPI gives its own collective requests (MPI_ERROR is the completion call's business). */
static void coll_status(MPI_Status *s)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    s->MPI_SOURCE = 0;
    s->MPI_TAG = 0;
    PMPI_Status_set_elements(s, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(s, 0);
}

/* ---- posting ---- */

/* A persistent request's own team, on a communicator of its own (*own: PMPI_Comm_split of the
 * call's, which copies no attribute; c->team becomes its team). MPI matches a persistent
 * collective at its initialization, which every rank makes in the same order, and lets ranks
 * start such requests in different orders (MPICH's test p_order: MPI_Bcast_init, then
 * MPI_Barrier_init; rank 0 starts the bcast first, rank 1 the barrier); on a team of its own
 * each request's starts are numbered apart from every other call. The initialization is
 * collective (MPI calls it nonlocal), so the split and the team's creation may synchronize.
 * 0 (nothing kept) where the team cannot be made, alike on every rank: the call goes to
 * PMPI_ on the caller's communicator. Across nodes (progress mode "thread") the team has
 * network endpoints and a progress thread of its own, made at every initialization (MPICH's
 * p_gather at np=4 over two emulated nodes, UCX tcp: 17-21 s against MPICH's own 1 s); the
 * teams' threads take turns at the process's one network worker (the context's network hold,
 * docs/design.md). */
static int own_team(rmpi_call_t *c, MPI_Comm *own)
{
    if (PMPI_Comm_split(c->comm, 0, c->rank, own) != MPI_SUCCESS) {
        *own = MPI_COMM_NULL;
        return 0;
    }
    rcoll_team_t *t = rmpi_team_for(*own);
    const char *how = t != NULL ? rcoll_team_progress_mode(t) : NULL;
    if (how == NULL || (strcmp(how, "peers") != 0 && strcmp(how, "thread") != 0)) {
        PMPI_Comm_free(own);
        *own = MPI_COMM_NULL;
        return 0;
    }
    c->team = t;
    return 1;
}

/* Decides the route of a nonblocking or persistent call: 1 rcoll (c->plan set; NULL if out of
 * memory), 0 PMPI_. The same answer on every rank. `user_op`: a reduction with a user
 * operation, whose function runs wherever rcoll folds: on a team with a progress thread that
 * is that thread, concurrently with the program's, so there only where the program made MPI
 * callable from any thread (MPI_THREAD_MULTIPLE, the level agreed on every rank). */
static int route(rmpi_call_t *c, MPI_Comm comm, const char *name, int root, rmpi_mode_t mode,
                 int user_op)
{
    if (!rmpi_call_start(c, comm, name))
        return 0;
    if (root != NOROOT && (root < 0 || root >= c->size))
        return 0;
    const char *how = rcoll_team_progress_mode(c->team);
    if (c->size > 1 && (how == NULL || (strcmp(how, "peers") != 0 && strcmp(how, "thread") != 0))) {
        rmpi_log_caller_mode(comm, how);
        return 0;
    }
    if (user_op && how != NULL && strcmp(how, "thread") == 0 &&
        rmpi_thread_level() != MPI_THREAD_MULTIPLE)
        return 0;
    tend_orphans(c->team);
    MPI_Comm own = MPI_COMM_NULL;
    if (mode == RMPI_INIT && c->size > 1 && !own_team(c, &own))
        return 0;
    c->plan = plan_new(c, mode, own);
    if (c->plan == NULL && own != MPI_COMM_NULL)
        PMPI_Comm_free(&own);
    return 1;
}

static int no_plan(const rmpi_call_t *c)
{
    return rmpi_local_failed(c->comm, MPI_ERR_NO_MEM, c->name, "out of memory for the request");
}

/* After the body ran with rc: the program's handle, or the error (already raised). */
static int nb_finish(rmpi_call_t *c, int rc, MPI_Request *request)
{
    rmpi_plan_t *p = c->plan;
    *request = MPI_REQUEST_NULL;
    if (rc != MPI_SUCCESS) {
        if (p->req && p->mode == RMPI_POST)
            orphan_add(p); /* an erroneous call's stand-in, under way */
        else
            plan_free(p);
        return rc;
    }
    int mpi_rc = p->handle != MPI_REQUEST_NULL ? MPI_SUCCESS : handle_make(&p->handle);
    if (mpi_rc != MPI_SUCCESS) {
        if (p->req && p->mode == RMPI_POST)
            orphan_add(p);
        else
            plan_free(p);
        return rmpi_local_failed(c->comm, mpi_rc, c->name, "no MPI request for the handle");
    }
    p->active = p->mode == RMPI_POST;
    table_add(p);
    *request = p->handle;
    if (p->mode == RMPI_POST)
        rmpi_log_request(p->comm, p->name, p->req, p->team);
    if (p->mode == RMPI_POST && p->req == NULL) /* nothing to move */
        plan_completed(p, RCOLL_OK);
    return MPI_SUCCESS;
}

/* The route and the body of every nonblocking and persistent wrapper: `pmpi` for PMPI_, `body`
 * for rcoll (`skip` is evaluated first). */
#define NB_CALL_OP(name, root, mode, user_op, skip, pmpi, body)                               \
    do {                                                                                      \
        rmpi_call_t c;                                                                        \
        if ((skip) || !route(&c, comm, name, root, mode, user_op))                            \
            return pmpi;                                                                      \
        if (c.plan == NULL)                                                                   \
            return no_plan(&c);                                                               \
        return nb_finish(&c, body, request);                                                  \
    } while (0)
#define NB_CALL(name, root, mode, skip, pmpi, body)                                           \
    NB_CALL_OP(name, root, mode, 0, skip, pmpi, body)

static int barrier_body(rmpi_call_t *c)
{
    rcoll_request_t **q = rmpi_plan_request(c->plan);
    rcoll_status_t st = rmpi_plan_persistent(c->plan) ? rcoll_barrier_init(c->team, q)
                                                      : rcoll_ibarrier(c->team, q);
    return st == RCOLL_OK ? MPI_SUCCESS : rmpi_rcoll_failed(c->team, st, c->comm);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    NB_CALL("MPI_Ibarrier", NOROOT, RMPI_POST, 0, PMPI_Ibarrier(comm, request),
            barrier_body(&c));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    NB_CALL("MPI_Iallgather", NOROOT, RMPI_POST,
            (sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0,
            PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request),
            rmpi_body_allgather(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    NB_CALL("MPI_Ialltoall", NOROOT, RMPI_POST,
            (sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0,
            PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request),
            rmpi_body_alltoall(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    NB_CALL("MPI_Ibcast", root, RMPI_POST, count == 0,
            PMPI_Ibcast(buffer, count, datatype, root, comm, request),
            rmpi_body_bcast(&c, buffer, count, datatype, root));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    NB_CALL("MPI_Igather", root, RMPI_POST,
            (sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0,
            PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         request),
            rmpi_body_gather(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             root));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    NB_CALL("MPI_Iscatter", root, RMPI_POST,
            (recvbuf == MPI_IN_PLACE ? sendcount : recvcount) == 0,
            PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                          comm, request),
            rmpi_body_scatter(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              root));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    NB_CALL("MPI_Iallgatherv", NOROOT, RMPI_POST, 0,
            PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, comm, request),
            rmpi_body_allgatherv(&c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    NB_CALL("MPI_Ialltoallv", NOROOT, RMPI_POST, 0,
            PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm, request),
            rmpi_body_alltoallv(&c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    NB_CALL("MPI_Igatherv", root, RMPI_POST, 0,
            PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm, request),
            rmpi_body_gatherv(&c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, root));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    NB_CALL("MPI_Iscatterv", root, RMPI_POST, 0,
            PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm, request),
            rmpi_body_scatterv(&c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                               recvtype, root));
}

/* The reductions: the route and the bodies of the blocking calls (rcoll_mpi_reduce.c), which
 * keep a user operation (and the datatype its function gets) with the plan. */
#define NB_RED(name, root, mode, route_ok, pmpi, body)                                        \
    do {                                                                                      \
        rmpi_red_t r;                                                                         \
        NB_CALL_OP(name, root, mode, r.fn != NULL, !(route_ok), pmpi, body);                  \
    } while (0)

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    NB_RED("MPI_Iallreduce", NOROOT, RMPI_POST, rmpi_red_route(count, datatype, op, &r),
           PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request),
           rmpi_body_reduce(&c, RMPI_ALLREDUCE, &r, sendbuf, recvbuf, count, 0));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    NB_RED("MPI_Ireduce", root, RMPI_POST, rmpi_red_route(count, datatype, op, &r),
           PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request),
           rmpi_body_reduce(&c, RMPI_REDUCE, &r, sendbuf, recvbuf, count, root));
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
    NB_RED("MPI_Ireduce_scatter_block", NOROOT, RMPI_POST,
           rmpi_red_route(recvcount, datatype, op, &r),
           PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request),
           rmpi_body_reduce(&c, RMPI_RS_BLOCK, &r, sendbuf, recvbuf, recvcount, 0));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    NB_RED("MPI_Ireduce_scatter", NOROOT, RMPI_POST,
           rmpi_red_route(1, datatype, op, &r) && rmpi_red_rs_total(comm, recvcounts) != 0,
           PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request),
           rmpi_body_reduce_scatter(&c, &r, sendbuf, recvbuf, recvcounts));
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    NB_RED("MPI_Iscan", NOROOT, RMPI_POST, rmpi_red_route(count, datatype, op, &r),
           PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request),
           rmpi_body_reduce(&c, RMPI_SCAN, &r, sendbuf, recvbuf, count, 0));
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    NB_RED("MPI_Iexscan", NOROOT, RMPI_POST, rmpi_red_route(count, datatype, op, &r),
           PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request),
           rmpi_body_reduce(&c, RMPI_EXSCAN, &r, sendbuf, recvbuf, count, 0));
}

#if MPI_VERSION >= 4
/* ---- persistent forms (MPI-4); the info argument is not used ---- */

int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    NB_RED("MPI_Allreduce_init", NOROOT, RMPI_INIT, rmpi_red_route(count, datatype, op, &r),
           PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request),
           rmpi_body_reduce(&c, RMPI_ALLREDUCE, &r, sendbuf, recvbuf, count, 0));
}

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    NB_RED("MPI_Reduce_init", root, RMPI_INIT, rmpi_red_route(count, datatype, op, &r),
           PMPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request),
           rmpi_body_reduce(&c, RMPI_REDUCE, &r, sendbuf, recvbuf, count, root));
}

int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    NB_RED("MPI_Reduce_scatter_block_init", NOROOT, RMPI_INIT,
           rmpi_red_route(recvcount, datatype, op, &r),
           PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, info,
                                          request),
           rmpi_body_reduce(&c, RMPI_RS_BLOCK, &r, sendbuf, recvbuf, recvcount, 0));
}

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
    NB_RED("MPI_Reduce_scatter_init", NOROOT, RMPI_INIT,
           rmpi_red_route(1, datatype, op, &r) && rmpi_red_rs_total(comm, recvcounts) != 0,
           PMPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, info,
                                    request),
           rmpi_body_reduce_scatter(&c, &r, sendbuf, recvbuf, recvcounts));
}

int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    NB_RED("MPI_Scan_init", NOROOT, RMPI_INIT, rmpi_red_route(count, datatype, op, &r),
           PMPI_Scan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request),
           rmpi_body_reduce(&c, RMPI_SCAN, &r, sendbuf, recvbuf, count, 0));
}

int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    NB_RED("MPI_Exscan_init", NOROOT, RMPI_INIT, rmpi_red_route(count, datatype, op, &r),
           PMPI_Exscan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request),
           rmpi_body_reduce(&c, RMPI_EXSCAN, &r, sendbuf, recvbuf, count, 0));
}

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    NB_CALL("MPI_Barrier_init", NOROOT, RMPI_INIT, 0, PMPI_Barrier_init(comm, info, request),
            barrier_body(&c));
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    NB_CALL("MPI_Allgather_init", NOROOT, RMPI_INIT,
            (sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0,
            PMPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                comm, info, request),
            rmpi_body_allgather(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype));
}

int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    NB_CALL("MPI_Alltoall_init", NOROOT, RMPI_INIT,
            (sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0,
            PMPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               info, request),
            rmpi_body_alltoall(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    NB_CALL("MPI_Bcast_init", root, RMPI_INIT, count == 0,
            PMPI_Bcast_init(buffer, count, datatype, root, comm, info, request),
            rmpi_body_bcast(&c, buffer, count, datatype, root));
}

int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    NB_CALL("MPI_Gather_init", root, RMPI_INIT,
            (sendbuf == MPI_IN_PLACE ? recvcount : sendcount) == 0,
            PMPI_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm, info, request),
            rmpi_body_gather(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             root));
}

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    NB_CALL("MPI_Scatter_init", root, RMPI_INIT,
            (recvbuf == MPI_IN_PLACE ? sendcount : recvcount) == 0,
            PMPI_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, info, request),
            rmpi_body_scatter(&c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              root));
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    NB_CALL("MPI_Allgatherv_init", NOROOT, RMPI_INIT, 0,
            PMPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm, info, request),
            rmpi_body_allgatherv(&c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype));
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    NB_CALL("MPI_Alltoallv_init", NOROOT, RMPI_INIT, 0,
            PMPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm, info, request),
            rmpi_body_alltoallv(&c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype));
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    NB_CALL("MPI_Gatherv_init", root, RMPI_INIT, 0,
            PMPI_Gatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, root, comm, info, request),
            rmpi_body_gatherv(&c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, root));
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    NB_CALL("MPI_Scatterv_init", root, RMPI_INIT, 0,
            PMPI_Scatterv_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                               recvtype, root, comm, info, request),
            rmpi_body_scatterv(&c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                               recvtype, root));
}
#endif

/* ---- completion ---- */

/* Raises a completed request's error through its communicator's handler. */
static int raise_code(MPI_Comm comm, int code)
{
    if (code != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm, code);
    return code;
}

/* A completed request's end in a completion call: a persistent one becomes inactive, a
 * nonblocking one is released (*handle MPI_REQUEST_NULL); its status and outcome. */
static int deactivate(rmpi_plan_t *p, MPI_Request *handle, MPI_Status *status)
{
    int code = p->code;
    coll_status(status);
    if (p->mode == RMPI_INIT)
        p->active = 0;
    else
        plan_finished(p, handle);
    return code;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    rmpi_plan_t *p = lookup(*request);
    if (p == NULL || !p->active)
        return PMPI_Wait(request, status);
    drive(p);
    MPI_Comm comm = p->comm;
    return raise_code(comm, deactivate(p, request, status));
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    rmpi_plan_t *p = lookup(*request);
    if (p == NULL || !p->active)
        return PMPI_Test(request, flag, status);
    if (!plan_test(p)) {
        poke();
        if (!plan_test(p)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    MPI_Comm comm = p->comm;
    *flag = 1;
    return raise_code(comm, deactivate(p, request, status));
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    rmpi_plan_t *p = lookup(request);
    if (p == NULL || !p->active)
        return PMPI_Request_get_status(request, flag, status);
    if (!plan_test(p)) {
        poke();
        if (!plan_test(p)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    coll_status(status);
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *request)
{
    rmpi_plan_t *p = lookup(*request);
    if (p == NULL)
        return PMPI_Request_free(request);
    int running = p->active && !plan_test(p);
    if (running) { /* erroneous: refused as the MPI library refuses it, the request stays */
        fprintf(stderr, "rcoll: MPI_Request_free: the collective request (%s) is active; "
                "complete it first\n", p->name);
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, FREE_ACTIVE_CLASS);
        return FREE_ACTIVE_CLASS;
    }
    plan_finished(p, request);
    return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request *request)
{
    rmpi_plan_t *p = lookup(*request);
    if (p == NULL)
        return PMPI_Cancel(request);
    fprintf(stderr, "rcoll: MPI_Cancel: a collective request (%s) cannot be cancelled\n",
            p->name);
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, CANCEL_CLASS);
    return CANCEL_CLASS;
}

/* Starts an inactive persistent request: the steps before the call, then rcoll_start. A
 * nonblocking one is refused, as MPI refuses to start its own. */
static int start_plan(rmpi_plan_t *p)
{
    if (p->mode != RMPI_INIT) {
        fprintf(stderr, "rcoll: MPI_Start: %s: not a persistent request\n", p->name);
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
        return MPI_ERR_REQUEST;
    }
    if (p->active) {
        fprintf(stderr, "rcoll: MPI_Start: %s: the request is active\n", p->name);
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
        return MPI_ERR_REQUEST;
    }
    tend_orphans(p->team);
    p->done = 0;
    p->code = MPI_SUCCESS;
    if (run_steps(p, 0) != MPI_SUCCESS)
        plan_problem(p, MPI_ERR_OTHER, "PMPI_Pack of the send data failed");
    rcoll_status_t st = p->req ? rcoll_start(p->req) : RCOLL_OK;
    if (st != RCOLL_OK)
        return rmpi_rcoll_failed(p->team, st, p->comm);
    p->active = 1;
    rmpi_log_request(p->comm, p->name, p->req, p->team);
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request)
{
    rmpi_plan_t *p = lookup(*request);
    if (p == NULL)
        return PMPI_Start(request);
    return start_plan(p);
}

/* In array order: runs of native requests through PMPI_Startall, ours one by one. */
int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (none_live())
        return PMPI_Startall(count, array_of_requests);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS;) {
        rmpi_plan_t *p = lookup(array_of_requests[i]);
        if (p != NULL) {
            rc = start_plan(p);
            i++;
            continue;
        }
        int j = i + 1;
        while (j < count && lookup(array_of_requests[j]) == NULL)
            j++;
        rc = PMPI_Startall(j - i, array_of_requests + i);
        i = j;
    }
    return rc;
}

/* ---- arrays: which entries are ours, and their outcomes ---- */

typedef struct {
    rmpi_plan_t *p; /* NULL: MPI's (native, null, an inactive persistent one of ours), or ended */
    int ours;       /* an active request of ours when the call began */
    int done, code;
    MPI_Comm comm;
} slot_t;

#define SCAN_LOCAL 16
typedef struct {
    slot_t *s;
    int count, ours, done;
    slot_t local[SCAN_LOCAL];
} scan_t;

static void scan_free(scan_t *sc)
{
    if (sc->s != sc->local)
        free(sc->s);
}

/* Finds the active rcoll requests of the array: how many (0: MPI's call runs as is), -1 if
 * out of memory (MPI_ERR_NO_MEM raised). */
static int scan_init(scan_t *sc, int count, const MPI_Request reqs[])
{
    sc->ours = sc->done = 0;
    sc->count = count;
    sc->s = sc->local;
    if (none_live() || count <= 0)
        return 0;
    if (count > SCAN_LOCAL && (sc->s = calloc((size_t)count, sizeof *sc->s)) == NULL) {
        sc->s = sc->local;
        fprintf(stderr, "rcoll: out of memory for a completion call of %d requests\n", count);
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        slot_t *s = &sc->s[i];
        memset(s, 0, sizeof *s);
        rmpi_plan_t *p = lookup(reqs[i]);
        if (p == NULL || !p->active)
            continue;
        s->p = p;
        s->ours = 1;
        s->comm = p->comm;
        sc->ours++;
    }
    if (sc->ours == 0)
        scan_free(sc);
    return sc->ours;
}

/* The team of the first of ours (whose wait policy a wait for all of them follows). */
static rcoll_team_t *scan_team(const scan_t *sc)
{
    for (int i = 0; i < sc->count; i++)
        if (sc->s[i].p && sc->s[i].p->team)
            return sc->s[i].p->team;
    return NULL;
}

/* One test of each of ours not yet done; how many are done. */
static int scan_test(scan_t *sc)
{
    for (int i = 0; i < sc->count && sc->done < sc->ours; i++) {
        slot_t *s = &sc->s[i];
        if (s->p == NULL || s->done || !plan_test(s->p))
            continue;
        s->done = 1;
        s->code = s->p->code;
        sc->done++;
    }
    return sc->done;
}

/* Waits until all of ours are done. */
static void scan_wait(scan_t *sc)
{
    waiting_t w = {scan_team(sc), 0, 0};
    while (scan_test(sc) < sc->ours)
        wait_pause(&w);
}

/* After MPI's call completed the entries `which` (indices into the array; NULL: all): our
 * ones' statuses, and the errors: MPI_ERR_IN_STATUS with MPI_ERROR per status. */
static int scan_outcome(const scan_t *sc, int n, const int *which, MPI_Status *statuses, int rc)
{
    int failed = -1;
    for (int j = 0; j < n; j++) {
        const slot_t *s = &sc->s[which ? which[j] : j];
        if (s->ours && statuses != MPI_STATUSES_IGNORE)
            coll_status(&statuses[j]);
        if (s->ours && s->code != MPI_SUCCESS && failed < 0)
            failed = which ? which[j] : j;
    }
    if (failed < 0)
        return rc;
    for (int j = 0; j < n && statuses != MPI_STATUSES_IGNORE; j++) {
        const slot_t *s = &sc->s[which ? which[j] : j];
        if (s->ours)
            statuses[j].MPI_ERROR = s->code;
        else if (rc != MPI_ERR_IN_STATUS)
            statuses[j].MPI_ERROR = MPI_SUCCESS;
    }
    return raise_code(sc->s[failed].comm, MPI_ERR_IN_STATUS);
}

/* A done one of ours ends (deactivate): its slot lets go of the plan, which a nonblocking
 * request's release may have freed. Its outcome. */
static int slot_end(slot_t *s, MPI_Request *handle, MPI_Status *status)
{
    rmpi_plan_t *p = s->p;
    s->p = NULL;
    return deactivate(p, handle, status);
}

/* Ours that are done end; statuses are scan_outcome's. */
static void scan_deactivate(scan_t *sc, MPI_Request reqs[])
{
    for (int i = 0; i < sc->count; i++)
        if (sc->s[i].p && sc->s[i].done)
            slot_end(&sc->s[i], &reqs[i], MPI_STATUS_IGNORE);
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    scan_t sc;
    int ours = scan_init(&sc, count, array_of_requests);
    if (ours < 0)
        return MPI_ERR_NO_MEM;
    if (ours == 0)
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    scan_wait(&sc);
    scan_deactivate(&sc, array_of_requests);
    int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
    rc = scan_outcome(&sc, count, NULL, array_of_statuses, rc);
    scan_free(&sc);
    return rc;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
    scan_t sc;
    int ours = scan_init(&sc, count, array_of_requests);
    if (ours < 0)
        return MPI_ERR_NO_MEM;
    if (ours == 0)
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    int rc = MPI_SUCCESS;
    *flag = 0;
    if (scan_test(&sc) < sc.ours)
        poke(); /* not all of ours: MPI's stay as they are */
    else if ((rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses)) ==
                 MPI_SUCCESS && *flag) {
        scan_deactivate(&sc, array_of_requests);
        rc = scan_outcome(&sc, count, NULL, array_of_statuses, rc);
    }
    scan_free(&sc);
    return rc;
}

/* One pass of MPI_Testany: a done one of ours, else MPI's choice. */
static int testany_once(scan_t *sc, int count, MPI_Request reqs[], int *index, int *flag,
                        MPI_Status *status)
{
    scan_test(sc);
    for (int i = 0; i < count; i++) {
        slot_t *s = &sc->s[i];
        if (s->p && s->done) {
            *index = i;
            *flag = 1;
            return raise_code(s->comm, slot_end(s, &reqs[i], status));
        }
    }
    int rc = PMPI_Testany(count, reqs, index, flag, status);
    if (*flag && *index == MPI_UNDEFINED) { /* MPI has none active: ours? */
        for (int i = 0; i < count; i++)
            if (sc->s[i].p && !sc->s[i].done)
                *flag = 0;
        return rc;
    }
    if (*flag && sc->s[*index].ours && sc->s[*index].code != MPI_SUCCESS)
        return raise_code(sc->s[*index].comm, sc->s[*index].code);
    return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
    scan_t sc;
    int ours = scan_init(&sc, count, array_of_requests);
    if (ours < 0)
        return MPI_ERR_NO_MEM;
    if (ours == 0)
        return PMPI_Testany(count, array_of_requests, index, flag, status);
    int rc = testany_once(&sc, count, array_of_requests, index, flag, status);
    if (!*flag)
        poke();
    scan_free(&sc);
    return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    scan_t sc;
    int ours = scan_init(&sc, count, array_of_requests);
    if (ours < 0)
        return MPI_ERR_NO_MEM;
    if (ours == 0)
        return PMPI_Waitany(count, array_of_requests, index, status);
    int flag = 0, rc;
    waiting_t w = {scan_team(&sc), 0, 0};
    while ((rc = testany_once(&sc, count, array_of_requests, index, &flag, status)) ==
               MPI_SUCCESS && !flag)
        wait_pause(&w);
    scan_free(&sc);
    return rc;
}

/* One pass of MPI_Testsome: the done ones of ours first, then MPI's. */
static int testsome_once(scan_t *sc, int incount, MPI_Request reqs[], int *outcount,
                         int indices[], MPI_Status statuses[])
{
    scan_test(sc);
    int k = 0, pending = 0;
    for (int i = 0; i < incount; i++) {
        slot_t *s = &sc->s[i];
        if (s->p && s->done) {
            slot_end(s, &reqs[i], MPI_STATUS_IGNORE);
            indices[k++] = i;
        } else if (s->p && !s->done) {
            pending = 1;
        }
    }
    int out = 0;
    int rc = PMPI_Testsome(incount, reqs, &out, indices + k,
                           statuses == MPI_STATUSES_IGNORE ? statuses : statuses + k);
    /* MPI_UNDEFINED: nothing active at all (ours look inactive to MPI) */
    if (out == MPI_UNDEFINED)
        *outcount = k == 0 && !pending ? MPI_UNDEFINED : k;
    else
        *outcount = k + out;
    if (*outcount == MPI_UNDEFINED || *outcount == 0)
        return rc;
    return scan_outcome(sc, *outcount, indices, statuses, rc);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    scan_t sc;
    int ours = scan_init(&sc, incount, array_of_requests);
    if (ours < 0)
        return MPI_ERR_NO_MEM;
    if (ours == 0)
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    int rc = testsome_once(&sc, incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    if (*outcount == 0)
        poke();
    scan_free(&sc);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    scan_t sc;
    int ours = scan_init(&sc, incount, array_of_requests);
    if (ours < 0)
        return MPI_ERR_NO_MEM;
    if (ours == 0)
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    int rc;
    waiting_t w = {scan_team(&sc), 0, 0};
    while ((rc = testsome_once(&sc, incount, array_of_requests, outcount, array_of_indices,
                               array_of_statuses)) == MPI_SUCCESS && *outcount == 0)
        wait_pause(&w);
    scan_free(&sc);
    return rc;
}

/* ---- MPI_Finalize ---- */

/* The kept plans, freed (MPI_Finalize, after the last one was released) with their handles,
 * except under MPICH, whose MPI_Finalize frees them: MPICH 4.0 over UCX's tcp transport can
 * hang in MPI_Finalize (one rank in its UCX disconnect, the others in the PMI barrier after it)
 * when a persistent request was freed just before (natively, MPI_Allreduce, then MPI_Recv_init
 * and MPI_Request_free, then MPI_Finalize: 5 and 6 of 60 runs hung; without the free, 0 of 60;
 * docs/mpi.md, "Known issue"). A PMPI_Barrier before PMPI_Finalize instead made MPICH's own
 * finalize hang after blocking collectives across emulated nodes. */
static void spares_free(rmpi_nb_t *nb)
{
    for (;;) {
        lock(nb);
        rmpi_plan_t *p = nb->spares ? nb->spare[--nb->spares] : NULL;
        unlock(nb);
        if (p == NULL)
            return;
#ifdef MPICH_VERSION
        p->handle = MPI_REQUEST_NULL; /* left to PMPI_Finalize */
#endif
        plan_destroy(p);
    }
}

void rmpi_nb_finalize(void)
{
    rmpi_nb_t *nb = rmpi_nb();
    if (none_live()) {
        spares_free(nb);
        return;
    }
    for (rmpi_plan_t *o = take_orphans(NULL), *next; o; o = next) {
        next = o->next;
        o->next = NULL;
        drive(o);
        plan_release(o);
    }
    /* Requests the program never completed or freed (MPI calls that erroneous): released, so
     * that their teams can go. */
    for (int b = 0; b < RMPI_NB_BUCKETS; b++) {
        rmpi_plan_t *p;
        while ((p = nb->bucket[b]) != NULL) {
            if (p->mode == RMPI_POST && !p->done) {
                rcoll_request_free(p->req);
                p->req = NULL;
                plan_completed(p, RCOLL_OK);
            }
            plan_release(p);
        }
    }
    spares_free(nb);
}
