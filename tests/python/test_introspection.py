"""The dispatcher's introspection with torch._C's names (python/src/introspection.cpp)."""

import pytest

from opdispatch import _C


def test_dispatch_dump_shows_the_schema_and_the_kernels():
    dump = _C._dispatch_dump("aten::add.Tensor")
    assert "name: aten::add.Tensor\n" in dump
    assert "schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in dump
    assert "\nCPU: registered at " in dump
    assert _C._dispatch_dump("aten::nope") == ""


def test_dispatch_dump_shows_the_alias_analysis_kind_under_the_debug_line():
    # torch 1.13's fourth line: "alias analysis kind: FROM_SCHEMA".
    lines = _C._dispatch_dump("aten::add.Tensor").splitlines()
    assert lines[2].startswith("debug: registered at ")
    assert lines[3] == "alias analysis kind: FROM_SCHEMA"


def test_dispatch_dump_table_shows_the_computed_entries():
    table = _C._dispatch_dump_table("aten::add.Tensor")
    assert "\nCPU: registered at " in "\n" + table
    assert "AutogradCPU: " in table
    assert _C._dispatch_dump_table("aten::nope") == ""


def test_registrations_for_a_dispatch_key():
    cpu = _C._dispatch_get_registrations_for_dispatch_key("CPU")
    assert "aten::add.Tensor" in cpu
    assert cpu == sorted(cpu)
    everything = _C._dispatch_get_registrations_for_dispatch_key()
    assert set(cpu) <= set(everything)
    assert len(everything) > len(cpu)


def test_print_registrations_for_a_dispatch_key(capsys):
    _C._dispatch_print_registrations_for_dispatch_key("CPU")
    cpu = capsys.readouterr().out.split("\n")
    _C._dispatch_print_registrations_for_dispatch_key()
    everything = capsys.readouterr().out.split("\n")
    # One name a line, as the list of _dispatch_get_registrations_for_dispatch_key.
    assert cpu == _C._dispatch_get_registrations_for_dispatch_key("CPU") + [""]
    assert "aten::add.Tensor" in cpu
    assert set(cpu) < set(everything)


def test_an_unknown_dispatch_key_is_torchs_runtime_error():
    message = (r"^could not parse dispatch key: NoSuchKey; the keys are Undefined, CPU, CUDA, "
               r"PrivateUse1, PrivateUse2, PrivateUse3, Meta, Python, Functionalize, "
               r"ADInplaceOrView, .*, PythonTLSSnapshot, .*, CompositeImplicitAutograd, ")
    with pytest.raises(RuntimeError, match=message):
        _C._dispatch_get_registrations_for_dispatch_key("NoSuchKey")
    with pytest.raises(RuntimeError, match=message):
        _C._dispatch_print_registrations_for_dispatch_key("NoSuchKey")
    with pytest.raises(RuntimeError, match=message):
        _C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "NoSuchKey")
    with pytest.raises(RuntimeError, match=message):
        _C._dispatch_has_backend_fallback("NoSuchKey")


def test_has_backend_fallback():
    # The core's fallthrough on ADInplaceOrView; nothing serves Tracer unless registered.
    assert _C._dispatch_has_backend_fallback("ADInplaceOrView")
    assert not _C._dispatch_has_backend_fallback("Tracer")
    fallbacks = _C._dispatch_library("IMPL", "_", "Tracer")
    fallbacks.fallback_fallthrough()
    assert _C._dispatch_has_backend_fallback("Tracer")
    del fallbacks
    assert not _C._dispatch_has_backend_fallback("Tracer")


def test_has_kernel_for_dispatch_key():
    assert _C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "CPU")
    assert not _C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "PrivateUse1")
    with pytest.raises(RuntimeError, match="^operator aten::nope does not exist$"):
        _C._dispatch_has_kernel_for_dispatch_key("aten::nope", "CPU")


def test_invariants_and_dangling_impls():
    assert _C._dispatch_check_invariants("aten::add.Tensor") is None
    assert _C._dispatch_check_all_invariants() is None
    assert _C._dispatch_find_dangling_impls() == []
    # An operator that does not exist has no invariant to break: None, as torch (torch's
    # PythonDispatcher and test_dispatch.py check a bare "foo" before registering it).
    assert _C._dispatch_check_invariants("aten::nope") is None
    assert _C._dispatch_check_invariants("foo") is None
