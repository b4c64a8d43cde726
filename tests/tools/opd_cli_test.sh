#!/usr/bin/env bash
# End-to-end tests of the opd command: schema (arguments, stdin, --json, errors and exit codes),
# ops, dump, plugins, load, check and demo. Usage: opd_cli_test.sh PATH_TO_OPD
set -uo pipefail
opd="$1"
# shellcheck source=tests/tools/check.sh
source "$(dirname "$0")/check.sh"
# Where add.Tensor is declared: the trace names the kernel's registration site.
add_site="manifests/native_functions.yaml:$(grep -n '^- func: add\.Tensor(' \
  "$(dirname "$0")/../../manifests/native_functions.yaml" | cut -d: -f1)"

schema='aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'
check "schema prints the canonical form" 0 "$schema" -- "$opd" schema "$schema"
check "schema normalises spacing" 0 "aten::relu(Tensor self) -> Tensor" -- \
  "$opd" schema "aten::relu( Tensor  self )->Tensor"
check "schema error names the column" 1 "at column 27" -- "$opd" schema "example::broken(Tensor x, -> Tensor"
check "schema error shows a caret" 1 "                            ^" -- "$opd" schema "example::broken(Tensor x, -> Tensor"
check "schema exits 1 if any input failed" 1 "$schema" -- "$opd" schema "$schema" "bad("
check "schema --json" 0 '"kwarg_only": true' -- "$opd" schema --json "$schema"
check "schema reads stdin" 0 "aten::neg(Tensor self) -> Tensor" -- \
  bash -c "printf 'aten::neg(Tensor self) -> Tensor\n' | '$opd' schema"
check "ops lists the default plugins' operators" 0 "example::scale(Tensor self, float factor) -> Tensor" -- "$opd" ops
check "ops --json" 0 '"name": "example::twice"' -- "$opd" ops --json
check "dump shows the plugin of each kernel" 0 "(plugin example 0.1.0) [kernel]" -- "$opd" dump example::scale
check "dump --json" 0 '"computed_table"' -- "$opd" dump --json example::scale
check "dump shows the definition's tags" 0 "tags: nondeterministic_seeded" -- "$opd" dump aten::rand
check "dump --json lists the tags" 0 '"nondeterministic_seeded"' -- "$opd" dump --json aten::rand
check "dump shows the alias analysis kind" 0 "alias analysis kind: FROM_SCHEMA" -- "$opd" dump aten::add.Tensor
check "dump --json gives the alias analysis kind" 0 '"alias_analysis": "FROM_SCHEMA"' -- "$opd" dump --json aten::add.Tensor
check "dump of an unknown operator fails" 1 "no operator named nope::nope" -- "$opd" dump nope::nope
check "plugins lists manifests" 0 "example" -- "$opd" plugins
check "plugins --json" 0 '"state": "available"' -- "$opd" plugins --json
check "load reports the state" 0 "loaded" -- "$opd" load example

# The table's columns start where the header's do, whatever the width of the cells (issue 33
# §6: the keys "Autograd,CompositeImplicitAutograd,CompositeExplicitAutograd" pushed the columns
# after them off): each left-aligned cell begins at its header's offset after a space (`serves`
# may be empty), the right-aligned kernel count ends under the end of "kernels".
table_aligned() {  # table_aligned NAME COMMAND...
  local name="$1" out
  shift
  out="$("$@" 2>&1)"
  if awk 'NR == 1 {
            n = split("plugin version state keys serves kernels library", names, " ")
            for (i = 1; i <= n; i++) at[i] = index($0, names[i])
            next
          }
          {
            for (i = 2; i <= 7; i++) if (substr($0, at[i] - 1, 1) != " ") bad = 1
            split("1 2 3 4 7", filled, " ")
            for (j in filled) if (substr($0, at[filled[j]], 1) == " ") bad = 1
            end = at[6] + length("kernels") - 1
            if (substr($0, end, 1) !~ /[0-9]/ || substr($0, end + 1, 1) != " ") bad = 1
            rows++
          }
          END { exit (bad || rows == 0) }' <<<"$out"; then
    passed=$((passed + 1))
  else
    echo "FAIL: $name: the columns do not start at the header's offsets"
    echo "$out"
    failures=$((failures + 1))
  fi
}
table_aligned "plugins aligns its columns" "$opd" plugins
table_aligned "plugins --load aligns its columns" "$opd" plugins --load
table_aligned "load aligns its columns" "$opd" load example
check "load of an unknown plugin fails" 1 "plugin 'nope' was not found in the search path" -- "$opd" load nope
check "check passes on the default set" 0 "0 problem(s)" -- "$opd" check
check "check fails on a failing plugin" 1 "problem: plugin nope failed" -- "$opd" check --plugin nope
check "demo loads the default plugins" 0 "cpu 0.1.0: loaded" -- "$opd" demo --steps 20
check "demo traces broadcasting to the CPU kernel" 0 \
  "aten::add.Tensor [redispatch] DispatchKeySet(CPU) -> CPU: kernel registered at $add_site (plugin cpu 0.1.0)" -- "$opd" demo --steps 20
check "demo shows a composite re-entering the dispatcher" 0 \
  "  aten::mm [call] DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU" -- "$opd" demo --steps 20
check "demo computes a huge Meta shape" 0 "tensor(..., device='meta', size=(1000000,))" -- "$opd" demo --steps 20
check "demo explains the missing Meta kernel" 0 \
  "Could not run 'aten::empty.memory_format' with arguments from the 'Meta' backend." -- "$opd" demo --steps 20
# The accuracy's last digits depend on the BLAS kernels of the machine: at least 95% is the claim.
demo_out="$("$opd" demo 2>&1)"
if grep -qE "final training accuracy: (9[5-9]|100)\.[0-9]+%" <<<"$demo_out"; then
  passed=$((passed + 1))
else
  echo "FAIL: demo trains the MLP to at least 95%"
  grep "final training accuracy" <<<"$demo_out"
  failures=$((failures + 1))
fi
check "demo takes the training options" 0 "device cpu, hidden 16, 20 steps, seed 3" -- \
  "$opd" demo --steps 20 --hidden 16 --seed 3

# `opd bench -- ARGS` as the README documents it, and options given before "--" (issue 13 §4:
# the documented form failed with "The following arguments were not expected").
if [ -x "$(dirname "$opd")/opd_bench" ]; then
  check "bench passes the arguments after -- on" 0 "BM_DispatchUnboxed" -- \
    "$opd" bench -- --benchmark_list_tests
  check "bench passes options before -- on" 0 "BM_DispatchBoxed" -- \
    "$opd" bench --benchmark_list_tests
  out="$("$opd" bench --benchmark_list_tests -- '--benchmark_filter=^BM_DispatchBoxed$' 2>&1)"
  rc=$?
  if [ "$rc" -ne 0 ] || ! grep -qx "BM_DispatchBoxed" <<<"$out" || grep -q "BM_DirectCall" <<<"$out"; then
    echo "FAIL: bench passes options both before and after -- on (exit $rc)"
    echo "$out" | head -20
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
  # Google Benchmark's filter syntax in every suite, the Python one's included: a leading '-'
  # runs the cases the expression does not match (the Python suite read it as a plain regex
  # and ran nothing), "all" runs every case.
  if [ -x "$(dirname "$opd")/opd_bench_python" ]; then
    out="$("$opd" bench --benchmark_list_tests --benchmark_filter=-Add 2>&1)"
    if ! grep -qx "PySmallCalls" <<<"$out" || ! grep -qx "BM_DirectCall" <<<"$out" ||
      grep -q "Add" <<<"$out"; then
      echo "FAIL: bench --benchmark_filter=-Add runs the cases without Add, in C++ and Python"
      echo "$out" | head -40
      failures=$((failures + 1))
    else
      passed=$((passed + 1))
    fi
    # The other forms on the Python suite alone (each `opd bench` starts every suite).
    out="$("$(dirname "$opd")/opd_bench_python" --benchmark_list_tests --benchmark_filter=Add 2>&1)"
    if ! grep -qx "PyOpsAdd" <<<"$out" || grep -qx "PySmallCalls" <<<"$out"; then
      echo "FAIL: bench --benchmark_filter=Add runs the Python cases with Add only"
      echo "$out" | head -40
      failures=$((failures + 1))
    else
      passed=$((passed + 1))
    fi
    check "bench --benchmark_filter=all runs every Python case" 0 "PyConv" -- \
      "$(dirname "$opd")/opd_bench_python" --benchmark_list_tests --benchmark_filter=all
  fi
else
  check "bench -- ARGS parses, then reports the missing suite" 1 \
    "was not built (configure with OPD_BUILD_BENCHMARKS=ON)" -- "$opd" bench -- --benchmark_list_tests
fi

report opd_cli_test
