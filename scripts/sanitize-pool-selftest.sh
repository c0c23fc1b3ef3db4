#!/usr/bin/env bash
# Checks gpu-run.sh's sanitizer pool (no GPU needed; .ci/run runs it) over
# a fake bundle and a fake compute-sanitizer: every test of a large binary
# runs exactly once, in shards, without the `alone` and switched-off ones;
# the soak and gpu_faults run while nothing else does; a run that fails
# beside others runs again alone; a failing run fails the whole.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bundle/tests" "$dir/bundle/examples" "$dir/running"
cp "$here/gpu-run.sh" "$dir/bundle/run.sh"
cp "$here/sanitizer-allow.txt" "$dir/bundle/"
# A test binary: lists NAMES, or runs the ones named (recording each, and
# how many runs were in flight beside it).
fake_test() { # NAME TESTS...
  local name=$1; shift
  cat >"$dir/bundle/tests/$name" <<EOF
#!/usr/bin/env bash
if [ "\$1" = --list ]; then printf '%s: test\n' $*; exit 0; fi
touch "$dir/running/\$\$"
# The alone test outlasts the others, so that the runs after them overlap it.
case " \$* " in *" alone::x "*) sleep 2 ;; *) sleep 0.3 ;; esac
others=\$((\$(ls "$dir/running" | wc -l) - 1))
skip=0
echo "$name process \$others" >>"$dir/ran"
for a in "\$@"; do
  case \$a in --skip) skip=1 ;; --*) ;; *) [ \$skip = 1 ] || echo "$name \$a \$others" >>"$dir/ran"; skip=0 ;; esac
done
rm "$dir/running/\$\$"
[ -z "\${FAIL_ONE:-}" ] || [ "$name" != gpu_small ] || exit 101
[ -z "\${FAIL_BESIDE:-}" ] || [ "$name" != gpu_small ] || [ \$others = 0 ] || exit 101
echo "test result: ok."
EOF
  chmod +x "$dir/bundle/tests/$name"
}
fake_test gpu_attacks $(seq -f 'a%g' 1 23) alone::x control_raw_launch_without_tracking_races
fake_test gpu_small s1 s2
fake_test gpu_soak soak
fake_test gpu_faults trap
cat >"$dir/san" <<'EOF'
#!/usr/bin/env bash
log=""
while [ $# -gt 0 ]; do
  case $1 in
    --version) echo "Version 0 (fake)"; exit 0 ;;
    --log-file) log=$2; shift 2 ;;
    --*) shift; shift || true ;;
    *) break ;;
  esac
done
rc=0; "$@" || rc=$?
echo "========= ERROR SUMMARY: 0 errors" >"$log"
exit $rc
EOF
chmod +x "$dir/san"
fail() { echo "sanitize-pool-selftest: $*"; cat "$dir/out.txt"; exit 1; }
pool() { # ARGS...: runs the pool; its output in out.txt, its status echoed
  local rc=0
  OUT=$dir/out COMPUTE_SANITIZER=$dir/san bash "$dir/bundle/run.sh" --sanitize \
    --tools memcheck "$@" >"$dir/out.txt" 2>&1 || rc=$?
  echo $rc
}

[ "$(pool --jobs 4)" = 0 ] || fail "a clean pool failed"
# gpu_attacks: 23 tests in 3 shards, each once; the alone test on its own.
want=$(printf '%s\n' $(seq -f 'a%g' 1 23) | sort)
got=$(awk '$1 == "gpu_attacks" && $2 ~ /^a[0-9]/ { print $2 }' "$dir/ran" | sort)
[ "$got" = "$want" ] || fail "gpu_attacks' tests ran $(echo $got | wc -w) times, not each once"
grep -q '^gpu_attacks alone::x ' "$dir/ran" || fail "the alone test did not run"
! grep -q control_raw "$dir/ran" || fail "a switched-off test ran"
grep -q 'test gpu_attacks \[3/3\]' "$dir/out.txt" || fail "no third shard"
# gpu_small (2 tests) runs whole.
grep -q 'clean: memcheck test gpu_small ' "$dir/out.txt" || fail "gpu_small did not run whole"
awk '$2 == "process" && $3 > 0 { found = 1 } END { exit !found }' "$dir/ran" || fail "no two runs overlapped"
[ "$(awk '($1 == "gpu_soak" || $1 == "gpu_faults") && $2 == "process" { print $3 }' "$dir/ran")" = "0
0" ] || fail "the soak or gpu_faults ran beside other runs"
grep -q '^memcheck: 7 runs, 7 clean, 0 failed' "$dir/out.txt" || fail "wrong tally"
tail -n 1 "$dir/out.txt" | grep -q '^ALL SANITIZER RUNS CLEAN' || fail "no clean verdict"

: >"$dir/ran"
[ "$(FAIL_ONE=1 pool --jobs 3)" = 1 ] || fail "a failing run passed"
tail -n 1 "$dir/out.txt" | grep -q '^SANITIZER FAILED: memcheck/test gpu_small' || fail "the failure is not named"

# A run that fails only beside others is clean alone, and counted so.
: >"$dir/ran"
[ "$(FAIL_BESIDE=1 pool --jobs 4)" = 0 ] || fail "a run clean alone failed the pool"
grep -q '^memcheck: 7 runs, 7 clean, 0 failed.*; 1 clean only alone' "$dir/out.txt" || fail "no count of runs clean only alone"
grep -q '^=== again, alone: test gpu_small' "$dir/out.txt" || fail "gpu_small did not run again alone"

: >"$dir/ran"
[ "$(pool --jobs 1)" = 0 ] || fail "a pool of one failed"
grep -q 'test gpu_attacks \[' "$dir/out.txt" && fail "a pool of one sharded"
echo "sanitize-pool-selftest: 4 pools ok"
