/* rcoll public C API: contexts, teams built over an out-of-band bootstrap, and blocking
 * collectives (barrier, allgather). Everything a user or a binding needs is in this header. */
#ifndef RCOLL_RCOLL_H
#define RCOLL_RCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RCOLL_API __attribute__((visibility("default")))
#else
#define RCOLL_API
#endif

#define RCOLL_VERSION_MAJOR 0
#define RCOLL_VERSION_MINOR 1

typedef enum {
    RCOLL_OK = 0,
    RCOLL_ERR_INVALID = -1,     /* bad argument or bad configuration value */
    RCOLL_ERR_NOMEM = -2,       /* allocation failed */
    RCOLL_ERR_SYSTEM = -3,      /* an OS call failed (errno is in the message) */
    RCOLL_ERR_TIMEOUT = -4,     /* a peer did not arrive within RCOLL_TIMEOUT */
    RCOLL_ERR_PEER_DEAD = -5,   /* a peer process is gone */
    RCOLL_ERR_UNSUPPORTED = -6, /* not possible with this team or build */
    RCOLL_ERR_BOOTSTRAP = -7    /* the out-of-band exchange failed */
} rcoll_status_t;

/* Passed as the send buffer of an allgather: the caller's block already sits in the receive
 * buffer at offset rank * bytes. */
#define RCOLL_IN_PLACE ((const void *)1)

typedef struct rcoll_context rcoll_context_t;
typedef struct rcoll_team rcoll_team_t;

typedef enum {
    RCOLL_COLL_BARRIER = 0,
    RCOLL_COLL_ALLGATHER = 1,
    RCOLL_COLL_COUNT
} rcoll_coll_t;

/* Out-of-band bootstrap, the UCC "oob" shape: an allgather of `len` bytes from every member,
 * called a few times while a team is created and never on the data path. Returns 0 on success. */
typedef struct {
    int (*allgather)(const void *sendbuf, void *recvbuf, size_t len, void *coll_info);
    void *coll_info;
    int rank;
    int size;
} rcoll_oob_t;

/* Context: configuration read from the environment (RCOLL_*) once, shared by its teams.
 * A context is used by one thread at a time. */
RCOLL_API rcoll_status_t rcoll_context_create(rcoll_context_t **ctx);
RCOLL_API void rcoll_context_destroy(rcoll_context_t *ctx);

/* Team: collective over oob->size processes. Every member calls it; the result is agreed, so
 * either all members get a team or all get the same error. */
RCOLL_API rcoll_status_t rcoll_team_create(rcoll_context_t *ctx, const rcoll_oob_t *oob, rcoll_team_t **team);
/* Local only: unmaps and frees. No member may be inside a collective on the team. */
RCOLL_API void rcoll_team_destroy(rcoll_team_t *team);

RCOLL_API int rcoll_team_rank(const rcoll_team_t *team);
RCOLL_API int rcoll_team_size(const rcoll_team_t *team);
RCOLL_API int rcoll_team_node_count(const rcoll_team_t *team);
RCOLL_API int rcoll_team_local_size(const rcoll_team_t *team);

RCOLL_API rcoll_status_t rcoll_barrier(rcoll_team_t *team);
/* Every member contributes `bytes` bytes; recvbuf receives size * bytes, rank order. */
RCOLL_API rcoll_status_t rcoll_allgather(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes);

/* Run `name` for every later call of `coll` on this team (NULL or "auto": back to the
 * decision). An unknown or inapplicable name is RCOLL_ERR_INVALID; the message lists the valid
 * ones. Every member must force the same algorithm. */
RCOLL_API rcoll_status_t rcoll_team_force_algorithm(rcoll_team_t *team, rcoll_coll_t coll, const char *name);

/* Name of the algorithm the team's last collective ran ("" before the first one). */
RCOLL_API const char *rcoll_team_last_algorithm(const rcoll_team_t *team);
/* Readable detail of the team's last error (which collective, which ranks), "" if none. */
RCOLL_API const char *rcoll_team_last_error(const rcoll_team_t *team);
RCOLL_API const char *rcoll_strerror(rcoll_status_t status);

RCOLL_API const char *rcoll_coll_name(rcoll_coll_t coll);
/* Parse a collective name ("barrier", "allgather"); -1 if unknown. */
RCOLL_API int rcoll_coll_from_name(const char *name);

/* Selection, without a team: which algorithm rcoll would run and why (for rcoll-info). The
 * overrides of the context's configuration (RCOLL_<COLL>_ALGO) apply. Writes a readable
 * explanation into `why` and returns the algorithm name, or NULL with the error in `why`. */
RCOLL_API const char *rcoll_explain(rcoll_context_t *ctx, rcoll_coll_t coll, size_t bytes, int team_size,
                          int ppn, char *why, size_t why_len);
/* Writes the algorithm registry (name, collective, constraints, description) to `buf`. */
RCOLL_API void rcoll_list_algorithms(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
