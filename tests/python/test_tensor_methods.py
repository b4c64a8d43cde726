"""Tensor's methods live in its class dict, in step with the operators (Note [Tensor methods in
the class dict] in python/opdispatch/_tensor.py): Library and plugin calls add and remove them;
no __getattr__, so CPython specialises x.add(y)."""

import dis

import pytest

import opdispatch as opd
from opdispatch import _C, plugins
from opdispatch.library import Library, custom_op


def test_tensor_has_no_getattr_and_its_methods_are_in_the_class_dict():
    assert "__getattr__" not in vars(opd.Tensor)
    for name in ("add", "min", "clamp", "softmax", "relu", "sum"):
        assert type(vars(opd.Tensor)[name]) is _C._TensorMethod, name


def test_x_add_y_takes_the_specialised_method_load():
    def call(x, y):
        return x.add(y)

    x = opd.ones(2, 3)
    for _ in range(64):  # past the adaptive counter
        call(x, x)
    ops = [i.opname for i in dis.get_instructions(call, adaptive=True)]
    assert "LOAD_METHOD_NO_DICT" in ops, ops


def test_a_method_of_a_library_operator_appears_and_goes_with_it():
    x = opd.tensor([1.0, 2.0])
    assert not hasattr(x, "mthd_triple")
    with Library("mthdlib", "DEF") as lib:
        lib.define("mthd_triple(Tensor self, int k=3) -> Tensor")
        assert "mthd_triple" in vars(opd.Tensor)
        lib.impl("mthd_triple", lambda t, k: t * k, "CPU")
        assert x.mthd_triple().tolist() == [3.0, 6.0]
        assert x.mthd_triple(k=2).tolist() == [2.0, 4.0]
        assert "mthd_triple" in dir(x)
    assert "mthd_triple" not in vars(opd.Tensor)
    with pytest.raises(AttributeError, match="^'Tensor' object has no attribute 'mthd_triple'$"):
        x.mthd_triple


def test_a_custom_op_method_goes_with_destroy():
    x = opd.tensor([1.0, 2.0])

    @custom_op("mthdcustom::mthd_neg", mutates_args=())
    def neg(self: opd.Tensor) -> opd.Tensor:
        return self * -1

    try:
        assert x.mthd_neg().tolist() == [-1.0, -2.0]
    finally:
        neg._destroy()
    assert not hasattr(x, "mthd_neg")


def test_an_operator_whose_first_argument_is_not_self_is_no_method():
    with Library("mthdnoself", "DEF") as lib:
        lib.define("mthd_noself(Tensor x) -> Tensor")
        assert "mthd_noself" not in vars(opd.Tensor)
        assert not hasattr(opd.ones(1), "mthd_noself")


@pytest.mark.parametrize("name", ["_mthd_private", "linalg_mthd_solve"])
def test_names_starting_with_underscore_or_linalg_are_never_methods(name):
    x = opd.ones(2)
    with Library("mthdhidden", "DEF") as lib:
        lib.define(f"{name}(Tensor self) -> Tensor")
        lib.impl(name, lambda t: t, "CPU")
        assert getattr(opd.ops.mthdhidden, name)(x).tolist() == [1.0, 1.0]
        assert name not in vars(opd.Tensor)
        with pytest.raises(AttributeError, match=f"^'Tensor' object has no attribute '{name}'$"):
            getattr(x, name)


def test_aten_comes_before_another_namespace_and_the_other_returns_after_it():
    x = opd.tensor([1.0, 2.0])
    with Library("mthdvendor", "DEF") as vendor:
        vendor.define("mthd_both(Tensor self) -> Tensor")
        vendor.impl("mthd_both", lambda t: t + 10, "CPU")
        assert x.mthd_both().tolist() == [11.0, 12.0]
        with Library("aten", "FRAGMENT") as aten:
            aten.define("mthd_both(Tensor self) -> Tensor")
            aten.impl("mthd_both", lambda t: t + 20, "CPU")
            assert x.mthd_both().tolist() == [21.0, 22.0]
        assert x.mthd_both().tolist() == [11.0, 12.0]
    assert not hasattr(x, "mthd_both")


def test_a_class_attribute_is_never_replaced_by_an_operator_method():
    size = vars(opd.Tensor)["size"]
    with Library("mthdsize", "DEF") as lib:
        lib.define("size(Tensor self, int k) -> int")
        assert vars(opd.Tensor)["size"] is size
    assert vars(opd.Tensor)["size"] is size
    assert opd.ones(2, 3).size() == (2, 3)


def test_a_plugin_loaded_from_python_adds_its_methods_and_unload_removes_them():
    x = opd.tensor([1.0, 2.0])
    assert plugins.status("example").state == "loaded"
    assert x.scale(3.0).tolist() == [3.0, 6.0] and x.twice().tolist() == [2.0, 4.0]
    try:
        plugins.unload("example")
        assert "scale" not in vars(opd.Tensor) and "twice" not in vars(opd.Tensor)
        assert not hasattr(x, "scale") and not hasattr(x, "twice")
    finally:
        plugins.load("example")
    assert x.scale(0.5).tolist() == [0.5, 1.0] and x.twice().tolist() == [2.0, 4.0]
    assert plugins.reload("example").state == "loaded"
    assert x.twice().tolist() == [2.0, 4.0]


def test_a_cpp_registration_gets_its_method_at_the_next_ops_lookup():
    # _C._Library is the C++ Library itself: no Python synchronisation point runs. The next
    # opdispatch.ops lookup that sees a new schema generation synchronises.
    x = opd.tensor([1.0, 2.0])
    raw = _C._Library("DEF", "mthdraw", "", "t.py", 1)
    try:
        raw.define("mthd_raw(Tensor self) -> Tensor", "t.py", 2, [], "")
        opd.ops.mthdraw.mthd_raw
        assert "mthd_raw" in vars(opd.Tensor)
    finally:
        raw.reset()
    assert "mthd_raw" in vars(opd.Tensor)  # (no synchronisation point yet)
    with pytest.raises(RuntimeError, match=r"^opdispatch: operator mthdraw::mthd_raw is not "
                                           r"defined \(any more\)$"):
        x.mthd_raw()
    with pytest.raises(AttributeError):
        opd.ops.mthdraw.mthd_raw
    assert "mthd_raw" not in vars(opd.Tensor)
