#!/usr/bin/env bash
# End-to-end tests of `opd eval` on the default plugins (cpu, meta, composite, example): PyTorch's
# text output, --json, --trace, --device/--dtype/--seed, overload resolution, a vendor plugin's
# operators, and errors (message on stderr, exit 1). Usage: opd_eval_test.sh PATH_TO_OPD
set -uo pipefail
opd="$1"
failures=0
passed=0
# Where add.Tensor is declared: the trace names the kernel's registration site.
add_site="manifests/native_functions.yaml:$(grep -n '^- func: add\.Tensor(' \
  "$(dirname "$0")/../../manifests/native_functions.yaml" | cut -d: -f1)"

fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

# same_output NAME EXPECTED_STDOUT -- ARGS...: exit 0 and exactly this on stdout.
same_output() {
  local name="$1" want="$2"
  shift 3
  local out rc
  out="$("$opd" eval "$@" 2>/tmp/opd_eval_test.$$)"
  rc=$?
  if [ "$rc" -ne 0 ] || [ "$out" != "$want" ]; then
    fail "$name (exit $rc)"
    printf 'expected:\n%s\ngot:\n%s\n' "$want" "$out"
    head -5 /tmp/opd_eval_test.$$
  else
    passed=$((passed + 1))
  fi
}

# stderr_has NAME EXPECTED_EXIT PATTERN -- ARGS...: that exit code and PATTERN on stderr.
stderr_has() {
  local name="$1" want_rc="$2" pattern="$3"
  shift 4
  local err rc
  err="$("$opd" eval "$@" 2>&1 >/dev/null)"
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -qF -- "$pattern" <<<"$err"; then
    fail "$name (exit $rc, wanted $want_rc; expected on stderr: $pattern)"
    echo "$err" | head -10
  else
    passed=$((passed + 1))
  fi
}

# Python's operators and methods, as torch.Tensor's dunders: the same operators, bound the same way.
same_output "infix operators" $'tensor([[2., 3.],\n        [4., 5.]])' -- \
  "x = tensor([[1., 2.], [3., 4.]]); y = ones([2, 2]); x + y"
same_output "precedence: unary minus, power, product" "tensor([-4., -8.])" -- \
  "x = tensor([1., 2.]); -x * 2 ** 2"
same_output "reflected subtraction keeps int64 (wrapped number)" "tensor([1, 0])" -- \
  "x = tensor([1, 2]); 2 - x"
same_output "float times an int tensor promotes to float32" "tensor([2.5000, 5.0000])" -- \
  "x = tensor([1, 2]); 2.5 * x"
same_output "reflected comparison" "tensor([False,  True])" -- "x = tensor([1, 2]); 1 < x"
same_output "comparison" "tensor([ True, False])" -- "x = tensor([1., 2.]); x <= 1.5"
same_output "matmul of a parenthesised sum" "tensor(8.)" -- "x = tensor([1., 2.]); (x + 1) @ x"
same_output "a method on a variable" "tensor([1., 0.])" -- "x = tensor([1., -2.]); x.relu()"
same_output "methods chained on a call" "tensor(-8.)" -- "y = ones([2, 2]); mm(y, y).sum().neg()"
same_output "a method with keywords" "tensor([0., 2.])" -- "x = tensor([-1., 2.]); x.clamp(min=0)"
same_output "numbers compute as in Python" "3.5" -- "2 + 3; 7 / 2"
stderr_has "operands without a tensor" 1 "unsupported operand type(s) for +: 'int' and 'str'" -- \
  "1 + 'a'"
stderr_has "a method of a number" 1 "opd eval: 'int' has no method 'relu'" -- "x = 1; x.relu()"
stderr_has "int64 overflow" 1 "opd eval: 2 ** 70 is out of the int64 range" -- "2 ** 70"

# Text, as PyTorch prints it.
same_output "broadcast add of two factories" $'tensor([[2., 2., 2.],\n        [2., 2., 2.]])' -- \
  "add(ones([2, 3]), ones([3]))"
same_output "variables and a tensor literal" $'tensor([[2., 3., 4.],\n        [2., 3., 4.]])' -- \
  "x = ones([2, 3]); add(x, tensor([1., 2., 3.]))"
same_output "alpha keyword" "tensor([3., 5.])" -- "add(tensor([1., 1.]), tensor([1., 2.]), alpha=2)"
same_output "a number picks add.Scalar" "tensor([3, 4])" -- "add(tensor([1, 2]), 2)"
same_output "explicit overload" "tensor([3, 4])" -- "aten::add.Scalar(tensor([1, 2]), 2)"
same_output "int64 prints without dtype" "tensor([1, 2])" -- "tensor([1, 2])"
same_output "bools" "tensor([ True, False])" -- "gt(tensor([2, 0]), 1)"
same_output "dtype keyword" "tensor([1., 1.], dtype=torch.float64)" -- "ones([2], dtype=float64)"
same_output "literal dtype" $'tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)' -- \
  "tensor([[1, 2], [3, 4]], dtype=float64)"
same_output "0-dim result" "tensor(10.)" -- "sum(tensor([[1., 2.], [3., 4.]]))"
same_output "int[1] takes a bare int" "tensor([4., 6.])" -- "sum(tensor([[1., 2.], [3., 4.]]), 0)"
same_output "varargs sizes" $'tensor([[0., 0.],\n        [0., 0.]])' -- "zeros(2, 2)"
same_output "named returns" $'torch.return_types.max(\nvalues=tensor([5, 7]),\nindices=tensor([1, 0]))' -- \
  "max(tensor([[1, 5], [7, 2]]), 1)"
same_output "a list result of scalars" "3.5" -- "item(tensor([3.5]))"
same_output "vendor plugin operator" "tensor([10., 20.])" -- "example::scale(tensor([1., 2.]), 10)"
same_output "vendor composite by bare name" "tensor([2., 4.])" -- "twice(tensor([1., 2.]))"

# Defaults for factories and literals.
same_output "--dtype" "tensor([1., 1.], dtype=torch.float64)" -- --dtype float64 "ones([2])"
same_output "--dtype yields to dtype=" "tensor([1., 1.])" -- --dtype float64 "ones([2], dtype=float32)"
same_output "--device meta" "tensor(..., device='meta', size=(2, 3))" -- --device meta "ones([2, 3])"
same_output "meta add" "tensor(..., device='meta', size=(2, 3))" -- --device meta \
  "add(ones([2, 3]), tensor([1., 2., 3.]))"
same_output "meta literal" "tensor(..., device='meta', size=(2,), dtype=torch.int64)" -- \
  --device meta "tensor([1, 2])"
seeded="$("$opd" eval --seed 7 "rand([4])")"
same_output "--seed repeats" "$seeded" -- --seed 7 "rand([4])"
if [ "$("$opd" eval --seed 8 "rand([4])")" = "$seeded" ]; then fail "--seed 8 gives what --seed 7 gives"; else passed=$((passed + 1)); fi

# JSON.
same_output "--json tensor" \
  '{"dtype":"int64","shape":[2,2],"strides":[2,1],"device":"cpu","data":[1,2,3,4]}' -- \
  --json "tensor([[1, 2], [3, 4]])"
same_output "--json transposed view is logical order" \
  '{"dtype":"float32","shape":[3,2],"strides":[1,3],"device":"cpu","data":[1.0,4.0,2.0,5.0,3.0,6.0]}' -- \
  --json "t(tensor([[1., 2., 3.], [4., 5., 6.]]))"
same_output "--json meta" '{"dtype":"float32","shape":[2,3],"strides":[3,1],"device":"meta","data":null}' -- \
  --json --device meta "ones([2, 3])"
same_output "--json scalar" "3.5" -- --json "item(tensor([3.5]))"
same_output "--json named tuple" \
  '{"values":{"dtype":"int64","shape":[1],"strides":[1],"device":"cpu","data":[5]},"indices":{"dtype":"int64","shape":[1],"strides":[1],"device":"cpu","data":[1]}}' -- \
  --json "max(tensor([[1, 5]]), 1)"

# Tensors with history print their node, leaves that need a gradient say so (PyTorch's repr).
same_output "repr of a leaf that requires grad" "tensor([1., 1.], requires_grad=True)" \
  -- "requires_grad_(ones([2]), True)"
same_output "repr names grad_fn" "tensor([1., 1.], dtype=torch.float64, grad_fn=<MulBackward0>)" \
  -- "x = requires_grad_(ones([2], dtype=float64), True); mul(x, x)"

# Trace: every hop, nested, with its kernel's site and plugin.
stderr_has "trace shows the factory" 0 \
  "aten::ones [call_boxed] DispatchKeySet(CPU) -> CPU: default backend kernel registered at" -- \
  --trace "add(ones([2, 3]), ones([3]))"
stderr_has "trace shows nested calls" 0 "  aten::empty.memory_format [call] DispatchKeySet(CPU) -> CPU: kernel" -- \
  --trace "add(ones([2, 3]), ones([3]))"
stderr_has "trace shows add reaching the autograd wrapper" 0 \
  "aten::add.Tensor [call_boxed] DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU: autograd kernel registered at $add_site (plugin autograd 0.1.0)" -- \
  --trace "add(ones([2, 3]), ones([3]))"
stderr_has "trace shows the redispatch reaching the CPU kernel" 0 \
  "  aten::add.Tensor [redispatch] DispatchKeySet(CPU) -> CPU: kernel registered at $add_site (plugin cpu 0.1.0)" -- \
  --trace "add(ones([2, 3]), ones([3]))"
# --graph: the operators the program ran, as torch.fx's code (make_fx's capture, core/fx).
same_output "graph prints the captured operators" "def forward(self):
    ones = opdispatch.ops.aten.ones.default([2, 3])
    add = opdispatch.ops.aten.add.Tensor(ones, ones, alpha = 2);  ones = None
    relu = opdispatch.ops.aten.relu.default(add);  add = None
    sum_1 = opdispatch.ops.aten.sum.dim_IntList(relu, [0]);  relu = None
    _tensor_constant0 = self._tensor_constant0
    mul = opdispatch.ops.aten.mul.Tensor(sum_1, _tensor_constant0);  sum_1 = _tensor_constant0 = None
    max_1 = opdispatch.ops.aten.max.dim(mul, 0);  mul = None
    getitem = max_1[0]
    getitem_1 = max_1[1];  max_1 = None
    return (getitem, getitem_1)" -- \
  --graph "x = ones([2, 3]); y = add(x, x, alpha=2); max(mul(y.relu().sum(dim=[0]), tensor([2.])), 0)"
stderr_has "trace names the plugin" 0 "(plugin cpu 0.1.0)" -- --trace "add(ones([2, 3]), ones([3]))"
stderr_has "trace shows a vendor's math kernel" 0 \
  "example::twice [call_boxed] DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU: math kernel" -- \
  --trace "twice(tensor([1., 2.]))"
stderr_has "trace shows a failing hop" 1 "aten::empty.memory_format raised" -- \
  --trace --device cuda "ones([2])"

# Errors: the message, exit 1.
stderr_has "syntax error" 1 "opd eval: expected ',' or ')' but found the end of the program at column 6" -- "add(x"
stderr_has "no overload" 1 \
  "add() received an invalid combination of arguments - got (Tensor, str), but expected one of:" -- \
  "add(ones([2]), 'a')"
stderr_has "no overload lists the schemas" 1 \
  " * aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor" -- "add(ones([2]), 'a')"
stderr_has "unknown operator" 1 "opd eval: unknown operator 'nope'" -- "nope(1)"
stderr_has "undefined name" 1 "opd eval: name 'y' is not defined" -- "relu(y)"
stderr_has "missing kernel" 1 "Could not run 'aten::empty.memory_format' with arguments from the 'CUDA' backend" -- \
  --device cuda "ones([2])"
stderr_has "kernel error" 1 "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" -- \
  "mm(ones([2, 3]), ones([2, 3]))"
stderr_has "bad --dtype" 1 "flaot64" -- --dtype flaot64 "ones([2])"

rm -f /tmp/opd_eval_test.$$
echo "opd_eval_test: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
