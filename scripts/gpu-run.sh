#!/usr/bin/env bash
# gpu-run.sh: the runner that scripts/gpu-bundle copies to .gpu/run.sh. It
# runs the bundled binaries on a machine with a CUDA GPU; it needs bash,
# coreutils and awk there, not Rust, python or the source tree.
#
#   bash .gpu/run.sh [FILTER]
#       Every bundled test binary (--test-threads=4 --include-ignored: the
#       GPU tests are ignored unless asked for), every example, the
#       dynamically linked smoke binary (linked/), every benchmark (--bench). 300 s per binary (GPU_RUN_TIMEOUT).
#   bash .gpu/run.sh --sanitize [--tools LIST] [--quick] [--jobs N] [FILTER]
#       Every test binary (--test-threads=1) and every example under NVIDIA
#       compute-sanitizer, once per tool: memcheck (--leak-check full),
#       racecheck, synccheck, initcheck (LIST: some of them, comma-separated).
#       N runs at once (SANITIZE_JOBS, 8); with N > 1 a test binary of more
#       than SANITIZE_SHARD tests (10) runs in shards of that many, one
#       process each; the soak and gpu_faults run alone after the others,
#       and so does, again, a run that failed beside others (the summary
#       counts the runs clean only alone).
#       Fails on any report except the CUDA API errors listed in
#       sanitizer-allow.txt (errors that negative tests provoke on purpose).
#       Tests in a module named `alone` run each in a process of its own.
#       600 s per test binary and 300 s per example, per tool
#       (SANITIZE_TEST_TIMEOUT, SANITIZE_EXAMPLE_TIMEOUT). --quick: tools
#       other than memcheck skip the gpu_attacks* test binaries, to bound
#       the run time (they attack the host API, which memcheck covers; most
#       of their kernels run in the other binaries too). Skips are printed.
#   bash .gpu/run.sh --classify LOG [ALLOW]
#       Only classify one saved compute-sanitizer output (default allow-list:
#       sanitizer-allow.txt next to this script); exit 0 if clean.
#   --deadline SECONDS (both run modes): start nothing after this many
#       seconds and shorten the timeouts to fit, so that the summary is
#       printed before an outer limit kills the run; what did not run counts
#       as a failure.
#
# The soak (tests/gpu_soak.rs) runs CUDA_GRAPH_SOAK_CYCLES cycles (10,000;
# 100 under --sanitize), the concurrency test CUDA_GRAPH_STRESS_THREADS
# threads (8; 2 under --sanitize) for CUDA_GRAPH_STRESS_SECS seconds (30;
# 3 under --sanitize). Under --sanitize CUDA_GRAPH_SANITIZE=1 is set: the
# profiling test and example then skip their timing comparisons.
#
# FILTER keeps the runs whose name ("test gpu_runtime", "example updates",
# "bench graphs") contains it. A GPU test fails without a driver; an example
# or bench that prints that it found no driver fails too. libnvrtc's and libcublas's folders are
# put on LD_LIBRARY_PATH.
# compute-sanitizer is $COMPUTE_SANITIZER, else /usr/local/cuda/bin's, else
# the newest /usr/local/cuda-*/bin's, else the one on PATH.
#
# Logs go to $OUT if set, else next to this script: gpu-run.log, or
# sanitize.log plus, for each sanitizer run, sanitizer/<tool>--<run>.out (the
# program's output) and .sanitizer (compute-sanitizer's, via --log-file).
# The last line is "ALL GPU RUNS PASSED ..." / "FAILED: ...", or
# "ALL SANITIZER RUNS CLEAN ..." / "SANITIZER FAILED: ..."; the exit status
# is non-zero on failure.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
all_tools=memcheck,racecheck,synccheck,initcheck

# The sanitizer-report classifier (awk, so the GPU machine needs no python).
# Input: the allow-list, then one compute-sanitizer run's output (only the
# lines holding its "=========" prefix are read; program output may be mixed
# in). A top-level line (one space after the prefix) is a report unless it is
# the banner, a summary or "Target application returned an error" (the exit
# status says that); indented lines are a report's details. Clean means:
# every "Program hit ..." line is on the allow-list, no other report, no
# non-zero LEAK or RACECHECK summary, and an ERROR SUMMARY whose count the
# allowed lines explain (racecheck prints only its RACECHECK SUMMARY). An
# allow-list entry `REPORT at KERNEL` allows a kernel's report (e.g.
# `Barrier error detected. Divergent thread(s) in warp at sq_diff_sum`): the
# report's first line, then the function of its `at FUNCTION+0xOFFSET`
# detail (its argument list dropped). An entry `Leaked from FUNCTION`
# allows a leak whose allocation backtrace holds FUNCTION's frame (a test
# that leaks on purpose, as `mem::forget` would). Last line printed: "allowed N errors E".
# mode=unseen instead prints the allow-list entries missing from a file of
# normalised entries that matched (what the classifier appends to `seen`).
classify_awk='
function norm(s) {
  gsub(/\r/, "", s)
  sub(/^[ \t]+/, "", s)
  if (substr(s, 1, 9) == "=========") s = substr(s, 10)
  gsub(/[ \t]+/, " ", s)
  sub(/^ /, "", s); sub(/ $/, "", s)
  if (substr(s, 1, 12) == "Program hit ") s = substr(s, 13)
  sub(/\.$/, "", s)
  return s
}
# A legacy-mangled Rust symbol the tool left as is (one with a `.llvm.N`
# suffix, say: `_ZN11gpu_attacks4test17h0123456789abcdefE.llvm.42`) as a
# path (`gpu_attacks::test`), its hash dropped; any other name unchanged.
function demangle(f,   out, n, comp) {
  if (substr(f, 1, 3) != "_ZN") return f
  f = substr(f, 4); out = ""
  while (match(f, /^[0-9]+/)) {
    n = substr(f, 1, RLENGTH) + 0
    comp = substr(f, RLENGTH + 1, n)
    f = substr(f, RLENGTH + 1 + n)
    if (comp ~ /^h[0-9a-fA-F]+$/ && substr(f, 1, 1) == "E") break
    out = out (out == "" ? "" : "::") comp
  }
  return out
}
function report(kind, text) {
  nbad++
  ctx = 0
  if (nbad <= 30) { print "  " kind ": " text; ctx = 12 }
}
FILENAME == allow {
  line = $0
  gsub(/\r/, "", line)
  if (line ~ /^[ \t]*#/ || line ~ /^[ \t]*$/) next
  sub(/[ \t]+#.*$/, "", line)
  n = norm(line)
  if (n != "") { allowed[n] = 1; orig[n] = line }
  next
}
mode == "unseen" { saw[$0] = 1; next }
{
  gsub(/\r/, "")
  i = index($0, "=========")  # not always at the start when mixed with program output
  if (i == 0) next
  rest = substr($0, i + 9)
  if (rest ~ /^[ \t]*$/) next
  if (rest ~ /^(  |\t)/) {
    sub(/^[ \t]+/, "", rest)
    if (pending != "" && pkind == "leak") {
      # A leak: allowed when "Leaked from FUNCTION" is listed and a frame
      # of its allocation backtrace is that function (hash dropped);
      # otherwise reported when its details end.
      if (rest ~ /^Host Frame:/) {
        f = rest; sub(/^Host Frame:[ \t]*/, "", f); sub(/::h[0-9a-fA-F]+([ \t].*)?$/, "", f)
        sub(/[ \t]+\[0x.*$/, "", f); f = demangle(f)
        key = norm("Leaked from " f)
        if (key in allowed) {
          nallowed++; nleaks++; if (seen != "") print key >> seen
          pending = ""; quiet = 1
        }
      }
      next
    }
    if (pending != "") {
      # A kernel report: allowed when "REPORT at FUNCTION" is listed.
      key = ""
      if (rest ~ /^at /) {
        f = substr(rest, 4); sub(/\+0x[0-9a-fA-F]+.*$/, "", f); sub(/\(.*$/, "", f)
        key = norm(pending " at " f)
      }
      if (key != "" && key in allowed) {
        nallowed++; if (seen != "") print key >> seen
        pending = ""; quiet = 1; next
      }
      report(pkind, pending); pending = ""
    }
    if (quiet) next
    if (ctx > 0) { print "      | " rest; ctx-- }
    next
  }
  if (pending != "") { report(pkind, pending); pending = "" }
  quiet = 0
  body = rest
  sub(/^[ \t]+/, "", body); sub(/[ \t]+$/, "", body)
  ctx = 0
  if (body ~ /^Program hit /) {
    n = norm(body)
    if (n in allowed) { nallowed++; if (seen != "") print n >> seen; next }
    report("API error not on the allow-list", body)
    next
  }
  if (body ~ /^ERROR SUMMARY:/) {
    nsum++
    if (match(body, /[0-9]+/)) errs += substr(body, RSTART, RLENGTH)
    next
  }
  if (body ~ /^(LEAK|RACECHECK) SUMMARY:/) {
    # racecheck prints no ERROR SUMMARY: its "RACECHECK SUMMARY: N hazards
    # displayed (E errors, W warnings)" is the summary, and any hazard fails.
    if (body ~ /^RACECHECK/) nsum++
    # A leak summary counts allocations; allowed leaks (above) explain some.
    if (body ~ /^LEAK/) {
      if (match(body, /in [0-9]+ allocation/) && substr(body, RSTART + 3, RLENGTH - 14) + 0 > nleaks)
        report("leak", body)
      next
    }
    if (match(body, /[0-9]+/) && substr(body, RSTART, RLENGTH) + 0 > 0)
      report("race", body)
    next
  }
  if (body ~ /^COMPUTE-SANITIZER/) next
  if (body ~ /^Target application returned an error/) next  # its exit status is checked
  kind = "unrecognised sanitizer report"
  if (body ~ /^Invalid __/ || body ~ /out of bounds|[Mm]isaligned|[Ii]llegal/) kind = "memory error"
  else if (body ~ /^Leaked [0-9]/) kind = "leak"
  else if (body ~ /Race reported|[Hh]azard/) kind = "race"
  else if (body ~ /^Uninitialized /) kind = "uninitialized read"
  else if (body ~ /^Barrier error|[Ss]ynchroni/) kind = "synchronization error"
  pending = body; pkind = kind  # reported unless its `at` line is allowed
}
END {
  if (mode == "unseen") {
    for (n in allowed) if (!(n in saw)) print orig[n]
    exit 0
  }
  if (pending != "") report(pkind, pending)
  if (nbad > 30) print "  ... and " (nbad - 30) " more report(s)"
  if (nsum == 0) {
    nbad++
    print "  incomplete: no ERROR SUMMARY line (the sanitizer did not finish)"
  } else if (errs > nallowed) {
    nbad++
    print "  unexplained: ERROR SUMMARY counts " errs " error(s), the allow-list explains " (nallowed + 0)
  }
  print "allowed " (nallowed + 0) " errors " (nsum ? errs + 0 : "?")
  exit (nbad > 0)
}'

classify() { # LOG ALLOW [SEEN]
  [ -r "$1" ] || { echo "  cannot read $1"; return 2; }
  [ -r "$2" ] || { echo "  cannot read the allow-list $2"; return 2; }
  awk -v allow="$2" -v seen="${3:-}" -v mode=classify "$classify_awk" "$2" "$1"
}

usage() { sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

mode=run filter="" tools=$all_tools quick=0 deadline=0
jobs=${SANITIZE_JOBS:-8} shard=${SANITIZE_SHARD:-10}
while [ $# -gt 0 ]; do
  case $1 in
    --sanitize) mode=sanitize ;;
    --tools) tools=${2:?--tools needs a list}; shift ;;
    --tools=*) tools=${1#*=} ;;
    --quick) quick=1 ;;
    --deadline) deadline=${2:?--deadline needs seconds}; shift ;;
    --deadline=*) deadline=${1#*=} ;;
    --jobs) jobs=${2:?--jobs needs a count}; shift ;;
    --jobs=*) jobs=${1#*=} ;;
    --classify)
      log_in=${2:?--classify needs a file}
      allow_in=${3:-$here/sanitizer-allow.txt}
      if classify "$log_in" "$allow_in"; then echo "clean"; exit 0; fi
      echo "NOT clean"; exit 1 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ -z "$filter" ] || { echo "run.sh: one FILTER only" >&2; exit 2; }
       filter=$1 ;;
  esac
  shift
done
[[ $deadline =~ ^[0-9]+$ ]] || { echo "run.sh: --deadline takes whole seconds" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ && $shard =~ ^[1-9][0-9]*$ ]] ||
  { echo "run.sh: --jobs and SANITIZE_SHARD take counts from 1" >&2; exit 2; }
for t in ${tools//,/ }; do
  [[ ",$all_tools," == *",$t,"* ]] || { echo "run.sh: unknown tool $t (tools: $all_tools)" >&2; exit 2; }
done

export RUST_BACKTRACE=1
# Ignored tests that run only when an environment variable asks (a racy
# control, an open hole, the trap test's child): skipped, so that none
# reports a pass for work it did not do.
switched_off=(--skip control_raw_launch_without_tracking_races
  --skip a_host_closure_calling_cuda_survives_a_concurrent_exec_destruction --skip trap_child)
if [ "$mode" = sanitize ]; then
  # The soak and the concurrency test exist to run long; under the
  # sanitizers (10-100x slower) a short run checks the same code paths.
  export CUDA_GRAPH_SOAK_CYCLES=${CUDA_GRAPH_SOAK_CYCLES:-100}
  export CUDA_GRAPH_STRESS_SECS=${CUDA_GRAPH_STRESS_SECS:-3}
  export CUDA_GRAPH_STRESS_THREADS=${CUDA_GRAPH_STRESS_THREADS:-2}
  # Timings under a sanitizer say nothing about the program: the profiling
  # checks that compare times skip those comparisons (and say so).
  export CUDA_GRAPH_SANITIZE=1
fi
# Under memcheck, two threads that launch device-launch graphs at once hang
# (every thread waits, no CPU; 2026-12-01, compute-sanitizer 2025.3.1):
# without that part the concurrency test ends in 3 s. The soak and the
# device_launch example still run device launches under every tool.
concurrency_skip=${CUDA_GRAPH_LOAD_SKIP:-device}
# Under racecheck, two threads whose cycles hold two kinds of conditional
# node, a graph-memory allocation and a host node (or a whole-graph update
# while a launch runs) fault: CUDA_ERROR_ILLEGAL_ADDRESS at the next
# synchronize, 0 hazards (2026-12-02, bisected with CUDA_GRAPH_LOAD_SKIP).
# The same test is clean under memcheck, synccheck and initcheck and without
# a sanitizer; scripts/sanitizer-repro/workload_threads.cu (the same cycle
# in plain CUDA C++, no graph-runtime) faults the same way under racecheck
# and only there: the tool's fault (README, "Test").
# racecheck's concurrency run leaves the conditionals out; the soak, the
# runtime tests and the conditionals example run them under racecheck.
racecheck_concurrency_skip=${CUDA_GRAPH_LOAD_SKIP:-device,cond}
logdir=${OUT:-$here}
mkdir -p "$logdir"

# The folder of a CUDA library (NAME: libnvrtc, libcublas): the CUDA
# toolkit's folders first, then the loader cache, then a search.
find_lib_dir() { # NAME
  local d p
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/*/lib \
           $(ls -d /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/*/lib 2>/dev/null | sort -rV); do
    compgen -G "$d/$1.so*" >/dev/null && { echo "$d"; return; }
  done
  p=$(ldconfig -p 2>/dev/null | awk -v lib="$1.so" 'index($1, lib) == 1 { print $NF; exit }')
  [ -n "$p" ] || p=$(find / -xdev -name "$1.so*" 2>/dev/null | head -n 1)
  [ -n "$p" ] && dirname "$p"
}

nvrtc_dir=$(find_lib_dir libnvrtc)
if [ -n "$nvrtc_dir" ]; then
  export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# libcublas (the cublas example and gpu_cublas). cudarc loads
# `libcublas.so` or `libcublas.so.<its CUDA major, 12 here>`; a toolkit of
# another major (CUDA 13: libcublas.so.13 only, without the unversioned
# development link) gets a link under the name cudarc loads.
cublas_dir=$(find_lib_dir libcublas)
if [ -n "$cublas_dir" ]; then
  if [ ! -e "$cublas_dir/libcublas.so" ] && [ ! -e "$cublas_dir/libcublas.so.12" ]; then
    real=$(ls "$cublas_dir"/libcublas.so.* 2>/dev/null | sort -V | head -n 1)
    links=$(mktemp -d)
    ln -s "$real" "$links/libcublas.so"
    cublas_dir="$links:$cublas_dir"
  fi
  export LD_LIBRARY_PATH="$cublas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

header() { # LOG
  {
    echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname 2>/dev/null)"
    [ -r "$here/BUNDLE.txt" ] && sed 's/^/# /' "$here/BUNDLE.txt"
    nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not found"
    echo "libcuda: $(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1/ { print $NF; exit }' | grep . || echo 'not in the loader cache')"
    echo "libnvrtc: ${nvrtc_dir:-NOT FOUND (kernels compiled by NVRTC will fail)}"
    echo "libcublas: ${cublas_dir:-NOT FOUND (the cuBLAS example and tests will fail)}"
  } | tee -a "$1"
}

join() { local IFS=,; echo "$*" | sed 's/,/, /g'; }

wanted() { [ -z "$filter" ] || [[ "$1" == *"$filter"* ]]; }

# Seconds a run may take: its limit, cut to what --deadline leaves (0: no time left).
budget() { # LIMIT
  if [ "$deadline" -eq 0 ]; then echo "$1"; return; fi
  local left=$((deadline - SECONDS))
  if [ "$left" -lt 20 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

# ---------------------------------------------------------------- plain runs
if [ "$mode" = run ]; then
  log=$logdir/gpu-run.log
  : >"$log"
  header "$log"
  limit=${GPU_RUN_TIMEOUT:-300}
  fails=() passed=0
  run() { # NAME COMMAND...
    local name=$1; shift
    wanted "$name" || return 0
    local t; t=$(budget "$limit")
    echo "=== $name" | tee -a "$log"
    if [ "$t" -eq 0 ]; then
      echo "--- NOT RUN (deadline): $name" | tee -a "$log"; fails+=("$name (not run)"); return 0
    fi
    local part start=$SECONDS rc=0
    part=$(mktemp)
    timeout -k 10 "$t" "$@" >"$part" 2>&1 || rc=$?
    local secs=$((SECONDS - start))
    if [ $rc -eq 0 ] && grep -q 'no CUDA driver on this machine' "$part"; then
      rc=skip
    fi
    case $rc in
      0) echo "--- ok: $name (${secs} s)" >>"$part"; passed=$((passed + 1)) ;;
      skip) echo "--- FAILED (it found no CUDA driver, so it ran nothing on a GPU): $name" >>"$part"
            fails+=("$name") ;;
      124 | 137) echo "--- FAILED (timed out after ${t} s): $name" >>"$part"; fails+=("$name (timeout)") ;;
      *) echo "--- FAILED (exit $rc, ${secs} s): $name" >>"$part"; fails+=("$name") ;;
    esac
    cat "$part" >>"$log"
    grep -E 'test result|panicked|FAILED|error|--- ok' "$part" | tail -n 12
    rm -f "$part"
  }
  for t in "$here"/tests/*; do
    [ -x "$t" ] || continue
    # Tests in a module named `alone` run each in a process of their own
    # here too: some change what every stream of the process may do (a
    # capture of the per-thread default stream makes the legacy stream,
    # and cudarc calls that use it, refuse work in every thread).
    alone=$("$t" --list 2>/dev/null | sed -n 's/^\(.*alone::[^ ]*\): test$/\1/p')
    run "test ${t##*/}" "$t" --test-threads=4 --include-ignored "${switched_off[@]}" --skip alone::
    for a in $alone; do run "test ${t##*/} $a" "$t" --include-ignored --exact "$a"; done
  done
  for e in "$here"/examples/*; do [ -x "$e" ] && run "example ${e##*/}" "$e"; done
  # Binaries linked against libcuda and libnvrtc (cudarc's dynamic-linking),
  # not loading them: the loader must find the real libraries.
  for l in "$here"/linked/*; do [ -x "$l" ] && run "linked ${l##*/}" "$l"; done
  for b in "$here"/benches/*; do [ -x "$b" ] && run "bench ${b##*/}" "$b" --bench; done
  echo
  if [ $passed -eq 0 ] && [ ${#fails[@]} -eq 0 ]; then
    echo "FAILED: nothing ran (no bundled binary${filter:+ matches '$filter'}) (log: $log)" | tee -a "$log"
    exit 1
  fi
  if [ ${#fails[@]} -eq 0 ]; then
    echo "ALL GPU RUNS PASSED ($passed runs${filter:+, filter '$filter'}; log: $log)" | tee -a "$log"
    exit 0
  fi
  echo "FAILED: $(join "${fails[@]}") ($passed passed; log: $log)" | tee -a "$log"
  exit 1
fi

# ----------------------------------------------------------- sanitizer runs
log=$logdir/sanitize.log
: >"$log"
header "$log"
allow=$here/sanitizer-allow.txt
sanitizer=${COMPUTE_SANITIZER:-}
if [ -z "$sanitizer" ]; then
  for c in /usr/local/cuda/bin/compute-sanitizer \
           $(ls -d /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | sort -rV); do
    [ -x "$c" ] && { sanitizer=$c; break; }
  done
fi
[ -n "$sanitizer" ] || sanitizer=$(command -v compute-sanitizer 2>/dev/null || true)
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
  echo "SANITIZER FAILED: compute-sanitizer not found (looked in /usr/local/cuda*/bin and PATH; set COMPUTE_SANITIZER)" | tee -a "$log"
  exit 1
fi
if [ ! -r "$allow" ]; then
  echo "SANITIZER FAILED: no allow-list at $allow (rebuild the bundle with scripts/gpu-bundle)" | tee -a "$log"
  exit 1
fi
rawdir=$logdir/sanitizer
rm -rf "$rawdir" && mkdir -p "$rawdir"
seen=$rawdir/allowed-seen.txt
: >"$seen"
test_limit=${SANITIZE_TEST_TIMEOUT:-600}
example_limit=${SANITIZE_EXAMPLE_TIMEOUT:-300}
{
  echo "compute-sanitizer: $sanitizer ($("$sanitizer" --version 2>/dev/null | grep -m1 -i '^version' || echo 'version unknown'))"
  printf 'tools: %s; timeouts: %s s per test binary, %s s per example' "$tools" "$test_limit" "$example_limit"
  [ -n "$filter" ] && printf "; filter '%s'" "$filter"
  [ "$deadline" -gt 0 ] && printf '; deadline %s s' "$deadline"
  printf '; %s runs at once, test binaries in shards of %s tests' "$jobs" "$shard"
  echo
  echo "allow-list: $(grep -cvE '^[[:space:]]*(#|$)' "$allow") entries ($allow)"
  if [ $quick = 1 ]; then
    echo "--quick: racecheck, synccheck and initcheck SKIP the gpu_attacks* test binaries (memcheck runs them)"
  fi
} | tee -a "$log"

# Runs go through a pool of $jobs processes at once (compute-sanitizer's
# time is mostly the host's: 16 cores, one GPU). A test binary of more
# than $shard tests runs in shards of that many (each its own process, the
# tests named with --exact), so that no single run holds the pool's tail
# (gpu_attacks under racecheck alone took over 509 s in one process).
# Runs that measure or fault the whole device (the soak's device memory,
# gpu_faults' trap), or that the tools fault beside others (the
# concurrency test under memcheck), wait for the pool to drain and run
# alone, after it.
# Each run leaves $base.result: its status, allowed errors and name.
deferred=() skipped_runs=()
# One run under TOOL: writes the verdict to its .result and its block of
# the log at once.
run_one() { # TOOL NAME LIMIT BASE COMMAND...
  local tool=$1 name=$2 t=$3 base=$4; shift 4
  local opts=(--tool "$tool" --print-limit 0)
  # Every report printed (not the first 100): the ERROR SUMMARY's count
  # must be explained by allowed reports one by one.
  [ "$tool" = memcheck ] && opts+=(--leak-check full)
  # Not the child processes tests spawn: gpu_faults' trap test runs a
  # kernel that traps, on purpose, in a child (its every later call fails).
  opts+=(--target-processes application-only)
  # The program's output and the sanitizer's go to separate files: mixed in
  # one, a report could be cut by the program's lines.
  local start=$SECONDS rc=0
  local out="$base.out" san="$base.sanitizer" block="$base.block"
  : >"$san"
  local skip=${CUDA_GRAPH_LOAD_SKIP:-} note=""
  if [[ $name == "test gpu_concurrency"* ]]; then
    skip=$concurrency_skip
    [ "$tool" = racecheck ] && skip=$racecheck_concurrency_skip
    note="    (workload parts left out: CUDA_GRAPH_LOAD_SKIP=$skip; run.sh says why)"
  fi
  CUDA_GRAPH_LOAD_SKIP=$skip timeout -k 30 "$t" "$sanitizer" "${opts[@]}" --log-file "$san" "$@" >"$out" 2>&1 || rc=$?
  local secs=$((SECONDS - start)) verdict crc=0 n_allowed=0 why=()
  if [ -s "$san" ] && ! grep -q '=========' "$san"; then
    sed -i 's/^/========= /' "$san"  # a sanitizer that writes its log file unprefixed
  fi
  verdict=$(classify "$san" "$allow" "$seen") || crc=$?
  [[ $(printf '%s\n' "$verdict" | tail -n 1) =~ ^allowed\ ([0-9]+)\ errors ]] && n_allowed=${BASH_REMATCH[1]}
  case $rc in
    0) ;;
    124 | 137) why+=("timed out after ${t} s") ;;
    *) why+=("exit $rc") ;;
  esac
  grep -q 'no CUDA driver on this machine' "$out" && why+=("no CUDA driver")
  [ $crc -ne 0 ] && why+=("unexplained sanitizer reports")
  {
    echo "=== $tool: $name (done)"
    [ -n "$note" ] && echo "$note"
    grep -E '^test result|panicked at|^failures:|^    [a-z_:]+$' "$out" | head -n 20
    if [ ${#why[@]} -eq 0 ]; then
      echo "--- clean: $tool $name (${secs} s; ${n_allowed} allowed API errors)"
    else
      printf '%s\n' "$verdict" | sed '$d'
      if [ $rc -ne 0 ] && [[ $name == example* ]]; then tail -n 5 "$out" | sed 's/^/  output| /'; fi
      echo "--- FAILED ($(printf '%s; ' "${why[@]}")${secs} s): $tool $name; output: $out, $san"
    fi
  } >"$block"
  if [ ${#why[@]} -eq 0 ]; then
    printf 'clean\n%s\n%s\n' "$n_allowed" "$name" >"$base.result"
  else
    printf 'failed\n%s\n%s\n' "$n_allowed" "$name" >"$base.result"
  fi
  say_file "$block"
}

# Prints FILE to stdout and the log, one writer at a time (so that the
# pool's blocks do not interleave).
say_file() { # FILE
  if [ -n "$have_flock" ]; then
    flock "$log" sh -c 'cat "$1" >>"$2"; cat "$1"' _ "$1" "$log"
  else
    cat "$1" >>"$log"; cat "$1"
  fi
}
say() { # LINE
  local f; f=$(mktemp)
  printf '%s\n' "$1" >"$f"; say_file "$f"; rm -f "$f"
}
have_flock=$(command -v flock || true)
run_id=0

# Starts one run under $tool when the pool has room (or defers it).
sanitize() { # NAME LIMIT COMMAND...
  local name=$1 limit=$2; shift 2
  wanted "$name" || return 0
  local why=""
  if [ $quick = 1 ] && [ "$tool" != memcheck ] && [[ $name == "test gpu_attacks"* ]]; then
    why="--quick: only memcheck runs gpu_attacks*"
  fi
  # synccheck reports every barrier of a kernel in a WHILE body as divergent
  # and fails the launch: a correct kernel in C++ shows it too
  # (scripts/sanitizer-repro/barrier.cu, mode 3). Our kernels avoid block
  # barriers there; cuBLAS's gemv kernel (the cuBLAS loop's body) has them.
  # The other three tools run these.
  if [ "$tool" = synccheck ] && [[ $name == "test gpu_cublas"* || $name == "example cublas" ]]; then
    why="cuBLAS's gemv barriers in a WHILE body: synccheck's false report, see barrier.cu mode 3"
  fi
  # The macro's cost, timed on the host: it makes no CUDA call, and
  # compute-sanitizer fails a program that makes none ("terminated before
  # first instrumented API call"). It runs, unsanitized, in the plain run.
  if [[ $name == "example expand_profile" ]]; then
    why="no CUDA call to check: the macro's cost on the host"
  fi
  if [ -n "$why" ]; then
    say "=== $tool: $name: SKIPPED ($why)"
    skipped_runs+=("$tool"); return 0
  fi
  if [[ $name == "test gpu_soak"* || $name == "test gpu_faults"* || $name == "test gpu_concurrency"* ]] &&
     [ "${draining:-0}" = 0 ]; then
    # The soak checks the whole device's memory, and gpu_faults' trap (in
    # a child, unsanitized) failed the kernels of runs beside it with
    # CUDA_ERROR_LAUNCH_FAILED (H100, 2026-12-05). The concurrency test's
    # workload faults under memcheck beside other sanitized processes, and
    # so does its plain C++ mirror (scripts/sanitizer-repro/
    # workload_threads.cu: 3 of 4 runs four at once, 0 of 2 alone; H100,
    # 2026-12-06): alone, after the pool.
    local IFS=$'\x1f'
    deferred+=("$tool$IFS$name$IFS$limit$IFS$*"); return 0
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n 2>/dev/null || true; done
  local t; t=$(budget "$limit")
  # A number of its own in every run's file names: two names that clean up
  # to the same file name must not share files.
  run_id=$((run_id + 1))
  local file=${name// /-}
  local base; base=$rawdir/$tool--$(printf %04d $run_id)--${file//[^A-Za-z0-9_.-]/_}
  [ -n "${retry_of:-}" ] && printf '%s\n' "$retry_of" >"$base.retry_of"
  if [ "$t" -eq 0 ]; then
    say "--- NOT RUN (deadline): $tool $name"
    printf 'notrun\n0\n%s\n' "$name" >"$base.result"; return 0
  fi
  say "=== $tool: $name (started)"
  local IFS=$'\x1f'
  printf '%s\n' "$tool$IFS$name$IFS$limit$IFS$*" >"$base.cmd"
  unset IFS
  # Runs with nothing beside them (deferred, or again after the pool).
  [ "${draining:-0}" = 1 ] && : >"$base.alone"
  run_one "$tool" "$name" "$t" "$base" "$@" &
}

# The tests of binary T to run, one per line (not the `alone` ones, not the
# switched-off ones).
test_names() { # T
  "$1" --list 2>/dev/null | sed -n 's/^\(.*\): test$/\1/p' | grep -v 'alone::' |
    { local off=() i; for ((i = 1; i < ${#switched_off[@]}; i += 2)); do off+=(-e "${switched_off[i]}"); done
      grep -vF "${off[@]}" || true; }
}

for tool in ${tools//,/ }; do
  for t in "$here"/tests/*; do
    [ -x "$t" ] || continue
    # Tests in a module named `alone` run each in a process of their own
    # (a sanitizer artifact they provoke would fail the tests after them;
    # the module's doc says which).
    alone=$("$t" --list 2>/dev/null | sed -n 's/^\(.*alone::[^ ]*\): test$/\1/p')
    mapfile -t names < <(test_names "$t")
    if [ "$jobs" -gt 1 ] && [ "${#names[@]}" -gt "$shard" ]; then
      n=$(((${#names[@]} + shard - 1) / shard))
      for ((s = 0; s < n; s++)); do
        sanitize "test ${t##*/} [$((s + 1))/$n]" "$test_limit" "$t" --test-threads=1 --include-ignored --exact "${names[@]:s*shard:shard}"
      done
    else
      sanitize "test ${t##*/}" "$test_limit" "$t" --test-threads=1 --include-ignored "${switched_off[@]}" --skip alone::
    fi
    for a in $alone; do
      sanitize "test ${t##*/} $a" "$test_limit" "$t" --test-threads=1 --include-ignored --exact "$a"
    done
  done
  for e in "$here"/examples/*; do [ -x "$e" ] && sanitize "example ${e##*/}" "$example_limit" "$e"; done
done
wait
draining=1
alone_run() { # TOOL<US>NAME<US>LIMIT<US>COMMAND...: one run, nothing beside it
  local run
  IFS=$'\x1f' read -r -a run <<<"$1"
  tool=${run[0]}
  sanitize "${run[1]}" "${run[2]}" "${run[@]:3}"
  wait
}
for d in ${deferred[@]+"${deferred[@]}"}; do alone_run "$d"; done
# A run that failed beside others runs again alone: under load the tools
# have reported what a run alone does not (memcheck: a read "out of
# bounds" yet "inside the nearest allocation", for a counter a kernel
# reads; H100, 2026-12-05). Both verdicts stay in the log; the summary
# counts the runs clean only alone.
if [ "$jobs" -gt 1 ]; then
  for r in "$rawdir"/*.result; do
    [[ -e $r && $r != *.pool.result && $(head -n 1 "$r") == failed ]] || continue
    base=${r%.result}
    # Deferred runs already ran alone.
    [ -e "$base.alone" ] && continue
    IFS=$'\x1f' read -r -a cmd <"$base.cmd"
    if [ "$(budget "${cmd[2]}")" -eq 0 ]; then
      say "--- not run again alone (deadline): ${cmd[0]} ${cmd[1]} (its verdict in the pool stands)"
      continue
    fi
    mv "$r" "$base.pool.result"
    say "=== again, alone: ${cmd[0]} ${cmd[1]} (it failed in the pool; that run's output: $base.out, .sanitizer)"
    retry_of=$base alone_run "$(cat "$base.cmd")"
  done
fi

# Per tool, from the runs' .result files.
failures=() summaries=() total_runs=0 total_allowed=0
for tool in ${tools//,/ }; do
  runs=0 clean=0 failed=0 notrun=0 allowed_tool=0 skipped=0 only_alone=0
  for s in ${skipped_runs[@]+"${skipped_runs[@]}"}; do [ "$s" = "$tool" ] && skipped=$((skipped + 1)); done
  for r in "$rawdir/$tool--"*.result; do
    [[ -e $r && $r != *.pool.result ]] || continue
    { read -r status; read -r n; read -r name; } <"$r"
    runs=$((runs + 1)) allowed_tool=$((allowed_tool + n))
    case $status in
      clean) clean=$((clean + 1))
             [ -e "${r%.result}.retry_of" ] && only_alone=$((only_alone + 1)) ;;
      # A second try the deadline stopped: the pool's failure stands.
      notrun) if [ -e "${r%.result}.retry_of" ]; then
                failed=$((failed + 1)); failures+=("$tool/$name")
              else
                notrun=$((notrun + 1)); failures+=("$tool/$name (not run)")
              fi ;;
      *) failed=$((failed + 1)); failures+=("$tool/$name") ;;
    esac
  done
  line="$tool: $runs runs, $clean clean, $failed failed, $notrun not run (deadline), $skipped skipped; $allowed_tool allowed API errors"
  [ $only_alone -gt 0 ] && line="$line; $only_alone clean only alone (failed in the pool)"
  summaries+=("$line")
  echo "$line" | tee -a "$log"
  total_runs=$((total_runs + runs))
  total_allowed=$((total_allowed + allowed_tool))
done

echo | tee -a "$log"
printf '%s\n' "${summaries[@]}" | sed 's/^/summary: /' | tee -a "$log"
unseen=$(awk -v allow="$allow" -v mode=unseen "$classify_awk" "$allow" "$seen")
if [ -n "$unseen" ] && [ ${#failures[@]} -eq 0 ]; then
  echo "note: allow-list entries no run hit (stale, or their tests were filtered out):" | tee -a "$log"
  printf '%s\n' "$unseen" | sed 's/^/  /' | tee -a "$log"
fi
if [ $total_runs -eq 0 ]; then
  if [ ${#skipped_runs[@]} -gt 0 ]; then
    echo "SANITIZER FAILED: nothing ran (every run${filter:+ matching '$filter'} was skipped, as printed above) (log: $log)" | tee -a "$log"
  else
    echo "SANITIZER FAILED: nothing ran (no bundled binary${filter:+ matches '$filter'}) (log: $log)" | tee -a "$log"
  fi
  exit 1
fi
if [ ${#failures[@]} -eq 0 ]; then
  echo "ALL SANITIZER RUNS CLEAN ($total_runs runs, tools $tools${filter:+, filter '$filter'}$([ $quick = 1 ] && echo ', --quick'); $total_allowed allowed API errors; log: $log)" | tee -a "$log"
  exit 0
fi
echo "SANITIZER FAILED: $(join "${failures[@]}") (log: $log)" | tee -a "$log"
exit 1
