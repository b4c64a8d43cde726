"""opdispatch.library: Library DEF/FRAGMENT/IMPL with define/impl/fallback/close, registrations
undone by close, with and garbage collection, Python kernels' argument and result conversion,
errors crossing both ways with the operator, key and Python registration site, custom_op with
infer_schema, register_fake and register_kernel, and a clean interpreter exit."""

import ctypes
import gc
import sys
import threading
import typing
import weakref
from typing import List, Optional, Sequence, Tuple

import pytest

import opdispatch as opd
from opdispatch import Tensor, _C
from opdispatch.library import (Library, custom_op, fallthrough_kernel, infer_schema,
                                register_fake)


def here():
    """The line after the caller's: where the registration on that next line is made."""
    return f"{__file__}:{sys._getframe(1).f_lineno + 1}"


def test_define_and_impl_with_the_registration_sites_in_the_dump():
    with Library("libsite", "DEF") as lib:
        def_site = here()
        lib.define("f(Tensor x) -> Tensor")
        impl_site = here()
        lib.impl("f", lambda x: x * 2, "CPU")
        assert opd.ops.libsite.f(opd.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
        dump = _C._dispatch_dump("libsite::f")
        assert dump.startswith("name: libsite::f\nschema: libsite::f(Tensor x) -> Tensor\n")
        assert f"\ndebug: registered at {def_site}\n" in dump
        assert f"\nCPU: registered at {impl_site} :: (none) [ boxed ]\n" in dump
    assert _C._dispatch_dump("libsite::f") == ""


def test_define_returns_the_name_and_refuses_a_duplicate():
    with Library("libdup", "DEF") as lib:
        assert lib.define("f(Tensor x) -> Tensor") == "f"
        with pytest.raises(RuntimeError, match=r"^Tried to register an operator "
                                               r"\(libdup::f\(Tensor x\) -> Tensor\) with the same "
                                               r"name and overload name multiple times"):
            lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match=r"^Only a single OPD_LIBRARY can be used to "
                                               r"register the namespace libdup"):
            Library("libdup", "DEF")


def test_define_with_an_alias_analysis_kind_as_torch_library():
    with Library("libalias", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g(Tensor x) -> Tensor", "CONSERVATIVE")
        lib.define("h(Tensor(a!) x) -> Tensor(a!)", alias_analysis="FROM_SCHEMA")

        def kind(name):
            return _C._dispatch_dump(f"libalias::{name}").splitlines()[3]

        assert kind("f") == "alias analysis kind: FROM_SCHEMA"
        assert kind("g") == "alias analysis kind: CONSERVATIVE"
        assert kind("h") == "alias analysis kind: FROM_SCHEMA"
        # torch.library offers neither PURE_FUNCTION nor anything else.
        for bad in ("PURE_FUNCTION", "bogus"):
            with pytest.raises(RuntimeError, match=f"^Invalid alias_analysis type {bad}$"):
                lib.define("k(Tensor x) -> Tensor", bad)
        # Alias annotations with CONSERVATIVE: the error torch's JIT raises, at define.
        with pytest.raises(RuntimeError) as e:
            site = here()
            lib.define("k(Tensor(a) x) -> Tensor(a)", "CONSERVATIVE")
        assert str(e.value) == (
            "In operator registration: Tried to register operator libalias::k(Tensor(a) x) -> "
            "Tensor(a) with aliasing information in the schema but without "
            f"AliasAnalysisKind::FROM_SCHEMA. (registered at {site})")
        assert _C._dispatch_dump("libalias::k") == ""


def test_define_with_tags_as_torch_library():
    with Library("libtags", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor", tags=(opd.Tag.pointwise, opd.Tag.core))
        lib.define("g(Tensor x) -> Tensor", tags=opd.Tag.inplace_view)
        lib.define("h(Tensor x) -> Tensor")
        assert opd.ops.libtags.f.default.tags == [opd.Tag.core, opd.Tag.pointwise]
        assert opd.ops.libtags.g.default.tags == [opd.Tag.inplace_view]
        assert opd.ops.libtags.h.default.tags == []
        assert "\ntags: core, pointwise\n" in _C._dispatch_dump("libtags::f")
        with pytest.raises(TypeError, match=r"^tags: expected opdispatch.Tag values, got "
                                            r"'pointwise' of type str$"):
            lib.define("k(Tensor x) -> Tensor", tags=("pointwise",))
        assert _C._dispatch_dump("libtags::k") == ""
    assert opd.ops.aten.rand.default.tags == [opd.Tag.nondeterministic_seeded]
    assert opd.Tag.pt2_compliant_tag.name == "pt2_compliant_tag"


def test_fragment_and_impl_libraries_and_the_default_key():
    with Library("libfrag", "DEF") as a, Library("libfrag", "FRAGMENT") as b:
        a.define("f(Tensor x) -> Tensor")
        b.define("g(Tensor x) -> Tensor")
        with Library("libfrag", "IMPL", "CPU") as c:
            c.impl("g", lambda x: x + 1)  # the library's key
            assert _C._dispatch_has_kernel_for_dispatch_key("libfrag::g", "CPU")
            assert opd.ops.libfrag.g(opd.tensor([1.0])).tolist() == [2.0]
            with pytest.raises(RuntimeError, match=r"^Cannot define an operator inside of a "
                                                   r"IMPL block"):
                c.define("h(Tensor x) -> Tensor")
        assert not _C._dispatch_has_kernel_for_dispatch_key("libfrag::g", "CPU")
        a.impl("f", lambda x: x * 3)  # no key: CompositeImplicitAutograd
        assert _C._dispatch_has_kernel_for_dispatch_key("libfrag::f", "CompositeImplicitAutograd")
        assert opd.ops.libfrag.f(opd.tensor([1.0])).tolist() == [3.0]
    with pytest.raises(ValueError, match=r"^Unsupported kind: BAD$"):
        Library("libfrag", "BAD")


def test_impl_refusals():
    with Library("libref", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(TypeError, match=r"^Input function is required to be a callable but "
                                            r"found type <class 'int'>$"):
            lib.impl("f", 3, "CPU")
        with pytest.raises(ValueError, match=r"^impl\(other::f\): this Library's namespace is "
                                             r"'libref'$"):
            lib.impl("other::f", lambda x: x, "CPU")
    with pytest.raises(RuntimeError, match=r"^Library\('libref', 'DEF'\) was closed$"):
        lib.impl("f", lambda x: x, "CPU")
    assert repr(lib) == "Library(kind=DEF, ns=libref) (closed)"


def test_a_with_block_undoes_its_registrations_when_it_raises():
    with pytest.raises(KeyError):
        with Library("libwith", "DEF") as lib:
            lib.define("f(Tensor x) -> Tensor")
            lib.impl("f", lambda x: x, "CPU")
            raise KeyError("out")
    assert _C._dispatch_dump("libwith::f") == ""


def test_garbage_collection_undoes_the_registrations():
    lib = Library("libgc", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    assert _C._dispatch_has_kernel_for_dispatch_key("libgc::f", "CPU")
    del lib
    gc.collect()
    assert _C._dispatch_dump("libgc::f") == ""

    cyclic = Library("libgc", "DEF")
    cyclic.define("g(Tensor x) -> Tensor")
    cyclic.me = cyclic
    del cyclic
    gc.collect()
    assert _C._dispatch_dump("libgc::g") == ""


def test_a_library_kept_alive_by_its_own_kernel_is_collected():
    # Library -> _C._Library -> (C++) the kernel -> k -> its default -> Library: a cycle the
    # collector sees through _C._Library's tp_traverse; collecting it undoes the registrations.
    lib = Library("libcycle", "DEF")
    lib.define("f(Tensor x) -> Tensor")

    def k(x, lib=lib):
        return x + 1

    lib.impl("f", k, "CPU")
    assert opd.ops.libcycle.f(opd.tensor([1.0])).tolist() == [2.0]
    kernel = weakref.ref(k)
    del lib, k
    gc.collect()
    assert kernel() is None
    assert _C._dispatch_dump("libcycle::f") == ""

    # The operator stays (another library defines it); the cyclic IMPL library's kernel goes.
    with Library("libcycle", "DEF") as defs:
        defs.define("g(Tensor x) -> Tensor")
        impl = Library("libcycle", "IMPL", "CPU")
        impl.impl("g", lambda x, impl=impl: x * 2)
        assert opd.ops.libcycle.g(opd.tensor([1.0])).tolist() == [2.0]
        del impl
        gc.collect()
        with pytest.raises(NotImplementedError, match=r"^Could not run 'libcycle::g' with "
                                                      r"arguments from the 'CPU' backend"):
            opd.ops.libcycle.g(opd.tensor([1.0]))


def test_a_cycle_through_a_fallback_is_collected():
    x = opd.tensor([1.0, 2.0])
    keys = opd.DispatchKeySet("PrivateUse1")
    lib = Library("_", "IMPL", "PrivateUse1")

    class Holder:
        def fallback(self, op, *args, **kwargs):
            return args[0] * 7

    holder = Holder()
    holder.lib = lib
    lib.fallback(holder.fallback)
    assert opd.ops.aten.add.Tensor.redispatch(keys, x, x).tolist() == [7.0, 14.0]
    alive = weakref.ref(holder)
    del lib, holder
    gc.collect()
    assert alive() is None
    with pytest.raises(NotImplementedError, match=r"^Could not run 'aten::add.Tensor' with "
                                                  r"arguments from the 'PrivateUse1' backend"):
        opd.ops.aten.add.Tensor.redispatch(keys, x, x)


def _tp_clear(obj):
    """Calls the tp_clear slot of obj's type, as the collector does (CPython's PyTypeObject
    layout: tp_clear follows tp_traverse, the 25th pointer-sized field)."""
    slots = ctypes.cast(ctypes.c_void_p(id(type(obj))), ctypes.POINTER(ctypes.c_void_p))
    clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(slots[24])  # with the GIL
    assert clear(obj) == 0


def test_a_library_cleared_by_the_collector_undoes_its_registrations_and_refuses_more():
    site = ("t.py", 1)
    raw = _C._Library("DEF", "libcleared", "", *site)
    raw.define("f(Tensor x) -> Tensor", *site, [])
    raw.impl("f", lambda x: x, "CPU", False, False, *site)
    assert _C._dispatch_has_kernel_for_dispatch_key("libcleared::f", "CPU")
    _tp_clear(raw)
    assert _C._dispatch_dump("libcleared::f") == ""
    assert raw.registration_count == 0
    message = (r"^Library\('libcleared', 'DEF'\) was cleared by the garbage collector \(it was "
               r"part of a reference cycle that nothing else reached\); its registrations were "
               r"undone$")
    with pytest.raises(RuntimeError, match=message):
        raw.define("g(Tensor x) -> Tensor", *site, [])
    with pytest.raises(RuntimeError, match=message):
        raw.impl("f", lambda x: x, "CPU", False, False, *site)
    with pytest.raises(RuntimeError, match=message):
        raw.fallback(lambda op, *a: None, False, False, *site)
    raw.reset()
    _tp_clear(raw)  # twice: nothing more to do
    del raw
    gc.collect()


def test_a_cycle_is_collected_while_cpp_threads_call_its_kernel():
    # The registration is undone while C++ threads dispatch to the kernel: each call runs it or
    # finds no kernel, and the kernel's function goes once no call can be running it.
    with Library("libcycle", "DEF") as defs:
        defs.define("t(Tensor x) -> Tensor")
        impl = Library("libcycle", "IMPL", "CPU")

        ran = threading.Event()

        def kernel(x, impl=impl):
            ran.set()
            return x + 1

        impl.impl("t", kernel)
        alive = weakref.ref(kernel)
        del impl, kernel
        results = []
        caller = threading.Thread(target=lambda: results.extend(
            _C._test_call_from_threads("libcycle::t", [opd.tensor([1.0])], 4, 300)))
        caller.start()
        assert ran.wait(10)
        while caller.is_alive():
            gc.collect()
        caller.join()
        gc.collect()
        _C._reclaim()
        gc.collect()
        assert alive() is None
        outcomes = {o for per_thread in results for o in per_thread}
        missing = {o for o in outcomes if o.startswith("error: Could not run 'libcycle::t' with "
                                                       "arguments from the 'CPU' backend")}
        assert outcomes - missing <= {"Tensor(sizes=[1], dtype=Float, device=cpu)"}, outcomes
        assert len(results) == 4 and all(len(r) == 300 for r in results)


def test_a_call_on_its_way_runs_the_function_of_a_collected_cycle_intact(python):
    # Note [Python kernels and the garbage collector]: a C++ thread has taken the kernel and
    # waits for the GIL while the collector finds the cycle, here through _C._Library alone
    # (no Python Library, whose __del__ would undo the registrations first), garbage. The
    # registration is undone in tp_finalize, before anything is cleared, so the function that
    # the call holds is not cleared (func_clear drops its closure: running it would crash).
    proc = python("""
        import ctypes, gc, sys, time
        import opdispatch as opd
        from opdispatch import _C
        from opdispatch.library import Library

        gc.disable()
        defs = Library("libgone", "DEF")
        defs.define("t(Tensor x) -> Tensor")
        ran = []

        def make():
            impl = _C._Library("IMPL", "libgone", "CPU", "t.py", 1)

            def kernel(x):
                ran.append(impl is not None)  # a closure over its own library: the cycle
                return x + 1
            impl.impl("t", kernel, "CPU", False, False, "t.py", 2)

        make()
        x = opd.tensor([1.0])
        assert opd.ops.libgone.t(x).tolist() == [2.0] and ran == [True]
        ran.clear()
        sys.setswitchinterval(60)  # this thread keeps the GIL until it waits
        # A C++ thread calls the operator: it takes the kernel and waits for the GIL, which
        # this thread keeps through a PyDLL call (ctypes releases it for the others).
        _C._test_start_threads("libgone::t", [x], 1, 1)
        ctypes.PyDLL(None).usleep(300000)
        gc.collect()
        sys.setswitchinterval(0.005)
        time.sleep(0.5)
        print(ran, _C._dispatch_dump("libgone::t").count("CPU:"))
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[True] 0"


def test_a_fallback_that_is_not_callable_is_refused_at_registration():
    with Library("_", "IMPL", "PrivateUse1") as lib:
        with pytest.raises(TypeError, match=r"^Input function is required to be a callable but "
                                            r"found type <class 'int'>$"):
            lib.fallback(5)
        assert lib._lib.registration_count == 0


def test_fallthrough_kernel_skips_its_key():
    x = opd.tensor([1.0])

    def refuse(x):
        raise AssertionError("the AutogradCPU kernel ran")

    with Library("libft", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 5, "CPU")
        lib.impl("f", refuse, "AutogradCPU")
        with pytest.raises(AssertionError, match="the AutogradCPU kernel ran"):
            opd.ops.libft.f(x)
        with Library("libft", "IMPL") as skip:
            skip.impl("f", fallthrough_kernel, "AutogradCPU")
            assert "AutogradCPU: registered at" in _C._dispatch_dump("libft::f")
            assert "[ fallthrough" in _C._dispatch_dump("libft::f")
            assert opd.ops.libft.f(x).tolist() == [5.0]
        with pytest.raises(AssertionError, match="the AutogradCPU kernel ran"):
            opd.ops.libft.f(x)


def test_a_backend_fallback_receives_the_operator_and_its_arguments():
    x = opd.tensor([1.0, 2.0])
    seen = []

    def fallback(op, *args, **kwargs):
        seen.append((op, len(args), sorted(kwargs)))
        return args[0] * 7

    keys = opd.DispatchKeySet("PrivateUse1")
    with Library("_", "IMPL", "PrivateUse1") as lib:
        lib.fallback(fallback)
        assert opd.ops.aten.add.Tensor.redispatch(keys, x, x).tolist() == [7.0, 14.0]
    assert seen == [(opd.ops.aten.add.Tensor, 2, ["alpha"])]
    with pytest.raises(NotImplementedError, match=r"^Could not run 'aten::add.Tensor' with "
                                                  r"arguments from the 'PrivateUse1' backend"):
        opd.ops.aten.add.Tensor.redispatch(keys, x, x)
    with Library("libfb", "FRAGMENT") as lib:
        with pytest.raises(RuntimeError, match=r"^fallback\(\.\.\.\): Fallback functions which "
                                               r"apply to only a single namespace"):
            lib.fallback(fallback)


def test_kernel_arguments_and_results_are_converted_by_the_schema():
    seen = {}

    def kernel(x, *, scale, n):  # kwarg-only arguments arrive as keywords
        seen.update(x=type(x), scale=scale, n=n)
        return x * scale

    with Library("libconv", "DEF") as lib:
        lib.define("f(Tensor x, *, float scale=1.0, int n=2) -> Tensor")
        lib.impl("f", kernel, "CPU")
        assert opd.ops.libconv.f(opd.tensor([1.0]), scale=3.0).tolist() == [3.0]
        assert seen == {"x": opd.Tensor, "scale": 3.0, "n": 2}
        lib.define("g(Tensor x) -> float")
        lib.impl("g", lambda x: 3, "CPU")  # an int where a float is declared
        r = opd.ops.libconv.g(opd.tensor([1.0]))
        assert type(r) is float and r == 3.0
        lib.define("h(Tensor x) -> ()")
        lib.impl("h", lambda x: None, "CPU")
        assert opd.ops.libconv.h(opd.tensor([1.0])) is None
        lib.define("two(Tensor x) -> (Tensor, Tensor)")
        lib.impl("two", lambda x: (x, x + 1), "CPU")
        a, b = opd.ops.libconv.two(opd.tensor([1.0]))
        assert (a.tolist(), b.tolist()) == ([1.0], [2.0])


def test_a_wrong_result_is_a_type_error_naming_the_operator_and_site():
    with Library("libret", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        site = here()
        lib.impl("f", lambda x: "nope", "CPU")
        with pytest.raises(TypeError, match=(
                rf"^libret::f: the Python kernel for CPU \(registered at {site}\) returned str "
                rf"for result 0, which the schema declares Tensor$")):
            opd.ops.libret.f(opd.tensor([1.0]))
        lib.define("g(Tensor x) -> ()")
        lib.impl("g", lambda x: 1, "CPU")
        with pytest.raises(TypeError, match=r"^libret::g: the Python kernel for CPU .* returned "
                                            r"int, but the schema declares no result$"):
            opd.ops.libret.g(opd.tensor([1.0]))
        lib.define("two(Tensor x) -> (Tensor, Tensor)")
        lib.impl("two", lambda x: x, "CPU")
        with pytest.raises(TypeError, match=r"^libret::two: the Python kernel for CPU .* "
                                            r"returned .*Tensor, but the schema declares 2 "
                                            r"results$"):
            opd.ops.libret.two(opd.tensor([1.0]))


def test_an_int_result_outside_int64_names_the_operator_and_site():
    with Library("libret", "DEF") as lib:
        lib.define("big(Tensor x) -> int")
        site = here()
        lib.impl("big", lambda x: 2**70, "CPU")
        with pytest.raises(RuntimeError, match=(
                rf"^libret::big: the Python kernel for CPU \(registered at {site}\) returned "
                rf"1180591620717411303424 in result 0, which does not fit in int64 \(the schema "
                rf"declares int\)$")):
            opd.ops.libret.big(opd.tensor([1.0]))
        lib.define("bigs(Tensor x) -> (Tensor, int[])")
        lib.impl("bigs", lambda x: (x, [1, -2**63 - 1]), "CPU")
        with pytest.raises(RuntimeError, match=r"^libret::bigs: the Python kernel for CPU .* "
                                               r"returned -9223372036854775809 in result 1, which "
                                               r"does not fit in int64 \(the schema declares "
                                               r"int\[\]\)$"):
            opd.ops.libret.bigs(opd.tensor([1.0]))
        lib.define("huge(Tensor x) -> Scalar")
        lib.impl("huge", lambda x: 10**5000, "CPU")  # more digits than str() may print
        with pytest.raises(RuntimeError, match=r"^libret::huge: .* returned an int of 16610 bits "
                                               r"in result 0, which does not fit in int64"):
            opd.ops.libret.huge(opd.tensor([1.0]))
        lib.define("edge(Tensor x) -> int[]")
        lib.impl("edge", lambda x: [2**63 - 1, -2**63], "CPU")
        assert opd.ops.libret.edge(opd.tensor([1.0])) == [2**63 - 1, -2**63]


def test_a_missing_kernel_is_not_implemented_error_with_the_dispatchers_text():
    with Library("libmiss", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError) as info:
            opd.ops.libmiss.f(opd.tensor([1.0]))
    assert str(info.value).startswith(
        "Could not run 'libmiss::f' with arguments from the 'CPU' backend. This could be because "
        "the operator doesn't exist for this backend, or because the plugin that provides it is "
        "not loaded. 'libmiss::f' is only available for these backends: [")


def test_the_recursion_limit_reached_as_a_python_kernel_is_entered_is_a_recursion_error(python):
    # In a subprocess: pybind11 2.10's error_already_set::what() retried without end when it
    # could not format the error at the recursion limit (a stack overflow).
    proc = python("""
        import sys
        import opdispatch as opd
        from opdispatch.library import Library
        x = opd.tensor([1.0, 2.0])
        lib = Library("librec", "DEF")
        lib.define("h(Tensor x, *, int n=2) -> Tensor")
        lib.impl("h", lambda x, *, n: x, "CPU")
        op = opd.ops.librec.h.default
        def deep(k):
            return op(x) if k == 0 else deep(k - 1)
        sys.setrecursionlimit(100)
        outcomes = set()
        for k in range(80, 101):
            try:
                deep(k)
                outcomes.add("ok")
            except RecursionError:
                outcomes.add("RecursionError")
        print(sorted(outcomes))
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "['RecursionError', 'ok']"


def test_a_kernels_exception_reaches_the_caller_as_itself_with_a_note():
    error = ValueError("bad input")

    def kernel(x):
        raise error

    with Library("libexc", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        site = here()
        lib.impl("f", kernel, "CPU")
        with pytest.raises(ValueError) as info:
            opd.ops.libexc.f(opd.tensor([1.0]))
        assert info.value is error
        assert info.value.__notes__[0] == (
            f"opdispatch: raised in the Python kernel of libexc::f for CPU, registered at {site}")
        assert len(info.value.__notes__) == 1
        # A C++ caller sees an opd::Error naming the operator, key and site.
        [[outcome]] = _C._test_call_from_threads("libexc::f", [opd.tensor([1.0])], 1, 1)
    assert outcome.startswith(f"error: libexc::f: the Python kernel for CPU (registered at "
                              f"{site}) raised ValueError: bad input")


def test_a_kernel_calling_its_own_operator_on_its_key_is_a_clear_error():
    with Library("librec", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        site = here()
        lib.impl("f", lambda x: opd.ops.librec.f(x), "CPU")
        with pytest.raises(RuntimeError, match=(
                rf"^librec::f: the Python kernel for CPU \(registered at {site}\) re-entered "
                rf"itself 64 times on one thread: it calls its own operator on the same key; "
                rf"redispatch below its key instead$")):
            opd.ops.librec.f(opd.tensor([1.0]))
        # Redispatching below the kernel's own key is fine.
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", lambda x: x * 2, "CPU")
        lib.impl("g", lambda keys, x: opd.ops.librec.g.default.redispatch(
            keys - opd.DispatchKeySet("AutogradCPU"), x) + 1, "AutogradCPU", with_keyset=True)
        assert opd.ops.librec.g(opd.tensor([1.0])).tolist() == [3.0]


def test_infer_schema_types():
    def f(x: Tensor, n: int, a: float, b: bool, s: str, o: Optional[Tensor], l: Sequence[int],
          l2: List[int], m: Optional[int], fs: Sequence[float], ol: Optional[Sequence[int]],
          ts: Sequence[Optional[Tensor]], dt: opd.dtype = opd.float32) -> List[Tensor]:
        ...
    assert infer_schema(f, mutates_args=()) == (
        "(Tensor x, SymInt n, float a, bool b, str s, Tensor? o, SymInt[] l, SymInt[] l2, "
        "SymInt? m, float[] fs, SymInt[]? ol, Tensor?[] ts, ScalarType dt=float32) -> Tensor[]")
    assert infer_schema(f, mutates_args=("x",)).startswith("(Tensor(a0!) x, SymInt n,")


def test_infer_schema_defaults_keyword_only_and_returns():
    def f(x: Tensor, y: Tensor, n: int = 3, a: float = 1.5, b: bool = True,
          o: Optional[Tensor] = None, *, k: int = 0) -> None:
        ...
    assert infer_schema(f, mutates_args=("y",)) == (
        "(Tensor x, Tensor(a1!) y, SymInt n=3, float a=1.5, bool b=True, Tensor? o=None, *, "
        "SymInt k=0) -> ()")

    def g(x: Tensor) -> Tuple[Tensor, Tensor]:
        ...
    assert infer_schema(g, mutates_args=()) == "(Tensor x) -> (Tensor, Tensor)"
    assert infer_schema(g, mutates_args="unknown") == "(Tensor(a0!) x) -> (Tensor, Tensor)"
    assert infer_schema(g, mutates_args=(), op_name="foo") == "foo(Tensor x) -> (Tensor, Tensor)"


def test_infer_schema_writes_a_str_default_as_torch():
    def f(x: Tensor, s: str = "hi") -> Tensor:
        ...
    assert infer_schema(f, mutates_args=()) == '(Tensor x, str s="hi") -> Tensor'


def _infer_error(fn, mutates_args=()):
    with pytest.raises(ValueError) as info:
        infer_schema(fn, mutates_args=mutates_args)
    return str(info.value)


def test_infer_schema_refusals_are_torchs_texts():
    # torch.library.infer_schema's (torch 2.4+) texts: what, then the signature.
    def unannotated(x) -> Tensor:
        ...

    def no_return(x: Tensor, y: int):
        ...

    def f(x: Tensor, n: int) -> Tensor:
        ...
    assert _infer_error(lambda *args: None) == (
        "infer_schema(func): We do not support positional-only args, varargs, or varkwargs. "
        "Got func with signature (*args))")
    assert "varkwargs" in _infer_error(lambda **kwargs: None)
    assert "varargs" in _infer_error(lambda x, /: None)
    assert _infer_error(unannotated) == (
        "infer_schema(func): Parameter x must have a type annotation. Got func with signature "
        "(x) -> opdispatch.Tensor)")
    assert _infer_error(no_return) == (
        "infer_schema(func): No return type annotation was provided. Please add one. Got func "
        "with signature (x: opdispatch.Tensor, y: int))")
    assert _infer_error(f, {"n"}).startswith(
        "infer_schema(func): Parameter n is in mutable_args but only Tensors or collections of "
        "Tensors can be mutated Got func with signature")
    assert _infer_error(f, ("zz",)).startswith(
        "infer_schema(func): {'zz'} in mutates_args were not found in the custom op's "
        "signature. mutates_args should contain the names of all args that the custom op "
        "mutates, or just the string 'unknown' if you don't know. Got func")
    with pytest.raises(ValueError, match=r"^mutates_args must either be a sequence of the names "
                                         r"of the arguments that are mutated or the string "
                                         r"'unknown'. $"):
        infer_schema(f, mutates_args="x")


def test_infer_schema_refuses_unsupported_types_as_torch():
    def wrong(x: dict) -> Tensor:
        ...

    def optional_ints(x: Tensor, y: List[Optional[int]]) -> Tensor:
        ...

    def pair(x: Tensor, y: Tuple[int, int]) -> Tensor:
        ...

    def mixed_pair(x: Tensor, y: Tuple[int, float]) -> Tensor:
        ...

    def variadic(x: Tensor) -> Tuple[Tensor, ...]:
        ...

    def optional_return(x: Tensor) -> Optional[Tensor]:
        ...

    def bad_string(x: Tensor) -> "list[_NoSuchType]":  # noqa: F821
        ...

    def bad_default(x: Tensor, y: int = [1]) -> Tensor:  # noqa: B006
        ...
    assert _infer_error(wrong).startswith(
        "infer_schema(func): Parameter x has unsupported type <class 'dict'>. The valid types "
        "are: dict_keys([<class 'opdispatch.Tensor'>, typing.Optional[opdispatch.Tensor], ")
    assert "Parameter y has unsupported type typing.List[typing.Optional[int]]. The valid" in (
        _infer_error(optional_ints))
    assert ("Parameter y has unsupported type typing.Tuple[int, int]. We do not support Tuple "
            "inputs in schema. As a workaround, please try to use List instead. For example, "
            "list[int].\n\nThe valid types are: dict_keys([") in _infer_error(pair)
    assert ("please try to use List instead. \n\nThe valid types are"
            in _infer_error(mixed_pair))
    assert _infer_error(variadic).startswith(
        "infer_schema(func): Return has unsupported type typing.Tuple[opdispatch.Tensor, ...]. "
        "The valid types are: {<class 'opdispatch.Tensor'>: 'Tensor', ")
    assert "Return has unsupported type typing.Optional[opdispatch.Tensor]." in (
        _infer_error(optional_return))
    assert _infer_error(bad_string).startswith(
        "infer_schema(func): Unsupported type annotation list[_NoSuchType]. It is not a type.")
    assert _infer_error(bad_default).startswith(
        "infer_schema(func): Parameter y has an unsupported default value type <class 'list'>. "
        "Please file an issue on GitHub so we can prioritize this.")


def test_infer_schema_number_devices_dtypes_and_string_annotations():
    assert opd.types.Number == typing.Union[int, float, bool]

    def b(x: Tensor, y: int, z: bool, a: float, b: opd.dtype, c: opd.device,
          d: opd.types.Number, e: Sequence[opd.types.Number],
          f: Optional[opd.types.Number]) -> Tuple[Tensor, int, float, bool, opd.types.Number]:
        ...
    assert infer_schema(b, mutates_args=()) == (
        "(Tensor x, SymInt y, bool z, float a, ScalarType b, Device c, Scalar d, Scalar[] e, "
        "Scalar? f) -> (Tensor, SymInt, float, bool, Scalar)")

    # torch writes a device default as its string: Device i="cpu:0".
    def h(x: Tensor, a: Optional[int] = None, b: float = 3.14, f: opd.dtype = opd.float,
          g: opd.dtype = opd.int, i: opd.device = opd.device("cpu:0"),
          j: opd.device = "cpu") -> None:
        ...
    assert infer_schema(h, mutates_args=()) == (
        '(Tensor x, SymInt? a=None, float b=3.14, ScalarType f=float32, ScalarType g=int32, '
        'Device i="cpu:0", Device j="cpu") -> ()')

    def strings(x: "Tensor", n: "list[int]", t: List["Tensor"]) -> "List[Tensor]":
        ...
    assert infer_schema(strings, mutates_args=()) == (
        "(Tensor x, SymInt[] n, Tensor[] t) -> Tensor[]")
    assert infer_schema(strings, mutates_args="unknown") == (
        "(Tensor(a0!) x, SymInt[] n, Tensor(a2!)[] t) -> Tensor[]")


def test_custom_op_with_scalar_and_device_defaults_is_callable():
    got = []

    @custom_op("libco::numdev", mutates_args=())
    def numdev(x: Tensor, s: opd.types.Number = 2, d: opd.device = opd.device("cpu:0"),
               e: opd.device = "cpu") -> Tensor:
        got.append((s, d, e))
        return x * s

    try:
        assert str(opd.ops.libco.numdev.default._schema) == (
            'libco::numdev(Tensor x, Scalar s=2, Device d="cpu:0", Device e="cpu") -> Tensor')
        assert numdev(opd.ones(1)).tolist() == [2.0]
        assert numdev(opd.ones(1), 0.5).tolist() == [0.5]
        assert got[0] == (2, opd.device("cpu:0"), opd.device("cpu"))
        assert got[1][0] == 0.5
    finally:
        numdev._destroy()


@pytest.mark.parametrize("default", [
    'a"b\\c', "it's", "line\nbreak\ttab\rcr", "\x00\x01\x1f\x7f", "\\", '"', "",
    "caf\u00e9 \u2713 \U0001F600", "\\x41 \\101 \\n"])
def test_custom_op_str_default_with_quotes_and_escapes_round_trips(default):
    # infer_schema escapes the default, so that the schema parses and the kernel gets it intact.
    got = []

    def escaped(x: Tensor, s: str = default) -> Tensor:
        got.append(s)
        return x.clone()

    op = custom_op("libco::escaped", escaped, mutates_args=())
    try:
        op(opd.ones(1))
        opd.ops.libco.escaped(opd.ones(1), s=default)
        assert got == [default, default]
    finally:
        op._destroy()


def test_custom_op_with_register_fake_runs_on_cpu_and_meta():
    fake_calls = []

    @custom_op("libco::twice", mutates_args=())
    def twice(x: Tensor) -> Tensor:
        return x * 2

    try:
        @register_fake(twice)
        def _(x):
            fake_calls.append(x.device.type)
            return opd.empty_like(x)

        assert str(opd.ops.libco.twice.default._schema) == "libco::twice(Tensor x) -> Tensor"
        assert twice(opd.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
        assert opd.ops.libco.twice(opd.tensor([3.0])).tolist() == [6.0]
        assert fake_calls == []
        m = twice(opd.empty(2, 3, device="meta"))
        assert fake_calls == ["meta"]
        assert m.device.type == "meta" and m.shape == (2, 3)
    finally:
        twice._destroy()
    assert _C._dispatch_dump("libco::twice") == ""


def test_custom_op_with_tags():
    @custom_op("libtagop::twice", mutates_args=(), tags=(opd.Tag.pointwise,))
    def twice(x: Tensor) -> Tensor:
        return x * 2

    try:
        assert opd.ops.libtagop.twice.default.tags == [opd.Tag.pointwise]
        assert twice(opd.tensor([1.0])).tolist() == [2.0]
    finally:
        twice._destroy()


def test_a_custom_op_stays_defined_when_its_def_is_collected():
    # As torch.library's custom_op: the operator lives in a registry, not in the CustomOpDef,
    # so dropping the decorated name (a cycle through its autograd kernel) keeps it defined.
    @custom_op("libkeep::inc", mutates_args=())
    def inc(x: Tensor) -> Tensor:
        return x + 1

    ref = weakref.ref(inc)
    del inc
    gc.collect()
    try:
        assert ref() is not None
        assert opd.ops.libkeep.inc(opd.tensor([1.0])).tolist() == [2.0]
    finally:
        ref()._destroy()
    assert _C._dispatch_dump("libkeep::inc") == ""


def test_defining_a_custom_op_again_replaces_it_and_destroy_keeps_the_newer():
    @custom_op("libkeep::f", mutates_args=())
    def first(x: Tensor) -> Tensor:
        return x + 1

    @custom_op("libkeep::f", mutates_args=())
    def second(x: Tensor, k: int = 10) -> Tensor:
        return x + k

    try:
        assert str(opd.ops.libkeep.f.default._schema) == (
            "libkeep::f(Tensor x, SymInt k=10) -> Tensor")
        assert opd.ops.libkeep.f(opd.tensor([1.0])).tolist() == [11.0]
        first._destroy()  # already replaced: it must not take the newer definition with it
        assert opd.ops.libkeep.f(opd.tensor([1.0])).tolist() == [11.0]
    finally:
        second._destroy()
    assert _C._dispatch_dump("libkeep::f") == ""


def test_custom_op_mutating_an_argument():
    @custom_op("libco::inc", mutates_args=("x",))
    def inc(x: Tensor) -> None:
        x.add_(1)

    try:
        assert str(opd.ops.libco.inc.default._schema) == "libco::inc(Tensor(a0!) x) -> ()"
        t = opd.tensor([1.0, 2.0])
        assert inc(t) is None
        assert t.tolist() == [2.0, 3.0]
    finally:
        inc._destroy()


def test_register_kernel_for_cpu():
    @custom_op("libco::cpu_only", mutates_args=(), device_types="cpu")
    def cpu_only(x: Tensor) -> Tensor:
        return x + 1

    try:
        assert _C._dispatch_has_kernel_for_dispatch_key("libco::cpu_only", "CPU")
        assert cpu_only(opd.tensor([1.0])).tolist() == [2.0]
        with pytest.raises(NotImplementedError, match=r"^Could not run 'libco::cpu_only' with "
                                                      r"arguments from the 'Meta' backend"):
            cpu_only(opd.empty(1, device="meta"))
        cpu_only.register_kernel("cpu", lambda x: x + 10)
        assert cpu_only(opd.tensor([1.0])).tolist() == [11.0]
    finally:
        cpu_only._destroy()


def test_interpreter_exit_with_live_registrations_is_clean(python):
    proc = python("""
        import opdispatch as opd
        from opdispatch import Tensor
        from opdispatch.library import Library, custom_op
        keep = opd.ones(2)
        lib = Library("exitops", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x + keep, "CPU")
        cycle = Library("exitops", "FRAGMENT")
        cycle.me = cycle

        @custom_op("exitops::g", mutates_args=())
        def g(x: Tensor) -> Tensor:
            return x * 2

        @g.register_fake
        def _(x):
            return opd.empty_like(x)

        assert opd.ops.exitops.f(keep).tolist() == [2.0, 2.0]
        assert g(keep).tolist() == [2.0, 2.0]
        over = Library("aten", "IMPL", "CPU")
        over.impl("add.Tensor", lambda a, b, *, alpha: a)
        assert (keep + keep).tolist() == [1.0, 1.0]
        print("done")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert "Traceback" not in proc.stderr
    assert "Exception ignored" not in proc.stderr


def test_a_cpp_thread_calling_a_python_kernel_after_shutdown_began_gets_an_error(python):
    proc = python("""
        import opdispatch as opd
        from opdispatch.library import Library
        lib = Library("exitthreads", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
        opd._C._begin_shutdown()
        for outcomes in opd._C._test_call_from_threads("exitthreads::f", [opd.ones(1)], 4, 5):
            for o in outcomes:
                print(o)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 20
    for line in lines:
        assert line.startswith("error: exitthreads::f: the Python kernel for CPU (registered at "
                               "<string>:")
        assert "the Python interpreter is shutting down" in line
