"""The seed articles' Python examples (004 §5.3, §9.1-9.3), translated from torch to opdispatch
and run as they are written: the Library low-level API (my_relu), custom_op with register_fake
(my_gelu, weighted_sum), inspecting registrations, and the C++ operator myops::my_add of the
fixture plugin seedops called from Python."""

import os

import pytest

import opdispatch as opd
from opdispatch.library import Library, custom_op


def seedops_manifest():
    return os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "seedops", "seedops.yaml")


def test_library_low_level_api_my_relu():
    # 004 §5.3, way one.
    lib = Library("myops", "DEF")
    impl_lib = Library("myops", "IMPL", "CPU")
    try:
        lib.define("my_relu(Tensor x) -> Tensor")
        impl_lib.impl("my_relu", lambda x: x.clamp(min=0))
        x = opd.tensor([[-1.0, 2.0], [3.0, -4.0]])
        assert opd.ops.myops.my_relu(x).tolist() == [[0.0, 2.0], [3.0, 0.0]]
        assert opd._C._dispatch_has_kernel_for_dispatch_key("myops::my_relu", "CPU")
        with pytest.raises(NotImplementedError, match=r"^Could not run 'myops::my_relu' with "
                                                      r"arguments from the 'Meta' backend"):
            opd.ops.myops.my_relu(opd.empty(2, device="meta"))
    finally:
        impl_lib.close()
        lib.close()
    assert opd._C._dispatch_dump("myops::my_relu") == ""


def test_custom_op_my_gelu_with_register_fake_on_cpu_and_meta():
    # 004 §5.3, way two.
    fake_ran = []

    @custom_op("myops::my_gelu", mutates_args=())
    def my_gelu(x: opd.Tensor) -> opd.Tensor:
        return opd.gelu(x)

    try:
        @my_gelu.register_fake
        def my_gelu_fake(x: opd.Tensor) -> opd.Tensor:
            fake_ran.append(True)
            return opd.empty_like(x)

        x = opd.randn(3, 4)
        result = opd.ops.myops.my_gelu(x)
        assert result.shape == (3, 4)
        assert result.tolist() == opd.gelu(x).tolist()
        assert not fake_ran
        meta = opd.ops.myops.my_gelu(opd.empty(3, 4, device="meta"))
        assert meta.is_meta and meta.shape == (3, 4)
        assert fake_ran == [True]
        assert str(opd.ops.myops.my_gelu.default._schema) == "myops::my_gelu(Tensor x) -> Tensor"
    finally:
        my_gelu._destroy()


def test_custom_op_weighted_sum():
    # 004 §9.2: alpha * x is float * Tensor (the reflected operator).
    @custom_op("myops::weighted_sum", mutates_args=())
    def weighted_sum(x: opd.Tensor, y: opd.Tensor, alpha: float) -> opd.Tensor:
        return alpha * x + (1 - alpha) * y

    try:
        @weighted_sum.register_fake
        def weighted_sum_fake(x: opd.Tensor, y: opd.Tensor, alpha: float) -> opd.Tensor:
            return opd.empty_like(x)

        x = opd.randn(3, 4)
        y = opd.randn(3, 4)
        result = opd.ops.myops.weighted_sum(x, y, 0.7)
        assert result.tolist() == (0.7 * x + (1 - 0.7) * y).tolist()
        assert weighted_sum(x, y, 1).tolist() == x.tolist()  # an int where float is declared
        assert weighted_sum._schema == "(Tensor x, Tensor y, float alpha) -> Tensor"
        assert str(opd.ops.myops.weighted_sum.default._schema) == (
            "myops::weighted_sum(Tensor x, Tensor y, float alpha) -> Tensor")
        meta = opd.ops.myops.weighted_sum(opd.empty(3, 4, device="meta"),
                                          opd.empty(3, 4, device="meta"), 0.5)
        assert meta.is_meta and meta.shape == (3, 4)
    finally:
        weighted_sum._destroy()


def test_inspecting_add_tensor_and_its_schema():
    # 004 §9.3.
    op = opd.ops.aten.add.Tensor
    assert repr(op) == "<OpOverload(op='aten.add', overload='Tensor')>"
    assert str(op._schema) == (
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")


def test_registrations_for_the_cpu_key():
    cpu = opd._C._dispatch_get_registrations_for_dispatch_key("CPU")
    assert isinstance(cpu, list) and len(cpu[:5]) == 5
    assert "aten::add.Tensor" in cpu
    assert "aten::relu" in cpu
    assert cpu == sorted(cpu)


def test_dispatch_dump_of_add_tensor():
    dump = opd._C._dispatch_dump("aten::add.Tensor")
    lines = dump.splitlines()
    assert lines[0] == "name: aten::add.Tensor"
    assert lines[1] == ("schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) "
                        "-> Tensor")
    assert lines[2].startswith("debug: registered at manifests/native_functions.yaml:")
    assert any(line.startswith("CPU: registered at manifests/native_functions.yaml:") and
               "(plugin cpu " in line for line in lines)
    assert any(line.startswith("Autograd[alias]: registered at") for line in lines)


def test_the_cpp_my_add_plugin_called_from_python():
    # 004 §9.1: TORCH_LIBRARY's my_add with a CPU kernel, here the fixture plugin seedops.
    status = opd.plugins.load(seedops_manifest())
    try:
        assert status.name == "seedops" and status.state == "loaded"
        x = opd.tensor([1.0, 2.0, 3.0])
        y = opd.tensor([10.0, 20.0, 30.0])
        with opd.trace() as t:
            result = opd.ops.myops.my_add(x, y)
        assert result.tolist() == [11.0, 22.0, 33.0]
        assert "myops::my_add" in opd._C._dispatch_get_registrations_for_dispatch_key("CPU")
        top = [h for h in t.hops if h.op == "myops::my_add"]
        assert [(h.key, h.plugin) for h in top] == [("CPU", "seedops 1.0.0")]
        assert "seedops_plugin.cpp" in top[0].debug
    finally:
        opd.plugins.unload("seedops")
    with pytest.raises(AttributeError):
        opd.ops.myops.my_add
