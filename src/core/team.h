/* Internal view of contexts and teams: topology (node of every rank, local ranks), the
 * per-team sequence number, the transport, and the error and log helpers every layer uses. */
#ifndef RCOLL_CORE_TEAM_H
#define RCOLL_CORE_TEAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "config/config.h"
#include "net/net.h"
#include "signal/wait.h"
#include "transport/transport.h"
#include "transport/view.h"
#include "rcoll/rcoll.h"

struct rcoll_tl;
struct rcoll_algo;

/* Scratch slots: the entry point's copy of in-place send data, three for algorithms, and
 * three for the reductions, whose nested calls (coll/reduce.h) use the others meanwhile: two
 * for their algorithms, one for the entry point's counts in bytes (reduce_scatter). */
enum { RCOLL_TMP_INPLACE = 0, RCOLL_TMP_ALGO = 1, RCOLL_TMP_ALGO2 = 2, RCOLL_TMP_ALGO3 = 3,
       RCOLL_TMP_REDUCE = 4, RCOLL_TMP_REDUCE2 = 5, RCOLL_TMP_COUNTS = 6, RCOLL_TMP_PARTS = 7,
       RCOLL_TMP_SLOTS = 8 };

struct rcoll_hier;

struct rcoll_context {
    rcoll_config_t cfg;
    pthread_mutex_t lock;      /* held only while a `net` slot is created (never across an exchange) */
    /* Per network channel kind: its worker or domain and registration cache, created by the
     * first team that spans nodes (net/net.h). */
    rcoll_net_ctx_t *net[RCOLL_NET_SLOTS];
    /* Held by a thread while it works `net` (every channel call goes through net/net.h's
     * helpers, which take it); on once a second thread may (a progress thread, or threads of
     * the program), see signal/wait.h. */
    rcoll_hold_t net_hold;
    _Atomic unsigned teams_created; /* numbers teams: names shm segments uniquely in the process */
    bool threaded;             /* rcoll_context_set_threaded (net_hold on) */
    int host_procs;            /* rcoll_context_set_host_procs (0: unknown) */
    _Atomic bool node_map_warned; /* RCOLL_NODE_MAP did not fit a team: said once */
    /* Segments of destroyed teams kept for later teams of the same processes (RCOLL_SHM_POOL;
     * NULL: none), the node transport's. */
    struct rcoll_seg_pool *seg_pool;
    rcoll_tl_probe_t tl_probe; /* the machine's single copy measured once (transport.h) */
};

struct rcoll_team {
    rcoll_context_t *ctx;
    int rank, size;
    unsigned serial;    /* this team's number in its context (names its shm segment) */
    int *node_of;       /* node id (0..node_count-1) of every rank */
    pid_t *pid_of;      /* process id of every rank */
    int node_count;
    int local_rank, local_size;
    int *local_ranks;   /* team ranks on my node, in order */
    int *local_index;   /* per team rank: its index on my node, or -1 */
    int ppn_max;        /* largest number of ranks on one node */
    int node_cores;     /* cores the ranks of my node may run on, all together */
    char *same_host;    /* per team rank: runs on my host (emulated nodes share one) */
    int host_size;      /* ranks on my host (the node, unless nodes are emulated) */
    int host_cores;     /* cores the ranks of my host may run on, all together */
    int select_cores;   /* the cores the selection weighs, alike on every rank (it must decide
                         * alike): emulated nodes (every rank on one host), the host's; else
                         * the fewest of any node */
    int *scratch;       /* 2 * size ints an algorithm may use during one call */
    uint64_t seq;       /* sequence number of the current or last collective */
    const char *coll;   /* name of the collective running now (for messages) */
    const struct rcoll_algo *forced[RCOLL_COLL_COUNT];
    unsigned forced_gen;  /* moves whenever forced[] may have changed */
    const struct rcoll_algo *last_flat; /* the flat algorithm the last rcoll_team_run ran ... */
    const void *last_flat_args;         /* ... with these arguments (NULL: none ran flat) */
    struct {                          /* the last automatic choice per collective */
        size_t bytes;
        const struct rcoll_algo *algo;
    } chosen[RCOLL_COLL_COUNT];
    uint64_t size_error_seq; /* the call in which a receiver found sizes that differ */
    const char *last_algo;
    char last_error[1024];
    rcoll_wait_policy_t wait;
    rcoll_view_t view;  /* what the transport knows of this team */
    struct rcoll_tl *tl;
    /* Sub-teams over the same processes (core/hier.h): built at the first call of a composed
     * (node-aware) algorithm, NULL before. */
    struct rcoll_hier *hier;
    /* Its nonblocking and persistent requests (core/request.h), made at the first one. */
    struct rcoll_nb_team *nb;
    bool sub;           /* this team is a sub-team of another: composed algorithms give way */
    int *parent_rank;   /* a sub-team's: per rank, its rank in the parent (messages name those) */
    int parent_size;    /* ... and the parent's size (0: not a sub-team) */
    bool building;      /* its sub-teams are being built: composed algorithms give way */
    /* The last blocking call prepared, to replay when the next is the same (core/collectives.c),
     * NULL before the first. */
    struct rcoll_call_cache *call_cache;
    void *tmp[RCOLL_TMP_SLOTS];   /* scratch buffers kept between calls (rcoll_team_tmp) */
    size_t tmp_bytes[RCOLL_TMP_SLOTS];
};

/* A sub-team (core/hier.c): created over `oob` like any team, but its node of every rank is
 * `node_of` (not the host names, RCOLL_NODE_MAP or RCOLL_PPN), the ranks its host runs are
 * at least `host_procs` (its parent's, which share the cores), and its messages name every
 * rank by `parent_rank`, its rank in the parent team. */
rcoll_status_t rcoll_team_create_sub(rcoll_context_t *ctx, const rcoll_oob_t *oob,
                                     const int *node_of, int host_procs, const int *parent_rank,
                                     struct rcoll_team **out);

/* The nodes of the team that share a host (the cost model's H), alike on every rank: the node
 * count where every rank runs on one host (emulated nodes), else 1. */
int rcoll_team_node_share(const struct rcoll_team *t);

/* Runs one collective: takes the next sequence number, chooses the algorithm for `bytes`,
 * calls its prepare, enters the transport, runs it and leaves (rcoll_team_bind, _open and
 * _close below). */
struct rcoll_args;
rcoll_status_t rcoll_team_run(struct rcoll_team *team, rcoll_coll_t coll, void *args);

/* The tail of rcoll_team_run for a call that is the same as one it ran with `algo` (a flat
 * algorithm: team->last_flat after that call), the team's forced algorithms unchanged since:
 * the choice would come out the same, so it is not made again (core/collectives.c). */
rcoll_status_t rcoll_team_rerun(struct rcoll_team *team, rcoll_coll_t coll, const struct rcoll_algo *algo,
                                void *args);

/* The frame of one call on a team, in three parts. rcoll_team_run uses them for every flat
 * algorithm; a composed algorithm uses them to run a call of its own on a sub-team instead of
 * an ordinary sub-call (e.g. a node leader inside a call on the group team and one on the node
 * team at once, making progress on both: coll/hier.h rcoll_hier_open).
 * - bind: `a` belongs to `team` for a call of `coll` (team, transport, rank, size), names the
 *   collective in the team's messages, and sets the target peers write into (put_user) or read
 *   from (get_user) -- the receive buffer, over the bytes the collective receives there --
 *   unless the caller set a->target (and a->target_bytes) already.
 * - open: takes the team's next sequence number (a->seq), names `algo` as what runs, calls its
 *   prepare, then enters the transport advertising a->target. Every rank of the team opens
 *   its calls in the same order; nothing else may run on the team until the call is closed.
 * - close: after the call's work ended with `st`: the sizes check (an erroneous program's sizes
 *   that differ between ranks, found by receivers or single copies), then leaves the
 *   transport. Always called once open was, whatever open returned; returns the first error. */
void rcoll_team_bind(struct rcoll_team *team, rcoll_coll_t coll, struct rcoll_args *a);
rcoll_status_t rcoll_team_open(struct rcoll_team *team, const struct rcoll_algo *algo,
                               struct rcoll_args *a);
rcoll_status_t rcoll_team_close(struct rcoll_team *team, struct rcoll_args *a, rcoll_status_t st);
/* A call every rank knows to be empty (a team of one, zero bytes where all ranks name the same
 * size): returns at once, taking no sequence number (every rank skips it alike). */
rcoll_status_t rcoll_team_skip(struct rcoll_team *team);
/* A v-form call in which this rank moves nothing (its counts are all zero; its peers, knowing
 * them, expect nothing of it): takes the sequence number and leaves (the done word peers'
 * flow control reads), without entering. Gatherv and scatterv pass in rcoll_team_run, where
 * the algorithm is known: under a composed one every rank runs (coll.h, `idle`). */
rcoll_status_t rcoll_team_pass(struct rcoll_team *team);
/* The same pass before any selection (rcoll_team_run tries it first), where the algorithm for `coll` is already known to be a
 * flat one (forced, or chosen by an earlier call of the team and cached: gatherv and scatterv
 * select by team only): true and *st set when it passed, false to take the whole run. An idle
 * rank of a back-to-back loop then costs what a native zero count does (docs/tuning.md). */
bool rcoll_team_pass_known(struct rcoll_team *team, rcoll_coll_t coll, rcoll_status_t *st);
/* A scratch buffer of at least `bytes` that stays valid until the next call for the same slot
 * (grown as needed, freed with the team); NULL when out of memory. */
void *rcoll_team_tmp(struct rcoll_team *team, int slot, size_t bytes);

/* Formats the team's last error and returns `status`. */
rcoll_status_t rcoll_team_error(struct rcoll_team *team, rcoll_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A wait of the current collective failed while waiting for `peer`: names the collective,
 * the ranks that never arrived (`arrived` tells, per rank), and the dead ones (`gone` tells:
 * the transport knows what its network reported). */
rcoll_status_t rcoll_team_wait_failed(struct rcoll_team *team, rcoll_status_t status, int peer,
                                      int (*arrived)(void *arg, int rank),
                                      int (*gone)(void *arg, int rank), void *arg);
/* A receiver found that `peer` sent `theirs` bytes where it expects `mine` (sizes differ
 * between ranks): noted, the call goes on to its end, and then returns RCOLL_ERR_TRUNCATE. */
void rcoll_team_note_size(struct rcoll_team *team, int peer, size_t theirs, size_t mine);
/* Rank r runs on this host and its process has ended (exited, killed, or a zombie not yet
 * reaped by its parent). */
bool rcoll_team_process_gone(const struct rcoll_team *team, int r);

void rcoll_log(const rcoll_context_t *ctx, rcoll_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
