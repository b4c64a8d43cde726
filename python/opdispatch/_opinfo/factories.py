"""Table entries for the factories of helper "python": linspace, logspace, eye, tril_indices,
triu_indices, the new_* methods, which take self's dtype and device, and the random factories
randint, randperm, randint_like, rand_like and randn_like (dtype and shape only: another
generator than torch's)."""

from .core import ErrorInput, OpInfo, SampleInput, method_op, dtypes as D

NOT_BOOL = D.all + D.complex


def sample_linspace(op, make, dtype, rg):
    for start, end, steps in [(-1, 1, 7), (0, 10, 4), (10, 0, 5), (3, 3, 1), (0, 1, 0),
                              (0.5, 2.5, 9)]:
        yield SampleInput(start, args=(end, steps), kwargs={"dtype": dtype},
                          name=f"{start}..{end}/{steps}")


def errors_linspace(op, make):
    yield ErrorInput(SampleInput(0, args=(1, -1)), RuntimeError,
                     r"number of steps must be non-negative")
    yield ErrorInput(SampleInput(0, args=(1, 5), kwargs={"dtype": "bool"}), RuntimeError,
                     r"\"linspace_cpu\" not implemented for 'Bool'")


def sample_logspace(op, make, dtype, rg):
    for start, end, steps, base in [(0, 3, 4, 10.0), (-1, 2, 4, 3.0), (1, 1, 1, 10.0),
                                    (0, 1, 0, 10.0), (0, 2, 5, 2.0)]:
        yield SampleInput(start, args=(end, steps, base), kwargs={"dtype": dtype},
                          name=f"{base}**({start}..{end}/{steps})")


def sample_eye(op, make, dtype, rg):
    yield SampleInput(3, kwargs={"dtype": dtype}, name="square")
    yield SampleInput(2, args=(4,), kwargs={"dtype": dtype}, name="wide")
    yield SampleInput(4, args=(1,), kwargs={"dtype": dtype}, name="tall")
    yield SampleInput(0, kwargs={"dtype": dtype}, name="empty")


def errors_eye(op, make):
    yield ErrorInput(SampleInput(-1), RuntimeError, r"n must be greater or equal to 0, got -1")
    yield ErrorInput(SampleInput(2, args=(-1,)), RuntimeError,
                     r"m must be greater or equal to 0, got -1")


def sample_trilu_indices(op, make, dtype, rg):
    for row, col, offset in [(4, 3, 1), (4, 3, -1), (3, 3, 0), (3, 5, 2), (0, 3, 0), (5, 0, 0),
                             (3, 4, -5), (3, 4, 10)]:
        yield SampleInput(row, args=(col, offset), kwargs={"dtype": dtype},
                          name=f"{row}x{col}{offset:+d}")


def errors_trilu_indices(op, make):
    name = op.function_name
    yield ErrorInput(SampleInput(-1, args=(2,)), RuntimeError, r"row must be non-negative, got-1")
    yield ErrorInput(SampleInput(2, args=(2,), kwargs={"dtype": "float32"}), RuntimeError,
                     rf"\"{name}\" not implemented for 'Float'")


def sample_new(op, make, dtype, rg):
    yield SampleInput(make((2, 3)), args=((4, 2),), name="sizes")
    yield SampleInput(make(()), args=([0, 3],), name="empty")
    yield SampleInput(make((2,)), args=((3,),), kwargs={"dtype": "float64"}, name="dtype")


def sample_new_full(op, make, dtype, rg):
    yield SampleInput(make((2, 3)), args=((4, 2), 3), name="int fill")
    yield SampleInput(make((2,)), args=((3,), 1.5), kwargs={"dtype": "float64"}, name="dtype")



def _new_empty(lib, self, *args, **kwargs):
    """new_empty's values are not defined: zeroed, to compare dtype, shape and device."""
    return self.new_empty(*args, **kwargs).zero_()


def sample_randint(op, make, dtype, rg):
    yield SampleInput(10, args=((3, 4),), kwargs={"dtype": dtype}, name="high")
    yield SampleInput(2, args=(9, (0, 2)), kwargs={"dtype": dtype}, name="low, empty")


def errors_randint(op, make):
    yield ErrorInput(SampleInput(5, args=(5, (2,))), RuntimeError,
                     r"random_ expects 'from' to be less than 'to', but got from=5 >= to=5")


def sample_randperm(op, make, dtype, rg):
    yield SampleInput(7, kwargs={"dtype": dtype})
    yield SampleInput(0, kwargs={"dtype": dtype}, name="empty")


def sample_like(op, make, dtype, rg):
    yield SampleInput(make((2, 3)))
    yield SampleInput(make((3, 2), noncontiguous=True), kwargs={"dtype": "float64"},
                      name="dtype")


def sample_randint_like(op, make, dtype, rg):
    yield SampleInput(make((2, 3)), args=(7,), name="high")
    yield SampleInput(make((2, 3)), args=(2, 7), name="low")


OP_DB = [
    OpInfo("linspace", method=False, dtypes=NOT_BOOL, sample_inputs=sample_linspace,
           error_inputs=errors_linspace, is_factory=True, supports_out=False,
           supports_autograd=False,
           # PyTorch's vectorised loop rounds the middle elements differently (arange of a base).
           tol={"float32": (1e-6, 1e-5), "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2)}),
    OpInfo("logspace", method=False, dtypes=("float32", "float64", "bfloat16") + D.integral,
           sample_inputs=sample_logspace, is_factory=True, supports_out=False,
           supports_autograd=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("eye", method=False, dtypes=("float32", "float64", "float16", "bool") + D.integral
           + D.complex, sample_inputs=sample_eye,
           error_inputs=errors_eye, is_factory=True, supports_out=False,
           supports_autograd=False),
    OpInfo("tril_indices", method=False, dtypes=("int64", "int32"),
           sample_inputs=sample_trilu_indices, error_inputs=errors_trilu_indices,
           is_factory=True, supports_out=False, supports_autograd=False),
    OpInfo("triu_indices", method=False, dtypes=("int64", "int32"),
           sample_inputs=sample_trilu_indices, error_inputs=errors_trilu_indices,
           is_factory=True, supports_out=False, supports_autograd=False),
    OpInfo("new_zeros", op=method_op("new_zeros"), method=False, dtypes=D.all_and_bool,
           sample_inputs=sample_new, supports_out=False, supports_autograd=False),
    OpInfo("new_ones", op=method_op("new_ones"), method=False, dtypes=D.all_and_bool,
           sample_inputs=sample_new, supports_out=False, supports_autograd=False),
    OpInfo("new_empty", op=_new_empty, method=False, dtypes=D.all_and_bool,
           sample_inputs=sample_new, supports_out=False, supports_autograd=False),
    OpInfo("new_full", op=method_op("new_full"), method=False, dtypes=D.all,
           sample_inputs=sample_new_full, supports_out=False, supports_autograd=False),
    OpInfo("randint", method=False, dtypes=D.all, sample_inputs=sample_randint,
           error_inputs=errors_randint, is_factory=True, nondeterministic=True,
           supports_out=False, supports_autograd=False),
    OpInfo("randperm", method=False, dtypes=D.all, sample_inputs=sample_randperm,
           is_factory=True, nondeterministic=True, supports_out=False, supports_autograd=False),
    OpInfo("randint_like", method=False, dtypes=D.all, sample_inputs=sample_randint_like,
           nondeterministic=True, supports_out=False, supports_autograd=False),
    OpInfo("rand_like", method=False, dtypes=("float32", "float64", "float16", "bfloat16"),
           sample_inputs=sample_like, nondeterministic=True, supports_out=False,
           supports_autograd=False),
    OpInfo("randn_like", method=False, dtypes=("float32", "float64", "float16", "bfloat16"),
           sample_inputs=sample_like, nondeterministic=True, supports_out=False,
           supports_autograd=False),
]
