"""``opdispatch.autograd``: gradient mode and ``grad``, as ``torch.autograd``. Recording and
the backward pass are the autograd plugin's; gradient mode is per thread."""

import functools as _functools

from . import _C

__all__ = ["grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "set_fallback_mode", "get_fallback_mode"]

is_grad_enabled = _C.is_grad_enabled


def set_fallback_mode(mode):
    """What an operator without an autograd kernel does when its inputs require grad, for the
    whole process (torch._C._set_autograd_fallback_mode): ``"warn"`` (the default) gives its
    outputs a node that warns once per operator when backward reaches it, ``"error"`` one that
    raises there, ``"nothing"`` none. Arguments the schema marks as written get their version
    bumped in every mode. The fallback belongs to the autograd plugin: RuntimeError without it."""
    _C._set_autograd_fallback_mode(mode)


def get_fallback_mode():
    """The mode set_fallback_mode set (torch._C._get_autograd_fallback_mode)."""
    return _C._get_autograd_fallback_mode()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple, one per input),
    leaving every ``.grad`` untouched."""
    return _C._autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused)


class _GradModeContext:
    """A context manager that is also a decorator, as torch's grad-mode classes."""

    def __call__(self, fn):
        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode())
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class no_grad(_GradModeContext):
    """Operators called inside record no history, on this thread."""

    def _mode(self):
        return False


class enable_grad(_GradModeContext):
    """Operators called inside record history, even inside ``no_grad``."""

    def _mode(self):
        return True


class set_grad_enabled(_GradModeContext):
    """Sets gradient mode at once (as a function) or for a block (as a context manager)."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self._value = bool(mode)
        _C._set_grad_enabled(self._value)

    def __call__(self, fn):
        # Used as a decorator: the mode set by __init__ applies to calls only, as torch's.
        _C._set_grad_enabled(self._prev)
        return super().__call__(fn)

    def _args(self):
        return (self._value,)

    def _mode(self):
        return self._value

    def __enter__(self):
        return self
