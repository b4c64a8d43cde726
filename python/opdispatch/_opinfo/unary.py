"""Table entries for the unary elementwise operators (issue 31, helper "unary"): the floating
functions (exp ... tan), rounding, sign, the value tests, bitwise_not/logical_not, nan_to_num,
square and the clamp family, each with its in-place and out= forms where torch 1.13 has them.
dtypes are torch 1.13's CPU dtypes without complex, which opdispatch's kernels do not take yet."""


import opdispatch

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D

INTS = D.integral
FLOATING = ("float32", "float64", "bfloat16")          # torch's *_vml_cpu kernels: no Half
FLOATING_HALF = FLOATING + ("float16",)
FLOAT_FN = FLOATING + INTS + ("bool",)                 # integral inputs compute in Float
FLOAT_FN_HALF = FLOAT_FN + ("float16",)
ROUNDING = FLOATING + INTS
SIGNED = FLOATING_HALF + INTS
ALL_BOOL = SIGNED + ("bool",)

SPECIAL = [0.5, -1.5, 2.5, -0.0, 3.25, float("inf"), float("-inf"), float("nan")]


def _unary(low=None, high=None, exclude_zero=False, special=False):
    """The layouts of an elementwise operator, within [low, high]: dense, strided, transposed,
    expanded, 0-d, empty, and 1027 elements (several vectors and a tail); `special` adds
    infinities and NaN for the floating dtypes."""
    kw = dict(low=low, high=high, exclude_zero=exclude_zero)

    def sample(op, make, dtype, rg):
        yield SampleInput(make((3, 4), requires_grad=rg, **kw))
        yield SampleInput(make((3, 4), noncontiguous=True, requires_grad=rg, **kw))
        yield SampleInput(make((4, 3), requires_grad=rg, **kw).t(), name="transposed")
        yield SampleInput(make((3, 1), requires_grad=rg, **kw).expand(3, 4), name="expanded")
        yield SampleInput(make((), requires_grad=rg, **kw))
        yield SampleInput(make((0, 3), requires_grad=rg, **kw))
        yield SampleInput(make((1027,), requires_grad=rg, **kw), name="vectors and a tail")
        if special and not rg and dtype in FLOATING_HALF:
            yield SampleInput(opdispatch.tensor(SPECIAL, dtype=getattr(opdispatch, dtype)),
                              name="inf and nan")
    return sample


def _not_for(kernel, dtype, label):
    """The error of a kernel refusing `dtype`, as torch 1.13 words it."""
    def errors(op, make):
        x = opdispatch.ones(3, dtype=getattr(opdispatch, dtype))
        yield ErrorInput(SampleInput(x), RuntimeError,
                         rf'"{kernel}" not implemented for \'{label}\'')
    return errors


def _floating(name, kernel, low=None, high=None, dtypes=FLOAT_FN, **kw):
    return OpInfo(name, inplace=f"{name}_", dtypes=dtypes,
                  sample_inputs=_unary(low, high, special=True), compare_strides=True,
                  error_inputs=None if "float16" in dtypes else _not_for(kernel, "float16", "Half"),
                  **kw)


def sample_round_decimals(op, make, dtype, rg):
    for d in (0, 1, 2, -1):
        yield SampleInput(make((3, 4), low=-100, high=100, requires_grad=rg),
                          kwargs={"decimals": d})
    yield SampleInput(make((4, 3), noncontiguous=True, requires_grad=rg), kwargs={"decimals": 3})


def sample_nan_to_num(op, make, dtype, rg):
    yield from _unary(special=True)(op, make, dtype, rg)
    if dtype in FLOATING_HALF and not rg:
        x = opdispatch.tensor(SPECIAL, dtype=getattr(opdispatch, dtype))
        yield SampleInput(x, args=(1.0,))
        yield SampleInput(x, kwargs={"nan": 2.0, "posinf": 100.0, "neginf": -100.0})
        yield SampleInput(x, kwargs={"posinf": 1e30})


def sample_clamp_scalar(op, make, dtype, rg):
    x = make((3, 4), low=-5, high=5, requires_grad=rg)
    yield SampleInput(x, args=(-1, 2))
    yield SampleInput(x, args=(None, 2))
    yield SampleInput(x, kwargs={"min": -2})
    yield SampleInput(make((4, 3), low=-5, high=5, requires_grad=rg).t(), args=(3, 1),
                      name="min > max")
    yield SampleInput(make((0, 3), requires_grad=rg), args=(0, 1))


def sample_clamp_tensor(op, make, dtype, rg):
    x = make((3, 4), low=-5, high=5, requires_grad=rg)
    yield SampleInput(x, args=(make((3, 4), low=-5, high=0, requires_grad=rg),
                               make((4,), low=0, high=5, requires_grad=rg)))
    yield SampleInput(x, args=(make((3, 1), low=-5, high=0, requires_grad=rg),))
    yield SampleInput(x, args=(None, make((4,), low=0, high=5, requires_grad=rg)))
    yield SampleInput(make((3, 4), low=-5, high=5, noncontiguous=True, requires_grad=rg),
                      kwargs={"max": make((), low=-1, high=1, requires_grad=rg)})
    yield SampleInput(x, args=(make((3, 4), low=1, high=5, requires_grad=rg),
                               make((3, 4), low=-5, high=-1, requires_grad=rg)),
                      name="min > max")


def sample_clamp_one_bound(op, make, dtype, rg):
    x = make((3, 4), low=-5, high=5, requires_grad=rg)
    yield SampleInput(x, args=(1,))
    yield SampleInput(make((4, 3), low=-5, high=5, requires_grad=rg).t(), args=(-1,))
    yield SampleInput(make((0, 2), requires_grad=rg), args=(0,))


def sample_clamp_one_tensor(op, make, dtype, rg):
    x = make((3, 4), low=-5, high=5, requires_grad=rg)
    yield SampleInput(x, args=(make((3, 4), low=-5, high=5, requires_grad=rg),))
    yield SampleInput(x, args=(make((4,), low=-5, high=5, requires_grad=rg),))
    yield SampleInput(make((4, 3), low=-5, high=5, requires_grad=rg).t(),
                      args=(make((), low=-1, high=1),))


def errors_clamp(op, make):
    yield ErrorInput(SampleInput(make((3,))), RuntimeError,
                     r"torch.clamp: At least one of 'min' or 'max' must not be None")


def errors_sign(op, make):
    yield ErrorInput(SampleInput(opdispatch.ones(2, dtype=opdispatch.float16).to(
        opdispatch.complex64)), RuntimeError, r"Unlike NumPy, torch.sign is not intended")


def errors_isposinf(op, make):
    yield ErrorInput(SampleInput(make((3,)), kwargs={"out": opdispatch.empty(3)}), RuntimeError,
                     r"does not support non-boolean outputs")


def errors_neg(op, make):
    yield ErrorInput(SampleInput(opdispatch.ones(2, dtype=opdispatch.bool)), RuntimeError,
                     r"Negation, the `-` operator, on a bool tensor is not supported")


OP_DB = [
    # The floating functions: integral and bool inputs compute in float32.
    _floating("exp", "exp_vml_cpu"),
    _floating("log", "log_vml_cpu", low=0.1),
    _floating("sqrt", "sqrt_vml_cpu", low=0.1),
    _floating("rsqrt", "rsqrt_cpu", low=0.1),
    _floating("sin", "sin_vml_cpu"),
    _floating("cos", "cos_vml_cpu"),
    _floating("tanh", "tanh_vml_cpu"),
    _floating("sigmoid", "sigmoid_cpu"),
    _floating("reciprocal", "reciprocal_cpu", low=0.5, dtypes=FLOAT_FN_HALF,
              skips={"values:bool": "1/0 for False"}),
    _floating("log1p", "log1p_vml_cpu", low=-0.5),
    _floating("expm1", "expm1_vml_cpu"),
    _floating("log2", "log2_vml_cpu", low=0.1),
    _floating("log10", "log10_vml_cpu", low=0.1),
    _floating("exp2", "exp2", dtypes=FLOAT_FN_HALF),
    _floating("erf", "erf_vml_cpu"),
    _floating("erfc", "erfc_vml_cpu"),
    _floating("erfinv", "erfinv_vml_cpu", low=-0.9, high=0.9),
    _floating("asin", "asin_vml_cpu", low=-0.9, high=0.9),
    _floating("acos", "acos_vml_cpu", low=-0.9, high=0.9),
    _floating("atan", "atan_vml_cpu"),
    _floating("asinh", "asinh_cpu"),
    _floating("acosh", "acosh_cpu", low=1.1, high=5),
    _floating("atanh", "atanh_cpu", low=-0.9, high=0.9),
    _floating("sinh", "sinh_cpu"),
    _floating("cosh", "cosh_cpu"),
    _floating("tan", "tan_vml_cpu", low=-1.2, high=1.2),
    # Rounding: integers are left as they are; no Half, no bool.
    OpInfo("floor", inplace="floor_", dtypes=ROUNDING, sample_inputs=_unary(special=True),
           compare_strides=True, error_inputs=_not_for("floor_vml_cpu", "float16", "Half")),
    OpInfo("ceil", inplace="ceil_", dtypes=ROUNDING, sample_inputs=_unary(special=True),
           compare_strides=True, error_inputs=_not_for("ceil_vml_cpu", "bool", "Bool")),
    OpInfo("round", inplace="round_", dtypes=ROUNDING, sample_inputs=_unary(special=True),
           compare_strides=True, error_inputs=_not_for("round_vml_cpu", "float16", "Half")),
    # bfloat16: torch 1.13 computes x * 10**decimals, round, / 10**decimals in bfloat16, each
    # step rounded to bfloat16 (-4.34375 with decimals=1: -43.4375 becomes -43.5, rounds to -44,
    # gives -4.40625); ours rounds in float and equals the float64 result rounded to bfloat16
    # (-4.3125). Over 200000 values in [-100, 100] with decimals 1, 2, 3 and -1, torch's differ
    # from the float64 result by at most 0.5, within 0.1 + 2**-6 * |value|.
    OpInfo("round.decimals", inplace="round_", dtypes=FLOATING,
           sample_inputs=sample_round_decimals, tol={"bfloat16": (0.1, 2 ** -6)}),
    OpInfo("trunc", inplace="trunc_", dtypes=ROUNDING, sample_inputs=_unary(special=True),
           compare_strides=True, error_inputs=_not_for("trunc_vml_cpu", "float16", "Half")),
    OpInfo("frac", inplace="frac_", dtypes=FLOATING_HALF, sample_inputs=_unary(special=True),
           compare_strides=True, error_inputs=_not_for("frac_cpu", "int64", "Long")),
    OpInfo("sign", inplace="sign_", dtypes=ALL_BOOL, sample_inputs=_unary(special=True),
           compare_strides=True, error_inputs=errors_sign),
    OpInfo("sgn", inplace="sgn_", dtypes=ALL_BOOL, sample_inputs=_unary(special=True),
           compare_strides=True),
    OpInfo("neg", inplace="neg_", dtypes=SIGNED, sample_inputs=_unary(special=True),
           compare_strides=True, error_inputs=errors_neg),
    OpInfo("abs", inplace="abs_", dtypes=SIGNED, sample_inputs=_unary(special=True),
           compare_strides=True),
    OpInfo("square", inplace="square_", dtypes=ALL_BOOL, sample_inputs=_unary(),
           skips={"inplace:bool": "torch's square_ refuses Bool (pow's result is Long)",
                  "out:bool": "the Long result"}),
    # The value tests (Bool results; no gradient).
    OpInfo("isnan", supports_out=False, dtypes=ALL_BOOL, sample_inputs=_unary(special=True),
           supports_autograd=False),
    OpInfo("isinf", supports_out=False, dtypes=ALL_BOOL, sample_inputs=_unary(special=True),
           supports_autograd=False),
    OpInfo("isfinite", supports_out=False, dtypes=ALL_BOOL, sample_inputs=_unary(special=True),
           supports_autograd=False),
    OpInfo("isposinf", dtypes=ALL_BOOL, sample_inputs=_unary(special=True),
           supports_autograd=False, error_inputs=errors_isposinf),
    OpInfo("isneginf", dtypes=ALL_BOOL, sample_inputs=_unary(special=True),
           supports_autograd=False),
    OpInfo("logical_not", inplace="logical_not_", dtypes=ALL_BOOL,
           sample_inputs=_unary(special=True), supports_autograd=False, compare_strides=True),
    OpInfo("bitwise_not", inplace="bitwise_not_", dtypes=INTS + ("bool",),
           sample_inputs=_unary(), supports_autograd=False, compare_strides=True,
           error_inputs=_not_for("bitwise_not_cpu", "float32", "Float")),
    OpInfo("nan_to_num", inplace="nan_to_num_", dtypes=ALL_BOOL,
           sample_inputs=sample_nan_to_num),
    # clamp and its one-bound forms.
    OpInfo("clamp", inplace="clamp_", dtypes=ROUNDING, sample_inputs=sample_clamp_scalar,
           error_inputs=errors_clamp),
    OpInfo("clamp.Tensor", inplace="clamp_", dtypes=ROUNDING, sample_inputs=sample_clamp_tensor,
           supports_gradgrad=True),
    OpInfo("clamp_min", inplace="clamp_min_", dtypes=ROUNDING,
           sample_inputs=sample_clamp_one_bound),
    OpInfo("clamp_max", inplace="clamp_max_", dtypes=ROUNDING,
           sample_inputs=sample_clamp_one_bound),
    OpInfo("clamp_min.Tensor", inplace="clamp_min_", dtypes=ALL_BOOL,
           sample_inputs=sample_clamp_one_tensor),
    OpInfo("clamp_max.Tensor", inplace="clamp_max_", dtypes=ALL_BOOL,
           sample_inputs=sample_clamp_one_tensor),
]
