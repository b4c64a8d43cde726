"""opdispatch.autograd's fallback for operators without an autograd kernel: the three modes
and their texts, version bumps of written arguments, and what is left alone."""

import warnings

import pytest

import opdispatch as opd
from opdispatch.library import Library

TEXT = ("{}: an autograd kernel was not registered to the Autograd key(s) but we are trying "
        "to backprop through it. This may lead to silently incorrect behavior. If your "
        "operator is differentiable, please ensure you have registered an autograd kernel to "
        "the correct Autograd key (e.g. DispatchKey::Autograd, "
        "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or "
        "to squash this warning and use the previous behavior, please register "
        "opd::CppFunction::make_fallthrough() to DispatchKey::Autograd.")


@pytest.fixture
def vendor(request):
    """A vendor namespace (one per test: the warning is given once per operator) with
    scale (out of place), scale_ (in place) and argmax_like (an integer result)."""
    ns = "fb_" + request.node.name.replace("[", "_").replace("]", "_")[:40]
    lib = Library(ns, "DEF")
    lib.define("scale(Tensor x, float s) -> Tensor")
    lib.define("scale_(Tensor(a!) x, float s) -> Tensor(a!)")
    lib.define("argmax_like(Tensor x) -> Tensor")
    lib.impl("scale", lambda x, s: x * s, "CPU")
    lib.impl("scale_", lambda x, s: x.mul_(s), "CPU")
    lib.impl("argmax_like", lambda x: opd.zeros(1, dtype=opd.int64), "CPU")
    yield ns, getattr(opd.ops, ns)
    opd.autograd.set_fallback_mode("warn")
    lib.close()


def test_warn_mode_warns_once_per_operator_at_backward(vendor):
    ns, ops = vendor
    assert opd.autograd.get_fallback_mode() == "warn"
    x = opd.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = ops.scale(x, 2.0)
        assert caught == []  # nothing at the call
        assert y.requires_grad and "grad_fn=<WarnNotImplemented>" in repr(y)
        y.sum().backward()
        ops.scale(x, 3.0).sum().backward()
    assert [str(w.message) for w in caught] == [TEXT.format(f"{ns}::scale")]
    assert all(w.category is UserWarning for w in caught)
    assert x.grad is None  # no gradient passed on
    assert y.tolist() == [2.0, 2.0, 2.0]


def test_a_warning_filter_set_to_error_raises_the_warning(vendor):
    ns, ops = vendor
    x = opd.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match=f"{ns}::scale: an autograd kernel was not"):
            ops.scale(x, 2.0).sum().backward()


def test_error_mode_raises_at_backward(vendor):
    ns, ops = vendor
    opd.autograd.set_fallback_mode("error")
    assert opd.autograd.get_fallback_mode() == "error"
    x = opd.ones(2, requires_grad=True)
    y = ops.scale(x, 2.0)  # the call itself succeeds
    assert "NotImplemented" in repr(y)
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value) == TEXT.format(f"{ns}::scale")


def test_nothing_mode_records_nothing(vendor):
    _, ops = vendor
    opd.autograd.set_fallback_mode("nothing")
    y = ops.scale(opd.ones(2, requires_grad=True), 2.0)
    assert not y.requires_grad and y.grad_fn is None


def test_inputs_without_grad_and_integer_outputs_get_no_node(vendor):
    _, ops = vendor
    y = ops.scale(opd.ones(2), 2.0)
    assert not y.requires_grad and y.tolist() == [2.0, 2.0]
    i = ops.argmax_like(opd.ones(2, requires_grad=True))
    assert not i.requires_grad and i.dtype == opd.int64


@pytest.mark.parametrize("mode", ["warn", "error", "nothing"])
def test_written_arguments_get_their_version_bumped(vendor, mode):
    # A tensor saved for backward and then changed by a vendor's in-place operator is caught
    # at backward, in every mode.
    _, ops = vendor
    opd.autograd.set_fallback_mode(mode)
    w = opd.ones(2, requires_grad=True)
    x = opd.ones(2)
    y = w * x  # saves x
    before = x._version
    assert ops.scale_(x, 2.0) is x
    assert x._version > before and x.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient "
                       "computation has been modified by an inplace operation"):
        y.sum().backward()


def test_an_unknown_mode_is_a_value_error():
    with pytest.raises(ValueError, match='Unsupported AutogradFallbackMode: sometimes '
                       r'\(expected "nothing", "warn" or "error"\)'):
        opd.autograd.set_fallback_mode("sometimes")
    assert opd.autograd.get_fallback_mode() == "warn"


def test_without_the_autograd_plugin_the_mode_cannot_be_set(python):
    proc = python("""
        import opdispatch as opd
        opd.plugins.unload("autograd")
        try:
            opd.autograd.set_fallback_mode("error")
        except RuntimeError as e:
            print(e)
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == (
        "opd::autograd::set_fallback_mode: the autograd plugin (libopd_autograd.so), to which "
        "the autograd fallback belongs, is not loaded (autograd::_set_fallback_mode is not "
        "defined)\n")
