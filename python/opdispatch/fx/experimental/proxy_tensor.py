"""make_fx, as torch.fx.experimental.proxy_tensor's: the operators a function runs, below
autograd, as a GraphModule.

The capture is opd::fx::CaptureMode (core/fx/capture.h, Note [Graph capture]), a C++ dispatch
mode pushed on this thread's mode stack for the call: every operator reaches it at the Python
key, runs on the real tensors, and becomes a node. Since the Python key is below Autograd, a
function that calls opdispatch.autograd.grad or .backward() gives the joint graph.
"""

import contextlib
import functools
import inspect

from ... import _C, Tensor
from ..graph_module import GraphModule

__all__ = ["make_fx"]


def _placeholder_names(f, count):
    # torch's make_fx names a placeholder after the function's parameter, suffixed _1 (x_1);
    # *args parameters as arg0_1, arg1_1...; with the parameter's default, if any.
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if len(names) == count:
            break
        if p.kind == p.VAR_POSITIONAL:
            names += [f"arg{i}_1" for i in range(count - len(names))]
            break
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            default = ... if p.default is p.empty else p.default
            names.append((f"{p.name}_1", default))
    while len(names) < count:
        names.append(f"arg{len(names)}_1")
    return [n if isinstance(n, tuple) else (n, ...) for n in names]


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False):
    """Returns a function that runs `f(*args)` under the capture and returns the GraphModule
    of what it ran. tracing_mode "real" runs the operators on the arguments themselves."""
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    if decomposition_table:
        raise NotImplementedError("make_fx: decomposition_table is not supported by opdispatch")
    if tracing_mode == "symbolic":
        raise NotImplementedError("make_fx: tracing_mode='symbolic' is not supported by "
                                  "opdispatch (no symbolic shapes)")

    @functools.wraps(f)
    def wrapped(*args):
        fake_mode = contextlib.nullcontext()
        if tracing_mode == "fake":
            fake_mode = _fake_tensor_mode(_allow_non_fake_inputs)
            args = _tree_map(lambda a: fake_mode.from_tensor(a) if isinstance(a, Tensor) else a,
                             args)
        mode = _C._FxCaptureMode()
        names = _placeholder_names(f, len(args))
        if any(isinstance(a, (list, tuple, dict)) for a in args):
            # torch's pytree code generation: a placeholder per leaf, named after its argument.
            mode.set_pytree_arguments([name[:-2] for name, _ in names])
            for (name, _), value in zip(names, args):
                for leaf in tree_leaves(value):
                    mode.add_input(name, leaf)
        else:
            for (name, default), value in zip(names, args):
                if default is ... or _is_constant(default):
                    mode.add_input(name, value, default)
                else:
                    mode.add_input(name, value)
        # The fake mode first, below the capture: each operator the capture records is then
        # computed by the fake mode, on the Meta kernels.
        with fake_mode, mode:
            out = f(*args)
        mode.set_output(out)
        return GraphModule(mode.take_graph(), getattr(f, "__name__", "GraphModule"))

    return wrapped


def _tree_map(fn, tree):
    if isinstance(tree, (list, tuple)):
        items = [_tree_map(fn, item) for item in tree]
        return items if isinstance(tree, list) else tuple(items)
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def tree_leaves(tree):
    """The leaves of nested lists, tuples and dicts (a dict's values in its order), as torch's
    pytree flattens them."""
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in tree_leaves(item)]
    if isinstance(tree, dict):
        return [leaf for item in tree.values() for leaf in tree_leaves(item)]
    return [tree]


def _fake_tensor_mode(allow_non_fake_inputs):
    from ..._subclasses.fake_tensor import FakeTensorMode

    # A tensor literal inside the function is a real tensor (opdispatch.tensor runs no
    # operator, where torch's lift_fresh makes it fake): allowed with _allow_non_fake_inputs.
    return FakeTensorMode(allow_non_fake_inputs=allow_non_fake_inputs)


def _is_constant(value):
    return value is None or isinstance(value, (bool, int, float, str))
