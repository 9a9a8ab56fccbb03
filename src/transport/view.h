/* What a transport and a network channel know of the team they serve: a narrow view that core
 * fills once at team creation (ranks, the node map, the current call's sequence number and
 * name, the wait policy, the configuration) and the callbacks through which they report errors
 * and ask whether a process is gone. Nothing here names the team or the context: transports
 * and channels include no header of core (docs/contributing.md). */
#ifndef RCOLL_TRANSPORT_VIEW_H
#define RCOLL_TRANSPORT_VIEW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "config/config.h"
#include "signal/wait.h"
#include "rcoll/rcoll.h"

struct rcoll_net_ctx;
struct rcoll_seg_pool;

typedef struct rcoll_view {
    int rank, size;
    const int *node_of;      /* node id (0..node_count-1) of every rank */
    int node_count;
    const pid_t *pid_of;     /* process id of every rank */
    const char *same_host;   /* per rank: runs on my host (emulated nodes share one) */
    int local_rank, local_size;
    const int *local_ranks;  /* ranks on my node, in order */
    const int *local_index;  /* per rank: its index on my node, or -1 */
    int ppn_max;             /* largest number of ranks on one node */
    unsigned serial;         /* the team's number in its process (names its shm segment) */
    const uint64_t *seq;     /* the sequence number of the current or last call */
    const char *const *coll; /* the name of the collective running now (NULL between calls) */
    const rcoll_wait_policy_t *wait;
    const rcoll_config_t *cfg;
    /* Shared by the teams of one context, one slot per network channel kind (worker,
     * registration cache), created by the first team that needs it under `net_lock`. */
    struct rcoll_net_ctx **net_ctx;
    pthread_mutex_t *net_lock;
    /* Held while a thread works the channel (net/net.h's helpers take it; signal/wait.h). */
    rcoll_hold_t *net_hold;
    /* The context's segments of destroyed teams (transport/node.h), NULL: none kept. */
    struct rcoll_seg_pool *seg_pool;
    void *owner; /* handed back to the callbacks */
    /* Formats the team's last error (the message is complete) and returns `status`. */
    rcoll_status_t (*error)(void *owner, rcoll_status_t status, const char *msg);
    /* Rank r runs on this host and its process has ended. */
    bool (*process_gone)(void *owner, int rank);
    /* A wait for `peer` failed with `status`: names the ranks that never arrived and the dead
     * ones (`arrived` and `gone` answer per rank for `arg`); returns the status to report. */
    rcoll_status_t (*wait_failed)(void *owner, rcoll_status_t status, int peer,
                                  int (*arrived)(void *arg, int rank),
                                  int (*gone)(void *arg, int rank), void *arg);
    void (*log)(void *owner, rcoll_log_level_t level, const char *msg);
} rcoll_view_t;

/* Formats a message and reports it through v->error. */
rcoll_status_t rcoll_view_error(const rcoll_view_t *v, rcoll_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rcoll_view_log(const rcoll_view_t *v, rcoll_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The name of the collective running now, or `dflt` between calls. */
static inline const char *rcoll_view_coll(const rcoll_view_t *v, const char *dflt)
{
    return *v->coll ? *v->coll : dflt;
}

#endif
