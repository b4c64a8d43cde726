"""Table entries for the binary elementwise operators (issue 31, helper "binary"): add, sub, mul,
div and its rounding modes, true_divide, floor_divide, remainder, fmod, pow, maximum/minimum,
the comparisons, where, the bitwise, shift and logical operators, atan2, hypot, copysign, lerp,
addcmul and addcdiv, each with its in-place and out= forms where torch 1.13 has them. dtypes are
torch 1.13's CPU dtypes (probed with torch: each operator on a 2x2 tensor of every dtype)."""

import opdispatch

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D

EVERY = D.all_and_bool + D.complex
NUMERIC_COMPLEX = D.all + D.complex
REAL = D.all                                   # remainder, fmod, floor_divide, div modes
BITWISE = D.integral + ("bool",)
NO_HALF = ("float32", "float64", "bfloat16")


def _binary(low=None, high=None, exclude_zero=False, number=2):
    """The layouts of a binary elementwise operator: same shape, broadcast both ways, strided,
    transposed, expanded, 0-d against a tensor, empty, 1027 elements, and a Python number as
    `other` (a wrapped number, which does not promote). Divisors avoid zero when exclude_zero."""
    kw = dict(low=low, high=high)
    ko = dict(low=low, high=high, exclude_zero=exclude_zero)

    def sample(op, make, dtype, rg):
        def pair(a, b, name="", **nc):
            return SampleInput(make(a, requires_grad=rg, **nc, **kw),
                               args=(make(b, requires_grad=rg, **nc, **ko),), name=name)
        yield pair((3, 4), (3, 4))
        yield pair((3, 4), (4,), "broadcast other")
        yield pair((3, 1), (1, 4), "broadcast both")
        yield pair((3, 4), (3, 4), "strided", noncontiguous=True)
        yield SampleInput(make((4, 3), requires_grad=rg, **kw).t(),
                          args=(make((3, 4), requires_grad=rg, **ko),), name="transposed")
        yield pair((), (3, 4), "0-d self")
        yield pair((0, 3), (0, 3))
        yield pair((1027,), (1027,), "vectors and a tail")
        if number is not None and not rg:
            yield SampleInput(make((3, 4), **kw), args=(number,), name="number other")
    return sample


def _errors_for(kernel, dtype, label, args=1):
    """The error of a kernel refusing `dtype`, in torch 1.13's words."""
    def errors(op, make):
        x = opdispatch.ones(3, dtype=getattr(opdispatch, dtype))
        yield ErrorInput(SampleInput(x, args=(x,) * args), RuntimeError,
                         rf'"{kernel}" not implemented for \'{label}\'')
    return errors


def _zero_division(extra=None):
    def errors(op, make):
        a = opdispatch.tensor([5, -3, 7])
        yield ErrorInput(SampleInput(a, args=(opdispatch.tensor([1, 0, 2]),)), RuntimeError,
                         r"^ZeroDivisionError$", on_meta=False)
        if extra:
            yield from extra(op, make)
    return errors


def _rounding_op(mode):
    def op(lib, x, y, **kw):
        return lib.div(x, y, rounding_mode=mode, **kw)
    op.__name__ = f"div_{mode}"
    return op


def errors_rounding_mode(op, make):
    x = opdispatch.ones(3)
    yield ErrorInput(SampleInput(x, args=(x,), kwargs={"rounding_mode": "round"}), RuntimeError,
                     r"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     r"found 'round'")


def sample_pow(op, make, dtype, rg):
    if dtype in D.integral:
        yield SampleInput(make((3, 4), low=0, high=4), args=(make((3, 4), low=0, high=3),))
        yield SampleInput(make((3, 4), low=-3, high=4), args=(2,), name="number exponent")
        return
    yield SampleInput(make((3, 4), low=0.5, high=3, requires_grad=rg),
                      args=(make((3, 4), low=-2, high=2, requires_grad=rg),))
    yield SampleInput(make((4, 3), low=0.5, high=3, requires_grad=rg).t(),
                      args=(make((4,), low=-2, high=2, requires_grad=rg),), name="transposed")
    for e in (2, 3, 0.5, -1, 1.5):
        yield SampleInput(make((3, 4), low=0.5, high=3, requires_grad=rg), args=(e,))


def sample_pow_scalar(op, make, dtype, rg):
    low = 0 if dtype in D.integral else -2
    for base in (2, 3.5, 0.5):
        yield SampleInput(base, args=(make((3, 4), low=low, high=3, requires_grad=rg),))
    yield SampleInput(2, args=(make((4, 3), low=low, high=3, requires_grad=rg).t(),),
                      name="transposed")
    yield SampleInput(2, args=(make((0, 3), requires_grad=rg),), name="empty")


def sample_where(op, make, dtype, rg):
    cond = make((3, 4), dtype_override="bool")
    yield SampleInput(cond, args=(make((3, 4), requires_grad=rg), make((3, 4), requires_grad=rg)))
    yield SampleInput(make((3, 1), dtype_override="bool"),
                      args=(make((1, 4), requires_grad=rg), make((3, 4), requires_grad=rg)))
    yield SampleInput(make((0, 3), dtype_override="bool"),
                      args=(make((0, 3), requires_grad=rg), make((0, 3), requires_grad=rg)))
    if not rg:
        yield SampleInput(cond, args=(make((3, 4)), 0), name="number other")
        yield SampleInput(cond, args=(1, make((3, 4))), name="number self")


def sample_where_numbers(op, make, dtype, rg):
    cond = make((3, 4), dtype_override="bool")
    yield SampleInput(cond, args=(1.0, 0))
    yield SampleInput(cond, args=(1, 0))
    yield SampleInput(cond, args=(True, 2.5))


def sample_lerp_scalar(op, make, dtype, rg):
    for w in (0.25, 0.75, -0.5, 1.5):
        yield SampleInput(make((3, 4), requires_grad=rg), args=(make((3, 4), requires_grad=rg), w))
    yield SampleInput(make((3, 4), requires_grad=rg), args=(make((4,), requires_grad=rg), 0.5),
                      name="broadcast end")
    yield SampleInput(make((0, 2), requires_grad=rg), args=(make((0, 2), requires_grad=rg), 0.5))


def sample_lerp_tensor(op, make, dtype, rg):
    yield SampleInput(make((3, 4), requires_grad=rg),
                      args=(make((3, 4), requires_grad=rg),
                            make((3, 4), low=-1, high=2, requires_grad=rg)))
    yield SampleInput(make((3, 1), requires_grad=rg),
                      args=(make((1, 4), requires_grad=rg),
                            make((4,), low=0, high=1, requires_grad=rg)), name="broadcast")


def errors_lerp(op, make):
    x = opdispatch.ones(3)
    yield ErrorInput(SampleInput(x, args=(opdispatch.ones(3, dtype=opdispatch.float64), 0.5)),
                     RuntimeError, r"for `end` but got dtype")


def _ternary(exclude_zero=False):
    def sample(op, make, dtype, rg):
        yield SampleInput(make((3, 4), requires_grad=rg),
                          args=(make((3, 4), requires_grad=rg),
                                make((3, 4), requires_grad=rg, exclude_zero=exclude_zero)))
        yield SampleInput(make((3, 4), requires_grad=rg),
                          args=(make((4,), requires_grad=rg),
                                make((3, 1), requires_grad=rg, exclude_zero=exclude_zero)),
                          kwargs={"value": 2}, name="broadcast, value")
        yield SampleInput(make((4, 3), requires_grad=rg).t(),
                          args=(make((3, 4), requires_grad=rg, noncontiguous=True),
                                make((3, 4), requires_grad=rg, exclude_zero=exclude_zero)),
                          name="strided")
    return sample


def errors_addcdiv(op, make):
    i = opdispatch.ones(3, dtype=opdispatch.int64)
    yield ErrorInput(SampleInput(opdispatch.ones(3), args=(i, i)), RuntimeError,
                     r"^Integer division with addcdiv is no longer supported")


def errors_sub_bool(op, make):
    b = opdispatch.ones(3, dtype=opdispatch.bool)
    yield ErrorInput(SampleInput(b, args=(b,)), RuntimeError,
                     r"Subtraction, the `-` operator, with two bool tensors is not supported")


# torch 1.13's vectorised complex ne_ writes 1+1j where the elements differ (its CPU bug; the
# scalar tail writes 1+0j): opdispatch writes 1+0j everywhere, the mathematics.
_NE_COMPLEX = {f"inplace:{d}": "torch 1.13's vectorised complex ne_ writes 1+1j"
               for d in D.complex}


def _comparison(name, dtypes):
    errors = None
    if "complex64" not in dtypes:
        errors = _errors_for(f"{name}_cpu", "complex64", "ComplexFloat")
    return OpInfo(name, inplace=f"{name}_", dtypes=dtypes, sample_inputs=_binary(),
                  supports_autograd=False, compare_strides=True, error_inputs=errors,
                  skips=_NE_COMPLEX if name == "ne" else None)


def _where_scalar(name):
    def op(lib, cond, a, b):
        return lib.where(cond, a, b)
    op.__name__ = name
    return op


OP_DB = [
    OpInfo("add", inplace="add_", dtypes=EVERY, sample_inputs=_binary(), compare_strides=True),
    OpInfo("sub", inplace="sub_", dtypes=NUMERIC_COMPLEX, sample_inputs=_binary(),
           compare_strides=True, error_inputs=errors_sub_bool),
    OpInfo("mul", inplace="mul_", dtypes=EVERY, sample_inputs=_binary(), compare_strides=True),
    OpInfo("div", inplace="div_", dtypes=EVERY, sample_inputs=_binary(exclude_zero=True),
           compare_strides=True, error_inputs=errors_rounding_mode,
           skips={"inplace": "integral self cannot hold true division"}),
    OpInfo("div.trunc", op=_rounding_op("trunc"), method=False, dtypes=REAL,
           sample_inputs=_binary(exclude_zero=True), supports_autograd=False,
           error_inputs=_zero_division()),
    OpInfo("div.floor", op=_rounding_op("floor"), method=False, dtypes=REAL,
           sample_inputs=_binary(exclude_zero=True), supports_autograd=False),
    OpInfo("true_divide", inplace="true_divide_", dtypes=D.floating + D.complex,
           sample_inputs=_binary(exclude_zero=True)),
    OpInfo("floor_divide", inplace="floor_divide_", dtypes=REAL,
           sample_inputs=_binary(exclude_zero=True), supports_autograd=False,
           error_inputs=_zero_division(_errors_for("div_floor_cpu", "bool", "Bool"))),
    OpInfo("remainder", inplace="remainder_", dtypes=REAL,
           sample_inputs=_binary(exclude_zero=True, number=-3), compare_strides=True,
           error_inputs=_zero_division(_errors_for("remainder_cpu", "bool", "Bool"))),
    OpInfo("fmod", inplace="fmod_", dtypes=REAL,
           sample_inputs=_binary(exclude_zero=True, number=-3), compare_strides=True,
           error_inputs=_zero_division(_errors_for("fmod_cpu", "complex64", "ComplexFloat"))),
    # pow, maximum and minimum have no out= or in-place overloads yet (not structured here).
    OpInfo("pow", dtypes=NUMERIC_COMPLEX, sample_inputs=sample_pow, supports_out=False,
           tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}),
    # pow.Scalar: a number base, the exponent's dtype and the number's kind promote as torch's.
    OpInfo("pow.Scalar", op=lambda lib, base, e: lib.pow(base, e), method=False,
           dtypes=D.floating + D.integral, sample_inputs=sample_pow_scalar, supports_out=False,
           tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}),
    OpInfo("maximum", dtypes=D.all_and_bool, sample_inputs=_binary(number=None),
           compare_strides=True, supports_out=False),
    OpInfo("minimum", dtypes=D.all_and_bool, sample_inputs=_binary(number=None),
           compare_strides=True, supports_out=False),
    _comparison("eq", EVERY),
    _comparison("ne", EVERY),
    _comparison("lt", D.all_and_bool),
    _comparison("le", D.all_and_bool),
    _comparison("gt", D.all_and_bool),
    _comparison("ge", D.all_and_bool),
    OpInfo("where", method=False, supports_out=False, dtypes=EVERY, sample_inputs=sample_where),
    OpInfo("where.Scalar", op=_where_scalar("where"), method=False, supports_out=False,
           supports_autograd=False, dtypes=("float32",), sample_inputs=sample_where_numbers),
    OpInfo("bitwise_and", inplace="bitwise_and_", dtypes=BITWISE, sample_inputs=_binary(),
           supports_autograd=False,
           error_inputs=_errors_for("bitwise_and_cpu", "float32", "Float")),
    OpInfo("bitwise_or", inplace="bitwise_or_", dtypes=BITWISE, sample_inputs=_binary(),
           supports_autograd=False),
    OpInfo("bitwise_xor", inplace="bitwise_xor_", dtypes=BITWISE, sample_inputs=_binary(),
           supports_autograd=False),
    OpInfo("bitwise_left_shift", inplace="bitwise_left_shift_", dtypes=D.integral,
           sample_inputs=_binary(low=0, high=5, number=3), supports_autograd=False,
           error_inputs=_errors_for("lshift_cpu", "float32", "Float")),
    OpInfo("bitwise_right_shift", inplace="bitwise_right_shift_", dtypes=D.integral,
           sample_inputs=_binary(low=0, high=5, number=1), supports_autograd=False),
    OpInfo("logical_and", inplace="logical_and_", dtypes=EVERY, sample_inputs=_binary(),
           supports_autograd=False),
    OpInfo("logical_or", inplace="logical_or_", dtypes=EVERY, sample_inputs=_binary(),
           supports_autograd=False),
    OpInfo("logical_xor", inplace="logical_xor_", dtypes=EVERY, sample_inputs=_binary(),
           supports_autograd=False),
    OpInfo("atan2", inplace="atan2_", dtypes=NO_HALF + D.integral + ("bool",),
           sample_inputs=_binary(exclude_zero=True), compare_strides=True,
           error_inputs=_errors_for("atan2_cpu", "float16", "Half")),
    OpInfo("hypot", inplace="hypot_", dtypes=NO_HALF, sample_inputs=_binary(number=None),
           error_inputs=_errors_for("hypot_cpu", "int64", "Long")),
    OpInfo("copysign", inplace="copysign_", dtypes=D.all_and_bool,
           sample_inputs=_binary(exclude_zero=True)),
    OpInfo("lerp.Scalar", op=lambda lib, *a, **k: lib.lerp(*a, **k), method="lerp",
           inplace="lerp_", dtypes=NO_HALF + D.complex, sample_inputs=sample_lerp_scalar,
           error_inputs=errors_lerp),
    OpInfo("lerp.Tensor", op=lambda lib, *a, **k: lib.lerp(*a, **k), method="lerp",
           inplace="lerp_", dtypes=NO_HALF + D.complex, sample_inputs=sample_lerp_tensor),
    OpInfo("addcmul", inplace="addcmul_",
           dtypes=tuple(d for d in NUMERIC_COMPLEX if d != "float16"),
           sample_inputs=_ternary(), tol={"bfloat16": (5e-2, 5e-2)}),
    OpInfo("addcdiv", inplace="addcdiv_", dtypes=NO_HALF + D.complex,
           sample_inputs=_ternary(exclude_zero=True), error_inputs=errors_addcdiv,
           tol={"bfloat16": (1e-1, 5e-2)}),
]
