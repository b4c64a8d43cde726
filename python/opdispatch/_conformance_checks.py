"""The checks of one sample of the conformance run (opdispatch.conformance) on a plugin's
device against the CPU plugin, attributed to the plugin's kernels the call reached (Note
[Conformance attribution] in conformance.py)."""

import inspect
import warnings
import zlib

import opdispatch as opd
from ._conformance_samples import (Failure, assert_same, call_source, first_line,
                                   outcome, same_refusal, sample_on, snippet_line, source_of,
                                   torch_reference)
from ._opinfo.core import tensors_of

def _base(op_name):
    return op_name.split("::")[-1].split(".")[0]


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
        result = outcome(thunk)
    return result, t


def _direct_overload(entry, trace):
    """The OpOverload a plain call reached first, for opcheck; None otherwise."""
    if not trace.hops:
        return None
    kind = getattr(entry.op, "__qualname__", "").split(".<locals>")[0]
    top = trace.hops[0].op
    if kind not in ("_named_function", "aten_op", "aten_packet") and "::" not in entry.name:
        return None
    if kind == "_named_function" and (
            _base(top) != entry.function_name
            # A Python function over the operators (opdispatch.norm, einsum) translates its
            # arguments: they are not the overload's.
            or inspect.isfunction(getattr(opd, entry.function_name, None))):
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
        except Failure as f:
            results.append((reached, check, {
                "check": check, "message": str(f),
                "snippet": snippet_line(f.snippet or None, replay.format(check=check)),
                "replay": replay.format(check=check)}))
        except Exception as e:  # noqa: BLE001 - a result the comparison cannot read
            results.append((reached, check, {
                "check": check, "message": f"{what}: comparing the results raised "
                                           f"{type(e).__name__}: {first_line(e)}",
                "snippet": replay.format(check=check), "replay": replay.format(check=check)}))

    cpu_args, cpu_kwargs = sample_on(entry, sample, "cpu")
    # Note [The CPU's own reference]: a vendor operator ("ns::op", samples from its schema)
    # has no torch reference.
    reference = (torch_reference(entry, sample) if device == "cpu" and "::" not in entry.name
                 else None)
    if reference is not None:
        want, want_err = reference
    else:
        want, want_err = outcome(lambda: entry.op(opd, *cpu_args, **cpu_kwargs))
    unchecked_values = device == "cpu" and reference is None
    if device == "meta" and want is not None and not tensors_of(want):
        return results  # a number (item, equal): data, which Meta has not
    args, kwargs = sample_on(entry, sample, device)
    src_args, src_kwargs = sample_on(entry, sample, "cpu", device)
    what = f"{entry.name} on {device} ({dtype}, {sample!r})"
    line = call_source(entry, src_args, src_kwargs, device, "function")
    (got, got_err), trace = _traced(lambda: entry.op(opd, *args, **kwargs))
    reached = _reached(trace, target)
    strides = device == "meta" or entry.compare_strides
    values_skipped = entry.skip_reason("values", dtype) or unchecked_values

    def function():
        if want_err is not None:
            same_refusal(got_err, want_err, what, device)
            return
        if got_err is not None:
            raise Failure(f"{what}: raises {type(got_err).__name__}: {first_line(got_err)}; "
                          "the CPU returns", line)
        if not values_skipped:
            assert_same(got, want, entry, device, what, strides)
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
                for util, result in found.items():
                    if result != "SUCCESS":
                        raise Failure(f"{what}: opcheck {util}: {first_line(result)}",
                                      f"opd.library.opcheck(opd.ops.{_overload_path(overload)},"
                                      f" {source_of(tuple(src_args), device)}, "
                                      f"{source_of(src_kwargs, device)})")
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
        out_src = ("(" + ", ".join(source_of(o, device) for o in outs) + ")"
                   if isinstance(want, tuple) else source_of(outs[0], device))
        out_line = call_source(entry, src_args, dict(src_kwargs, __out__=out_src), device,
                               "out")

        def out_check():
            if err is not None:
                raise Failure(f"{what} out=: raises {type(err).__name__}: {first_line(err)};"
                              " the CPU's function returns", out_line)
            items = r if isinstance(want, tuple) else (r,)
            if isinstance(want, tuple) and (not isinstance(r, (tuple, list))
                                            or len(r) != len(outs)):
                raise Failure(f"{what} out=: returns {type(r).__name__}, not the out tuple",
                              out_line)
            if any(a is not b for a, b in zip(items, outs)):
                raise Failure(f"{what} out=: the result is not the out tensor", out_line)
            if out_dtype is None:
                assert_same(out, want, entry, device, f"{what} out=", False)
        record("out", _reached(t, target), lambda: _with_snippet(out_check, out_line))

    if entry.inplace and isinstance(sample.input, opd.Tensor) \
            and not entry.skip_reason("inplace", dtype):
        c_args, c_kwargs = sample_on(entry, sample, "cpu")
        want_self = c_args[0]
        w, w_err = outcome(lambda: getattr(want_self, entry.inplace)(*c_args[1:], **c_kwargs))
        d_args, d_kwargs = sample_on(entry, sample, device)
        self_ = d_args[0]
        (r, err), t = _traced(lambda: getattr(self_, entry.inplace)(*d_args[1:], **d_kwargs))
        in_line = call_source(entry, src_args, src_kwargs, device, "inplace")

        def inplace():
            if w_err is not None:
                same_refusal(err, w_err, f"{what} {entry.inplace}", device)
                return
            if err is not None:
                raise Failure(f"{what} {entry.inplace}: raises {type(err).__name__}: "
                              f"{first_line(err)}; the CPU returns", in_line)
            if r is not self_:
                raise Failure(f"{what} {entry.inplace}: the result is not self", in_line)
            if not values_skipped:
                assert_same(self_, want_self, entry, device, f"{what} {entry.inplace}", True)
        record("inplace", _reached(t, target), lambda: _with_snippet(inplace, in_line))
    return results


def _with_snippet(check, line):
    try:
        check()
    except Failure as f:
        raise Failure(str(f), f.snippet or line) from None


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
        args, kwargs = sample_on(entry, ei.sample, device)
        src_args, src_kwargs = sample_on(entry, ei.sample, "cpu", device)
        (_, err), t = _traced(lambda: entry.op(opd, *args, **kwargs))
        reached = _reached(t, target)
        if not reached:
            continue
        line = call_source(entry, src_args, src_kwargs, device, "function")
        failure = None
        if err is None or not isinstance(err, ei.error_type):
            got = "returns" if err is None else f"raises {type(err).__name__}: {first_line(err)}"
            replay_line = (f"import opdispatch.conformance as c; c.replay({target.name!r}, "
                           f"{entry.name!r}, {device!r}, None, {i}, 'errors')")
            failure = {"check": "errors", "replay": replay_line,
                       "message": f"{entry.name} on {device}, error input {ei.sample!r}: {got}"
                                  f"; expected {ei.error_type.__name__}",
                       "snippet": snippet_line(line, replay_line)}
        results.append((reached, "errors", failure))
    return results


def seed_of(entry, dtype):
    return zlib.crc32(f"{entry.name}-{dtype}".encode())
