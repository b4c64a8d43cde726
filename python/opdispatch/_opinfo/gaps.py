"""Table entries of the last Core ATen gaps (helper "gaps", issue #31): the functional fill and
copy, fill_ with a 0-d tensor (the in-place form of fill.Tensor), cdist (both of its paths,
Note [cdist's two paths] in plugins/composite/distance_composites.cpp) and pdist."""

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D

FLOAT = ("float32", "float64")
# Powers and roots of sums: float32 rounds differently from torch's vectorised loops.
DIST_TOL = {"float32": (1e-4, 1e-4)}
# p values with a branch each in the kernels (Note [Distance norms]).
P_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf"))


def _aten(name):
    """lib.ops.aten.<name> (torch 1.13 binds no torch.copy, and torch.cdist takes compute_mode
    as a string, the schema as an int)."""
    def op(lib, *args, **kwargs):
        return getattr(lib.ops.aten, name)(*args, **kwargs)
    return op


def sample_fill(op, make, dtype, rg):
    value = True if dtype == "bool" else 3
    yield SampleInput(make((3, 4), requires_grad=rg), args=(value,), name="2-d")
    yield SampleInput(make((3, 4), noncontiguous=True, requires_grad=rg), args=(value,),
                      name="strided")
    yield SampleInput(make((4, 3), requires_grad=rg).t(), args=(value,), name="transposed")
    yield SampleInput(make((), requires_grad=rg), args=(value,), name="0-d")
    yield SampleInput(make((0, 3)), args=(value,), name="empty")
    if dtype not in ("bool", "uint8") and dtype not in D.integral:
        yield SampleInput(make((2, 3), requires_grad=rg), args=(-1.5,), name="float value")


def sample_fill_tensor(op, make, dtype, rg):
    for s in sample_fill(op, make, dtype, rg):
        yield SampleInput(s.input, args=(make((), requires_grad=rg),), name=s.name)


def errors_fill_tensor(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2,)),)), RuntimeError,
                     r"fill_ only supports 0-dimension value tensor but got tensor with 1 "
                     r"dimensions\.")


def sample_copy(op, make, dtype, rg):
    yield SampleInput(make((3, 4), requires_grad=rg), args=(make((3, 4), requires_grad=rg),),
                      name="same shape")
    yield SampleInput(make((4, 3), requires_grad=rg).t(), args=(make((3, 4), requires_grad=rg),),
                      name="transposed self")
    yield SampleInput(make((3, 4), requires_grad=rg),
                      args=(make((3, 4), noncontiguous=True, requires_grad=rg),),
                      name="strided src")
    yield SampleInput(make((3, 4), requires_grad=rg), args=(make((4,), requires_grad=rg),),
                      name="broadcast src")
    yield SampleInput(make(()), args=(make(()),), name="0-d")
    yield SampleInput(make((0, 3)), args=(make((3,)),), name="empty")
    yield SampleInput(make((2, 3)), args=(make((2, 3), dtype_override="int64"),),
                      name="other dtype src")


def errors_copy(op, make):
    # torch: "The expanded size of the tensor (4) must match the existing size (3) ..."; opd's
    # copy_ (not this helper's) says "The size of tensor a (4) must match the size of tensor b
    # (3) ...", as torch's own broadcasting errors do.
    yield ErrorInput(SampleInput(make((3, 4)), args=(make((3,)),)), RuntimeError,
                     r"\(4\) must match the (existing )?size (of tensor b )?\(3\)")


def sample_cdist(op, make, dtype, rg):
    def x(shape, **kw):
        return make(shape, requires_grad=rg, **kw)
    for p in P_VALUES:
        yield SampleInput(x((5, 3)), args=(x((4, 3)),), kwargs={"p": p}, name=f"p={p}")
    yield SampleInput(x((5, 3)), args=(x((4, 3)),), name="default p")
    yield SampleInput(x((2, 5, 3), noncontiguous=True), args=(x((4, 3)),), kwargs={"p": 1.0},
                      name="batch against 2-d, strided")
    yield SampleInput(x((2, 1, 3, 4)), args=(x((5, 2, 4)).transpose(0, 1),),
                      kwargs={"p": 3.0}, name="broadcast batches, transposed")
    # More than 25 rows: p = 2 takes the matrix-product path (_euclidean_dist).
    yield SampleInput(x((30, 4)), args=(x((6, 4)),), name="mm path")
    yield SampleInput(x((2, 27, 3)), args=(x((1, 5, 3)),), name="mm path, batches")
    yield SampleInput(x((30, 4)), args=(x((6, 4)),), kwargs={"p": 1.0}, name="30 rows, p=1")
    yield SampleInput(make((0, 3)), args=(make((4, 3)),), name="no rows")
    yield SampleInput(make((3, 0)), args=(make((4, 0)),), name="no columns")
    yield SampleInput(make((0, 3, 2)), args=(make((4, 2)),), name="empty batch")


def sample_cdist_mode(op, make, dtype, rg):
    a, b = make((5, 3), requires_grad=rg), make((4, 3), requires_grad=rg)
    for mode in (0, 1, 2):
        yield SampleInput(a, args=(b, 2.0, mode), name=f"p=2 compute_mode={mode}")
    yield SampleInput(make((30, 3), requires_grad=rg), args=(b, 2.0, 2), name="30 rows, mode 2")
    yield SampleInput(a, args=(b, 1.0, 1), name="p=1 compute_mode=1")


def errors_cdist(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(make((4, 3)),)), RuntimeError,
                     r"cdist only supports at least 2D tensors, X1 got: 1D")
    yield ErrorInput(SampleInput(make((3, 2)), args=(make((3,)),)), RuntimeError,
                     r"cdist only supports at least 2D tensors, X2 got: 1D")
    yield ErrorInput(SampleInput(make((3, 2)), args=(make((4, 3)),)), RuntimeError,
                     r"X1 and X2 must have the same number of columns\. X1: 2 X2: 3")
    yield ErrorInput(SampleInput(make((3, 2)), args=(make((4, 2)),), kwargs={"p": -1.0}),
                     RuntimeError, r"cdist only supports non-negative p values")
    yield ErrorInput(SampleInput(make((3, 2), dtype_override="int64"),
                                 args=(make((4, 2), dtype_override="int64"),)),
                     RuntimeError, r"cdist only supports floating-point dtypes, X1 got: Long")
    yield ErrorInput(SampleInput(make((3, 2), dtype_override="float16"),
                                 args=(make((4, 2), dtype_override="float16"),)),
                     RuntimeError, r"\"cdist\" not implemented for 'Half'")
    yield ErrorInput(SampleInput(make((3, 2), dtype_override="bfloat16"),
                                 args=(make((4, 2), dtype_override="bfloat16"),)),
                     RuntimeError, r"\"cdist\" not implemented for 'BFloat16'")
    yield ErrorInput(SampleInput(make((3, 2)), args=(make((4, 2), dtype_override="float64"),)),
                     RuntimeError, r"expected scalar type Float but found Double")


def errors_cdist_mode(op, make):
    yield ErrorInput(SampleInput(make((3, 2)), args=(make((4, 2)), 2.0, 3)), RuntimeError,
                     r"possible modes: 0, 1, 2, but was: 3")


def sample_pdist(op, make, dtype, rg):
    for p in P_VALUES:
        yield SampleInput(make((5, 3), requires_grad=rg), kwargs={"p": p}, name=f"p={p}")
    yield SampleInput(make((5, 3), requires_grad=rg), name="default p")
    yield SampleInput(make((6, 4), noncontiguous=True, requires_grad=rg), args=(1.0,),
                      name="strided")
    yield SampleInput(make((4, 6), requires_grad=rg).t(), name="transposed")
    yield SampleInput(make((1, 3)), name="one row")
    yield SampleInput(make((0, 3)), name="no rows")
    yield SampleInput(make((4, 0)), name="no columns")


def errors_pdist(op, make):
    yield ErrorInput(SampleInput(make((3,))), RuntimeError,
                     r"pdist only supports 2D tensors, got: 1D")
    yield ErrorInput(SampleInput(make((3, 2)), args=(-1.0,)), RuntimeError,
                     r"pdist only supports non-negative p values")
    yield ErrorInput(SampleInput(make((3, 2), dtype_override="int32")), RuntimeError,
                     r"pdist only supports floating-point dtypes")
    yield ErrorInput(SampleInput(make((3, 2), dtype_override="float16")), RuntimeError,
                     r"\"pdist\" not implemented for 'Half'")


OP_DB = [
    OpInfo("fill.Scalar", method=False, inplace="fill_", supports_out=False,
           dtypes=D.all_and_bool, sample_inputs=sample_fill),
    OpInfo("fill.Tensor", method=False, inplace="fill_", supports_out=False,
           dtypes=D.all_and_bool, sample_inputs=sample_fill_tensor,
           error_inputs=errors_fill_tensor),
    OpInfo("copy", op=_aten("copy"), method=False, inplace=None, supports_out=False,
           dtypes=D.all_and_bool, sample_inputs=sample_copy, error_inputs=errors_copy),
    OpInfo("cdist", method=False, inplace=None, supports_out=False, dtypes=FLOAT,
           sample_inputs=sample_cdist, error_inputs=errors_cdist, tol=DIST_TOL),
    OpInfo("cdist.compute_mode", op=_aten("cdist"), method=False, inplace=None,
           supports_out=False, dtypes=FLOAT, sample_inputs=sample_cdist_mode,
           error_inputs=errors_cdist_mode, tol=DIST_TOL),
    OpInfo("pdist", method=False, inplace=None, supports_out=False, dtypes=FLOAT,
           sample_inputs=sample_pdist, error_inputs=errors_pdist, tol=DIST_TOL),
]
