/* Contexts, names, error strings and logging: the small pieces of the public API that do not
 * need a team. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/team.h"
#include "transport/node.h"

rcoll_status_t rcoll_context_create(rcoll_context_t **out)
{
    rcoll_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return RCOLL_ERR_NOMEM;
    char err[256];
    rcoll_status_t st = rcoll_config_from_env(&ctx->cfg, err, sizeof err);
    if (st != RCOLL_OK) {
        fprintf(stderr, "rcoll: %s\n", err);
        free(ctx);
        return st;
    }
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return RCOLL_ERR_SYSTEM;
    }
    rcoll_hold_init(&ctx->net_hold);
    atomic_init(&ctx->teams_created, 0);
    atomic_init(&ctx->node_map_warned, false);
    ctx->seg_pool = rcoll_seg_pool_create((unsigned)ctx->cfg.shm_pool);
    rcoll_tl_probe(&ctx->cfg, &ctx->tl_probe);
    *out = ctx;
    return RCOLL_OK;
}

void rcoll_context_set_threaded(rcoll_context_t *ctx, int threaded)
{
    ctx->threaded = threaded != 0;
    if (ctx->threaded)
        rcoll_hold_enable(&ctx->net_hold);
}

void rcoll_context_set_host_procs(rcoll_context_t *ctx, int procs)
{
    ctx->host_procs = procs > 0 ? procs : 0;
}

void rcoll_context_reg_cache_stats(const rcoll_context_t *ctx, rcoll_reg_cache_stats_t *out)
{
    rcoll_net_cache_stats(ctx ? ctx->net : NULL, ctx ? (rcoll_hold_t *)&ctx->net_hold : NULL, out);
}

void rcoll_context_destroy(rcoll_context_t *ctx)
{
    if (!ctx)
        return;
    rcoll_net_ctx_destroy_all(ctx->net);
    rcoll_seg_pool_destroy(ctx->seg_pool);
    rcoll_hold_destroy(&ctx->net_hold);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

const char *rcoll_strerror(rcoll_status_t status)
{
    switch (status) {
    case RCOLL_OK: return "success";
    case RCOLL_ERR_INVALID: return "invalid argument or configuration";
    case RCOLL_ERR_NOMEM: return "out of memory";
    case RCOLL_ERR_SYSTEM: return "operating system call failed";
    case RCOLL_ERR_TIMEOUT: return "timed out waiting for a peer";
    case RCOLL_ERR_PEER_DEAD: return "a peer process is gone";
    case RCOLL_ERR_UNSUPPORTED: return "not supported for this team or build";
    case RCOLL_ERR_BOOTSTRAP: return "out-of-band bootstrap exchange failed";
    case RCOLL_ERR_TRUNCATE: return "message truncated (sizes differ between ranks)";
    }
    return "unknown error";
}

/* rcoll_coll_name, rcoll_coll_from_name: the collective table (coll/colls.c); rcoll_explain,
 * rcoll_list_algorithms: the selection (select/select.c). */

/* One fprintf per line: stdio locks the stream, so lines of threads logging at once never mix. */
void rcoll_log(const rcoll_context_t *ctx, rcoll_log_level_t level, const char *fmt, ...)
{
    if (level > ctx->cfg.log_level)
        return;
    char line[1200];
    int n = snprintf(line, sizeof line, "rcoll[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}
