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
import collections.abc as _collections_abc
import contextlib as _contextlib
import inspect as _inspect
import sys as _sys
import types as _types_module
import typing as _typing
import weakref as _weakref

from . import _C
from . import ops as _ops
from . import types as _types
from ._opcheck import OpCheckError, opcheck  # torch.library.opcheck (opdispatch/_opcheck.py)

__all__ = ["Library", "fallthrough_kernel", "custom_op", "infer_schema", "register_fake",
           "register_kernel", "CustomOpDef", "opcheck", "OpCheckError"]

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
        ``alias_analysis``: ``""`` or ``"FROM_SCHEMA"`` (the schema's alias annotations say
        what the operator aliases and writes) or ``"CONSERVATIVE"`` (it may alias or write
        anything), as torch.library; the dump shows it (Note [Alias analysis kind]).
        ``tags``: an ``opdispatch.Tag`` or a sequence of them, read back as ``op.tags``."""
        # As torch.library: PURE_FUNCTION, valid in C++, is not offered.
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_open()
        tags = _tag_list(tags)
        file, line = _caller_site()
        self._lib.define(schema, file, line, tags, alias_analysis)
        name = schema.split("(", 1)[0].strip()
        qualified = name if "::" in name else f"{self.ns}::{name}"
        self._op_defs.add(qualified)
        _ops._sync_methods()  # its method, if any (Note [Tensor methods in the class dict])
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
        _ops._sync_methods()

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
        _ops._sync_methods()  # its operators' methods go with them

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


# Schema inference, as torch.library.infer_schema (torch 2.x's tables and texts).

def _derived_types(base, schema_type, seq, optional_seq_of_optional, optional_seq):
    """(annotation, schema type) pairs for ``base`` and the forms built on it: T and
    Optional[T] always; T[] (as typing.Sequence, typing.List, collections.abc.Sequence or list
    of T), T?[] (sequences of Optional[T]) and T[]? (Optional sequences) when asked."""
    def sequences(t):
        return (_typing.Sequence[t], _typing.List[t], _collections_abc.Sequence[t], list[t])

    pairs = [(base, schema_type), (_typing.Optional[base], schema_type + "?")]
    if seq:
        pairs += [(s, schema_type + "[]") for s in sequences(base)]
    if optional_seq_of_optional:
        pairs += [(s, schema_type + "?[]") for s in sequences(_typing.Optional[base])]
    if optional_seq:
        pairs += [(_typing.Optional[s], schema_type + "[]?") for s in sequences(base)]
    return pairs


def _param_types():
    # (annotation, schema type, T[], T?[], T[]?), as torch's get_supported_param_types.
    table = [(_C.Tensor, "Tensor", True, True, False),
             (int, "SymInt", True, False, True),
             (float, "float", True, False, True),
             (bool, "bool", True, False, True),
             (str, "str", False, False, False),
             (_types.Number, "Scalar", True, False, False),
             (_C.dtype, "ScalarType", False, False, False),
             (_C.device, "Device", False, False, False)]
    return dict(pair for row in table for pair in _derived_types(*row))


_PARAM_TYPES = _param_types()
_RETURN_TYPES = {_C.Tensor: "Tensor", _typing.List[_C.Tensor]: "Tensor[]",
                 list[_C.Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool",
                 _types.Number: "Scalar"}


def _schema_string(text):
    """``text`` as a schema string literal that reads back as itself: quotes, backslashes and
    control characters escaped, other characters (non-ASCII too) as they are."""
    named = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    out = []
    for c in text:
        if c in named:
            out.append(named[c])
        elif c < " " or c == "\x7f":
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _list_suggestion(annotation):
    """The list type to suggest for a tuple annotation (torch's tuple_to_list), or None when
    that one would not be supported either."""
    args = _typing.get_args(annotation)
    if len(args) == 2 and args[1] is Ellipsis:
        args = args[:1]
    if not args:
        return None
    suggestion = list[args[0]] if len(args) == 1 else list[_typing.Union[args]]
    return suggestion if suggestion in _PARAM_TYPES else None


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema of a function from its type hints, as torch.library.infer_schema:
    ``def f(x: Tensor, n: int) -> Tensor`` gives ``"(Tensor x, SymInt n) -> Tensor"``, and
    ``op_name`` is put in front when given. Arguments named in ``mutates_args`` (every tensor
    argument for ``"unknown"``) become ``Tensor(a{index}!)``. Annotations written as strings
    are evaluated in the function's globals. Defaults: None, bool, int, float, str, dtype and
    device (written as its string); a string default is escaped so that it reads back intact."""
    sig = _inspect.signature(prototype_function)
    namespace = getattr(prototype_function, "__globals__", {})

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def evaluate(annotation):
        # A string annotation (``from __future__ import annotations``, "Tensor", list["T"])
        # is the type it names; one inside a generic type is replaced in it.
        if isinstance(annotation, _typing.ForwardRef):
            annotation = annotation.__forward_arg__
        if isinstance(annotation, str):
            try:
                return eval(annotation, namespace)  # noqa: S307 (the user's own annotation)
            except Exception:
                error(f"Unsupported type annotation {annotation}. It is not a type.")
        origin = _typing.get_origin(annotation)
        args = _typing.get_args(annotation)
        if origin is None or not args:
            return annotation
        new_args = tuple(a if a is Ellipsis else evaluate(a) for a in args)
        if new_args == args:
            return annotation
        if origin is _typing.Union:
            return _typing.Union[new_args]
        if hasattr(annotation, "copy_with"):  # typing.List[...] and the like
            return annotation.copy_with(new_args)
        return _types_module.GenericAlias(origin, new_args)

    if isinstance(mutates_args, str) and mutates_args != "unknown":
        raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                         "that are mutated or the string 'unknown'. ")
    params = []
    seen = set()
    kwarg_only_seen = False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not kwarg_only_seen:
            params.append("*")
            kwarg_only_seen = True
        if p.annotation is p.empty:
            error(f"Parameter {name} must have a type annotation.")
        annotation = evaluate(p.annotation)
        schema_type = _PARAM_TYPES.get(annotation) if _hashable(annotation) else None
        if schema_type is None:
            if _typing.get_origin(annotation) is tuple:
                suggestion = _list_suggestion(annotation)
                example = f"For example, {suggestion}.\n\n" if suggestion else "\n\n"
                error(f"Parameter {name} has unsupported type {p.annotation}. We do not support "
                      f"Tuple inputs in schema. As a workaround, please try to use List "
                      f"instead. {example}The valid types are: {_PARAM_TYPES.keys()}.")
            error(f"Parameter {name} has unsupported type {p.annotation}. The valid types "
                  f"are: {_PARAM_TYPES.keys()}.")
        if mutates_args == "unknown":
            mutated = schema_type.startswith("Tensor")
        else:
            mutated = name in mutates_args
            if mutated and not schema_type.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of "
                      f"Tensors can be mutated")
        if mutated:
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen.add(name)
        if p.default is p.empty:
            params.append(f"{schema_type} {name}")
            continue
        default = p.default
        if default is None or isinstance(default, (int, float, bool)):
            text = str(default)
        elif isinstance(default, (str, _C.device)):
            text = _schema_string(str(default))
        elif isinstance(default, _C.dtype):
            text = str(default).rsplit(".", 1)[-1]
        else:
            error(f"Parameter {name} has an unsupported default value type {type(default)}. "
                  f"Please file an issue on GitHub so we can prioritize this.")
        params.append(f"{schema_type} {name}={text}")
    if mutates_args != "unknown":
        not_seen = set(mutates_args) - seen
        if not_seen:
            error(f"{not_seen} in mutates_args were not found in the custom op's signature. "
                  f"mutates_args should contain the names of all args that the custom op "
                  f"mutates, or just the string 'unknown' if you don't know.")
    ret = _return_schema(evaluate(sig.return_annotation), error)
    return f"{op_name or ''}({', '.join(params)}) -> {ret}"


def _hashable(annotation):
    try:
        hash(annotation)
        return True
    except TypeError:
        return False


def _return_schema(annotation, error):
    if annotation is None:
        return "()"
    if annotation is _inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")

    def one(a):
        if not _hashable(a) or a not in _RETURN_TYPES:
            error(f"Return has unsupported type {annotation}. The valid types are: "
                  f"{_RETURN_TYPES}.")
        return _RETURN_TYPES[a]

    if _typing.get_origin(annotation) is not tuple:
        return one(annotation)
    return "(" + ", ".join(one(a) for a in _typing.get_args(annotation)) + ")"


_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", None: "CompositeExplicitAutograd"}


def _device_key(device_type):
    if device_type not in _DEVICE_KEYS:
        raise ValueError(f"unsupported device type {device_type!r}: expected one of cpu, "
                         f"cuda, meta")
    return _DEVICE_KEYS[device_type]


# The Library of each custom operator, by "ns::name", as torch.library's OPDEF_TO_LIB: a custom
# operator stays defined for the life of the process (or until _destroy) even when nothing holds
# its CustomOpDef. Without it, the cycle CustomOpDef -> Library -> kernel -> CustomOpDef is
# garbage that the collector undoes (Note [Python kernels and the garbage collector]).
_OPDEF_TO_LIB = {}


class CustomOpDef:
    """What ``custom_op`` returns: callable as the operator, with ``register_fake``,
    ``register_kernel`` and ``register_autograd``. Defining an operator of the same name again
    replaces it, as torch's does."""

    def __init__(self, namespace, name, schema, fn, tags=()):
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._schema = schema
        self._init_fn = fn
        previous = _OPDEF_TO_LIB.pop(self._qualname, None)
        if previous is not None:
            previous.close()
        self._lib = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema, tags=tags)
        _OPDEF_TO_LIB[self._qualname] = self._lib
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
        if _OPDEF_TO_LIB.get(self._qualname) is self._lib:
            del _OPDEF_TO_LIB[self._qualname]
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
