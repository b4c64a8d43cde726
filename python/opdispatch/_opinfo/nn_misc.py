"""Table entries of issue #32 §1's small neural-network operators (helper "misc"): one_hot,
relu6/relu6_, gelu_ and gelu.out (gelu itself is surface.py's), cosine_similarity,
pairwise_distance and scaled_dot_product_attention.

one_hot, relu6 and gelu are in torch's nn namespace (no torch.<name>, no method): entries call
``lib.ops.aten.<name>`` in both libraries, the in-place forms over a clone of self.
scaled_dot_product_attention is PyTorch 2.x's (torch 1.13 has none): its reference is the math
composition written with torch 1.13's operators, softmax(q k^T * scale + mask) v, and its error
texts are PyTorch 2.x's validate_sdpa_input's, which the reference raises as well."""

import math

import opdispatch
from .core import ErrorInput, OpInfo, SampleInput

FLOAT = ("float32", "float64")
GELU = ("float32", "float64", "bfloat16")  # torch 1.13's CPU gelu: no Half
RELU6 = ("float32", "float64", "bfloat16", "int64", "int32", "uint8")  # hardtanh: no Half, Bool


def _aten(name):
    def op(lib, *args, **kwargs):
        return getattr(lib.ops.aten, name)(*args, **kwargs)
    op.__name__ = name
    return op


def _inplace(name):
    def op(lib, self, *args, **kwargs):
        return getattr(lib.ops.aten, name)(self.clone(), *args, **kwargs)
    op.__name__ = name
    return op


# ---- one_hot ---------------------------------------------------------------------------------

def _classes(make, shape, high=5, **kw):
    return make(shape, low=0, high=high, dtype_override="int64", **kw)


def sample_one_hot(op, make, dtype, rg):
    yield SampleInput(_classes(make, (6,)), args=(5,), name="1-d")
    yield SampleInput(_classes(make, (2, 3)), args=(7,), name="2-d")
    yield SampleInput(_classes(make, (3, 4), noncontiguous=True), args=(5,), name="strided")
    yield SampleInput(_classes(make, ()), args=(5,), name="0-d")
    yield SampleInput(_classes(make, (0, 3)), args=(4,), name="empty")


def sample_one_hot_infer(op, make, dtype, rg):
    yield SampleInput(_classes(make, (6,)), name="1-d")
    yield SampleInput(_classes(make, (2, 3), high=9), args=(-1,), name="2-d")
    yield SampleInput(_classes(make, (4, 3)).t(), name="transposed")
    yield SampleInput(_classes(make, ()), name="0-d")


def errors_one_hot(op, make):
    yield ErrorInput(SampleInput(make((3,), dtype_override="float32")), RuntimeError,
                     r"^one_hot is only applicable to index tensor\.")
    yield ErrorInput(SampleInput(make((3,), dtype_override="int32", low=0, high=3)),
                     RuntimeError, r"^one_hot is only applicable to index tensor\.")
    yield ErrorInput(SampleInput(make((0,), dtype_override="int64")), RuntimeError,
                     r"^Can not infer total number of classes from empty tensor\.")
    yield ErrorInput(SampleInput(make((0, 2), dtype_override="int64"), args=(0,)), RuntimeError,
                     r"^Can not infer total number of classes from empty tensor\.")
    negative = make((3,), low=-3, high=-1, dtype_override="int64")
    yield ErrorInput(SampleInput(negative, args=(4,)), RuntimeError,
                     r"^Class values must be non-negative\.", on_meta=False)
    large = make((3,), low=4, high=6, dtype_override="int64")
    yield ErrorInput(SampleInput(large, args=(4,)), RuntimeError,
                     r"^Class values must be smaller than num_classes\.", on_meta=False)
    yield ErrorInput(SampleInput(make((3,), low=0, high=2, dtype_override="int64"), args=(-2,)),
                     RuntimeError, r"^Class values must be smaller than num_classes\.")


# ---- relu6, gelu_, gelu.out ------------------------------------------------------------------

def sample_relu6(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-9, high=9, requires_grad=rg, **kw)
    yield SampleInput(x((3, 4)), name="2-d")
    yield SampleInput(x((3, 4), noncontiguous=True), name="strided")
    yield SampleInput(x((4, 3)).t(), name="transposed")
    yield SampleInput(x(()), name="0-d")
    yield SampleInput(x((0, 3)), name="empty")


def errors_relu6(op, make):
    yield ErrorInput(SampleInput(make((3,), dtype_override="bool")), RuntimeError,
                     r"^Bool inputs not supported for hardtanh")
    yield ErrorInput(SampleInput(make((3,), dtype_override="float16")), RuntimeError,
                     r"\"clamp_scalar_cpu\" not implemented for 'Half'")


def sample_gelu(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-4, high=4, requires_grad=rg, **kw)
    for approximate in ("none", "tanh"):
        kw = {"approximate": approximate}
        yield SampleInput(x((3, 4)), kwargs=kw, name="2-d")
        yield SampleInput(x((3, 4), noncontiguous=True), kwargs=kw, name="strided")
        yield SampleInput(x((4, 3)).t(), kwargs=kw, name="transposed")
        yield SampleInput(x(()), kwargs=kw, name="0-d")
        yield SampleInput(x((0, 3)), kwargs=kw, name="empty")
    yield SampleInput(x((2, 3)), name="default approximate")


def _gelu_out(lib, self, **kwargs):
    return lib.ops.aten.gelu.out(self, **kwargs)


def errors_gelu_out(op, make):
    x = make((3,), dtype_override="float32")
    yield ErrorInput(SampleInput(x, kwargs={"out": make((3,), dtype_override="float64")}),
                     RuntimeError, r"^Found dtype Double but expected Float")
    yield ErrorInput(SampleInput(x, kwargs={"out": make((3,), dtype_override="int64")}),
                     RuntimeError, r"^Found dtype Long but expected Float")
    yield ErrorInput(SampleInput(x, kwargs={"approximate": "x",
                                            "out": make((3,), dtype_override="float32")}),
                     RuntimeError, r"^approximate argument must be either none or tanh\.")
    yield ErrorInput(SampleInput(make((3,), dtype_override="int64"),
                                 kwargs={"out": make((3,), dtype_override="int64")}),
                     RuntimeError, r"\"GeluKernelImpl\" not implemented for 'Long'")


def _gelu_inplace_expanded(lib, self):
    return lib.ops.aten.gelu_(self.expand(2, 3))


def errors_gelu_(op, make):
    yield ErrorInput(SampleInput(make((3,), dtype_override="int64")), RuntimeError,
                     r"\"GeluKernelImpl\" not implemented for 'Long'")
    yield ErrorInput(SampleInput(make((3,)), kwargs={"approximate": "x"}), RuntimeError,
                     r"^approximate argument must be either none or tanh\.")


def errors_gelu_expanded(op, make):
    yield ErrorInput(SampleInput(make((3,))), RuntimeError,
                     r"^unsupported operation: more than one element of the written-to tensor "
                     r"refers to a single memory location")


# ---- cosine_similarity, pairwise_distance ----------------------------------------------------

def sample_cosine_similarity(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, requires_grad=rg, **kw)
    yield SampleInput(x((3, 4)), args=(x((3, 4)),), name="2-d, dim 1")
    yield SampleInput(x((3, 4)), args=(x((3, 4)),), kwargs={"dim": 0}, name="dim 0")
    yield SampleInput(x((2, 1, 5)), args=(x((3, 5)),), kwargs={"dim": -1}, name="broadcast")
    yield SampleInput(x((5,)), args=(x((5,)), 0), name="1-d")
    yield SampleInput(x((3, 4), noncontiguous=True), args=(x((4, 3)).t(),),
                      name="strided, transposed")
    tiny = make((2, 3), low=-1e-5, high=1e-5, requires_grad=rg)
    yield SampleInput(tiny, args=(x((2, 3)),), kwargs={"eps": 1e-3}, name="clamped norm")
    zero = make((2, 3), low=0, high=0, requires_grad=rg)
    yield SampleInput(zero, args=(x((2, 3)),), name="zero rows")
    yield SampleInput(x((0, 3)), args=(x((0, 3)),), name="empty")
    if dtype == "float32":
        yield SampleInput(make((3, 4), low=-5, high=5, dtype_override="int64"),
                          args=(x((3, 4)),), name="int64 with float32")


def errors_cosine_similarity(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 4)),)), RuntimeError,
                     r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                     r"non-singleton dimension 1")
    ints = make((2, 3), dtype_override="int64")
    yield ErrorInput(SampleInput(ints, args=(ints,)), RuntimeError,
                     r"^expected common dtype to be floating point, yet common dtype is Long")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 3)), 3)), IndexError,
                     r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)")
    yield ErrorInput(SampleInput(make((3,)), args=(make((3,)),)), IndexError,
                     r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)")
    half = make((2, 3), dtype_override="float16")
    yield ErrorInput(SampleInput(half, args=(half,)), RuntimeError,
                     r"\"clamp_min_cpu\" not implemented for 'Half'")


def sample_pairwise_distance(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, requires_grad=rg, **kw)
    yield SampleInput(x((3, 4)), args=(x((3, 4)),), name="2-d")
    yield SampleInput(x((4,)), args=(x((3, 4)),), kwargs={"keepdim": True}, name="broadcast")
    yield SampleInput(x((3, 4)), args=(x((3, 4)), 1.0), name="p=1")
    yield SampleInput(x((2, 3, 4), noncontiguous=True), args=(x((2, 3, 4)), 3.0, 1e-3),
                      name="p=3, strided")
    yield SampleInput(x((3, 4)), args=(x((3, 4)),), kwargs={"p": math.inf}, name="p=inf")
    yield SampleInput(x(()), args=(x(()),), name="0-d")
    yield SampleInput(x((0, 3)), args=(x((0, 3)),), name="empty")


def errors_pairwise_distance(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 4)),)), RuntimeError,
                     r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                     r"non-singleton dimension 1")


# ---- scaled_dot_product_attention ------------------------------------------------------------

def _sdpa(lib, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    return lib.ops.aten.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                                     is_causal, scale=scale)


_TYPE_META = {"torch.float32": "float", "torch.float64": "double", "torch.bool": "bool",
              "torch.int64": "long int", "torch.bfloat16": "c10::BFloat16",
              "torch.float16": "c10::Half"}


def _sdpa_ref(lib, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
              scale=None):
    """PyTorch 2.x's math path in torch 1.13's operators, with its validate_sdpa_input."""
    def name(t):
        return _TYPE_META.get(str(t.dtype), str(t.dtype))
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {name(query)} key.dtype: {name(key)} and value.dtype: "
                           f"{name(value)} instead.")
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.dim()} key.dim: {key.dim()} and "
                           f"value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype not in (lib.bool, lib.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {name(attn_mask)} and  query.dtype: "
                           f"{name(query)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    scores = lib.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = lib.ones(query.size(-2), key.size(-2), dtype=lib.bool).tril()
    if attn_mask is not None:
        if attn_mask.dtype == lib.bool:
            attn_mask = lib.zeros_like(attn_mask, dtype=query.dtype).masked_fill(
                attn_mask.logical_not(), -math.inf)
        scores = scores + attn_mask
    return lib.matmul(lib.softmax(scores, -1), value)


def sample_sdpa(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-2, high=2, requires_grad=rg, **kw)
    yield SampleInput(x((2, 3, 4)), args=(x((2, 5, 4)), x((2, 5, 6))), name="batched")
    yield SampleInput(x((3, 4)), args=(x((3, 4)), x((3, 2))), kwargs={"is_causal": True},
                      name="2-d causal")
    yield SampleInput(x((1, 2, 4, 3)), args=(x((1, 2, 5, 3)), x((1, 2, 5, 3))),
                      kwargs={"is_causal": True}, name="heads, causal, L < S")
    # The first column attends: no fully masked row (softmax of -inf is NaN in both).
    mask = opdispatch.cat([opdispatch.ones(3, 1, dtype=opdispatch.bool),
                           make((3, 4), dtype_override="bool")], 1)
    yield SampleInput(x((2, 3, 4)), args=(x((2, 5, 4)), x((2, 5, 4)), mask), name="bool mask")
    yield SampleInput(x((2, 3, 4)), args=(x((2, 5, 4)), x((2, 5, 4)), x((2, 1, 5))),
                      name="float mask, broadcast")
    yield SampleInput(x((2, 3, 4), noncontiguous=True), args=(x((2, 4, 5)).transpose(1, 2),
                                                                x((2, 5, 4))),
                      kwargs={"scale": 0.3}, name="scale, strided")
    yield SampleInput(x((2, 3, 4)), args=(x((2, 5, 4)), x((2, 5, 4))), kwargs={"scale": -0.5},
                      name="negative scale")
    yield SampleInput(x((0, 3, 4)), args=(x((0, 5, 4)), x((0, 5, 4))), name="empty batch")


def sample_sdpa_dropout(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, low=-2, high=2, requires_grad=rg, **kw)
    yield SampleInput(x((2, 3, 4)), args=(x((2, 5, 4)), x((2, 5, 6))), kwargs={"dropout_p": 0.5},
                      name="dropout")
    yield SampleInput(x((3, 4)), args=(x((3, 4)), x((3, 2))),
                      kwargs={"dropout_p": 0.3, "is_causal": True}, name="dropout, causal")


def _sdpa_dropout_ref(lib, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                      scale=None):
    """Random values: only the shape and dtype compare (the reference without dropout)."""
    return _sdpa_ref(lib, query, key, value, attn_mask, 0.0, is_causal, scale)


def errors_sdpa(op, make):
    q = make((2, 3, 4))
    yield ErrorInput(SampleInput(q, args=(make((2, 3, 4), dtype_override="float64"), q)),
                     RuntimeError, r"^Expected query, key, and value to have the same dtype, but "
                     r"got query\.dtype: float key\.dtype: double and value\.dtype: float instead")
    yield ErrorInput(SampleInput(make((4,)), args=(q, q)), RuntimeError,
                     r"^Expected query, key, and value to all be  at least 2 dimensional, but "
                     r"got query\.dim: 1 key\.dim: 3 and value\.dim: 3 instead")
    yield ErrorInput(SampleInput(q, args=(q, q, make((3, 3), dtype_override="int64"))),
                     RuntimeError, r"^Expected attn_mask dtype to be bool or float or to match "
                     r"query dtype, but got attn_mask\.dtype: long int and  query\.dtype: float")
    yield ErrorInput(SampleInput(q, args=(q, q, make((3, 3))), kwargs={"is_causal": True}),
                     RuntimeError, r"^_scaled_dot_product_attention: Explicit attn_mask should "
                     r"not be set when is_causal=True")


# ---- bilinear ------------------------------------------------------------------------------

def sample_bilinear(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, requires_grad=rg, **kw)
    yield SampleInput(x((2, 3)), args=(x((2, 4)), x((5, 3, 4)), x((5,))), name="2-d, bias")
    yield SampleInput(x((2, 3, 3)), args=(x((2, 3, 4)), x((5, 3, 4))), name="batched, no bias")
    yield SampleInput(x((3,)), args=(x((4,)), x((2, 3, 4)), x((2,))), name="1-d")
    yield SampleInput(x((3, 2), noncontiguous=True), args=(x((4, 3)).t(), x((5, 2, 3))),
                      name="strided")
    yield SampleInput(x((0, 3)), args=(x((0, 4)), x((5, 3, 4)), x((5,))), name="empty batch")


def errors_bilinear(op, make):
    w = make((5, 3, 4))
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 2, 4)), w)), RuntimeError,
                     r"^bilinear\(\): input dimensions do not match: got 2 and 3")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((3, 4)), w)), RuntimeError,
                     r"^bilinear\(\): input batch dimensions do not match at dim 0: got 2 and 3")
    yield ErrorInput(SampleInput(make((2, 2)), args=(make((2, 4)), w)), RuntimeError,
                     r"^bilinear\(\): input1 size does not match weight size: got 2 but expected 3")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 5)), w)), RuntimeError,
                     r"^bilinear\(\): input2 size does not match weight size: got 5 but expected 4")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 4)), w, make((4,)))), RuntimeError,
                     r"^bilinear\(\): bias size does not match weight size: got 4 but expected 5")
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 4)),
                                                     make((5, 3, 4), dtype_override="float64"))),
                     RuntimeError, r"^expected scalar type Float but found Double")


# ---- the table -------------------------------------------------------------------------------

OP_DB = [
    OpInfo("one_hot", op=_aten("one_hot"), method=False, supports_out=False, dtypes=("int64",),
           sample_inputs=sample_one_hot, error_inputs=errors_one_hot, supports_autograd=False),
    # num_classes=-1 reads the values: Meta refuses (Note [one_hot on Meta]).
    OpInfo("one_hot.infer", op=_aten("one_hot"), method=False, supports_out=False,
           dtypes=("int64",), sample_inputs=sample_one_hot_infer, supports_autograd=False,
           supports_meta=False),
    OpInfo("relu6", op=_aten("relu6"), method=False, supports_out=False, dtypes=RELU6,
           sample_inputs=sample_relu6, error_inputs=errors_relu6, compare_strides=True,
           supports_gradgrad=True),
    OpInfo("relu6_", op=_inplace("relu6_"), method=False, supports_out=False, dtypes=RELU6,
           sample_inputs=sample_relu6, error_inputs=errors_relu6, supports_gradgrad=True),
    OpInfo("gelu.out", op=_aten("gelu"), method=False, supports_out=True, dtypes=GELU,
           sample_inputs=sample_gelu, error_inputs=errors_gelu_out, supports_autograd=False,
           skips={"values": "gelu's values: surface.py's entry"}),
    OpInfo("gelu_", op=_inplace("gelu_"), method=False, supports_out=False, dtypes=GELU,
           sample_inputs=sample_gelu, error_inputs=errors_gelu_, supports_gradgrad=True),
    OpInfo("gelu_.expanded", op=_gelu_inplace_expanded, method=False, supports_out=False,
           dtypes=("float32",), sample_inputs=lambda op, make, dtype, rg: (),
           error_inputs=errors_gelu_expanded, supports_autograd=False,
           skips={"differential": "error inputs only"}),
    OpInfo("cosine_similarity", method=False, supports_out=False,
           dtypes=("float32", "float64", "bfloat16"), sample_inputs=sample_cosine_similarity,
           error_inputs=errors_cosine_similarity, supports_gradgrad=True,
           tol={"bfloat16": (2e-2, 2e-2)}),
    OpInfo("pairwise_distance", method=False, supports_out=False,
           dtypes=("float32", "float64", "bfloat16"), sample_inputs=sample_pairwise_distance,
           error_inputs=errors_pairwise_distance, supports_gradgrad=True,
           tol={"bfloat16": (2e-2, 2e-2)}),
    OpInfo("scaled_dot_product_attention", op=_sdpa, ref=_sdpa_ref, method=False,
           supports_out=False, dtypes=FLOAT, sample_inputs=sample_sdpa, error_inputs=errors_sdpa,
           supports_gradgrad=True, tol={"float32": (1e-5, 1e-4)}),
    OpInfo("scaled_dot_product_attention.dropout", op=_sdpa, ref=_sdpa_dropout_ref,
           method=False, supports_out=False, dtypes=FLOAT, sample_inputs=sample_sdpa_dropout,
           nondeterministic=True, supports_autograd=False),
    # No bfloat16: the product x1 W is rounded to bfloat16 before its sum over j, where torch's
    # _trilinear (bmm) rounds once; 2.5% apart on sums of 12 terms.
    OpInfo("bilinear", op=_aten("bilinear"), method=False, supports_out=False, dtypes=FLOAT,
           sample_inputs=sample_bilinear, error_inputs=errors_bilinear, supports_gradgrad=True,
           tol={"float32": (1e-3, 1e-4)}),  # sums of products of |x| < 9 cancel: 1e-4 apart
]
