"""``opdispatch.nn.functional``, as ``torch.nn.functional`` of PyTorch 1.13: the same names,
parameters, defaults and error texts, over opdispatch's aten operators.

Where torch's function is a single operator (``F.gelu`` is ``aten::gelu``) it is bound here by a
thin function that calls ``opdispatch.<op>``, so that the keyword names are torch's (``input``,
where the schema says ``self``) and errors are the operator's own. Where torch's function is
Python over operators (the reduction strings of the losses, ``normalize``, ``softmin``,
``kl_div``'s 'batchmean', ``interpolate``'s size and scale_factor, the batch-size checks of the
norms), the same composition is written over opdispatch's operators. Operators are looked up
when called: one that a plugin defines later is found.

``scaled_dot_product_attention`` is PyTorch 2.x's (1.13 has none); everything else is 1.13's.
"""

import math
import warnings

import opdispatch as _opd

from . import _reduction as _Reduction

# ---- activations ----


def relu(input, inplace=False):
    return _opd.relu_(input) if inplace else _opd.relu(input)


def relu_(input):
    return _opd.relu_(input)


def relu6(input, inplace=False):
    return _opd.relu6_(input) if inplace else _opd.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    return _opd.elu_(input, alpha) if inplace else _opd.elu(input, alpha)


def elu_(input, alpha=1.0):
    return _opd.elu_(input, alpha)


def selu(input, inplace=False):
    return _opd.selu_(input) if inplace else _opd.selu(input)


def selu_(input):
    return _opd.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    return _opd.celu_(input, alpha) if inplace else _opd.celu(input, alpha)


def celu_(input, alpha=1.0):
    return _opd.celu_(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _opd.leaky_relu_(input, negative_slope)
    return _opd.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _opd.leaky_relu_(input, negative_slope)


def prelu(input, weight):
    return _opd.prelu(input, weight)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _opd.glu(input, dim)


def gelu(input, approximate="none"):
    return _opd.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return _opd.silu_(input) if inplace else _opd.silu(input)


def mish(input, inplace=False):
    return _opd.mish_(input) if inplace else _opd.mish(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace:
        return _opd.hardtanh_(input, min_val, max_val)
    return _opd.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _opd.hardtanh_(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    return _opd.hardsigmoid_(input) if inplace else _opd.hardsigmoid(input)


def hardswish(input, inplace=False):
    return _opd.hardswish_(input) if inplace else _opd.hardswish(input)


def softplus(input, beta=1, threshold=20):
    return _opd.softplus(input, beta, threshold)


def logsigmoid(input):
    return _opd.log_sigmoid(input)


def threshold(input, threshold, value, inplace=False):
    if inplace:
        return _opd.threshold_(input, threshold, value)
    return _opd.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _opd.threshold_(input, threshold, value)


def sigmoid(input):
    warnings.warn("nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.")
    return input.sigmoid()


def tanh(input):
    warnings.warn("nn.functional.tanh is deprecated. Use torch.tanh instead.")
    return input.tanh()


def _get_softmax_dim(name, ndim, stacklevel):
    """torch's implicit dim (0 for 0-, 1- and 3-d inputs, else 1), with its deprecation warning
    pointing at the caller of the public function."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    negated = -input
    return negated.softmax(dim) if dtype is None else negated.softmax(dim, dtype=dtype)


# ---- linear layers, normalize, distances ----


def linear(input, weight, bias=None):
    return _opd.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    return _opd.bilinear(input1, input2, weight, bias)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    norm = input.norm(p, dim, keepdim=True)
    if out is None:
        return input / norm.clamp_min(eps).expand_as(input)
    return _opd.div(input, norm.clamp_min_(eps).expand_as(input), out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _opd.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _opd.pairwise_distance(x1, x2, p, eps, keepdim)


def one_hot(tensor, num_classes=-1):
    return _opd.one_hot(tensor, num_classes)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """PyTorch 2.x's attention (torch 1.13 has no such function): softmax(q k^T * scale + mask)
    v, scale 1/sqrt(E) unless given, the causal mask when is_causal, dropout with dropout_p."""
    if scale is None:
        return _opd.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                                 is_causal)
    return _opd.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                             scale=scale)


# ---- dropout, embedding, normalisation ----


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _opd.dropout_(input, p, training) if inplace else _opd.dropout(input, p, training)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """weight's rows at input's indices. A negative padding_idx counts from the end; max_norm
    renormalises the rows used, in place and without grad, before the lookup."""
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx > 0:
        if padding_idx >= weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx += weight.size(0)
    if max_norm is not None:
        input = input.contiguous()
        with _opd.no_grad():
            _opd.embedding_renorm_(weight, input, max_norm, norm_type)
    return _opd.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _verify_batch_size(size):
    values = size[0]
    for extent in size[2:]:
        values *= extent
    if values == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size):
    values = 1
    for extent in size[2:]:
        values *= extent
    if values == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.size())
    return _opd.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps, True)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _opd.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                              momentum, eps, True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _opd.layer_norm(input, normalized_shape, weight, bias, eps, True)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                       + list(input.size()[2:]))
    return _opd.group_norm(input, num_groups, weight, bias, eps, True)


# ---- convolution, pooling, padding, resampling ----


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _opd.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _opd.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _opd.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """(values, indices) when return_indices, else values (torch's boolean_dispatch)."""
    if stride is None:
        stride = []
    if return_indices:
        return _opd.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                            ceil_mode)
    return _opd.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """(values, indices) when return_indices, else values (torch's boolean_dispatch)."""
    if stride is None:
        stride = []
    if return_indices:
        return _opd.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                            ceil_mode)
    return _opd.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _opd.avg_pool1d(input, kernel_size, [] if stride is None else stride, padding,
                           ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _opd.avg_pool2d(input, kernel_size, [] if stride is None else stride, padding,
                           ceil_mode, count_include_pad, divisor_override)


def _list_with_default(out_size, defaults):
    """An int as is; in a list, None takes the input's extent of that trailing dim."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    trailing = list(defaults)[-len(out_size):]
    return [d if v is None else v for v, d in zip(out_size, trailing)]


def adaptive_avg_pool2d(input, output_size):
    return _opd.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


def pad(input, pad, mode="constant", value=None):
    return _opd.pad(input, pad, mode, value)


def pixel_shuffle(input, upscale_factor):
    return _opd.pixel_shuffle(input, upscale_factor)


def _interpolate_sizes(input, size, scale_factor, recompute_scale_factor, mode):
    """(output_size, scale_factors), exactly one a list of one entry per spatial dim."""
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            output_size = size
        else:
            output_size = [size] * dim
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return output_size, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                "format and scale_factor in (s1, s2, ...,sK) format.")
        scale_factors = scale_factor
    else:
        scale_factors = [scale_factor] * dim
    # 'area' is an adaptive pooling, which takes a size: computed as recompute_scale_factor does.
    if recompute_scale_factor or mode == "area":
        return [int(math.floor(float(input.size(i + 2)) * scale_factors[i]))
                for i in range(dim)], None
    return None, scale_factors


def _upsample(name, input, output_size, scale_factors, *align_corners):
    """The upsample operator's base overload, as its .vec overload calls it: from scale factors
    the output size is each input extent times its factor, truncated, and the factors are passed
    as the scales (scales_h, scales_w...); from a size, no scales."""
    if output_size is None:
        output_size = [int(float(input.size(i + 2)) * s) for i, s in enumerate(scale_factors)]
        scales = list(scale_factors)
    else:
        scales = [None] * len(output_size)
    return getattr(_opd, name)(input, output_size, *align_corners, *scales)


_INTERPOLATE_RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resamples input's spatial dims (N, C, d1, ...) to size or by scale_factor: the
    upsample_* operator of the mode and rank, or adaptive average pooling for 'area'."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scale_factors = _interpolate_sizes(input, size, scale_factor,
                                                    recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    rank = input.dim()
    spatial = {3: "1d", 4: "2d", 5: "3d"}.get(rank)
    if spatial is not None:
        if mode == "nearest":
            return _upsample("upsample_nearest" + spatial, input, output_size, scale_factors)
        if mode == "nearest-exact":
            return _upsample("_upsample_nearest_exact" + spatial, input, output_size,
                             scale_factors)
        if mode == "area":
            return getattr(_opd, "adaptive_avg_pool" + spatial)(input, output_size)
        if _INTERPOLATE_RANK.get(mode) == rank:
            name = f"upsample_{mode}{spatial}"
            if antialias:
                name = f"_upsample_{mode}{spatial}_aa"
            return _upsample(name, input, output_size, scale_factors, align_corners)
        if mode in _INTERPOLATE_RANK and mode != "bicubic":
            raise NotImplementedError(f"Got {rank}D input, but {mode} mode needs "
                                      f"{_INTERPOLATE_RANK[mode]}D input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
        "(got {})".format(rank, mode))


# ---- losses ----


def _broadcast_shape(a, b):
    """The shape a and b broadcast to; torch's RuntimeError when they do not."""
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    shape = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        shape.append(y if x == 1 else x)
    return shape


def _expanded_pair(input, target):
    """input and target broadcast against each other, with torch's warning when their sizes
    differ (the pointwise losses)."""
    if input.shape == target.shape:
        return input, target
    warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                  f"({input.size()}). This will likely lead to incorrect results due to "
                  "broadcasting. Please ensure they have the same size.", stacklevel=3)
    shape = _broadcast_shape(input.shape, target.shape)
    return input.expand(shape), target.expand(shape)


def _reduction_enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_enum(size_average, reduce)
    return _Reduction.get_enum(reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    return _opd.cross_entropy_loss(input, target, weight,
                                   _reduction_enum(size_average, reduce, reduction), ignore_index,
                                   label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _opd.nll_loss_nd(input, target, weight,
                            _reduction_enum(size_average, reduce, reduction), ignore_index)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        weight = weight.expand(_broadcast_shape(target.shape, weight.shape))
    return _opd.binary_cross_entropy(input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    return _opd.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                 reduction_enum)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    input, target = _expanded_pair(input, target)
    return _opd.mse_loss(input, target, _reduction_enum(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    input, target = _expanded_pair(input, target)
    return _opd.l1_loss(input, target, _reduction_enum(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    input, target = _expanded_pair(input, target)
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if beta == 0.0:  # the limit is l1_loss, whose gradient is defined at 0
        return _opd.l1_loss(input, target, reduction_enum)
    return _opd.smooth_l1_loss(input, target, reduction_enum, beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    input, target = _expanded_pair(input, target)
    return _opd.huber_loss(input, target, _Reduction.get_enum(reduction), delta)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """'batchmean' is the sum divided by the batch size (input.size(0)); 'mean' divides by every
    element, with torch's warning that it is not the KL divergence's definition."""
    if size_average is not None or reduce is not None:
        reduction_enum = _Reduction.legacy_get_enum(size_average, reduce)
    elif reduction == "batchmean":
        reduction_enum = _Reduction.get_enum("sum")
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.")
        reduction_enum = _Reduction.get_enum(reduction)
    reduced = _opd.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size(0)
    return reduced
