"""opdispatch.Tensor and the tensor API (issue 14, section 2): construction, factories, dtypes
and devices, repr, operators with torch's promotion, indexing as views, properties, methods
found from schemas and gradient mode, each compared with torch 1.13 where torch has it."""

import re
import threading

import numpy as np
import pytest
import torch

import opdispatch as opd
from opdispatch.testing import override_kernel


def in_both(expr):
    """``expr`` evaluated with ``lib`` bound to opdispatch, then to torch."""
    return eval(expr, {"lib": opd}), eval(expr, {"lib": torch})


def torch_text(s):
    return s.replace("torch.", "opdispatch.")


def flat(values):
    """A nested list of numbers (tolist()) as one flat list, for pytest.approx."""
    if not isinstance(values, list):
        return [values]
    return [v for item in values for v in flat(item)]


# --- construction ---------------------------------------------------------------------------

@pytest.mark.parametrize("data, dtype", [
    ([True, False], opd.bool), ([1, 2], opd.int64), ([1, 2.5], opd.float32),
    ([True, 2.5], opd.float32), ([1 + 2j, 3], opd.complex64), (3, opd.int64), (3.5, opd.float32),
])
def test_tensor_infers_the_dtype_as_torch(data, dtype):
    t = opd.tensor(data)
    assert t.dtype is dtype
    assert repr(t.dtype) == torch_text(repr(torch.tensor(data).dtype))
    assert repr(t) == torch_text(repr(torch.tensor(data)))


def test_tensor_of_a_ragged_list_is_torchs_value_error():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)$"):
        opd.tensor([[1, 2], [3]])


def test_tensor_with_dtype_and_requires_grad():
    t = opd.tensor([1, 2], dtype=opd.float64, requires_grad=True)
    assert t.dtype is opd.float64 and t.requires_grad and t.is_leaf and t.grad_fn is None
    assert t.tolist() == [1.0, 2.0]


def test_an_integer_tensor_cannot_require_grad_in_torchs_words():
    with pytest.raises(RuntimeError,
                       match="^Only Tensors of floating point and complex dtype can require "
                             "gradients$"):
        opd.tensor([1, 2], requires_grad=True)


def test_as_tensor_returns_the_same_tensor_and_converts_only_when_asked():
    x = opd.tensor([1.0, 2.0])
    assert opd.as_tensor(x) is x
    y = opd.as_tensor(x, dtype=opd.float64)
    assert y.dtype is opd.float64 and y is not x
    z = opd.as_tensor([1, 2])
    assert z.dtype is opd.int64 and z.tolist() == [1, 2]


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
def test_size_factories_take_varargs_or_a_sequence_dtype_device_requires_grad(name):
    f = getattr(opd, name)
    assert f(2, 3).shape == (2, 3) and f((2, 3)).shape == (2, 3) and f([4]).shape == (4,)
    assert f(2, 3).dtype is opd.float32 and f(2).device == opd.device("cpu")
    assert f(2, dtype=opd.float64).dtype is opd.float64
    m = f(2, 3, device="meta")
    assert m.device == opd.device("meta") and m.is_meta and m.shape == (2, 3)
    g = f(2, requires_grad=True)
    assert g.requires_grad and g.is_leaf


def test_zeros_ones_full_and_arange_values_and_dtypes_match_torch():
    for expr in ["lib.zeros(2, 3)", "lib.ones((2, 3), dtype=lib.int32)", "lib.full((2, 3), 7)",
                 "lib.full((2, 3), 7.)", "lib.full((2,), True)",
                 "lib.full((2,), 7, dtype=lib.float64)", "lib.arange(5)", "lib.arange(1, 4)",
                 "lib.arange(0, 1, 0.25)", "lib.arange(5.)", "lib.arange(5, dtype=lib.float32)"]:
        ours, theirs = in_both(expr)
        assert ours.tolist() == theirs.tolist(), expr
        assert repr(ours) == torch_text(repr(theirs)), expr


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "rand_like",
                                  "randn_like"])
def test_like_factories_follow_the_input_unless_told(name):
    f = getattr(opd, name)
    x = opd.tensor([[1.0, 2.0, 3.0]], dtype=opd.float64)
    assert f(x).shape == (1, 3) and f(x).dtype is opd.float64
    assert f(x, dtype=opd.float32).dtype is opd.float32
    assert f(x, device="meta").device == opd.device("meta")
    assert f(x, requires_grad=True).requires_grad and not f(x).requires_grad
    assert opd.full_like(x, 3).tolist() == [[3.0, 3.0, 3.0]]
    assert opd.ones_like(x, dtype=opd.int64).tolist() == [[1, 1, 1]]


def test_factories_inside_a_meta_device_block_make_meta_tensors():
    with opd.device("meta"):
        made = {"tensor": opd.tensor([1.0]), "zeros": opd.zeros(2, 3), "ones": opd.ones(2),
                "empty": opd.empty(2), "full": opd.full((2,), 1.0), "arange": opd.arange(3),
                "rand": opd.rand(2)}
    assert {k: str(v.device) for k, v in made.items()} == {k: "meta" for k in made}
    assert opd.zeros(2).device == opd.device("cpu")


@pytest.mark.parametrize("expr", [
    "lib.empty(2)", "lib.empty_strided((2, 3), (1, 2))", "lib.zeros(2)", "lib.ones(2)",
    "lib.ones(2, dtype=lib.int64)", "lib.full((2,), 3.)", "lib.full((2,), True)",
    "lib.scalar_tensor(2.)", "lib.arange(3)", "lib.arange(0., 1, 0.25)", "lib.rand(2)",
    "lib.randn(2)", "lib.empty_like(x)", "lib.zeros_like(x)", "lib.ones_like(x)",
    "lib.full_like(x, 2)", "lib.rand_like(x)", "lib.randn_like(x)", "lib.tensor([1., 2])",
    "lib.tensor(3)", "lib.tensor([1, 2], dtype=lib.float64)", "lib.tensor(np.ones(2))",
    "lib.tensor(np.ones(2), dtype=lib.float32)", "lib.as_tensor([1., 2])",
    "lib.from_numpy(np.ones(2))", "lib.from_dlpack(np.ones(2))", "lib.ones(2, requires_grad=True)",
    "lib.zeros(2, device='meta')", "lib.ones(2, device='meta')", "lib.full((2,), 1., device='meta')",
    "lib.zeros_like(x, device='meta')", "x.clone()", "x.to(lib.float64)", "x.t().contiguous()",
    "x.detach()", "x + x",
])
def test_new_tensors_start_at_version_zero_as_torch(expr):
    # ones and full were at 1: the fill_ that made them counted as an in-place write.
    ours = eval(expr, {"lib": opd, "np": np, "x": opd.ones(2, 3)})
    theirs = eval(expr, {"lib": torch, "np": np, "x": torch.ones(2, 3)})
    assert ours._version == theirs._version == 0
    if not ours.requires_grad:
        ours.zero_()
        theirs.zero_()
        assert ours._version == theirs._version == 1


def test_manual_seed_makes_rand_and_randn_reproducible():
    opd.manual_seed(3)
    a, b = opd.rand(5).tolist(), opd.randn(2, 2).tolist()
    opd.manual_seed(3)
    assert opd.rand(5).tolist() == a and opd.randn(2, 2).tolist() == b
    opd.manual_seed(4)
    assert opd.rand(5).tolist() != a
    assert all(0 <= v < 1 for v in opd.rand(1000).tolist())


def test_requires_grad_takes_a_bool_only_with_torchs_errors():
    x, tx = opd.zeros(2), torch.zeros(2)
    for value in ["a", 1, np.bool_(True), None]:
        with pytest.raises(RuntimeError) as theirs:
            tx.requires_grad = value
        with pytest.raises(RuntimeError, match="^" + re.escape(str(theirs.value)) + "$"):
            x.requires_grad = value
        with pytest.raises(TypeError) as theirs:
            tx.requires_grad_(value)
        with pytest.raises(TypeError, match="^" + re.escape(str(theirs.value)) + "$"):
            x.requires_grad_(value)
    assert not x.requires_grad
    x.requires_grad = True
    assert x.requires_grad and x.requires_grad_(False) is x and not x.requires_grad
    assert x.requires_grad_().requires_grad


def test_manual_seed_takes_torchs_range_and_wraps_negative_seeds():
    # torch.manual_seed: -2**63 .. 2**64 - 1, a negative seed taken modulo 2**64.
    for seed, same in [(-1, 2**64 - 1), (-2**63, 2**63), (1.5, 1)]:
        opd.manual_seed(seed)
        a = opd.rand(4).tolist()
        opd.manual_seed(same)
        assert opd.rand(4).tolist() == a, seed
        torch.manual_seed(seed)  # torch takes the same seeds
    for seed in [2**64, -2**63 - 1, 2**70]:
        with pytest.raises(RuntimeError) as theirs:
            torch.manual_seed(seed)
        with pytest.raises(RuntimeError, match="^" + re.escape(str(theirs.value)) + "$"):
            opd.manual_seed(seed)
    with pytest.raises(ValueError, match=r"^invalid literal for int\(\) with base 10: 'a'$"):
        opd.manual_seed("a")
    torch.manual_seed(0)


# --- dtypes, devices, Size ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                  "bfloat16", "float32", "float64", "complex64", "complex128",
                                  "float", "double", "half", "short", "int", "long", "cfloat",
                                  "cdouble"])
def test_dtypes_and_torchs_aliases(name):
    assert repr(getattr(opd, name)) == torch_text(repr(getattr(torch, name)))
    assert isinstance(getattr(opd, name), opd.dtype)


def test_aliases_are_the_same_objects():
    assert opd.float is opd.float32 and opd.double is opd.float64 and opd.long is opd.int64
    assert opd.int is opd.int32 and opd.half is opd.float16 and opd.cfloat is opd.complex64


def test_device_repr_str_eq_and_fields():
    assert repr(opd.device("cpu")) == "device(type='cpu')"
    assert repr(opd.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert repr(opd.device("meta")) == "device(type='meta')"
    assert str(opd.device("cuda", 1)) == "cuda:1" and str(opd.device("cpu")) == "cpu"
    assert opd.device("cuda:0") == opd.device("cuda", 0)
    assert opd.device("cuda:0") != opd.device("cuda:1")
    assert opd.device("cpu") != "cpu"
    assert opd.device("cuda:0").index == 0 and opd.device("cpu").index is None
    assert opd.device("meta").type == "meta"
    with pytest.raises((RuntimeError, ValueError),
                       match="^type \\(string\\) must not include an index because index was "
                             "passed explicitly: cuda:0$"):
        opd.device("cuda:0", 1)


def test_device_indices_as_torch():
    # An int alone is a CUDA index; an index is narrowed to 8 bits as torch 1.13 narrows it.
    for args in [(0,), (3,), ("cuda", 300), ("cuda", 256), ("cpu", 0)]:
        assert repr(opd.device(*args)) == repr(torch.device(*args)).replace("torch.", ""), args
    for args, error in [((-1,), RuntimeError), (("cuda", -1), RuntimeError),
                        ((2**70,), RuntimeError), (("cuda", 2**63), RuntimeError),
                        (("cpu", True), TypeError), (("cuda", "a"), TypeError)]:
        with pytest.raises(error) as theirs:
            torch.device(*args)
        # Ours names the value that overflows after torch's words.
        with pytest.raises(error, match="^" + re.escape(str(theirs.value))):
            opd.device(*args)


def test_size_is_a_tuple_printed_as_torch():
    s = opd.zeros(2, 3).shape
    assert isinstance(s, tuple) and isinstance(s, opd.Size) and s == (2, 3)
    assert repr(s) == "opdispatch.Size([2, 3])" and repr(opd.Size([])) == "opdispatch.Size([])"
    assert repr(s[1:]) == "opdispatch.Size([3])" and s.numel() == 6


# --- repr -----------------------------------------------------------------------------------

G = "lib.tensor([[1., 2.]], requires_grad=True)"
REPRS = [
    "lib.tensor([[1., 2., 3.], [4., 5., 6.]])", "lib.tensor([1, 2])", "lib.tensor(3.5)",
    "lib.tensor([True, False])", "lib.tensor([1, 2], dtype=lib.int32)",
    "lib.tensor([1, 2], dtype=lib.float64)", "lib.tensor([1.5, 2], dtype=lib.complex64)",
    "lib.tensor([1, 2], dtype=lib.complex128)", "lib.tensor([[1e10, 1.]])",
    "lib.tensor([1.123456, 2.])", "lib.tensor([float('nan'), float('inf'), -1.])",
    "lib.empty(0)", "lib.empty(0, 3)", "lib.ones(1000)", "lib.zeros(2, dtype=lib.bfloat16)",
    G, "lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)",
    G + " + lib.tensor([[1., 1.]])", G + " + 1", G + " * 2", G + ".relu()", f"({G} * 2).sum()",
    "lib.tensor([[1., 2.]]).max(1)", "lib.zeros(2, 3, device='meta')",
    "lib.tensor([[1, 2], [3, 4]], device='meta')", "lib.tensor(2., device='meta')",
    "lib.empty(2, 0, device='meta')", "lib.tensor([1., 2.], device='meta', requires_grad=True)",
]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_is_torchs(expr):
    ours, theirs = in_both(expr)
    assert repr(ours) == torch_text(repr(theirs))


# --- operators ------------------------------------------------------------------------------

def operands(lib):
    return dict(i=lib.tensor([1, 2, 3]), i32=lib.tensor([1, 2, 3], dtype=lib.int32),
                f=lib.tensor([1.0, 2.0, 4.0]), d=lib.tensor([1.0, 2.0], dtype=lib.float64),
                u=lib.tensor([1, 2], dtype=lib.uint8), b=lib.tensor([True, False]),
                m=lib.tensor([[1.0, 2.0], [3.0, 4.0]]))


@pytest.mark.parametrize("expr", [
    "i + f", "i - f", "f * i", "f / i", "i / i", "f ** 2", "i ** 2", "2 ** i", "2.0 ** i",
    "2 - i", "2.5 * i", "i * 2.5", "i + 2.5", "2 / i", "i32 + 2", "2 * i32", "i32 * 2.5",
    "i32 + i", "d + 1", "u - 1", "1 - u", "b + 1", "b * 2.5", "True + i", "b + True",
    "i ** 0.5", "m @ m", "i @ i", "-i", "-u", "f == 2", "i >= 2", "1 < i", "f != f", "i < 2.5",
    "i <= i", "f > 1",
])
def test_operator_dtypes_and_values_match_torch(expr):
    ours = eval(expr, operands(opd))
    theirs = eval(expr, operands(torch))
    assert repr(ours.dtype) == torch_text(repr(theirs.dtype))
    assert ours.shape == tuple(theirs.shape)
    assert flat(ours.tolist()) == pytest.approx(flat(theirs.tolist()))


@pytest.mark.parametrize("op, delta", [("+=", 1), ("-=", 2), ("*=", 3), ("/=", 2)])
def test_inplace_operators_keep_the_object_and_bump_the_version(op, delta):
    x, y = opd.ones(2, 3), opd.ones(3)
    before_id, before_version = id(x), x._version
    exec(f"x {op} {delta}\ny {op} opd.full((3,), 2.)", {"opd": opd}, ns := {"x": x, "y": y})
    assert id(ns["x"]) == before_id and ns["y"] is y
    assert x._version > before_version
    assert x.tolist() == [[eval(f"1.0 {op[0]} {delta}")] * 3] * 2


@pytest.mark.parametrize("expr, symbol, other", [
    ("x + 'a'", "+", "str"), ("x - None", "-", "NoneType"), ("x * None", "*", "NoneType"),
    ("x / object()", "/", "object"), ("x @ 2", "@", "int"), ("x ** 'a'", "** or pow()", "str"),
])
def test_unsupported_operands_return_not_implemented(expr, symbol, other):
    x = opd.ones(2)
    with pytest.raises(TypeError, match=rf"^unsupported operand type\(s\) for {re.escape(symbol)}"
                                        rf": '(opdispatch\._C\.)?Tensor' and '{other}'$"):
        eval(expr, {"x": x})
    assert x.__add__("a") is NotImplemented and x.__lt__(None) is NotImplemented
    assert (x == "a") is False and (x != None) is True  # noqa: E711


@pytest.mark.parametrize("expr", [
    "np.float32(2) * i", "i + np.int64(3)", "np.bool_(True) * f", "f - np.float64(0.5)",
    "i32 * np.float16(2)", "np.int8(2) - u", "np.uint8(3) / f",
])
def test_numpy_scalars_are_numbers_as_in_torch(expr):
    ours = eval(expr, {**operands(opd), "np": np})
    theirs = eval(expr, {**operands(torch), "np": np})
    assert repr(ours.dtype) == torch_text(repr(theirs.dtype))
    assert flat(ours.tolist()) == pytest.approx(flat(theirs.tolist()))


def test_a_numpy_bool_is_a_bool():
    # torch 1.13 takes np.bool_ as a float (a bool tensor times np.bool_(True) is float32); it
    # is Python's bool here, so the result is what `b * True` gives.
    b = opd.tensor([True, False])
    assert (b * np.bool_(True)).dtype == (b * True).dtype == opd.bool
    assert (b * np.bool_(True)).tolist() == [True, False]


def test_numpy_zero_d_arrays_are_numbers_and_other_arrays_are_numpys():
    x = opd.tensor([1.0, 2.0])
    for a in (np.array(2.5), np.array(3), np.array(True)):
        ours, theirs = x + a, torch.tensor([1.0, 2.0]) + a
        assert type(ours) is opd.Tensor and ours.tolist() == theirs.tolist()
        assert repr(ours.dtype) == torch_text(repr(theirs.dtype))
    assert type(x * np.ones(2)) is np.ndarray  # numpy's __rmul__ answers


def test_numpy_numbers_as_arguments_and_what_is_refused():
    x = opd.tensor([1.0, 2.0])
    # longdouble's item() stays numpy's: taken in double precision.
    assert opd.ops.aten.add.Tensor(x, x, alpha=np.longdouble(2.5)).tolist() == [3.5, 7.0]
    assert (x + np.longdouble(2.5)).tolist() == [3.5, 4.5]
    # As torch's arguments: a datetime, a masked constant or an array is not a number.
    for value, name in ((np.timedelta64(3), "numpy.timedelta64"), (np.ma.masked, "MaskedConstant"),
                        (np.array(2.5), "numpy.ndarray")):
        with pytest.raises(TypeError, match=f"^opdispatch: cannot pass a {name} to an operator$"):
            opd.ops.aten.add.Tensor(x, x, alpha=value)


def test_an_operand_whose_class_lookup_raises_raises_that_error_and_leaves_none_pending():
    class Evil:
        @property
        def __class__(self):
            raise ValueError("class getter")

    x = opd.tensor([1.0, 2.0])
    with pytest.raises((ValueError, TypeError)) as info:
        opd.ops.aten.add.Tensor(x, x, alpha=Evil())
    assert not isinstance(info.value, SystemError)
    assert (x + 1).tolist() == [2.0, 3.0]  # no error left pending for the next call


def test_objects_that_only_look_like_numpy_scalars_get_their_own_reflected_operator():
    # A dtype attribute alone makes nothing a number: the other operand's __radd__ answers (as
    # with torch), and nothing it raises while being looked at is left pending.
    class BadBool:
        dtype = np.dtype(bool)

        def __bool__(self):
            raise ValueError("ambiguous")

        def __radd__(self, other):
            return "BadBool.__radd__"

    class LooksFloat:
        dtype = np.dtype("float64")

        def __radd__(self, other):
            return "LooksFloat.__radd__"

    x = opd.tensor([1.0, 2.0])
    assert x + BadBool() == "BadBool.__radd__" and x + LooksFloat() == "LooksFloat.__radd__"
    y = x
    y += BadBool()
    assert y == "BadBool.__radd__" and x.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="^opdispatch: cannot pass a LooksFloat to an operator$"):
        opd.add(x, LooksFloat())


def test_number_slots_serve_the_dunders_and_raise_torchs_errors():
    # Note [Type slots]: + - * / and their in-place forms are the type's slots; the dunders are
    # CPython's descriptors of them.
    assert type(opd.Tensor.__add__).__name__ == "wrapper_descriptor"
    assert type(opd.ops.OpOverload.__call__).__name__ == "wrapper_descriptor"
    x = opd.tensor([1.0, 2.0])
    assert x.__add__(1).tolist() == [2.0, 3.0] and x.__radd__(1).tolist() == [2.0, 3.0]
    assert x.__rsub__(1).tolist() == [0.0, -1.0] and x.__rtruediv__(2).tolist() == [2.0, 1.0]
    assert x.__rmul__(x).tolist() == [1.0, 4.0] and x.__rsub__(x).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(2\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 0$"):
        x - opd.ones(3)
    error = ValueError("bad add")

    def kernel(self, other, *, alpha):
        raise error

    with override_kernel("aten::add.Tensor", "CPU", kernel):
        with pytest.raises(ValueError) as info:
            x + x
        assert info.value is error
    with override_kernel("aten::add_.Tensor", "CPU", kernel):
        with pytest.raises(ValueError) as info:
            x += 1
        assert info.value is error
    assert (x + x).tolist() == [2.0, 4.0]


# --- Python numbers, len, iteration ---------------------------------------------------------

def test_one_element_conversions():
    assert bool(opd.tensor([1])) is True and bool(opd.tensor(0.0)) is False
    assert int(opd.tensor([3.7])) == 3 and float(opd.tensor(2)) == 2.0
    assert opd.tensor(3.0).item() == 3.0 and isinstance(opd.tensor(3).item(), int)


def test_complex_elements_convert_to_python_complex():
    t = opd.tensor([1 + 2j, 3])
    assert t.tolist() == [1 + 2j, 3 + 0j]
    assert t[0].item() == 1 + 2j and complex(t[1]) == 3 + 0j
    assert opd.tensor(1 + 2j).tolist() == 1 + 2j


def test_bool_of_many_elements_is_ambiguous_in_torchs_words():
    with pytest.raises(RuntimeError,
                       match="^Boolean value of Tensor with more than one value is ambiguous$"):
        bool(opd.ones(2))
    with pytest.raises(RuntimeError, match="^Boolean value of Tensor with no values is ambiguous$"):
        bool(opd.ones(0))


@pytest.mark.parametrize("convert", [float, int, lambda t: t.item()])
def test_number_of_many_elements_is_torchs_value_error(convert):
    with pytest.raises(ValueError,
                       match="^only one element tensors can be converted to Python scalars$"):
        convert(opd.ones(2))


def test_len_and_iteration():
    x = opd.tensor([[1, 2], [3, 4], [5, 6]])
    assert len(x) == 3
    assert [r.tolist() for r in x] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError, match=r"^len\(\) of a 0-d tensor$"):
        len(opd.tensor(1.0))
    with pytest.raises(TypeError, match="^iteration over a 0-d tensor$"):
        iter(opd.tensor(1.0))


# --- indexing -------------------------------------------------------------------------------

def test_basic_indexing_matches_torch():
    for expr in ["x[0]", "x[:, 1:3]", "x[..., None]", "x[-1]", "x[:, -1]", "x[1, 2]",
                 "x[None, :, 0]", "x[::2]", "x[0, ...]"]:
        ours = eval(expr, {"x": opd.arange(6.0).reshape([2, 3])})
        theirs = eval(expr, {"x": torch.arange(6.0).reshape([2, 3])})
        assert ours.shape == tuple(theirs.shape), expr
        assert ours.stride() == theirs.stride(), expr
        assert ours.tolist() == theirs.tolist(), expr


@pytest.mark.parametrize("expr, text", [
    ("x[2]", "index 2 is out of bounds for dimension 0 with size 2"),
    ("x[-3]", "index -3 is out of bounds for dimension 0 with size 2"),
    ("x[:, -4]", "index -4 is out of bounds for dimension 1 with size 3"),
    ("x[0, 5]", "index 5 is out of bounds for dimension 1 with size 3"),
    ("x[0, 0, 0]", "too many indices for tensor of dimension 2"),
])
def test_out_of_range_indices_are_torchs_index_errors(expr, text):
    for lib in (torch, opd):
        with pytest.raises(IndexError, match=f"^{text}$"):
            eval(expr, {"x": lib.zeros(2, 3)})


@pytest.mark.parametrize("expr, value, where", [
    ("x[2**63]", "9223372036854775808", "the index of dimension 0"),
    ("x[-2**63 - 1]", "-9223372036854775809", "the index of dimension 0"),
    ("x[0, 2**70]", "1180591620717411303424", "the index of dimension 1"),
    ("x[np.uint64(2**64 - 1)]", "18446744073709551615", "the index of dimension 0"),
    ("x.__setitem__(2**63, 1)", "9223372036854775808", "the index of dimension 0"),
    ("x.__setitem__(0, 2**70)", "1180591620717411303424", "the value assigned"),
    ("x.__setitem__(0, np.uint64(2**64 - 1))", "18446744073709551615", "the value assigned"),
    ("x.size(2**63)", "9223372036854775808", "size(), argument 'dim'"),
    ("x.stride(-2**70)", "-1180591620717411303424", "stride(), argument 'dim'"),
    ("opd.tensor([1, 2**70])", "1180591620717411303424", None),
])
def test_an_int_outside_int64_is_torchs_overflow_error_naming_the_value(expr, value, where):
    # torch 1.13: RuntimeError "Overflow when unpacking long"; the value and where it was added.
    text = f"^Overflow when unpacking long: {value} does not fit in int64"
    text += rf" \({re.escape(where)}\)$" if where else "$"
    with pytest.raises(RuntimeError, match=text):
        eval(expr, {"x": opd.zeros(2, 3), "opd": opd, "np": np})
    with pytest.raises(RuntimeError, match="^Overflow when unpacking long"):
        eval(expr, {"x": torch.zeros(2, 3), "opd": torch, "np": np})


def test_size_and_stride_refuse_a_dim_that_is_not_an_int():
    x = opd.zeros(2, 3)
    assert x.size(-1) == 3 and x.stride(np.int64(0)) == 3
    with pytest.raises(TypeError, match=r"^size\(\): argument 'dim' \(position 1\) must be int, "
                                        r"not str$"):
        x.size("a")
    with pytest.raises(TypeError, match=r"^stride\(\): argument 'dim' \(position 1\) must be "
                                        r"int, not float$"):
        x.stride(1.0)


def test_views_share_storage_and_assignment_is_seen_in_the_base():
    x = opd.zeros(2, 3)
    row = x[0]
    assert row.data_ptr() == x.data_ptr()
    assert x[:, 1].data_ptr() == x.data_ptr() + x.element_size()
    v0 = x._version
    x[0] = 1
    assert x.tolist() == [[1, 1, 1], [0, 0, 0]] and row.tolist() == [1, 1, 1]
    assert x._version > v0 and row._version == x._version
    x[:, 1:3] = opd.tensor([7.0, 8.0])
    x[1, 2] = 9
    col = x[:, 1]
    col[0] = 100
    assert x.tolist() == [[1, 100, 8], [0, 7, 9]]
    with pytest.raises(TypeError, match="^can't assign a str to a"):
        x[0] = "a"


def test_inplace_refusals_are_torchs_errors():
    i = opd.tensor([1, 2])
    with pytest.raises(RuntimeError,
                       match="^result type Float can't be cast to the desired output type Long$"):
        i /= 2
    y = opd.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation.$"):
        y[0] = 1
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used "
                                           "in an in-place operation.$"):
        y += 1


# --- properties and methods -----------------------------------------------------------------

def test_properties_and_metadata():
    x = opd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3) and x.size() == (2, 3) and x.size(1) == 3
    assert repr(x.size()) == "opdispatch.Size([2, 3])"
    assert x.dtype is opd.float32 and x.device == opd.device("cpu") and x.ndim == 2
    assert x.stride() == (3, 1) and x.stride(0) == 3 and x.numel() == 6
    assert x.requires_grad is False and x.grad is None and x.grad_fn is None and x.is_leaf
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    t, c = x.T, x.T.contiguous()
    assert t.stride() == (1, 3) and not t.is_contiguous()
    assert c.stride() == (2, 1) and c.is_contiguous() and c.tolist() == t.tolist()


def test_detach_and_backward():
    y = opd.tensor([[1.0, 2.0]], requires_grad=True) + opd.tensor([[1.0, 1.0]])
    assert repr(y) == "tensor([[2., 3.]], grad_fn=<AddBackward0>)"
    assert y.grad_fn.name() == "AddBackward0" and not y.is_leaf and y.requires_grad
    x = opd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "SumBackward0"
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.data_ptr() == x.data_ptr()
    q = opd.tensor([1.0, 2.0], requires_grad=True)
    (q * 3).backward(opd.tensor([1.0, 1.0]))
    assert q.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar "
                                           "outputs$"):
        (q * 2).backward()
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and "
                                           "does not have a grad_fn$"):
        opd.tensor([1.0]).sum().backward()


def test_methods_from_schemas_and_unknown_attributes():
    x = opd.tensor([[-1.0, 2.0, 3.0], [4.0, -5.0, 6.0]])
    tx = torch.tensor(x.tolist())
    assert x.clamp(min=0).tolist() == tx.clamp(min=0).tolist()
    assert flat(x.softmax(1).tolist()) == pytest.approx(flat(tx.softmax(1).tolist()))
    assert x.relu().tolist() == tx.relu().tolist()
    r = x.max(1)
    assert type(r).__module__ == "opdispatch.return_types" and type(r).__name__ == "max"
    assert type(r) is opd.return_types.max and isinstance(r, tuple)
    assert r.values.tolist() == [3.0, 6.0] and r.indices.tolist() == [2, 2]
    values, indices = r
    assert values.tolist() == r[0].tolist() and indices.dtype is opd.int64
    assert x.relu.__name__ == x.relu.__name__ == "relu" and type(x.relu).__name__ == "method"
    with pytest.raises(AttributeError, match="^'Tensor' object has no attribute 'nope'$"):
        x.nope
    with pytest.raises(AttributeError, match="^'Tensor' object has no attribute '_nope'$"):
        x._nope


def test_methods_take_sizes_as_varargs_as_torch():
    x = opd.arange(6.0)
    assert x.reshape(2, 3).shape == (2, 3)
    assert x.view(3, 2).shape == (3, 2)


# --- gradient mode --------------------------------------------------------------------------

def test_no_grad_enable_grad_and_set_grad_enabled_blocks():
    x = opd.tensor([1.0], requires_grad=True)
    with opd.no_grad():
        assert not opd.is_grad_enabled() and not (x * 2).requires_grad
        with opd.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert opd.is_grad_enabled() and (x * 2).requires_grad
    with opd.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    opd.set_grad_enabled(False)
    try:
        assert not opd.is_grad_enabled()
    finally:
        opd.set_grad_enabled(True)
    assert opd.is_grad_enabled()


def test_grad_modes_as_decorators():
    x = opd.tensor([1.0], requires_grad=True)

    @opd.no_grad()
    def off():
        return (x * 2).requires_grad, opd.is_grad_enabled()

    @opd.enable_grad()
    def on():
        return (x * 2).requires_grad

    set_off = opd.set_grad_enabled(False)(opd.is_grad_enabled)

    assert off() == (False, False) and opd.is_grad_enabled()
    with opd.no_grad():
        assert on() is True
        assert not opd.is_grad_enabled()
    assert opd.is_grad_enabled() and set_off() is False and opd.is_grad_enabled()
    assert off.__name__ == "off"


def test_autograd_grad_leaves_grad_untouched():
    a = opd.tensor([2.0], requires_grad=True)
    (g,) = opd.autograd.grad(a ** 3, a)
    assert g.tolist() == [12.0] and a.grad is None
    (g2,) = opd.autograd.grad([(a * a).sum()], [a], create_graph=True)
    assert g2.tolist() == [4.0] and g2.requires_grad


def test_no_grad_on_one_thread_leaves_another_recording():
    x = opd.tensor([1.0], requires_grad=True)
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def other():
        entered.wait(10)
        seen["other"] = (opd.is_grad_enabled(), (x * 2).requires_grad)
        with opd.no_grad():
            seen["other_inside"] = (x * 2).requires_grad
        checked.set()

    t = threading.Thread(target=other)
    t.start()
    with opd.no_grad():
        entered.set()
        assert checked.wait(10)
        seen["main"] = (opd.is_grad_enabled(), (x * 2).requires_grad)
    t.join(10)
    assert seen == {"other": (True, True), "other_inside": False, "main": (False, False)}
    assert opd.is_grad_enabled()


@pytest.mark.parametrize("call, text", [
    # Number slots (Note [Type slots]): CPython's descriptors check the object.
    ("opd.Tensor.__add__(5, 3)", "descriptor '__add__' requires a 'Tensor' object but received a "
                                 "'int'"),
    ("opd.Tensor.__iadd__(object(), 1)", "descriptor '__iadd__' requires a 'Tensor' object but "
                                         "received a 'object'"),
    ("opd.Tensor.__new__(opd.Tensor) + 1", "self must be Tensor, not Tensor"),
    ("1 + opd.Tensor.__new__(opd.Tensor)", "self must be Tensor, not Tensor"),
    ("opd.Tensor.requires_grad_(5)", "self must be Tensor, not "),
])
def test_unbound_dunders_on_non_tensors_are_type_errors_not_crashes(python, call, text):
    # In a subprocess: before the fix each of these was a segfault.
    proc = python(f"""
        import opdispatch as opd
        try:
            {call}
        except TypeError as e:
            print("TypeError:", e)
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("TypeError: " + text), proc.stdout


# --- conversions, type(), new_*, T/mT, % // & | ^ ~ << >> (issue 31, section 2) --------------

CONVERSIONS = ["int", "long", "short", "float", "double", "half", "bfloat16", "bool", "byte",
               "char", "cfloat", "cdouble"]


@pytest.mark.parametrize("name", CONVERSIONS)
def test_conversions_by_dtype_name_as_torch(name):
    o, t = in_both(f"getattr(lib.tensor([[1.5, -2.0, 0.0]]).t(), '{name}')()")
    assert repr(o.dtype) == torch_text(repr(t.dtype))
    assert o.tolist() == t.tolist()


@pytest.mark.parametrize("name", CONVERSIONS)
def test_a_conversion_to_the_same_dtype_is_the_tensor_itself(name):
    dtype = getattr(opd, str(getattr(torch.ones(1), name)().dtype).split(".")[1])
    x = opd.ones(2, dtype=dtype)
    assert getattr(x, name)() is x


def test_a_conversion_is_differentiable():
    x = opd.ones(2, dtype=opd.float64, requires_grad=True)
    y = x.float()
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad.dtype is opd.float64 and x.grad.tolist() == [1.0, 1.0]


def test_type_names_are_torchs():
    for dtype in ["float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16",
                  "int32", "int64", "bool", "complex64", "complex128"]:
        assert (opd.ones(1, dtype=getattr(opd, dtype)).type()
                == torch.ones(1, dtype=getattr(torch, dtype)).type())


def test_type_converts_to_a_dtype_or_a_type_name():
    x = opd.ones(2)
    assert x.type(opd.float32) is x and x.type("torch.FloatTensor") is x
    assert x.type(opd.int64).dtype is opd.int64
    assert x.type("torch.DoubleTensor").dtype is opd.float64
    assert x.type("opdispatch.IntTensor").dtype is opd.int32
    with pytest.raises(ValueError, match=r"^invalid type: 'torch.FooTensor'$"):
        x.type("torch.FooTensor")
    with pytest.raises(TypeError, match=r"^dtype must be a type, str, or dtype object$"):
        x.type(3)


def test_to_other_takes_its_dtype_and_device_and_type_as_too():
    x, y = opd.ones(2), opd.ones(1, dtype=opd.int64)
    assert x.to(y).dtype is opd.int64 and x.type_as(y).dtype is opd.int64
    assert x.type_as(x)._is_same(x)  # the same tensor (torch: the same object too)


def test_new_factories_take_selfs_dtype_and_device():
    x = opd.ones(2, dtype=opd.int32)
    for o, t in [in_both(f"lib.ones(2, dtype=lib.int32).{call}")
                 for call in ["new_zeros(2, 3)", "new_ones((2,))", "new_full((2,), 3.5)",
                              "new_tensor([1.5, 2])", "new_zeros(2, dtype=lib.float64)"]]:
        assert repr(o.dtype) == torch_text(repr(t.dtype)) and o.tolist() == t.tolist()
    assert x.new_empty((2, 3)).shape == (2, 3) and x.new_empty(2).dtype is opd.int32


def test_matrix_transposes_as_torch():
    x = opd.ones(2, 3, 4)
    assert x.mT.shape == (2, 4, 3) and x.mH.shape == (2, 4, 3)
    assert opd.ones(2, 3).T.shape == (3, 2) and opd.ones(2, 3).H.shape == (3, 2)
    with pytest.raises(RuntimeError, match=r"^tensor.mT is only supported on matrices or batches "
                                           r"of matrices. Got 1-D tensor.$"):
        opd.ones(3).mT
    with pytest.raises(RuntimeError, match=r"^tensor.H is only supported on matrices \(2-D "
                                           r"tensors\). Got 3-D tensor.$"):
        x.H
    assert x.mT.data_ptr() == x.data_ptr()  # a view


NUMBER_OPS = ["x % 3", "x % -3", "7 % x", "x // 3", "x // -2", "7 // x", "7.5 // x", "x & 6",
              "6 & x", "x | 2", "2 | x", "x ^ 3", "3 ^ x", "~x", "x << 1", "x >> 1", "x % y",
              "x // y", "x & y", "x | y", "x ^ y", "x << y", "x >> y"]


def _skip_without_shifts(text):
    if ("<<" in text or ">>" in text) and not {"__lshift__", "bitwise_left_shift"} & set(
            dir(opd.ops.aten)):
        pytest.skip("no shift operator is defined yet (the binary family's)")


@pytest.mark.parametrize("expr", NUMBER_OPS)
def test_number_operators_as_torch(expr):
    _skip_without_shifts(expr)
    def run(lib):
        x = lib.tensor([5, -7, 9, 12])
        y = lib.tensor([2, 3, 1, 2])
        return eval(expr)
    o, t = run(opd), run(torch)
    assert repr(o.dtype) == torch_text(repr(t.dtype))
    assert o.tolist() == t.tolist()


@pytest.mark.parametrize("op", ["%=", "//=", "&=", "|=", "^=", "<<=", ">>="])
def test_inplace_number_operators_keep_the_tensor(op):
    _skip_without_shifts(op)
    x = opd.tensor([5, -7, 9, 12])
    t = torch.tensor([5, -7, 9, 12])
    before = id(x)
    exec(f"x {op} 3", {}, {"x": x})
    loc = {"t": t}
    exec(f"t {op} 3", {}, loc)
    assert x.tolist() == loc["t"].tolist() and id(x) == before


def test_number_operators_refuse_other_operands_in_pythons_words():
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for %: 'Tensor' and "
                                        r"'str'"):
        opd.ones(2) % "a"
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for //: 'str' and "
                                        r"'Tensor'"):
        "a" // opd.ones(2)


def test_float_remainder_follows_pythons_sign_rule():
    o, t = in_both("lib.tensor([3.5, -4.0, 5.0, -1.5]) % 2")
    assert o.tolist() == t.tolist()
    o, t = in_both("2 % lib.tensor([3.5, -4.0, 5.0, -1.5])")
    assert o.tolist() == t.tolist()


def test_min_max_all_any_without_and_with_dim():
    for expr in ["x.min()", "x.max()", "x.max(1).values", "x.min(0).indices", "x.all()",
                 "x.any()", "(x > 0).all(1)", "(x > 0).any(0)"]:
        o, t = in_both(f"(lambda x: {expr})(lib.tensor([[1., -2., 3.], [4., 0., -6.]]))")
        assert o.tolist() == t.tolist(), expr


def test_numel_and_sizes_as_torch():
    x = opd.ones(2, 3)
    assert opd.numel(x) == 6 and x.nelement() == 6 and x.ndimension() == 2
    assert x.element_size() == 4 and x.is_floating_point() and not x.is_complex()
    assert opd.ones(1, dtype=opd.complex64).is_complex()


def test_conversions_are_c_methods_with_torchs_argument_errors():
    # Note [C methods] in python/src/tensor.cpp.
    x = opd.rand(2, 3)
    assert x.int().dtype == opd.int32 and x.double().dtype == opd.float64
    assert x.float() is x
    assert x.int(memory_format=opd.preserve_format).dtype == opd.int32
    assert type(opd.Tensor.__dict__["int"]).__name__ == "method_descriptor"
    assert opd.Tensor.int(x).dtype == opd.int32
    with pytest.raises(TypeError, match=r"^int\(\) takes 0 positional arguments but 1 was given$"):
        x.int(1)
    with pytest.raises(TypeError, match=r"^int\(\): argument 'memory_format' must be "
                                        r"opdispatch.memory_format, not int$"):
        x.int(memory_format=1)
    with pytest.raises(TypeError, match=r"^long\(\) got an unexpected keyword argument 'foo'$"):
        x.long(foo=1)
    with pytest.raises(TypeError, match=r"^descriptor 'int' for 'Tensor' objects doesn't apply "
                                        r"to a 'int' object$"):
        opd.Tensor.int(3)
