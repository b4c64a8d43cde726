#!/usr/bin/env bash
# `opd bench --smoke`: every C++ and Python benchmark once, each suite's cases together in one
# process and in random order (issue 33 §6: `opd bench` with no arguments aborted when one case
# registered an Autograd fallback after another had loaded the autograd plugin). Exit 0, every
# listed case reported, none with an error; without a usable GPU the CUDA suite says in one line
# that it is skipped and why. Usage: opd_bench_smoke_test.sh PATH_TO_OPD
set -uo pipefail
opd="$1"
# shellcheck source=tests/tools/check.sh
source "$(dirname "$0")/check.sh"

out="$("$opd" bench --smoke 2>&1)"
rc=$?
out="$(sed 's/\x1b\[[0-9;]*m//g' <<<"$out")"  # the console reporter's colours
if [ "$rc" -ne 0 ]; then
  echo "FAIL: opd bench --smoke exits 0 (exit $rc)"
  echo "$out" | tail -20
  failures=$((failures + 1))
else
  passed=$((passed + 1))
fi
if grep -q "ERROR OCCURRED" <<<"$out"; then
  echo "FAIL: no benchmark reports an error"
  grep "ERROR OCCURRED" <<<"$out" | head -20
  failures=$((failures + 1))
else
  passed=$((passed + 1))
fi
# Every C++ case listed ran (its name starts a line of the report).
missing=0
while read -r name; do
  if ! grep -q "^$name " <<<"$out"; then
    echo "FAIL: $name did not run"
    missing=$((missing + 1))
  fi
done < <("$opd" bench --benchmark_list_tests 2>/dev/null | grep '^BM_')
if [ "$missing" -eq 0 ]; then passed=$((passed + 1)); else failures=$((failures + 1)); fi
bin="$(dirname "$opd")"
if [ -x "$bin/opd_bench_cuda" ]; then
  # With a device the cases run (checked above); without one, a single line says why.
  if grep -q "CUDA suite skipped" <<<"$out"; then
    n="$(grep -c "no CUDA device" <<<"$out")"
    if [ "$n" -ne 1 ]; then
      echo "FAIL: the CUDA suite is skipped in one line ($n lines say no CUDA device)"
      failures=$((failures + 1))
    else
      passed=$((passed + 1))
    fi
  else
    check "the CUDA cases ran" 0 "BM_CudaAddOut256M" -- echo "$out"
  fi
fi
if [ -x "$bin/opd_bench_python" ]; then
  check "the Python benchmarks ran" 0 "conv2d fwd+bwd" -- echo "$out"
fi

report opd_bench_smoke_test
