"""``opdispatch.library``: registering operators and kernels from Python, as ``torch.library``.

``Library(ns, kind, dispatch_key="")`` is an opd::Library whose registration site is the
Python file and line that made each registration (``opd dump`` and ``_dispatch_dump`` show
it). A Python function given to ``impl`` becomes a boxed kernel, callable from any thread; see
Note [Python kernels] in python/src/kernel.cpp. Registrations are undone by ``close()``, by
leaving a ``with`` block, when the Library is garbage collected, and at interpreter exit.

``custom_op`` is torch 2.x's: the schema is inferred from the type hints (``infer_schema``),
``register_fake`` gives the Meta kernel and ``register_kernel`` per-device kernels.
"""

import atexit as _atexit
import contextlib as _contextlib
import inspect as _inspect
import sys as _sys
import typing as _typing
import weakref as _weakref

from . import _C
from . import ops as _ops

__all__ = ["Library", "fallthrough_kernel", "custom_op", "infer_schema", "register_fake",
           "register_kernel", "CustomOpDef"]

_live = _weakref.WeakSet()


def fallthrough_kernel():
    """A dummy kernel: ``impl(name, fallthrough_kernel)`` makes the dispatcher skip the key."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def _caller_site(depth=2):
    """The file and line of the user's call, skipping the frames of the registration helpers
    themselves (this module, opdispatch.testing, contextlib's with-block machinery)."""
    frame = _sys._getframe(depth)
    here = __file__.rsplit("/", 1)[0]
    skipped = {__file__, here + "/testing.py", _contextlib.__file__}
    while frame is not None and frame.f_code.co_filename in skipped:
        frame = frame.f_back
    if frame is None:
        return "<unknown>", 0
    return frame.f_code.co_filename, frame.f_lineno


def _tag_list(tags):
    # torch.library's rule: one Tag or a sequence of Tags.
    if isinstance(tags, _C.Tag):
        return [tags]
    tags = list(tags)
    for t in tags:
        if not isinstance(t, _C.Tag):
            raise TypeError(f"tags: expected opdispatch.Tag values, got {t!r} of type "
                            f"{type(t).__name__}")
    return tags


def _key_name(key):
    return "" if key is None else str(key)


class Library:
    """A set of registrations for namespace ``ns``: ``"DEF"`` defines its operators (once per
    namespace), ``"FRAGMENT"`` defines more, ``"IMPL"`` only registers kernels (to
    ``dispatch_key`` when given)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("DEF", "FRAGMENT", "IMPL"):
            raise ValueError(f"Unsupported kind: {kind}")
        file, line = _caller_site()
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._lib = _C._Library(kind, ns, _key_name(dispatch_key), file, line)
        self._op_defs = set()
        _live.add(self)

    def define(self, schema, alias_analysis="", *, tags=()):
        """Defines an operator: ``define("my_relu(Tensor x) -> Tensor")``. Returns its name.
        ``tags``: an ``opdispatch.Tag`` or a sequence of them, read back as ``op.tags``."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_open()
        tags = _tag_list(tags)
        file, line = _caller_site()
        self._lib.define(schema, file, line, tags)
        name = schema.split("(", 1)[0].strip()
        qualified = name if "::" in name else f"{self.ns}::{name}"
        self._op_defs.add(qualified)
        return qualified.split("::", 1)[1]

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False):
        """Registers ``fn`` as the kernel of ``op_name`` (``"foo"``, ``"foo.overload"``, or an
        OpOverload) for ``dispatch_key`` (the library's key when empty, else
        CompositeImplicitAutograd). ``fallthrough_kernel`` makes the key skipped. With
        ``with_keyset``, ``fn`` receives the DispatchKeySet first."""
        self._check_open()
        if isinstance(op_name, _ops.OpOverload):
            op_name = op_name.name()
        if isinstance(op_name, str) and "::" in op_name:
            ns, op_name = op_name.split("::", 1)
            if ns != self.ns:
                raise ValueError(
                    f"impl({ns}::{op_name}): this Library's namespace is '{self.ns}'")
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if dispatch_key == "" and self.dispatch_key == "" and fn is not fallthrough_kernel:
            dispatch_key = "CompositeImplicitAutograd"
        file, line = _caller_site()
        self._lib.impl(op_name, fn, _key_name(dispatch_key), with_keyset,
                       fn is fallthrough_kernel, file, line)

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        """Registers ``fn`` as the backend fallback of the library's key, called as
        ``fn(op, *args, **kwargs)`` for every operator without a kernel of its own there.
        Only in an IMPL library of namespace ``"_"``."""
        self._check_open()
        if dispatch_key and self.dispatch_key and dispatch_key != self.dispatch_key:
            raise ValueError(f"fallback: the key {dispatch_key} is not this Library's "
                             f"({self.dispatch_key})")
        file, line = _caller_site()
        self._lib.fallback(fn, with_keyset, fn is fallthrough_kernel, file, line)

    def close(self):
        """Undoes every registration of this library, newest first."""
        lib = self.__dict__.pop("_lib", None)
        if lib is not None:
            lib.reset()
        _live.discard(self)

    _destroy = close

    def _check_open(self):
        if "_lib" not in self.__dict__:
            raise RuntimeError(f"Library({self.ns!r}, {self.kind!r}) was closed")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        key = f", dispatch_key={self.dispatch_key}" if self.dispatch_key else ""
        state = "" if "_lib" in self.__dict__ else " (closed)"
        return f"Library(kind={self.kind}, ns={self.ns}{key}){state}"


def _at_exit():
    # Note [Python lifetime] in python/src/gil.cpp: Python kernels refuse to run from now on;
    # then every live registration is undone while the interpreter is whole.
    _C._begin_shutdown()
    for lib in list(_live):
        try:
            lib.close()
        except Exception:
            pass
    _C._reclaim()


_atexit.register(_at_exit)


# Schema inference, as torch.library.infer_schema (torch 2.x's table).

def _tensor_type():
    return _C.Tensor


def _schema_type(annotation, where):
    T = _tensor_type()
    origin = _typing.get_origin(annotation)
    args = _typing.get_args(annotation)
    if annotation is T:
        return "Tensor"
    if origin is _typing.Union and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        return _schema_type(inner, where) + "?"
    if origin in (list, tuple, _typing.Sequence) or origin is getattr(
            __import__("collections.abc").abc, "Sequence"):
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            raise ValueError(f"infer_schema(): {where}: tuple types are only supported as "
                             f"return types, or as Tuple[T, ...]")
        inner = _schema_type(args[0], where) if args else None
        if inner is None:
            raise ValueError(f"infer_schema(): {where}: unsupported type annotation "
                             f"{annotation}")
        return {"SymInt": "SymInt[]", "int": "int[]", "float": "float[]",
                "bool": "bool[]", "Tensor": "Tensor[]", "Tensor?": "Tensor?[]",
                "Scalar": "Scalar[]"}.get(inner) or _unsupported(annotation, where)
    simple = {int: "SymInt", float: "float", bool: "bool", str: "str",
              _C.dtype: "ScalarType", _C.device: "Device", complex: "complex"}
    if annotation in simple:
        return simple[annotation]
    if origin is _typing.Union and set(args) <= {int, float, complex, bool}:
        return "Scalar"
    return _unsupported(annotation, where)


def _unsupported(annotation, where):
    raise ValueError(f"infer_schema(): {where}: unsupported type annotation {annotation}. "
                     f"The valid types are: Tensor, int, float, bool, str, dtype, device, "
                     f"Optional[...] and Sequence[...] of them.")


def _default_text(value):
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value + '"'  # as torch's infer_schema and the schema printer
    if isinstance(value, _C.dtype):
        return repr(value).split(".")[-1]
    raise ValueError(f"infer_schema(): unsupported default value {value!r}")


def _return_type(annotation):
    T = _tensor_type()
    if annotation is None or annotation is type(None):
        return "()"
    origin = _typing.get_origin(annotation)
    if origin is tuple:
        parts = [_schema_type(a, "return") for a in _typing.get_args(annotation)]
        return "(" + ", ".join(parts) + ")"
    if annotation is T:
        return "Tensor"
    return _schema_type(annotation, "return")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema of a function from its type hints: ``def f(x: Tensor, n: int) -> Tensor``
    gives ``"(Tensor x, SymInt n) -> Tensor"``. Arguments named in ``mutates_args`` (or every
    tensor for ``"unknown"``) become ``Tensor(a{index}!)``."""
    sig = _inspect.signature(prototype_function)
    try:
        hints = _typing.get_type_hints(prototype_function)
    except Exception:
        hints = {}
    if mutates_args != "unknown":
        if isinstance(mutates_args, str) or not hasattr(mutates_args, "__iter__"):
            raise ValueError("mutates_args must be an iterable of argument names, or "
                             "\"unknown\"")
        unknown = set(mutates_args) - set(sig.parameters)
        if unknown:
            raise ValueError(f"mutates_args contains {sorted(unknown)}, which are not "
                             f"arguments of {prototype_function.__name__}")
    params = []
    seen_kwarg_only = False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"infer_schema(): {prototype_function.__name__} has *args or "
                             f"**kwargs, which schemas cannot express")
        annotation = hints.get(name, p.annotation)
        if annotation is p.empty:
            raise ValueError(f"infer_schema(function {prototype_function.__name__}): "
                             f"parameter {name} must have a type annotation")
        t = _schema_type(annotation, f"parameter {name}")
        mutated = (mutates_args == "unknown" and t.startswith("Tensor")) or (
            mutates_args != "unknown" and name in mutates_args)
        if mutated:
            if not t.startswith("Tensor"):
                raise ValueError(f"infer_schema(): {name} is in mutates_args but is not a "
                                 f"Tensor")
            t = f"Tensor(a{idx}!)" + t[len("Tensor"):]
        if p.kind == p.KEYWORD_ONLY and not seen_kwarg_only:
            params.append("*")
            seen_kwarg_only = True
        text = f"{t} {name}"
        if p.default is not p.empty:
            text += "=" + _default_text(p.default)
        params.append(text)
    ret = hints.get("return", sig.return_annotation)
    if ret is sig.empty:
        raise ValueError(f"infer_schema(function {prototype_function.__name__}): no return "
                         f"type annotation")
    schema = f"({', '.join(params)}) -> {_return_type(ret)}"
    return f"{op_name}{schema}" if op_name else schema


_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", None: "CompositeExplicitAutograd"}


def _device_key(device_type):
    if device_type not in _DEVICE_KEYS:
        raise ValueError(f"unsupported device type {device_type!r}: expected one of cpu, "
                         f"cuda, meta")
    return _DEVICE_KEYS[device_type]


class CustomOpDef:
    """What ``custom_op`` returns: callable as the operator, with ``register_fake``,
    ``register_kernel`` and ``register_autograd``."""

    def __init__(self, namespace, name, schema, fn, tags=()):
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._init_fn = fn
        self._lib = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema, tags=tags)
        self._opoverload = getattr(getattr(_ops, namespace), name).default
        self._backward_fn = None
        self._setup_context_fn = None
        self._register_autograd_kernel()

    def _register_autograd_kernel(self):
        # torch 2.x's make_autograd_impl: a call whose inputs require grad goes through a
        # Function whose forward runs the operator below autograd and whose backward is the one
        # register_autograd gave, or raises naming register_autograd when none was given. Tensors
        # inside list arguments and keyword arguments are not differentiated.
        from . import autograd as _autograd
        op = self._opoverload
        below = _C._autograd_keyset()
        opdef = self

        class Generated(_autograd.Function):
            @staticmethod
            def forward(ctx, keyset, kwargs, *args):
                result = op.redispatch(keyset - below, *args, **kwargs)
                if opdef._setup_context_fn is not None:
                    opdef._setup_context_fn(ctx, args, result)
                return result

            @staticmethod
            def backward(ctx, *grads):
                if opdef._backward_fn is None:
                    raise RuntimeError(
                        f"Trying to backward through {opdef} but no autograd formula was "
                        f"registered. Please use register_autograd to add one.")
                result = opdef._backward_fn(ctx, *grads)
                return (None, None) + (result if isinstance(result, tuple) else (result,))

        Generated.__name__ = f"GeneratedBackwardFor_{self._namespace}_{self._name}"

        def autograd_kernel(keyset, *args, **kwargs):
            if _C.is_grad_enabled() and _any_requires_grad(args, kwargs):
                return Generated.apply(keyset, kwargs, *args)
            return op.redispatch(keyset - below, *args, **kwargs)

        self._lib.impl(self._name, autograd_kernel, "Autograd", with_keyset=True)

    def register_autograd(self, backward, /, *, setup_context=None):
        """Gives the operator gradients, as torch.library's: ``setup_context(ctx, inputs,
        output)`` runs after the forward (save what backward needs on ctx), ``backward(ctx,
        *grad_outputs)`` returns one gradient (or None) per positional input."""
        if not callable(backward):
            raise TypeError(f"register_autograd(): backward must be callable, not "
                            f"{type(backward).__name__}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError(f"register_autograd(): setup_context must be callable, not "
                            f"{type(setup_context).__name__}")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_kernel(self, device_types, fn=None, /):
        """Registers ``fn`` for ``device_types`` ("cpu", "cuda", a sequence of them, or None
        for every device); usable as a decorator."""
        def register(f):
            types = device_types if isinstance(device_types, (list, tuple, set)) else [
                device_types]
            for d in types:
                self._lib.impl(self._name, f, _device_key(d))
            return f
        return register if fn is None else register(fn)

    def register_fake(self, fn=None, /):
        """Registers ``fn`` as the Meta kernel: it computes the outputs' shapes and dtypes from
        meta inputs, without data. Usable as a decorator."""
        def register(f):
            self._lib.impl(self._name, f, "Meta")
            return f
        return register if fn is None else register(fn)

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _destroy(self):
        self._lib.close()

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"


def _any_requires_grad(args, kwargs):
    T = _C.Tensor
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, T) and v.requires_grad:
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(x, T) and x.requires_grad for x in v):
            return True
    return False


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Defines ``"ns::name"`` from a Python function, as torch.library.custom_op: the schema is
    ``schema`` or inferred from the type hints, and ``fn`` serves ``device_types`` (every
    device when None). ``tags``: opdispatch.Tag values for the definition. Usable as a
    decorator."""
    def inner(f):
        if "::" not in name:
            raise ValueError(f"custom_op name must be 'namespace::name', got {name!r}")
        ns, opname = name.split("::", 1)
        s = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        op = CustomOpDef(ns, opname, s, f, () if tags is None else tags)
        op.register_kernel(device_types, f)
        return op
    return inner if fn is None else inner(fn)


def register_fake(op, fn=None, /):
    """``register_fake("ns::name", fn)`` or on a CustomOpDef: the Meta kernel."""
    if isinstance(op, CustomOpDef):
        return op.register_fake(fn)
    raise TypeError("register_fake: pass the CustomOpDef that custom_op returned")


def register_kernel(op, device_types, fn=None, /):
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, fn)
    raise TypeError("register_kernel: pass the CustomOpDef that custom_op returned")
