/* Peer and step schedules shared by the algorithms and checked by the unit tests against a
 * simple reference for every team size. Pure functions of (rank, size, step). */
#ifndef RCOLL_COLL_SCHEDULE_H
#define RCOLL_COLL_SCHEDULE_H

#include <stddef.h>

/* Largest power of two <= n (n >= 1). */
int rcoll_pof2_floor(int n);
/* Number of rounds of ceil(log2(n)). */
int rcoll_ceil_log2(int n);

/* Radix of a k-port schedule [qian-phd]: k+1, at least 2 and at most n (k < 1 counts as 1). */
int rcoll_kport_radix(int kport, int n);
/* Steps of a radix-r schedule: ceil(log_r n). */
int rcoll_ceil_log(int n, int r);

/* Dissemination (barrier) and Bruck (allgather), round k: send to (rank + 2^k) mod n and
 * receive from (rank - 2^k) mod n -- Bruck's blocks travel the other way, see bruck.c. */
int rcoll_dissemination_to(int rank, int n, int k);
int rcoll_dissemination_from(int rank, int n, int k);

/* Recursive doubling over the largest power of two p2 <= n: ranks >= p2 are "extra" and fold
 * onto rank - p2. Virtual rank v (< p2) owns blocks v and, if v < n - p2, v + p2. */
int rcoll_rd_partner(int vrank, int k);
/* Blocks owned after step k-1 by the group of virtual ranks containing `vrank` (size 2^k):
 * up to two contiguous ranges [first, first+count). Returns the number of ranges. */
int rcoll_rd_group_ranges(int vrank, int k, int n, int first[2], int count[2]);

/* Gather tree with fan-in f: parent of rank r > 0 is (r - 1) / f; children r*f+1 .. r*f+f. */
int rcoll_tree_parent(int rank, int fanin);
int rcoll_tree_first_child(int rank, int fanin, int n);
int rcoll_tree_child_count(int rank, int fanin, int n);

#endif
