"""The randomized differential tester (issue #31 §3): random calls drawn from the OpInfo table
(opdispatch._opinfo), each run by opdispatch and by torch 1.13 on the same values, compared
as tests/python/test_opinfo.py compares them.

Each iteration picks an entry, a dtype of it and one of its samples, then gives every tensor
argument a random layout with the same shape (contiguous, transposed, sliced with a step,
with a storage offset, expanded along a dimension) and checks one call form: the function
(values, dtype, shape; strides where the entry compares them), the method, the in-place
method (the result is self), out= (the result is out), Meta (shape, dtype, strides), or the
gradients of float32/float64 calls (backward with one random grad_output, against torch's).

Seeded and reproducible: iteration i of seed s draws from random.Random(f"{s}:{i}") only, so
``--seed s --iteration i`` replays it whatever ran before. A failure prints a runnable snippet
(opdispatch and torch side by side). Exit status 1 when any iteration failed, 0 otherwise
(also when torch is not importable: nothing to compare with, said on stdout).

    PYTHONPATH=build/default/python /usr/bin/python3 tests/python/differential.py \\
        --seed 0 --budget 30 [--ops REGEX] [--iteration N] [--max-failures 20]
"""

import argparse
import faulthandler
import os
import random
import re
import sys
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import opdispatch  # noqa: E402
from opdispatch._opinfo import all_op_db  # noqa: E402
from opdispatch._opinfo.core import SampleInput, dtype_name, tensors_of, to_torch  # noqa: E402

CHECKS = ("function", "method", "inplace", "out", "meta", "grad")
LAYOUTS = ("contiguous", "transposed", "strided", "offset", "expanded")


# ---- layouts -------------------------------------------------------------------------------

def relayout(t, layout, rng):
    """t's shape and dtype in another memory layout: the same values, except for "expanded",
    whose values repeat along one dimension (a tensor of stride 0 there)."""
    shape = list(t.shape)
    if layout == "contiguous" or t.numel() == 0 or not shape:
        return t
    requires_grad = t.requires_grad
    base = t.detach()
    if layout == "transposed" and len(shape) >= 2:
        order = list(range(len(shape)))
        rng.shuffle(order)
        inverse = [order.index(d) for d in range(len(shape))]
        y = base.permute(order).contiguous().permute(inverse)
    elif layout == "strided":
        wide = opdispatch.zeros(shape[:-1] + [shape[-1] * 2], dtype=t.dtype)
        y = wide[..., ::2]
        y.copy_(base)
    elif layout == "offset":
        extra = rng.randint(1, 5)
        storage = opdispatch.zeros([t.numel() + extra], dtype=t.dtype)
        y = storage[extra:].view(shape)
        y.copy_(base)
    elif layout == "expanded":
        dims = [d for d, s in enumerate(shape) if s > 1]
        if not dims:
            return t
        d = rng.choice(dims)
        y = base.select(d, 0).unsqueeze(d).expand(shape)
    else:
        return t
    return y.requires_grad_(True) if requires_grad and not y.requires_grad and y.is_leaf else y


def relayout_sample(sample, rng, layouts):
    """The sample with a layout drawn for each tensor argument; [(argument path, layout)]."""
    chosen = []

    def convert(value, path):
        if isinstance(value, opdispatch.Tensor):
            layout = rng.choice(layouts)
            chosen.append((path, layout))
            return relayout(value, layout, rng)
        if isinstance(value, list):
            return [convert(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return tuple(convert(v, f"{path}[{i}]") for i, v in enumerate(value))
        if isinstance(value, dict):
            return {k: convert(v, f"{path}.{k}") for k, v in value.items()}
        return value
    s = SampleInput(convert(sample.input, "input"), convert(sample.args, "args"),
                    convert(sample.kwargs, "kwargs"), sample.name)
    return s, chosen


# ---- snippets ------------------------------------------------------------------------------

def _literal(t):
    """Python source making opdispatch tensor t (values, strides, offset) in either library:
    '{lib}.tensor([...], dtype={lib}.float32).as_strided([3, 4], [1, 3], 0)'."""
    shape, stride = list(t.shape), list(t.stride())
    name = dtype_name(t.dtype)
    if t.numel() == 0:
        return f"{{lib}}.empty_strided({shape}, {stride}, dtype={{lib}}.{name})"
    span = 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    flat = t.detach().as_strided([span], [1], t.storage_offset())
    if name in ("float16", "bfloat16"):
        values, make = flat.to(opdispatch.float32).tolist(), f".to({{lib}}.{name})"
        head = "{lib}.tensor(" + repr(values) + ", dtype={lib}.float32)" + make
    else:
        head = "{lib}.tensor(" + repr(flat.tolist()) + f", dtype={{lib}}.{name})"
    return f"{head}.as_strided({shape}, {stride}, 0)"


def snippet(op, sample, check, iteration, seed):
    """Runnable code repeating the failing call in both libraries (from the source root)."""
    names, defs = {}, []

    def source(value):
        if isinstance(value, opdispatch.Tensor):
            if id(value) not in names:
                names[id(value)] = f"t{len(names)}"
                defs.append(f"    {names[id(value)]} = " + _literal(value).replace("{lib}", "lib"))
            return names[id(value)]
        if isinstance(value, list):
            return "[" + ", ".join(source(v) for v in value) + "]"
        if isinstance(value, tuple):
            inner = ", ".join(source(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, str) and isinstance(getattr(opdispatch, value, None),
                                                 opdispatch.dtype):
            return f"lib.{value}"
        return repr(value)

    args = [source(a) for a in (sample.input,) + sample.args]
    kwargs = [f"{k}={source(v)}" for k, v in sample.kwargs.items()]
    call = ", ".join(args + kwargs)
    note = {"out": "  # and again with out=", "meta": "  # and with every tensor on 'meta'",
            "grad": "  # then autograd.grad of the outputs"}.get(check, "")
    return "\n".join([
        f"# differential.py --seed {seed} --iteration {iteration}: {op.name}, {check}",
        "import sys; sys.path.insert(0, 'tests/python')",
        "import opdispatch, torch",
        "from opdispatch._opinfo import all_op_db",
        "nan, inf = float('nan'), float('inf')",
        f"op = dict((o.name, o) for _, o in all_op_db())[{op.name!r}]",
        "for lib in (opdispatch, torch):",
        *defs,
        "    fn = op.op if lib is opdispatch else op.ref",
        f"    print(lib.__name__, {fn_call(check, op, call)}){note}"])


def fn_call(check, op, call):
    if check == "method" and op.method_name:
        first, _, rest = call.partition(", ")
        return f"{first}.{op.method_name}({rest})"
    if check == "inplace" and op.inplace:
        first, _, rest = call.partition(", ")
        return f"{first}.clone().{op.inplace}({rest})"
    return f"fn(lib, {call})"


# ---- one iteration -------------------------------------------------------------------------

def draw(entries, seed, iteration, checks):
    """What iteration `iteration` of `seed` runs: (op, dtype, check, sample, rng), or None for
    an iteration with nothing to run. Depends on (seed, iteration) and the table only."""
    rng = random.Random(f"{seed}:{iteration}")
    module, op = rng.choice(entries)
    if op.skip_reason("differential"):
        return None
    dtype = rng.choice(op.dtypes)
    wanted = rng.choice(checks)
    grad = wanted == "grad" and op.supports_autograd and dtype in ("float32", "float64")
    samples = op.samples(dtype, requires_grad=grad, seed=rng.randrange(1 << 30))
    if not samples:
        return None
    sample, _ = relayout_sample(rng.choice(samples), rng, op.layouts or LAYOUTS)
    return op, dtype, wanted, sample, rng


def run_iteration(entries, seed, iteration, checks):
    """None, or (op, sample, check, message) for a disagreement."""
    import test_opinfo as T
    drawn = draw(entries, seed, iteration, checks)
    if drawn is None:
        return None
    op, dtype, wanted, sample, rng = drawn
    check = {"method": "method", "inplace": "inplace", "out": "out", "meta": "meta",
             "grad": "gradcheck"}.get(wanted, "values")
    if op.skip_reason(check, dtype) or op.skip_reason(check):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if wanted == "function":
                T.compare_with_torch(op, dtype, sample, lambda: T.call(op, opdispatch, sample),
                                     lambda: T.call(op.ref, T.torch, sample), "function")
            elif wanted == "method" and op.method_name:
                name = op.method_name

                def method(lib, self, *a, **k):
                    return getattr(self, name)(*a, **k)
                T.compare_with_torch(op, dtype, sample, lambda: T.call(method, opdispatch, sample),
                                     lambda: T.call(method, T.torch, sample), "method")
            elif wanted == "inplace" and op.inplace:
                check_inplace(T, op, dtype, sample)
            elif wanted == "out" and op.supports_out:
                check_out(T, op, dtype, sample)
            elif wanted == "meta" and op.supports_meta:
                check_meta(T, op, sample)
            elif wanted == "grad" and op.supports_autograd and dtype in ("float32", "float64"):
                check_grad(T, op, dtype, sample, rng)
    except AssertionError as e:
        return op, sample, wanted, str(e).split("\n")[0][:600]
    except Exception as e:  # noqa: BLE001 - a crash of the harness or the library is a failure
        return op, sample, wanted, f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"
    return None


def check_inplace(T, op, dtype, sample):
    name = op.inplace
    ours_self = T.clone_strided(sample.input)
    theirs_self = to_torch(sample.input)
    s = SampleInput(ours_self, sample.args, sample.kwargs, sample.name)

    def inplace(lib, self, *a, **k):
        return getattr(self, name)(*a, **k)
    ours, theirs = T.compare_with_torch(
        op, dtype, s, lambda: T.call(inplace, opdispatch, s),
        lambda: T.call(inplace, T.torch, s, {id(ours_self): theirs_self}), "in-place",
        compare_strides=True)
    if theirs is not None:
        assert ours is ours_self, f"{op.name} in-place: the result is not self"


def check_out(T, op, dtype, sample):
    r, err = T.outcome(lambda: T.call(op, opdispatch, sample))
    if err is not None or not tensors_of(r):
        return
    out = T._empty_like_result(r, op.out_dtype and op.out_dtype(dtype))
    result = T.call(op, opdispatch, sample, **{op.out_name: out})
    T._assert_is(result, out, f"{op.name} out=")
    expected = tuple(to_torch(x) for x in r) if isinstance(r, tuple) else to_torch(r)
    T.assert_same(out, expected, op, dtype, what=f"{op.name} out=")


def check_meta(T, op, sample):
    cpu, cpu_err = T.outcome(lambda: T.call(op, opdispatch, sample))
    if cpu is not None and not tensors_of(cpu):
        return
    ms = T.meta_sample(op, sample)
    meta, meta_err = T.outcome(lambda: T.call(op, opdispatch, ms))
    if cpu_err is not None:
        assert meta_err is not None, f"{op.name} Meta: CPU raises {cpu_err!r}, Meta returns"
        assert T.same_error_type(meta_err, cpu_err), \
            f"{op.name} Meta: raises {meta_err!r}, CPU raises {cpu_err!r}"
        return
    assert meta_err is None, f"{op.name} Meta: raises {meta_err!r}, CPU returns"
    T.assert_meta_matches(meta, cpu, f"{op.name} Meta")


def check_grad(T, op, dtype, sample, rng):
    """Backward of sum(output * g) for one random g, in both libraries, input by input."""
    if op.name == "pdist" and sample.input.dim() == 2 and sample.input.shape[0] == 0:
        # torch 1.13's CPU _pdist_backward divides its grain size by the row count: the backward
        # of pdist over zero rows kills the process with SIGSEGV (pytorch/pytorch#197099, open;
        # the forward is fine). Nothing to compare with, so not drawn for the gradient.
        return
    every = [t for t in tensors_of((sample.input, sample.args, sample.kwargs))
             if dtype_name(t.dtype) == dtype]
    if any(t.requires_grad for t in every):  # the sample says which arguments differentiate
        every = [t for t in every if t.requires_grad]
    if not every:
        return
    leaves = {id(t): T.clone_strided(t.detach()).requires_grad_(True) for t in every}
    torch_leaves = {k: to_torch(v).requires_grad_(True) for k, v in leaves.items()}
    ours_s = SampleInput(T.replace_tensors(sample.input, leaves),
                         T.replace_tensors(sample.args, leaves),
                         T.replace_tensors(sample.kwargs, leaves))
    tmap = {id(leaves[k]): torch_leaves[k] for k in leaves}
    ours, theirs = T.compare_with_torch(op, dtype, ours_s,
                                        lambda: T.call(op, opdispatch, ours_s),
                                        lambda: T.call(op.ref, T.torch, ours_s, tmap),
                                        "function (for grad)")
    if theirs is None:
        return
    outs = [o for o in (ours if isinstance(ours, (tuple, list)) else [ours])
            if isinstance(o, opdispatch.Tensor) and o.requires_grad]
    touts = [o for o in (theirs if isinstance(theirs, (tuple, list)) else [theirs])
             if isinstance(o, T.torch.Tensor) and o.requires_grad]
    assert len(outs) == len(touts), \
        f"{op.name} grad: {len(outs)} outputs require grad, torch's {len(touts)}"
    if not outs:
        return
    gs = [opdispatch.tensor([rng.uniform(-1, 1) for _ in range(o.numel())],
                            dtype=o.dtype).reshape(list(o.shape)) for o in outs]
    tgs = [to_torch(g) for g in gs]
    ours_in = [leaves[k] for k in leaves]
    theirs_in = [torch_leaves[k] for k in leaves]
    ours_g = opdispatch.autograd.grad(outs, ours_in, gs, allow_unused=True)
    theirs_g = T.torch.autograd.grad(touts, theirs_in, tgs, allow_unused=True)
    for i, (a, b) in enumerate(zip(ours_g, theirs_g)):
        what = f"{op.name} grad of input {i}"
        if b is None:
            assert a is None or not bool((a != 0).any().item()), f"{what}: torch gives None"
            continue
        assert a is not None, f"{what}: None, torch gives a gradient"
        T.assert_same(a, b, op, dtype, what=what)


# ---- main ----------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=30.0, help="seconds (default 30)")
    parser.add_argument("--iterations", type=int, default=0, help="at most this many (0: no cap)")
    parser.add_argument("--iteration", type=int, default=None, help="replay this one only")
    parser.add_argument("--ops", default="", help="regex on entry names")
    parser.add_argument("--checks", default=",".join(CHECKS))
    parser.add_argument("--max-failures", type=int, default=20)
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("differential.py: torch is not importable; nothing to compare with (skipped)")
        return 0
    entries = [(m, op) for m, op in all_op_db() if re.search(args.ops, op.name)]
    if not entries:
        print(f"differential.py: no entry matches {args.ops!r}")
        return 1
    checks = tuple(c for c in args.checks.split(",") if c)
    if args.worker is not None:
        return worker(entries, args, checks)
    if args.iteration is not None:
        failure = run_iteration(entries, args.seed, args.iteration, checks)
        if failure is not None:
            report(failure, args.iteration, args.seed)
        else:
            drawn = draw(entries, args.seed, args.iteration, checks)
            what = f"{drawn[0].name} {drawn[1]} [{drawn[2]}] {drawn[3]!r}" if drawn else "nothing"
            print(f"iteration {args.iteration}: {what}: agrees")
        return 1 if failure else 0
    return supervise(entries, args, checks, argv)


def report(failure, iteration, seed):
    op, sample, check, message = failure
    print(f"FAIL iteration {iteration}: {op.name} [{check}] {message}")
    print(snippet(op, sample, check, iteration, seed))
    print(flush=True)


def worker(entries, args, checks):
    """Runs iterations from args.worker on, writing "@ i" before each (so that the parent knows
    which one crashed the process) and a report for each new kind of failure."""
    faulthandler.enable()
    seen = set()
    i = args.worker
    while True:
        print(f"@ {i}", flush=True)
        failure = run_iteration(entries, args.seed, i, checks)
        if failure is not None:
            op, _, check, message = failure
            key = (op.name, check, re.sub(r"\d", "", message)[:80])
            if key not in seen:
                seen.add(key)
                report(failure, i, args.seed)
        i += 1


# Note [The differential tester survives crashes]
# The iterations run in a child process (--worker) that names each iteration on its stdout
# before running it. When the child dies of a signal (a segmentation fault in a kernel), the
# parent reports that iteration as a failure, with its snippet made here (drawing is
# independent of running), and starts a new child at the next one, so one crash neither
# ends the run nor hides the failures after it. The budget and the iteration cap are the
# parent's: it stops the child when either is spent.
def supervise(entries, args, checks, argv):
    import subprocess
    start = time.monotonic()
    deadline = start + args.budget
    failures, crashes, count = 0, 0, 0
    i = 0
    base = [sys.executable, os.path.abspath(__file__)] + list(argv if argv is not None
                                                             else sys.argv[1:])
    while time.monotonic() < deadline and failures < args.max_failures and (
            not args.iterations or count < args.iterations):
        child = subprocess.Popen(base + ["--worker", str(i)], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, bufsize=1)
        current = None
        stopped = False
        try:
            for line in child.stdout:
                if line.startswith("@ "):
                    current = int(line[2:])
                    count += 1
                    over = time.monotonic() >= deadline or failures >= args.max_failures or (
                        args.iterations and count > args.iterations)
                    if over:
                        count -= 1
                        stopped = True
                        child.kill()
                        break
                    continue
                if line.startswith("FAIL "):
                    failures += 1
                print(line, end="")
        finally:
            child.stdout.close()
            rc = child.wait()
        if stopped or current is None:
            break
        if rc < 0 or rc not in (0, 1):
            crashes += 1
            failures += 1
            drawn = draw(entries, args.seed, current, checks)
            print(f"FAIL iteration {current}: the process died (status {rc}) in it")
            if drawn is not None:
                op, dtype, wanted, sample, _ = drawn
                print(snippet(op, sample, wanted, current, args.seed))
            print(flush=True)
        i = current + 1
    elapsed = time.monotonic() - start
    print(f"differential.py: seed {args.seed}, {count} calls over {len(entries)} entries in "
          f"{elapsed:.1f} s, {failures} distinct failures ({crashes} crashes)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
