/* Configuration from the environment: every RCOLL_* variable rcoll reads is parsed here (the MPI
 * drop-in's own switch RCOLL_MPI_DISABLE aside). A bad value is an error naming the variable,
 * "VAR=value is not valid: expected ...", never a silent default or a wrapped number
 * (tests/test_config_fuzz.c throws thousands of values at every variable). */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "coll/colls.h" /* the collectives and their algorithms' names (RCOLL_TUNE) */

int rcoll_parse_size(const char *text, size_t *out)
{
    if (!isdigit((unsigned char)text[0])) /* no sign, no space: strtoull takes " -1" as 2^64-1 */
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno)
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
    if (v > SIZE_MAX / mult) /* "17179869184g" is 2^64: not 0 */
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

/* A decimal integer lo..hi, an optional sign, nothing else around it. */
static int parse_long_in(const char *text, long lo, long hi, long *out)
{
    if (isspace((unsigned char)text[0]))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Seconds 0..RCOLL_TIMEOUT_MAX, as strtod reads them; no nan, inf, underflow or overflow. */
static int parse_seconds(const char *text, double *out)
{
    if (isspace((unsigned char)text[0]))
        return -1;
    char *end;
    errno = 0;
    double t = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(t) || t < 0 || t > RCOLL_TIMEOUT_MAX)
        return -1;
    *out = t > 0 ? t : 0; /* -0 is 0 */
    return 0;
}

const char *rcoll_config_show(const char *value, char *out)
{
    size_t n = 0, i = 0;
    for (; value[i] && n + 4 < 64; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c >= 0x20 && c < 0x7f)
            out[n++] = (char)c;
        else
            n += (size_t)snprintf(out + n, RCOLL_SHOWN_MAX - n, "\\x%02x", c);
    }
    out[n] = '\0';
    if (value[i])
        snprintf(out + n, RCOLL_SHOWN_MAX - n, "...(%zu bytes)", strlen(value));
    return out;
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
    char shown[RCOLL_SHOWN_MAX];
    snprintf(err, err_len, "%s=%s is not valid: expected %s", var, rcoll_config_show(value, shown),
             expected);
    return RCOLL_ERR_INVALID;
}

/* The value of `var` as an index into names (-1: unset or empty), or an error. */
static rcoll_status_t read_choice(const char *var, const char *const *names, int count,
                                  const char *expected, int *out, char *err, size_t err_len)
{
    const char *v = getenv(var);
    *out = -1;
    if (v && *v && (*out = parse_choice(v, names, count)) < 0)
        return bad_value(err, err_len, var, v, expected);
    return RCOLL_OK;
}

static rcoll_status_t read_choices(rcoll_config_t *cfg, char *err, size_t err_len)
{
    static const char *const waits[] = {"auto", "spin", "yield", "block"};
    static const char *const logs[] = {"error", "warn", "info", "debug"};
    static const char *const cmas[] = {"auto", "1", "off", "0", "slow", "fast"};
    static const char *const streams[] = {"auto", "on", "off"};
    static const char *const puts[] = {"auto", "am", "rma"};
    static const char *const progress[] = {"caller", "thread"};
    static const char *const nb_algos[] = {"pairs", "binomial_forward"};
    static const char *const repro[] = {"0", "1"};
    static const char *const shms[] = {"memfd", "posix"};
    static const char *const depths[] = {"2", "4", "8", "16", "32", "64"};
    int c;
    rcoll_status_t st = read_choice("RCOLL_WAIT", waits, 4, "spin, yield, block or auto", &c, err, err_len);
    if (st == RCOLL_OK && c >= 0)
        cfg->wait_mode = (rcoll_wait_mode_t)c;
    if (st == RCOLL_OK && (st = read_choice("RCOLL_LOG", logs, 4, "error, warn, info or debug", &c,
                                            err, err_len)) == RCOLL_OK && c >= 0)
        cfg->log_level = (rcoll_log_level_t)c;
    static const rcoll_cma_mode_t cma_modes[] = {RCOLL_CMA_AUTO, RCOLL_CMA_AUTO, RCOLL_CMA_OFF,
                                                 RCOLL_CMA_OFF, RCOLL_CMA_SLOW, RCOLL_CMA_FAST};
    if (st == RCOLL_OK && (st = read_choice("RCOLL_CMA", cmas, 6, "0, off, 1, auto, slow or fast", &c,
                                            err, err_len)) == RCOLL_OK && c >= 0)
        cfg->cma = cma_modes[c];
    if (st == RCOLL_OK && (st = read_choice("RCOLL_COPY_STREAM", streams, 3, "auto, on or off", &c, err,
                                            err_len)) == RCOLL_OK && c >= 0)
        cfg->copy_stream = (rcoll_stream_mode_t)c;
    if (st == RCOLL_OK && (st = read_choice("RCOLL_SHM", shms, 2, "memfd or posix", &c, err,
                                            err_len)) == RCOLL_OK && c >= 0)
        cfg->shm_posix = c;
    if (st == RCOLL_OK && (st = read_choice("RCOLL_UCX_PUT", puts, 3, "am, rma or auto", &c, err,
                                            err_len)) == RCOLL_OK && c >= 0)
        cfg->ucx_put = (rcoll_ucx_put_t)c;
    if (st == RCOLL_OK && (st = read_choice("RCOLL_PROGRESS", progress, 2, "caller or thread", &c, err,
                                            err_len)) == RCOLL_OK && c >= 0)
        cfg->progress_thread = c;
    if (st == RCOLL_OK && (st = read_choice("RCOLL_NB_ALLGATHER", nb_algos, 2, "pairs or binomial_forward", &c,
                                            err, err_len)) == RCOLL_OK && c >= 0)
        cfg->nb_algo = c;
    if (st == RCOLL_OK && (st = read_choice("RCOLL_REPRODUCIBLE", repro, 2, "0 or 1", &c, err,
                                            err_len)) == RCOLL_OK && c >= 0)
        cfg->reproducible = c;
    if (st == RCOLL_OK && (st = read_choice("RCOLL_DEPTH", depths, 6, "2, 4, 8, 16, 32 or 64", &c, err,
                                            err_len)) == RCOLL_OK && c >= 0)
        cfg->depth = 2 << c;
    return st;
}

static rcoll_status_t read_sizes(rcoll_config_t *cfg, char *err, size_t err_len)
{
    const struct {
        const char *var;
        size_t lo, hi;
        const char *what;
        size_t *target;
    } sizes[] = {
        {"RCOLL_ZCOPY_THRESHOLD", 0, SIZE_MAX, "a size such as 4096 or 4k (k, m, g: powers of 1024)",
         &cfg->zcopy_threshold},
        {"RCOLL_INBOX_BYTES", 4096, RCOLL_INBOX_BYTES_MAX, "a size 4k..1g", &cfg->inbox_bytes},
        {"RCOLL_RAIL_MIN", 4096, SIZE_MAX, "a size of at least 4k", &cfg->rail_min},
        {"RCOLL_NB_INLINE", 0, 1 << 20, "a size 0..1m", &cfg->nb_inline},
        {"RCOLL_UNCHANGED", 0, SIZE_MAX, "a size such as 256 or 4k, 0 for off", &cfg->unchanged_min},
        {"RCOLL_DEMOTE", 0, SIZE_MAX, "a size such as 8k, 0 for off", &cfg->demote_max},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const char *v = getenv(sizes[i].var);
        size_t s;
        if (!v || !*v)
            continue;
        if (rcoll_parse_size(v, &s) || s < sizes[i].lo || s > sizes[i].hi)
            return bad_value(err, err_len, sizes[i].var, v, sizes[i].what);
        *sizes[i].target = s;
    }
    cfg->inbox_bytes = (cfg->inbox_bytes + 63) & ~(size_t)63;
    const char *nb_inline = getenv("RCOLL_NB_INLINE");
    cfg->nb_inline_set = nb_inline && *nb_inline;
    const char *nb_areas = getenv("RCOLL_NB_AREAS");
    cfg->nb_areas_set = nb_areas && *nb_areas;
    return RCOLL_OK;
}

static rcoll_status_t read_ints(rcoll_config_t *cfg, char *err, size_t err_len)
{
    const struct {
        const char *var;
        long lo, hi;
        const char *what;
        int *target;
    } ints[] = {
        {"RCOLL_BARRIER_FANIN", 1, 1024, "an integer 1..1024", &cfg->gather_fanin},
        {"RCOLL_KPORT", 1, 64, "an integer 1..64 (transfers in flight per step)", &cfg->kport},
        {"RCOLL_ALLTOALL_KPORT", 0, 1 << 20, "an integer 0..1048576 (0: all writes in flight)",
         &cfg->alltoall_kport},
        {"RCOLL_ALLGATHER_GROUPS", 1, 64, "an integer 1..64 (leaders per node of allgather "
         "hier_multi_group)", &cfg->allgather_groups},
        {"RCOLL_BCAST_RADIX", 2, 64, "an integer 2..64", &cfg->bcast_radix},
        {"RCOLL_RAILS", 1, 16, "an integer 1..16 (UCX endpoints per peer)", &cfg->rails},
        {"RCOLL_REG_CACHE", 0, 1 << 16, "an integer 0..65536 (0: no registration cache)", &cfg->reg_cache},
        {"RCOLL_PPN", 1, INT_MAX, "an integer 1..2147483647 (ranks per node)", &cfg->ppn},
        {"RCOLL_NB_SLOTS", 0, 1024, "an integer 0..1024 (0: no board)", &cfg->nb_slots},
        {"RCOLL_NB_AREAS", 1, 1024, "an integer 1..1024 (inline areas per rank; at most RCOLL_NB_SLOTS "
         "are used)", &cfg->nb_areas},
        {"RCOLL_SHM_POOL", 0, 64, "an integer 0..64 (segments of destroyed teams kept per process; 0: "
         "none)", &cfg->shm_pool},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        const char *v = getenv(ints[i].var);
        long n;
        if (!v || !*v)
            continue;
        if (parse_long_in(v, ints[i].lo, ints[i].hi, &n))
            return bad_value(err, err_len, ints[i].var, v, ints[i].what);
        *ints[i].target = (int)n;
    }
    static const char *const counts[] = {"RCOLL_SPIN_ITERS", "RCOLL_YIELD_ITERS"};
    long *targets[] = {&cfg->spin_iters, &cfg->yield_iters};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(counts[i]);
        if (v && *v && parse_long_in(v, 0, 1000000000L, targets[i]))
            return bad_value(err, err_len, counts[i], v, "an integer 0..1000000000");
    }
    return RCOLL_OK;
}

static rcoll_status_t read_numbers(rcoll_config_t *cfg, char *err, size_t err_len)
{
    const char *v = getenv("RCOLL_TIMEOUT");
    if (v && *v && parse_seconds(v, &cfg->timeout_s))
        return bad_value(err, err_len, "RCOLL_TIMEOUT", v, "seconds 0..1e9 (0: no timeout)");
    rcoll_status_t st = read_sizes(cfg, err, err_len);
    return st == RCOLL_OK ? read_ints(cfg, err, err_len) : st;
}

/* Node ids (decimal) separated by single commas: "0,0,1,1". */
static int node_map_syntax_ok(const char *map)
{
    for (const char *p = map;; p++) {
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)p[1]))
            p++;
        if (p[1] == '\0')
            return 1;
        if (p[1] != ',')
            return 0;
        p++;
    }
}

int rcoll_parse_node_map(const char *map, int size, int *node_of)
{
    int r = 0;
    for (const char *p = map; *p && r <= size;) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return -1;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || v >= size)
            return -1;
        if (r < size)
            node_of[r] = (int)v;
        r++;
        if (*end == ',' && end[1] == '\0')
            return -1;
        p = *end == ',' ? end + 1 : end;
    }
    return r == size ? 0 : -1;
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
    const char *v = getenv("RCOLL_NET");
    if (v && *v && strcasecmp(v, "auto") != 0) { /* which channels exist: src/net/net.c */
        size_t len = strlen(v);
        int ok = len < RCOLL_NET_NAME_MAX;
        for (size_t i = 0; ok && i < len; i++)
            ok = isalnum((unsigned char)v[i]) != 0 || v[i] == '_';
        if (!ok)
            return bad_value(err, err_len, "RCOLL_NET", v, "auto or the name of a network channel "
                             "(rcoll-info --list shows those built in)");
        for (size_t i = 0; i <= len; i++)
            cfg->net[i] = (char)tolower((unsigned char)v[i]);
    }
    v = getenv("RCOLL_NODE_MAP");
    if (v && *v) {
        if (strlen(v) >= RCOLL_NODE_MAP_MAX || !node_map_syntax_ok(v))
            return bad_value(err, err_len, "RCOLL_NODE_MAP", v,
                             "node ids such as 0,0,1,1 (at most 4095 characters)");
        snprintf(cfg->node_map, sizeof cfg->node_map, "%s", v);
    }
    return RCOLL_OK;
}

/* ---- RCOLL_TUNE ---- */

/* A token of RCOLL_TUNE as its error shows it: at most 20 characters, printable. */
static const char *show_token(const char *start, size_t len, char out[32])
{
    size_t n = 0, i = 0;
    for (; i < len && n < 20; i++) {
        unsigned char c = (unsigned char)start[i];
        if (c >= 0x20 && c < 0x7f)
            out[n++] = (char)c;
        else
            n += (size_t)snprintf(out + n, 32 - n, "\\x%02x", c);
    }
    snprintf(out + n, 32 - n, "%s", i < len ? "..." : "");
    return out;
}

typedef struct {
    const char *value; /* the whole variable, for the message */
    char *scratch;     /* a token, NUL-terminated (as long as the value) */
    char *err;
    size_t err_len;
} tune_parse_t;

static rcoll_status_t tune_error(const tune_parse_t *t, const char *start, size_t len,
                                 const char *why)
{
    char shown[RCOLL_SHOWN_MAX], token[32];
    snprintf(t->err, t->err_len,
             "RCOLL_TUNE=%s is not valid: expected coll=algo or coll:lo-hi=algo,... split by ';'; "
             "at '%s': %s", rcoll_config_show(t->value, shown), show_token(start, len, token), why);
    return RCOLL_ERR_INVALID;
}

static const char *token(const tune_parse_t *t, const char *start, size_t len)
{
    memcpy(t->scratch, start, len);
    t->scratch[len] = '\0';
    return t->scratch;
}

/* One range [lo, hi) of `c` for the algorithm named at algo/len. */
static rcoll_status_t tune_add(rcoll_config_t *cfg, const tune_parse_t *t, const rcoll_coll_info_t *c,
                               size_t lo, size_t hi, const char *algo, size_t len)
{
    const char *name = token(t, algo, len);
    int index = strcasecmp(name, "auto") == 0 ? RCOLL_TUNE_AUTO : rcoll_coll_algo_index(c, name);
    if (index == -1 && strcasecmp(name, "auto") != 0) {
        char why[64];
        snprintf(why, sizeof why, "unknown %s algorithm", c->name);
        return tune_error(t, algo, len, why);
    }
    if (cfg->tune_count == RCOLL_TUNE_MAX)
        return tune_error(t, algo, len, "more than 64 ranges in all");
    rcoll_tune_range_t *r = &cfg->tune[cfg->tune_count++];
    r->coll = (int)c->coll;
    r->algo = index;
    r->lo = lo;
    r->hi = hi;
    return RCOLL_OK;
}

/* `lo-hi=algo`, the range at start/len of the collective `c`. */
static rcoll_status_t tune_range(rcoll_config_t *cfg, const tune_parse_t *t, const rcoll_coll_info_t *c,
                                 const char *start, size_t len)
{
    const char *end = start + len, *dash = memchr(start, '-', len);
    const char *eq = dash ? memchr(dash, '=', (size_t)(end - dash)) : NULL;
    if (!eq)
        return tune_error(t, start, len, "expected lo-hi=algo");
    size_t lo, hi, lo_len = (size_t)(dash - start), hi_len = (size_t)(eq - dash - 1);
    const char *text = token(t, start, lo_len);
    if (strcasecmp(text, "inf") == 0)
        return tune_error(t, start, lo_len, "inf cannot start a range");
    if (rcoll_parse_size(text, &lo))
        return tune_error(t, start, lo_len, "not a size (such as 0, 512, 8k, 1m)");
    text = token(t, dash + 1, hi_len);
    if (strcasecmp(text, "inf") == 0)
        hi = RCOLL_TUNE_INF;
    else if (rcoll_parse_size(text, &hi))
        return tune_error(t, dash + 1, hi_len, "not a size (such as 512, 8k, 1m, inf)");
    if (lo >= hi)
        return tune_error(t, start, (size_t)(eq - start), "empty range: lo must be below hi");
    return tune_add(cfg, t, c, lo, hi, eq + 1, (size_t)(end - eq - 1));
}

/* `coll=algo` or `coll:range,range...`, the entry at start/len. */
static rcoll_status_t tune_entry(rcoll_config_t *cfg, const tune_parse_t *t, const char *start, size_t len)
{
    size_t name_len = 0;
    while (name_len < len && start[name_len] != ':' && start[name_len] != '=')
        name_len++;
    if (name_len == len)
        return tune_error(t, start, len, len ? "expected ':' or '=' after a collective"
                                              : "empty entry");
    const rcoll_coll_info_t *c = rcoll_coll_info_by_name(token(t, start, name_len));
    if (!c)
        return tune_error(t, start, name_len, "unknown collective");
    const char *rest = start + name_len + 1, *end = start + len;
    if (start[name_len] == '=')
        return tune_add(cfg, t, c, 0, RCOLL_TUNE_INF, rest, (size_t)(end - rest));
    if (!rcoll_coll_by_bytes(c)) { /* barrier, v-forms but allgatherv: no size */
        char why[64];
        snprintf(why, sizeof why, "%s takes no ranges: give %s=ALGO", c->name, c->name);
        return tune_error(t, rest, (size_t)(end - rest), why);
    }
    for (const char *r = rest;;) {
        const char *comma = memchr(r, ',', (size_t)(end - r));
        const char *stop = comma ? comma : end;
        rcoll_status_t st = tune_range(cfg, t, c, r, (size_t)(stop - r));
        if (st != RCOLL_OK || !comma)
            return st;
        r = comma + 1;
    }
}

/* RCOLL_TUNE: selection rules by size range (select/select.c applies them; docs/tuning.md). */
static rcoll_status_t read_tune(rcoll_config_t *cfg, char *err, size_t err_len)
{
    const char *v = getenv("RCOLL_TUNE");
    if (!v || !*v)
        return RCOLL_OK;
    size_t len = strlen(v);
    tune_parse_t t = {v, malloc(len + 1), err, err_len};
    if (!t.scratch) {
        snprintf(err, err_len, "RCOLL_TUNE: out of memory");
        return RCOLL_ERR_NOMEM;
    }
    rcoll_status_t st = RCOLL_OK;
    for (const char *e = v; st == RCOLL_OK;) {
        const char *semi = strchr(e, ';');
        size_t n = semi ? (size_t)(semi - e) : strlen(e);
        st = tune_entry(cfg, &t, e, n);
        if (!semi)
            break;
        e = semi + 1;
    }
    free(t.scratch);
    return st;
}

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- RCOLL_MODEL ---- */

void rcoll_model_keys(rcoll_model_t *m, const char *names[RCOLL_MODEL_KEYS], double *values[RCOLL_MODEL_KEYS])
{
    static const char *const keys[RCOLL_MODEL_KEYS] = {
        "shm.alpha", "shm.gap", "shm.per_kb", "net.alpha", "net.gap", "net.per_kb", "copy.per_kb",
        "call"};
    double *v[RCOLL_MODEL_KEYS] = {&m->shm.alpha, &m->shm.gap, &m->shm.per_kb, &m->net.alpha,
                                   &m->net.gap, &m->net.per_kb, &m->copy_per_kb, &m->call};
    for (int i = 0; i < RCOLL_MODEL_KEYS; i++) {
        names[i] = keys[i];
        values[i] = v[i];
    }
}

void rcoll_model_defaults(rcoll_model_t *m)
{
    /* docs/tuning.md, "Cost model": rcoll-bench --calibrate, 2x4 emulated nodes (two nodes of
     * four ranks on one host: nodes per host 2) over UCX tcp on the 2-core machine. */
    m->shm.alpha = 1.2;
    m->shm.gap = 0.5;
    m->shm.per_kb = 0.18;
    m->net.alpha = 19.6;
    m->net.gap = 3.8;
    m->net.per_kb = 0.17;
    m->copy_per_kb = 0.021;
    m->call = 0.87;
}

int rcoll_model_parse(const char *text, rcoll_model_t *m, char *err, size_t err_len)
{
    const char *names[RCOLL_MODEL_KEYS];
    double *values[RCOLL_MODEL_KEYS];
    rcoll_model_keys(m, names, values);
    int line = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char buf[1024], key[64], extra[2];
        double value;
        line++;
        if (len >= sizeof buf) {
            snprintf(err, err_len, "lines of at most 1023 characters (line %d is longer)", line);
            return -1;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (end ? 1 : 0);
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        int n = sscanf(buf, "%63s %lf %1s", key, &value, extra);
        if (n <= 0)
            continue; /* blank or comment */
        int k = -1;
        for (int i = 0; i < RCOLL_MODEL_KEYS && n == 2; i++)
            if (strcmp(key, names[i]) == 0)
                k = i;
        if (n != 2 || k < 0 || !(value >= 0 && value < 1e9)) {
            snprintf(err, err_len, "lines \"key microseconds\" with a key among shm.alpha, "
                     "shm.gap, shm.per_kb, net.alpha, net.gap, net.per_kb, copy.per_kb, call and a "
                     "number 0..1e9 (at line %d)", line);
            return -1;
        }
        *values[k] = value;
    }
    return 0;
}

/* RCOLL_MODEL=FILE: the model's parameters from the file (those it does not give keep the
 * defaults). */
static rcoll_status_t read_model(rcoll_config_t *cfg, char *err, size_t err_len)
{
    rcoll_model_defaults(&cfg->model);
    const char *v = getenv("RCOLL_MODEL");
    if (!v || !*v)
        return RCOLL_OK;
    const char *what = "the path of a readable cost model file (rcoll-bench --calibrate FILE writes one)";
    if (strlen(v) >= RCOLL_MODEL_PATH_MAX)
        return bad_value(err, err_len, "RCOLL_MODEL", v, what);
    FILE *f = fopen(v, "r");
    char text[8192], why[200];
    size_t n = 0;
    int ok = f != NULL;
    if (f) {
        n = fread(text, 1, sizeof text - 1, f);
        ok = !ferror(f) && n < sizeof text - 1 && memchr(text, 0, n) == NULL;
        fclose(f);
    }
    text[n] = '\0';
    if (!ok)
        return bad_value(err, err_len, "RCOLL_MODEL", v, what);
    if (rcoll_model_parse(text, &cfg->model, why, sizeof why) != 0) {
        char shown[RCOLL_SHOWN_MAX];
        snprintf(err, err_len, "RCOLL_MODEL=%s is not valid: expected %s", rcoll_config_show(v, shown), why);
        return RCOLL_ERR_INVALID;
    }
    snprintf(cfg->model_path, sizeof cfg->model_path, "%s", v);
    return RCOLL_OK;
}

rcoll_status_t rcoll_config_from_env(rcoll_config_t *cfg, char *err, size_t err_len)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->wait_mode = RCOLL_WAIT_AUTO;
    cfg->timeout_s = 300.0;
    cfg->zcopy_threshold = 0; /* 0: the transport's own (measured; see tuning.md) */
    cfg->inbox_bytes = 1024 * 1024;
    cfg->depth = 32; /* docs/tuning.md, "Back-to-back rooted calls" */
    cfg->gather_fanin = 7;
    cfg->kport = 2;
    cfg->alltoall_kport = 0;
    cfg->allgather_groups = 2;
    cfg->bcast_radix = 4;
    cfg->rails = 1;
    cfg->reg_cache = 64;
    cfg->rail_min = 64 * 1024;
    cfg->log_level = RCOLL_LOG_WARN;
    cfg->cma = RCOLL_CMA_AUTO;
    cfg->copy_stream = RCOLL_STREAM_AUTO;
    cfg->ucx_put = RCOLL_UCX_PUT_AUTO;
    cfg->nb_slots = 32;         /* docs/tuning.md, "Nonblocking collectives" */
    cfg->nb_areas = 8;
    cfg->nb_inline = 68 * 1024;
    cfg->unchanged_min = 256;   /* docs/tuning.md, "Unchanged data" */
    cfg->demote_max = 2048;     /* docs/tuning.md, "Demoted lines" */
    cfg->shm_pool = 4;          /* docs/tuning.md, "A communicator's whole life" */
    cfg->cores = online_cores();
    cfg->spin_iters = cfg->yield_iters = -1;
    err[0] = '\0';
    rcoll_status_t st = read_choices(cfg, err, err_len);
    if (st == RCOLL_OK)
        st = read_numbers(cfg, err, err_len);
    if (st == RCOLL_OK)
        st = read_strings(cfg, err, err_len);
    if (st == RCOLL_OK)
        st = read_tune(cfg, err, err_len);
    if (st == RCOLL_OK)
        st = read_model(cfg, err, err_len);
    return st;
}
