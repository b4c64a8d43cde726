"""opdispatch.library.opcheck (torch 2.4's torch.library.opcheck): built-in and correct custom
operators pass every check; operators that break a rule (mutate an argument not annotated
mutable, return an input undeclared, declare an alias and return a new tensor, a written result
that is not the argument, a Meta kernel with the wrong shape, dtype, strides or device, no Meta
kernel, inputs that require grad with no autograd registration) fail with torch's texts; the
result dict, OpCheckError and the argument checks. (torch 1.13, the reference installed here, has
no opcheck: the texts are asserted as torch 2.4 writes them.)"""

import pytest

import opdispatch as opd
from opdispatch import Tensor
from opdispatch.library import Library, OpCheckError, custom_op, opcheck

aten = opd.ops.aten
ALL = ("test_schema", "test_autograd_registration", "test_faketensor")
SUCCESS = {name: "SUCCESS" for name in ALL}


@pytest.fixture
def defs():
    """Collects the CustomOpDefs and Libraries a test makes; undone after it."""
    made = []
    yield made
    for d in reversed(made):
        d._destroy() if hasattr(d, "_destroy") else d.close()


def fails(op, args, kwargs=None, *, util, match):
    """The check ``util`` fails on ``op`` with a message matching ``match``."""
    with pytest.raises(OpCheckError, match=f"opcheck\\(op, ...\\): {util} failed with ") as info:
        opcheck(op, args, kwargs, test_utils=util)
    assert str(info.value).endswith(" (scroll up for stack trace)")
    cause = str(info.value.__cause__)
    assert match in cause, cause
    return info.value.__cause__


# ---- operators that pass ---------------------------------------------------------------------

@pytest.mark.parametrize("op, args, kwargs", [
    (aten.add.Tensor, lambda: (opd.randn(2, 3), opd.randn(2, 3)), {}),
    (aten.add.Tensor, lambda: (opd.randn(2, 3, requires_grad=True), opd.randn(3)), {}),
    (aten.add_.Tensor, lambda: (opd.randn(2, 3), opd.randn(2, 3)), {}),
    (aten.add.out, lambda: (opd.randn(2, 3), opd.randn(2, 3)), {"out": opd.empty(2, 3)}),
    (aten.view.default, lambda: (opd.randn(2, 3, requires_grad=True), [3, 2]), {}),
    (aten.split.Tensor, lambda: (opd.randn(4, 3), 2), {}),
    (aten.transpose.int, lambda: (opd.randn(2, 3)[:, 1:], 0, 1), {}),
    (aten.max.dim, lambda: (opd.randn(2, 3), 1), {}),
    (aten.reshape.default, lambda: (opd.randn(2, 3).t(), [6]), {}),
    # NaNs (compared as bytes) in an input whose flattening is a strided view.
    (aten.log.out, lambda: (opd.tensor([[-1., 2.] * 4] * 3)[:, ::2],), {"out": opd.empty(3, 4)}),
    # Composites may return their input: torch checks the operators they call instead.
    (aten.contiguous.default, lambda: (opd.randn(2, 3),), {}),
    (aten.dropout.default, lambda: (opd.randn(2, 3), 0.5, False), {}),
])
def test_builtin_operators_pass(op, args, kwargs):
    assert opcheck(op, args(), kwargs) == SUCCESS


def test_the_inputs_are_left_untouched():
    x, y = opd.ones(2, 3), opd.ones(2, 3)
    assert opcheck(aten.add_.Tensor, (x, y)) == SUCCESS
    assert x._version == 0 and opd.equal(x, opd.ones(2, 3))


def correct_scale(defs):
    @custom_op("opcheck_ok::scale", mutates_args=())
    def scale(x: Tensor, k: float) -> Tensor:
        return x * k

    scale.register_fake(lambda x, k: opd.empty_like(x))
    scale.register_autograd(lambda ctx, g: (g * ctx.k, None),
                            setup_context=lambda ctx, inputs, out: setattr(ctx, "k", inputs[1]))
    defs.append(scale)
    return scale


def test_a_correct_custom_op_passes_as_a_def_a_packet_and_an_overload(defs):
    scale = correct_scale(defs)
    x = opd.randn(2, 3, requires_grad=True)
    assert opcheck(scale, (x, 2.0)) == SUCCESS
    assert opcheck(opd.ops.opcheck_ok.scale, (x, 2.0)) == SUCCESS
    assert opcheck(opd.ops.opcheck_ok.scale.default, (x, 2.0)) == SUCCESS


def test_a_mutating_custom_op_declared_mutable_passes(defs):
    @custom_op("opcheck_ok::inc", mutates_args=("x",))
    def inc(x: Tensor) -> None:
        x.add_(1)

    inc.register_fake(lambda x: None)
    defs.append(inc)
    assert opcheck(inc, (opd.zeros(3),)) == SUCCESS


def test_meta_inputs_skip_every_check_as_torch_skips_fake_ones():
    x = opd.empty(2, 3, device="meta")
    assert opcheck(aten.add.Tensor, (x, x)) == SUCCESS


# ---- test_schema -----------------------------------------------------------------------------

def test_mutating_an_argument_not_declared_mutable(defs):
    @custom_op("opcheck_bad::mutates", mutates_args=())
    def mutates(x: Tensor) -> Tensor:
        x.add_(1)
        return x + 1

    defs.append(mutates)
    fails(mutates, (opd.zeros(3),), util="test_schema",
          match="Argument x is not defined as mutable but was mutated")


def test_a_bumped_version_counter_is_a_mutation_even_with_the_same_data(defs):
    @custom_op("opcheck_bad::touches", mutates_args=())
    def touches(x: Tensor) -> Tensor:
        x.add_(0)
        return x + 1

    defs.append(touches)
    fails(touches, (opd.zeros(3),), util="test_schema",
          match="Argument x is not defined as mutable but was mutated")


def test_data_written_behind_the_version_counter_is_a_mutation(defs):
    @custom_op("opcheck_bad::writes", mutates_args=())
    def writes(x: Tensor) -> Tensor:
        x.numpy()[0] = 5.0
        return x + 1

    defs.append(writes)
    fails(writes, (opd.zeros(3),), util="test_schema",
          match="Argument x is not defined as mutable but was mutated")


@pytest.mark.parametrize("kernel", [lambda x: x, lambda x: x.view(-1)])
def test_returning_an_input_or_its_view_undeclared(defs, kernel):
    @custom_op("opcheck_bad::returns_input", mutates_args=())
    def returns_input(x: Tensor) -> Tensor:
        return kernel(x)

    defs.append(returns_input)
    fails(returns_input, (opd.zeros(3),), util="test_schema",
          match="Argument x is not defined to alias output but was aliasing")


def test_self_is_named_input_as_torch_names_it(defs):
    lib = Library("opcheck_self", "DEF")
    defs.append(lib)
    lib.define("f(Tensor self) -> Tensor")
    lib.impl("f", lambda self: self[0:2], "CPU")
    fails(opd.ops.opcheck_self.f.default, (opd.zeros(3),), util="test_schema",
          match="Argument input is not defined to alias output but was aliasing")


def test_declaring_an_alias_and_returning_a_new_tensor(defs):
    lib = Library("opcheck_alias", "DEF")
    defs.append(lib)
    lib.define("fake_view(Tensor(a) x) -> Tensor(a)")
    lib.impl("fake_view", lambda x: x.clone(), "CPU")
    fails(opd.ops.opcheck_alias.fake_view, (opd.zeros(3),), util="test_schema",
          match="Argument x is defined to alias output but was not aliasing")


def test_a_declared_alias_that_is_the_input_itself(defs):
    lib = Library("opcheck_same", "DEF")
    defs.append(lib)
    lib.define("same(Tensor(a) x) -> Tensor(a)")
    lib.impl("same", lambda x: x, "CPU")
    fails(opd.ops.opcheck_same.same, (opd.zeros(3),), util="test_schema",
          match="Dispatcher operators below autograd are not allowed to directly return "
                "inputs.\nHowever, we found that `outputs[0] is x")


def test_an_out_result_is_the_out_argument_whatever_the_kernel_returns(defs):
    # The binding returns a written argument's own object for its result (python/src/ops.cpp),
    # so test_schema's "out= results are the out objects" holds for every kernel.
    lib = Library("opcheck_out", "DEF")
    defs.append(lib)
    lib.define("double.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    lib.impl("double.out", lambda x, out: out.copy_(x * 2).clone(), "CPU")
    out = opd.empty(3)
    assert opd.ops.opcheck_out.double.out(opd.ones(3), out=out) is out
    assert opcheck(opd.ops.opcheck_out.double.out, (opd.ones(3),), {"out": opd.empty(3)},
                   test_utils="test_schema") == {"test_schema": "SUCCESS"}


def test_outputs_that_alias_each_other_unexpectedly(defs):
    lib = Library("opcheck_pair", "DEF")
    defs.append(lib)
    lib.define("pair(Tensor x) -> (Tensor, Tensor)")

    def pair(x):
        y = x * 2
        return y, y.view(-1)
    lib.impl("pair", pair, "CPU")
    fails(opd.ops.opcheck_pair.pair, (opd.ones(3),), util="test_schema",
          match="Outputs 0 and 1 alias unexpectedly")


# ---- test_faketensor -------------------------------------------------------------------------

def op_with_fake(defs, fake):
    @custom_op("opcheck_fake::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x * 2

    f.register_fake(fake)
    defs.append(f)
    return f


CONTEXT = "When comparing the output of opcheck_fake.f.default on meta and concrete Tensors, found"


@pytest.mark.parametrize("fake, detail", [
    (lambda x: opd.empty(x.shape[0] + 1, device=x.device),
     "Shapes opdispatch.Size([3, 2]) and opdispatch.Size([4]) are not equal!"),
    (lambda x: opd.empty_like(x, dtype=opd.float64),
     "Dtypes opdispatch.float32 and opdispatch.float64 are not equal!"),
    (lambda x: opd.empty_like(x).t().contiguous().t(),
     "Stride mismatch! Strides are (2, 1) and (1, 3) (mismatched at 0)!"),
    (lambda x: opd.empty(3, 2),
     "Devices meta and cpu are not equal!"),
])
def test_a_fake_kernel_that_disagrees_with_the_real_one(defs, fake, detail):
    f = op_with_fake(defs, fake)
    cause = fails(f, (opd.ones(3, 2),), util="test_faketensor",
                  match=f"{CONTEXT} mismatched tensor metadata: {detail}")
    assert type(cause).__name__ == "MetadataMismatchError" and isinstance(cause, RuntimeError)


def test_a_fake_kernel_returning_its_input_where_the_real_one_returns_a_view(defs):
    lib = Library("opcheck_ident", "DEF")
    defs.append(lib)
    lib.define("flat(Tensor(a) x) -> Tensor(a)")
    lib.impl("flat", lambda x: x.view(-1), "CPU")
    lib.impl("flat", lambda x: x, "Meta")
    fails(opd.ops.opcheck_ident.flat, (opd.ones(3),), util="test_faketensor",
          match="When comparing the output of opcheck_ident.flat.default on meta and concrete "
                "Tensors, found mismatch in outputs_are_inputs check True != False")


def test_a_fake_kernel_with_another_storage_offset(defs):
    lib = Library("opcheck_offset", "DEF")
    defs.append(lib)
    lib.define("tail(Tensor(a) x) -> Tensor(a)")
    lib.impl("tail", lambda x: x[1:], "CPU")
    lib.impl("tail", lambda x: opd.empty(x.shape[0] - 1, device="meta"), "Meta")
    fails(opd.ops.opcheck_offset.tail, (opd.ones(3),), util="test_faketensor",
          match="When comparing the output of opcheck_offset.tail.default on meta and concrete "
                "Tensors, found mismatched storage offset")


def test_a_backend_kernel_whose_output_requires_grad_where_meta_does_not(defs):
    lib = Library("opcheck_rg", "DEF")
    defs.append(lib)
    lib.define("r(Tensor x) -> Tensor")
    lib.impl("r", lambda x: (x * 2).requires_grad_(True), "CPU")
    lib.impl("r", lambda x: opd.empty_like(x), "Meta")
    fails(opd.ops.opcheck_rg.r, (opd.ones(3),), util="test_faketensor",
          match="When comparing the output of opcheck_rg.r.default on meta and concrete Tensors, "
                "found mismatched requires_grad-ness of outputs. This usually means that you "
                "have added autograd support for your operator at a dispatch key other than "
                "Autograd, which will lead to problems")


def test_a_custom_op_without_register_fake(defs):
    @custom_op("opcheck_nofake::g", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return x * 2

    defs.append(g)
    fails(g, (opd.ones(3),), util="test_faketensor",
          match="There was no fake impl registered for <CustomOpDef(opcheck_nofake::g)>. This is "
                "necessary for meta tensors (shapes and dtypes without data) to work. Please "
                "use `g.register_fake` to add an fake impl.")


def test_a_library_op_without_a_meta_kernel(defs):
    lib = Library("opcheck_nometa", "DEF")
    defs.append(lib)
    lib.define("h(Tensor x) -> Tensor")
    lib.impl("h", lambda x: x * 2, "CPU")
    fails(opd.ops.opcheck_nometa.h, (opd.ones(3),), util="test_faketensor",
          match="opcheck_nometa.h.default has no meta implementation")


# ---- test_autograd_registration --------------------------------------------------------------

def test_inputs_that_require_grad_and_no_autograd_registration(defs):
    lib = Library("opcheck_noad", "DEF")
    defs.append(lib)
    lib.define("k(Tensor x) -> Tensor")
    lib.impl("k", lambda x: x * 2, "CPU")
    k = opd.ops.opcheck_noad.k
    assert opcheck(k, (opd.ones(3),), test_utils="test_autograd_registration") == {
        "test_autograd_registration": "SUCCESS"}  # nothing requires grad: nothing to check
    fails(k, (opd.ones(3, requires_grad=True),), util="test_autograd_registration",
          match="opcheck_noad::k: its inputs require grad but the operator does not have an "
                "autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd) or a "
                "CompositeImplicitAutograd kernel, so the call was served by the autograd "
                "fallback")


def test_a_backend_kernel_that_gives_its_output_history(defs):
    lib = Library("opcheck_wrongkey", "DEF")
    defs.append(lib)
    lib.define("m(Tensor x) -> Tensor")
    lib.impl("m", lambda x: (x * 2).detach().requires_grad_(True), "CPU")
    fails(opd.ops.opcheck_wrongkey.m, (opd.ones(3, requires_grad=True),),
          util="test_autograd_registration",
          match="opcheck_wrongkey::m: at least one output of this operator has "
                "requires_grad=True but the operator does not have an autograd kernel defined "
                "at an autograd key (e.g. DispatchKey::Autograd).")
    assert opd._C._get_autograd_fallback_mode() == "warn"  # restored


def test_composite_implicit_autograd_counts_as_registered(defs):
    lib = Library("opcheck_cia", "DEF")
    defs.append(lib)
    lib.define("n(Tensor x) -> Tensor")
    lib.impl("n", lambda x: x * 2, "CompositeImplicitAutograd")
    assert opcheck(opd.ops.opcheck_cia.n, (opd.ones(3, requires_grad=True),)) == SUCCESS


# ---- the result, the errors, the arguments ---------------------------------------------------

def test_raise_exception_false_returns_the_exceptions(defs):
    @custom_op("opcheck_dict::bad", mutates_args=())
    def bad(x: Tensor) -> Tensor:
        return x

    defs.append(bad)
    result = opcheck(bad, (opd.ones(3),), raise_exception=False)
    assert list(result) == list(ALL)
    assert isinstance(result["test_schema"], RuntimeError)
    assert "not defined to alias output" in str(result["test_schema"])
    assert result["test_autograd_registration"] == "SUCCESS"
    assert "no fake impl" in str(result["test_faketensor"])


def test_test_utils_names():
    x = opd.ones(2)
    assert opcheck(aten.add.Tensor, (x, x), test_utils="test_schema") == {
        "test_schema": "SUCCESS"}
    assert opcheck(aten.add.Tensor, (x, x), test_utils="ALL") == SUCCESS
    assert list(opcheck(aten.add.Tensor, (x, x), test_utils=["test_faketensor",
                                                              "test_schema"])) == [
        "test_faketensor", "test_schema"]
    with pytest.raises(ValueError, match=r"opcheck\(op, ..., test_utils=\('test_schem',\)\), "
                       r"expected test_utils to be subset of \('test_schema', "
                       r"'test_autograd_registration', 'test_faketensor'\) but it was not$"):
        opcheck(aten.add.Tensor, (x, x), test_utils="test_schem")
    with pytest.raises(ValueError, match="test_aot_dispatch_dynamic: not available, opdispatch "
                                         "has no ahead-of-time compiler"):
        opcheck(aten.add.Tensor, (x, x), test_utils=("test_schema", "test_aot_dispatch_dynamic"))


def test_op_and_tolerance_arguments():
    x = opd.ones(2)
    with pytest.raises(ValueError, match="if you specify one of rtol/atol, you must specify both"):
        opcheck(aten.add.Tensor, (x, x), atol=1e-5)
    assert opcheck(aten.add.Tensor, (x, x), atol=1e-5, rtol=1e-5) == SUCCESS
    with pytest.raises(ValueError, match="op must be instance of opdispatch.ops.OpOverload"):
        opcheck(lambda a, b: a + b, (x, x))
    with pytest.raises(RuntimeError, match=r"opcheck can only test operators without "
                       r"overloads. Got the following overloads for aten::add: "):
        opcheck(aten.add, (x, x))
    assert opcheck(aten.relu, (x,)) == SUCCESS  # a packet with one overload


def test_testing_reexports_opcheck():
    import opdispatch.testing
    assert opdispatch.testing.opcheck is opcheck
