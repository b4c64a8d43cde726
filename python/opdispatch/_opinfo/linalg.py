"""Table entries for the matrix and vector products (helper "python"): mm, bmm, addmm, matmul and
linear, and the composites over them: dot, vdot, mv, outer/ger, addmv, addr, baddbmm,
tensordot, trace, einsum; isclose/allclose/equal, which compare."""

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D

# torch 1.13's CPU dtypes of mm and its family: no bool; Half only in matmul's newer kernels.
MM_DTYPES = ("float32", "float64", "bfloat16") + D.integral
DOT_DTYPES = ("float32", "float64", "bfloat16") + D.integral  # "dot" has no Half on CPU
TRACE_DTYPES = ("float32", "float64") + D.integral
# 16-bit products: PyTorch's (oneDNN's) bf16 kernels and ours accumulate in float in another
# order, and the composites round between mul and sum, so a sum that cancels differs by more
# than one bf16 ulp of the result: the tolerance is that of the summands' magnitude.
LOW_TOL = {"bfloat16": (0.5, 5e-2), "float16": (2e-2, 1e-2)}
# linear in bfloat16: ours equals the float64 result rounded to bfloat16, torch 1.13's bf16 gemm
# (contiguous operands) rounds its partial sums to bfloat16 (14.0625 for 14.125): over 40000
# random samples of sample_linear torch is up to 2.0 off, always within 1 + 5% of the value.
LINEAR_TOL = {**LOW_TOL, "bfloat16": (1.0, 5e-2)}
# The samples scaled by alpha=3, beta=2 (addmm, addmv, addr, baddbmm): both sides round the
# product to bfloat16 before scaling it (torch inside its kernel, ours between the composite's
# operators), so alpha times a rounding of a sum of up to 4 * 81 (half an ulp: 1) separates them;
# measured on 1500 samples each: up to 2 + 5%, never past it.
# In float32 the same cancellation: beta * self + alpha * (a sum of magnitude up to ~1000, an
# ulp of 6e-5) can end near 0, where torch's order of summation and ours differ by an ulp of the
# terms (differential.py seed 0, iteration 75415: baddbmm, -0.37382 against -0.37383).
SCALED_TOL = {**LOW_TOL, "bfloat16": (4.0, 5e-2), "float32": (1.5e-4, 1.3e-6)}


def _m(make, shape, rg, **kw):
    return make(shape, requires_grad=rg, **kw)


def sample_mm(op, make, dtype, rg):
    yield SampleInput(_m(make, (3, 4), rg), args=(_m(make, (4, 5), rg),), name="2-d")
    yield SampleInput(_m(make, (4, 3), rg).t(), args=(_m(make, (4, 5), rg, noncontiguous=True),),
                      name="transposed")
    yield SampleInput(_m(make, (0, 4), rg), args=(_m(make, (4, 2), rg),), name="empty")


def sample_bmm(op, make, dtype, rg):
    yield SampleInput(_m(make, (2, 3, 4), rg), args=(_m(make, (2, 4, 5), rg),))
    yield SampleInput(_m(make, (2, 4, 3), rg).transpose(1, 2),
                      args=(_m(make, (2, 4, 5), rg, noncontiguous=True),), name="transposed")


def sample_addmm(op, make, dtype, rg):
    yield SampleInput(_m(make, (3, 5), rg), args=(_m(make, (3, 4), rg), _m(make, (4, 5), rg)))
    yield SampleInput(_m(make, (5,), rg), args=(_m(make, (3, 4), rg), _m(make, (4, 5), rg)),
                      kwargs={"beta": 2, "alpha": 3}, name="broadcast")


def sample_matmul(op, make, dtype, rg):
    for a, b in [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)),
                 ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)),
                 ((2, 1, 3, 4), (3, 4, 2))]:
        yield SampleInput(_m(make, a, rg), args=(_m(make, b, rg),), name=f"{a}@{b}")


def sample_linear(op, make, dtype, rg):
    yield SampleInput(_m(make, (3, 4), rg), args=(_m(make, (5, 4), rg), _m(make, (5,), rg)))
    yield SampleInput(_m(make, (2, 3, 4), rg), args=(_m(make, (5, 4), rg),), name="no bias")


def sample_dot(op, make, dtype, rg):
    yield SampleInput(_m(make, (5,), rg), args=(_m(make, (5,), rg),))
    yield SampleInput(_m(make, (5,), rg, noncontiguous=True), args=(_m(make, (5,), rg),),
                      name="strided")
    yield SampleInput(_m(make, (0,), rg), args=(_m(make, (0,), rg),), name="empty")


def errors_dot(op, make):
    yield ErrorInput(SampleInput(make((2, 2)), args=(make((2, 2)),)), RuntimeError,
                     r"1D tensors expected, but got 2D and 2D tensors")
    yield ErrorInput(SampleInput(make((3,)), args=(make((4,)),)), RuntimeError,
                     r"inconsistent tensor size, expected tensor \[3\] and src \[4\]")
    yield ErrorInput(SampleInput(make((3,)), args=(make((3,), dtype_override="float64"),)),
                     RuntimeError, r"dot : expected both vectors to have same dtype, but found "
                                   r"Float and Double")


def sample_mv(op, make, dtype, rg):
    yield SampleInput(_m(make, (3, 4), rg), args=(_m(make, (4,), rg),))
    yield SampleInput(_m(make, (4, 3), rg).t(), args=(_m(make, (4,), rg, noncontiguous=True),),
                      name="transposed")
    yield SampleInput(_m(make, (0, 4), rg), args=(_m(make, (4,), rg),), name="empty")


def errors_mv(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((4,)),)), RuntimeError,
                     r"size mismatch, got 2, 2x3,4")
    yield ErrorInput(SampleInput(make((3,)), args=(make((3,)),)), RuntimeError,
                     r"vector \+ matrix @ vector expected, got 1, 1, 1")


def sample_outer(op, make, dtype, rg):
    yield SampleInput(_m(make, (3,), rg), args=(_m(make, (4,), rg),))
    yield SampleInput(_m(make, (3,), rg, noncontiguous=True), args=(_m(make, (0,), rg),),
                      name="empty")


def errors_outer(op, make):
    yield ErrorInput(SampleInput(make((2, 2)), args=(make((2,)),)), RuntimeError,
                     r"outer: Expected 1-D argument self, but got 2-D")
    yield ErrorInput(SampleInput(make((2,)), args=(make((2, 2)),)), RuntimeError,
                     r"outer: Expected 1-D argument vec2, but got 2-D")


def sample_addmv(op, make, dtype, rg):
    yield SampleInput(_m(make, (3,), rg), args=(_m(make, (3, 4), rg), _m(make, (4,), rg)))
    yield SampleInput(_m(make, (1,), rg), args=(_m(make, (3, 4), rg), _m(make, (4,), rg)),
                      kwargs={"beta": 2, "alpha": 3}, name="broadcast")
    yield SampleInput(_m(make, (), rg), args=(_m(make, (4, 3), rg).t(), _m(make, (4,), rg)),
                      kwargs={"beta": 0}, name="beta 0")


def errors_addmv(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(make((2, 3)), make((3,)))), RuntimeError,
                     r"size mismatch, got 3, 2x3,3")


def sample_addr(op, make, dtype, rg):
    yield SampleInput(_m(make, (3, 4), rg), args=(_m(make, (3,), rg), _m(make, (4,), rg)))
    yield SampleInput(_m(make, (4,), rg), args=(_m(make, (3,), rg), _m(make, (4,), rg)),
                      kwargs={"beta": 2, "alpha": 3}, name="broadcast")


def errors_addr(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((2, 2)), make((3,)))), RuntimeError,
                     r"addr: Expected 1-D argument vec1, but got 2-D")
    yield ErrorInput(SampleInput(make((4, 3)), args=(make((2,)), make((3,)))), RuntimeError,
                     r"The expanded size of the tensor \(2\) must match the existing size \(4\)")


def sample_baddbmm(op, make, dtype, rg):
    yield SampleInput(_m(make, (2, 3, 5), rg),
                      args=(_m(make, (2, 3, 4), rg), _m(make, (2, 4, 5), rg)))
    yield SampleInput(_m(make, (3, 1), rg),
                      args=(_m(make, (2, 4, 3), rg).transpose(1, 2), _m(make, (2, 4, 5), rg)),
                      kwargs={"beta": 2, "alpha": 3}, name="broadcast")


def errors_baddbmm(op, make):
    yield ErrorInput(SampleInput(make((2, 2, 2)), args=(make((2, 2)), make((2, 2, 2)))),
                     RuntimeError, r"batch1 must be a 3D tensor")
    yield ErrorInput(SampleInput(make((2, 2, 2)), args=(make((2, 2, 3)), make((2, 2, 2)))),
                     RuntimeError, r"Expected size for first two dimensions of batch2 tensor to "
                                   r"be: \[2, 3\] but got: \[2, 2\]\.")


def sample_tensordot(op, make, dtype, rg):
    yield SampleInput(_m(make, (2, 3, 4), rg), args=(_m(make, (3, 4, 5), rg),), name="dims=2")
    yield SampleInput(_m(make, (3, 2, 4), rg), args=(_m(make, (3, 2, 5), rg),),
                      kwargs={"dims": ([1, 0], [1, 0])}, name="lists")
    yield SampleInput(_m(make, (2,), rg), args=(_m(make, (3,), rg),), kwargs={"dims": 0},
                      name="outer")


def errors_tensordot(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(make((3, 2)),),
                                 kwargs={"dims": ([1], [1])}), RuntimeError,
                     r"contracted dimensions need to match, but first has size 3 in dim 1 and "
                     r"second has size 2 in dim 1")


def sample_trace(op, make, dtype, rg):
    yield SampleInput(_m(make, (3, 4), rg))
    yield SampleInput(_m(make, (4, 3), rg), name="tall")
    yield SampleInput(_m(make, (4, 3), rg).t(), name="transposed")
    yield SampleInput(_m(make, (0, 3), rg), name="empty")


def errors_trace(op, make):
    yield ErrorInput(SampleInput(make((2, 2, 2))), RuntimeError,
                     r"trace: expected a matrix, but got tensor with dim 3")


def sample_einsum(op, make, dtype, rg):
    # 16-bit: values in [-1, 1]. A chain of three operands rounds its partial products to bf16
    # on both sides, at different points (torch inside its gemm, ours between bmms): with
    # make's [-9, 9] the partial products reach 1000, whose ulp is 8, and the results
    # ('ijk,kl,lm->im': ours 68.5, torch 62, float64 64.47) differ past any tolerance that still
    # checks something.
    small = {"low": -1, "high": 1} if dtype in ("bfloat16", "float16") else {}

    def t(*shape, **kw):
        return _m(make, shape, rg, **small, **kw)
    yield SampleInput("ij,jk->ik", args=(t(2, 3), t(3, 4)), name="mm")
    yield SampleInput("ij,jk", args=(t(2, 3), t(3, 4, noncontiguous=True)), name="implicit")
    yield SampleInput("ii", args=(t(3, 3),), name="trace")
    yield SampleInput("ii->i", args=(t(3, 3),), name="diagonal")
    yield SampleInput("ij->ji", args=(t(2, 3),), name="transpose")
    yield SampleInput("i,j->ij", args=(t(3), t(4)), name="outer")
    yield SampleInput("bij,bjk->bik", args=(t(2, 3, 4), t(2, 4, 5)), name="bmm")
    yield SampleInput("...ij,...jk", args=(t(2, 3, 4), t(1, 4, 5)), name="ellipsis broadcast")
    yield SampleInput("ijk,kl,lm->im", args=(t(2, 3, 4), t(4, 5), t(5, 2)), name="chain")
    yield SampleInput("ij,ij,ij->i", args=(t(2, 3), t(2, 3), t(2, 3)), name="three")
    yield SampleInput("iij->j", args=(t(3, 3, 2),), name="repeated")
    yield SampleInput("ab,cd->", args=(t(2, 3), t(4, 5)), name="sum all")


def errors_einsum(op, make):
    yield ErrorInput(SampleInput("ij,jk", args=(make((2, 3)),)), RuntimeError,
                     r"einsum\(\): fewer operands were provided than specified in the equation")
    yield ErrorInput(SampleInput("ij,jk->ik", args=(make((2, 3)), make((4, 2)))), RuntimeError,
                     r"einsum\(\): subscript j has size 4 for operand 1 which does not broadcast "
                     r"with previously seen size 3")
    yield ErrorInput(SampleInput("i->ii", args=(make((2,)),)), RuntimeError,
                     r"einsum\(\): output subscript i appears more than once in the output")
    yield ErrorInput(SampleInput("ij", args=(make((2, 2, 2)),)), RuntimeError,
                     r"einsum\(\): the number of subscripts in the equation \(2\) does not match "
                     r"the number of dimensions \(3\) for operand 0 and no ellipsis was given")
    yield ErrorInput(SampleInput("i?", args=(make((2, 2)),)), RuntimeError,
                     r"einsum\(\): invalid subscript given at index 1 in the equation string")


def sample_isclose(op, make, dtype, rg):
    x = make((3, 4))
    yield SampleInput(x, args=(x.clone(),), name="same")
    yield SampleInput(make((3, 4)), args=(make((3, 4)),), name="random")
    yield SampleInput(make((3, 4)), args=(make((4,)),), kwargs={"rtol": 0.5, "atol": 0.5},
                      name="broadcast tolerances")
    yield SampleInput(make((0,)), args=(make((0,)),), name="empty")


def errors_isclose(op, make):
    yield ErrorInput(SampleInput(make((2,)), args=(make((2,), dtype_override="float64"),)),
                     RuntimeError, r"Float did not match Double")
    yield ErrorInput(SampleInput(make((2,)), args=(make((2,)),), kwargs={"rtol": -1}),
                     RuntimeError, r"rtol must be greater than or equal to zero, but got -1")


def sample_equal(op, make, dtype, rg):
    x = make((3, 4))
    yield SampleInput(x, args=(x.clone(),), name="same")
    yield SampleInput(make((3, 4)), args=(make((3, 4)),), name="random")
    yield SampleInput(make((3, 4)), args=(make((4,)),), name="other size")
    yield SampleInput(x.t(), args=(x.t().contiguous(),), name="strides")


def _einsum(lib, equation, *operands):
    return lib.einsum(equation, *operands)


def _tensordot(lib, a, b, dims=2):
    return lib.tensordot(a, b, dims=dims)


OP_DB = [
    OpInfo("mm", dtypes=MM_DTYPES, sample_inputs=sample_mm, supports_out=False, tol=LOW_TOL),
    OpInfo("bmm", dtypes=MM_DTYPES, sample_inputs=sample_bmm, supports_out=False, tol=LOW_TOL),
    OpInfo("addmm", dtypes=MM_DTYPES, sample_inputs=sample_addmm, supports_out=False,
           tol=SCALED_TOL),
    OpInfo("matmul", dtypes=MM_DTYPES, sample_inputs=sample_matmul, supports_out=False,
           tol=LOW_TOL),
    OpInfo("linear", op=lambda lib, *a, **k: (lib.nn.functional.linear if lib.__name__ == "torch"
                                               else lib.linear)(*a, **k),
           method=False, dtypes=("float32", "float64", "bfloat16"), sample_inputs=sample_linear,
           supports_out=False, tol=LINEAR_TOL),
    OpInfo("dot", dtypes=DOT_DTYPES, sample_inputs=sample_dot, error_inputs=errors_dot,
           supports_out=False, tol=LOW_TOL),
    OpInfo("vdot", dtypes=DOT_DTYPES, sample_inputs=sample_dot, supports_out=False, tol=LOW_TOL),
    OpInfo("mv", dtypes=MM_DTYPES, sample_inputs=sample_mv, error_inputs=errors_mv,
           supports_out=False, tol=LOW_TOL),
    OpInfo("outer", dtypes=D.all_and_bool, sample_inputs=sample_outer, error_inputs=errors_outer,
           supports_out=False, tol=LOW_TOL),
    OpInfo("ger", dtypes=D.all_and_bool, sample_inputs=sample_outer, supports_out=False,
           tol=LOW_TOL),
    OpInfo("addmv", dtypes=MM_DTYPES, sample_inputs=sample_addmv, error_inputs=errors_addmv,
           supports_out=False, tol=SCALED_TOL),
    OpInfo("addr", dtypes=D.all, sample_inputs=sample_addr, error_inputs=errors_addr,
           supports_out=False, tol=SCALED_TOL),
    OpInfo("baddbmm", dtypes=MM_DTYPES, sample_inputs=sample_baddbmm,
           error_inputs=errors_baddbmm, supports_out=False, tol=SCALED_TOL),
    OpInfo("tensordot", op=_tensordot, method=False, dtypes=MM_DTYPES,
           sample_inputs=sample_tensordot, error_inputs=errors_tensordot, supports_out=False,
           tol=LOW_TOL),
    OpInfo("trace", dtypes=TRACE_DTYPES, sample_inputs=sample_trace, error_inputs=errors_trace,
           supports_out=False),
    OpInfo("einsum", op=_einsum, method=False, dtypes=MM_DTYPES, sample_inputs=sample_einsum,
           error_inputs=errors_einsum, supports_out=False, tol=LOW_TOL),
    OpInfo("isclose", dtypes=D.all_and_bool, sample_inputs=sample_isclose,
           error_inputs=errors_isclose, supports_out=False, supports_autograd=False),
    OpInfo("allclose", dtypes=D.all_and_bool, sample_inputs=sample_isclose, supports_out=False,
           supports_autograd=False, supports_meta=False),
    OpInfo("equal", dtypes=D.all_and_bool, sample_inputs=sample_equal, supports_out=False,
           supports_autograd=False, supports_meta=False),
]
