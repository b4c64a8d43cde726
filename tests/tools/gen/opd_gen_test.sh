#!/usr/bin/env bash
# The opd-gen command on malformed YAML (issue 29): each input is refused with exit status 1 and
# "opd-gen: <file>:<line>: <what>", never aborted by an uncaught yaml-cpp exception (status 134),
# and nothing is generated from text that would be pasted into C++.
# Usage: opd_gen_test.sh PATH_TO_OPD_GEN
set -uo pipefail
gen="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# shellcheck source=tests/tools/check.sh
source "$(dirname "$0")/../check.sh"

foo='- func: foo(Tensor x) -> Tensor'
printf '%s\n' "$foo" > "$dir/functions.yaml"
printf '%s\n  dispatch:\n    [CPU]: k\n' "$foo" > "$dir/dispatch_key_list.yaml"
printf '%s\n  {a: 1}: 2\n' "$foo" > "$dir/field_name_mapping.yaml"
printf -- '- name: [1]\n' > "$dir/name_list.yaml"
printf -- '- name: {a: 1}\n' > "$dir/name_mapping.yaml"
printf -- '- name: foo(Tensor x) -> Tensor\n  [x]: grad\n' > "$dir/formula_key_list.yaml"

check "a dispatch key that is a list" 1 "opd-gen: $dir/dispatch_key_list.yaml:3: a dispatch key must be a string, not a list" -- \
  "$gen" --yaml "$dir/dispatch_key_list.yaml" --out "$dir/out"
check "a field name that is a mapping" 1 "opd-gen: $dir/field_name_mapping.yaml:2: a field name in an entry must be a string, not a mapping" -- \
  "$gen" --yaml "$dir/field_name_mapping.yaml" --out "$dir/out"
check "--check: a field name that is a mapping" 1 "opd-gen: $dir/field_name_mapping.yaml:2: a field name in an entry must be a string" -- \
  "$gen" --check "$dir/field_name_mapping.yaml"
check "derivatives: a name that is a list" 1 "opd-gen: $dir/name_list.yaml:1: 'name' must be a string, not a list" -- \
  "$gen" --yaml "$dir/functions.yaml" --derivatives "$dir/name_list.yaml" --out "$dir/out"
check "derivatives: a name that is a mapping" 1 "opd-gen: $dir/name_mapping.yaml:1: 'name' must be a string, not a mapping" -- \
  "$gen" --yaml "$dir/functions.yaml" --derivatives "$dir/name_mapping.yaml" --out "$dir/out"
check "derivatives: a formula key that is a list" 1 "opd-gen: $dir/formula_key_list.yaml:2: a field name in an entry must be a string, not a list" -- \
  "$gen" --yaml "$dir/functions.yaml" --derivatives "$dir/formula_key_list.yaml" --out "$dir/out"

# Text that would become code: refused, and nothing written.
printf -- "- func: acme::foo(Tensor x) -> Tensor\n  dispatch: {CPU: 'k; system(\"x\")'}\n" > "$dir/kernel.yaml"
check "a kernel name that is not an identifier" 1 "opd-gen: $dir/kernel.yaml:2: the kernel name 'k; system(\"x\")' is not a C++ identifier" -- \
  "$gen" --yaml "$dir/kernel.yaml" --out "$dir/vendor"
if [ -e "$dir/vendor" ]; then
  echo "FAIL: opd-gen wrote $dir/vendor for a refused file"
  failures=$((failures + 1))
fi
printf -- "- func: acme::foo(Tensor x) -> Tensor\n" > "$dir/acme.yaml"
printf -- "- name: foo(Tensor x) -> Tensor\n  x: 'grad; system(\"x\")'\n" > "$dir/acme_derivatives.yaml"
check "a formula that is not one expression" 1 "opd-gen: $dir/acme_derivatives.yaml:2: the formula for 'x' is not one C++ expression: it holds ';' at column 5" -- \
  "$gen" --yaml "$dir/acme.yaml" --derivatives "$dir/acme_derivatives.yaml" --out "$dir/vendor2"
if [ -e "$dir/vendor2" ]; then
  echo "FAIL: opd-gen wrote $dir/vendor2 before reading the derivatives it refused"
  failures=$((failures + 1))
fi
check "a well-formed vendor file" 0 "" -- "$gen" --yaml "$dir/acme.yaml" --out "$dir/vendor3"

# Note [Tensor[] results]: formulas for a list result are refused before anything is written.
printf -- '- func: pieces(Tensor(a -> *) self) -> Tensor(a)[]\n  dispatch:\n    CPU: pieces\n' \
  > "$dir/pieces.yaml"
printf -- '- name: pieces(Tensor(a -> *) self) -> Tensor(a)[]\n  self: grad\n' \
  > "$dir/pieces_derivatives.yaml"
check "formulas for a Tensor[] result" 1 "opd-gen: $dir/pieces_derivatives.yaml:1: aten::pieces returns Tensor" -- \
  "$gen" --yaml "$dir/pieces.yaml" --derivatives "$dir/pieces_derivatives.yaml" --out "$dir/pieces"
if [ -e "$dir/pieces" ]; then
  echo "FAIL: opd-gen wrote $dir/pieces before reading the derivatives it refused"
  failures=$((failures + 1))
fi
# Without an entry its Autograd kernel refuses inputs that require grad (it recorded nothing),
# and marks each piece a view of self.
printf -- '[]\n' > "$dir/no_derivatives.yaml"
check "a Tensor[] result without derivatives" 0 "" -- \
  "$gen" --yaml "$dir/pieces.yaml" --derivatives "$dir/no_derivatives.yaml" --out "$dir/pieces2"
check "... refuses inputs that require grad" 0 'throw_not_implemented("aten::pieces")' -- \
  cat "$dir/pieces2/src/autograd_kernels.cpp"
check "... marks its pieces views" 0 'for (const Tensor& r : result) mark_view(r, self);' -- \
  cat "$dir/pieces2/src/autograd_kernels.cpp"

report opd_gen_test
