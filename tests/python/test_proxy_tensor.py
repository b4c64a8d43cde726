"""make_fx (opdispatch.fx.experimental.proxy_tensor) and GraphModule, in the spirit of PyTorch's
test/test_proxy_tensor.py: the printed code of simple functions, scalars and shapes, tensors
created inside the function, a backward captured (the joint graph), and a GraphModule's call
giving the function's results. The expected texts are torch 1.13's make_fx output with
`opdispatch` for `torch` (where opdispatch's binding passes other arguments, as noted)."""

import operator

import pytest

import opdispatch
from opdispatch.fx import GraphModule
from opdispatch.fx.experimental.proxy_tensor import make_fx


def code(f, *args):
    return make_fx(f)(*args).code


def test_simple_function_prints_as_torch_fx():
    g = make_fx(lambda x, y: (x + y).relu())(opdispatch.ones(2), opdispatch.ones(2))
    assert isinstance(g, GraphModule)
    assert g.code == (
        "\n\n\ndef forward(self, x_1, y_1):\n"
        "    add = opdispatch.ops.aten.add.Tensor(x_1, y_1);  x_1 = y_1 = None\n"
        "    relu = opdispatch.ops.aten.relu.default(add);  add = None\n"
        "    return relu\n    ")
    assert g.print_readable(print_output=False) == (
        "class <lambda>(torch.nn.Module):\n"
        "    def forward(self, x_1, y_1):\n"
        "        \n"
        "        # No stacktrace found for following nodes \n"
        "        add = opdispatch.ops.aten.add.Tensor(x_1, y_1);  x_1 = y_1 = None\n"
        "        relu = opdispatch.ops.aten.relu.default(add);  add = None\n"
        "        return relu\n"
        "        ")


def test_nodes_refer_to_earlier_nodes_and_overloads():
    g = make_fx(lambda x: x.max(0))(opdispatch.tensor([1., 3., 2.]))
    nodes = g.graph.nodes
    assert [(n.op, n.name) for n in nodes] == [
        ("placeholder", "x_1"), ("call_function", "max_1"), ("call_function", "getitem"),
        ("call_function", "getitem_1"), ("output", "output")]
    x, mx, v, i, out = nodes
    assert mx.target is opdispatch.ops.aten.max.dim
    assert mx.args == (x, 0) and mx.args[0] is x
    assert v.target is operator.getitem and v.args == (mx, 0)
    assert out.args == ((v, i),)
    assert list(x.users) == [mx]
    assert "    getitem = max_1[0]\n    getitem_1 = max_1[1];  max_1 = None\n" in g.code


def test_scalars_shapes_and_builtin_names():
    def f(x, sum, y=2):
        return x.sum() + sum + y

    # torch 1.13 prints exactly this (the parameter `sum` keeps sum_1; aten::sum's node cannot
    # shadow the builtin and takes sum_2; the 3 passed for y is a constant).
    assert code(f, opdispatch.ones(2), opdispatch.ones(2), 3) == (
        "\n\n\ndef forward(self, x_1, sum_1, y_1 = 2):\n"
        "    sum_2 = opdispatch.ops.aten.sum.default(x_1);  x_1 = None\n"
        "    add = opdispatch.ops.aten.add.Tensor(sum_2, sum_1);  sum_2 = sum_1 = None\n"
        "    add_1 = opdispatch.ops.aten.add.Tensor(add, 3);  add = None\n"
        "    return add_1\n    ")

    def g(x):
        return (x * 2 + 1.5).view(3, 1).expand(3, 2) * 1e-5 * float("inf"), x.sum([0], True)

    assert code(g, opdispatch.ones(3)) == (
        "\n\n\ndef forward(self, x_1):\n"
        "    mul = opdispatch.ops.aten.mul.Tensor(x_1, 2)\n"
        "    add = opdispatch.ops.aten.add.Tensor(mul, 1.5);  mul = None\n"
        "    view = opdispatch.ops.aten.view.default(add, [3, 1]);  add = None\n"
        "    expand = opdispatch.ops.aten.expand.default(view, [3, 2]);  view = None\n"
        "    mul_1 = opdispatch.ops.aten.mul.Tensor(expand, 1e-05);  expand = None\n"
        "    mul_2 = opdispatch.ops.aten.mul.Tensor(mul_1, inf);  mul_1 = None\n"
        "    sum_1 = opdispatch.ops.aten.sum.dim_IntList(x_1, [0], True);  x_1 = None\n"
        "    return (mul_2, sum_1)\n    ")


def test_varargs_in_place_and_identity():
    assert code(lambda *a: a[0].add_(a[1]), opdispatch.ones(2), opdispatch.ones(2)) == (
        "\n\n\ndef forward(self, arg0_1, arg1_1):\n"
        "    add_ = opdispatch.ops.aten.add_.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None\n"
        "    return add_\n    ")
    assert code(lambda x: (x, 3, None), opdispatch.ones(2)) == (
        "\n\n\ndef forward(self, x_1):\n    return (x_1, 3, None)\n    ")
    assert code(lambda x: [x.neg()], opdispatch.ones(2)) == (
        "\n\n\ndef forward(self, x_1):\n"
        "    neg = opdispatch.ops.aten.neg.default(x_1);  x_1 = None\n"
        "    return [neg]\n    ")


def test_tensor_creation_inside_the_function():
    def f(x):
        return (x + opdispatch.tensor([1., 2.])).to(opdispatch.float64) + opdispatch.zeros(
            2, dtype=opdispatch.int64)

    g = make_fx(f)(opdispatch.ones(2))
    # torch also records lift_fresh_copy of the literal (opdispatch.tensor runs no operator),
    # its binding passes device= and pin_memory= to zeros, and its to() no device= to _to_copy.
    assert g.code == (
        "\n\n\ndef forward(self, x_1):\n"
        "    _tensor_constant0 = self._tensor_constant0\n"
        "    add = opdispatch.ops.aten.add.Tensor(x_1, _tensor_constant0);  x_1 = "
        "_tensor_constant0 = None\n"
        "    _to_copy = opdispatch.ops.aten._to_copy.default(add, dtype = opdispatch.float64, "
        "device = device(type='cpu'));  add = None\n"
        "    zeros = opdispatch.ops.aten.zeros.default([2], dtype = opdispatch.int64)\n"
        "    add_1 = opdispatch.ops.aten.add.Tensor(_to_copy, zeros);  _to_copy = zeros = None\n"
        "    return add_1\n    ")
    assert g._tensor_constant0.tolist() == [1., 2.]
    out = g(opdispatch.tensor([3., 4.]))
    assert out.dtype == opdispatch.float64 and out.tolist() == [4., 6.]


def test_backward_is_captured():
    def f(x):
        loss = (x * x).sum()
        loss.backward()
        return x.grad

    x = opdispatch.ones(3, requires_grad=True)
    g = make_fx(f)(x)
    assert g.code.startswith(
        "\n\n\ndef forward(self, x_1):\n"
        "    mul = opdispatch.ops.aten.mul.Tensor(x_1, x_1)\n"
        "    sum_1 = opdispatch.ops.aten.sum.default(mul);  mul = None\n"
        "    ones_like = opdispatch.ops.aten.ones_like.default(sum_1);  sum_1 = None\n"
        "    expand = opdispatch.ops.aten.expand.default(ones_like, [3]);  ones_like = None\n"
        "    mul_1 = opdispatch.ops.aten.mul.Tensor(expand, x_1)\n"
        "    mul_2 = opdispatch.ops.aten.mul.Tensor(expand, x_1);  expand = x_1 = None\n"), g.code
    assert opdispatch.equal(g(opdispatch.tensor([1., 2., 3.])), opdispatch.tensor([2., 4., 6.]))


def test_autograd_grad_gives_the_joint_graph():
    def f(x, w):
        y = (x @ w).tanh().sum()
        return opdispatch.autograd.grad(y, w)

    x = opdispatch.randn(2, 3)
    w = opdispatch.randn(3, 4, requires_grad=True)
    g = make_fx(f)(x, w)
    targets = [n.target for n in g.graph.nodes if n.op == "call_function"]
    assert opdispatch.ops.aten.tanh.default in targets
    assert opdispatch.ops.aten.tanh_backward.default in targets
    x2, w2 = opdispatch.randn(2, 3), opdispatch.randn(3, 4, requires_grad=True)
    (expected,) = f(x2, w2)
    (got,) = g(x2, w2)
    assert opdispatch.allclose(got, expected)


def test_rerunning_gives_the_results_of_f():
    def f(x, y):
        a = opdispatch.cat([x, y * 2]).index_select(0, opdispatch.tensor([3, 0]))
        v, i = a.sort()
        return v.cumsum(0), i, a.mean()

    g = make_fx(f)(opdispatch.randn(2), opdispatch.randn(2))
    x, y = opdispatch.randn(2), opdispatch.randn(2)
    for got, want in zip(g(x, y), f(x, y)):
        assert opdispatch.equal(got, want)
    with pytest.raises(TypeError, match="forward\\(\\) takes 3 positional arguments but 2"):
        g(x)


def test_graph_str_lists_nodes():
    g = make_fx(lambda x: x.neg())(opdispatch.ones(2))
    assert str(g.graph).splitlines()[1:] == [
        "    %x_1 : [#users=1] = placeholder[target=x_1](args = (), kwargs = {})",
        "    %neg : [#users=1] = call_function[target=aten.neg.default](args = (%x_1,), "
        "kwargs = {})",
        "    %output : [#users=0] = output[target=output](args = (%neg,), kwargs = {})"]


def test_tracing_modes():
    with pytest.raises(AssertionError, match="Unexpected tracing type: bad"):
        make_fx(lambda x: x, tracing_mode="bad")
    with pytest.raises(NotImplementedError, match="symbolic"):
        make_fx(lambda x: x, tracing_mode="symbolic")


def test_an_exception_in_f_leaves_no_capture_behind():
    def boom(x):
        x.neg()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        make_fx(boom)(opdispatch.ones(2))
    assert opdispatch._C._len_torch_dispatch_stack() == 0
    opdispatch.ones(2).exp()  # recorded by no graph
    assert code(lambda x: x.cos(), opdispatch.ones(2)) == (
        "\n\n\ndef forward(self, x_1):\n"
        "    cos = opdispatch.ops.aten.cos.default(x_1);  x_1 = None\n"
        "    return cos\n    ")


def test_a_mode_left_entered_in_f_is_refused_and_the_stack_restored():
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    class Passing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    def f(x):
        Passing().__enter__()  # never exited
        return x + 1

    with pytest.raises(RuntimeError, match="a mode entered inside the traced function was not "
                                           "exited"):
        make_fx(f)(opdispatch.ones(2))
    assert opdispatch._C._len_torch_dispatch_stack() == 0


def test_fake_tracing_mode_runs_under_fake_tensor_mode():
    def f(x, y):
        return (x @ y).relu().sum(1) * 2

    g = make_fx(f, tracing_mode="fake")(opdispatch.randn(2, 3), opdispatch.randn(3, 4))
    assert g.code == (
        "\n\n\ndef forward(self, x_1, y_1):\n"
        "    mm = opdispatch.ops.aten.mm.default(x_1, y_1);  x_1 = y_1 = None\n"
        "    relu = opdispatch.ops.aten.relu.default(mm);  mm = None\n"
        "    sum_1 = opdispatch.ops.aten.sum.dim_IntList(relu, [1]);  relu = None\n"
        "    mul = opdispatch.ops.aten.mul.Tensor(sum_1, 2);  sum_1 = None\n"
        "    return mul\n    ")
    assert g(opdispatch.ones(2, 3), opdispatch.ones(3, 4)).tolist() == [24., 24.]

    def grad_of(x, w):  # the joint graph, computed on the Meta kernels
        return opdispatch.autograd.grad((x @ w).tanh().sum(), w)

    g = make_fx(grad_of, tracing_mode="fake")(
        opdispatch.randn(2, 3), opdispatch.randn(3, 4, requires_grad=True))
    assert ("    tanh_backward = opdispatch.ops.aten.tanh_backward.default(expand, tanh);"
            "  expand = tanh = None\n") in g.code
    x, w = opdispatch.randn(2, 3), opdispatch.randn(3, 4, requires_grad=True)
    assert opdispatch.allclose(g(x, w)[0], grad_of(x, w)[0])

    def k(x):  # a real tensor inside: an attribute of the graph
        return x + opdispatch.tensor([1., 2.])

    with pytest.raises(Exception, match="non-Fake Tensor inputs"):
        make_fx(k, tracing_mode="fake")(opdispatch.ones(2))
    g = make_fx(k, tracing_mode="fake", _allow_non_fake_inputs=True)(opdispatch.ones(2))
    assert "add = opdispatch.ops.aten.add.Tensor(x_1, _tensor_constant0)" in g.code
    assert g(opdispatch.ones(2)).tolist() == [2., 3.]


def test_list_and_dict_inputs_use_the_pytree_code():
    # torch 1.13's make_fx output for the same functions.
    g = make_fx(lambda xs, y: xs[0] + xs[1] * y)(
        [opdispatch.ones(2), opdispatch.ones(2)], opdispatch.ones(2))
    assert g.code == (
        "\n\n\ndef forward(self, xs, y):\n"
        "    xs_1, xs_2, y_1, = fx_pytree.tree_flatten_spec([xs, y], self._in_spec)\n"
        "    mul = opdispatch.ops.aten.mul.Tensor(xs_2, y_1);  xs_2 = y_1 = None\n"
        "    add = opdispatch.ops.aten.add.Tensor(xs_1, mul);  xs_1 = mul = None\n"
        "    return pytree.tree_unflatten([add], self._out_spec)\n    ")
    a, b, c = opdispatch.tensor([1., 2.]), opdispatch.tensor([3., 4.]), opdispatch.tensor([5., 6.])
    assert g([a, b], c).tolist() == [16., 26.]
    g = make_fx(lambda d: (d["a"].neg(), [d["b"]]))({"a": a, "b": b})
    assert g.code == (
        "\n\n\ndef forward(self, d):\n"
        "    d_1, d_2, = fx_pytree.tree_flatten_spec([d], self._in_spec)\n"
        "    neg = opdispatch.ops.aten.neg.default(d_1);  d_1 = None\n"
        "    return pytree.tree_unflatten([neg, d_2], self._out_spec)\n    ")
    neg, (same,) = g({"a": b, "b": c})
    assert neg.tolist() == [-3., -4.] and same.data_ptr() == c.data_ptr()


def test_optional_tensors_print_as_torch_passes_them():
    def f(x, y):
        return opdispatch.ops.aten.clamp.Tensor(x, None, y), opdispatch.clamp(x, y)

    # torch 1.13's text: None where a later argument is given, nothing for trailing defaults.
    assert code(f, opdispatch.ones(2), opdispatch.ones(2)) == (
        "\n\n\ndef forward(self, x_1, y_1):\n"
        "    clamp = opdispatch.ops.aten.clamp.Tensor(x_1, None, y_1)\n"
        "    clamp_1 = opdispatch.ops.aten.clamp.Tensor(x_1, y_1);  x_1 = y_1 = None\n"
        "    return (clamp, clamp_1)\n    ")


class _Wrapper(opdispatch.Tensor):
    """A wrapper subclass (no memory of its own) whose __torch_dispatch__ runs on the tensor it
    wraps, as PyTorch's tests' LoggingTensor does."""

    @staticmethod
    def __new__(cls, elem):
        r = opdispatch.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype,
                                                     device=elem.device)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(a):
            return a.elem if isinstance(a, _Wrapper) else a

        out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        return _Wrapper(out) if isinstance(out, opdispatch.Tensor) else out


def test_subclass_inputs_reach_their_torch_dispatch():
    # The capture records the operators on the subclass and calls them again, which reaches
    # __torch_dispatch__ (below the Python key the backend would read a wrapper's no memory).
    g = make_fx(lambda a: (a * 2).neg())(_Wrapper(opdispatch.tensor([1., 2.])))
    assert g.code == (
        "\n\n\ndef forward(self, a_1):\n"
        "    mul = opdispatch.ops.aten.mul.Tensor(a_1, 2);  a_1 = None\n"
        "    neg = opdispatch.ops.aten.neg.default(mul);  mul = None\n"
        "    return neg\n    ")
    assert g(opdispatch.tensor([3., 4.])).tolist() == [-6., -8.]


def test_where_with_a_number_records_a_tensor_that_runs_again():
    # where.ScalarOther makes the number a tensor (scalar_tensor), as torch 1.13's does, so the
    # captured where.self call takes tensors and the graph runs again.
    def f(c, x):
        return opdispatch.where(c, x, 0.5)

    c, x = opdispatch.tensor([True, False]), opdispatch.arange(2, dtype=opdispatch.int32)
    g = make_fx(f)(c, x)
    assert "opdispatch.ops.aten.scalar_tensor.default(0.5" in g.code
    assert "opdispatch.ops.aten.where.self(c_1, x_1, scalar_tensor)" in g.code
    out = g(c, x)
    assert out.dtype == opdispatch.float32
    assert out.tolist() == f(c, x).tolist() == [0.0, 0.5]
