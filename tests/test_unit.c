/* Unit tests without processes: every algorithm's peer and step schedule for P = 1..64 checked
 * against a simple reference (who knows what after each step), the collective table, the
 * default selection (the choices of the rule list it replaced, by layout and size), RCOLL_TUNE,
 * the algorithms' fallbacks, the parsing of the environment, and the copy that does not write
 * unchanged data again (transport/copy.h), and the board's streamed-block line over a head run
 * that earlier data filled (transport/board.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/allgather/blocks.h"
#include "coll/colls.h"
#include "coll/schedule.h"
#include "config/config.h"
#include "select/select.h"
#include "select/model.h"
#include "transport/board.h"
#include "transport/copy.h"
#include "transport/transport.h"

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#define MAXP 64
typedef uint64_t set_t; /* bit b: block (or arrival) of rank b is known */

static set_t all_of(int p) { return p == 64 ? ~0ull : (1ull << p) - 1; }

static set_t ranges_set(const ag_ranges_t *r)
{
    set_t s = 0;
    for (int i = 0; i < r->n; i++)
        for (int b = r->first[i]; b < r->first[i] + r->count[i]; b++)
            s |= 1ull << b;
    return s;
}

static void check_dissemination(int p)
{
    set_t know[MAXP], next[MAXP];
    for (int r = 0; r < p; r++)
        know[r] = 1ull << r;
    for (int k = 0; k < rcoll_ceil_log2(p); k++) {
        memcpy(next, know, sizeof next);
        for (int r = 0; r < p; r++) {
            int to = rcoll_dissemination_to(r, p, k);
            CHECK(rcoll_dissemination_from(to, p, k) == r, "dissemination p=%d k=%d from/to", p, k);
            next[to] |= know[r];
        }
        memcpy(know, next, sizeof know);
    }
    for (int r = 0; r < p; r++)
        CHECK(know[r] == all_of(p), "dissemination p=%d: rank %d does not know all", p, r);
}

static void check_pairwise(int p)
{
    int p2 = rcoll_pof2_floor(p), extra = p - p2;
    set_t know[MAXP];
    for (int r = 0; r < p; r++)
        know[r] = 1ull << r;
    for (int r = 0; r < extra; r++)
        know[r] |= know[r + p2];
    for (int k = 0; k < rcoll_ceil_log2(p2); k++) {
        set_t next[MAXP];
        memcpy(next, know, sizeof next);
        for (int r = 0; r < p2; r++)
            next[r] |= know[rcoll_rd_partner(r, k)];
        memcpy(know, next, sizeof know);
    }
    for (int r = 0; r < extra; r++)
        know[r + p2] = know[r];
    for (int r = 0; r < p; r++)
        CHECK(know[r] == all_of(p), "pairwise p=%d: rank %d leaves early", p, r);
}

static void check_bruck(int p)
{
    set_t have[MAXP];
    for (int r = 0; r < p; r++)
        have[r] = 1ull << r;
    for (int k = 0; k < rcoll_ceil_log2(p); k++) {
        int dist = 1 << k, count = dist < p - dist ? dist : p - dist;
        set_t next[MAXP];
        memcpy(next, have, sizeof next);
        for (int r = 0; r < p; r++) {
            ag_ranges_t out = ag_ring_ranges(r, count, p);
            int to = rcoll_dissemination_from(r, p, k);
            ag_ranges_t expect = ag_ring_ranges(rcoll_dissemination_to(to, p, k), count, p);
            CHECK((ranges_set(&out) & ~have[r]) == 0, "bruck p=%d k=%d: rank %d sends what it lacks", p, k, r);
            CHECK(ranges_set(&out) == ranges_set(&expect), "bruck p=%d k=%d: receiver %d expects other blocks", p, k, to);
            next[to] |= ranges_set(&out);
        }
        memcpy(have, next, sizeof have);
    }
    for (int r = 0; r < p; r++)
        CHECK(have[r] == all_of(p), "bruck p=%d: rank %d misses blocks", p, r);
}

static void check_recursive_doubling(int p)
{
    int p2 = rcoll_pof2_floor(p), extra = p - p2;
    set_t have[MAXP];
    for (int r = 0; r < p; r++)
        have[r] = 1ull << r;
    for (int r = 0; r < extra; r++)
        have[r] |= have[r + p2];
    for (int k = 0; k < rcoll_ceil_log2(p2); k++) {
        set_t next[MAXP];
        memcpy(next, have, sizeof next);
        for (int v = 0; v < p2; v++) {
            ag_ranges_t out;
            out.n = rcoll_rd_group_ranges(v, k, p, out.first, out.count);
            int partner = rcoll_rd_partner(v, k);
            CHECK(ranges_set(&out) == have[v], "rd p=%d k=%d: rank %d's group ranges differ from what it has", p, k, v);
            next[partner] |= ranges_set(&out);
        }
        memcpy(have, next, sizeof have);
    }
    for (int r = 0; r < extra; r++)
        have[r + p2] = have[r];
    for (int r = 0; r < p; r++)
        CHECK(have[r] == all_of(p), "rd p=%d: rank %d misses blocks", p, r);
}

static void check_tree(int p, int fanin)
{
    int children = 0;
    for (int r = 0; r < p; r++) {
        int first = rcoll_tree_first_child(r, fanin, p), n = rcoll_tree_child_count(r, fanin, p);
        children += n;
        for (int c = first; c < first + n; c++)
            CHECK(rcoll_tree_parent(c, fanin) == r, "tree p=%d fanin=%d: child %d of %d", p, fanin, c, r);
        CHECK(n <= fanin, "tree p=%d: rank %d has %d children", p, r, n);
    }
    CHECK(children == p - 1, "tree p=%d fanin=%d: %d children in all", p, fanin, children);
}

/* k-port radix and its step count: r^(steps-1) < n <= r^steps. */
static void check_kport(int p, int k)
{
    int r = rcoll_kport_radix(k, p), steps = rcoll_ceil_log(p, r);
    CHECK(r >= 2 && (r == k + 1 || r == p || (k < 1 && r == 2) || (p < 2 && r == 2)),
          "kport radix p=%d k=%d: %d", p, k, r);
    long power = 1;
    for (int i = 0; i < steps; i++)
        power *= r;
    CHECK(power >= p && (steps == 0 || power / r < p), "kport steps p=%d r=%d: %d", p, r, steps);
}

static void check_selection(void)
{
    rcoll_config_t cfg;
    char err[256], why[256];
    unsetenv("RCOLL_ALLGATHER_ALGO");
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_OK, "default config: %s", err);
    size_t sizes[] = {0, 1, 48, 49, 4096, 65536, 1u << 20, 64u << 20};
    for (int c = 0; c < RCOLL_COLL_COUNT; c++)
        for (int p = 1; p <= 512; p = p * 2 + 1)
            for (int ppn = 1; ppn <= p; ppn = ppn < p / 2 ? ppn * 2 : ppn == p ? p + 1 : p) /* and across nodes */
                for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
                    const rcoll_algo_t *a = rcoll_select(&cfg, (rcoll_coll_t)c, sizes[i], p, ppn, 2, why, sizeof why);
                    CHECK(a && (int)a->coll == c && why[0], "selection %d bytes=%zu p=%d ppn=%d", c,
                          sizes[i], p, ppn);
                }
    snprintf(cfg.algo[RCOLL_COLL_ALLGATHER], RCOLL_ALGO_NAME_MAX, "ring");
    const rcoll_algo_t *a = rcoll_select(&cfg, RCOLL_COLL_ALLGATHER, 8, 4, 4, 2, why, sizeof why);
    CHECK(a == &rcoll_allgather_ring && strstr(why, "forced"), "override ring: %s", why);
    snprintf(cfg.algo[RCOLL_COLL_ALLGATHER], RCOLL_ALGO_NAME_MAX, "nonsense");
    a = rcoll_select(&cfg, RCOLL_COLL_ALLGATHER, 8, 4, 4, 2, why, sizeof why);
    CHECK(!a && strstr(why, "nonsense") && strstr(why, "recursive_doubling") && strstr(why, "bruck"),
          "bad override must list the valid names: %s", why);
    CHECK(!rcoll_select(&cfg, RCOLL_COLL_ALLGATHER, 8, 4, 4, 2, NULL, 512), "bad override, no message wanted");
    CHECK(rcoll_algo_find(RCOLL_COLL_BARRIER, "ring") == NULL, "ring is no barrier");
}

/* The collective table: rows at their values, names both ways, the shared argument checks. */
static void check_colls(void)
{
    char err[256];
    CHECK(rcoll_select_check_tables(err, sizeof err) == 0, "tables: %s", err);
    for (int c = 0; c < RCOLL_COLL_COUNT; c++) {
        const rcoll_coll_info_t *ci = rcoll_coll_info((rcoll_coll_t)c);
        CHECK(ci && (int)ci->coll == c && rcoll_coll_from_name(ci->name) == c &&
                  !strcmp(rcoll_coll_name((rcoll_coll_t)c), ci->name) && ci->bytes_is && ci->moves,
              "collective %d in the table", c);
    }
    CHECK(!rcoll_coll_info(RCOLL_COLL_COUNT) && !rcoll_coll_info((rcoll_coll_t)-1) &&
              rcoll_coll_from_name("reduce_all") == -1 && !strcmp(rcoll_coll_name(RCOLL_COLL_COUNT), "unknown"),
          "no collective beyond the table");
    const rcoll_coll_info_t *ag = rcoll_coll_info(RCOLL_COLL_ALLGATHER), *ga = rcoll_coll_info(RCOLL_COLL_GATHER),
                            *sc = rcoll_coll_info(RCOLL_COLL_SCATTER), *bc = rcoll_coll_info(RCOLL_COLL_BCAST),
                            *agv = rcoll_coll_info(RCOLL_COLL_ALLGATHERV);
    char x[8];
    CHECK(!ag->rooted && !ag->vform && rcoll_coll_by_bytes(ag) && bc->rooted && bc->one_buffer &&
              agv->vform && rcoll_coll_by_bytes(agv) &&
              !rcoll_coll_by_bytes(rcoll_coll_info(RCOLL_COLL_GATHERV)) &&
              !rcoll_coll_by_bytes(rcoll_coll_info(RCOLL_COLL_BARRIER)),
          "rooted, v-form, chosen by size");
    CHECK(!rcoll_coll_check(ag, 0, 4, 0, x, x, 8) && !rcoll_coll_check(ag, 1, 4, 0, RCOLL_IN_PLACE, x, 8) &&
              !strcmp(rcoll_coll_check(ag, 0, 4, 0, NULL, x, 8), "NULL buffer") &&
              !rcoll_coll_check(ag, 0, 4, 0, NULL, NULL, 0), "allgather checks");
    CHECK(!strcmp(rcoll_coll_check(ga, 0, 4, 4, x, x, 8), "root out of range") &&
              !strcmp(rcoll_coll_check(ga, 0, 4, -1, x, x, 0), "root out of range") &&
              !rcoll_coll_check(ga, 1, 4, 0, x, NULL, 8) && !rcoll_coll_check(ga, 0, 4, 0, RCOLL_IN_PLACE, x, 8) &&
              strstr(rcoll_coll_check(ga, 1, 4, 0, RCOLL_IN_PLACE, NULL, 8), "in place") &&
              rcoll_coll_check(ga, 0, 4, 0, x, NULL, 8), "gather checks");
    CHECK(!rcoll_coll_check(sc, 1, 4, 0, NULL, x, 8) && rcoll_coll_check(sc, 0, 4, 0, NULL, x, 8) &&
              !rcoll_coll_check(sc, 0, 4, 0, x, RCOLL_IN_PLACE, 8) &&
              rcoll_coll_check(sc, 1, 4, 0, NULL, RCOLL_IN_PLACE, 8) && rcoll_coll_check(sc, 1, 4, 0, x, NULL, 8),
          "scatter checks");
    CHECK(!rcoll_coll_check(bc, 2, 4, 1, x, x, 8) && !strcmp(rcoll_coll_check(bc, 2, 4, 1, NULL, NULL, 8), "NULL buffer"),
          "bcast checks");
}

/* The default table chooses what the rule list before it chose (compared point by point over
 * 2e8 calls while both existed), kept as expected names: per collective and layout, teams of
 * lo..hi ranks, "algo [bound algo]...": the first algorithm up to the first bound (bytes <=
 * bound), the next one above it, and so on. */
enum { ONE_NODE, ONE_NODE_CROWDED, NODES, NODES_CROWDED };
static const struct {
    rcoll_coll_t coll;
    int layout, lo, hi;
    const char *choice;
} expected_choices[] = {
    {RCOLL_COLL_BARRIER, ONE_NODE, 2, 600, "dissemination"},
    {RCOLL_COLL_BARRIER, ONE_NODE_CROWDED, 2, 2, "dissemination"},
    {RCOLL_COLL_BARRIER, ONE_NODE_CROWDED, 3, 64, "flat_arrival"},
    {RCOLL_COLL_BARRIER, ONE_NODE_CROWDED, 65, 600, "gather_release"},
    {RCOLL_COLL_BARRIER, NODES, 2, 2, "dissemination"},
    {RCOLL_COLL_BARRIER, NODES, 3, 8, "gather_release"},
    {RCOLL_COLL_BARRIER, NODES, 9, 600, "dissemination"},
    {RCOLL_COLL_BARRIER, NODES_CROWDED, 3, 8, "gather_release"},
    {RCOLL_COLL_BARRIER, NODES_CROWDED, 9, 600, "dissemination"},
    {RCOLL_COLL_ALLGATHER, ONE_NODE, 2, 8, "direct_read 8192 direct"},
    {RCOLL_COLL_ALLGATHER, ONE_NODE, 9, 16, "direct_read 8192 ring"},
    {RCOLL_COLL_ALLGATHER, ONE_NODE, 17, 600, "bruck 8192 ring"},
    {RCOLL_COLL_ALLGATHER, ONE_NODE_CROWDED, 2, 8, "direct_read 1048576 direct"},
    {RCOLL_COLL_ALLGATHER, ONE_NODE_CROWDED, 9, 64, "direct_read 1048576 ring"},
    {RCOLL_COLL_ALLGATHER, ONE_NODE_CROWDED, 65, 600, "bruck 8192 ring"},
    {RCOLL_COLL_ALLGATHER, NODES, 2, 2, "recursive_doubling 65536 direct"},
    {RCOLL_COLL_ALLGATHER, NODES, 3, 8, "gather_bcast 4096 recursive_doubling 65536 direct"},
    {RCOLL_COLL_ALLGATHER, NODES, 9, 64, "recursive_doubling 65536 direct"},
    {RCOLL_COLL_ALLGATHER, NODES, 65, 600, "recursive_doubling 65536 ring"},
    {RCOLL_COLL_ALLGATHER, NODES_CROWDED, 3, 8, "gather_bcast 4096 recursive_doubling 65536 direct"},
    {RCOLL_COLL_ALLGATHER, NODES_CROWDED, 9, 64, "recursive_doubling 65536 direct"},
    {RCOLL_COLL_ALLGATHER, NODES_CROWDED, 65, 600, "recursive_doubling 65536 ring"},
    {RCOLL_COLL_ALLTOALL, ONE_NODE, 2, 2, "direct_read 256 direct"},
    {RCOLL_COLL_ALLTOALL, ONE_NODE, 3, 16, "direct_read 1024 direct"},
    {RCOLL_COLL_ALLTOALL, ONE_NODE, 17, 600, "bruck 256 direct"},
    {RCOLL_COLL_ALLTOALL, ONE_NODE_CROWDED, 2, 64, "direct_read 2048 direct 8192 direct_read 16384 pairwise 65536 direct"},
    {RCOLL_COLL_ALLTOALL, ONE_NODE_CROWDED, 65, 600, "bruck 256 direct"},
    {RCOLL_COLL_ALLTOALL, NODES, 2, 2, "direct"},
    {RCOLL_COLL_ALLTOALL, NODES, 3, 8, "gather_scatter 8192 direct"},
    {RCOLL_COLL_ALLTOALL, NODES, 9, 600, "direct"},
    {RCOLL_COLL_ALLTOALL, NODES_CROWDED, 3, 8, "gather_scatter 8192 direct"},
    {RCOLL_COLL_ALLTOALL, NODES_CROWDED, 9, 600, "direct"},
    {RCOLL_COLL_BCAST, ONE_NODE, 2, 3, "direct_read 1048576 knomial"},
    {RCOLL_COLL_BCAST, ONE_NODE, 4, 8, "direct_read 1048576 scatter_allgather"},
    {RCOLL_COLL_BCAST, ONE_NODE, 9, 600, "knomial 16384 scatter_allgather"},
    {RCOLL_COLL_BCAST, ONE_NODE_CROWDED, 2, 64, "direct_read 1048576 scatter_allgather"},
    {RCOLL_COLL_BCAST, ONE_NODE_CROWDED, 65, 600, "scatter_allgather"},
    {RCOLL_COLL_BCAST, NODES, 2, 600, "knomial"},
    {RCOLL_COLL_BCAST, NODES_CROWDED, 3, 600, "knomial"},
    {RCOLL_COLL_GATHER, ONE_NODE, 2, 64, "direct"},
    {RCOLL_COLL_GATHER, ONE_NODE, 65, 600, "binomial 256 direct"},
    {RCOLL_COLL_GATHER, ONE_NODE_CROWDED, 2, 64, "direct"},
    {RCOLL_COLL_GATHER, ONE_NODE_CROWDED, 65, 600, "binomial 256 direct"},
    {RCOLL_COLL_GATHER, NODES, 2, 600, "direct"},
    {RCOLL_COLL_GATHER, NODES_CROWDED, 3, 600, "direct"},
    {RCOLL_COLL_SCATTER, ONE_NODE, 2, 2, "direct 131072 direct_read"},
    {RCOLL_COLL_SCATTER, ONE_NODE, 3, 64, "direct 32768 direct_read"},
    {RCOLL_COLL_SCATTER, ONE_NODE, 65, 600, "binomial 256 direct"},
    {RCOLL_COLL_SCATTER, ONE_NODE_CROWDED, 2, 64, "direct_read 512 direct 16384 direct_read"},
    {RCOLL_COLL_SCATTER, ONE_NODE_CROWDED, 65, 600, "binomial 256 direct"},
    {RCOLL_COLL_SCATTER, NODES, 2, 600, "direct"},
    {RCOLL_COLL_SCATTER, NODES_CROWDED, 3, 600, "direct"},
    {RCOLL_COLL_ALLGATHERV, ONE_NODE, 2, 600, "direct"},
    {RCOLL_COLL_ALLGATHERV, ONE_NODE_CROWDED, 2, 600, "direct"},
    {RCOLL_COLL_ALLGATHERV, NODES, 2, 600, "direct"},
    {RCOLL_COLL_ALLGATHERV, NODES_CROWDED, 3, 600, "direct"},
    {RCOLL_COLL_ALLTOALLV, ONE_NODE, 2, 600, "direct"},
    {RCOLL_COLL_ALLTOALLV, ONE_NODE_CROWDED, 2, 600, "direct"},
    {RCOLL_COLL_ALLTOALLV, NODES, 2, 600, "direct"},
    {RCOLL_COLL_ALLTOALLV, NODES_CROWDED, 3, 600, "direct"},
    {RCOLL_COLL_GATHERV, ONE_NODE, 2, 600, "direct"},
    {RCOLL_COLL_GATHERV, ONE_NODE_CROWDED, 2, 600, "direct"},
    {RCOLL_COLL_GATHERV, NODES, 2, 600, "direct"},
    {RCOLL_COLL_GATHERV, NODES_CROWDED, 3, 600, "direct"},
    {RCOLL_COLL_SCATTERV, ONE_NODE, 2, 600, "direct"},
    {RCOLL_COLL_SCATTERV, ONE_NODE_CROWDED, 2, 12, "direct_read"},
    {RCOLL_COLL_SCATTERV, ONE_NODE_CROWDED, 13, 600, "direct"},
    {RCOLL_COLL_SCATTERV, NODES, 2, 600, "direct"},
    {RCOLL_COLL_SCATTERV, NODES_CROWDED, 3, 600, "direct"},
};

static void check_one_choice(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes, int p, int layout,
                             const char *want)
{
    int ppn = layout <= ONE_NODE_CROWDED ? p : layout == NODES ? 1 : 2, cores = layout == ONE_NODE ? p : 1;
    char why[1024];
    const rcoll_algo_t *a = rcoll_select(cfg, coll, bytes, p, ppn, cores, NULL, 0);
    const rcoll_algo_t *b = rcoll_select(cfg, coll, bytes, p, ppn, cores, why, sizeof why);
    if (rcoll_model_decides(coll, p, ppn)) { /* several ranks per node: the cost model's pick,
                                               * never one that runs by name only */
        CHECK(a && a == b && strstr(why, "cost model") && !a->by_name,
              "default %s bytes=%zu p=%d layout %d: %s by the cost model expected (%s)",
              rcoll_coll_name(coll), bytes, p, layout, a ? a->name : "none", why);
        return;
    }
    CHECK(a && a == b && !strcmp(a->name, want) && strstr(why, "default rule"),
          "default %s bytes=%zu p=%d layout %d: %s, expected %s (%s)", rcoll_coll_name(coll), bytes, p, layout,
          a ? a->name : "none", want, why);
}

static void check_default_choices(const rcoll_config_t *cfg)
{
    for (size_t i = 0; i < sizeof expected_choices / sizeof expected_choices[0]; i++)
        for (int p = expected_choices[i].lo; p <= expected_choices[i].hi; p++) {
            char text[128], *save = NULL;
            snprintf(text, sizeof text, "%s", expected_choices[i].choice);
            size_t from = 0;
            for (char *name = strtok_r(text, " ", &save); name;) {
                char *bound = strtok_r(NULL, " ", &save);
                size_t upto = bound ? strtoull(bound, NULL, 10) : SIZE_MAX;
                check_one_choice(cfg, expected_choices[i].coll, from, p, expected_choices[i].layout, name);
                check_one_choice(cfg, expected_choices[i].coll, upto, p, expected_choices[i].layout, name);
                from = upto + 1;
                name = bound ? strtok_r(NULL, " ", &save) : NULL;
            }
        }
}

static rcoll_status_t config_with(const char *var, const char *value, rcoll_config_t *cfg);

/* RCOLL_TUNE: parsed into ranges (the later wins), refused with the bad token named, applied
 * before RCOLL_<COLL>_ALGO and the defaults. */
static void check_tune(void)
{
    rcoll_config_t cfg;
    char err[256], why[1024];
    setenv("RCOLL_TUNE", "allgather:0-8k=direct_read,8k-inf=direct;barrier=dissemination;BCAST:1-2m=knomial", 1);
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_OK && cfg.tune_count == 4, "tune: %s", err);
    CHECK(cfg.tune[0].coll == RCOLL_COLL_ALLGATHER && cfg.tune[0].lo == 0 && cfg.tune[0].hi == 8192 &&
              cfg.tune[1].lo == 8192 && cfg.tune[1].hi == RCOLL_TUNE_INF && cfg.tune[2].coll == RCOLL_COLL_BARRIER &&
              cfg.tune[3].coll == RCOLL_COLL_BCAST && cfg.tune[3].lo == 1 && cfg.tune[3].hi == 2u << 20,
          "tune ranges");
    /* several nodes, where the defaults would say gather_bcast / recursive_doubling */
    const rcoll_algo_t *a = rcoll_select(&cfg, RCOLL_COLL_ALLGATHER, 8191, 4, 1, 2, why, sizeof why);
    CHECK(a == &rcoll_allgather_direct_read && strstr(why, "user rule RCOLL_TUNE allgather:0-8k=direct_read"),
          "tune 8191: %s", why);
    a = rcoll_select(&cfg, RCOLL_COLL_ALLGATHER, 8192, 4, 1, 2, why, sizeof why);
    CHECK(a == &rcoll_allgather_direct && strstr(why, "8k-inf=direct"), "tune 8192: %s", why);
    a = rcoll_select(&cfg, RCOLL_COLL_BARRIER, 0, 4, 4, 2, why, sizeof why);
    CHECK(a == &rcoll_barrier_dissemination && strstr(why, "barrier=dissemination"), "tune barrier: %s", why);
    a = rcoll_select(&cfg, RCOLL_COLL_BCAST, 0, 4, 4, 2, why, sizeof why);
    CHECK(a == &rcoll_bcast_direct_read && strstr(why, "default rule"), "tune bcast 0 is outside: %s", why);
    CHECK(rcoll_select(&cfg, RCOLL_COLL_BCAST, (2u << 20) - 1, 4, 4, 2, NULL, 0) == &rcoll_bcast_knomial &&
              rcoll_select(&cfg, RCOLL_COLL_BCAST, 2u << 20, 4, 4, 2, NULL, 0) == &rcoll_bcast_scatter_allgather,
          "tune bcast range end");
    CHECK(rcoll_tune_names(&cfg, RCOLL_COLL_BCAST) && !rcoll_tune_names(&cfg, RCOLL_COLL_GATHER), "tune names");
    /* the later range wins; RCOLL_<COLL>_ALGO is coll=algo before RCOLL_TUNE; auto: the defaults */
    setenv("RCOLL_TUNE", "alltoall=bruck;alltoall:1k-4k=pairwise;gather:0-100=auto", 1);
    setenv("RCOLL_GATHER_ALGO", "binomial", 1);
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_OK && cfg.tune[2].algo == RCOLL_TUNE_AUTO, "tune 2: %s", err);
    unsetenv("RCOLL_GATHER_ALGO");
    CHECK(rcoll_select(&cfg, RCOLL_COLL_ALLTOALL, 1023, 4, 4, 8, NULL, 0) == &rcoll_alltoall_bruck &&
              rcoll_select(&cfg, RCOLL_COLL_ALLTOALL, 1024, 4, 4, 8, NULL, 0) == &rcoll_alltoall_pairwise &&
              rcoll_select(&cfg, RCOLL_COLL_ALLTOALL, 4096, 4, 4, 8, NULL, 0) == &rcoll_alltoall_bruck,
          "tune: the later range wins");
    a = rcoll_select(&cfg, RCOLL_COLL_GATHER, 99, 4, 4, 8, why, sizeof why);
    CHECK(a == &rcoll_gather_direct && strstr(why, "=auto") && strstr(why, "default rule"), "tune auto: %s", why);
    a = rcoll_select(&cfg, RCOLL_COLL_GATHER, 100, 4, 4, 8, why, sizeof why);
    CHECK(a == &rcoll_gather_binomial && strstr(why, "RCOLL_GATHER_ALGO=binomial"), "tune then env: %s", why);
    unsetenv("RCOLL_TUNE");
    /* bad values: the token named, RCOLL_ERR_INVALID */
    static const struct {
        const char *value, *token;
    } bad[] = {
        {"allgathr=ring", "'allgathr': unknown collective"},
        {"allgather=rong", "'rong': unknown allgather algorithm"},
        {"allgather:0-8q=ring", "'8q': not a size"},
        {"allgather:inf-8k=ring", "'inf': inf cannot start"},
        {"allgather:8k-4k=ring", "'8k-4k': empty range"},
        {"allgather:4k-4k=ring", "'4k-4k': empty range"},
        {"allgather:0-8k", "'0-8k': expected lo-hi=algo"},
        {"allgather:0-8k=ring,", "'': expected lo-hi=algo"},
        {"allgather", "'allgather': expected ':' or '='"},
        {"allgather=ring;;barrier=dissemination", "'': empty entry"},
        {"allgather=ring;", "'': empty entry"},
        {"barrier:0-8=dissemination", "barrier takes no ranges"},
        {"gatherv:0-1k=direct", "gatherv takes no ranges"},
        {"allgather=ring barrier=dissemination", "unknown allgather algorithm"},
        {" allgather=ring", "unknown collective"},
        {"allgather:-1-8=ring", "not a size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("RCOLL_TUNE", bad[i].value, 1);
        rcoll_status_t st = rcoll_config_from_env(&cfg, err, sizeof err);
        CHECK(st == RCOLL_ERR_INVALID && !strncmp(err, "RCOLL_TUNE=", 11) && strstr(err, " is not valid: expected ") &&
                  strstr(err, bad[i].token) && strlen(err) < sizeof err - 1,
              "bad RCOLL_TUNE=%s: %s", bad[i].value, err);
    }
    char many[2048] = "allgather:";
    for (int i = 0; i < RCOLL_TUNE_MAX + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d-%d=ring", i ? "," : "", i, i + 1);
    setenv("RCOLL_TUNE", many, 1);
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_ERR_INVALID && strstr(err, "more than 64"),
          "too many ranges: %s", err);
    many[strrchr(many, ',') - many] = '\0';
    setenv("RCOLL_TUNE", many, 1);
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_OK && cfg.tune_count == RCOLL_TUNE_MAX,
          "64 ranges: %s", err);
    unsetenv("RCOLL_TUNE");
}

/* An algorithm that does not apply to a call gives way to its declared fallback, exactly where
 * it used to run that one itself. */
static void check_fallbacks(void)
{
    rcoll_tl_t tl;
    memset(&tl, 0, sizeof tl);
    tl.inbox_bytes = 1u << 20;
    tl.zcopy_threshold = 32768;
    rcoll_args_t a;
    memset(&a, 0, sizeof a);
    a.tl = &tl;
    a.size = 4;
    const char *why;
    a.bytes = 1u << 20;
    CHECK(rcoll_fallback(&rcoll_allgather_direct_read, &a, &why) == &rcoll_allgather_direct_read && !why &&
              rcoll_fallback(&rcoll_bcast_direct_read, &a, &why) == &rcoll_bcast_direct_read && !why,
          "direct_read up to the outbox");
    a.bytes++;
    CHECK(rcoll_fallback(&rcoll_allgather_direct_read, &a, &why) == &rcoll_allgather_direct && why &&
              rcoll_fallback(&rcoll_bcast_direct_read, &a, &why) == &rcoll_bcast_scatter_allgather && why,
          "direct_read beyond the outbox");
    a.bytes = 1u << 18;
    CHECK(rcoll_fallback(&rcoll_alltoall_direct_read, &a, &why) == &rcoll_alltoall_direct_read, "alltoall P*m = outbox");
    a.bytes++;
    CHECK(rcoll_fallback(&rcoll_alltoall_direct_read, &a, &why) == &rcoll_alltoall_direct && why, "alltoall P*m > outbox");
    /* scatter: the published path, else single copy, else direct */
    a.bytes = 32767;
    CHECK(rcoll_fallback(&rcoll_scatter_direct_read, &a, &why) == &rcoll_scatter_direct_read, "scatter published");
    a.bytes = 32768;
    CHECK(rcoll_fallback(&rcoll_scatter_direct_read, &a, &why) == &rcoll_scatter_direct && why, "scatter without CMA");
    tl.single_copy = true;
    CHECK(rcoll_fallback(&rcoll_scatter_direct_read, &a, &why) == &rcoll_scatter_direct_read, "scatter with CMA");
    /* gather_scatter: rows inline or copied into rank 0's inbox */
    a.bytes = 8192; /* row 32k: at the zero-copy threshold */
    CHECK(rcoll_fallback(&rcoll_alltoall_gather_scatter, &a, &why) == &rcoll_alltoall_direct && why, "gather_scatter row 32k");
    a.bytes = 8191;
    CHECK(rcoll_fallback(&rcoll_alltoall_gather_scatter, &a, &why) == &rcoll_alltoall_gather_scatter && !why,
          "gather_scatter row below 32k");
    tl.inbox_bytes = 4 * 4 * 8191 - 1;
    CHECK(rcoll_fallback(&rcoll_alltoall_gather_scatter, &a, &why) == &rcoll_alltoall_direct, "gather_scatter inbox");
    a.bytes = 12; /* a row of 48 bytes is inline whatever the inbox */
    tl.inbox_bytes = 4096;
    tl.zcopy_threshold = 16;
    CHECK(rcoll_fallback(&rcoll_alltoall_gather_scatter, &a, &why) == &rcoll_alltoall_gather_scatter, "gather_scatter inline");
    CHECK(rcoll_fallback(&rcoll_alltoall_bruck, &a, &why) == &rcoll_alltoall_bruck && !why, "no not_for: runs");
}

static rcoll_status_t config_with(const char *var, const char *value, rcoll_config_t *cfg)
{
    char err[256];
    setenv(var, value, 1);
    rcoll_status_t st = rcoll_config_from_env(cfg, err, sizeof err);
    unsetenv(var);
    return st;
}

static void check_env(void)
{
    rcoll_config_t cfg;
    size_t v;
    CHECK(rcoll_parse_size("4k", &v) == 0 && v == 4096, "4k");
    CHECK(rcoll_parse_size("2MB", &v) == 0 && v == 2u << 20, "2MB");
    CHECK(rcoll_parse_size("12", &v) == 0 && v == 12, "12");
    CHECK(rcoll_parse_size("x", &v) != 0 && rcoll_parse_size("-1", &v) != 0 && rcoll_parse_size("4q", &v) != 0, "bad sizes");
    CHECK(config_with("RCOLL_WAIT", "block", &cfg) == RCOLL_OK && cfg.wait_mode == RCOLL_WAIT_BLOCK, "wait block");
    CHECK(config_with("RCOLL_WAIT", "sometimes", &cfg) == RCOLL_ERR_INVALID, "bad wait");
    CHECK(config_with("RCOLL_TIMEOUT", "2.5", &cfg) == RCOLL_OK && cfg.timeout_s == 2.5, "timeout");
    CHECK(config_with("RCOLL_TIMEOUT", "-3", &cfg) == RCOLL_ERR_INVALID, "negative timeout");
    CHECK(config_with("RCOLL_ZCOPY_THRESHOLD", "16k", &cfg) == RCOLL_OK && cfg.zcopy_threshold == 16384, "threshold");
    CHECK(config_with("RCOLL_ZCOPY_THRESHOLD", "lots", &cfg) == RCOLL_ERR_INVALID, "bad threshold");
    CHECK(config_with("RCOLL_LOG", "info", &cfg) == RCOLL_OK && cfg.log_level == RCOLL_LOG_INFO, "log info");
    CHECK(config_with("RCOLL_LOG", "loud", &cfg) == RCOLL_ERR_INVALID, "bad log");
    CHECK(config_with("RCOLL_NODE_MAP", "0,0,1,1", &cfg) == RCOLL_OK && !strcmp(cfg.node_map, "0,0,1,1"), "node map");
    CHECK(config_with("RCOLL_NODE_MAP", "0;1", &cfg) == RCOLL_ERR_INVALID, "bad node map");
    CHECK(config_with("RCOLL_PPN", "0", &cfg) == RCOLL_ERR_INVALID, "ppn 0");
    CHECK(config_with("RCOLL_BARRIER_FANIN", "3", &cfg) == RCOLL_OK && cfg.gather_fanin == 3, "fanin");
    CHECK(config_with("RCOLL_CMA", "0", &cfg) == RCOLL_OK && cfg.cma == RCOLL_CMA_OFF, "cma off");
    CHECK(config_with("RCOLL_CMA", "maybe", &cfg) == RCOLL_ERR_INVALID, "bad cma");
    CHECK(config_with("RCOLL_BARRIER_ALGO", "dissemination", &cfg) == RCOLL_OK &&
              !strcmp(cfg.algo[RCOLL_COLL_BARRIER], "dissemination"), "barrier algo");
    CHECK(config_with("RCOLL_SPIN_ITERS", "-5", &cfg) == RCOLL_ERR_INVALID, "bad spin");
}

/* copy_unchanged: whatever was in the slot before, the slot holds the source afterwards --
 * unchanged, changed at the first, a middle or the last byte, shorter, longer, below the
 * threshold, a slot another writer changed behind the table's back. */
static void check_copy_unchanged(void)
{
    enum { LEN = 5000 };
    rcoll_copy_seen_t *seen = NULL;
    static unsigned char src[LEN], slot[LEN];
    for (size_t i = 0; i < LEN; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    const struct {
        long change; /* byte of src changed before the copy (-1: none) */
        size_t len;
        int poke; /* the slot's byte 2500 written behind the table's back */
    } steps[] = {{-1, LEN, 0}, {-1, LEN, 0}, {LEN - 1, LEN, 0}, {0, LEN, 0}, {2500, LEN, 0},
                 {-1, LEN, 1}, {1024, LEN, 0}, {1023, LEN, 0}, {-1, 3000, 0}, {2999, 3000, 0},
                 {-1, LEN, 0}, {70, 100, 0}, {-1, 100, 0}, {10, 40, 0}};
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        if (steps[k].change >= 0)
            src[steps[k].change] ^= 0x5a;
        if (steps[k].poke)
            slot[2500] ^= 0xff;
        for (int stream = 0; stream < 4; stream++) { /* bit 1: the written lines demoted */
            copy_unchanged(&seen, 64, slot, src, steps[k].len, stream & 1, stream & 2 ? 8192 : 0);
            CHECK(!memcmp(slot, src, steps[k].len), "copy_unchanged step %zu (stream %d, demote "
                  "%d): the slot differs from the source", k, stream & 1, stream >> 1);
        }
    }
    free(seen);
}

/* A streamed block's line lies in its slot's head run, which an earlier call's head-run data
 * (up to 1 KB) overwrote: opening the stream leaves no sleeper count behind (a stale one made
 * every part's post a futex wake). One rank's board in plain memory, no processes. */
static void check_board_stream_line(void)
{
    rcoll_config_t cfg;
    char err[256];
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_OK, "default config: %s", err);
    int node_of[2] = {0, 0};
    rcoll_view_t v = {.rank = 0, .size = 2, .node_of = node_of, .node_count = 1, .cfg = &cfg};
    enum { SLOTS = 32, AREAS = 8, INLINE = 64 * 1024 };
    size_t bytes = rcoll_board_bytes(2, SLOTS, AREAS, INLINE);
    void *base = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    _Atomic uint64_t plain = UINT64_MAX;
    rcoll_board_t *b = base ? rcoll_board_attach(&v, base, SLOTS, AREAS, INLINE, INLINE, false, &plain) : NULL;
    CHECK(b != NULL, "board attached");
    if (!b) {
        free(base);
        return;
    }
    memset(base, 0, bytes);
    unsigned char data[1024];
    memset(data, 0xa5, sizeof data);
    rcoll_board_fill(b, rcoll_board_head(b, 1), data, sizeof data); /* call 1: its data in the run */
    rcoll_line_t *line = rcoll_board_stream_line(b, 0, 1 + SLOTS);
    CHECK(atomic_load(&line->waiters) != 0, "the head run's data lies over the stream line");
    rcoll_board_stream_open(b, 1 + SLOTS); /* the slot's next call streams */
    CHECK(atomic_load(&line->waiters) == 0 && atomic_load(&line->value) == 0,
          "an opened stream's line: %u sleepers, value %llu", (unsigned)atomic_load(&line->waiters),
          (unsigned long long)atomic_load(&line->value));
    rcoll_board_detach(b);
    free(base);
}

/* The probe of single copy (transport/cma_probe.c): measured unless there is nothing to decide,
 * and the verdict only where CMA is clearly slower than the two copies. */
static void check_cma_probe(void)
{
    rcoll_config_t cfg;
    rcoll_tl_probe_t p;
    CHECK(config_with("RCOLL_CMA", "0", &cfg) == RCOLL_OK, "cma off");
    rcoll_tl_probe(&cfg, &p);
    CHECK(!p.cma_ns && !p.copy_ns && !rcoll_tl_probe_cma_slow(&p), "no CMA: not measured");
    CHECK(config_with("RCOLL_ZCOPY_THRESHOLD", "32k", &cfg) == RCOLL_OK, "threshold");
    rcoll_tl_probe(&cfg, &p);
    CHECK(!p.cma_ns && !rcoll_tl_probe_cma_slow(&p), "threshold set: not measured");
    char err[256];
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_OK, "default config");
    rcoll_tl_probe(&cfg, &p); /* CMA on itself: allowed unless a seccomp filter refuses it */
    CHECK((p.cma_ns > 0) == (p.copy_ns > 0), "measured both or neither: cma %u ns, copy %u ns",
          p.cma_ns, p.copy_ns);
    CHECK(config_with("RCOLL_CMA", "slow", &cfg) == RCOLL_OK, "cma slow");
    rcoll_tl_probe(&cfg, &p);
    CHECK(!p.cma_ns && rcoll_tl_probe_cma_slow(&p), "RCOLL_CMA=slow: slow, not measured");
    CHECK(config_with("RCOLL_CMA", "fast", &cfg) == RCOLL_OK, "cma fast");
    rcoll_tl_probe(&cfg, &p);
    CHECK(!p.cma_ns && !rcoll_tl_probe_cma_slow(&p), "RCOLL_CMA=fast: not slow, not measured");
    rcoll_tl_probe_t slow = {30000, 10000, 0}, near = {14000, 10000, 0}, fast = {8000, 10000, 0},
                     half = {30000, 0, 0};
    CHECK(rcoll_tl_probe_cma_slow(&slow) && !rcoll_tl_probe_cma_slow(&near) &&
          !rcoll_tl_probe_cma_slow(&fast) && !rcoll_tl_probe_cma_slow(&half), "verdicts");
}

int main(void)
{
    for (int p = 1; p <= MAXP; p++) {
        check_dissemination(p);
        check_pairwise(p);
        check_bruck(p);
        check_recursive_doubling(p);
        check_kport(p, 0);
        check_kport(p, 1);
        check_kport(p, 2);
        check_kport(p, 5);
        check_tree(p, 7);
        check_tree(p, 1);
        check_tree(p, 3);
    }
    check_selection();
    check_colls();
    rcoll_config_t cfg;
    char err[256];
    CHECK(rcoll_config_from_env(&cfg, err, sizeof err) == RCOLL_OK, "default config: %s", err);
    check_default_choices(&cfg);
    check_tune();
    check_fallbacks();
    check_env();
    check_copy_unchanged();
    check_board_stream_line();
    check_cma_probe();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
