"""The short paths of a copy into a fresh tensor (Note [Contiguous copy] in
plugins/cpu/copy_fill_kernels.cpp, empty_like in plugins/composite/factory_composites.cpp),
against torch 1.13: a contiguous source converted into a contiguous result of every dtype, a
size large enough to be split across the pool, size-1 dimensions with free strides, empty
tensors with any strides (contiguous, so empty_like keeps them, as torch), overlapping memory
(which must still take the TensorIterator and its overlap errors), broadcasting and strided
sources (not short), and the version counters."""

import pytest

import opdispatch as opd

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


def values(lib, n, dtype):
    """n values with fractions, negatives and zeros, of `dtype` (complex ones with both parts)."""
    t = (lib.arange(n, dtype=lib.float64) - n // 2) * 0.75
    if dtype.startswith("complex"):
        t = t * (1 - 0.5j)
    return t.to(getattr(lib, dtype))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_contiguous_conversion_of_every_pair(src, dst):
    o = values(opd, 24, src).reshape(2, 3, 4).to(getattr(opd, dst))
    t = values(torch, 24, src).reshape(2, 3, 4).to(getattr(torch, dst))
    assert o.dtype == getattr(opd, dst)
    same_values(o, t)


def same_values(o, t):
    assert tuple(o.shape) == tuple(t.shape)
    assert tuple(o.stride()) == tuple(t.stride())
    ot = torch.from_dlpack(o.to(opd.uint8)).bool() if o.dtype == opd.bool else torch.from_dlpack(o)
    assert ot.dtype == t.dtype
    assert torch.equal(ot, t)


@pytest.mark.parametrize("dst", ["int32", "float64", "float16", "bool"])
def test_large_copy_split_across_the_pool(dst):
    n = 3 * 65536 + 7  # several grains
    o = values(opd, n, "float32").to(getattr(opd, dst))
    t = values(torch, n, "float32").to(getattr(torch, dst))
    same_values(o, t)
    same_values(values(opd, n, "float32").clone(), values(torch, n, "float32").clone())


def test_size_one_dimensions_keep_their_strides():
    ox = opd.empty_strided((2, 1, 3), (3, 7, 1)).copy_(opd.arange(6.).reshape(2, 1, 3))
    tx = torch.empty_strided((2, 1, 3), (3, 7, 1)).copy_(torch.arange(6.).reshape(2, 1, 3))
    for f in (lambda x: x.int(), lambda x: x.clone(), lambda x: x.double()):
        same_values(f(ox), f(tx))
    assert opd.empty_like(ox).stride() == torch.empty_like(tx).stride()


@pytest.mark.parametrize("shape,stride", [((2, 0, 3), (1, 1, 1)), ((0,), (5,)),
                                          ((3, 0), (0, 2))])
def test_empty_tensors_keep_their_strides(shape, stride):
    o = opd.empty_strided(shape, stride)
    t = torch.empty_strided(shape, stride)
    for f in ("empty_like", "zeros_like", "clone"):
        assert getattr(opd, f)(o).stride() == getattr(torch, f)(t).stride(), f
    assert o.int().stride() == t.int().stride()
    assert o.to(opd.float64).shape == t.to(torch.float64).shape


def test_overlapping_memory_still_checked():
    o = opd.arange(8.)
    t = torch.arange(8.)
    with pytest.raises(RuntimeError) as oe:
        o[1:].copy_(o[:-1])
    with pytest.raises(RuntimeError) as te:
        t[1:].copy_(t[:-1])
    assert str(oe.value) == str(te.value)
    # The same memory with the same layout is no copy at all.
    o.copy_(o)
    t.copy_(t)
    same_values(o, t)


def test_broadcast_and_strided_sources_are_not_short():
    o = opd.zeros(3, 4, dtype=opd.int64)
    t = torch.zeros(3, 4, dtype=torch.int64)
    o.copy_(opd.arange(4.) + 0.5)
    t.copy_(torch.arange(4.) + 0.5)
    same_values(o, t)
    o.copy_(opd.arange(12.).reshape(4, 3).t())
    t.copy_(torch.arange(12.).reshape(4, 3).t())
    same_values(o, t)
    # Same shape, contiguous source, transposed destination.
    od = opd.zeros(4, 3).t()
    td = torch.zeros(4, 3).t()
    od.copy_(opd.arange(12, dtype=opd.int32).reshape(3, 4))
    td.copy_(torch.arange(12, dtype=torch.int32).reshape(3, 4))
    same_values(od, td)


def test_versions():
    for lib in (opd, torch):
        x = lib.arange(6.).reshape(2, 3)
        y = x.int()
        z = x.clone()
        assert (y._version, z._version, x._version) == (0, 0, 0)
        y.copy_(x)
        assert y._version == 1
        y.copy_(x.double())
        assert y._version == 2
