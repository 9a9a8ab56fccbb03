/* librcoll-mpi, the reductions: MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block,
 * MPI_Reduce_scatter, MPI_Scan and MPI_Exscan on rcoll's reductions (counted in elements of an
 * rcoll_dtype_t), and MPI_Op_create / MPI_Op_free, which the drop-in watches to know the
 * function behind a user operation (MPI has no call that gives it back), and MPI_Type_free
 * (held datatypes, below). The route (rmpi_red_route) and the bodies (rmpi_body_reduce,
 * rmpi_body_reduce_scatter) serve the blocking wrappers here and the nonblocking and
 * persistent ones in rcoll_mpi_nb.c: given a plan, a body posts rcoll_i<reduction> or binds
 * rcoll_<reduction>_init, and what must outlive the call (the counts, a stand-in's scratch and
 * its copy of the send data, a user operation's state) is the plan's. MPI_Reduce_local and
 * everything else goes to the MPI library. The rules of rcoll_mpi.c's first comment hold; what
 * is particular to these:
 * - rcoll or PMPI_ is decided from the communicator (its team), the datatype, the operation,
 *   the root and, for a count of zero, the count: MPI makes them the same on every rank of a
 *   reduction, so every rank takes the same route. rcoll runs a call only where it computes
 *   what MPI defines:
 *   - a predefined operation (MPI_SUM ... MPI_MAXLOC) on a predefined type of the table below
 *     (found by handle; its MPI size and extent checked once against the rcoll type's size,
 *     a pair type with padding by its extent and lb: see add_named) or
 *     on a contiguous/dup chain of one (count * n elements of it), where MPI defines the
 *     operation for the type's class (MPI-3.1 5.9.2: integer, floating, complex, logical,
 *     byte, pair) and rcoll_op_valid agrees;
 *   - a user operation from MPI_Op_create (rcoll_op_create per call, commutativity from
 *     PMPI_Op_commutative; the function gets the caller's datatype and at most INT_MAX elements
 *     a call) on a datatype whose elements are their bytes back to back (lb and true lb 0,
 *     size = extent = true extent): a type of the table keeps its rcoll type, any other is an
 *     opaque element RCOLL_DTYPE_BYTES(size).
 *   Everything else goes to PMPI_: MPI_REPLACE, MPI_NO_OP, an operation the type does not
 *   support (the MPI library reports MPI_ERR_OP, or accepts its own extension), an invalid
 *   operation or datatype, datatypes with holes or gaps (vector, resized), a user operation
 *   the drop-in did not see created (MPI_Op_create_c, Fortran), an invalid root, a count of
 *   zero (all zero counts for MPI_Reduce_scatter), an intercommunicator.
 * - MPI_IN_PLACE as MPI defines it: the input in recvbuf (MPI_Reduce: at the root only;
 *   MPI_Reduce_scatter(_block): recvbuf holds every rank's blocks, the result replaces the
 *   first); MPI_Exscan never writes rank 0's recvbuf. Arguments MPI calls insignificant (the
 *   receive buffer of MPI_Reduce off the root) are never read.
 * - A local problem (negative count, MPI_IN_PLACE where MPI forbids it, send and receive buffer
 *   the same address without MPI_IN_PLACE, a NULL buffer with data in it, no memory) prints
 *   "rcoll: MPI_<Coll>: rank R of P: <what>" and raises the MPI error class (MPI_ERR_COUNT,
 *   MPI_ERR_BUFFER, MPI_ERR_NO_MEM) through the communicator's error handler. Its peers may
 *   already be in the call: where the sizes are known (all but a negative count) the rank
 *   first takes part with a scratch receive buffer, its own send data going in if it has any
 *   (an aliased call's), zeros otherwise, so nobody waits for it, none of its buffers is
 *   written and the team's calls stay numbered alike.
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rcoll_mpi_internal.h"

typedef rmpi_call_t call_t;

/* A non-NULL stand-in for a buffer rcoll does not touch (exscan's recvbuf at rank 0). */
static char dummy[1];

/* ---- user operations: the function behind each handle MPI_Op_create gave ---- */

typedef struct uop {
    MPI_Op op;
    MPI_User_function *fn;
    struct uop *next;
} uop_t;

static pthread_mutex_t uop_lock = PTHREAD_MUTEX_INITIALIZER;
static uop_t *uops;

static void uop_forget(MPI_Op op)
{
    pthread_mutex_lock(&uop_lock);
    for (uop_t **p = &uops; *p != NULL; p = &(*p)->next)
        if ((*p)->op == op) {
            uop_t *dead = *p;
            *p = dead->next;
            free(dead);
            break;
        }
    pthread_mutex_unlock(&uop_lock);
}

/* The function of a user operation, NULL if the drop-in did not see it created. */
static MPI_User_function *uop_fn(MPI_Op op)
{
    MPI_User_function *fn = NULL;
    pthread_mutex_lock(&uop_lock);
    for (uop_t *u = uops; u != NULL && fn == NULL; u = u->next)
        if (u->op == op)
            fn = u->fn;
    pthread_mutex_unlock(&uop_lock);
    return fn;
}

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    int rc = PMPI_Op_create(user_fn, commute, op);
    if (rc != MPI_SUCCESS || user_fn == NULL || op == NULL)
        return rc;
    uop_forget(*op); /* a handle MPI gives again after MPI_Op_free */
    uop_t *u = malloc(sizeof *u);
    if (u == NULL) { /* unknown here only, this rank alone would give its calls to PMPI_ */
        PMPI_Op_free(op);
        fprintf(stderr, "rcoll: MPI_Op_create: out of memory\n");
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }
    u->op = *op;
    u->fn = user_fn;
    pthread_mutex_lock(&uop_lock);
    u->next = uops;
    uops = u;
    pthread_mutex_unlock(&uop_lock);
    return rc;
}

int MPI_Op_free(MPI_Op *op)
{
    if (op != NULL)
        uop_forget(*op);
    return PMPI_Op_free(op);
}

/* ---- datatypes held by outstanding requests ----
 * The user function of a nonblocking or persistent reduction gets the caller's datatype when
 * it runs, which may be after the program freed it (MPI allows that while a request that uses
 * it is outstanding): MPI_Type_free of a held type sets the program's handle to
 * MPI_DATATYPE_NULL, as MPI does, and the type is freed at its last release. Under uop_lock. */

typedef struct pin {
    MPI_Datatype type;
    int holds;
    int freed; /* by the program */
    struct pin *next;
} pin_t;

static pin_t *pins;
static _Atomic int n_pins; /* 0: MPI_Type_free goes straight to PMPI_ */

static pin_t **pin_find(MPI_Datatype t)
{
    pin_t **at = &pins;
    while (*at != NULL && ((*at)->type != t || (*at)->freed))
        at = &(*at)->next;
    return at;
}

static int type_hold(MPI_Datatype t)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&uop_lock);
    pin_t **at = pin_find(t);
    if (*at != NULL) {
        (*at)->holds++;
    } else if ((*at = calloc(1, sizeof **at)) == NULL) {
        rc = MPI_ERR_NO_MEM;
    } else {
        (*at)->type = t;
        (*at)->holds = 1;
        atomic_fetch_add(&n_pins, 1);
    }
    pthread_mutex_unlock(&uop_lock);
    return rc;
}

/* Releases a hold (the first live one of the type, or a freed one). */
static void type_release(MPI_Datatype t)
{
    pthread_mutex_lock(&uop_lock);
    pin_t **at = &pins;
    while (*at != NULL && (*at)->type != t)
        at = &(*at)->next;
    pin_t *dead = NULL;
    if (*at != NULL && --(*at)->holds == 0) {
        dead = *at;
        *at = dead->next;
        atomic_fetch_sub(&n_pins, 1);
    }
    pthread_mutex_unlock(&uop_lock);
    if (dead != NULL && dead->freed)
        PMPI_Type_free(&dead->type);
    free(dead);
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    if (datatype != NULL && atomic_load_explicit(&n_pins, memory_order_acquire) > 0) {
        pthread_mutex_lock(&uop_lock);
        pin_t *p = *pin_find(*datatype);
        if (p != NULL)
            p->freed = 1;
        pthread_mutex_unlock(&uop_lock);
        if (p != NULL) {
            *datatype = MPI_DATATYPE_NULL;
            return MPI_SUCCESS;
        }
    }
    return PMPI_Type_free(datatype);
}

void rmpi_reduce_finalize(void)
{
    pthread_mutex_lock(&uop_lock);
    while (uops != NULL) {
        uop_t *u = uops;
        uops = u->next;
        free(u);
    }
    while (pins != NULL) { /* (none: the requests were released first) */
        pin_t *p = pins;
        pins = p->next;
        free(p);
    }
    atomic_store(&n_pins, 0);
    pthread_mutex_unlock(&uop_lock);
}

/* ---- predefined datatypes and operations ---- */

/* MPI's classes of predefined types (which operations MPI defines on each). */
enum { CLS_INT, CLS_FLOAT, CLS_COMPLEX, CLS_LOGICAL, CLS_BYTE, CLS_PAIR };

#define OPBIT(o) (1u << (unsigned)(uintptr_t)(o))
static const unsigned cls_ops[] = {
    [CLS_INT] = OPBIT(RCOLL_OP_MAX) | OPBIT(RCOLL_OP_MIN) | OPBIT(RCOLL_OP_SUM) |
                OPBIT(RCOLL_OP_PROD) | OPBIT(RCOLL_OP_LAND) | OPBIT(RCOLL_OP_LOR) |
                OPBIT(RCOLL_OP_LXOR) | OPBIT(RCOLL_OP_BAND) | OPBIT(RCOLL_OP_BOR) |
                OPBIT(RCOLL_OP_BXOR),
    [CLS_FLOAT] = OPBIT(RCOLL_OP_MAX) | OPBIT(RCOLL_OP_MIN) | OPBIT(RCOLL_OP_SUM) |
                  OPBIT(RCOLL_OP_PROD),
    [CLS_COMPLEX] = OPBIT(RCOLL_OP_SUM) | OPBIT(RCOLL_OP_PROD),
    [CLS_LOGICAL] = OPBIT(RCOLL_OP_LAND) | OPBIT(RCOLL_OP_LOR) | OPBIT(RCOLL_OP_LXOR),
    [CLS_BYTE] = OPBIT(RCOLL_OP_BAND) | OPBIT(RCOLL_OP_BOR) | OPBIT(RCOLL_OP_BXOR),
    [CLS_PAIR] = OPBIT(RCOLL_OP_MINLOC) | OPBIT(RCOLL_OP_MAXLOC),
};

/* A predefined MPI type rcoll can reduce: its rcoll type and MPI class. */
typedef struct {
    MPI_Datatype type;
    rcoll_dtype_t dt;
    int cls;
} named_t;

#define MAX_NAMED 48
static named_t named[MAX_NAMED];
static int n_named;
static pthread_once_t named_once = PTHREAD_ONCE_INIT;

/* The rcoll integer type of `bytes` bytes, -1 if none. */
static rcoll_dtype_t int_dt(size_t bytes, int is_signed)
{
    switch (bytes) {
    case 1: return is_signed ? RCOLL_DTYPE_INT8 : RCOLL_DTYPE_UINT8;
    case 2: return is_signed ? RCOLL_DTYPE_INT16 : RCOLL_DTYPE_UINT16;
    case 4: return is_signed ? RCOLL_DTYPE_INT32 : RCOLL_DTYPE_UINT32;
    case 8: return is_signed ? RCOLL_DTYPE_INT64 : RCOLL_DTYPE_UINT64;
    default: return -1;
    }
}

/* Adds t if this MPI has it and its elements are the rcoll type's: extent = the rcoll type's
 * size, lb 0, and MPI size = extent too, except for a pair type (MPI_DOUBLE_INT,
 * MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT), whose value and index are C's struct
 * with its padding: rcoll writes whole structs, padding included, each within its element's
 * extent (where MPI leaves the padding as it was), never past count * extent. */
static void add_named(MPI_Datatype t, rcoll_dtype_t dt, int cls)
{
    MPI_Count size = 0;
    MPI_Aint lb = 0, extent = 0;
    if (t == MPI_DATATYPE_NULL || dt < 0 || n_named == MAX_NAMED ||
        PMPI_Type_size_x(t, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS)
        return;
    size_t want = rcoll_dtype_size(dt);
    if (want == 0 || lb != 0 || extent != (MPI_Aint)want || size <= 0 ||
        (cls == CLS_PAIR ? size > (MPI_Count)want : size != (MPI_Count)want))
        return;
    named[n_named++] = (named_t){t, dt, cls};
}

#define ADD_INT(t, ctype, sgn) add_named(t, int_dt(sizeof(ctype), sgn), CLS_INT)

static void make_named(void)
{
    /* the common ones first: the lookup goes down the list */
    add_named(MPI_DOUBLE, RCOLL_DTYPE_DOUBLE, CLS_FLOAT);
    ADD_INT(MPI_INT, int, 1);
    add_named(MPI_FLOAT, RCOLL_DTYPE_FLOAT, CLS_FLOAT);
    ADD_INT(MPI_LONG, long, 1);
    ADD_INT(MPI_LONG_LONG, long long, 1);
    ADD_INT(MPI_LONG_LONG_INT, long long, 1);
    ADD_INT(MPI_UNSIGNED, unsigned, 0);
    ADD_INT(MPI_UNSIGNED_LONG, unsigned long, 0);
    ADD_INT(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0);
    ADD_INT(MPI_INT64_T, int64_t, 1);
    ADD_INT(MPI_UINT64_T, uint64_t, 0);
    ADD_INT(MPI_INT32_T, int32_t, 1);
    ADD_INT(MPI_UINT32_T, uint32_t, 0);
    ADD_INT(MPI_SHORT, short, 1);
    ADD_INT(MPI_UNSIGNED_SHORT, unsigned short, 0);
    ADD_INT(MPI_INT16_T, int16_t, 1);
    ADD_INT(MPI_UINT16_T, uint16_t, 0);
    /* MPI_CHAR is no integer type for MPI's reductions, but Open MPI and MPICH both reduce it
     * as one (C's char: signed or not as the compiler has it) */
    ADD_INT(MPI_CHAR, char, CHAR_MIN < 0);
    ADD_INT(MPI_SIGNED_CHAR, signed char, 1);
    ADD_INT(MPI_UNSIGNED_CHAR, unsigned char, 0);
    ADD_INT(MPI_INT8_T, int8_t, 1);
    ADD_INT(MPI_UINT8_T, uint8_t, 0);
    add_named(MPI_BYTE, RCOLL_DTYPE_UINT8, CLS_BYTE);
    add_named(MPI_LONG_DOUBLE, RCOLL_DTYPE_LONG_DOUBLE, CLS_FLOAT);
    add_named(MPI_C_DOUBLE_COMPLEX, RCOLL_DTYPE_DOUBLE_COMPLEX, CLS_COMPLEX);
    add_named(MPI_C_FLOAT_COMPLEX, RCOLL_DTYPE_FLOAT_COMPLEX, CLS_COMPLEX);
    add_named(MPI_C_COMPLEX, RCOLL_DTYPE_FLOAT_COMPLEX, CLS_COMPLEX);
    add_named(MPI_C_LONG_DOUBLE_COMPLEX, RCOLL_DTYPE_LONG_DOUBLE_COMPLEX, CLS_COMPLEX);
    if (sizeof(bool) == 1)
        add_named(MPI_C_BOOL, RCOLL_DTYPE_BOOL, CLS_LOGICAL);
    add_named(MPI_2INT, RCOLL_DTYPE_2INT, CLS_PAIR);
    add_named(MPI_FLOAT_INT, RCOLL_DTYPE_FLOAT_INT, CLS_PAIR);
    add_named(MPI_DOUBLE_INT, RCOLL_DTYPE_DOUBLE_INT, CLS_PAIR);
    add_named(MPI_LONG_INT, RCOLL_DTYPE_LONG_INT, CLS_PAIR);
    add_named(MPI_SHORT_INT, RCOLL_DTYPE_SHORT_INT, CLS_PAIR);
    add_named(MPI_LONG_DOUBLE_INT, RCOLL_DTYPE_LONG_DOUBLE_INT, CLS_PAIR);
}

/* The table's entry for a predefined type, by handle (no MPI call); NULL if not there. */
static const named_t *named_find(MPI_Datatype t)
{
    pthread_once(&named_once, make_named);
    for (int i = 0; i < n_named; i++)
        if (named[i].type == t)
            return &named[i];
    return NULL;
}

static rcoll_op_t predefined_op(MPI_Op op)
{
    if (op == MPI_SUM)
        return RCOLL_OP_SUM;
    if (op == MPI_MAX)
        return RCOLL_OP_MAX;
    if (op == MPI_MIN)
        return RCOLL_OP_MIN;
    if (op == MPI_PROD)
        return RCOLL_OP_PROD;
    if (op == MPI_MAXLOC)
        return RCOLL_OP_MAXLOC;
    if (op == MPI_MINLOC)
        return RCOLL_OP_MINLOC;
    if (op == MPI_LAND)
        return RCOLL_OP_LAND;
    if (op == MPI_LOR)
        return RCOLL_OP_LOR;
    if (op == MPI_LXOR)
        return RCOLL_OP_LXOR;
    if (op == MPI_BAND)
        return RCOLL_OP_BAND;
    if (op == MPI_BOR)
        return RCOLL_OP_BOR;
    if (op == MPI_BXOR)
        return RCOLL_OP_BXOR;
    return NULL;
}

/* The predefined type under a chain of contiguous/dup constructors, and how many of it one
 * element of `type` holds (*mult, multiplied in); NULL if `type` is not such a chain. */
static const named_t *chain_base(MPI_Datatype type, size_t *mult, int depth)
{
    const named_t *n = named_find(type);
    if (n != NULL)
        return n;
    int ni = 0, na = 0, nd = 0, combiner = 0;
    if (depth > 16 || PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return NULL;
    if (combiner == MPI_COMBINER_CONTIGUOUS ? ni != 1 || na != 0 || nd != 1
        : combiner == MPI_COMBINER_DUP      ? ni != 0 || na != 0 || nd != 1
                                            : 1)
        return NULL;
    int ints[1] = {1};
    MPI_Aint addrs[1];
    MPI_Datatype inner;
    if (PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, &inner) != MPI_SUCCESS)
        return NULL;
    if (ints[0] < 0 || (ints[0] > 0 && *mult > SIZE_MAX / (size_t)ints[0]))
        n = NULL;
    else {
        *mult *= (size_t)ints[0];
        n = chain_base(inner, mult, depth + 1);
    }
    int ii = 0, ia = 0, id = 0, ic = 0;
    if (PMPI_Type_get_envelope(inner, &ii, &ia, &id, &ic) == MPI_SUCCESS &&
        ic != MPI_COMBINER_NAMED)
        PMPI_Type_free(&inner);
    return n;
}

/* ---- the route: what rcoll gets for a (datatype, operation), or PMPI_ ---- */

/* Elements that are their bytes back to back (an opaque element of a user operation). */
static int gap_free(MPI_Datatype type, MPI_Count *size)
{
    MPI_Count lb = 0, extent = 0, tlb = 0, textent = 0;
    return PMPI_Type_size_x(type, size) == MPI_SUCCESS &&
           PMPI_Type_get_extent_x(type, &lb, &extent) == MPI_SUCCESS &&
           PMPI_Type_get_true_extent_x(type, &tlb, &textent) == MPI_SUCCESS && lb == 0 &&
           tlb == 0 && *size > 0 && *size == extent && *size == textent;
}

/* Per thread, the last predefined datatype and predefined operation routed to rcoll and what
 * they gave: both are constants of the MPI library, never freed, so the entry never goes stale
 * (a derived datatype, whose handle a later one may reuse, is never kept). The route was a
 * tenth of a small MPI_Allreduce (callgrind, np=2, 8 B). */
static _Thread_local struct {
    MPI_Datatype type;
    MPI_Op op;
    rmpi_red_t r;
    bool set;
} last_red __attribute__((tls_model("initial-exec")));

int rmpi_red_route(long long count, MPI_Datatype type, MPI_Op op, rmpi_red_t *r)
{
    /* (the null handles are never kept: a match is a real pair) */
    if (count != 0 && last_red.set && last_red.type == type && last_red.op == op) {
        *r = last_red.r;
        return 1;
    }
    memset(r, 0, sizeof *r);
    r->type = type;
    if (count == 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
        return 0;
    r->op = predefined_op(op);
    if (r->op != NULL) {
        size_t mult = 1;
        const named_t *n = chain_base(type, &mult, 0);
        if (n == NULL || mult == 0 || !(cls_ops[n->cls] & OPBIT(r->op)) ||
            !rcoll_op_valid(r->op, n->dt))
            return 0;
        r->dt = n->dt;
        r->per = mult;
        r->esize = rcoll_dtype_size(n->dt);
        r->extent = (MPI_Aint)(mult * r->esize);
        if (n->type == type) { /* predefined itself */
            last_red.type = type;
            last_red.op = op;
            last_red.r = *r;
            last_red.set = true;
        }
        return 1;
    }
    if ((r->fn = uop_fn(op)) == NULL || PMPI_Op_commutative(op, &r->commute) != MPI_SUCCESS)
        return 0;
    const named_t *n = named_find(type);
    MPI_Count size = 0;
    if (n != NULL)
        r->dt = n->dt;
    else if (gap_free(type, &size) && size < (1 << 24))
        r->dt = RCOLL_DTYPE_BYTES(size);
    else
        return 0;
    r->per = 1;
    r->esize = rcoll_dtype_size(r->dt);
    r->extent = (MPI_Aint)r->esize;
    return r->esize > 0;
}

long long rmpi_red_rs_total(MPI_Comm comm, const int recvcounts[])
{
    if (recvcounts == NULL)
        return 1;
    rcoll_team_t *team = rmpi_team_for(comm);
    if (team == NULL)
        return 0; /* PMPI_ anyway */
    long long total = 0;
    for (int i = 0; i < rcoll_team_size(team); i++) {
        if (recvcounts[i] < 0)
            return 1;
        total += recvcounts[i];
    }
    return total;
}

/* The user function under rcoll: at most INT_MAX elements a call, the caller's datatype. */
static void user_fn(const void *in, void *inout, size_t count, rcoll_dtype_t dtype, void *arg)
{
    (void)dtype;
    const rmpi_red_t *r = arg;
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        MPI_Datatype type = r->type;
        r->fn((void *)in, inout, &len, &type);
        size_t done = (size_t)(count > INT_MAX ? INT_MAX : count);
        in = (const char *)in + done * (size_t)r->extent;
        inout = (char *)inout + done * (size_t)r->extent;
        count -= done;
    }
}

/* What a nonblocking or persistent call with a user operation keeps until its request is
 * freed (plan memory, released by red_release): the route the function reads, the rcoll
 * operation, and a hold on the caller's datatype. */
typedef struct {
    rmpi_red_t r;
    rcoll_op_t op;
    int held;
} red_state_t;

static void red_release(void *arg)
{
    red_state_t *s = arg;
    if (s->op != NULL)
        rcoll_op_free(s->op);
    if (s->held)
        type_release(s->r.type);
}

static int named_type(MPI_Datatype t)
{
    int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

/* The rcoll operation of a call: the predefined one, or the user's made for this call (a
 * blocking call's lives until op_put; a plan's until the plan is freed). 0 if out of memory. */
static int op_get(const rmpi_call_t *c, const rmpi_red_t *r, rcoll_op_t *op)
{
    *op = r->op;
    if (r->fn == NULL)
        return 1;
    if (c->plan == NULL)
        return rcoll_op_create(user_fn, (void *)r, r->commute, op) == RCOLL_OK;
    red_state_t *s = rmpi_plan_alloc(c->plan, sizeof *s);
    if (s == NULL || rmpi_plan_on_free(c->plan, red_release, s) != MPI_SUCCESS)
        return 0;
    s->r = *r;
    if (!named_type(r->type)) {
        if (type_hold(r->type) != MPI_SUCCESS)
            return 0;
        s->held = 1;
    }
    if (rcoll_op_create(user_fn, &s->r, r->commute, &s->op) != RCOLL_OK) {
        s->op = NULL;
        return 0;
    }
    *op = s->op;
    return 1;
}

static void op_put(const rmpi_call_t *c, const rmpi_red_t *r, rcoll_op_t op)
{
    if (c->plan == NULL && r->fn != NULL && op != NULL)
        rcoll_op_free(op);
}

/* ---- one call ---- */

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

/* One rank's call, in rcoll elements. */
typedef struct {
    int kind, root;
    size_t n;       /* elements of the result (of a block: MPI_Reduce_scatter_block) */
    size_t all;     /* elements of the input: n, or every rank's blocks (reduce_scatter) */
    size_t *counts; /* MPI_Reduce_scatter: elements per rank (a plan's: in its memory) */
    const void *send; /* RCOLL_IN_PLACE or the send data */
    void *recv;
} args_t;

/* The rcoll call: at once (no plan), posted (nonblocking plan) or bound (persistent plan). */
#define RED(coll, ...)                                                                       \
    (q == NULL ? rcoll_##coll(t, __VA_ARGS__)                                                \
     : init    ? rcoll_##coll##_init(t, __VA_ARGS__, q)                                      \
               : rcoll_i##coll(t, __VA_ARGS__, q))

static rcoll_status_t run(const call_t *c, const args_t *a, const rmpi_red_t *r, rcoll_op_t op)
{
    rcoll_team_t *t = c->team;
    rcoll_request_t **q = c->plan ? rmpi_plan_request(c->plan) : NULL;
    int init = c->plan ? rmpi_plan_persistent(c->plan) : 0;
    switch (a->kind) {
    case RMPI_ALLREDUCE: return RED(allreduce, a->send, a->recv, a->n, r->dt, op);
    case RMPI_REDUCE: return RED(reduce, a->send, a->recv, a->n, r->dt, op, a->root);
    case RMPI_RS_BLOCK: return RED(reduce_scatter_block, a->send, a->recv, a->n, r->dt, op);
    case RMPI_RS: return RED(reduce_scatter, a->send, a->recv, a->counts, r->dt, op);
    case RMPI_SCAN: return RED(scan, a->send, a->recv, a->n, r->dt, op);
    default: return RED(exscan, a->send, a->recv, a->n, r->dt, op);
    }
}

/* An erroneous rank's part: the same call into a scratch buffer, with `send` (its valid send
 * data) as its input, or zeros if it has none. A plan's scratch is its own, and so is a copy
 * of the send data: the stand-in completes in the background, after the program, told that
 * its call failed, took its buffers back. */
static void stand_in(const call_t *c, const args_t *a, const rmpi_red_t *r, rcoll_op_t op,
                     const void *send)
{
    /* (a->all * r->esize fits: see elements()) */
    size_t bytes = a->all * r->esize;
    char *tmp = c->plan ? rmpi_plan_alloc(c->plan, bytes) : calloc(a->all, r->esize);
    if (tmp == NULL)
        return;
    if (c->plan != NULL && send != NULL) {
        char *copy = rmpi_plan_alloc(c->plan, bytes);
        if (copy == NULL)
            return;
        memcpy(copy, send, bytes);
        send = copy;
    }
    args_t s = *a;
    int leaf = a->kind == RMPI_REDUCE && c->rank != a->root;
    s.send = send ? send : leaf ? tmp : RCOLL_IN_PLACE; /* the zeros in place */
    s.recv = leaf ? NULL : tmp;
    run(c, &s, r, op);
    if (c->plan == NULL)
        free(tmp);
}

/* The checks a rank can make alone, then the call (or its stand-in and the report). */
static int reduce_call(const call_t *c, args_t *a, const rmpi_red_t *r, const void *sendbuf,
                       void *recvbuf)
{
    verdict_t v = {0};
    int in_place = sendbuf == MPI_IN_PLACE;
    int leaf = a->kind == RMPI_REDUCE && c->rank != a->root; /* recvbuf insignificant */
    size_t own = a->kind == RMPI_RS ? a->counts[c->rank] : a->n; /* result elements here */
    if (a->kind == RMPI_EXSCAN && c->rank == 0)
        own = 0; /* rank 0's recvbuf is not written (holds the input if in place) */
    if (leaf && in_place)
        note(&v, MPI_ERR_BUFFER, "MPI_IN_PLACE on a rank that is not the root");
    else if (!leaf && recvbuf == MPI_IN_PLACE)
        note(&v, MPI_ERR_BUFFER, "MPI_IN_PLACE is not a receive buffer");
    else if (!in_place && sendbuf == NULL)
        note(&v, MPI_ERR_BUFFER, "NULL send buffer with a nonzero count");
    else if (!leaf && recvbuf == NULL && (in_place || own > 0))
        note(&v, MPI_ERR_BUFFER, "NULL receive buffer with a nonzero count");
    else if (!leaf && !in_place && sendbuf == recvbuf && own > 0)
        note(&v, MPI_ERR_BUFFER, "send and receive buffer alias (use MPI_IN_PLACE)");
    rcoll_op_t op = NULL;
    if (!op_get(c, r, &op))
        return fail(c, MPI_ERR_NO_MEM, "out of memory for the user operation");
    rcoll_status_t st = RCOLL_OK;
    if (v.code != MPI_SUCCESS) {
        stand_in(c, a, r, op, in_place || sendbuf == NULL ? NULL : sendbuf);
    } else {
        a->send = in_place ? RCOLL_IN_PLACE : sendbuf;
        a->recv = leaf ? NULL : recvbuf != NULL ? recvbuf : dummy; /* NULL: nothing lands */
        st = run(c, a, r, op);
    }
    op_put(c, r, op);
    return v.code != MPI_SUCCESS ? fail(c, v.code, v.why) : finish(c, st);
}

/* `count` elements of the MPI datatype (times `blocks`, in all) in rcoll elements: *n and
 * *all; MPI_ERR_COUNT reported if it is negative or its bytes would not fit a size_t. */
static int elements(const call_t *c, long long count, size_t blocks, const rmpi_red_t *r,
                    size_t *n, size_t *all)
{
    if (count < 0)
        return fail(c, MPI_ERR_COUNT, "negative count");
    size_t bytes; /* (products checked for overflow: no division on the latency path) */
    if (__builtin_mul_overflow((size_t)count, r->per, n) || __builtin_mul_overflow(*n, blocks, all) ||
        __builtin_mul_overflow(*all, r->esize, &bytes))
        return fail(c, MPI_ERR_COUNT, "message too large");
    return MPI_SUCCESS;
}

/* ---- the bodies (rcoll_mpi_internal.h) ---- */

int rmpi_body_reduce(call_t *c, int kind, const rmpi_red_t *r, const void *sendbuf,
                     void *recvbuf, int count, int root)
{
    args_t a = {.kind = kind, .root = root};
    size_t blocks = kind == RMPI_RS_BLOCK ? (size_t)c->size : 1;
    int rc = elements(c, count, blocks, r, &a.n, &a.all);
    return rc != MPI_SUCCESS ? rc : reduce_call(c, &a, r, sendbuf, recvbuf);
}

#define RS_LOCAL 16 /* ranks whose counts fit on the stack (a blocking call's) */

int rmpi_body_reduce_scatter(call_t *c, const rmpi_red_t *r, const void *sendbuf,
                             void *recvbuf, const int recvcounts[])
{
    if (recvcounts == NULL)
        return fail(c, MPI_ERR_ARG, "NULL recvcounts");
    /* The counts are the same on every rank (MPI), and so is every decision made from them. */
    long long total = 0;
    for (int i = 0; i < c->size; i++) {
        if (recvcounts[i] < 0)
            return fail(c, MPI_ERR_COUNT, "negative count");
        total += recvcounts[i];
    }
    args_t a = {.kind = RMPI_RS};
    size_t n1 = 0;
    int rc = elements(c, total, 1, r, &n1, &a.all);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t local[RS_LOCAL], bytes = (size_t)c->size * sizeof(size_t);
    /* (a plan's counts outlive this call: rcoll reads them until the request completes) */
    a.counts = c->plan ? rmpi_plan_alloc(c->plan, bytes)
               : c->size <= RS_LOCAL ? local
                                     : malloc(bytes);
    if (a.counts == NULL)
        return fail(c, MPI_ERR_NO_MEM, "out of memory for the counts");
    for (int i = 0; i < c->size; i++)
        a.counts[i] = (size_t)recvcounts[i] * r->per;
    rc = reduce_call(c, &a, r, sendbuf, recvbuf);
    if (c->plan == NULL && a.counts != local)
        free(a.counts);
    return rc;
}

/* ---- the blocking wrappers ---- */

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    rmpi_red_t r;
    call_t c;
    if (!rmpi_red_route(count, datatype, op, &r) || !rmpi_call_start(&c, comm, "MPI_Allreduce"))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return rmpi_body_reduce(&c, RMPI_ALLREDUCE, &r, sendbuf, recvbuf, count, 0);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    rmpi_red_t r;
    call_t c;
    if (!rmpi_red_route(count, datatype, op, &r) || !rmpi_call_start(&c, comm, "MPI_Scan"))
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    return rmpi_body_reduce(&c, RMPI_SCAN, &r, sendbuf, recvbuf, count, 0);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    rmpi_red_t r;
    call_t c;
    if (!rmpi_red_route(count, datatype, op, &r) || !rmpi_call_start(&c, comm, "MPI_Exscan"))
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    return rmpi_body_reduce(&c, RMPI_EXSCAN, &r, sendbuf, recvbuf, count, 0);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    rmpi_red_t r;
    call_t c;
    if (!rmpi_red_route(count, datatype, op, &r) || !rmpi_call_start(&c, comm, "MPI_Reduce") ||
        root < 0 || root >= c.size) /* an invalid root: MPI reports it */
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    return rmpi_body_reduce(&c, RMPI_REDUCE, &r, sendbuf, recvbuf, count, root);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    rmpi_red_t r;
    call_t c;
    if (!rmpi_red_route(recvcount, datatype, op, &r) ||
        !rmpi_call_start(&c, comm, "MPI_Reduce_scatter_block"))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    return rmpi_body_reduce(&c, RMPI_RS_BLOCK, &r, sendbuf, recvbuf, recvcount, 0);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    rmpi_red_t r;
    call_t c;
    /* (all counts zero: MPI's, as a count of zero is for the others) */
    if (!rmpi_red_route(1, datatype, op, &r) || rmpi_red_rs_total(comm, recvcounts) == 0 ||
        !rmpi_call_start(&c, comm, "MPI_Reduce_scatter"))
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    return rmpi_body_reduce_scatter(&c, &r, sendbuf, recvbuf, recvcounts);
}
