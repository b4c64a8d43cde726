"""The parts of opdispatch.Tensor written in Python: ``shape`` and ``size()`` as ``Size``,
iteration, numpy and DLPack, ``backward``, ``to``, ``type``, ``new_tensor``, ``H``/``mH``
(``T`` and ``mT`` are indexing.cpp's), the operators ``% // & | ^ ~ << >>`` with their
reflected and in-place forms, and every operator whose first argument is ``Tensor self`` as a
method (``x.clamp(min=0)``, ``x.softmax(1)``, a vendor's ``x.my_add(y)``), found in the
dispatcher when first used, ``aten`` first."""

import types as _types
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


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``, with ``copy=``;
    returns self when nothing changes, as torch."""
    from . import _parse_to
    device, dtype, copy = _parse_to(self, args, kwargs)
    if not copy and (dtype is None or dtype == self.dtype) and (
            device is None or device == self.device):
        return self
    return _ops.aten._to_copy.default(self, dtype=dtype or self.dtype,
                                      device=device or self.device)


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


_methods = {}


def _method_packet(name):
    """The packet that makes ``name`` a method, and its first overload whose first argument is
    ``Tensor self`` (its OpOverload): aten's, else the only other namespace's."""
    candidates = []
    for qualified in _C._dispatch_get_all_op_names():
        ns, rest = qualified.split("::", 1)
        if rest.split(".")[0] == name and ns not in candidates:
            candidates.append(ns)
    candidates.sort(key=lambda ns: ns != "aten")
    for ns in candidates:
        try:
            packet = getattr(getattr(_ops, ns), name)
        except AttributeError:
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            args = op._schema.arguments
            if args and args[0].name == "self" and args[0].type == "Tensor":
                return packet, op
    return None, None


def _method(packet, name):
    # A C method descriptor: x.name(...) calls the packet without a Python frame (Note [Tensor
    # methods] in python/src/ops.cpp).
    return _C._tensor_method(packet, name)


def _getattr(self, name):
    # (linalg_ operators are opdispatch.linalg's functions, never methods: torch's are not.)
    if name.startswith(("_", "linalg_")):
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")
    # (method, the schema generation it was found in), as opdispatch.ops' caches.
    generation = _C._schema_generation()
    cached = _methods.get(name)
    if cached is None or cached[1] != generation:
        packet, op = _method_packet(name)
        if packet is None:
            _methods.pop(name, None)
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        method = _method(packet, name)
        if op.name() in _ops._lasting:
            # Its Tensor self overload stays (opdispatch.ops._lasting): so does the method,
            # where attribute lookup finds it without this function.
            setattr(Tensor, name, method)
        cached = _methods[name] = (method, generation)
    return _types.MethodType(cached[0], self)


def _dir(self):
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
Tensor.cpu = _cpu
Tensor.cuda = _cuda
Tensor.__format__ = _format
Tensor.H = property(_H)
Tensor.mH = property(_mH)
Tensor.type = _type
Tensor.new_tensor = _new_tensor
Tensor.__getattr__ = _getattr
Tensor.__dir__ = _dir
Tensor.__module__ = "opdispatch"
