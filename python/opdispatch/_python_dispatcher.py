"""``opdispatch._python_dispatcher``: torch's ``PythonDispatcher``, the dispatcher's table
computation written out in Python, to teach and to test which kernel serves which key.

Usage, as torch's::

    dispatcher = PythonDispatcher()
    dispatcher.register(["CPU", "Meta", "CompositeImplicitAutograd"])
    print(dispatcher.dispatchTable())      # which kernel each runtime key runs, and why
    print(dispatcher.registrations())      # what was registered
    print(dispatcher.rawRegistrations())   # _dispatch_dump of the operator
    print(dispatcher.rawDispatchTable())   # _dispatch_dump_table of the operator

``register`` registers, through ``_C._dispatch_library``, a C++ kernel named ``fn_<key>`` for
each key to the operator ``__test__::foo``, so the real dispatcher holds the same state, and the
raw views are its own. ``dispatchTable()`` does not read the real table, as torch's does: it is
computed here, by ``compute_dispatch_table``, from the registered keys and the backend fallbacks
(Note [Kernel precedence] in core/src/dispatch/operator_entry.cpp, rule by rule), so that the
rules can be read in one place and checked against the dispatcher
(tests/python/test_python_dispatcher.py compares the two for every combination of keys).

The keys are opdispatch's, not torch's (which has FPGA, XLA, Lazy and AutogradOther, absent
here): CPU and CUDA have autograd kernels in the autograd plugin, PrivateUse1..3 are vendors'
out-of-tree backends (torch's XLA), Meta computes shapes only; Python, Functionalize and
PythonTLSSnapshot are the wrapper layers' keys, filled by their fallbacks. Alias keys: Autograd (every
Autograd<Backend>), CompositeExplicitAutograd and CompositeExplicitAutogradNonFunctional (every
backend), CompositeImplicitAutograd (every backend and every Autograd<Backend>).
"""

import re

from . import _C

__all__ = ["PythonDispatcher", "compute_dispatch_table", "BACKEND_KEYS", "AUTOGRAD_KEYS",
           "TABLE_KEYS"]

# opdispatch's backends and their autograd keys (plugin_api/include/opd/dispatch_key.h).
BACKEND_KEYS = ["CPU", "CUDA", "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta"]
AUTOGRAD_KEYS = {"AutogradCPU": "CPU", "AutogradCUDA": "CUDA",
                 "AutogradPrivateUse1": "PrivateUse1", "AutogradPrivateUse2": "PrivateUse2",
                 "AutogradPrivateUse3": "PrivateUse3", "AutogradMeta": "Meta"}
# Every entry of a computed table, in the order _dispatch_dump_table prints them.
TABLE_KEYS = (["Undefined"] + BACKEND_KEYS + ["Python", "Functionalize", "ADInplaceOrView"] +
              list(AUTOGRAD_KEYS) + ["Tracer", "PythonTLSSnapshot"])

_CIA = "CompositeImplicitAutograd"
_CEA = "CompositeExplicitAutograd"
_CEANF = "CompositeExplicitAutogradNonFunctional"


def _entry(key, registered, fallbacks):
    """The entry of runtime key ``key``: the rules of Note [Kernel precedence], in order."""
    # (1) A kernel registered to the key itself.
    if key in registered:
        return f"fn_{key} [kernel]"
    backend_like = key in BACKEND_KEYS or key == "Undefined"
    # (2) A backend (or a call without tensors) takes a CompositeExplicitAutograd kernel,
    # the NonFunctional one first.
    if backend_like:
        for alias in (_CEANF, _CEA):
            if alias in registered:
                return f"fn_{alias} [default backend kernel]"
    # (3) CompositeImplicitAutograd serves backends and their autograd keys, unless the
    # operator has a kernel for that backend (or a CompositeExplicitAutograd one): then the
    # autograd key must fall through to that kernel instead.
    if _CIA in registered and (backend_like or key in AUTOGRAD_KEYS):
        has_backend_kernel = (_CEA in registered or _CEANF in registered or
                              AUTOGRAD_KEYS.get(key) in registered)
        if not has_backend_kernel:
            return f"fn_{_CIA} [math kernel]"
    # (4) An autograd key takes the Autograd alias kernel.
    if key in AUTOGRAD_KEYS and "Autograd" in registered:
        return "fn_Autograd [autograd kernel]"
    # (5) The key's backend fallback, if any; (6) otherwise missing (no entry).
    return fallbacks.get(key)


def compute_dispatch_table(registered, fallbacks):
    """The computed table of an operator that has a kernel ``fn_<key>`` for each key named in
    ``registered`` (runtime or alias keys), over the backend fallbacks ``fallbacks`` ({runtime
    key: its entry as _dispatch_dump_table prints it}): {runtime key: entry}, in table order,
    without the keys that have no kernel."""
    registered = set(registered)
    table = {}
    for key in TABLE_KEYS:
        entry = _entry(key, registered, fallbacks)
        if entry is not None:
            table[key] = entry
    return table


def backend_fallbacks():
    """The backend fallbacks as an operator without kernels sees them: {runtime key: entry}."""
    probe = _C._dispatch_library("FRAGMENT", "__test__", "")
    probe.def_("python_dispatcher_probe(Tensor x) -> Tensor")
    table = _C._dispatch_dump_table("__test__::python_dispatcher_probe")
    del probe
    entries = {}
    for line in table.splitlines():
        key, _, entry = line.partition(": ")
        entries[key] = entry
    return entries


class PythonDispatcher:
    """Registers kernels to ``__test__::foo`` and shows the dispatch table they make."""

    namespace = "__test__"
    name = "foo"
    runtime_keys = [
        "CPU", "AutogradCPU",
        "CUDA", "AutogradCUDA",
        "PrivateUse1", "AutogradPrivateUse1",
        "Meta", "AutogradMeta",
    ]
    alias_keys = [
        "CompositeExplicitAutograd",
        "CompositeExplicitAutogradNonFunctional",
        "Autograd",
        "CompositeImplicitAutograd",
    ]
    supported_keys = runtime_keys + alias_keys

    def __init__(self):
        qualified = f"{self.namespace}::{self.name}"
        _C._dispatch_check_invariants(qualified)
        self.ref = _C._dispatch_library("FRAGMENT", self.namespace, "")
        self.ref.def_("foo(Tensor x) -> Tensor")
        self._registered = []

    def keys(self):
        """The dispatch keys ``register`` accepts."""
        return self.supported_keys

    def register(self, dispatchKeys):
        """Registers a kernel ``fn_<key>`` for each key of ``dispatchKeys``."""
        # Overriding works in the dispatcher (with a warning), but this table shows one kernel
        # per key.
        if len(set(dispatchKeys)) != len(dispatchKeys):
            raise RuntimeError(
                f"Overriden is not allowed but found duplicates in {dispatchKeys}.")
        # As torch's codegen: a composite is implicit or explicit, not both.
        for explicit in (_CEA, _CEANF):
            if _CIA in dispatchKeys and explicit in dispatchKeys:
                raise RuntimeError(
                    f"Registration to both CompositeImplicitAutograd and {explicit} is not "
                    f"allowed.")
        for key in dispatchKeys:
            if key not in self.supported_keys:
                raise RuntimeError(
                    f"{key} is not supported, please select a dispatch key in "
                    f"{self.supported_keys}.")
        for key in dispatchKeys:
            self.ref.impl_t_t("foo", dispatch=key, debug="fn_" + key)
            self._registered.append(key)

    def _format_line(self, key, kernel):
        return "{:<15} {}\n".format(key, kernel)

    def _format_header(self, header):
        return f"\n{header}\n" + self._format_line("key", "kernel") + \
            "---------------------------\n"

    def rawRegistrations(self):
        """The operator's registrations: ``_dispatch_dump``."""
        return _C._dispatch_dump(f"{self.namespace}::{self.name}")

    def rawDispatchTable(self):
        """The dispatcher's computed table for the operator: ``_dispatch_dump_table``."""
        return _C._dispatch_dump_table(f"{self.namespace}::{self.name}")

    def registrations(self):
        """The registered kernels, runtime and alias keys, one a line."""
        output = self._format_header("Registered Kernels")
        for line in self.rawRegistrations().split("\n"):
            first = line.split(":")[0]
            if any(first.startswith(k) for k in self.supported_keys):
                kernel = line.split("::")[0].split(" ")[1]
                output += self._format_line(first, kernel)
        return output

    def dispatchTable(self):
        """The kernel each runtime key of ``runtime_keys`` runs, and why, computed by
        ``compute_dispatch_table``; a backend fallback shows without its registration site
        (``fallthrough [backend fallback]``, ``(plugin autograd 0.1.0) [backend fallback]``)."""
        output = self._format_header("Computed Dispatch Table")
        table = compute_dispatch_table(self._registered, backend_fallbacks())
        for key in self.runtime_keys:
            if key in table:
                output += self._format_line(key, _without_site(table[key]))
        return output


# "registered at plugins/autograd/fallback.cpp:169 " or "registered in opdispatch core ".
_SITE = re.compile(r"registered (at \S+|in opdispatch core) ")


def _without_site(entry):
    return _SITE.sub("", entry)
