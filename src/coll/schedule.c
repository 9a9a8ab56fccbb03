/* Peer and step schedules: see schedule.h. */
#include "coll/schedule.h"

int rcoll_pof2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

int rcoll_ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

int rcoll_kport_radix(int kport, int n)
{
    int r = (kport > 0 ? kport : 1) + 1;
    if (r > n)
        r = n;
    return r < 2 ? 2 : r;
}

int rcoll_ceil_log(int n, int r)
{
    int steps = 0;
    for (long p = 1; p < n; p *= r)
        steps++;
    return steps;
}

int rcoll_dissemination_to(int rank, int n, int k)
{
    return (int)(((long)rank + (1L << k)) % n);
}

int rcoll_dissemination_from(int rank, int n, int k)
{
    long d = (1L << k) % n;
    return (int)(((long)rank - d + n) % n);
}

int rcoll_rd_partner(int vrank, int k)
{
    return vrank ^ (1 << k);
}

int rcoll_rd_group_ranges(int vrank, int k, int n, int first[2], int count[2])
{
    int p2 = rcoll_pof2_floor(n), extra = n - p2;
    int base = vrank & ~((1 << k) - 1), len = 1 << k;
    int ranges = 0;
    first[ranges] = base;
    count[ranges++] = len;
    /* virtual ranks base..base+len-1 below `extra` also own the folded blocks v + p2 */
    int folded_end = base + len < extra ? base + len : extra;
    if (folded_end > base) {
        first[ranges] = base + p2;
        count[ranges++] = folded_end - base;
    }
    return ranges;
}

int rcoll_tree_parent(int rank, int fanin)
{
    return rank == 0 ? -1 : (rank - 1) / fanin;
}

int rcoll_tree_first_child(int rank, int fanin, int n)
{
    long c = (long)rank * fanin + 1;
    return c < n ? (int)c : n;
}

int rcoll_tree_child_count(int rank, int fanin, int n)
{
    long first = (long)rank * fanin + 1;
    if (first >= n)
        return 0;
    long last = first + fanin;
    return (int)((last < n ? last : n) - first);
}
