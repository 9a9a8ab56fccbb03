/* One collective call as the user made it (the raw arguments of any public entry point), and
 * its preparation: the argument checks and the local part every algorithm shares (a rank's own
 * block copied to where it belongs, in-place alltoall(v) turned into a copy of the send data),
 * ending in what the call needs from the team: nothing (every rank knows it is empty), a pass
 * (this rank moves nothing, its peers expect nothing of it) or a run with its algorithm
 * arguments. The blocking calls run it at once; requests (core/request.c) keep the call and
 * prepare it at the first start of a persistent request (and again at every start where a start
 * has more local work than the own block: an in-place copy, a reduction). */
#ifndef RCOLL_CORE_CALL_H
#define RCOLL_CORE_CALL_H

#include <stddef.h>
#include "coll/coll.h"

typedef struct {
    rcoll_coll_t coll;
    const void *sendbuf;
    void *recvbuf;
    size_t bytes;      /* the forms without v; allgatherv and gatherv: sendbytes; scatterv: recvbytes */
    int root;
    const size_t *scounts, *sdispls; /* alltoallv's send side; scatterv's counts, displs */
    const size_t *rcounts, *rdispls; /* alltoallv's receive side; allgatherv's and gatherv's;
                                      * reduce_scatter's counts (elements) */
    rcoll_dtype_t dtype;             /* reductions: bytes is then the count of elements */
    rcoll_op_t op;
} rcoll_call_t;

typedef enum { RCOLL_CALL_SKIP, RCOLL_CALL_PASS, RCOLL_CALL_RUN } rcoll_call_verdict_t;

/* A request's side of the preparation (a blocking call passes one with `scratch` set, or NULL):
 * the buffer of its own, grown as needed, where an in-place alltoall(v) keeps its copy of the
 * send data (a blocking call uses the team's scratch slot); and the rank's own block the
 * preparation moved locally (to, from, len; len 0 for none), which a persistent request's later
 * starts, and a replayed call, move again without preparing anew (rcoll_call_restart). */
typedef struct {
    void *buf;
    size_t bytes;
    bool scratch;  /* a blocking call's record: an in-place copy goes to the team's scratch */
    void *own_to;
    const void *own_from;
    size_t own_len;
} rcoll_call_copy_t;

/* Checks `c` and does its local part; on RCOLL_OK *verdict says what is left, and for a run
 * `a` holds the algorithm's arguments. The error is the team's (named argument and rank). */
rcoll_status_t rcoll_call_prepare(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                  rcoll_call_copy_t *copy, rcoll_call_verdict_t *verdict);
/* A later start of a prepared persistent call (its checks and arguments hold: the same buffers
 * and counts): the local part alone, the own block moved again. */
void rcoll_call_restart(const rcoll_call_copy_t *copy);
/* A call whose preparation a later call that is the same can replay (rcoll_call_restart on
 * the arguments it produced): it runs, has no count arrays (whose contents may change) and makes
 * no copy of its send data. */
bool rcoll_call_replayable(const rcoll_call_t *c, rcoll_call_verdict_t verdict);
/* Whether b is a, a replayable call: the same collective, buffers, sizes, root, type and
 * operation, without count arrays. */
bool rcoll_call_same(const rcoll_call_t *a, const rcoll_call_t *b);
/* The checks of a reduction's call only (a request made for it checks it once); RCOLL_OK for
 * a good call. */
rcoll_status_t rcoll_call_check(struct rcoll_team *t, const rcoll_call_t *c);
/* The blocking call: prepare, then skip, pass or run on the team. */
rcoll_status_t rcoll_call_blocking(struct rcoll_team *t, const rcoll_call_t *c);

#endif
