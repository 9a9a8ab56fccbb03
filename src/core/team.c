/* Teams: creation over the out-of-band bootstrap (node of every rank from the hostname,
 * RCOLL_NODE_MAP or RCOLL_PPN; local ranks; the transport), the collective entry points that
 * number each call and run the selected algorithm, and the team's error messages. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "coll/colls.h"
#include "core/hier.h"
#include "core/team.h"
#include "core/request.h"
#include "select/select.h"
#include "transport/transport.h"

/* ---- errors ---- */

rcoll_status_t rcoll_team_error(struct rcoll_team *team, rcoll_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(team->last_error, sizeof team->last_error, fmt, ap);
    va_end(ap);
    rcoll_log(team->ctx, RCOLL_LOG_DEBUG, "rank %d: %s", team->rank, team->last_error);
    return status;
}

/* A rank as messages name it: in a sub-team, its rank in the parent. */
static int shown_rank(const struct rcoll_team *t, int r)
{
    return t->parent_rank && r >= 0 && r < t->size ? t->parent_rank[r] : r;
}

static size_t list_ranks(struct rcoll_team *t, char *buf, size_t len,
                         int (*pick)(struct rcoll_team *t, int r, void *arg), void *arg)
{
    size_t n = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < t->size && n < len; r++) {
        if (!pick(t, r, arg))
            continue;
        if (shown++ == 16) {
            n += (size_t)snprintf(buf + n, len - n, ",...");
            break;
        }
        n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", shown_rank(t, r));
    }
    return n;
}

typedef struct {
    int (*arrived)(void *arg, int rank);
    int (*gone)(void *arg, int rank);
    void *arg;
    int dead_peer; /* the wait failed because this rank is gone (-1: not that) */
} arrival_query_t;

static int never_arrived(struct rcoll_team *t, int r, void *arg)
{
    arrival_query_t *q = arg;
    return r != t->rank && !q->arrived(q->arg, r);
}

bool rcoll_team_process_gone(const struct rcoll_team *t, int r)
{
    if (!t->same_host[r])
        return false;
    if (kill(t->pid_of[r], 0) != 0)
        return errno == ESRCH;
    /* Alive to kill(), yet perhaps a zombie: its state is the field after "(comm)". */
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)t->pid_of[r]);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *end = strrchr(buf, ')');
    return end && end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X');
}

static int is_dead(struct rcoll_team *t, int r, void *arg)
{
    const arrival_query_t *q = arg;
    return r != t->rank && (r == q->dead_peer || q->gone(q->arg, r));
}

rcoll_status_t rcoll_team_wait_failed(struct rcoll_team *t, rcoll_status_t status, int peer,
                                      int (*arrived)(void *arg, int rank),
                                      int (*gone)(void *arg, int rank), void *arg)
{
    char missing[128], dead[128];
    /* The wait saw `peer` gone: listed even if a second look now misses it (a process seen
     * exiting, then momentarily not reported). */
    arrival_query_t q = {arrived, gone, arg, status == RCOLL_ERR_PEER_DEAD ? peer : -1};
    list_ranks(t, missing, sizeof missing, never_arrived, &q);
    list_ranks(t, dead, sizeof dead, is_dead, &q);
    return rcoll_team_error(t, status,
                            "%s (call #%llu of the team) on rank %d of %d: %s while waiting for "
                            "rank %d; ranks that never arrived: %s; ranks whose process is gone: %s",
                            t->coll ? t->coll : "team setup", (unsigned long long)t->seq,
                            shown_rank(t, t->rank), t->parent_size ? t->parent_size : t->size,
                            rcoll_strerror(status),
                            shown_rank(t, peer), missing[0] ? missing : "none",
                            dead[0] ? dead : "none");
}

/* ---- creation ---- */

/* What each rank brings to its team's first exchange (and, on a rank without a context, only
 * `absent`: every rank then fails alike instead of waiting for it). */
typedef struct {
    char host[64];
    int32_t pid;
    int32_t absent;
    cpu_set_t cpus;         /* where this rank may run */
    rcoll_tl_hello_t hello; /* the transport's (a kept segment it could take over) */
} rank_info_t;

/* Node ids renumbered 0..count-1 in order of first appearance. */
static int renumber_nodes(int *node_of, int size)
{
    int count = 0;
    int *seen = malloc((size_t)size * sizeof *seen);
    if (!seen)
        return -1;
    for (int r = 0; r < size; r++) {
        int id = -1;
        for (int i = 0; i < count && id < 0; i++)
            if (seen[i] == node_of[r])
                id = i;
        if (id < 0) {
            seen[count] = node_of[r];
            id = count++;
        }
        node_of[r] = id;
    }
    free(seen);
    return count;
}

/* rcoll_team.select_cores, from every rank's cores (the same table on every rank). */
static rcoll_status_t select_cores(struct rcoll_team *t, const rank_info_t *info)
{
    if (t->host_size == t->size) {
        t->select_cores = t->host_cores;
        return RCOLL_OK;
    }
    cpu_set_t *cpus = calloc((size_t)t->node_count, sizeof *cpus);
    if (!cpus)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "team setup: out of memory");
    for (int r = 0; r < t->size; r++)
        CPU_OR(&cpus[t->node_of[r]], &cpus[t->node_of[r]], &info[r].cpus);
    t->select_cores = 0;
    for (int k = 0; k < t->node_count; k++) {
        int n = CPU_COUNT(&cpus[k]) > 0 ? CPU_COUNT(&cpus[k]) : 1;
        if (t->select_cores == 0 || n < t->select_cores)
            t->select_cores = n;
    }
    free(cpus);
    return RCOLL_OK;
}

/* The map does not fit this team: an error every rank returns, shown once per context (by
 * rank 0; teams of other sizes, e.g. MPI sub-communicators, would repeat it). */
static rcoll_status_t node_map_error(struct rcoll_team *t)
{
    char shown[RCOLL_SHOWN_MAX];
    rcoll_status_t st = rcoll_team_error(
        t, RCOLL_ERR_INVALID,
        "RCOLL_NODE_MAP=%s is not valid: expected one node id 0..%d per rank of the team (%d ranks)",
        rcoll_config_show(t->ctx->cfg.node_map, shown), t->size - 1, t->size);
    if (t->rank == 0 && !atomic_exchange(&t->ctx->node_map_warned, true))
        rcoll_log(t->ctx, RCOLL_LOG_WARN, "%s", t->last_error);
    return st;
}

static rcoll_status_t assign_nodes(struct rcoll_team *t, const rank_info_t *info,
                                   const int *given)
{
    const rcoll_config_t *cfg = &t->ctx->cfg;
    if (given) {
        memcpy(t->node_of, given, (size_t)t->size * sizeof *t->node_of);
    } else if (cfg->node_map[0]) {
        if (rcoll_parse_node_map(cfg->node_map, t->size, t->node_of))
            return node_map_error(t);
    } else {
        for (int r = 0; r < t->size; r++) {
            t->node_of[r] = r;
            for (int q = 0; q < r; q++)
                if (strncmp(info[q].host, info[r].host, sizeof info[r].host) == 0) {
                    t->node_of[r] = t->node_of[q];
                    break;
                }
            if (cfg->ppn)
                t->node_of[r] = r / cfg->ppn;
        }
    }
    t->node_count = renumber_nodes(t->node_of, t->size);
    if (t->node_count < 0)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "team setup: out of memory");
    t->local_size = 0;
    for (int r = 0; r < t->size; r++) {
        t->local_index[r] = -1;
        if (t->node_of[r] == t->node_of[t->rank]) {
            if (r == t->rank)
                t->local_rank = t->local_size;
            t->local_index[r] = t->local_size;
            t->local_ranks[t->local_size++] = r;
        }
    }
    int *per_node = calloc((size_t)t->node_count, sizeof *per_node);
    if (!per_node)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "team setup: out of memory");
    t->ppn_max = 0;
    for (int r = 0; r < t->size; r++)
        if (++per_node[t->node_of[r]] > t->ppn_max)
            t->ppn_max = per_node[t->node_of[r]];
    free(per_node);
    /* Ranks bound one per core are not crowded; four ranks on two cores are. Emulated nodes
     * share the host's cores: waiting is decided by who shares the host. */
    cpu_set_t node, host;
    CPU_ZERO(&node);
    CPU_ZERO(&host);
    t->host_size = 0;
    for (int r = 0; r < t->size; r++) {
        t->same_host[r] = strncmp(info[r].host, info[t->rank].host, sizeof info[r].host) == 0;
        if (t->same_host[r]) {
            t->host_size++;
            CPU_OR(&host, &host, &info[r].cpus);
        }
        if (t->local_index[r] >= 0)
            CPU_OR(&node, &node, &info[r].cpus);
    }
    t->node_cores = CPU_COUNT(&node) > 0 ? CPU_COUNT(&node) : 1;
    t->host_cores = CPU_COUNT(&host) > 0 ? CPU_COUNT(&host) : 1;
    return select_cores(t, info);
}

/* RCOLL_<COLL>_ALGO, resolved once, unless RCOLL_TUNE names the collective (its ranges come
 * first: the selection then weighs both at every call it does not find in its cache). A bad
 * name stays unresolved: the selection then reports it, with the valid names, at every call
 * of that collective. */
static void resolve_overrides(struct rcoll_team *t)
{
    for (int c = 0; c < RCOLL_COLL_COUNT; c++)
        if (t->ctx->cfg.algo[c][0] && !rcoll_tune_names(&t->ctx->cfg, (rcoll_coll_t)c))
            t->forced[c] = rcoll_algo_find((rcoll_coll_t)c, t->ctx->cfg.algo[c]);
}

static struct rcoll_team *team_alloc(rcoll_context_t *ctx, const rcoll_oob_t *oob)
{
    struct rcoll_team *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ctx = ctx;
    t->rank = oob->rank;
    t->size = oob->size;
    t->last_algo = "";
    size_t n = (size_t)oob->size;
    t->node_of = calloc(n, sizeof *t->node_of);
    t->pid_of = calloc(n, sizeof *t->pid_of);
    t->local_ranks = calloc(n, sizeof *t->local_ranks);
    t->local_index = calloc(n, sizeof *t->local_index);
    t->same_host = calloc(n, sizeof *t->same_host);
    t->scratch = calloc(2 * n, sizeof *t->scratch);
    if (!t->node_of || !t->pid_of || !t->local_ranks || !t->local_index || !t->same_host ||
        !t->scratch) {
        rcoll_team_destroy(t);
        return NULL;
    }
    return t;
}

/* The team's first exchange: every rank's host, process, cores and transport hello (its
 * preparation in *prep, every rank's hello in *hellos). */
static rcoll_status_t exchange_info(struct rcoll_team *t, const rcoll_oob_t *oob, rank_info_t **all,
                                    rcoll_tl_hello_t **hellos, struct rcoll_tl_prep **prep)
{
    rank_info_t mine;
    memset(&mine, 0, sizeof mine);
    gethostname(mine.host, sizeof mine.host - 1);
    mine.pid = (int32_t)getpid();
    if (sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) != 0)
        for (int c = 0; c < t->ctx->cfg.cores && c < CPU_SETSIZE; c++)
            CPU_SET(c, &mine.cpus);
    *all = calloc((size_t)t->size, sizeof **all);
    *hellos = calloc((size_t)t->size, sizeof **hellos);
    if (!*all || !*hellos)
        return RCOLL_ERR_NOMEM; /* cannot take part: the bootstrap will report the others' error */
    *prep = rcoll_tl_hello(t->ctx->seg_pool, &t->ctx->cfg, &t->ctx->tl_probe, t->rank, t->size,
                           &mine.hello);
    if (oob->allgather(&mine, *all, sizeof mine, oob->coll_info) != 0)
        return rcoll_team_error(t, RCOLL_ERR_BOOTSTRAP, "team setup: out-of-band allgather failed");
    for (int r = 0; r < t->size; r++) {
        t->pid_of[r] = (*all)[r].pid;
        (*hellos)[r] = (*all)[r].hello;
    }
    for (int r = 0; r < t->size; r++)
        if ((*all)[r].absent)
            return rcoll_team_error(t, RCOLL_ERR_INVALID, "team setup: rank %d has no rcoll "
                                    "context (it called rcoll_team_create without one)", r);
    return RCOLL_OK;
}

/* A member without a context takes part in the first exchange as absent, so that every member
 * returns RCOLL_ERR_INVALID rather than wait for it. */
static rcoll_status_t abstain(const rcoll_oob_t *oob)
{
    rank_info_t mine, *all = calloc((size_t)oob->size, sizeof *all);
    if (!all)
        return RCOLL_ERR_NOMEM;
    memset(&mine, 0, sizeof mine);
    mine.absent = 1;
    mine.hello.status = -EINVAL;
    oob->allgather(&mine, all, sizeof mine, oob->coll_info);
    free(all);
    return RCOLL_ERR_INVALID;
}

/* ---- the transport's view of the team (transport/view.h) ---- */

/* A transport's message names ranks as "rank N" in the team's numbering; a sub-team's user
 * knows the parent's: each such N becomes shown_rank(N) (one place for every transport). */
static void shown_ranks(const struct rcoll_team *t, const char *msg, char *out, size_t len)
{
    size_t n = 0;
    while (*msg && n + 1 < len) {
        if (strncmp(msg, "rank ", 5) == 0 && isdigit((unsigned char)msg[5])) {
            char *end;
            long r = strtol(msg + 5, &end, 10);
            int w = snprintf(out + n, len - n, "rank %d", shown_rank(t, r > INT_MAX ? -1 : (int)r));
            n = w > 0 && (size_t)w < len - n ? n + (size_t)w : len - 1;
            msg = end;
        } else {
            out[n++] = *msg++;
        }
    }
    out[n < len ? n : len - 1] = '\0';
}

static rcoll_status_t view_error(void *owner, rcoll_status_t status, const char *msg)
{
    struct rcoll_team *t = owner;
    if (!t->parent_rank)
        return rcoll_team_error(t, status, "%s", msg);
    char shown[sizeof t->last_error];
    shown_ranks(t, msg, shown, sizeof shown);
    return rcoll_team_error(t, status, "%s", shown);
}

static bool view_process_gone(void *owner, int rank)
{
    return rcoll_team_process_gone(owner, rank);
}

static rcoll_status_t view_wait_failed(void *owner, rcoll_status_t status, int peer,
                                       int (*arrived)(void *arg, int rank),
                                       int (*gone)(void *arg, int rank), void *arg)
{
    return rcoll_team_wait_failed(owner, status, peer, arrived, gone, arg);
}

static void view_log(void *owner, rcoll_log_level_t level, const char *msg)
{
    rcoll_log(((struct rcoll_team *)owner)->ctx, level, "%s", msg);
}

static void view_init(struct rcoll_team *t)
{
    rcoll_view_t *v = &t->view;
    v->rank = t->rank;
    v->size = t->size;
    v->node_of = t->node_of;
    v->node_count = t->node_count;
    v->pid_of = t->pid_of;
    v->same_host = t->same_host;
    v->local_rank = t->local_rank;
    v->local_size = t->local_size;
    v->local_ranks = t->local_ranks;
    v->local_index = t->local_index;
    v->ppn_max = t->ppn_max;
    v->serial = t->serial;
    v->seq = &t->seq;
    v->coll = &t->coll;
    v->wait = &t->wait;
    v->cfg = &t->ctx->cfg;
    v->net_ctx = t->ctx->net;
    v->net_lock = &t->ctx->lock;
    v->net_hold = &t->ctx->net_hold;
    v->seg_pool = t->ctx->seg_pool;
    v->owner = t;
    v->error = view_error;
    v->process_gone = view_process_gone;
    v->wait_failed = view_wait_failed;
    v->log = view_log;
}

static rcoll_status_t team_setup(struct rcoll_team *t, const rcoll_oob_t *oob, const int *node_of,
                                 int host_procs)
{
    rank_info_t *info = NULL;
    rcoll_tl_hello_t *hellos = NULL;
    struct rcoll_tl_prep *prep = NULL;
    rcoll_status_t st = exchange_info(t, oob, &info, &hellos, &prep);
    if (st == RCOLL_OK)
        st = assign_nodes(t, info, node_of);
    free(info);
    if (st != RCOLL_OK) {
        rcoll_tl_hello_drop(t->ctx->seg_pool, prep);
        free(hellos);
        return st;
    }
    /* Crowding is judged by every process of the job on this host, where the caller said how
     * many (a team of 2 of 4 ranks on 2 cores is crowded: the other 2 run there too). Core-mates
     * are known only among the ranks of my node's shared segment: the idle-core polls rely on
     * them only when my node holds every process of the host (not so for emulated nodes, which
     * share one host: a rank of another emulated node on my core would wait a whole time slice,
     * ~4 ms, behind a rank polling for its own node's peer). */
    if (host_procs < t->ctx->host_procs)
        host_procs = t->ctx->host_procs;
    int host = t->host_size > host_procs ? t->host_size : host_procs;
    rcoll_wait_policy_init(&t->wait, &t->ctx->cfg, host, t->host_cores, t->node_count > 1);
    if (t->node_count > 1) /* its channel's own waits hold the context's network */
        t->wait.hold = &t->ctx->net_hold;
    if (t->local_size < host)
        t->wait.idle_core_polls = 0;
    /* Threads creating teams at once each get their own number (and shm segment name). */
    t->serial = atomic_fetch_add_explicit(&t->ctx->teams_created, 1, memory_order_relaxed);
    view_init(t);
    /* with a network channel when node_count > 1 */
    st = rcoll_tl_create(&t->view, oob, hellos, prep, &t->tl);
    free(hellos);
    if (st == RCOLL_OK && t->tl->block_slice_ns)
        t->wait.block_slice_ns = t->tl->block_slice_ns;
    if (st == RCOLL_OK)
        t->seq = t->tl->first_seq; /* a reused segment: on from its last team's numbers */
    if (st == RCOLL_OK && !node_of)
        resolve_overrides(t); /* a sub-team runs its defaults: the user's choice is the parent's */
    return st;
}

static rcoll_status_t team_create(rcoll_context_t *ctx, const rcoll_oob_t *oob, const int *node_of,
                                  int host_procs, rcoll_team_t **out)
{
    if (!oob || !out || !oob->allgather || oob->size < 1 || oob->rank < 0 || oob->rank >= oob->size)
        return RCOLL_ERR_INVALID;
    if (!ctx)
        return abstain(oob);
    struct rcoll_team *t = team_alloc(ctx, oob);
    if (!t)
        return RCOLL_ERR_NOMEM;
    t->sub = node_of != NULL;
    rcoll_status_t st = team_setup(t, oob, node_of, host_procs);
    if (st != RCOLL_OK) {
        /* A threaded context's refusal of a team across nodes is the caller's to report. */
        rcoll_log(ctx, st == RCOLL_ERR_UNSUPPORTED ? RCOLL_LOG_DEBUG : RCOLL_LOG_INFO,
                  "team creation failed on rank %d: %s", t->rank,
                  t->last_error[0] ? t->last_error : rcoll_strerror(st));
        rcoll_team_destroy(t);
        return st;
    }
    rcoll_log(ctx, RCOLL_LOG_DEBUG, "team of %d: rank %d, %d node(s), local rank %d of %d, %s%s",
              t->size, t->rank, t->node_count, t->local_rank, t->local_size,
              t->tl->single_copy ? "single copy by CMA" : "copy through shared memory",
              t->node_count > 1 ? ", other nodes over the network channel" : "");
    *out = t;
    return RCOLL_OK;
}

rcoll_status_t rcoll_team_create(rcoll_context_t *ctx, const rcoll_oob_t *oob, rcoll_team_t **out)
{
    return team_create(ctx, oob, NULL, 0, out);
}

rcoll_status_t rcoll_team_create_sub(rcoll_context_t *ctx, const rcoll_oob_t *oob,
                                     const int *node_of, int host_procs, const int *parent_rank,
                                     struct rcoll_team **out)
{
    rcoll_status_t st = team_create(ctx, oob, node_of, host_procs, out);
    if (st != RCOLL_OK)
        return st;
    (*out)->parent_rank = malloc((size_t)oob->size * sizeof(int));
    if (!(*out)->parent_rank) {
        rcoll_team_destroy(*out);
        *out = NULL;
        return RCOLL_ERR_NOMEM;
    }
    memcpy((*out)->parent_rank, parent_rank, (size_t)oob->size * sizeof(int));
    return RCOLL_OK;
}


void rcoll_team_destroy(rcoll_team_t *t)
{
    if (!t)
        return;
    /* Its segment may serve a later team only if every call ended in step: no error reported
     * (a failed wait leaves words half-way), no request still running. */
    if (t->tl)
        t->tl->reusable = !t->last_error[0] && rcoll_nb_team_idle(t);
    rcoll_nb_team_destroy(t);
    rcoll_hier_destroy(t->hier);
    if (t->tl)
        t->tl->ops->destroy(t->tl);
    free(t->node_of);
    free(t->parent_rank);
    free(t->pid_of);
    free(t->local_ranks);
    free(t->local_index);
    free(t->same_host);
    free(t->scratch);
    free(t->call_cache);
    for (int i = 0; i < RCOLL_TMP_SLOTS; i++)
        free(t->tmp[i]);
    free(t);
}

/* ---- queries ---- */

int rcoll_team_rank(const rcoll_team_t *t) { return t->rank; }
int rcoll_team_size(const rcoll_team_t *t) { return t->size; }
int rcoll_team_node_count(const rcoll_team_t *t) { return t->node_count; }
int rcoll_team_local_size(const rcoll_team_t *t) { return t->local_size; }
const char *rcoll_team_last_algorithm(const rcoll_team_t *t) { return t->last_algo; }
const char *rcoll_team_last_error(const rcoll_team_t *t) { return t->last_error; }

rcoll_status_t rcoll_team_force_algorithm(rcoll_team_t *t, rcoll_coll_t coll, const char *name)
{
    if (!rcoll_coll_info(coll))
        return rcoll_team_error(t, RCOLL_ERR_INVALID, "unknown collective %d", (int)coll);
    t->forced_gen++; /* a replayed call chooses anew (core/collectives.c) */
    if (!name || !name[0] || strcmp(name, "auto") == 0) {
        t->forced[coll] = NULL;
        return RCOLL_OK;
    }
    const rcoll_algo_t *a = rcoll_algo_find(coll, name);
    if (!a) {
        char names[256];
        rcoll_algo_names(coll, names, sizeof names);
        return rcoll_team_error(t, RCOLL_ERR_INVALID, "unknown %s algorithm '%s'; valid: %s, auto",
                                rcoll_coll_name(coll), name, names);
    }
    t->forced[coll] = a;
    return RCOLL_OK;
}

/* ---- collectives ---- */

int rcoll_team_node_share(const struct rcoll_team *t)
{
    /* Alike on every rank: emulated nodes on one host share it all; on a cluster (or hosts of
     * several emulated nodes each, which only tests make) one node per host. */
    return t->host_size == t->size ? t->node_count : 1;
}

/* The algorithm chosen for the call (before any fallback: rcoll_team_run), `why` filled when
 * it is not NULL (the log at RCOLL_LOG=info); NULL with the team's error on a bad override. */
static const rcoll_algo_t *choose(struct rcoll_team *t, const rcoll_coll_info_t *c, size_t bytes,
                                  char *why, size_t why_len)
{
    const rcoll_algo_t *a = t->forced[c->coll];
    const rcoll_config_t *cfg = &t->ctx->cfg;
    if (a && why) {
        /* From RCOLL_<COLL>_ALGO (resolved once) or rcoll_team_force_algorithm. */
        if (cfg->algo[c->coll][0] && strcasecmp(cfg->algo[c->coll], a->name) == 0)
            rcoll_select_shared(cfg, c->coll, bytes, t->size, t->ppn_max, t->select_cores,
                                rcoll_team_node_share(t), why, why_len);
        else
            snprintf(why, why_len, "forced for this team");
    }
    if (a)
        return a;
    if (!why && t->chosen[c->coll].algo && t->chosen[c->coll].bytes == bytes)
        return t->chosen[c->coll].algo; /* the same as last time */
    int share = rcoll_team_node_share(t);
    a = t->sub ? rcoll_select_default(cfg, c->coll, bytes, t->size, t->ppn_max, t->select_cores, share,
                                      why, why_len)
               : rcoll_select_shared(cfg, c->coll, bytes, t->size, t->ppn_max, t->select_cores, share,
                                     why, why_len);
    if (!a) { /* a bad RCOLL_<COLL>_ALGO: its message */
        char err[512];
        rcoll_select_shared(cfg, c->coll, bytes, t->size, t->ppn_max, t->select_cores, share, err,
                            sizeof err);
        rcoll_team_error(t, RCOLL_ERR_INVALID, "%s: %s", c->name, err);
        return NULL;
    }
    t->chosen[c->coll].bytes = bytes;
    t->chosen[c->coll].algo = a;
    return a;
}

/* The size the selection keys on, alike on every rank: the block (the forms without v), the
 * mean count (allgatherv: every rank knows every count), or none (the other v-forms' own counts
 * differ by rank). */
static size_t selection_key(const rcoll_coll_info_t *c, const rcoll_args_t *a)
{
    if (!rcoll_coll_by_bytes(c))
        return 0;
    if (!c->vform)
        return a->bytes;
    size_t sum = 0;
    for (int r = 0; r < a->size; r++)
        sum += a->rcounts[r];
    return sum / (size_t)a->size;
}

/* The bytes of the receive buffer a rank's peers may write into (or, for the root's send
 * buffer, read from: prepare sets that target itself): P blocks or one, by the table; the
 * v-forms' P blocks end where the last one does. */
static size_t receive_extent(const rcoll_coll_info_t *c, const rcoll_args_t *a)
{
    if (!a->recvbuf || c->recv.blocks == RCOLL_BLOCKS_NONE)
        return 0;
    if (c->recv.blocks == RCOLL_BLOCKS_ONE)
        return a->bytes;
    if (!c->vform)
        return (size_t)a->size * a->bytes;
    size_t end = 0;
    for (int r = 0; a->rcounts && a->rdispls && r < a->size; r++)
        if (a->rcounts[r] && a->rdispls[r] + a->rcounts[r] > end)
            end = a->rdispls[r] + a->rcounts[r];
    return end;
}

void rcoll_team_note_size(struct rcoll_team *t, int peer, size_t theirs, size_t mine)
{
    if (t->size_error_seq == t->seq)
        return; /* the first one of the call is reported */
    t->size_error_seq = t->seq;
    rcoll_team_error(t, RCOLL_ERR_TRUNCATE,
                     "%s (call #%llu): rank %d sent %zu bytes where rank %d expects %zu (sizes "
                     "must match between ranks)%s",
                     t->coll, (unsigned long long)t->seq, peer, theirs, t->rank, mine,
                     theirs > mine ? "; cut at the receiver's length" : "");
}

/* After a call: sizes that differ between ranks (an erroneous program), as receivers found
 * them in the lines that carried their data (rcoll_team_note_size), or a single copy this rank
 * sent or read that stopped at the end of the other side's buffer (tl->truncated). The call
 * itself ran to its end on every rank, so the next one starts in step. */
static rcoll_status_t check_sizes(struct rcoll_team *t, const rcoll_args_t *a)
{
    rcoll_tl_t *tl = t->tl;
    if (t->size_error_seq == a->seq)
        return RCOLL_ERR_TRUNCATE;
    if (tl->truncated == a->seq)
        return rcoll_team_error(t, RCOLL_ERR_TRUNCATE,
                                "%s (call #%llu): a single copy between rank %d and rank %d "
                                "passed the end of the buffer the other side advertised: cut "
                                "there (sizes must match between ranks)",
                                t->coll, (unsigned long long)a->seq, t->rank, tl->truncated_peer);
    return RCOLL_OK;
}

void rcoll_team_bind(struct rcoll_team *t, rcoll_coll_t coll, rcoll_args_t *a)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    a->team = t;
    a->tl = t->tl;
    a->rank = t->rank;
    a->size = t->size;
    if (!a->target) {
        a->target = a->recvbuf;
        a->target_bytes = receive_extent(c, a);
    }
    t->coll = c->name;
    t->tl->call_rooted = rcoll_coll_rooted_moves(c);
    t->tl->call_fan_in = rcoll_coll_fan_in(c, t->size);
}

rcoll_status_t rcoll_team_open(struct rcoll_team *t, const rcoll_algo_t *algo, rcoll_args_t *a)
{
    t->last_algo = algo->name;
    a->seq = ++t->seq;
    /* A rank that cannot prepare (out of memory) does not arrive: its peers get a timeout
     * naming it rather than writing into a buffer it does not have. */
    rcoll_status_t st = algo->prepare ? algo->prepare(a) : RCOLL_OK;
    if (st == RCOLL_OK)
        st = t->tl->ops->enter(t->tl, a->seq, a->target, a->target_bytes);
    return st;
}

rcoll_status_t rcoll_team_close(struct rcoll_team *t, rcoll_args_t *a, rcoll_status_t st)
{
    if (st == RCOLL_OK)
        st = check_sizes(t, a);
    rcoll_status_t left = t->tl->ops->leave(t->tl, a->seq);
    return st != RCOLL_OK ? st : left;
}

rcoll_status_t rcoll_team_run(struct rcoll_team *t, rcoll_coll_t coll, void *args)
{
    rcoll_args_t *a = args;
    t->last_flat_args = NULL; /* set below where a flat algorithm runs with `a` */
    rcoll_status_t passed;
    if (a->idle && rcoll_team_pass_known(t, coll, &passed)) /* before binding and selection */
        return passed;
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    rcoll_team_bind(t, coll, a);
    size_t key = selection_key(c, a);
    bool log = t->ctx->cfg.log_level >= RCOLL_LOG_INFO;
    char why[1024];
    const rcoll_algo_t *chosen = choose(t, c, key, log ? why : NULL, sizeof why);
    if (!chosen)
        return RCOLL_ERR_INVALID;
    /* A composed algorithm's sub-teams, built by every rank at its first call (every rank chose
     * alike); where they cannot be, its not_for says so and the flat fallback runs. */
    if (chosen->composed && !rcoll_hier_not_for(t))
        rcoll_hier_get(t);
    /* The one place an algorithm that does not apply to this call gives way to its fallback;
     * what ran is what the team, rcoll-bench and the log name. */
    const char *not_for;
    const rcoll_algo_t *algo = rcoll_fallback(chosen, a, &not_for);
    if (a->idle && !algo->composed) /* its peers expect nothing of it (a composed one runs) */
        return rcoll_team_pass(t);
    /* The call's number: a flat algorithm's, taken when it opens (a composed one takes none). */
    uint64_t number = algo->composed || algo->nested ? t->seq : t->seq + 1;
    if (log && not_for)
        rcoll_log(t->ctx, RCOLL_LOG_INFO, "%s #%llu rank %d/%d bytes=%zu: algorithm %s (fallback of "
                  "%s, which does not apply: %s; %s: %s)", c->name, (unsigned long long)number,
                  t->rank, t->size, key, algo->name, chosen->name, not_for, chosen->name, why);
    else if (log)
        rcoll_log(t->ctx, RCOLL_LOG_INFO, "%s #%llu rank %d/%d bytes=%zu: algorithm %s (%s)",
                  c->name, (unsigned long long)number, t->rank, t->size, key, algo->name, why);
    if (algo->composed) { /* calls on the sub-teams, which number and check their own */
        t->last_algo = algo->name;
        a->seq = t->seq;
        return algo->run(a);
    }
    if (algo->nested) { /* calls on this team, which number and check their own */
        a->seq = t->seq;
        rcoll_status_t st = algo->run(a);
        t->last_algo = algo->name; /* after them: each named itself */
        t->coll = c->name;
        return st;
    }
    /* What a caller replaying this very call may run again without choosing (rcoll_team_rerun):
     * not where every call is logged. */
    t->last_flat = log || a->idle ? NULL : algo;
    t->last_flat_args = a;
    rcoll_status_t st = rcoll_team_open(t, algo, a);
    if (st == RCOLL_OK)
        st = algo->run(a);
    return rcoll_team_close(t, a, st);
}

rcoll_status_t rcoll_team_rerun(struct rcoll_team *t, rcoll_coll_t coll, const struct rcoll_algo *algo,
                                void *args)
{
    rcoll_args_t *a = args;
    rcoll_team_bind(t, coll, a);
    rcoll_status_t st = rcoll_team_open(t, algo, a);
    if (st == RCOLL_OK)
        st = algo->run(a);
    return rcoll_team_close(t, a, st);
}

rcoll_status_t rcoll_team_pass(struct rcoll_team *t)
{
    t->last_algo = "trivial";
    return t->tl->ops->leave(t->tl, ++t->seq);
}

bool rcoll_team_pass_known(struct rcoll_team *t, rcoll_coll_t coll, rcoll_status_t *st)
{
    const rcoll_algo_t *a = t->forced[coll] ? t->forced[coll] : t->chosen[coll].algo;
    /* A flat algorithm's fallbacks are flat: only a composed one could make an idle rank run.
     * With RCOLL_LOG=info the whole run says what it chose. */
    if (!a || a->composed || t->chosen[coll].bytes || t->ctx->cfg.log_level >= RCOLL_LOG_INFO)
        return false;
    t->coll = rcoll_coll_info(coll)->name;
    *st = rcoll_team_pass(t);
    return true;
}

rcoll_status_t rcoll_team_skip(struct rcoll_team *t)
{
    t->last_algo = "trivial"; /* every rank skips alike: no sequence number, nothing to tell */
    return RCOLL_OK;
}

void *rcoll_team_tmp(struct rcoll_team *t, int slot, size_t bytes)
{
    if (bytes <= t->tmp_bytes[slot])
        return t->tmp[slot];
    void *p = realloc(t->tmp[slot], bytes);
    if (!p)
        return NULL;
    t->tmp[slot] = p;
    t->tmp_bytes[slot] = bytes;
    return p;
}
