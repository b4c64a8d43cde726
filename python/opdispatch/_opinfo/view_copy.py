"""Table entries for the copying variants of the views (view_copy, transpose_copy, ...: tagged
view_copy, the forms functionalize(remove="mutations_and_views") emits) and as_strided_scatter.
Each copy takes its view's samples and errors (existing.py, shape.py); the reference is torch's
own same-named function. Strides compare too: a copy is laid out as clone() lays out the view
(Note [View copies])."""

from .core import ErrorInput, OpInfo, SampleInput, aten_op, dtypes as D
from . import existing as V
from . import shape as S

ALL = D.all_and_bool + D.complex


def _x(make, shape, rg, **kw):
    return make(shape, requires_grad=rg, **kw)


def sample_view_copy(op, make, dtype, rg):
    yield from V.sample_view(op, make, dtype, rg)
    # Not viewable: copied as reshape copies (torch's view_copy).
    yield SampleInput(_x(make, (4, 3), rg).t(), args=([-1],))


def errors_view_copy(op, make):
    yield ErrorInput(SampleInput(make((3, 4)), args=([5],)), RuntimeError,
                     r"shape '\[5\]' is invalid for input of size 12")


def sample_view_copy_dtype(op, make, dtype, rg):
    yield SampleInput(make((3, 4)), args=(dtype,))
    yield SampleInput(make((3, 4), noncontiguous=True), args=(dtype,))
    yield SampleInput(make((2, 8)), args=("uint8",))    # a smaller element: more of them
    yield SampleInput(make((2, 8)), args=("float32",))  # 8 divides into every element size
    yield SampleInput(make(()), args=(dtype,))


def sample_unary(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg))
    yield SampleInput(_x(make, (4, 3), rg).t())
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True))
    yield SampleInput(_x(make, (), rg))
    yield SampleInput(_x(make, (0, 2), rg))


def sample_as_strided_scatter(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (2, 2), rg), [2, 2], [1, 2]))
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (2, 3), rg), [2, 3], [4, 1], 1))
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (3,), rg), [3], [4]),
                      kwargs={"storage_offset": 2})
    if not rg:  # a self that requires grad must be contiguous (torch's as_strided_scatter)
        yield SampleInput(make((6, 4))[::2], args=(make((2, 2)), [2, 2], [2, 1]))
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (), rg), [], [], 5))
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (0, 2), rg), [0, 2], [1, 1]))


def errors_as_strided_scatter(op, make):
    yield ErrorInput(SampleInput(make((3, 4)), args=(make((3, 3)), [2, 2], [1, 2])),
                     RuntimeError, r"expected src to have a size equal to the slice of self\. "
                     r"src size = \[3, 3\], slice size = \[2, 2\]")


_COPY = dict(method=False, supports_out=False, dtypes=ALL, compare_strides=True)

OP_DB = [
    OpInfo("view_copy", sample_inputs=sample_view_copy, error_inputs=errors_view_copy, **_COPY),
    OpInfo("view_copy.dtype", sample_inputs=sample_view_copy_dtype, supports_autograd=False,
           skips={"differential": "a change of element size depends on the storage offset, "
                                  "which another layout changes"}, **_COPY),
    OpInfo("alias_copy", sample_inputs=sample_unary, **_COPY),
    # No gradient: torch 1.13's result requires grad with no formula behind it (a backward raises
    # 'derivative for aten::detach_copy is not implemented'); ours does not require grad.
    OpInfo("detach_copy", sample_inputs=sample_unary, supports_autograd=False, **_COPY),
    OpInfo("as_strided_copy", sample_inputs=V.sample_as_strided,
           error_inputs=V.errors_as_strided,
           skips={"differential": "reads the storage, which another layout changes"}, **_COPY),
    OpInfo("transpose_copy", sample_inputs=V.sample_transpose,
           error_inputs=V.errors_dim_out_of_range((0, 2)), **_COPY),
    OpInfo("t_copy", sample_inputs=V.sample_t, error_inputs=V.errors_t, **_COPY),
    OpInfo("permute_copy", sample_inputs=V.sample_permute, error_inputs=V.errors_permute,
           **_COPY),
    OpInfo("expand_copy", sample_inputs=V.sample_expand, error_inputs=V.errors_expand, **_COPY),
    OpInfo("squeeze_copy", sample_inputs=S.sample_squeeze, **_COPY),
    OpInfo("squeeze_copy.dim", sample_inputs=V.sample_squeeze,
           error_inputs=V.errors_dim_out_of_range((2,)), **_COPY),
    OpInfo("unsqueeze_copy", sample_inputs=V.sample_unsqueeze, **_COPY),
    # Through torch.ops: torch 1.13's torch.slice_copy reads a garbage step when step is left out.
    OpInfo("slice_copy", op=aten_op("slice_copy", "Tensor"), sample_inputs=V.sample_slice,
           error_inputs=V.errors_slice, **_COPY),
    OpInfo("select_copy", sample_inputs=V.sample_select, error_inputs=V.errors_select, **_COPY),
    OpInfo("diagonal_copy", sample_inputs=S.sample_diagonal, **_COPY),
    OpInfo("as_strided_scatter", method=True, supports_out=False, dtypes=ALL,
           compare_strides=True, sample_inputs=sample_as_strided_scatter,
           error_inputs=errors_as_strided_scatter,
           skips={"differential": "writes positions of the storage, which another layout moves"}),
]
