"""_C._dispatch_library, torch._C's testing handle (python/src/dispatch_library.cpp): its
methods and their arguments, the C++ test kernels and the dumps they make, alias analysis kinds,
errors, registrations undone with the handle, and each method all or nothing."""

import itertools

import pytest

import opdispatch as opd
from opdispatch import _C

# torch 1.13's dir(torch._C._dispatch_library("FRAGMENT", "foo", "")), without the dunders.
TORCH_METHODS = ["def_", "def_legacy", "def_name_t_t", "def_schema_t_t", "define",
                 "fallback_fallthrough", "impl", "impl_t_t", "impl_tt_t"]

_namespaces = itertools.count()


def fresh_namespace():
    """A namespace of its own per use, as torch's test_dispatch.py gives each run."""
    return f"dispatch_library{next(_namespaces)}"


def test_the_method_set_and_argument_names_are_torchs():
    handle = _C._dispatch_library("FRAGMENT", fresh_namespace(), "")
    assert sorted(m for m in dir(handle) if not m.startswith("__")) == TORCH_METHODS
    assert ("(kind: str, name: str, dispatch: str, file: str = '/dev/null', linenum: int = 0)"
            in _C._dispatch_library.__doc__)
    docs = {m: getattr(handle, m).__doc__.splitlines()[0] for m in TORCH_METHODS}
    assert "(self: object, schema: str, alias: str = '') -> object" in docs["def_"]
    assert "(self: object, schema: str) -> object" in docs["def_legacy"]
    assert ("(self: object, name: str, dispatch: str = '', debug: str = 'default_def_name_t_t')"
            " -> object") in docs["def_name_t_t"]
    assert ("(self: object, name: str, dispatch: str = '', alias: str = '', debug: str = "
            "'default_def_schema_t_t') -> object") in docs["def_schema_t_t"]
    assert "(self: object, schema: str, alias_analysis: str = '') -> str" in docs["define"]
    assert ("(self: object, name: str, dispatch: str = '', debug: str = 'impl_t_t') -> object"
            in docs["impl_t_t"])
    assert ("(self: object, name: str, dispatch: str = '', debug: str = '') -> object"
            in docs["impl_tt_t"])
    assert "(self: object, name: str, dispatch: str, func: object) -> None" in docs["impl"]
    assert "(self: object, dispatch: str = '') -> object" in docs["fallback_fallthrough"]


def test_def_only_dumps_as_torch():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    assert handle.def_("foo(Tensor x, Tensor y) -> Tensor") is handle
    assert _C._dispatch_dump(f"{ns}::foo") == (
        f"name: {ns}::foo\n"
        f"schema: {ns}::foo(Tensor x, Tensor y) -> Tensor\n"
        "debug: registered at /dev/null:0\n"
        "alias analysis kind: FROM_SCHEMA\n")


def test_def_and_identity_kernels_on_every_kind_of_key():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "", "t.py", 7)
    handle.def_("foo(Tensor x) -> Tensor")
    handle.impl_t_t("foo")
    handle.impl_t_t("foo", dispatch="CPU")
    handle.impl_t_t("foo", dispatch="Autograd")
    handle.impl_t_t("foo", "AutogradCPU", debug="fn_autogradcpu")
    kernel = " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n"
    assert _C._dispatch_dump(f"{ns}::foo") == (
        f"name: {ns}::foo\n"
        f"schema: {ns}::foo(Tensor x) -> Tensor\n"
        "debug: registered at t.py:7\n"
        "alias analysis kind: FROM_SCHEMA\n"
        "CPU: impl_t_t" + kernel +
        "AutogradCPU: fn_autogradcpu" + kernel +
        "Autograd[alias]: impl_t_t" + kernel +
        "CompositeImplicitAutograd[alias]: impl_t_t" + kernel)
    table = _C._dispatch_dump_table(f"{ns}::foo")
    assert "\nCPU: impl_t_t [kernel]\n" in table
    assert "\nAutogradCPU: fn_autogradcpu [kernel]\n" in table
    # CompositeImplicitAutograd comes before Autograd (Note [Kernel precedence]).
    assert "\nAutogradCUDA: impl_t_t [math kernel]\n" in table
    assert "\nCUDA: impl_t_t [math kernel]\n" in table
    # The kernels are real: the identity returns its argument (the same storage).
    x = opd.tensor([1.0, 2.0])
    assert getattr(opd.ops, ns).foo(x).data_ptr() == x.data_ptr()
    with opd.no_grad():
        assert getattr(opd.ops, ns).foo(opd.empty(2, device="meta")).device.type == "meta"


def test_impl_tt_t_without_debug_names_the_site_and_returns_its_first_argument():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.def_("bar(Tensor x, Tensor y) -> Tensor")
    assert handle.impl_tt_t("bar", "CPU") is handle
    assert (f"\nCPU: registered at /dev/null:0 :: (Tensor _0, Tensor _1) -> Tensor _0 "
            f"[ boxed unboxed ]\n") in _C._dispatch_dump(f"{ns}::bar")
    x, y = opd.tensor([1.0]), opd.tensor([2.0])
    assert getattr(opd.ops, ns).bar(x, y).data_ptr() == x.data_ptr()


def test_impl_only_operator():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.impl_t_t("foo", "CPU")
    assert _C._dispatch_dump(f"{ns}::foo") == (
        f"name: {ns}::foo\nschema: (none)\n"
        "CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n")
    assert _C._dispatch_find_dangling_impls() == [_C._dispatch_dump(f"{ns}::foo")]
    del handle
    assert _C._dispatch_find_dangling_impls() == []


def test_alias_analysis_kinds():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.def_("a(Tensor x) -> Tensor", alias="PURE_FUNCTION")
    handle.def_("b(Tensor x) -> Tensor", "CONSERVATIVE")
    handle.def_("c(Tensor x) -> Tensor", alias="FROM_SCHEMA")
    handle.def_legacy("d(Tensor x) -> Tensor")
    handle.def_("e(Tensor(a!) x) -> Tensor(a!)")

    def kind(name):
        return _C._dispatch_dump(f"{ns}::{name}").splitlines()[3]

    assert kind("a") == "alias analysis kind: PURE_FUNCTION"
    assert kind("b") == "alias analysis kind: CONSERVATIVE"
    assert kind("c") == "alias analysis kind: FROM_SCHEMA"
    assert kind("d") == "alias analysis kind: CONSERVATIVE (default)"
    assert kind("e") == "alias analysis kind: FROM_SCHEMA"
    with pytest.raises(RuntimeError, match=r'^could not parse bogus; the alias analysis kinds '
                                           r'are CONSERVATIVE, FROM_SCHEMA and PURE_FUNCTION '
                                           r'\("" for FROM_SCHEMA\)$'):
        handle.def_("f(Tensor x) -> Tensor", alias="bogus")
    # What torch's JIT says of an aliasing schema with another kind, said at the def.
    for alias in ("PURE_FUNCTION", "CONSERVATIVE"):
        with pytest.raises(RuntimeError) as e:
            handle.def_("f(Tensor(a!) x) -> Tensor(a!)", alias=alias)
        assert str(e.value) == (
            f"In operator registration: Tried to register operator {ns}::f(Tensor(a!) x) -> "
            "Tensor(a!) with aliasing information in the schema but without "
            "AliasAnalysisKind::FROM_SCHEMA. (registered at /dev/null:0)")
    with pytest.raises(RuntimeError, match=r"with aliasing information in the schema"):
        handle.def_legacy("f(Tensor(a) x) -> Tensor(a)")
    assert _C._dispatch_dump(f"{ns}::f") == ""


def test_defs_that_differ_only_in_alias_kind_are_duplicates():
    ns = fresh_namespace()
    first = _C._dispatch_library("FRAGMENT", ns, "")
    first.def_("foo(Tensor x) -> Tensor", alias="PURE_FUNCTION")
    for define in (lambda h: h.def_legacy("foo(Tensor x) -> Tensor"),
                   lambda h: h.def_("foo(Tensor x) -> Tensor", alias="CONSERVATIVE")):
        with pytest.raises(RuntimeError) as e:
            define(_C._dispatch_library("FRAGMENT", ns, ""))
        assert str(e.value) == (
            f"Tried to register an operator ({ns}::foo(Tensor x) -> Tensor) with the same name "
            "and overload name multiple times. Each overload's schema should only be registered "
            "with a single call to def(). Duplicate registration: registered at /dev/null:0. "
            "Original registration: registered at /dev/null:0")
    assert _C._dispatch_dump(f"{ns}::foo").splitlines()[3] == \
        "alias analysis kind: PURE_FUNCTION"


def test_define_returns_the_name_as_written_without_the_overload():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    assert handle.define("h(Tensor x) -> Tensor") == "h"
    assert handle.define(f"{ns}::i.ov(Tensor x) -> Tensor", "CONSERVATIVE") == f"{ns}::i"
    assert _C._dispatch_dump(f"{ns}::i.ov").splitlines()[3] == "alias analysis kind: CONSERVATIVE"


def test_def_name_t_t_infers_the_schema_and_is_conservative():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.def_name_t_t("foo")
    handle.def_name_t_t("bar", dispatch="CPU", debug="fn_cpu")
    assert _C._dispatch_dump(f"{ns}::foo") == (
        f"name: {ns}::foo\n"
        f"schema: {ns}::foo(Tensor _0) -> Tensor _0\n"
        "debug: registered at /dev/null:0\n"
        "alias analysis kind: CONSERVATIVE\n"
        "CompositeImplicitAutograd[alias]: default_def_name_t_t :: (Tensor _0) -> Tensor _0 "
        "[ boxed unboxed ]\n")
    assert "\nCPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n" in \
        _C._dispatch_dump(f"{ns}::bar")


def test_def_schema_t_t_is_all_or_nothing():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.def_schema_t_t("foo(Tensor x) -> Tensor", alias="PURE_FUNCTION")
    dump = _C._dispatch_dump(f"{ns}::foo")
    assert "\nalias analysis kind: PURE_FUNCTION\n" in dump
    assert ("\nCompositeImplicitAutograd[alias]: default_def_schema_t_t :: (Tensor _0) -> "
            "Tensor _0 [ boxed unboxed ]\n") in dump
    # The kernel does not fit the schema: the def made first is undone.
    with pytest.raises(RuntimeError) as e:
        handle.def_schema_t_t("bar(Tensor x, Tensor y) -> Tensor")
    assert str(e.value) == (
        "Inferred operator schema for a C++ kernel function doesn't match the expected function "
        f"schema.\n  operator: {ns}::bar\n  expected schema: {ns}::bar(Tensor x, Tensor y) -> "
        "Tensor\n    registered at /dev/null:0\n  inferred schema: (Tensor _0) -> Tensor _0\n"
        "    default_def_schema_t_t\n  reason: The number of arguments is different. 2 vs 1.")
    assert _C._dispatch_dump(f"{ns}::bar") == ""
    # So is a key the library's contradicts.
    keyed = _C._dispatch_library("FRAGMENT", ns, "CPU")
    with pytest.raises(RuntimeError, match=r"^Explicitly provided dispatch key \(Meta\) is "
                                           r"inconsistent with the dispatch key of the enclosing "
                                           r"FRAGMENT block \(CPU\)"):
        keyed.def_name_t_t("baz", dispatch="Meta")
    assert _C._dispatch_dump(f"{ns}::baz") == ""


def test_a_kernel_that_does_not_fit_the_def():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.def_("foo(Tensor x, Tensor y) -> Tensor")
    with pytest.raises(RuntimeError, match=r"inferred schema: \(Tensor _0\) -> Tensor _0\n"
                                           r"    impl_t_t\n  reason: The number of arguments "
                                           r"is different. 2 vs 1.$"):
        handle.impl_t_t("foo")
    assert "impl_t_t" not in _C._dispatch_dump(f"{ns}::foo")


def test_impl_registers_a_python_function():
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.def_("foo(Tensor x) -> Tensor")
    assert handle.impl("foo", "CPU", lambda x: x * 3) is None
    assert "\nCPU: registered at /dev/null:0 :: (none) [ boxed ]\n" in \
        _C._dispatch_dump(f"{ns}::foo")
    assert getattr(opd.ops, ns).foo(opd.tensor([1.0, 2.0])).tolist() == [3.0, 6.0]


def test_impl_refuses_a_function_that_cannot_be_called():
    # torch 1.13's handle takes it and fails at the first call; refused at registration here,
    # with torch.library's TypeError, as Library.impl refuses it.
    ns = fresh_namespace()
    handle = _C._dispatch_library("FRAGMENT", ns, "")
    handle.def_("foo(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match=r"^Input function is required to be a callable but "
                                        r"found type <class 'int'>$"):
        handle.impl("foo", "CPU", 5)
    assert "\nCPU:" not in _C._dispatch_dump(f"{ns}::foo")


def test_fallback_fallthrough_and_a_second_one():
    handle = _C._dispatch_library("IMPL", "_", "PrivateUse1")
    assert handle.fallback_fallthrough() is handle
    assert _C._dispatch_has_backend_fallback("PrivateUse1")
    with pytest.raises(RuntimeError) as e:
        handle.fallback_fallthrough()
    assert str(e.value) == (
        "Tried to register multiple backend fallbacks for the same dispatch key PrivateUse1; "
        "previous registration registered at /dev/null:0, new registration registered at "
        "/dev/null:0")
    with pytest.raises(RuntimeError, match=r"^fallback_fallthrough\(CPU\): a fallback is "
                                           r"registered to its library's key, which is "
                                           r"PrivateUse1; make the library with "
                                           r'_dispatch_library\("IMPL", "_", "CPU"\)$'):
        handle.fallback_fallthrough("CPU")
    del handle
    assert not _C._dispatch_has_backend_fallback("PrivateUse1")


def test_dropping_the_handle_undoes_its_registrations():
    ns = fresh_namespace()
    handle = _C._dispatch_library("DEF", ns, "")
    handle.def_("foo(Tensor x) -> Tensor").impl_t_t("foo", "CPU")
    cpu = _C._dispatch_library("IMPL", ns, "Meta")
    cpu.impl_t_t("foo")
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "Meta")
    del cpu
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "Meta")
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CPU")
    with pytest.raises(RuntimeError, match=f"^Only a single OPD_LIBRARY can be used to register "
                                           f"the namespace {ns}"):
        _C._dispatch_library("DEF", ns, "")
    del handle
    assert _C._dispatch_dump(f"{ns}::foo") == ""
    _C._dispatch_library("DEF", ns, "")  # the namespace is free again


def test_parse_errors_are_torchs():
    with pytest.raises(RuntimeError, match=r"^could not parse BAD; the library kinds are DEF, "
                                           r"FRAGMENT and IMPL$"):
        _C._dispatch_library("BAD", fresh_namespace(), "")
    with pytest.raises(RuntimeError, match=r"^could not parse dispatch key: bogus; the keys are "):
        _C._dispatch_library("IMPL", fresh_namespace(), "bogus")
    handle = _C._dispatch_library("FRAGMENT", fresh_namespace(), "")
    for register in (lambda: handle.impl_t_t("foo", "bogus"),
                     lambda: handle.impl_tt_t("foo", "bogus"),
                     lambda: handle.impl("foo", "bogus", lambda x: x),
                     lambda: handle.def_name_t_t("foo", "bogus"),
                     lambda: handle.def_schema_t_t("foo(Tensor x) -> Tensor", "bogus"),
                     lambda: handle.fallback_fallthrough("bogus")):
        with pytest.raises(RuntimeError, match=r"^could not parse dispatch key: bogus; "):
            register()


def test_library_rules_hold():
    ns = fresh_namespace()
    impl = _C._dispatch_library("IMPL", ns, "CPU")
    with pytest.raises(RuntimeError, match=r"^Cannot define an operator inside of a IMPL block"):
        impl.def_("foo(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=r"^Explicitly provided dispatch key \(Meta\) is "
                                           r"inconsistent"):
        impl.impl_t_t("foo", "Meta")
    with pytest.raises(RuntimeError, match=r"^fallback\(\.\.\.\): Fallback functions which apply "
                                           r"to only a single namespace"):
        _C._dispatch_library("FRAGMENT", ns, "").fallback_fallthrough()
    assert _C._dispatch_dump(f"{ns}::foo") == ""


def test_interpreter_exit_with_live_handles_is_clean(python):
    # Handles still alive at exit, one with a Python kernel, are undone as the module goes.
    proc = python("""
        import opdispatch as opd
        from opdispatch import _C
        from opdispatch._python_dispatcher import PythonDispatcher
        handle = _C._dispatch_library("FRAGMENT", "dispatch_library_exit", "")
        handle.def_("foo(Tensor x) -> Tensor")
        handle.impl("foo", "CPU", lambda x: x * 2)
        fallbacks = _C._dispatch_library("IMPL", "_", "Tracer")
        fallbacks.fallback_fallthrough()
        dispatcher = PythonDispatcher()
        dispatcher.register(["CPU"])
        print(opd.ops.dispatch_library_exit.foo(opd.ones(2)).tolist())
    """)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "[2.0, 2.0]\n", "")
