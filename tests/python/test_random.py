"""Generator objects and the in-place random fills (uniform_, normal_, random_, bernoulli_,
exponential_, geometric_, log_normal_, cauchy_), their functional forms (bernoulli, normal) and
the generator overloads of the random factories. The values cannot be torch's (another
generator), so: reproducibility under a seed, a Generator's independence of the default one,
values independent of the thread count and of the target's strides, ranges and dtypes, moments
within 6 sigma on 100k draws (fixed seeds: no flakes), and errors as torch 1.13 raises them."""

import math
import os
import subprocess
import sys

import pytest
import torch

import opdispatch as opd

N = 100_000
FLOATING = ["float32", "float64", "float16", "bfloat16"]
INTEGRAL = ["uint8", "int8", "int16", "int32", "int64"]


def dt(lib, name):
    return getattr(lib, name)


def values(t):
    return t.double().tolist() if t.dim() else [t.double().item()]


def moments(t):
    xs = t.double()
    mean = xs.mean().item()
    var = ((xs - mean) ** 2).mean().item()
    return mean, var


def assert_moments(t, mean, var, fourth):
    """The sample mean and variance of n draws within 6 sigma of the distribution's: the
    mean's sigma is sqrt(var / n), the variance's sqrt((mu4 - var^2) / n)."""
    n = t.numel()
    m, v = moments(t)
    assert abs(m - mean) <= 6 * math.sqrt(var / n), (m, mean)
    assert abs(v - var) <= 6 * math.sqrt((fourth - var * var) / n), (v, var)


# ---- Generator objects ------------------------------------------------------------------------

def test_generator_is_torchs_shape():
    g = opd.Generator()
    assert g.manual_seed(7) is g
    assert g.initial_seed() == 7
    assert g.device == opd.device("cpu")
    assert opd.Generator("cpu").initial_seed() == torch.Generator().initial_seed()
    s = g.seed()
    assert g.initial_seed() == s
    g.manual_seed(-1)  # negative seeds wrap modulo 2**64, as torch's
    assert g.initial_seed() == 2**64 - 1 == torch.Generator().manual_seed(-1).initial_seed()
    with pytest.raises(RuntimeError, match="Overflow when unpacking long"):
        g.manual_seed(2**64)


def test_default_generator_is_the_state_manual_seed_sets():
    opd.manual_seed(11)
    assert opd.default_generator.initial_seed() == 11
    a = opd.rand(5)
    opd.default_generator.manual_seed(11)
    assert opd.rand(5).tolist() == a.tolist()


def test_same_seed_same_values_and_generators_are_independent():
    g = opd.Generator().manual_seed(1)
    a = opd.rand(8, generator=g)
    g.manual_seed(1)
    opd.manual_seed(5)
    opd.rand(100)  # the default generator's draws do not move g
    b = opd.rand(8, generator=g)
    assert a.tolist() == b.tolist()
    # and g's draws do not move the default one
    opd.manual_seed(5)
    x = opd.rand(4)
    opd.manual_seed(5)
    opd.rand(1000, generator=g)
    assert opd.rand(4).tolist() == x.tolist()
    # two generators with one seed agree; successive draws differ
    h = opd.Generator().manual_seed(1)
    assert opd.rand(8, generator=h).tolist() == a.tolist()
    assert opd.rand(8, generator=h).tolist() != a.tolist()


def test_get_state_and_set_state_replay_the_values():
    g = opd.Generator().manual_seed(3)
    opd.randn(5, generator=g)
    state = g.get_state()
    assert state.dtype == opd.uint8 and state.numel() == 16
    a = opd.randn(5, generator=g)
    g.set_state(state)
    assert opd.randn(5, generator=g).tolist() == a.tolist()


def test_generator_none_is_the_default_generator_and_gives_rands_values():
    for plain, seeded in [(lambda: opd.rand(3, 7), lambda: opd.rand(3, 7, generator=None)),
                          (lambda: opd.randn(3, 7), lambda: opd.randn(3, 7, generator=None)),
                          (lambda: opd.rand(9, dtype=opd.float16),
                           lambda: opd.empty(9, dtype=opd.float16).uniform_()),
                          (lambda: opd.rand(9, dtype=opd.float64),
                           lambda: opd.empty(9, dtype=opd.float64).uniform_(0, 1)),
                          (lambda: opd.randn(9, dtype=opd.bfloat16),
                           lambda: opd.empty(9, dtype=opd.bfloat16).normal_()),
                          (lambda: opd.randint(3, 10, (6,)),
                           lambda: opd.randint(3, 10, (6,), generator=None)),
                          (lambda: opd.randperm(9), lambda: opd.randperm(9, generator=None))]:
        opd.manual_seed(42)
        a = plain()
        opd.manual_seed(42)
        b = seeded()
        assert a.dtype == b.dtype and a.tolist() == b.tolist()


def test_generator_overloads_of_the_factories():
    g = opd.Generator().manual_seed(0)
    assert opd.rand(2, 3, generator=g).shape == (2, 3)
    assert opd.randn((4,), generator=g, dtype=opd.float64).dtype == opd.float64
    r = opd.randint(5, (1000,), generator=g)
    assert r.dtype == opd.int64 and 0 <= r.min().item() and r.max().item() == 4
    r = opd.randint(-3, 3, (1000,), generator=g, dtype=opd.int16)
    assert r.dtype == opd.int16 and r.min().item() == -3 and r.max().item() == 2
    p = opd.randperm(50, generator=g)
    assert sorted(p.tolist()) == list(range(50))
    assert opd.normal(2.0, 3.0, (4, 5), generator=g).shape == (4, 5)
    assert opd.rand(2, generator=g, device="meta").is_meta
    assert opd.ops.aten.rand.generator([2], generator=g).shape == (2,)


def test_generator_argument_of_another_type_is_torchs_type_error():
    x = opd.zeros(3)
    with pytest.raises(TypeError) as ours:
        x.uniform_(generator=1)
    with pytest.raises(TypeError) as theirs:
        torch.zeros(3).uniform_(generator=1)
    assert str(ours.value) == str(theirs.value)  # uniform_(): argument 'generator' must be ...
    with pytest.raises(TypeError, match=r"^rand\(\) received an invalid combination"):
        opd.rand(2, generator=1)
    with pytest.raises(TypeError, match=r"generator=str"):
        opd.rand(2, generator="a")


def test_values_do_not_depend_on_the_thread_count():
    # The values themselves, hashed (a sum would depend on the reduction's split).
    code = (
        "import hashlib\n"
        "import opdispatch as opd\n"
        "g = opd.Generator().manual_seed(9)\n"
        "x = opd.empty(300, 301)\n"
        "out = [x.uniform_(-1, 2, generator=g).tolist(),\n"
        "       x.normal_(generator=g).tolist(),\n"
        "       x.t().bernoulli_(0.3, generator=g).tolist(),\n"
        "       opd.empty(90000, dtype=opd.int64).random_(generator=g).tolist(),\n"
        "       x.exponential_(generator=g).tolist(),\n"
        "       opd.empty(50, 4000).t().log_normal_(generator=g).tolist()]\n"
        "print(hashlib.sha256(repr(out).encode()).hexdigest())\n")
    results = []
    for threads in ("1", "2", "3"):
        env = dict(os.environ, OPD_NUM_THREADS=threads)
        results.append(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                      capture_output=True, text=True).stdout)
    assert results[0] == results[1] == results[2]


def test_values_follow_the_logical_order_whatever_the_strides():
    for fill in [lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.random_(0, 100),
                 lambda t: t.bernoulli_(0.5), lambda t: t.cauchy_()]:
        opd.manual_seed(8)
        dense = fill(opd.empty(6, 4))
        opd.manual_seed(8)
        strided = fill(opd.empty(4, 6).t())
        assert strided.stride() == (1, 6)
        assert dense.tolist() == strided.tolist()
        opd.manual_seed(8)
        sliced = fill(opd.zeros(6, 8)[:, ::2])
        assert dense.tolist() == sliced.tolist()


# ---- distributions ----------------------------------------------------------------------------

def test_uniform_range_and_moments():
    g = opd.Generator().manual_seed(100)
    for name in FLOATING:
        x = opd.empty(N, dtype=dt(opd, name)).uniform_(generator=g)
        assert x.dtype == dt(opd, name)
        assert 0 <= x.min().item() and x.max().item() < 1
    x = opd.empty(N, dtype=opd.float64).uniform_(-2, 5, generator=g)
    assert -2 <= x.min().item() and x.max().item() < 5
    w = 7.0
    assert_moments(x, 1.5, w * w / 12, w ** 4 / 80)


def test_complex_uniform_and_normal_fill_both_parts():
    g = opd.Generator().manual_seed(106)
    def parts(x):
        xs = x.tolist()
        return (opd.tensor([c.real for c in xs], dtype=opd.float64),
                opd.tensor([c.imag for c in xs], dtype=opd.float64))

    x = opd.empty(N, dtype=opd.complex128).uniform_(1, 2, generator=g)
    for part in parts(x):
        assert 1 <= part.min().item() and part.max().item() < 2
        assert_moments(part, 1.5, 1 / 12, 1 / 80)
    x = opd.empty(N, dtype=opd.complex64).normal_(1, 2, generator=g)
    for part in parts(x):  # each part N(mean, std^2 / 2), as torch's
        assert_moments(part, 1, 2, 3 * 4)
    y = opd.normal(opd.zeros(3, dtype=opd.complex64), 1.0, generator=g)
    assert y.dtype == opd.complex64 and y.shape == (3,)
    # the parts of element i are counters 2i and 2i + 1: as the real pairs of a float tensor
    g.manual_seed(1)
    z = opd.empty(4, dtype=opd.complex128).uniform_(generator=g)
    g.manual_seed(1)
    pairs = opd.empty(4, 2, dtype=opd.float64).uniform_(generator=g)
    assert [[c.real, c.imag] for c in z.tolist()] == pairs.tolist()


def test_normal_moments():
    g = opd.Generator().manual_seed(101)
    for name in ["float64", "float32"]:
        x = opd.empty(N, dtype=dt(opd, name)).normal_(3, 2, generator=g)
        assert_moments(x, 3, 4, 3 * 16)
    y = opd.normal(opd.full((N,), -1.0), 0.5, generator=g)
    assert_moments(y, -1, 0.25, 3 * 0.25 ** 2)
    y = opd.normal(1.0, opd.full((N,), 2.0, dtype=opd.float64), generator=g)
    assert y.dtype == opd.float64
    assert_moments(y, 1, 4, 3 * 16)
    y = opd.normal(opd.zeros(N, 1), opd.ones(1, 2) * 3, generator=g)  # broadcast
    assert y.shape == (N, 2)
    assert_moments(y, 0, 9, 3 * 81)


def test_bernoulli_moments_and_dtypes():
    g = opd.Generator().manual_seed(102)
    p = 0.3
    for name in ["float32", "float64", "bfloat16", "bool", "uint8", "int64"]:
        x = opd.empty(N, dtype=dt(opd, name)).bernoulli_(p, generator=g)
        assert x.dtype == dt(opd, name)
        assert ((x.double() == 0) | (x.double() == 1)).all().item()
        assert_moments(x.double(), p, p * (1 - p), p * (1 - p) * (1 - 3 * p + 3 * p * p))
    probs = opd.rand(N, generator=g)
    x = opd.bernoulli(probs, generator=g)
    assert x.dtype == opd.float32
    assert abs(x.double().mean().item() - probs.double().mean().item()) <= 6 * 0.5 / math.sqrt(N)
    x = opd.empty(2, N // 2).bernoulli_(opd.tensor([[0.0], [1.0]]), generator=g)  # broadcast p
    assert x[0].sum().item() == 0 and x[1].sum().item() == N // 2
    x = opd.bernoulli(opd.zeros(N), 0.9, generator=g)
    assert abs(x.mean().item() - 0.9) <= 6 * math.sqrt(0.09 / N)
    out = opd.empty(0)
    assert opd.bernoulli(opd.full((3, 4), 0.5), out=out) is out and out.shape == (3, 4)


def test_random_ranges():
    g = opd.Generator().manual_seed(103)
    x = opd.empty(N, dtype=opd.int64).random_(-5, 5, generator=g)
    assert x.min().item() == -5 and x.max().item() == 4
    assert_moments(x.double(), -0.5, (10 ** 2 - 1) / 12, (10 ** 2 - 1) * (3 * 10 ** 2 - 7) / 240)
    x = opd.empty(N, dtype=opd.uint8).random_(generator=g)
    assert x.min().item() == 0 and x.max().item() == 255
    x = opd.empty(N, dtype=opd.int8).random_(generator=g)
    assert x.min().item() == 0 and x.max().item() == 127
    x = opd.empty(N, dtype=opd.bool).random_(generator=g)
    assert x.sum().item() not in (0, N)
    x = opd.empty(N, dtype=opd.float16).random_(generator=g)
    assert x.min().item() >= 0 and x.max().item() <= 2 ** 11
    assert (x.double() == x.double().round()).all().item()
    x = opd.empty(N).random_(10, generator=g)
    assert x.min().item() == 0 and x.max().item() == 9
    x = opd.empty(N, dtype=opd.int64).random_(-2**63, None, generator=g)
    assert x.min().item() < -2**62 and x.max().item() > 2**62
    x = opd.empty(N, dtype=opd.int32).random_(2**31 - 3, None, generator=g)
    assert x.min().item() == 2**31 - 3 and x.max().item() == 2**31 - 1


def test_exponential_geometric_log_normal_cauchy():
    g = opd.Generator().manual_seed(104)
    lam = 2.0
    x = opd.empty(N, dtype=opd.float64).exponential_(lam, generator=g)
    assert x.min().item() >= 0
    assert_moments(x, 1 / lam, 1 / lam ** 2, 9 / lam ** 4)
    assert opd.empty(3).exponential_(0).tolist() == [math.inf] * 3  # as torch
    p = 0.25
    for name in ["float64", "int64", "uint8"]:
        x = opd.empty(N, dtype=dt(opd, name)).geometric_(p, generator=g)
        assert x.min().item() >= 1
    x = opd.empty(N, dtype=opd.float64).geometric_(p, generator=g)
    q = 1 - p
    var = q / p ** 2
    assert_moments(x, 1 / p, var, var * var * (9 + p * p / q))  # excess kurtosis 6 + p^2/q
    x = opd.empty(N, dtype=opd.float64).log_normal_(0.5, 0.25, generator=g)
    assert x.min().item() > 0
    assert_moments(x.log(), 0.5, 0.0625, 3 * 0.0625 ** 2)
    x = opd.empty(N, dtype=opd.float64).cauchy_(1.0, 2.0, generator=g)
    # Cauchy has no moments: its quartiles are median -+ sigma.
    for bound, share in [(1.0, 0.5), (-1.0, 0.25), (3.0, 0.75)]:
        frac = (x < bound).double().mean().item()
        assert abs(frac - share) <= 6 * math.sqrt(share * (1 - share) / N)


def test_multinomial_frequencies_and_shapes():
    g = opd.Generator().manual_seed(105)
    probs = [0.1, 0.2, 0.0, 0.7]
    draws = [opd.multinomial(opd.tensor(probs), N, True, generator=g),  # with replacement
             opd.multinomial(opd.tensor([probs] * N), 1, generator=g)[:, 0],  # the key path
             opd.multinomial(opd.tensor([probs] * N, dtype=opd.float64), 3,
                             generator=g)[:, 0]]  # first of three without replacement
    for x in draws:
        assert x.dtype == opd.int64 and x.numel() == N
        for i, p in enumerate(probs):
            share = (x == i).double().mean().item()
            assert abs(share - p) <= 6 * math.sqrt(max(p * (1 - p), 1e-12) / N), (i, share)
    x = opd.multinomial(opd.tensor([[0.0, 5.0, 1.0, 0.0]] * 100), 2, generator=g)
    assert x.shape == (100, 2)
    assert all(sorted(row) == [1, 2] for row in x.tolist())  # without replacement: distinct
    out = opd.empty(0, dtype=opd.int64)
    assert opd.multinomial(opd.ones(2, 5), 3, out=out) is out and out.shape == (2, 3)
    assert opd.multinomial(opd.ones(2, 5, device="meta"), 3).shape == (2, 3)
    opd.manual_seed(6)
    a = opd.multinomial(opd.ones(7), 4)
    opd.manual_seed(6)
    assert opd.multinomial(opd.ones(7), 4).tolist() == a.tolist()


@pytest.mark.parametrize("name", FLOATING)
def test_floating_fills_keep_the_dtype(name):
    for fill in [lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.exponential_(),
                 lambda t: t.log_normal_(), lambda t: t.cauchy_(), lambda t: t.random_(),
                 lambda t: t.geometric_(0.5)]:
        x = opd.empty(5, dtype=dt(opd, name))
        assert fill(x) is x and x.dtype == dt(opd, name)


def test_fills_bump_the_version_and_autograd_gives_zero_gradients():
    x = opd.empty(3)
    v = x._version
    x.uniform_()
    assert x._version == v + 1
    leaf = opd.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.normal_()
    y = leaf * 2
    y.uniform_()
    y.sum().backward()
    assert leaf.grad.tolist() == [0.0, 0.0, 0.0]
    mean = opd.zeros(3, requires_grad=True)
    std = opd.ones(3, requires_grad=True)
    opd.normal(mean, std).sum().backward()
    assert mean.grad.tolist() == [0.0] * 3 and std.grad.tolist() == [0.0] * 3
    p = opd.full((3,), 0.5, requires_grad=True)
    r = opd.bernoulli(p)
    assert r.requires_grad == torch.bernoulli(torch.full((3,), 0.5, requires_grad=True)).requires_grad
    r.sum().backward()
    assert p.grad.tolist() == [0.0] * 3


def test_meta_fills_check_and_return_self():
    m = opd.empty(2, 3, device="meta")
    assert m.uniform_() is m and m.normal_() is m and m.random_(0, 5) is m
    assert opd.normal(m, 1.0).is_meta
    assert opd.bernoulli(m).shape == (2, 3)
    with pytest.raises(RuntimeError, match=r"uniform_ expects to return a \[from, to\) range"):
        m.uniform_(2, 1)


# ---- errors, as torch 1.13 --------------------------------------------------------------------

ERRORS = [
    "lib.zeros(3).uniform_(2, 1)",
    "lib.zeros(3).uniform_(-3e38, 3e38)",
    "lib.zeros(3, dtype=lib.float16).uniform_(0, 1e6)",
    "lib.zeros(3).uniform_(0, float('inf'))",
    "lib.zeros(3, dtype=lib.complex64).uniform_(2, 1)",
    "lib.zeros(3, dtype=lib.complex64).uniform_(0, 1e39)",
    "lib.zeros(3, dtype=lib.complex64).normal_(0, -1)",
    "lib.zeros(3, dtype=lib.int64).uniform_()",
    "lib.zeros(3, dtype=lib.bool).normal_()",
    "lib.zeros(3).normal_(0, -1)",
    "lib.zeros(3, dtype=lib.int32).normal_(0, -1)",
    "lib.zeros(3).normal_(0, float('nan'))",
    "lib.zeros(3).bernoulli_(1.5)",
    "lib.zeros(3).bernoulli_(-0.1)",
    "lib.zeros(3, dtype=lib.float16).bernoulli_(0.5)",
    "lib.zeros(3).bernoulli_(lib.tensor([1.5, 0, 0]))",
    "lib.zeros(3).bernoulli_(lib.full((4,), 0.5))",
    "lib.zeros(3).bernoulli_(lib.full((2, 3), 0.5))",
    "lib.zeros(3).bernoulli_(lib.ones(3, dtype=lib.int64))",
    "lib.zeros(3).bernoulli_(lib.full((3,), 0.5, dtype=lib.float16))",
    "lib.bernoulli(lib.tensor([1.5]))",
    "lib.bernoulli(lib.zeros(2, dtype=lib.int64))",
    "lib.bernoulli(lib.zeros(3), 1.2)",
    "lib.zeros(3).random_(3, 2)",
    "lib.zeros(3).random_(0)",
    "lib.zeros(3).random_(-1)",
    "lib.zeros(3, dtype=lib.uint8).random_(0, 300)",
    "lib.zeros(3, dtype=lib.int8).random_(-200, 2)",
    "lib.zeros(3, dtype=lib.uint8).random_(-1, None)",
    "lib.zeros(3, dtype=lib.float16).random_(0, 70000)",
    "lib.zeros(3, dtype=lib.bool).random_(0, 3)",
    "lib.zeros(3, dtype=lib.complex64).random_()",
    "lib.zeros(3, dtype=lib.complex64).random_(0, 2)",
    "lib.zeros(3).exponential_(-1)",
    "lib.zeros(3, dtype=lib.int64).exponential_()",
    "lib.zeros(3).geometric_(0)",
    "lib.zeros(3).geometric_(1.5)",
    "lib.zeros(3, dtype=lib.bool).geometric_(0.5)",
    "lib.zeros(3).log_normal_(0, -1)",
    "lib.zeros(3).log_normal_(0, 0)",
    "lib.zeros(3, dtype=lib.int64).cauchy_()",
    "lib.normal(lib.zeros(3), -1.0)",
    "lib.normal(0.0, -lib.ones(3))",
    "lib.normal(lib.zeros(3), -lib.ones(3))",
    "lib.normal(0., -1., (2,))",
    "lib.normal(lib.zeros(3), lib.ones(4))",
    "lib.normal(lib.zeros(3, dtype=lib.int64), 1.0)",
    "lib.normal(0.0, lib.ones(3, dtype=lib.complex64))",
    "lib.randint(5, 5, (2,), generator=lib.Generator())",
    "lib.multinomial(lib.tensor([0.1, 0.2]), 5)",
    "lib.multinomial(lib.tensor([0.1, 0.2]), 0)",
    "lib.multinomial(lib.zeros(3), 1)",
    "lib.multinomial(lib.tensor([1., -1, 1]), 1)",
    "lib.multinomial(lib.tensor([1., float('nan'), 1]), 1)",
    "lib.multinomial(lib.tensor([1., -1, 1]), 2, True)",
    "lib.multinomial(lib.tensor([1., float('inf'), 1]), 2, True)",
    "lib.multinomial(lib.zeros(2, 3), 2, True)",
    "lib.multinomial(lib.ones(2, 2, 2), 1)",
    "lib.multinomial(lib.ones(3, dtype=lib.int64), 1)",
    "lib.multinomial(lib.ones(3, dtype=lib.float16), 1)",
    "lib.multinomial(lib.ones(2, 3), 2, out=lib.empty(0))",
    # torch 1.13 broadcasts mean with out's own shape here (an empty out raises)
    "lib.normal(lib.zeros(3, 4), 2.0, out=lib.empty(0))",
    "lib.normal(lib.zeros(3, 4), 2.0, out=lib.empty(13))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_as_torch(expr):
    with pytest.raises(Exception) as theirs:
        eval(expr, {"lib": torch})
    with pytest.raises(Exception) as ours:
        eval(expr, {"lib": opd})
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)
