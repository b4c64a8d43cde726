"""The memory layout of new results, against torch 1.13 (Note [Output layout] in
plugins/common/tensor_iterator.h): elementwise results take the inputs' layout (transposed,
permuted, channels-last, sliced, expanded, broadcast pairs, 0-dim and size-1 dimensions, inputs
converted to the compute dtype), an out= tensor that is resized is laid out as a new result, and
empty_like / clone / *_like with preserve_format keep a dense input's strides or the order of a
non-dense one's. Each case runs the same code over opdispatch and torch and compares strides,
shapes, dtypes and values."""

import pytest

import opdispatch as opd

torch = pytest.importorskip("torch")


def base(lib, shape, dtype="float32"):
    """arange over `shape`, shifted to have negative values too."""
    n = 1
    for s in shape:
        n *= s
    return (lib.arange(n, dtype=getattr(lib, "float64")) - n // 2).to(getattr(lib, dtype)).reshape(shape)


def channels_last(lib, t):
    return t.contiguous(memory_format=lib.channels_last)


# name -> lib -> tensor. Float32 unless the name says otherwise.
LAYOUTS = {
    "contiguous": lambda lib: base(lib, (3, 4)),
    "transposed": lambda lib: base(lib, (4, 3)).t(),
    "row": lambda lib: base(lib, (4,)),
    "row3": lambda lib: base(lib, (3,)),
    "column": lambda lib: base(lib, (3, 1)),
    "permuted3d_201": lambda lib: base(lib, (2, 3, 4)).permute(2, 0, 1),
    "permuted3d_120": lambda lib: base(lib, (2, 3, 4)).permute(1, 2, 0),
    "permuted3d_021": lambda lib: base(lib, (2, 4, 3)).permute(0, 2, 1),
    "permuted3d_102": lambda lib: base(lib, (4, 3, 2)).permute(1, 0, 2),
    "contiguous3d": lambda lib: base(lib, (4, 2, 3)),
    "nhwc_view": lambda lib: base(lib, (2, 4, 5, 3)).permute(0, 3, 1, 2),
    "channels_last": lambda lib: channels_last(lib, base(lib, (2, 3, 4, 5))),
    "contiguous4d": lambda lib: base(lib, (2, 3, 4, 5)),
    "channels_last_c1": lambda lib: channels_last(lib, base(lib, (2, 1, 4, 5))),
    "channels_last_hw1": lambda lib: channels_last(lib, base(lib, (2, 3, 1, 1))),
    "per_channel": lambda lib: base(lib, (3, 1, 1)),
    "sliced_columns": lambda lib: base(lib, (3, 8))[:, ::2],
    "sliced_rows": lambda lib: base(lib, (6, 4))[::2],
    "sliced_transposed": lambda lib: base(lib, (8, 3)).t()[:, ::2],
    "offset_block": lambda lib: base(lib, (5, 6))[1:4, 2:6],
    "expanded_row": lambda lib: base(lib, (1, 4)).expand(3, 4),
    "expanded_column": lambda lib: base(lib, (3, 1)).expand(3, 4),
    "scalar": lambda lib: lib.tensor(1.5),
    "size1_permuted": lambda lib: base(lib, (4, 1, 3)).permute(2, 1, 0),
    "size1_transposed": lambda lib: base(lib, (1, 3, 1, 4)).transpose(0, 2),
    "size1_front": lambda lib: base(lib, (1, 4, 3)).transpose(1, 2),
    "empty_transposed": lambda lib: base(lib, (0, 3)).t(),
    "int_transposed": lambda lib: base(lib, (4, 3), "int64").t(),
    "int_expanded_row": lambda lib: base(lib, (1, 4), "int64").expand(3, 4),
    "int_sliced": lambda lib: base(lib, (3, 8), "int64")[:, ::2],
    "int_row": lambda lib: base(lib, (1, 4), "int64"),
    "double_permuted3d": lambda lib: base(lib, (2, 3, 4), "float64").permute(1, 2, 0),
}

UNARY_LAYOUTS = [n for n in LAYOUTS if n not in ("row", "row3", "column", "per_channel")]

BINARY_PAIRS = [
    ("transposed", "contiguous"),
    ("contiguous", "transposed"),
    ("transposed", "transposed"),
    ("transposed", "row"),
    ("row", "transposed"),
    ("transposed", "column"),
    ("column", "row"),
    ("transposed", "scalar"),
    ("scalar", "transposed"),
    ("permuted3d_201", "contiguous3d"),
    ("contiguous3d", "permuted3d_201"),
    ("permuted3d_201", "row3"),
    ("permuted3d_120", "permuted3d_102"),
    ("permuted3d_102", "permuted3d_120"),
    ("permuted3d_021", "row"),
    ("channels_last", "contiguous4d"),
    ("contiguous4d", "channels_last"),
    ("channels_last", "channels_last"),
    ("channels_last", "per_channel"),
    ("per_channel", "channels_last"),
    ("nhwc_view", "per_channel"),
    ("channels_last_c1", "channels_last_c1"),
    ("channels_last_hw1", "contiguous4d"),
    ("sliced_columns", "transposed"),
    ("sliced_transposed", "sliced_transposed"),
    ("offset_block", "offset_block"),
    ("expanded_row", "transposed"),
    ("expanded_column", "transposed"),
    ("expanded_row", "expanded_column"),
    ("size1_permuted", "size1_permuted"),
    ("size1_permuted", "row"),
    ("size1_transposed", "row"),
    ("size1_front", "size1_front"),
    ("empty_transposed", "empty_transposed"),
    # Inputs converted to the compute dtype count with their converted copy's layout.
    ("int_transposed", "transposed"),
    ("transposed", "int_transposed"),
    ("int_expanded_row", "transposed"),
    ("int_sliced", "transposed"),
    ("int_row", "transposed"),
    ("double_permuted3d", "permuted3d_102"),
    ("permuted3d_102", "double_permuted3d"),
]

UNARY_OPS = {
    "neg": lambda lib, x: lib.neg(x),
    "exp": lambda lib, x: lib.exp(x),
    "abs_method": lambda lib, x: x.abs(),
    "clamp": lambda lib, x: lib.clamp(x, min=-2, max=3),
    "mul_scalar": lambda lib, x: x * 2,
    "gt_scalar": lambda lib, x: x > 0,
}

BINARY_OPS = {
    "add": lambda lib, a, b: lib.add(a, b),
    "mul": lambda lib, a, b: a * b,
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=2),
    "div": lambda lib, a, b: a / b,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "lt": lambda lib, a, b: lib.lt(a, b),
    "eq": lambda lib, a, b: a == b,
    "where": lambda lib, a, b: lib.where(a > 0, a, b),
    "where_other_first": lambda lib, a, b: lib.where(b > 0, a, b),
}


def check_same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.stride() == theirs.stride(), f"strides {ours.stride()}, torch {theirs.stride()}"
    values = torch.tensor(ours.tolist(), dtype=theirs.dtype).reshape(theirs.shape)
    torch.testing.assert_close(values, theirs, equal_nan=True)


@pytest.mark.parametrize("layout", UNARY_LAYOUTS)
@pytest.mark.parametrize("op", list(UNARY_OPS))
def test_unary_results_take_the_inputs_layout_as_torch(op, layout):
    f, make = UNARY_OPS[op], LAYOUTS[layout]
    check_same(f(opd, make(opd)), f(torch, make(torch)))


@pytest.mark.parametrize("pair", BINARY_PAIRS, ids=["-".join(p) for p in BINARY_PAIRS])
@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_binary_results_take_the_inputs_layout_as_torch(op, pair):
    f, (x, y) = BINARY_OPS[op], pair
    check_same(f(opd, LAYOUTS[x](opd), LAYOUTS[y](opd)), f(torch, LAYOUTS[x](torch), LAYOUTS[y](torch)))


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("pair", BINARY_PAIRS[:24] + BINARY_PAIRS[-6:],
                         ids=["-".join(p) for p in BINARY_PAIRS[:24] + BINARY_PAIRS[-6:]])
def test_meta_results_have_the_cpu_layout(pair, device):
    x, y = pair

    def run(lib):
        a, b = LAYOUTS[x](lib), LAYOUTS[y](lib)
        if device == "meta":
            a, b = a.to("meta"), b.to("meta")
        return lib.add(a, b)

    assert run(opd).stride() == run(torch).stride()


@pytest.mark.parametrize("pair", BINARY_PAIRS[:12], ids=["-".join(p) for p in BINARY_PAIRS[:12]])
def test_an_empty_out_tensor_is_resized_with_the_inputs_layout(pair):
    x, y = pair

    def run(lib):
        out = lib.empty(0)
        result = lib.add(LAYOUTS[x](lib), LAYOUTS[y](lib), out=out)
        assert result is out
        return out

    check_same(run(opd), run(torch))


@pytest.mark.parametrize("pair", BINARY_PAIRS[:6], ids=["-".join(p) for p in BINARY_PAIRS[:6]])
def test_an_out_tensor_of_the_right_shape_keeps_its_strides(pair):
    x, y = pair

    def run(lib):
        out = lib.empty(4, 3).t()
        lib.mul(LAYOUTS[x](lib), LAYOUTS[y](lib), out=out)
        return out

    check_same(run(opd), run(torch))


@pytest.mark.parametrize("layout", UNARY_LAYOUTS)
def test_in_place_results_are_self(layout):
    def run(lib):
        x = LAYOUTS[layout](lib).clone()
        if x.dtype != lib.float32:
            return x
        assert x.neg_() is not None
        return x

    check_same(run(opd), run(torch))


LIKE = {
    "empty_like": lambda lib, x: lib.empty_like(x),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like_double": lambda lib, x: lib.ones_like(x, dtype=lib.float64),
    "full_like": lambda lib, x: lib.full_like(x, 7),
    "clone": lambda lib, x: x.clone(),
    "clone_contiguous": lambda lib, x: x.clone(memory_format=lib.contiguous_format),
    "to_double": lambda lib, x: x.to(lib.float64),
}


@pytest.mark.parametrize("layout", UNARY_LAYOUTS)
@pytest.mark.parametrize("op", list(LIKE))
def test_like_factories_preserve_the_layout_as_torch(op, layout):
    ours, theirs = LIKE[op](opd, LAYOUTS[layout](opd)), LIKE[op](torch, LAYOUTS[layout](torch))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    if op != "empty_like":
        assert ours.tolist() == theirs.tolist()
