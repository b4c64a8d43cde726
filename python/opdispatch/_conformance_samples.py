"""The conformance run's samples and comparisons (opdispatch.conformance): samples of a vendor
operator from its schema, sample arguments moved to a device with their strides, results
compared with the CPU's (torch's for a kernel that runs on the CPU itself, where torch is
importable: Note [The CPU's own reference]), and failing calls written as a line of opdispatch
Python."""

import warnings

import opdispatch as opd
from ._opinfo.core import OpInfo, SampleInput, dtype_name, lib_value

class Failure(Exception):
    """A check that failed: what is wrong, and the call that shows it."""

    def __init__(self, message, snippet=""):
        super().__init__(message)
        self.snippet = snippet


# ---- samples for a vendor operator the table does not know --------------------------------------

_FILL = {"float": 2.0, "int": 2, "bool": False, "Scalar": 2, "SymInt": 2}


def schema_entry(op_name):
    """An OpInfo for a vendor operator from its schema (contiguous float32 tensors of 2x3 and of
    4, 2 for numbers, defaults left out), or None where an argument cannot be filled. The
    layouts a vendor's kernel accepts are its own (example::scale refuses a non-contiguous
    tensor), so the samples stay contiguous."""
    ns, rest = op_name.split("::")
    name, _, overload = rest.partition(".")
    overload_obj = getattr(getattr(getattr(opd.ops, ns), name), overload or "default")
    args = overload_obj._schema.arguments
    for a in args:
        if a.default_value is None and str(a.type) not in _FILL and str(a.type) != "Tensor":
            return None
    if not any(not a.kwarg_only and a.default_value is None for a in args):
        return None  # a call with no positional argument: nothing to make a sample of

    def sample_inputs(op, make, dtype, requires_grad):
        for shape in ((2, 3), (4,)):
            values, kwargs = [], {}
            for a in args:
                if a.default_value is not None and str(a.type) != "Tensor":
                    continue
                v = make(shape) if str(a.type) == "Tensor" \
                    else _FILL[str(a.type)]
                if a.kwarg_only:
                    kwargs[a.name] = v
                else:
                    values.append(v)
            yield SampleInput(values[0], tuple(values[1:]), kwargs)

    def call(lib, *a, **k):
        return overload_obj(*a, **k)
    call.__name__ = f"{name}.{overload or 'default'}"
    return OpInfo(op_name, op=call, method=False, supports_out=False, dtypes=("float32",),
                  sample_inputs=sample_inputs, supports_autograd=False)


# ---- moving samples ------------------------------------------------------------------------

def _span(t):
    return 0 if 0 in t.shape else 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))


def _moved(t, device):
    """A copy of CPU tensor t on `device` with t's sizes and strides (meta: no data)."""
    shape, stride = list(t.shape), list(t.stride())
    if device == "meta":
        return opd.empty_strided(shape, stride, dtype=t.dtype, device="meta")
    if _span(t) == 0:
        return opd.empty_strided(shape, stride, dtype=t.dtype, device=device)
    flat = t.detach().as_strided([_span(t)], [1], t.storage_offset()).clone()
    if device != "cpu":
        flat = flat.to(device)
    return flat.as_strided(shape, stride, 0)


def _on(value, device, memo):
    """The sample argument `value` with dtype names made opdispatch's and every tensor a copy
    on `device` (one copy per tensor, shared where the sample shares it)."""
    if isinstance(value, opd.Tensor):
        if id(value) not in memo:
            memo[id(value)] = _moved(value, device)
        return memo[id(value)]
    if isinstance(value, list):
        return [_on(v, device, memo) for v in value]
    if isinstance(value, tuple):
        return tuple(_on(v, device, memo) for v in value)
    if isinstance(value, dict):
        return {k: _on(v, device, memo) for k, v in value.items()}
    return lib_value(opd, value)


def sample_on(entry, sample, device, factory_device=None):
    """The sample's arguments with its tensors on `device`; a factory's device argument is
    `factory_device` (default `device`): a snippet's source keeps CPU tensors (printed with a
    .to(device)) but names the device under test for a factory."""
    memo = {}
    args = _on((sample.input,) + sample.args, device, memo)
    kwargs = _on(sample.kwargs, device, memo)
    if entry.is_factory:
        kwargs["device"] = factory_device or device
    return list(args), kwargs


# ---- comparing -----------------------------------------------------------------------------

def outcome(thunk):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return thunk(), None
        except Exception as e:  # noqa: BLE001 - every error is compared with the CPU's
            return None, e


def _significant(shape, a, b):
    return all(x == y for s, x, y in zip(shape, a, b) if s > 1)


def assert_same(got, want, entry, device, what, strides):
    """got (on device) against want (the CPU's): structure, dtype, shape, strides where asked,
    values within the entry's tolerance except on Meta."""
    if isinstance(want, opd.Tensor):
        if not isinstance(got, opd.Tensor):
            raise Failure(f"{what}: returns {type(got).__name__}, the CPU a tensor")
        if got.dtype != want.dtype:
            raise Failure(f"{what}: dtype {dtype_name(got.dtype)}, the CPU's is "
                          f"{dtype_name(want.dtype)}")
        if list(got.shape) != list(want.shape):
            raise Failure(f"{what}: shape {list(got.shape)}, the CPU's is {list(want.shape)}")
        if got.device.type != device:
            raise Failure(f"{what}: the result is on {got.device}, not on {device}")
        if strides and want.numel() > 1 and not _significant(want.shape, got.stride(),
                                                             want.stride()):
            raise Failure(f"{what}: strides {tuple(got.stride())}, the CPU's are "
                          f"{tuple(want.stride())}")
        if device == "meta" or entry.nondeterministic or want.numel() == 0:
            return
        atol, rtol = entry.tolerance(dtype_name(want.dtype))
        g = got.detach().cpu()
        w = want.detach()
        if g.dtype.is_complex:  # real and imaginary parts (isclose's equal_nan is for reals)
            real = opd.float64 if g.dtype == opd.complex128 else opd.float32
            g, w = g.reshape(-1).contiguous().view(real), w.reshape(-1).contiguous().view(real)
        if g.dtype.is_floating_point:
            ok = bool(opd.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True).all())
        else:
            ok = bool(opd.equal(g, w))
        if not ok:
            raise Failure(f"{what}: values differ from the CPU's (atol {atol}, rtol {rtol}): "
                          f"{_short(g)} against {_short(w)}")
    elif isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise Failure(f"{what}: returns {type(got).__name__}, the CPU {len(want)} results")
        for i, (a, b) in enumerate(zip(got, want)):
            assert_same(a, b, entry, device, f"{what}[{i}]", strides)
    elif device != "meta" and not entry.nondeterministic and got != want and not (
            isinstance(want, float) and want != want and got != got):
        if isinstance(want, float) and isinstance(got, float):
            atol, rtol = entry.tolerance("float64")
            if abs(got - want) <= atol + rtol * abs(want):
                return
        raise Failure(f"{what}: {got!r}, the CPU gives {want!r}")


def _short(t):
    text = repr(t.tolist()) if t.numel() <= 8 else f"{t.flatten()[:8].tolist()}..."
    return text


# Note [The CPU's own reference]
# A kernel that runs on the CPU itself (the CPU plugin's, a composite's, an autograd kernel's)
# cannot be checked against the CPU plugin: both calls reach the same kernels. Its reference is
# torch's (the entry's ref, as tests/python/test_opinfo.py runs it) where torch is importable;
# where it is not, and for a vendor's own operators (which torch has not), the values of such
# kernels go unchecked and the report says so, while the device-independent checks (opcheck,
# error inputs, out= and in-place identity) still run.

def torch_reference(entry, sample):
    """(result, error) of torch running the entry's reference on the sample, the result as
    opdispatch values; None when torch is not importable."""
    try:
        import torch
    except ImportError:
        return None
    tensor_map = {}
    targs = lib_value(torch, (sample.input,) + tuple(sample.args), tensor_map)
    tkwargs = lib_value(torch, sample.kwargs, tensor_map)
    result, err = outcome(lambda: entry.ref(torch, *targs, **tkwargs))
    return (None, err) if err is not None else (from_torch(result), None)


def from_torch(value):
    """A torch result as opdispatch's: tensors with their dtype, shape and strides (DLPack;
    bool, which torch 1.13 does not export, through uint8), tuples and lists element by element,
    anything else as it is."""
    import torch
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.dtype == torch.bool:
            return opd.from_dlpack(t.to(torch.uint8)).to(opd.bool)
        return opd.from_dlpack(t)
    if isinstance(value, (tuple, list)):
        return type(value)(from_torch(v) for v in value) if type(value) in (tuple, list) \
            else tuple(from_torch(v) for v in value)
    return value


def same_refusal(got_err, want_err, what, device):
    """Both raise (the CPU's error type or a subclass), or the device returns where the CPU
    raises: a failure. Meta may return where the CPU kernel has no loop for the dtype
    ("not implemented for 'Bool'"): a Meta kernel computes no values, as torch's."""
    if got_err is None and device == "meta" and "not implemented for '" in str(want_err):
        return
    if got_err is None:
        raise Failure(f"{what}: the CPU raises {type(want_err).__name__}: "
                      f"{first_line(want_err)}; the device returns")
    if not (isinstance(got_err, type(want_err))
            or type(got_err).__name__ == type(want_err).__name__):
        raise Failure(f"{what}: raises {type(got_err).__name__}: {first_line(got_err)}; "
                      f"the CPU raises {type(want_err).__name__}: {first_line(want_err)}")


def first_line(e):
    return str(e).strip().splitlines()[0] if str(e).strip() else ""


# ---- snippets ------------------------------------------------------------------------------

def _tensor_source(t, device):
    shape, stride, name = list(t.shape), list(t.stride()), dtype_name(t.dtype)
    if device == "meta" or t.numel() == 0:
        return (f"opd.empty_strided({shape}, {stride}, dtype=opd.{name}, "
                f"device={device!r})")
    flat = t.detach().cpu().as_strided([_span(t)], [1], t.storage_offset()).contiguous()
    if name in ("float16", "bfloat16"):
        head = f"opd.tensor({flat.float().tolist()!r}).to(opd.{name})"
    else:
        head = f"opd.tensor({flat.tolist()!r}, dtype=opd.{name})"
    where = "" if device == "cpu" else f".to({device!r})"
    return f"{head}{where}.as_strided({shape}, {stride}, 0)"


def source_of(value, device):
    if isinstance(value, opd.Tensor):
        return _tensor_source(value, device)
    if isinstance(value, list):
        return "[" + ", ".join(source_of(v, device) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(source_of(v, device) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, opd.dtype):
        return f"opd.{dtype_name(value)}"
    return repr(value)


def call_source(entry, args, kwargs, device, variant):
    """A line of opdispatch Python repeating one call (args on the CPU; moved to `device`),
    or None where the entry's call is not a plain function, method or aten overload."""
    kind = getattr(entry.op, "__qualname__", "").split(".<locals>")[0]
    parts = [source_of(a, device) for a in args[1:]]
    parts += [f"{k}={source_of(v, device)}" for k, v in kwargs.items() if k != "__out__"]
    if variant == "out":
        parts.append(f"{entry.out_name}={kwargs['__out__']}")
    if variant == "inplace":
        return f"{source_of(args[0], device)}.{entry.inplace}({', '.join(parts)})"
    everything = ", ".join([source_of(args[0], device)] + parts)
    if kind == "_named_function":
        return f"opd.{entry.function_name}({everything})"
    if kind == "method_op":
        return f"{source_of(args[0], device)}.{entry.op.__name__}({', '.join(parts)})"
    if kind in ("aten_op", "aten_packet") or entry.name.count("::"):
        name = entry.op.__name__
        ns = entry.name.split("::")[0] if "::" in entry.name else "aten"
        return f"opd.ops.{ns}.{name}({everything})"
    return None


def snippet_line(call_line, replay_line):
    if call_line is None or len(call_line) > 2000:
        return replay_line
    return f"import opdispatch as opd; {call_line}"
