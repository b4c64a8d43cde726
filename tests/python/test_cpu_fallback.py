"""opd::cpu_fallback from Python (Note [CPU fallback]): the fixture device "acme"
(tests/vendor_device/acme_device.cpp, a PrivateUse1 backend named at load) has native add and
mul; every other operator runs on the CPU through the fallback, with torch's warning once per
operator."""

import os
import warnings

import pytest

import opdispatch as opd


@pytest.fixture(scope="module", autouse=True)
def acme():
    manifest = os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "acme_device", "acme_device.yaml")
    status = opd.plugins.load(manifest)
    assert status.state == "loaded", status.reason
    yield
    opd.plugins.unload("acme_device")


def fallback_warning(op):
    return (f"The operator '{op}' is not currently supported on the acme backend and will fall "
            "back to run on the CPU. This may have performance implications.")


def test_to_acme_round_trips():
    x = opd.tensor([[1., 2., 3.], [4., 5., 6.]])
    a = x.to("acme")
    assert str(a.device) == "acme:0" and not a.is_cpu
    assert a.device == opd.device("acme:0")
    back = a.cpu()
    assert back.is_cpu and opd.equal(back, x)
    assert opd.equal(a.to("cpu"), x)


def test_native_add_needs_no_fallback():
    a = opd.ones(2, 3).to("acme")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback's warning would fail here
        b = a + a
    assert str(b.device) == "acme:0"
    assert opd.equal(b.cpu(), opd.full((2, 3), 2.))


def test_sum_runs_through_the_fallback_and_warns_once():
    x = opd.tensor([[1., 2., 3.], [4., 5., 6.]])
    a = x.to("acme")
    with pytest.warns(UserWarning) as record:
        s = opd.sum(a)
        s2 = a.sum()
    assert str(s.device) == "acme:0" and s.item() == 21.
    assert opd.equal(s2.cpu(), s.cpu())
    texts = [str(w.message) for w in record]
    assert texts.count(fallback_warning("aten::sum")) == 1, texts


def test_in_place_and_out_through_the_fallback():
    x = opd.tensor([1., -2., 3.])
    a = x.to("acme")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert a.sub_(1) is a
        out = opd.empty(0).to("acme")
        assert opd.neg(a, out=out) is out
    assert opd.equal(a.cpu(), x - 1)
    assert opd.equal(out.cpu(), -(x - 1))


def test_an_operator_without_a_cpu_kernel_is_named():
    a = opd.ones(2).to("acme")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with pytest.raises(NotImplementedError, match="'acme_device::no_cpu' is not currently "
                           "supported on the acme backend, and the CPU fallback cannot run it"):
            opd.ops.acme_device.no_cpu(a)
    # It did not fall back: no warning says it will.
    assert [str(w.message) for w in record] == []


def _train_mlp(device, steps=15):
    """A two-layer MLP on a quadrant-sign task, plain SGD: the losses of each step."""
    import opdispatch.nn.functional as F
    opd.manual_seed(0)
    x = opd.randn(64, 2)
    y = (x[:, 0] * x[:, 1] > 0).long()
    params = [opd.randn(2, 16) * 0.5, opd.zeros(16), opd.randn(16, 2) * 0.5, opd.zeros(2)]
    x, y = x.to(device), y.to(device)
    params = [p.to(device).requires_grad_() for p in params]
    losses = []
    for _ in range(steps):
        w1, b1, w2, b2 = params
        loss = F.cross_entropy(opd.relu(x @ w1 + b1) @ w2 + b2, y)
        for p in params:
            p.grad = None
        loss.backward()
        assert all(str(p.grad.device) == str(p.device) for p in params)
        with opd.no_grad():
            for p in params:
                p.sub_(0.5 * p.grad)
        losses.append(loss.item())
    return losses


def test_an_mlp_trains_on_acme_with_the_cpu_losses():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        losses = _train_mlp("acme")
    assert losses == _train_mlp("cpu")
    assert losses[-1] < losses[0]
