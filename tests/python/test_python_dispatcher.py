"""opdispatch._python_dispatcher: PythonDispatcher as torch's (register, the tables and their
format, refusals), and its model of the table computation against the real dispatcher for
every combination of a set of keys, as torch's test_dispatch.py checks its own keys."""

import itertools

import pytest

from opdispatch import _C
from opdispatch._python_dispatcher import (BACKEND_KEYS, TABLE_KEYS, PythonDispatcher,
                                           backend_fallbacks, compute_dispatch_table)

# Registered and unregistered backends (CPU and Meta get kernels, CUDA and PrivateUse1 never do),
# their autograd keys, the other runtime keys, and every alias key.
KEYS = ["CPU", "Meta", "AutogradCPU", "AutogradMeta", "ADInplaceOrView", "Tracer", "Autograd",
        "CompositeImplicitAutograd", "CompositeExplicitAutograd",
        "CompositeExplicitAutogradNonFunctional"]

_namespaces = itertools.count()


@pytest.fixture
def dispatcher():
    """A PythonDispatcher whose registrations are undone after the test, even when a failed
    test's traceback keeps the object alive."""
    d = PythonDispatcher()
    yield d
    del d.ref


def real_table(keys):
    """_dispatch_dump_table of an operator with a kernel fn_<key> on each of `keys`."""
    ns = f"python_dispatcher{next(_namespaces)}"
    lib = _C._dispatch_library("FRAGMENT", ns, "")
    lib.def_("foo(Tensor x) -> Tensor")
    for key in keys:
        lib.impl_t_t("foo", dispatch=key, debug=f"fn_{key}")
    _C._dispatch_check_invariants(f"{ns}::foo")
    return _C._dispatch_dump_table(f"{ns}::foo")


def model_table(keys, fallbacks):
    return "".join(f"{k}: {entry}\n"
                   for k, entry in compute_dispatch_table(keys, fallbacks).items())


def mismatches(fallbacks):
    found = []
    for n in range(len(KEYS) + 1):
        for keys in itertools.combinations(KEYS, n):
            expected, actual = model_table(keys, fallbacks), real_table(keys)
            if expected != actual:
                found.append(f"{list(keys)}:\nmodel:\n{expected}dispatcher:\n{actual}")
    return found


def test_the_model_is_the_dispatcher_for_every_combination_of_keys():
    fallbacks = backend_fallbacks()
    # The process's fallbacks: the core's fallthrough, the autograd plugin's fallback.
    assert fallbacks["ADInplaceOrView"] == \
        "fallthrough registered in opdispatch core [backend fallback]"
    assert fallbacks["AutogradCPU"].endswith("(plugin autograd 0.1.0) [backend fallback]")
    found = mismatches(fallbacks)
    assert not found, f"{len(found)} of {2 ** len(KEYS)} differ; the first:\n{found[0]}"


def test_the_model_follows_the_backend_fallbacks():
    # A fallthrough fallback on Tracer and on a backend (PrivateUse1) enter every table.
    tracer = _C._dispatch_library("IMPL", "_", "Tracer")
    tracer.fallback_fallthrough()
    vendor = _C._dispatch_library("IMPL", "_", "PrivateUse1")
    vendor.fallback_fallthrough()
    fallbacks = backend_fallbacks()
    assert fallbacks["Tracer"] == "fallthrough registered at /dev/null:0 [backend fallback]"
    for keys in ([], ["CompositeExplicitAutograd"], ["CompositeImplicitAutograd", "Tracer"],
                 ["CPU", "Autograd", "CompositeImplicitAutograd"]):
        assert model_table(keys, fallbacks) == real_table(keys), keys
    del tracer, vendor
    assert "Tracer" not in backend_fallbacks()


def test_the_model_covers_every_entry_of_the_real_table():
    # Every runtime key of a full table, in the dispatcher's order: the model knows them all.
    keys = ["CPU", "CUDA", "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta", "Python",
            "Functionalize", "ADInplaceOrView", "AutogradCPU", "AutogradCUDA",
            "AutogradPrivateUse1", "AutogradPrivateUse2", "AutogradPrivateUse3", "AutogradMeta",
            "Tracer", "PythonTLSSnapshot"]
    table = real_table(keys + ["CompositeImplicitAutograd"])
    assert [line.split(":")[0] for line in table.splitlines()] == ["Undefined"] + keys
    assert TABLE_KEYS == ["Undefined"] + keys
    assert BACKEND_KEYS == ["CPU", "CUDA", "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta"]


def test_dispatch_table_as_torch_formats_it(dispatcher):
    dispatcher.register(["CPU", "PrivateUse1", "Meta", "CompositeImplicitAutograd"])
    plugin = backend_fallbacks()["AutogradCPU"].split(" (plugin ")[1]
    fallback = f"(plugin {plugin}"
    assert fallback == "(plugin autograd 0.1.0) [backend fallback]"
    assert dispatcher.dispatchTable() == (
        "\n"
        "Computed Dispatch Table\n"
        "key             kernel\n"
        "---------------------------\n"
        "CPU             fn_CPU [kernel]\n"
        f"AutogradCPU     {fallback}\n"
        "CUDA            fn_CompositeImplicitAutograd [math kernel]\n"
        "AutogradCUDA    fn_CompositeImplicitAutograd [math kernel]\n"
        "PrivateUse1     fn_PrivateUse1 [kernel]\n"
        f"AutogradPrivateUse1 {fallback}\n"
        "Meta            fn_Meta [kernel]\n"
        f"AutogradMeta    {fallback}\n")
    assert dispatcher.registrations() == (
        "\n"
        "Registered Kernels\n"
        "key             kernel\n"
        "---------------------------\n"
        "CPU             fn_CPU\n"
        "PrivateUse1     fn_PrivateUse1\n"
        "Meta            fn_Meta\n"
        "CompositeImplicitAutograd[alias] fn_CompositeImplicitAutograd\n")
    assert dispatcher.rawRegistrations() == _C._dispatch_dump("__test__::foo")
    assert dispatcher.rawRegistrations().startswith(
        "name: __test__::foo\nschema: __test__::foo(Tensor x) -> Tensor\n"
        "debug: registered at /dev/null:0\nalias analysis kind: FROM_SCHEMA\n")
    assert dispatcher.rawDispatchTable() == _C._dispatch_dump_table("__test__::foo")
    assert "\nCUDA: fn_CompositeImplicitAutograd [math kernel]\n" in dispatcher.rawDispatchTable()


def test_default_backend_and_autograd_kernels(dispatcher):
    dispatcher.register(["CPU", "CompositeExplicitAutograd", "AutogradCPU", "Autograd"])
    table = dispatcher.dispatchTable()
    assert "\nCPU             fn_CPU [kernel]\n" in table
    assert "\nAutogradCPU     fn_AutogradCPU [kernel]\n" in table
    assert "\nCUDA            fn_CompositeExplicitAutograd [default backend kernel]\n" in table
    assert "\nAutogradMeta    fn_Autograd [autograd kernel]\n" in table
    assert "registered" not in table


def test_register_refuses_what_torchs_refuses(dispatcher):
    with pytest.raises(RuntimeError, match=r"^Overriden is not allowed but found duplicates in "
                                           r"\['CPU', 'CPU'\].$"):
        dispatcher.register(["CPU", "CPU"])
    for explicit in ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"):
        with pytest.raises(RuntimeError, match=f"^Registration to both CompositeImplicitAutograd "
                                               f"and {explicit} is not allowed.$"):
            dispatcher.register([explicit, "CompositeImplicitAutograd"])
    with pytest.raises(RuntimeError, match=r"^XLA is not supported, please select a dispatch key "
                                           r"in \['CPU', 'AutogradCPU', 'CUDA', "):
        dispatcher.register(["CPU", "XLA"])
    # Nothing of a refused call is registered.
    assert "fn_" not in dispatcher.rawRegistrations()
    assert dispatcher.keys() == PythonDispatcher.runtime_keys + PythonDispatcher.alias_keys


def test_one_dispatcher_at_a_time_and_dropping_it_undoes_its_registrations():
    dispatcher = PythonDispatcher()
    dispatcher.register(["CPU"])
    with pytest.raises(RuntimeError, match=r"^Tried to register an operator \(__test__::foo"):
        PythonDispatcher()
    del dispatcher
    assert _C._dispatch_dump("__test__::foo") == ""
    assert "fn_CPU" not in PythonDispatcher().rawRegistrations()
