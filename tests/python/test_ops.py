"""opdispatch.ops: overload packets and overloads with torch.ops' names and texts, overload
resolution and its errors as PyTorch's Python argument parser, results that alias an argument,
named returns, operators that come and go with their Library, redispatch, parse_schema."""

import re
import warnings

import pytest
import torch

import opdispatch as opd
from opdispatch import ops
from opdispatch.library import Library


def test_a_packet_and_an_overload_print_as_torch():
    assert repr(ops.aten.add) == "<OpOverloadPacket(op='aten.add')>"
    assert str(ops.aten.add) == "aten.add"
    assert repr(ops.aten.add.Tensor) == "<OpOverload(op='aten.add', overload='Tensor')>"
    assert str(ops.aten.add.Tensor) == "aten.add.Tensor"
    assert repr(ops.aten.relu.default) == "<OpOverload(op='aten.relu', overload='default')>"
    assert str(ops.aten.relu.default) == "aten.relu.default"
    assert ops.aten.add.Tensor.name() == "aten::add.Tensor"
    assert ops.aten.relu.default.name() == "aten::relu"
    assert ops.aten.add.Tensor.overloadpacket is ops.aten.add
    assert ops.aten.add.Tensor.namespace == "aten"


@pytest.mark.parametrize("name", [
    "add.Tensor", "add.Scalar", "add.out", "add_.Tensor", "max.dim", "relu.default",
    "sum.dim_IntList", "gelu.default", "ones.default", "div.Scalar",
])
def test_schema_str_is_pytorchs_canonical_form(name):
    base, overload = name.split(".")
    ours = getattr(getattr(ops.aten, base), overload)._schema
    theirs = getattr(getattr(torch.ops.aten, base), overload)._schema
    assert str(ours) == str(theirs)


def test_schema_fields():
    schema = ops.aten.add.Tensor._schema
    assert str(schema) == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert isinstance(schema, opd.FunctionSchema)
    assert schema.name == "aten::add"
    assert schema.overload_name == "Tensor"
    assert [a.name for a in schema.arguments] == ["self", "other", "alpha"]
    assert [a.kwarg_only for a in schema.arguments] == [False, False, True]
    assert schema.arguments[2].default_value == "1"
    assert [r.type for r in schema.returns] == ["Tensor"]
    assert not schema.is_mutable
    assert ops.aten.add_.Tensor._schema.is_mutable


def test_overloads_lists_every_overload_name():
    assert set(ops.aten.add.overloads()) >= {"Tensor", "Scalar", "out"}
    assert ops.aten.relu.overloads() == ["default"]
    assert set(ops.aten.add.overloads()) <= set(dir(ops.aten.add))
    assert "add" in dir(ops.aten)


def test_unknown_names_raise_attribute_error_with_torchs_text():
    with pytest.raises(AttributeError, match=r"^'_OpNamespace' 'aten' object has no attribute "
                                             r"'no_such_op'$"):
        ops.aten.no_such_op
    with pytest.raises(AttributeError, match=r"^The underlying op of 'aten.add' has no overload "
                                             r"name 'Nope'$"):
        ops.aten.add.Nope
    with pytest.raises(AttributeError, match=r"^module 'opdispatch' has no attribute "
                                             r"'no_such_op'$"):
        opd.no_such_op


def test_module_functions_are_the_aten_packets():
    assert opd.add is ops.aten.add
    assert opd.relu is ops.aten.relu
    x = opd.tensor([1.0, -2.0])
    y = opd.tensor([10.0, 20.0])
    assert opd.add(x, y).tolist() == [11.0, 18.0]
    assert opd.relu(x).tolist() == [1.0, 0.0]


def test_calls_find_their_object_without_pybind11s_lookup_and_check_it():
    # Note [Fast pybind11 instances] and Note [Type slots]: __call__ (the tp_call slot) and
    # _call_method take the object directly; on anything else they raise CPython's text for a
    # slot or a method called on the wrong object.
    x, y = opd.ones(2), opd.ones(2)
    assert ops.aten.add.Tensor(x, y).tolist() == [2.0, 2.0]
    assert ops.aten.add(x, y).tolist() == [2.0, 2.0]
    assert x.add(y).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match=r"^descriptor '__call__' requires a "
                       r"'opdispatch\._C\._OpOverload' object but received a 'int'$"):
        opd._C._OpOverload.__call__(5, x, y)
    with pytest.raises(TypeError, match=r"^descriptor '_call_method' requires a "
                       r"'opdispatch\._C\._OpPacket' object but received a 'str'$"):
        opd._C._OpPacket._call_method("add", x, y)


def test_a_number_resolves_to_the_scalar_overload():
    x = opd.tensor([1.0, 2.0])
    with opd.trace() as t:
        z = opd.add(x, 2)
    assert z.tolist() == [3.0, 4.0]
    assert [h.op for h in t.hops if h.depth == 0] == ["aten::add.Scalar"]
    with opd.trace() as t:
        z = opd.add(x, x, alpha=3)
    assert z.tolist() == [4.0, 8.0]
    assert [h.op for h in t.hops if h.depth == 0] == ["aten::add.Tensor"]


@pytest.mark.parametrize("name, args, kwargs", [
    ("add", (2.5,), {}), ("add", (2,), {"alpha": 3}), ("sub", (3,), {"alpha": 2}),
    ("mul", (0.5,), {}), ("mul", (True,), {}),
    ("div", (2,), {}), ("div", (2,), {"rounding_mode": "floor"}),
    ("div", (-2.5,), {"rounding_mode": "trunc"}), ("true_divide", (2,), {}),
    ("floor_divide", (2,), {}),
])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_arithmetic_takes_a_number_for_a_tensor_as_a_wrapped_number(name, args, kwargs, dtype):
    # torch's parser takes a number for a Tensor of these (should_allow_numbers_as_tensors):
    # torch.add(x, 2, out=o) works, has no Scalar overload, and promotes the number as a scalar.
    values = [[5, -7, 3], [0, 9, -4]]
    x = torch.tensor(values, dtype=getattr(torch, dtype))
    result_dtype = str(getattr(torch, name)(x, *args, **kwargs).dtype).split(".")[1]
    results = []
    for lib in (opd, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        o = lib.empty((2, 3), dtype=getattr(lib, result_dtype))
        r = getattr(lib, name)(x, *args, **kwargs, out=o)
        assert r is o
        results.append(r.tolist())
    assert results[0] == results[1]


def test_a_number_for_self_of_arithmetic_is_a_wrapped_number_and_others_refuse_it():
    x = opd.tensor([1, 2], dtype=opd.int16)
    z = opd.add(2, x)
    assert (z.dtype, z.tolist()) == (opd.int16, [3, 4])
    z = opd.mul(2.5, x)  # the float number makes it float32 (the default dtype), as torch
    assert (z.dtype, z.tolist()) == (opd.float32, [2.5, 5.0])
    assert opd.add(2, 3).dtype == opd.int64 and opd.add(2, 3).item() == 5
    z = ops.aten.add.out(x, 2, out=opd.empty(2, dtype=opd.int16))
    assert z.tolist() == [3, 4]
    o = opd.empty(2, dtype=opd.int16)
    with opd.trace() as t:
        opd.add(x, 2, out=o)
    assert [h.op for h in t.hops if h.depth == 0] == ["aten::add.out"]
    with pytest.raises(TypeError, match=r"argument 'self' \(position 1\) must be Tensor, not "
                                        r"int"):
        opd.sin(2)
    with pytest.raises(TypeError, match=r"must be Tensor, not int"):
        opd.maximum(x, 2)
    # A bool is a bool tensor there, which sub refuses as torch does.
    with pytest.raises(RuntimeError, match=r"^Subtraction, the `-` operator, with a bool tensor"):
        opd.sub(x, True, out=opd.empty(2, dtype=opd.int16))


def test_no_matching_overload_lists_every_candidate():
    x = opd.ones(2)
    with pytest.raises(TypeError) as info:
        opd.add(x, "a")
    message = str(info.value)
    assert message.startswith(
        "add() received an invalid combination of arguments - got (Tensor, str), but expected "
        "one of:\n")
    for overload in ops.aten.add.overloads():
        assert f"\n * {getattr(ops.aten.add, overload)._schema}\n" in message
    assert "didn't match because: argument 'other' (position 2) must be Tensor, not str" in message
    assert "didn't match because: argument 'other' (position 2) must be Scalar, not str" in message


def test_no_matching_overload_names_an_unexpected_keyword():
    x = opd.ones(2)
    with pytest.raises(TypeError) as info:
        opd.add(x, x, nope=1)
    message = str(info.value)
    assert message.startswith("add() received an invalid combination of arguments - got "
                              "(Tensor, Tensor, nope=int), but expected one of:\n")
    assert "didn't match because: got an unexpected keyword argument 'nope'" in message


def test_a_single_overload_names_the_argument_that_does_not_fit():
    x = opd.ones(2)
    with pytest.raises(TypeError, match=r"^aten::relu\(\): argument 'self' \(position 1\) must "
                                        r"be Tensor, not int$"):
        ops.aten.relu.default(1)
    with pytest.raises(TypeError, match=r"^relu\(\): argument 'self' \(position 1\) must be "
                                        r"Tensor, not int$"):
        opd.relu(1)
    with pytest.raises(TypeError, match=r"^aten::relu\(\): missing required argument 'self' "
                                        r"\(position 1\)$"):
        ops.aten.relu.default()
    with pytest.raises(TypeError, match=r"^aten::relu\(\): takes 1 positional argument but 2 "
                                        r"were given$"):
        ops.aten.relu.default(x, x)
    with pytest.raises(TypeError, match=r"^aten::add.Tensor\(\): argument 'alpha' must be "
                                        r"Scalar, not str$"):
        ops.aten.add.Tensor(x, x, alpha="a")


def test_every_schema_argument_may_be_passed_by_keyword_self_included():
    # torch 2.x's OpOverload.__call__(self_, ...) exists so that aten's `self` can be a keyword.
    x = opd.tensor([1.0, 2.0])
    assert ops.aten.add.Tensor(x, other=x).tolist() == [2.0, 4.0]
    assert ops.aten.add.Tensor(self=x, other=x).tolist() == [2.0, 4.0]
    assert ops.aten.add(self=x, other=x).tolist() == [2.0, 4.0]


def test_redispatch_takes_self_by_keyword_too():
    # torch 2.x: OpOverload.redispatch(self_, keyset, *args, **kwargs).
    x = opd.tensor([1.0, 2.0])
    keys = opd.DispatchKeySet("CPU")
    assert ops.aten.add.Tensor.redispatch(keys, self=x, other=x).tolist() == [2.0, 4.0]


def test_in_place_and_out_results_are_the_argument_object():
    x = opd.tensor([1.0, 2.0])
    y = opd.tensor([10.0, 20.0])
    out = opd.empty(2)
    assert opd.add(x, y, out=out) is out
    assert out.tolist() == [11.0, 22.0]
    assert ops.aten.add.out(x, y, out=out) is out
    assert x.add_(y) is x
    assert x.tolist() == [11.0, 22.0]
    assert ops.aten.add_.Tensor(x, y) is x
    assert x.tolist() == [21.0, 42.0]
    before = x
    x += y
    assert x is before


@pytest.mark.parametrize("name", [
    "sum.IntList_out", "mean.out", "amax.out", "amin.out", "argmax.out", "_softmax.out",
    "_log_softmax.out", "_softmax_backward_data.out", "_log_softmax_backward_data.out",
])
def test_reduction_and_softmax_out_schemas_are_pytorchs(name):
    base, overload = name.split(".")
    ours = getattr(getattr(ops.aten, base), overload)._schema
    assert str(ours) == str(getattr(getattr(torch.ops.aten, base), overload)._schema)


def test_reduction_and_softmax_out_overloads_behave_as_torch():
    data = [[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]
    x, tx = opd.tensor(data), torch.tensor(data)
    cases = [
        ("sum", (1,), {}, "float32"),
        ("sum", ([0, 1],), {"keepdim": True}, "float32"),
        ("sum", (1,), {}, "int64"),  # no dtype: out's (the input is converted first)
        ("sum", (0,), {"dtype": "float64"}, "float64"),
        ("mean", (1,), {}, "float32"),
        ("mean", (0,), {}, "float64"),
        ("amax", (1,), {}, "float32"),
        ("amin", (0,), {"keepdim": True}, "float32"),
        ("argmax", (1,), {}, "int64"),
        ("argmax", (), {}, "int64"),
    ]
    for name, args, kwargs, out_dtype in cases:
        kw = {k: getattr(opd, v) if k == "dtype" else v for k, v in kwargs.items()}
        tkw = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
        out = opd.empty(0, dtype=getattr(opd, out_dtype))
        tout = torch.empty(0, dtype=getattr(torch, out_dtype))
        assert getattr(opd, name)(x, *args, out=out, **kw) is out, name
        getattr(torch, name)(tx, *args, out=tout, **tkw)
        assert out.reshape(-1).tolist() == pytest.approx(tout.reshape(-1).tolist()), name
        assert tuple(out.shape) == tuple(tout.shape), (name, args, kwargs)
    out = opd.empty(2, 3)
    assert ops.aten._softmax.out(x, 1, False, out=out) is out
    expected = torch.ops.aten._softmax(tx, 1, False)
    assert out.reshape(-1).tolist() == pytest.approx(expected.reshape(-1).tolist())
    for call, tcall in [
        (lambda: opd.argmax(x, 1, out=opd.empty(2)),
         lambda: torch.argmax(tx, 1, out=torch.empty(2))),
        (lambda: opd.amax(x, 1, out=opd.empty(2, dtype=opd.int64)),
         lambda: torch.amax(tx, 1, out=torch.empty(2, dtype=torch.int64))),
        (lambda: opd.sum(x, 1, dtype=opd.float64, out=opd.empty(2)),
         lambda: torch.sum(tx, 1, dtype=torch.float64, out=torch.empty(2))),
    ]:
        with pytest.raises(RuntimeError) as theirs:
            tcall()
        with pytest.raises(RuntimeError, match="^" + re.escape(str(theirs.value)) + "$"):
            call()


@pytest.mark.parametrize("dtype,out_dtype", [
    ("complex128", "float64"), ("float64", "int64"), ("float32", "int64"),
    ("float32", "float16"), ("float64", "float32"), ("float32", "complex64"),
])
def test_mean_out_takes_any_floating_or_complex_out_as_torch(dtype, out_dtype):
    # torch 1.13's mean.out is sum.out then div_: the out's type decides, and the refusal of an
    # integral out names Float whatever the input's type.
    data = [[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]
    x = opd.tensor(data, dtype=getattr(opd, dtype))
    tx = torch.tensor(data, dtype=getattr(torch, dtype))
    out = opd.empty(2, dtype=getattr(opd, out_dtype))
    tout = torch.empty(2, dtype=getattr(torch, out_dtype))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's, casting complex to real
            torch.mean(tx, 1, out=tout)
    except RuntimeError as theirs:
        with pytest.raises(RuntimeError, match="^" + re.escape(str(theirs)) + "$"):
            opd.mean(x, 1, out=out)
        return
    assert opd.mean(x, 1, out=out) is out
    assert out.dtype == getattr(opd, out_dtype)
    assert out.tolist() == pytest.approx(tout.tolist())


def test_named_returns_are_a_return_types_named_tuple():
    x = opd.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    r = ops.aten.max.dim(x, 1)
    assert type(r) is opd.return_types.max
    assert isinstance(r, tuple)
    assert r._fields == ("values", "indices")
    assert r.values.tolist() == [5.0, 7.0]
    assert r.indices.tolist() == [1, 0]
    values, indices = r
    assert values.tolist() == [5.0, 7.0]
    assert repr(r).startswith("opdispatch.return_types.max(\nvalues=tensor([5., 7.]),\n")


def test_libopd_cores_operators_are_kept_as_plain_attributes_once_found():
    # opdispatch.ops._lasting: core aten operators cannot go away, so their lookups are cached
    # where attribute lookup finds them without __getattr__ (torch's lookups cost as little).
    x = opd.tensor([1.0, 2.0])
    assert opd.add is ops.aten.add and vars(opd)["add"] is ops.aten.add
    assert vars(ops)["aten"] is ops.aten and vars(ops.aten)["add"] is ops.aten.add
    assert vars(ops.aten.add)["Tensor"] is ops.aten.add.Tensor
    assert x.add(x).tolist() == [2.0, 4.0] and opd.Tensor.add.__name__ == "add"
    assert opd.Tensor.add(x, 1).tolist() == [2.0, 3.0]


def test_an_aten_operator_defined_later_is_found_and_goes_with_its_library():
    x = opd.tensor([1.0, 2.0])
    with Library("aten", "FRAGMENT") as lib:
        lib.define("opd_test_triple(Tensor self) -> Tensor")
        lib.impl("opd_test_triple", lambda t: t * 3, "CPU")
        assert ops.aten.opd_test_triple(x).tolist() == [3.0, 6.0]
        assert opd.opd_test_triple.default(x).tolist() == [3.0, 6.0]
        assert x.opd_test_triple().tolist() == [3.0, 6.0]
    assert "opd_test_triple" not in vars(ops.aten) and "opd_test_triple" not in vars(opd)
    assert "opd_test_triple" not in vars(opd.Tensor)
    with pytest.raises(AttributeError, match=r"^'_OpNamespace' 'aten' object has no attribute "
                                             r"'opd_test_triple'$"):
        ops.aten.opd_test_triple
    with pytest.raises(AttributeError, match=r"^module 'opdispatch' has no attribute "
                                             r"'opd_test_triple'$"):
        opd.opd_test_triple
    with pytest.raises(AttributeError, match=r"^'Tensor' object has no attribute "
                                             r"'opd_test_triple'$"):
        x.opd_test_triple


def test_a_method_added_to_a_core_name_goes_with_its_library():
    # aten::ones is libopd_core's, with no Tensor self overload: the method a FRAGMENT gives it
    # is not kept once the FRAGMENT is gone.
    x = opd.tensor([1.0, 2.0])
    assert not hasattr(x, "ones")
    with Library("aten", "FRAGMENT") as lib:
        lib.define("ones.opd_self(Tensor self, int k) -> Tensor")
        lib.impl("ones.opd_self", lambda t, k: t * k, "CPU")
        assert x.ones(3).tolist() == [3.0, 6.0] and x.ones.__name__ == "ones"
    assert not hasattr(x, "ones") and "ones" not in vars(opd.Tensor)


@pytest.mark.parametrize("expr, method", [
    ("ops.OpOverload.__new__(ops.OpOverload)(x)", "__call__"),
    ("ops.OpOverload.__new__(ops.OpOverload).schema", "schema"),
    ("ops.OpOverload.__new__(ops.OpOverload).has_kernel_for_dispatch_key('CPU')",
     "has_kernel_for_dispatch_key"),
    ("opd._C._OpPacket.__new__(opd._C._OpPacket)(x)", "__call__"),
    ("opd._C._OpPacket.__new__(opd._C._OpPacket)._call_method(x)", "_call_method"),
    ("opd._C._OpPacket.__new__(opd._C._OpPacket).overloads()", "overloads"),
])
def test_an_operator_object_made_by_new_alone_is_a_type_error(expr, method):
    x = opd.ones(1)
    text = (rf"^{method}\(\): the 'opdispatch\._C\._Op(Overload|Packet)' object was not "
            r"initialized \(its __init__ did not run\)$")
    with pytest.raises(TypeError, match=text):
        eval(expr, {"ops": ops, "opd": opd, "x": x})


def test_keywords_must_be_strings():
    x = opd.ones(1)
    with pytest.raises(TypeError, match="^keywords must be strings$"):
        ops.aten.add.Tensor(x, x, **{1: 2})


def test_only_namespaces_with_operators_are_kept():
    ops.opd_test_no_such_namespace
    assert "opd_test_no_such_namespace" not in vars(ops)


def test_a_vendor_operator_appears_and_disappears_with_its_library():
    x = opd.tensor([1.0, 2.0])
    with pytest.raises(AttributeError):
        ops.opsvendor.twice
    lib = Library("opsvendor", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda t: t + t, "CPU")
        assert ops.opsvendor.twice(x).tolist() == [2.0, 4.0]
        assert ops.opsvendor.twice.default(x).tolist() == [2.0, 4.0]
        assert "opsvendor" in dir(ops)
        assert dir(ops.opsvendor) == ["twice"]
        held = ops.opsvendor.twice.default
        packet = ops.opsvendor.twice
    finally:
        lib.close()
    with pytest.raises(AttributeError, match=r"^'_OpNamespace' 'opsvendor' object has no "
                                             r"attribute 'twice'$"):
        ops.opsvendor.twice
    with pytest.raises(RuntimeError, match=r"^opdispatch: operator opsvendor::twice is not "
                                           r"defined \(any more\)$"):
        held(x)
    with pytest.raises(RuntimeError, match=r"^opdispatch: operator opsvendor::twice is not "
                                           r"defined \(any more\)$"):
        packet(x)


def test_redispatch_calls_the_kernel_of_the_highest_key_in_the_set():
    x = opd.ones(2, requires_grad=True)
    assert opd.add(x, x).grad_fn is not None
    keys = opd.DispatchKeySet("CPU")
    with opd.trace() as t:
        z = ops.aten.add.Tensor.redispatch(keys, x, x)
    assert z.tolist() == [2.0, 2.0]
    assert z.grad_fn is None  # below autograd
    assert [(h.op, h.entry, h.key) for h in t.hops] == [
        ("aten::add.Tensor", "redispatch_boxed", "CPU")]


def test_dispatch_key_sets():
    cpu = opd.DispatchKeySet("CPU")
    both = cpu | opd.DispatchKeySet("AutogradCPU")
    assert repr(both) == "DispatchKeySet(CPU, AutogradCPU)"
    assert both.has("CPU") and not cpu.has("AutogradCPU")
    assert both - cpu == opd.DispatchKeySet("AutogradCPU")
    assert both.highest_priority_type_id() == "AutogradCPU"
    assert opd._C._dispatch_keys(opd.ones(1)).has("AutogradCPU")
    with pytest.raises(ValueError, match=r"^Unknown dispatch key 'NoSuchKey'"):
        opd.DispatchKeySet("NoSuchKey")


def test_parse_schema():
    s = opd.parse_schema(
        "myns::foo.bar(Tensor(a!) x, int[2] y, *, float? z=None) -> (Tensor(a!) out, int n)")
    assert str(s) == ("myns::foo.bar(Tensor(a!) x, int[2] y, *, float? z=None) -> "
                      "(Tensor(a!) out, int n)")
    assert (s.name, s.overload_name) == ("myns::foo", "bar")
    x, y, z = s.arguments
    assert (x.name, x.type, x.is_write, x.alias_info) == ("x", "Tensor", True, "(a!)")
    assert (y.type, y.N) == ("int[]", 2)
    assert (z.type, z.kwarg_only, z.default_value) == ("float?", True, "None")
    assert [(r.name, r.type) for r in s.returns] == [("out", "Tensor"), ("n", "int")]
    assert s.is_mutable
    assert str(opd.parse_schema("f(str s='hi') -> ()")) == 'f(str s="hi") -> ()'


@pytest.mark.parametrize("expr, value, where", [
    ("opd.ones(2**70)", "1180591620717411303424", "ones(), argument at position 1"),
    ("opd.ones((2, 2**63))", "9223372036854775808", "ones(), argument at position 1"),
    ("opd.full((2,), 2**70)", "1180591620717411303424", "full(), argument at position 2"),
    ("x.view(2**64)", "18446744073709551616", "view(), argument at position 1"),
    ("x.sum(dim=2**63)", "9223372036854775808", "sum(), argument 'dim'"),
    ("x.add(x, alpha=-2**70)", "-1180591620717411303424", "add(), argument 'alpha'"),
    ("opd.ops.aten.add.Tensor(x, x, alpha=2**64)", "18446744073709551616",
     "aten::add.Tensor(), argument 'alpha'"),
])
def test_an_int_argument_outside_int64_names_the_value_and_the_argument(expr, value, where):
    # torch raises "Overflow when unpacking long" (a TypeError for int lists); both name neither.
    with pytest.raises(RuntimeError, match=(rf"^Overflow when unpacking long: {value} does not fit "
                                            rf"in int64 \({re.escape(where)}\)$")):
        eval(expr, {"opd": opd, "x": opd.ones(2)})


def test_parse_schema_errors_are_schema_parse_errors():
    assert issubclass(opd.SchemaParseError, RuntimeError)
    with pytest.raises(opd.SchemaParseError,
                       match=r"^Expected ',' or '\)' but found end of input at column 18\n"):
        opd.parse_schema("foo::bar(Tensor x")
    with pytest.raises(opd.SchemaParseError, match=r"but found 'Tensr' at column 18"):
        opd.parse_schema("foo(Tensor x) -> Tensr")


def test_tensor_only_calls_bind_as_the_binder_does():
    # Note [Tensor-only calls]: tensors by position to the first overload's leading Tensor
    # parameters, defaults for the rest; anything else is the binder's, with its texts.
    x, y = opd.tensor([1.0, 2.0]), opd.tensor([3.0, 4.0])
    assert x.add(y).tolist() == [4.0, 6.0]
    assert opd.add(x, y).tolist() == [4.0, 6.0]
    assert ops.aten.add.Tensor(x, y).tolist() == [4.0, 6.0]
    assert x.add(y, alpha=2).tolist() == [7.0, 10.0]
    assert x.sum().item() == 3.0 and x.sum().dtype == opd.float32
    out = opd.empty(2)
    assert opd.add(x, y, out=out) is out
    z = x.clone()
    assert z.add_(y) is z and z.tolist() == [4.0, 6.0]
    with pytest.raises(TypeError, match=r"add\(\) received an invalid combination of arguments"):
        opd.add(x, y, y, y)
    with pytest.raises(TypeError):
        ops.aten.add.Tensor(x)


def test_an_override_between_two_calls_of_one_call_site_takes_effect():
    lib = Library("tensoronly", "DEF")
    try:
        lib.define("f(Tensor x, Tensor? y=None, *, int k=1) -> Tensor")
        lib.impl("f", lambda x, y=None, k=1: x + k, "CPU")
        x = opd.tensor([1.0])

        def call():
            return ops.tensoronly.f(x).tolist(), ops.tensoronly.f.default(x, x).tolist()

        assert call() == ([2.0], [2.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's "overriding a previously registered kernel"
            override = Library("tensoronly", "IMPL")
            override.impl("f", lambda x, y=None, k=1: x * 10, "CPU")
        try:
            assert call() == ([10.0], [10.0])
        finally:
            override.close()
        assert call() == ([2.0], [2.0])
    finally:
        lib.close()
    with pytest.raises(AttributeError):
        ops.tensoronly.f


def test_tensor_only_calls_while_another_thread_defines_and_undoes():
    import threading
    stop = threading.Event()
    errors = []

    def churn():
        while not stop.is_set():
            lib = Library("tensorchurn", "DEF")
            try:
                lib.define("g(Tensor x) -> Tensor")
                lib.impl("g", lambda x: x, "CPU")
            finally:
                lib.close()

    x, y = opd.ones(2), opd.ones(2)
    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(2000):
            if x.add(y).tolist() != [2.0, 2.0] or opd.mul(x, y).tolist() != [1.0, 1.0]:
                errors.append("wrong result")
    finally:
        stop.set()
        t.join()
    assert errors == []


def test_tensor_list_results_are_tuples_from_methods_and_lists_from_torch_ops():
    # As torch 1.13: x.split(2) and x.unbind() are tuples; torch.ops.aten.split.Tensor(x, 2) and
    # the packet are lists. (torch.split(x, 2) is a tuple too; opdispatch.split is
    # ops.aten.split, a list.)
    x = opd.ones(4)
    assert type(x.split(2)) is tuple and len(x.split(2)) == 2
    assert type(x.view(2, 2).unbind()) is tuple
    assert type(x.chunk(2)) is tuple and type(x.tensor_split(2)) is tuple
    assert type(ops.aten.split.Tensor(x, 2)) is list
    assert type(ops.aten.split(x, 2)) is list
    assert type(ops.aten.unbind.int(x.view(2, 2))) is list


# ---- out= with several tensors, as a tuple (Note [Several out= tensors]) ---------------------

def _several_out_calls(lib, x):
    return {
        "sort": lambda out: lib.sort(x, out=out),
        "sort_descending": lambda out: lib.sort(x, 0, True, out=out),
        "sort_stable": lambda out: lib.sort(x, stable=True, dim=1, out=out),
        "max": lambda out: lib.max(x, 0, out=out),
        "min_keepdim": lambda out: lib.min(x, 1, True, out=out),
        "topk": lambda out: lib.topk(x, 2, out=out),
        "topk_smallest": lambda out: lib.topk(x, 2, 0, False, out=out),
        "kthvalue": lambda out: lib.kthvalue(x, 2, out=out),
    }


@pytest.mark.parametrize("case", list(_several_out_calls(torch, None)))
@pytest.mark.parametrize("as_list", [False, True])
def test_out_takes_a_tuple_of_the_outputs_and_returns_them_as_torch(case, as_list):
    # (no ties: their order is each operator's own matter)
    values = [[3.0, 1.0, 2.0, 7.0], [0.0, 5.0, 4.0, 5.5], [6.0, 6.5, -1.0, 2.0]]
    x, tx = opd.tensor(values), torch.tensor(values)
    v, i = opd.empty(0), opd.empty(0, dtype=opd.int64)
    tv, ti = torch.empty(0), torch.empty(0, dtype=torch.int64)
    pack = list if as_list else tuple
    r = _several_out_calls(opd, x)[case](pack([v, i]))
    tr = _several_out_calls(torch, tx)[case](pack([tv, ti]))
    assert type(r).__name__ == type(tr).__name__  # sort_out, max_out, ...
    assert r._fields == ("values", "indices") and tr.values is tv and tr.indices is ti
    assert r.values is v and r.indices is i and r[0] is v and r[1] is i
    assert v.tolist() == tv.tolist() and i.tolist() == ti.tolist()
    assert v.shape == tuple(tv.shape)


def test_out_tuple_resizes_a_nonempty_output_with_torchs_warning():
    x = opd.tensor([[3.0, 1.0], [0.0, 5.0]])
    v, i = opd.zeros(5), opd.zeros(5, dtype=opd.int64)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        r = opd.max(x, 1, out=(v, i))
    assert r.values is v and v.tolist() == [3.0, 5.0] and i.tolist() == [0, 1]


@pytest.mark.parametrize("call", [
    "lib.sort(x, out=(v,))",
    "lib.sort(x, out=(v, i, i))",
    "lib.sort(x, out=(v, 1))",
    "lib.max(x, 0, out=(None, i))",
    "lib.kthvalue(x, 1, out=(v, 'a'))",
    "lib.topk(x, 1, out=[v])",
    "lib.sort(x, out=(v_int, i))",
    "lib.sort(x, out=(v, i_int))",
    "lib.max(x, 0, out=(v_double, i))",
    "lib.min(x, 0, out=(v, v))",
    "lib.topk(x, 1, out=(v, i_int))",
    "lib.sort(x, out=v)",
])
def test_out_tuple_errors_are_torchs(call):
    def run(lib):
        f = lib.float32
        x = lib.tensor([[3.0, 1.0], [0.0, 5.0]], dtype=f)
        v, i = lib.empty(0, dtype=f), lib.empty(0, dtype=lib.int64)
        v_int, i_int = lib.empty(0, dtype=lib.int32), lib.empty(0, dtype=lib.int32)
        v_double = lib.empty(0, dtype=lib.float64)
        del f
        return eval(call, {"lib": lib, **locals()})
    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(type(theirs.value)) as ours:
        run(opd)
    # (torch's own "invalid combination of arguments" lists its Python signatures.)
    if theirs.type is RuntimeError or str(theirs.value).startswith("expected"):
        assert str(ours.value) == str(theirs.value)


def test_a_method_takes_no_out_tuple_as_torchs():
    x = opd.tensor([[3.0, 1.0], [0.0, 5.0]])
    v, i = opd.empty(0), opd.empty(0, dtype=opd.int64)
    with pytest.raises(TypeError):
        torch.tensor([[3.0, 1.0]]).sort(out=(torch.empty(0), torch.empty(0, dtype=torch.long)))
    with pytest.raises(TypeError):
        x.sort(out=(v, i))


def test_several_out_overloads_have_torchs_schemas():
    for name in ["sort.values", "sort.values_stable", "topk.values", "max.dim_max",
                 "min.dim_min", "kthvalue.values"]:
        packet, overload = name.split(".")
        ours = getattr(getattr(ops.aten, packet), overload)._schema
        theirs = getattr(getattr(torch.ops.aten, packet), overload)._schema
        assert str(ours) == str(theirs)


def test_several_out_overloads_on_meta_give_the_shapes():
    x = opd.empty(3, 4, device="meta")
    v, i = opd.empty(0, device="meta"), opd.empty(0, dtype=opd.int64, device="meta")
    r = opd.topk(x, 2, out=(v, i))
    assert r.values is v and v.shape == (3, 2) and i.shape == (3, 2) and v.device.type == "meta"
