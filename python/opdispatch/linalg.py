"""``opdispatch.linalg``, as ``torch.linalg``: ``opdispatch.linalg.<name>`` is the aten operator
``linalg_<name>`` (``linalg.cross`` is ``ops.aten.linalg_cross``, ``linalg.vector_norm`` is
``ops.aten.linalg_vector_norm``), with its schema's signature and out= overloads.

PyTorch marks these operators ``python_module: linalg`` in native_functions.yaml and binds them
here rather than as ``torch.<name>``; in PyTorch 1.13 that mark and the ``linalg_`` prefix go
together exactly (every marked operator has the prefix, and every prefixed one is marked), so the
prefix is the mapping, read from the dispatcher's operators when used: an operator defined later
appears, as in ``opdispatch.ops``. Nothing here is written per operator.
"""

from . import _C, ops as _ops

_PREFIX = "linalg_"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        packet = _ops.aten.__getattr__(_PREFIX + name)
    except AttributeError:
        raise AttributeError(f"module 'opdispatch.linalg' has no attribute '{name}'") from None
    if _PREFIX + name in _ops._lasting_names:
        globals()[name] = packet  # kept (see opdispatch.ops._lasting)
    return packet


def __dir__():
    names = set()
    for qualified in _C._dispatch_get_all_op_names():
        ns, _, rest = qualified.partition("::")
        name = rest.split(".")[0]
        if ns == "aten" and name.startswith(_PREFIX):
            names.add(name[len(_PREFIX):])
    return sorted(names)
