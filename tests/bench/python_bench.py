"""The Python package's benchmarks (issue 14 §8), run by `opd bench` when the package is built:
each case times opdispatch and, where Debian's python3-torch is installed, the same thing in
torch in the same process, interleaved round by round; the ratio is of the medians.

  x + y                      2x3 and 3-element float tensors        goal <= 0.5 of torch
  ops.aten.add.Tensor(x, y)  against torch.ops.aten.add.Tensor      goal <= 0.5 of torch
  opd.add(x, y), x.add(y)    against torch.add and torch's x.add, names looked up in the
                             loop as users write them (reported)
  small calls                every call form (x.f(...), opd.f(...), ops.aten.f.overload(...)),
                             x.sum(), x.min(), x[1], x[idx], x.int() on 2x3 float32
                             goal <= 0.5 of torch
  binary elementwise         add ... atan2, remainder, floor_divide, comparisons, a scalar
                             operand, a broadcast column+row, on 1M float32  goal <= 1.0
  scans, sort, gather         cumsum, sort, topk, gather, scatter, scatter_add, index_select,
                             masked_fill on 1M float32                goal <= 1.0 of torch
  layer_norm, softmax        forward + backward on 64x256x256 float32  goal <= 1.0 of torch
  a Python-kernel custom op  called from Python, against torch.library's (reported)
  C++ -> Python kernel       a boxed call from C++ reaching a Python kernel (reported)
  from_dlpack round trip     torch -> opdispatch -> torch, 16 and 4M elements (reported; the
                             time must not grow with the size: no copy)
  make_fx                    tracing a 100-operator function, and calling its GraphModule,
                             against torch's make_fx (reported)
"""

import statistics
import sys
import time

import opdispatch as opd

try:
    import torch
except ImportError:  # the comparison is never required
    torch = None

ROUNDS = 15
# Seconds each timed batch of calls lasts at least. --opd_bench_smoke (`opd bench --smoke`)
# sets ROUNDS to 1 and this to 0: every call then runs twice, which proves it runs.
BATCH_SECONDS = 0.02


def per_call(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def calibrate(fn, target):
    n = 1
    while per_call(fn, n) * n < target:
        n *= 4
    return n


def measure(cases):
    """cases: {label: fn}; interleaved rounds; returns {label: median seconds per call}."""
    counts = {k: calibrate(f, BATCH_SECONDS) for k, f in cases.items()}
    samples = {k: [] for k in cases}
    labels = list(cases)
    for r in range(ROUNDS):
        for k in (labels if r % 2 == 0 else reversed(labels)):
            samples[k].append(per_call(cases[k], counts[k]))
    return {k: statistics.median(v) for k, v in samples.items()}


def report(name, opd_time, torch_time=None, goal=None):
    line = f"{name:<44} opdispatch {opd_time * 1e9:9.0f} ns"
    if torch_time is not None:
        ratio = opd_time / torch_time
        line += f"   torch {torch_time * 1e9:9.0f} ns   ratio {ratio:5.2f}"
        if goal is not None:
            line += f" (goal <= {goal})"
    print(line, flush=True)


def bench_add():
    for shape in ((2, 3), (3,)):
        x, y = opd.rand(*shape), opd.rand(*shape)
        cases = {"opd": lambda: x + y}
        if torch is not None:
            tx, ty = torch.rand(*shape), torch.rand(*shape)
            cases["torch"] = lambda: tx + ty
        t = measure(cases)
        report(f"x + y, {'x'.join(map(str, shape))} float32", t["opd"], t.get("torch"), 0.5)


def bench_ops_add():
    x, y = opd.rand(2, 3), opd.rand(2, 3)
    op = opd.ops.aten.add.Tensor
    cases = {"opd": lambda: op(x, y)}
    if torch is not None:
        tx, ty = torch.rand(2, 3), torch.rand(2, 3)
        top = torch.ops.aten.add.Tensor
        cases["torch"] = lambda: top(tx, ty)
    t = measure(cases)
    report("ops.aten.add.Tensor(x, y), 2x3", t["opd"], t.get("torch"), 0.5)


def bench_python_kernel():
    with opd.library.Library("bench_py", "DEF") as lib:
        lib.define("scale(Tensor x) -> Tensor")
        lib.impl("scale", lambda x: x, "CPU")
        x = opd.rand(3)
        op = opd.ops.bench_py.scale.default
        cases = {"opd": lambda: op(x)}
        tlib = None
        if torch is not None and hasattr(torch, "library"):
            tlib = torch.library.Library("bench_py", "DEF")
            tlib.define("scale(Tensor x) -> Tensor")
            tlib.impl("scale", lambda x: x, "CPU")
            tx = torch.rand(3)
            top = torch.ops.bench_py.scale.default
            cases["torch"] = lambda: top(tx)
        t = measure(cases)
        report("custom op with a Python kernel, from Python", t["opd"], t.get("torch"))
        n = 20000
        seconds = opd._C._test_time_boxed_calls("bench_py::scale", [x], n)
        report("C++ boxed call reaching a Python kernel", seconds / n)
        if tlib is not None:
            del tlib


def bench_dlpack():
    if torch is None:
        print("from_dlpack round trip: needs python3-torch (not installed)")
        return
    for n in (16, 4 * 1024 * 1024):
        t = torch.rand(n)
        case = {"opd": lambda: torch.utils.dlpack.from_dlpack(opd.from_dlpack(t))}
        r = measure(case)
        report(f"from_dlpack torch->opd->torch, {n} floats", r["opd"])


def bench_named_add():
    x, y = opd.rand(2, 3), opd.rand(2, 3)
    tx, ty = (torch.rand(2, 3), torch.rand(2, 3)) if torch is not None else (None, None)
    for name, ours, theirs in (("opd.add(x, y)", lambda: opd.add(x, y), lambda: torch.add(tx, ty)),
                               ("x.add(y)", lambda: x.add(y), lambda: tx.add(ty))):
        cases = {"opd": ours}
        if torch is not None:
            cases["torch"] = theirs
        t = measure(cases)
        report(f"{name}, 2x3", t["opd"], t.get("torch"))


def bench_indexing():
    """Advanced indexing (issue 31 §4): x[idx] with a long index and x[mask] on 1M float32,
    x[idx] = v, and x[idx] on a 2x3 tensor for the small-call overhead (goal <= 0.5)."""
    n = 1 << 20
    cases = []
    x = opd.rand(n)
    idx = (opd.rand(n) * (n - 1)).to(opd.int64)
    mask = x > 0.5
    v = opd.rand(n)
    small, small_idx = opd.rand(2, 3), opd.tensor([1, 0])
    if torch is not None:
        tx, tidx, tmask, tv = (torch.from_dlpack(t) for t in (x, idx, mask.to(opd.uint8), v))
        tmask = tmask.bool()
        tsmall, tsmall_idx = torch.rand(2, 3), torch.tensor([1, 0])
    def put(a, i, b):
        a[i] = b
    cases = [
        ("x[idx], 1M float32, 1M long", lambda: x[idx], lambda: tx[tidx], 1.0),
        ("x[mask], 1M float32", lambda: x[mask], lambda: tx[tmask], 1.0),
        ("x[idx] = v, 1M float32", lambda: put(x, idx, v), lambda: put(tx, tidx, tv), 1.0),
        ("x[idx], 2x3, 2 indices", lambda: small[small_idx], lambda: tsmall[tsmall_idx], 0.5),
    ]
    for name, ours, theirs, goal in cases:
        c = {"opd": ours}
        if torch is not None:
            c["torch"] = theirs
        t = measure(c)
        report(name, t["opd"], t.get("torch"), goal)


def bench_unary():
    """Unary elementwise (issue 31 §4): exp, tanh, sigmoid and floor on 1M float32 (goal <= 1.0
    of torch's time; both use their thread pools)."""
    n = 1 << 20
    x = opd.rand(n) * 4 - 2
    tx = torch.from_dlpack(x) if torch is not None else None
    for name in ("exp", "tanh", "sigmoid", "floor"):
        c = {"opd": getattr(x, name)}
        if torch is not None:
            c["torch"] = getattr(tx, name)
        t = measure(c)
        report(f"x.{name}(), 1M float32", t["opd"], t.get("torch"), 1.0)


def bench_activations():
    """Activation functions (issue 32 §1, helper "activations"): silu, leaky_relu, hardswish, elu
    and softplus on 1M float32 through ops.aten, the same path in both libraries (goal <= 1.0
    of torch's time; both use their thread pools)."""
    n = 1 << 20
    x = opd.rand(n) * 8 - 4
    tx = torch.from_dlpack(x) if torch is not None else None
    for name in ("silu", "leaky_relu", "hardswish", "elu", "softplus"):
        c = {"opd": lambda f=getattr(opd.ops.aten, name): f(x)}
        if torch is not None:
            c["torch"] = lambda f=getattr(torch.ops.aten, name): f(tx)
        t = measure(c)
        report(f"{name}(x), 1M float32", t["opd"], t.get("torch"), 1.0)


def bench_norm():
    """layer_norm and softmax forward + backward (issue 32 §3, helper "norm") on 64x256x256
    float32, over the last dim, layer_norm with weight and bias (goal <= 1.0 of torch's time)."""
    shape = (64, 256, 256)
    x = opd.randn(*shape).requires_grad_(True)
    w, b = opd.randn(256).requires_grad_(True), opd.randn(256).requires_grad_(True)
    g = opd.randn(*shape)
    libs = {"opd": (opd, x, w, b, g)}
    if torch is not None:
        tx = torch.from_dlpack(x.detach()).clone().requires_grad_(True)
        tw = torch.from_dlpack(w.detach()).clone().requires_grad_(True)
        tb = torch.from_dlpack(b.detach()).clone().requires_grad_(True)
        libs["torch"] = (torch, tx, tw, tb, torch.from_dlpack(g).clone())

    def step(lib, x, w, b, g, which):
        x.grad = w.grad = b.grad = None
        if which == "layer_norm":
            y = lib.layer_norm(x, [256], w, b, 1e-5)
        else:
            y = lib.softmax(x, -1)
        y.backward(g)

    for which in ("layer_norm", "softmax"):
        c = {k: (lambda a=a: step(*a, which)) for k, a in libs.items()}
        t = measure(c)
        report(f"{which} fwd+bwd, 64x256x256 float32", t["opd"], t.get("torch"), 1.0)


def bench_binary():
    """Binary elementwise (issue 31 §4, helper "binary-speed"): two 1M float32 tensors (1024x1024;
    the divisor kept away from 0), one of them a Python scalar, and a 1024x1 column against a 1x1024
    row broadcast to 1M (goal <= 1.0 of torch's time; both use their thread pools)."""
    x = opd.rand(1024, 1024) * 8 - 4
    y = opd.rand(1024, 1024) * 4 + 0.5
    col, row = opd.rand(1024, 1), opd.rand(1, 1024)
    tx, ty, tcol, trow = ((torch.from_dlpack(x), torch.from_dlpack(y), torch.from_dlpack(col),
                           torch.from_dlpack(row)) if torch is not None else (None,) * 4)
    cases = (("add(x, y)", lambda m, a, b: m.add(a, b)),
             ("sub(x, y)", lambda m, a, b: m.sub(a, b)),
             ("mul(x, y)", lambda m, a, b: m.mul(a, b)),
             ("div(x, y)", lambda m, a, b: m.div(a, b)),
             ("div(x, y, 'trunc')", lambda m, a, b: m.div(a, b, rounding_mode="trunc")),
             ("div(x, y, 'floor')", lambda m, a, b: m.div(a, b, rounding_mode="floor")),
             ("remainder(x, y)", lambda m, a, b: m.remainder(a, b)),
             ("fmod(x, y)", lambda m, a, b: m.fmod(a, b)),
             ("floor_divide(x, y)", lambda m, a, b: m.floor_divide(a, b)),
             ("atan2(x, y)", lambda m, a, b: m.atan2(a, b)),
             ("hypot(x, y)", lambda m, a, b: m.hypot(a, b)),
             ("pow(y, x)", lambda m, a, b: m.pow(b, a)),
             ("maximum(x, y)", lambda m, a, b: m.maximum(a, b)),
             ("minimum(x, y)", lambda m, a, b: m.minimum(a, b)),
             ("eq(x, y)", lambda m, a, b: m.eq(a, b)),
             ("lt(x, y)", lambda m, a, b: m.lt(a, b)),
             ("x * 2.5", lambda m, a, b: a * 2.5),
             ("x / 2.5", lambda m, a, b: a / 2.5),
             ("x % 2.5", lambda m, a, b: a % 2.5),
             ("x // 2.5", lambda m, a, b: a // 2.5),
             ("2.5 % y", lambda m, a, b: 2.5 % b),
             ("add(col, row) -> 1024x1024", None),
             ("remainder(col, row) -> 1024x1024", None))
    for name, call in cases:
        if call is None:
            f = opd.add if name.startswith("add") else opd.remainder
            tf = (torch.add if name.startswith("add") else torch.remainder) if torch else None
            c = {"opd": lambda: f(col, row)}
            if torch is not None:
                c["torch"] = lambda: tf(tcol, trow)
        else:
            c = {"opd": lambda: call(opd, x, y)}
            if torch is not None:
                c["torch"] = lambda: call(torch, tx, ty)
        t = measure(c)
        report(f"{name}, 1M float32", t["opd"], t.get("torch"), 1.0)


def bench_reductions():
    """Reductions (issue 31 §4): over every element, the last and the first dim of 1M and 16M
    float32 (goal <= 1.0 of torch's time; both use their thread pools)."""
    for n, shape in ((1 << 20, (1024, 1024)), (1 << 24, (4096, 4096))):
        x = opd.rand(*shape)
        tx = torch.from_dlpack(x) if torch is not None else None
        size = "1M" if n == 1 << 20 else "16M"
        for name, call in (("x.sum()", lambda a: a.sum()), ("x.sum(-1)", lambda a: a.sum(-1)),
                           ("x.sum(0)", lambda a: a.sum(0)), ("x.mean(-1)", lambda a: a.mean(-1)),
                           ("x.amax(-1)", lambda a: a.amax(-1)), ("x.amax(0)", lambda a: a.amax(0)),
                           ("x.argmax(-1)", lambda a: a.argmax(-1)),
                           ("x.argmax(0)", lambda a: a.argmax(0)), ("x.max()", lambda a: a.max()),
                           ("x.prod(-1)", lambda a: a.prod(-1)), ("x.var(-1)", lambda a: a.var(-1)),
                           ("x.norm()", lambda a: a.norm()), ("x.any(0)", lambda a: a.any(0))):
            c = {"opd": lambda: call(x)}
            if tx is not None:
                c["torch"] = lambda: call(tx)
            t = measure(c)
            report(f"{name}, {size} float32", t["opd"], t.get("torch"), 1.0)


def bench_small_calls():
    """Every call form on a 2x3 float32 tensor against torch's same form (issue 31 §4): a method,
    a module function, an overload; x.sum(), x.min(), x[idx], x.int()."""
    x, y = opd.rand(2, 3), opd.rand(2, 3)
    i = opd.tensor([1, 0])
    add = opd.ops.aten.add.Tensor
    ours = {
        "x.add(y)": lambda: x.add(y),
        "opd.add(x, y)": lambda: opd.add(x, y),
        "ops.aten.add.Tensor(x, y)": lambda: add(x, y),
        "x.mul(2)": lambda: x.mul(2),
        "x.sum()": lambda: x.sum(),
        "x.min()": lambda: x.min(),
        "x[1]": lambda: x[1],
        "x[idx]": lambda: x[i],
        "x.int()": lambda: x.int(),
    }
    theirs = {}
    if torch is not None:
        tx, ty = torch.rand(2, 3), torch.rand(2, 3)
        ti = torch.tensor([1, 0])
        tadd = torch.ops.aten.add.Tensor
        theirs = {
            "x.add(y)": lambda: tx.add(ty),
            "opd.add(x, y)": lambda: torch.add(tx, ty),
            "ops.aten.add.Tensor(x, y)": lambda: tadd(tx, ty),
            "x.mul(2)": lambda: tx.mul(2),
            "x.sum()": lambda: tx.sum(),
            "x.min()": lambda: tx.min(),
            "x[1]": lambda: tx[1],
            "x[idx]": lambda: tx[ti],
            "x.int()": lambda: tx.int(),
        }
    for name, fn in ours.items():
        try:
            fn()
        except Exception as e:  # an operator another change has not landed yet
            print(f"{name + ', 2x3':<44} unavailable: {type(e).__name__}: {e}", flush=True)
            continue
        cases = {"opd": fn}
        if name in theirs:
            cases["torch"] = theirs[name]
        t = measure(cases)
        report(f"{name}, 2x3", t["opd"], t.get("torch"), 0.5)


def bench_scan_sort_gather():
    """Scans, sorting, gather/scatter (issue 31 §4, helper "scatter"): 1M float32 (1024x1024;
    along the last dim unless named, random int64 indices) and a 1-D 1M line for cumsum and sort
    (goal <= 1.0 of torch's time; both use their thread pools)."""
    x = opd.rand(1024, 1024)
    x1 = opd.rand(1 << 20)
    idx = opd.tensor([[(r * 7919 + c * 104729) % 1024 for c in range(1024)]
                      for r in range(1024)])
    rows = opd.tensor([(r * 7919) % 1024 for r in range(1024)])
    mask = opd.gt(opd.rand(1024, 1024), 0.5)
    tx, tx1, tidx, trows, tmask = ((torch.from_dlpack(x), torch.from_dlpack(x1),
                                    torch.from_dlpack(idx), torch.from_dlpack(rows),
                                    torch.from_dlpack(mask.to(opd.uint8)).bool())
                                   if torch is not None else (None,) * 5)
    cases = (("cumsum(x, 1)", lambda m, a, a1, i, r, k: m.cumsum(a, 1)),
             ("cumsum(x, 0)", lambda m, a, a1, i, r, k: m.cumsum(a, 0)),
             ("cumsum, 1-D 1M", lambda m, a, a1, i, r, k: m.cumsum(a1, 0)),
             ("sort(x, 1)", lambda m, a, a1, i, r, k: m.sort(a, 1)),
             ("sort, 1-D 1M", lambda m, a, a1, i, r, k: m.sort(a1)),
             ("topk(x, 10)", lambda m, a, a1, i, r, k: m.topk(a, 10)),
             ("gather(x, 1, idx)", lambda m, a, a1, i, r, k: m.gather(a, 1, i)),
             ("gather(x, 0, idx)", lambda m, a, a1, i, r, k: m.gather(a, 0, i)),
             ("scatter(x, 1, idx, x)", lambda m, a, a1, i, r, k: m.scatter(a, 1, i, a)),
             ("scatter_add(x, 1, idx, x)", lambda m, a, a1, i, r, k: m.scatter_add(a, 1, i, a)),
             ("index_select(x, 0, rows)", lambda m, a, a1, i, r, k: m.index_select(a, 0, r)),
             ("index_select(x, 1, rows)", lambda m, a, a1, i, r, k: m.index_select(a, 1, r)),
             ("masked_fill(x, mask, 0.)", lambda m, a, a1, i, r, k: m.masked_fill(a, k, 0.)))
    for name, call in cases:
        c = {"opd": lambda: call(opd, x, x1, idx, rows, mask)}
        if torch is not None:
            c["torch"] = lambda: call(torch, tx, tx1, tidx, trows, tmask)
        t = measure(c)
        report(f"{name}, 1M float32", t["opd"], t.get("torch"), 1.0)


# ---- functional (Operators II) ----
def bench_train_step():
    """A training step of each reference model of issue 32 §3 (opdispatch/_demo_models.py:
    forward, backward through autograd.grad, SGD with momentum), on the same batch in both
    libraries (goal <= 1.0 of torch's time): the CNN (16 images 3x16x16), the transformer of
    tests/models (8x16 characters, embedding 32) and the demo's (16x32, embedding 48)."""
    from opdispatch import _demo_models as models
    from opdispatch.demo import TEXT
    cases = (("CNN, batch 16x3x16x16", models.CNN(), 0.02),
             ("transformer, 8x16, embedding 32", models.Transformer(), 0.1),
             ("transformer, 16x32, embedding 48",
              models.Transformer(text=TEXT, block=32, embed=48, batch=16), 0.1))
    for name, model, lr in cases:
        batch = model.batches(1)
        ours = models.Trainer(opd, model, lr)
        (x, y), = ours.data(batch)
        c = {"opd": lambda: ours.step(x, y)}
        if torch is not None:
            theirs = models.Trainer(torch, model, lr)
            (tx, ty), = theirs.data(batch)
            c["torch"] = lambda: theirs.step(tx, ty)
        t = measure(c)
        report(f"train step, {name}", t["opd"], t.get("torch"), 1.0)


def bench_conv():
    """conv2d (issue 32 §3, helper "conv"): forward, and forward + backward (input, weight and
    bias gradients), of a 32x16x32x32 float32 input by 32 3x3 filters with padding 1, through
    ops.aten.conv2d in both libraries, both on oneDNN (goal <= 1.1 of torch's time)."""
    x = opd.randn(32, 16, 32, 32)
    w = opd.randn(32, 16, 3, 3) * 0.1
    b = opd.randn(32)
    g = opd.randn(32, 32, 32, 32)
    libs = {"opd": (opd, x, w, b, g)}
    if torch is not None:
        libs["torch"] = tuple([torch] + [torch.from_dlpack(t).clone() for t in (x, w, b, g)])

    def forward(lib, x, w, b, g):
        with lib.no_grad():
            lib.ops.aten.conv2d(x, w, b, [1, 1], [1, 1])

    def forward_backward(lib, x, w, b, g):
        x.requires_grad_(True), w.requires_grad_(True), b.requires_grad_(True)
        x.grad = w.grad = b.grad = None
        lib.ops.aten.conv2d(x, w, b, [1, 1], [1, 1]).backward(g)

    for label, step in (("fwd", forward), ("fwd+bwd", forward_backward)):
        c = {k: (lambda a=a: step(*a)) for k, a in libs.items()}
        t = measure(c)
        report(f"conv2d {label}, 32x16x32x32, 32 3x3, pad 1", t["opd"], t.get("torch"), 1.1)


# ---- graph (issue 34 §3) ----
def bench_make_fx():
    """make_fx (issue 34 §4): tracing a 100-operator function of two 4x4 float32 tensors into a
    GraphModule, and calling the GraphModule, against torch 1.13's make_fx and GraphModule
    (reported)."""
    from opdispatch.fx.experimental.proxy_tensor import make_fx

    def f(x, y):
        for _ in range(25):
            x = (x + y).relu() * y - x
        return x

    libs = {"opd": (opd, make_fx)}
    if torch is not None:
        from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx
        libs["torch"] = (torch, torch_make_fx)
    args = {k: (lib.ones(4, 4), lib.ones(4, 4)) for k, (lib, _) in libs.items()}
    graphs = {k: mk(f)(*args[k]) for k, (_, mk) in libs.items()}
    t = measure({k: (lambda k=k, mk=mk: mk(f)(*args[k])) for k, (_, mk) in libs.items()})
    report("make_fx of 100 operators, 4x4", t["opd"], t.get("torch"))
    t = measure({k: (lambda k=k: graphs[k](*args[k])) for k in libs})
    report("its GraphModule called, 4x4", t["opd"], t.get("torch"))


# ---- pydispatch (issue 34 §2) ----
def bench_dispatch_mode():
    """x + y (2x3) under an identity TorchDispatchMode, against torch 1.13's same mode (issue 34
    §4: goal <= 0.5), and on an identity wrapper subclass (reported)."""
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    def identity_mode(base):
        class Identity(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        return Identity()

    def identity_subclass(lib):
        class Wrapper(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype)
                r.elem = elem
                return r

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                out = func(*[a.elem if isinstance(a, cls) else a for a in args], **(kwargs or {}))
                return cls(out)
        return Wrapper

    libs = {"opd": (opd, TorchDispatchMode)}
    if torch is not None:
        from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
        libs["torch"] = (torch, TorchMode)
    args = {k: (lib.ones(2, 3), lib.ones(2, 3)) for k, (lib, _) in libs.items()}
    modes = [identity_mode(base) for _, base in libs.values()]
    for m in modes:
        m.__enter__()
    try:
        t = measure({k: (lambda k=k: args[k][0] + args[k][1]) for k in libs})
    finally:
        for m in reversed(modes):
            m.__exit__(None, None, None)
    report("x + y under an identity TorchDispatchMode, 2x3", t["opd"], t.get("torch"), 0.5)
    wrapped = {k: (identity_subclass(lib)(lib.ones(2, 3)),) * 2 for k, (lib, _) in libs.items()}
    t = measure({k: (lambda k=k: wrapped[k][0] + wrapped[k][1]) for k in libs})
    report("x + y on an identity wrapper subclass, 2x3", t["opd"], t.get("torch"))


CASES = {
    "PyAdd": bench_add,
    "PyOpsAdd": bench_ops_add,
    "PyNamedAdd": bench_named_add,
    "PySmallCalls": bench_small_calls,
    "PyPythonKernel": bench_python_kernel,
    "PyDlpack": bench_dlpack,
    "PyIndexing": bench_indexing,
    "PyUnary": bench_unary,
    "PyActivations": bench_activations,
    "PyNorm": bench_norm,
    "PyBinary": bench_binary,
    "PyReductions": bench_reductions,
    "PyScanSortGather": bench_scan_sort_gather,
    "PyTrainStep": bench_train_step,
    "PyConv": bench_conv,
    "PyMakeFx": bench_make_fx,
    "PyDispatchMode": bench_dispatch_mode,
}


def benchmark_filter(spec):
    """Google Benchmark's --benchmark_filter, as a predicate on case names: a regular
    expression searched in the name; empty or "all" selects every case; a leading '-' selects
    the cases it does not match (a negative filter)."""
    import re
    if spec in ("", "all"):
        spec = "."
    negative = spec.startswith("-")
    pattern = re.compile(spec[1:] if negative else spec)
    return lambda name: (pattern.search(name) is None) == negative


def main(argv):
    # Google Benchmark's flags, as opd bench passes them: --benchmark_list_tests and
    # --benchmark_filter (its syntax; the last one given counts, as there) are honoured, the
    # others (repetitions...) do not apply here; --opd_bench_smoke is opd bench --smoke's.
    global ROUNDS, BATCH_SECONDS
    selects = benchmark_filter("")
    for a in argv:
        if a.startswith("--benchmark_filter="):
            selects = benchmark_filter(a.split("=", 1)[1])
    if "--opd_bench_smoke" in argv:
        ROUNDS, BATCH_SECONDS = 1, 0.0
    selected = {k: v for k, v in CASES.items() if selects(k)}
    if "--benchmark_list_tests" in argv or "--benchmark_list_tests=true" in argv:
        for name in selected:
            print(name)
        return
    if not selected:
        return
    print(f"Python {sys.version.split()[0]}, opdispatch from {opd.__file__}, "
          f"torch {torch.__version__ if torch else 'not installed'}; medians of {ROUNDS} "
          f"interleaved rounds", flush=True)
    for case in selected.values():
        case()


if __name__ == "__main__":
    main(sys.argv[1:])
