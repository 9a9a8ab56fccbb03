/* The registration cache of user buffers (regcache.h). */
#include "net/regcache.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_unmap(void *arg, uintptr_t start, size_t len)
{
    rcoll_regcache_t *c = arg;
    uintptr_t end = start + len;
    for (unsigned i = 0; i < c->cap; i++)
        if (c->reg[i].used && c->reg[i].start < end && start < c->reg[i].end)
            atomic_store(&c->reg[i].invalid, 1);
}

static void drop(rcoll_regcache_t *c, rcoll_reg_entry_t *e)
{
    if (e->handle)
        c->ops.dereg(c->ops.arg, e->handle);
    e->handle = NULL;
    e->used = false;
}

int rcoll_regcache_init(rcoll_regcache_t *c, unsigned capacity, const rcoll_regcache_ops_t *ops,
                        const char **why)
{
    memset(c, 0, sizeof *c);
    c->ops = *ops;
    c->next_id = 1;
    *why = NULL;
    if (capacity) {
        c->reg = calloc(capacity, sizeof *c->reg);
        c->hook.cb = on_unmap;
        c->hook.arg = c;
        if (!c->reg)
            *why = "out of memory";
        else if (rcoll_memhooks_add(&c->hook, why) == 0)
            c->cap = capacity;
    }
    c->stats.capacity = c->cap;
    c->stats.hooks = c->hook.installed;
    return 0;
}

void rcoll_regcache_fini(rcoll_regcache_t *c)
{
    rcoll_memhooks_remove(&c->hook);
    for (unsigned i = 0; i < c->cap; i++)
        if (c->reg[i].used)
            drop(c, &c->reg[i]);
    free(c->reg);
    c->reg = NULL;
    c->cap = 0;
}

static rcoll_status_t reg_new(rcoll_regcache_t *c, rcoll_reg_entry_t *e, uintptr_t start,
                              uintptr_t end, char *err, size_t err_len)
{
    e->key_len = 0;
    if (c->ops.reg(c->ops.arg, start, end, &e->handle, e->key, &e->key_len, err, err_len) != 0) {
        e->handle = NULL;
        return RCOLL_ERR_SYSTEM;
    }
    e->start = start;
    e->end = end;
    e->id = c->next_id++;
    atomic_store(&e->invalid, 0);
    e->used = true;
    c->stats.registrations++;
    return RCOLL_OK;
}

static void advertise(const rcoll_reg_entry_t *e, void *addr, size_t len, rcoll_net_advert_t *out)
{
    out->addr = (uint64_t)(uintptr_t)addr;
    out->len = len;
    out->id = e->id;
    out->key_len = e->key_len;
    memcpy(out->key, e->key, e->key_len);
}

/* The cached entry covering [start, end), dropping entries whose memory went away. */
static rcoll_reg_entry_t *lookup(rcoll_regcache_t *c, uintptr_t start, uintptr_t end)
{
    rcoll_reg_entry_t *hit = NULL;
    for (unsigned i = 0; i < c->cap; i++) {
        rcoll_reg_entry_t *e = &c->reg[i];
        if (!e->used)
            continue;
        if (atomic_load(&e->invalid)) {
            drop(c, e);
            c->stats.invalidations++;
            c->stats.entries--;
            continue;
        }
        if (!hit && e->start <= start && end <= e->end)
            hit = e;
    }
    return hit;
}

static rcoll_reg_entry_t *free_slot(rcoll_regcache_t *c)
{
    rcoll_reg_entry_t *lru = NULL;
    for (unsigned i = 0; i < c->cap; i++) {
        if (!c->reg[i].used)
            return &c->reg[i];
        if (!lru || c->reg[i].last_use < lru->last_use)
            lru = &c->reg[i];
    }
    drop(c, lru); /* the least recently used: no call of this rank uses it any more */
    c->stats.evictions++;
    c->stats.entries--;
    return lru;
}

rcoll_status_t rcoll_regcache_get(rcoll_regcache_t *c, rcoll_reg_entry_t *call, void *addr,
                                  size_t len, rcoll_net_advert_t *out, char *err, size_t err_len)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t mask = (uintptr_t)(page > 0 ? page : 4096) - 1;
    uintptr_t start = (uintptr_t)addr & ~mask, end = ((uintptr_t)addr + len + mask) & ~mask;
    if (!c->cap) {
        rcoll_regcache_release_call(c, call);
        rcoll_status_t st = reg_new(c, call, start, end, err, err_len);
        if (st == RCOLL_OK)
            advertise(call, addr, len, out);
        c->stats.misses++;
        return st;
    }
    rcoll_reg_entry_t *e = lookup(c, start, end);
    if (e) {
        c->stats.hits++;
    } else {
        c->stats.misses++;
        e = free_slot(c);
        rcoll_status_t st = reg_new(c, e, start, end, err, err_len);
        if (st != RCOLL_OK)
            return st;
        c->stats.entries++;
    }
    e->last_use = ++c->clock;
    advertise(e, addr, len, out);
    return RCOLL_OK;
}

void rcoll_regcache_release_call(rcoll_regcache_t *c, rcoll_reg_entry_t *call)
{
    if (call->used)
        drop(c, call);
}

const rcoll_reg_entry_t *rcoll_regcache_find(const rcoll_regcache_t *c, const rcoll_reg_entry_t *call,
                                             void *addr, size_t len)
{
    uintptr_t start = (uintptr_t)addr, end = start + len;
    if (call && call->used && call->start <= start && end <= call->end)
        return call;
    for (unsigned i = 0; i < c->cap; i++) {
        const rcoll_reg_entry_t *e = &c->reg[i];
        if (e->used && !atomic_load(&e->invalid) && e->start <= start && end <= e->end)
            return e;
    }
    return NULL;
}
