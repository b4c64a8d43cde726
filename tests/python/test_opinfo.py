"""The OpInfo table (opdispatch._opinfo) run against torch 1.13 and against itself: for each
entry and dtype, values against torch (dtype, shape, values within the entry's tolerances, NaN
equal to NaN, integers exact, strides where the entry says compare_strides), the method form,
Meta against CPU (shape, dtype, strides; the same error type where CPU raises), out= (the
result is `out`, values as the function's; a wrong-shaped `out` resized with torch's warning,
an empty one silently) and in-place (the result is self, values as torch's), error inputs
(type and text, CPU, Meta and torch); per entry, gradcheck in float64 (and gradgradcheck
where the entry asks).

Time: every check is cheap, and the file runs within CI's minute. OPD_OPINFO_SAMPLES=N caps the
samples of one check (default 8; 0: no cap), OPD_OPINFO_GRAD_SAMPLES=N those of gradcheck
(default 3); OPD_OPINFO_FULL=1 lifts both caps. OPD_OPINFO_BUDGET=seconds skips, with that
reason, the tests that start after the file has run so long (default: none). -k selects
entries as usual: pytest test_opinfo.py -k "softmax and float16".
"""

import os
import re
import time
import warnings
import zlib

import pytest

import opdispatch
from opdispatch._opinfo import all_op_db
from opdispatch._opinfo.core import (ErrorInput, SampleInput, dtype_name, is_differentiable_dtype,
                         lib_value, tensors_of, to_torch)

torch = pytest.importorskip("torch", reason="torch is not importable: the OpInfo table "
                            "compares with torch 1.13 (Debian's python3-torch)")

_FULL = os.environ.get("OPD_OPINFO_FULL") == "1"
_SAMPLE_CAP = 0 if _FULL else int(os.environ.get("OPD_OPINFO_SAMPLES", "8"))
_GRAD_SAMPLE_CAP = 0 if _FULL else int(os.environ.get("OPD_OPINFO_GRAD_SAMPLES", "3"))
_BUDGET = float(os.environ.get("OPD_OPINFO_BUDGET", "0"))
_START = time.monotonic()

ENTRIES = all_op_db()
_ids = [f"{m}.{op.name}" for m, op in ENTRIES]
_dup = {i for i in _ids if _ids.count(i) > 1}
assert not _dup, f"entries named twice: {sorted(_dup)}"
def by_dtype(has=lambda op: True):
    """(entry, dtype) parameters of the entries that have the form a check tests: an entry
    without a method is no test of the method (not a skipped one: fewer tests to run)."""
    return [pytest.param(op, dt, id=f"{m}.{op.name}-{dt}") for m, op in ENTRIES if has(op)
            for dt in op.dtypes]


def by_entry(has=lambda op: True):
    return [pytest.param(op, id=f"{m}.{op.name}") for m, op in ENTRIES if has(op)]


# ---- running a sample --------------------------------------------------------------------

def seed_of(op, dtype):
    return zlib.crc32(f"{op.name}-{dtype}".encode())


def samples(op, dtype, requires_grad=False, cap=None):
    cap = _SAMPLE_CAP if cap is None else cap
    result = op.samples(dtype, requires_grad=requires_grad, seed=seed_of(op, dtype))
    return result[:cap] if cap else result


def call(fn, lib, sample, tensor_map=None, **extra):
    """fn(lib, input, *args, **kwargs) with the sample's values made lib's."""
    __tracebackhide__ = True  # failures show the test's line, not the helper's
    args = lib_value(lib, (sample.input,) + sample.args, tensor_map)
    kwargs = lib_value(lib, sample.kwargs, tensor_map)
    kwargs.update(extra)
    return fn(lib, *args, **kwargs)


def outcome(thunk):
    """(result, None) or (None, exception), warnings silenced."""
    __tracebackhide__ = True  # failures show the test's line, not the helper's
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return thunk(), None
        except Exception as e:  # noqa: BLE001 - every failure is compared with torch's
            return None, e


def same_error_type(ours, theirs):
    """Ours is torch's type (or a subclass of it): RuntimeError for RuntimeError..."""
    return isinstance(ours, type(theirs)) or type(ours).__name__ == type(theirs).__name__


def describe_call(op, sample, variant="function"):
    return f"{op.name} ({variant}) on {sample!r}"


# ---- comparing results -------------------------------------------------------------------

def assert_same(actual, expected, op, dtype, *, compare_strides=False, what=""):
    """opdispatch's `actual` against torch's `expected`: same structure, dtypes, shapes, values
    within op's tolerance for the result dtype; strides when compare_strides."""
    __tracebackhide__ = True  # failures show the test's line, not the helper's
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, opdispatch.Tensor), \
            f"{what}: expected a tensor, got {type(actual).__name__}"
        got_dtype, want_dtype = dtype_name(actual.dtype), dtype_name(expected.dtype)
        assert got_dtype == want_dtype, f"{what}: dtype {got_dtype}, torch's is {want_dtype}"
        assert list(actual.shape) == list(expected.shape), \
            f"{what}: shape {list(actual.shape)}, torch's is {list(expected.shape)}"
        if compare_strides and expected.numel() > 1:
            assert _strides_agree(actual.shape, actual.stride(), expected.stride()), \
                f"{what}: strides {tuple(actual.stride())}, torch's are {expected.stride()}"
        if op.nondeterministic or expected.device.type == "meta":
            return
        atol, rtol = op.tolerance(want_dtype)
        got = to_torch(actual)
        torch.testing.assert_close(got, expected, atol=atol, rtol=rtol, equal_nan=True,
                                   check_stride=False, msg=lambda m: f"{what}: {m}")
    elif isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), \
            f"{what}: expected a sequence, got {type(actual).__name__}"
        assert len(actual) == len(expected), \
            f"{what}: {len(actual)} results, torch gives {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, op, dtype, compare_strides=compare_strides, what=f"{what}[{i}]")
    elif isinstance(expected, (bool, int, float, complex)) and not isinstance(actual, bool) \
            or isinstance(expected, bool):
        assert type(actual) is type(expected), \
            f"{what}: {actual!r} ({type(actual).__name__}), torch gives {expected!r}"
        if isinstance(expected, float) and expected != expected:
            assert actual != actual, f"{what}: {actual!r}, torch gives nan"
        else:
            atol, rtol = op.tolerance(dtype)
            assert abs(actual - expected) <= atol + rtol * abs(expected), \
                f"{what}: {actual!r}, torch gives {expected!r}"
    elif expected is None:
        assert actual is None, f"{what}: {actual!r}, torch gives None"
    else:
        assert actual == expected, f"{what}: {actual!r}, torch gives {expected!r}"


def _strides_agree(shape, ours, theirs):
    """Strides equal over the dimensions of size > 1 (a size-1 dimension's stride is free)."""
    return all(a == b for s, a, b in zip(shape, ours, theirs) if s > 1)


def skip_unless_runs(op, check, dtype=None):
    reason = op.skip_reason(check, dtype)
    if reason:
        pytest.skip(f"{check}: {reason}")
    if _BUDGET and time.monotonic() - _START > _BUDGET:
        pytest.skip(f"OPD_OPINFO_BUDGET={_BUDGET:g}s spent")


def compare_with_torch(op, dtype, sample, ours_thunk, torch_thunk, variant, *,
                       compare_strides=None):
    """Runs both; both raise (the same type) or both return the same values."""
    __tracebackhide__ = True  # failures show the test's line, not the helper's
    ours, our_err = outcome(ours_thunk)
    theirs, their_err = outcome(torch_thunk)
    what = describe_call(op, sample, variant)
    if their_err is not None:
        assert our_err is not None, \
            f"{what}: torch raises {type(their_err).__name__}: {their_err}, opdispatch returns"
        assert same_error_type(our_err, their_err), \
            (f"{what}: opdispatch raises {type(our_err).__name__}: {our_err}; torch raises "
             f"{type(their_err).__name__}: {their_err}")
        return None, None
    if our_err is not None:
        raise AssertionError(f"{what}: opdispatch raises {type(our_err).__name__}: {our_err}"
                             f"; torch returns") from None
    strides = op.compare_strides if compare_strides is None else compare_strides
    assert_same(ours, theirs, op, dtype, compare_strides=strides, what=what)
    return ours, theirs


# ---- the checks --------------------------------------------------------------------------

@pytest.mark.parametrize("op,dtype", by_dtype())
def test_values(op, dtype):
    skip_unless_runs(op, "values", dtype)
    for sample in samples(op, dtype):
        compare_with_torch(op, dtype, sample, lambda: call(op, opdispatch, sample),
                           lambda: call(op.ref, torch, sample), "function")


@pytest.mark.parametrize("op,dtype", by_dtype(lambda op: op.method_name))
def test_method(op, dtype):
    if not op.method_name:
        pytest.skip("no method form")
    skip_unless_runs(op, "method", dtype)
    name = op.method_name

    def method(lib, self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    for sample in samples(op, dtype):
        compare_with_torch(op, dtype, sample, lambda: call(method, opdispatch, sample),
                           lambda: call(method, torch, sample), f"method {name}")


def clone_strided(t):
    """A copy of opdispatch tensor t with its strides (an in-place op must not touch the
    sample, which other checks use)."""
    if not isinstance(t, opdispatch.Tensor):
        return t
    shape, stride = list(t.shape), list(t.stride())
    span = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    if span == 0:
        copy = opdispatch.empty_strided(shape, stride, dtype=t.dtype, device=t.device)
    else:
        flat = t.detach().as_strided([span], [1], t.storage_offset()).clone()
        copy = flat.as_strided(shape, stride, 0)
    return copy


@pytest.mark.parametrize("op,dtype", by_dtype(lambda op: op.inplace))
def test_inplace(op, dtype):
    if not op.inplace:
        pytest.skip("no in-place form")
    skip_unless_runs(op, "inplace", dtype)
    name = op.inplace
    refused = 0
    for sample in samples(op, dtype):
        if refused == 2:
            break  # both refuse this dtype (an integral self of a float op): torch's errors cost
        ours_self = clone_strided(sample.input)
        theirs_self = to_torch(sample.input)
        s = SampleInput(ours_self, sample.args, sample.kwargs, sample.name)
        tmap = {id(ours_self): theirs_self}

        def inplace(lib, self, *args, **kwargs):
            return getattr(self, name)(*args, **kwargs)
        ours, theirs = compare_with_torch(
            op, dtype, s, lambda: call(inplace, opdispatch, s),
            lambda: call(inplace, torch, s, tmap), f"in-place {name}", compare_strides=True)
        if theirs is not None:
            assert ours is ours_self, f"{describe_call(op, s, name)}: the result is not self"
        else:
            refused += 1


def _empty_like_result(r, dtype_override=None, shape=None):
    if isinstance(r, (tuple, list)):
        return tuple(_empty_like_result(x, dtype_override, shape) for x in r)
    dt = getattr(opdispatch, dtype_override) if dtype_override else r.dtype
    # zeros, not empty: a buffer that is copied (to torch) is never read uninitialised (a bool
    # byte other than 0 or 1 is undefined behaviour, which UBSan reports under the asan preset).
    return opdispatch.zeros(list(r.shape) if shape is None else shape, dtype=dt)


def _assert_is(result, out, what):
    __tracebackhide__ = True  # failures show the test's line, not the helper's
    if isinstance(out, tuple):
        assert isinstance(result, (tuple, list)) and len(result) == len(out), \
            f"{what}: returned {type(result).__name__}, not the out tuple"
        for r, o in zip(result, out):
            assert r is o, f"{what}: an element of the result is not the out tensor"
    else:
        assert result is out, f"{what}: the result is not the out tensor"


def _functional_results(op, dtype):
    """[(sample, opdispatch result)] for the samples whose function form returns tensors."""
    found = []
    for sample in samples(op, dtype):
        r, err = outcome(lambda: call(op, opdispatch, sample))
        if err is None and tensors_of(r) and all(
                isinstance(x, opdispatch.Tensor) for x in (r if isinstance(r, tuple) else [r])):
            found.append((sample, r))
    return found


@pytest.mark.parametrize("op,dtype", by_dtype(lambda op: op.supports_out))
def test_out(op, dtype):
    if not op.supports_out:
        pytest.skip("no out= form")
    skip_unless_runs(op, "out", dtype)
    for sample, r in _functional_results(op, dtype):
        what = describe_call(op, sample, "out=")
        out = _empty_like_result(r, op.out_dtype and op.out_dtype(dtype))
        out = out if isinstance(r, tuple) else out
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = call(op, opdispatch, sample, **{op.out_name: out})
        _assert_is(result, out, what)
        expected = tuple(to_torch(x) for x in r) if isinstance(r, tuple) else to_torch(r)
        assert_same(out, expected, op, dtype, what=what)


@pytest.mark.parametrize("op,dtype", by_dtype(lambda op: op.supports_out))
def test_out_resize(op, dtype):
    """An empty out is resized silently; one with elements of the wrong shape is resized with
    torch's deprecation warning (the same text as torch 1.13's, up to its 'Triggered
    internally' suffix)."""
    if not op.supports_out:
        pytest.skip("no out= form")
    skip_unless_runs(op, "out", dtype)
    for sample, r in _functional_results(op, dtype)[:2]:
        what = describe_call(op, sample, "out= resized")
        empty = _empty_like_result(r, op.out_dtype and op.out_dtype(dtype), shape=[0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = call(op, opdispatch, sample, **{op.out_name: empty})
        _assert_is(result, empty, what)
        expected = tuple(to_torch(x) for x in r) if isinstance(r, tuple) else to_torch(r)
        assert_same(empty, expected, op, dtype, what=what + " (empty)")

        first = r[0] if isinstance(r, tuple) else r
        wrong = [first.numel() + 1]
        ours_out = _empty_like_result(r, op.out_dtype and op.out_dtype(dtype), shape=wrong)
        theirs_out = (tuple(to_torch(x) for x in ours_out) if isinstance(ours_out, tuple)
                      else to_torch(ours_out))
        with warnings.catch_warnings(record=True) as theirs_w:
            warnings.simplefilter("always")
            call(op.ref, torch, sample, **{op.out_name: theirs_out})
        with warnings.catch_warnings(record=True) as ours_w:
            warnings.simplefilter("always")
            result = call(op, opdispatch, sample, **{op.out_name: ours_out})
        _assert_is(result, ours_out, what)
        assert_same(ours_out, expected, op, dtype, what=what + " (wrong shape)")
        want = [_untriggered(w.message) for w in theirs_w if "resized" in str(w.message)]
        if not want:  # torch.ops calls log the warning in C++ instead: its text, made here
            want = [RESIZE_WARNING.format(wrong, list(first.shape))]
        got = [str(w.message) for w in ours_w if "resized" in str(w.message)]
        assert got[:1] == want[:1], f"{what}: warnings {got}, torch's {want}"


# torch 1.13's at::native::resize_output warning (aten/src/ATen/native/Resize.cpp).
RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).")


def _untriggered(message):
    return re.sub(r" \(Triggered internally at .*\)\s*$", "", str(message))


def to_meta(value):
    """`value` with every opdispatch tensor replaced by a Meta tensor of its shape, dtype and
    strides."""
    if isinstance(value, opdispatch.Tensor):
        return opdispatch.empty_strided(list(value.shape), list(value.stride()),
                                        dtype=value.dtype, device="meta")
    if isinstance(value, list):
        return [to_meta(v) for v in value]
    if isinstance(value, tuple):
        return tuple(to_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: to_meta(v) for k, v in value.items()}
    return value


def meta_sample(op, sample):
    kwargs = to_meta(sample.kwargs)
    if op.is_factory:
        kwargs["device"] = "meta"
    return SampleInput(to_meta(sample.input), to_meta(sample.args), kwargs, sample.name)


def assert_meta_matches(ours, cpu, what):
    __tracebackhide__ = True  # failures show the test's line, not the helper's
    if isinstance(cpu, opdispatch.Tensor):
        assert isinstance(ours, opdispatch.Tensor) and ours.is_meta, \
            f"{what}: Meta returns {ours!r}"
        assert ours.dtype == cpu.dtype, f"{what}: Meta's dtype {ours.dtype}, CPU's {cpu.dtype}"
        assert list(ours.shape) == list(cpu.shape), \
            f"{what}: Meta's shape {list(ours.shape)}, CPU's {list(cpu.shape)}"
        if cpu.numel() > 1:
            assert _strides_agree(cpu.shape, ours.stride(), cpu.stride()), \
                f"{what}: Meta's strides {tuple(ours.stride())}, CPU's {tuple(cpu.stride())}"
    elif isinstance(cpu, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(cpu), \
            f"{what}: Meta returns {ours!r}"
        for i, (a, c) in enumerate(zip(ours, cpu)):
            assert_meta_matches(a, c, f"{what}[{i}]")


@pytest.mark.parametrize("op,dtype", by_dtype(lambda op: op.supports_meta))
def test_meta(op, dtype):
    if not op.supports_meta:
        pytest.skip("no Meta kernel")
    skip_unless_runs(op, "meta", dtype)
    for sample in samples(op, dtype):
        what = describe_call(op, sample, "Meta")
        cpu, cpu_err = outcome(lambda: call(op, opdispatch, sample))
        if cpu is not None and not tensors_of(cpu):
            continue  # a number (item, equal...): data, which Meta has not
        ms = meta_sample(op, sample)
        meta, meta_err = outcome(lambda: call(op, opdispatch, ms))
        if cpu_err is not None:
            assert meta_err is not None, \
                f"{what}: CPU raises {type(cpu_err).__name__}: {cpu_err}; Meta returns"
            assert same_error_type(meta_err, cpu_err), \
                (f"{what}: Meta raises {type(meta_err).__name__}: {meta_err}; CPU raises "
                 f"{type(cpu_err).__name__}: {cpu_err}")
            continue
        if meta_err is not None:
            raise AssertionError(f"{what}: Meta raises {type(meta_err).__name__}: {meta_err}"
                                 ) from None
        assert_meta_matches(meta, cpu, what)


def replace_tensors(value, mapping):
    if isinstance(value, opdispatch.Tensor):
        return mapping.get(id(value), value)
    if isinstance(value, list):
        return [replace_tensors(v, mapping) for v in value]
    if isinstance(value, tuple):
        return tuple(replace_tensors(v, mapping) for v in value)
    if isinstance(value, dict):
        return {k: replace_tensors(v, mapping) for k, v in value.items()}
    return value


def grad_problem(op, sample):
    """(function, inputs) for gradcheck: the sample's tensors that require grad (all its
    floating ones when none does), an expanded one made contiguous (gradcheck perturbs
    elements one at a time)."""
    every = tensors_of((sample.input, sample.args, sample.kwargs))
    wanted = [t for t in every if t.requires_grad]
    if not wanted:
        wanted = [t for t in every if is_differentiable_dtype(dtype_name(t.dtype))]
    inputs = []
    for t in wanted:
        if any(st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride())):
            inputs.append(t.detach().contiguous().requires_grad_(True))
        else:
            # A leaf of the same strides: perturbing a view of a leaf through a detached alias
            # drops the view's history here (torch regenerates it).
            inputs.append(clone_strided(t.detach()).requires_grad_(True))
    originals = [id(t) for t in wanted]

    def fn(*ts):
        mapping = dict(zip(originals, ts))
        s = SampleInput(replace_tensors(sample.input, mapping),
                        replace_tensors(sample.args, mapping),
                        replace_tensors(sample.kwargs, mapping))
        return call(op, opdispatch, s)
    return fn, tuple(inputs)


@pytest.mark.parametrize("op", by_entry(lambda op: op.supports_autograd))
def test_gradcheck(op):
    if not op.supports_autograd:
        pytest.skip("not differentiable")
    skip_unless_runs(op, "gradcheck")
    from opdispatch.autograd import gradcheck, gradgradcheck
    for sample in samples(op, "float64", requires_grad=True, cap=_GRAD_SAMPLE_CAP):
        fn, inputs = grad_problem(op, sample)
        if not inputs:
            continue
        try:
            gradcheck(fn, inputs)
        except Exception as e:
            raise AssertionError(f"{describe_call(op, sample, 'gradcheck')}: {e}") from e
        if op.supports_gradgrad and not op.skip_reason("gradgradcheck"):
            try:
                gradgradcheck(fn, inputs)
            except Exception as e:
                raise AssertionError(
                    f"{describe_call(op, sample, 'gradgradcheck')}: {e}") from e


@pytest.mark.parametrize("op", by_entry(lambda op: op.error_inputs is not None))
def test_errors(op):
    if op.error_inputs is None:
        pytest.skip("no error inputs")
    skip_unless_runs(op, "errors")
    for ei in op.errors(seed=seed_of(op, "errors")):
        assert isinstance(ei, ErrorInput)
        what = describe_call(op, ei.sample, "error input")
        targets = [("opdispatch", ei.sample, op.op, opdispatch),
                   ("torch 1.13", ei.sample, op.ref, torch)]
        if op.supports_meta and getattr(ei, "on_meta", True):
            targets.append(("Meta", meta_sample(op, ei.sample), op.op, opdispatch))
        for where, s, fn, lib in targets:
            _, err = outcome(lambda: call(fn, lib, s))
            assert err is not None, f"{what}: {where} does not raise"
            assert isinstance(err, ei.error_type), \
                (f"{what}: {where} raises {type(err).__name__}: {err}; expected "
                 f"{ei.error_type.__name__}")
            assert re.search(ei.error_regex, str(err)), \
                f"{what}: {where}'s message {str(err)!r} does not match {ei.error_regex!r}"


# ---- the harness itself ----------------------------------------------------------------------

def _one_sample(op, make, dtype, rg):
    yield SampleInput(make((4, 3)).t())


def test_the_harness_reports_wrong_values_dtypes_strides_and_errors():
    from opdispatch._opinfo.core import OpInfo
    wrong_value = OpInfo("neg", op=lambda lib, x: lib.neg(x) + 1 if lib is opdispatch
                         else lib.neg(x), sample_inputs=_one_sample)
    wrong_dtype = OpInfo("neg", op=lambda lib, x: lib.neg(x).to(lib.float64),
                         ref=lambda lib, x: lib.neg(x), sample_inputs=_one_sample)
    wrong_strides = OpInfo("neg", op=lambda lib, x: lib.neg(x).contiguous(),
                           ref=lambda lib, x: lib.neg(x), sample_inputs=_one_sample,
                           compare_strides=True)
    no_error = OpInfo("neg", op=lambda lib, x: x, ref=lambda lib, x: lib.t(lib.ones(2, 2, 2)),
                      sample_inputs=_one_sample)
    for op, text in ((wrong_value, "not close"), (wrong_dtype, "dtype float64, torch's is "
                     "float32"), (wrong_strides, "strides \\(4, 1\\), torch's are \\(1, 3\\)"),
                     (no_error, "torch raises RuntimeError: t\\(\\) expects")):
        (sample,) = samples(op, "float32")
        with pytest.raises(AssertionError, match=text):
            compare_with_torch(op, "float32", sample, lambda: call(op, opdispatch, sample),
                               lambda: call(op.ref, torch, sample), "function")


def test_to_torch_copies_values_strides_and_bool():
    from opdispatch._opinfo.core import make_tensor
    for dtype in ("float32", "bfloat16", "bool", "int8", "complex64"):
        x = make_tensor((3, 4), dtype, noncontiguous=True)
        t = to_torch(x)
        assert t.stride() == tuple(x.stride()) and str(t.dtype) == f"torch.{dtype}"
        assert t.tolist() == x.tolist()
    e = opdispatch.ones(3, 1).expand(3, 4)
    assert to_torch(e).stride() == (1, 0)
