"""gather, scatter (src, value, reduce, value_reduce), scatter_add, scatter_reduce,
index_select, index_add, index_fill, masked_fill and take_along_dim (helper "scatter", issue 31).

Index tensors are drawn in range; a scatter that assigns (scatter.src/.value) gets indices
without repeats along `dim` (each line a sample of distinct positions), since which of two
values written to one element wins is not part of torch's contract, and a gradient through an
overwritten value is not defined. Reductions take repeats."""

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D

import opdispatch as opd

ALL = D.all_and_complex_and_bool


def _index(make, shape, high):
    """int64 indices in [0, high), repeats allowed."""
    return make(shape, low=0, high=high, dtype_override="int64")


def _distinct_index(make, shape, dim, high):
    """int64 indices of `shape`, distinct along `dim`, each in [0, high)."""
    shape = list(shape)
    dim = dim % len(shape)
    values = [0] * _prod(shape)
    strides = [_prod(shape[d + 1:]) for d in range(len(shape))]
    for start in range(len(values)):
        if (start // strides[dim]) % shape[dim]:
            continue  # not the first element of its line along dim
        line = make.rng.sample(range(high), shape[dim])
        for j, v in enumerate(line):
            values[start + j * strides[dim]] = v
    return opd.tensor(values, dtype=opd.int64).reshape(shape)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---- gather ----------------------------------------------------------------------------

def sample_gather(op, make, dtype, rg):
    yield SampleInput(make((4, 5), requires_grad=rg), args=(1, _index(make, (4, 3), 5)))
    yield SampleInput(make((4, 5), requires_grad=rg), args=(0, _index(make, (6, 5), 4)),
                      name="dim 0, longer index")
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      args=(-1, _index(make, (2, 7), 5)), name="strided, smaller index")
    yield SampleInput(make((3, 4), requires_grad=rg).t(), args=(0, _index(make, (4, 2), 4).t().t()),
                      name="transposed")
    yield SampleInput(make((), requires_grad=rg), args=(0, opd.tensor(0)), name="0-d")
    yield SampleInput(make((3,)), args=(0, _index(make, (0,), 3)), name="empty index")
    yield SampleInput(make((2, 3, 4), requires_grad=rg), args=(1, _index(make, (2, 5, 4), 3)),
                      kwargs={"sparse_grad": False}, name="3-d")


def errors_gather(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([[0]], dtype=opd.int32))),
                     RuntimeError, r"gather\(\): Expected dtype int64 for index")
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([0]))), RuntimeError,
                     "Index tensor must have the same number of dimensions as input tensor")
    yield ErrorInput(SampleInput(x, args=(1, opd.zeros(3, 1, dtype=opd.int64))), RuntimeError,
                     r"Size does not match at dimension 0 expected index \[3, 1\] to be "
                     r"smaller than self \[2, 3\] apart from dimension 1")
    yield ErrorInput(SampleInput(x, args=(2, opd.zeros(2, 1, dtype=opd.int64))), IndexError,
                     r"Dimension out of range")
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([[5]]))), RuntimeError,
                     "index 5 is out of bounds for dimension 1 with size 3", on_meta=False)
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([[-1]]))), RuntimeError,
                     "index -1 is out of bounds for dimension 1 with size 3", on_meta=False)


# ---- scatter ---------------------------------------------------------------------------

def _scatter_cases(make, rg, src):
    """(self, dim, index, src-or-None, name) with distinct indices along dim."""
    # A src larger than the index has no gradient of its shape (torch's formula gathers grad
    # to the index's shape and its engine refuses it), so only same-shaped src requires grad.
    yield make((4, 5), requires_grad=rg), 1, _distinct_index(make, (4, 3), 1, 5), \
        src(make, (4, 3), rg), "2-d"
    yield make((4, 5), requires_grad=rg), 0, _distinct_index(make, (3, 5), 0, 4), \
        src(make, (3, 6), False), "dim 0, larger src"
    yield make((4, 5), noncontiguous=True, requires_grad=rg), -1, \
        _distinct_index(make, (2, 2), 1, 5), src(make, (2, 2), rg), "strided self"
    yield make((), requires_grad=rg), 0, opd.tensor(0), src(make, (), rg), "0-d"
    yield make((3,), requires_grad=rg), 0, _index(make, (0,), 3), src(make, (0,), rg), \
        "empty index"


def _tensor_src(make, shape, rg):
    return make(shape, requires_grad=rg)


def sample_scatter_src(op, make, dtype, rg):
    for x, d, i, s, name in _scatter_cases(make, rg, _tensor_src):
        yield SampleInput(x, args=(d, i, s), name=name)


def sample_scatter_value(op, make, dtype, rg):
    value = True if dtype == "bool" else 2 if dtype not in D.floating + D.complex else -1.5
    for x, d, i, _, name in _scatter_cases(make, rg, lambda m, s, r: None):
        yield SampleInput(x, args=(d, i, value), name=name)


def sample_scatter_reduce(op, make, dtype, rg):
    for reduce in ("add", "multiply"):
        yield SampleInput(make((4, 5)), args=(1, _index(make, (4, 6), 5), make((4, 6))),
                          kwargs={"reduce": reduce}, name=reduce)
        yield SampleInput(make((4, 5), noncontiguous=True), args=(0, _index(make, (5, 2), 4),
                          make((6, 3))), kwargs={"reduce": reduce}, name=f"{reduce}, dim 0")


def sample_scatter_value_reduce(op, make, dtype, rg):
    value = True if dtype == "bool" else 2
    for reduce in ("add", "multiply"):
        yield SampleInput(make((4, 5)), args=(1, _index(make, (4, 6), 5), value),
                          kwargs={"reduce": reduce}, name=reduce)


def errors_scatter(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([[5]]), make((1, 1)))), RuntimeError,
                     "index 5 is out of bounds for dimension 1 with size 3", on_meta=False)
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([[0]]),
                                          make((1, 1), dtype_override="float64"))),
                     RuntimeError, r"scatter\(\): Expected self.dtype to be equal to src.dtype")
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([[0]], dtype=opd.int32), make((1, 1)))),
                     RuntimeError, r"scatter\(\): Expected dtype int64 for index")
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([0]), make((1,)))), RuntimeError,
                     "Index tensor must have the same number of dimensions as self tensor")
    yield ErrorInput(SampleInput(x, args=(1, opd.zeros(3, 1, dtype=opd.int64), make((3, 1)))),
                     RuntimeError, r"Expected index \[3, 1\] to be smaller than self \[2, 3\] "
                     r"apart from dimension 1 and to be smaller size than src \[3, 1\]")


def errors_scatter_value(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(1, opd.zeros(3, 1, dtype=opd.int64), 1)),
                     RuntimeError, r"Expected index \[3, 1\] to be smaller than self \[2, 3\] "
                     r"apart from dimension 1$")


def errors_scatter_reduce(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(1, opd.zeros(2, 1, dtype=opd.int64), make((2, 1))),
                                 kwargs={"reduce": "foo"}),
                     RuntimeError, "reduce argument must be either add or multiply.")


# ---- scatter_add, scatter_reduce -------------------------------------------------------

def sample_scatter_add(op, make, dtype, rg):
    yield SampleInput(make((4, 5), requires_grad=rg),
                      args=(1, _index(make, (4, 6), 5), make((4, 6), requires_grad=rg)))
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      args=(0, _index(make, (5, 2), 4), make((6, 3))),
                      name="dim 0, strided, larger src")
    yield SampleInput(make((), requires_grad=rg), args=(0, opd.tensor(0),
                                                         make((), requires_grad=rg)), name="0-d")


def sample_scatter_reduce_two(op, make, dtype, rg):
    # As for scatter: only a src of the index's shape requires grad.
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            yield SampleInput(make((4, 5), requires_grad=rg),
                              args=(1, _index(make, (4, 6), 5), make((4, 6), requires_grad=rg),
                                    reduce),
                              kwargs={"include_self": include_self},
                              name=f"{reduce}, include_self={include_self}")
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      args=(0, _index(make, (5, 2), 4), make((6, 3)), "mean"), name="dim 0")
    for reduce in ("prod", "amax"):
        yield SampleInput(make((3, 4), noncontiguous=True, requires_grad=rg),
                          args=(0, _index(make, (5, 4), 3), make((5, 4), requires_grad=rg),
                                reduce),
                          kwargs={"include_self": False}, name=f"{reduce}, dim 0, strided")
    yield SampleInput(make((), requires_grad=rg), args=(0, opd.tensor(0),
                                                         make((), requires_grad=rg), "prod"),
                      name="0-d")


def errors_scatter_reduce_two(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(1, opd.zeros(2, 1, dtype=opd.int64), make((2, 1)),
                                          "foo")),
                     RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin.")


# ---- index_select, index_add -----------------------------------------------------------

def sample_index_select(op, make, dtype, rg):
    yield SampleInput(make((4, 5), requires_grad=rg), args=(0, _index(make, (6,), 4)))
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      args=(1, _index(make, (3,), 5).to(opd.int32)), name="strided, int32")
    yield SampleInput(make((2, 3, 4), requires_grad=rg), args=(-1, _index(make, (5,), 4)),
                      name="3-d, last dim")
    yield SampleInput(make((2, 3), requires_grad=rg), args=(1, opd.tensor(2)), name="0-d index")
    yield SampleInput(make((), requires_grad=rg), args=(0, opd.tensor([0])), name="0-d self")
    yield SampleInput(make((4, 5)), args=(0, _index(make, (0,), 4)), name="empty index")


def errors_index_select(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([5]))), IndexError,
                     "index out of range in self", on_meta=False)
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([-1]))), IndexError,
                     "index out of range in self", on_meta=False)
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([[0]]))), IndexError,
                     r"index_select\(\): Index is supposed to be a vector")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0.0]))), RuntimeError,
                     r"index_select\(\): Expected dtype int32 or int64 for index")


def sample_index_add(op, make, dtype, rg):
    alpha = True if dtype == "bool" else 2
    yield SampleInput(make((4, 5), requires_grad=rg),
                      args=(0, _index(make, (6,), 4), make((6, 5), requires_grad=rg)))
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      args=(1, _index(make, (3,), 5).to(opd.int32), make((4, 3), requires_grad=rg)),
                      kwargs={"alpha": alpha}, name="strided, int32, alpha")
    yield SampleInput(make((), requires_grad=rg), args=(0, opd.tensor([0]),
                                                         make((), requires_grad=rg)), name="0-d")


def errors_index_add(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([5]), make((1, 3)))), IndexError,
                     "index out of range in self", on_meta=False)
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0]),
                                          make((1, 3), dtype_override="float64"))),
                     RuntimeError, r"index_add_\(\): self \(.*\) and source \(Double\) must have "
                     r"the same scalar type")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0, 1]), make((1, 3)))), RuntimeError,
                     r"index_add_\(\): Number of indices \(2\) should be equal to "
                     r"source.size\(dim\): \(1\), for dim: 0")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([[0]]), make((1, 3)))), IndexError,
                     r"index_add_\(\): Index is supposed to be a vector, but got dim: 2 with "
                     r"type: Long and size: \[1, 1\]")
    yield ErrorInput(SampleInput(x, args=(0, opd.tensor([0.0]), make((1, 3)))), RuntimeError,
                     r"index_add_\(\): Expected dtype int32/int64 for index but got: Float")


def sample_index_fill(op, make, dtype, rg):
    value = True if dtype == "bool" else 3 if dtype not in D.floating + D.complex else -2.5
    yield SampleInput(make((4, 5), requires_grad=rg), args=(0, opd.tensor([0, 2]), value))
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      args=(1, opd.tensor([-1, 1, 1]), value), name="strided, negative, repeated")
    yield SampleInput(make((4, 3), requires_grad=rg).t(), args=(1, opd.tensor(3), value),
                      name="transposed, 0-d index")
    yield SampleInput(make((), requires_grad=rg), args=(0, opd.tensor([0]), value), name="0-d")


def errors_index_fill(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([3]), 1)), IndexError,
                     "index 3 is out of bounds for dimension 1 with size 3", on_meta=False)
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([0], dtype=opd.int32), 1)), IndexError,
                     r"index_fill_\(\): Expected dtype int64 for index.")
    yield ErrorInput(SampleInput(x, args=(1, opd.tensor([[0]]), 1)), RuntimeError,
                     "Index has to be a vector/scalar")


# ---- masked_fill, take_along_dim -------------------------------------------------------

def _mask(make, shape):
    return make(shape, dtype_override="bool")


def sample_masked_fill_scalar(op, make, dtype, rg):
    value = True if dtype == "bool" else 3 if dtype not in D.floating + D.complex else -2.5
    yield SampleInput(make((3, 4), requires_grad=rg), args=(_mask(make, (3, 4)), value))
    yield SampleInput(make((3, 4), noncontiguous=True, requires_grad=rg),
                      args=(_mask(make, (4,)), value), name="strided, broadcast mask")
    yield SampleInput(make((4, 3), requires_grad=rg).t(), args=(_mask(make, (3, 1)), value),
                      name="transposed, column mask")
    yield SampleInput(make((), requires_grad=rg), args=(_mask(make, ()), value), name="0-d")
    yield SampleInput(make((0, 3)), args=(_mask(make, (0, 3)), value), name="empty")


def sample_masked_fill_tensor(op, make, dtype, rg):
    for s in sample_masked_fill_scalar(op, make, dtype, rg):
        yield SampleInput(s.input, args=(s.args[0], make((), requires_grad=rg)), name=s.name)


def errors_masked_fill(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(_mask(make, (2, 3)), make((1,)))), RuntimeError,
                     r"masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                     r"with 1 dimension\(s\).")
    yield ErrorInput(SampleInput(x, args=(_mask(make, (4, 3)), make(()))), RuntimeError,
                     "The size of tensor a")


def sample_take_along_dim(op, make, dtype, rg):
    yield SampleInput(make((4, 5), requires_grad=rg), args=(_index(make, (4, 3), 5), 1))
    yield SampleInput(make((4, 5), requires_grad=rg), args=(_index(make, (1, 5), 4), 0),
                      name="broadcast indices")
    yield SampleInput(make((1, 4), requires_grad=rg), args=(_index(make, (3, 2), 4), -1),
                      name="broadcast self")
    yield SampleInput(make((4, 5), requires_grad=rg), args=(_index(make, (7,), 20),),
                      name="flattened")


def errors_take_along_dim(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(make((2, 1), dtype_override="float32"), 1)),
                     RuntimeError, r"torch.take_along_dim\(\): dtype of indices should be Long "
                     "but got Float")
    yield ErrorInput(SampleInput(x, args=(opd.zeros(1, dtype=opd.int64), 1)), RuntimeError,
                     r"torch.take_along_dim\(\): input and indices should have the same number "
                     r"of dimensions, but got 2 dimensions for input, and 1 dimensions for "
                     r"indices")


def _scatter(lib, *args, **kwargs):
    return lib.scatter(*args, **kwargs)


OP_DB = [
    OpInfo("gather", dtypes=ALL, sample_inputs=sample_gather, error_inputs=errors_gather),
    OpInfo("scatter.src", op=_scatter, inplace="scatter_", dtypes=ALL,
           sample_inputs=sample_scatter_src, error_inputs=errors_scatter),
    OpInfo("scatter.value", op=_scatter, inplace="scatter_", dtypes=ALL,
           sample_inputs=sample_scatter_value, error_inputs=errors_scatter_value),
    OpInfo("scatter.reduce", op=_scatter, inplace="scatter_", dtypes=D.all_and_bool,
           sample_inputs=sample_scatter_reduce, error_inputs=errors_scatter_reduce,
           supports_autograd=False),
    OpInfo("scatter.value_reduce", op=_scatter, inplace="scatter_", dtypes=D.all_and_bool,
           sample_inputs=sample_scatter_value_reduce, supports_autograd=False),
    OpInfo("scatter_add", inplace="scatter_add_", dtypes=ALL, sample_inputs=sample_scatter_add,
           tol={"float16": (1e-2, 1e-2), "bfloat16": (1e-1, 2e-2)}),
    OpInfo("scatter_reduce.two", inplace="scatter_reduce_", dtypes=D.all,
           sample_inputs=sample_scatter_reduce_two, error_inputs=errors_scatter_reduce_two,
           supports_gradgrad=True,
           tol={"float16": (1e-2, 1e-2), "bfloat16": (1e-1, 2e-2)}),
    OpInfo("index_select", dtypes=ALL, sample_inputs=sample_index_select,
           error_inputs=errors_index_select),
    OpInfo("index_add", inplace="index_add_", dtypes=D.all_and_bool + D.complex,
           sample_inputs=sample_index_add, error_inputs=errors_index_add,
           tol={"float16": (1e-2, 1e-2), "bfloat16": (1e-1, 2e-2)}),
    OpInfo("index_fill.int_Scalar", inplace="index_fill_", supports_out=False, dtypes=ALL,
           sample_inputs=sample_index_fill, error_inputs=errors_index_fill),
    OpInfo("masked_fill.Scalar", inplace="masked_fill_", supports_out=False, dtypes=ALL,
           sample_inputs=sample_masked_fill_scalar, error_inputs=errors_masked_fill),
    OpInfo("masked_fill.Tensor", inplace="masked_fill_", supports_out=False, dtypes=ALL,
           sample_inputs=sample_masked_fill_tensor),
    OpInfo("take_along_dim", supports_out=False, dtypes=ALL,
           sample_inputs=sample_take_along_dim, error_inputs=errors_take_along_dim),
]
