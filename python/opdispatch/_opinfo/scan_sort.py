"""cumsum, cumprod, cummax, cummin, sort, argsort and topk (helper "scatter", issue 31).

Ties: sort samples with repeated values ask for stable=True (torch 1.13's default sort is not
stable beyond small lines, ours always is); topk samples hold distinct values, since which of
tied elements torch's topk returns is not part of its contract (Note [Sort and topk ties] in
plugins/cpu/sort_kernels.cpp: ours takes the first positions). test_scan_sort.py checks ties
by values and by the indices pointing at them."""

from .core import ErrorInput, OpInfo, SampleInput, dtypes as D

import opdispatch as opd

# cumsum/cumprod: every dtype of torch 1.13's CPU kernel (no float16).
SCAN = ("float32", "float64", "bfloat16") + D.integral + ("bool",) + D.complex
SORT = D.all_and_bool
CUMMAXMIN = tuple(d for d in SORT if d != "float16")
TOPK = ("float32", "float64", "bfloat16") + D.integral


def sample_scan(op, make, dtype, rg):
    # cumprod: values away from zero, but for the samples with zeros.
    kw = {"exclude_zero": True, "low": -2, "high": 2} if op.name == "cumprod" else {}
    yield SampleInput(make((3, 4), requires_grad=rg, **kw), args=(1,))
    yield SampleInput(make((3, 4), requires_grad=rg, **kw), args=(0,), name="dim 0")
    yield SampleInput(make((3, 5), noncontiguous=True, requires_grad=rg, **kw), args=(-1,),
                      name="strided")
    yield SampleInput(make((4, 3), requires_grad=rg, **kw).t(), args=(1,), name="transposed")
    yield SampleInput(make((2, 3, 4), requires_grad=rg, **kw), args=(1,), name="3-d")
    yield SampleInput(make((), requires_grad=rg, **kw), args=(0,), name="0-d")
    yield SampleInput(make((0, 3)), args=(1,), name="empty")
    if op.name == "cumprod":
        # Zeros: the first, a later and a repeated one along dim 1, a leading one along dim 0.
        zeros = opd.tensor([[False, True, False, True, False], [True, False, False, False, False],
                            [False, False, True, True, False]])
        x = make((3, 5), **kw).masked_fill(zeros, 0).detach()
        yield SampleInput(x.requires_grad_(rg), args=(1,), name="zeros")
        yield SampleInput(x.detach().requires_grad_(rg), args=(0,), name="zeros, dim 0")


def sample_scan_dtype(op, make, dtype, rg):
    yield SampleInput(make((3, 4), requires_grad=rg), args=(1,), kwargs={"dtype": "float64"},
                      name="dtype=float64")


def errors_scan(op, make):
    yield ErrorInput(SampleInput(make((2, 3)), args=(2,)), IndexError, "Dimension out of range")
    yield ErrorInput(SampleInput(make((2, 3), dtype_override="float16"), args=(0,)),
                     RuntimeError, r'"%s_out_cpu" not implemented for \'Half\'' % op.name,
                     on_meta=False)  # the CPU kernel's refusal, as torch's (its Meta computes)


def _distinct(make, dtype, shape, rg=False):
    """A tensor of `shape` whose values are all different (exact in every dtype)."""
    n = 1
    for s in shape:
        n *= s
    lo, hi = (0, 2 * n) if dtype == "uint8" else (-n, n)
    # Integers the dtype holds exactly (int8's -160 would wrap onto 96: a tie).
    exact = {"uint8": (0, 256), "int8": (-128, 128), "bfloat16": (-256, 257)}
    if dtype in exact:
        lo, hi = max(lo, exact[dtype][0]), min(hi, exact[dtype][1])
    assert hi - lo >= n, f"_distinct: {dtype} cannot hold {n} distinct values"
    values = make.rng.sample(range(lo, hi), n)
    t = opd.tensor(values, dtype=opd.float64).to(getattr(opd, dtype)).reshape(list(shape))
    if rg:
        t.requires_grad_(True)
    return t


def sample_sort(op, make, dtype, rg):
    yield SampleInput(make((3, 6), requires_grad=rg), kwargs={"stable": True}, name="2-d")
    yield SampleInput(make((3, 6), requires_grad=rg), kwargs={"stable": True, "dim": 0,
                                                              "descending": True},
                      name="dim 0, descending")
    yield SampleInput(make((4, 5), noncontiguous=True, requires_grad=rg),
                      kwargs={"stable": True, "descending": True}, name="strided")
    yield SampleInput(make((30,), low=0, high=3, requires_grad=rg), kwargs={"stable": True},
                      name="many ties")
    if dtype != "bool":
        yield SampleInput(_distinct(make, dtype, (4, 5), rg), args=(1, True),
                          name="positional, distinct")
    yield SampleInput(make((), requires_grad=rg), name="0-d")
    yield SampleInput(make((0, 3)), kwargs={"stable": True}, name="empty")
    if dtype in D.floating and not rg:  # NaN: no numerical gradient
        x = opd.tensor([3.0, float("nan"), 1.0, -0.0, 0.0, float("nan"), 2.0],
                       dtype=getattr(opd, dtype))
        yield SampleInput(x, kwargs={"stable": True}, name="nan")
        yield SampleInput(x, kwargs={"stable": True, "descending": True}, name="nan descending")


def sample_argsort(op, make, dtype, rg):
    for s in sample_sort(op, make, dtype, False):
        if "stable" in s.kwargs or not s.args:
            kwargs = dict(s.kwargs)
            kwargs.setdefault("stable", True)
            yield SampleInput(s.input, kwargs=kwargs, name=s.name)


def errors_sort(op, make):
    yield ErrorInput(SampleInput(make((3,), dtype_override="complex64")), RuntimeError,
                     "not implemented for 'ComplexFloat'")
    yield ErrorInput(SampleInput(make((3,)), kwargs={"dim": 3}), IndexError,
                     "Dimension out of range")


def sample_topk(op, make, dtype, rg):
    yield SampleInput(_distinct(make, dtype, (3, 8), rg), args=(3,))
    yield SampleInput(_distinct(make, dtype, (5, 4), rg), args=(2,),
                      kwargs={"dim": 0, "largest": False}, name="dim 0, smallest")
    yield SampleInput(_distinct(make, dtype, (4, 40), rg), args=(3,), name="k * 8 < n")
    yield SampleInput(_distinct(make, dtype, (2, 6), rg), args=(6,), name="k = n")
    yield SampleInput(_distinct(make, dtype, (2, 6), rg), args=(0,), name="k = 0")
    yield SampleInput(_distinct(make, dtype, (), rg), args=(1,), name="0-d")
    # torch 1.13 returns a 0-d self's element (index 0) for k = 0 too; ours crashed there.
    yield SampleInput(_distinct(make, dtype, (), rg), args=(0,), name="0-d, k = 0")
    if dtype in D.floating and not rg:  # NaN: no numerical gradient
        x = opd.tensor([3.0, float("nan"), 1.0, 2.0], dtype=getattr(opd, dtype))
        yield SampleInput(x, args=(2,), name="nan first")


def errors_topk(op, make):
    x = make((2, 3))
    yield ErrorInput(SampleInput(x, args=(5,)), RuntimeError, "selected index k out of range")
    yield ErrorInput(SampleInput(x, args=(-1,)), RuntimeError, "selected index k out of range")
    yield ErrorInput(SampleInput(make((3,), dtype_override="float16"), args=(1,)),
                     RuntimeError, r'"topk_cpu" not implemented for \'Half\'')


def sample_cummaxmin(op, make, dtype, rg):
    yield SampleInput(_distinct(make, dtype, (3, 5), rg), args=(1,), name="distinct")
    yield SampleInput(make((3, 6)), args=(1,), name="ties (the later index)")
    yield SampleInput(make((4, 3), noncontiguous=True), args=(0,), name="dim 0, strided")
    yield SampleInput(_distinct(make, dtype, (), rg), args=(0,), name="0-d")
    yield SampleInput(make((0, 3)), args=(1,), name="empty")
    if dtype in D.floating and not rg:  # NaN: no numerical gradient
        x = opd.tensor([1.0, 3.0, float("nan"), 2.0, 5.0], dtype=getattr(opd, dtype))
        yield SampleInput(x, args=(0,), name="nan stays")


def errors_cummaxmin(op, make):
    yield ErrorInput(SampleInput(make((3,), dtype_override="float16"), args=(0,)), RuntimeError,
                     r'"%s_cpu" not implemented for \'Half\'' % op.name)


OP_DB = [
    OpInfo("cumsum", inplace="cumsum_", dtypes=SCAN, sample_inputs=sample_scan,
           error_inputs=errors_scan, tol={"bfloat16": (5e-2, 2e-2)}),
    OpInfo("cumsum.dtype", inplace=None, dtypes=("float32", "int32"),
           sample_inputs=sample_scan_dtype),
    OpInfo("cumprod", inplace="cumprod_", dtypes=SCAN, sample_inputs=sample_scan,
           error_inputs=errors_scan, tol={"bfloat16": (5e-2, 2e-2)}, supports_gradgrad=True),
    OpInfo("sort", supports_out=False, dtypes=SORT, sample_inputs=sample_sort,
           error_inputs=errors_sort),
    OpInfo("argsort", supports_out=False, supports_autograd=False, dtypes=SORT,
           sample_inputs=sample_argsort),
    OpInfo("cummax", supports_out=False, dtypes=CUMMAXMIN, sample_inputs=sample_cummaxmin,
           error_inputs=errors_cummaxmin),
    OpInfo("cummin", supports_out=False, dtypes=CUMMAXMIN, sample_inputs=sample_cummaxmin,
           error_inputs=errors_cummaxmin),
    # Expanded inputs repeat values: ties, whose indices torch leaves unspecified.
    OpInfo("topk", supports_out=False, dtypes=TOPK, sample_inputs=sample_topk,
           error_inputs=errors_topk,
           layouts=("contiguous", "transposed", "strided", "offset")),
]
