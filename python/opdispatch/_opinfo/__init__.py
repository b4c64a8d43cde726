"""The OpInfo-style table of operators: core.py says what an entry is; every other module of
the package is one family's entries (``OP_DB = [OpInfo(...), ...]``), collected by
tests/python/test_opinfo.py, tests/python/differential.py and ``opdispatch.conformance`` through
``all_op_db()``. It ships in the package so that a vendor's conformance run has it: building the
samples needs opdispatch only; torch is imported only by the comparisons with torch (to_torch,
the entries' references)."""

import importlib
import pkgutil

__all__ = ["all_op_db", "family_modules"]


def family_modules():
    """The names of the family modules: every module of the package but core."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if m.name != "core" and not m.name.startswith("_"))


def all_op_db():
    """[(module name, OpInfo)] over every family module, in module then table order. A module
    that fails to import is an error of its own (ImportError names it)."""
    entries = []
    for name in family_modules():
        module = importlib.import_module(f"{__name__}.{name}")
        entries.extend((name, op) for op in getattr(module, "OP_DB", ()))
    return entries
