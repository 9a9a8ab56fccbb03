/* The network-channel factory (net.h): which channels this build has, and which one a team
 * spanning nodes uses (RCOLL_NET=auto|ucx|ofi; auto: the first in rcoll_net_channels). */
#include "net/net.h"

#include <stdio.h>
#include <string.h>

#ifdef RCOLL_HAVE_UCX
extern const rcoll_net_ops_t rcoll_net_ucx;
#endif
#ifdef RCOLL_HAVE_OFI
extern const rcoll_net_ops_t rcoll_net_ofi;
#endif

/* The one list of network channels: the factory, rcoll-info and the tests read it. */
const rcoll_net_ops_t *const rcoll_net_channels[] = {
#ifdef RCOLL_HAVE_UCX
    &rcoll_net_ucx,
#endif
#ifdef RCOLL_HAVE_OFI
    &rcoll_net_ofi,
#endif
    NULL,
};

const rcoll_net_ops_t *rcoll_net_choose(const rcoll_config_t *cfg, char *why, size_t why_len)
{
    static const char *const names[] = {"auto", "ucx", "ofi"};
    const char *want = names[cfg->net];
    for (int i = 0; rcoll_net_channels[i]; i++)
        if (cfg->net == RCOLL_NET_AUTO || !strcmp(rcoll_net_channels[i]->name, want))
            return rcoll_net_channels[i];
    if (cfg->net == RCOLL_NET_AUTO)
        snprintf(why, why_len, "this rcoll was built without a network channel (neither UCX nor "
                 "libfabric): it runs teams on one node only");
    else
        snprintf(why, why_len, "RCOLL_NET=%s: this rcoll was built without that network channel", want);
    return NULL;
}

rcoll_status_t rcoll_net_create(const rcoll_view_t *v, const rcoll_oob_t *oob, void *area,
                                size_t area_bytes, rcoll_net_t **out)
{
    char why[200];
    const rcoll_net_ops_t *ops = rcoll_net_choose(v->cfg, why, sizeof why);
    *out = NULL;
    if (!ops) /* every rank reads the same configuration and build: all refuse alike */
        return rcoll_view_error(v, RCOLL_ERR_UNSUPPORTED, "team spans %d nodes: %s", v->node_count, why);
    return ops->create(v, oob, area, area_bytes, out);
}

void rcoll_net_ctx_destroy_all(rcoll_net_ctx_t **slots)
{
    for (int i = 0; rcoll_net_channels[i]; i++) {
        rcoll_net_ctx_t **slot = &slots[rcoll_net_channels[i]->kind];
        if (*slot)
            rcoll_net_channels[i]->ctx_destroy(*slot);
        *slot = NULL;
    }
}

void rcoll_net_cache_stats(rcoll_net_ctx_t *const *slots, rcoll_reg_cache_stats_t *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; slots && rcoll_net_channels[i]; i++) {
        rcoll_reg_cache_stats_t one;
        if (!slots[rcoll_net_channels[i]->kind])
            continue;
        rcoll_net_channels[i]->cache_stats(slots[rcoll_net_channels[i]->kind], &one);
        *out = one; /* a context uses one channel (RCOLL_NET is read once) */
    }
}
