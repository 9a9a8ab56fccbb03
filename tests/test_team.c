/* Team creation over the fork launcher: the node map (hostname, RCOLL_NODE_MAP, RCOLL_PPN)
 * gives the same outcome on every rank (a team of the right node count, on one node or several
 * (a network channel between them; a build without one: RCOLL_ERR_UNSUPPORTED), with a barrier
 * that works; a malformed map: RCOLL_ERR_INVALID), bad arguments are
 * refused, and 2000 teams created and destroyed in a row leave no file descriptor, mapping or
 * /dev/shm entry behind. */
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

    int shm_before = count_entries("/dev/shm", "rcoll-");
    int bad = rcoll_fork_run(3, churn_main, NULL, 300);
    int shm_after = count_entries("/dev/shm", "rcoll-");
    int churn_ok = !bad && shm_after <= shm_before;
    printf("%s 2000 teams created and destroyed: no growth in fds, mappings, /dev/shm\n", churn_ok ? "ok" : "FAIL");
    churn_ok ? passed++ : failed++;
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
