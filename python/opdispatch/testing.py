"""``opdispatch.testing``: swapping kernels and loading plugins for the length of a ``with``
block, counting calls, and checks for the end of each test. The pytest plugin
``opdispatch.testing`` (``-p opdispatch.testing``, or ``pytest_plugins = ["opdispatch.testing"]``
in a conftest) checks after every test that it left no new dangling impls and that the
dispatcher's invariants hold."""

import contextlib as _contextlib
import inspect as _inspect

from . import _C
from . import ops as _ops
from . import plugins as _plugins
from .library import Library, opcheck
from .tracing import trace

__all__ = ["override_kernel", "scoped_plugin", "count_calls", "assert_no_dangling_impls",
           "opcheck", "capture_ops"]


def _split(op):
    if isinstance(op, _ops.OpOverload):
        return op._ns, op._name + (f".{op._overload}" if op._overload else ""), op
    if isinstance(op, _ops.OpOverloadPacket):
        raise ValueError(f"override_kernel: {op} has several overloads; name one "
                         f"({', '.join(op.overloads())})")
    name = str(op)
    if "::" not in name:
        raise ValueError(f"override_kernel: '{name}' is not an operator name; expected "
                         f"'ns::op' or 'ns::op.overload'")
    ns, rest = name.split("::", 1)
    base, _, overload = rest.partition(".")
    try:
        overload_obj = getattr(getattr(getattr(_ops, ns), base), overload or "default")
    except AttributeError:
        raise ValueError(f"override_kernel: operator {name} is not defined; define it (or load "
                         f"the plugin that does) before overriding one of its kernels") from None
    return ns, rest, overload_obj


def _check_arity(fn, schema, name):
    try:
        sig = _inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    n = len(schema.arguments)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    kwonly = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
    required = [p for p in positional if p.default is p.empty]
    schema_kwonly = {a.name for a in schema.arguments if a.kwarg_only}
    n_positional = n - len(schema_kwonly)
    has_var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
    if len(required) > n_positional or (len(positional) < n_positional) or (
            not has_var_kw and not schema_kwonly <= (kwonly | {p.name for p in positional})):
        raise TypeError(f"override_kernel: the kernel takes {len(positional)} positional "
                        f"arguments{' and ' + ', '.join(sorted(kwonly)) if kwonly else ''}, but "
                        f"{name} has {n} ({schema})")


@_contextlib.contextmanager
def override_kernel(op, dispatch_key, fn):
    """Inside the block, calls of ``op`` dispatched to ``dispatch_key`` reach ``fn``; the
    kernel registered there before serves again after it. Overrides nest."""
    ns, name, overload = _split(op)
    _check_arity(fn, overload._schema, overload.name())
    lib = Library(ns, "IMPL", str(dispatch_key))
    try:
        lib.impl(name, fn)
        yield fn
    finally:
        lib.close()


@_contextlib.contextmanager
def scoped_plugin(name):
    """Loads a plugin (by name or manifest path) for the block and unloads it after
    (cascading to plugins loaded since that require it)."""
    status = _plugins.load(name)
    try:
        yield status
    finally:
        _plugins.unload(status.name, cascade=True)


class _CallCount:
    def __init__(self, op, key):
        self._op = op
        self._key = key
        self._trace = trace()
        self.count = 0

    def __int__(self):
        return self.count


@_contextlib.contextmanager
def count_calls(op, key=None):
    """Counts, in ``.count``, the hops of ``op`` on this thread inside the block (only those
    served by ``key`` when given)."""
    counter = _CallCount(op, key)
    with counter._trace:
        try:
            yield counter
        finally:
            counter.count = counter._trace.count(op, key)
    counter.count = counter._trace.count(op, key)


def assert_no_dangling_impls(allowed=()):
    """Fails naming each operator that has kernels but no schema (its defining plugin or
    library is gone), except those in ``allowed``."""
    dangling = [d for d in _C._dispatch_find_dangling_impls()
                if not any(a in d for a in allowed)]
    assert not dangling, "dangling impls:\n" + "\n".join(dangling)


# The pytest plugin: an autouse fixture, so that a failed check is an error of the test that
# caused it, and pytest's own setup and teardown of the next test are untouched.

try:
    import pytest as _pytest
except ImportError:  # opdispatch.testing is usable without pytest
    _pytest = None

if _pytest is not None:
    @_pytest.fixture(autouse=True)
    def opdispatch_checks():
        """After each test: no dangling impls that were not there before it, and the
        dispatcher's invariants hold."""
        before = set(_C._dispatch_find_dangling_impls())
        yield
        new = set(_C._dispatch_find_dangling_impls()) - before
        assert not new, "the test left dangling impls:\n" + "\n".join(sorted(new))
        _C._dispatch_check_all_invariants()


@_contextlib.contextmanager
def capture_ops():
    """Records every operator call of this thread inside the block, below autograd (each
    once, as the backend sees it: autograd has recorded it already), as a list of
    ``(func, args, kwargs)``: ``func`` the ``opdispatch.ops`` OpOverload, ``args`` and
    ``kwargs`` as ``__torch_dispatch__`` receives them (defaults left out). The calls still run::

        with capture_ops() as calls:
            x + y
        calls[0][0] is opdispatch.ops.aten.add.Tensor
    """
    from .utils._python_dispatch import TorchDispatchMode

    calls = []

    class CaptureMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            calls.append((func, args, kwargs))
            return func(*args, **kwargs)

    with CaptureMode():
        yield calls
