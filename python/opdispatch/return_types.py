"""Named tuples for operators with several named returns, as ``torch.return_types``:
``opdispatch.return_types.max(values=..., indices=...)``, made on first use from the schema."""

import collections as _collections

_types = {}


def _get(name, fields):
    key = (name, tuple(fields))
    t = _types.get(key)
    if t is None:
        base = _collections.namedtuple(name, fields)

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
            return f"opdispatch.return_types.{name}(\n{body})"

        t = type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                 "__module__": "opdispatch.return_types"})
        _types[key] = t
        globals().setdefault(name, t)
    return t
