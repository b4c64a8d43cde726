"""What torch writes in Python over its operators (torch/functional.py) and opdispatch does not
bind from a schema alone: ``norm``, whose ``p`` may be a string and whose ``dim`` may come
without ``p``. (``einsum`` and ``tensordot`` are in the package's ``__init__``.)"""

import builtins as _builtins

from . import ops as _ops

__all__ = ["norm"]


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """As torch.norm of torch 1.13: the norm of ``input`` over ``dim`` (an int or a sequence;
    every dimension when None). ``p`` is a number (a vector norm; None is 2), ``"fro"`` (the
    Frobenius norm, over at most two dimensions when they are given) or ``"nuc"`` (refused: the
    nuclear norm needs a singular value decomposition, which has no kernel here). ``dtype``
    converts ``input`` first (not with a string ``p``); ``out`` receives the result."""
    if dim is None:
        dims = None
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = _builtins.list(dim)
    if isinstance(p, str):
        if p == "fro":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in frobenius norm")
            if dims is not None and len(dims) > 2:
                raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} "
                                   "dimensions instead.")
            p = 2
        elif p == "nuc":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in nuclear norm")
            raise NotImplementedError(
                "norm(p='nuc'): the nuclear norm needs a singular value decomposition "
                "(aten::linalg_svd), which opdispatch has no kernel of")
        else:
            raise RuntimeError(f"only valid string values are 'fro' and 'nuc', found {p}")
    if p is None:
        p = 2
    if dims is None:
        dims = _builtins.list(_builtins.range(input.dim()))
    if out is None and dtype is None:
        return _ops.aten.norm.ScalarOpt_dim(input, p, dims, keepdim)
    # With a dtype, or into `out`: the vector norm of the converted input, as norm's
    # ScalarOpt_dim_dtype and out overloads compute it.
    if out is None:
        return _ops.aten.linalg_vector_norm(input, p, dims, keepdim, dtype=dtype)
    return _ops.aten.linalg_vector_norm.out(input, p, dims, keepdim, dtype=dtype, out=out)
