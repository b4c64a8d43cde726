"""opdispatch.nn.functional against torch 1.13's torch.nn.functional (python/opdispatch/nn/):
values and gradients (through opdispatch.autograd) of every function on small float64 inputs,
the defaults and keyword names (inspect.signature, or the first line of torch's docstring for
its builtins), the in-place forms, the legacy reduction arguments, and the error texts and
warnings of the Python compositions.

A case whose operator is not in opdispatch yet (another helper adds it) is an xfail naming it."""

import inspect
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import opdispatch as opd  # noqa: E402
import opdispatch.nn.functional as F  # noqa: E402



def _runnable_operators():
    """The aten operator names with a CPU or composite kernel for some overload (a schema alone,
    while its kernels are being written, is not enough)."""
    has = opd._C._dispatch_has_kernel_for_dispatch_key
    names = set()
    for qualified in opd._C._dispatch_get_all_op_names():
        if qualified.startswith("aten::") and any(
                has(qualified, key) for key in ("CPU", "CompositeImplicitAutograd",
                                                "CompositeExplicitAutograd")):
            names.add(qualified[len("aten::"):].split(".")[0])
    return names


_OPS = _runnable_operators()


class NoGrad:
    """A float input that must not require grad (running stats, targets)."""

    def __init__(self, array):
        self.array = array


class DType:
    """A dtype by name, the library's own (opdispatch.float64 or torch.float64)."""

    def __init__(self, name):
        self.name = name


def lib_value(lib, a, grad, leaves):
    if isinstance(a, DType):
        return getattr(lib, a.name)
    if isinstance(a, NoGrad):
        return lib.from_numpy(a.array.copy())
    if isinstance(a, np.ndarray):
        t = lib.from_numpy(a.copy())
        if grad and a.dtype.kind == "f":
            t.requires_grad_(True)
            leaves.append(t)
        return t
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
        return [lib_value(lib, x, grad, leaves) for x in a]
    return a


def run(lib, fn, args, kwargs, grad=True):
    """(outputs as numpy, gradients of sum(output * w) for each float input as numpy)."""
    leaves = []
    a = [lib_value(lib, x, grad, leaves) for x in args]
    k = {n: lib_value(lib, v, grad, leaves) for n, v in kwargs.items()}
    out = fn(lib)(*a, **k)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    values = [o.detach().numpy().copy() for o in outs]
    grads = []
    floating = [o for o in outs if o.dtype in (lib.float32, lib.float64) and o.requires_grad]
    if grad and leaves and floating:
        rng = np.random.default_rng(7)
        total = None
        for o in floating:
            w = lib.from_numpy(rng.standard_normal(tuple(o.shape)).astype(np.float64)).to(o.dtype)
            term = (o * w).sum()
            total = term if total is None else total + term
        grads = [None if g is None else g.numpy().copy()
                 for g in lib.autograd.grad(total, leaves, allow_unused=True)]
    return values, grads


def functional_of(lib):
    return F if lib is opd else TF


def rand(*shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed + 97 * len(shape)).uniform(low, high, shape)


def positive(*shape, seed=0):
    return rand(*shape, seed=seed, low=0.1, high=0.9)


def labels(n, classes, seed=0, shape=None):
    return np.random.default_rng(seed).integers(0, classes, shape or n).astype(np.int64)


def case(name, *args, needs=(), grad=True, id=None, fn=None, **kwargs):
    """fn(F) picks the function (default F.<name>); needs: the aten operators it calls."""
    missing = [op for op in needs if op not in _OPS]
    marks = [pytest.mark.xfail(strict=True, reason=f"aten::{', '.join(missing)} not in "
                               "opdispatch yet")] if missing else []
    pick = fn or (lambda f, name=name: getattr(f, name))
    return pytest.param(pick, args, kwargs, grad, marks=marks, id=id or name)


x34 = rand(3, 4)
x2345 = rand(2, 3, 4, 5)
img = rand(2, 3, 7, 6)

CASES = [
    # activations
    case("relu", x34),
    case("relu6", x34 * 4, needs=["relu6"]),
    case("elu", x34, alpha=0.5),
    case("selu", x34),
    case("celu", x34, alpha=0.7),
    case("leaky_relu", x34, 0.2),
    case("prelu", x2345, rand(3, seed=1)),
    case("glu", rand(3, 4, 6), dim=1),
    case("glu", rand(3, 4, 6), id="glu_default_dim"),
    case("gelu", x34),
    case("gelu", x34, approximate="tanh", id="gelu_tanh"),
    case("silu", x34),
    case("mish", x34),
    case("hardtanh", x34, -0.5, max_val=0.7),
    case("hardsigmoid", x34 * 4),
    case("hardswish", x34 * 4),
    case("softplus", x34, beta=2, threshold=1),
    case("logsigmoid", x34),
    case("threshold", x34, 0.1, 20.0),
    case("sigmoid", x34),
    case("tanh", x34),
    case("softmax", x2345, dim=1),
    case("softmax", x34, 1, dtype=None, id="softmax_dtype_none"),
    case("softmax", x34.astype(np.float32), 0, dtype=DType("float64"), id="softmax_dtype"),
    case("log_softmax", x2345, dim=-1),
    case("log_softmax", x34.astype(np.float32), 1, dtype=DType("float64"),
         id="log_softmax_dtype"),
    case("softmin", x34.astype(np.float32), 1, dtype=DType("float64"), id="softmin_dtype"),
    case("softmin", x2345, 2),
    # linear, normalize, distances
    case("linear", x34, rand(5, 4, seed=1), rand(5, seed=2)),
    case("linear", x34, rand(5, 4, seed=1), id="linear_no_bias"),
    case("bilinear", rand(3, 4), rand(3, 2, seed=1), rand(5, 4, 2, seed=2), rand(5, seed=3),
         needs=["bilinear"]),
    case("normalize", x34),
    case("normalize", x2345, p=1.0, dim=0, id="normalize_p1_dim0"),
    case("cosine_similarity", x34, rand(3, 4, seed=1), needs=["cosine_similarity"]),
    case("cosine_similarity", x34, rand(1, 4, seed=1), dim=0, eps=1e-6,
         needs=["cosine_similarity"], id="cosine_similarity_broadcast"),
    case("pairwise_distance", x34, rand(3, 4, seed=1), needs=["pairwise_distance"]),
    case("pairwise_distance", x34, rand(3, 4, seed=1), p=1.0, keepdim=True,
         needs=["pairwise_distance"], id="pairwise_distance_p1"),
    case("one_hot", labels(5, 4), needs=["one_hot"]),
    case("one_hot", labels(5, 4), num_classes=6, needs=["one_hot"], id="one_hot_classes"),
    case("pixel_shuffle", rand(2, 8, 3, 3), 2, needs=["pixel_shuffle"]),
    # dropout, embedding, norms
    case("dropout", x34, training=False, needs=["dropout"], id="dropout_eval"),
    case("dropout", x34, p=0.0, needs=["dropout"], id="dropout_p0"),
    case("embedding", labels(6, 5, shape=(2, 3)), rand(5, 4, seed=1), needs=["embedding"]),
    case("embedding", labels(6, 5, shape=(2, 3)), rand(5, 4, seed=1), padding_idx=-1,
         needs=["embedding"], id="embedding_padding_idx"),
    case("embedding", labels(6, 5, shape=(2, 3)), rand(5, 4, seed=1), max_norm=1.5,
         norm_type=1.0, needs=["embedding_renorm_"], id="embedding_max_norm"),
    case("layer_norm", x2345, (4, 5), rand(4, 5, seed=1), rand(4, 5, seed=2),
         needs=["layer_norm"]),
    case("layer_norm", x2345, [5], eps=1e-3, needs=["layer_norm"], id="layer_norm_plain"),
    case("batch_norm", x2345, NoGrad(rand(3, seed=1)), NoGrad(positive(3, seed=2)),
         rand(3, seed=3), rand(3, seed=4), needs=["batch_norm"], id="batch_norm_eval"),
    case("batch_norm", x2345, None, None, training=True, needs=["batch_norm"],
         id="batch_norm_train_no_stats"),
    case("group_norm", rand(2, 6, 3, 2), 3, rand(6, seed=1), rand(6, seed=2),
         needs=["group_norm"]),
    case("instance_norm", rand(2, 3, 4, 4), needs=["instance_norm"]),
    case("instance_norm", rand(2, 3, 5), NoGrad(rand(3, seed=1)), NoGrad(positive(3, seed=2)),
         rand(3, seed=3), rand(3, seed=4), use_input_stats=False, needs=["instance_norm"],
         id="instance_norm_running_stats"),
    # convolution, pooling, padding, resampling
    case("conv1d", rand(2, 4, 9), rand(6, 2, 3, seed=1), rand(6, seed=2), stride=2, padding=1,
         groups=2, needs=["conv1d"]),
    case("conv2d", img, rand(4, 3, 3, 2, seed=1), rand(4, seed=2), padding=1, needs=["conv2d"]),
    case("conv2d", img, rand(4, 3, 3, 3, seed=1), stride=(2, 1), dilation=2,
         needs=["conv2d"], id="conv2d_stride_dilation"),
    case("conv2d", img, rand(2, 3, 3, 3, seed=1), padding="same", needs=["conv2d"],
         id="conv2d_same"),
    case("conv_transpose2d", img, rand(3, 2, 3, 3, seed=1), rand(2, seed=2), stride=2,
         padding=1, output_padding=1, needs=["conv_transpose2d"]),
    case("max_pool1d", rand(2, 3, 9), 3, stride=2, padding=1, needs=["max_pool1d"]),
    case("max_pool1d", rand(2, 3, 9), 2, return_indices=True,
         needs=["max_pool1d_with_indices"], id="max_pool1d_indices"),
    case("max_pool2d", img, 2, needs=["max_pool2d"]),
    case("max_pool2d", img, (3, 2), stride=2, padding=1, ceil_mode=True, return_indices=True,
         needs=["max_pool2d_with_indices"], id="max_pool2d_indices"),
    case("avg_pool1d", rand(2, 3, 9), 3, stride=2, needs=["avg_pool1d"]),
    case("avg_pool2d", img, 2, needs=["avg_pool2d"]),
    case("avg_pool2d", img, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False,
         needs=["avg_pool2d"], id="avg_pool2d_options"),
    case("adaptive_avg_pool2d", img, (3, None), needs=["adaptive_avg_pool2d"]),
    case("adaptive_avg_pool2d", img, 2, needs=["adaptive_avg_pool2d"],
         id="adaptive_avg_pool2d_int"),
    case("pad", img, (1, 2, 0, 1), needs=["pad"]),
    case("pad", img, (1, 2, 0, 1), value=0.5, needs=["pad"], id="pad_value"),
    case("pad", img, (1, 2, 2, 1), mode="reflect", needs=["pad"], id="pad_reflect"),
    case("pad", img, (1, 2, 2, 1), mode="replicate", needs=["pad"], id="pad_replicate"),
    case("pad", rand(2, 3, 5), (1, 2), mode="circular", needs=["pad"], id="pad_circular"),
    case("pad", rand(2, 3, 5), (2, 1), mode="reflect", needs=["pad"], id="pad_reflect_1d"),
    case("interpolate", img, size=(9, 4), needs=["upsample_nearest2d"]),
    case("interpolate", img, scale_factor=2, needs=["upsample_nearest2d"],
         id="interpolate_scale"),
    case("interpolate", img, scale_factor=1.5, mode="bilinear", needs=["upsample_bilinear2d"],
         id="interpolate_bilinear"),
    case("interpolate", img, size=5, mode="bilinear", align_corners=True,
         needs=["upsample_bilinear2d"], id="interpolate_bilinear_corners"),
    case("interpolate", img, scale_factor=1.7, recompute_scale_factor=True, mode="bilinear",
         needs=["upsample_bilinear2d"], id="interpolate_recompute"),
    case("interpolate", img, size=(3, 2), mode="area", needs=["adaptive_avg_pool2d"],
         id="interpolate_area"),
    # losses
    case("cross_entropy", rand(5, 4), labels(5, 4)),
    case("cross_entropy", rand(5, 4, 3), labels(15, 4, shape=(5, 3)),
         weight=NoGrad(positive(4, seed=1)), ignore_index=2, label_smoothing=0.1,
         id="cross_entropy_options"),
    case("cross_entropy", rand(5, 4), positive(5, 4, seed=1), reduction="sum",
         id="cross_entropy_probabilities"),
    case("nll_loss", rand(5, 4), labels(5, 4), needs=["nll_loss_nd"]),
    case("nll_loss", rand(2, 4, 3, 2), labels(12, 4, shape=(2, 3, 2)), reduction="none",
         ignore_index=1, needs=["nll_loss_nd"], id="nll_loss_2d"),
    case("binary_cross_entropy", positive(3, 4), NoGrad(positive(3, 4, seed=1)),
         weight=NoGrad(positive(4, seed=2)), needs=["binary_cross_entropy"]),
    case("binary_cross_entropy_with_logits", x34, NoGrad(positive(3, 4, seed=1)),
         pos_weight=NoGrad(positive(4, seed=2)), needs=["binary_cross_entropy_with_logits"]),
    case("mse_loss", x34, rand(3, 4, seed=1)),
    case("mse_loss", x34, rand(3, 4, seed=1), reduction="none", id="mse_loss_none"),
    case("l1_loss", x34, rand(3, 4, seed=1), reduction="sum", needs=["l1_loss"]),
    case("smooth_l1_loss", x34, rand(3, 4, seed=1), beta=0.5, needs=["smooth_l1_loss"]),
    case("smooth_l1_loss", x34, rand(3, 4, seed=1), beta=0.0, needs=["l1_loss"],
         id="smooth_l1_loss_beta0"),
    case("huber_loss", x34, rand(3, 4, seed=1), delta=0.5, needs=["huber_loss"]),
    case("kl_div", np.log(positive(3, 4)), positive(3, 4, seed=1), reduction="batchmean",
         needs=["kl_div"]),
    case("kl_div", rand(3, 4), rand(3, 4, seed=1), reduction="sum", log_target=True,
         needs=["kl_div"], id="kl_div_log_target"),
]


@pytest.mark.filterwarnings("ignore:nn.functional.(sigmoid|tanh) is deprecated")
@pytest.mark.parametrize("fn,args,kwargs,grad", CASES)
def test_values_and_grads_match_torch(fn, args, kwargs, grad):
    expected, expected_grads = run(torch, lambda lib: fn(TF), args, kwargs, grad)
    got, got_grads = run(opd, lambda lib: fn(F), args, kwargs, grad)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-9)
    assert len(got_grads) == len(expected_grads)
    for g, e in zip(got_grads, expected_grads):
        assert (g is None) == (e is None)
        if g is not None:
            np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-9)


# ---- signatures: names, kinds and defaults as torch's ----

NAMES = ["relu", "relu_", "relu6", "elu", "elu_", "selu", "selu_", "celu", "celu_",
         "leaky_relu", "leaky_relu_", "prelu", "glu", "gelu", "silu", "mish", "hardtanh",
         "hardtanh_", "hardsigmoid", "hardswish", "softplus", "logsigmoid", "threshold",
         "threshold_", "sigmoid", "tanh", "softmax", "log_softmax", "softmin", "linear",
         "bilinear", "normalize", "cosine_similarity", "pairwise_distance", "one_hot", "pad",
         "pixel_shuffle", "interpolate", "dropout", "embedding", "layer_norm", "batch_norm",
         "group_norm", "instance_norm", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d",
         "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d",
         "avg_pool2d", "adaptive_avg_pool2d", "cross_entropy",
         "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss",
         "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div"]


def torch_parameters(name):
    """[(name, default or inspect.Parameter.empty)] of torch's function: its signature, the one
    under boolean_dispatch (max_pool*), or its docstring's first line for a builtin."""
    fn = {"max_pool1d": TF._max_pool1d, "max_pool2d": TF._max_pool2d}.get(name, getattr(TF, name))
    try:
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        pass
    first = fn.__doc__.strip().splitlines()[0]
    inside = re.match(r"\s*\w+\((.*)\)", first).group(1)
    params = []
    for part in inside.split(","):
        key, _, default = part.partition("=")
        params.append((key.strip(), eval(default) if default.strip() else inspect.Parameter.empty))
    return params


def test_nn_is_imported_with_the_package():
    # As torch.nn after `import torch`: a fresh interpreter, no import of the submodule.
    import subprocess
    import sys
    code = ("import opdispatch as o; f = o.nn.functional; "
            "print(f.relu(o.tensor([-1.0, 2.0])).tolist(), o.nn.__all__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[0.0, 2.0] ['functional']"


@pytest.mark.parametrize("name", NAMES)
def test_signature_matches_torch(name):
    ours = [(p.name, p.default) for p in inspect.signature(getattr(F, name)).parameters.values()]
    theirs = torch_parameters(name)
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (n, d), (_, e) in zip(ours, theirs):
        assert d == e and type(d) in (type(e), int, float), (n, d, e)


def test_scaled_dot_product_attention_signature_is_torch_2():
    params = inspect.signature(F.scaled_dot_product_attention).parameters
    assert [(p.name, p.default) for p in params.values()][3:] == [
        ("attn_mask", None), ("dropout_p", 0.0), ("is_causal", False), ("scale", None)]


def test_keywords_as_torch():
    x = opd.from_numpy(x34.copy())
    np.testing.assert_allclose(F.gelu(input=x, approximate="tanh").numpy(),
                               TF.gelu(input=torch.from_numpy(x34), approximate="tanh").numpy())
    np.testing.assert_allclose(F.softplus(input=x, beta=3, threshold=2).numpy(),
                               TF.softplus(torch.from_numpy(x34), beta=3, threshold=2).numpy())


# ---- in-place forms ----

INPLACE = [("relu", {}), ("relu6", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {}),
           ("leaky_relu", {"negative_slope": 0.3}), ("silu", {}), ("mish", {}),
           ("hardtanh", {"min_val": -0.3}), ("hardsigmoid", {}), ("hardswish", {}),
           ("threshold", {"threshold": 0.2, "value": -1.0}), ("dropout", {"training": False})]


@pytest.mark.parametrize("name,kwargs", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_writes_input(name, kwargs):
    needed = {"relu6": "relu6_", "dropout": "dropout_"}.get(name)
    if needed and needed not in _OPS:
        pytest.xfail(f"aten::{needed} not in opdispatch yet")
    x = opd.from_numpy(x34.copy())
    tx = torch.from_numpy(x34.copy())
    out = getattr(F, name)(x, inplace=True, **kwargs)
    getattr(TF, name)(tx, inplace=True, **kwargs)
    assert out is x
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-7, atol=0)


@pytest.mark.parametrize("name", ["relu_", "elu_", "selu_", "celu_", "leaky_relu_",
                                  "hardtanh_", "threshold_"])
def test_underscore_functions_write_input(name):
    args = (0.1, 2.0) if name == "threshold_" else ()
    x = opd.from_numpy(x34.copy())
    tx = torch.from_numpy(x34.copy())
    assert getattr(F, name)(x, *args) is x
    getattr(TF, name)(tx, *args)
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-7, atol=0)


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_sigmoid_and_tanh_are_deprecated_as_torchs(name):
    with pytest.warns(UserWarning) as ours:
        getattr(F, name)(opd.zeros(2))
    with pytest.warns(UserWarning) as theirs:
        getattr(TF, name)(torch.zeros(2))
    assert str(ours[0].message) == str(theirs[0].message)


def test_normalize_out():
    x = opd.from_numpy(x34.copy())
    out = opd.empty(3, 4, dtype=opd.float64)
    assert F.normalize(x, out=out) is out
    np.testing.assert_allclose(out.numpy(), TF.normalize(torch.from_numpy(x34)).numpy())


# ---- losses: legacy arguments, reductions, warnings ----


@pytest.mark.parametrize("size_average,reduce", [(None, False), (False, None), (True, True),
                                                 (False, True), (True, False)])
@pytest.mark.parametrize("name", ["mse_loss", "nll_loss", "cross_entropy"])
def test_legacy_reduction_arguments(name, size_average, reduce):
    if name == "nll_loss" and "nll_loss_nd" not in _OPS:
        pytest.xfail("aten::nll_loss_nd not in opdispatch yet")
    if name == "mse_loss":
        args = (x34, rand(3, 4, seed=1))
    else:
        args = (rand(5, 4), labels(5, 4))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = getattr(TF, name)(*(torch.from_numpy(a) for a in args),
                                     size_average=size_average, reduce=reduce)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = getattr(F, name)(*(opd.from_numpy(a.copy()) for a in args),
                               size_average=size_average, reduce=reduce)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-7)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


def test_invalid_reduction():
    with pytest.raises(ValueError, match="^bogus is not a valid value for reduction$"):
        F.mse_loss(opd.zeros(2), opd.zeros(2), reduction="bogus")
    with pytest.warns(UserWarning, match="reduction='elementwise_mean' is deprecated"):
        F.mse_loss(opd.zeros(2), opd.zeros(2), reduction="elementwise_mean")


def test_pointwise_loss_size_warning_and_broadcast():
    a, b = rand(3, 4), rand(4, seed=1)
    with pytest.warns(UserWarning) as ours:
        got = F.mse_loss(opd.from_numpy(a.copy()), opd.from_numpy(b.copy()))
    with pytest.warns(UserWarning) as theirs:
        expected = TF.mse_loss(torch.from_numpy(a), torch.from_numpy(b))
    assert str(ours[0].message) == str(theirs[0].message).replace("torch.", "opdispatch.")
    assert ours[0].filename == __file__  # points at the caller, as torch's stacklevel=2
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-7)
    with pytest.raises(RuntimeError) as e, pytest.warns(UserWarning):
        F.mse_loss(opd.zeros(3, 2), opd.zeros(3))
    with pytest.raises(RuntimeError) as te, pytest.warns(UserWarning):
        TF.mse_loss(torch.zeros(3, 2), torch.zeros(3))
    assert str(e.value) == str(te.value)


def test_binary_cross_entropy_size_errors():
    with pytest.raises(ValueError) as e:
        F.binary_cross_entropy(opd.zeros(3, 2), opd.zeros(3))
    with pytest.raises(ValueError) as te:
        TF.binary_cross_entropy(torch.zeros(3, 2), torch.zeros(3))
    assert str(e.value) == str(te.value).replace("torch.", "opdispatch.")
    with pytest.raises(ValueError) as e:
        F.binary_cross_entropy_with_logits(opd.zeros(3, 2), opd.zeros(2))
    with pytest.raises(ValueError) as te:
        TF.binary_cross_entropy_with_logits(torch.zeros(3, 2), torch.zeros(2))
    assert str(e.value) == str(te.value).replace("torch.", "opdispatch.")


@pytest.mark.skipif("kl_div" not in _OPS, reason="aten::kl_div not in opdispatch yet")
def test_kl_div_mean_warns():
    a, b = np.log(positive(3, 4)), positive(3, 4, seed=1)
    with pytest.warns(UserWarning) as ours:
        got = F.kl_div(opd.from_numpy(a.copy()), opd.from_numpy(b.copy()))
    with pytest.warns(UserWarning) as theirs:
        expected = TF.kl_div(torch.from_numpy(a), torch.from_numpy(b))
    assert str(ours[0].message) == str(theirs[0].message)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-7)


def test_softmax_implicit_dim_warns_and_picks_torchs_dim():
    for shape in ((4,), (3, 4), (2, 3, 4), (2, 3, 4, 5)):
        a = rand(*shape)
        for name in ("softmax", "log_softmax", "softmin"):
            with pytest.warns(UserWarning) as ours:
                got = getattr(F, name)(opd.from_numpy(a.copy()))
            with pytest.warns(UserWarning) as theirs:
                expected = getattr(TF, name)(torch.from_numpy(a))
            assert str(ours[0].message) == str(theirs[0].message)
            assert ours[0].filename == __file__
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-7)


# ---- the compositions' own errors, as torch's ----


def same_error(call, *args, **kwargs):
    """call(F, lib, *args) raises in both libraries with the same type and text."""
    with pytest.raises(Exception) as theirs:
        call(TF, torch, *args, **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        call(F, opd, *args, **kwargs)
    assert str(ours.value) == str(theirs.value).replace("torch.", "opdispatch.")


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_error(p):
    same_error(lambda f, lib: f.dropout(lib.ones(3), p))


def test_glu_of_a_scalar():
    same_error(lambda f, lib: f.glu(lib.tensor(1.0)))


def test_batch_norm_one_value_per_channel():
    same_error(lambda f, lib: f.batch_norm(lib.ones(1, 3), None, None, training=True))
    same_error(lambda f, lib: f.batch_norm(lib.ones(1, 3, 1, 1), None, None, training=True))


def test_group_norm_and_instance_norm_checks():
    same_error(lambda f, lib: f.group_norm(lib.ones(3), 1))
    same_error(lambda f, lib: f.group_norm(lib.ones(1, 2), 2))
    same_error(lambda f, lib: f.instance_norm(lib.ones(2, 3, 1)))


@pytest.mark.parametrize("index", [5, -6])
def test_embedding_padding_idx_range(index):
    same_error(lambda f, lib: f.embedding(lib.tensor([0]), lib.ones(5, 2), padding_idx=index))


def test_adaptive_avg_pool2d_output_size_longer_than_input():
    same_error(lambda f, lib: f.adaptive_avg_pool2d(lib.ones(2, 3), (2, None)))


@pytest.mark.parametrize("kwargs", [
    {"size": 2, "scale_factor": 2.0},
    {},
    {"size": 2, "align_corners": True},
    {"size": (2, 3, 4)},
    {"scale_factor": (2.0,)},
    {"size": 4, "recompute_scale_factor": True},
    {"size": 4, "mode": "bilinear", "antialias": True, "align_corners": False},
    {"size": 4, "mode": "nearest", "antialias": True},
    {"size": 4, "mode": "linear"},
    {"size": 4, "mode": "trilinear"},
    {"size": 4, "mode": "bogus"},
], ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "nothing")
def test_interpolate_argument_errors(kwargs):
    if kwargs.get("antialias") and kwargs.get("mode") == "bilinear":
        kwargs = dict(kwargs, size=(4, 4, 4))  # 5-d: the mode check, before any operator
        same_error(lambda f, lib: f.interpolate(lib.ones(1, 1, 2, 2, 2), **kwargs))
        return
    same_error(lambda f, lib: f.interpolate(lib.ones(1, 1, 3, 3), **kwargs))


OPERATOR_ERRORS = [
    ("conv2d_rank", lambda f, lib: f.conv2d(lib.ones(3, 5, 5), lib.ones(2, 3, 3)), "conv2d"),
    ("conv2d_groups", lambda f, lib: f.conv2d(lib.ones(1, 3, 5, 5), lib.ones(2, 3, 3, 3),
                                              groups=2), "conv2d"),
    ("conv2d_kernel_too_big", lambda f, lib: f.conv2d(lib.ones(1, 3, 2, 2),
                                                      lib.ones(2, 3, 3, 3)), "conv2d"),
    ("cross_entropy_target", lambda f, lib: f.cross_entropy(lib.ones(2, 3), lib.tensor([0, 5])),
     "cross_entropy_loss"),
    ("nll_loss_target", lambda f, lib: f.nll_loss(lib.ones(2, 3), lib.tensor([0, 5])),
     "nll_loss_nd"),
    ("max_pool2d_padding", lambda f, lib: f.max_pool2d(lib.ones(1, 1, 4, 4), 2, padding=2),
     "max_pool2d"),
    ("avg_pool2d_too_small", lambda f, lib: f.avg_pool2d(lib.ones(1, 1, 2, 2), 3), "avg_pool2d"),
    ("layer_norm_shape", lambda f, lib: f.layer_norm(lib.ones(2, 3), (4,)), "layer_norm"),
    ("embedding_index", lambda f, lib: f.embedding(lib.tensor([7]), lib.ones(5, 2)),
     "embedding"),
    ("batch_norm_stats", lambda f, lib: f.batch_norm(lib.ones(2, 3), lib.zeros(4), lib.ones(4)),
     "batch_norm"),
    ("group_norm_groups", lambda f, lib: f.group_norm(lib.ones(2, 6), 4), "group_norm"),
    ("binary_cross_entropy_range",
     lambda f, lib: f.binary_cross_entropy(lib.full((2,), 2.0), lib.ones(2)),
     "binary_cross_entropy"),
    ("one_hot_classes", lambda f, lib: f.one_hot(lib.tensor([3]), 2), "one_hot"),
]


@pytest.mark.parametrize("call,op", [pytest.param(c, op, id=name) for name, c, op in
                                     OPERATOR_ERRORS])
def test_operator_errors_reach_the_caller_as_torchs(call, op):
    if op not in _OPS:
        pytest.xfail(f"aten::{op} not in opdispatch yet")
    same_error(call)


def test_interpolate_rank_errors():
    same_error(lambda f, lib: f.interpolate(lib.ones(1, 1, 3), size=2, mode="bilinear"))
    same_error(lambda f, lib: f.interpolate(lib.ones(1, 1), size=2))


# ---- dropout in training, batch_norm's running statistics, attention ----


@pytest.mark.skipif("dropout" not in _OPS, reason="aten::dropout not in opdispatch yet")
def test_dropout_training_scales_kept_values():
    x = opd.ones(1000, dtype=opd.float64)
    y = F.dropout(x, 0.25).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    assert 0.6 < kept.mean() < 0.9
    assert (F.dropout(x, 1.0).numpy() == 0).all()


@pytest.mark.skipif("batch_norm" not in _OPS, reason="aten::batch_norm not in opdispatch yet")
def test_batch_norm_training_updates_running_stats():
    mean, var = rand(3, seed=1), positive(3, seed=2)
    stats = {}
    for lib, f in ((torch, TF), (opd, F)):
        m, v = lib.from_numpy(mean.copy()), lib.from_numpy(var.copy())
        out = f.batch_norm(lib.from_numpy(x2345.copy()), m, v, training=True, momentum=0.3)
        stats[lib.__name__] = (out.numpy(), m.numpy(), v.numpy())
    for got, expected in zip(stats["opdispatch"], stats["torch"]):
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)


def attention_reference(q, k, v, mask, is_causal, scale):
    """PyTorch 2.x's math composition, in torch 1.13 (which has no such function)."""
    s = scale if scale is not None else 1 / np.sqrt(q.shape[-1])
    att = q @ k.transpose(-2, -1) * s
    if is_causal:
        causal = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        att = att.masked_fill(~causal, float("-inf"))
    if mask is not None:
        att = att.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else att + mask
    return att.softmax(-1) @ v


@pytest.mark.skipif("scaled_dot_product_attention" not in _OPS,
                    reason="aten::scaled_dot_product_attention not in opdispatch yet")
@pytest.mark.parametrize("is_causal,mask,scale", [(False, None, None), (True, None, None),
                                                  (False, "float", 0.3), (False, "bool", None)])
def test_scaled_dot_product_attention(is_causal, mask, scale):
    q, k, v = rand(2, 3, 4, 5), rand(2, 3, 6, 5, seed=1), rand(2, 3, 6, 2, seed=2)
    m = {None: None, "float": rand(4, 6, seed=3),
         "bool": np.random.default_rng(4).random((4, 6)) > 0.3}[mask]
    if mask == "bool":
        m[:, 0] = True  # every row keeps one key
    kwargs = {"is_causal": is_causal} if scale is None else {"is_causal": is_causal,
                                                              "scale": scale}
    got, got_grads = run(opd, lambda lib: F.scaled_dot_product_attention,
                         (q, k, v, NoGrad(m) if m is not None else None), kwargs)
    expected, expected_grads = run(
        torch, lambda lib: lambda a, b, c, d, is_causal=False, scale=None:
        attention_reference(a, b, c, d, is_causal, scale), (q, k, v, NoGrad(m) if m is not None
                                                            else None), kwargs)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-7, atol=1e-9)
    for g, e in zip(got_grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-9)


def test_float32_training_functions_match_torch():
    """The functions the reference models use, in float32 (the models' dtype)."""
    a = rand(4, 6).astype(np.float32)
    t, o = torch.from_numpy(a), opd.from_numpy(a.copy())
    for name, args in (("gelu", ()), ("relu", ()), ("softmax", (-1,)), ("log_softmax", (-1,))):
        np.testing.assert_allclose(getattr(F, name)(o, *args).numpy(),
                                   getattr(TF, name)(t, *args).numpy(), rtol=1e-6, atol=1e-6)
    y = labels(4, 6)
    np.testing.assert_allclose(F.cross_entropy(o, opd.from_numpy(y)).item(),
                               TF.cross_entropy(t, torch.from_numpy(y)).item(), rtol=1e-6)
