/* Team creation over the fork launcher: the node map (hostname, RCOLL_NODE_MAP, RCOLL_PPN)
 * gives the same outcome on every rank (a team of the right node count, on one node or several
 * (a network channel between them; a build without one: RCOLL_ERR_UNSUPPORTED), with a barrier
 * that works; a malformed map: RCOLL_ERR_INVALID), bad arguments are
 * refused, a member without a context (ctx NULL) makes every member's creation fail alike at
 * once (and the next team of the same processes works), and 2000 teams created and destroyed in a row leave no file descriptor, mapping or
 * /dev/shm entry behind. Teams made again and again over the same processes take over the
 * segments of destroyed ones (RCOLL_SHM_POOL): 150 rounds of one or two live teams, each
 * running checked blocking, rotating-root, nonblocking and persistent calls, map only a few
 * distinct memory files (with RCOLL_SHM_POOL=0, one per team), and every result is right. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/oob_fork.h"
#include "rcoll/rcoll.h"

typedef struct {
    const char *map;      /* RCOLL_NODE_MAP, or NULL */
    const char *ppn;      /* RCOLL_PPN, or NULL */
    rcoll_status_t expect;
    int nodes;            /* expected node count when it succeeds */
} case_t;

static int count_entries(const char *dir, const char *needle)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += !needle || strstr(e->d_name, needle);
    if (d)
        closedir(d);
    return n;
}

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const case_t *c = arg;
    rcoll_context_t *ctx;
    rcoll_team_t *team = NULL;
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 2;
    rcoll_status_t st = rcoll_team_create(ctx, oob, &team);
    int ok = st == c->expect;
    if (ok && st == RCOLL_OK)
        ok = rcoll_team_node_count(team) == c->nodes && rcoll_team_size(team) == oob->size &&
             rcoll_team_rank(team) == rank && rcoll_barrier(team) == RCOLL_OK;
    if (!ok)
        fprintf(stderr, "FAIL rank %d map=%s ppn=%s: got %s\n", rank, c->map ? c->map : "-",
                c->ppn ? c->ppn : "-", rcoll_strerror(st));
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return ok ? 0 : 1;
}

/* Rank 1 has no context in the second of three creations: every rank gets RCOLL_ERR_INVALID
 * (nobody waits for it), and the third, a kept segment's taker where the pool allows, works. */
static int absent_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)arg;
    rcoll_context_t *ctx;
    rcoll_team_t *team = NULL;
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 2;
    int ok = rcoll_team_create(ctx, oob, &team) == RCOLL_OK && rcoll_barrier(team) == RCOLL_OK;
    rcoll_team_destroy(team);
    team = NULL;
    rcoll_status_t st = rcoll_team_create(rank == 1 ? NULL : ctx, oob, &team);
    ok = ok && st == RCOLL_ERR_INVALID && team == NULL;
    st = rcoll_team_create(ctx, oob, &team);
    ok = ok && st == RCOLL_OK && rcoll_barrier(team) == RCOLL_OK;
    if (!ok)
        fprintf(stderr, "FAIL rank %d: absent member: %s\n", rank, rcoll_strerror(st));
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return ok ? 0 : 1;
}

static int churn_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)arg;
    rcoll_context_t *ctx;
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 2;
    int fds = 0, maps = 0;
    char buf[8 * 4];
    for (int i = 0; i < 2000; i++) {
        rcoll_team_t *team;
        if (rcoll_team_create(ctx, oob, &team) != RCOLL_OK)
            return 3;
        if (rcoll_allgather(team, RCOLL_IN_PLACE, buf, 8) != RCOLL_OK)
            return 4;
        rcoll_team_destroy(team);
        if (i == 10) {
            fds = count_entries("/proc/self/fd", NULL);
            maps = count_entries("/proc/self/map_files", NULL);
        }
    }
    int fds_end = count_entries("/proc/self/fd", NULL), maps_end = count_entries("/proc/self/map_files", NULL);
    rcoll_context_destroy(ctx);
    if (fds_end != fds || maps_end > maps) {
        fprintf(stderr, "FAIL rank %d: fds %d -> %d, mappings %d -> %d after 2000 teams\n", rank,
                fds, fds_end, maps, maps_end);
        return 1;
    }
    return 0;
}

/* ---- teams that take over kept segments ---- */

/* The distinct memory files of teams ("memfd:rcoll-N") this process has mapped so far. */
typedef struct {
    char names[256][32];
    int count;
} seen_t;

static void note_segments(seen_t *seen)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        const char *m = strstr(line, "memfd:rcoll-");
        if (!m)
            continue;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(m, " \n"), m);
        int known = 0;
        for (int i = 0; i < seen->count && !known; i++)
            known = strcmp(seen->names[i], name) == 0;
        if (!known && seen->count < 256)
            snprintf(seen->names[seen->count++], sizeof seen->names[0], "%s", name);
    }
    if (f)
        fclose(f);
}

static unsigned char pat(int src, int dst, int round, size_t i)
{
    return (unsigned char)(src * 31 + dst * 7 + round * 13 + (int)i * 3 + 1);
}

/* reuse_calls' requests on `team`, blocks of b bytes: a nonblocking alltoall, then a
 * persistent allgather started twice with new contents; 0 when all are right. */
static int reuse_requests(rcoll_team_t *team, int round, unsigned char *send, unsigned char *recv,
                          size_t b)
{
    int me = rcoll_team_rank(team), n = rcoll_team_size(team), bad = 0;
    for (int d = 0; d < n; d++)
        for (size_t i = 0; i < b; i++)
            send[(size_t)d * b + i] = pat(me, d, round, i);
    rcoll_request_t *req = NULL;
    bad = rcoll_ialltoall(team, send, recv, b, &req) != RCOLL_OK || rcoll_wait(req) != RCOLL_OK;
    rcoll_request_free(req);
    for (int r = 0; !bad && r < n; r++)
        for (size_t i = 0; !bad && i < b; i++)
            bad = recv[(size_t)r * b + i] != pat(r, me, round, i);
    req = NULL;
    bad = bad || rcoll_allgather_init(team, send, recv, b, &req) != RCOLL_OK;
    for (int k = 0; !bad && k < 2; k++) {
        for (size_t i = 0; i < b; i++)
            send[i] = pat(me, k, round + 1, i);
        bad = rcoll_start(req) != RCOLL_OK || rcoll_wait(req) != RCOLL_OK;
        for (int r = 0; !bad && r < n; r++)
            for (size_t i = 0; !bad && i < b; i++)
                bad = recv[(size_t)r * b + i] != pat(r, k, round + 1, i);
    }
    rcoll_request_free(req);
    return bad;
}

/* One round's calls on `team`, every result checked; 0 when all are right. `nb`: the
 * nonblocking and persistent calls too (a team without them hands its kept segment on with the
 * board's numbers it started from: the next team's posts must not read older words as theirs). */
static int reuse_calls(rcoll_team_t *team, int round, int nb)
{
    int me = rcoll_team_rank(team), n = rcoll_team_size(team);
    static const size_t sizes[] = {8, 100, 3000, 70000};
    size_t m = sizes[round % 4];
    unsigned char *send = malloc(m * (size_t)n), *recv = malloc(m * (size_t)n);
    int bad = !send || !recv;
    /* allgather */
    for (size_t i = 0; !bad && i < m; i++)
        send[i] = pat(me, 0, round, i);
    bad = bad || rcoll_allgather(team, send, recv, m) != RCOLL_OK;
    for (int r = 0; !bad && r < n; r++)
        for (size_t i = 0; !bad && i < m; i++)
            bad = recv[(size_t)r * m + i] != pat(r, 0, round, i);
    /* bcast, three back to back with a rotating root */
    for (int k = 0; !bad && k < 3; k++) {
        int root = (round + k) % n;
        for (size_t i = 0; i < m; i++)
            recv[i] = me == root ? pat(root, k, round, i) : 0;
        bad = rcoll_bcast(team, recv, m, root) != RCOLL_OK;
        for (size_t i = 0; !bad && i < m; i++)
            bad = recv[i] != pat(root, k, round, i);
    }
    /* the requests: alltoall nonblocking, allgather persistent */
    if (nb && !bad)
        bad = reuse_requests(team, round, send, recv, m < 512 ? m : 512);
    /* allreduce of doubles */
    double x[5], y[5];
    for (int i = 0; i < 5; i++)
        x[i] = me + i + round;
    bad = bad || rcoll_allreduce(team, x, y, 5, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM) != RCOLL_OK;
    for (int i = 0; !bad && i < 5; i++)
        bad = y[i] != (double)n * (i + round) + (double)n * (n - 1) / 2;
    free(send);
    free(recv);
    return bad;
}

typedef struct {
    int limit;         /* most distinct segments mapped (-1: at least one per team) */
    const char *lead;  /* RCOLL_CMA of rank 0 and of the others, or NULL: as set */
    const char *other;
} reuse_case_t;

/* 150 rounds: a team (every third round two, destroyed in either order), checked calls on
 * each (every fourth round's first team without requests). Exit status 5 when more distinct
 * segments were mapped than the case allows. */
static int reuse_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const reuse_case_t *c = arg;
    int limit = c->limit;
    if (c->lead) /* the verdicts of the single-copy probe differ between the processes */
        setenv("RCOLL_CMA", rank == 0 ? c->lead : c->other, 1);
    rcoll_context_t *ctx;
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 2;
    seen_t *seen = calloc(1, sizeof *seen);
    int teams = 0, st = seen ? 0 : 2;
    for (int round = 0; round < 150 && !st; round++) {
        rcoll_team_t *a = NULL, *b = NULL;
        if (rcoll_team_create(ctx, oob, &a) != RCOLL_OK)
            st = 3;
        teams++;
        if (!st && round % 3 == 0) {
            st = rcoll_team_create(ctx, oob, &b) != RCOLL_OK ? 3 : 0;
            teams++;
        }
        note_segments(seen);
        if (!st && (reuse_calls(a, round, round % 4 != 1) || (b && reuse_calls(b, round + 7, 1))))
            st = 4;
        if (st)
            fprintf(stderr, "FAIL rank %d round %d: %s\n", rank, round,
                    st == 3 ? "team creation failed" : "wrong result or error");
        if (round % 2) {
            rcoll_team_destroy(a);
            rcoll_team_destroy(b);
        } else {
            rcoll_team_destroy(b);
            rcoll_team_destroy(a);
        }
    }
    if (!st && (limit < 0 ? seen->count < teams : seen->count > limit)) {
        fprintf(stderr, "FAIL rank %d: %d teams mapped %d distinct segments (expected %s %d)\n",
                rank, teams, seen->count, limit < 0 ? "one per team:" : "at most", limit < 0 ? teams : limit);
        st = 5;
    }
    free(seen);
    rcoll_context_destroy(ctx);
    return st;
}

int main(void)
{
    static const case_t cases[] = {
        {NULL, NULL, RCOLL_OK, 1},
        {"0,0,0,0", NULL, RCOLL_OK, 1},
        {"3,3,3,3", NULL, RCOLL_OK, 1},
        {"0,0,1,1", NULL, RCOLL_OK, 2},
        {"0,1,2,0", NULL, RCOLL_OK, 3},
        {"0,0,1", NULL, RCOLL_ERR_INVALID, 0},
        {"0,0,1,1,1", NULL, RCOLL_ERR_INVALID, 0},
        {NULL, "4", RCOLL_OK, 1},
        {NULL, "2", RCOLL_OK, 2},
        {NULL, "1", RCOLL_OK, 4},
    };
    char nets[64];
    rcoll_network_channels(nets, sizeof nets);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        case_t mine = cases[i], *c = &mine;
        if (c->nodes > 1 && !nets[0]) /* no network channel built in: refused on every rank */
            c->expect = RCOLL_ERR_UNSUPPORTED;
        c->map ? setenv("RCOLL_NODE_MAP", c->map, 1) : unsetenv("RCOLL_NODE_MAP");
        c->ppn ? setenv("RCOLL_PPN", c->ppn, 1) : unsetenv("RCOLL_PPN");
        int bad = rcoll_fork_run(4, rank_main, (void *)c, 60);
        printf("%s team of 4, RCOLL_NODE_MAP=%s RCOLL_PPN=%s -> %s on every rank\n", bad ? "FAIL" : "ok",
               c->map ? c->map : "(unset)", c->ppn ? c->ppn : "(unset)", rcoll_strerror(c->expect));
        bad ? failed++ : passed++;
    }
    unsetenv("RCOLL_NODE_MAP");
    unsetenv("RCOLL_PPN");

    rcoll_context_t *ctx;
    rcoll_team_t *team;
    rcoll_oob_t bad_oob = {NULL, NULL, 0, 2};
    int refused = rcoll_context_create(&ctx) == RCOLL_OK &&
                  rcoll_team_create(ctx, &bad_oob, &team) == RCOLL_ERR_INVALID &&
                  rcoll_team_create(ctx, NULL, &team) == RCOLL_ERR_INVALID;
    rcoll_context_destroy(ctx);
    printf("%s bad arguments to rcoll_team_create are refused\n", refused ? "ok" : "FAIL");
    refused ? passed++ : failed++;

    int absent_bad = rcoll_fork_run(3, absent_main, NULL, 60);
    printf("%s a member without a context: every member's creation fails alike, the next works\n",
           absent_bad ? "FAIL" : "ok");
    absent_bad ? failed++ : passed++;

    int shm_before = count_entries("/dev/shm", "rcoll-");
    int bad = rcoll_fork_run(3, churn_main, NULL, 300);
    int shm_after = count_entries("/dev/shm", "rcoll-");
    int churn_ok = !bad && shm_after <= shm_before;
    printf("%s 2000 teams created and destroyed: no growth in fds, mappings, /dev/shm\n", churn_ok ? "ok" : "FAIL");
    churn_ok ? passed++ : failed++;

    /* Kept segments: a few distinct ones serve 200 teams (two live at a time, the pool's 4
     * kept); RCOLL_SHM_POOL=0 maps one per team. Both with every result checked. */
    /* With the processes' single-copy verdicts alike (measured, or set) and differing both
     * ways: a team plans by its first rank's, the others offer what fits either. */
    static const reuse_case_t pooled[] = {
        {8, NULL, NULL}, {8, "slow", "fast"}, {8, "fast", "slow"}, {8, "slow", "slow"}};
    unsetenv("RCOLL_SHM_POOL");
    for (size_t i = 0; i < sizeof pooled / sizeof *pooled; i++) {
        bad = rcoll_fork_run(3, reuse_main, (void *)&pooled[i], 300);
        printf("%s 200 teams of the same 3 processes take over kept segments (at most %d distinct; "
               "RCOLL_CMA of rank 0 / the others: %s / %s), checked calls on each\n",
               bad ? "FAIL" : "ok", pooled[i].limit, pooled[i].lead ? pooled[i].lead : "(as set)",
               pooled[i].other ? pooled[i].other : "(as set)");
        bad ? failed++ : passed++;
    }
    static const reuse_case_t unpooled = {-1, NULL, NULL};
    setenv("RCOLL_SHM_POOL", "0", 1);
    bad = rcoll_fork_run(3, reuse_main, (void *)&unpooled, 300);
    unsetenv("RCOLL_SHM_POOL");
    printf("%s RCOLL_SHM_POOL=0: a segment per team, checked calls on each\n", bad ? "FAIL" : "ok");
    bad ? failed++ : passed++;
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
