"""opdispatch.functional.norm (also opdispatch.norm and Tensor.norm) against torch 1.13's
torch.norm: every form of p and dim, keepdim, dtype, out=, complex input, and torch's errors."""

import math

import numpy as np
import pytest

import opdispatch as opd

torch = pytest.importorskip("torch", reason="compares with torch 1.13 (Debian's python3-torch)")

_X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)

CASES = [
    {},
    {"p": 1},
    {"p": 2},
    {"p": 3, "dim": 2, "keepdim": True},
    {"p": math.inf},
    {"p": -math.inf, "dim": 0},
    {"p": 0, "dim": (1, 2)},
    {"p": None, "dim": 1},
    {"dim": 1},
    {"dim": -1, "keepdim": True},
    {"p": "fro"},
    {"p": "fro", "dim": (0, 1)},
    {"p": "fro", "dim": [2]},
    {"p": 2, "dim": 1, "dtype": "float64"},
    {"p": 1, "dtype": "float64"},
]


def _kwargs(case, lib):
    out = dict(case)
    if "dtype" in out:
        out["dtype"] = getattr(lib, out["dtype"])
    return out


@pytest.mark.parametrize("case", CASES, ids=[repr(c) for c in CASES])
def test_norm_agrees_with_torch(case):
    expected = torch.norm(torch.from_numpy(_X), **_kwargs(case, torch))
    for actual in (opd.norm(opd.tensor(_X), **_kwargs(case, opd)),
                   opd.tensor(_X).norm(**_kwargs(case, opd))):
        assert tuple(actual.shape) == tuple(expected.shape)
        assert str(actual.dtype) == str(expected.dtype).replace("torch.", "opdispatch.")
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_positional_p_and_dim_as_torch():
    x = opd.tensor(_X)
    np.testing.assert_allclose(x.norm(2, 1).numpy(), torch.from_numpy(_X).norm(2, 1).numpy(),
                               rtol=1e-5)
    np.testing.assert_allclose(opd.norm(x, 1, [0, 2], True).numpy(),
                               torch.norm(torch.from_numpy(_X), 1, [0, 2], True).numpy(),
                               rtol=1e-5)


def test_complex_input_has_a_real_norm():
    z = (_X[0] + 1j * _X[1]).astype(np.complex64)
    expected = torch.norm(torch.from_numpy(z), dim=1)
    actual = opd.tensor(z).norm(dim=1)
    assert str(actual.dtype) == "opdispatch.float32"
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5)


def test_out_receives_the_result():
    out = opd.empty(0)
    result = opd.norm(opd.tensor(_X), 2, dim=1, out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), torch.norm(torch.from_numpy(_X), 2, dim=1).numpy(),
                               rtol=1e-5)


def test_errors_as_torch():
    x = opd.tensor(_X)
    with pytest.raises(RuntimeError, match="^only valid string values are 'fro' and 'nuc', "
                                           "found abc$"):
        x.norm("abc")
    with pytest.raises(ValueError, match="^dtype argument is not supported in frobenius norm$"):
        opd.norm(x, dtype=opd.float64)
    with pytest.raises(RuntimeError,
                       match="^Expected at most 2 dimensions, but got 3 dimensions instead.$"):
        x.norm("fro", dim=(0, 1, 2))
    with pytest.raises(NotImplementedError, match="nuclear norm needs a singular value"):
        x.norm("nuc")
    # The same texts as torch's.
    t = torch.from_numpy(_X)
    with pytest.raises(RuntimeError, match="found abc"):
        t.norm("abc")
    with pytest.raises(RuntimeError, match="Expected at most 2 dimensions"):
        t.norm("fro", dim=(0, 1, 2))


def test_gradient_flows_through_the_dim_form():
    x = opd.tensor(_X, requires_grad=True)
    x.norm(dim=1).sum().backward()
    t = torch.from_numpy(_X).requires_grad_()
    t.norm(dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
