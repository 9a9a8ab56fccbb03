/* Fuzz test of the parser of every RCOLL_* variable rcoll reads (issue 12): each variable is set
 * alone to valid, boundary and seeded random values, then all of them at once. For every value
 * rcoll_config_from_env and rcoll_context_create (and, for RCOLL_NODE_MAP and RCOLL_PPN, a
 * one-rank team; for RCOLL_<COLL>_ALGO and RCOLL_TUNE, rcoll_explain) must either accept it, the
 * configuration then holding exactly what a reference parser here reads from it (no wrapped number, no other
 * field touched), or refuse it with RCOLL_ERR_INVALID and the message "VAR=value is not valid:
 * expected ..." naming the variable, the value quoted short and printable; never crash (the
 * ASan pass checks the memory). `--list` prints the variables known here, one a line:
 * tests/check_config_vars.sh compares them with the RCOLL_* names in src/ and docs/tuning.md. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <time.h>

#include "bootstrap/oob_fork.h"
#include "coll/colls.h"
#include "config/config.h"
#include "core/team.h"
#include "signal/wait.h"
#include "rcoll/rcoll.h"
#include "select/select.h"

enum { RANDOM_CASES = 2000, MIXED_CASES = 200, MAX_VARS = 56, MAX_VALUES = 400, LONG_LEN = 10240 };

typedef enum { K_CHOICE, K_SIZE, K_INT, K_SECONDS, K_NODE_MAP, K_ALGO, K_MPI, K_TUNE, K_NAME, K_MODEL } kind_t;
typedef enum { F_NONE, F_INT, F_LONG, F_SIZE, F_DOUBLE, F_STR } field_t;
static const char *const kind_names[] = {"choice", "size", "integer", "seconds", "node-map",
                                         "algorithm", "mpi-drop-in", "tune", "name", "model-file"};

typedef struct {
    char name[40];
    kind_t kind;
    field_t type;
    size_t offset, size;           /* of its field in rcoll_config_t */
    unsigned long long lo, hi;     /* K_INT, K_SIZE */
    size_t round;                  /* K_SIZE: kept rounded up to this many bytes */
    const char *const *names;      /* K_CHOICE: the names and the field's value for each */
    const int *values;
    int count;
    int coll;                      /* K_ALGO */
    int team;                      /* also read at team creation: a one-rank team is made */
} var_t;

#define FIELD(f, t)                                                                                \
    .type = t, .offset = offsetof(rcoll_config_t, f), .size = sizeof(((rcoll_config_t *)0)->f)
_Static_assert(sizeof(rcoll_wait_mode_t) == sizeof(int) && sizeof(rcoll_log_level_t) == sizeof(int)
                   && sizeof(rcoll_cma_mode_t) == sizeof(int)
                   && sizeof(rcoll_stream_mode_t) == sizeof(int)
                   && sizeof(rcoll_ucx_put_t) == sizeof(int),
               "enum fields are written as int");

static const char *const waits[] = {"auto", "spin", "yield", "block"};
static const int wait_values[] = {RCOLL_WAIT_AUTO, RCOLL_WAIT_SPIN, RCOLL_WAIT_YIELD,
                                  RCOLL_WAIT_BLOCK};
static const char *const logs[] = {"error", "warn", "info", "debug"};
static const int log_values[] = {RCOLL_LOG_ERROR, RCOLL_LOG_WARN, RCOLL_LOG_INFO, RCOLL_LOG_DEBUG};
static const char *const cmas[] = {"auto", "1", "off", "0", "slow", "fast"};
static const int cma_values[] = {RCOLL_CMA_AUTO, RCOLL_CMA_AUTO, RCOLL_CMA_OFF, RCOLL_CMA_OFF,
                                 RCOLL_CMA_SLOW, RCOLL_CMA_FAST};
static const char *const streams[] = {"auto", "on", "off"};
static const int stream_values[] = {RCOLL_STREAM_AUTO, RCOLL_STREAM_ON, RCOLL_STREAM_OFF};
static const char *const puts_[] = {"auto", "am", "rma"};
static const int put_values[] = {RCOLL_UCX_PUT_AUTO, RCOLL_UCX_PUT_AM, RCOLL_UCX_PUT_RMA};
static const char *const progs[] = {"caller", "thread"};
static const int prog_values[] = {0, 1};
static const char *const nbalgos[] = {"pairs", "binomial_forward"};
static const int nbalgo_values[] = {0, 1};
static const char *const shms[] = {"memfd", "posix"};
static const int shm_values[] = {0, 1};
static const char *const repros[] = {"0", "1"};
static const int repro_values[] = {0, 1};
static const char *const depths[] = {"2", "4", "8", "16", "32", "64"};
static const int depth_values[] = {2, 4, 8, 16, 32, 64};
static const char *const nets[] = {"auto", "ucx", "ofi", "UCX", "Ofi", "verbs_2", "x",
                                   "abcdefghijklmno", "abcdefghijklmnop", "u-x", "ucx ", "ofi;"};

/* Every RCOLL_* variable but the RCOLL_<COLL>_ALGO ones (added per collective in init_vars). */
static const var_t fixed_vars[] = {
    {.name = "RCOLL_WAIT", .kind = K_CHOICE, FIELD(wait_mode, F_INT), .names = waits,
     .values = wait_values, .count = 4},
    {.name = "RCOLL_LOG", .kind = K_CHOICE, FIELD(log_level, F_INT), .names = logs,
     .values = log_values, .count = 4},
    {.name = "RCOLL_CMA", .kind = K_CHOICE, FIELD(cma, F_INT), .names = cmas,
     .values = cma_values, .count = 6},
    {.name = "RCOLL_COPY_STREAM", .kind = K_CHOICE, FIELD(copy_stream, F_INT), .names = streams,
     .values = stream_values, .count = 3},
    {.name = "RCOLL_SHM", .kind = K_CHOICE, FIELD(shm_posix, F_INT), .names = shms,
     .values = shm_values, .count = 2},
    {.name = "RCOLL_UCX_PUT", .kind = K_CHOICE, FIELD(ucx_put, F_INT), .names = puts_,
     .values = put_values, .count = 3},
    {.name = "RCOLL_PROGRESS", .kind = K_CHOICE, FIELD(progress_thread, F_INT), .names = progs,
     .values = prog_values, .count = 2},
    {.name = "RCOLL_NB_ALLGATHER", .kind = K_CHOICE, FIELD(nb_algo, F_INT), .names = nbalgos,
     .values = nbalgo_values, .count = 2},
    {.name = "RCOLL_REPRODUCIBLE", .kind = K_CHOICE, FIELD(reproducible, F_INT), .names = repros,
     .values = repro_values, .count = 2},
    {.name = "RCOLL_DEPTH", .kind = K_CHOICE, FIELD(depth, F_INT), .names = depths,
     .values = depth_values, .count = 6},
    {.name = "RCOLL_NB_SLOTS", .kind = K_INT, FIELD(nb_slots, F_INT), .lo = 0, .hi = 1024},
    {.name = "RCOLL_NB_AREAS", .kind = K_INT, FIELD(nb_areas, F_INT), .lo = 1, .hi = 1024},
    {.name = "RCOLL_SHM_POOL", .kind = K_INT, FIELD(shm_pool, F_INT), .lo = 0, .hi = 64},
    {.name = "RCOLL_NB_INLINE", .kind = K_SIZE, FIELD(nb_inline, F_SIZE), .lo = 0, .hi = 1 << 20,
     .round = 1},
    {.name = "RCOLL_UNCHANGED", .kind = K_SIZE, FIELD(unchanged_min, F_SIZE), .lo = 0,
     .hi = SIZE_MAX, .round = 1},
    {.name = "RCOLL_DEMOTE", .kind = K_SIZE, FIELD(demote_max, F_SIZE), .lo = 0, .hi = SIZE_MAX,
     .round = 1},
    {.name = "RCOLL_NET", .kind = K_NAME, FIELD(net, F_STR), .names = nets,
     .count = (int)(sizeof nets / sizeof nets[0])},
    {.name = "RCOLL_TIMEOUT", .kind = K_SECONDS, FIELD(timeout_s, F_DOUBLE)},
    {.name = "RCOLL_ZCOPY_THRESHOLD", .kind = K_SIZE, FIELD(zcopy_threshold, F_SIZE), .lo = 0,
     .hi = SIZE_MAX, .round = 1},
    {.name = "RCOLL_INBOX_BYTES", .kind = K_SIZE, FIELD(inbox_bytes, F_SIZE), .lo = 4096,
     .hi = 1ull << 30, .round = 64},
    {.name = "RCOLL_RAIL_MIN", .kind = K_SIZE, FIELD(rail_min, F_SIZE), .lo = 4096,
     .hi = SIZE_MAX, .round = 1},
    {.name = "RCOLL_BARRIER_FANIN", .kind = K_INT, FIELD(gather_fanin, F_INT), .lo = 1, .hi = 1024},
    {.name = "RCOLL_KPORT", .kind = K_INT, FIELD(kport, F_INT), .lo = 1, .hi = 64},
    {.name = "RCOLL_ALLGATHER_GROUPS", .kind = K_INT, FIELD(allgather_groups, F_INT), .lo = 1, .hi = 64},
    {.name = "RCOLL_ALLTOALL_KPORT", .kind = K_INT, FIELD(alltoall_kport, F_INT), .lo = 0,
     .hi = 1 << 20},
    {.name = "RCOLL_BCAST_RADIX", .kind = K_INT, FIELD(bcast_radix, F_INT), .lo = 2, .hi = 64},
    {.name = "RCOLL_RAILS", .kind = K_INT, FIELD(rails, F_INT), .lo = 1, .hi = 16},
    {.name = "RCOLL_REG_CACHE", .kind = K_INT, FIELD(reg_cache, F_INT), .lo = 0, .hi = 1 << 16},
    {.name = "RCOLL_SPIN_ITERS", .kind = K_INT, FIELD(spin_iters, F_LONG), .lo = 0,
     .hi = 1000000000},
    {.name = "RCOLL_YIELD_ITERS", .kind = K_INT, FIELD(yield_iters, F_LONG), .lo = 0,
     .hi = 1000000000},
    {.name = "RCOLL_PPN", .kind = K_INT, FIELD(ppn, F_INT), .lo = 1, .hi = INT_MAX, .team = 1},
    {.name = "RCOLL_NODE_MAP", .kind = K_NODE_MAP, FIELD(node_map, F_STR), .team = 1},
    /* The cost model's file: model_path and the parameters it sets (see model_files). */
    {.name = "RCOLL_MODEL", .kind = K_MODEL, FIELD(model_path, F_STR)},
    /* Selection rules by size range: its fields (tune_count, tune[]) are written by ref_tune. */
    {.name = "RCOLL_TUNE", .kind = K_TUNE, .type = F_NONE},
    /* Read by the MPI drop-in only (src/mpi/rcoll_mpi.c): any value but "" and "0" disables it,
     * no value is invalid. The library must ignore it: the configuration stays the default. */
    {.name = "RCOLL_MPI_DISABLE", .kind = K_MPI, .type = F_NONE},
};

_Static_assert(sizeof fixed_vars / sizeof fixed_vars[0] + RCOLL_COLL_COUNT <= MAX_VARS, "MAX_VARS");
static var_t vars[MAX_VARS];
static int nvars;
static rcoll_config_t baseline;     /* read with no RCOLL_* variable set */
static rcoll_fork_job_t *job;       /* a one-rank job for team creation in this process */
static int cases, failures, teams, explains;

static void init_vars(void)
{
    nvars = (int)(sizeof fixed_vars / sizeof fixed_vars[0]);
    memcpy(vars, fixed_vars, sizeof fixed_vars);
    for (int c = 0; c < RCOLL_COLL_COUNT; c++) {
        var_t *v = &vars[nvars++];
        memset(v, 0, sizeof *v);
        int n = snprintf(v->name, sizeof v->name, "RCOLL_");
        for (const char *p = rcoll_coll_name((rcoll_coll_t)c); *p; p++)
            v->name[n++] = (char)toupper((unsigned char)*p);
        snprintf(v->name + n, sizeof v->name - (size_t)n, "_ALGO");
        v->kind = K_ALGO;
        v->type = F_STR;
        v->offset = offsetof(rcoll_config_t, algo) + (size_t)c * RCOLL_ALGO_NAME_MAX;
        v->size = RCOLL_ALGO_NAME_MAX;
        v->coll = c;
    }
}

/* ---- deterministic random numbers (xorshift64*) ---- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static size_t rng_below(size_t n) { return (size_t)(rng() % n); }

/* ---- reference parsers: what a value must mean, written independently of config.c ---- */

/* Decimal digits: 1 read into *v, 0 none, -1 more than an unsigned long long holds. */
static int ref_digits(const char **s, unsigned long long *v)
{
    int digits = 0, over = 0;
    *v = 0;
    for (; **s >= '0' && **s <= '9'; (*s)++, digits++) {
        unsigned d = (unsigned)(**s - '0');
        over |= *v > (ULLONG_MAX - d) / 10;
        *v = *v * 10 + d;
    }
    return over ? -1 : digits > 0;
}

/* digits[k|m|g[b]] (any case), fitting a size_t. */
static int ref_size(const char *s, unsigned long long *out)
{
    unsigned long long v;
    if (ref_digits(&s, &v) != 1)
        return -1;
    int shift = 0;
    switch (*s) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case '\0': break;
    default: return -1;
    }
    if (shift && (*++s == 'b' || *s == 'B'))
        s++;
    if (*s || v > (unsigned long long)SIZE_MAX >> shift)
        return -1;
    *out = v << shift;
    return 0;
}

/* [+-]digits within lo..hi ("-0" is 0). */
static int ref_int(const char *s, unsigned long long lo, unsigned long long hi,
                   unsigned long long *out)
{
    int neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    unsigned long long v;
    if (ref_digits(&s, &v) != 1 || *s || (neg && v != 0) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* What strtod reads, whole, finite, without range error, 0..1e9, no leading space. */
static int ref_seconds(const char *s, double *out)
{
    if (isspace((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    double t = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(t) || t < 0 || t > 1e9)
        return -1;
    *out = t > 0 ? t : 0;
    return 0;
}

/* Node ids separated by single commas; the number of ids, or -1. ids[] gets up to max of
 * them, INT_MAX for any larger id. */
static int ref_node_ids(const char *s, int *ids, int max)
{
    int n = 0;
    for (;;) {
        unsigned long long v;
        int got = ref_digits(&s, &v);
        if (got == 0)
            return -1;
        if (n < max)
            ids[n] = got < 0 || v > INT_MAX ? INT_MAX : (int)v; /* no node of any team */
        n++;
        if (!*s)
            return n;
        if (*s++ != ',')
            return -1;
    }
}

/* The map fits a team of `size` ranks: one id 0..size-1 per rank. */
static int ref_node_map(const char *map, int size, int *node_of)
{
    if (ref_node_ids(map, node_of, size) != size)
        return -1;
    for (int r = 0; r < size; r++)
        if (node_of[r] >= size)
            return -1;
    return 0;
}

/* RCOLL_TUNE: entries split by ';', each coll=algo or coll:lo-hi=algo[,lo-hi=algo...]; a
 * collective and an algorithm of it by name (any case; `auto` too), sizes as ref_size or `inf`
 * (the end only), lo < hi, ranges only for collectives chosen by size, at most RCOLL_TUNE_MAX
 * ranges. Fills cfg's tune fields; -1 if the value is not valid. Read by hand, one character
 * after the other, where config.c cuts tokens. */
static int ref_tune_algo(const rcoll_coll_info_t *c, const char *name, int *out)
{
    if (strcasecmp(name, "auto") == 0) {
        *out = RCOLL_TUNE_AUTO;
        return 0;
    }
    for (int i = 0; rcoll_coll_algo_name(c, i); i++)
        if (strcasecmp(name, rcoll_coll_algo_name(c, i)) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static int ref_tune_add(rcoll_config_t *cfg, const rcoll_coll_info_t *c, unsigned long long lo,
                        unsigned long long hi, const char *algo)
{
    int index;
    if (lo >= hi || ref_tune_algo(c, algo, &index) || cfg->tune_count == RCOLL_TUNE_MAX)
        return -1;
    rcoll_tune_range_t *r = &cfg->tune[cfg->tune_count++];
    r->coll = (int)c->coll;
    r->algo = index;
    r->lo = (size_t)lo;
    r->hi = (size_t)hi;
    return 0;
}

static int ref_tune(const char *value, rcoll_config_t *cfg)
{
    static char entry[LONG_LEN + 1], part[LONG_LEN + 1];
    size_t n = strlen(value);
    if (n > LONG_LEN)
        return -1; /* longer than any value here */
    cfg->tune_count = 0;
    for (size_t at = 0;;) {
        size_t e = 0;
        while (at < n && value[at] != ';')
            entry[e++] = value[at++];
        entry[e] = '\0';
        char *sep = entry;
        while (*sep && *sep != ':' && *sep != '=')
            sep++;
        if (!*sep)
            return -1; /* empty, or no ':' and no '=' */
        char kind = *sep;
        *sep = '\0';
        const rcoll_coll_info_t *c = rcoll_coll_info_by_name(entry);
        if (!c)
            return -1;
        if (kind == '=') {
            if (ref_tune_add(cfg, c, 0, RCOLL_TUNE_INF, sep + 1))
                return -1;
        } else {
            if (!rcoll_coll_by_bytes(c))
                return -1;
            for (char *r = sep + 1;;) {
                size_t p = 0;
                while (r[p] && r[p] != ',')
                    p++;
                memcpy(part, r, p);
                part[p] = '\0';
                char *dash = strchr(part, '-'), *eq = dash ? strchr(dash, '=') : NULL;
                if (!eq)
                    return -1;
                *dash = *eq = '\0';
                unsigned long long lo, hi;
                if (strcasecmp(part, "inf") == 0 || ref_size(part, &lo))
                    return -1;
                if (strcasecmp(dash + 1, "inf") == 0)
                    hi = RCOLL_TUNE_INF;
                else if (ref_size(dash + 1, &hi))
                    return -1;
                if (ref_tune_add(cfg, c, lo, hi, eq + 1))
                    return -1;
                if (!r[p])
                    break;
                r += p + 1;
            }
        }
        if (at == n)
            return 0;
        at++; /* the ';' */
    }
}

/* ---- RCOLL_MODEL: files written at start, one good, some bad ---- */

static char model_ok[64], model_bad_key[64], model_bad_value[64], model_dir[64];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void init_model_files(void)
{
    int pid = (int)getpid();
    snprintf(model_ok, sizeof model_ok, "/tmp/rcoll_fuzz_model_ok.%d", pid);
    snprintf(model_bad_key, sizeof model_bad_key, "/tmp/rcoll_fuzz_model_key.%d", pid);
    snprintf(model_bad_value, sizeof model_bad_value, "/tmp/rcoll_fuzz_model_value.%d", pid);
    snprintf(model_dir, sizeof model_dir, "/tmp");
    write_file(model_ok, "# a comment\n\nshm.alpha 2\n  net.gap 7.5   # trailing\n");
    write_file(model_bad_key, "shm.alpha 2\nnet.latency 3\n");
    write_file(model_bad_value, "net.alpha -1\n");
}

static void remove_model_files(void)
{
    unlink(model_ok);
    unlink(model_bad_key);
    unlink(model_bad_value);
}

/* Only the good file is accepted: it sets two parameters, the rest keep the defaults. */
static int ref_model(const char *value, rcoll_config_t *cfg)
{
    if (strcmp(value, model_ok) != 0)
        return -1;
    snprintf(cfg->model_path, sizeof cfg->model_path, "%s", value);
    cfg->model.shm.alpha = 2;
    cfg->model.net.gap = 7.5;
    return 0;
}

/* ---- what the configuration must hold after a value ---- */

static void put_field(rcoll_config_t *cfg, const var_t *v, unsigned long long n, double t,
                      const char *s)
{
    char *f = (char *)cfg + v->offset;
    int i = (int)n;
    long l = (long)n;
    size_t z = (size_t)n;
    switch (v->type) {
    case F_INT: memcpy(f, &i, sizeof i); break;
    case F_LONG: memcpy(f, &l, sizeof l); break;
    case F_SIZE: memcpy(f, &z, sizeof z); break;
    case F_DOUBLE: memcpy(f, &t, sizeof t); break;
    case F_STR: memset(f, 0, v->size); memcpy(f, s, strlen(s)); break;
    case F_NONE: break;
    }
}

/* Whether `value` must be accepted; if so, `cfg` (the default configuration) gets the field. */
static int expect_accept(const var_t *v, const char *value, rcoll_config_t *cfg)
{
    unsigned long long n = 0;
    double t = 0;
    if (!*value || v->kind == K_MPI)
        return 1; /* empty: unset */
    switch (v->kind) {
    case K_CHOICE:
        for (int i = 0; i < v->count; i++)
            if (strcasecmp(value, v->names[i]) == 0) {
                put_field(cfg, v, (unsigned long long)v->values[i], 0, NULL);
                return 1;
            }
        return 0;
    case K_SIZE:
        if (ref_size(value, &n) || n < v->lo || n > v->hi)
            return 0;
        put_field(cfg, v, (n + v->round - 1) / v->round * v->round, 0, NULL);
        return 1;
    case K_INT:
        if (ref_int(value, v->lo, v->hi, &n))
            return 0;
        put_field(cfg, v, n, 0, NULL);
        return 1;
    case K_SECONDS:
        if (ref_seconds(value, &t))
            return 0;
        put_field(cfg, v, 0, t, NULL);
        return 1;
    case K_NODE_MAP:
        if (strlen(value) >= RCOLL_NODE_MAP_MAX || ref_node_ids(value, NULL, 0) < 0)
            return 0;
        put_field(cfg, v, 0, 0, value);
        return 1;
    case K_ALGO:
        if (strlen(value) >= RCOLL_ALGO_NAME_MAX && strcasecmp(value, "auto") != 0)
            return 0;
        put_field(cfg, v, 0, 0, strcasecmp(value, "auto") == 0 ? "" : value);
        return 1;
    case K_NAME: { /* RCOLL_NET: auto, or letters, digits and _ (kept in lower case) */
        char low[RCOLL_NET_NAME_MAX];
        size_t len = strlen(value);
        if (strcasecmp(value, "auto") == 0)
            return 1;
        if (len >= sizeof low)
            return 0;
        for (size_t i = 0; i <= len; i++) {
            if (i < len && !isalnum((unsigned char)value[i]) && value[i] != '_')
                return 0;
            low[i] = (char)tolower((unsigned char)value[i]);
        }
        put_field(cfg, v, 0, 0, low);
        return 1;
    }
    case K_TUNE: {
        rcoll_config_t tmp = *cfg;
        if (ref_tune(value, &tmp))
            return 0;
        *cfg = tmp;
        return 1;
    }
    case K_MODEL:
        return ref_model(value, cfg) == 0;
    case K_MPI: break;
    }
    return 1;
}

/* ---- checks ---- */

static int fail(const var_t *v, const char *value, const char *what, const char *detail)
{
    char shown[RCOLL_SHOWN_MAX];
    printf("FAIL %s=%s: %s%s%s\n", v ? v->name : "(all)", rcoll_config_show(value, shown), what,
           detail ? ": " : "", detail ? detail : "");
    failures++;
    return 1;
}

static int printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

/* "VAR=<value as shown> is not valid: expected ...", whole (not cut) and printable. */
static int message_ok(const char *msg, const char *var, const char *value, size_t cap)
{
    char shown[RCOLL_SHOWN_MAX], head[200];
    snprintf(head, sizeof head, "%s=%s is not valid: expected ", var,
             rcoll_config_show(value, shown));
    size_t len = strlen(msg);
    return strncmp(msg, head, strlen(head)) == 0 && len > strlen(head) && len < cap - 1
           && printable(msg);
}

typedef struct {
    FILE *saved, *mem;
    char *buf;
    size_t len;
} capture_t;

/* rcoll's messages (fprintf to stderr) go to a buffer; the sanitizers' reports still reach
 * file descriptor 2. */
static void capture_begin(capture_t *c)
{
    fflush(stderr);
    c->saved = stderr;
    c->buf = NULL;
    c->len = 0;
    c->mem = open_memstream(&c->buf, &c->len);
    if (c->mem)
        stderr = c->mem;
}

static const char *capture_end(capture_t *c)
{
    stderr = c->saved;
    if (c->mem)
        fclose(c->mem);
    return c->buf ? c->buf : "";
}

/* A one-rank team in this process: RCOLL_NODE_MAP must fit it, RCOLL_PPN anything. */
static int check_team(const var_t *v, const char *value, rcoll_context_t *ctx)
{
    rcoll_oob_t oob;
    rcoll_team_t *team = NULL;
    int node;
    int fits = v->kind != K_NODE_MAP || !*value || ref_node_map(value, 1, &node) == 0;
    rcoll_fork_job_oob(job, 0, &oob);
    capture_t cap;
    capture_begin(&cap);
    rcoll_status_t st = rcoll_team_create(ctx, &oob, &team);
    const char *out = capture_end(&cap);
    int bad = 0;
    teams++;
    if (fits
        && (st != RCOLL_OK || rcoll_team_node_count(team) != 1 || rcoll_barrier(team) != RCOLL_OK))
        bad = fail(v, value, "a one-rank team failed", rcoll_strerror(st));
    else if (!fits && st != RCOLL_ERR_INVALID)
        bad = fail(v, value, "a one-rank team took a map that does not fit it", rcoll_strerror(st));
    else if (!fits && (!strstr(out, "RCOLL_NODE_MAP=")
                       || !strstr(out, " is not valid: expected one node id")))
        bad = fail(v, value, "the team's error does not name RCOLL_NODE_MAP", out);
    rcoll_team_destroy(team);
    free(cap.buf);
    return bad;
}

/* The override is what rcoll_explain reports: the algorithm, or an error naming the variable. */
static int check_algo(const var_t *v, const char *value, rcoll_context_t *ctx)
{
    char why[512];
    const char *name = rcoll_explain(ctx, (rcoll_coll_t)v->coll, 8, 4, 4, why, sizeof why);
    explains++;
    const char *forced = ctx->cfg.algo[v->coll];
    if (!forced[0])
        return name ? 0 : fail(v, value, "no algorithm without an override", why);
    if (rcoll_algo_find((rcoll_coll_t)v->coll, forced))
        return name && strcasecmp(name, forced) == 0 ? 0
                                                     : fail(v, value, "a known name not used", why);
    if (name)
        return fail(v, value, "an unknown name gave an algorithm", name);
    return message_ok(why, v->name, value, sizeof why) ? 0 : fail(v, value, "bad message", why);
}

/* RCOLL_TUNE's last range decides its collective there: rcoll_explain names its algorithm (a
 * user rule) or, for `auto`, a default rule. */
static int check_tune(const var_t *v, const char *value, rcoll_context_t *ctx)
{
    const rcoll_config_t *cfg = &ctx->cfg;
    if (!cfg->tune_count)
        return 0;
    const rcoll_tune_range_t *r = &cfg->tune[cfg->tune_count - 1];
    char why[1024];
    const char *name = rcoll_explain(ctx, (rcoll_coll_t)r->coll, r->lo, 4, 4, why, sizeof why);
    explains++;
    const char *want = r->algo == RCOLL_TUNE_AUTO ? NULL
                       : rcoll_coll_algo_name(rcoll_coll_info((rcoll_coll_t)r->coll), r->algo);
    if (!name || !strstr(why, "RCOLL_TUNE") ||
        (want ? strcmp(name, want) || !strstr(why, "user rule") : !strstr(why, "default rule")))
        return fail(v, value, "rcoll_explain does not follow the last range", why);
    return 0;
}

/* A positive timeout stays positive in the wait policy, within 1e18 ns. */
static int check_timeout(const var_t *v, const char *value, const rcoll_config_t *cfg)
{
    rcoll_wait_policy_t p;
    rcoll_wait_policy_init(&p, cfg, 1, 1, false);
    double want = cfg->timeout_s * 1e9;
    if ((cfg->timeout_s > 0) != (p.timeout_ns > 0) || p.timeout_ns > 1000000000000000000ull ||
        fabs((double)p.timeout_ns - want) > 1 + want * 1e-12)
        return fail(v, value, "the wait policy's timeout differs", NULL);
    return 0;
}

/* rcoll_context_create agrees with rcoll_config_from_env: the same status, the same
 * configuration, its message printed as "rcoll: <message>". */
static int check_context(const var_t *v, const char *value, rcoll_status_t want,
                         const rcoll_config_t *cfg, const char *err)
{
    rcoll_context_t *ctx = NULL;
    capture_t cap;
    capture_begin(&cap);
    rcoll_status_t st = rcoll_context_create(&ctx);
    const char *out = capture_end(&cap);
    char line[400];
    snprintf(line, sizeof line, "rcoll: %s\n", err);
    int bad = 0;
    if (st != want)
        bad = fail(v, value, "rcoll_context_create differs from rcoll_config_from_env",
                   rcoll_strerror(st));
    else if (st != RCOLL_OK && strcmp(out, line) != 0)
        bad = fail(v, value, "rcoll_context_create printed something else", out);
    else if (st == RCOLL_OK && memcmp(&ctx->cfg, cfg, sizeof *cfg) != 0)
        bad = fail(v, value, "the context's configuration differs", NULL);
    else if (st == RCOLL_OK && v->kind == K_ALGO)
        bad = check_algo(v, value, ctx);
    else if (st == RCOLL_OK && v->kind == K_TUNE)
        bad = check_tune(v, value, ctx);
    else if (st == RCOLL_OK && v->team)
        bad = check_team(v, value, ctx);
    if (st == RCOLL_OK)
        rcoll_context_destroy(ctx);
    free(cap.buf);
    return bad;
}

/* rcoll_parse_node_map against the reference for teams of 1..9 ranks. */
static int check_node_map_parser(const var_t *v, const char *value)
{
    for (int size = 1; size <= 9; size++) {
        int want[9], got[9];
        int ok = ref_node_map(value, size, want) == 0;
        if ((rcoll_parse_node_map(value, size, got) == 0) != ok
            || (ok && memcmp(want, got, sizeof(int) * (size_t)size) != 0))
            return fail(v, value, "rcoll_parse_node_map differs from the reference", NULL);
    }
    return 0;
}

/* One variable set to one value, every other one unset. */
static void run_case(const var_t *v, const char *value)
{
    rcoll_config_t want = baseline, got;
    char err[256];
    cases++;
    setenv(v->name, value, 1);
    int accept = expect_accept(v, value, &want);
    if (accept && *value && !strcmp(v->name, "RCOLL_NB_INLINE"))
        want.nb_inline_set = true; /* the transport keeps a value the user set */
    if (accept && *value && !strcmp(v->name, "RCOLL_NB_AREAS"))
        want.nb_areas_set = true;
    rcoll_status_t st = rcoll_config_from_env(&got, err, sizeof err);
    int bad = 0;
    if (accept && st != RCOLL_OK)
        bad = fail(v, value, "refused", err);
    else if (accept && memcmp(&got, &want, sizeof got) != 0)
        bad = fail(v, value, "accepted, but the configuration is not what the value says", NULL);
    else if (!accept && st != RCOLL_ERR_INVALID)
        bad = fail(v, value, st == RCOLL_OK ? "accepted" : "refused with a wrong status",
                   rcoll_strerror(st));
    else if (!accept && !message_ok(err, v->name, value, sizeof err))
        bad = fail(v, value, "bad message", err);
    if (!bad && v->kind == K_SECONDS && st == RCOLL_OK)
        bad = check_timeout(v, value, &got);
    if (!bad && v->kind == K_NODE_MAP)
        bad = check_node_map_parser(v, value);
    if (!bad)
        check_context(v, value, st, &got, err);
    unsetenv(v->name);
}

/* ---- the values ---- */

static const char *const common_values[] = {
    "", " ", "0", "1", "-1", "-0", "+1", "+0", "2", "3", "4", "7", "8", "16", "63", "64", "65",
    "1024", "1025", "4095", "4096", "4097", "65536", "65537", "1000000000", "1000000001",
    "1048576", "1048577", "2147483647", "2147483648", "-2147483648", "-2147483649",
    "4294967295", "4294967296", "4294967297", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
    "18446744073709551616", "99999999999999999999", "99999999999999999999g", "17179869184g",
    "17179869183g", "17179869183G", "16777216T", "16777216m", "17592186044416k", "1073741824k",
    "1073741825k", "1g", "1G", "1gb", "1GB", "2g", "1m", "1023m", "1024m", "1025m", "1e309",
    "-1e309", "1e-400", "1e-300", "1e-10", "1e9", "1e9.0", "1e10", "1e300", "0x10", "0x", "0X1p3",
    "nan", "NaN", "-nan", "nan(0x1)", "inf", "-inf", "INF", "infinity", "4k", "4kb", "4KB", "4Kb",
    "4kB", "4K", "k", "kb", "K", "b", "4b", "4kk", "4kbb", "4 k", " 4k", "4k ", "4096 ", " 4096",
    " -1", " +1", "\t1", "1\n", "\n", "1.5", "1,5", ".5", "5.", ".", "4q", "4t", "4T", "0,0,1,1",
    "0,", ",0", ",", "0,,1", "0;1", "0 1", "0, 1", "0,-1", "0,+1", "auto", "AUTO", "Auto",
    "spin", "SPIN", "yield", "block", "error", "warn", "info", "debug", "off", "OFF", "on", "am",
    "AM", "rma", "RMA", "tcp", "yes", "true", "none", "\xff", "\xc3\xa9", "\x01", "caf\xc3\xa9",
    "4k\xff", "\x80" "0", "%s%n%s", "1;rm -rf", "=", "RCOLL_WAIT=spin", "0\\x", "\x7f",
};

static char long_digits[LONG_LEN + 1], long_letters[LONG_LEN + 1], long_map[LONG_LEN + 1],
    map_4095[RCOLL_NODE_MAP_MAX + 1], map_4096[RCOLL_NODE_MAP_MAX + 2], name_47[48], name_48[49],
    long_high[LONG_LEN + 1];

static void init_long_values(void)
{
    memset(long_digits, '1', LONG_LEN);
    memset(long_letters, 'a', LONG_LEN);
    for (int i = 0; i < LONG_LEN; i++)
        long_map[i] = i % 2 ? ',' : '0';
    long_map[LONG_LEN - 1] = '0';
    for (int i = 0; i < LONG_LEN; i++)
        long_high[i] = (char)(0x80 + i % 0x80);
    memcpy(map_4095, long_map, RCOLL_NODE_MAP_MAX - 1);   /* 0,0,...,0: 4095 characters */
    memcpy(map_4096, long_map, RCOLL_NODE_MAP_MAX - 2);   /* ends ",00": 4096 characters */
    memcpy(map_4096 + RCOLL_NODE_MAP_MAX - 2, "00", 2);
    memset(name_47, 'x', 47);
    memset(name_48, 'x', 48);
}

/* Values that must be accepted for this variable, or sit on its edges. */
static int own_values(const var_t *v, const char **out, int max, char names[][64])
{
    int n = 0;
    for (int i = 0; i < v->count && n < max; i++)
        out[n++] = v->names[i];
    static const char *const maps[] = {
        "0", "00", "1", "0,0", "0,1", "1,0", "0,0,1,1", "3,3,3,3", "0,1,2,0", "0,1,2,3,4,5,6,7,8",
        "8,7,6,5,4,3,2,1,0", "0,0,0,0,0,0,0,0,0,0", "007", "2147483648", "0,99999999999999999999"};
    for (size_t i = 0; v->kind == K_NODE_MAP && i < sizeof maps / sizeof maps[0] && n < max; i++)
        out[n++] = maps[i];
    if (v->kind == K_NODE_MAP && n + 3 <= max) {
        out[n++] = map_4095;
        out[n++] = map_4096;
        out[n++] = long_map;
    }
    static const char *const tunes[] = {
        "allgather:0-8k=direct_read,8k-inf=direct;barrier=dissemination", "allgather=ring",
        "ALLGATHER=RING", "barrier=auto", "bcast:0-1=knomial", "bcast:1-0=knomial",
        "scatter:0-512=direct_read,512-32k=direct,32k-inf=direct_read", "gather:4k-4k=binomial",
        "gather:4k-4097=binomial", "alltoall:0-1m=bruck;alltoall:1k-2k=pairwise", "alltoall:0-inf=auto",
        "alltoall:inf-inf=direct", "alltoall:0-18446744073709551615=direct",
        "alltoall:18446744073709551615-inf=direct", "alltoall:0-17179869184g=direct",
        "allgatherv=direct", "allgatherv:0-1=direct", "barrier:0-8=dissemination", "gatherv=binomial",
        "allgather:0-8k=direct_read,", "allgather:0-8k=direct_read;", ";allgather=ring",
        "allgather=ring;;bcast=knomial", "allgather", "allgather:", "allgather=", "=ring", ":0-1=ring",
        "allgather:0-8k", "allgather:0=ring", "allgather:08k-09k=bruck", "allgather:0-8kb=bruck",
        "allgather:0-8K=bruck", "allgather:0-8kk=bruck", "allgather:-1-8=ring", "allgather:0--8=ring",
        "allgather:0-8=ring=ring", "allgather:0-8=ring-ring", "allgather: 0-8=ring", "allgather:0-8=ring ",
        "reduce=ring", "allgather=direct_read:0-8", "allgather:0-1=ring,1-2=bruck,2-3=direct,3-4=auto",
        "scatterv=direct;alltoallv=direct;gatherv=direct;allgatherv=direct;barrier=flat_arrival"};
    for (size_t i = 0; v->kind == K_TUNE && i < sizeof tunes / sizeof tunes[0] && n < max; i++)
        out[n++] = tunes[i];
    if (v->kind == K_MODEL && n + 5 <= max) {
        out[n++] = model_ok;
        out[n++] = model_bad_key;
        out[n++] = model_bad_value;
        out[n++] = model_dir;
        out[n++] = "/nonexistent/rcoll.model";
    }
    if (v->kind == K_ALGO) { /* every algorithm of every collective: most are unknown here */
        for (int c = 0; c < RCOLL_COLL_COUNT; c++) {
            char list[512], *save = NULL;
            rcoll_algo_names((rcoll_coll_t)c, list, sizeof list);
            char *a = strtok_r(list, ", ", &save);
            for (; a && n < max; a = strtok_r(NULL, ", ", &save)) {
                snprintf(names[n], 64, "%s", a);
                out[n] = names[n];
                n++;
            }
        }
        if (n + 2 <= max) {
            out[n++] = name_47;
            out[n++] = name_48;
        }
    }
    return n;
}

static void run_fixed(const var_t *v)
{
    static const char *own[MAX_VALUES];
    static char names[MAX_VALUES][64];
    int n = own_values(v, own, MAX_VALUES, names);
    for (int i = 0; i < n; i++)
        run_case(v, own[i]);
    for (size_t i = 0; i < sizeof common_values / sizeof common_values[0]; i++)
        run_case(v, common_values[i]);
    const char *longs[] = {long_digits, long_letters, long_map, long_high};
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++)
        run_case(v, longs[i]);
}

static char random_byte(int one_in)
{
    static const char alphabet[] = "0123456789000111,,,kKmMgGbBtT-+.eExXpP aAinfINF\t\n;=_";
    if (rng_below((size_t)one_in))
        return alphabet[rng_below(sizeof alphabet - 1)];
    return (char)(rng_below(255) + 1); /* any byte but NUL */
}

/* A known value with one to three bytes inserted, replaced or deleted; its length. */
static size_t mutated_value(const var_t *v, char *out, size_t cap)
{
    const char *own[MAX_VALUES];
    static char names[MAX_VALUES][64];
    int count = own_values(v, own, MAX_VALUES, names);
    size_t ncommon = sizeof common_values / sizeof common_values[0];
    const char *base = count && rng_below(2) ? own[rng_below((size_t)count)]
                                             : common_values[rng_below(ncommon)];
    size_t n = strlen(base) < cap - 8 ? strlen(base) : cap - 8;
    memcpy(out, base, n);
    for (int edits = 1 + (int)rng_below(3); edits > 0; edits--) {
        size_t at = rng_below(n + 1);
        char c = random_byte(8);
        if (rng_below(2) && n + 1 < cap) { /* insert */
            memmove(out + at + 1, out + at, n - at);
            out[at] = c;
            n++;
        } else if (at < n && rng_below(2)) { /* replace */
            out[at] = c;
        } else if (at < n) { /* delete */
            memmove(out + at, out + at + 1, n - at - 1);
            n--;
        }
    }
    return n;
}

/* A random value: a known one mutated, up to 23 bytes from an alphabet that matters to the
 * parsers, or a number of up to 30 digits with a suffix or not. */
static void random_value(const var_t *v, char *out, size_t cap)
{
    size_t n = 0, len;
    switch (rng_below(3)) {
    case 0:
        n = mutated_value(v, out, cap);
        break;
    case 1:
        for (len = rng_below(24); n < len; n++)
            out[n] = random_byte(6);
        break;
    default:
        for (len = 1 + rng_below(30); n < len; n++)
            out[n] = (char)('0' + rng_below(10));
        if (rng_below(2))
            out[n++] = "kKmMgGtb"[rng_below(8)];
        break;
    }
    out[n] = '\0';
}

/* Every variable at once, each unset (mostly), a valid value or a random one: accepted iff every
 * value is; otherwise the message names one of the variables whose value is not valid. */
static void run_mixed(void)
{
    cases++;
    static char values[MAX_VARS][128];
    int accept[MAX_VARS];
    rcoll_config_t want = baseline, got;
    for (int i = 0; i < nvars; i++) {
        const char *own[MAX_VALUES];
        static char names[MAX_VALUES][64];
        int count = own_values(&vars[i], own, MAX_VALUES, names), r = (int)rng_below(100);
        values[i][0] = '\0';
        if (r >= 60 && r < 85 && count)
            snprintf(values[i], sizeof values[i], "%s", own[rng_below((size_t)count)]);
        else if (r >= 85)
            random_value(&vars[i], values[i], sizeof values[i]);
        setenv(vars[i].name, values[i], 1);
        accept[i] = expect_accept(&vars[i], values[i], &want);
    }
    char err[256];
    rcoll_status_t st = rcoll_config_from_env(&got, err, sizeof err);
    int named = -1, all = 1;
    for (int i = 0; i < nvars; i++) {
        all &= accept[i];
        if (!accept[i] && message_ok(err, vars[i].name, values[i], sizeof err))
            named = i;
    }
    if (all && (st != RCOLL_OK || memcmp(&got, &want, sizeof got) != 0))
        fail(NULL, "", "every value valid, yet refused or misread", err);
    if (!all && (st != RCOLL_ERR_INVALID || named < 0))
        fail(NULL, "", "a value not valid, yet accepted or not named", err);
    for (int i = 0; i < nvars; i++)
        unsetenv(vars[i].name);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    init_vars();
    unsigned long long seed = 20240612;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            for (int v = 0; v < nvars; v++)
                printf("%s\t%s\n", vars[v].name, kind_names[vars[v].kind]);
            return 0;
        }
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [--list] [--seed N]\n", argv[0]);
            return 2;
        }
    }
    rng_state = seed ? seed : 1;
    for (int v = 0; v < nvars; v++)
        unsetenv(vars[v].name);
    char err[256];
    job = rcoll_fork_job_create(1, RCOLL_FORK_OOB_MAX);
    if (!job || rcoll_config_from_env(&baseline, err, sizeof err) != RCOLL_OK) {
        printf("FAIL set-up: %s\n", job ? err : "no fork job");
        return 1;
    }
    init_long_values();
    init_model_files();
    double t0 = now_s();
    for (int v = 0; v < nvars; v++)
        run_fixed(&vars[v]);
    int fixed = cases;
    for (int i = 0; i < RANDOM_CASES; i++) {
        char value[128];
        const var_t *v = &vars[i % nvars];
        random_value(v, value, sizeof value);
        run_case(v, value);
    }
    for (int i = 0; i < MIXED_CASES; i++)
        run_mixed();
    rcoll_fork_job_destroy(job);
    remove_model_files();
    printf("%s: %d variables, %d cases (%d fixed, %d random, %d mixed; seed %llu; %d one-rank "
           "teams, %d explains) in %.2f s, %d failed\n",
           failures ? "FAIL" : "ok", nvars, cases, fixed, RANDOM_CASES, MIXED_CASES, seed, teams,
           explains, now_s() - t0, failures);
    return failures ? 1 : 0;
}
