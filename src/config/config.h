/* Configuration of an rcoll context, read once from the environment (RCOLL_*), with the
 * validation that turns a bad value into a readable error instead of a silent default. */
#ifndef RCOLL_CONFIG_CONFIG_H
#define RCOLL_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rcoll/rcoll.h"

typedef enum { RCOLL_WAIT_AUTO, RCOLL_WAIT_SPIN, RCOLL_WAIT_YIELD, RCOLL_WAIT_BLOCK } rcoll_wait_mode_t;
typedef enum { RCOLL_LOG_ERROR = 0, RCOLL_LOG_WARN, RCOLL_LOG_INFO, RCOLL_LOG_DEBUG } rcoll_log_level_t;
/* auto: single copy, measured at start against the copy path (transport/cma_probe.c); slow and
 * fast: that verdict without measuring; off: never single copy. */
typedef enum { RCOLL_CMA_AUTO, RCOLL_CMA_OFF, RCOLL_CMA_SLOW, RCOLL_CMA_FAST } rcoll_cma_mode_t;
/* RCOLL_COPY_STREAM: copies into shared memory from 8 KB with non-temporal stores or plain ones,
 * or as a probe at the node segment's creation measured (transport/node.c). */
typedef enum { RCOLL_STREAM_AUTO, RCOLL_STREAM_ON, RCOLL_STREAM_OFF } rcoll_stream_mode_t;
typedef enum { RCOLL_NB_ALGO_PAIRS, RCOLL_NB_ALGO_BINOMIAL_FORWARD } rcoll_nb_algo_choice_t;
typedef enum { RCOLL_UCX_PUT_AUTO, RCOLL_UCX_PUT_AM, RCOLL_UCX_PUT_RMA } rcoll_ucx_put_t;
/* The longest network channel name RCOLL_NET takes. */
#define RCOLL_NET_NAME_MAX 16

#define RCOLL_ALGO_NAME_MAX 48
#define RCOLL_NODE_MAP_MAX 4096
#define RCOLL_INBOX_BYTES_MAX (1ull << 30) /* 4 of them per rank are mapped (2 boxes, in and out) */
#define RCOLL_DEPTH_MAX 64 /* RCOLL_DEPTH: 2, 4, 8, 16, 32 or 64 */
#define RCOLL_TIMEOUT_MAX 1e9             /* seconds: timeout_s * 1e9 fits a uint64_t */
#define RCOLL_SHOWN_MAX 100               /* a value as quoted in a message (rcoll_config_show) */
#define RCOLL_TUNE_MAX 64                 /* ranges RCOLL_TUNE may give, all entries together */
#define RCOLL_TUNE_INF SIZE_MAX           /* a range's `inf`: no upper bound */
#define RCOLL_TUNE_AUTO (-1)              /* a range's algorithm `auto`: the default rules */

/* One range of RCOLL_TUNE: calls of `coll` whose size (the bytes the selection keys on) is
 * lo <= bytes < hi (hi RCOLL_TUNE_INF: no bound) run algorithm `algo`, an index into the
 * collective's algorithms (coll/colls.h), or RCOLL_TUNE_AUTO. `coll=algo` is 0-inf. */
typedef struct {
    int coll;
    int algo;
    size_t lo, hi;
} rcoll_tune_range_t;

/* The cost model's parameters (select/model.c), in microseconds. Per channel (shared memory
 * inside a node, the network between nodes): one step's latency (`alpha`), each further message
 * one rank of a node handles in that step -- on the network, every message its node sends in it
 * (`gap`) -- and each KiB those messages carry (`per_kb`); a local memcpy's cost per KiB; and
 * what one call costs besides its steps (`call`: a node-aware algorithm makes several).
 * RCOLL_MODEL names a file that sets them (`rcoll-bench --calibrate FILE` writes one); the
 * defaults were measured on the 2-core development machine (docs/tuning.md, "Cost model"). */
typedef struct {
    double alpha, gap, per_kb;
} rcoll_cost_channel_t;
typedef struct {
    rcoll_cost_channel_t shm, net;
    double copy_per_kb;
    double call; /* one collective call's own cost: entering, leaving, the selection */
} rcoll_model_t;

/* The model file's keys, in the order written, each with the address of its value in `m`. */
#define RCOLL_MODEL_KEYS 8
void rcoll_model_keys(rcoll_model_t *m, const char *names[RCOLL_MODEL_KEYS], double *values[RCOLL_MODEL_KEYS]);
/* The shipped defaults. */
void rcoll_model_defaults(rcoll_model_t *m);
/* Parses a model file's text ("key value" lines, # comments; keys not given keep their value):
 * 0, or -1 with what was expected in `err`. */
int rcoll_model_parse(const char *text, rcoll_model_t *m, char *err, size_t err_len);

#define RCOLL_MODEL_PATH_MAX 1024

typedef struct {
    rcoll_wait_mode_t wait_mode;     /* RCOLL_WAIT=spin|yield|block|auto */
    double timeout_s;                /* RCOLL_TIMEOUT, seconds (0: never) */
    size_t zcopy_threshold;          /* RCOLL_ZCOPY_THRESHOLD, bytes per transfer (0: transport's) */
    size_t inbox_bytes;              /* RCOLL_INBOX_BYTES: copy-based slots per rank and ring slot */
    int depth;                       /* RCOLL_DEPTH: calls a sender may run ahead of a receiver
                                      * with data in signal lines (the node transport's ring of
                                      * lines per peer, one node: 2, 4, ..., 64) */
    int gather_fanin;                /* RCOLL_BARRIER_FANIN for the gather tree (RGM) */
    int kport;                       /* RCOLL_KPORT: k of the k-port trees and Standard Exchange */
    int alltoall_kport;              /* RCOLL_ALLTOALL_KPORT: writes in flight in alltoall direct (0: all) */
    int allgather_groups;            /* RCOLL_ALLGATHER_GROUPS: G of allgather hier_multi_group */
    int bcast_radix;                 /* RCOLL_BCAST_RADIX: radix of the k-nomial bcast tree */
    int rails;                       /* RCOLL_RAILS: UCX endpoints per remote peer (striping) */
    size_t rail_min;                 /* RCOLL_RAIL_MIN: smallest transfer striped over the rails */
    int reg_cache;                   /* RCOLL_REG_CACHE: registrations kept (LRU; 0: none) */
    rcoll_log_level_t log_level;     /* RCOLL_LOG=error|warn|info|debug */
    rcoll_cma_mode_t cma;            /* RCOLL_CMA: 0 forces the copy-through-shm fallback */
    rcoll_stream_mode_t copy_stream; /* RCOLL_COPY_STREAM */
    int shm_posix;                   /* RCOLL_SHM=posix: node segments in /dev/shm, not memfd */
    int shm_pool;                    /* RCOLL_SHM_POOL: segments of destroyed teams kept per process
                                      * for a later team of the same processes (0: none) */
    rcoll_ucx_put_t ucx_put;         /* RCOLL_UCX_PUT=am|rma|auto: single copies to other nodes */
    int nb_slots;                    /* RCOLL_NB_SLOTS: outstanding nonblocking calls per team on
                                      * the board (0: no board, caller-driven engine) */
    int nb_areas;                    /* RCOLL_NB_AREAS: of them, with data inline (at most nb_slots) */
    size_t nb_inline;                /* RCOLL_NB_INLINE: per call and rank, send data up to this
                                      * is copied onto the board at post */
    bool nb_inline_set;              /* ... set by the user (else the transport may raise it) */
    bool nb_areas_set;               /* RCOLL_NB_AREAS set by the user (else the transport may lower it) */
    size_t unchanged_min;            /* RCOLL_UNCHANGED: copies into shared memory from this size
                                      * look whether the destination already holds the data and
                                      * write from the first difference only (0: always write) */
    size_t demote_max;               /* RCOLL_DEMOTE: copies into shared memory up to this size
                                      * push the lines they wrote to the shared cache (0: off) */
    int progress_thread;             /* RCOLL_PROGRESS=thread (1) or caller (0) */
    int nb_algo;                     /* RCOLL_NB_ALLGATHER=pairs|binomial_forward (allgather) */
    int reproducible;                /* RCOLL_REPRODUCIBLE=1: reductions fold in one fixed order per
                                      * team size (no algorithm whose order follows the layout) */
    char net[RCOLL_NET_NAME_MAX];    /* RCOLL_NET: a network channel's name (src/net/net.c), "" = auto */
    char algo[RCOLL_COLL_COUNT][RCOLL_ALGO_NAME_MAX]; /* RCOLL_<COLL>_ALGO, "" = auto */
    int tune_count;                  /* RCOLL_TUNE: its ranges in the order given (a later one */
    rcoll_tune_range_t tune[RCOLL_TUNE_MAX]; /* wins where they overlap; select/select.c) */
    char node_map[RCOLL_NODE_MAP_MAX]; /* RCOLL_NODE_MAP=0,0,1,1 */
    int ppn;                         /* RCOLL_PPN: ranks per node when emulating nodes (0: off) */
    long spin_iters;                 /* RCOLL_SPIN_ITERS: polls before yielding (-1: by policy) */
    long yield_iters;                /* RCOLL_YIELD_ITERS: yields before sleeping (-1: by policy) */
    int cores;                       /* cores online on this machine (read once) */
    char model_path[RCOLL_MODEL_PATH_MAX]; /* RCOLL_MODEL: the file read ("" = the defaults) */
    rcoll_model_t model;             /* ... the cost model's parameters it set */
} rcoll_config_t;

/* Reads the environment. On a bad value returns RCOLL_ERR_INVALID with the reason in `err`. */
rcoll_status_t rcoll_config_from_env(rcoll_config_t *cfg, char *err, size_t err_len);

/* Parses a size: decimal digits with an optional k/m/g suffix (powers of 1024) and an optional
 * b after it; returns 0 on success, -1 on bad syntax or a size that does not fit a size_t. */
int rcoll_parse_size(const char *text, size_t *out);

/* RCOLL_NODE_MAP for a team of `size` ranks: one node id 0..size-1 per rank, separated by
 * commas, into node_of[size]; returns 0 on success, -1 if the map does not fit the team. */
int rcoll_parse_node_map(const char *map, int size, int *node_of);

/* `value` as a message shows it: non-printable bytes as \xNN, cut after about 64 characters
 * with its length; `out` holds RCOLL_SHOWN_MAX bytes. Returns out. */
const char *rcoll_config_show(const char *value, char *out);

#endif
