"""opdispatch: an operator runtime built like PyTorch's c10 dispatcher, with every backend a
plugin loaded at run time, used from Python with torch's names.

Importing the package loads the default plugins (the manifests that say ``load: default``),
as the ``opd`` tool does. A plugin that fails to load is a RuntimeWarning naming it and why;
one that reports itself unavailable (cuda without a GPU) is silent. Set
``OPDISPATCH_NO_DEFAULT_PLUGINS=1`` to load none.
"""

import builtins as _builtins
import os as _os
import warnings as _warnings

from . import _C
from ._C import Generator, default_generator
from ._C import (DispatchKeySet, FunctionSchema, PluginError, SchemaParseError, Tag, Tensor,
                 device, dtype, frombuffer, from_numpy, initial_seed, is_grad_enabled, layout,
                 memory_format, parse_schema)
# dtypes, with torch's aliases (opdispatch.float is opdispatch.float32), layouts and formats.
from ._C import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, float,
                 float16, float32, float64, half, int, int8, int16, int32, int64, long, short,
                 uint8)
from ._C import channels_last, contiguous_format, preserve_format, sparse_coo, strided
from . import _tensor
from . import autograd, library, linalg, nn, ops, plugins, return_types, testing, types, utils
from . import func, fx
from .functional import norm
from ._tensor import Size
from .autograd import enable_grad, no_grad, set_grad_enabled
from . import tracing as _tracing

__all__ = [
    "Tensor", "Size", "dtype", "device", "tensor", "as_tensor", "from_numpy", "from_dlpack",
    "frombuffer", "empty", "zeros", "ones", "full", "arange", "rand", "randn", "empty_like",
    "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "manual_seed",
    "initial_seed", "Generator", "default_generator", "numel", "einsum", "tensordot", "norm",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "trace", "ops",
    "library", "autograd", "linalg", "nn", "plugins", "testing", "PluginError", "Tag",
]


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data``: a number, a nested list of numbers, a numpy
    array or buffer, or a tensor (with torch's warning). dtype inferred as torch does."""
    if isinstance(data, Tensor):
        _warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.clone().detach() or sourceTensor.clone().detach().requires_grad_(True), "
            "rather than opdispatch.tensor(sourceTensor).", UserWarning, stacklevel=2)
        t = data.detach().clone()
        if dtype is not None or device is not None:
            t = t.to(device=device, dtype=dtype)
    elif _is_buffer(data):
        t = _C._from_buffer_quiet(data).clone()
        if dtype is not None or device is not None:
            t = t.to(device=device, dtype=dtype)
    else:
        t = _C._tensor_literal(data, dtype, device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _is_buffer(data):
    if isinstance(data, (_builtins.list, _builtins.tuple, _builtins.int, _builtins.float,
                         _builtins.bool, _builtins.complex, _builtins.str)):
        return False
    try:
        memoryview(data)
        return True
    except TypeError:
        return False


def as_tensor(data, dtype=None, device=None):
    """``data`` itself when it already is a tensor of that dtype and device; a view of a CPU
    buffer of the right dtype; else a copy, as ``tensor``."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    if _is_buffer(data):
        t = _C._from_buffer_quiet(data)
        return t.to(device=device, dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def from_dlpack(ext_tensor):
    """A tensor over the memory of ``ext_tensor`` (an object with ``__dlpack__``, such as a
    numpy array or a torch tensor, or a DLPack capsule), without a copy."""
    if hasattr(ext_tensor, "__dlpack__"):
        device_type, _ = ext_tensor.__dlpack_device__()
        if device_type == 2:  # kDLCUDA: our consumer stream is the legacy default one
            capsule = ext_tensor.__dlpack__(stream=1)
        else:
            capsule = ext_tensor.__dlpack__()
    else:
        capsule = ext_tensor
    return _C._from_dlpack_capsule(capsule)


def manual_seed(seed):
    """Seeds the generator that rand and randn use, as torch.manual_seed: any int from -2**63
    to 2**64 - 1, a negative one taken modulo 2**64."""
    seed = _builtins.int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise RuntimeError("Overflow when unpacking long")
    _C._manual_seed(seed & ((1 << 64) - 1))


def _sizes(size):
    if len(size) == 1 and isinstance(size[0], (_builtins.list, _builtins.tuple)):
        return _builtins.list(size[0])
    return _builtins.list(size)


def _options(dtype, device, kwargs):
    """The keyword arguments of a factory call: those given, without dtype or device when None,
    so that the schema's default (or the device of a ``with opdispatch.device(...)`` block)
    applies."""
    if dtype is not None:
        kwargs["dtype"] = dtype
    if device is not None:
        kwargs["device"] = device
    return kwargs


def _factory(name):
    def factory(*size, dtype=None, device=None, requires_grad=False, **kwargs):
        t = getattr(ops.aten, name)(_sizes(size), **_options(dtype, device, kwargs))
        return t.requires_grad_(True) if requires_grad else t
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"opdispatch.{name}(*size, dtype=None, device=None, requires_grad=False)"
    return factory


empty = _factory("empty")
zeros = _factory("zeros")
ones = _factory("ones")
rand = _factory("rand")
randn = _factory("randn")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, **kwargs):
    t = ops.aten.full(_builtins.list(size), fill_value, **_options(dtype, device, kwargs))
    return t.requires_grad_(True) if requires_grad else t


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """``arange(end)`` or ``arange(start, end, step=1)``."""
    if end is None:
        start, end = 0, start
    t = ops.aten.arange.start_step(start, end, step, **_options(dtype, device, {}))
    return t.requires_grad_(True) if requires_grad else t


def _like(name):
    def like(input, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        t = getattr(ops.aten, name)(input, *args, **_options(dtype, device, kwargs))
        return t.requires_grad_(True) if requires_grad else t
    like.__name__ = like.__qualname__ = name
    return like


empty_like = _like("empty_like")
zeros_like = _like("zeros_like")
ones_like = _like("ones_like")
full_like = _like("full_like")
rand_like = _like("rand_like")
randn_like = _like("randn_like")


def trace(*args, **kwargs):
    """``trace()``: a recorder of this thread's dispatch hops (``with opdispatch.trace() as
    t:``, opdispatch.tracing.trace); ``trace(input)``: the sum of a matrix's diagonal, as
    torch.trace (the operator aten::trace)."""
    if not args and not kwargs:
        return _tracing.trace()
    return ops.aten.trace(*args, **kwargs)


def numel(input):
    """The number of elements of ``input``, as torch.numel."""
    return input.numel()


def _subscript(n):
    if n is Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def einsum(*args):
    """As torch.einsum (torch/functional.py): ``einsum(equation, *operands)``,
    ``einsum(equation, [operands])``, or the sublist form ``einsum(op1, [0, 1], op2, [1, 2],
    [0, 2])``, whose integers 0-51 stand for the letters A-Z, a-z."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        subscripts = (args[1::2] if len(args) % 2 == 0 else args[1:-1:2])
        equation = ",".join("".join(_subscript(s) for s in sub) for sub in subscripts)
        if len(args) % 2 == 1:
            equation += "->" + "".join(_subscript(s) for s in args[-1])
        operands = args[:-1:2] if len(args) % 2 == 1 else args[::2]
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (_builtins.list, _builtins.tuple)):
            operands = operands[0]
    return ops.aten.einsum(equation, _builtins.list(operands))


def tensordot(a, b, dims=2):
    """As torch.tensordot (torch/functional.py): ``dims`` an int (the last ``dims`` of ``a``
    with the first of ``b``), a pair of lists, or a tensor of either."""
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.numel() == 1 else dims.tolist()
    if isinstance(dims, _builtins.int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = _builtins.list(range(-dims, 0)), _builtins.list(range(dims))
    elif isinstance(dims, (_builtins.list, _builtins.tuple)):
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists of dimensions")
        dims_a, dims_b = dims
        if isinstance(dims_a, _builtins.int):
            dims_a = [dims_a]
        if isinstance(dims_b, _builtins.int):
            dims_b = [dims_b]
    else:
        raise RuntimeError(f"tensordot expects dims to be int or Tuple[List[int], List[int]] or "
                           f"List[List[int]] containing two lists, but got dims={dims}")
    return ops.aten.tensordot(a, b, _builtins.list(dims_a), _builtins.list(dims_b))


def _parse_to(self, args, kwargs):
    """(device, dtype, copy) from Tensor.to's arguments."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, (_builtins.str, _C.device)):
            device = _C.device(a) if isinstance(a, _builtins.str) else a
        elif isinstance(a, _builtins.bool):
            pass  # non_blocking
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    if isinstance(device, _builtins.str):
        device = _C.device(device)
    return device, dtype, copy


def __getattr__(name):
    """``opdispatch.<name>`` is ``opdispatch.ops.aten.<name>`` for every other aten operator but
    the ``linalg_`` ones, which are ``opdispatch.linalg``'s (torch has no ``torch.linalg_cross``)."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name.startswith(linalg._PREFIX):
        raise AttributeError(f"module 'opdispatch' has no attribute '{name}'")
    try:
        packet = ops.aten.__getattr__(name)  # (what getattr would call, less its own lookup)
    except AttributeError:
        raise AttributeError(f"module 'opdispatch' has no attribute '{name}'") from None
    if name in ops._lasting_names:
        globals()[name] = packet  # kept (see opdispatch.ops._lasting)
    return packet


def _load_default_plugins():
    if _os.environ.get("OPDISPATCH_NO_DEFAULT_PLUGINS") == "1":
        return
    for status in plugins.load_default():
        if status.state == "failed":
            _warnings.warn(
                f"opdispatch: the default plugin '{status.name}' failed to load: "
                f"{status.reason}",
                RuntimeWarning,
                stacklevel=3,
            )


_load_default_plugins()
