"""``opdispatch.autograd``: gradient mode and ``grad``, as ``torch.autograd``. Recording and
the backward pass are the autograd plugin's; gradient mode is per thread."""

import functools as _functools
import warnings as _warnings

from . import _C
from . import ops as _ops

__all__ = ["grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "set_fallback_mode", "get_fallback_mode", "Function", "FunctionCtx", "UndefinedGrad",
           "gradcheck", "gradgradcheck", "GradcheckError"]

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


# ---- gradcheck ------------------------------------------------------------------------------
# Note [gradcheck]
# torch.autograd.gradcheck's slow mode, written over opdispatch: the Jacobian of every
# differentiable output with respect to every input that requires grad, once by central
# differences (each element of the input perturbed by +-eps in place, the function run
# again) and once from backward (one vector-Jacobian product per output element, with a
# one-hot grad_output), compared element by element as |a - n| <= atol + rtol * |n|. The
# Jacobians are input-major, as torch prints them: row k is input element k in row-major
# logical order, column m output element m. Real inputs only (torch's complex mode, which
# checks the Wirtinger derivatives, is not written).


class GradcheckError(RuntimeError):
    """What gradcheck raises (torch.autograd.gradcheck.GradcheckError)."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _flat_values(t):
    """The elements of tensor `t` as Python floats, in row-major logical order."""
    return t.detach().reshape([-1]).tolist()


def _element_offsets(t):
    """Storage offsets of t's elements, in row-major logical order."""
    offsets = [t.storage_offset()]
    for size, stride in zip(t.shape, t.stride()):
        offsets = [o + i * stride for o in offsets for i in range(size)]
    return offsets if t.numel() else []


def _differentiable(outputs):
    return [o for o in outputs if isinstance(o, _C.Tensor) and o.requires_grad]


def _numerical_jacobian(func, inputs, wrt, eps, out_selector):
    """[input][output] -> rows (one per input element) of d output / d input element."""
    jacobians = []
    for x in wrt:
        data = x.detach()
        rows = []
        # func runs in grad mode: gradgradcheck's function calls backward inside.
        for offset in _element_offsets(data):
            cell = data.as_strided([], [], offset)
            original = cell.item()
            cell.fill_(original - eps)
            minus = [_flat_values(o) for o in out_selector(_as_tuple(func(*inputs)))]
            cell.fill_(original + eps)
            plus = [_flat_values(o) for o in out_selector(_as_tuple(func(*inputs)))]
            cell.fill_(original)
            rows.append([[(p - m) / (2 * eps) for p, m in zip(po, mo)]
                         for po, mo in zip(plus, minus)])
        # rows[k][out][m] -> per output: rows k of m
        n_out = len(rows[0]) if rows else len(out_selector(_as_tuple(func(*inputs))))
        jacobians.append([[r[i] for r in rows] for i in range(n_out)])
    return jacobians


def _analytical_jacobian(inputs, wrt, outputs, check_grad_dtypes):
    """[input][output] -> rows (one per input element), from one backward per output element."""
    jacobians = [[[[0.0] * o.numel() for _ in range(x.numel())] for o in outputs] for x in wrt]
    for i, o in enumerate(outputs):
        for m in range(o.numel()):
            g = _ops.aten.zeros.default(list(o.shape), dtype=o.dtype, device=o.device)
            g.reshape([-1])[m].fill_(1)
            grads = grad([o], list(wrt), [g], retain_graph=True, allow_unused=True)
            for j, (x, gx) in enumerate(zip(wrt, grads)):
                if gx is None:
                    continue
                if list(gx.shape) != list(x.shape):
                    raise GradcheckError("Gradient has shape mismatch")
                if check_grad_dtypes and gx.dtype != x.dtype:
                    raise GradcheckError("Gradient has dtype mismatch")
                for k, v in enumerate(_flat_values(gx)):
                    jacobians[j][i][k][m] = v
    return jacobians


def _matrix_text(rows):
    from . import tensor as _tensor_of
    if not rows or not rows[0]:
        return f"tensor([], size=({len(rows)}, 0), dtype=torch.float64)"
    return repr(_tensor_of(rows, dtype=_C.float64))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False):
    """Checks the gradients that backward computes for ``func(*inputs)`` against finite
    differences, as torch.autograd.gradcheck (its slow mode; see Note [gradcheck]): True, or
    GradcheckError (False when raise_exception is False). The inputs that require grad should
    be float64 and must not overlap in memory. Forward AD and batched gradients do not exist
    here: asking for them is a NotImplementedError."""
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: forward AD and batched gradients are not "
                                  "supported by opdispatch")
    try:
        _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_grad_dtypes,
                   check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_backward_ad):
    tensor_type = _C.Tensor
    wrt = [x for x in inputs if isinstance(x, tensor_type) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for idx, x in enumerate(inputs):
        if not (isinstance(x, tensor_type) and x.requires_grad):
            continue
        if x.dtype not in (_C.float64, _C.complex128):
            _warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ")
        if x.is_complex():
            raise NotImplementedError("gradcheck: complex inputs are not supported by "
                                      "opdispatch's gradcheck")
        if any(st == 0 and sz > 1 for sz, st in zip(x.shape, x.stride())):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
    outputs = _as_tuple(func(*inputs))
    diff_outputs = _differentiable(outputs)
    if not diff_outputs:
        # Nothing to differentiate: the function must not depend on its inputs.
        numerical = _numerical_jacobian(
            func, inputs, wrt, eps,
            lambda outs: [o for o in outs if isinstance(o, tensor_type)
                          and o.is_floating_point()])
        for j, per_out in enumerate(numerical):
            for i, rows in enumerate(per_out):
                if any(abs(v) > 0 for row in rows for v in row):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    if not check_backward_ad:
        return
    positions = [k for k, o in enumerate(outputs) if isinstance(o, tensor_type)
                 and o.requires_grad]
    numerical = _numerical_jacobian(func, inputs, wrt, eps,
                                    lambda outs: [outs[k] for k in positions])
    # Perturbing bumped the inputs' versions: backward needs outputs recorded since.
    diff_outputs = _differentiable(_as_tuple(func(*inputs)))
    analytical = _analytical_jacobian(inputs, wrt, diff_outputs, check_grad_dtypes)
    for j, x in enumerate(wrt):
        input_index = next(k for k, a in enumerate(inputs) if a is x)
        for i in range(len(diff_outputs)):
            n_rows, a_rows = numerical[j][i], analytical[j][i]
            for n_row, a_row in zip(n_rows, a_rows):
                if any(not abs(a - n) <= atol + rtol * abs(n) for a, n in zip(a_row, n_row)):
                    raise GradcheckError(
                        f"Jacobian mismatch for output {i} with respect to input "
                        f"{input_index},\nnumerical:{_matrix_text(n_rows)}\n"
                        f"analytical:{_matrix_text(a_rows)}\n")
    again = _analytical_jacobian(inputs, wrt, diff_outputs, check_grad_dtypes)
    for first, second in zip(analytical, again):
        for rows1, rows2 in zip(first, second):
            for r1, r2 in zip(rows1, rows2):
                if any(abs(a - b) > nondet_tol for a, b in zip(r1, r2)):
                    raise GradcheckError(
                        "Backward is not reentrant, i.e., running backward with same input and "
                        "grad_output multiple times gives different values, although analytical "
                        "gradient matches numerical gradient.The tolerance for nondeterminism "
                        f"was {nondet_tol}.")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False):
    """Checks second derivatives as torch.autograd.gradgradcheck: gradcheck of the function
    that maps (inputs, grad_outputs) to the gradients of ``func`` with respect to the inputs
    (made with create_graph=True). grad_outputs: random float64 tensors (requiring grad) when
    not given."""
    if check_fwd_over_rev or check_batched_grad:
        raise NotImplementedError("gradgradcheck: forward AD and batched gradients are not "
                                  "supported by opdispatch")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable(_as_tuple(func(*inputs)))
        grad_outputs = tuple(
            _ops.aten.randn.default(list(o.shape), dtype=o.dtype, device=o.device)
            .requires_grad_(True) for o in outputs)
        if gen_non_contig_grad_outputs:
            grad_outputs = tuple(g.detach().t().contiguous().t().requires_grad_(True)
                                 if g.dim() == 2 else g for g in grad_outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_inputs = len(inputs)

    def new_func(*args):
        ins, gos = args[:n_inputs], args[n_inputs:]
        outs = _differentiable(_as_tuple(func(*ins)))
        wrt = [x for x in ins if isinstance(x, _C.Tensor) and x.requires_grad]
        grads = grad(outs, wrt, list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes)
