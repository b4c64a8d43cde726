"""Table entries for the shape operators of issue #31: stacking, splitting, moving and
unflattening dimensions, diagonal, repeat, flip, roll, rot90, tril/triu and the *_scatter
operators. Their views share storage (tests/python/test_indexing.py checks that)."""

from .core import ErrorInput, OpInfo, SampleInput, aten_op, method_op, dtypes as D

ALL = D.all_and_bool + D.complex




def _x(make, shape, rg, **kw):
    return make(shape, requires_grad=rg, **kw)


def sample_stack(op, make, dtype, rg):
    yield SampleInput([_x(make, (2, 3), rg), _x(make, (2, 3), rg, noncontiguous=True)])
    yield SampleInput([_x(make, (2, 3), rg), _x(make, (2, 3), rg)], args=(-1,))
    yield SampleInput([_x(make, (), rg), _x(make, (), rg)])
    yield SampleInput([_x(make, (0, 3), rg)], args=(1,))


def sample_hvdstack(op, make, dtype, rg):
    yield SampleInput([_x(make, (2, 3), rg), _x(make, (2, 3), rg, noncontiguous=True)])
    yield SampleInput([_x(make, (3,), rg), _x(make, (3,), rg)])
    yield SampleInput([_x(make, (), rg), _x(make, (), rg)])
    yield SampleInput([_x(make, (2, 3, 2), rg), _x(make, (2, 3, 2), rg)])


def errors_stack(op, make):
    yield ErrorInput(SampleInput([make((2,)), make((3,))]), RuntimeError,
                     r"stack expects each tensor to be equal size, but got \[2\] at entry 0 and "
                     r"\[3\] at entry 1")


def sample_split(op, make, dtype, rg):
    yield SampleInput(_x(make, (5, 4), rg), args=(2,))
    yield SampleInput(_x(make, (5, 4), rg, noncontiguous=True), args=(3, 1))
    yield SampleInput(_x(make, (5, 4), rg), args=([1, 4],))
    yield SampleInput(_x(make, (0, 4), rg), args=(0,))


def errors_split(op, make):
    yield ErrorInput(SampleInput(make((5, 4)), args=([1, 1], 1)), RuntimeError,
                     r"split_with_sizes expects split_sizes to sum exactly to 4")
    yield ErrorInput(SampleInput(make((5, 4)), args=(-1,)), RuntimeError,
                     "split expects split_size be non-negative, but got split_size=-1")


def sample_chunk(op, make, dtype, rg):
    yield SampleInput(_x(make, (5, 4), rg), args=(2,))
    yield SampleInput(_x(make, (5, 4), rg, noncontiguous=True), args=(3, 1))
    yield SampleInput(_x(make, (0, 4), rg), args=(3,))


def sample_unbind(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(1,))
    yield SampleInput(_x(make, (3, 0), rg), args=(-1,))


def sample_tensor_split(op, make, dtype, rg):
    yield SampleInput(_x(make, (7, 4), rg), args=(3,))
    yield SampleInput(_x(make, (5, 4), rg, noncontiguous=True), args=([1, 3], 1))
    yield SampleInput(_x(make, (5,), rg), args=([4, 2],))


def sample_narrow(op, make, dtype, rg):
    yield SampleInput(_x(make, (5, 4), rg), args=(0, 1, 3))
    yield SampleInput(_x(make, (5, 4), rg, noncontiguous=True), args=(-1, -3, 2))
    yield SampleInput(_x(make, (5, 4), rg), args=(1, 4, 0))


def errors_narrow(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(1, 2, 3)), RuntimeError,
                     r"start \(2\) \+ length \(3\) exceeds dimension size \(3\)\.")
    yield ErrorInput(SampleInput(make(()), args=(0, 0, 1)), RuntimeError,
                     r"narrow\(\) cannot be applied to a 0-dim tensor\.")


def sample_movedim(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(0, 2))
    yield SampleInput(_x(make, (2, 3, 4), rg, noncontiguous=True), args=(-1, 0))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=((0, 1), (2, 0)))
    yield SampleInput(_x(make, (), rg), args=(0, 0))


def errors_movedim(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=((0, 0), (0, 1))), RuntimeError,
                     r"movedim: repeated dim in `source` \(\[0, 0\]\)")


def sample_unflatten(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 6), rg), args=(1, (2, 3)))
    yield SampleInput(_x(make, (6, 2), rg, noncontiguous=True), args=(0, (3, -1)))
    yield SampleInput(_x(make, (2, 0), rg), args=(1, (0, 3)))


def sample_swap(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(0, 2))
    yield SampleInput(_x(make, (2, 3), rg, noncontiguous=True), args=(-1, 0))


def sample_squeeze(op, make, dtype, rg):
    yield SampleInput(_x(make, (1, 3, 1, 2), rg))
    yield SampleInput(_x(make, (3, 1), rg, noncontiguous=True))
    yield SampleInput(_x(make, (), rg))
    yield SampleInput(_x(make, (1, 0), rg))


def sample_diagonal(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(1,))
    yield SampleInput(_x(make, (3, 4, 2), rg), args=(-1, 2, 0))
    yield SampleInput(_x(make, (3, 4), rg), args=(5,))


def sample_repeat(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3), rg), args=((2, 1),))
    yield SampleInput(_x(make, (2, 3), rg, noncontiguous=True), args=((1, 2, 2),))
    yield SampleInput(_x(make, (), rg), args=((3,),))
    yield SampleInput(_x(make, (2, 0), rg), args=((2, 2),))


def sample_flip(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=((0,),))
    yield SampleInput(_x(make, (3, 4, 2), rg, noncontiguous=True), args=((0, -1),))
    yield SampleInput(_x(make, (), rg), args=((),))
    yield SampleInput(_x(make, (0, 3), rg), args=((1,),))


def sample_roll(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(1,))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=((1, -6), (0, 1)))
    yield SampleInput(_x(make, (5,), rg), args=(7, 0))


def sample_rot90(op, make, dtype, rg):
    for k in (0, 1, 2, 3, -1):
        yield SampleInput(_x(make, (3, 4), rg), args=(k,))
    yield SampleInput(_x(make, (2, 3, 4), rg, noncontiguous=True), args=(1, (2, 0)))


def sample_tri(op, make, dtype, rg):
    yield SampleInput(_x(make, (4, 4), rg))
    yield SampleInput(_x(make, (3, 5), rg, noncontiguous=True), args=(1,))
    yield SampleInput(_x(make, (2, 3, 4), rg), args=(-1,))
    yield SampleInput(_x(make, (0, 3), rg))


def errors_tri(op, make):
    yield ErrorInput(SampleInput(make((3,))), IndexError, "Dimension out of range")


def sample_select_scatter(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (4,), rg), 0, 1))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(_x(make, (3,), rg), 1, -1))


def sample_slice_scatter(op, make, dtype, rg):
    yield SampleInput(_x(make, (4, 4), rg), args=(_x(make, (2, 4), rg), 0, 2, 4, 1))
    # torch 1.13's binding reads the default step wrongly: the step is always given
    yield SampleInput(_x(make, (3, 5), rg, noncontiguous=True),
                      args=(_x(make, (3, 2), rg), 1, 1, 5, 2))


def sample_diagonal_scatter(op, make, dtype, rg):
    yield SampleInput(_x(make, (3, 4), rg), args=(_x(make, (3,), rg),))
    yield SampleInput(_x(make, (3, 4), rg, noncontiguous=True), args=(_x(make, (3,), rg), 1))


def sample_as(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3), rg), args=(make((6,)),))
    yield SampleInput(_x(make, (2, 3), rg), args=(make((3, 2)),))


def sample_expand_as(op, make, dtype, rg):
    yield SampleInput(_x(make, (1, 3), rg), args=(make((2, 3)),))
    yield SampleInput(_x(make, (3,), rg), args=(make((2, 3)),))


def sample_repeat_interleave(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3), rg), args=(2,))
    yield SampleInput(_x(make, (2, 3), rg, noncontiguous=True), args=(3, 1))
    yield SampleInput(_x(make, (), rg), args=(2,))
    yield SampleInput(_x(make, (2, 3), rg), args=(0, 0))


def sample_diag_embed(op, make, dtype, rg):
    yield SampleInput(_x(make, (2, 3), rg))
    yield SampleInput(_x(make, (2, 3), rg, noncontiguous=True), args=(1,))
    yield SampleInput(_x(make, (3,), rg), args=(-2, 0, 1))
    yield SampleInput(_x(make, (2, 3), rg), args=(0, 2, 0))


_NO_OUT = dict(supports_out=False, dtypes=ALL)

OP_DB = [
    OpInfo("stack", method=False, supports_out=False, dtypes=ALL, sample_inputs=sample_stack,
           error_inputs=errors_stack),
    OpInfo("hstack", method=False, **_NO_OUT, sample_inputs=sample_hvdstack),
    OpInfo("vstack", method=False, **_NO_OUT, sample_inputs=sample_hvdstack),
    OpInfo("dstack", method=False, **_NO_OUT, sample_inputs=sample_hvdstack),
    OpInfo("split", **_NO_OUT, sample_inputs=sample_split, error_inputs=errors_split),
    OpInfo("chunk", **_NO_OUT, sample_inputs=sample_chunk),
    OpInfo("unbind", **_NO_OUT, sample_inputs=sample_unbind),
    OpInfo("tensor_split", **_NO_OUT, sample_inputs=sample_tensor_split),
    OpInfo("narrow", **_NO_OUT, sample_inputs=sample_narrow, error_inputs=errors_narrow),
    OpInfo("movedim", **_NO_OUT, sample_inputs=sample_movedim, error_inputs=errors_movedim),
    OpInfo("moveaxis", **_NO_OUT, sample_inputs=sample_movedim),
    OpInfo("unflatten", **_NO_OUT, sample_inputs=sample_unflatten),
    OpInfo("swapaxes", **_NO_OUT, sample_inputs=sample_swap),
    OpInfo("swapdims", **_NO_OUT, sample_inputs=sample_swap),
    OpInfo("squeeze", **_NO_OUT, sample_inputs=sample_squeeze),
    OpInfo("diagonal", **_NO_OUT, sample_inputs=sample_diagonal),
    OpInfo("repeat", op=method_op("repeat"), method=False, **_NO_OUT, sample_inputs=sample_repeat),
    OpInfo("expand_as", op=method_op("expand_as"), method=False, **_NO_OUT,
           sample_inputs=sample_expand_as),
    OpInfo("view_as", op=method_op("view_as"), method=False, **_NO_OUT, sample_inputs=sample_as),
    OpInfo("reshape_as", op=method_op("reshape_as"), method=False, **_NO_OUT,
           sample_inputs=sample_as),
    OpInfo("alias", op=aten_op("alias", "default"), method=False, **_NO_OUT,
           sample_inputs=sample_squeeze),
    OpInfo("flip", **_NO_OUT, sample_inputs=sample_flip),
    OpInfo("roll", **_NO_OUT, sample_inputs=sample_roll),
    OpInfo("rot90", **_NO_OUT, sample_inputs=sample_rot90),
    OpInfo("tril", inplace="tril_", dtypes=ALL, sample_inputs=sample_tri,
           error_inputs=errors_tri),
    OpInfo("triu", inplace="triu_", dtypes=ALL, sample_inputs=sample_tri,
           error_inputs=errors_tri),
    OpInfo("select_scatter", **_NO_OUT, sample_inputs=sample_select_scatter),
    OpInfo("slice_scatter", **_NO_OUT, sample_inputs=sample_slice_scatter),
    OpInfo("diagonal_scatter", **_NO_OUT, sample_inputs=sample_diagonal_scatter),
    OpInfo("repeat_interleave", **_NO_OUT, sample_inputs=sample_repeat_interleave),
    OpInfo("diag_embed", **_NO_OUT, sample_inputs=sample_diag_embed),
]
