"""``python -m opdispatch.conformance PLUGIN``: a plugin's kernels against the CPU plugin (issue
33 §2; ``opd conformance PLUGIN`` runs this).

For every kernel the plugin serves (its ``served_keys``, and the operators it registered there),
the samples of the OpInfo-style table (``opdispatch._opinfo``) run on the key's device (CPU: cpu,
Meta: meta, CUDA: cuda, PrivateUse1: the name the plugin registered, such as "acme"; composite
and autograd keys: cpu) and on the CPU plugin, and each sample is checked: the same error type
where the CPU raises; dtype, shape and values (the entry's per-dtype tolerances; none on Meta, and
strides on Meta and where the entry compares them); out= (the result is the ``out`` object) and
in-place (the result is ``self``) with their values; ``opdispatch.library.opcheck`` on the
operator the call reached (on Meta: test_faketensor over CPU inputs); and each of the entry's
error inputs raises the entry's error type (its text is torch's, which a vendor need not match).
A vendor operator (another namespace) with no table entry gets samples filled from its schema.

Note [Conformance attribution]: a sample counts for a kernel when the call, traced
(``opdispatch.trace``), reached a kernel of this plugin; the plugin's shallowest hops of the call
are the kernels it exercised (``add`` on meta reaches meta's add.Tensor, and, below it, meta's
empty, which is not what the sample tests). A call that never reaches the plugin counts nowhere.
A kernel registered over one of the plugin's (``opdispatch.testing.override_kernel``) is checked
in its place.

Nothing here imports torch: the reference is the CPU plugin. Exit status: 1 when any check
failed, 0 otherwise, 2 on bad usage (an unknown plugin). A failure is printed with a line of
opdispatch Python that repeats the failing call, and a ``replay`` line that reruns the check.
"""

import argparse
import json
import re
import sys
import time
import warnings
import zlib

import opdispatch as opd
from . import _C
from ._opinfo import all_op_db
from ._opinfo.core import OpInfo, SampleInput, dtype_name, lib_value, tensors_of

__all__ = ["run", "main", "replay", "served_kernels"]


class _Failure(Exception):
    """A check that failed: what is wrong, and the call that shows it."""

    def __init__(self, message, snippet=""):
        super().__init__(message)
        self.snippet = snippet


# ---- what the plugin serves --------------------------------------------------------------------

_DUMP_LINE = re.compile(r"^(\w+)(?:\[alias\])?(?: \(inactive\))?: registered at .* "
                        r"\(plugin (\S+) [^)]*\)")


def served_kernels(status):
    """{(operator, key)} the plugin registered kernels for, from its served keys (a kernel
    another registration overrides still counts: it is the plugin's)."""
    found = set()
    for key in status.served_keys:
        try:
            names = _C._dispatch_get_registrations_for_dispatch_key(key)
        except RuntimeError:
            continue
        for name in names:
            for line in _C._dispatch_dump(name).splitlines():
                m = _DUMP_LINE.match(line)
                if m and m.group(1) == key and m.group(2) == status.name:
                    found.add((name, key))
    return found


_PRIVATEUSE = {"PrivateUse1": "privateuseone", "PrivateUse2": "privateusetwo",
               "PrivateUse3": "privateusethree"}


def device_of(key):
    """The device a key's kernels run on, or None (a key with no device here)."""
    if key in ("CPU", "Meta", "CUDA"):
        return key.lower()
    if key in _PRIVATEUSE:
        try:
            return opd.device(_PRIVATEUSE[key]).type  # the name the plugin registered
        except Exception:  # noqa: BLE001 - a slot this build does not declare
            return None
    if key.startswith("Autograd") and key != "Autograd":
        return device_of(key[len("Autograd"):])
    if key.startswith(("Composite", "Autograd")):
        return "cpu"
    return None


def _base(op_name):
    return op_name.split("::")[-1].split(".")[0]


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


def _sample_on(entry, sample, device):
    memo = {}
    args = _on((sample.input,) + sample.args, device, memo)
    kwargs = _on(sample.kwargs, device, memo)
    if entry.is_factory:
        kwargs["device"] = device
    return list(args), kwargs


# ---- comparing -----------------------------------------------------------------------------

def _outcome(thunk):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return thunk(), None
        except Exception as e:  # noqa: BLE001 - every error is compared with the CPU's
            return None, e


def _significant(shape, a, b):
    return all(x == y for s, x, y in zip(shape, a, b) if s > 1)


def _assert_same(got, want, entry, device, what, strides):
    """got (on device) against want (the CPU's): structure, dtype, shape, strides where asked,
    values within the entry's tolerance except on Meta."""
    if isinstance(want, opd.Tensor):
        if not isinstance(got, opd.Tensor):
            raise _Failure(f"{what}: returns {type(got).__name__}, the CPU a tensor")
        if got.dtype != want.dtype:
            raise _Failure(f"{what}: dtype {dtype_name(got.dtype)}, the CPU's is "
                           f"{dtype_name(want.dtype)}")
        if list(got.shape) != list(want.shape):
            raise _Failure(f"{what}: shape {list(got.shape)}, the CPU's is {list(want.shape)}")
        if got.device.type != device:
            raise _Failure(f"{what}: the result is on {got.device}, not on {device}")
        if strides and want.numel() > 1 and not _significant(want.shape, got.stride(),
                                                             want.stride()):
            raise _Failure(f"{what}: strides {tuple(got.stride())}, the CPU's are "
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
            raise _Failure(f"{what}: values differ from the CPU's (atol {atol}, rtol {rtol}): "
                           f"{_short(g)} against {_short(w)}")
    elif isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise _Failure(f"{what}: returns {type(got).__name__}, the CPU {len(want)} results")
        for i, (a, b) in enumerate(zip(got, want)):
            _assert_same(a, b, entry, device, f"{what}[{i}]", strides)
    elif device != "meta" and not entry.nondeterministic and got != want and not (
            isinstance(want, float) and want != want and got != got):
        if isinstance(want, float) and isinstance(got, float):
            atol, rtol = entry.tolerance("float64")
            if abs(got - want) <= atol + rtol * abs(want):
                return
        raise _Failure(f"{what}: {got!r}, the CPU gives {want!r}")


def _short(t):
    text = repr(t.tolist()) if t.numel() <= 8 else f"{t.flatten()[:8].tolist()}..."
    return text


def _same_refusal(got_err, want_err, what, device):
    """Both raise (the CPU's error type or a subclass), or the device returns where the CPU
    raises: a failure. Meta may return where the CPU kernel has no loop for the dtype
    ("not implemented for 'Bool'"): a Meta kernel computes no values, as torch's."""
    if got_err is None and device == "meta" and "not implemented for '" in str(want_err):
        return
    if got_err is None:
        raise _Failure(f"{what}: the CPU raises {type(want_err).__name__}: "
                       f"{_first_line(want_err)}; the device returns")
    if not (isinstance(got_err, type(want_err))
            or type(got_err).__name__ == type(want_err).__name__):
        raise _Failure(f"{what}: raises {type(got_err).__name__}: {_first_line(got_err)}; "
                       f"the CPU raises {type(want_err).__name__}: {_first_line(want_err)}")


def _first_line(e):
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


def _source(value, device):
    if isinstance(value, opd.Tensor):
        return _tensor_source(value, device)
    if isinstance(value, list):
        return "[" + ", ".join(_source(v, device) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_source(v, device) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, opd.dtype):
        return f"opd.{dtype_name(value)}"
    return repr(value)


def _call_source(entry, args, kwargs, device, variant):
    """A line of opdispatch Python repeating one call (args on the CPU; moved to `device`),
    or None where the entry's call is not a plain function, method or aten overload."""
    kind = getattr(entry.op, "__qualname__", "").split(".<locals>")[0]
    parts = [_source(a, device) for a in args[1:]]
    parts += [f"{k}={_source(v, device)}" for k, v in kwargs.items() if k != "__out__"]
    if variant == "out":
        parts.append(f"{entry.out_name}={kwargs['__out__']}")
    if variant == "inplace":
        return f"{_source(args[0], device)}.{entry.inplace}({', '.join(parts)})"
    everything = ", ".join([_source(args[0], device)] + parts)
    if kind == "_named_function":
        return f"opd.{entry.function_name}({everything})"
    if kind == "method_op":
        return f"{_source(args[0], device)}.{entry.op.__name__}({', '.join(parts)})"
    if kind in ("aten_op", "aten_packet") or entry.name.count("::"):
        name = entry.op.__name__
        ns = entry.name.split("::")[0] if "::" in entry.name else "aten"
        return f"opd.ops.{ns}.{name}({everything})"
    return None


def _snippet(call_line, replay_line):
    if call_line is None or len(call_line) > 2000:
        return replay_line
    return f"import opdispatch as opd; {call_line}"


# ---- running -------------------------------------------------------------------------------

class Row:
    """One kernel of the plugin: operator, key, samples that reached it, those that passed,
    and the first failure."""

    def __init__(self, op, key):
        self.op, self.key = op, key
        self.samples = self.passed = 0
        self.failure = None

    def as_dict(self):
        return {"operator": self.op, "key": self.key, "samples": self.samples,
                "passed": self.passed, "failure": self.failure}


class Target:
    """The plugin under test: its name and the kernels it serves, {(operator, key)}."""

    def __init__(self, name, served):
        self.name, self.served = name, served


def _reached(trace, target):
    """The plugin's kernels a traced call exercised (Note [Conformance attribution]): hops of
    the plugin, and hops of a kernel that overrides one of its kernels (a Python kernel
    registered over it, opdispatch.testing.override_kernel) in its place."""
    hops = [h for h in trace.hops
            if h.plugin.split(" ")[0] == target.name or (h.op, h.key) in target.served]
    if not hops:
        return set()
    depth = min(h.depth for h in hops)
    return {(h.op, h.key) for h in hops if h.depth == depth}


def _traced(thunk):
    with opd.trace() as t:
        result = _outcome(thunk)
    return result, t


def _direct_overload(entry, trace):
    """The OpOverload a plain call reached first, for opcheck; None otherwise."""
    if not trace.hops:
        return None
    kind = getattr(entry.op, "__qualname__", "").split(".<locals>")[0]
    top = trace.hops[0].op
    if kind not in ("_named_function", "aten_op", "aten_packet") and "::" not in entry.name:
        return None
    if kind == "_named_function" and _base(top) != entry.function_name:
        return None
    ns, rest = top.split("::")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(opd.ops, ns), name), overload or "default")


def check_sample(target, entry, device, dtype, index, sample, only=None):
    """Runs every check of one sample on `device`; [(kernels, check, failure or None)]: the
    plugin's kernels each check reached and its outcome."""
    results = []
    replay = (f"import opdispatch.conformance as c; c.replay({target.name!r}, {entry.name!r}, "
              f"{device!r}, {dtype!r}, {index}, {{check!r}})")

    def record(check, reached, thunk):
        if not reached or (only and check != only):
            return
        try:
            thunk()
            results.append((reached, check, None))
        except _Failure as f:
            results.append((reached, check, {
                "check": check, "message": str(f),
                "snippet": _snippet(f.snippet or None, replay.format(check=check)),
                "replay": replay.format(check=check)}))
        except Exception as e:  # noqa: BLE001 - a result the comparison cannot read
            results.append((reached, check, {
                "check": check, "message": f"{what}: comparing the results raised "
                                           f"{type(e).__name__}: {_first_line(e)}",
                "snippet": replay.format(check=check), "replay": replay.format(check=check)}))

    cpu_args, cpu_kwargs = _sample_on(entry, sample, "cpu")
    want, want_err = _outcome(lambda: entry.op(opd, *cpu_args, **cpu_kwargs))
    if device == "meta" and want is not None and not tensors_of(want):
        return results  # a number (item, equal): data, which Meta has not
    args, kwargs = _sample_on(entry, sample, device)
    src_args, src_kwargs = _sample_on(entry, sample, "cpu")
    what = f"{entry.name} on {device} ({dtype}, {sample!r})"
    line = _call_source(entry, src_args, src_kwargs, device, "function")
    (got, got_err), trace = _traced(lambda: entry.op(opd, *args, **kwargs))
    reached = _reached(trace, target)
    strides = device == "meta" or entry.compare_strides
    values_skipped = entry.skip_reason("values", dtype)

    def function():
        if want_err is not None:
            _same_refusal(got_err, want_err, what, device)
            return
        if got_err is not None:
            raise _Failure(f"{what}: raises {type(got_err).__name__}: {_first_line(got_err)}; "
                           "the CPU returns", line)
        if not values_skipped:
            _assert_same(got, want, entry, device, what, strides)
    record("function", reached, lambda: _with_snippet(function, line))

    if want_err is None and got_err is None:
        overload = _direct_overload(entry, trace)
        if overload is not None and not entry.nondeterministic:
            def opcheck():
                from .library import opcheck as run_opcheck
                if device == "meta":  # Meta against the CPU kernel, on CPU inputs
                    a, k, utils = cpu_args, cpu_kwargs, ("test_faketensor",)
                else:
                    a, k, utils = args, kwargs, ("test_schema", "test_faketensor")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    found = run_opcheck(overload, tuple(a), dict(k), test_utils=utils,
                                        raise_exception=False)
                for util, outcome in found.items():
                    if outcome != "SUCCESS":
                        raise _Failure(f"{what}: opcheck {util}: {_first_line(outcome)}",
                                       f"opd.library.opcheck(opd.ops.{_overload_path(overload)},"
                                       f" {_source(tuple(src_args), device)}, "
                                       f"{_source(src_kwargs, device)})")
            record("opcheck", reached, opcheck)

    if entry.supports_out and want_err is None and not entry.skip_reason("out", dtype) \
            and tensors_of(want) and all(isinstance(w, opd.Tensor) for w in (
                want if isinstance(want, tuple) else [want])):
        out_dtype = entry.out_dtype and getattr(opd, entry.out_dtype(dtype))
        wants = want if isinstance(want, tuple) else (want,)
        outs = tuple(opd.zeros(list(w.shape), dtype=out_dtype or w.dtype, device=device)
                     for w in wants)
        out = outs if isinstance(want, tuple) else outs[0]
        (r, err), t = _traced(lambda: entry.op(opd, *args, **kwargs, **{entry.out_name: out}))
        out_src = ("(" + ", ".join(_source(o, device) for o in outs) + ")"
                   if isinstance(want, tuple) else _source(outs[0], device))
        out_line = _call_source(entry, src_args, dict(src_kwargs, __out__=out_src), device,
                                "out")

        def out_check():
            if err is not None:
                raise _Failure(f"{what} out=: raises {type(err).__name__}: {_first_line(err)};"
                               " the CPU's function returns", out_line)
            items = r if isinstance(want, tuple) else (r,)
            if isinstance(want, tuple) and (not isinstance(r, (tuple, list))
                                            or len(r) != len(outs)):
                raise _Failure(f"{what} out=: returns {type(r).__name__}, not the out tuple",
                               out_line)
            if any(a is not b for a, b in zip(items, outs)):
                raise _Failure(f"{what} out=: the result is not the out tensor", out_line)
            if out_dtype is None:
                _assert_same(out, want, entry, device, f"{what} out=", False)
        record("out", _reached(t, target), lambda: _with_snippet(out_check, out_line))

    if entry.inplace and isinstance(sample.input, opd.Tensor) \
            and not entry.skip_reason("inplace", dtype):
        c_args, c_kwargs = _sample_on(entry, sample, "cpu")
        want_self = c_args[0]
        w, w_err = _outcome(lambda: getattr(want_self, entry.inplace)(*c_args[1:], **c_kwargs))
        d_args, d_kwargs = _sample_on(entry, sample, device)
        self_ = d_args[0]
        (r, err), t = _traced(lambda: getattr(self_, entry.inplace)(*d_args[1:], **d_kwargs))
        in_line = _call_source(entry, src_args, src_kwargs, device, "inplace")

        def inplace():
            if w_err is not None:
                _same_refusal(err, w_err, f"{what} {entry.inplace}", device)
                return
            if err is not None:
                raise _Failure(f"{what} {entry.inplace}: raises {type(err).__name__}: "
                               f"{_first_line(err)}; the CPU returns", in_line)
            if r is not self_:
                raise _Failure(f"{what} {entry.inplace}: the result is not self", in_line)
            if not values_skipped:
                _assert_same(self_, want_self, entry, device, f"{what} {entry.inplace}", True)
        record("inplace", _reached(t, target), lambda: _with_snippet(inplace, in_line))
    return results


def _with_snippet(check, line):
    try:
        check()
    except _Failure as f:
        raise _Failure(str(f), f.snippet or line) from None


def _overload_path(overload):
    schema = overload._schema
    return f"{schema.name.replace('::', '.')}.{schema.overload_name or 'default'}"


def check_errors(target, entry, device, index=None):
    """The entry's error inputs on `device`: each raises the entry's error type. [(kernels,
    check, failure or None)] as check_sample."""
    results = []
    if entry.skip_reason("errors"):
        return results
    for i, ei in enumerate(entry.errors(seed=zlib.crc32(f"{entry.name}-errors".encode()))):
        if (device == "meta" and not ei.on_meta) or (index is not None and i != index):
            continue
        args, kwargs = _sample_on(entry, ei.sample, device)
        src_args, src_kwargs = _sample_on(entry, ei.sample, "cpu")
        (_, err), t = _traced(lambda: entry.op(opd, *args, **kwargs))
        reached = _reached(t, target)
        if not reached:
            continue
        line = _call_source(entry, src_args, src_kwargs, device, "function")
        failure = None
        if err is None or not isinstance(err, ei.error_type):
            got = "returns" if err is None else f"raises {type(err).__name__}: {_first_line(err)}"
            replay_line = (f"import opdispatch.conformance as c; c.replay({target.name!r}, "
                           f"{entry.name!r}, {device!r}, None, {i}, 'errors')")
            failure = {"check": "errors", "replay": replay_line,
                       "message": f"{entry.name} on {device}, error input {ei.sample!r}: {got}"
                                  f"; expected {ei.error_type.__name__}",
                       "snippet": _snippet(line, replay_line)}
        results.append((reached, "errors", failure))
    return results


def _seed(entry, dtype):
    return zlib.crc32(f"{entry.name}-{dtype}".encode())


def _load(spec):
    """The plugin's status, loading it (name or manifest path) when it is not loaded; exits 2
    naming an unknown plugin."""
    known = {s.name: s for s in opd.plugins.list()}
    if spec in known and known[spec].state in ("loaded", "resident"):
        return known[spec]
    if spec not in known and not spec.endswith((".yaml", ".yml")):
        raise SystemExit(_usage(f"no plugin named '{spec}' in the search path (known: "
                                f"{', '.join(sorted(known)) or 'none'}); give its name or "
                                "its manifest's path"))
    try:
        return opd.plugins.load(spec)
    except Exception as e:  # noqa: BLE001 - PluginError, with the manager's text
        if spec.endswith((".yaml", ".yml")):
            raise SystemExit(_usage(f"cannot load plugin '{spec}': {e}"))
        return opd.plugins.status(spec)


def _usage(message):
    print(f"opd conformance: {message}", file=sys.stderr)
    return 2


def plan(status, ops=None):
    """[(entry, device)] to run for the plugin, the served kernels, and the vendor entries."""
    kernels = served_kernels(status)
    by_device = {}
    for op, key in kernels:
        device = device_of(key)
        if device is not None:
            by_device.setdefault(device, set()).add(op)
    entries = [op for _, op in all_op_db()]
    work = []
    for device in sorted(by_device):
        # Every entry where the plugin serves an aten kernel on the device: which kernels a
        # call reaches is the trace's to say (a composite entry reaches the backend's kernels
        # below it), and a run of the whole table on Meta takes seconds.
        if any(op.startswith("aten::") for op in by_device[device]):
            work += [(e, device) for e in entries]
        for op in sorted(by_device[device]):
            if not op.startswith("aten::"):
                e = schema_entry(op)
                if e is not None:
                    work.append((e, device))
    if ops:
        work = [(e, d) for e, d in work if re.search(ops, e.name)]
    return work, kernels


def run(plugin, *, ops=None, budget=0.0, samples=2, dtypes=None):
    """Runs the conformance checks of `plugin` (a name or manifest path); returns the report
    as a dict (what --json prints). Warnings (a CPU fallback's, out= resizing) are silenced:
    they are not what is checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(plugin, ops, budget, samples, dtypes)


def _run(plugin, ops, budget, samples, dtypes):
    status = _load(plugin)
    report = {"plugin": status.name, "state": status.state, "served_keys": status.served_keys,
              "rows": [], "uncovered": [], "entries": 0, "entries_run": 0,
              "stopped_by_budget": False, "failures": 0}
    if status.state not in ("loaded", "resident"):
        report["error"] = f"plugin {status.name} is {status.state}: {status.reason}"
        report["failures"] = 1
        return report
    work, kernels = plan(status, ops)
    target = Target(status.name, kernels)
    report["entries"] = len(work)
    rows = {}
    start = time.monotonic()
    for entry, device in work:
        if budget and time.monotonic() - start > budget:
            report["stopped_by_budget"] = True
            break
        report["entries_run"] += 1
        if device == "meta" and (not entry.supports_meta or entry.skip_reason("meta")):
            continue
        outcomes = []
        for dtype in entry.dtypes:
            if dtypes and dtype not in dtypes:
                continue
            chosen = entry.samples(dtype, seed=_seed(entry, dtype))
            for i, sample in enumerate(chosen[:samples] if samples else chosen):
                outcomes.append(check_sample(target, entry, device, dtype, i, sample))
        outcomes.append(check_errors(target, entry, device))
        for sample_results in outcomes:
            passed = {}
            for reached, check, failure in sample_results:
                for kernel in reached:
                    row = rows.setdefault(kernel, Row(*kernel))
                    passed[kernel] = passed.get(kernel, True) and failure is None
                    if failure is not None and row.failure is None:
                        row.failure = failure
            for kernel, ok in passed.items():
                rows[kernel].samples += 1
                rows[kernel].passed += ok
    report["rows"] = [rows[k].as_dict() for k in sorted(rows)]
    reached_ops = {op for op, _ in rows}  # a composite kernel is reached at an Autograd key
    report["uncovered"] = sorted(f"{op} {key}" for op, key in kernels
                                 if op not in reached_ops and device_of(key) is not None)
    report["failures"] = sum(1 for r in rows.values() if r.failure)
    report["seconds"] = round(time.monotonic() - start, 2)
    return report


def replay(plugin, entry_name, device, dtype, index, check):
    """Reruns one check of a conformance run; raises AssertionError with its failure."""
    status = _load(plugin)
    target = Target(status.name, served_kernels(status))
    entries = {e.name: e for _, e in all_op_db()}
    entry = entries.get(entry_name) or schema_entry(entry_name)
    if check == "errors":
        results = check_errors(target, entry, device, index)
    else:
        sample = entry.samples(dtype, seed=_seed(entry, dtype))[index]
        results = check_sample(target, entry, device, dtype, index, sample, only=check)
    for _, _, failure in results:
        if failure is not None:
            raise AssertionError(failure["message"])
    return results


def _print_table(report, out):
    rows = [["operator", "key", "samples", "passed", "first failure"]]
    for r in report["rows"]:
        f = r["failure"]
        rows.append([r["operator"], r["key"], str(r["samples"]), str(r["passed"]),
                     f["snippet"] if f else ""])
    width = [max(len(row[i]) for row in rows) for i in range(4)]
    for n, row in enumerate(rows):
        cells = [row[0].ljust(width[0]), row[1].ljust(width[1]), row[2].rjust(width[2]),
                 row[3].rjust(width[3])]
        print("  ".join(cells + [row[4]]).rstrip(), file=out)
        f = report["rows"][n - 1]["failure"] if n else None
        if f:
            print(f"{'':{width[0]}}  {f['check']}: {f['message']}", file=out)
    if report.get("error"):
        print(report["error"], file=out)
    tail = (f"{report['plugin']}: {len(report['rows'])} kernels reached, "
            f"{sum(r['samples'] for r in report['rows'])} samples, {report['failures']} failed; "
            f"{len(report['uncovered'])} served kernels reached by no sample (--json lists them)")
    if report["stopped_by_budget"]:
        tail += (f"; --budget spent after {report['entries_run']} of {report['entries']} "
                 "entries")
    print(tail, file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="opd conformance",
        description="Check a plugin's kernels against the CPU plugin over the OpInfo table's "
                    "samples. Exit 1 on any failure, 2 on bad usage.")
    parser.add_argument("plugin", help="plugin name or manifest path")
    parser.add_argument("--ops", help="only the table entries whose name matches this regex")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--budget", type=float, default=0,
                        help="start no entry after this many seconds (default: no limit)")
    parser.add_argument("--samples", type=int, default=2,
                        help="samples per entry and dtype (default 2; 0: all)")
    parser.add_argument("--dtypes", help="comma-separated dtype names (default: the entry's)")
    args = parser.parse_args(argv)
    if args.ops:
        try:
            re.compile(args.ops)
        except re.error as e:
            return _usage(f"--ops {args.ops!r} is not a regular expression: {e}")
    try:
        report = run(args.plugin, ops=args.ops, budget=args.budget, samples=args.samples,
                     dtypes=set(args.dtypes.split(",")) if args.dtypes else None)
    except SystemExit as e:
        return e.code
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        _print_table(report, sys.stdout)
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
