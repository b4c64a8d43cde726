"""Table entries of the reductions (helper "reductions", issue #31): sum, mean, amax, amin,
argmax, argmin, max/min (with and without dim), prod, all/any, var/std/var_mean/std_mean,
logsumexp, norm, linalg_vector_norm, count_nonzero, nansum."""

from .core import ErrorInput, OpInfo, SampleInput, ref_in_float32, dtypes as D

FLOAT = ("float32", "float64")
PROD_DTYPES = FLOAT + D.integral + ("bool",)  # torch 1.13's prod_cpu: no Half, no BFloat16
REDUCE_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-4)}


def _x(make, shape, rg, **kw):
    return make(shape, requires_grad=rg, **kw)


def _shapes(make, rg):
    """(name, tensor) inputs every reduction sees: 2-d, strided, transposed, 3-d, 0-d."""
    yield "2-d", _x(make, (3, 4), rg)
    yield "strided", _x(make, (3, 4), rg, noncontiguous=True)
    yield "transposed", _x(make, (4, 3), rg).t()
    yield "3-d", _x(make, (2, 3, 5), rg)
    yield "0-d", _x(make, (), rg)


def sample_dims(op, make, dtype, rg):
    """Reductions over int[1]? dims with keepdim (sum, mean, amax, amin, nansum)."""
    for name, x in _shapes(make, rg):
        yield SampleInput(x, name=name)
        yield SampleInput(x, args=(0,), name=name + " dim 0")
        yield SampleInput(x, args=(-1,), kwargs={"keepdim": True}, name=name + " dim -1 keepdim")
        if x.dim() >= 2:
            yield SampleInput(x, args=([0, -1],), name=name + " dims 0,-1")
    yield SampleInput(make((0, 3)), args=(1,), name="empty rows")


def sample_dims_only(op, make, dtype, rg):
    """The samples of sample_dims that name a dim (the out= forms need one)."""
    for s in sample_dims(op, make, dtype, rg):
        if s.args or s.kwargs:
            yield s


def sample_sum_empty(op, make, dtype, rg):
    yield from sample_dims(op, make, dtype, rg)
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((0, 3)), args=(0,), name="empty over 0")


def sample_dim(op, make, dtype, rg):
    """Reductions over one int dim with keepdim (max.dim, min.dim, prod.dim_int, all.dim...)."""
    for name, x in _shapes(make, rg):
        yield SampleInput(x, args=(0,), name=name + " dim 0")
        yield SampleInput(x, args=(-1, True), name=name + " dim -1 keepdim")


def sample_all(op, make, dtype, rg):
    """Reductions over every element (max(), min(), prod(), all(), any())."""
    for name, x in _shapes(make, rg):
        yield SampleInput(x, name=name)


def sample_arg(op, make, dtype, rg):
    for name, x in _shapes(make, False):
        yield SampleInput(x, name=name)
        yield SampleInput(x, args=(0,), name=name + " dim 0")
        yield SampleInput(x, kwargs={"dim": -1, "keepdim": True}, name=name + " dim -1 keepdim")


def sample_ties(op, make, dtype, rg):
    """Ties and NaN: the first index, as torch."""
    yield from sample_dim(op, make, dtype, rg)
    yield SampleInput(make((3, 4), low=0, high=2), args=(1,), name="ties")


def _positive_dof(sample):
    """Whether var's n - correction > 0 for this sample. Otherwise var is inf or NaN and so is
    its gradient (inf * grad for a 0-dim input or dim None, as torch's var_backward): no numerical
    gradient to compare with, so gradcheck (and the differential tester's gradients) skip those;
    tests/python/test_gradients_vs_torch.py compares them with torch's."""
    x, args, kwargs = sample.input, sample.args, sample.kwargs
    flag = args and isinstance(args[0], bool)
    dim = None if not args or flag else args[0]
    unbiased = args[0] if flag else (args[1] if len(args) > 1 else True)
    correction = kwargs.get("correction", 1 if unbiased else 0)
    n = x.numel() if dim is None or x.dim() == 0 else x.shape[dim]
    return n - correction > 0


def _var_samples(make, rg):
    for name, x in _shapes(make, rg):
        yield SampleInput(x, name=name)
        yield SampleInput(x, args=(False,), name=name + " biased")
        yield SampleInput(x, args=(0,), name=name + " dim 0")
        yield SampleInput(x, args=(-1, False, True), name=name + " dim -1 biased keepdim")
        yield SampleInput(x, args=(0,), kwargs={"correction": 2}, name=name + " correction 2")
    yield SampleInput(_x(make, (3, 40), rg), args=(1,), name="long rows")


def _var_mean_samples(make, rg):
    for name, x in _shapes(make, rg):
        yield SampleInput(x, name=name)
        yield SampleInput(x, args=(0,), name=name + " dim 0")
        yield SampleInput(x, args=(-1,), kwargs={"correction": 0, "keepdim": True},
                          name=name + " correction 0 keepdim")


def sample_var(op, make, dtype, rg):
    return (s for s in _var_samples(make, rg) if not rg or _positive_dof(s))


def sample_var_mean(op, make, dtype, rg):
    return (s for s in _var_mean_samples(make, rg) if not rg or _positive_dof(s))


def sample_logsumexp(op, make, dtype, rg):
    for name, x in _shapes(make, rg):
        yield SampleInput(x, args=(0,), name=name + " dim 0")
        yield SampleInput(x, args=([-1], True), name=name + " dim -1 keepdim")


def sample_norm(op, make, dtype, rg):
    for name, x in _shapes(make, rg):
        yield SampleInput(x, name=name)
        for p in (1, 3, float("inf")):
            yield SampleInput(x, args=(p,), name=f"{name} p={p}")
        yield SampleInput(x, args=(2, 0), name=name + " dim 0")
        yield SampleInput(x, args=(1, [-1], True), name=name + " p=1 dim -1 keepdim")


def sample_vector_norm(op, make, dtype, rg):
    for name, x in _shapes(make, rg):
        yield SampleInput(x, name=name)
        for p in (0, 1, 0.5, -1, float("inf"), float("-inf")):
            yield SampleInput(x, args=(p,), name=f"{name} ord={p}")
        yield SampleInput(x, kwargs={"dim": 0, "keepdim": True}, name=name + " dim 0 keepdim")
    yield SampleInput(make((0, 3)), name="empty")


def sample_count_nonzero(op, make, dtype, rg):
    for name, x in _shapes(make, False):
        yield SampleInput(x, name=name)
        yield SampleInput(x, args=(0,), name=name + " dim 0")
    yield SampleInput(make((3, 4)), args=([0, 1],), name="dims 0,1")


def errors_minmax(op, make):
    yield ErrorInput(SampleInput(make((0, 3))), RuntimeError,
                     rf"{op.function_name}\(\): Expected reduction dim to be specified for "
                     r"input.numel\(\) == 0. Specify the reduction dim with the 'dim' argument.")


def errors_amax(op, make):
    yield from errors_minmax(op, make)
    yield ErrorInput(SampleInput(make((0, 3)), args=(0,)), IndexError,
                     rf"{op.function_name}\(\): Expected reduction dim 0 to have non-zero size.")


def errors_dim(op, make):
    yield ErrorInput(SampleInput(make((0, 3)), args=(0,)), IndexError,
                     rf"{op.function_name}\(\): Expected reduction dim 0 to have non-zero size.")
    yield ErrorInput(SampleInput(make((2, 3)), args=(2,)), IndexError, r"Dimension out of range")


def errors_arg(op, make):
    yield ErrorInput(SampleInput(make((0, 3))), IndexError,
                     rf"{op.function_name}\(\): Expected reduction dim to be specified for "
                     r"input.numel\(\) == 0.")
    yield ErrorInput(SampleInput(make((2,), dtype_override="bool")), RuntimeError,
                     rf'"{op.function_name}_cpu" not implemented for \'Bool\'')


def errors_mean(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="int64")), RuntimeError,
                     r"mean\(\): could not infer output dtype. Input dtype must be either a "
                     r"floating point or complex dtype. Got: Long")


def errors_var(op, make):
    who = "std and var" if op.function_name in ("var", "std") else op.function_name
    yield ErrorInput(SampleInput(make((2,), dtype_override="int64")), RuntimeError,
                     rf"{who} only support floating point and complex dtypes")


def errors_prod(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="float16")), RuntimeError,
                     r"\"prod_cpu\" not implemented for 'Half'")


def errors_norm(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="int64")), RuntimeError,
                     r"norm\(\): input dtype should be either floating point or complex. "
                     r"Got Long instead.")


def errors_vector_norm(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="int64")), RuntimeError,
                     r"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                     r"Got Long")
    yield ErrorInput(SampleInput(make((0, 3)), args=(float("inf"),)), RuntimeError,
                     r"linalg.vector_norm cannot compute the inf norm on an empty tensor because "
                     r"the operation does not have an identity")
    yield ErrorInput(SampleInput(make((2,)), kwargs={"dtype": "float16"}), RuntimeError,
                     r"linalg.vector_norm: the dtype of the input \(Float\) should be convertible "
                     r"without narrowing to the specified dtype \(Half\)")


def errors_nansum(op, make):
    yield ErrorInput(SampleInput(make((2,), dtype_override="complex64")), RuntimeError,
                     r"nansum does not support complex inputs")


def _vector_norm(lib, *args, **kwargs):
    fn = lib.linalg.vector_norm
    return fn(*args, **kwargs)


def _first(name):
    """The first output of lib.<name>(...), for the tuple-returning forms."""
    def op(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)[0]
    op.__name__ = name
    return op


NO_GRAD = {"gradcheck": "integer or boolean output: not differentiable"}

OP_DB = [
    OpInfo("sum", dtypes=D.all_and_complex_and_bool, sample_inputs=sample_sum_empty,
           supports_out=False, tol=REDUCE_TOL),
    # torch 1.13 keeps float16/bfloat16 partial sums of a reduction over several dims in the
    # output's dtype (differential.py --seed 7 --iteration 70562: sum over [0, -1] of a stride-0
    # [3, 4] float16, 0.0938 where the float32 sum rounded is 0.0801); opdispatch accumulates
    # in float and rounds once, so the reference is torch's in float32, rounded.
    OpInfo("sum.dim_IntList", dtypes=D.all_and_complex_and_bool, sample_inputs=sample_dims_only,
           ref=ref_in_float32(lambda lib, *a, **k: lib.sum(*a, **k)), tol=REDUCE_TOL),
    OpInfo("mean", dtypes=D.float_and_complex, sample_inputs=sample_sum_empty,
           error_inputs=errors_mean, supports_out=False, tol=REDUCE_TOL),
    OpInfo("mean.dim", dtypes=D.float_and_complex, sample_inputs=sample_dims_only,
           tol=REDUCE_TOL),
    OpInfo("amax", dtypes=D.all_and_bool, sample_inputs=sample_dims, error_inputs=errors_amax),
    OpInfo("amin", dtypes=D.all_and_bool, sample_inputs=sample_dims, error_inputs=errors_amax),
    OpInfo("argmax", dtypes=D.all, sample_inputs=sample_arg, error_inputs=errors_arg,
           supports_autograd=False),
    OpInfo("argmin", dtypes=D.all, sample_inputs=sample_arg, error_inputs=errors_arg,
           supports_autograd=False),
    OpInfo("max.dim", dtypes=D.all_and_bool, sample_inputs=sample_ties, error_inputs=errors_dim,
           supports_out=False),
    OpInfo("min.dim", dtypes=D.all_and_bool, sample_inputs=sample_ties, error_inputs=errors_dim,
           supports_out=False),
    OpInfo("max.reduction", dtypes=D.all_and_bool, sample_inputs=sample_all,
           error_inputs=errors_minmax, supports_out=False),
    OpInfo("min.reduction", dtypes=D.all_and_bool, sample_inputs=sample_all,
           error_inputs=errors_minmax, supports_out=False),
    OpInfo("prod", dtypes=PROD_DTYPES, sample_inputs=sample_all, error_inputs=errors_prod,
           supports_out=False, tol=REDUCE_TOL),
    OpInfo("prod.dim_int", dtypes=PROD_DTYPES, sample_inputs=sample_dim, tol=REDUCE_TOL),
    OpInfo("all", dtypes=D.all_and_bool, sample_inputs=sample_all, supports_out=False,
           supports_autograd=False),
    OpInfo("any", dtypes=D.all_and_bool, sample_inputs=sample_all, supports_out=False,
           supports_autograd=False),
    OpInfo("all.dim", dtypes=D.all_and_bool, sample_inputs=sample_dim, supports_autograd=False),
    OpInfo("any.dim", dtypes=D.all_and_bool, sample_inputs=sample_dim, supports_autograd=False),
    OpInfo("var", dtypes=D.floating, sample_inputs=sample_var, error_inputs=errors_var,
           supports_out=False, tol=REDUCE_TOL),
    OpInfo("std", dtypes=D.floating, sample_inputs=sample_var, error_inputs=errors_var,
           supports_out=False, tol=REDUCE_TOL),
    OpInfo("var_mean", op=_first("var_mean"), method=False, dtypes=D.floating,
           sample_inputs=sample_var_mean, error_inputs=errors_var, supports_out=False,
           tol=REDUCE_TOL),
    OpInfo("std_mean", op=_first("std_mean"), method=False, dtypes=D.floating,
           sample_inputs=sample_var_mean, error_inputs=errors_var, supports_out=False,
           tol=REDUCE_TOL),
    OpInfo("logsumexp", dtypes=FLOAT, sample_inputs=sample_logsumexp, supports_out=False,
           tol=REDUCE_TOL),
    OpInfo("norm", dtypes=D.floating, sample_inputs=sample_norm, error_inputs=errors_norm,
           supports_out=False, tol=REDUCE_TOL),
    OpInfo("linalg_vector_norm", op=_vector_norm, method=False, dtypes=D.floating,
           sample_inputs=sample_vector_norm, error_inputs=errors_vector_norm, tol=REDUCE_TOL,
           skips={"gradcheck": "ord 0 and ord < 1 are not differentiable at 0 (torch agrees)"}),
    OpInfo("count_nonzero", dtypes=D.all_and_bool, sample_inputs=sample_count_nonzero,
           supports_out=False, supports_autograd=False),
    OpInfo("nansum", dtypes=FLOAT + D.integral, sample_inputs=sample_dims,
           error_inputs=errors_nansum, supports_out=False, tol=REDUCE_TOL),
]
