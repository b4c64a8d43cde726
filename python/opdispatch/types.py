"""``opdispatch.types``: the type aliases of ``torch.types`` that annotations use, among them
``Number``, which ``infer_schema`` writes as ``Scalar``."""

import builtins as _builtins
from typing import List, Sequence, Tuple, Union

from . import _C
from ._tensor import Size as _Size

__all__ = ["Number", "Device"]

_int = _builtins.int
_float = _builtins.float
_bool = _builtins.bool

_dtype = _C.dtype
_device = _C.device
_layout = _C.layout
_size = Union[_Size, List[_int], Tuple[_int, ...]]
_TensorOrTensors = Union[_C.Tensor, Sequence[_C.Tensor]]

# A Python number as the Scalar of a schema.
Number = Union[_builtins.int, _builtins.float, _builtins.bool]

# What a device argument accepts: a device, its string ("cuda:0") or index, or None.
Device = Union[_device, str, _int, None]
