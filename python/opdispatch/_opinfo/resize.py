"""Table entries of the padding, upsampling and pixel_shuffle operators (issue #32 §1, helper
"pool"): constant_pad_nd, pad (constant, reflect, replicate, circular), reflection_pad{1,2}d and
replication_pad{1,2}d with their backward operators, upsample_nearest2d and upsample_bilinear2d
with theirs, pixel_shuffle and pixel_unshuffle.

Entries call ``lib.ops.aten.<name>`` (most are in torch's nn namespace). Samples cover positive,
zero and negative pads, batch 1, >1 and 0 where torch accepts it, odd sizes, 3-D/2-D inputs,
non-contiguous and channels-last inputs."""

from .core import (ErrorInput, OpInfo, SampleInput, aten_packet, channels_last,
                         ref_in_float32)

PAD = ("float32", "float64", "complex64")   # torch 1.13's reflection/replication kernels
FLOAT = ("float32", "float64", "bfloat16")


def sample_constant_pad_nd(op, make, dtype, requires_grad):
    yield SampleInput(make((2, 3, 4, 5), requires_grad=requires_grad), args=([1, 2],))
    yield SampleInput(make((2, 3, 4, 5), requires_grad=requires_grad), args=([1, 0, 2, 1], 1.5))
    yield SampleInput(make((3, 5), requires_grad=requires_grad), args=([-1, 2, 1, -1],))
    yield SampleInput(make((2, 5), requires_grad=requires_grad), args=([-1, -2],), name="crop")
    yield SampleInput(make((2, 3, 4), noncontiguous=True, requires_grad=requires_grad),
                      args=([1, 1, 0, 2, 1, 0],))
    yield SampleInput(channels_last(make, (2, 3, 4, 5), requires_grad), args=([1, 1, 1, 1],))
    yield SampleInput(make((0, 3, 4), requires_grad=requires_grad), args=([1, 1],))


def errors_constant_pad_nd(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=([1, 2, 3],)), RuntimeError,
                     r"Length of pad must be even but instead it equals 3")
    yield ErrorInput(SampleInput(make((2,)), args=([1, 1, 1, 1],)), RuntimeError,
                     r"Length of pad should be no more than twice the number of dimensions of the "
                     r"input. Pad length is 4while the input has 1dimensions.")


def sample_pad(op, make, dtype, requires_grad):
    yield SampleInput(make((2, 3, 4, 5), requires_grad=requires_grad), args=([1, 2],))
    yield SampleInput(make((2, 3, 4, 5), requires_grad=requires_grad), args=([1, 2, 0, 1],),
                      kwargs={"value": 2.0})
    yield SampleInput(make((2, 3, 5), requires_grad=requires_grad), args=([2, 1], "reflect"))
    yield SampleInput(make((2, 3, 4, 5), requires_grad=requires_grad), args=([1, 2, 3, 1],
                                                                             "reflect"))
    yield SampleInput(make((3, 4, 5), requires_grad=requires_grad), args=([1, 2, 3, 1],
                                                                          "replicate"))
    yield SampleInput(make((2, 5), requires_grad=requires_grad), args=([3, 1], "replicate"))
    yield SampleInput(make((1, 2, 4, 5), requires_grad=requires_grad), args=([1, 2, -1, 2],
                                                                             "circular"))
    yield SampleInput(make((1, 2, 5), requires_grad=requires_grad), args=([2, 1], "circular"))


def errors_pad(op, make):
    x = make((2, 3, 4, 5))
    yield ErrorInput(SampleInput(x, args=([1, 1], "foo")), NotImplementedError,
                     r"Unrecognised padding mode foo")
    yield ErrorInput(SampleInput(x, args=([1, 1], "reflect", 1.0)), RuntimeError,
                     r"Padding mode \"reflect\" doesn't take in value argument")
    yield ErrorInput(SampleInput(x, args=([1, 1, 1], "reflect")), RuntimeError,
                     r"Padding length must be divisible by 2")
    yield ErrorInput(SampleInput(make((2, 3)), args=([1, 1, 1, 1, 1, 1], "reflect")),
                     RuntimeError, r"Padding length too large")
    yield ErrorInput(SampleInput(make((4,)), args=([1, 1], "reflect")), NotImplementedError,
                     r"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")


def _pad_samples(dims, requires_grad, make):
    if dims == 1:
        yield make((2, 3, 6), requires_grad=requires_grad), [2, 3]
        yield make((3, 5), requires_grad=requires_grad), [1, 0]
        yield make((2, 3, 6), noncontiguous=True, requires_grad=requires_grad), [-1, 2]
        yield make((0, 2, 4), requires_grad=requires_grad), [1, 1]
    else:
        yield make((2, 3, 5, 6), requires_grad=requires_grad), [2, 3, 1, 2]
        yield make((3, 4, 5), requires_grad=requires_grad), [1, 0, 3, 2]
        yield make((1, 2, 5, 6), noncontiguous=True, requires_grad=requires_grad), [-1, 2, 1, -2]
        yield channels_last(make, (2, 3, 4, 5), requires_grad), [1, 1, 2, 2]
        yield make((0, 2, 4, 4), requires_grad=requires_grad), [1, 1, 1, 1]


def _sample_padnd(dims):
    def samples(op, make, dtype, requires_grad):
        for x, padding in _pad_samples(dims, requires_grad, make):
            yield SampleInput(x, args=(padding,))
    return samples


def _sample_padnd_backward(name, dims):
    def samples(op, make, dtype, requires_grad):
        import opdispatch
        for x, padding in _pad_samples(dims, False, make):
            out = getattr(opdispatch.ops.aten, name)(x, padding)
            yield SampleInput(make(tuple(out.shape), requires_grad=requires_grad),
                              args=(x, padding))
    return samples


def errors_reflection_pad1d(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([4, 1],)), RuntimeError,
                     r"Argument #4: Padding size should be less than the corresponding input "
                     r"dimension, but got: padding \(4, 1\) at dimension 2 of input \[2, 3, 4\]")


def errors_reflection_pad2d(op, make):
    x = make((2, 3, 4, 5))
    yield ErrorInput(SampleInput(x, args=([1, 1, 4, 1],)), RuntimeError,
                     r"Argument #6: Padding size should be less than the corresponding input "
                     r"dimension, but got: padding \(4, 1\) at dimension 2 of input 4")
    yield ErrorInput(SampleInput(x, args=([5, 1, 1, 1],)), RuntimeError,
                     r"Argument #4: Padding size should be less than the corresponding input "
                     r"dimension, but got: padding \(5, 1\) at dimension 3 of input 4")
    yield ErrorInput(SampleInput(x.long(), args=([1, 1, 1, 1],)), RuntimeError,
                     r"\"reflection_pad2d\" not implemented for 'Long'")


def errors_replication_pad1d(op, make):
    yield ErrorInput(SampleInput(make((2, 3, 4, 5)), args=([1, 1],)), RuntimeError,
                     r"Expected 2D or 3D \(batch mode\) tensor with possibly 0 batch size and "
                     r"other non-zero dimensions for input, but got: \[2, 3, 4, 5\]")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([1, 1, 1],)), RuntimeError,
                     r"padding size is expected to be 2")
    yield ErrorInput(SampleInput(make((2, 3, 4)), args=([-3, -2],)), RuntimeError,
                     r"input \(W: 4\) is too small. Calculated output W: -1")
    yield ErrorInput(SampleInput(make((2, 0, 4)), args=([1, 1],)), RuntimeError,
                     r"Expected 2D or 3D \(batch mode\) tensor with possibly 0 batch size and "
                     r"other non-zero dimensions for input, but got: \[2, 0, 4\]")


def errors_replication_pad2d(op, make):
    yield ErrorInput(SampleInput(make((1, 2, 3, 4, 5)), args=([1, 1, 1, 1],)), RuntimeError,
                     r"Expected 3D or 4D \(batch mode\) tensor with possibly 0 batch size and "
                     r"other non-zero dimensions for input, but got: \[1, 2, 3, 4, 5\]")
    yield ErrorInput(SampleInput(make((2, 3, 4, 5)), args=([1, 1],)), RuntimeError,
                     r"padding size is expected to be 4")
    yield ErrorInput(SampleInput(make((2, 3, 4, 5)).long(), args=([1, 1, 1, 1],)), RuntimeError,
                     r"\"replication_pad2d_cpu\" not implemented for 'Long'")


def _errors_backward(name, dims, text):
    def errors(op, make):
        x = make((2, 3, 4) if dims == 1 else (2, 3, 4, 5))
        padding = [1, 1] if dims == 1 else [1, 1, 1, 1]
        grad = make((2, 3, 5) if dims == 1 else (2, 3, 6, 5))
        yield ErrorInput(SampleInput(grad, args=(x, padding)), RuntimeError, text)
    return errors


def sample_pixel_shuffle(op, make, dtype, requires_grad):
    yield SampleInput(make((2, 8, 3, 3), requires_grad=requires_grad), args=(2,))
    yield SampleInput(make((9, 2, 3), requires_grad=requires_grad), args=(3,))
    yield SampleInput(make((2, 1, 4, 3, 2), requires_grad=requires_grad), args=(2,))
    yield SampleInput(make((1, 4, 3, 5), noncontiguous=True, requires_grad=requires_grad),
                      args=(1,))
    yield SampleInput(channels_last(make, (2, 8, 3, 3), requires_grad), args=(2,))
    if not requires_grad:  # torch 1.13's PixelShuffleBackward0 gives an empty batch a wrong shape
        yield SampleInput(make((0, 4, 2, 2)), args=(2,))


def sample_pixel_unshuffle(op, make, dtype, requires_grad):
    yield SampleInput(make((2, 2, 6, 4), requires_grad=requires_grad), args=(2,))
    yield SampleInput(make((1, 6, 9), requires_grad=requires_grad), args=(3,))
    yield SampleInput(make((2, 1, 2, 4, 6), requires_grad=requires_grad), args=(2,))
    yield SampleInput(make((1, 3, 4, 6), noncontiguous=True, requires_grad=requires_grad),
                      args=(2,))
    yield SampleInput(channels_last(make, (2, 3, 4, 4), requires_grad), args=(2,))


def errors_pixel_shuffle(op, make):
    yield ErrorInput(SampleInput(make((1, 5, 2, 2)), args=(2,)), RuntimeError,
                     r"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                     r"the square of upscale_factor, but input.size\(-3\)=5 is not divisible by 4")
    yield ErrorInput(SampleInput(make((4, 2)), args=(2,)), RuntimeError,
                     r"pixel_shuffle expects input to have at least 3 dimensions, but got input "
                     r"with 2 dimension\(s\)")
    yield ErrorInput(SampleInput(make((1, 4, 2, 2)), args=(0,)), RuntimeError,
                     r"pixel_shuffle expects a positive upscale_factor, but got 0")


def errors_pixel_unshuffle(op, make):
    yield ErrorInput(SampleInput(make((1, 1, 3, 4)), args=(2,)), RuntimeError,
                     r"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                     r"input.size\(-2\)=3 is not divisible by 2")
    yield ErrorInput(SampleInput(make((1, 1, 4, 3)), args=(2,)), RuntimeError,
                     r"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                     r"input.size\(-1\)=3 is not divisible by 2")
    yield ErrorInput(SampleInput(make((1, 4, 2, 2)), args=(0,)), RuntimeError,
                     r"pixel_unshuffle expects a positive downscale_factor, but got 0")


# (shape, output_size, align_corners, scales_h, scales_w) of the upsampling samples.
_UPSAMPLE = [
    ((2, 3, 4, 5), [8, 10], False, None, None),
    ((1, 2, 5, 4), [7, 3], True, None, None),
    ((1, 2, 3, 3), [7, 5], False, 2.5, 1.7),
    ((2, 1, 6, 6), [3, 4], False, None, None),
    ((1, 2, 4, 4), [4, 9], True, None, None),
    ((0, 2, 3, 3), [5, 5], False, None, None),
]


def _upsample_inputs(make, requires_grad):
    for shape, *args in _UPSAMPLE:
        yield make(shape, requires_grad=requires_grad), args
    yield (make((2, 3, 4, 5), noncontiguous=True, requires_grad=requires_grad),
           ([6, 7], False, None, None))
    yield channels_last(make, (2, 4, 3, 5), requires_grad), ([5, 8], False, None, None)


def sample_upsample_nearest2d(op, make, dtype, requires_grad):
    for x, (size, _, sh, sw) in _upsample_inputs(make, requires_grad):
        yield SampleInput(x, args=(size, sh, sw))


def sample_upsample_bilinear2d(op, make, dtype, requires_grad):
    for x, (size, align, sh, sw) in _upsample_inputs(make, requires_grad):
        yield SampleInput(x, args=(size, align, sh, sw))


def _sample_upsample_backward(linear):
    def samples(op, make, dtype, requires_grad):
        for x, (size, align, sh, sw) in _upsample_inputs(make, False):
            grad = make((x.shape[0], x.shape[1], *size), requires_grad=requires_grad)
            extra = (align,) if linear else ()
            yield SampleInput(grad, args=(size, list(x.shape), *extra, sh, sw))
    return samples


def errors_upsample_nearest2d(op, make):
    x = make((1, 2, 3, 3))
    yield ErrorInput(SampleInput(x, args=([5, 5, 5],)), RuntimeError,
                     r"It is expected output_size equals to 2, but got size 3")
    yield ErrorInput(SampleInput(x, args=([0, 5],)), RuntimeError,
                     r"Input and output sizes should be greater than 0, but got input \(H: 3, "
                     r"W: 3\) output \(H: 0, W: 5\)")
    yield ErrorInput(SampleInput(make((2, 3, 3)), args=([5, 5],)), RuntimeError,
                     r"It is expected input_size equals to 4, but got size 3")
    yield ErrorInput(SampleInput(make((1, 0, 3, 3)), args=([5, 5],)), RuntimeError,
                     r"Non-empty 4D data tensor expected but got a tensor with sizes \[1, 0, 3, 3\]")
    yield ErrorInput(SampleInput(x.long(), args=([5, 5],)), RuntimeError,
                     r"\"compute_indices_weights_nearest\" not implemented for 'Long'")


def errors_upsample_nearest2d_backward(op, make):
    yield ErrorInput(SampleInput(make((1, 2, 4, 4)), args=([5, 5], [1, 2, 3, 3])), RuntimeError,
                     r"Expected grad_output to have the same shape as output; output.size\(2\) = "
                     r"5 but got grad_output.size\(2\) = 4")
    yield ErrorInput(SampleInput(make((1, 2, 5)), args=([5, 5], [1, 2, 3, 3])), RuntimeError,
                     r"Expected grad_output to be a tensor of dimension 4 but got: dimension 3")


def errors_upsample_bilinear2d(op, make):
    x = make((1, 2, 3, 3))
    yield ErrorInput(SampleInput(x, args=([5, 5, 5], False)), RuntimeError,
                     r"It is expected output_size equals to 2, but got size 3")
    yield ErrorInput(SampleInput(make((1, 2, 3, 3), dtype_override="uint8"), args=([5, 5], False)), RuntimeError,
                     r"\"compute_indices_weights_linear\" not implemented for 'Byte'")


def _entry(name, samples, errors=None, dtypes=PAD, **kw):
    return OpInfo(name, op=aten_packet(name), method=False, supports_out=False, dtypes=dtypes,
                  sample_inputs=samples, error_inputs=errors, compare_strides=True,
                  supports_gradgrad=True, **kw)


def _padnd(name, dims, errors, backward_text):
    return [
        _entry(name, _sample_padnd(dims), errors),
        _entry(name + "_backward", _sample_padnd_backward(name, dims),
               _errors_backward(name, dims, backward_text)),
    ]


OP_DB = [
    _entry("constant_pad_nd", sample_constant_pad_nd, errors_constant_pad_nd,
           dtypes=FLOAT + ("int64", "bool", "complex64")),
    _entry("pad", sample_pad, errors_pad, dtypes=("float32", "float64")),
    *_padnd("reflection_pad1d", 1, errors_reflection_pad1d,
            r"grad_output width unexpected. Expected: 6, Got: 5"),
    *_padnd("reflection_pad2d", 2, errors_reflection_pad2d,
            r"gradOutput width unexpected. Expected: 7, Got: 5"),
    *_padnd("replication_pad1d", 1, errors_replication_pad1d,
            r"gradOutput width unexpected. Expected: 6 Got: 5"),
    *_padnd("replication_pad2d", 2, errors_replication_pad2d,
            r"gradOutput width unexpected. Expected: 7, Got: 5"),
    _entry("upsample_nearest2d", sample_upsample_nearest2d, errors_upsample_nearest2d,
           dtypes=FLOAT + ("uint8",)),
    _entry("upsample_nearest2d_backward", _sample_upsample_backward(False),
           errors_upsample_nearest2d_backward, dtypes=FLOAT,
           ref=ref_in_float32(aten_packet("upsample_nearest2d_backward"))),
    _entry("upsample_bilinear2d", sample_upsample_bilinear2d, errors_upsample_bilinear2d,
           dtypes=FLOAT, ref=ref_in_float32(aten_packet("upsample_bilinear2d"))),
    _entry("upsample_bilinear2d_backward", _sample_upsample_backward(True), dtypes=FLOAT,
           ref=ref_in_float32(aten_packet("upsample_bilinear2d_backward"))),
    _entry("pixel_shuffle", sample_pixel_shuffle, errors_pixel_shuffle,
           dtypes=FLOAT + ("int64", "bool")),
    _entry("pixel_unshuffle", sample_pixel_unshuffle, errors_pixel_unshuffle,
           dtypes=FLOAT + ("int64", "bool")),
]
