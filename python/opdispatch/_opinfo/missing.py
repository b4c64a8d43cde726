"""masked_scatter, index_copy, xlogy, kthvalue, kron, cross and linalg_cross, and the out=
forms of maximum, minimum and where.self (helper "missing-ops", issue 31, session 3; the
functional forms' entries are binary.py's, these check out= only).

index_copy's samples index distinct positions along dim (which of two slices written to one
place wins is the last in PyTorch's sequential kernel, but a gradient through an overwritten
slice is not defined); kthvalue's inputs have distinct values (torch's quickselect returns any
of tied elements' indices); masked_scatter's sources have at least as many elements as the mask has
ones; xlogy's gradients are checked where y > 0 (its edges, x = 0 and y NaN or <= 0, are value
samples)."""

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D
from .binary import _binary, sample_where, EVERY
from .scatter_gather import _distinct_index

import opdispatch as opd

ALL = D.all_and_complex_and_bool


def _mask(make, shape):
    return make(shape, dtype_override="bool")


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---- masked_scatter ---------------------------------------------------------------------

def sample_masked_scatter(op, make, dtype, rg):
    yield SampleInput(make((3, 4), requires_grad=rg),
                      args=(_mask(make, (3, 4)), make((12,), requires_grad=rg)))
    yield SampleInput(make((3, 4), noncontiguous=True, requires_grad=rg),
                      args=(_mask(make, (4,)), make((3, 5), requires_grad=rg)),
                      name="strided, broadcast mask, 2-d source with spare elements")
    yield SampleInput(make((4, 3), requires_grad=rg).t(),
                      args=(_mask(make, (3, 1)), make((4, 3), requires_grad=rg).t()),
                      name="transposed self and source, column mask")
    yield SampleInput(make((2, 1, 3), requires_grad=rg),
                      args=(_mask(make, (2, 4, 1)), make((24,), requires_grad=rg)),
                      name="self broadcast with the mask")
    yield SampleInput(make((), requires_grad=rg), args=(_mask(make, ()), make((2,),
                      requires_grad=rg)), name="0-d")
    yield SampleInput(make((0, 3)), args=(_mask(make, (0, 3)), make((0,))), name="empty")
    yield SampleInput(make((2, 3)), args=(opd.zeros(2, 3, dtype=opd.bool), make(())),
                      name="no ones, 0-d source")


def errors_masked_scatter(op, make):
    x = make((2, 3))
    ones = opd.ones(2, 3, dtype=opd.bool)
    yield ErrorInput(SampleInput(x, args=(ones, make((5,)))), RuntimeError,
                     "Number of elements of source < number of ones in mask", on_meta=False)
    yield ErrorInput(SampleInput(x, args=(ones, make((6,), dtype_override="float64"))),
                     RuntimeError, "masked_scatter: expected self and source to have same dtypes "
                     "but got")


# ---- index_copy -------------------------------------------------------------------------

def sample_index_copy(op, make, dtype, rg):
    yield SampleInput(make((4, 5), requires_grad=rg),
                      args=(0, _distinct_index(make, (3,), 0, 4), make((3, 5), requires_grad=rg)))
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      args=(1, _distinct_index(make, (5,), 0, 5),
                            make((4, 5), noncontiguous=True, requires_grad=rg)),
                      name="strided self and source, every column")
    yield SampleInput(make((3, 4), requires_grad=rg).t(),
                      args=(-1, _distinct_index(make, (2,), 0, 3), make((4, 2), requires_grad=rg)),
                      name="transposed, last dim")
    yield SampleInput(make((2, 3, 4), requires_grad=rg),
                      args=(1, opd.tensor(2), make((2, 1, 4), requires_grad=rg)),
                      name="3-d, 0-d index")
    yield SampleInput(make((), requires_grad=rg), args=(0, opd.tensor([0]),
                      make((), requires_grad=rg)), name="0-d")
    yield SampleInput(make((3,), requires_grad=rg), args=(0, opd.tensor([1]),
                      make((), requires_grad=rg)), name="0-d source")
    yield SampleInput(make((4, 5)), args=(0, opd.zeros(0, dtype=opd.int64), make((0, 5))),
                      name="empty index")


def errors_index_copy(op, make):
    x = make((3, 4))
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([3]), make((1, 4)))), IndexError,
                     r"index_copy_\(\): index 3 is out of bounds for dimension 0 with size 3",
                     on_meta=False)
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([-1]), make((1, 4)))), IndexError,
                     r"index_copy_\(\): index -1 is out of bounds for dimension 0 with size 3",
                     on_meta=False)
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0], dtype=opd.int32), make((1, 4)))),
                     RuntimeError, r"index_copy_\(\): Expected a long tensor for index, but got "
                     r"Int")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([[0]]), make((1, 4)))), IndexError,
                     r"index_copy_\(\): Index should have dimension 1 or 0 \(got 2\)")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0, 1]), make(()))), IndexError,
                     r"index_copy_\(\): When source is scalar, index should have one element "
                     r"\(got 2\)")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0]), make((4,)))), IndexError,
                     r"When source and destination are not scalars, their dimensionality must "
                     r"match. Source dimensionality \(1\), destination dimensionality \(2\)")
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([0]), make((2, 1)))), RuntimeError,
                     r"index_copy_\(\): Source/destination tensor must have same slice shapes. "
                     r"Destination slice shape: 3 at dimension 1 and source slice shape: 2 at "
                     r"dimension 0.")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0, 1]), make((3, 4)))), IndexError,
                     r"index_copy_\(\): Number of indices \(2\) should be equal to "
                     r"source.size\(dim\) \(3\)")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0]), make((1, 4),
                     dtype_override="float64" if make.dtype != "float64" else "float32"))),
                     RuntimeError, r"index_copy_\(\): self and source expected to have the same "
                     r"dtype, but got \(self\) .* and \(source\)")


# ---- xlogy ------------------------------------------------------------------------------

def sample_xlogy(op, make, dtype, rg):
    # y > 0 everywhere: log's domain, where the gradient is defined.
    yield from _binary(low=0.5, high=3, number=2.5)(op, make, dtype, rg)
    if not rg and dtype in D.floating:
        nan = float("nan")
        x = opd.tensor([0.0, 0.0, 0.0, 1.0, -2.0, 0.0, 3.0], dtype=getattr(opd, dtype))
        y = opd.tensor([0.0, nan, -1.0, 0.0, 0.5, float("inf"), -2.0], dtype=getattr(opd, dtype))
        yield SampleInput(x, args=(y,), name="x = 0, y NaN, y <= 0, inf")


def sample_xlogy_scalar_self(op, make, dtype, rg):
    yield SampleInput(make((3, 4), low=0.5, high=3, requires_grad=rg), args=(2.5,))
    yield SampleInput(make((3, 4), low=0.5, high=3, noncontiguous=True, requires_grad=rg),
                      args=(3,), name="strided, int")
    yield SampleInput(make((), low=0.5, high=3, requires_grad=rg), args=(0,), name="0-d, zero")
    yield SampleInput(make((0, 3)), args=(2.0,), name="empty")


def sample_xlogy_scalar_other(op, make, dtype, rg):
    yield SampleInput(make((3, 4), requires_grad=rg), args=(2.5,))
    yield SampleInput(make((4, 3), requires_grad=rg).t(), args=(3,), name="transposed, int")
    yield SampleInput(make((), requires_grad=rg), args=(0.5,), name="0-d")
    yield SampleInput(make((0, 3)), args=(2.0,), name="empty")
    if dtype in D.floating and not rg:  # NaN and -inf: values only
        x = opd.tensor([0.0, 1.0, -2.0], dtype=getattr(opd, dtype))
        yield SampleInput(x, args=(-1.0,), name="y < 0")
        yield SampleInput(x, args=(0,), name="y = 0")


def errors_xlogy(op, make):
    x = opd.ones(3, dtype=opd.complex64)
    yield ErrorInput(SampleInput(x, args=(x,)), RuntimeError,
                     "\"xlogy_cpu\" not implemented for 'ComplexFloat'")


def _xlogy_scalar_self(lib, other, number, **kwargs):
    return lib.xlogy(number, other, **kwargs)


def _xlogy_scalar_other(lib, x, number, **kwargs):
    return lib.xlogy(x, number, **kwargs)



# ---- kthvalue ---------------------------------------------------------------------------

def _distinct(make, shape, noncontiguous=False, requires_grad=False):
    """A tensor of `shape` and make's dtype whose values are distinct (a shuffled range, exact in
    every dtype kthvalue takes: at most 100 elements), strided when noncontiguous."""
    if noncontiguous and len(shape) > 0:  # every other element of a wider one
        wide = _distinct(make, tuple(shape[:-1]) + (shape[-1] * 2,))
        t = wide[..., ::2]
        return t.detach().requires_grad_(True) if requires_grad and make.dtype in D.floating else t
    n = _prod(shape)
    values = list(range(-(n // 2), n - n // 2))
    make.rng.shuffle(values)
    if make.dtype == "uint8":
        values = [v + n // 2 for v in values]
    dtype = getattr(opd, make.dtype)
    t = opd.tensor(values, dtype=opd.float64).reshape(list(shape)).to(dtype)
    if make.dtype in D.floating:
        t = t / 4  # fractions, still exact
    if requires_grad and make.dtype in D.floating:
        t = t.detach().requires_grad_(True)
    return t


def sample_kthvalue(op, make, dtype, rg):
    yield SampleInput(_distinct(make, (3, 5), requires_grad=rg), args=(2,))
    yield SampleInput(_distinct(make, (3, 5), noncontiguous=True, requires_grad=rg),
                      args=(3, 0), name="strided, dim 0")
    yield SampleInput(_distinct(make, (4, 3), requires_grad=rg).t(), args=(4,),
                      kwargs={"dim": 1, "keepdim": True}, name="transposed, keepdim, k = size")
    yield SampleInput(_distinct(make, (2, 3, 4), requires_grad=rg), args=(1, -2),
                      name="3-d, k = 1")
    yield SampleInput(_distinct(make, (), requires_grad=rg), args=(1,), name="0-d")
    yield SampleInput(_distinct(make, (), requires_grad=rg), args=(1, 0, True),
                      name="0-d, keepdim")
    yield SampleInput(make((0, 3)), args=(2,), name="empty, reduced dim not")
    if dtype in D.floating and not rg:
        nan = float("nan")
        x = opd.tensor([[3.0, nan, 1.0], [nan, nan, -1.0]], dtype=getattr(opd, dtype))
        yield SampleInput(x, args=(2,), name="NaN largest")


def _kthvalue(lib, *args, out=None, **kwargs):
    """torch.kthvalue, whose out= is the (values, indices) pair; opdispatch's binding takes them
    as the schema's values= and indices= (it does not map out= onto several outputs)."""
    if out is None or lib.__name__ == "torch":
        return lib.kthvalue(*args, **kwargs) if out is None else lib.kthvalue(*args, out=out,
                                                                              **kwargs)
    return lib.kthvalue(*args, values=out[0], indices=out[1], **kwargs)


def errors_kthvalue(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(4,)), RuntimeError,
                     r"kthvalue\(\): selected number k out of range for dimension 1")
    yield ErrorInput(SampleInput(x, args=(0, 0)), RuntimeError,
                     r"kthvalue\(\): selected number k out of range for dimension 0")
    yield ErrorInput(SampleInput(make((3, 0)), args=(1, 1)), IndexError,
                     r"kthvalue\(\): Expected reduction dim 1 to have non-zero size.")
    yield ErrorInput(SampleInput(opd.ones(3, dtype=opd.float16), args=(1,)), RuntimeError,
                     "\"kthvalue_cpu\" not implemented for 'Half'")
    yield ErrorInput(SampleInput(opd.ones(3, dtype=opd.bool), args=(1,)), RuntimeError,
                     "\"kthvalue_cpu\" not implemented for 'Bool'")


# ---- kron -------------------------------------------------------------------------------

def sample_kron(op, make, dtype, rg):
    yield SampleInput(make((2, 3), requires_grad=rg), args=(make((3, 2), requires_grad=rg),))
    yield SampleInput(make((2,), requires_grad=rg), args=(make((3, 2), requires_grad=rg),),
                      name="fewer dims")
    yield SampleInput(make((2, 2, 3), noncontiguous=True, requires_grad=rg),
                      args=(make((3, 2), requires_grad=rg),), name="strided (viewable)")
    if not rg:  # torch 1.13 views its inputs: a transposed one raises view's error
        yield SampleInput(make((2, 3)), args=(make((3, 2)).t(),), name="transposed: raises")
    yield SampleInput(make((), requires_grad=rg), args=(make((2, 3), requires_grad=rg),),
                      name="0-d self")
    yield SampleInput(make((), requires_grad=rg), args=(make((), requires_grad=rg),),
                      name="0-d both")
    yield SampleInput(make((0, 3)), args=(make((2, 2)),), name="empty")


# ---- cross, linalg_cross ----------------------------------------------------------------

def sample_cross(op, make, dtype, rg):
    yield SampleInput(make((4, 3), requires_grad=rg), args=(make((4, 3), requires_grad=rg),),
                      name="dim left out")
    yield SampleInput(make((3, 3), requires_grad=rg), args=(make((3, 3), requires_grad=rg),),
                      name="dim left out, first of two")
    yield SampleInput(make((3, 4), requires_grad=rg), args=(make((3, 4), requires_grad=rg), 0))
    yield SampleInput(make((4, 1, 3), noncontiguous=True, requires_grad=rg),
                      args=(make((1, 2, 3), requires_grad=rg),), kwargs={"dim": -1},
                      name="strided, broadcast")
    yield SampleInput(make((3, 4), requires_grad=rg).t(),
                      args=(make((4, 3), requires_grad=rg), 1), name="transposed")
    yield SampleInput(make((0, 3)), args=(make((0, 3)), 1), name="empty")


def errors_cross(op, make):
    yield ErrorInput(SampleInput(make((4, 2)), args=(make((4, 2)),)), RuntimeError,
                     "no dimension of size 3 in input")
    yield ErrorInput(SampleInput(make((3,)), args=(make((4, 3)), 0)), RuntimeError,
                     "linalg.cross: inputs must have the same number of dimensions.")
    yield ErrorInput(SampleInput(make((3, 1, 4)), args=(make((1, 5, 4)),)), RuntimeError,
                     r"linalg.cross: inputs dimension 0 must have length 3. Got 3 and 1")
    x = make((3, 3))
    yield ErrorInput(SampleInput(x, args=(x, 2)), IndexError, "Dimension out of range")


def sample_linalg_cross(op, make, dtype, rg):
    yield SampleInput(make((4, 3), requires_grad=rg), args=(make((4, 3), requires_grad=rg),))
    yield SampleInput(make((3, 4), requires_grad=rg), args=(make((3, 4), requires_grad=rg),),
                      kwargs={"dim": 0})
    yield SampleInput(make((2, 1, 3), noncontiguous=True, requires_grad=rg),
                      args=(make((1, 4, 3), requires_grad=rg),), name="strided, broadcast")
    yield SampleInput(make((0, 3)), args=(make((0, 3)),), name="empty")


def errors_linalg_cross(op, make):
    x = make((4, 3))
    yield ErrorInput(SampleInput(x, args=(x,), kwargs={"dim": 0}), RuntimeError,
                     r"linalg.cross: inputs dimension 0 must have length 3. Got 4 and 4")
    other = "float64" if make.dtype != "float64" else "float32"
    yield ErrorInput(SampleInput(x, args=(make((4, 3), dtype_override=other),)), RuntimeError,
                     "expected scalar type .* but found")
    h = opd.ones(3, dtype=opd.float16)
    yield ErrorInput(SampleInput(h, args=(h,)), RuntimeError,
                     "\"cross\" not implemented for 'Half'")


def _linalg_cross(lib, *args, **kwargs):
    fn = lib.linalg.cross
    return fn(*args, **kwargs)


def _where_tensors(op, make, dtype, rg):
    """where's samples whose self and other are tensors (where.self_out's; a number goes to
    where.ScalarOther, which has no out= form)."""
    for s in sample_where(op, make, dtype, rg):
        if all(isinstance(a, opd.Tensor) for a in s.args):
            yield s


XLOGY_TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}

OP_DB = [
    OpInfo("masked_scatter", inplace="masked_scatter_", supports_out=False, dtypes=ALL,
           sample_inputs=sample_masked_scatter, error_inputs=errors_masked_scatter),
    OpInfo("index_copy", inplace="index_copy_", dtypes=ALL, sample_inputs=sample_index_copy,
           error_inputs=errors_index_copy),
    OpInfo("xlogy", inplace="xlogy_", dtypes=D.all_and_bool, sample_inputs=sample_xlogy,
           compare_strides=True, error_inputs=errors_xlogy, tol=XLOGY_TOL),
    OpInfo("xlogy.Scalar_Self", op=_xlogy_scalar_self, method=False, dtypes=D.all_and_bool,
           sample_inputs=sample_xlogy_scalar_self, tol=XLOGY_TOL),
    OpInfo("xlogy.Scalar_Other", op=_xlogy_scalar_other, method="xlogy", inplace="xlogy_",
           dtypes=D.all_and_bool, sample_inputs=sample_xlogy_scalar_other, tol=XLOGY_TOL),
    OpInfo("kthvalue", op=_kthvalue, dtypes=("float32", "float64", "bfloat16") + D.integral,
           sample_inputs=sample_kthvalue, error_inputs=errors_kthvalue,
           layouts=("contiguous", "transposed", "strided", "offset")),
    OpInfo("kron", dtypes=ALL, sample_inputs=sample_kron),
    OpInfo("cross", dtypes=("float32", "float64", "bfloat16") + D.integral + D.complex,
           sample_inputs=sample_cross, error_inputs=errors_cross),
    OpInfo("linalg_cross", op=_linalg_cross, method=False,
           dtypes=("float32", "float64", "bfloat16") + D.integral + D.complex,
           sample_inputs=sample_linalg_cross, error_inputs=errors_linalg_cross),
    OpInfo("maximum.out", method=False, dtypes=D.all_and_bool, supports_autograd=False,
           sample_inputs=_binary(number=None), compare_strides=True),
    OpInfo("minimum.out", method=False, dtypes=D.all_and_bool, supports_autograd=False,
           sample_inputs=_binary(number=None), compare_strides=True),
    OpInfo("where.self_out", method=False, dtypes=EVERY, supports_autograd=False,
           sample_inputs=_where_tensors),
]
