"""``opdispatch.nn``, as ``torch.nn`` without its Module classes: only ``functional``
(``import opdispatch.nn.functional as F``). Models are written with tensors and these functions."""

from . import functional

__all__ = ["functional"]
