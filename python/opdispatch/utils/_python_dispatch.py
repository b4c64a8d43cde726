"""``opdispatch.utils._python_dispatch``: TorchDispatchMode, as torch.utils._python_dispatch.

A mode intercepts every operator call of its thread below autograd: ``with Mode():`` pushes it on
the thread's mode stack (the core's, ``opd/dispatch_mode.h``), and each call reaches
``mode.__torch_dispatch__(func, types, args, kwargs)`` with the mode popped, so that calling
``func(*args, **kwargs)`` inside goes to the next mode, or below the Python key from the last one
(Note [Python dispatch modes] in python/src/python_dispatch.cpp). ``func`` is the
``opdispatch.ops`` OpOverload (``func is opdispatch.ops.aten.add.Tensor``).
"""

import contextlib
import warnings

from .._C import (_get_dispatch_stack_at, _len_torch_dispatch_stack, _pop_torch_dispatch_stack,
                  _push_on_torch_dispatch_stack)

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode"]


class TorchDispatchMode:
    """Overrides every operator call of this thread inside ``with Mode():``, without tensor
    subclasses: factory functions included. Modes nest: inside ``__torch_dispatch__`` the mode
    is popped, so calling ``func`` reaches the next mode on the stack."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`")
        instance = cls(*args, **kwargs)
        return instance


def _get_current_dispatch_mode():
    stack_len = _len_torch_dispatch_stack()
    return _get_dispatch_stack_at(stack_len - 1) if stack_len > 0 else None


def _get_current_dispatch_mode_stack():
    return [_get_dispatch_stack_at(i) for i in range(_len_torch_dispatch_stack())]


def _push_mode(mode):
    if isinstance(mode, TorchDispatchMode):
        # torch refuses a classmethod __torch_dispatch__ on a mode, at dispatch.
        method = type(mode).__dict__.get("__torch_dispatch__")
        if isinstance(method, classmethod):
            raise RuntimeError(f"{type(mode)}'s torch_dispatch function "
                               "should be a normal method not a class method")
    _push_on_torch_dispatch_stack(mode)


def _pop_mode():
    return _pop_torch_dispatch_stack()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


class BaseTorchDispatchMode(TorchDispatchMode):
    """Runs every operator as it is: a mode to derive from."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        return func(*args, **kwargs)
