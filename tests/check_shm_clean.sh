#!/usr/bin/env bash
# Nothing rcoll made may stay in /dev/shm: run a matrix job (normal exits) and part of the failure
# test (a rank killed with a team alive), then look for rcoll segments whose creator is gone; and
# a small /dev/shm raises no bus error.
# Segments are named /rcoll-<pid of the creating rank>-...; ones of live processes (another
# test running at the same time) are not counted.
set -u
matrix="$1"
failure="$(dirname "$matrix")/test_failure"
# Both kinds of segment: memfd (the default: never in /dev/shm) and POSIX (RCOLL_SHM=posix,
# also the fallback where a rank cannot open its leader's memfd).
for shm in memfd posix; do
    RCOLL_SHM=$shm "$matrix" --quick --np 3,5 --coll allgather >/dev/null ||
        { echo "matrix run failed (RCOLL_SHM=$shm)"; exit 1; }
    # The failure test's cases for a collective of each kind (the whole of it runs as peer_failure).
    [ -x "$failure" ] && { RCOLL_SHM=$shm TEST_COLL=barrier,allgather,bcast,alltoallv "$failure" >/dev/null ||
        { echo "failure test failed (RCOLL_SHM=$shm)"; exit 1; }; }
done
# A /dev/shm far smaller than a team's segment (containers often give 64 MB): the default
# memfd segments take none of it, so the matrix passes (POSIX segments as before raised SIGBUS
# here at 64 KB). Needs a mount namespace (root); said so where there is none.
if unshare --mount true 2>/dev/null; then
    unshare --mount sh -c "mount -t tmpfs -o size=1m tmpfs /dev/shm &&
        '$matrix' --quick --np 5 --coll alltoall,allgather" >/dev/null ||
        { echo "matrix run with a 1 MB /dev/shm failed"; exit 1; }
else
    echo "not run: the matrix with a 1 MB /dev/shm (no mount namespace here)"
fi
left=0
for f in /dev/shm/rcoll-*; do
    [ -e "$f" ] || continue
    pid=$(basename "$f" | cut -d- -f2)
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "left behind: $f"
        left=$((left + 1))
    fi
done
echo "$([ $left -eq 0 ] && echo 1 || echo 0) passed, $([ $left -eq 0 ] && echo 0 || echo 1) failed"
[ $left -eq 0 ]
