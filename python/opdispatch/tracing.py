"""``with opdispatch.trace() as t:`` records every dispatch hop made on this thread, as the
lines ``opd eval --trace`` prints (``str(t)``) and as objects (``t.hops``)."""

from . import _C

__all__ = ["trace"]


class trace:
    def __init__(self):
        self._core = _C._Trace()

    def __enter__(self):
        self._core.start()
        return self

    def __exit__(self, *exc):
        self._core.stop()
        return False

    @property
    def hops(self):
        """The hops so far, each with op, entry, keys, key, source, debug, plugin, depth,
        raised and line."""
        return self._core.hops()

    def count(self, op, key=None):
        """How many hops ran ``op`` (``"aten::add.Tensor"``, ``"aten::add"`` for every
        overload, or an OpOverload / packet), with ``key`` chosen when given."""
        name = op.name() if hasattr(op, "name") and callable(op.name) else str(op)
        if hasattr(op, "_qualified_op_name"):
            name = op._qualified_op_name
        exact = "." in name.split("::")[-1]
        n = 0
        for h in self.hops:
            if h.raised:
                continue
            matches = h.op == name if exact else h.op.split(".")[0] == name
            if matches and (key is None or h.key == str(key)):
                n += 1
        return n

    def __str__(self):
        return "\n".join(h.line for h in self.hops)

    def __repr__(self):
        return f"<opdispatch.trace with {len(self.hops)} hops>"
