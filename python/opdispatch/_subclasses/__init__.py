"""``opdispatch._subclasses``, as ``torch._subclasses``: tensor subclasses built on Python
dispatch. ``fake_tensor`` holds FakeTensor and FakeTensorMode."""

from .fake_tensor import (DataDependentOutputException, DynamicOutputShapeException, FakeTensor,
                          FakeTensorMode, UnsupportedFakeTensorException)

__all__ = [
    "FakeTensor", "FakeTensorMode", "UnsupportedFakeTensorException",
    "DynamicOutputShapeException", "DataDependentOutputException",
]
