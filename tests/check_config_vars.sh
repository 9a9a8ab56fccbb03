#!/usr/bin/env bash
# Every RCOLL_* variable rcoll reads is known to the configuration fuzz test and documented:
# the names in src/ and tools/ (string literals "RCOLL_...", as getenv and config.c's tables
# use them; RCOLL_<COLL>_ALGO built in config.c) against `test_config_fuzz --list` and
# docs/tuning.md. A getenv of a computed name outside src/config/config.c fails too: its name
# could not be checked here.
# Usage: check_config_vars.sh <test_config_fuzz> <source dir>
set -u
fuzz="$1" root="$2"
fail=0
listed=$("$fuzz" --list | cut -f1 | sort -u) || { echo "FAIL $fuzz --list"; exit 1; }
in_src=$(grep -rhoE '"RCOLL_[A-Z0-9_]+"' "$root/src" "$root/tools" | tr -d '"' | sort -u)
for v in $(comm -23 <(echo "$in_src") <(echo "$listed")); do
    echo "FAIL $v is read in src/ but unknown to test_config_fuzz (add it to its table)"
    fail=1
done
for v in $(comm -13 <(echo "$in_src") <(echo "$listed")); do
    if [[ $v == *_ALGO ]] && grep -q '"_ALGO"' "$root/src/config/config.c"; then continue; fi
    echo "FAIL $v is listed by test_config_fuzz but no longer read in src/"
    fail=1
done
computed=$(grep -rnE 'getenv\([^")]' "$root/src" "$root/tools" | grep -v '^[^:]*src/config/config\.c:')
if [ -n "$computed" ]; then
    echo "FAIL getenv of a computed name outside src/config/config.c (name not checkable):"
    echo "$computed"
    fail=1
fi
doc="$root/docs/tuning.md"
for v in $listed; do
    if [[ $v == *_ALGO ]]; then # one row: `RCOLL_<COLL>_ALGO` (`BARRIER`, `ALLGATHER`, ...)
        coll=${v#RCOLL_}
        coll=${coll%_ALGO}
        grep -F '`RCOLL_<COLL>_ALGO`' "$doc" | grep -qF "\`$coll\`" && continue
    elif grep -qF "\`$v\`" "$doc"; then
        continue
    fi
    echo "FAIL $v is not documented in docs/tuning.md"
    fail=1
done
n=$(echo "$listed" | wc -l)
[ $fail -eq 0 ] && echo "ok: $n RCOLL_* variables, all known to test_config_fuzz and documented"
exit $fail
