"""The NaN a max/min reduction returns, to the bit, against torch 1.13 (Note [NaN bits of max and
min], plugins/cpu/reduce_minmax_kernels.cpp): amax/amin the canonical quiet NaN, max()/min()
over every element all ones for float and double, max.dim/min.dim the first NaN of the line,
whichever loop (scalar, AVX2, split in pieces) found it."""

import math
import struct

import pytest

import opdispatch as opd

torch = pytest.importorskip("torch")

NAN = float("nan")
CANONICAL = {"float32": 0x7FC00000, "float64": 0x7FF8000000000000}
ALL_ONES = {"float32": 0xFFFFFFFF, "float64": 0xFFFFFFFFFFFFFFFF}


def bits(value, dtype):
    if dtype == "float64":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    return struct.unpack("<I", struct.pack("<f", value))[0]


def line(n, nans):
    """n numbers with NaNs of the given signs at the given positions."""
    values = [float(i % 7) for i in range(n)]
    for pos, sign in nans:
        values[pos] = NAN if sign > 0 else -NAN
    return values


# Lengths below, at and above the AVX2 width and the small-reduction cut (kGrain).
LENGTHS = (2, 5, 8, 9, 33, 100, 70000)
NANS = ("last -nan", "first -nan", "+nan then -nan", "-nan then +nan")


def nans_of(n, kind):
    return {"last -nan": [(n - 1, -1)], "first -nan": [(0, -1)],
            "+nan then -nan": [(1, 1), (n - 1, -1)],
            "-nan then +nan": [(1, -1), (n - 1, 1)]}[kind]


REDUCTIONS = {
    "amax()": lambda x: x.amax(), "amin()": lambda x: x.amin(),
    "max()": lambda x: x.max(), "min()": lambda x: x.min(),
    "amax(-1)": lambda x: x.amax(-1), "amin(-1)": lambda x: x.amin(-1),
    "max(-1)": lambda x: x.max(-1)[0], "min(-1)": lambda x: x.min(-1)[0],
    "max(0)": lambda x: x.max(0)[0], "min(0)": lambda x: x.min(0)[0],
    # An outer dim of few columns: torch's scalar loop (see the last test for wide ones).
    "amax(0)": lambda x: x.amax(0), "amin(0)": lambda x: x.amin(0),
}


def result_bits(t, dtype):
    return [bits(v, dtype) if v != v else None for v in t.reshape(-1).tolist()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", NANS)
@pytest.mark.parametrize("n", LENGTHS)
def test_nan_bits_match_torch(n, kind, dtype):
    values = line(n, nans_of(n, kind))
    shapes = [(n,)] + ([(2, n // 2)] if n % 2 == 0 and n // 2 < 32 else []) \
        + ([(n // 8, 8)] if n % 8 == 0 and n >= 16 else [])
    for shape in shapes:
        x = opd.tensor(values, dtype=getattr(opd, dtype)).reshape(shape)
        tx = torch.tensor(values, dtype=getattr(torch, dtype)).reshape(shape)
        for name, f in REDUCTIONS.items():
            ours, theirs = result_bits(f(x), dtype), result_bits(f(tx), dtype)
            assert ours == theirs, (name, shape, [hex(b) if b else b for b in ours],
                                    [hex(b) if b else b for b in theirs])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_bits_fixed_patterns(dtype):
    x = opd.tensor([1.0, -NAN, 2.0, NAN], dtype=getattr(opd, dtype))
    assert bits(x.amax().item(), dtype) == CANONICAL[dtype]
    assert bits(x.amin().item(), dtype) == CANONICAL[dtype]
    assert bits(x.max().item(), dtype) == ALL_ONES[dtype]
    assert bits(x.min().item(), dtype) == ALL_ONES[dtype]
    assert bits(x.max(0).values.item(), dtype) == bits(-NAN, dtype)  # the first NaN
    assert bits(x.min(0).values.item(), dtype) == bits(-NAN, dtype)


@pytest.mark.parametrize("values", [[1.0, -NAN, 2.0, NAN, 3.0], [1.0, NAN, 2.0, -NAN, 3.0]])
def test_nan_sign_float16(values):
    # amax/amin the canonical (positive) NaN; max()/min() and the dim forms the first NaN, as
    # torch 1.13 (the sign is what a float16 NaN's conversion to a Python float keeps).
    x = opd.tensor(values, dtype=opd.float16)
    tx = torch.tensor(values, dtype=torch.float16)
    for f in [lambda t: t.amax(), lambda t: t.amin(), lambda t: t.max(), lambda t: t.min(),
              lambda t: t.max(0).values, lambda t: t.amax(0)]:
        assert math.copysign(1.0, f(x).item()) == math.copysign(1.0, f(tx).item())


def test_amax_outer_dim_wide_rows_differ_from_torch_by_design():
    # torch 1.13's vectorized outer reduction ors an all-ones NaN into the columns it takes in
    # blocks of 32 floats and leaves the canonical one in the rest; ours writes the canonical NaN
    # in every column.
    x = opd.tensor(line(100, [(1, -1), (99, 1)]), dtype=opd.float32).reshape(2, 50)
    got = result_bits(x.amax(0), "float32")
    assert got[1] == CANONICAL["float32"] and got[49] == CANONICAL["float32"]
