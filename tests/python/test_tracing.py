"""opdispatch.trace(): the dispatch hops of this thread, as the lines `opd eval --trace` prints
(str) and as objects (hops), counted by count(op, key)."""

import os
import sys
import threading

import pytest

import opdispatch as opd
from opdispatch.library import Library

MANIFEST = os.path.join(os.path.dirname(__file__), "..", "..", "manifests",
                        "native_functions.yaml")


def declared_at(func):
    """manifests/native_functions.yaml:N, where `- func: <func>(` is declared."""
    with open(MANIFEST) as f:
        for n, line in enumerate(f, 1):
            if line.startswith(f"- func: {func}("):
                return f"manifests/native_functions.yaml:{n}"
    raise AssertionError(f"{func} is not in {MANIFEST}")


def here():
    """The line after the caller's: where the registration on that next line is made."""
    return f"{__file__}:{sys._getframe(1).f_lineno + 1}"


def plugin(name):
    return f"{name} {opd.plugins.status(name).version}"


def test_x_plus_y_goes_through_autograd_then_the_cpu_kernel():
    x = opd.ones(2, 3)
    y = opd.ones(2, 3)
    with opd.trace() as t:
        z = x + y
    assert z.tolist() == [[2.0] * 3] * 2
    site = declared_at("add.Tensor")
    assert str(t) == (
        f"aten::add.Tensor [call] DispatchKeySet(CPU, AutogradCPU) -> AutogradCPU: autograd "
        f"kernel registered at {site} (plugin {plugin('autograd')})\n"
        f"  aten::add.Tensor [redispatch] DispatchKeySet(CPU) -> CPU: kernel registered at "
        f"{site} (plugin {plugin('cpu')})")
    assert repr(t) == "<opdispatch.trace with 2 hops>"


def test_hops_have_the_fields_of_the_line():
    x = opd.ones(2)
    with opd.trace() as t:
        x + x
    first, second = t.hops
    assert (first.op, first.entry, first.keys, first.key) == (
        "aten::add.Tensor", "call", "DispatchKeySet(CPU, AutogradCPU)", "AutogradCPU")
    assert first.source == "autograd kernel"
    assert first.plugin == plugin("autograd")
    assert first.debug.startswith(f"registered at {declared_at('add.Tensor')}")
    assert (first.depth, first.raised) == (0, False)
    assert (second.entry, second.key, second.source, second.plugin, second.depth) == (
        "redispatch", "CPU", "kernel", plugin("cpu"), 1)
    assert second.line.startswith("  aten::add.Tensor [redispatch] DispatchKeySet(CPU) -> CPU")
    assert repr(first) == f"<DispatchHop {first.line}>"


def test_no_grad_skips_the_autograd_hop():
    x = opd.ones(2, requires_grad=True)
    with opd.no_grad(), opd.trace() as t:
        x + x
    assert [(h.op, h.key) for h in t.hops] == [("aten::add.Tensor", "CPU")]


def test_count_by_operator_overload_and_key():
    x = opd.ones(2)
    with opd.trace() as t:
        x + x
        opd.add(x, x)
        x * x
    assert t.count("aten::add.Tensor") == 4
    assert t.count("aten::add.Tensor", "CPU") == 2
    assert t.count("aten::add.Tensor", key="AutogradCPU") == 2
    assert t.count(opd.ops.aten.add.Tensor, "CPU") == 2
    assert t.count(opd.ops.aten.add) == 4
    assert t.count("aten::add") == 4
    assert t.count("aten::mul.Tensor", "CPU") == 1
    assert t.count("aten::sub.Tensor") == 0
    assert t.count("aten::add.Scalar") == 0


def test_a_python_kernel_and_a_failing_hop():
    x = opd.ones(1)
    with Library("trops", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with opd.trace() as t:
            with pytest.raises(NotImplementedError):
                opd.ops.trops.f(x)
        assert str(t) == ("trops::f [call_boxed] DispatchKeySet(CPU) -> CPU: no kernel\n"
                          "trops::f raised")
        assert [(h.source, h.raised) for h in t.hops] == [("missing", False), ("", True)]
        assert t.count("trops::f") == 1  # raised hops are not counted twice
        site = here()
        lib.impl("f", lambda x: x, "CPU")
        with opd.trace() as t:
            opd.ops.trops.f(x)
        assert str(t) == (f"trops::f [call_boxed] DispatchKeySet(CPU) -> CPU: kernel registered "
                          f"at {site}")
        assert t.hops[0].plugin == ""


def test_only_this_threads_hops_are_recorded():
    x = opd.ones(2)
    with opd.trace() as t:
        worker = threading.Thread(target=lambda: [x + x for _ in range(5)])
        worker.start()
        worker.join()
        outcomes = opd._C._test_call_from_threads("aten::add.Tensor", [x, x, 1], 2, 3)
        x + x
    assert len(outcomes) == 2 and all(len(o) == 3 for o in outcomes)
    assert t.count("aten::add.Tensor") == 2
    assert len(t.hops) == 2


def test_a_trace_inside_a_trace_leaves_the_outer_one_recording_after():
    x = opd.ones(2)
    with opd.trace() as outer:
        x + x
        with opd.trace() as inner:
            x * x
        x - x
    assert inner.count("aten::mul.Tensor") == 2
    assert outer.count("aten::add.Tensor") == 2
    assert outer.count("aten::sub.Tensor") == 2
    t = opd.trace()
    with t:
        with pytest.raises(RuntimeError, match=r"^opdispatch.trace: this trace is already "
                                               r"recording$"):
            t.__enter__()


def test_traces_on_two_threads_at_once_each_record_their_own_thread():
    # A opens, B opens, A closes, B closes: not the nesting of one thread's with-blocks.
    x = opd.ones(2)
    b_started, a_closed, b_done = threading.Event(), threading.Event(), threading.Event()
    b_ops = []

    def thread_b():
        with opd.trace() as tb:
            b_started.set()
            a_closed.wait(10)
            x * x
        b_ops.extend(h.op for h in tb.hops)
        b_done.set()

    ta = opd.trace()
    with ta:
        worker = threading.Thread(target=thread_b)
        worker.start()
        assert b_started.wait(10)
        x + x
    a_closed.set()
    assert b_done.wait(10)
    worker.join(10)
    x - x  # after A stopped
    assert [h.op for h in ta.hops] == ["aten::add.Tensor", "aten::add.Tensor"]
    assert b_ops == ["aten::mul.Tensor", "aten::mul.Tensor"]
