"""``opdispatch.autograd``: gradient mode and ``grad``, as ``torch.autograd``. Recording and
the backward pass are the autograd plugin's; gradient mode is per thread."""

import functools as _functools
import warnings as _warnings

from . import _C
from . import ops as _ops

__all__ = ["grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "set_fallback_mode", "get_fallback_mode", "Function", "FunctionCtx", "UndefinedGrad"]

# torch._C._functions.UndefinedGrad: ``UndefinedGrad()(x)`` is a copy of x whose gradient
# reaches x's history undefined (None), for tests of how backward handles a missing gradient.
UndefinedGrad = _C._functions.UndefinedGrad

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


class FunctionCtx:
    """The ``ctx`` of a custom Function (torch.autograd.function.FunctionCtx): what forward (or
    setup_context) keeps for backward. Other attributes may be set on it freely."""

    def __init__(self):
        self._to_save = ()
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        # torch 2.x's: False passes None for the outputs marked non-differentiable (or of a
        # dtype without gradients) even while grads are materialized.
        self._materialize_non_diff_grads = True
        self._saved = None
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        """Keeps tensors (inputs, outputs or None) for backward, checked there against
        in-place changes made since."""
        self._to_save = tensors

    def mark_dirty(self, *tensors):
        """Says forward changed these inputs in place; they must be among its outputs."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Outputs that do not require grad (indices, masks)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether backward receives zeros (True, the default) or None for outputs that got no
        gradient. Read when backward runs, as torch does."""
        self._materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        """In backward: the tensors save_for_backward kept."""
        if self._saved is None:
            raise RuntimeError("saved_tensors is only available in backward")
        return tuple(self._saved)


class Function:
    """A custom differentiable operation, as torch.autograd.Function: subclass it with static
    ``forward(ctx, *args)`` (or ``forward(*args)`` with ``setup_context(ctx, inputs,
    output)``) and ``backward(ctx, *grad_outputs)``, returning one gradient (or None) per
    forward argument, and call ``apply(*args)``. forward runs without recording; backward,
    written with opdispatch operators, is differentiable itself. The graph's node is the
    autograd plugin's, named ``<Class>Backward``. Keep tensors for backward with
    ``ctx.save_for_backward``: a tensor set as another attribute of ctx that is an output (or
    leads to one) makes a cycle through the graph, which is never freed."""

    def __init__(self, *args, **kwargs):
        _warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        # The legacy style (an instance with a non-static forward, called): torch's error.
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply() takes positional arguments only")
        tensor_type = _C.Tensor
        is_variable = [isinstance(a, tensor_type) for a in args]
        inputs = [a for a, v in zip(args, is_variable) if v]
        grad_mode = _C.is_grad_enabled()
        needs = [grad_mode and t.requires_grad for t in inputs]
        record = any(needs)
        ctx = FunctionCtx()
        ctx.needs_input_grad = _per_argument(is_variable, needs)
        separate_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if separate_setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        tensor_positions = [i for i, o in enumerate(outputs) if isinstance(o, tensor_type)]
        num_outputs = len(outputs)
        # Per tensor output once recorded: what a zero gradient for it is, and whether it is
        # differentiable (torch's output_info and was_default_constructed).
        output_info = []

        # Holds ctx, never the outputs: the node that holds it is their grad_fn. The node
        # passes missing gradients as None; they are materialized here, as ctx says when
        # backward runs (torch's PyNode::apply).
        def backward(grads, saved, needs_input_grad):
            # One gradient per tensor output in; None at the other outputs' places.
            all_grads = [None] * num_outputs
            materialize = ctx._materialize_grads
            non_diff = ctx._materialize_non_diff_grads
            for i, g, (shape, dtype, device, differentiable) in zip(
                    tensor_positions, grads, output_info):
                if g is None and materialize and (differentiable or non_diff):
                    g = _ops.aten.zeros.default(list(shape), dtype=dtype, device=device)
                all_grads[i] = g
            ctx._saved = saved
            ctx.needs_input_grad = _per_argument(is_variable, needs_input_grad)
            try:
                result = cls.backward(ctx, *all_grads)
            finally:
                ctx._saved = None
            return result if isinstance(result, tuple) else (result,)

        wrapped = _C._record_function(
            backward, cls.__name__ + "Backward", record, inputs, is_variable,
            [outputs[i] for i in tensor_positions], list(ctx._to_save), list(ctx._dirty),
            list(ctx._non_differentiable), False)
        ctx._to_save = ctx._dirty = ctx._non_differentiable = ()
        result = list(outputs)
        for i, t in zip(tensor_positions, wrapped):
            result[i] = t
            if record:
                # Recorded, an output requires grad exactly when it is differentiable.
                output_info.append((t.shape, t.dtype, t.device, t.requires_grad))
        return tuple(result) if is_tuple else result[0]


def _per_argument(is_variable, per_tensor):
    """One flag per forward argument from one per tensor argument (False for the others)."""
    flags = iter(per_tensor)
    return tuple(next(flags) if v else False for v in is_variable)
