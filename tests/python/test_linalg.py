"""opdispatch.linalg as torch.linalg: each aten operator linalg_<name> is linalg.<name>, with its
out= overloads, and none of them is a top-level function or a Tensor method (torch 1.13 has no
torch.linalg_cross, no Tensor.linalg_cross)."""

import pytest
import torch

import opdispatch as opd
from opdispatch import ops


def test_linalg_functions_are_the_linalg_operators():
    assert opd.linalg.cross is ops.aten.linalg_cross
    assert opd.linalg.vector_norm is ops.aten.linalg_vector_norm
    assert opd.linalg.cross is not opd.cross
    assert torch.linalg.cross is not torch.cross


def test_every_linalg_operator_is_listed_and_torch_has_it():
    names = dir(opd.linalg)
    assert "cross" in names and "vector_norm" in names
    for name in names:
        assert hasattr(torch.linalg, name), name
        assert getattr(opd.linalg, name) is getattr(ops.aten, "linalg_" + name)


@pytest.mark.parametrize("name", ["linalg_cross", "linalg_vector_norm"])
def test_linalg_operators_are_not_top_level_functions_or_methods_as_in_torch(name):
    assert not hasattr(torch, name)
    with pytest.raises(AttributeError, match=f"^module 'opdispatch' has no attribute '{name}'$"):
        getattr(opd, name)
    assert not hasattr(torch.ones(3), name)
    with pytest.raises(AttributeError, match=f"^'Tensor' object has no attribute '{name}'$"):
        getattr(opd.ones(3), name)


def test_an_unknown_linalg_name_is_an_attribute_error():
    with pytest.raises(AttributeError,
                       match="^module 'opdispatch.linalg' has no attribute 'nope'$"):
        opd.linalg.nope


def test_cross_as_torch_linalg_cross():
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    b = [[0.5, -1.0, 2.0], [1.0, 0.0, -3.0]]
    ours = opd.linalg.cross(opd.tensor(a), opd.tensor(b))
    theirs = torch.linalg.cross(torch.tensor(a), torch.tensor(b))
    assert ours.tolist() == theirs.tolist()
    ours = opd.linalg.cross(opd.tensor(a).t(), opd.tensor(b).t(), dim=0)
    theirs = torch.linalg.cross(torch.tensor(a).t(), torch.tensor(b).t(), dim=0)
    assert ours.tolist() == theirs.tolist()
    out = opd.empty(0)
    assert opd.linalg.cross(opd.tensor(a), opd.tensor(b), out=out) is out
    assert out.tolist() == theirs.t().tolist()
    # dim is keyword-only, as torch's
    with pytest.raises(TypeError):
        torch.linalg.cross(torch.tensor(a), torch.tensor(b), 1)
    with pytest.raises(TypeError):
        opd.linalg.cross(opd.tensor(a), opd.tensor(b), 1)


@pytest.mark.parametrize("kwargs", [{}, {"ord": 1}, {"ord": float("inf")}, {"dim": 1},
                                    {"ord": 3, "dim": (0, 1), "keepdim": True},
                                    {"dtype": "float64"}])
def test_vector_norm_as_torch_linalg_vector_norm(kwargs):
    values = [[1.0, -2.0, 3.0], [-4.0, 5.0, 0.5]]
    ours_kwargs = {k: getattr(opd, v) if k == "dtype" else v for k, v in kwargs.items()}
    theirs_kwargs = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
    ours = opd.linalg.vector_norm(opd.tensor(values), **ours_kwargs)
    theirs = torch.linalg.vector_norm(torch.tensor(values), **theirs_kwargs)
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    expected = theirs.flatten().tolist()
    assert ours.flatten().tolist() == pytest.approx(expected)
    out = opd.empty(0, dtype=ours.dtype)
    assert opd.linalg.vector_norm(opd.tensor(values), **ours_kwargs, out=out) is out
    assert out.flatten().tolist() == pytest.approx(expected)
