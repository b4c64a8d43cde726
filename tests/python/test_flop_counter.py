"""opdispatch.utils.flop_counter.FlopCounterMode: torch 2's formulas (torch 1.13 has none), on
shapes whose counts are worked out by hand in each test."""

import pytest

import opdispatch as opd
from opdispatch.utils.flop_counter import FlopCounterMode, register_flop_formula

aten = opd.ops.aten
F = opd.nn.functional


def count(fn):
    with FlopCounterMode(display=False) as c:
        fn()
    return c.get_total_flops(), {str(k): v for k, v in c.get_flop_counts()["Global"].items()}


def test_matrix_products():
    a, b = opd.ones(2, 3), opd.ones(3, 4)
    assert count(lambda: opd.mm(a, b)) == (48, {"aten.mm": 48})  # 2 * m n k = 2 * 2 * 4 * 3
    assert count(lambda: opd.addmm(opd.ones(4), a, b)) == (48, {"aten.addmm": 48})
    batch = (opd.ones(5, 2, 3), opd.ones(5, 3, 4))
    assert count(lambda: opd.bmm(*batch)) == (240, {"aten.bmm": 240})  # 5 * 48
    # baddbmm is a composite here: counted as the bmm it runs (torch's own kernel counts 240 too).
    assert count(lambda: opd.baddbmm(opd.ones(5, 2, 4), *batch)) == (240, {"aten.bmm": 240})


def test_matmul_and_linear_count_through_their_decomposition():
    b = opd.ones(3, 4)
    assert count(lambda: opd.matmul(opd.ones(2, 3), b)) == (48, {"aten.mm": 48})
    # 5 x 2 x 3 @ 3 x 4 folds to one 10 x 3 @ 3 x 4 product.
    assert count(lambda: opd.matmul(opd.ones(5, 2, 3), b)) == (240, {"aten.mm": 240})
    assert count(lambda: opd.matmul(opd.ones(5, 2, 3), opd.ones(5, 3, 4))) == (
        240, {"aten.bmm": 240})
    # linear with a bias: addmm of (2 x 3) @ (3 x 4).
    assert count(lambda: F.linear(opd.ones(2, 3), opd.ones(4, 3), opd.ones(4))) == (
        48, {"aten.addmm": 48})


def test_convolution_forward_and_backward():
    x = opd.ones(2, 3, 8, 8, requires_grad=True)
    w = opd.ones(4, 3, 3, 3, requires_grad=True)
    # Output 2 x 4 x 6 x 6: 2 * batch 2 * 36 positions * 9 taps * 4 * 3 channels = 15552.
    assert count(lambda: F.conv2d(x, w)) == (15552, {"aten.convolution": 15552})
    # Groups: each output channel sees c_in / groups = 1 channel (w is 4 x 1 x 3 x 3).
    x4 = opd.ones(1, 4, 5, 5)
    assert count(lambda: F.conv2d(x4, opd.ones(4, 1, 3, 3), groups=4)) == (
        2 * 9 * 9 * 4 * 1, {"aten.convolution": 648})
    # Backward: the input gradient (a transposed convolution over the 6 x 6 grad_output) and
    # the weight gradient, 15552 each; no bias gradient asked for.
    total, per_op = count(lambda: F.conv2d(x, w).sum().backward())
    assert per_op == {"aten.convolution": 15552, "aten.convolution_backward": 31104}
    assert total == 46656
    # Only the input requires grad: only its gradient is counted.
    xi = opd.ones(2, 3, 8, 8, requires_grad=True)
    assert count(lambda: F.conv2d(xi, opd.ones(4, 3, 3, 3)).sum().backward())[1] == {
        "aten.convolution": 15552, "aten.convolution_backward": 15552}


def test_transposed_convolution_counts_input_positions():
    x = opd.ones(1, 4, 5, 5)
    w = opd.ones(4, 2, 3, 3)  # conv_transpose2d weight: c_in x c_out x k x k
    # torch's formula for a transposed convolution: the input's 25 positions, w read as
    # (c_out=4, c_in=2): 2 * 25 * 9 * 1 * 4 * 2.
    assert count(lambda: F.conv_transpose2d(x, w)) == (3600, {"aten.convolution": 3600})


def test_table_custom_formulas_and_refusals(capsys):
    with FlopCounterMode() as c:
        opd.mm(opd.ones(2, 3), opd.ones(3, 4))
    assert c.get_flop_counts() == {"Global": {aten.mm: 48}}
    printed = capsys.readouterr().out
    assert "Global" in printed and "aten.mm" in printed and "48" in printed

    with FlopCounterMode(display=False, custom_mapping={aten.neg: lambda s, out_shape: 7}) as c:
        opd.ones(3).neg()
    assert c.get_total_flops() == 7

    registry = {}

    @register_flop_formula(aten.abs.default, registry=registry)
    def abs_flop(shape, out_shape=None):
        return shape[0]

    assert registry == {aten.abs: abs_flop}
    with pytest.raises(NotImplementedError, match="does not track nn.Module"):
        FlopCounterMode(mods=[object()])
    # Entering again starts from zero.
    c = FlopCounterMode(display=False)
    for _ in range(2):
        with c:
            opd.mm(opd.ones(2, 2), opd.ones(2, 2))
        assert c.get_total_flops() == 16
