"""The dispatcher's introspection with torch._C's names (python/src/introspection.cpp)."""

import pytest

from opdispatch import _C


def test_dispatch_dump_shows_the_schema_and_the_kernels():
    dump = _C._dispatch_dump("aten::add.Tensor")
    assert "name: aten::add.Tensor\n" in dump
    assert "schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in dump
    assert "\nCPU: registered at " in dump
    assert _C._dispatch_dump("aten::nope") == ""


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


def test_an_unknown_dispatch_key_is_an_error():
    with pytest.raises(ValueError, match="^Unknown dispatch key 'NoSuchKey'. Known keys: Undefined, CPU,"):
        _C._dispatch_get_registrations_for_dispatch_key("NoSuchKey")


def test_has_kernel_for_dispatch_key():
    assert _C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "CPU")
    assert not _C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", "PrivateUse1")
    with pytest.raises(RuntimeError, match="^operator aten::nope does not exist$"):
        _C._dispatch_has_kernel_for_dispatch_key("aten::nope", "CPU")


def test_invariants_and_dangling_impls():
    assert _C._dispatch_check_invariants("aten::add.Tensor") is None
    assert _C._dispatch_check_all_invariants() is None
    assert _C._dispatch_find_dangling_impls() == []
    with pytest.raises(RuntimeError, match="^operator aten::nope does not exist$"):
        _C._dispatch_check_invariants("aten::nope")
