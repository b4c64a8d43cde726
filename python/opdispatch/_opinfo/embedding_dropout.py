"""Table entries of embedding and dropout (issue #32 §1, helper "norm"): embedding,
embedding_dense_backward, embedding_backward, embedding_renorm_, native_dropout, native_dropout_backward, dropout,
feature_dropout, alpha_dropout (and their in-place forms).

Dropout draws from opdispatch's generator, not torch's: the random entries are nondeterministic
(dtype and shape compare, as opinfo/random_fills.py's); the deterministic cases (train=False,
p=0, p=1, where the result does not depend on the draw) are entries of their own, whose values
and gradients compare with torch's."""

from .core import ErrorInput, OpInfo, SampleInput

NORM = ("float32", "float64", "bfloat16")


def _aten(name, overload="default"):
    def op(lib, *args, **kwargs):
        return getattr(getattr(lib.ops.aten, name), overload)(*args, **kwargs)
    op.__name__ = f"{name}.{overload}"
    return op


def _idx(make, shape, high, dtype="int64"):
    return make(shape, low=0, high=high, dtype_override=dtype)


# ---- embedding ----------------------------------------------------------------------------------

def sample_embedding(op, make, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make((5, 3), requires_grad=rg), args=(_idx(make, (4,), 5),))
    yield SampleInput(make((5, 3), requires_grad=rg), args=(_idx(make, (2, 3), 5),))
    yield SampleInput(make((6, 2), requires_grad=rg), args=(_idx(make, (2, 2, 2), 6, "int32"),))
    yield SampleInput(make((5, 4), requires_grad=rg), args=(_idx(make, (7,), 5),),
                      kwargs={"padding_idx": 2})
    yield SampleInput(make((4, 3), requires_grad=rg), args=(_idx(make, (3, 4), 4),),
                      kwargs={"padding_idx": 1, "scale_grad_by_freq": True})
    yield SampleInput(make((5, 3), requires_grad=rg), args=(_idx(make, (0,), 5),))
    yield SampleInput(make((5, 3), noncontiguous=True, requires_grad=rg),
                      args=(_idx(make, (3,), 5),))


def errors_embedding(op, make):
    yield ErrorInput(SampleInput(make((4, 3)), args=(make((1,), low=4, high=5,
                                                          dtype_override="int64"),)),
                     IndexError, r"index out of range in self", on_meta=False)
    yield ErrorInput(SampleInput(make((4,)), args=(_idx(make, (1,), 4),)), RuntimeError,
                     r"'weight' must be 2-D")
    yield ErrorInput(SampleInput(make((4, 3)), args=(make((1,)),)), RuntimeError,
                     r"Expected tensor for argument #1 'indices' to have one of the following "
                     r"scalar types: Long, Int; but got torch.(meta.)?FloatTensor instead \(while "
                     r"checking arguments for embedding\)")


def sample_embedding_dense_backward(op, make, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make((4, 3), requires_grad=rg), args=(_idx(make, (4,), 5), 5, -1, False))
    yield SampleInput(make((2, 3, 2), requires_grad=rg), args=(_idx(make, (2, 3), 4), 4, 1, False))
    # scale_grad_by_freq: the double backward is PyTorch's, which leaves the scaling out
    # (embedding_dense_double_backward), so gradcheck gets no such sample.
    if not rg:
        yield SampleInput(make((3, 4, 3)), args=(_idx(make, (3, 4), 4), 4, 2, True))
        yield SampleInput(make((6, 2)), args=(_idx(make, (6,), 3, "int32"), 3, -1, True))


def sample_embedding_backward(op, make, dtype, requires_grad):
    for s in sample_embedding_dense_backward(op, make, dtype, requires_grad):
        yield SampleInput(s.input, args=s.args + (False,))


def _renorm(lib, self, *args):
    """embedding_renorm_ on a copy (the sample's table stays as it was); the copy is the result."""
    return lib.embedding_renorm_(self.clone(), *args)


_renorm.__name__ = "embedding_renorm_"


def sample_embedding_renorm_(op, make, dtype, requires_grad):
    # Repeated indices (each row once), rows below and above max_norm, every kind of norm_type.
    yield SampleInput(make((5, 3)), args=(_idx(make, (6,), 5), 1.0, 2.0))
    yield SampleInput(make((4, 4)), args=(_idx(make, (2, 3), 4, "int32"), 0.5, 1.0))
    yield SampleInput(make((6, 2)), args=(_idx(make, (4,), 6), 0.3, float("inf")))
    yield SampleInput(make((3, 5)), args=(_idx(make, (3,), 3), 2.0, 3.0))
    yield SampleInput(make((5, 3), noncontiguous=True), args=(_idx(make, (5,), 5), 0.1, 2.0))
    yield SampleInput(make((4, 3)), args=(_idx(make, (0,), 4), 0.1, 2.0))


def errors_embedding_renorm_(op, make):
    yield ErrorInput(SampleInput(make((4,)), args=(_idx(make, (1,), 4), 1.0, 2.0)), RuntimeError,
                     r"Expected 2-dimensional tensor, but got 1-dimensional tensor for argument #1 "
                     r"'self' \(while checking arguments for embedding_renorm_\)")
    yield ErrorInput(SampleInput(make((4, 3)), args=(make((1,)), 1.0, 2.0)), RuntimeError,
                     r"Expected tensor for argument #2 'indices' to have one of the following "
                     r"scalar types: Long, Int; but got torch.(meta.)?FloatTensor instead \(while "
                     r"checking arguments for embedding_renorm_\)")
    yield ErrorInput(SampleInput(make((4, 3), dtype_override="int64"),
                                 args=(_idx(make, (2,), 4), 1.0, 2.0)), RuntimeError,
                     r"norm\(\): input dtype should be either floating point or complex. "
                     r"Got Long instead.")
    yield ErrorInput(SampleInput(make((4, 3)), args=(make((1,), low=7, high=8,
                                                          dtype_override="int64"), 1.0, 2.0)),
                     IndexError, r"select\(\): index 7 out of range for tensor of size \[4, 3\] "
                     r"at dimension 0", on_meta=False)


# ---- dropout ------------------------------------------------------------------------------------

def _dropout_samples(cases):
    def samples(op, make, dtype, requires_grad):
        for shape, p, train in cases:
            yield SampleInput(make(shape, requires_grad=requires_grad), args=(p, train))
        yield SampleInput(make((4, 3, 2), noncontiguous=True, requires_grad=requires_grad),
                          args=cases[0][1:])
    return samples


_DETERMINISTIC = [((3, 4), 0.5, False), ((2, 3, 4), 0.0, True), ((2, 3), 1.0, True),
                  ((0, 3), 0.5, True), ((5,), 0.3, False)]
_RANDOM = [((3, 4), 0.5, True), ((2, 3, 4), 0.2, True), ((64,), 0.9, True)]
_FEATURE_DETERMINISTIC = [((3, 4), 0.5, False), ((2, 3, 4), 0.0, True), ((2, 3, 2), 1.0, True)]


def errors_dropout(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(1.5, True)), RuntimeError,
                     r"dropout probability has to be between 0 and 1, but got 1.5")
    yield ErrorInput(SampleInput(make((3,)), args=(-0.1, False)), RuntimeError,
                     r"dropout probability has to be between 0 and 1, but got -0.1")


def errors_feature_dropout(op, make):
    yield from errors_dropout(op, make)
    yield ErrorInput(SampleInput(make((3,)), args=(0.5, True)), RuntimeError,
                     r"Feature dropout requires at least 2 dimensions in the input")


def _inplace(name):
    def op(lib, self, *args):
        return getattr(lib, name)(self.clone(), *args)
    op.__name__ = name
    return op


def sample_native_dropout_deterministic(op, make, dtype, requires_grad):
    for shape, p, train in [((3, 4), 0.5, False), ((2, 3), 1.0, True), ((0, 2), 0.5, True)]:
        yield SampleInput(make(shape), args=(p, train))


def sample_native_dropout_random(op, make, dtype, requires_grad):
    for shape, p, train in [((3, 4), 0.5, True), ((2, 5), 0.2, None), ((4, 3), 0.0, True)]:
        yield SampleInput(make(shape), args=(p, train))


def errors_native_dropout(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(1.5, True)), RuntimeError,
                     r"bernoulli_ expects p to be in \[0, 1\], but got p=-0.5")
    yield ErrorInput(SampleInput(make((3,), dtype_override="int32"), args=(0.5, True)),
                     RuntimeError, r"result type Float can't be cast to the desired output type Int")


def sample_native_dropout_backward(op, make, dtype, requires_grad):
    rg = requires_grad
    mask = make((3, 4), dtype_override="bool")
    yield SampleInput(make((3, 4), requires_grad=rg), args=(mask, 2.0))
    yield SampleInput(make((3, 4), noncontiguous=True, requires_grad=rg), args=(mask, 1.25))
    yield SampleInput(make((2, 2), requires_grad=rg), args=(make((2, 2), dtype_override="bool"),
                                                            0.0))


OP_DB = [
    OpInfo("embedding", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=sample_embedding, error_inputs=errors_embedding,
           supports_gradgrad=True),
    OpInfo("embedding_dense_backward", op=_aten("embedding_dense_backward"), method=False,
           tol={"bfloat16": (6e-2, 2e-2)},  # bfloat16 sums of rows, another order
           supports_out=False, dtypes=NORM, sample_inputs=sample_embedding_dense_backward),
    OpInfo("embedding_backward", op=_aten("embedding_backward"), method=False,
           tol={"bfloat16": (6e-2, 2e-2)},  # bfloat16 sums of rows, another order
           supports_out=False, dtypes=NORM, sample_inputs=sample_embedding_backward),
    OpInfo("embedding_renorm_", op=_renorm, method=False, supports_out=False, dtypes=NORM,
           tol={"bfloat16": (2e-2, 2e-2)},  # the norm's sum in another order
           sample_inputs=sample_embedding_renorm_, error_inputs=errors_embedding_renorm_,
           supports_autograd=False),
    OpInfo("dropout", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=_dropout_samples(_DETERMINISTIC), error_inputs=errors_dropout),
    OpInfo("dropout.random", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=_dropout_samples(_RANDOM), nondeterministic=True,
           supports_autograd=False),
    OpInfo("dropout_", op=_inplace("dropout_"), method=False, supports_out=False, dtypes=NORM,
           sample_inputs=_dropout_samples(_DETERMINISTIC), supports_autograd=False),
    OpInfo("feature_dropout", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=_dropout_samples(_FEATURE_DETERMINISTIC),
           error_inputs=errors_feature_dropout),
    OpInfo("feature_dropout.random", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=_dropout_samples(_RANDOM[:2]), nondeterministic=True,
           supports_autograd=False),
    OpInfo("feature_dropout_", op=_inplace("feature_dropout_"), method=False, supports_out=False,
           dtypes=NORM, sample_inputs=_dropout_samples(_FEATURE_DETERMINISTIC),
           supports_autograd=False),
    OpInfo("alpha_dropout", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=_dropout_samples(_DETERMINISTIC), error_inputs=errors_dropout),
    OpInfo("alpha_dropout.random", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=_dropout_samples(_RANDOM), nondeterministic=True,
           supports_autograd=False),
    OpInfo("native_dropout", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=sample_native_dropout_deterministic, error_inputs=errors_native_dropout,
           supports_autograd=False),
    OpInfo("native_dropout.random", method=False, supports_out=False, dtypes=NORM,
           sample_inputs=sample_native_dropout_random, nondeterministic=True,
           supports_autograd=False),
    OpInfo("native_dropout_backward", op=_aten("native_dropout_backward"), method=False,
           supports_out=False, dtypes=NORM, sample_inputs=sample_native_dropout_backward,
           supports_gradgrad=True),
]
