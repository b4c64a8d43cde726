"""Scans, sorting and gather/scatter beyond the OpInfo table (tests/python/opinfo/scan_sort.py,
scatter_gather.py): which of tied elements topk returns (as torch's), the named
tuples, the dtype rules of cumsum, and gradients the table's samples do not reach."""

import pytest

import opdispatch as opd

torch = pytest.importorskip("torch", reason="compares with torch 1.13 (python3-torch)")


def to_torch(t):
    return torch.from_dlpack(t.detach().contiguous())


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int8"])
def test_topk_returns_the_tied_elements_torch_returns(dtype):
    # Which of tied elements torch's CPU topk returns follows from its algorithm
    # (Note [Sort and topk ties]): partial_sort for k * 64 <= n, else nth_element and a sort of
    # the first k - 1; both ordered by value only. Lines of few distinct values (and NaN), every
    # regime of k, sorted or not, along the last and the first dim.
    g = torch.Generator().manual_seed(0)
    floating = dtype in ("float32", "float64", "bfloat16")
    for n in (4, 17, 64, 65, 130, 1000):
        for k in sorted({1, 2, n // 64, n // 2, n - 1, n} - {0}):
            for largest in (True, False):
                for sorted_ in (True, False):
                    tx = torch.randint(0, 4, (3, n), generator=g).to(getattr(torch, dtype))
                    if floating:
                        tx[torch.rand(3, n, generator=g) < 0.1] = float("nan")
                    x = opd.from_dlpack(tx.clone())
                    for dim in (-1, 0):
                        if k > tx.shape[dim]:
                            continue
                        ours = opd.topk(x, k, dim, largest, sorted_)
                        theirs = torch.topk(tx, k, dim, largest, sorted_)
                        assert ours.indices.tolist() == theirs.indices.tolist(), (n, k, dim)
                        torch.testing.assert_close(to_torch(ours.values), theirs.values,
                                                   rtol=0, atol=0, equal_nan=True)
    assert opd.topk(opd.tensor([6.0, 6.0, -1.0, 2.0]), 2).indices.tolist() == [1, 0]


def test_sort_is_stable_without_asking_and_returns_named_tuples():
    tx = torch.randint(0, 4, (3, 500)).float()
    x = opd.from_dlpack(tx.clone())
    for descending in (False, True):
        r = opd.sort(x, descending=descending)
        assert type(r).__name__ == "sort" and r._fields == ("values", "indices")
        want = torch.sort(tx, descending=descending, stable=True)
        assert torch.equal(to_torch(r.indices), want.indices)
        assert torch.equal(to_torch(r.values), want.values)
        assert torch.equal(to_torch(opd.argsort(x, descending=descending)), want.indices)
    assert opd.topk(x, 2)._fields == ("values", "indices")


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_cumsum_promotes_integers_to_long_as_torch(dtype):
    tx = torch.tensor([[1, 0, 1], [1, 1, 0]]).to(getattr(torch, dtype))
    x = opd.from_dlpack(tx.clone()) if dtype != "bool" else opd.tensor(tx.tolist())
    for op in ("cumsum", "cumprod"):
        ours, theirs = getattr(opd, op)(x, 1), getattr(torch, op)(tx, 1)
        assert str(ours.dtype) == "opdispatch.int64" and torch.equal(to_torch(ours), theirs)
        ours = getattr(opd, op)(x, 1, dtype=opd.float64)
        assert torch.equal(to_torch(ours), getattr(torch, op)(tx, 1, dtype=torch.float64))


def test_cumsum_out_takes_its_dtype_and_in_place_keeps_selfs():
    x = opd.tensor([1.5, 2.5, 3.5])
    out = opd.empty(3, dtype=opd.int32)
    assert opd.cumsum(x, 0, out=out) is out
    assert out.tolist() == torch.cumsum(torch.tensor([1.5, 2.5, 3.5]), 0,
                                        out=torch.empty(3, dtype=torch.int32)).tolist()
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double, but got "
                                           "float instead"):
        opd.cumsum(x, 0, dtype=opd.float64, out=opd.empty(3))
    y = opd.tensor([1, 2, 3], dtype=opd.int8)
    assert opd.cumsum_(y, 0) is y and y.dtype == opd.int8 and y.tolist() == [1, 3, 6]


def test_gradients_through_sort_topk_gather_index_select_masked_fill_cummax_index_fill():
    torch.manual_seed(0)
    tx = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    x = opd.from_dlpack(tx.detach().clone()).requires_grad_()
    idx = torch.randint(0, 6, (4, 5))
    mask = torch.rand(4, 6) > 0.5
    w = torch.randn(4, 3, dtype=torch.float64)

    def run(lib, a, i, m, weights):
        s = lib.sort(a, 1, True).values[:, :3] * weights
        t = lib.topk(a, 3, 1).values * weights
        gth = lib.gather(a, 1, i).sum()
        isel = lib.index_select(a, 0, lib.tensor([3, 1, 3])).sum()
        mf = lib.masked_fill(a, m, 2.0).pow(2).sum()
        cm = lib.cummax(a, 1).values.sum() + lib.cummin(a, 0).values.sum()
        fill = lib.index_fill(a, 1, lib.tensor([0, 4]), 1.0).pow(2).sum()
        return s.sum() + t.sum() + gth + isel + mf + cm + fill

    run(torch, tx, idx, mask, w).backward()
    run(opd, x, opd.from_dlpack(idx), opd.tensor(mask.tolist()), opd.from_dlpack(w)).backward()
    assert torch.allclose(to_torch(x.grad), tx.grad)


def test_masked_fill_takes_a_uint8_mask_and_broadcasts_self_with_the_mask():
    x = opd.tensor([1.0, 2.0, 3.0])
    m = opd.tensor([[1, 0, 1], [0, 0, 0]], dtype=opd.uint8)
    r = opd.masked_fill(x, m, 0.0)
    assert r.shape == (2, 3) and r.tolist() == [[0.0, 2.0, 0.0], [1.0, 2.0, 3.0]]
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        opd.masked_fill_(x, m, 0.0)


def test_fills_of_an_expanded_self_warn_as_torch():
    # torch 1.13 fills aliased elements (all get the same value) with a deprecation warning.
    for lib in (opd, torch):
        x = lib.zeros(1, 4).expand(3, 4)
        with pytest.warns(UserWarning, match=r"^Use of masked_fill_ on expanded tensors is "
                                             r"deprecated\. Please clone\(\) the tensor"):
            x.masked_fill_(lib.ones(3, 4, dtype=lib.bool), 2.0)
        assert x.tolist() == [[2.0] * 4] * 3
        y = lib.zeros(4, 1).expand(4, 3)
        with pytest.warns(UserWarning, match=r"^Use of index_fill_ on expanded tensors"):
            y.index_fill_(1, lib.tensor(0), 3.0)
        assert y.tolist() == [[3.0] * 3] * 4


def test_take_along_dim_without_dim_views_as_torch():
    for lib in (opd, torch):
        x = lib.arange(20.0).reshape(4, 5).t()
        with pytest.raises(RuntimeError, match=r"^view size is not compatible"):
            lib.take_along_dim(x, lib.tensor([0, 3]))
        assert lib.take_along_dim(x.contiguous(), lib.tensor([0, 3])).tolist() == [0.0, 15.0]
