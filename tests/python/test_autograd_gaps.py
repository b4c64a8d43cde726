"""Gradients issue 31 lacked, against torch 1.13: scatter_reduce.two (every reduce, with and
without include_self, zeros for prod), scatter's reduce overloads (refused at backward, as
torch), cumprod with zeros in the input (first and second order), clamp.Tensor's min and max."""

import pytest

import opdispatch as opd
from opdispatch.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _both(values, requires_grad=True):
    """The same float64 values as an opdispatch and a torch tensor."""
    o = opd.tensor(values, dtype=opd.float64).requires_grad_(requires_grad)
    t = torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad)
    return o, t


def _grads(out, inputs, grad_out, create_graph=False):
    return opd.autograd.grad([out], list(inputs), [grad_out], create_graph=create_graph)


def _grad_like(t):
    """A gradient of t's shape with distinct values, as an opdispatch and a torch tensor."""
    tg = torch.arange(t.numel(), dtype=torch.float64).reshape(t.shape) * 0.5 + 1
    return opd.tensor(tg.tolist(), dtype=opd.float64), tg


def _close(ours, theirs):
    assert ours.shape == tuple(theirs.shape)
    assert torch.allclose(torch.tensor(ours.tolist(), dtype=torch.float64), theirs,
                          rtol=1e-12, atol=1e-12, equal_nan=True), (ours.tolist(),
                                                                     theirs.tolist())


# ---- cumprod -------------------------------------------------------------------------------

CUMPROD_CASES = [
    ([[2., 0., 3., 0., 1.5], [1., 2., 0., 4., 0.5]], 1),  # two zeros, one zero
    ([[0., 2., 3.], [1., 0., 0.], [0., 0., 0.]], 1),  # leading zero, adjacent zeros, all zero
    ([[0., 2., 3.], [1., 0., 0.], [0., 0., 0.]], 0),
    ([[[1., 0.], [2., 3.]], [[0., -1.], [4., 0.]]], -1),
    ([1.5, -2., 0.5], 0),  # no zero
    ([0.], 0),
]


@pytest.mark.parametrize("values,dim", CUMPROD_CASES)
def test_cumprod_zeros_match_torch(values, dim):
    x, tx = _both(values)
    g, tg = _grad_like(tx)
    gx, = _grads(opd.cumprod(x, dim), [x], g)
    tgx, = torch.autograd.grad([torch.cumprod(tx, dim)], [tx], [tg])
    _close(gx, tgx)


@pytest.mark.parametrize("values,dim", CUMPROD_CASES)
def test_cumprod_zeros_gradgradcheck(values, dim):
    x, _ = _both(values)
    assert gradcheck(lambda a: opd.cumprod(a, dim), (x,))
    assert gradgradcheck(lambda a: opd.cumprod(a, dim), (x,))


def test_cumprod_double_backward_matches_torch():
    # create_graph: the later zeros' gradients carry their derivative in the earlier zeros.
    vals = [[2., 0., 3., 0., 1.5, 0.], [0., 0., 1., 2., 0., 3.]]
    x, tx = _both(vals)
    g, tg = _both([[1., 2., 3., 4., 5., 6.], [.5, -1., 2., 1., 3., 2.]])
    gx, = _grads(opd.cumprod(x, 1), [x], g, create_graph=True)
    tgx, = torch.autograd.grad([torch.cumprod(tx, 1)], [tx], [tg], create_graph=True)
    w, tw = _both([[1., -2., 0.5, 3., 1., 2.], [2., 1., -1., 0.5, 4., 1.]], requires_grad=False)
    ours = opd.autograd.grad([gx], [x, g], [w])
    theirs = torch.autograd.grad([tgx], [tx, tg], [tw])
    for o, t in zip(ours, theirs):
        _close(o, t)


def test_cumprod_zeros_with_dtype():
    # torch 1.13 raises here (its cumprod_backward masked_scatters the float64 gradient into a
    # float32 buffer); the gradient is the float64 computation's, cast back to float32.
    vals = [[1., 0., 2.], [3., 4., 0.]]
    x = opd.tensor(vals, requires_grad=True)
    opd.cumprod(x, 1, dtype=opd.float64).sum().backward()
    tx = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    torch.cumprod(tx, 1).sum().backward()
    assert x.grad.dtype == opd.float32
    assert x.grad.tolist() == tx.grad.tolist()


# ---- scatter_reduce.two --------------------------------------------------------------------

REDUCES = ("sum", "prod", "mean", "amax", "amin")
SELF = [[1.5, -2., 3., 0.5, 4.], [2.5, 1., -0.5, 3.5, -1.5]]
SRC = [[0.7, -1.2, 2.2, 3.1, -0.4, 1.9], [-2.6, 0.3, 1.4, -3.3, 2.8, 0.9]]
INDEX = [[0, 1, 0, 3, 1, 0], [4, 4, 2, 0, 2, 4]]  # repeats; positions 2 and 4 of row 0 untouched


def _scatter_reduce_grads(reduce, include_self, self_vals=SELF, src_vals=SRC, index=INDEX,
                          dim=1):
    x, tx = _both(self_vals)
    s, ts = _both(src_vals)
    idx = opd.tensor(index)
    tidx = torch.tensor(index)
    y = opd.scatter_reduce(x, dim, idx, s, reduce, include_self=include_self)
    ty = torch.scatter_reduce(tx, dim, tidx, ts, reduce, include_self=include_self)
    g, tg = _both([[float(i + 1) + 0.5 * j for i in range(len(self_vals[0]))]
                   for j in range(len(self_vals))], requires_grad=False)
    return _grads(y, [x, s], g), torch.autograd.grad([ty], [tx, ts], [tg])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_matches_torch(reduce, include_self):
    ours, theirs = _scatter_reduce_grads(reduce, include_self)
    for o, t in zip(ours, theirs):
        _close(o, t)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_zeros_match_torch(include_self):
    # self zero at 1; src: one zero sent to 0, two zeros sent to 2, a zero alone at 3.
    self_vals = [[2., 0., 3., 4., 1.5]]
    src_vals = [[0., 5., 0., 0., 7., 2., 0.]]
    index = [[0, 0, 2, 2, 2, 1, 3]]
    ours, theirs = _scatter_reduce_grads("prod", include_self, self_vals, src_vals, index)
    for o, t in zip(ours, theirs):
        _close(o, t)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_gradgradcheck(reduce, include_self):
    x, _ = _both(SELF)
    s, _ = _both(SRC)
    idx = opd.tensor(INDEX)

    def f(a, b):
        return opd.scatter_reduce(a, 1, idx, b, reduce, include_self=include_self)
    assert gradcheck(f, (x, s))
    assert gradgradcheck(f, (x, s))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_scatter_reduce_prod_single_zero_gradgradcheck():
    x, _ = _both([[2., 0., 3., 4.]])
    s, _ = _both([[0., 5., 0., 7., 2., 1.5]])
    idx = opd.tensor([[0, 0, 1, 2, 3, 3]])
    for include_self in (True, False):
        def f(a, b):
            return opd.scatter_reduce(a, 1, idx, b, "prod", include_self=include_self)
        assert gradgradcheck(f, (x, s))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_scatter_reduce_prod_two_zeros_refuse_double_backward():
    # torch 1.13's refusal, raised when the double backward reaches src's gradient.
    x, _ = _both([2., 3.])
    s, _ = _both([0., 5., 0., 1.])
    y = opd.scatter_reduce(x, 0, opd.tensor([0, 0, 0, 1]), s, "prod")
    gs, = opd.autograd.grad([y.sum()], [s], create_graph=True)
    assert gs.tolist() == [0., 0., 0., 3.]
    with pytest.raises(RuntimeError, match=r"scatter_reduce\(\): Double backward is unsupported "
                                           r"for src when >1 zeros in src are scattered to the "
                                           r"same position in self"):
        gs.sum().backward()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_scatter_reduce_amax_tie_without_self_follows_the_mathematics():
    # include_self=False: self[1] == 5 is replaced by the srcs' maximum, 5. torch 1.13 counts
    # self in the tie and then drops its share (src gets 5 of grad 10); self is not reduced here,
    # so the one src equal to the maximum gets all of it.
    x, _ = _both([1., 5., 3.])
    s, _ = _both([5., 2., 3., 3.])
    y = opd.scatter_reduce(x, 0, opd.tensor([1, 1, 2, 2]), s, "amax", include_self=False)
    gx, gs = _grads(y, [x, s], opd.tensor([1., 10., 100.], dtype=opd.float64))
    assert gx.tolist() == [1., 0., 0.]
    assert gs.tolist() == [10., 0., 50., 50.]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_scatter_reduce_inplace_records_history():
    x, tx = _both(SELF)
    s, ts = _both(SRC)
    y = x * 1
    y.scatter_reduce_(1, opd.tensor(INDEX), s, "amin", include_self=True)
    ty = tx * 1
    ty.scatter_reduce_(1, torch.tensor(INDEX), ts, "amin", include_self=True)
    y.sum().backward()
    ty.sum().backward()
    _close(x.grad, tx.grad)
    _close(s.grad, ts.grad)


# ---- scatter.reduce, scatter.value_reduce: no derivative in torch 1.13 ---------------------

@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_overloads_refuse_backward(reduce):
    x, tx = _both([[1., 2., 3.]])
    s, ts = _both([[4., 5.]])
    idx = opd.tensor([[0, 2]])
    for y, ty in [(opd.scatter(x, 1, idx, s, reduce=reduce),
                   torch.scatter(tx, 1, torch.tensor([[0, 2]]), ts, reduce=reduce)),
                  (opd.scatter(x, 1, idx, 2.0, reduce=reduce),
                   torch.scatter(tx, 1, torch.tensor([[0, 2]]), 2.0, reduce=reduce))]:
        assert y.requires_grad and ty.requires_grad  # the forward runs
        _close(y.detach(), ty.detach())
        message = "derivative for aten::scatter is not implemented"
        with pytest.raises(RuntimeError, match=message):
            ty.sum().backward()
        with pytest.raises(RuntimeError, match=message):
            y.sum().backward()


# ---- clamp.Tensor --------------------------------------------------------------------------

# Ties (self == min, self == max, min == max), min > max and a NaN.
CLAMP_SELF = [0., 1., 2., 3., 4., 2., 2., 5., 0., float("nan"), 1.]
CLAMP_MIN = [1., 1., 1., 1., 1., 3., 2., 3., 3., 0., float("nan")]
CLAMP_MAX = [3., 3., 3., 3., 3., 1., 2., 3., 3., 2., 2.]


@pytest.mark.parametrize("bounds", ["both", "min", "max"])
def test_clamp_tensor_grads_match_torch(bounds):
    x, tx = _both(CLAMP_SELF)
    lo, tlo = _both(CLAMP_MIN)
    hi, thi = _both(CLAMP_MAX)
    mn, tmn = (lo, tlo) if bounds != "max" else (None, None)
    mx, tmx = (hi, thi) if bounds != "min" else (None, None)
    y = opd.clamp(x, mn, mx)
    ty = torch.clamp(tx, tmn, tmx)
    inputs = [t for t in (x, mn, mx) if t is not None]
    tinputs = [t for t in (tx, tmn, tmx) if t is not None]
    g, tg = _both([float(i + 1) for i in range(len(CLAMP_SELF))], requires_grad=False)
    for o, t in zip(_grads(y, inputs, g), torch.autograd.grad([ty], tinputs, [tg])):
        _close(o, t)


def test_clamp_tensor_broadcast_bounds_gradcheck():
    x, _ = _both([[-2.1, 0.3, 1.7], [2.9, -0.6, 0.1]])
    lo, _ = _both([[-1.0], [0.0]])
    hi, _ = _both([1.5, 0.2, 0.9])
    assert gradcheck(lambda a, b, c: opd.clamp(a, b, c), (x, lo, hi))
    assert gradgradcheck(lambda a, b, c: opd.clamp(a, b, c), (x, lo, hi))
