"""Gradients compared with torch 1.13's where gradcheck cannot check them: inputs whose elements
share memory (an expanded leaf: gradcheck refuses overlapping inputs) and results that are
infinite or NaN (var with as many elements as its correction). Each case is one the differential
tester (differential.py) found."""

import pytest
import torch

import opdispatch as opd


def grads(lib, fn, values, shape, strides, grad_outputs):
    """fn's gradient for a float64 leaf of `shape`/`strides` over `values`, in lib."""
    x = lib.tensor(values, dtype=lib.float64).as_strided(shape, strides, 0).detach()
    x.requires_grad_()
    out = fn(lib, x)
    outs = out if isinstance(out, tuple) else (out,)
    gs = [lib.full(o.shape, float(g), dtype=lib.float64) for o, g in zip(outs, grad_outputs)]
    (g,) = lib.autograd.grad(outs, x, gs)
    return g.tolist()


def same(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == pytest.approx(b, nan_ok=True)


@pytest.mark.parametrize("equation, shape, strides", [
    ("ii", [3, 3], [3, 0]),        # the diagonal of a row-expanded leaf
    ("ii->i", [3, 3], [0, 1]),
    ("iij->j", [3, 3, 2], [2, 0, 1]),
    ("ij,jk", [3, 3], [0, 1]),
])
def test_einsum_gradient_of_an_expanded_operand_is_torchs(equation, shape, strides):
    # einsum's repeated labels were an as_strided view, whose backward shares a gradient between
    # the elements aliasing one memory slot; a diagonal's gives each its own.
    values = [-5.1, 2.75, -2.875, -7.5, 3.5, 0.75, 7.25, 1.5, -0.5]
    if "," in equation:
        def fn(lib, x):
            return lib.einsum(equation, x, lib.ones(3, 2, dtype=lib.float64))
    else:
        def fn(lib, x):
            return lib.einsum(equation, x)
    assert same(grads(opd, fn, values, shape, strides, [1.0]),
                grads(torch, fn, values, shape, strides, [1.0]))


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("shape, strides, kwargs", [
    ([], [], {"dim": 0}),                           # one element, correction 1: inf / nan
    ([], [], {"dim": 0, "correction": 0}),
    ([], [], {"dim": 0, "correction": 2}),
    ([2, 3], [3, 1], {"dim": 1, "correction": 3}),  # over a dimension: nan where x == mean
    ([2, 3], [3, 1], {"dim": [0, 1], "keepdim": True}),
    ([2, 3], [1, 2], {"dim": 0, "correction": 0}),
])
def test_var_and_std_gradients_are_torchs(name, shape, strides, kwargs):
    values = [-6.5, 1.0, 2.0, 4.0, 8.0, 8.0]

    def fn(lib, x):
        return getattr(lib, name)(x, **kwargs)
    assert same(grads(opd, fn, values, shape, strides, [2.0, 3.0]),
                grads(torch, fn, values, shape, strides, [2.0, 3.0]))
