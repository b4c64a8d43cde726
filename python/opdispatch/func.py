"""opdispatch.func: function transforms, as torch.func. ``functionalize(f, remove=...)`` is
functorch's (torch 1.13's functorch.experimental.functionalize), over the functionalize plugin
(plugins/functionalize/), which the first call loads."""

import functools as _functools

from . import _C
from . import autograd as _autograd
from . import plugins as _plugins

__all__ = ["functionalize"]

_REMOVE_ERROR = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}."
    " Valid options are:\n"
    "     remove='mutations': all inplace and out= operators will be removed from the program, "
    "and replaced with their out-of-place equivalents.\n"
    "     remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n"
)


def _layer():
    """The functionalize plugin's operators, loading the plugin on first use."""
    from . import ops

    # The plugin's fallback is the cheap sign that it is loaded (plugins.status reads the
    # manifests: tens of microseconds a call).
    if not _C._dispatch_has_backend_fallback("Functionalize"):
        _plugins.load("functionalize")
    return ops.functionalize


class _hidden:
    """The layer's own operators are not the program's, and dispatch modes (make_fx,
    capture_ops) must not record them, as torch's are no operators at all. Those taking tensors
    are served at the autograd keys (CompositeImplicitAutograd), above the Python key, so grad
    mode is enabled for them (no_grad excludes those keys); what they compute (a sync replays
    views and writes mutations back) still reaches the modes. The thread's setting takes no
    tensor: it skips the Python keys."""

    def __init__(self, skip_python=False):
        keys = ("PythonTLSSnapshot", "Python") if skip_python else ()
        self._guards = [_autograd.enable_grad()] + [_C._ExcludeDispatchKeyGuard(k) for k in keys]

    def __enter__(self):
        for g in self._guards:
            g.__enter__()

    def __exit__(self, *exc):
        for g in reversed(self._guards):
            g.__exit__(*exc)
        return False


class _ToFunctional(_autograd.Function):
    """Wraps a tensor that requires grad, differentiably: autograd records f's operators on
    the functional tensors, above the Functionalize layer, and the gradient reaching the wrapper
    (functional when computed from saved functional tensors) flows to the input unwrapped."""

    @staticmethod
    def forward(ctx, x):
        with _hidden():
            return _layer()._to_functional_tensor(x)

    @staticmethod
    def backward(ctx, grad):
        layer = _layer()
        with _hidden():
            return layer._from_functional_tensor(grad) if layer._is_functional_tensor(grad) else grad


class _FromFunctional(_autograd.Function):
    """Unwraps an output that requires grad, differentiably: its gradient enters the graph
    recorded on the functional tensors as a functional tensor, so that the backward formulas
    (which may accumulate in place) see functional tensors only."""

    @staticmethod
    def forward(ctx, t):
        with _hidden():
            return _layer()._from_functional_tensor(t)

    @staticmethod
    def backward(ctx, grad):
        layer = _layer()
        with _hidden():
            return grad if layer._is_functional_tensor(grad) else layer._to_functional_tensor(grad)


def _tree_map(fn, tree):
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a namedtuple
        return type(tree)(*(_tree_map(fn, t) for t in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map(fn, t) for t in tree)
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def _tree_leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _tree_leaves(t)]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _tree_leaves(v)]
    return [tree]


def functionalize(func, *, remove="mutations"):
    """A function with ``func``'s semantics in which every in-place and out= operator runs as its
    functional form (``x.add_(y)`` as ``add``), and, with ``remove="mutations_and_views"``,
    every view as a copy. Mutations of ``func``'s inputs are applied to them at the end
    (``copy_``), as functorch does; gradients flow through it to inputs that require grad."""
    if remove == "mutations":
        reapply_views = True
    elif remove == "mutations_and_views":
        reapply_views = False
    else:
        raise RuntimeError(_REMOVE_ERROR.format(remove))

    @_functools.wraps(func)
    def wrapped(*args, **kwargs):
        layer = _layer()

        # Outside the Functionalize key, as autograd.Function.apply must run.
        def wrap(x):
            if not isinstance(x, _C.Tensor):
                return x
            if x.requires_grad and _autograd.is_grad_enabled():
                # autograd.Function's own record is no operator of the program either.
                with _hidden(skip_python=True):
                    return _ToFunctional.apply(x)
            with _hidden():
                return layer._to_functional_tensor(x)

        def unwrap(x):
            if not isinstance(x, _C.Tensor):
                return x
            with _hidden():
                if not layer._is_functional_tensor(x):
                    return x
            if x.requires_grad and _autograd.is_grad_enabled():
                with _hidden():
                    layer._sync(x)  # what the sync computes is the program's
                with _hidden(skip_python=True):
                    return _FromFunctional.apply(x)
            with _hidden():
                return layer._from_functional_tensor(x)

        with _hidden(skip_python=True):
            previous = layer._set_reapply_views(reapply_views)
        try:
            func_args = _tree_map(wrap, args)
            func_kwargs = _tree_map(wrap, kwargs)
            with _C._IncludeDispatchKeyGuard("Functionalize"):
                func_outputs = func(*func_args, **func_kwargs)
            outputs = _tree_map(unwrap, func_outputs)
        finally:
            with _hidden(skip_python=True):
                layer._set_reapply_views(previous)
        inputs = _tree_leaves(args) + _tree_leaves(kwargs)
        wrapped_inputs = _tree_leaves(func_args) + _tree_leaves(func_kwargs)
        for original, functional in zip(inputs, wrapped_inputs):
            if not isinstance(original, _C.Tensor):
                continue
            with _hidden():
                mutated = layer._is_mutated(functional, original)
                value = layer._from_functional_tensor(functional) if mutated else None
            if mutated:
                if original.shape != value.shape:
                    original.resize_(value.shape)
                original.copy_(value)
        return outputs

    return wrapped
