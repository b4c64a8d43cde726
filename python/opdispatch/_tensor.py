"""The parts of opdispatch.Tensor written in Python: ``shape`` and ``size()`` as ``Size``,
iteration, numpy and DLPack, ``backward``, ``to``, ``type``, ``new_tensor``, ``H``/``mH``
(``T`` and ``mT`` are indexing.cpp's), the operators ``% // & | ^ ~ << >>`` with their
reflected and in-place forms, and every operator whose first argument is ``Tensor self`` as a
method (``x.clamp(min=0)``, ``x.softmax(1)``, a vendor's ``x.my_add(y)``), ``aten`` first,
kept in the class dict in step with the dispatcher (Note [Tensor methods in the class
dict])."""

import threading as _threading
import warnings as _warnings

from . import _C
from . import ops as _ops

Tensor = _C.Tensor


class Size(tuple):
    """A tensor's sizes: a tuple, printed as ``opdispatch.Size([2, 3])``."""

    __slots__ = ()

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"opdispatch.Size({list(self)!r})"

    def __getitem__(self, i):
        r = super().__getitem__(i)
        return Size(r) if isinstance(i, slice) else r


def _shape(self):
    return Size(self._sizes())


def _size(self, dim=None):
    if dim is None:
        return Size(self._sizes())
    return self._size_of(dim)


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._size_of(0)))


def _numpy(self, *, force=False):
    if force:
        return _C._to_numpy(self.detach().cpu())
    return _C._to_numpy(self)


def _array(self, dtype=None):
    a = _C._to_numpy(self)
    return a if dtype is None else a.astype(dtype, copy=False)


def _dlpack(self, stream=None):
    return _C._to_dlpack(self, stream)


def _dlpack_device(self):
    return _C._dlpack_device(self)


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    if inputs is None:
        inputs = []
    elif isinstance(inputs, Tensor):
        inputs = [inputs]
    self._backward(list(inputs), gradient, retain_graph, create_graph)


def _names_device_of(device, tensor):
    """Whether ``device`` is ``tensor``'s: one without an index is the current device of its
    type (the device guard of its backend, opd/device_guard.h), or index 0 where the backend has
    no guard (one device), as the composite to() resolves it."""
    device = _C._ensure_has_index(device)
    if device.index is None:
        return device.type == tensor.device.type and tensor.device.index in (None, 0)
    return device == tensor.device


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``, with ``copy=``;
    returns self when nothing changes, as torch."""
    from . import _parse_to
    device, dtype, copy = _parse_to(self, args, kwargs)
    if not copy and (dtype is None or dtype == self.dtype) and (
            device is None or _names_device_of(device, self)):
        return self
    return _ops.aten._to_copy.default(self, dtype=dtype or self.dtype,
                                      device=device or self.device)


def _norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """As torch.Tensor.norm: opdispatch.functional.norm of this tensor."""
    from .functional import norm
    return norm(self, p, dim, keepdim, dtype=dtype)


def _cpu(self):
    return _to(self, "cpu")


def _cuda(self, device=None):
    return _to(self, "cuda" if device is None else _C.device("cuda", device)
               if isinstance(device, int) else device)


def _format(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _conj(t):
    return t.conj() if t.is_complex() else t


def _H(self):
    if self.dim() not in (0, 2):
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). "
                           f"Got {self.dim()}-D tensor.")
    return _conj(self.permute(list(range(self.dim() - 1, -1, -1))))


def _mH(self):
    """The last two dimensions swapped and conjugated; a 0-d tensor as itself, as torch 1.13."""
    if self.dim() == 1:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           "Got 1-D tensor.")
    return _conj(self.permute([]) if self.dim() == 0 else self.transpose(-2, -1))


# x.type(): torch's type names ("torch.FloatTensor"), so that code comparing them or passing
# them back (x.type(y.type())) works unchanged; "opdispatch.FloatTensor" is taken too.
_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "uint8": "ByteTensor", "int8": "CharTensor",
    "int16": "ShortTensor", "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
}
_DTYPES_BY_TYPE_NAME = {v: k for k, v in _TYPE_NAMES.items()}
_TYPE_NAME_OF = {getattr(_C, k): v for k, v in _TYPE_NAMES.items()}


def _parse_type_name(name):
    """(device type, dtype) of "torch.FloatTensor", "torch.cuda.LongTensor" (or opdispatch.)."""
    parts = name.split(".")
    if len(parts) in (2, 3) and parts[0] in ("torch", "opdispatch") and (
            len(parts) == 2 or parts[1] == "cuda") and parts[-1] in _DTYPES_BY_TYPE_NAME:
        return ("cuda" if len(parts) == 3 else "cpu"), getattr(_C, _DTYPES_BY_TYPE_NAME[parts[-1]])
    raise ValueError(f"invalid type: '{name}'")


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()``: the type name, as torch's; ``x.type(dtype or name)``: ``to`` that type."""
    if dtype is None:
        if self.is_meta:
            raise RuntimeError("Unimplemented backend Meta")
        prefix = "torch.cuda." if self.is_cuda else "torch."
        return prefix + _TYPE_NAME_OF[self.dtype]
    if isinstance(dtype, str):
        device, dt = _parse_type_name(dtype)
        return _to(self, device=_C.device(device) if device != self.device.type else None,
                   dtype=dt)
    if isinstance(dtype, _C.dtype):
        return _to(self, dtype=dtype)
    raise TypeError("dtype must be a type, str, or dtype object")


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A new tensor of ``data`` with self's dtype and device unless given, as torch's."""
    from . import tensor
    if isinstance(data, Tensor):
        _warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.clone().detach() or sourceTensor.clone().detach().requires_grad_(True), "
            "rather than tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


# The operators % // & | ^ ~ << >>, as torch's Tensor: each calls its operator's packet (the
# binder picks the .Scalar overload for a number), and answers NotImplemented for an operand
# that is neither a tensor nor a number, so that Python raises its own TypeError. A reflected
# call (2 // x) passes the number as a wrapped number, which promotes as a Python number.
_packets = {}  # names -> (packet, the schema generation it was chosen in)
_NUMBERS = (int, float, complex)  # bool is an int


def _op(*names):
    """The packet of the first of the aten operators ``names`` that is defined (``__lshift__``
    before ``bitwise_left_shift``), chosen again when an operator gains or loses its schema."""
    generation = _C._schema_generation()
    cached = _packets.get(names)
    if cached is not None and cached[1] == generation:
        return cached[0]
    _sync_methods()
    for name in names:
        packet = _ops.OpOverloadPacket("aten", name)
        if packet.overloads() or name == names[-1]:
            _packets[names] = (packet, generation)
            return packet


def _is_operand(other):
    return (isinstance(other, (Tensor,) + _NUMBERS)
            or _C._wrapped_number(other) is not NotImplemented)


def _binary_dunder(*names):
    def dunder(self, other):
        if not _is_operand(other):
            return NotImplemented
        return _op(*names)(self, other)
    return dunder


def _reflected_dunder(*names):
    def dunder(self, other):
        number = _C._wrapped_number(other)
        if number is NotImplemented:
            return NotImplemented
        return _op(*names)(number, self)
    return dunder


def _inplace_dunder(*names):
    def dunder(self, other):
        if not _is_operand(other):
            return NotImplemented
        _op(*names)(self, other)
        return self
    return dunder


def _invert(self):
    return _op("bitwise_not")(self)


_DUNDERS = {
    "mod": ("remainder",), "floordiv": ("floor_divide",), "and": ("bitwise_and",),
    "or": ("bitwise_or",), "xor": ("bitwise_xor",),
    "lshift": ("__lshift__", "bitwise_left_shift"), "rshift": ("__rshift__", "bitwise_right_shift"),
}
_REFLECTED = {"lshift": ("bitwise_left_shift",), "rshift": ("bitwise_right_shift",)}
_INPLACE = {"lshift": ("__ilshift__", "bitwise_left_shift_"),
            "rshift": ("__irshift__", "bitwise_right_shift_")}
for _name, _names in _DUNDERS.items():
    setattr(Tensor, f"__{_name}__", _binary_dunder(*_names))
    setattr(Tensor, f"__r{_name}__", _reflected_dunder(*_REFLECTED.get(_name, _names)))
    setattr(Tensor, f"__i{_name}__",
            _inplace_dunder(*_INPLACE.get(_name, tuple(n + "_" for n in _names))))
Tensor.__invert__ = _invert


# Note [Tensor methods in the class dict]
# Every operator with a `Tensor self` first argument is a method (x.add(y), a vendor's
# x.my_add(y)): aten's, else the first other namespace's that has such an overload. Names
# starting with "_" or "linalg_" never are (linalg_ operators are opdispatch.linalg's
# functions; torch's are not methods either). The methods are C method descriptors (Note
# [Tensor methods] in python/src/ops.cpp) kept in Tensor's class dict, not found by a
# __getattr__: a type with __getattr__ has a slot wrapper as tp_getattro, and CPython 3.11
# then neither specialises LOAD_METHOD nor takes _PyObject_GetMethod's unbound-method path,
# so every x.add(y) built a bound method (20-30 ns of a 450 ns call).
#
# The class dict follows the dispatcher through _sync_methods(): when the schema generation
# (_C._schema_generation, bumped whenever an operator gains or loses a schema) differs from
# the one last synchronised, the methods of operators defined since are added, and those
# whose operator is gone are removed, unless their overload is one of opdispatch.ops._lasting
# (libopd_core's, which nothing undoes). A name the class already has (size, to, dim, a
# property) is never replaced, and only our own method objects are ever removed.
#
# The synchronisation points are the Python calls that can define or undo an operator, and
# the lookups that already compare the generation: import (this module, then after the
# default plugins load), Library.define/impl/close/_destroy (so CustomOpDef too),
# opdispatch.plugins.load/load_default/unload/reload, opdispatch.ops.<ns>.<name> lookups that
# miss their cache (opdispatch.<name> and opdispatch.linalg.<name> go through them), the
# dunders' packet lookup (_op) and dir(x). NOT covered: an operator registered or undone
# from C++ with none of these in between (a C++ plugin loaded by a host program, a
# _C._Library used directly, a Library collected by the garbage collector) has its method
# added or removed at the next of them; until then x.new_op raises AttributeError, and a
# removed operator's method raises "operator ... is not defined (any more)" when called, as a
# held packet does. A failing attribute lookup cannot synchronise: that would need the
# __getattr__ this design removes.
_method_lock = _threading.RLock()
_synced_generation = None
_installed = {}  # name -> (namespace, the method descriptor set in Tensor's dict)
_permanent = set()  # names whose Tensor self overload is in opdispatch.ops._lasting


def _wanted_methods():
    """name -> (namespace, lasting) for every operator that makes a method now."""
    namespaces = {}  # name -> [namespace with a Tensor self overload, ...], aten first
    lasting = set()
    for qualified in _C._dispatch_get_all_op_names():
        ns, rest = qualified.split("::", 1)
        name = rest.split(".", 1)[0]
        if name.startswith(("_", "linalg_")):
            continue
        found = namespaces.setdefault(name, [])
        if ns in found and qualified not in _ops._lasting:
            continue
        try:
            args = _C._OpOverload(qualified).schema.arguments
        except Exception:  # undone since the names were read
            continue
        if args and args[0].name == "self" and args[0].type == "Tensor":
            if ns not in found:
                if ns == "aten":
                    found.insert(0, ns)
                else:
                    found.append(ns)
            if qualified in _ops._lasting:
                lasting.add(name)
    return {name: (found[0], name in lasting and found[0] == "aten")
            for name, found in namespaces.items() if found}


def _sync_methods():
    """Brings Tensor's methods in step with the dispatcher's operators (Note [Tensor methods in
    the class dict]); costs one generation read when nothing changed."""
    global _synced_generation
    if _C._schema_generation() == _synced_generation:
        return
    with _method_lock:
        # Read before the operators are: a change during the synchronisation makes the next
        # one run again.
        generation = _C._schema_generation()
        if generation == _synced_generation:
            return
        wanted = _wanted_methods()
        for name, (ns, method) in list(_installed.items()):
            if name in _permanent or wanted.get(name, (None,))[0] == ns:
                continue
            del _installed[name]
            if Tensor.__dict__.get(name) is method:
                delattr(Tensor, name)
        for name, (ns, lasting) in wanted.items():
            if name in _installed or hasattr(Tensor, name):
                continue
            method = _C._tensor_method(_ops.OpOverloadPacket(ns, name), name)
            setattr(Tensor, name, method)
            _installed[name] = (ns, method)
            if lasting:
                _permanent.add(name)
        _synced_generation = generation


def _dir(self):
    _sync_methods()
    names = set(object.__dir__(self))
    for qualified in _C._dispatch_get_all_op_names():
        names.add(qualified.split("::", 1)[1].split(".")[0])
    return sorted(names)


Tensor.shape = property(_shape)
Tensor.size = _size
Tensor.__iter__ = _iter
Tensor.numpy = _numpy
Tensor.__array__ = _array
Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
Tensor.backward = _backward
Tensor.to = _to
Tensor.norm = _norm
Tensor.cpu = _cpu
Tensor.cuda = _cuda
Tensor.__format__ = _format
Tensor.H = property(_H)
Tensor.mH = property(_mH)
Tensor.type = _type
Tensor.new_tensor = _new_tensor
Tensor.__dir__ = _dir
Tensor.__module__ = "opdispatch"
_ops._sync_methods = _sync_methods
_sync_methods()
