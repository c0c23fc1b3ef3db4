#!/usr/bin/env bash
# Checks gpu-run.sh's sanitizer-report classifier (no GPU needed; .ci/run
# runs it): allowed API errors and allowed kernel reports pass, anything
# else, or an ERROR SUMMARY the allowed reports do not explain, fails.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/allow.txt" <<'LIST'
# comment
Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to cuGraphLaunch.  # a test
Barrier error detected. Divergent thread(s) in warp. at good_kernel  # a repro
Leaked from tests::leaks_on_purpose  # a test that forgets
LIST
log() { printf '========= %s\n' "COMPUTE-SANITIZER" "$@"; }
expect() { # NAME clean|dirty LINES...
  local name=$1 want=$2 got
  shift 2
  log "$@" >"$dir/$name.log"
  if bash "$here/gpu-run.sh" --classify "$dir/$name.log" "$dir/allow.txt" >"$dir/$name.out"; then
    got=clean
  else
    got=dirty
  fi
  if [ "$got" != "$want" ]; then
    echo "classify-selftest: $name: $got, want $want"; cat "$dir/$name.out"; exit 1
  fi
}
api='Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to cuGraphLaunch.'
barrier='Barrier error detected. Divergent thread(s) in warp.'
expect nothing clean 'ERROR SUMMARY: 0 errors'
expect allowed-api clean "$api" '    Saved host backtrace' 'ERROR SUMMARY: 1 error'
expect other-api dirty "${api/cuGraphLaunch/cuGraphAddNode}" 'ERROR SUMMARY: 1 error'
expect allowed-kernel clean "$barrier" '    at good_kernel(const float *, unsigned int)+0x270' \
  '    by thread (0,0,0) in block (1,0,0)' "$barrier" '    at good_kernel+0x360' 'ERROR SUMMARY: 2 errors'
expect other-kernel dirty "$barrier" '    at bad_kernel+0x270' 'ERROR SUMMARY: 1 error'
expect no-location dirty "$barrier" 'ERROR SUMMARY: 1 error'
expect unexplained-count dirty "$barrier" '    at good_kernel+0x270' 'ERROR SUMMARY: 2 errors'
expect memory-error dirty 'Invalid __global__ write of size 4 bytes' '    at good_kernel+0x10' 'ERROR SUMMARY: 1 error'
expect leak dirty 'LEAK SUMMARY: 16384 bytes leaked in 1 allocations' 'ERROR SUMMARY: 0 errors'
expect race dirty 'RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)'
expect unfinished dirty "$api"
leaked='Leaked 4,194,304 bytes at 0x2a9a000000'
alloc_frame='        Host Frame: cuMemAllocAsync [0x3a31cf] in libcuda.so.1'
expect allowed-leak clean "$leaked" "$alloc_frame" \
  '        Host Frame: tests::leaks_on_purpose::h0123456789abcdef [0x1d6468] in tests' \
  'LEAK SUMMARY: 4194304 bytes leaked in 1 allocations' 'ERROR SUMMARY: 1 error'
expect allowed-leak-mangled clean "$leaked" "$alloc_frame" \
  '        Host Frame: _ZN5tests16leaks_on_purpose17h0123456789abcdefE.llvm.1322 [0x1d6468] in tests' \
  'LEAK SUMMARY: 4194304 bytes leaked in 1 allocations' 'ERROR SUMMARY: 1 error'
expect other-leak dirty "$leaked" "$alloc_frame" \
  '        Host Frame: _ZN5tests12leaks_by_bug17h0123456789abcdefE [0x1d6468] in tests' \
  'LEAK SUMMARY: 4194304 bytes leaked in 1 allocations' 'ERROR SUMMARY: 1 error'
echo "classify-selftest: 14 cases ok"
