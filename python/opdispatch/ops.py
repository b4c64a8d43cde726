"""``opdispatch.ops``: every operator the dispatcher knows, as ``torch.ops``.

``opdispatch.ops.<ns>.<name>`` is an overload packet (every overload of the name, resolved as
PyTorch's Python argument parser does) and ``.<overload>`` / ``.default`` one overload. They
are looked up in the dispatcher when used, so the operators of a plugin loaded later appear,
and those of a plugin unloaded since raise.
"""

from . import _C

__all__ = ["OpOverload", "OpOverloadPacket"]

# The aten operators defined when opdispatch was first imported: libopd_core's own, which no
# library can undo (and in a host program, those of the plugins it had loaded). Their packets,
# overloads and Tensor methods stay valid for the life of the process, so once found they are
# kept as plain attributes, which attribute lookup finds without calling __getattr__. (An
# operator of a plugin unloaded since then raises when called, as a held packet does.)
_lasting = frozenset(n for n in _C._dispatch_get_all_op_names() if n.startswith("aten::"))
_lasting_names = frozenset(n[len("aten::"):].split(".")[0] for n in _lasting)


class OpOverload(_C._OpOverload):
    """One overload of an operator: ``opdispatch.ops.aten.add.Tensor``. Calling it binds the
    arguments to this overload's schema (C++, no Python frame: the base class's __call__)."""

    def __init__(self, packet, overload):
        self._packet = packet
        self._ns = packet._ns
        self._name = packet._name
        self._overload = overload
        super().__init__(self.name())
        self.schema  # raises when the overload has no schema

    def redispatch(self_, keyset, /, *args, **kwargs):
        """Calls the kernel for the highest key of ``keyset`` (a DispatchKeySet), as a kernel
        that passes the call below its own key does. (``self_``: aten's ``self`` may be passed
        by keyword.)"""
        return _C._OpOverload.redispatch(self_, keyset, *args, **kwargs)

    @property
    def _schema(self):
        return self.schema

    @property
    def overloadpacket(self):
        return self._packet

    @property
    def namespace(self):
        return self._ns

    @property
    def _overloadname(self):
        return self._overload or "default"

    def name(self):
        """``aten::add.Tensor`` (``aten::relu`` for the default overload)."""
        qualified = f"{self._ns}::{self._name}"
        return f"{qualified}.{self._overload}" if self._overload else qualified

    def has_kernel_for_dispatch_key(self, key):
        return super().has_kernel_for_dispatch_key(str(key))

    def dump(self):
        return _C._dispatch_dump(self.name())

    def dump_table(self):
        return _C._dispatch_dump_table(self.name())

    def __repr__(self):
        return f"<OpOverload(op='{self._ns}.{self._name}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self._ns}.{self._name}.{self._overloadname}"

    def __hash__(self):
        return hash(self.name())

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other.name() == self.name()


class OpOverloadPacket(_C._OpPacket):
    """Every overload of a name: ``opdispatch.ops.aten.add``. Calling it picks the first
    overload the arguments bind to, in PyTorch's order (C++: the base class's __call__)."""

    def __init__(self, ns, name):
        super().__init__(f"{ns}::{name}", name)
        self._ns = ns
        self._name = name
        self._qualified_op_name = f"{ns}::{name}"
        self._overloads = {}

    def overloads(self):
        """The overload names, ``'default'`` for the unnamed one, in resolution order."""
        return super().overloads()

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        key = "" if overload == "default" else overload
        # (overload, the schema generation it was last found in): no schema has come or gone
        # since, so it is still there (see _OpNamespace.__getattr__).
        generation = _C._schema_generation()
        cached = self._overloads.get(key)
        if cached is not None and cached[1] == generation:
            return cached[0]
        if overload not in self.overloads():
            raise AttributeError(
                f"The underlying op of '{self._ns}.{self._name}' has no overload name "
                f"'{overload}'")
        op = cached[0] if cached is not None else OpOverload(self, key)
        self._overloads[key] = (op, generation)
        if op.name() in _lasting:
            self.__dict__[overload] = op
        return op

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.overloads()))

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self):
        return f"{self._ns}.{self._name}"


class _OpNamespace:
    """``opdispatch.ops.aten``: its attributes are the packets of the namespace's operators."""

    def __init__(self, ns):
        self._ns = ns
        self._packets = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        # (packet, the schema generation it was last found in). The generation changes whenever
        # an operator gains or loses its schema; while it has not, the packet still has its
        # overloads, and is returned without asking the dispatcher. It is read before the
        # dispatcher is asked, so a change during the lookup makes the next one ask again.
        generation = _C._schema_generation()
        cached = self._packets.get(name)
        if cached is not None and cached[1] == generation:
            return cached[0]
        _sync_methods()  # (a lookup that sees a new generation: Note [Tensor methods in the
        #                   class dict] in opdispatch/_tensor.py)
        packet = cached[0] if cached is not None else OpOverloadPacket(self._ns, name)
        if not packet.overloads():
            raise AttributeError(
                f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'")
        self._packets[name] = (packet, generation)
        if self._ns == "aten" and name in _lasting_names:
            self.__dict__[name] = packet
        return packet

    def __dir__(self):
        prefix = self._ns + "::"
        names = {n[len(prefix):].split(".")[0]
                 for n in _C._dispatch_get_all_op_names() if n.startswith(prefix)}
        return sorted(names)

    def __repr__(self):
        return f"<module 'opdispatch.ops.{self._ns}'>"


_namespaces = {}


def _sync_methods():
    """Replaced by opdispatch._tensor's, which keeps Tensor's methods in step with the
    operators (Note [Tensor methods in the class dict])."""


def __getattr__(ns):
    if ns.startswith("__"):
        raise AttributeError(ns)
    space = _namespaces.get(ns)
    if space is None:
        space = _namespaces[ns] = _OpNamespace(ns)
    prefix = ns + "::"
    if ns not in globals() and any(n.startswith(prefix) for n in _C._dispatch_get_all_op_names()):
        # A namespace is only a view of the dispatcher's operators, valid whichever come and
        # go: once it has had one, it is kept as a module attribute, and later lookups skip
        # this function.
        globals()[ns] = space
    return space


def __dir__():
    return sorted({n.split("::")[0] for n in _C._dispatch_get_all_op_names()} | set(__all__))


def _overload_for(qualified):
    """The OpOverload of ``ns::name.overload`` (the operator a fallback kernel is called for)."""
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    return getattr(getattr(__getattr__(ns), name), overload or "default")
