/* Requests: the nonblocking and persistent collectives of the public API (docs/nonblocking.md).
 * A request keeps its call (core/call.h) and, per start, runs it through one of two engines,
 * chosen per team alike on every rank:
 * - the board (transport/board.h), on a team on one node with CMA: the call is posted on the
 *   board at start and its data moved by whichever rank of each pair is inside rcoll (one-sided
 *   completion by peers, coll/nb/nb.h);
 * - the queue, elsewhere: the calls run in post order as ordinary blocking calls, by the caller
 *   in test, wait and its next call on the team, or by the team's progress thread
 *   (RCOLL_PROGRESS=thread). */
#ifndef RCOLL_CORE_REQUEST_H
#define RCOLL_CORE_REQUEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/call.h"

struct rcoll_nb_algo;

typedef enum { RCOLL_NB_PEERS, RCOLL_NB_THREAD, RCOLL_NB_CALLER } rcoll_nb_mode_t;

struct rcoll_request {
    struct rcoll_team *team;
    rcoll_call_t call;          /* the user's arguments; count arrays are the request's copies */
    size_t *arrays;             /* ... which live here */
    bool persistent;
    bool active;                /* started, not yet completed by test or wait */
    bool complete;              /* the current start's work is over (status holds its result) */
    bool queued;                /* in the team's list of started requests */
    bool freed;                 /* released while active: freed once complete */
    bool prepared;              /* persistent: args, verdict and algo hold from the first start;
                                 * a pooled one reused for the same call: they hold again */
    bool replay;                /* nonblocking: its preparation is replayable (request_new) */
    rcoll_status_t status;
    rcoll_call_copy_t copy;     /* in-place alltoall(v): the send data's copy; the own block */
    /* Board engine: the algorithm, the call's number on the board and its arguments. */
    const struct rcoll_nb_algo *algo;
    uint64_t seq;
    rcoll_args_t args;
    rcoll_call_verdict_t verdict;
    bool area;                  /* board: its inline area is free for it (else it posts none) */
    uint64_t in, out;           /* board: the peers whose pairs into me, out of me, carry something */
    void *state;                /* the algorithm's, per request (freed with it; kept in the pool
                                 * for a replay of the same call) */
    struct rcoll_nb_reduce *red; /* board: a reduction posted as its data mover, folded at the
                                  * end (core/request_reduce.h) */
    const char *ran;            /* the algorithm that ran it */
    struct rcoll_request *next; /* the team's started requests, in start order */
};

#define RCOLL_NB_POOL 8

/* The team's requests (core/team.h holds a pointer). */
typedef struct rcoll_nb_team {
    rcoll_nb_mode_t mode;
    uint64_t seq;                      /* board: the last number taken */
    bool present;                      /* board: this rank is waiting (marked present) */
    bool inside;                       /* caller: a queued call is running */
    struct rcoll_request *head, *tail; /* started, not yet complete, in start order */
    /* Board: released requests kept for the next post (no allocation on the latency path). */
    struct rcoll_request *pool[RCOLL_NB_POOL];
    int pooled;
    /* The queue's progress thread (RCOLL_PROGRESS=thread). */
    pthread_t thread;
    bool thread_started, stopping, running;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} rcoll_nb_team_t;

rcoll_status_t rcoll_nb_team_init(struct rcoll_team *t);
void rcoll_nb_team_destroy(struct rcoll_team *t);
/* No request of the team is still running (none was ever made, or every one completed). */
bool rcoll_nb_team_idle(const struct rcoll_team *t);
/* Before a blocking call on the team: the queue's calls started before it run first (the
 * board's need nothing: their order is kept by their numbers). */
rcoll_status_t rcoll_requests_drain(struct rcoll_team *t);
/* One pass over the team's started requests on the board: every pair a rank can move now. */
void rcoll_nb_progress_board(struct rcoll_team *t);

#endif
