#!/usr/bin/env bash
# rcoll-info: --list names every algorithm, --explain gives a choice and a reason, a bad
# override is an error that lists the valid names.
set -u
info="$1"
pass=0 fail=0
expect() { # description, command..., grep pattern
    local what="$1" pattern="${@: -1}" out
    out=$("${@:2:$#-2}" 2>&1)
    if grep -q -- "$pattern" <<<"$out"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $what: $out"; fi
}
for a in dissemination pairwise_exchange gather_release flat_arrival recursive_doubling ring bruck direct \
    direct_read pairwise standard_exchange knomial scatter_allgather binomial; do
    expect "list $a" "$info" --list "$a"
done
for c in alltoall bcast gather scatter allgatherv alltoallv gatherv scatterv; do
    expect "list $c" "$info" --list "^$c:"
    expect "explain $c" "$info" --explain --coll $c --bytes 100 --size 5 "-> "
done
expect "forced bcast" env RCOLL_BCAST_ALGO=knomial "$info" --explain --coll bcast --bytes 8 --size 4 "RCOLL_BCAST_ALGO=knomial"
expect "bad alltoall override" env RCOLL_ALLTOALL_ALGO=nope "$info" --explain --coll alltoall --bytes 8 --size 4 "valid: .*standard_exchange"
expect "explain allgather" "$info" --explain --coll allgather --bytes 8 --size 4 "-> direct"
expect "explain why" "$info" --explain --coll barrier --bytes 0 --size 8 --ppn 8 "why: "
expect "explain ppn" "$info" --explain --coll allgather --bytes 1048576 --size 16 --ppn 16 "-> "
expect "forced" env RCOLL_ALLGATHER_ALGO=ring "$info" --explain --coll allgather --bytes 8 --size 4 "forced"
expect "bad override" env RCOLL_ALLGATHER_ALGO=nope "$info" --explain --coll allgather --bytes 8 --size 4 "valid: recursive_doubling"
expect "channels listed" "$info" --list "^network channels (RCOLL_NET): "
if "$info" --explain --coll nothing --size 2 >/dev/null 2>&1; then fail=$((fail + 1)); echo "FAIL bad coll accepted"; else pass=$((pass + 1)); fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
