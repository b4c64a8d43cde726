"""Table entries of the convolutions (issue #32 §1, helper "conv"): convolution and its out=
form, convolution_backward (output_mask), the fronts torch.nn.functional calls (conv1d, conv2d,
conv3d, their padding='same'/'valid' overloads, conv_transpose1d, conv_transpose2d).

Samples cover stride, padding, dilation, groups (depthwise included), bias or none, batch 1, >1
and 0, unbatched inputs, odd sizes, non-contiguous and channels-last inputs and weights (whose
outputs are channels-last, as torch's), and the 'same' padding with an odd total (even kernel:
torch pads the input on the right). float32, float64 and bfloat16, torch 1.13's CPU dtypes."""

import opdispatch

from .core import ErrorInput, OpInfo, SampleInput, aten_op

CONV = ("float32", "float64", "bfloat16")
# torch 1.13's bfloat16 transposed convolution on the CPU (mkldnn) mistakes the weight's layout
# and raises "Given groups=1, weight of size [4, 3, 3, 3], expected input[2, 4, 5, 5] to have 3
# channels": the transposed samples leave bfloat16 out (opdispatch computes it).
TRANSPOSED = ("float32", "float64")
# oneDNN and torch sum in other orders; bfloat16 results are rounded once from float sums.
TOL = {"float32": (1e-4, 1e-4), "bfloat16": (5e-2, 3e-2)}


def _w(make, shape, requires_grad):
    return make(shape, requires_grad=requires_grad)


def _channels_last(make, shape, requires_grad):
    """An NC* tensor of `shape` laid out channels-last (made N*C, then permuted)."""
    perm = (0, len(shape) - 1) + tuple(range(1, len(shape) - 1))
    t = make((shape[0],) + tuple(shape[2:]) + (shape[1],)).permute(*perm)
    if requires_grad and make.dtype in CONV:
        t.requires_grad_(True)
    return t


# (input, weight, bias?, stride, padding, dilation, groups) of the 2-D samples.
_CONV2D = [
    ((2, 4, 7, 6), (6, 4, 3, 3), True, [1, 1], [0, 0], [1, 1], 1),
    ((1, 4, 5, 5), (4, 1, 3, 3), True, [2, 2], [1, 1], [1, 1], 4),    # depthwise
    ((3, 6, 9, 7), (4, 3, 3, 2), False, [1, 2], [1, 0], [2, 1], 2),
    ((0, 2, 5, 5), (3, 2, 3, 3), True, [1, 1], [1, 1], [1, 1], 1),    # batch 0
    ((6, 6, 5), (2, 3, 2, 2), True, [1, 1], [0, 0], [1, 1], 2),       # unbatched
    ((2, 3, 5, 8), (4, 3, 5, 1), True, [2, 3], [2, 0], [1, 1], 1),
]


def sample_conv2d(op, make, dtype, requires_grad):
    rg = requires_grad
    for xs, ws, bias, s, p, d, g in _CONV2D:
        b = make((ws[0],), requires_grad=rg) if bias else None
        yield SampleInput(make(xs, requires_grad=rg), args=(_w(make, ws, rg), b, s, p, d, g))
    yield SampleInput(make((2, 3, 6, 6), noncontiguous=True, requires_grad=rg),
                      args=(make((4, 3, 3, 3), noncontiguous=True, requires_grad=rg),),
                      name="non-contiguous")
    yield SampleInput(_channels_last(make, (2, 4, 6, 5), rg),
                      args=(_w(make, (5, 4, 3, 3), rg), make((5,), requires_grad=rg)),
                      kwargs={"padding": 1}, name="channels-last input")
    yield SampleInput(make((1, 4, 5, 5), requires_grad=rg),
                      args=(_channels_last(make, (6, 4, 2, 2), rg),), kwargs={"stride": 2},
                      name="channels-last weight")
    yield SampleInput(make((2, 2, 4, 4), requires_grad=rg), args=(_w(make, (3, 2, 2, 2), rg),),
                      kwargs={"padding": [1]}, name="one padding value")


def sample_conv1d(op, make, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make((2, 4, 9), requires_grad=rg),
                      args=(_w(make, (6, 4, 3), rg), make((6,), requires_grad=rg)))
    yield SampleInput(make((1, 4, 10), requires_grad=rg),
                      args=(_w(make, (4, 1, 3), rg), None, [2], [1], [2], 4), name="depthwise")
    yield SampleInput(make((3, 7), requires_grad=rg), args=(_w(make, (2, 3, 2), rg),),
                      name="unbatched")
    yield SampleInput(make((0, 2, 5), requires_grad=rg), args=(_w(make, (4, 2, 3), rg),),
                      kwargs={"padding": 1}, name="batch 0")
    yield SampleInput(make((2, 3, 8), noncontiguous=True, requires_grad=rg),
                      args=(_w(make, (4, 3, 4), rg),), kwargs={"stride": 3, "dilation": 2})


def sample_conv3d(op, make, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make((1, 2, 4, 5, 4), requires_grad=rg),
                      args=(_w(make, (3, 2, 2, 3, 2), rg), make((3,), requires_grad=rg)))
    yield SampleInput(make((2, 4, 5, 4, 5), requires_grad=rg),
                      args=(_w(make, (2, 2, 3, 2, 2), rg), None, [2, 1, 1], [1, 0, 1], [1, 1, 2],
                            2))
    yield SampleInput(make((2, 3, 3, 4), requires_grad=rg), args=(_w(make, (2, 2, 2, 2, 2), rg),),
                      name="unbatched")
    yield SampleInput(_channels_last(make, (1, 3, 3, 4, 3), rg), args=(_w(make, (2, 3, 2, 2, 2), rg),),
                      name="channels-last 3d")


def sample_conv2d_padding(op, make, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make((2, 4, 7, 6), requires_grad=rg),
                      args=(_w(make, (6, 4, 3, 3), rg), make((6,), requires_grad=rg)),
                      kwargs={"padding": "same"})
    yield SampleInput(make((1, 2, 6, 5), requires_grad=rg), args=(_w(make, (3, 2, 2, 4), rg),),
                      kwargs={"padding": "same"}, name="even kernel")
    yield SampleInput(make((1, 2, 7, 7), requires_grad=rg), args=(_w(make, (3, 2, 3, 2), rg),),
                      kwargs={"padding": "same", "dilation": [2, 1]}, name="dilated")
    yield SampleInput(make((5, 6, 7), requires_grad=rg), args=(_w(make, (2, 5, 3, 3), rg),),
                      kwargs={"padding": "valid", "stride": 2}, name="valid, unbatched")
    yield SampleInput(make((2, 4, 5, 5), requires_grad=rg), args=(_w(make, (4, 1, 3, 3), rg),),
                      kwargs={"padding": "same", "groups": 4}, name="depthwise")


def sample_conv1d_padding(op, make, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make((2, 3, 8), requires_grad=rg), args=(_w(make, (4, 3, 4), rg),),
                      kwargs={"padding": "same"}, name="even kernel")
    yield SampleInput(make((2, 3, 8), requires_grad=rg),
                      args=(_w(make, (4, 3, 3), rg), make((4,), requires_grad=rg)),
                      kwargs={"padding": "valid", "dilation": 2})


def _transpose_samples(make, rg):
    # (input, weight, bias?, stride, padding, output_padding, groups, dilation)
    cases = [
        ((2, 4, 5, 5), (4, 3, 3, 3), True, [1, 1], [0, 0], [0, 0], 1, [1, 1]),
        ((1, 4, 4, 5), (4, 2, 3, 2), False, [2, 2], [1, 0], [1, 1], 2, [1, 1]),
        ((2, 2, 3, 4), (2, 3, 2, 3), True, [2, 1], [0, 1], [0, 0], 1, [2, 2]),
        ((1, 3, 4, 4), (3, 2, 3, 3), False, [1, 1], [2, 1], [1, 0], 1, [2, 1]),  # op < dilation
        ((0, 2, 3, 3), (2, 2, 2, 2), True, [1, 1], [0, 0], [0, 0], 1, [1, 1]),
        ((3, 4, 4), (3, 2, 2, 2), True, [2, 2], [0, 0], [1, 0], 1, [1, 1]),       # unbatched
    ]
    for xs, ws, bias, s, p, op_, g, d in cases:
        b = make((ws[1] * g,), requires_grad=rg) if bias else None
        yield SampleInput(make(xs, requires_grad=rg), args=(_w(make, ws, rg), b, s, p, op_, g, d))
    yield SampleInput(make((2, 3, 4, 5), noncontiguous=True, requires_grad=rg),
                      args=(_w(make, (3, 2, 2, 2), rg),), kwargs={"stride": 2},
                      name="non-contiguous")
    yield SampleInput(_channels_last(make, (2, 3, 4, 4), rg), args=(_w(make, (3, 2, 2, 2), rg),),
                      name="channels-last")


def sample_conv_transpose2d(op, make, dtype, requires_grad):
    yield from _transpose_samples(make, requires_grad)


def sample_conv_transpose1d(op, make, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make((2, 4, 6), requires_grad=rg),
                      args=(_w(make, (4, 3, 3), rg), make((3,), requires_grad=rg)))
    yield SampleInput(make((1, 4, 5), requires_grad=rg),
                      args=(_w(make, (4, 1, 3), rg), None, [2], [1], [1], 2, [1]))
    yield SampleInput(make((3, 5), requires_grad=rg), args=(_w(make, (3, 2, 2), rg),),
                      kwargs={"dilation": 2}, name="unbatched")
    yield SampleInput(make((0, 2, 4), requires_grad=rg), args=(_w(make, (2, 2, 2), rg),),
                      name="batch 0")


def sample_convolution(op, make, dtype, requires_grad):
    rg = requires_grad
    for s in sample_conv2d(op, make, dtype, requires_grad):
        x, w = s.input, s.args[0]
        if x.dim() != 4 or s.kwargs:
            continue
        rest = list(s.args[1:]) + [None, [1, 1], [0, 0], [1, 1], 1][len(s.args) - 1:]
        b, st, p, d, g = rest
        yield SampleInput(x, args=(w, b, st, p, d, False, [0, 0], g), name=s.name)
    for s in _transpose_samples(make, rg) if dtype != "bfloat16" else ():
        x, w = s.input, s.args[0]
        if x.dim() != 4 or s.kwargs or len(s.args) < 8:
            continue
        b, st, p, op_, g, d = s.args[1:]
        yield SampleInput(x, args=(w, b, st, p, d, True, op_, g))
    yield SampleInput(make((2, 3, 7), requires_grad=rg),
                      args=(_w(make, (2, 3, 3), rg), None, [2], [1], [1], False, [0], 1),
                      name="1-d")


def sample_convolution_backward(op, make, dtype, requires_grad):
    rg = requires_grad
    # (input, weight, stride, padding, dilation, transposed, output_padding, groups, mask)
    cases = [
        ((2, 4, 6, 5), (6, 2, 3, 3), [1, 1], [1, 0], [1, 1], False, [0, 0], 2,
         [True, True, True]),
        ((1, 3, 7, 7), (2, 3, 3, 2), [2, 1], [0, 1], [2, 1], False, [0, 0], 1,
         [True, False, True]),
        ((2, 4, 4, 4), (4, 3, 3, 3), [2, 2], [1, 1], [1, 1], True, [1, 1], 1,
         [False, True, False]),
        ((2, 3, 6), (4, 3, 2), [1], [0], [1], False, [0], 1, [True, True, False]),
    ]
    for xs, ws, s, p, d, t, op_, g, mask in cases:
        if t and dtype == "bfloat16":
            continue
        if dtype == "bfloat16":  # torch 1.13's mkldnn path returns every gradient in bfloat16
            mask = [True, True, True]
        x = make(xs, requires_grad=rg)
        w = _w(make, ws, rg)
        y = opdispatch.ops.aten.convolution(x.detach(), w.detach(), None, s, p, d, t, op_, g)
        gy = make(tuple(y.shape), requires_grad=rg)
        yield SampleInput(gy, args=(x, w, [y.shape[1]], s, p, d, t, op_, g, mask))


def errors_conv2d(op, make):
    x = make((2, 4, 5, 5))
    w = make((6, 4, 3, 3))
    yield ErrorInput(SampleInput(make((4, 5)), args=(w,)), RuntimeError,
                     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input "
                     r"of size: \[4, 5\]")
    yield ErrorInput(SampleInput(x, args=(make((6, 3, 3, 3)),)), RuntimeError,
                     r"Given groups=1, weight of size \[6, 3, 3, 3\], expected input\[2, 4, 5, 5\] "
                     r"to have 3 channels, but got 4 channels instead")
    yield ErrorInput(SampleInput(x, args=(make((6, 2, 3, 3)), None, 1, 0, 1, 4)), RuntimeError,
                     r"Given groups=4, expected weight to be divisible by 4 at dimension 0, but got "
                     r"weight of size \[\[6, 2, 3, 3\]\] instead")
    yield ErrorInput(SampleInput(x, args=(make((6, 4, 7, 7)),)), RuntimeError,
                     r"Calculated padded input size per channel: \(5 x 5\). Kernel size: \(7 x 7\). "
                     r"Kernel size can't be greater than actual input size")
    yield ErrorInput(SampleInput(x, args=(w, None, 1, -1)), RuntimeError,
                     r"negative padding is not supported")
    yield ErrorInput(SampleInput(x, args=(w, None, 0)), RuntimeError,
                     r"non-positive stride is not supported")
    yield ErrorInput(SampleInput(x, args=(w, None, 1, 0, 0)), RuntimeError,
                     r"non-positive dilation is not supported")
    yield ErrorInput(SampleInput(x, args=(w, make((5,)))), RuntimeError,
                     r"Given weight of size \[6, 4, 3, 3\], expected bias to be 1-dimensional with "
                     r"6 elements, but got bias of size \[5\] instead")
    yield ErrorInput(SampleInput(x, args=(w, None, 1, 0, 1, 0)), RuntimeError,
                     r"non-positive groups is not supported")
    if make.dtype == "float32":
        yield ErrorInput(SampleInput(x, args=(make((6, 4, 3, 3), dtype_override="float64"),)),
                         RuntimeError,
                         r"Input type \(torch.FloatTensor\) and weight type \(torch.DoubleTensor\) "
                         r"should be the same", on_meta=False)
        yield ErrorInput(SampleInput(x, args=(w, make((6,), dtype_override="float64"))),
                         RuntimeError,
                         r"Input type \(float\) and bias type \(double\) should be the same",
                         on_meta=False)
        yield ErrorInput(SampleInput(make((2, 4, 5, 5), dtype_override="float16"),
                                     args=(make((6, 4, 3, 3), dtype_override="float16"),)),
                         RuntimeError, r"\"slow_conv2d_cpu\" not implemented for 'Half'",
                         on_meta=False)


def errors_conv2d_padding(op, make):
    x = make((2, 4, 5, 5))
    w = make((6, 4, 3, 3))
    yield ErrorInput(SampleInput(x, args=(w,), kwargs={"padding": "same", "stride": 2}),
                     RuntimeError, r"padding='same' is not supported for strided convolutions")
    yield ErrorInput(SampleInput(x, args=(w,), kwargs={"padding": "foo"}), RuntimeError,
                     r"Invalid padding string: 'foo'")
    yield ErrorInput(SampleInput(make((1, 2, 4, 5, 5)), args=(w,), kwargs={"padding": "same"}),
                     RuntimeError, r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d")


def errors_conv1d(op, make):
    yield ErrorInput(SampleInput(make((4, 5, 5, 5)), args=(make((6, 5, 3)),)), RuntimeError,
                     r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got input "
                     r"of size: \[4, 5, 5, 5\]")


def errors_conv_transpose2d(op, make):
    x = make((2, 4, 5, 5))
    yield ErrorInput(SampleInput(x, args=(make((4, 3, 3, 3)), None, 2, 0, 2)), RuntimeError,
                     r"output padding must be smaller than either stride or dilation, but got "
                     r"output_padding_height: 2 output_padding_width: 2 stride_height: 2 "
                     r"stride_width: 2 dilation_height: 1 dilation_width: 1")
    yield ErrorInput(SampleInput(x, args=(make((5, 3, 3, 3)),)), RuntimeError,
                     r"Given transposed=1, weight of size \[5, 3, 3, 3\], expected input\[2, 4, 5, "
                     r"5\] to have 5 channels, but got 4 channels instead")
    yield ErrorInput(SampleInput(x, args=(make((4, 3, 3, 3)), make((4,)))), RuntimeError,
                     r"Given transposed=1, weight of size \[4, 3, 3, 3\], expected bias to be "
                     r"1-dimensional with 3 elements, but got bias of size \[4\] instead")
    yield ErrorInput(SampleInput(make((4, 5)), args=(make((4, 3, 3, 3)),)), RuntimeError,
                     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv_transpose2d, but "
                     r"got input of size: \[4, 5\]")


def errors_convolution(op, make):
    x = make((2, 4, 5, 5))
    w = make((6, 4, 3, 3))
    yield ErrorInput(SampleInput(x, args=(w, None, [1, 1, 1], [0], [1], False, [0], 1)),
                     RuntimeError,
                     r"expected stride to be a single integer value or a list of 2 values to "
                     r"match the convolution dimensions, but got stride=\[1, 1, 1\]")
    yield ErrorInput(SampleInput(make((4, 5, 5)), args=(w, None, [1], [0], [1], False, [0], 1)),
                     RuntimeError,
                     r"Expected 4-dimensional input for 4-dimensional weight \[6, 4, 3, 3\], but "
                     r"got 3-dimensional input of size \[4, 5, 5\] instead")
    yield ErrorInput(SampleInput(x, args=(w, None, [1], [0], [1], True, [-1], 1)), RuntimeError,
                     r"negative output_padding is not supported")


def _fn(name):
    def op(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    op.__name__ = name
    return op


def _torch_ref(op):
    """``op`` for torch, where torch 1.13 raises "view size is not compatible with input tensor's
    size and stride" for an empty batch with a non-contiguous weight (its backend views the
    weight): the call again with contiguous tensors, whose result (empty, or zeros) is what the
    convolution means."""
    def ref(lib, *args, **kwargs):
        try:
            return op(lib, *args, **kwargs)
        except RuntimeError as e:
            if "view size is not compatible" not in str(e):
                raise
            dense = [a.contiguous() if isinstance(a, lib.Tensor) else a for a in args]
            return op(lib, *dense, **kwargs)
    ref.__name__ = op.__name__
    return ref


OP_DB = [
    OpInfo("conv2d", op=_fn("conv2d"), ref=_torch_ref(_fn("conv2d")), method=False, supports_out=False, compare_strides=True, dtypes=CONV, sample_inputs=sample_conv2d,
           error_inputs=errors_conv2d, tol=TOL, supports_gradgrad=True),
    OpInfo("conv1d", op=_fn("conv1d"), ref=_torch_ref(_fn("conv1d")), method=False, supports_out=False, compare_strides=True, dtypes=CONV, sample_inputs=sample_conv1d,
           error_inputs=errors_conv1d, tol=TOL, supports_gradgrad=True),
    OpInfo("conv3d", op=_fn("conv3d"), ref=_torch_ref(_fn("conv3d")), method=False, supports_out=False, compare_strides=True, dtypes=CONV, sample_inputs=sample_conv3d,
           tol=TOL),
    OpInfo("conv2d.padding", op=_fn("conv2d"), ref=_torch_ref(_fn("conv2d")), method=False, supports_out=False, compare_strides=True, dtypes=CONV,
           sample_inputs=sample_conv2d_padding, error_inputs=errors_conv2d_padding, tol=TOL,
           supports_gradgrad=True),
    OpInfo("conv1d.padding", op=_fn("conv1d"), ref=_torch_ref(_fn("conv1d")), method=False, supports_out=False, compare_strides=True, dtypes=CONV,
           sample_inputs=sample_conv1d_padding, tol=TOL),
    OpInfo("conv_transpose2d", op=_fn("conv_transpose2d"), ref=_torch_ref(_fn("conv_transpose2d")), method=False, supports_out=False, compare_strides=True, dtypes=TRANSPOSED,
           sample_inputs=sample_conv_transpose2d, error_inputs=errors_conv_transpose2d, tol=TOL,
           supports_gradgrad=True),
    OpInfo("conv_transpose1d", op=_fn("conv_transpose1d"), ref=_torch_ref(_fn("conv_transpose1d")), method=False, supports_out=False, compare_strides=True, dtypes=TRANSPOSED,
           sample_inputs=sample_conv_transpose1d, tol=TOL),
    OpInfo("convolution", op=_fn("convolution"), ref=_torch_ref(_fn("convolution")), method=False, supports_out=False, compare_strides=True, dtypes=CONV,
           sample_inputs=sample_convolution, error_inputs=errors_convolution, tol=TOL,
           supports_gradgrad=True),
    OpInfo("convolution_backward", op=aten_op("convolution_backward", "default"),
           ref=_torch_ref(aten_op("convolution_backward", "default")), method=False,
           supports_out=False,
           dtypes=CONV, sample_inputs=sample_convolution_backward, tol=TOL,
           supports_gradgrad=True),
]
