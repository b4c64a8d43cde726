"""Table entries of the pooling operators (issue #32 §1, helper "pool"): max_pool2d_with_indices
and its backward, avg_pool2d and its backward, _adaptive_avg_pool2d and its backward, and the
fronts torch.nn.functional calls (max_pool2d, max_pool1d, max_pool1d_with_indices, avg_pool1d,
adaptive_avg_pool2d, adaptive_avg_pool1d).

Entries call ``lib.ops.aten.<name>`` (most are in torch's nn namespace, with no torch.<name>).
Samples cover stride, padding, dilation, ceil_mode, count_include_pad, divisor_override, batch 1,
>1 and 0, odd sizes, 3-D inputs, non-contiguous and channels-last inputs (whose outputs are
channels-last, as torch's)."""

import opdispatch

from .core import (ErrorInput, OpInfo, SampleInput, aten_packet, channels_last,
                         ref_in_float32)

POOL = ("float32", "float64", "bfloat16")   # torch 1.13's CPU pooling kernels: no Half
AVG = POOL + ("int64",)                     # avg_pool2d also takes Long


# (shape, kernel_size, stride, padding, dilation, ceil_mode) of the 2-D max samples.
_MAX2D = [
    ((2, 3, 7, 6), [2, 2], [], [0, 0], [1, 1], False),
    ((1, 2, 5, 5), [3, 3], [2, 2], [1, 1], [1, 1], True),
    ((2, 2, 8, 7), [3, 2], [2, 1], [1, 0], [2, 1], False),
    ((3, 6, 5), [2, 3], [1, 2], [1, 1], [1, 2], True),
    ((0, 2, 4, 4), [2, 2], [2, 2], [0, 0], [1, 1], False),
    ((1, 1, 6, 6), [4, 4], [3, 3], [2, 2], [1, 1], True),
]


def _max2d_inputs(make, requires_grad):
    for shape, k, s, p, d, ceil in _MAX2D:
        yield make(shape, requires_grad=requires_grad), (k, s, p, d, ceil)
    yield make((2, 3, 5, 6), noncontiguous=True, requires_grad=requires_grad), ([2, 2], [1, 2],
                                                                               [1, 0], [1, 1], False)
    yield channels_last(make, (2, 4, 5, 5), requires_grad), ([3, 3], [2, 2], [1, 1], [1, 1], True)


def sample_max_pool2d(op, make, dtype, requires_grad):
    for x, args in _max2d_inputs(make, requires_grad):
        yield SampleInput(x, args=args)
    yield SampleInput(make((1, 2, 5, 5), requires_grad=requires_grad), args=([3],),
                      kwargs={"stride": [2], "padding": [1]}, name="single ints")


def sample_max_pool2d_backward(op, make, dtype, requires_grad):
    for x, args in _max2d_inputs(make, False):
        _, indices = opdispatch.ops.aten.max_pool2d_with_indices(x, *args)
        grad = make(tuple(indices.shape), requires_grad=requires_grad)
        yield SampleInput(grad, args=(x, *args, indices))


def sample_max_pool1d(op, make, dtype, requires_grad):
    yield SampleInput(make((2, 3, 7), requires_grad=requires_grad), args=([2],))
    yield SampleInput(make((3, 9), requires_grad=requires_grad), args=([3], [2], [1], [2], True))
    yield SampleInput(make((1, 2, 8), noncontiguous=True, requires_grad=requires_grad),
                      args=([3], [1], [1], [1], False))
    yield SampleInput(make((0, 2, 5), requires_grad=requires_grad), args=([2], [2]))


def errors_max_pool2d(op, make):
    x = make((2, 3, 5, 5))
    yield ErrorInput(SampleInput(x, args=([2, 2], [1, 1], [2, 2])), RuntimeError,
                     r"pad should be at most half of kernel size, but got pad=2 and kernel_size=2")
    yield ErrorInput(SampleInput(x, args=([2, 2], [1, 1], [-1, 0])), RuntimeError,
                     r"pad must be non-negative, but got pad: -1")
    yield ErrorInput(SampleInput(x, args=([2, 2], [0, 1])), RuntimeError,
                     r"stride should not be zero")
    yield ErrorInput(SampleInput(x, args=([2, 2, 2],)), RuntimeError,
                     r"max_pool2d: kernel_size must either be a single int, or a tuple of two ints")
    yield ErrorInput(SampleInput(x, args=([2, 2], [1, 1], [0, 0], [0, 1])), RuntimeError,
                     r"dilation should be greater than zero, but got dilationH: 0 dilationW: 1")
    yield ErrorInput(SampleInput(make((5, 5)), args=([2, 2],)), RuntimeError,
                     r"non-empty 3D or 4D \(batch mode\) tensor expected for input")
    yield ErrorInput(SampleInput(make((1, 1, 2, 2)), args=([3, 3],)), RuntimeError,
                     r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\). Output "
                     r"size is too small")
    yield ErrorInput(SampleInput(make((1, 0, 4, 4)), args=([2, 2],)), RuntimeError,
                     r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for "
                     r"input, but got:\[1, 0, 4, 4\]")
    yield ErrorInput(SampleInput(make((1, 2, 4, 4), dtype_override="int64"), args=([2, 2],)),
                     RuntimeError, r"\"max_pool2d\" not implemented for 'Long'")


def errors_max_pool1d(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4, 4)), args=([2],)), RuntimeError,
                     r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 dim "
                     r"batch size for input, but got:\[2, 3, 4, 4\]")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([0],)), RuntimeError,
                     r"max_pool1d\(\) kernel_size must be greater than zero, but got 0")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([2], [1], [2])), RuntimeError,
                     r"max_pool1d\(\) padding should be at most half of kernel size, but got "
                     r"padding=2 and kernel_size=2")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([2], [1], [0], [0])), RuntimeError,
                     r"max_pool1d\(\) dilation must be greater than zero, but got 0")


def errors_max_pool1d_with_indices(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4, 4)), args=([2],)), RuntimeError,
                     r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 "
                     r"'self' \(while checking arguments for max_pool1d\)")


def errors_max_pool2d_backward(op, make):
    x = make((2, 3, 5, 5))
    indices = opdispatch.zeros(2, 3, 2, 2, dtype=opdispatch.int64)
    yield ErrorInput(SampleInput(make((2, 3, 3, 3)), args=(x, [2, 2], [2, 2], [0, 0], [1, 1],
                                                          False, indices)), RuntimeError,
                     r"Expected a tensor of dimension 4 and tensor.size\[2\] == 2 but got: "
                     r"dimension 4 and tensor.size\[2\] = 3")


# (shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
_AVG2D = [
    ((2, 3, 7, 6), [2, 2], [], [0, 0], False, True, None),
    ((1, 2, 5, 5), [3, 3], [2, 2], [1, 1], True, True, None),
    ((1, 2, 5, 5), [3, 3], [2, 2], [1, 1], True, False, None),
    ((2, 2, 6, 7), [3, 2], [1, 2], [1, 1], False, False, 3),
    ((3, 6, 5), [2, 3], [1, 2], [1, 1], True, True, None),
    ((0, 2, 4, 4), [2, 2], [2, 2], [0, 0], False, True, None),
]


def _avg2d_inputs(make, requires_grad):
    for shape, *args in _AVG2D:
        yield make(shape, requires_grad=requires_grad), tuple(args)
    yield make((2, 3, 5, 6), noncontiguous=True, requires_grad=requires_grad), (
        [2, 2], [1, 2], [1, 0], False, True, None)
    yield channels_last(make, (2, 4, 5, 5), requires_grad), ([3, 3], [2, 2], [1, 1], True, False,
                                                             None)


def sample_avg_pool2d(op, make, dtype, requires_grad):
    for x, args in _avg2d_inputs(make, requires_grad):
        yield SampleInput(x, args=args)


def sample_avg_pool2d_backward(op, make, dtype, requires_grad):
    for x, args in _avg2d_inputs(make, False):
        out = opdispatch.ops.aten.avg_pool2d(x, *args)
        yield SampleInput(make(tuple(out.shape), requires_grad=requires_grad), args=(x, *args))


def sample_avg_pool1d(op, make, dtype, requires_grad):
    yield SampleInput(make((2, 3, 7), requires_grad=requires_grad), args=([2],))
    yield SampleInput(make((3, 9), requires_grad=requires_grad), args=([3], [2], [1], True, False))
    yield SampleInput(make((1, 2, 8), noncontiguous=True, requires_grad=requires_grad),
                      args=([3], [1], [1], False, True))


def errors_avg_pool2d(op, make):
    x = make((2, 3, 5, 5))
    yield ErrorInput(SampleInput(x, args=([2, 2], [1, 1], [2, 2])), RuntimeError,
                     r"pad should be at most half of kernel size, but got pad=2 and kernel_size=2")
    yield ErrorInput(SampleInput(x, args=([2, 2], [1, 1], [1, 1, 1])), RuntimeError,
                     r"avg_pool2d: padding must either be a single int, or a tuple of two ints")
    yield ErrorInput(SampleInput(x, args=([2, 2], [1, 1], [0, 0], False, True, 0)), RuntimeError,
                     r"divisor must be not zero")
    yield ErrorInput(SampleInput(make((1, 1, 2, 2)), args=([3, 3],)), RuntimeError,
                     r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\). Output "
                     r"size is too small")
    yield ErrorInput(SampleInput(make((5, 5)), args=([2, 2],)), IndexError,
                     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got -3\)")
    yield ErrorInput(SampleInput(make((1, 2, 4, 4), dtype_override="int32"), args=([2, 2],)),
                     RuntimeError, r"\"avg_pool2d\" not implemented for 'Int'")


def errors_avg_pool1d(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4, 4)), args=([2],)), RuntimeError,
                     r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 "
                     r"'self' \(while checking arguments for avg_pool1d\)")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([2, 2],)), RuntimeError,
                     r"avg_pool1d\(\) argument 'kernel_size' should contain one int \(got 2\)")


def _adaptive_inputs(make, requires_grad):
    yield make((2, 3, 7, 6), requires_grad=requires_grad), [3, 4]
    yield make((1, 2, 5, 5), requires_grad=requires_grad), [5, 5]
    yield make((3, 5, 7), requires_grad=requires_grad), [2, 3]
    yield make((2, 3, 5, 6), noncontiguous=True, requires_grad=requires_grad), [4, 2]
    yield channels_last(make, (2, 4, 5, 5), requires_grad), [3, 3]
    yield make((0, 2, 4, 4), requires_grad=requires_grad), [2, 2]


def sample_adaptive_avg_pool2d(op, make, dtype, requires_grad):
    for x, size in _adaptive_inputs(make, requires_grad):
        yield SampleInput(x, args=(size,))
    yield SampleInput(make((2, 3, 4, 5), requires_grad=requires_grad), args=([1, 1],),
                      name="1x1: a mean")
    yield SampleInput(channels_last(make, (2, 4, 3, 3), requires_grad), args=([1, 1],),
                      name="1x1 channels-last")


def sample__adaptive_avg_pool2d(op, make, dtype, requires_grad):
    for x, size in _adaptive_inputs(make, requires_grad):
        yield SampleInput(x, args=(size,))


def sample__adaptive_avg_pool2d_backward(op, make, dtype, requires_grad):
    for x, size in _adaptive_inputs(make, False):
        if x.numel() == 0:
            continue
        out = opdispatch.ops.aten._adaptive_avg_pool2d(x, size)
        yield SampleInput(make(tuple(out.shape), requires_grad=requires_grad), args=(x,))


def sample_adaptive_avg_pool1d(op, make, dtype, requires_grad):
    yield SampleInput(make((2, 3, 7), requires_grad=requires_grad), args=([3],))
    yield SampleInput(make((3, 9), requires_grad=requires_grad), args=([4],))
    yield SampleInput(make((1, 2, 8), noncontiguous=True, requires_grad=requires_grad),
                      args=([1],))


def errors_adaptive_avg_pool2d(op, make):
    yield ErrorInput(SampleInput(make((5, 5)), args=([2, 2],)), RuntimeError,
                     r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[5, 5\]")
    yield ErrorInput(SampleInput(make((1, 1, 0, 5)), args=([2, 2],)), RuntimeError,
                     r"adaptive_avg_pool2d\(\): Expected input to have non-zero size for "
                     r"non-batch dimensions, but input has sizes \[1, 1, 0, 5\] with dimension 2 "
                     r"being empty")
    yield ErrorInput(SampleInput(make((1, 2, 4, 4)), args=([2, 2, 2],)), RuntimeError,
                     r"adaptive_avg_pool2d: output_size must be 2")
    yield ErrorInput(SampleInput(make((1, 2, 4, 4), dtype_override="int64"), args=([2, 2],)),
                     RuntimeError, r"\"adaptive_avg_pool2d\" not implemented for 'Long'")


def errors__adaptive_avg_pool2d_backward(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 3, 5, 5)),)), RuntimeError,
                     r"adaptive_avg_pool2d_backward\(\): Expected 3D or 4D tensor, but got "
                     r"\[2, 3, 5, 5\]")


def errors_adaptive_avg_pool1d(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4, 4)), args=([2],)), RuntimeError,
                     r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 "
                     r"'self' \(while checking arguments for adaptive_avg_pool1d\)")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([2, 2],)), RuntimeError,
                     r"adaptive_avg_pool1d\(\) argument 'output_size' should contain one int "
                     r"\(got 2\)")


def _entry(name, samples, errors=None, dtypes=POOL, **kw):
    # bfloat16 sums are in float here; torch 1.13 adds some (the backward's) in bfloat16.
    return OpInfo(name, op=aten_packet(name), ref=ref_in_float32(aten_packet(name)), method=False,
                  supports_out=False, dtypes=dtypes,
                  sample_inputs=samples, error_inputs=errors, compare_strides=True,
                  supports_gradgrad=True, **kw)


OP_DB = [
    _entry("max_pool2d_with_indices", sample_max_pool2d, errors_max_pool2d),
    _entry("max_pool2d", sample_max_pool2d, errors_max_pool2d),
    # Dense layouts only: torch 1.13's double backward of this operator views its strided
    # inputs ("view size is not compatible with input tensor's size and stride").
    _entry("max_pool2d_with_indices_backward", sample_max_pool2d_backward,
           errors_max_pool2d_backward, layouts=("contiguous", "offset")),
    _entry("max_pool1d", sample_max_pool1d, errors_max_pool1d),
    _entry("max_pool1d_with_indices", sample_max_pool1d, errors_max_pool1d_with_indices),
    _entry("avg_pool2d", sample_avg_pool2d, errors_avg_pool2d, dtypes=AVG),
    _entry("avg_pool2d_backward", sample_avg_pool2d_backward, dtypes=AVG),
    _entry("avg_pool1d", sample_avg_pool1d, errors_avg_pool1d, dtypes=AVG),
    _entry("_adaptive_avg_pool2d", sample__adaptive_avg_pool2d, errors_adaptive_avg_pool2d),
    _entry("_adaptive_avg_pool2d_backward", sample__adaptive_avg_pool2d_backward,
           errors__adaptive_avg_pool2d_backward),
    _entry("adaptive_avg_pool2d", sample_adaptive_avg_pool2d, errors_adaptive_avg_pool2d),
    _entry("adaptive_avg_pool1d", sample_adaptive_avg_pool1d, errors_adaptive_avg_pool1d),
]
