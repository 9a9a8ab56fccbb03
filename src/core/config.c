/* Configuration from the environment: every RCOLL_* variable rcoll reads is parsed here. */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int rcoll_parse_size(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-')
        return -1;
    unsigned long long mult = 1;
    if (*end) {
        switch (tolower((unsigned char)*end)) {
        case 'k': mult = 1ull << 10; break;
        case 'm': mult = 1ull << 20; break;
        case 'g': mult = 1ull << 30; break;
        default: return -1;
        }
        end++;
        if (*end == 'b' || *end == 'B')
            end++;
        if (*end)
            return -1;
    }
    *out = (size_t)(v * mult);
    return 0;
}

static int parse_choice(const char *text, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcasecmp(text, names[i]) == 0)
            return i;
    return -1;
}

static rcoll_status_t bad_value(char *err, size_t err_len, const char *var, const char *value,
                                const char *expected)
{
    snprintf(err, err_len, "%s=%s is not valid: expected %s", var, value, expected);
    return RCOLL_ERR_INVALID;
}

static rcoll_status_t read_wait_and_log(rcoll_config_t *cfg, char *err, size_t err_len)
{
    static const char *const waits[] = {"auto", "spin", "yield", "block"};
    static const char *const logs[] = {"error", "warn", "info", "debug"};
    const char *v = getenv("RCOLL_WAIT");
    if (v && *v) {
        int c = parse_choice(v, waits, 4);
        if (c < 0)
            return bad_value(err, err_len, "RCOLL_WAIT", v, "spin, yield, block or auto");
        cfg->wait_mode = (rcoll_wait_mode_t)c;
    }
    v = getenv("RCOLL_LOG");
    if (v && *v) {
        int c = parse_choice(v, logs, 4);
        if (c < 0)
            return bad_value(err, err_len, "RCOLL_LOG", v, "error, warn, info or debug");
        cfg->log_level = (rcoll_log_level_t)c;
    }
    return RCOLL_OK;
}

static rcoll_status_t read_numbers(rcoll_config_t *cfg, char *err, size_t err_len)
{
    const char *v = getenv("RCOLL_TIMEOUT");
    if (v && *v) {
        char *end;
        double t = strtod(v, &end);
        if (*end || end == v || t < 0)
            return bad_value(err, err_len, "RCOLL_TIMEOUT", v, "seconds >= 0 (0: no timeout)");
        cfg->timeout_s = t;
    }
    v = getenv("RCOLL_ZCOPY_THRESHOLD");
    if (v && *v && rcoll_parse_size(v, &cfg->zcopy_threshold))
        return bad_value(err, err_len, "RCOLL_ZCOPY_THRESHOLD", v, "a size such as 4096 or 4k");
    v = getenv("RCOLL_INBOX_BYTES");
    if (v && *v && (rcoll_parse_size(v, &cfg->inbox_bytes) || cfg->inbox_bytes < 4096))
        return bad_value(err, err_len, "RCOLL_INBOX_BYTES", v, "a size of at least 4k");
    v = getenv("RCOLL_RAIL_MIN");
    if (v && *v && (rcoll_parse_size(v, &cfg->rail_min) || cfg->rail_min < 4096))
        return bad_value(err, err_len, "RCOLL_RAIL_MIN", v, "a size of at least 4k");
    cfg->inbox_bytes = (cfg->inbox_bytes + 63) & ~(size_t)63;
    static const struct {
        const char *var;
        long lo, hi;
        const char *what;
    } ints[] = {
        {"RCOLL_BARRIER_FANIN", 1, 1024, "an integer 1..1024"},
        {"RCOLL_KPORT", 1, 64, "an integer 1..64 (transfers in flight per step)"},
        {"RCOLL_ALLTOALL_KPORT", 0, 1 << 20, "an integer >= 0 (0: all writes in flight)"},
        {"RCOLL_BCAST_RADIX", 2, 64, "an integer 2..64"},
        {"RCOLL_RAILS", 1, 16, "an integer 1..16 (UCX endpoints per peer)"},
        {"RCOLL_REG_CACHE", 0, 1 << 16, "an integer 0..65536 (0: no registration cache)"},
    };
    int *int_targets[] = {&cfg->gather_fanin, &cfg->kport, &cfg->alltoall_kport, &cfg->bcast_radix,
                          &cfg->rails, &cfg->reg_cache};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        v = getenv(ints[i].var);
        if (!v || !*v)
            continue;
        char *end;
        long f = strtol(v, &end, 10);
        if (*end || end == v || f < ints[i].lo || f > ints[i].hi)
            return bad_value(err, err_len, ints[i].var, v, ints[i].what);
        *int_targets[i] = (int)f;
    }
    static const char *const counts[] = {"RCOLL_SPIN_ITERS", "RCOLL_YIELD_ITERS"};
    long *targets[] = {&cfg->spin_iters, &cfg->yield_iters};
    for (int i = 0; i < 2; i++) {
        v = getenv(counts[i]);
        if (v && *v) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 0 || n > 1000000000L)
                return bad_value(err, err_len, counts[i], v, "an integer 0..1000000000");
            *targets[i] = n;
        }
    }
    v = getenv("RCOLL_PPN");
    if (v && *v) {
        char *end;
        long p = strtol(v, &end, 10);
        if (*end || p < 1)
            return bad_value(err, err_len, "RCOLL_PPN", v, "a positive integer");
        cfg->ppn = (int)p;
    }
    v = getenv("RCOLL_CMA");
    if (v && *v) {
        if (strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0)
            cfg->cma = RCOLL_CMA_OFF;
        else if (strcmp(v, "1") != 0 && strcasecmp(v, "auto") != 0)
            return bad_value(err, err_len, "RCOLL_CMA", v, "0, off, 1 or auto");
    }
    return RCOLL_OK;
}

static rcoll_status_t read_strings(rcoll_config_t *cfg, char *err, size_t err_len)
{
    for (int c = 0; c < RCOLL_COLL_COUNT; c++) {
        char var[64];
        const char *name = rcoll_coll_name((rcoll_coll_t)c);
        int n = snprintf(var, sizeof var, "RCOLL_");
        for (const char *p = name; *p && n < (int)sizeof var - 6; p++)
            var[n++] = (char)toupper((unsigned char)*p);
        snprintf(var + n, sizeof var - (size_t)n, "_ALGO");
        const char *v = getenv(var);
        if (v && *v && strcasecmp(v, "auto") != 0) {
            if (strlen(v) >= RCOLL_ALGO_NAME_MAX)
                return bad_value(err, err_len, var, v, "an algorithm name (rcoll-info --list)");
            snprintf(cfg->algo[c], RCOLL_ALGO_NAME_MAX, "%s", v);
        }
    }
    const char *v = getenv("RCOLL_NODE_MAP");
    if (v && *v) {
        if (strlen(v) >= RCOLL_NODE_MAP_MAX)
            return bad_value(err, err_len, "RCOLL_NODE_MAP", "(too long)", "a shorter list");
        for (const char *p = v; *p; p++)
            if (!isdigit((unsigned char)*p) && *p != ',')
                return bad_value(err, err_len, "RCOLL_NODE_MAP", v, "node ids such as 0,0,1,1");
        snprintf(cfg->node_map, sizeof cfg->node_map, "%s", v);
    }
    return RCOLL_OK;
}

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

rcoll_status_t rcoll_config_from_env(rcoll_config_t *cfg, char *err, size_t err_len)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->wait_mode = RCOLL_WAIT_AUTO;
    cfg->timeout_s = 300.0;
    cfg->zcopy_threshold = 0; /* 0: the transport's own (shm: 8 KB, measured; see tuning.md) */
    cfg->inbox_bytes = 1024 * 1024;
    cfg->gather_fanin = 7;
    cfg->kport = 2;
    cfg->alltoall_kport = 0;
    cfg->bcast_radix = 4;
    cfg->rails = 1;
    cfg->reg_cache = 64;
    cfg->rail_min = 64 * 1024;
    cfg->log_level = RCOLL_LOG_WARN;
    cfg->cma = RCOLL_CMA_AUTO;
    cfg->cores = online_cores();
    cfg->spin_iters = cfg->yield_iters = -1;
    err[0] = '\0';
    rcoll_status_t st = read_wait_and_log(cfg, err, err_len);
    if (st == RCOLL_OK)
        st = read_numbers(cfg, err, err_len);
    if (st == RCOLL_OK)
        st = read_strings(cfg, err, err_len);
    return st;
}
