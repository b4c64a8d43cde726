"""opdispatch.func.functionalize and the functionalize plugin (issue 34 §3), in the spirit of
PyTorch's test/test_functionalization.py: in-place and out= operators run as their functional
forms, mutations through views reach their base, input mutations are written back, views become
copies with remove="mutations_and_views"; values against torch 1.13 eager. What the layer
passes below itself is read from opdispatch.trace()."""

import gc

import numpy as np
import pytest

import opdispatch as opd
from opdispatch.func import functionalize

torch = pytest.importorskip("torch", reason="compares with torch 1.13 (Debian's python3-torch)")

_X = np.arange(12, dtype=np.float32).reshape(3, 4) / 4 - 1


def _inputs():
    return opd.tensor(_X.copy()), torch.tensor(_X.copy())


def _calls_below(trace):
    """The operators the Functionalize layer called (one hop below each Functionalize hop)."""
    hops = trace.hops
    below = []
    for i, h in enumerate(hops):
        if h.key != "Functionalize":
            continue
        for g in hops[i + 1 :]:
            if g.depth <= h.depth:
                break
            # _opd_requires_grad: the layer asking whether a view autograd tracks requires grad.
            if g.depth == h.depth + 1 and g.op != "aten::_opd_requires_grad":
                below.append(g.op)
    return below


def _top_level(trace, op):
    """How many calls of `op` the test itself made (functionalize's write-back of inputs)."""
    return sum(1 for h in trace.hops if h.op == op and h.depth == 0)


def _is_mutating(op):
    name, _, overload = op.partition("::")[2].partition(".")
    return (name.endswith("_") and not name.startswith("__")) or "out" in overload


def _check(f, *, remove="mutations"):
    """Runs f eagerly on torch and functionalized on opdispatch; compares results and inputs."""
    x, tx = _inputs()
    with opd.trace() as t:
        out = functionalize(f, remove=remove)(x)
    expected = f(tx)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6)
    below = _calls_below(t)
    assert below, "nothing reached the Functionalize layer"
    assert not [op for op in below if _is_mutating(op)], below
    return below


def test_intermediate_mutations_become_functional():
    def f(a):
        b = a + 1
        c = b.view(-1)
        c.add_(1)
        return b

    below = _check(f)
    assert "aten::add.Tensor" in below and "aten::add_.Scalar" not in below


def test_out_and_factories_inside_the_function():
    def f(a):
        lib = torch if isinstance(a, torch.Tensor) else opd
        o = lib.empty(3, 4)
        lib.mul(a, 2, out=o)
        z = lib.zeros(3, 4)
        z.add_(o).sub_(a)
        return z

    below = _check(f)
    assert "aten::mul.Tensor" in below


_VIEWS = [
    lambda b: b,
    lambda b: b.view(-1)[2:5],
    lambda b: b.t()[1],
    lambda b: b.transpose(0, 1)[:, 2],
    lambda b: b.permute(1, 0).unsqueeze(0)[0, 1:3],
    lambda b: b[1],
    lambda b: b[:, 1:3],
    lambda b: b.diagonal(),
    lambda b: b.diagonal(1),
    lambda b: b.reshape(2, 6)[1],
    lambda b: b.unsqueeze(1).squeeze(1)[0],
    lambda b: b.narrow(1, 1, 2),
    lambda b: b.split(2, dim=1)[1],
    lambda b: b.unbind(0)[2],
    lambda b: b.as_strided((2, 2), (1, 4)),
    lambda b: b.as_strided((3,), (5,), 1),
]
_VIEW_IDS = ["base", "view", "t", "transpose", "permute_unsqueeze", "select", "slice", "diagonal",
    "diagonal_offset", "reshape", "squeeze", "narrow", "split", "unbind", "as_strided",
    "as_strided_offset"]


@pytest.mark.parametrize("view", _VIEWS, ids=_VIEW_IDS)
@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_a_mutation_through_a_view_reaches_its_base_and_siblings(view, remove):
    def f(a):
        b = a * 2
        other = b[0]  # an alias made before the mutation sees it too
        v = view(b)
        v.mul_(10).add_(1)
        return b + other.sum()

    _check(f, remove=remove)


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
def test_a_mutation_through_detach_reaches_the_tensor(grad):
    def f(a):
        b = (a * 1).detach()
        b.add_(1)
        return b * 1

    with opd.set_grad_enabled(grad), torch.set_grad_enabled(grad):
        _check(f)


def test_expand_reads_the_current_base():
    def f(a):
        b = a.clone()
        e = b[0].expand(2, 4)
        b[0].add_(1)
        return e * 1

    _check(f)


def test_input_mutations_are_written_back():
    def f(a):
        a.add_(1)
        a[0].mul_(3)
        return a.sum()

    below = _check(f)
    # mul_ on a[0] reaches the base through select's inverse when the base is next read.
    assert below == ["aten::add.Scalar", "aten::select.int", "aten::mul.Scalar",
                     "aten::select_scatter", "aten::sum"]


def test_zero_runs_as_a_fill():
    def f(a):
        b = a * 1
        b[1].zero_()
        a.t()[0].zero_()
        return b

    _check(f)


def test_input_mutation_through_a_view_is_written_back():
    def f(a):
        v = a.view(4, 3)
        v[1:3].fill_(7)
        return v.clone()

    _check(f)


def test_an_input_left_alone_is_not_copied_into():
    x, _ = _inputs()
    with opd.trace() as t:
        functionalize(lambda a: a * 2)(x)
    assert _top_level(t, "aten::copy_") == 0
    with opd.trace() as t:
        functionalize(lambda a: a.mul_(2))(x)
    assert _top_level(t, "aten::copy_") == 1
    np.testing.assert_allclose(x.numpy(), 2 * _X)


def test_remove_mutations_and_views_replaces_views_by_copies():
    x, tx = _inputs()

    def f(a):
        b = a.view(-1)
        b.add_(1)
        return b.view(3, 4)[1]

    out = functionalize(f, remove="mutations_and_views")(x)
    np.testing.assert_allclose(out.numpy(), f(tx).numpy())
    np.testing.assert_allclose(x.numpy(), tx.numpy())
    out.fill_(0)  # not a view of x
    np.testing.assert_allclose(x.numpy(), tx.numpy())
    below = _check(f, remove="mutations_and_views")
    assert not [op for op in below if op in ("aten::view", "aten::select.int")], below
    assert "aten::view_copy" in below and "aten::select_copy.int" in below, below


def test_remove_mutations_keeps_views():
    below = _check(lambda a: a.view(-1).t().add(0))
    assert "aten::view" in below and "aten::clone" not in below


def test_each_thread_has_its_own_remove_setting():
    import threading

    barrier = threading.Barrier(2)
    seen = {}

    def run(remove):
        try:
            x, _ = _inputs()
            barrier.wait(30)
            for _ in range(20):
                with opd.trace() as t:
                    out = functionalize(lambda a: a.view(-1).add_(1).view(3, 4), remove=remove)(x)
                seen.setdefault(remove, set()).add(t.count("aten::clone"))
            seen[remove + " value"] = out.numpy().tolist()
        except Exception as e:  # reported by the assertions below
            seen[remove] = e

    threads = [threading.Thread(target=run, args=(r,)) for r in ("mutations", "mutations_and_views")]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert seen["mutations"] == {0}
    assert 0 not in seen["mutations_and_views"]
    assert seen["mutations value"] == seen["mutations_and_views value"]


@pytest.mark.parametrize("view,view_id", list(zip(_VIEWS, _VIEW_IDS)), ids=_VIEW_IDS)
def test_gradients_through_a_mutated_view(view, view_id):
    def f(a):
        b = a * 2
        other = b[0]
        view(b).mul_(a[1, 1]).add_(1)
        return (b * (other.sum() + 1)).sum()

    x = opd.tensor(_X.copy(), requires_grad=True)
    tx = torch.tensor(_X.copy(), requires_grad=True)
    if view_id not in ("split", "unbind"):
        f(tx).backward()
        expected = tx.grad.numpy()
    else:
        # torch refuses to write into a view of a multi-output view operator, opdispatch's
        # autograd does not (a difference of the autograd plugin): against opdispatch's eager.
        with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
            f(tx).backward()
        eager = opd.tensor(_X.copy(), requires_grad=True)
        f(eager).backward()
        expected = eager.grad.numpy()
    functionalize(f)(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-5)


def _grad_case_views(a, w):
    h = a.matmul(w)
    h.add_(1)
    h[:, 0].mul_(2)
    h.t()[1].add_(h[:, 0])
    return h.relu().sum()


def _grad_case_input_view(a, w):
    b = a * 1
    v = b.view(4, 3)[1:3]
    v.mul_(w.sum())
    return (b * a).sum()


@pytest.mark.parametrize("case", [_grad_case_views, _grad_case_input_view])
@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_gradients_flow_through_functionalize(case, remove):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    xs = [opd.tensor(a, requires_grad=True), opd.tensor(w, requires_grad=True)]
    ts = [torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)]
    out = functionalize(case, remove=remove)(*xs)
    assert out.requires_grad and not opd.ops.functionalize._is_functional_tensor(out)
    out.backward()
    case(*ts).backward()
    for x, t in zip(xs, ts):
        assert not opd.ops.functionalize._is_functional_tensor(x.grad)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_outputs_and_nested_containers_are_unwrapped():
    x, _ = _inputs()
    out = functionalize(lambda a, d: {"y": (a + d["k"], [a.sum()])})(x, {"k": x})
    assert set(out) == {"y"}
    y, (s,) = out["y"]
    assert not opd.ops.functionalize._is_functional_tensor(y)
    np.testing.assert_allclose(y.numpy(), 2 * _X)
    assert s.item() == pytest.approx(float(_X.sum()))


def test_invalid_remove_is_functorch_error():
    from functorch.experimental import functionalize as torch_functionalize

    with pytest.raises(RuntimeError) as expected:
        torch_functionalize(lambda a: a, remove="views")
    with pytest.raises(RuntimeError) as got:
        functionalize(lambda a: a, remove="views")
    assert str(got.value) == str(expected.value)


def test_mutating_a_tensor_from_outside_with_a_functional_one_is_refused():
    outside = opd.zeros(3, 4)
    x, _ = _inputs()
    with pytest.raises(RuntimeError, match="mutating a non-functional tensor with a functional"):
        functionalize(lambda a: outside.add_(a))(x)
    assert outside.sum().item() == 0


def test_a_mutating_operator_without_a_functional_overload_is_refused():
    lib = opd.library.Library("functest", "DEF")
    try:
        lib.define("bump_(Tensor(a!) x) -> Tensor(a!)")
        lib.impl("bump_", lambda x: x.add_(1), "CPU")
        x, _ = _inputs()
        with pytest.raises(RuntimeError, match=r"operator that either mutates or its inputs: "
                           r"functest::bump_\.\. Getting these operators"):
            functionalize(lambda a: opd.ops.functest.bump_(a * 1))(x)
    finally:
        lib.close()


def test_a_view_without_a_kernel_is_refused():
    lib = opd.library.Library("functest_view", "DEF")
    try:
        lib.define("flat(Tensor(a) x) -> Tensor(a)")
        lib.impl("flat", lambda x: x.view(-1), "CPU")
        x, _ = _inputs()
        with pytest.raises(RuntimeError, match="functest_view::flat returned a view of its input"):
            functionalize(lambda a: opd.ops.functest_view.flat(a))(x)
    finally:
        lib.close()


def test_a_mutation_through_view_dtype_reaches_its_base():
    def f(lib):
        def g(a):
            b = a * 1
            b.view(lib.int32)[0].fill_(0)  # the bits of +0.0
            return b + 1
        return g

    for remove in ("mutations", "mutations_and_views"):
        x, tx = _inputs()
        with opd.trace() as t:
            out = functionalize(f(opd), remove=remove)(x)
        np.testing.assert_allclose(out.numpy(), f(torch)(tx).numpy())
        below = _calls_below(t)
        assert ("aten::view_copy.dtype" in below) == (remove == "mutations_and_views"), below


def _mapped(path):
    with open("/proc/self/maps") as f:
        return path in f.read()


def test_an_unloaded_plugin_stays_mapped_while_a_functional_tensor_lives():
    functionalize(lambda a: a)(opd.ones(1))  # loads the plugin
    library = opd.plugins.status("functionalize").library
    w = opd.ops.functionalize._to_functional_tensor(opd.ones(2))
    v = w.view(2, 1)  # a view: a second state sharing the first's storage
    del w
    gc.collect()
    try:
        status = opd.plugins.unload("functionalize")
        assert status.state == "unloading"
        assert _mapped(library)
        assert v.numpy().tolist() == [[1.0], [1.0]]  # its memory reads the value it wraps
        del v
        gc.collect()
        assert opd.plugins.status("functionalize").state == "unloaded"
        assert not _mapped(library)
    finally:
        if opd.plugins.status("functionalize").state != "loaded":
            opd.plugins.load("functionalize")
    np.testing.assert_allclose(functionalize(lambda a: a.add_(1))(opd.ones(2)).numpy(), [2, 2])


def test_capture_ops_sees_only_functional_operators_and_the_write_back():
    from opdispatch.testing import capture_ops

    def f(a):
        b = a + 1
        b.view(-1).add_(1)
        a.t()[0].mul_(2)
        return b

    x, tx = _inputs()
    with capture_ops() as calls:
        out = functionalize(f)(x)
    names = [func.name() for func, _, _ in calls]
    assert names == ["aten::add.Tensor", "aten::view", "aten::add.Scalar", "aten::t",
                     "aten::select.int", "aten::mul.Scalar", "aten::view", "aten::t",
                     "aten::select_scatter", "aten::t", "aten::copy_"]
    assert [func._schema.is_mutable for func, _, _ in calls].count(True) == 1
    assert calls[-1][1][0].data_ptr() == x.data_ptr()  # the write-back into the caller's tensor
    np.testing.assert_allclose(out.numpy(), f(tx).numpy())
    np.testing.assert_allclose(x.numpy(), tx.numpy())


def _make_fx():
    from opdispatch.fx.experimental.proxy_tensor import make_fx

    return make_fx


def _targets(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def _intermediate_mutation(a):
    b = a + 1
    c = b.view(-1)
    c.add_(1)
    return b


def test_make_fx_of_functionalize_has_no_mutation():
    make_fx = _make_fx()
    x = opd.tensor(_X.copy())
    aten = opd.ops.aten
    gm = make_fx(functionalize(_intermediate_mutation))(x)
    # torch's make_fx(functionalize(f)): add, view, add, view (functorch's docstring).
    assert _targets(gm) == [aten.add.Tensor, aten.view.default, aten.add.Scalar, aten.view.default]
    assert not [t for t in _targets(gm) if t._schema.is_mutable]
    np.testing.assert_allclose(gm(x).numpy(), _intermediate_mutation(x.clone()).numpy())


def test_make_fx_of_functionalize_without_views_has_no_aliasing():
    make_fx = _make_fx()
    x = opd.tensor(_X.copy())
    gm = make_fx(functionalize(_intermediate_mutation, remove="mutations_and_views"))(x)
    targets = _targets(gm)
    aten = opd.ops.aten
    # torch's: add, view_copy, add, view_copy (add.Tensor there; add_(1) is add.Scalar here).
    assert targets == [aten.add.Tensor, aten.view_copy.default, aten.add.Scalar,
                       aten.view_copy.default]
    produced = {n.name: n.target for n in gm.graph.nodes if n.op == "call_function"}
    outputs = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    for out in outputs:
        assert produced[out.name]._schema.returns[0].alias_info is None, gm.code


def test_make_fx_of_an_input_mutation_ends_with_one_copy_():
    make_fx = _make_fx()
    x = opd.tensor(_X.copy())

    def f(a):
        b = a.view(-1)
        b.add_(1)
        return a

    gm = make_fx(functionalize(f))(x)
    mutable = [t for t in _targets(gm) if t._schema.is_mutable]
    assert mutable == [opd.ops.aten.copy_.default] and _targets(gm)[-1] == mutable[0]


def test_make_fx_captures_the_gradient_through_functionalize():
    make_fx = _make_fx()

    def step(x):
        y = functionalize(_intermediate_mutation)(x).sum()
        return opd.autograd.grad(y, [x])[0]

    x = opd.tensor(_X.copy(), requires_grad=True)
    gm = make_fx(step)(x)
    assert opd.ops.aten.mul.Tensor not in _targets(gm)  # add's gradient: ones, no product
    np.testing.assert_allclose(gm(x).numpy(), step(x).numpy())
    np.testing.assert_allclose(gm(x).numpy(), np.ones_like(_X))


def _every_view(lib):
    def f(a):
        b = a.t()
        b[0].mul_(2)
        c = a.transpose(0, 1).unsqueeze(0).squeeze(0).permute(1, 0).expand(2, 3, 4)
        d = a.diagonal() + a[1:, ::2].sum() + a.select(1, 2).sum()
        e = a.as_strided((2, 2), (1, 4), 1)
        e.add_(1)
        return c.sum(0) + d.sum() + a.view(12).sum() + e.sum()
    return f


def _copy_ops(names):
    return sorted({n for n in names if n.endswith("_copy") or n.endswith("_scatter")})


def test_make_fx_of_functionalize_emits_the_view_copies_as_torch():
    from functorch import functionalize as torch_functionalize
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    make_fx = _make_fx()
    x, tx = _inputs()
    gm = make_fx(functionalize(_every_view(opd), remove="mutations_and_views"))(x.clone())
    tgm = torch_make_fx(torch_functionalize(_every_view(torch), remove="mutations_and_views"))(
        tx.clone())
    ours = [t._schema.name.partition("::")[2] for t in _targets(gm)]
    theirs = [n.target._schema.name.partition("::")[2] for n in tgm.graph.nodes
              if n.op == "call_function"]
    # The same copies and scatters as torch 1.13's functorch (t_copy, select_copy,
    # transpose_copy, ..., as_strided_copy, as_strided_scatter), no view, one copy_ at the end.
    # How many of each differs: this layer applies a pending mutation when the next view is
    # made, where torch's makes the view of the stale base and replays it after.
    assert _copy_ops(ours) == _copy_ops(theirs), gm.code
    assert "view_copy" in ours and "as_strided_scatter" in ours
    assert not [t for t in _targets(gm) if t._schema.returns[0].alias_info is not None
                and not t._schema.is_mutable], gm.code
    assert [t for t in _targets(gm) if t._schema.is_mutable] == [opd.ops.aten.copy_.default]
    expected = _every_view(torch)(tx.clone())
    np.testing.assert_allclose(gm(x.clone()).numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        functionalize(_every_view(opd), remove="mutations")(x.clone()).numpy(), expected.numpy(),
        rtol=1e-6)


def test_as_strided_scatter_wants_a_contiguous_self_that_requires_grad():
    # functionalize's as_strided inverse; its gradient holds for a contiguous self only, which
    # torch 1.13 asserts with the same text (the OpInfo harness passes no requires_grad to torch).
    for lib in (opd, torch):
        self = lib.ones(4, 3, requires_grad=True).t()
        with pytest.raises(RuntimeError, match="as_strided_scatter is currently only supported "
                           "for contiguous inputs"):
            lib.as_strided_scatter(self, lib.ones(2, 2), [2, 2], [1, 2])
        out = lib.as_strided_scatter(self.detach(), lib.ones(2, 2), [2, 2], [1, 2])
        assert out.stride() == (1, 3)  # clone() keeps a dense layout, as torch's


def test_as_strided_scatter_gradients_through_a_view_of_a_larger_gradient():
    # cat's gradient hands y a contiguous view at storage offset 20 of a larger tensor; the view's
    # storage_offset (1) counts from y's own start. torch 1.13's formulas read the larger
    # tensor's first elements for src and leave self's gradient uninitialised here.
    a = opd.zeros(3, 4, requires_grad=True)
    b = opd.zeros(2, 2, requires_grad=True)
    y = opd.as_strided_scatter(a, b, [2, 2], [1, 2], 1)
    w = np.arange(32, dtype=np.float32).reshape(8, 4)
    (opd.cat([opd.zeros(5, 4), y]) * opd.tensor(w)).sum().backward()
    g = w[5:].reshape(-1)
    np.testing.assert_array_equal(b.grad.numpy(), [[g[1], g[3]], [g[2], g[4]]])
    expected = g.copy()
    expected[1:5] = 0
    np.testing.assert_array_equal(a.grad.numpy(), expected.reshape(3, 4))
