"""``opdispatch.library.opcheck``: torch 2.4's ``torch.library.opcheck`` over opdispatch's
dispatcher. Each sub-check runs the operator on copies of the sample inputs (the caller's
tensors are never touched) and raises, with torch's texts, when the kernels disagree with the
schema, the autograd registration, or the Meta kernel. See ``opcheck``'s docstring for what each
checks and where it differs from torch.
"""

import contextlib as _contextlib
import json as _json

from . import _C
from . import ops as _ops
from .autograd import no_grad as _no_grad

__all__ = ["opcheck", "OpCheckError", "DEFAULT_TEST_UTILS"]


class OpCheckError(Exception):
    """What ``opcheck`` raises when a sub-check fails; its ``__cause__`` is the failure."""


class MetadataMismatchError(RuntimeError):
    """test_faketensor: the Meta kernel's result differs from the real kernel's."""


# ---- inputs: flattening, copies --------------------------------------------------------------

def _leaves(tree):
    """The tensors of ``tree`` (nested lists, tuples and dict values), in order."""
    if isinstance(tree, _C.Tensor):
        yield tree
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _leaves(v)
    elif isinstance(tree, dict):
        for v in tree.values():
            yield from _leaves(v)


def _map_tensors(fn, tree):
    if isinstance(tree, _C.Tensor):
        return fn(tree)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_map_tensors(fn, v) for v in tree)
    if isinstance(tree, dict):
        return {k: _map_tensors(fn, v) for k, v in tree.items()}
    return tree


def _extent(t):
    """Elements of storage ``t`` reaches past its offset (0 for an empty tensor)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(t.size(), t.stride()))


def _clone_input(t):
    """A copy of ``t`` with its strides, as torch's clone_input: its own storage with 32
    elements to spare (an as_strided_ sample may reach past the tensor), and a leaf that
    requires grad when ``t`` is a leaf that does."""
    with _no_grad():
        try:
            copy = _ops.aten.empty.memory_format([_extent(t) + 32], dtype=t.dtype,
                                                 device=t.device)
            copy.as_strided_(list(t.size()), list(t.stride()), 0)
            copy.copy_(t)
        except RuntimeError:  # overlapping strides: the copy cannot be written in place
            copy = t.clone()
    if t.is_leaf and t.requires_grad:
        copy.requires_grad_(True)
    return copy


def _copy_inputs(args, kwargs):
    return _map_tensors(_clone_input, (args, kwargs))


def _storage_key(t):
    return t.data_ptr() - t.storage_offset() * t.element_size(), t.dtype


def _to_meta(args, kwargs):
    """Meta copies of the inputs with their sizes, strides and storage offsets; inputs that
    share storage share one meta storage, and an input given twice is one meta tensor."""
    extents = {}
    for t in _leaves((args, kwargs)):
        if t.numel():
            key = _storage_key(t)
            extents[key] = max(extents.get(key, 0), t.storage_offset() + _extent(t))
    with _no_grad():
        bases = {key: _ops.aten.empty.memory_format([n], dtype=key[1], device="meta")
                 for key, n in extents.items()}
    made = {}

    def convert(t):
        if id(t) in made:
            return made[id(t)]
        with _no_grad():
            if t.numel():
                m = bases[_storage_key(t)].as_strided(list(t.size()), list(t.stride()),
                                                      t.storage_offset())
            else:
                m = _ops.aten.empty_strided.default(list(t.size()), list(t.stride()),
                                                    dtype=t.dtype, device="meta")
        if t.requires_grad:
            m.requires_grad_(True)
        made[id(t)] = m
        return m

    return _map_tensors(convert, (args, kwargs))


def _any_abstract(args, kwargs):
    # torch skips every check when an input is already abstract (meta or fake).
    return any(t.is_meta for t in _leaves((args, kwargs)))


# ---- the schema's alias annotations ----------------------------------------------------------

class _Alias:
    """One argument's or return's annotation: its alias sets (those of a list's elements
    included), whether it is written, whether it is an out= argument."""

    def __init__(self, entry):
        info = entry.get("alias") or {}
        parts = [info] + info.get("contained", [])
        self.sets = {s for p in parts for s in p.get("before_set", []) + p.get("after_set", [])}
        self.write = any(p.get("is_write") for p in parts)
        self.wildcard = "*" in self.sets
        self.sets.discard("*")
        self.name = entry["name"]

    def declares_alias(self, other):
        """Whether the annotations name a common alias set (not merely a wildcard)."""
        return bool(self.sets & other.sets)

    def may_alias(self, other):
        if not (self.sets or self.wildcard) or not (other.sets or other.wildcard):
            return False
        return self.wildcard or other.wildcard or bool(self.sets & other.sets)


def _annotations(op):
    schema = _json.loads(op._schema.to_json())
    return ([_Alias(a) for a in schema["arguments"]], [_Alias(r) for r in schema["returns"]])


def _bind(op, args, kwargs):
    """The value of each schema argument (None where not given)."""
    values = []
    for i, a in enumerate(op._schema.arguments):
        if not a.kwarg_only and i < len(args):
            values.append(args[i])
        else:
            values.append(kwargs.get(a.name))
    return values


def _span(t):
    """The bytes ``t`` can reach, or None (no elements, or no memory: meta)."""
    if t.numel() == 0 or t.is_meta:
        return None
    low = sum(min(0, (n - 1) * s) for n, s in zip(t.size(), t.stride()))
    high = sum(max(0, (n - 1) * s) for n, s in zip(t.size(), t.stride()))
    size = t.element_size()
    return t.data_ptr() + low * size, t.data_ptr() + (high + 1) * size


def _overlaps(a, b):
    """Whether two values share memory (torch._C._overlaps, element-wise over lists)."""
    xs, ys = list(_leaves(a)), list(_leaves(b))
    for x in xs:
        sx = _span(x)
        for y in ys:
            if x._is_same(y):
                return True
            sy = _span(y)
            if sx and sy and sx[0] < sy[1] and sy[0] < sx[1]:
                return True
    return False


def _name(arg):
    return "input" if arg.name == "self" else arg.name  # torch's standardize_name


# ---- test_schema -----------------------------------------------------------------------------

def _bytes(t):
    """``t``'s elements as bytes, so that NaNs compare equal to themselves (as torch compares
    int8 views)."""
    flat = t.detach().reshape(-1).contiguous()
    return flat if t.dtype == _C.uint8 else flat.view(_C.uint8)


def _snapshot(t):
    with _no_grad():
        return (list(t.size()), list(t.stride()), _storage_key(t)[0], t._version,
                _bytes(t).clone())


def _has_mutated(before, after):
    size, stride, storage, version, data = before
    if list(after.size()) != size or list(after.stride()) != stride:
        return True
    if _storage_key(after)[0] != storage or after._version != version:
        return True
    with _no_grad():
        now = _bytes(after)
        return now.dtype != data.dtype or not _ops.aten.equal.default(now, data)


def schema_check(op, args, kwargs):
    """torch's SchemaCheckMode for one call: the kernel's effects against the annotations."""
    arguments, returns = _annotations(op)
    values = _bind(op, args, kwargs)
    before = [[_snapshot(t) for t in _leaves(v)] for v in values]
    out = op(*args, **kwargs)
    outs = (out if isinstance(out, tuple) else (out,))[:len(returns)]
    n = len(arguments)
    # An argument that shares memory with another may alias, or be written, as that one.
    peers = [[k for k in range(n) if k == i or _overlaps(values[i], values[k])]
             for i in range(n)]
    # torch's SchemaCheckMode sits below autograd: it sees the operators a
    # CompositeImplicitAutograd kernel calls, never the composite itself (dropout and contiguous
    # may return their input). So the alias rules are left to those operators' own checks.
    decomposes = _decomposes(op, list(_leaves(values)))
    for i, arg in enumerate(arguments):
        value = values[i]
        if value is None or not any(True for _ in _leaves(value)):
            continue
        name = _name(arg)
        mutable = any(arguments[k].write for k in peers[i])
        for j, result in enumerate(() if decomposes else outs):
            may_alias = any(arguments[k].may_alias(returns[j]) for k in peers[i])
            aliased = _overlaps(result, value)
            if aliased and not may_alias and op.name() not in _UNSAFE_ALIAS_OPS:
                raise RuntimeError(f"Argument {name} is not defined to alias output but was "
                                   f"aliasing")
            if arg.declares_alias(returns[j]) and not aliased and _checkable(result, value):
                raise RuntimeError(f"Argument {name} is defined to alias output but was not "
                                   f"aliasing")
            is_value = isinstance(value, _C.Tensor) and isinstance(result, _C.Tensor) and (
                result._is_same(value))
            if is_value and not mutable:
                raise RuntimeError("Dispatcher operators below autograd are not allowed to "
                                   "directly return inputs.\nHowever, we found that "
                                   f"`outputs[{j}] is {name}")
        if not mutable and any(_has_mutated(b, a) for b, a in zip(before[i], _leaves(value))):
            raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")
    for i in range(0 if decomposes else len(outs)):
        for j in range(i + 1, len(outs)):
            if _overlaps(outs[i], outs[j]) and not returns[i].may_alias(returns[j]):
                raise RuntimeError(f"Outputs {i} and {j} alias unexpectedly")
    return out


def _decomposes(op, tensors):
    """Whether this call is served by a CompositeImplicitAutograd kernel (a backend's own
    kernel, when it has one, wins over it)."""
    key = "CUDA" if any(t.device.type == "cuda" for t in tensors) else "CPU"
    for line in _C._dispatch_dump_table(op.name()).splitlines():
        if line.startswith(key + ":"):
            return line.endswith("[math kernel]")
    return False


# aten::_unsafe_view is meant to have incorrect aliasing notation (hence unsafe), as torch says.
_UNSAFE_ALIAS_OPS = ("aten::_unsafe_view", "aten::unsafe_split")


def _checkable(result, value):
    # Empty tensors reach no memory: whether they alias cannot be seen.
    tensors = list(_leaves(result)) + list(_leaves(value))
    return bool(tensors) and all(t.numel() and not t.is_meta for t in tensors)


# ---- test_autograd_registration --------------------------------------------------------------

@_contextlib.contextmanager
def _autograd_fallback_mode(mode):
    try:
        previous = _C._get_autograd_fallback_mode()
    except Exception:  # the autograd plugin, which owns the fallback, is not loaded
        yield
        return
    _C._set_autograd_fallback_mode(mode)
    try:
        yield
    finally:
        _C._set_autograd_fallback_mode(previous)


def autograd_registration_check(op, args, kwargs):
    """torch's autograd_registration_check, and stricter: inputs that require grad must reach
    an Autograd kernel (or a CompositeImplicitAutograd decomposition), not the fallback."""
    tensors = list(_leaves((args, kwargs)))
    if not any(t.requires_grad for t in tensors):
        raise RuntimeError(
            "autograd_registration_check: no inputs have requires_grad=True so we are unable "
            "to actually perform this test. Please pass inputs that do require grad.")
    devices = {t.device.type for t in tensors}
    if not devices <= {"cpu", "cuda"}:
        raise NotImplementedError(
            f"autograd_registration_check: NYI devices other than CPU/CUDA, got {devices}")
    key = "AutogradCUDA" if "cuda" in devices else "AutogradCPU"
    name = op.name()
    for k in (key, "Autograd", "CompositeImplicitAutograd"):
        if _C._dispatch_has_kernel_for_dispatch_key(name, k):
            return
    # No autograd kernel: with the fallback told to do nothing, an output that requires grad
    # was given history by the backend kernel itself.
    with _autograd_fallback_mode("nothing"):
        outs = op(*args, **kwargs)
    if any(o.requires_grad and not any(o._is_same(t) for t in tensors) for o in _leaves(outs)):
        raise AssertionError(
            f"{name}: at least one output of this operator has requires_grad=True but the "
            f"operator does not have an autograd kernel defined at an autograd key (e.g. "
            f"DispatchKey::Autograd). This could mean that you have incorrectly registered an "
            f"autograd kernel to a non-Autograd DispatchKey, which may lead to silently "
            f"incorrect results. If your operator consists of regular PyTorch operations, "
            f"consider not using an operator at all or registering your operator as "
            f"CompositeImplicitAutograd. If you have an autograd.Function registered to a "
            f"backend (CPU/CUDA) key, the correct location for it is the Autograd key.")
    raise AssertionError(
        f"{name}: its inputs require grad but the operator does not have an autograd kernel "
        f"defined at an autograd key (e.g. DispatchKey::Autograd) or a "
        f"CompositeImplicitAutograd kernel, so the call was served by the autograd fallback, "
        f"which gives its outputs no gradient formula. If your operator is differentiable, "
        f"register its backward (register_autograd, or an autograd kernel at the Autograd "
        f"key); if it is not, call opcheck with inputs that do not require grad.")


# ---- test_faketensor -------------------------------------------------------------------------

_SKIPPED_TAGS = ("dynamic_output_shape", "inplace_view", "data_dependent_output")


def _missing_meta(op, opdef):
    """The error for an operator without a Meta kernel, or None when it has one. A custom_op
    needs its own (register_fake), as torch's does: its kernel, registered for every device,
    would otherwise serve Meta by running the real computation."""
    from .library import _OPDEF_TO_LIB
    qualname = op.name().split(".")[0]
    if opdef is not None or qualname in _OPDEF_TO_LIB:
        if _C._dispatch_has_kernel_for_dispatch_key(op.name(), "Meta"):
            return None
        fn = opdef._init_fn.__name__ if opdef is not None else op._name
        return RuntimeError(
            f"There was no fake impl registered for <CustomOpDef({qualname})>. This is "
            f"necessary for meta tensors (shapes and dtypes without data) to work. Please use "
            f"`{fn}.register_fake` to add an fake impl.")
    table = _C._dispatch_dump_table(op.name())
    if any(line.startswith("Meta:") for line in table.splitlines()):
        return None
    return RuntimeError(f"{op} has no meta implementation: register a Meta kernel for "
                        f"{op.name()} (Library.impl(..., 'Meta'))")


def _significant_strides_differ(a, b):
    """The first dimension of length > 1 whose strides differ (torch's
    check_significant_strides), or None."""
    if a.numel() == 0:
        return None
    for i, (n, s, t) in enumerate(zip(a.size(), a.stride(), b.stride())):
        if n > 1 and s != t:
            return i
    return None


def _compare_tensor_meta(real, fake, device):
    if list(real.shape) != list(fake.shape):
        raise AssertionError(f"Shapes {real.shape} and {fake.shape} are not equal!")
    if real.dtype != fake.dtype:
        raise AssertionError(f"Dtypes {real.dtype} and {fake.dtype} are not equal!")
    if fake.device.type != device:
        raise AssertionError(f"Devices {device} and {fake.device} are not equal!")
    idx = _significant_strides_differ(real, fake)
    if idx is not None:
        raise RuntimeError(f"Stride mismatch! Strides are {real.stride()} and {fake.stride()} "
                           f"(mismatched at {idx})!")


def fake_check(op, args, kwargs, opdef=None):
    """torch's CrossRefFakeMode for one call, with meta tensors standing for fake ones."""
    tags = {t.name for t in op.tags}
    if any(t in tags for t in _SKIPPED_TAGS):
        return
    missing = _missing_meta(op, opdef)
    if missing is not None:
        raise missing
    meta_args, meta_kwargs = _to_meta(args, kwargs)
    fake_r = op(*meta_args, **meta_kwargs)
    r = op(*args, **kwargs)
    context = f"When comparing the output of {op} on meta and concrete Tensors, found"
    r_flat, f_flat = _flat_results(r), _flat_results(fake_r)
    if len(f_flat) != len(r_flat):
        raise AssertionError(f"{context} mismatch in number of returns {len(f_flat)} != "
                             f"{len(r_flat)}")
    real_inputs = list(_leaves((args, kwargs)))
    fake_inputs = list(_leaves((meta_args, meta_kwargs)))
    r_is = any(o._is_same(t) for o in _leaves(r) for t in real_inputs)
    f_is = any(o._is_same(t) for o in _leaves(fake_r) for t in fake_inputs)
    if r_is != f_is:
        raise MetadataMismatchError(f"{context} mismatch in outputs_are_inputs check {f_is} "
                                    f"!= {r_is}")
    input_devices = {t.device for t in real_inputs}
    for idx, (r_out, f_out) in enumerate(zip(r_flat, f_flat)):
        r_is_ten = isinstance(r_out, _C.Tensor)
        if r_is_ten != isinstance(f_out, _C.Tensor):
            raise AssertionError(f"{context} mismatched number of tensor outputs")
        if not r_is_ten:
            continue
        try:
            if r_out.requires_grad != f_out.requires_grad:
                raise MetadataMismatchError(
                    f"{context} mismatched requires_grad-ness of outputs. This usually means "
                    f"that you have added autograd support for your operator at a dispatch key "
                    f"other than Autograd, which will lead to problems")
            if r_out.storage_offset() != f_out.storage_offset():
                raise MetadataMismatchError(f"{context} mismatched storage offset")
            device = "meta" if r_out.device in input_devices else r_out.device.type
            _compare_tensor_meta(r_out, f_out, device)
        except MetadataMismatchError:
            raise
        except Exception as e:
            where = "" if len(r_flat) == 1 else f" for output[{idx}]"
            raise MetadataMismatchError(f"{context} mismatched tensor metadata{where}: {e}") \
                from e


def _flat_results(r):
    if isinstance(r, (list, tuple)):
        return [x for v in r for x in _flat_results(v)]
    return [r]


# ---- opcheck ---------------------------------------------------------------------------------

def _safe_schema_check(op, args, kwargs, opdef):
    if _any_abstract(args, kwargs):
        return
    args, kwargs = _copy_inputs(args, kwargs)
    schema_check(op, args, kwargs)


def _safe_autograd_registration_check(op, args, kwargs, opdef):
    if _any_abstract(args, kwargs):
        return
    args, kwargs = _copy_inputs(args, kwargs)
    if not any(t.requires_grad for t in _leaves((args, kwargs))):
        return  # nothing to check, as torch
    autograd_registration_check(op, args, kwargs)


def _safe_fake_check(op, args, kwargs, opdef):
    if _any_abstract(args, kwargs):
        return
    args, kwargs = _copy_inputs(args, kwargs)
    fake_check(op, args, kwargs, opdef)


# In the order they run (torch's order).
ALL_TEST_UTILS = {
    "test_schema": _safe_schema_check,
    "test_autograd_registration": _safe_autograd_registration_check,
    "test_faketensor": _safe_fake_check,
}

DEFAULT_TEST_UTILS = tuple(ALL_TEST_UTILS)

# torch's, which need an ahead-of-time compiler opdispatch does not have.
_AOT_TEST_UTILS = ("test_aot_dispatch_static", "test_aot_dispatch_dynamic")


def _resolve(op):
    from .library import CustomOpDef
    opdef = None
    if isinstance(op, CustomOpDef):
        opdef, op = op, op._opoverload
    if isinstance(op, _ops.OpOverloadPacket):
        overloads = op.overloads()
        if len(overloads) != 1:
            names = ["" if o == "default" else o for o in overloads]
            raise RuntimeError(f"opcheck can only test operators without overloads. Got the "
                               f"following overloads for {op._qualified_op_name}: {names}")
        op = getattr(op, overloads[0])
    if not isinstance(op, _ops.OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of opdispatch.ops.OpOverload, "
                         f"e.g. opdispatch.ops.aten.sin.default, got {type(op)}")
    return op, opdef


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True,
            atol=None, rtol=None):
    """Given an operator and sample arguments, tests that it is registered correctly, as torch
    2.4's ``torch.library.opcheck``. Returns ``{test_util: "SUCCESS"}``, or, for a failed check
    with ``raise_exception=False``, the exception; with ``raise_exception=True`` the first
    failure raises ``OpCheckError`` chained from it. Each check runs on copies of the inputs.

    - ``test_schema``: the kernel's effects match the schema, as torch's SchemaCheckMode: an
      argument not annotated ``(a!)`` keeps its data, sizes, strides, storage and version
      counter (``_version``); a result not annotated as an alias of an argument shares no
      memory with it, and none is the argument itself unless written (``(a!)``); outputs alias
      each other only as annotated; beyond torch, a result annotated as an alias of an
      argument must share its memory. The alias rules are not applied to a call served by a
      CompositeImplicitAutograd kernel: torch's SchemaCheckMode sees only the operators such a
      kernel calls (dropout and contiguous may return their input, reshape may copy). A
      written result (in-place, ``out=``) is the argument it wrote by construction: the
      binding returns that argument's object whatever the kernel left (python/src/ops.cpp).
    - ``test_autograd_registration``: when an input requires grad, the operator has a kernel at
      the inputs' Autograd key (AutogradCPU/AutogradCUDA), at Autograd, or at
      CompositeImplicitAutograd; torch's check that, without one, no output was given history by
      a backend kernel, with torch's text. Stricter than torch: an operator with no autograd
      kernel at all fails (torch passes it when its outputs do not require grad), since with
      inputs that require grad the autograd fallback would give no gradient.
    - ``test_faketensor``: the Meta kernel (or ``register_fake``) agrees with the real kernel
      on meta copies of the inputs (same sizes, strides, storage offsets, sharing): the same
      number of results, tensors where the real kernel gives tensors, shapes, dtypes,
      requires_grad, storage offsets, device (meta where the real result is on the inputs'
      device) and the strides of dimensions longer than one (torch compares strides on CUDA
      only; opdispatch's Meta and CPU kernels share their meta functions, so they are compared
      on every device). An operator without a Meta kernel fails (torch's text for a custom
      op). Operators tagged dynamic_output_shape, inplace_view or data_dependent_output are
      skipped, as torch skips them; unlike torch, aten operators are checked too. Whether an
      output aliases an input is compared by identity only (meta tensors have no storage to
      compare).

    ``test_aot_dispatch_static``/``test_aot_dispatch_dynamic`` are not offered: opdispatch has
    no ahead-of-time compiler to dispatch through. Naming one is a ValueError that says so,
    rather than a "SUCCESS" for a check that did not run. ``"ALL"`` runs every check. ``atol``
    and ``rtol`` are accepted (both or neither, as torch) for torch's signature; only the AOT
    checks compare values in torch, so no check here reads them. Every check is skipped
    (reported "SUCCESS") when an input is already a meta tensor, as torch skips fake ones.
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify "
                         "both")
    if kwargs is None:
        kwargs = {}
    op, opdef = _resolve(op)
    if isinstance(test_utils, str) and test_utils == "ALL":
        test_utils = DEFAULT_TEST_UTILS
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= ALL_TEST_UTILS.keys():
        aot = [t for t in test_utils if t in _AOT_TEST_UTILS] if isinstance(
            test_utils, (tuple, list)) else []
        why = (f" ({', '.join(aot)}: not available, opdispatch has no ahead-of-time compiler)"
               if aot else "")
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be "
                         f"subset of {tuple(ALL_TEST_UTILS)} but it was not{why}")
    results = {}
    for test_util in test_utils:
        try:
            ALL_TEST_UTILS[test_util](op, args, kwargs, opdef)
            results[test_util] = "SUCCESS"
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {test_util} failed with {ex} (scroll up "
                                   f"for stack trace)") from ex
            results[test_util] = ex
    return results
