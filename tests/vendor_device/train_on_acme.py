"""The acme device from Python, with the installed package (run.sh: PYTHONPATH to the prefix's
dist-packages, OPD_PLUGIN_PATH to the device built out of tree): load the plugin, name the slot
and generate its methods (opdispatch.utils), train the MLP of `opd demo` and the reference CNN of
tests/models on acme with the losses they have on the CPU, read the device's counters, then
unload it while an acme tensor lives (the library stays mapped until the tensor goes) and load
it again. Exit 0 when every check passes; a few seconds."""

import gc
import math
import sys
import warnings

import numpy as np

import opdispatch as opd
import opdispatch.nn.functional as F
import opdispatch.utils
from opdispatch import _demo_models as models

failures = 0


def check(ok, what):
    global failures
    print(f"{'ok' if ok else 'FAILED'}: {what}")
    failures += not ok


def counter(name):
    return getattr(opd.ops.acme_device, name)()


def close(a, b, rtol=1e-5):
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=rtol, abs_tol=1e-6)
                                    for x, y in zip(a, b))


def native_cases():
    """(operator, call) for each native kernel of the device: each call runs one, on a namespace
    of inputs."""
    aten = opd.ops.aten
    return [
        ("add.Tensor", lambda t: opd.add(t.a, t.b, alpha=2)),
        ("mul.Tensor", lambda t: opd.mul(t.a, t.b)),
        ("sub.Tensor", lambda t: opd.sub(t.a, t.b, alpha=2)),
        ("div.Tensor", lambda t: opd.div(t.a, t.positive)),
        ("mm", lambda t: opd.mm(t.a, t.m)),
        ("addmm", lambda t: opd.addmm(t.bias, t.a, t.m, beta=0.5, alpha=2)),
        ("sum.dim_IntList", lambda t: opd.sum(t.a, 1, keepdim=True)),
        ("relu", lambda t: opd.relu(t.a)),
        ("threshold_backward", lambda t: aten.threshold_backward(t.b, t.a, 0.5)),
        ("fill_.Scalar", lambda t: t.a.clone().fill_(3.)),
        ("_log_softmax", lambda t: aten._log_softmax(t.a, 1, False)),
        ("_log_softmax_backward_data",
         lambda t: aten._log_softmax_backward_data(t.b, t.a, 1, opd.float32)),
        ("nll_loss_forward", lambda t: aten.nll_loss_forward(t.a, t.target, None, 1, -100)),
        ("nll_loss_backward", lambda t: aten.nll_loss_backward(t.scalar, t.a, t.target, None, 1,
                                                               -100, t.scalar)),
        # Its results and the running statistics it updates in place.
        ("native_batch_norm", lambda t: (*aten.native_batch_norm(t.a, t.bias[:3], None, t.mean,
                                                                 t.var, True, 0.1, 1e-5),
                                         t.mean, t.var)),
    ]


class Inputs:
    def __init__(self, device):
        opd.manual_seed(1)
        cpu = dict(a=opd.randn(2, 3), b=opd.randn(2, 3), positive=opd.rand(2, 3) + 0.5,
                   m=opd.randn(3, 4), bias=opd.randn(4), target=opd.tensor([2, 0]),
                   scalar=opd.tensor(0.5), mean=opd.zeros(3), var=opd.ones(3))
        for name, t in cpu.items():
            setattr(self, name, t.to(device))


def check_native_kernels():
    """Each native kernel: its result on acme is the CPU's, it ran once, nothing fell back."""
    cpu, acme = Inputs("cpu"), Inputs("acme")
    for op, call in native_cases():
        calls = counter("native_calls")
        with warnings.catch_warnings(record=True) as fell_back:
            warnings.simplefilter("always")
            got = call(acme)
        want = call(cpu)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        same = all(g.is_acme and opd.equal(g.cpu(), w) for g, w in zip(got, want))
        ran = counter("native_calls") - calls
        check(same and ran == 1 and not fell_back,
              f"native {op} agrees with the CPU (native calls {ran}, warnings {len(fell_back)})")


def spiral(points=200, seed=0):
    """tools/cli/demo_mlp.cpp's data: two interleaved spirals of one and a half turns."""
    rng = np.random.default_rng(seed)
    i = np.arange(points)
    label = i % 2
    r = 0.1 + 0.9 * (i // 2) / (points // 2)
    t = 3 * math.pi * r + label * math.pi
    x = np.stack([r * np.cos(t), r * np.sin(t)], 1) + rng.normal(0, 0.05, (points, 2))
    return opd.from_numpy(x.astype(np.float32)), opd.from_numpy(label.astype(np.int64))


def train_mlp(device, steps=20, hidden=64, lr=0.5):
    """`opd demo`'s MLP (linear, relu, linear, cross entropy; He initialisation; SGD with
    momentum 0.9): the loss of each step, and whether every parameter and gradient stayed on
    ``device``."""
    opd.manual_seed(0)
    x, y = spiral()
    params = [opd.randn(hidden, 2) * math.sqrt(2 / 2), opd.zeros(hidden),
              opd.randn(2, hidden) * math.sqrt(2 / hidden), opd.zeros(2)]
    x, y = x.to(device), y.to(device)
    params = [p.to(device).requires_grad_() for p in params]
    velocity = [opd.zeros_like(p) for p in params]
    losses, on_device = [], True
    for _ in range(steps):
        w1, b1, w2, b2 = params
        loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)
        loss.backward()
        with opd.no_grad():
            for p, v in zip(params, velocity):
                on_device &= p.grad.device.type == p.device.type == device
                v.mul_(0.9).add_(p.grad)
                p.sub_(v, alpha=lr)
                p.grad = None
        losses.append(loss.item())
    return losses, on_device


def train_cnn(device, batches, lr=0.02):
    """The CNN of tests/models (conv, batch_norm, relu, max_pool, conv, gelu, avg_pool, linear,
    cross entropy; SGD with momentum), its parameters and buffers on ``device``."""
    trainer = models.Trainer(opd, models.CNN(seed=0), lr)
    trainer.params = {n: p.detach().to(device).requires_grad_()
                      for n, p in trainer.params.items()}
    trainer.buffers = {n: b.to(device) for n, b in trainer.buffers.items()}
    trainer.velocity = [opd.zeros_like(trainer.params[n]) for n in trainer.names]
    losses = [trainer.step(x.to(device), y.to(device)).item() for x, y in trainer.data(batches)]
    on_device = all(t.device.type == device
                    for t in [*trainer.params.values(), *trainer.buffers.values()])
    return losses, on_device, {n: b.cpu() for n, b in trainer.buffers.items()}


def library_mapped(path):
    with open("/proc/self/maps") as maps:
        return path in maps.read()


def main():
    status = opd.plugins.load("acme_device")
    check(status.state == "loaded", f"the device loads ({status.reason or status.state})")
    if status.state != "loaded":
        return 1
    opdispatch.utils.rename_privateuse1_backend("acme")  # named at load: the same name is fine
    opdispatch.utils.generate_methods_for_privateuse1_backend()
    x = opd.arange(6.).view(2, 3)
    a = x.acme()
    check(a.is_acme and a.device == opd.device("acme:0") and a.acme() is a,
          "x.acme(), x.is_acme, opd.device('acme:0')")
    check(opd.equal(a.cpu(), x) and opd.equal(x.to("acme").cpu(), x), "and back to the CPU")

    check_native_kernels()

    allocations, calls = counter("allocations"), counter("native_calls")
    with warnings.catch_warnings(record=True) as fell_back:
        warnings.simplefilter("always")
        mlp_acme, mlp_on_acme = train_mlp("acme")
    mlp_cpu, _ = train_mlp("cpu")
    check(close(mlp_acme, mlp_cpu), f"the MLP's {len(mlp_cpu)} losses on acme are the CPU's "
          f"({mlp_cpu[0]:.4f} to {mlp_cpu[-1]:.4f})")
    check(mlp_cpu[-1] < mlp_cpu[0], "and it learns")
    check(mlp_on_acme, "its parameters and gradients stay on acme")
    check(counter("allocations") > allocations and counter("native_calls") > calls,
          f"acme memory was used ({counter('allocations') - allocations} blocks) and its native "
          f"kernels ran ({counter('native_calls') - calls} calls)")
    print("the MLP's operators through the CPU fallback:",
          sorted({str(w.message).split("'")[1] for w in fell_back
                  if "fall back to run on the CPU" in str(w.message)}))

    batches = models.CNN(seed=0).batches(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cnn_acme, cnn_on_acme, buffers_acme = train_cnn("acme", batches)
    cnn_cpu, _, buffers_cpu = train_cnn("cpu", batches)
    check(close(cnn_acme, cnn_cpu, rtol=1e-4),
          f"the CNN's {len(cnn_cpu)} losses on acme are the CPU's ({cnn_cpu[0]:.4f} to "
          f"{cnn_cpu[-1]:.4f})")
    check(cnn_on_acme, "its parameters and batch-norm buffers stay on acme")
    check(all(opd.allclose(buffers_acme[n], buffers_cpu[n], rtol=1e-4) for n in buffers_cpu),
          "and the running statistics are the CPU's")

    # Unloading while an acme tensor lives: the plugin is deregistered, its library stays mapped
    # (the tensor's memory is freed by the plugin's deleter) until the tensor goes.
    library = status.library
    gc.collect()
    live = counter("live_blocks")
    check(live == 1, f"one acme block lives, a's ({live})")
    status = opd.plugins.unload("acme_device")
    check(status.state == "unloading" and library_mapped(library),
          f"unloaded while a and its block live: {status.state}, still mapped")
    del a
    gc.collect()
    opd._C._reclaim()
    status = opd.plugins.status("acme_device")
    check(status.state == "unloaded" and not library_mapped(library),
          f"once they are gone: {status.state}, unmapped")
    status = opd.plugins.load("acme_device")
    check(status.state == "loaded" and opd.device("privateuseone").type == "acme",
          "loaded again, it names the slot acme again")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sum falls back, as before the unload
        check(opd.equal(x.acme().sum().cpu(), x.sum()), "and runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
