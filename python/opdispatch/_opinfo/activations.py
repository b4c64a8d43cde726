"""Table entries of the activation functions (issue #32 §1, helper "activations"): silu, mish,
hardsigmoid, hardswish, hardtanh, leaky_relu, elu, celu, selu, softplus, threshold, log_sigmoid
(and log_sigmoid_forward), glu and prelu, with their in-place and out= forms and their _backward
operators.

Most are in torch's nn namespace (torch._C._nn), with no torch.<name> function and no Tensor
method: entries call ``lib.ops.aten.<name>`` (the packet picks .out for out=), and the in-place
forms are entries of their own over a clone of self (the table's in-place check calls a method,
which torch lacks)."""

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D, ref_in_float32

ACT = ("float32", "float64", "bfloat16")  # torch 1.13's CPU activation kernels: no Half
FLOAT = ("float32", "float64")
THRESHOLD = ("bfloat16",) + D.floating[:2] + D.integral  # threshold_cpu: no Half, no Bool


def _aten(name):
    """``lib.ops.aten.<name>(...)``: the overload packet, the same path in both libraries."""
    def op(lib, *args, **kwargs):
        return getattr(lib.ops.aten, name)(*args, **kwargs)
    op.__name__ = name
    return op


def _inplace(name):
    """The in-place ``aten::<name>`` applied to a clone of self, compared as a function."""
    def op(lib, self, *args, **kwargs):
        return getattr(lib.ops.aten, name)(self.clone(), *args, **kwargs)
    op.__name__ = name
    return op


def _differentiable_ref(name, formula, widen=True):
    """The torch reference of a _backward operator that torch 1.13 cannot differentiate
    (silu_backward, mish_backward, hardsigmoid_backward: "derivative for aten::X is not
    implemented"; prelu_backward's double backward leaves grad_output's gradient undefined):
    torch's kernel for the values (bfloat16 computed in float32 and rounded, as opdispatch's
    kernels compute it; torch's takes bfloat16 steps), and, where a tensor requires grad, the
    same derivative composed of torch operators, which torch differentiates."""
    kernel, widened = _aten(name), ref_in_float32(_aten(name))

    def ref(lib, *args, **kwargs):
        if any(getattr(a, "requires_grad", False) for a in args):
            return formula(lib, *args, **kwargs)
        if widen and any(getattr(a, "dtype", None) == lib.bfloat16 for a in args):
            return widened(lib, *args, **kwargs)
        return kernel(lib, *args, **kwargs)
    ref.__name__ = name
    return ref


def _silu_backward_formula(lib, grad_output, self):
    s = lib.sigmoid(self)
    return grad_output * s * (1 + self * (1 - s))


def _mish_backward_formula(lib, grad_output, self):
    t = lib.tanh(lib.nn.functional.softplus(self))
    return grad_output * (t + self * lib.sigmoid(self) * (1 - t * t))


def _hardsigmoid_backward_formula(lib, grad_output, self):
    inside = (self > -3) & (self < 3)
    return lib.where(inside, grad_output / 6, lib.zeros_like(grad_output))


def _prelu_backward_formula(lib, grad_output, self, weight):
    w = weight.reshape([1, -1] + [1] * (self.dim() - 2)) if weight.numel() > 1 else weight.sum()
    positive = self > 0
    grad_self = lib.where(positive, grad_output, w * grad_output)
    per_element = lib.where(positive, lib.zeros_like(self), self * grad_output)
    if weight.numel() > 1:
        dims = [d for d in range(self.dim()) if d != 1]
        return grad_self, per_element.sum(dims).reshape(weight.shape)
    return grad_self, per_element.sum().reshape(weight.shape)


def _not_impl(kernel, dtype):
    return rf"\"{kernel}\" not implemented for '{dtype}'"


# ---- samples ---------------------------------------------------------------------------------

def _unary_samples(make, rg, kwargs_list=({},), low=-6, high=6):
    def x(shape, **kw):
        return make(shape, low=low, high=high, requires_grad=rg, **kw)
    kw0 = kwargs_list[0]
    yield SampleInput(x((3, 4)), kwargs=kw0, name="2-d")
    yield SampleInput(x((3, 4), noncontiguous=True), kwargs=kw0, name="strided")
    yield SampleInput(x((4, 3)).t(), kwargs=kw0, name="transposed")
    yield SampleInput(x(()), kwargs=kw0, name="0-d")
    yield SampleInput(x((0, 3)), kwargs=kw0, name="empty")
    yield SampleInput(x((1027,)), kwargs=kw0, name="1027 elements")
    for i, kw in enumerate(kwargs_list[1:]):
        yield SampleInput(x((2, 5)), kwargs=kw, name=f"kwargs {i + 1}")


def sample_unary(op, make, dtype, rg):
    yield from _unary_samples(make, rg)


def _backward_samples(make, rg, args=(), low=-6, high=6):
    """(grad_output, self, *args) samples; grad_output broadcasts in one of them."""
    def x(shape, **kw):
        return make(shape, low=low, high=high, requires_grad=rg, **kw)
    yield SampleInput(x((3, 4)), args=(x((3, 4)),) + args, name="2-d")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(x((4, 3)).t(),) + args,
                      name="strided")
    yield SampleInput(x((3, 1)), args=(x((3, 4)),) + args, name="broadcast grad_output")
    yield SampleInput(x(()), args=(x(()),) + args, name="0-d")
    yield SampleInput(x((0, 3)), args=(x((0, 3)),) + args, name="empty")


def sample_backward(op, make, dtype, rg):
    yield from _backward_samples(make, rg)


def sample_hardtanh(op, make, dtype, rg):
    yield from _unary_samples(make, rg, ({}, {"min_val": -0.5, "max_val": 2.0},
                                         {"min_val": 1.0, "max_val": -1.0}))


def sample_hardtanh_backward(op, make, dtype, rg):
    yield from _backward_samples(make, rg, (-1.0, 1.0))
    yield SampleInput(make((2, 5), requires_grad=rg), args=(make((2, 5), requires_grad=rg),
                                                            -0.5, 2.0), name="bounds")


def sample_leaky_relu(op, make, dtype, rg):
    yield from _unary_samples(make, rg, ({}, {"negative_slope": 0.2}, {"negative_slope": -1.5}))


def sample_leaky_relu_(op, make, dtype, rg):
    # A negative slope in place cannot be differentiated (PyTorch's error, errors_leaky_relu_backward).
    yield from _unary_samples(make, rg, ({}, {"negative_slope": 0.2}))


def sample_leaky_relu_backward(op, make, dtype, rg):
    yield from _backward_samples(make, rg, (0.01, False))
    yield SampleInput(make((2, 5), requires_grad=rg), args=(make((2, 5), requires_grad=rg),
                                                            0.3, True), name="self is result")


def sample_elu(op, make, dtype, rg):
    yield from _unary_samples(make, rg, ({}, {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5},
                                         {"alpha": -0.7}))


def sample_elu_(op, make, dtype, rg):
    yield from _unary_samples(make, rg, ({}, {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}))


def sample_elu_backward(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-4, high=4, requires_grad=rg, **kw)
    for is_result, alpha in ((False, 1.0), (True, 1.3)):
        args = (alpha, 1.5, 0.8, is_result)
        yield SampleInput(x((3, 4)), args=args + (x((3, 4)),), name=f"is_result={is_result}")
        yield SampleInput(x((3, 4), noncontiguous=True), args=args + (x((4, 3)).t(),),
                          name=f"strided is_result={is_result}")
    yield SampleInput(x(()), args=(1.0, 1.0, 1.0, False, x(())), name="0-d")
    yield SampleInput(x((0, 3)), args=(1.0, 1.0, 1.0, False, x((0, 3))), name="empty")


def sample_celu(op, make, dtype, rg):
    yield from _unary_samples(make, rg, ({}, {"alpha": 0.5}, {"alpha": -2.0}))


def sample_softplus(op, make, dtype, rg):
    yield from _unary_samples(make, rg, ({}, {"beta": 2.0, "threshold": 3.0},
                                         {"beta": 0.5, "threshold": 1.0}))


def sample_softplus_backward(op, make, dtype, rg):
    yield from _backward_samples(make, rg, (1.0, 20.0))
    yield SampleInput(make((2, 5), low=-3, high=3, requires_grad=rg),
                      args=(make((2, 5), low=-3, high=3, requires_grad=rg), 2.0, 3.0),
                      name="beta 2 threshold 3")


def sample_threshold(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-6, high=6, requires_grad=rg, **kw)
    yield SampleInput(x((3, 4)), args=(0.5, -2), name="2-d")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(1, 20), name="strided")
    yield SampleInput(x((4, 3)).t(), args=(-1, 0), name="transposed")
    yield SampleInput(x(()), args=(0, 3), name="0-d")
    yield SampleInput(x((0, 3)), args=(0, 3), name="empty")
    yield SampleInput(x((1027,)), args=(2, -1), name="1027 elements")


def _log_sigmoid_backward(lib, grad_output, self, **kwargs):
    """log_sigmoid_backward with the buffer of self's forward, made here: it is a function of
    self (gradcheck perturbs self, and the buffer must follow), not an input of its own."""
    buffer = lib.ops.aten.log_sigmoid_forward(self.detach())[1]
    return lib.ops.aten.log_sigmoid_backward(grad_output, self, buffer, **kwargs)


def sample_glu(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-4, high=4, requires_grad=rg, **kw)
    yield SampleInput(x((3, 4)), name="2-d, dim -1")
    yield SampleInput(x((4, 3)), args=(0,), name="dim 0")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(1,), name="strided")
    yield SampleInput(x((2, 6, 3)).transpose(0, 2), args=(1,), name="transposed 3-d")
    yield SampleInput(x((0, 4)), args=(1,), name="empty")
    yield SampleInput(x((1026,)), name="1026 elements")


def sample_glu_backward(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-4, high=4, requires_grad=rg, **kw)
    yield SampleInput(x((3, 2)), args=(x((3, 4)), -1), name="2-d, dim -1")
    yield SampleInput(x((2, 3)), args=(x((4, 3)), 0), name="dim 0")
    yield SampleInput(x((2, 3)).t(), args=(x((3, 4), noncontiguous=True), 1), name="strided")
    yield SampleInput(x((0, 2)), args=(x((0, 4)), 1), name="empty")


def sample_prelu(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-4, high=4, requires_grad=rg, **kw)
    yield SampleInput(x((2, 3, 4)), args=(x((3,)),), name="per channel")
    yield SampleInput(x((2, 3, 4)), args=(x((1,)),), name="one weight")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(x((4,)),), name="strided")
    yield SampleInput(x((5,)), args=(x(()),), name="1-d, 0-d weight")
    yield SampleInput(x(()), args=(x((1,)),), name="0-d")
    yield SampleInput(x((0, 3)), args=(x((3,)),), name="empty")


def sample_prelu_backward(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-4, high=4, requires_grad=rg, **kw)
    yield SampleInput(x((2, 3, 4)), args=(x((2, 3, 4)), x((3,))), name="per channel")
    yield SampleInput(x((2, 3, 4)), args=(x((2, 3, 4)), x((1,))), name="one weight")
    yield SampleInput(x((3, 4)), args=(x((3, 4), noncontiguous=True), x((4,))), name="strided")
    yield SampleInput(x(()), args=(x(()), x((1,))), name="0-d")


# ---- errors ----------------------------------------------------------------------------------

def _dtype_errors(kernel, *dtypes, backward=False, args=()):
    names = {"float16": "Half", "int64": "Long", "bfloat16": "BFloat16", "bool": "Bool",
             "complex64": "ComplexFloat"}

    def errors(op, make):
        for dt in dtypes:
            t = make((2,), dtype_override=dt)
            first = (make((2,), dtype_override=dt),) if backward else ()
            yield ErrorInput(SampleInput(t, args=first + args), RuntimeError,
                             _not_impl(kernel, names[dt]))
    return errors


def errors_hardtanh(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="bool")), RuntimeError,
                     r"Bool inputs not supported for hardtanh")
    yield ErrorInput(SampleInput(make((2,), dtype_override="uint8"), args=(-1, 1)), RuntimeError,
                     r"cannot do hardtanh on an unsigned type with negative limits")
    yield ErrorInput(SampleInput(make((2,), dtype_override="float16")), RuntimeError,
                     _not_impl("clamp_scalar_cpu", "Half"))


def errors_hardtanh_backward(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="bfloat16"),
                                 args=(make((2,), dtype_override="bfloat16"), -1, 1)),
                     RuntimeError, _not_impl("hardshrink_backward_cpu", "BFloat16"))


def errors_leaky_relu(op, make):
    yield from _dtype_errors("leaky_relu_cpu", "int64", "float16")(op, make)
    yield ErrorInput(SampleInput(make((2,)), args=(1 + 2j,)), RuntimeError,
                     r"value cannot be converted to type float without overflow")


def errors_leaky_relu_backward(op, make):
    yield ErrorInput(SampleInput(make((2,)), args=(make((2,)), -0.1, True)), RuntimeError,
                     r"In-place leakyReLu backward calculation is triggered with a negative slope")


def errors_elu_backward(op, make):
    yield ErrorInput(SampleInput(make((2,)), args=(-1.0, 1, 1, True, make((2,)))), RuntimeError,
                     r"In-place elu backward calculation is triggered with a negative slope")


def errors_celu(op, make):
    yield ErrorInput(SampleInput(make((2,)), args=(0,)), RuntimeError,
                     r"ZeroDivisionError: alpha cannot be 0 for CELU")
    yield ErrorInput(SampleInput(make((2,), dtype_override="int64")), RuntimeError,
                     _not_impl("elu_cpu", "Long"))


def errors_threshold(op, make):
    for dt, name in (("bool", "Bool"), ("float16", "Half")):
        yield ErrorInput(SampleInput(make((2,), dtype_override=dt), args=(0, 1)), RuntimeError,
                         _not_impl("threshold_cpu", name))


def errors_glu(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(1,)), RuntimeError,
                     r"Halving dimension must be even, but dimension 1 is size 3")
    yield ErrorInput(SampleInput(make(())), RuntimeError,
                     r"glu does not support 0-dimensional tensors")
    yield ErrorInput(SampleInput(make((2, 4)), args=(2,)), IndexError,
                     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)")
    yield ErrorInput(SampleInput(make((2, 4), dtype_override="int64")), RuntimeError,
                     _not_impl("glu_cpu", "Long"))


def errors_glu_backward(op, make):
    yield ErrorInput(SampleInput(make((2, 1)), args=(make((2, 3)), 1)), RuntimeError,
                     r"Halving dimension must be even, but dimension 1 is size 3")


def errors_prelu(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2,)),)), RuntimeError,
                     r"Mismatch of parameter numbers and input channel size. Found parameter "
                     r"numbers = 2 and channel size = 3\.")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((1, 3)),)), RuntimeError,
                     r"prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = 2")
    yield ErrorInput(SampleInput(make((2, 3), dtype_override="float32"),
                                 args=(make((3,), dtype_override="float64"),)), RuntimeError,
                     r"Found dtype Double but expected Float")
    yield ErrorInput(SampleInput(make((2, 3), dtype_override="int64"),
                                 args=(make((3,), dtype_override="int64"),)), RuntimeError,
                     _not_impl("prelu_cpu", "Long"))


# ---- the table -------------------------------------------------------------------------------

def _unary(name, samples, errors, dtypes=ACT, inplace=True, inplace_samples=None, **kw):
    """The entry of `name` (function and out=) and, with `inplace`, of `name_`."""
    entries = [OpInfo(name, op=_aten(name), method=False, supports_out=True, dtypes=dtypes,
                      sample_inputs=samples, error_inputs=errors, compare_strides=True,
                      supports_gradgrad=True, **kw)]
    if inplace:
        entries.append(OpInfo(name + "_", op=_inplace(name + "_"), method=False,
                              supports_out=False, dtypes=dtypes,
                              sample_inputs=inplace_samples or samples, supports_gradgrad=True,
                              **kw))
    return entries


def _backward(name, samples, errors=None, dtypes=ACT, out_name="grad_input", **kw):
    return OpInfo(name, op=_aten(name), method=False, supports_out=out_name is not None,
                  out_name=out_name or "out", dtypes=dtypes, sample_inputs=samples,
                  error_inputs=errors, supports_gradgrad=True, **kw)


OP_DB = [
    *_unary("silu", sample_unary, _dtype_errors("silu_cpu", "int64", "float16")),
    _backward("silu_backward", sample_backward,
              _dtype_errors("silu_backward_cpu", "float16", backward=True),
              ref=_differentiable_ref("silu_backward", _silu_backward_formula)),
    *_unary("mish", sample_unary, _dtype_errors("mish_cpu", "bfloat16", "int64"), dtypes=FLOAT),
    _backward("mish_backward", sample_backward,
              _dtype_errors("mish_backward_cpu", "bfloat16", backward=True), dtypes=FLOAT,
              out_name=None, ref=_differentiable_ref("mish_backward", _mish_backward_formula,
                                                     widen=False)),
    *_unary("hardsigmoid", sample_unary, _dtype_errors("hardsigmoid_cpu", "int64", "float16")),
    _backward("hardsigmoid_backward", sample_backward,
              _dtype_errors("hardsigmoid_backward", "float16", backward=True),
              ref=_differentiable_ref("hardsigmoid_backward", _hardsigmoid_backward_formula)),
    *_unary("hardswish", sample_unary, _dtype_errors("hardswish_cpu", "int64", "float16")),
    _backward("hardswish_backward", sample_backward,
              _dtype_errors("hardswish_backward_cpu", "float16", backward=True), out_name=None),
    *_unary("hardtanh", sample_hardtanh, errors_hardtanh),
    _backward("hardtanh_backward", sample_hardtanh_backward, errors_hardtanh_backward,
              dtypes=FLOAT),
    *_unary("leaky_relu", sample_leaky_relu, errors_leaky_relu,
            inplace_samples=sample_leaky_relu_),
    _backward("leaky_relu_backward", sample_leaky_relu_backward, errors_leaky_relu_backward),
    *_unary("elu", sample_elu, _dtype_errors("elu_cpu", "int64", "float16", "complex64"),
            inplace_samples=sample_elu_),
    _backward("elu_backward", sample_elu_backward, errors_elu_backward),
    OpInfo("celu", op=_aten("celu"), method=False, supports_out=False, dtypes=ACT,
           sample_inputs=sample_celu, error_inputs=errors_celu, supports_gradgrad=True),
    OpInfo("celu_", op=_inplace("celu_"), method=False, supports_out=False, dtypes=ACT,
           sample_inputs=sample_unary, supports_gradgrad=True),
    OpInfo("selu", op=_aten("selu"), method=False, supports_out=False, dtypes=ACT,
           sample_inputs=sample_unary, error_inputs=_dtype_errors("elu_cpu", "int64"),
           supports_gradgrad=True),
    OpInfo("selu_", op=_inplace("selu_"), method=False, supports_out=False, dtypes=ACT,
           sample_inputs=sample_unary, supports_gradgrad=True),
    *_unary("softplus", sample_softplus, _dtype_errors("softplus_cpu", "int64", "float16"),
            inplace=False),
    _backward("softplus_backward", sample_softplus_backward,
              _dtype_errors("softplus_backward_cpu", "float16", backward=True, args=(1, 20))),
    *_unary("threshold", sample_threshold, errors_threshold, dtypes=THRESHOLD),
    *_unary("log_sigmoid", sample_unary, _dtype_errors("log_sigmoid_cpu", "int64", "float16"),
            inplace=False),
    OpInfo("log_sigmoid_forward", op=_aten("log_sigmoid_forward"), method=False,
           supports_out=False, dtypes=ACT, sample_inputs=sample_unary, supports_autograd=False),
    OpInfo("log_sigmoid_backward", op=_log_sigmoid_backward, method=False, supports_out=True,
           out_name="grad_input", dtypes=ACT, sample_inputs=sample_backward,
           supports_gradgrad=True),
    OpInfo("glu", op=_aten("glu"), method=False, supports_out=True, dtypes=ACT,
           sample_inputs=sample_glu, error_inputs=errors_glu, supports_gradgrad=True),
    _backward("glu_backward", sample_glu_backward, errors_glu_backward),
    OpInfo("prelu", op=_aten("prelu"), method=False, supports_out=False, dtypes=ACT,
           sample_inputs=sample_prelu, error_inputs=errors_prelu, supports_gradgrad=True),
    _backward("prelu_backward", sample_prelu_backward, out_name=None,
              ref=_differentiable_ref("prelu_backward", _prelu_backward_formula)),
]
