"""opdispatch._subclasses.fake_tensor against torch 1.13's torch._subclasses.fake_tensor: the
same programs run under both FakeTensorModes give FakeTensors of the same sizes, strides,
storage offsets, dtypes and devices; data-dependent operators raise torch's exceptions; device
propagation, in-place operators, views, autograd and the texts as torch's."""

import gc
import os
import weakref

import pytest

import opdispatch as opd
from opdispatch._subclasses.fake_tensor import (DataDependentOutputException,
                                                DynamicOutputShapeException, FakeTensor,
                                                FakeTensorMode)

torch = pytest.importorskip("torch", reason="compares with torch 1.13 (Debian's python3-torch)")
from torch._subclasses import fake_tensor as torch_fake  # noqa: E402

aten = opd.ops.aten


def _mode(lib, **kwargs):
    if lib is torch:
        # torch 1.13's default runs item() on zeros; both raise with this (torch 2's default).
        kwargs.setdefault("throw_on_data_dependent_ops", True)
        return torch_fake.FakeTensorMode(**kwargs)
    return FakeTensorMode(**kwargs)


def _meta(t, real=False):
    """What a FakeTensor is: its class, metadata and fake device, comparable across libs."""
    assert type(t).__name__ == ("Tensor" if real else "FakeTensor"), type(t)
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), str(t.dtype).split(".")[-1],
            str(t.device), t.requires_grad)


def _metas(result):
    if isinstance(result, (list, tuple)):
        return [_metas(r) for r in result]
    return _meta(result)


def _inputs(lib, mode):
    return {
        "x": mode.from_tensor(lib.randn(2, 3)),
        "y": mode.from_tensor(lib.ones(3)),
        "m": mode.from_tensor(lib.ones(3, 4)),
        "i": mode.from_tensor(lib.arange(6, dtype=lib.int32).reshape(2, 3)),
        "h": mode.from_tensor(lib.ones(2, 3, dtype=lib.float16)),
        "img": mode.from_tensor(lib.ones(1, 3, 8, 8)),
        "w": mode.from_tensor(lib.ones(4, 3, 3, 3)),
        "idx": mode.from_tensor(lib.tensor([1, 0, 1])),
        "g": mode.from_tensor(lib.ones(3, 4, requires_grad=True)),
    }


# Programs run under each library's FakeTensorMode: (name, function of (lib, inputs)).
PROGRAMS = [
    ("broadcast", lambda L, v: v["x"] + v["y"]),
    ("python_number", lambda L, v: v["x"] * 2.5 - 1),
    ("half_and_number", lambda L, v: v["h"] + 1.5),
    ("int_true_divide", lambda L, v: v["i"] / 2),
    ("int_and_float", lambda L, v: v["i"] + v["x"]),
    ("matmul", lambda L, v: v["x"] @ v["m"]),
    ("sum_dim", lambda L, v: v["x"].sum(1, keepdim=True)),
    ("mean_all", lambda L, v: v["x"].mean()),
    ("max_dim", lambda L, v: tuple(v["x"].max(dim=1))),
    ("transpose", lambda L, v: v["x"].t()),
    ("permute_contiguous", lambda L, v: v["x"].unsqueeze(0).permute(2, 0, 1).contiguous()),
    ("slice", lambda L, v: v["m"][1:, ::2]),
    ("expand", lambda L, v: v["y"].expand(4, 3)),
    ("view", lambda L, v: v["m"].view(2, 6)),
    ("cat", lambda L, v: L.cat([v["x"], v["x"]], 1)),
    ("stack", lambda L, v: L.stack([v["y"], v["y"]])),
    ("to_dtype", lambda L, v: v["x"].to(L.float64)),
    ("softmax", lambda L, v: L.nn.functional.softmax(v["x"], -1)),
    ("conv2d", lambda L, v: L.nn.functional.conv2d(v["img"], v["w"], padding=1, stride=2)),
    ("index_tensor", lambda L, v: v["x"][:, v["idx"]]),
    ("split", lambda L, v: list(v["m"].split(2, 1))),
    ("clone_of_transpose", lambda L, v: v["x"].t().clone()),
    ("where", lambda L, v: L.where(v["x"] > 0, v["x"], v["y"])),
    ("where_number", lambda L, v: L.where(v["x"] > 0, v["x"], 0.0)),
    ("topk", lambda L, v: tuple(v["m"].topk(2))),
    ("batch_norm_training", lambda L, v: L.nn.functional.batch_norm(
        v["img"], L.zeros(3), L.ones(3), training=True)),
    ("scatter", lambda L, v: L.zeros(2, 4).scatter(1, v["i"].long() % 4, v["x"])),
    ("resize_", lambda L, v: v["x"].clone().resize_(5, 5)),
    ("copy_", lambda L, v: L.empty(3, 2, dtype=L.float64).t().copy_(v["x"])),
    ("grad_of_mse", lambda L, v: L.autograd.grad(
        L.nn.functional.mse_loss(v["g"] * 2, L.zeros(3, 4)), [v["g"]])[0]),
]


@pytest.mark.parametrize("name,program", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_program_metadata_as_torch(name, program):
    results = []
    for lib in (torch, opd):
        mode = _mode(lib)
        v = _inputs(lib, mode)
        with mode:
            results.append(_metas(program(lib, v)))
    assert results[1] == results[0]


FACTORIES = [
    ("empty", lambda L: L.empty(2, 3)),
    ("zeros_int", lambda L: L.zeros(2, 3, dtype=L.int32)),
    ("ones", lambda L: L.ones(4)),
    ("full", lambda L: L.full((2, 2), 7)),
    ("arange", lambda L: L.arange(10)),
    ("arange_float", lambda L: L.arange(1, 5, 0.5)),
    ("rand", lambda L: L.rand(3, 2)),
    ("randn", lambda L: L.randn(5)),
    ("empty_strided", lambda L: L.empty_strided((2, 3), (1, 2))),
]


@pytest.mark.parametrize("name,factory", FACTORIES, ids=[n for n, _ in FACTORIES])
def test_factories_make_fakes_as_torch(name, factory):
    # Against torch's real tensors: torch 1.13's FakeTensorMode makes full((2, 2), 7) float32
    # where torch.full makes int64.
    with _mode(opd):
        fake = factory(opd)
    assert _meta(fake) == _meta(factory(torch), real=True)


def test_like_factories_keep_the_input_device():
    mode = FakeTensorMode()
    x = FakeTensor(mode, opd.empty(2, 3, device="meta"), "cuda:0")
    with mode:
        assert opd.zeros_like(x).device == opd.device("cuda:0")
        assert opd.zeros_like(x, dtype=opd.int32).dtype == opd.int32
        assert x.new_zeros(5).device == opd.device("cuda:0")
        assert opd.empty(3, device="cuda:0").device == opd.device("cuda:0")
        assert opd.empty_like(x, device="cpu").device == opd.device("cpu")
        moved = x.to("cpu")
        assert type(moved) is FakeTensor and moved.device == opd.device("cpu")
        assert tuple(moved.shape) == (2, 3)
        # A cuda device without an index is cuda:0 (torch: the current CUDA device).
        assert moved.to("cuda").device == moved.cuda().device == opd.device("cuda:0")
        assert opd.empty(2, device="cuda").device == opd.device("cuda:0")


def test_from_tensor_as_torch():
    cases = [
        lambda L: L.ones(2, 3),
        lambda L: L.ones(2, 3).t(),
        lambda L: L.ones(4, 4)[1:, 2:],
        lambda L: L.arange(6, dtype=L.int32).view(2, 3).t(),
        lambda L: L.ones(2, requires_grad=True),
        lambda L: L.ones(2, requires_grad=True) * 2,
        lambda L: L.ones(()),
        lambda L: L.ones(0, 3),
    ]
    for case in cases:
        results = []
        for lib in (torch, opd):
            fake = _mode(lib).from_tensor(case(lib))
            results.append((_meta(fake), fake.is_leaf, fake.grad_fn is None))
        assert results[1] == results[0]


def test_from_tensor_is_memoized_while_the_tensor_lives():
    mode = FakeTensorMode()
    t = opd.ones(3)
    fake = mode.from_tensor(t)
    assert mode.from_tensor(t) is fake
    assert FakeTensor.from_tensor(t, mode) is fake
    assert FakeTensorMode().from_tensor(t) is not fake
    ref = weakref.ref(fake)
    del t, fake
    gc.collect()
    assert ref() is None
    assert not mode.fake_tensor_converter.tensor_memo


def test_from_tensor_converts_the_grad():
    t = opd.ones(2, 3, requires_grad=True)
    t.grad = opd.ones(2, 3).t().contiguous().t()
    fake = FakeTensorMode().from_tensor(t)
    assert type(fake.grad) is FakeTensor
    assert fake.grad.stride() == (1, 2)


def test_repr_as_torch():
    texts = []
    for lib in (torch, opd):
        mode = _mode(lib)
        x = mode.from_tensor(lib.ones(2, 3, requires_grad=True))
        i = mode.from_tensor(lib.ones(4, dtype=lib.int64))
        texts.append([repr(x), repr(x * 2), repr(i), str(x.detach())])
    expected = [t.replace("torch.", "opdispatch.") for t in texts[0]]
    assert texts[1] == expected
    assert texts[1][0] == ("FakeTensor(FakeTensor(..., device='meta', size=(2, 3), "
                           "requires_grad=True), cpu)")


def test_data_dependent_operators_raise_as_torch():
    programs = [
        lambda L, v: v["x"].sum().item(),
        lambda L, v: bool(v["x"][0, 0] > 0),
        lambda L, v: float(v["x"].sum()),
    ]
    for program in programs:
        errors = []
        for lib in (torch, opd):
            mode = _mode(lib)
            v = _inputs(lib, mode)
            with mode, pytest.raises(RuntimeError) as info:
                program(lib, v)
            errors.append((type(info.value).__name__, str(info.value)))
            if lib is opd:
                assert isinstance(info.value, DataDependentOutputException)
                assert info.value.func is aten._local_scalar_dense.default
        assert errors[1] == errors[0] == ("DataDependentOutputException",
                                          "aten._local_scalar_dense.default")


def test_item_without_throwing_reads_zeros_as_torch_113():
    for lib in (torch, opd):
        mode = _mode(lib, throw_on_data_dependent_ops=False)
        v = _inputs(lib, mode)
        with mode:
            assert v["x"].sum().item() == 0.0


def test_dynamic_output_shape_operators_raise_as_torch():
    programs = [
        lambda L, v: L.nonzero(v["x"]),
        lambda L, v: v["x"][v["x"] > 0],
    ]
    for program in programs:
        errors = []
        for lib in (torch, opd):
            mode = _mode(lib)
            v = _inputs(lib, mode)
            with mode, pytest.raises(DynamicOutputShapeException if lib is opd
                                     else torch_fake.DynamicOutputShapeException) as info:
                program(lib, v)
            errors.append(str(info.value))
        assert errors[1] == errors[0]
    mode = FakeTensorMode()
    with mode, pytest.raises(DynamicOutputShapeException) as info:
        opd.nonzero(mode.from_tensor(opd.ones(3)))
    assert info.value.func is aten.nonzero.default
    assert isinstance(info.value, RuntimeError)
    # opdispatch's masked_select is CompositeImplicitAutograd (indexing with the mask): the mode
    # sees aten.index.Tensor where torch's sees aten.masked_select.default.
    x = mode.from_tensor(opd.ones(3))
    with mode, pytest.raises(DynamicOutputShapeException) as info:
        opd.masked_select(x, x > 0)
    assert info.value.func is aten.index.Tensor


def test_real_tensors_are_refused_as_torch():
    texts = []
    for lib in (torch, opd):
        mode = _mode(lib)
        x = mode.from_tensor(lib.zeros(2))
        real = lib.ones(2)
        with mode, pytest.raises(Exception) as info:
            x + real
        texts.append((type(info.value).__name__, str(info.value)))
    assert texts[1] == (texts[0][0], texts[0][1].replace("torch.", "opdispatch."))
    assert texts[1][1].startswith(
        "Invoking operators with non-Fake Tensor inputs in FakeTensorMode is not yet supported. "
        "Please convert all Tensors to FakeTensors first. Found in aten.add.Tensor(*(FakeTensor(")


def test_allow_non_fake_inputs_converts_them():
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    x = mode.from_tensor(opd.zeros(2, 3))
    real = opd.ones(3)
    with mode:
        out = x + real
    assert type(out) is FakeTensor and tuple(out.shape) == (2, 3)
    assert mode.from_tensor(real) is mode.from_tensor(real)


def test_outside_the_mode_fakes_stay_fake():
    mode = FakeTensorMode()
    x = mode.from_tensor(opd.ones(2, 3))
    out = (x * 2).sum(0)
    assert type(out) is FakeTensor and out.fake_mode is mode
    assert _meta(out) == ((3,), (1,), 0, "float32", "cpu", False)


def test_device_propagation():
    mode = FakeTensorMode()
    gpu = FakeTensor(mode, opd.empty(4, 3, device="meta"), "cuda:0")
    cpu = mode.from_tensor(opd.ones(4, 3))
    scalar = mode.from_tensor(opd.tensor(2.0))
    assert gpu.device == gpu.fake_device == opd.device("cuda:0")
    assert (gpu + scalar).device == opd.device("cuda:0")
    assert (scalar + gpu).device == opd.device("cuda:0")
    assert (scalar * scalar).device == opd.device("cpu")
    assert gpu.sum().device == opd.device("cuda:0")
    with pytest.raises(RuntimeError) as info:
        gpu + cpu
    assert str(info.value) == ("Unhandled FakeTensor Device Propagation for aten.add.Tensor, "
                               "found two different devices cuda:0, cpu")
    # Indexing takes index tensors on the CPU: the result is on self's device.
    index = mode.from_tensor(opd.tensor([0, 2]))
    picked = gpu[index]
    assert picked.device == opd.device("cuda:0") and tuple(picked.shape) == (2, 3)
    assert repr(gpu) == "FakeTensor(FakeTensor(..., device='meta', size=(4, 3)), cuda:0)"


def test_in_place_operators_return_their_argument():
    results = []
    for lib in (torch, opd):
        mode = _mode(lib)
        v = _inputs(lib, mode)
        x = v["x"]
        with mode:
            same = [x.add_(1) is x, x.mul_(v["y"]) is x]
            x.unsqueeze_(0)
            after_unsqueeze = _meta(x)
            x.transpose_(0, 2)
            after_transpose = _meta(x)
            out = lib.empty(0)
            returned = lib.add(v["y"], v["m"][:2, :3], out=out)
            same.append(returned is out)
            after_out = _meta(out)
        results.append((same, after_unsqueeze, after_transpose, after_out))
    assert results[1] == results[0]
    assert results[1][0] == [True, True, True]


def test_views_keep_metadata_as_torch():
    results = []
    for lib in (torch, opd):
        mode = _mode(lib)
        base = mode.from_tensor(lib.ones(4, 6))
        with mode:
            views = [base[1:, 2:], base.t()[::2], base.view(3, 8), base[2], base.narrow(1, 1, 3),
                     base.unflatten(1, (2, 3)).select(2, 1), base.as_strided((2, 2), (1, 6), 5)]
        results.append([_meta(v) for v in views])
    assert results[1] == results[0]


def test_autograd_through_fakes():
    mode = FakeTensorMode()
    w = mode.from_tensor(opd.ones(3, 4, requires_grad=True))
    x = mode.from_tensor(opd.ones(2, 3))
    with mode:
        loss = (x @ w).relu().sum()
        assert loss.grad_fn is not None
        loss.backward()
    assert type(w.grad) is FakeTensor
    assert _meta(w.grad) == ((3, 4), (4, 1), 0, "float32", "cpu", False)
    assert x.grad is None


def test_nested_in_another_mode_sees_fake_operators():
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    mode = FakeTensorMode()
    x = mode.from_tensor(opd.ones(2))
    with mode, Record():
        out = x + x
    assert seen == [aten.add.Tensor]
    assert type(out) is FakeTensor


def test_tolist_is_refused_as_torch():
    for lib in (torch, opd):
        x = _mode(lib).from_tensor(lib.ones(2))
        with pytest.raises(RuntimeError, match=r"\.tolist\(\) is not supported for tensor "
                           r"subclasses\."):
            x.tolist()


def test_a_vendor_device_is_faked_as_cuda_is():
    manifest = os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "acme_device", "acme_device.yaml")
    status = opd.plugins.load(manifest)
    assert status.state == "loaded", status.reason
    try:
        mode = FakeTensorMode()
        real = opd.ones(2, 3).to("acme:0")
        x = mode.from_tensor(real)
        scalar = mode.from_tensor(opd.tensor(3.0))
        assert x.device == opd.device("acme:0") and type(x) is FakeTensor
        with mode:
            y = x * scalar + 1
            moved = mode.from_tensor(opd.ones(2, 3)).to("acme:0")
            z = opd.zeros(4, device="acme:0")
        assert y.device == moved.device == z.device == opd.device("acme:0")
        assert repr(y) == "FakeTensor(FakeTensor(..., device='meta', size=(2, 3)), acme:0)"
        with pytest.raises(RuntimeError, match="found two different devices acme:0, cpu"):
            x + mode.from_tensor(opd.ones(2, 3))
        del real, x, y, moved, z
    finally:
        opd.plugins.unload("acme_device")


def test_an_operator_without_a_meta_kernel_falls_back_to_the_cpu_on_zeros():
    from opdispatch.library import Library

    lib = Library("fake_test", "DEF")
    lib.define("twice_rows(Tensor x) -> Tensor")
    lib.impl("twice_rows", lambda x: opd.cat([x, x]), "CPU")
    op = opd.ops.fake_test.twice_rows.default
    try:
        mode = FakeTensorMode()
        x = mode.from_tensor(opd.ones(2, 3).t())
        with mode:
            out = op(x)
        assert _meta(out) == ((6, 2), (2, 1), 0, "float32", "cpu", False)
        gpu = FakeTensor(mode, opd.empty(2, device="meta"), "cuda:0")
        with mode, pytest.raises(NotImplementedError, match="'fake_test::twice_rows'"):
            op(gpu)
        strict = FakeTensorMode(allow_fallback_kernels=False)
        with strict, pytest.raises(NotImplementedError, match="'Meta' backend"):
            op(strict.from_tensor(opd.ones(2)))
        # With a Meta kernel, that runs.
        lib.impl("twice_rows", lambda x: opd.empty(2 * x.shape[0], *x.shape[1:],
                                                   device="meta"), "Meta")
        with mode:
            assert tuple(op(gpu).shape) == (4,) and op(gpu).device == opd.device("cuda:0")
    finally:
        lib._destroy()


def test_the_mode_is_per_thread_and_left_on_errors():
    import threading

    from opdispatch.utils._python_dispatch import _len_torch_dispatch_stack

    mode = FakeTensorMode()
    x = mode.from_tensor(opd.ones(3))
    seen = []
    with mode:
        thread = threading.Thread(target=lambda: seen.append(type(opd.ones(2) + 1)))
        thread.start()
        thread.join()
        inside = type(opd.ones(2) + 1)
        with pytest.raises(DataDependentOutputException):
            x.sum().item()
        assert _len_torch_dispatch_stack() == 1
    assert seen == [opd.Tensor] and inside is FakeTensor
    assert _len_torch_dispatch_stack() == 0


def test_an_operator_defined_anew_is_read_anew():
    from opdispatch.library import Library

    mode = FakeTensorMode()
    lib = Library("fake_test2", "DEF")
    lib.define("make(Tensor x) -> Tensor")
    lib.impl("make", lambda x: opd.empty_like(x), "Meta")
    with mode:
        assert opd.ops.fake_test2.make.default(opd.empty(3)).device == opd.device("cpu")
    lib._destroy()
    # Now a factory: its device argument is the result's device.
    lib = Library("fake_test2", "DEF")
    try:
        lib.define("make(int n, *, Device? device=None) -> Tensor")
        lib.impl("make", lambda n, device=None: opd.empty(n, device=device), "Meta")
        with mode:
            out = opd.ops.fake_test2.make.default(4, device="cuda:0")
        assert out.device == opd.device("cuda:0") and tuple(out.shape) == (4,)
    finally:
        lib._destroy()
