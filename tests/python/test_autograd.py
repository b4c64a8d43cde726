"""opdispatch.autograd's fallback for operators without an autograd kernel (the three modes
and their texts, version bumps of written arguments, and what is left alone), custom
Functions (as torch.autograd.Function: gradients, the ctx API, PyTorch's errors, the node's
name, materialized and missing gradients, UndefinedGrad) and custom_op's register_autograd."""

import warnings

import pytest

import opdispatch as opd
from opdispatch import Tensor
from opdispatch.autograd import Function
from opdispatch.library import Library, custom_op

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


# ---- custom Functions ----------------------------------------------------------------------

class Scale(Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        return x * s

    @staticmethod
    def backward(ctx, g):
        return g * ctx.s, None


class MulAdd(Function):
    seen = {}

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        MulAdd.seen["forward"] = ctx.needs_input_grad
        return x * y, x + y

    @staticmethod
    def backward(ctx, g_mul, g_add):
        MulAdd.seen["backward"] = ctx.needs_input_grad
        x, y = ctx.saved_tensors
        gx = g_mul * y + g_add if ctx.needs_input_grad[0] else None
        gy = g_mul * x + g_add if ctx.needs_input_grad[1] else None
        return gx, gy


def test_forward_and_backward():
    x = opd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Scale.apply(x, 3.0)
    assert y.tolist() == [3.0, 6.0, 9.0]
    assert y.requires_grad and y.grad_fn.name() == "ScaleBackward"
    assert repr(y.grad_fn) == "<ScaleBackward object>"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_saved_tensors_and_needs_input_grad():
    x = opd.tensor([2.0, 3.0], requires_grad=True)
    y = opd.tensor([5.0, 7.0])
    mul, add = MulAdd.apply(x, y)
    assert MulAdd.seen["forward"] == (True, False)
    (mul + add).sum().backward()
    assert MulAdd.seen["backward"] == (True, False)
    assert x.grad.tolist() == [6.0, 8.0]  # y + 1
    assert y.grad is None


def test_the_backward_is_differentiable():
    x = opd.tensor([2.0, 3.0], requires_grad=True)
    y = opd.tensor([5.0, 7.0], requires_grad=True)
    mul, _ = MulAdd.apply(x, y)
    (gx,) = opd.autograd.grad(mul.sum(), [x], create_graph=True)
    assert gx.tolist() == [5.0, 7.0]  # y
    gx.sum().backward()  # d(sum y)/dy = 1
    assert y.grad.tolist() == [1.0, 1.0]


def test_no_node_without_grad():
    y = Scale.apply(opd.ones(2), 2.0)
    assert not y.requires_grad and y.grad_fn is None
    with opd.no_grad():
        y = Scale.apply(opd.ones(2, requires_grad=True), 2.0)
    assert not y.requires_grad


def test_setup_context_form():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = opd.tensor([3.0], requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.tolist() == [6.0]


def test_mark_dirty():
    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    w = opd.ones(2, requires_grad=True)
    x = w * 1
    y = DoubleInPlace.apply(x)
    assert y is x or y.data_ptr() == x.data_ptr()
    assert x.grad_fn.name() == "DoubleInPlaceBackward"
    y.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad has been used "
                                           "in an in-place operation.$"):
        DoubleInPlace.apply(opd.ones(2, requires_grad=True))


def test_mark_non_differentiable_and_materialized_grads():
    class WithMask(Function):
        got = None

        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).to(opd.float32)
            ctx.mark_non_differentiable(mask)
            return x * 3, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            WithMask.got = g_mask
            return g * 3

    x = opd.tensor([1.0, -1.0], requires_grad=True)
    y, mask = WithMask.apply(x)
    assert not mask.requires_grad and y.requires_grad
    y.sum().backward()
    assert WithMask.got.tolist() == [0.0, 0.0]  # materialized
    assert x.grad.tolist() == [3.0, 3.0]


def test_set_materialize_grads_false():
    class Two(Function):
        got = "unset"

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            Two.got = g2
            return g1

    x = opd.ones(2, requires_grad=True)
    Two.apply(x)[0].sum().backward()
    assert Two.got is None
    assert x.grad.tolist() == [1.0, 1.0]


LEGACY = ("Legacy autograd function with non-static forward method is deprecated. Please use "
          "new-style autograd function with static forward method. (Example: "
          "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")


def test_calling_a_function_instance_is_torchs_legacy_function_error():
    class Legacy(Function):
        def forward(self, x):  # the legacy style: an instance method
            return x * 2

        def backward(self, g):
            return g * 2

    with pytest.warns(DeprecationWarning, match=r"^<class '.*Legacy'> should not be "
                                                r"instantiated. Methods on autograd functions "
                                                r"are all static"):
        f = Legacy()
    with pytest.raises(RuntimeError) as info:
        f(opd.ones(2, requires_grad=True))
    assert str(info.value) == LEGACY
    with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError) as info:
        Scale()(opd.ones(2), 2.0)  # a new-style Function called through an instance: the same
    assert str(info.value) == LEGACY


class Recorder(Function):
    """Two outputs, the second marked non-differentiable when ``mark`` is given; ctx flags set
    from ``flags``; backward records what it receives and returns the first gradient (or
    ones when it got none)."""
    got = []

    @staticmethod
    def forward(ctx, x, flags):
        a, b = x * 2, x * 3
        if flags.get("mark"):
            ctx.mark_non_differentiable(b)
        if "materialize" in flags:
            ctx.set_materialize_grads(flags["materialize"])
        if "non_diff" in flags:
            ctx._materialize_non_diff_grads = flags["non_diff"]
        return a, b

    @staticmethod
    def backward(ctx, ga, gb):
        Recorder.got.append((ga, gb))
        return (opd.ones(2) if ga is None else ga), None


def recorded(flags, grad_of_a=True):
    Recorder.got = []
    x = opd.ones(2, requires_grad=True)
    a, b = Recorder.apply(x, flags)
    if grad_of_a:
        a.sum().backward()
    else:
        opd.autograd.UndefinedGrad()(a).sum().backward()
    ((ga, gb),) = Recorder.got
    return ga, gb, x.grad


def test_materialize_non_diff_grads_false_passes_none_for_non_differentiable_outputs():
    # torch (2.x, where ctx._materialize_non_diff_grads exists): the marked output's gradient
    # is None; materialized (zeros) while the flag is left alone; None with materialize off.
    ga, gb, _ = recorded({"mark": True, "non_diff": False})
    assert ga.tolist() == [1.0, 1.0] and gb is None
    ga, gb, _ = recorded({"mark": True})
    assert gb.tolist() == [0.0, 0.0] and gb.dtype == opd.float32
    ga, gb, _ = recorded({"mark": True, "materialize": False})
    assert gb is None
    # A differentiable output's missing gradient is still materialized.
    ga, gb, _ = recorded({"non_diff": False})
    assert gb.tolist() == [0.0, 0.0]


def test_non_diff_grads_of_an_integer_output_follow_the_flag():
    class WithIndex(Function):
        got = None

        @staticmethod
        def forward(ctx, x, materialize_non_diff):
            ctx._materialize_non_diff_grads = materialize_non_diff
            return x * 2, opd.zeros(3, dtype=opd.int64)

        @staticmethod
        def backward(ctx, g, g_index):
            WithIndex.got = g_index
            return g * 2, None

    WithIndex.apply(opd.ones(2, requires_grad=True), True)[0].sum().backward()
    assert WithIndex.got.tolist() == [0, 0, 0] and WithIndex.got.dtype == opd.int64
    WithIndex.apply(opd.ones(2, requires_grad=True), False)[0].sum().backward()
    assert WithIndex.got is None


def test_undefined_grad_reaches_backward_as_zeros_or_none():
    # UndefinedGrad (torch._C._functions.UndefinedGrad) leaves every gradient of the function
    # undefined; its backward still runs, as torch's does.
    ga, gb, x_grad = recorded({}, grad_of_a=False)
    assert ga.tolist() == [0.0, 0.0] and gb.tolist() == [0.0, 0.0]
    assert x_grad.tolist() == [0.0, 0.0]
    ga, gb, x_grad = recorded({"materialize": False}, grad_of_a=False)
    assert ga is None and gb is None
    assert x_grad.tolist() == [1.0, 1.0]  # what backward returned for a missing gradient


def test_set_materialize_grads_is_read_when_backward_runs():
    class Late(Function):
        got = []

        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            Late.got.append(g2)
            ctx.set_materialize_grads(False)
            return g1

    y = Late.apply(opd.tensor(1.0, requires_grad=True))[0]
    y.backward(retain_graph=True)
    y.backward()
    assert Late.got[0].tolist() == 0.0 and Late.got[1] is None


def test_undefined_grad_as_torchs():
    UndefinedGrad = opd.autograd.UndefinedGrad
    assert opd._C._functions.UndefinedGrad is UndefinedGrad
    x = opd.tensor([1.0, 2.0], requires_grad=True)
    y = UndefinedGrad()(x)
    assert y.tolist() == [1.0, 2.0] and y.data_ptr() != x.data_ptr()
    assert y.grad_fn.name() == "UndefinedGradBackward"
    (y * 2).sum().backward()
    assert x.grad is None  # the gradient reached x undefined
    plain = UndefinedGrad()(opd.ones(2))
    assert not plain.requires_grad and plain.grad_fn is None
    with pytest.raises(TypeError, match=r"^expected 1 arguments, got 2 instead$"):
        UndefinedGrad()(x, x)
    with pytest.raises(TypeError, match=r"^expected 1 arguments, got 0 instead$"):
        UndefinedGrad()()
    with pytest.raises(TypeError, match=r"^argument 0 is not a Variable$"):
        UndefinedGrad()(1.0)


def test_wrong_gradient_count_and_non_tensor_gradients_are_errors():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    class NumberGrad(Function):
        @staticmethod
        def forward(ctx, x, s):
            return x * s

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = opd.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^function TooFewBackward returned an incorrect "
                                           r"number of gradients \(expected 2, got 1\)$"):
        TooFew.apply(x, x).sum().backward()
    with pytest.raises(RuntimeError, match="^function NumberGradBackward returned a gradient "
                                           "different than None at position 2, but the "
                                           "corresponding forward input was not a Variable$"):
        NumberGrad.apply(x, 2.0).sum().backward()


def test_an_exception_in_backward_reaches_the_caller():
    class Raises(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("no gradient today")

    with pytest.raises(ValueError, match="^no gradient today$"):
        Raises.apply(opd.ones(1, requires_grad=True)).sum().backward()


def test_a_saved_input_changed_in_place_fails_at_backward():
    class SavesInput(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    w = opd.ones(2, requires_grad=True)
    x = w * 1
    y = SavesInput.apply(x)
    x.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient "
                                           "computation has been modified by an inplace "
                                           "operation"):
        y.sum().backward()


def test_non_tensor_outputs_pass_through():
    class WithCount(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 7

        @staticmethod
        def backward(ctx, g, g_count):
            assert g_count is None
            return g * 2

    x = opd.ones(2, requires_grad=True)
    y, n = WithCount.apply(x)
    assert n == 7
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_keyword_arguments_are_refused():
    with pytest.raises(TypeError, match=r"^Scale.apply\(\) takes positional arguments only$"):
        Scale.apply(opd.ones(1), s=2.0)


def test_the_graph_outlives_the_function_and_its_ctx_is_freed():
    import gc
    import weakref

    class Keeps(Function):
        ctx_ref = None

        @staticmethod
        def forward(ctx, x):
            Keeps.ctx_ref = weakref.ref(ctx)
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Keeps.apply(opd.ones(2, requires_grad=True))
    assert Keeps.ctx_ref() is not None
    del y
    gc.collect()
    assert Keeps.ctx_ref() is None  # no cycle through the graph


def test_custom_op_without_register_autograd_fails_at_backward():
    @custom_op("libfn::noauto", mutates_args=())
    def noauto(x: Tensor) -> Tensor:
        return x * 2

    try:
        x = opd.ones(2, requires_grad=True)
        y = noauto(x)
        assert y.tolist() == [2.0, 2.0]
        assert y.grad_fn.name() == "GeneratedBackwardFor_libfn_noautoBackward"
        with pytest.raises(RuntimeError, match=(
                r"^Trying to backward through <CustomOpDef\(libfn::noauto\)> but no autograd "
                r"formula was registered. Please use register_autograd to add one.$")):
            y.sum().backward()
        assert noauto(x.detach()).grad_fn is None
    finally:
        noauto._destroy()


def test_custom_op_register_autograd():
    @custom_op("libfn::scale", mutates_args=())
    def scale(x: Tensor, s: float) -> Tensor:
        return x * s

    def setup_context(ctx, inputs, output):
        ctx.s = inputs[1]

    def backward(ctx, g):
        return g * ctx.s, None

    try:
        scale.register_autograd(backward, setup_context=setup_context)
        x = opd.tensor([1.0, 2.0], requires_grad=True)
        y = scale(x, 4.0)
        y.sum().backward()
        assert x.grad.tolist() == [4.0, 4.0]
        opd.ops.libfn.scale(x, 0.5).sum().backward()  # through the ops namespace too
        assert x.grad.tolist() == [4.5, 4.5]
        with pytest.raises(TypeError, match="^register_autograd\\(\\): backward must be "
                                            "callable, not int$"):
            scale.register_autograd(3)
    finally:
        scale._destroy()


# ---- gradcheck, gradgradcheck (Note [gradcheck]) and gradients found by the OpInfo table ----

def _leaf(*shape):
    return opd.randn(*shape, dtype=opd.float64).requires_grad_()


def test_gradcheck_passes_correct_gradients_of_strided_inputs():
    from opdispatch.autograd import gradcheck
    x, w = _leaf(3, 4), _leaf(4, 2)
    assert gradcheck(lambda a, b: opd.mm(a, b).tanh(), (x, w))
    assert gradcheck(lambda a: opd.softmax(a, 1), (_leaf(3, 4)[:, ::2],))
    assert gradcheck(lambda a: opd.sum(a * a), (x,))


class _WrongBackward(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_gradcheck_reports_a_wrong_backward_with_torchs_text():
    from opdispatch.autograd import GradcheckError, gradcheck
    x = _leaf(2)
    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 0 with respect to "
                       r"input 0,\nnumerical:tensor\(\[\[2\.0*, 0\.0*\],(?s:.*)\nanalytical:tensor\(\[\[3\."):
        gradcheck(_WrongBackward.apply, (x,))
    assert gradcheck(_WrongBackward.apply, (x,), raise_exception=False) is False
    assert isinstance(GradcheckError("x"), RuntimeError)


def test_gradcheck_refuses_what_torchs_refuses():
    from opdispatch.autograd import gradcheck
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (opd.ones(2, dtype=opd.float64),))
    expanded = _leaf(1).expand(3)
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda a: a * 2, (expanded,))
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gradcheck(lambda a: a * 2, (opd.ones(2).requires_grad_(),), raise_exception=False)


def test_gradgradcheck_checks_second_derivatives():
    from opdispatch.autograd import gradgradcheck
    assert gradgradcheck(lambda a, b: opd.mm(a, b).tanh(), (_leaf(3, 4), _leaf(4, 2)))
    assert gradgradcheck(lambda a: opd.log_softmax(a, 1), (_leaf(2, 3),))


def test_cat_gives_a_legacy_empty_input_an_empty_gradient_as_torch():
    # torch 1.13: a [0]-shaped input of cat (the legacy rule) gets a [0]-shaped gradient; it
    # was None, which grad() reports as an input not used in the graph.
    x, e = _leaf(2, 3), opd.empty(0, dtype=opd.float64).requires_grad_()
    gx, ge = opd.autograd.grad([opd.cat([x, e]).sum()], [x, e])
    assert list(gx.shape) == [2, 3] and list(ge.shape) == [0]
    assert ge.dtype == opd.float64


def test_a_complex_tensor_may_require_grad_as_in_torch():
    z = opd.tensor([1 + 2j, 3 - 1j]).requires_grad_()
    assert z.requires_grad and z.is_leaf
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        opd.ones(2, dtype=opd.int64).requires_grad_()


@pytest.mark.parametrize("reduce", [lambda x: opd.mean(x, [0]), lambda x: opd.sum(x, [0]),
                                    lambda x: opd.mean(x, [-1], True), lambda x: opd.amax(x, [0])],
                         ids=["mean", "sum", "mean keepdim", "amax"])
def test_a_reduction_of_a_0d_tensor_over_its_dim_has_a_gradient(reduce):
    # Found by tests/python/differential.py: mean.dim's backward read sizes[0] of a 0-d input
    # (a segmentation fault) and sum's unsqueezed the gradient to [1] before expanding to [].
    x = opd.tensor(2.0, dtype=opd.float64).requires_grad_()
    (g,) = opd.autograd.grad([reduce(x)], [x], [opd.tensor(1.0, dtype=opd.float64)])
    assert list(g.shape) == [] and g.item() == 1.0
