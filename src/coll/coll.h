/* What an algorithm receives and what the registry knows of it. */
#ifndef RCOLL_COLL_H
#define RCOLL_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include "core/team.h"
#include "transport/transport.h"

typedef struct {
    struct rcoll_team *team;
    rcoll_tl_t *tl;
    uint64_t seq;
    int rank, size;
    const void *sendbuf; /* RCOLL_IN_PLACE or the caller's block */
    void *recvbuf;
    size_t bytes;        /* per rank */
} rcoll_args_t;

typedef struct rcoll_algo {
    const char *name;
    rcoll_coll_t coll;
    const char *summary; /* one line: the paper and the idea */
    rcoll_status_t (*run)(rcoll_args_t *args);
} rcoll_algo_t;

/* Every algorithm, by collective (defined in its own file). */
extern const rcoll_algo_t rcoll_barrier_pairwise_exchange;
extern const rcoll_algo_t rcoll_barrier_dissemination;
extern const rcoll_algo_t rcoll_barrier_gather_release;
extern const rcoll_algo_t rcoll_barrier_flat_arrival;
extern const rcoll_algo_t rcoll_allgather_recursive_doubling;
extern const rcoll_algo_t rcoll_allgather_ring;
extern const rcoll_algo_t rcoll_allgather_bruck;
extern const rcoll_algo_t rcoll_allgather_direct;
extern const rcoll_algo_t rcoll_allgather_direct_read;

#endif
