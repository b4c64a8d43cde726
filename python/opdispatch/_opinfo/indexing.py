"""Table entries for advanced indexing (issue #31): index.Tensor, index_put(_), nonzero and
masked_select. Python's x[...] rules are tests/python/test_indexing.py's."""

from .core import ErrorInput, OpInfo, SampleInput, aten_op, dtypes as D

ALL = D.all_and_bool + D.complex



def _long(values):
    import opdispatch
    return opdispatch.tensor(values, dtype=opdispatch.int64)


def _bool(values):
    import opdispatch
    return opdispatch.tensor(values, dtype=opdispatch.bool)


def sample_index(op, make, dtype, rg):
    yield SampleInput(make((5,), requires_grad=rg), args=([_long([0, 4, -1, 2, 2])],))
    yield SampleInput(make((3, 4), requires_grad=rg), args=([_long([2, 0])],))
    yield SampleInput(make((3, 4), requires_grad=rg, noncontiguous=True),
                      args=([None, _long([[3, 0], [1, 1]])],), name="None then 2-d index")
    yield SampleInput(make((2, 3, 4), requires_grad=rg),
                      args=([_long([0, 1]), None, _long([3, 2])],), name="separated")
    yield SampleInput(make((2, 3, 4), requires_grad=rg),
                      args=([None, _long([0, 2]), _long([[3], [1]])],), name="adjacent broadcast")
    yield SampleInput(make((3, 4), requires_grad=rg),
                      args=([_bool([True, False, True])],), name="mask")
    yield SampleInput(make((2, 3), requires_grad=rg),
                      args=([_bool([[True, False, True], [False, False, True]])],), name="2-d mask")
    yield SampleInput(make((3, 0), requires_grad=rg), args=([_long([1])],), name="empty")
    yield SampleInput(make((3,), requires_grad=rg), args=([_long([])],), name="empty index")


def errors_index(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=([_long([5])],)), IndexError,
                     "index 5 is out of bounds for dimension 0 with size 3", on_meta=False)
    yield ErrorInput(SampleInput(make((4,)), args=([_bool([True, False, True])],)), IndexError,
                     r"The shape of the mask \[3\] at index 0 does not match the shape of the "
                     r"indexed tensor \[4\] at index 0", on_meta=False)
    yield ErrorInput(SampleInput(make((3, 4)), args=([_long([0, 1]), _long([0, 1, 2])],)),
                     IndexError, r"shape mismatch: indexing tensors could not be broadcast "
                     r"together with shapes \[2\], \[3\]")


def sample_index_put(op, make, dtype, rg):
    yield SampleInput(make((5,), requires_grad=rg),
                      args=([_long([0, 3])], make((2,), requires_grad=rg)))
    yield SampleInput(make((5,), requires_grad=rg),
                      args=([_long([0, 3, 0])], make((3,), requires_grad=rg), True),
                      name="accumulate repeated")
    yield SampleInput(make((3, 4), requires_grad=rg, noncontiguous=True),
                      args=([None, _long([1, 2])], make((1,), requires_grad=rg)),
                      name="broadcast value")
    yield SampleInput(make((3, 4), requires_grad=rg),
                      args=([_bool([True, False, True])], make((4,), requires_grad=rg)),
                      name="mask")


def errors_index_put(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=([_long([0])], make((2,)))), RuntimeError,
                     r"shape mismatch: value tensor of shape \[2\] cannot be broadcast to "
                     r"indexing result of shape \[1\]")


def sample_nonzero(op, make, dtype, rg):
    yield SampleInput(make((3, 4), low=-1, high=2))
    yield SampleInput(make((3, 4), low=-1, high=2, noncontiguous=True))
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)))


def sample_masked_select(op, make, dtype, rg):
    yield SampleInput(make((3, 4), requires_grad=rg),
                      args=(_bool([[True, False, True, True]] * 3),))
    yield SampleInput(make((3, 4), requires_grad=rg, noncontiguous=True),
                      args=(_bool([True, False, False, True]),), name="broadcast mask")
    yield SampleInput(make((4,), requires_grad=rg),
                      args=(_bool([[True, False, True, True], [False] * 4]),),
                      name="broadcast self")


OP_DB = [
    OpInfo("index.Tensor", op=aten_op("index", "Tensor"), method=False, supports_out=False,
           dtypes=ALL, sample_inputs=sample_index, error_inputs=errors_index,
           skips={"meta": "a mask needs nonzero, which Meta cannot answer (as torch's)"}),
    OpInfo("index_put", op=aten_op("index_put", "default"), method=False, inplace=None,
           supports_out=False, dtypes=ALL, sample_inputs=sample_index_put,
           error_inputs=errors_index_put,
           skips={"meta": "a mask needs nonzero, which Meta cannot answer (as torch's)"}),
    OpInfo("nonzero", supports_out=False, dtypes=ALL, sample_inputs=sample_nonzero,
           supports_autograd=False, supports_meta=False),
    OpInfo("masked_select", supports_out=False, dtypes=ALL,
           sample_inputs=sample_masked_select, supports_meta=False,
           skips={"differential": "torch 1.13's masked_select backward (masked_scatter_ into "
                                  "zeros_like(self)) places the gradient in memory order for a "
                                  "non-contiguous self; ours follows the mathematics"}),
]
