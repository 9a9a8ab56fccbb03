/* Unit tests without processes: every algorithm's peer and step schedule for P = 1..64 checked
 * against a simple reference (who knows what after each step), the selection table, and the
 * parsing of the environment. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/allgather/blocks.h"
#include "coll/schedule.h"
#include "config/config.h"
#include "select/select.h"

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
    CHECK(rcoll_algo_find(RCOLL_COLL_BARRIER, "ring") == NULL, "ring is no barrier");
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
    check_env();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
