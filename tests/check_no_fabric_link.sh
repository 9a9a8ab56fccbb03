#!/usr/bin/env bash
# rcoll's libraries load no libfabric until a team uses the libfabric channel (src/net/ofi/lib.c
# opens it then): Debian's libfabric links libpsm_infinipath, whose load-time crash handler made
# every process with the MPI drop-in preloaded write *.btr files into its working directory and
# exit with status 1 instead of the signal when it crashed. ldd of each library must show
# neither; the ofi tests show that the channel still opens libfabric when used.
set -u
build="$1"
fails=0
checked=0
for lib in "$build"/librcoll.so "$build"/librcoll-mpi.so "$build"/librcoll-mpi-mpich.so; do
    [ -e "$lib" ] || continue
    checked=$((checked + 1))
    deps="$(ldd "$lib")" || { echo "FAIL: ldd $lib"; fails=$((fails + 1)); continue; }
    bad="$(grep -E 'libfabric|libpsm' <<<"$deps")"
    if [ -n "$bad" ]; then
        echo "FAIL: $(basename "$lib") loads at start:"; echo "$bad"
        fails=$((fails + 1))
    else
        echo "ok: $(basename "$lib") loads no libfabric or psm library"
    fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no library found in $build"; exit 1; }
echo "$((checked - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
