"""The parts of opdispatch.Tensor written in Python: ``shape`` and ``size()`` as ``Size``,
iteration, numpy and DLPack, ``backward``, ``to``, and every operator whose first argument is
``Tensor self`` as a method (``x.clamp(min=0)``, ``x.softmax(1)``, a vendor's ``x.my_add(y)``),
found in the dispatcher when first used, ``aten`` first."""

import types as _types

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


def _T(self):
    return self.permute(list(range(self.dim() - 1, -1, -1)))


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
    call = packet._call_method

    def method(self, *args, **kwargs):
        return call(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _getattr(self, name):
    if name.startswith("_"):
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
Tensor.T = property(_T)
Tensor.__getattr__ = _getattr
Tensor.__dir__ = _dir
Tensor.__module__ = "opdispatch"
