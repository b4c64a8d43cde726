"""What the OpInfo table (tests/python/opinfo/surface.py) cannot check of helper "surface"'s
operators: gradients through the in-place view operators applied to views (the table's samples
are not views of tensors with history), complex var/std gradients (the table's gradcheck is
float64 only), view.dtype of tensors with a storage offset (the table moves samples to torch
without their offset) and its aliasing, and the in-place view operators' version counter."""

import numpy as np
import pytest
import torch

import opdispatch as opd

A = np.random.default_rng(0).standard_normal((3, 4))

IN_PLACE_VIEWS = [
    ("slice unsqueeze_", lambda b: b[1:].unsqueeze_(0)),
    ("t_ of a t view", lambda b: b.t().t_()),
    ("squeeze_ of a row", lambda b: b[1:2].squeeze_()),
    ("squeeze_.dim of a column", lambda b: b[:, 1:2].squeeze_(1)),
    ("transpose_ of a strided slice", lambda b: b[:, ::2].transpose_(0, 1)),
    ("as_strided_", lambda b: b.as_strided_([2, 2], [1, 4], 1)),
    ("as_strided_ of a view", lambda b: b[1:].as_strided_([2, 2], [1, 4], 5)),
    ("unsqueeze_ then mul_", lambda b: b.unsqueeze_(1).mul_(3)),
    ("mul_ of a view after unsqueeze_", lambda b: b[1:].unsqueeze_(0).mul_(3)),
    ("swapdims_ then swapaxes_", lambda b: b.swapdims_(0, 1).swapaxes_(1, 0)),
]


def _view_grad(lib, fn):
    a = lib.tensor(A, requires_grad=True)
    r = fn(a * 2)
    w = np.linspace(-1, 2, r.numel()).reshape(tuple(r.shape))
    (r * lib.tensor(w)).sum().backward()
    return r.detach().numpy(), a.grad.numpy()


@pytest.mark.parametrize("name, fn", IN_PLACE_VIEWS, ids=[c[0] for c in IN_PLACE_VIEWS])
def test_gradient_through_an_in_place_view_operator_is_torchs(name, fn):
    ours, theirs = _view_grad(opd, fn), _view_grad(torch, fn)
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1])


def test_in_place_view_operators_refuse_a_leaf_that_requires_grad():
    x = opd.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.unsqueeze_(0)


@pytest.mark.parametrize("op", ["squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided_"])
def test_in_place_view_operators_bump_the_version_as_torchs(op):
    args = {"squeeze_": (), "unsqueeze_": (0,), "t_": (), "transpose_": (0, 1),
            "as_strided_": ([2], [1])}[op]
    versions = []
    for lib in (opd, torch):
        x = lib.zeros(2, 1)
        before = x._version
        assert getattr(x, op)(*args) is x
        versions.append(x._version - before)
    assert versions[0] == versions[1]


COMPLEX_MOMENTS = [
    ("var", lambda lib, t: lib.var(t)),
    ("var dim 0 correction 0", lambda lib, t: lib.var(t, 0, correction=0)),
    ("std dim 1", lambda lib, t: lib.std(t, 1)),
    ("var_mean dim 0", lambda lib, t: lib.var_mean(t, 0)),
    ("std_mean keepdim", lambda lib, t: lib.std_mean(t, 1, keepdim=True)),
]


def _complex_grad(lib, fn):
    x = (np.random.default_rng(1).standard_normal((3, 4))
         + 1j * np.random.default_rng(2).standard_normal((3, 4)))
    t = lib.tensor(x, requires_grad=True)
    out = fn(lib, t)
    outs = out if isinstance(out, tuple) else (out,)
    values = []
    for k, o in enumerate(outs):
        values.append(o.detach().numpy())
        w = np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)) * (k + 1)
        if o.is_complex():
            w = w + 0.25j
        o.backward(lib.tensor(w, dtype=o.dtype), retain_graph=True)
    return values, t.grad.numpy()


@pytest.mark.parametrize("name, fn", COMPLEX_MOMENTS, ids=[c[0] for c in COMPLEX_MOMENTS])
def test_complex_variance_value_dtype_and_gradient_are_torchs(name, fn):
    (ours, ours_grad), (theirs, theirs_grad) = _complex_grad(opd, fn), _complex_grad(torch, fn)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype  # real variance, complex mean
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-10, atol=1e-12)


def test_view_dtype_keeps_the_storage_offset_as_torch():
    for lib in (opd, torch):
        x = lib.arange(12, dtype=lib.float32).reshape(3, 4)
        assert x[:, 1:].view(lib.int16).storage_offset() == 2
        assert x[1:, 2:].view(lib.float64).storage_offset() == 3
        with pytest.raises(RuntimeError, match=r"self\.storage_offset\(\) must be divisible by "
                                               r"2 to view Float as Double \(different element "
                                               r"sizes\), but got 1"):
            x[:, 1:3].view(lib.float64)


def test_view_dtype_shares_memory_and_version():
    x = opd.zeros(2, 2)
    y = x.view(opd.int32)
    y.fill_(1065353216)  # the bits of 1.0f
    assert x.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert y._version == x._version


def test_view_dtype_of_a_tensor_requiring_grad_has_no_history():
    x = opd.ones(2, requires_grad=True)
    assert not x.view(opd.int32).requires_grad
    assert not x.view(opd.float32).requires_grad  # torch 1.13: output_differentiability False
