/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): many cycles of
 * MPI_Comm_dup(MPI_COMM_WORLD), MPI_Allgather of 8 bytes (checked), MPI_Barrier every 16th
 * cycle, MPI_Comm_free. Every cycle creates and frees one team, so leaks show: at the end the
 * open file descriptors must equal those after cycle 100, VmRSS must not have grown by 8 MB or
 * more, and /dev/shm must hold no "rcoll" entry that this job left behind.
 * Usage: test_mpi_comm_cycles [cycles (default 10000)]. */
#include <mpi.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECKPOINT 100
#define RSS_LIMIT_KB (8 * 1024)
#define MAX_SHM 256

static int wrank;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_comm_cycles (world rank %d): ", wrank);       \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

/* Names in /dev/shm that contain "rcoll"; returns how many (at most max). */
static int list_shm(char names[][256], int max)
{
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max)
        if (strstr(e->d_name, "rcoll") != NULL) {
            snprintf(names[n], 256, "%s", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

static int in_list(const char *name, char names[][256], int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* Whether an entry name carries the pid of one of the job's ranks as "-<pid>-" or "-<pid>". */
static int names_job(const char *name, const int *pids, int n)
{
    for (int i = 0; i < n; i++) {
        char key[32];
        int len = snprintf(key, sizeof key, "-%d", pids[i]);
        for (const char *p = strstr(name, key); p != NULL; p = strstr(p + 1, key))
            if (p[len] == '-' || p[len] == '\0' || p[len] == '.' || p[len] == '_')
                return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    long cycles = argc > 1 ? atol(argv[1]) : 10000;
    if (cycles <= CHECKPOINT)
        cycles = CHECKPOINT + 1;

    /* Entries that existed before (other jobs on this machine) do not count. */
    static char before[MAX_SHM][256], after[MAX_SHM][256];
    int nbefore = wrank == 0 ? list_shm(before, MAX_SHM) : 0;

    uint64_t *recv = malloc((size_t)wsize * sizeof(uint64_t));
    if (recv == NULL)
        FAIL("out of memory");
    int fds0 = -1;
    long rss0 = -1;
    double t0 = MPI_Wtime(), t100 = t0;
    for (long c = 0; c < cycles; c++) {
        if (c == CHECKPOINT) {
            fds0 = count_fds();
            rss0 = rss_kb();
            t100 = MPI_Wtime();
        }
        MPI_Comm dup;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS)
            FAIL("MPI_Comm_dup failed in cycle %ld", c);
        uint64_t mine = ((uint64_t)c << 20) | (uint64_t)wrank;
        for (int r = 0; r < wsize; r++)
            recv[r] = UINT64_MAX;
        if (MPI_Allgather(&mine, 8, MPI_BYTE, recv, 8, MPI_BYTE, dup) != MPI_SUCCESS)
            FAIL("MPI_Allgather failed in cycle %ld", c);
        for (int r = 0; r < wsize; r++)
            if (recv[r] != (((uint64_t)c << 20) | (uint64_t)r))
                FAIL("cycle %ld: block %d is %#llx, expected %#llx", c, r,
                     (unsigned long long)recv[r],
                     (unsigned long long)(((uint64_t)c << 20) | (uint64_t)r));
        if (c % 16 == 0 && MPI_Barrier(dup) != MPI_SUCCESS)
            FAIL("MPI_Barrier failed in cycle %ld", c);
        if (MPI_Comm_free(&dup) != MPI_SUCCESS)
            FAIL("MPI_Comm_free failed in cycle %ld", c);
    }
    double t1 = MPI_Wtime();
    int fds1 = count_fds();
    long rss1 = rss_kb();
    free(recv);

    /* Every rank has freed every communicator (PMPI_Allreduce: no team of the drop-in). */
    int bad_local = 0, bad = 0;
    if (fds1 != fds0) {
        fprintf(stderr, "test_mpi_comm_cycles rank %d: %d open fds after cycle %d, %d at the end\n",
                wrank, fds0, CHECKPOINT, fds1);
        bad_local = 1;
    }
    if (rss0 < 0 || rss1 < 0 || rss1 - rss0 >= RSS_LIMIT_KB) {
        fprintf(stderr, "test_mpi_comm_cycles rank %d: VmRSS %ld kB after cycle %d, %ld kB at "
                        "the end\n", wrank, rss0, CHECKPOINT, rss1);
        bad_local = 1;
    }
    PMPI_Allreduce(&bad_local, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad)
        FAIL("resources grew over %ld cycles (see above)", cycles);

    /* /dev/shm: entries that appeared during the run and are still there a moment later.
     * rcoll names its segments /rcoll-<creator pid>-...: one with the pid of a rank of this job
     * is a leak; other new ones belong to other jobs on the machine and are only reported. */
    int mypid = (int)getpid();
    int *pids = malloc((size_t)wsize * sizeof(int));
    if (pids == NULL)
        FAIL("out of memory");
    MPI_Gather(&mypid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (wrank == 0) {
        int nleft = 0, nafter = 0;
        for (int attempt = 0; attempt < 20; attempt++) {
            nafter = list_shm(after, MAX_SHM);
            nleft = 0;
            for (int i = 0; i < nafter; i++)
                if (!in_list(after[i], before, nbefore) && names_job(after[i], pids, wsize))
                    nleft++;
            if (nleft == 0)
                break;
            struct timespec d = { 0, 50000000 };
            nanosleep(&d, NULL);
        }
        for (int i = 0, shown = 0; i < nafter && shown < 10; i++)
            if (!in_list(after[i], before, nbefore) && ++shown)
                fprintf(stderr, "test_mpi_comm_cycles: /dev/shm/%s %s\n", after[i],
                        names_job(after[i], pids, wsize) ? "left behind by this job"
                                                         : "appeared (another job's?)");
        if (nleft != 0)
            FAIL("%d rcoll entries of this job left in /dev/shm", nleft);
        printf("OK test_mpi_comm_cycles (np %d, %ld cycles in %.2f s, %.1f us per cycle after "
               "warm-up; fds %d -> %d, VmRSS %ld -> %ld kB)\n",
               wsize, cycles, t1 - t0, (t1 - t100) * 1e6 / (double)(cycles - CHECKPOINT), fds0,
               fds1, rss0, rss1);
    }
    free(pids);
    MPI_Finalize();
    return 0;
}
