"""Python indexing (Tensor.__getitem__ / __setitem__) and the shape operators of issue #31,
against torch 1.13 on the same inputs: advanced indices (long tensors, bool masks, lists, several
tensors broadcast together, mixed with ints, slices, None and ...), where the indexed dimensions
go, assignment (x[mask] = v, x[idx] = t, x[idx] += 1) with autograd, torch's IndexError texts,
and the shape operators (views share storage)."""

import re
import warnings

import numpy as np
import pytest

import opdispatch as opd

torch = pytest.importorskip("torch")


def arange(*shape, dtype="float32"):
    n = int(np.prod(shape)) if shape else 1
    return np.arange(n).reshape(shape).astype(dtype)


def both(a):
    """The same array as an opdispatch and a torch tensor."""
    a = np.asarray(a)
    return opd.tensor(a.tolist(), dtype=getattr(opd, str(a.dtype))), torch.tensor(a)


def check_same(got, want):
    assert isinstance(got, opd.Tensor), type(got)
    assert tuple(got.shape) == tuple(want.shape), (tuple(got.shape), tuple(want.shape))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.asarray(got.tolist()), np.asarray(want.tolist()))


def convert(index, to):
    """An index expression with opdispatch tensors rebuilt for `to` (opd or torch)."""
    if isinstance(index, tuple):
        return tuple(convert(i, to) for i in index)
    if isinstance(index, np.ndarray):
        if to is torch:
            return torch.tensor(index)
        return opd.tensor(index.tolist(), dtype=getattr(opd, str(index.dtype)))
    return index


I = lambda *v: np.array(v, dtype="int64")  # noqa: E731
M = lambda *v: np.array(v, dtype="bool")  # noqa: E731

GET_CASES = [
    (3, 4), I(0, 2),
    (3, 4), I(-1, 0, 0),
    (3, 4), (I(0, 2), I(1, 3)),
    (3, 4), (slice(None), I(3, 0)),
    (3, 4), (I(1), slice(1, 3)),
    (2, 3, 4), (I(0, 1), slice(None), I(2, 3)),          # separated: indexed dims go first
    (2, 3, 4), (slice(None), I(0, 2), I(1, 3)),          # adjacent: stay in place
    (2, 3, 4), (Ellipsis, I(1, 2)),
    (2, 3, 4), (None, I(1), Ellipsis, None),
    (2, 3, 4), (0, I(0, 2), I(1, 1)),
    (2, 3, 4), (I(0, 1)[:, None], slice(None), I(0, 1, 2)),  # broadcast [2, 1] with [3]
    (3, 4), M(True, False, True),
    (3, 4), (slice(None), M(True, False, False, True)),
    (2, 3), np.array([[True, False, True], [False, True, True]]),
    (3, 4), [0, 2],
    (3, 4), [True, False, True],
    (3, 4), [[0, 1], [1, 2]],                             # a list of lists is a tuple
    (3, 4), [],
    (3, 4), True,
    (3, 4), False,
    (3, 4), (0, True),
    (3,), I(),
    (3, 4), np.zeros((0,), dtype="int64"),
    (3, 4), np.array(1, dtype="int64"),                   # 0-d long index: a select
    # Note [0-dim tensor indices]: a 0-d bool tensor is the Python bool of its value.
    (3, 4), np.array(True),
    (3, 4), np.array(False),
    (), np.array(True),
    (), np.array(False),
    (3, 4), (np.array(False), 1),
    (3, 4), (1, np.array(2, dtype="int64")),
    (2, 3, 4), (I(0, 1), np.array(True), slice(None), I(2, 3)),
]


@pytest.mark.parametrize("shape,index", list(zip(GET_CASES[::2], GET_CASES[1::2])), ids=repr)
def test_getitem_matches_torch(shape, index):
    a = arange(*shape)
    x, tx = both(a)
    check_same(x[convert(index, opd)], tx[convert(index, torch)])


def test_getitem_dtypes():
    for dt in ("float16", "bfloat16", "int8", "bool", "complex64", "float64", "int64", "uint8"):
        x = opd.arange(12).reshape(3, 4).to(getattr(opd, dt))
        tx = torch.arange(12).reshape(3, 4).to(getattr(torch, dt))
        idx = [2, 0]
        got, want = x[opd.tensor(idx)], tx[torch.tensor(idx)]
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        assert got.to(opd.float64).tolist() == want.to(torch.float64).tolist() if dt not in (
            "complex64",) else got.shape == want.shape


def test_getitem_noncontiguous_and_views():
    a = arange(4, 5)
    x, tx = both(a)
    check_same(x.t()[opd.tensor([1, 3])], tx.t()[torch.tensor([1, 3])])
    check_same(x[::2, 1:][opd.tensor([0, 1]), opd.tensor([3, 0])],
               tx[::2, 1:][torch.tensor([0, 1]), torch.tensor([3, 0])])
    # advanced indexing copies
    y = x[opd.tensor([0])]
    y.fill_(100)
    assert x.tolist() == a.tolist()


ERROR_CASES = [
    ((3,), I(5), "index 5 is out of bounds for dimension 0 with size 3"),
    ((3,), I(-4), "index -4 is out of bounds for dimension 0 with size 3"),
    # torch names the index tensor's place among the defined indices, not self's dimension
    ((3, 4), (slice(None), I(4)), "index 4 is out of bounds for dimension 0 with size 4"),
    ((4,), M(True, False, True),
     "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [4] at "
     "index 0"),
    ((3, 4), (I(0, 1), I(0, 1, 2)),
     "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"),
    ((3,), np.array([1.0]), "tensors used as indices must be long, byte or bool tensors"),
    ((3,), np.array([1], dtype="int32"), "tensors used as indices must be long, byte or bool tensors"),
    ((3,), [5], "index 5 is out of bounds for dimension 0 with size 3"),
    ((2, 3), (0, 0, 0), "too many indices for tensor of dimension 2"),
    ((2, 3), 1.5, "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                  "Variables are valid indices (got float)"),
]


@pytest.mark.parametrize("shape,index,message", ERROR_CASES, ids=repr)
def test_getitem_errors_as_torch(shape, index, message):
    x, tx = both(arange(*shape))
    with pytest.raises(IndexError) as want:
        tx[convert(index, torch)]
    assert message in str(want.value)
    with pytest.raises(IndexError, match=re.escape(message)):
        x[convert(index, opd)]


SET_CASES = [
    ((3, 4), M(True, False, True), 7.0),
    ((3, 4), I(0, 2), np.array([1.0, 2.0, 3.0, 4.0], dtype="float32")),
    ((3, 4), (I(0, 2), I(1, 3)), np.array([5.0, 6.0], dtype="float32")),
    ((3, 4), (slice(None), I(1)), np.array([[9.0], [8.0], [7.0]], dtype="float32")),
    ((2, 3, 4), (I(0, 1), slice(None), I(2, 3)), 1.5),
    ((3, 4), I(1), np.ones((1, 1, 4), dtype="float32")),     # leading 1s dropped
    ((3, 4), I(1), 2),                                       # a number takes self's dtype
    ((3, 4), [True, False, True], -1),
    ((3, 4), (0, slice(1, 3)), np.array([1.0, 2.0], dtype="float32")),  # basic: a view
]


@pytest.mark.parametrize("shape,index,value", SET_CASES, ids=repr)
def test_setitem_matches_torch(shape, index, value):
    x, tx = both(arange(*shape))
    if isinstance(value, np.ndarray):
        v, tv = both(value)
    else:
        v = tv = value
    x[convert(index, opd)] = v
    tx[convert(index, torch)] = tv
    check_same(x, tx)


def test_setitem_augmented_and_errors():
    x, tx = both(arange(5))
    x[opd.tensor([0, 2, 2])] += 1
    tx[torch.tensor([0, 2, 2])] += 1
    check_same(x, tx)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 5"):
        x[opd.tensor([7])] = 1.0
    with pytest.raises(RuntimeError, match=re.escape(
            "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of "
            "shape [1]")):
        x[opd.tensor([0])] = opd.ones(2)


def test_index_put_accumulate_and_functional():
    x, tx = both(arange(5))
    i, ti = both(I(0, 0, 3))
    v, tv = both(np.array([1.0, 2.0, 3.0], dtype="float32"))
    check_same(opd.index_put(x, (i,), v, accumulate=True),
               torch.index_put(tx, (ti,), tv, accumulate=True))
    check_same(x, tx)  # functional: x unchanged
    opd.index_put_(x, (i,), v, True)
    tx.index_put_((ti,), tv, True)
    check_same(x, tx)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes "
                       "match, got Float for the destination and Double for the source."):
        opd.index_put_(x, (i,), opd.ones(3, dtype=opd.float64))


def test_index_autograd():
    a = np.random.default_rng(0).standard_normal((4, 3))
    x = opd.tensor(a.tolist(), dtype=opd.float64, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    idx = [[0, 2, 2], [1, 0, 0]]
    y = x[opd.tensor(idx[0]), opd.tensor(idx[1])]
    ty = tx[torch.tensor(idx[0]), torch.tensor(idx[1])]
    (y * opd.tensor([1.0, 2.0, 3.0], dtype=opd.float64)).sum().backward()
    (ty * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), tx.grad.tolist())
    # mask indexing
    x.grad = None
    m = opd.tensor(a > 0)
    x[m].sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), (a > 0).astype("float64"))
    # index_put_ on a non-leaf: grads to self (zeroed where written) and values
    x2 = opd.tensor(a.tolist(), dtype=opd.float64, requires_grad=True)
    v = opd.tensor([5.0, 6.0, 7.0], dtype=opd.float64, requires_grad=True)
    tx2 = torch.tensor(a, requires_grad=True)
    tv = torch.tensor([5.0, 6.0, 7.0], dtype=torch.float64, requires_grad=True)
    y, ty = x2 * 2, tx2 * 2
    y[opd.tensor([1])] = v
    ty[torch.tensor([1])] = tv
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x2.grad.tolist(), tx2.grad.tolist())
    np.testing.assert_allclose(v.grad.tolist(), tv.grad.tolist())


def test_index_gradcheck():
    a = np.random.default_rng(1).standard_normal((3, 4))
    x = opd.tensor(a.tolist(), dtype=opd.float64, requires_grad=True)
    i = opd.tensor([[0, 1], [2, 2]])
    y = opd.index(x, [None, i])
    g = opd.ones(y.shape, dtype=opd.float64)
    (gx,) = opd.autograd.grad([y], [x], [g])
    tx = torch.tensor(a, requires_grad=True)
    ty = tx[:, torch.tensor([[0, 1], [2, 2]])]
    (tgx,) = torch.autograd.grad([ty], [tx], [torch.ones(ty.shape, dtype=torch.float64)])
    np.testing.assert_allclose(gx.tolist(), tgx.tolist())


def test_nonzero_and_meta():
    a = np.array([[0, 1.5, 0], [2, 0, -1]], dtype="float32")
    x, tx = both(a)
    check_same(opd.nonzero(x), torch.nonzero(tx))
    check_same(opd.nonzero(opd.tensor(3.0)), torch.nonzero(torch.tensor(3.0)))
    m = opd.empty(3, 4, device="meta")
    r = m[opd.tensor([0, 2], device="meta")]
    assert r.is_meta and tuple(r.shape) == (2, 4)
    with pytest.raises(NotImplementedError):
        opd.nonzero(m)


def test_masked_select():
    a = arange(3, 4)
    x, tx = both(a)
    m, tm = both(a % 3 == 0)
    check_same(opd.masked_select(x, m), torch.masked_select(tx, tm))
    check_same(opd.masked_select(x, m[0]), torch.masked_select(tx, tm[0]))


def test_T_and_mT():
    x, tx = both(arange(2, 3, 4))
    check_same(x.mT, tx.mT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(x.T, tx.T)
    y, ty = both(arange(2, 3))
    check_same(y.T, ty.T)
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of "
                       "matrices. Got 1-D tensor."):
        opd.ones(3).mT


# ---- shape operators ----------------------------------------------------------------------------

SHAPE_CASES = [
    ("stack", lambda L, a, b: L.stack([a, b], 1)),
    ("stack_neg", lambda L, a, b: L.stack([a, b], -1)),
    ("hstack", lambda L, a, b: L.hstack([a, b])),
    ("vstack", lambda L, a, b: L.vstack([a, b])),
    ("dstack", lambda L, a, b: L.dstack([a, b])),
    ("split", lambda L, a, b: L.split(a, 2, 1)),
    ("split_sizes", lambda L, a, b: L.split(a, [1, 3], 1)),
    ("split_with_sizes", lambda L, a, b: L.split_with_sizes(a, [2, 1], 0)),
    ("chunk", lambda L, a, b: L.chunk(a, 3, 1)),
    ("unbind", lambda L, a, b: L.unbind(a, 1)),
    ("tensor_split", lambda L, a, b: L.tensor_split(a, 3, 1)),
    ("tensor_split_idx", lambda L, a, b: L.tensor_split(a, [1, 3], 1)),
    ("narrow", lambda L, a, b: L.narrow(a, 1, -3, 2)),
    ("movedim", lambda L, a, b: L.movedim(a.reshape(1, 3, 4), 0, 2)),
    ("movedim_list", lambda L, a, b: L.movedim(a.reshape(1, 3, 4), (0, 1), (2, 0))),
    ("moveaxis", lambda L, a, b: L.moveaxis(a, 0, 1)),
    ("unflatten", lambda L, a, b: L.unflatten(a, 1, (2, -1))),
    ("swapaxes", lambda L, a, b: L.swapaxes(a, 0, 1)),
    ("swapdims", lambda L, a, b: L.swapdims(a, 1, 0)),
    ("squeeze", lambda L, a, b: L.squeeze(a.reshape(1, 3, 1, 4))),
    ("diagonal", lambda L, a, b: L.diagonal(a, 1)),
    ("diagonal_neg", lambda L, a, b: L.diagonal(a.reshape(3, 2, 2), -1, 2, 0)),
    ("flip", lambda L, a, b: L.flip(a, (0, 1))),
    ("flip_t", lambda L, a, b: L.flip(a.t(), (1,))),
    ("roll", lambda L, a, b: L.roll(a, 1)),
    ("roll_dims", lambda L, a, b: L.roll(a, (1, -5), (0, 1))),
    ("rot90", lambda L, a, b: L.rot90(a, 1, (0, 1))),
    ("rot90_3", lambda L, a, b: L.rot90(a, -1, (0, 1))),
    ("tril", lambda L, a, b: L.tril(a)),
    ("tril_k", lambda L, a, b: L.tril(a, -1)),
    ("triu", lambda L, a, b: L.triu(a, 1)),
    ("triu_t", lambda L, a, b: L.triu(a.t())),
    ("select_scatter", lambda L, a, b: L.select_scatter(a, b[0], 0, 1)),
    # torch 1.13's binding reads slice_scatter's default step wrongly (a slice of one element):
    # the step is always given
    ("slice_scatter", lambda L, a, b: L.slice_scatter(a, b[:, :2], 1, 1, 3, 1)),
    ("slice_scatter_step", lambda L, a, b: L.slice_scatter(a, b[:, :2], 1, 0, 4, 2)),
    ("diagonal_scatter", lambda L, a, b: L.diagonal_scatter(a, b[0, :3], 0)),
    ("alias", lambda L, a, b: L.alias(a) if L is opd else a),
    ("repeat_interleave", lambda L, a, b: L.repeat_interleave(a, 2)),
    ("repeat_interleave_dim", lambda L, a, b: L.repeat_interleave(a, 3, -1)),
    ("diag_embed", lambda L, a, b: L.diag_embed(a)),
    ("diag_embed_offset", lambda L, a, b: L.diag_embed(a, -1, 0, 2)),
]


@pytest.mark.parametrize("name,fn", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_ops_match_torch(name, fn):
    a = arange(3, 4)
    b = arange(3, 4) + 100
    x, tx = both(a)
    y, ty = both(b)
    got, want = fn(opd, x, y), fn(torch, tx, ty)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check_same(g, w)
    else:
        check_same(got, want)


def test_method_only_shape_ops():
    x, tx = both(arange(2, 3))
    check_same(opd.repeat(x, [2, 1, 2]), tx.repeat(2, 1, 2))
    check_same(opd.expand_as(x[:1], x), tx[:1].expand_as(tx))
    check_same(opd.view_as(x, opd.ones(3, 2)), tx.view_as(torch.ones(3, 2)))
    check_same(opd.reshape_as(x.t(), opd.ones(6)), tx.t().reshape_as(torch.ones(6)))
    y, ty = x.clone(), tx.clone()
    opd.tril_(y, 0)
    ty.tril_(0)
    check_same(y, ty)
    out = opd.empty(0)
    r = opd.triu(x, 0, out=out)
    assert r is out
    check_same(out, torch.triu(tx))


def test_views_share_storage():
    views = [lambda x: opd.split(x, 2, 1)[1], lambda x: opd.chunk(x, 2)[0],
             lambda x: opd.unbind(x)[2], lambda x: opd.narrow(x, 1, 1, 2),
             lambda x: opd.movedim(x, 0, 1), lambda x: opd.diagonal(x),
             lambda x: opd.squeeze(x), lambda x: opd.swapaxes(x, 0, 1), lambda x: opd.alias(x),
             lambda x: opd.unflatten(x, 1, (2, 2)), lambda x: x.T, lambda x: x.mT,
             lambda x: opd.tensor_split(x, 2, 1)[1], lambda x: opd.view_as(x, opd.ones(12))]
    for make_view in views:
        x = opd.arange(12.0).reshape(3, 4)
        v = make_view(x)
        v.fill_(-1)  # writes through the view show in x
        assert (x == -1).sum().item() == v.numel(), make_view


SHAPE_ERRORS = [
    (lambda L, x: L.stack([]), "stack expects a non-empty TensorList"),
    (lambda L, x: L.stack([x, x[0]]), "stack expects each tensor to be equal size, but got [3, 4] "
                                      "at entry 0 and [4] at entry 1"),
    (lambda L, x: L.split(x, 0), "split_size can only be 0 if dimension size is 0, but got "
                                 "dimension size of 3"),
    (lambda L, x: L.split(x, [1, 1], 1), "split_with_sizes expects split_sizes to sum exactly to "
                                         "4 (input tensor's size at dimension 1), but got "
                                         "split_sizes=[1, 1]"),
    (lambda L, x: L.chunk(x, 0), "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda L, x: L.narrow(x, 1, 2, 3), "start (2) + length (3) exceeds dimension size (4)."),
    (lambda L, x: L.movedim(x, (0, 0), (0, 1)), "movedim: repeated dim in `source` ([0, 0])"),
    (lambda L, x: L.unflatten(x, 1, (3, 2)), "unflatten: Provided sizes [3, 2] don't multiply up "
                                             "to the size of dim 1 (4) in the input tensor"),
    (lambda L, x: L.flip(x, (0, 0)), "dim 0 appears multiple times in the list of dims"),
    (lambda L, x: L.roll(x, (1, 2)), "shifts and dimensions must align. shifts: 2, dims:0"),
    (lambda L, x: L.diagonal(x, 0, 0, 0), "diagonal dimensions cannot be identical 0, 0"),
    (lambda L, x: L.select_scatter(x, L.ones(3), 0, 0), "expected src to have a size equal to the "
                                                        "slice of self. src size = [3], slice "
                                                        "size = [4]"),
]


@pytest.mark.parametrize("fn,message", SHAPE_ERRORS, ids=[m[:30] for _, m in SHAPE_ERRORS])
def test_shape_errors_as_torch(fn, message):
    x, tx = both(arange(3, 4))
    with pytest.raises(RuntimeError) as want:
        fn(torch, tx)
    assert message in str(want.value)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        fn(opd, x)
    with pytest.raises(IndexError):
        opd.tril(opd.ones(3))


def test_shape_autograd():
    a = np.random.default_rng(2).standard_normal((3, 4))
    for name, fn in SHAPE_CASES:
        if name in ("alias",):
            continue
        x = opd.tensor(a.tolist(), dtype=opd.float64, requires_grad=True)
        y = opd.tensor((a + 1).tolist(), dtype=opd.float64, requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        ty = torch.tensor(a + 1, requires_grad=True)
        got, want = fn(opd, x, y), fn(torch, tx, ty)
        if not isinstance(want, (tuple, list)):
            got, want = [got], [want]
        loss = sum(((g * g).sum() for g in got), opd.tensor(0.0, dtype=opd.float64))
        tloss = sum(((w * w).sum() for w in want), torch.tensor(0.0, dtype=torch.float64))
        loss.backward()
        tloss.backward()
        for p, tp in ((x, tx), (y, ty)):
            if tp.grad is None:
                assert p.grad is None or not np.any(p.grad.tolist()), name
            else:
                np.testing.assert_allclose(p.grad.tolist(), tp.grad.tolist(), err_msg=name)


def test_an_int_or_a_lone_tensor_index_behaves_as_the_general_path():
    # Note [Single indices]: x[1] and x[idx] skip the item list, with the same results and errors.
    x = opd.arange(6.0).view(2, 3)
    assert x[1].tolist() == [3.0, 4.0, 5.0] and x[-2].tolist() == [0.0, 1.0, 2.0]
    assert x[opd.tensor([1, 0])].tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    assert x[opd.tensor([True, False])].tolist() == [[0.0, 1.0, 2.0]]
    assert x[True].shape == (1, 2, 3)
    with pytest.raises(IndexError, match=r"^index 2 is out of bounds for dimension 0 with size 2$"):
        x[2]
    with pytest.raises(IndexError, match=r"^index -3 is out of bounds for dimension 0 with size 2$"):
        x[-3]
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 0$"):
        opd.tensor(1.0)[0]
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 2$"):
        x[opd.ones(2, 3, 4) > 0]
    with pytest.raises(RuntimeError, match=r"Overflow when unpacking long"):
        x[2**70]
    y = opd.arange(3.0)
    y[1].fill_(9.0)  # a view, as torch's
    assert y.tolist() == [0.0, 9.0, 2.0]


def test_zero_dim_tensor_indices_as_torch():
    # Note [0-dim tensor indices]: a 0-d integer tensor selects (a view, as torch's), a 0-d bool
    # assigns through a new dimension of one element or none; masked_select is 1-dim always.
    for lib in (opd, torch):
        y = lib.arange(6.0).view(2, 3)
        y[lib.tensor(1)].fill_(7.0)
        assert y.tolist() == [[0.0, 1.0, 2.0], [7.0, 7.0, 7.0]], lib.__name__
        z = lib.zeros(2)
        z[lib.tensor(True)] = 3.0
        z[lib.tensor(False)] = 5.0
        assert z.tolist() == [3.0, 3.0], lib.__name__
        x = lib.tensor(1.0)
        assert tuple(lib.masked_select(x, lib.tensor(False)).shape) == (0,), lib.__name__
        assert lib.masked_select(x, lib.tensor(True)).tolist() == [1.0], lib.__name__
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of "
                       r"tensor b \(2\) at non-singleton dimension 0$"):
        opd.masked_select(opd.ones(2), opd.ones(3).bool())
