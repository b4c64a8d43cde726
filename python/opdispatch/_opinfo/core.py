"""The OpInfo table's core: what an entry says about an operator, and the helpers that build
its sample inputs. PyTorch's OpInfo idea (torch/testing/_internal/opinfo), written afresh.

Each family keeps a module ``python/opdispatch/_opinfo/<family>.py`` with
``OP_DB = [OpInfo(...)]``; tests/python/test_opinfo.py runs every module's OP_DB (values against
torch 1.13, gradcheck in float64, Meta against CPU, the out=/in-place rules, error inputs),
tests/python/differential.py draws random calls from the same table, and
``opdispatch.conformance`` runs its samples on a plugin's device against the CPU plugin.

Example (see example.py)::

    from opdispatch._opinfo.core import OpInfo, SampleInput, ErrorInput, dtypes as D

    def sample_unary(op, make, dtype, requires_grad):
        # make(shape, *, low=None, high=None, noncontiguous=False, requires_grad=False,
        #      exclude_zero=False) -> an opdispatch tensor of `dtype`
        yield SampleInput(make((3, 4), requires_grad=requires_grad))
        yield SampleInput(make((3, 4), noncontiguous=True))
        yield SampleInput(make(()))                 # 0-d
        yield SampleInput(make((0, 3)))             # empty
        yield SampleInput(make((2, 3)), args=(1,), kwargs={"keepdim": True})

    def errors(op, make):
        yield ErrorInput(SampleInput(make((2, 3)), args=(5,)), IndexError,
                         r"Dimension out of range")

    OP_DB = [OpInfo("cumsum", inplace="cumsum_", dtypes=D.all, sample_inputs=sample_unary,
                    error_inputs=errors)]

OpInfo fields (keywords; only the name is positional):
  name              entry name: "cumsum"; "max.reduction" for a variant (the part before the
                    dot names the function, the rest tells entries apart).
  op                callable(lib, *args, **kwargs); lib is the opdispatch or the torch module.
                    Default: ``getattr(lib, <name before the dot>)(*args, **kwargs)``.
  ref               the torch reference, same convention, when it is not ``op`` itself.
  method            True: also call ``x.<name>(...)`` with the first argument as self; a str:
                    that method name; False: no method.
  inplace           the in-place method's name ("cumsum_"), or None.
  supports_out      the function takes ``out=``.
  dtypes            CPU dtypes of torch 1.13 for the operator (names, see ``dtypes``).
  sample_inputs     (op, make, dtype, requires_grad) -> iterable of SampleInput.
  error_inputs      (op, make) -> iterable of ErrorInput, or None.
  supports_autograd gradcheck in float64 over the samples.
  tol               {dtype: (atol, rtol)} overrides of DEFAULT_TOL.
  skips             {check: reason}; a check is one of CHECKS, or "check:dtype" for one dtype.
Added fields:
  compare_strides   the values check also compares strides with torch's (elementwise ops).
  supports_meta     the Meta check runs (default True).
  supports_gradgrad gradgradcheck runs as well (default False: the budget).
  is_factory        the op makes its tensors (no tensor input); values compare with torch,
                    the Meta check passes device="meta" (sample kwargs get ``device``).
  nondeterministic  values are random (rand...): only dtype and shape compare.
  out_dtype         (dtype name) -> dtype name of the result, for the out= check's buffer
                    (default: the functional result's own dtype).
  out_name          the keyword of the out= argument (default "out"; _softmax_backward_data's
                    is "grad_input").
  layouts           the memory layouts differential.py may give the sample's tensors (default
                    all of differential.LAYOUTS); topk leaves out "expanded", whose repeated
                    values make ties, where torch's indices are unspecified.

SampleInput(input, args=(), kwargs=None, name=""): the call is op(lib, input, *args, **kwargs).
Arguments may be opdispatch tensors, numbers, lists/tuples (of tensors), None, and dtypes given
as strings ("float32"), which the harness makes lib.float32. ``name`` shows in failures.

ErrorInput(sample, error_type=RuntimeError, error_regex="", *, on_meta=True): the call raises
error_type with a message matching error_regex (re.search), on CPU, in torch, and on Meta
unless on_meta=False (an error that depends on the data, as an index out of range).
"""

import math
import random
import re

import opdispatch

__all__ = ["OpInfo", "SampleInput", "ErrorInput", "dtypes", "make_tensor", "make_maker",
           "to_torch", "lib_value", "tensors_of", "DEFAULT_TOL", "CHECKS", "method_op",
           "aten_op", "ref_in_float32"]

# The checks an entry may skip, by name (skips={"gradcheck": "why"}).
CHECKS = ("values", "method", "inplace", "out", "meta", "gradcheck", "gradgradcheck",
          "errors", "differential")


class dtypes:
    """dtype name lists, torch's groups (torch.testing._internal.common_dtype)."""
    floating = ("float32", "float64", "float16", "bfloat16")
    integral = ("uint8", "int8", "int16", "int32", "int64")
    all = floating + integral
    all_and_bool = all + ("bool",)
    complex = ("complex64", "complex128")
    all_and_complex = all + complex
    all_and_complex_and_bool = all_and_bool + complex
    float_and_complex = floating + complex


# (atol, rtol) per dtype; torch.testing.assert_close's defaults, float32's rtol widened for
# kernels that round differently from torch's (SLEEF, another summation order).
DEFAULT_TOL = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1.6e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1e-5, 1e-5),
    "complex128": (1e-7, 1e-7),
}


class SampleInput:
    """One call of an operator: op(lib, input, *args, **kwargs)."""

    def __init__(self, input, args=(), kwargs=None, name=""):
        self.input = input
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.name = name

    def __repr__(self):
        parts = [_describe(self.input)] + [_describe(a) for a in self.args]
        parts += [f"{k}={_describe(v)}" for k, v in self.kwargs.items()]
        label = f" {self.name!r}" if self.name else ""
        return f"SampleInput{label}({', '.join(parts)})"


class ErrorInput:
    """A sample the operator refuses: error_type with a message matching error_regex."""

    def __init__(self, sample, error_type=RuntimeError, error_regex="", *, on_meta=True):
        self.sample = sample
        self.error_type = error_type
        self.error_regex = error_regex
        self.on_meta = on_meta  # False: an error of the data (an index), which Meta cannot see

    def __repr__(self):
        return f"ErrorInput({self.sample!r}, {self.error_type.__name__}, {self.error_regex!r})"


class OpInfo:
    """What the table knows about one operator (or one variant of it). See the module doc."""

    def __init__(self, name, *, op=None, method=True, inplace=None, supports_out=True,
                 dtypes=dtypes.all, sample_inputs=None, error_inputs=None,
                 supports_autograd=True, ref=None, tol=None, skips=None,
                 compare_strides=False, supports_meta=True, supports_gradgrad=False,
                 is_factory=False, nondeterministic=False, out_dtype=None, out_name="out",
                 layouts=None):
        if sample_inputs is None:
            raise ValueError(f"OpInfo {name}: sample_inputs is required")
        for check in (skips or {}):
            if check.split(":")[0] not in CHECKS:
                raise ValueError(f"OpInfo {name}: unknown check '{check}' in skips "
                                 f"(one of {', '.join(CHECKS)}, or 'check:dtype')")
        self.name = name
        self.function_name = name.split(".")[0]
        self.op = op if op is not None else _named_function(self.function_name)
        self.ref = ref if ref is not None else self.op
        if method is True:
            self.method_name = self.function_name
        else:
            self.method_name = method or None
        self.inplace = inplace
        self.supports_out = supports_out
        self.dtypes = tuple(dtypes)
        self.sample_inputs = sample_inputs
        self.error_inputs = error_inputs
        self.supports_autograd = supports_autograd
        self.tol = dict(tol or {})
        self.skips = dict(skips or {})
        self.compare_strides = compare_strides
        self.supports_meta = supports_meta
        self.supports_gradgrad = supports_gradgrad
        self.is_factory = is_factory
        self.nondeterministic = nondeterministic
        self.out_dtype = out_dtype
        self.out_name = out_name
        self.layouts = tuple(layouts) if layouts is not None else None

    def __call__(self, lib, *args, **kwargs):
        return self.op(lib, *args, **kwargs)

    def __repr__(self):
        return f"OpInfo({self.name})"

    def skip_reason(self, check, dtype=None):
        """Why `check` is skipped (for `dtype`), or None when it runs."""
        if dtype is not None and f"{check}:{dtype}" in self.skips:
            return self.skips[f"{check}:{dtype}"]
        return self.skips.get(check)

    def tolerance(self, dtype):
        """(atol, rtol) for comparing results of `dtype` (0, 0 for exact dtypes)."""
        if dtype in self.tol:
            return self.tol[dtype]
        return DEFAULT_TOL.get(dtype, (0.0, 0.0))

    def samples(self, dtype, requires_grad=False, seed=0):
        """The entry's samples for `dtype`, made with a generator seeded by `seed`."""
        make = make_maker(dtype, random.Random(seed))
        return list(self.sample_inputs(self, make, dtype, requires_grad))

    def errors(self, seed=0):
        if self.error_inputs is None:
            return []
        make = make_maker(self.dtypes[0] if self.dtypes else "float32", random.Random(seed))
        return list(self.error_inputs(self, make))


def _named_function(name):
    def op(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    op.__name__ = name
    return op


def method_op(name):
    """An ``op`` calling ``x.<name>(...)`` in either library (torch has no function for some)."""
    def op(lib, self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    op.__name__ = name
    return op


def aten_op(name, overload):
    """An ``op`` calling ``lib.ops.aten.<name>.<overload>``, the same path in both libraries."""
    def op(lib, *args, **kwargs):
        return getattr(getattr(lib.ops.aten, name), overload)(*args, **kwargs)
    op.__name__ = f"{name}.{overload}"
    return op


def aten_packet(name):
    """An ``op`` calling ``lib.ops.aten.<name>(...)``: the overload packet, which picks the
    overload, the same path in both libraries."""
    def op(lib, *args, **kwargs):
        return getattr(lib.ops.aten, name)(*args, **kwargs)
    op.__name__ = name
    return op


def channels_last(make, shape, requires_grad):
    """An NCHW tensor of ``shape`` laid out channels-last (made NHWC, then permuted), requiring
    grad where asked and its dtype can."""
    n, c, h, w = shape
    t = make((n, h, w, c)).permute(0, 3, 1, 2)
    if requires_grad and make.dtype in ("float32", "float64", "bfloat16"):
        t.requires_grad_(True)
    return t


def _float_keeping_strides(lib, t):
    """``t.float()`` with ``t``'s own strides. ``.float()`` of an expanded tensor (a zero stride)
    makes a dense copy in a layout of its own choosing, which changes the layout some operators
    give their result (torch's pooling of a bfloat16 input of strides (0, 1, 20, 4) returns
    contiguous strides, of its float32 copy channels-last ones)."""
    if lib.__name__ != "torch" or 0 not in t.stride() or t.numel() <= 1:
        return t.float()
    whole = lib.empty(0, dtype=t.dtype).set_(t.storage())
    return whole.float().as_strided(t.size(), t.stride(), t.storage_offset())


def ref_in_float32(op):
    """A ``ref`` running ``op`` in torch on float32 copies of its bfloat16/float16 tensors and
    rounding floating results back: for an operator whose torch 1.13 CPU kernel accumulates in
    the low-precision type (nll_loss's sums), where opdispatch accumulates in double and rounds
    once. Other dtypes, and calls giving ``dtype=``, call ``op`` unchanged."""
    low = ("bfloat16", "float16")

    def widen(lib, value, seen):
        if isinstance(value, (list, tuple)):
            return type(value)(widen(lib, v, seen) for v in value)
        if isinstance(value, lib.Tensor) and dtype_name(value.dtype) in low:
            seen.append(dtype_name(value.dtype))
            return _float_keeping_strides(lib, value)
        return value

    def ref(lib, *args, **kwargs):
        seen = []
        args = widen(lib, args, seen)
        kwargs = {k: widen(lib, v, seen) for k, v in kwargs.items()}
        result = op(lib, *args, **kwargs)
        if not seen or kwargs.get("dtype") is not None:  # an explicit result dtype stays
            return result

        def back(value):
            if isinstance(value, (list, tuple)):
                return type(value)(back(v) for v in value)
            if isinstance(value, lib.Tensor) and value.dtype == lib.float32:
                return value.to(getattr(lib, seen[0]))
            return value
        return back(result)
    ref.__name__ = getattr(op, "__name__", "ref")
    return ref


def _describe(value):
    if isinstance(value, opdispatch.Tensor):
        extra = "" if value.is_contiguous() else f", stride={tuple(value.stride())}"
        return f"Tensor({list(value.shape)}, {str(value.dtype).split('.')[-1]}{extra})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


# ---- making tensors -------------------------------------------------------------------------

_FLOATING = dtypes.floating
_COMPLEX = dtypes.complex


def _default_range(dtype):
    """torch.testing.make_tensor's defaults: [-9, 9] for signed types, [0, 9] for uint8."""
    if dtype == "uint8":
        return 0, 10
    if dtype == "bool":
        return 0, 2
    return -9, 9


def make_tensor(shape, dtype, *, rng=None, low=None, high=None, noncontiguous=False,
                requires_grad=False, exclude_zero=False, device="cpu"):
    """An opdispatch tensor of `shape` and `dtype` (a name) with random values in [low, high)
    (make_tensor's ranges), drawn from `rng` (a random.Random). noncontiguous: the same kind
    of values in a tensor whose last dimension has stride 2. exclude_zero: no zero (a zero
    becomes the smallest positive step of the type). requires_grad: a leaf that requires grad
    (floating and complex dtypes only)."""
    rng = rng or random.Random(0)
    shape = tuple(int(s) for s in shape)
    lo, hi = _default_range(dtype)
    lo = lo if low is None else max(low, lo) if dtype in ("uint8", "bool") else low
    hi = hi if high is None else high
    n = math.prod(shape)
    storage_shape = shape
    if noncontiguous and shape:
        storage_shape = shape[:-1] + (shape[-1] * 2,)
        n = math.prod(storage_shape)
    if _np is not None and n >= 256:  # numpy's generator costs more than small tensors
        t = opdispatch.from_numpy(_values_numpy(rng, dtype, lo, hi, exclude_zero, n))
        if dtype not in ("bool", "float64", "int64", "complex128"):
            t = t.to(getattr(opdispatch, dtype))
        values = None
    else:
        values = [_draw(rng, dtype, lo, hi, exclude_zero) for _ in range(n)]
    if values is None:
        pass
    elif dtype == "bool":
        t = opdispatch.tensor(values, dtype=opdispatch.bool)
    elif dtype in _COMPLEX:
        t = opdispatch.tensor(values, dtype=getattr(opdispatch, dtype))
    elif dtype in _FLOATING:
        t = opdispatch.tensor(values, dtype=opdispatch.float64).to(getattr(opdispatch, dtype))
    else:
        t = opdispatch.tensor(values, dtype=opdispatch.int64).to(getattr(opdispatch, dtype))
    t = t.reshape(list(storage_shape))
    if noncontiguous and shape:
        t = t[..., ::2]
    if device != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


try:
    import numpy as _np
except ImportError:  # the same distributions, drawn one value at a time
    _np = None


def _values_numpy(rng, dtype, lo, hi, exclude_zero, n):
    """n values as _draw draws them (the same distributions, not the same numbers), from a
    numpy generator seeded by `rng`: bool, float64, int64 or complex128."""
    g = _np.random.default_rng(rng.getrandbits(64))
    if dtype == "bool":
        return g.random(n) < 0.5
    if dtype in _COMPLEX:
        return (_values_numpy(rng, "float64", lo, hi, exclude_zero, n)
                + 1j * _values_numpy(rng, "float64", lo, hi, exclude_zero, n))
    if dtype in _FLOATING:
        a = g.uniform(lo, hi, n)
        if dtype in ("float16", "bfloat16"):
            a = _np.round(a, 2)
        if exclude_zero:
            a = _np.where(_np.abs(a) < 0.1, _np.where(a >= 0, 0.5, -0.5), a)
        return a
    ilo, ihi = int(lo), int(hi)
    a = g.integers(ilo, ihi, n) if ihi > ilo else _np.full(n, ilo, dtype=_np.int64)
    if exclude_zero:
        a[a == 0] = 1
    return a.astype(_np.int64)


def _draw(rng, dtype, lo, hi, exclude_zero):
    if dtype == "bool":
        return rng.random() < 0.5
    if dtype in _COMPLEX:
        return complex(_draw(rng, "float64", lo, hi, exclude_zero),
                       _draw(rng, "float64", lo, hi, exclude_zero))
    if dtype in _FLOATING:
        v = rng.uniform(lo, hi)
        if dtype in ("float16", "bfloat16"):
            v = round(v, 2)
        if exclude_zero and abs(v) < 0.1:
            v = 0.5 if v >= 0 else -0.5
        return v
    v = rng.randrange(int(lo), int(hi)) if int(hi) > int(lo) else int(lo)
    if exclude_zero and v == 0:
        v = 1
    return v


def make_maker(dtype, rng):
    """The ``make`` a sample generator receives: make_tensor bound to `dtype` and `rng`."""
    def make(shape, *, low=None, high=None, noncontiguous=False, requires_grad=False,
             exclude_zero=False, dtype_override=None, device="cpu"):
        return make_tensor(shape, dtype_override or dtype, rng=rng, low=low, high=high,
                           noncontiguous=noncontiguous,
                           requires_grad=requires_grad and (dtype_override or dtype) in (
                               _FLOATING + _COMPLEX),
                           exclude_zero=exclude_zero, device=device)
    make.dtype = dtype
    make.rng = rng
    return make


# ---- moving samples between libraries -------------------------------------------------------

def _span(shape, stride):
    """Elements of storage a tensor of this shape and stride reaches from its offset."""
    if any(s == 0 for s in shape):
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(shape, stride))


def to_torch(x):
    """A torch copy of opdispatch tensor `x`: same dtype, shape, strides and values (not the
    memory: an in-place torch op leaves x alone). Meta tensors become torch meta tensors."""
    import torch
    shape, stride = list(x.shape), list(x.stride())
    tdtype = getattr(torch, str(x.dtype).split(".")[-1])
    if x.is_meta:
        return torch.empty_strided(shape, stride, dtype=tdtype, device="meta")
    span = _span(shape, stride)
    if span == 0:
        return torch.empty_strided(shape, stride, dtype=tdtype)
    flat = x.detach().as_strided([span], [1], x.storage_offset())
    if x.dtype == opdispatch.bool:
        base = torch.from_dlpack(flat.to(opdispatch.uint8)).to(torch.bool)
    else:
        base = torch.from_dlpack(flat.contiguous()).clone()
    return base.as_strided(shape, stride, 0)


def lib_value(lib, value, tensor_map=None):
    """`value` (a sample argument) for library `lib`: opdispatch tensors converted with
    to_torch when lib is torch (tensor_map, when given, maps an opdispatch tensor's id to a
    torch tensor already made for it), dtype names made lib's dtypes, lists and tuples
    converted element by element."""
    if isinstance(value, opdispatch.Tensor):
        if lib is opdispatch:
            return value
        if tensor_map is not None:
            if id(value) not in tensor_map:
                tensor_map[id(value)] = to_torch(value)
            return tensor_map[id(value)]
        return to_torch(value)
    if isinstance(value, str) and value in _ALL_DTYPE_NAMES:
        return getattr(lib, value)
    if isinstance(value, list):
        return [lib_value(lib, v, tensor_map) for v in value]
    if isinstance(value, tuple):
        return tuple(lib_value(lib, v, tensor_map) for v in value)
    if isinstance(value, dict):
        return {k: lib_value(lib, v, tensor_map) for k, v in value.items()}
    return value


_ALL_DTYPE_NAMES = frozenset(dtypes.all_and_bool + dtypes.complex)


def tensors_of(value):
    """Every opdispatch tensor in a sample argument, in order (lists and tuples searched)."""
    if isinstance(value, opdispatch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_of(v)]
    return []


def dtype_name(dt):
    """'float32' for opdispatch.float32 or torch.float32."""
    return str(dt).split(".")[-1]


def is_differentiable_dtype(name):
    return name in _FLOATING or name in _COMPLEX
