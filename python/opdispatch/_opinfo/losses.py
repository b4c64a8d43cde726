"""Table entries of the losses (issue #32 §1, helper "loss"): nll_loss_nd, nll_loss2d (and its
_forward/_backward operators), cross_entropy_loss over K-d inputs, binary_cross_entropy (and its
backward), binary_cross_entropy_with_logits, l1_loss, smooth_l1_loss, huber_loss,
soft_margin_loss (each with its backward), kl_div, margin_ranking_loss, cosine_embedding_loss,
and the out= forms of mse_loss. (nll_loss, cross_entropy_loss's 1-d/2-d samples, mse_loss and
the backward operators of nll_loss and mse_loss are in existing.py.)

The losses are in torch's nn namespace: entries call ``lib.ops.aten.<name>`` (the packet picks
the out= overload for out=), with the reduction given (0 none, 1 mean, 2 sum)."""

from .core import ErrorInput, OpInfo, SampleInput, ref_in_float32

FLOAT = ("float32", "float64")
FLOAT_BF16 = ("float32", "float64", "bfloat16")
ALL_FLOAT = ("float32", "float64", "float16", "bfloat16")


def _aten(name):
    """``lib.ops.aten.<name>(...)``: the overload packet, the same path in both libraries."""
    def op(lib, *args, **kwargs):
        return getattr(lib.ops.aten, name)(*args, **kwargs)
    op.__name__ = name
    return op


def _contiguous_ref(name):
    """torch 1.13's nll_loss2d_backward makes grad_input like self, and refuses it when self is
    not contiguous ("grad_input must be contiguous"; so does the backward of nll_loss2d and
    nll_loss_nd): the reference is torch's on contiguous copies (differentiable), in float32 for
    bfloat16 (torch sums bfloat16 losses in bfloat16; opdispatch in double, rounding once)."""
    widened = ref_in_float32(_aten(name))

    def ref(lib, *args, **kwargs):
        args = [a.contiguous() if isinstance(a, lib.Tensor) else a for a in args]
        return widened(lib, *args, **kwargs)
    ref.__name__ = name
    return ref


def _target(make, shape, classes, low=0):
    return make(shape, low=low, high=classes, dtype_override="int64")


# ---- nll_loss over K-d inputs ------------------------------------------------------------------

def sample_nll_loss_nd(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, requires_grad=rg, **kw)
    yield SampleInput(x((5,)), args=(_target(make, (), 5), None, 1, -100), name="1-d")
    yield SampleInput(x((4, 3)), args=(_target(make, (4,), 3), None, 2, -100), name="2-d")
    for reduction in (0, 1, 2):
        yield SampleInput(x((2, 3, 5)), args=(_target(make, (2, 5), 3), None, reduction, -100),
                          name=f"3-d reduction {reduction}")
    yield SampleInput(x((2, 3, 3, 2)), args=(_target(make, (2, 3, 2), 3), make((3,), low=0.1),
                                             1, 1), name="4-d weight ignore_index")
    yield SampleInput(x((2, 3, 2, 1, 3), noncontiguous=True),
                      args=(_target(make, (2, 2, 1, 3), 3), None, 0, -100), name="5-d strided")
    yield SampleInput(x((0, 3, 2)), args=(_target(make, (0, 2), 3), None, 1, -100),
                      name="empty mean")


def errors_nll_loss_nd(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=(_target(make, (2, 5), 3), None, 1, -100)),
                     RuntimeError, r"Expected target size \[2, 4\], got \[2, 5\]")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=(_target(make, (3, 4), 3), None, 1, -100)),
                     ValueError, r"Expected input batch_size \(2\) to match target batch_size \(3\)")
    yield ErrorInput(SampleInput(make((2, 3, 4)),
                                 args=(_target(make, (2, 4), 6, low=5), None, 1, -100)),
                     IndexError, r"Target 5 is out of bounds\.", on_meta=False)


def sample_nll_loss2d(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        yield SampleInput(x((2, 3, 3, 2)), args=(_target(make, (2, 3, 2), 3), None, reduction,
                                                 -100), name=f"reduction {reduction}")
    yield SampleInput(x((2, 4, 2, 3)), args=(_target(make, (2, 2, 3), 4), make((4,), low=0.1), 1,
                                             2), name="weight ignore_index")
    yield SampleInput(x((1, 3, 2, 3), noncontiguous=True),
                      args=(_target(make, (1, 2, 3), 3), make((3,), low=0.1), 0, 0),
                      name="strided weight none")
    if not rg:  # 0 / 0 (gradcheck cannot difference a nan)
        yield SampleInput(x((1, 3, 2, 2)), args=(make((1, 2, 2), low=-100, high=-99,
                                                      dtype_override="int64"), None, 1, -100),
                          name="every target ignored: mean is nan")
    yield SampleInput(x((0, 3, 2, 2)), args=(_target(make, (0, 2, 2), 3), None, 0, -100),
                      name="empty batch")


def errors_nll_loss2d(op, make):
    t = _target(make, (2, 3, 3), 3)
    yield ErrorInput(SampleInput(make((2, 3, 3)), args=(t, None, 1, -100)), RuntimeError,
                     r"only batches of spatial inputs supported \(4D tensors\), but got input "
                     r"of dimension: 3")
    yield ErrorInput(SampleInput(make((2, 3, 3, 3)), args=(_target(make, (2, 3), 3), None, 1,
                                                           -100)), RuntimeError,
                     r"only batches of spatial targets supported \(3D tensors\) but got targets "
                     r"of dimension: 2")
    yield ErrorInput(SampleInput(make((2, 3, 3, 3)), args=(t, make((4,)), 1, -100)),
                     RuntimeError, r"weight tensor should be defined either for all or no classes")
    yield ErrorInput(SampleInput(make((2, 3, 3, 4)), args=(t, None, 1, -100)), RuntimeError,
                     r"size mismatch \(got input: \[2, 3, 3, 4\] , target: \[2, 3, 3\]")
    yield ErrorInput(SampleInput(make((2, 3, 3, 3)),
                                 args=(_target(make, (2, 3, 3), 8, low=7), None, 1, -100)),
                     IndexError, r"Target 7 is out of bounds\.", on_meta=False)


def sample_nll_loss2d_backward(op, make, dtype, rg):
    import opdispatch
    for reduction, weighted in ((0, False), (1, True), (2, False)):
        x = make((2, 3, 2, 3))
        t = _target(make, (2, 2, 3), 3)
        w = make((3,), low=0.1) if weighted else None
        out, total_weight = opdispatch.ops.aten.nll_loss2d_forward(x, t, w, reduction, 1)
        yield SampleInput(make(list(out.shape), requires_grad=rg),
                          args=(x, t, w, reduction, 1, total_weight),
                          name=f"reduction {reduction}")


# ---- cross_entropy over K-d inputs, with every option ---------------------------------------------

def sample_cross_entropy_nd(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, requires_grad=rg, **kw)
    w = make((3,), low=0.1)
    yield SampleInput(x((2, 3, 2, 2)), args=(_target(make, (2, 2, 2), 3), w, 1, 1, 0.0),
                      name="4-d weight ignore_index")
    yield SampleInput(x((2, 3, 4)), args=(_target(make, (2, 4), 3), w, 0, 2, 0.0),
                      name="3-d weight ignore_index none")
    for reduction in (0, 1, 2):
        yield SampleInput(x((2, 3, 2, 2)), args=(_target(make, (2, 2, 2), 3), w, reduction, 0,
                                                 0.3), name=f"label smoothing {reduction}")
    yield SampleInput(x((4, 3)), args=(make((4, 3), low=0, high=1), w, 2, -100, 0.2),
                      name="probabilities weight label smoothing")
    yield SampleInput(x((2, 3, 2)), args=(make((2, 3, 2), low=0, high=1), None, 0, -100, 0.0),
                      name="probabilities 3-d none")
    if not rg:  # 0 / 0 (gradcheck cannot difference a nan)
        yield SampleInput(x((3, 3)), args=(make((3,), low=-100, high=-99,
                                                dtype_override="int64"), None, 1, -100, 0.0),
                          name="every target ignored")


def errors_cross_entropy_nd(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(_target(make, (2,), 6, low=5), None, 1,
                                                     -100, 0.0)),
                     IndexError, r"Target 5 is out of bounds\.", on_meta=False)
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=(_target(make, (2, 5), 3), None, 1,
                                                        -100, 0.0)),
                     RuntimeError, r"Expected target size \[2, 4\], got \[2, 5\]")
    t = _target(make, (2,), 3)
    yield ErrorInput(SampleInput(make((2, 3)), args=(t, None, 1, -100, 1.5)), RuntimeError,
                     r"label_smoothing must be between 0\.0 and 1\.0\. Got: 1\.5")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 3)), None, 1, 0, 0.0)),
                     RuntimeError, r"ignore_index is not supported for floating point target")
    yield ErrorInput(SampleInput(make((2, 3)), args=(_target(make, (2, 3), 2), None, 1, -100,
                                                     0.0)),
                     RuntimeError, r"Expected floating point type for target with class "
                     r"probabilities, got Long")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 3)), make((4,)), 1, -100, 0.0)),
                     RuntimeError, r"cross_entropy: weight tensor should be defined either for "
                     r"all 3 classes or no classes but got weight tensor of shape: \[4\]")


# ---- binary cross entropy ------------------------------------------------------------------------

def _probabilities(make, shape, rg=False, **kw):
    return make(shape, low=0.05, high=0.95, requires_grad=rg, **kw)


def sample_bce(op, make, dtype, rg):
    for reduction in (0, 1, 2):
        yield SampleInput(_probabilities(make, (3, 4), rg),
                          args=(_probabilities(make, (3, 4), rg), None, reduction),
                          name=f"reduction {reduction}")
    yield SampleInput(_probabilities(make, (3, 4), rg, noncontiguous=True),
                      args=(_probabilities(make, (3, 4), rg), make((4,), low=0.1), 1),
                      name="weight strided")
    yield SampleInput(_probabilities(make, (), rg), args=(_probabilities(make, ()), None, 2),
                      name="0-d")
    yield SampleInput(_probabilities(make, (0, 3), rg), args=(_probabilities(make, (0, 3)), None,
                                                              1), name="empty mean")


def sample_bce_values(op, make, dtype, rg):
    yield from sample_bce(op, make, dtype, rg)
    # log clamped to >= -100 at 0 and 1 (values only: the gradient is infinite there)
    import opdispatch
    x = opdispatch.tensor([0.0, 1.0, 0.5], dtype=getattr(opdispatch, dtype))
    yield SampleInput(x, args=(opdispatch.tensor([1.0, 0.0, 1.0], dtype=x.dtype), None, 0),
                      name="edges") if not rg else SampleInput(_probabilities(make, (2,), rg),
                                                               args=(_probabilities(make, (2,)),
                                                                     None, 1))


def errors_bce(op, make):
    yield ErrorInput(SampleInput(make((3,), low=1.5, high=2), args=(make((3,), low=0, high=1),
                                                                   None, 1)),
                     RuntimeError, r"all elements of input should be between 0 and 1",
                     on_meta=False)
    yield ErrorInput(SampleInput(make((3,), low=0, high=1),
                                 args=(make((3,), low=0, high=1, dtype_override="float64"),
                                       None, 1)),
                     RuntimeError, r"Found dtype Double but expected Float")


def sample_bce_backward(op, make, dtype, rg):
    for reduction, weighted in ((0, False), (1, True), (2, False)):
        shape = (3, 4)
        grad = make(shape if reduction == 0 else (), requires_grad=rg)
        w = make((4,), low=0.1) if weighted else None
        yield SampleInput(grad, args=(_probabilities(make, shape, rg), _probabilities(make, shape),
                                      w, reduction), name=f"reduction {reduction}")


def sample_bce_with_logits(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-4, high=4, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        yield SampleInput(x((3, 4)), args=(_probabilities(make, (3, 4)), None, None, reduction),
                          name=f"reduction {reduction}")
    yield SampleInput(x((3, 4)), args=(_probabilities(make, (3, 4)), make((4,), low=0.1),
                                       make((4,), low=0.5, high=3), 1), name="weight pos_weight")
    yield SampleInput(x((3, 4), noncontiguous=True),
                      args=(_probabilities(make, (3, 4)), None, make((4,), low=0.5, high=3), 0),
                      name="pos_weight strided")
    yield SampleInput(x((0, 4)), args=(_probabilities(make, (0, 4)), None, None, 1),
                      name="empty mean")


# ---- l1, smooth l1, huber, soft margin -------------------------------------------------------------

def _pair_samples(make, rg, extra=()):
    def x(shape, **kw):
        return make(shape, low=-3, high=3, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        yield SampleInput(x((3, 4)), args=(x((3, 4)), reduction) + extra,
                          name=f"reduction {reduction}")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(x((4, 3)).t(), 1) + extra,
                      name="strided")
    yield SampleInput(x((3, 4)), args=(x((4,)), 0) + extra, name="broadcast target")
    yield SampleInput(x(()), args=(x(()), 2) + extra, name="0-d")
    yield SampleInput(x((0, 2)), args=(x((0, 2)), 1) + extra, name="empty mean")


def sample_l1_loss(op, make, dtype, rg):
    yield from _pair_samples(make, rg)


def sample_smooth_l1_loss(op, make, dtype, rg):
    yield from _pair_samples(make, rg, (1.0,))
    x = make((3, 4), low=-3, high=3, requires_grad=rg)
    yield SampleInput(x, args=(make((3, 4), low=-3, high=3, requires_grad=rg), 1, 0.5),
                      name="beta 0.5")
    if not rg:  # beta 0 is l1 (values only: the kink is sampled by gradcheck)
        yield SampleInput(make((3, 4)), args=(make((3, 4)), 2, 0.0), name="beta 0")


def errors_smooth_l1_loss(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(make((3,)), 1, -1.0)), RuntimeError,
                     r"smooth_l1_loss does not support negative values for beta\.")
    i = _target(make, (3,), 3)
    yield ErrorInput(SampleInput(i, args=(i, 1, 1.0)), RuntimeError,
                     r"\"smooth_l1_cpu\" not implemented for 'Long'")


def errors_smooth_l1_loss_backward(op, make):
    h = make((3,), dtype_override="float16")
    yield ErrorInput(SampleInput(h, args=(h, h, 1, 1.0)), RuntimeError,
                     r"\"smooth_l1_backward_cpu_out\" not implemented for 'Half'")


def sample_huber_loss(op, make, dtype, rg):
    yield from _pair_samples(make, rg, (1.0,))
    yield SampleInput(make((3, 4), low=-3, high=3, requires_grad=rg),
                      args=(make((3, 4), low=-3, high=3, requires_grad=rg), 2, 0.5),
                      name="delta 0.5")


def errors_huber_loss(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(make((3,)), 1, 0.0)), RuntimeError,
                     r"huber_loss does not support non-positive values for delta\.")
    i = _target(make, (3,), 3)
    yield ErrorInput(SampleInput(i, args=(i, 1, 1.0)), RuntimeError,
                     r"\"huber_cpu\" not implemented for 'Long'")
    yield ErrorInput(SampleInput(i, args=(make((3,)), 1, 1.0)), RuntimeError,
                     r"result type Float can't be cast to the desired output type Long")


def errors_soft_margin_loss(op, make):
    h = make((3,), dtype_override="float16")
    yield ErrorInput(SampleInput(h, args=(h, 1)), RuntimeError,
                     r"\"exp_vml_cpu\" not implemented for 'Half'")
    i = _target(make, (3,), 3)
    yield ErrorInput(SampleInput(i, args=(i, 1)), RuntimeError,
                     r"result type Float can't be cast to the desired output type Long")


def errors_bce_with_logits(op, make):
    i = _target(make, (3,), 3)
    yield ErrorInput(SampleInput(i, args=(i, None, None, 1)), RuntimeError,
                     r"result type Float can't be cast to the desired output type Long")


def _backward_samples(make, rg, extra=()):
    def x(shape, **kw):
        return make(shape, low=-3, high=3, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        grad = x((3, 4) if reduction == 0 else ())
        yield SampleInput(grad, args=(x((3, 4)), x((3, 4)), reduction) + extra,
                          name=f"reduction {reduction}")
    yield SampleInput(x(()), args=(x((3, 4), noncontiguous=True), x((4, 3)).t(), 1) + extra,
                      name="strided")


def sample_beta_backward(op, make, dtype, rg):
    yield from _backward_samples(make, rg, (0.5,))


def _signs(make, shape):
    return make(shape, low=0, high=2, dtype_override="int64").mul(2).sub(1).to(
        make((1,)).dtype)


def sample_soft_margin_loss(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-3, high=3, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        yield SampleInput(x((3, 4)), args=(_signs(make, (3, 4)), reduction),
                          name=f"reduction {reduction}")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(_signs(make, (3, 4)), 1),
                      name="strided")
    yield SampleInput(x((0, 2)), args=(_signs(make, (0, 2)), 1), name="empty mean")


def sample_soft_margin_loss_backward(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-3, high=3, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        grad = x((3, 4) if reduction == 0 else ())
        yield SampleInput(grad, args=(x((3, 4)), _signs(make, (3, 4)), reduction),
                          name=f"reduction {reduction}")


# ---- kl_div, margin ranking, cosine embedding ------------------------------------------------------

def sample_kl_div(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-3, high=0, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        yield SampleInput(x((3, 4)), args=(make((3, 4), low=0, high=1, requires_grad=rg),
                                           reduction), name=f"reduction {reduction}")
    yield SampleInput(x((3, 4)), args=(x((3, 4)), 1), kwargs={"log_target": True},
                      name="log_target")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(x((4, 3)).t(), 2),
                      kwargs={"log_target": True}, name="log_target strided")
    if not rg:  # a zero target: xlogy's 0 (values only; the gradient of t log t is -inf there)
        t = make((3, 4), low=0, high=1)
        t[0, 0] = 0
        yield SampleInput(x((3, 4)), args=(t, 0), name="zero target")


def errors_kl_div(op, make):
    ints = make((3,), low=0, high=3, dtype_override="int64")
    yield ErrorInput(SampleInput(ints, args=(ints, 1)), RuntimeError,
                     r"kl_div: Integral inputs not supported\.")


def sample_margin_ranking_loss(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-3, high=3, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        yield SampleInput(x((5,)), args=(x((5,)), _signs(make, (5,)), 0.5, reduction),
                          name=f"reduction {reduction}")
    yield SampleInput(x((2, 3)), args=(x((2, 3), noncontiguous=True), _signs(make, (3,)), 0.0, 1),
                      name="broadcast target")


def sample_cosine_embedding_loss(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-3, high=3, requires_grad=rg, **kw)
    for reduction in (0, 1, 2):
        yield SampleInput(x((4, 3)), args=(x((4, 3)), _signs(make, (4,)), 0.2, reduction),
                          name=f"reduction {reduction}")
    yield SampleInput(x((3,)), args=(x((3,)), _signs(make, ()), 0.0, 0), name="1-d")
    yield SampleInput(x((4, 3), noncontiguous=True), args=(x((4, 3)), _signs(make, (4,)), -0.5,
                                                           1), name="strided margin")


def errors_cosine_embedding_loss(op, make):
    yield ErrorInput(SampleInput(make((4, 3)), args=(make((4, 3)), make((4, 1)), 0.0, 1)),
                     RuntimeError, r"0D or 1D target tensor expected, multi-target not supported")
    yield ErrorInput(SampleInput(make((4,)), args=(make((4,)), make((4,)), 0.0, 1)),
                     RuntimeError, r"1D target tensor expects 2D input tensors, but found inputs "
                     r"with sizes \[4\] and \[4\]\.")


# ---- mse_loss's out= forms -----------------------------------------------------------------------

def sample_mse_loss_out(op, make, dtype, rg):
    yield from _pair_samples(make, rg)


def sample_mse_loss_backward_out(op, make, dtype, rg):
    yield from _backward_samples(make, rg)


def errors_mse_loss_out(op, make):
    b = make((3,), dtype_override="bfloat16")
    yield ErrorInput(SampleInput(b, args=(b, 1)), RuntimeError,
                     r"\"mse_cpu\" not implemented for 'BFloat16'")


def errors_mse_loss_backward_out(op, make):
    for dtype, name in (("bfloat16", "BFloat16"), ("float16", "Half")):
        h = make((3,), dtype_override=dtype)
        yield ErrorInput(SampleInput(h, args=(h, h, 1)), RuntimeError,
                         rf"\"mse_backward_cpu_out\" not implemented for '{name}'")


OP_DB = [
    # torch 1.13 sums bfloat16 losses in bfloat16; opdispatch in double, rounding once.
    OpInfo("nll_loss_nd", op=_aten("nll_loss_nd"), ref=_contiguous_ref("nll_loss_nd"),
           method=False, supports_out=False, dtypes=FLOAT_BF16, sample_inputs=sample_nll_loss_nd,
           error_inputs=errors_nll_loss_nd, supports_gradgrad=True),
    OpInfo("nll_loss2d", op=_aten("nll_loss2d"), ref=_contiguous_ref("nll_loss2d"),
           method=False, dtypes=FLOAT_BF16, sample_inputs=sample_nll_loss2d,
           error_inputs=errors_nll_loss2d, supports_gradgrad=True),
    # (output, total_weight); its gradient is nll_loss2d's.
    OpInfo("nll_loss2d_forward", op=_aten("nll_loss2d_forward"),
           ref=_contiguous_ref("nll_loss2d_forward"), method=False, supports_out=False,
           supports_autograd=False, dtypes=FLOAT_BF16, sample_inputs=sample_nll_loss2d,
           error_inputs=errors_nll_loss2d),
    OpInfo("nll_loss2d_backward", op=_aten("nll_loss2d_backward"),
           ref=_contiguous_ref("nll_loss2d_backward"), method=False,
           out_name="grad_input", dtypes=FLOAT_BF16, sample_inputs=sample_nll_loss2d_backward),
    OpInfo("cross_entropy_loss.nd", op=_aten("cross_entropy_loss"), method=False,
           supports_out=False, dtypes=FLOAT_BF16, sample_inputs=sample_cross_entropy_nd,
           error_inputs=errors_cross_entropy_nd, supports_gradgrad=True,
           tol={"bfloat16": (5e-2, 2e-2)}),
    OpInfo("binary_cross_entropy", op=_aten("binary_cross_entropy"), method=False,
           dtypes=FLOAT, sample_inputs=sample_bce_values, error_inputs=errors_bce,
           supports_gradgrad=True),
    OpInfo("binary_cross_entropy_backward", op=_aten("binary_cross_entropy_backward"),
           method=False, out_name="grad_input", dtypes=FLOAT, sample_inputs=sample_bce_backward,
           supports_gradgrad=True,
           skips={"out": "torch 1.13's binary_cross_entropy_backward.grad_input does not resize "
                         "its out (an empty one stays empty; a wrong shape fails to broadcast)"}),
    OpInfo("binary_cross_entropy_with_logits", op=_aten("binary_cross_entropy_with_logits"),
           method=False, supports_out=False, dtypes=FLOAT_BF16,
           sample_inputs=sample_bce_with_logits, error_inputs=errors_bce_with_logits,
           supports_gradgrad=True,
           tol={"bfloat16": (5e-2, 2e-2)}),
    OpInfo("l1_loss", op=_aten("l1_loss"), method=False, supports_out=False, dtypes=ALL_FLOAT,
           sample_inputs=sample_l1_loss, supports_gradgrad=True),
    OpInfo("smooth_l1_loss", op=_aten("smooth_l1_loss"), method=False, dtypes=ALL_FLOAT,
           sample_inputs=sample_smooth_l1_loss, error_inputs=errors_smooth_l1_loss,
           supports_gradgrad=True),
    OpInfo("smooth_l1_loss_backward", op=_aten("smooth_l1_loss_backward"), method=False,
           out_name="grad_input", dtypes=FLOAT_BF16, sample_inputs=sample_beta_backward,
           error_inputs=errors_smooth_l1_loss_backward),
    OpInfo("huber_loss", op=_aten("huber_loss"), method=False, dtypes=ALL_FLOAT,
           sample_inputs=sample_huber_loss, error_inputs=errors_huber_loss,
           supports_gradgrad=True),
    OpInfo("huber_loss_backward", op=_aten("huber_loss_backward"), method=False,
           out_name="grad_input", dtypes=ALL_FLOAT, sample_inputs=sample_beta_backward),
    OpInfo("soft_margin_loss", op=_aten("soft_margin_loss"), method=False, dtypes=FLOAT_BF16,
           sample_inputs=sample_soft_margin_loss, error_inputs=errors_soft_margin_loss,
           supports_gradgrad=True),
    OpInfo("soft_margin_loss_backward", op=_aten("soft_margin_loss_backward"), method=False,
           out_name="grad_input", dtypes=FLOAT_BF16,
           sample_inputs=sample_soft_margin_loss_backward),
    OpInfo("kl_div", op=_aten("kl_div"), method=False, supports_out=False, dtypes=ALL_FLOAT,
           sample_inputs=sample_kl_div, error_inputs=errors_kl_div, supports_gradgrad=True),
    OpInfo("margin_ranking_loss", op=_aten("margin_ranking_loss"), method=False,
           supports_out=False, dtypes=FLOAT_BF16, sample_inputs=sample_margin_ranking_loss,
           supports_gradgrad=True),
    OpInfo("cosine_embedding_loss", op=_aten("cosine_embedding_loss"), method=False,
           supports_out=False, dtypes=FLOAT, sample_inputs=sample_cosine_embedding_loss,
           error_inputs=errors_cosine_embedding_loss, supports_gradgrad=True),
    OpInfo("mse_loss.out", op=_aten("mse_loss"), method=False, dtypes=("float32", "float64"),
           sample_inputs=sample_mse_loss_out, error_inputs=errors_mse_loss_out),
    OpInfo("mse_loss_backward.grad_input", op=_aten("mse_loss_backward"), method=False,
           out_name="grad_input", dtypes=("float32", "float64"),
           sample_inputs=sample_mse_loss_backward_out, error_inputs=errors_mse_loss_backward_out),
]
