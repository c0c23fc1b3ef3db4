#!/usr/bin/env bash
# Checks gpu-run.sh's sanitizer pool (no GPU needed; .ci/run runs it) over
# a fake bundle and a fake compute-sanitizer: every test of a large binary
# runs exactly once, in shards, the `alone` ones on their own and the
# switched-off ones never; no more runs than --jobs at once; the soak,
# gpu_faults and gpu_concurrency run while nothing else does; a run that fails beside others
# runs again alone (not a deferred one, not past the deadline); a failing
# run fails the whole; two runs whose names clean up alike keep apart.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bundle/tests" "$dir/bundle/examples" "$dir/running"
cp "$here/gpu-run.sh" "$dir/bundle/run.sh"
cp "$here/sanitizer-allow.txt" "$dir/bundle/"
# A test binary that filters as libtest does (each name given matches
# tests containing it, or equal to it under --exact; --skip drops tests
# containing its name) and records each test it runs with how many runs
# were in flight beside it; FAIL names a test that fails.
fake_test() { # NAME TESTS...
  local name=$1; shift
  cat >"$dir/bundle/tests/$name" <<EOF
#!/usr/bin/env bash
tests=($*)
if [ "\$1" = --list ]; then printf '%s: test\n' "\${tests[@]}"; exit 0; fi
exact=0 filters=() skips=()
while [ \$# -gt 0 ]; do
  case \$1 in
    --exact) exact=1 ;;
    --skip) skips+=("\$2"); shift ;;
    --*) ;;
    *) filters+=("\$1") ;;
  esac
  shift
done
touch "$dir/running/\$\$"
# The alone test outlasts the others, so that the runs after them overlap it.
case " \${filters[*]} " in *" alone::x "*) sleep 2 ;; *) sleep 0.3 ;; esac
[ "\${SLOW:-}" != $name ] || sleep 6
others=\$((\$(ls "$dir/running" | wc -l) - 1))
echo "$name process \$others" >>"$dir/ran"
rc=0
for t in "\${tests[@]}"; do
  run=\$((\${#filters[@]} == 0))
  for f in "\${filters[@]}"; do
    if [ \$exact = 1 ]; then [ "\$t" = "\$f" ] && run=1; else [[ \$t == *"\$f"* ]] && run=1; fi
  done
  for s in "\${skips[@]}"; do [[ \$t == *"\$s"* ]] && run=0; done
  [ \$run = 1 ] || continue
  echo "$name test \$t \$others" >>"$dir/ran"
  [ "\${FAIL:-}" != "\$t" ] || { [ -n "\${ONLY_BESIDE:-}" ] && [ \$others = 0 ]; } || rc=101
  [ "\${FAIL_ONCE:-}" != "\$t" ] || [ -e "$dir/failed-once" ] || { : >"$dir/failed-once"; rc=101; }
done
rm "$dir/running/\$\$"
[ \$rc = 0 ] && echo "test result: ok." || echo "test result: FAILED."
exit \$rc
EOF
  chmod +x "$dir/bundle/tests/$name"
}
fake_test gpu_attacks $(seq -f 'a%g' 1 23) alone::x control_raw_launch_without_tracking_races
fake_test gpu_small s1 s2 alone::p::q alone::p__q
fake_test gpu_soak soak
fake_test gpu_faults trap
fake_test gpu_concurrency threads
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
  : >"$dir/ran"; rm -f "$dir/failed-once"
  OUT=$dir/out COMPUTE_SANITIZER=$dir/san bash "$dir/bundle/run.sh" --sanitize \
    --tools memcheck "$@" >"$dir/out.txt" 2>&1 || rc=$?
  echo $rc
}
ran() { awk -v b="$1" '$1 == b && $2 == "test" { print $3 }' "$dir/ran" | sort; }

[ "$(pool --jobs 4)" = 0 ] || fail "a clean pool failed"
# gpu_attacks: 23 tests in 3 shards, and the alone test, each once.
want=$(printf '%s\n' $(seq -f 'a%g' 1 23) alone::x | sort)
[ "$(ran gpu_attacks)" = "$want" ] || fail "gpu_attacks' tests did not run each once: $(ran gpu_attacks | uniq -d | xargs)"
grep -q 'test gpu_attacks \[3/3\]' "$dir/out.txt" || fail "no third shard"
# gpu_small (4 tests) runs whole, but for its alone tests, each on its own.
[ "$(ran gpu_small | xargs)" = "alone::p::q alone::p__q s1 s2" ] || fail "gpu_small's tests: $(ran gpu_small | xargs)"
awk '$2 == "process" && $3 > 0 { found = 1 } END { exit !found }' "$dir/ran" || fail "no two runs overlapped"
awk '$2 == "process" && $3 > 3 { exit 1 }' "$dir/ran" || fail "more than 4 runs at once"
[ "$(awk '($1 == "gpu_soak" || $1 == "gpu_faults" || $1 == "gpu_concurrency") && $2 == "process" { print $3 }' "$dir/ran")" = "0
0
0" ] || fail "the soak, gpu_faults or gpu_concurrency ran beside other runs"
grep -q '^memcheck: 10 runs, 10 clean, 0 failed' "$dir/out.txt" || fail "wrong tally"
tail -n 1 "$dir/out.txt" | grep -q '^ALL SANITIZER RUNS CLEAN' || fail "no clean verdict"

# Two alone tests whose names clean up to the same file name: the failing
# one's verdict is not lost to the other's.
[ "$(FAIL=alone::p::q pool --jobs 4)" = 1 ] || fail "a failing run passed"
tail -n 1 "$dir/out.txt" | grep -q '^SANITIZER FAILED: memcheck/test gpu_small alone::p::q' || fail "the failure is not named"
grep -q '=== again, alone: memcheck test gpu_small alone::p::q' "$dir/out.txt" || fail "no second try alone"

# A run that fails only beside others is clean alone, and counted so.
[ "$(FAIL=s1 ONLY_BESIDE=1 pool --jobs 4)" = 0 ] || fail "a run clean alone failed the pool"
grep -q '^memcheck: 10 runs, 10 clean, 0 failed.*; 1 clean only alone' "$dir/out.txt" || fail "no count of runs clean only alone"

# A deferred run (alone already) is not tried again.
[ "$(FAIL_ONCE=soak pool --jobs 4)" = 1 ] || fail "a failed deferred run passed on a second try"
grep -q 'again, alone: memcheck test gpu_soak' "$dir/out.txt" && fail "a deferred run ran again"

# Past the deadline, a run that failed in the pool keeps its verdict.
[ "$(FAIL=s1 SLOW=gpu_small pool --jobs 4 --deadline 26)" = 1 ] || fail "a failed run passed past the deadline"
grep -q '^memcheck: .* 1 failed' "$dir/out.txt" || fail "the failed run's verdict was lost past the deadline"
grep -q 'not run again alone (deadline): memcheck test gpu_small' "$dir/out.txt" || fail "no word of the run not tried again"

[ "$(pool --jobs 1)" = 0 ] || fail "a pool of one failed"
grep -q 'test gpu_attacks \[' "$dir/out.txt" && fail "a pool of one sharded"
[ "$(ran gpu_attacks)" = "$want" ] || fail "a pool of one ran gpu_attacks' tests other than once each"
echo "sanitize-pool-selftest: 6 pools ok"
