"""opdispatch.testing: override_kernel, scoped_plugin, count_calls, assert_no_dangling_impls and
the pytest plugin that checks every test for new dangling impls and broken invariants."""

import os
import subprocess
import sys
import textwrap

import pytest

import opdispatch as opd
from opdispatch import _C
from opdispatch.library import Library
from opdispatch.testing import (assert_no_dangling_impls, count_calls, override_kernel,
                                scoped_plugin)


def good_manifest():
    return os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "good_v1", "good.yaml")


def test_override_kernel_serves_inside_and_the_previous_one_comes_back():
    x = opd.tensor([1.0, 2.0])
    before = _C._dispatch_dump("aten::add.Tensor")
    with override_kernel("aten::add.Tensor", "CPU", lambda a, b, *, alpha: a * 10) as fn:
        assert (x + x).tolist() == [10.0, 20.0]
        assert fn(x, x, alpha=1).tolist() == [10.0, 20.0]
        assert "test_testing.py" in _C._dispatch_dump("aten::add.Tensor")
    assert (x + x).tolist() == [2.0, 4.0]
    assert _C._dispatch_dump("aten::add.Tensor") == before


def test_override_kernel_nests():
    x = opd.tensor([1.0])
    with override_kernel(opd.ops.aten.add.Tensor, "CPU", lambda a, b, *, alpha: a * 10):
        with override_kernel("aten::add.Tensor", "CPU", lambda a, b, *, alpha: a * 100):
            assert (x + x).tolist() == [100.0]
        assert (x + x).tolist() == [10.0]
    assert (x + x).tolist() == [2.0]


def test_override_kernel_restores_when_the_block_raises():
    x = opd.tensor([1.0])
    with pytest.raises(KeyError):
        with override_kernel("aten::add.Tensor", "CPU", lambda a, b, *, alpha: a * 10):
            raise KeyError("out")
    assert (x + x).tolist() == [2.0]


def test_override_kernel_of_a_python_registered_operator():
    x = opd.tensor([1.0])
    with Library("tstov", "DEF") as lib:
        lib.define("f(Tensor x, int n) -> Tensor")
        lib.impl("f", lambda x, n: x * n, "CPU")
        with override_kernel("tstov::f", "CPU", lambda x, n: x - n):
            assert opd.ops.tstov.f(x, 3).tolist() == [-2.0]
        assert opd.ops.tstov.f(x, 3).tolist() == [3.0]


def test_override_kernel_refuses_an_undefined_operator():
    with pytest.raises(ValueError, match=(
            r"^override_kernel: operator aten::no_such_op is not defined; define it \(or load "
            r"the plugin that does\) before overriding one of its kernels$")):
        with override_kernel("aten::no_such_op", "CPU", lambda x: x):
            pass
    with pytest.raises(ValueError, match=r"^override_kernel: 'relu' is not an operator name; "
                                         r"expected 'ns::op' or 'ns::op.overload'$"):
        with override_kernel("relu", "CPU", lambda x: x):
            pass
    with pytest.raises(ValueError, match=r"^override_kernel: aten.add has several overloads; "
                                         r"name one \("):
        with override_kernel(opd.ops.aten.add, "CPU", lambda a, b, *, alpha: a):
            pass


def test_override_kernel_refuses_a_kernel_whose_arity_disagrees_with_the_schema():
    x = opd.tensor([1.0])
    with pytest.raises(TypeError, match=(
            r"^override_kernel: the kernel takes 1 positional arguments, but aten::add.Tensor "
            r"has 3 \(aten::add.Tensor\(Tensor self, Tensor other, \*, Scalar alpha=1\) -> "
            r"Tensor\)$")):
        with override_kernel("aten::add.Tensor", "CPU", lambda a: a):
            pass
    with pytest.raises(TypeError, match=r"^override_kernel: the kernel takes 2 positional "
                                        r"arguments, but aten::add.Tensor has 3"):
        with override_kernel("aten::add.Tensor", "CPU", lambda a, b: a):  # no alpha keyword
            pass
    with pytest.raises(TypeError, match=r"^override_kernel: the kernel takes 2 positional "
                                        r"arguments, but aten::relu has 1"):
        with override_kernel("aten::relu", "CPU", lambda a, b: a):
            pass
    assert (x + x).tolist() == [2.0]  # nothing was registered
    with override_kernel("aten::add.Tensor", "CPU", lambda *args, **kwargs: args[0]):
        assert (x + x).tolist() == [1.0]


def test_scoped_plugin_loads_for_the_block_only():
    x = opd.ones(1)
    with scoped_plugin(good_manifest()) as status:
        assert (status.name, status.state) == ("good", "loaded")
        assert opd.ops.fixture.value(x) == 1
    assert opd.plugins.status("good").state == "unloaded"
    with pytest.raises(AttributeError):
        opd.ops.fixture.value
    with pytest.raises(KeyError):
        with scoped_plugin(good_manifest()):
            raise KeyError("out")
    assert opd.plugins.status("good").state == "unloaded"


def test_count_calls():
    x = opd.ones(2)
    x + x  # before the block: not counted
    with count_calls("aten::add.Tensor", "CPU") as calls:
        x + x
        opd.add(x, x)
        x * x
    x + x  # after the block: not counted
    assert calls.count == 2
    assert int(calls) == 2
    with count_calls(opd.ops.aten.add.Tensor) as every_hop:
        x + x
    assert every_hop.count == 2  # AutogradCPU, then CPU
    with count_calls("aten::mul.Tensor", key="AutogradCPU") as muls:
        x + x
    assert muls.count == 0


def test_assert_no_dangling_impls():
    assert_no_dangling_impls()
    with Library("tstdangle", "IMPL") as lib:
        lib.impl("nope", lambda x: x, "CPU")
        with pytest.raises(AssertionError, match=r"dangling impls:\n\s*name: tstdangle::nope"):
            assert_no_dangling_impls()
        assert_no_dangling_impls(allowed=("tstdangle::nope",))
    assert_no_dangling_impls()


def run_pytest_plugin(tmp_path, body):
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(opd.__file__)))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "opdispatch.testing", str(test_file)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)


def test_the_pytest_plugin_fails_a_test_that_leaves_a_dangling_impl(tmp_path):
    proc = run_pytest_plugin(tmp_path, """
        from opdispatch.library import Library
        leaked = []

        def test_leaks():
            lib = Library("tstplug", "IMPL")
            lib.impl("nope", lambda x: x, "CPU")
            leaked.append(lib)

        def test_clean():
            with Library("tstplug2", "IMPL") as lib:
                lib.impl("nope", lambda x: x, "CPU")
    """)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "AssertionError: the test left dangling impls:" in proc.stdout
    assert "name: tstplug::nope" in proc.stdout
    # The leaking test passes and its teardown errors (pytest counts both); the clean one passes.
    assert "2 passed, 1 error" in proc.stdout


def test_capture_ops_lists_the_calls_below_autograd():
    from opdispatch.testing import capture_ops

    x = opd.ones(2, requires_grad=True)
    with capture_ops() as calls:
        y = (x * 3).sum()
    assert [(str(f), len(a), k) for f, a, k in calls] == [("aten.mul.Tensor", 2, {}),
                                                         ("aten.sum.default", 1, {})]
    func, args, kwargs = calls[0]
    # args[0] is x's tensor (a new Python object for it: plain tensors keep no object identity).
    assert func is opd.ops.aten.mul.Tensor and args[0].data_ptr() == x.data_ptr() and args[1] == 3
    assert y.grad_fn is not None  # autograd recorded the calls above the capture
    with capture_ops() as calls:
        opd.add(x.detach(), x.detach(), alpha=2)
    assert calls[-1][0] is opd.ops.aten.add.Tensor and calls[-1][2] == {"alpha": 2}
    with capture_ops() as outer:
        with capture_ops() as inner:
            opd.ones(1).neg()
    assert [str(c[0]) for c in inner] == [str(c[0]) for c in outer] == [
        "aten.ones.default", "aten.neg.default"]
