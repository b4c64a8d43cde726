"""FakeTensor and FakeTensorMode, as torch 1.13's ``torch._subclasses.fake_tensor``.

A FakeTensor carries a tensor's metadata (sizes, strides, storage offset, dtype, requires_grad)
and a device it pretends to be on (``fake_device``), but no data. Under ``FakeTensorMode`` (a
TorchDispatchMode) every operator runs on Meta tensors through the Meta kernels, so a program
can be run for its shapes, dtypes and devices without computing anything::

    mode = FakeTensorMode()
    x = mode.from_tensor(opdispatch.randn(8, 3))        # FakeTensor, fake_device cpu
    with mode:
        y = x @ opdispatch.empty(3, 5) + 1                # FakeTensor of size (8, 5)
        y.sum().item()                                    # DataDependentOutputException

Note [FakeTensor is a wrapper]
torch 1.13's FakeTensor is a Meta tensor whose dispatch keys say the fake device's backend. Ours
is a wrapper subclass (``Tensor._make_wrapper_subclass``): a tensor with the metadata and the
fake device and no storage, which carries the Python key, holding the Meta tensor that has the
same metadata (``_elem``). Every operator on it reaches the Python key (after Autograd, which
records it as for any tensor) and so FakeTensorMode's dispatch, which runs the operator on the
Meta tensors and wraps the Meta results as new FakeTensors. A result that is an argument's Meta
tensor itself (in-place and out= operators, ``Tensor(a!)`` returns) is that argument's
FakeTensor again; when the kernel changed the Meta tensor's metadata (``unsqueeze_``, ``t_``,
``resize_``, an out= resized), the wrapper is given the new metadata too (_sync_metadata).

A wrapper's storage has no memory, but it has a size, fixed when it is made, which bounds the
geometries the wrapper may take; a resize_ could not grow it. So a FakeTensor's wrapper is made
over _CAPACITY elements and then given its Meta tensor's geometry (as_strided_, run by the Meta
kernel on the wrapper itself), and any later geometry fits. The bounds that matter are checked
all the same: on the Meta tensor, by the kernel, before the wrapper follows.
"""

import dataclasses
import functools
import weakref

import opdispatch as _opd
from opdispatch import Tag, Tensor
from opdispatch.ops import OpOverload
from opdispatch.utils._python_dispatch import TorchDispatchMode

__all__ = [
    "FakeTensor", "FakeTensorMode", "FakeTensorConverter", "UnsupportedFakeTensorException",
    "DynamicOutputShapeException", "DataDependentOutputException",
]

aten = _opd.ops.aten


@dataclasses.dataclass
class UnsupportedFakeTensorException(RuntimeError):
    reason: str


@dataclasses.dataclass
class DynamicOutputShapeException(RuntimeError):
    """An operator whose output's shape depends on the input's values (nonzero, masked_select,
    indexing with a bool mask): a FakeTensor has no values to compute it from."""
    func: OpOverload


@dataclasses.dataclass
class DataDependentOutputException(RuntimeError):
    """An operator whose output is a value read from the data (``item``, ``bool(t)``): raised
    when the mode's ``throw_on_data_dependent_ops`` is set (the default here, as torch 2's)."""
    func: OpOverload


_PYTHON_KEYS = _opd.DispatchKeySet("Python") | _opd.DispatchKeySet("PythonTLSSnapshot")


def _no_dispatch():
    """Calls made inside reach the kernels below the Python key: no mode and no subclass
    handler sees them (torch.utils._mode_utils.no_dispatch)."""
    return _opd._C._ExcludeDispatchKeyGuard(_PYTHON_KEYS)


def _tree_map(fn, tree):
    if isinstance(tree, list):
        return [_tree_map(fn, e) for e in tree]
    if isinstance(tree, tuple):
        items = [_tree_map(fn, e) for e in tree]
        # (a return_types named tuple stays one)
        return type(tree)(*items) if hasattr(tree, "_fields") else tuple(items)
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def _tree_leaves(tree, out=None):
    out = [] if out is None else out
    if isinstance(tree, (list, tuple)):
        for e in tree:
            _tree_leaves(e, out)
    elif isinstance(tree, dict):
        for e in tree.values():
            _tree_leaves(e, out)
    else:
        out.append(tree)
    return out


def _device(device):
    """torch.device(device), with a cuda device without an index made cuda:0 (torch makes it
    the current CUDA device; there is none to ask here)."""
    device = device if isinstance(device, _opd.device) else _opd.device(device)
    if device.type == "cuda" and device.index is None:
        return _opd.device("cuda", 0)
    return device


_META = _opd.device("meta")
_CPU = _opd.device("cpu")


class FakeTensorConverter:
    """Makes FakeTensors of real tensors, one per real tensor for as long as both live (a
    second conversion returns the first FakeTensor)."""

    def __init__(self):
        # id(real tensor) -> (a weak reference to it, its FakeTensor); the entry goes with the
        # real tensor (a finalizer) or with its FakeTensor (held weakly: a FakeTensor holds its
        # mode, which holds this converter).
        self.tensor_memo = {}

    def _get_memo(self, t):
        entry = self.tensor_memo.get(id(t))
        if entry is None or entry[0]() is not t:
            return None
        return entry[1]()

    def set_tensor_memo(self, t, v):
        key = id(t)
        memo = self.tensor_memo
        memo[key] = (weakref.ref(t), weakref.ref(v))
        weakref.finalize(t, memo.pop, key, None)

    def from_real_tensor(self, fake_mode, t, make_constant=False, shape_env=None):
        """A FakeTensor with ``t``'s metadata, on ``t``'s device, requiring grad as ``t`` does
        (a leaf), with ``t.grad`` converted too."""
        memo = self._get_memo(t)
        if memo is not None:
            return memo
        if isinstance(t, FakeTensor):
            if t.fake_mode is fake_mode:
                return t
            raise UnsupportedFakeTensorException("a FakeTensor of another FakeTensorMode")
        with _no_dispatch():
            meta = _meta_like(t)
        out = FakeTensor(fake_mode, meta, t.device, constant=t if make_constant else None)
        if t.requires_grad:
            out.requires_grad_(True)
        if t.grad is not None:
            out.grad = self.from_real_tensor(fake_mode, t.grad)
        self.set_tensor_memo(t, out)
        return out

    def from_meta_and_device(self, fake_mode, t, device):
        return FakeTensor(fake_mode, t, device)

    def __call__(self, fake_mode, t, device=None, *, make_constant=False, shape_env=None):
        """``t`` a real tensor (device None) or a Meta tensor and the device it fakes."""
        if device is None:
            return self.from_real_tensor(fake_mode, t, make_constant, shape_env=shape_env)
        assert make_constant is False
        assert t.device.type == "meta"
        return self.from_meta_and_device(fake_mode, t, device)


def _meta_like(t):
    """A Meta tensor with t's sizes, strides, storage offset and dtype (called with the
    Python keys excluded)."""
    size, stride, offset = tuple(t.shape), t.stride(), t.storage_offset()
    if offset == 0:
        return _opd.empty_strided(size, stride, dtype=t.dtype, device=_META)
    extent = offset if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    base = _opd.empty(extent, dtype=t.dtype, device=_META)
    return base.as_strided(size, stride, offset)


def _grad_suffix(t):
    """What torch's repr prints after the size for autograd: grad_fn, else requires_grad."""
    if t.grad_fn is not None:
        return f", grad_fn=<{t.grad_fn.name()}>"
    if t.requires_grad:
        return ", requires_grad=True"
    return ""


# Every key above Meta: with these excluded and Meta included, an operator on a FakeTensor runs
# its Meta kernel on the wrapper itself (torch's in_kernel_invocation_manager).
_ABOVE_META = functools.reduce(
    lambda a, b: a | b,
    [_opd.DispatchKeySet(k) for k in (
        "Python", "PythonTLSSnapshot", "Functionalize", "ADInplaceOrView", "AutogradCPU",
        "AutogradCUDA", "AutogradPrivateUse1", "AutogradPrivateUse2", "AutogradPrivateUse3",
        "AutogradMeta", "Tracer")])
_META_KEY = _opd.DispatchKeySet("Meta")

# The elements a FakeTensor's wrapper spans (Note [FakeTensor is a wrapper]): no memory, a bound.
_CAPACITY = 1 << 40


def _set_geometry(fake, size, stride, offset):
    with _opd._C._ExcludeDispatchKeyGuard(_ABOVE_META), \
            _opd._C._IncludeDispatchKeyGuard(_META_KEY):
        aten.as_strided_.default(fake, size, stride, offset)


def _sync_metadata(fake):
    """Gives the wrapper its Meta tensor's metadata where an in-place kernel changed it
    (unsqueeze_, t_, resize_, an out= argument resized)."""
    elem = fake._elem
    size, stride, offset = tuple(elem.shape), elem.stride(), elem.storage_offset()
    if tuple(fake.shape) != size or fake.stride() != stride or fake.storage_offset() != offset:
        _set_geometry(fake, size, stride, offset)


class FakeTensor(Tensor):
    """A tensor of metadata only, on ``fake_device``, made by a FakeTensorMode (``mode.
    from_tensor(t)``, or any operator run under the mode). See Note [FakeTensor is a
    wrapper]."""

    fake_device: _opd.device
    fake_mode: "FakeTensorMode"
    constant: Tensor

    @staticmethod
    def __new__(cls, fake_mode, elem, device, constant=None):
        assert elem.device.type == "meta", elem.device.type
        device = _device(device)
        # A fake meta tensor is allowed only where asked for (torch's rule: it usually means a
        # meta tensor was passed where a real one was meant).
        if not fake_mode.allow_meta:
            assert device.type != "meta"
        self = Tensor._make_wrapper_subclass(
            cls, (_CAPACITY,), strides=(1,), dtype=elem.dtype, device=device)
        _set_geometry(self, tuple(elem.shape), elem.stride(), elem.storage_offset())
        self._elem = elem
        self.fake_device = device
        self.fake_mode = fake_mode
        self.constant = constant
        return self

    def __init__(self, *args, **kwargs):
        pass

    @staticmethod
    def from_tensor(t, fake_mode):
        return fake_mode.from_tensor(t)

    def __repr__(self):
        # torch 1.13's text: the tensor printed as the Meta tensor it is inside the kernels,
        # then the fake device.
        inner = repr(self._elem)
        inner = "FakeTensor(" + inner[len("tensor("):-1] + _grad_suffix(self) + ")"
        return f"FakeTensor({inner}, {self.fake_device})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        # Reached with no mode active: the FakeTensors' mode runs the operator.
        if any(not issubclass(t, FakeTensor) and t is not Tensor for t in types):
            return NotImplemented
        fake_mode = None
        for arg in _tree_leaves((args, kwargs)):
            if isinstance(arg, FakeTensor):
                if fake_mode is None:
                    fake_mode = arg.fake_mode
                else:
                    assert fake_mode is arg.fake_mode, "Mixing modes NYI"
        assert fake_mode is not None
        return fake_mode.__torch_dispatch__(func, types, args, kwargs)

    @staticmethod
    def _find_common_device(func, args, kwargs):
        """The device of the results: the FakeTensors' one device, where a CPU 0-dim tensor
        (a scalar) defers to any other; two other devices raise torch's RuntimeError."""
        fakes = [t for t in _tree_leaves((args, kwargs)) if isinstance(t, FakeTensor)]
        return FakeTensor._common_device(func, fakes)

    @staticmethod
    def _common_device(func, fakes):
        common = None
        common_is_cpu_scalar = False
        for t in fakes:
            device = t.fake_device
            is_cpu_scalar = device.type == "cpu" and t.dim() == 0
            if common is None:
                common, common_is_cpu_scalar = device, is_cpu_scalar
            elif device == common:
                common_is_cpu_scalar = common_is_cpu_scalar and is_cpu_scalar
            elif is_cpu_scalar:
                continue
            elif common_is_cpu_scalar:
                common, common_is_cpu_scalar = device, False
            else:
                raise RuntimeError(
                    f"Unhandled FakeTensor Device Propagation for {func}, found two different "
                    f"devices {common}, {device}")
        # No FakeTensor: an operator of numbers only (a number bound to a Tensor argument).
        return _CPU if common is None else common


# OpOverload -> (the schema generation it was computed in, its _op_info).
_op_infos = {}


def _op_info(func):
    """What the mode needs to know of an operator's schema, once per operator (again once any
    schema came or went: an operator of the name may have been defined anew)."""
    generation = _opd._C._schema_generation()
    cached = _op_infos.get(func)
    if cached is not None and cached[0] == generation:
        return cached[1]
    info = _compute_op_info(func)
    _op_infos[func] = (generation, info)
    return info


def _compute_op_info(func):
    schema = func._schema
    arguments = schema.arguments
    names = [a.name for a in arguments]
    has_tensor_args = any("Tensor" in a.type for a in arguments)
    returns_one_tensor = len(schema.returns) == 1 and schema.returns[0].type == "Tensor"
    tags = frozenset(func.tags)
    return {
        "names": names,
        "device": names.index("device") if "device" in names else None,
        "constructor": not has_tensor_args and returns_one_tensor,
        "tensor_args": [i for i, a in enumerate(arguments) if a.type == "Tensor"],
        "dynamic_output_shape": Tag.dynamic_output_shape in tags,
        "data_dependent_output": Tag.data_dependent_output in tags,
        "inplace_view": Tag.inplace_view in tags,
    }


def _get_argument(info, args, kwargs, index):
    if index < len(args):
        return args[index]
    return kwargs.get(info["names"][index])


def _set_argument(info, args, kwargs, index, value):
    if index < len(args):
        args = args[:index] + (value,) + args[index + 1:]
    else:
        kwargs = dict(kwargs)
        kwargs[info["names"][index]] = value
    return args, kwargs


# Operators whose result is on their first argument's device whatever the devices of the index
# tensors (torch's index_tensor/index_put rules: CPU indices may index a CUDA tensor).
_SELF_DEVICE_OPS = frozenset(["aten::index.Tensor", "aten::index_put", "aten::index_put_"])


class FakeTensorMode(TorchDispatchMode):
    """Runs every operator on FakeTensors through the Meta kernels (see the module's
    docstring). ``allow_non_fake_inputs``: real tensors passed to an operator are converted
    (``from_tensor``) instead of refused. ``throw_on_data_dependent_ops``: ``item`` and the
    like raise DataDependentOutputException (else they run the CPU kernel on zeros, torch
    1.13's default). ``allow_fallback_kernels``: an operator without a Meta kernel runs its CPU
    kernel on zeros for FakeTensors on the CPU."""

    def __init__(self, *, allow_fallback_kernels=True, allow_meta=False,
                 throw_on_data_dependent_ops=True, allow_non_fake_inputs=False):
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_meta = allow_meta
        self.throw_on_data_dependent_ops = throw_on_data_dependent_ops
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.fake_tensor_converter = FakeTensorConverter()

    def from_tensor(self, tensor, shape_env=None):
        return self.fake_tensor_converter(self, tensor, shape_env=shape_env)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        tensors = [t for t in _tree_leaves((args, kwargs)) if isinstance(t, Tensor)]
        fakes = [t for t in tensors if isinstance(t, FakeTensor)]
        if len(fakes) != len(tensors):
            # Another subclass gets its turn first (torch's [subclass inputs]).
            if any(not isinstance(t, FakeTensor) and type(t) is not Tensor for t in tensors):
                return NotImplemented
            if not self.allow_non_fake_inputs:
                raise Exception(
                    "Invoking operators with non-Fake Tensor inputs in FakeTensorMode is not yet "
                    "supported. Please convert all Tensors to FakeTensors first. "
                    f"Found in {func}(*{args}, **{kwargs})")
            args, kwargs = _tree_map(
                lambda t: self.from_tensor(t)
                if isinstance(t, Tensor) and not isinstance(t, FakeTensor) else t,
                (args, kwargs))
            fakes = [t for t in _tree_leaves((args, kwargs)) if isinstance(t, FakeTensor)]
        return self._dispatch(func, args, kwargs, fakes)

    def _dispatch(self, func, args, kwargs, fakes):
        info = _op_info(func)
        name = func.name()
        if info["data_dependent_output"]:
            if self.throw_on_data_dependent_ops or not self._can_fall_back(info, fakes):
                raise DataDependentOutputException(func)
            return self._run_fallback_kernel(func, args, kwargs)
        if name == "aten::index.Tensor":
            # A bool (or uint8) index is a mask: the result's size is its count of trues.
            indices = _get_argument(info, args, kwargs, 1)
            if any(i is not None and i.dtype in (_opd.bool, _opd.uint8) for i in indices):
                raise DynamicOutputShapeException(func)
        elif info["dynamic_output_shape"]:
            raise DynamicOutputShapeException(func)

        # The device of the results: the one asked for (factories, _to_copy, *_like), the CPU
        # for a factory not told, else the arguments' common device. The kernel is asked for
        # Meta tensors instead.
        out_device = None
        index = info["device"]
        if index is not None:
            requested = _get_argument(info, args, kwargs, index)
            if requested is not None:
                out_device = _device(requested)
            elif info["constructor"]:
                out_device = _CPU
            if out_device is not None:
                args, kwargs = _set_argument(info, args, kwargs, index, _META)
        elif info["constructor"]:
            out_device = _CPU

        meta_args, meta_kwargs = _tree_map(
            lambda t: t._elem if isinstance(t, FakeTensor) else t, (args, kwargs))
        # A number where the schema says Tensor was a wrapped number (a composite's scalar, as
        # where.ScalarOther's), which the mode receives as the number: it is one again.
        for i in info["tensor_args"]:
            value = _get_argument(info, meta_args, meta_kwargs, i)
            if isinstance(value, (int, float, complex)):
                meta_args, meta_kwargs = _set_argument(
                    info, meta_args, meta_kwargs, i, _opd._C._wrapped_number(value))
        try:
            with _no_dispatch():
                result = func(*meta_args, **meta_kwargs)
        except NotImplementedError:
            if not self._can_fall_back(info, fakes):
                raise
            return self._run_fallback_kernel(func, args, kwargs)

        def wrap(r):
            nonlocal out_device
            if not isinstance(r, Tensor) or isinstance(r, FakeTensor):
                return r
            for fake in fakes:
                if r._is_same(fake._elem):
                    _sync_metadata(fake)
                    return fake
            # (found only for a new result, as torch's: an in-place result is its argument)
            if out_device is None:
                if name in _SELF_DEVICE_OPS:
                    out_device = args[0].fake_device
                else:
                    out_device = FakeTensor._common_device(func, fakes)
            return FakeTensor(self, r, out_device)

        return _tree_map(wrap, result)

    def _can_fall_back(self, info, fakes):
        # Only the CPU's kernels are at hand; an in-place view would change the zeros' metadata,
        # not the FakeTensor's.
        return (self.allow_fallback_kernels and not info["inplace_view"] and bool(fakes)
                and all(f.fake_device == _CPU for f in fakes))

    def _run_fallback_kernel(self, func, args, kwargs):
        """The CPU kernel run on zeros in place of the FakeTensors, its new results made
        FakeTensors (torch's run_fallback_kernel); FakeTensors it returns stay themselves."""
        by_real = []

        def to_real(t):
            if not isinstance(t, FakeTensor):
                return t
            real = _opd.empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype).zero_()
            by_real.append((real, t))
            return real

        with _no_dispatch():
            real_args, real_kwargs = _tree_map(to_real, (args, kwargs))
            result = func(*real_args, **real_kwargs)

        def back(r):
            if not isinstance(r, Tensor):
                return r
            for real, fake in by_real:
                if r._is_same(real):
                    return fake
            return self.fake_tensor_converter.from_real_tensor(self, r)

        return _tree_map(back, result)
