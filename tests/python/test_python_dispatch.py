"""Python dispatch (issue 34 §2): TorchDispatchMode on the thread's mode stack and tensor
subclasses with __torch_dispatch__, in the spirit of PyTorch's test/test_python_dispatch.py;
the logs are compared with what torch 1.13 logs for the same calls."""

import gc
import threading

import pytest

import opdispatch as opd
from opdispatch import _C
from opdispatch.utils._python_dispatch import (BaseTorchDispatchMode, TorchDispatchMode,
                                               _get_current_dispatch_mode,
                                               _get_current_dispatch_mode_stack,
                                               _len_torch_dispatch_stack, _pop_mode,
                                               _pop_mode_temporarily, _push_mode)

aten = opd.ops.aten


class LoggingMode(TorchDispatchMode):
    """Logs `func(args, kwargs)` with tensors as their shapes, then runs the call."""

    def __init__(self, name="", log=None):
        self.name = name
        self.log = [] if log is None else log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append(f"{self.name}{func}{describe(args)}{describe(kwargs or {})}"
                        + (f" types={[t.__name__ for t in types]}" if types else ""))
        return func(*args, **(kwargs or {}))


def describe(v):
    if isinstance(v, opd.Tensor):
        return f"T{list(v.shape)}"
    if isinstance(v, (list, tuple)):
        return "(" + ", ".join(describe(x) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}={describe(x)}" for k, x in v.items()) + "}"
    return repr(v)


def test_a_mode_sees_each_call_with_torch_s_args_and_kwargs():
    x = opd.ones(2, 3)
    with LoggingMode() as m:
        x + x
        opd.add(x, x, alpha=2)
        x.sum(0)
        x * 2
        opd.mm(x, x.t())
        x.softmax(0)
    # torch 1.13 logs the same (defaults left out, the kwarg-only alpha by name, 2 a number).
    assert m.log == [
        "aten.add.Tensor(T[2, 3], T[2, 3]){}",
        "aten.add.Tensor(T[2, 3], T[2, 3]){alpha=2}",
        "aten.sum.dim_IntList(T[2, 3], (0)){}",
        "aten.mul.Tensor(T[2, 3], 2){}",
        "aten.t.default(T[2, 3]){}",
        "aten.mm.default(T[2, 3], T[3, 2]){}",
        "aten._softmax.default(T[2, 3], 0, False){}",
    ]


def test_func_is_the_ops_overload():
    seen = []

    class Grab(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Grab():
        opd.ones(2) + opd.ones(2)
        opd.ones(3).nonzero()
    add = seen[2]
    assert add is aten.add.Tensor
    assert add.overloadpacket is aten.add
    assert add.name() == "aten::add.Tensor"
    assert str(add._schema) == ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) "
                                "-> Tensor")
    assert add.tags == []  # as torch 1.13's
    assert seen[0] is aten.ones.default
    assert seen[-1] is aten.nonzero.default
    assert seen[-1].tags == [opd.Tag.dynamic_output_shape]


def test_results_come_from_the_mode():
    class Replace(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is aten.add.Tensor:
                return opd.zeros(2)
            return func(*args, **(kwargs or {}))

    with Replace():
        out = opd.ones(2) + opd.ones(2)
    assert out.tolist() == [0.0, 0.0]


def test_modes_nest_and_each_runs_popped():
    log = []
    x = opd.ones(2)
    outer, inner = LoggingMode("outer:", log), LoggingMode("inner:", log)
    with outer:
        with inner:
            assert _get_current_dispatch_mode() is inner
            assert _get_current_dispatch_mode_stack() == [outer, inner]
            x + x
        assert _len_torch_dispatch_stack() == 1
    assert _len_torch_dispatch_stack() == 0 and _get_current_dispatch_mode() is None
    assert log == ["inner:aten.add.Tensor(T[2], T[2]){}", "outer:aten.add.Tensor(T[2], T[2]){}"]

    depths = []

    class Depth(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            depths.append((_len_torch_dispatch_stack(), _get_current_dispatch_mode()))
            return func(*args, **(kwargs or {}))

    a, b = Depth(), Depth()
    with a, b:
        x + x
    assert depths == [(1, a), (0, None)]
    # A mode that pops the next one skips it.
    skipped = []

    class Skip(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            with _pop_mode_temporarily() as below:
                skipped.append(below)
                return func(*args, **(kwargs or {}))

    log.clear()
    outer, skip = LoggingMode("outer:", log), Skip()
    with outer, skip:
        x + x
    assert skipped == [outer] and log == []


def test_a_mode_can_be_entered_again_and_push_warns():
    m = LoggingMode()
    x = opd.ones(1)
    with m:
        with m:
            x + x
    assert len(m.log) == 2  # each entry sees the call once, the inner first
    with pytest.warns(UserWarning, match="no longer necessary"):
        pushed = LoggingMode.push()
    assert isinstance(pushed, LoggingMode)


def test_an_exception_in_torch_dispatch_reaches_the_caller_as_itself():
    class Boom(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise KeyError(f"no {func}")

    x = opd.ones(2)
    outer = LoggingMode()
    with outer:
        with Boom():
            with pytest.raises(KeyError, match="no aten.add.Tensor") as info:
                x + x
            assert _get_current_dispatch_mode() is not outer  # the fallback pushed Boom back
            assert _len_torch_dispatch_stack() == 2
        assert _get_current_dispatch_mode() is outer
    assert _len_torch_dispatch_stack() == 0
    assert type(info.value) is KeyError
    assert (x + x).tolist() == [2.0, 2.0]

    class WrongResult(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return "a string"

    with pytest.raises(TypeError, match="returned str for result 0, which the schema declares"):
        with WrongResult():
            x + x


def test_the_mode_stack_refuses_a_classmethod_and_an_empty_pop():
    class ClassMode(TorchDispatchMode):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pytest.raises(RuntimeError, match="should be a normal method not a class method"):
        with ClassMode():
            pass
    with pytest.raises(RuntimeError, match="trying to pop from empty mode stack"):
        _pop_mode()
    _push_mode(BaseTorchDispatchMode())
    assert (opd.ones(2) * 3).tolist() == [3.0, 3.0]
    assert isinstance(_pop_mode(), BaseTorchDispatchMode)


def test_a_mode_sees_calls_below_autograd_and_autograd_records_them():
    x = opd.ones(2, 2, requires_grad=True)
    with LoggingMode() as m:
        y = (x * x).sum()
        y.backward()
    assert y.grad_fn is not None
    assert x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert m.log[:2] == ["aten.mul.Tensor(T[2, 2], T[2, 2]){}", "aten.sum.default(T[2, 2]){}"]
    assert len(m.log) > 2  # the backward's operators too (each once: autograd below is off)
    assert not any("AutogradCPU" in line for line in m.log)


def test_a_mode_on_one_thread_does_not_see_another_s_calls():
    started, release = threading.Event(), threading.Event()
    seen_on_thread = []

    def other():
        seen_on_thread.append(_len_torch_dispatch_stack())
        started.set()
        release.wait(10)
        for _ in range(50):
            opd.ones(2) + opd.ones(2)
        seen_on_thread.append(_len_torch_dispatch_stack())

    t = threading.Thread(target=other)
    with LoggingMode() as m:
        t.start()
        assert started.wait(10)
        release.set()
        for _ in range(50):
            opd.ones(1) * 2
        t.join(10)
    assert seen_on_thread == [0, 0]
    assert m.log == ["aten.ones.default((1)){}", "aten.mul.Tensor(T[1], 2){}"] * 50


def test_a_mode_on_another_thread_intercepts_there():
    logs = {}

    def worker(name):
        with LoggingMode() as m:
            opd.ones(3).neg()
        logs[name] = m.log

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert logs == {i: ["aten.ones.default((3)){}", "aten.neg.default(T[3]){}"] for i in range(3)}


# ---- Tensor subclasses -------------------------------------------------------------------------

class LoggingTensor(opd.Tensor):
    """A wrapper subclass (PyTorch's LoggingTensor): runs each operator on the wrapped tensors
    and wraps the tensor results again, logging the calls."""

    log = []

    @staticmethod
    def __new__(cls, elem, *, requires_grad=False):
        r = opd.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                              dtype=elem.dtype, device=elem.device,
                                              requires_grad=requires_grad)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.log.append(f"{func}{describe(args)} types={[t.__name__ for t in types]}")

        def unwrap(a):
            return a.elem if isinstance(a, LoggingTensor) else a

        def wrap(a):
            return cls(a) if isinstance(a, opd.Tensor) and not isinstance(a, cls) else a

        out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        return type(out)(wrap(o) for o in out) if isinstance(out, (tuple, list)) else wrap(out)


@pytest.fixture
def logging_tensor():
    LoggingTensor.log = []
    yield LoggingTensor
    # A wrapper still alive when the interpreter finalizes leaks its Python state by design
    # (release_pyobject, Note [The GIL and the dispatcher's locks]), which LeakSanitizer reports
    # under ASan: collect what the test left in cycles (a pytest.raises traceback and its frame)
    # while the interpreter is whole.
    gc.collect()


def test_a_wrapper_subclass_has_metadata_and_the_python_keys(logging_tensor):
    x = logging_tensor(opd.ones(2, 3, dtype=opd.float64))
    assert type(x) is logging_tensor
    assert x.shape == (2, 3) and x.stride() == (3, 1) and x.dtype == opd.float64
    assert x.device == opd.device("cpu")
    assert str(_C._dispatch_keys(x)) == ("DispatchKeySet(CPU, Python, ADInplaceOrView, "
                                         "AutogradCPU, PythonTLSSnapshot)")
    assert str(_C._dispatch_keys(x.elem)) == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)"


def test_operators_on_a_subclass_reach_torch_dispatch(logging_tensor):
    x = logging_tensor(opd.ones(2, 3))
    y = x + x
    z = y.sum()
    assert type(y) is logging_tensor and type(z) is logging_tensor
    assert y.elem.tolist() == [[2.0] * 3] * 2 and z.elem.item() == 12.0
    assert logging_tensor.log == ["aten.add.Tensor(T[2, 3], T[2, 3]) types=['LoggingTensor']",
                                  "aten.sum.default(T[2, 3]) types=['LoggingTensor']"]
    # A plain tensor beside it: the subclass still decides, and types lists it alone.
    logging_tensor.log.clear()
    w = opd.ones(2, 3) * x
    assert type(w) is logging_tensor
    assert logging_tensor.log == ["aten.mul.Tensor(T[2, 3], T[2, 3]) types=['LoggingTensor']"]


def test_the_subclass_object_comes_back_with_its_attributes(logging_tensor):
    x = logging_tensor(opd.ones(2))
    seen = []

    class Keep(logging_tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append(args[0])
            return args[0]

    k = Keep(opd.ones(2))
    k.note = "kept"
    assert k.neg() is k  # the live object, identity kept
    assert seen == [k]
    del k
    seen.clear()
    r = Keep(opd.zeros(1)).abs()  # its Python object is gone: a new one, same class and dict
    assert type(r) is Keep and r.elem.tolist() == [0.0] and seen[0] is r
    assert type(x) is logging_tensor
    # `seen` (reached from Keep's __torch_dispatch__) holds r, whose storage holds Keep: a cycle
    # through C++ that the collector cannot see (Note [Wrapper subclasses]); broken by hand.
    seen.clear()


def test_autograd_records_a_subclass_s_operators(logging_tensor):
    a = logging_tensor(opd.ones(2), requires_grad=True)
    b = (a * a).sum()
    assert b.grad_fn is not None and b.requires_grad
    b.backward()
    assert type(a.grad) is logging_tensor and a.grad.elem.tolist() == [2.0, 2.0]
    forward = logging_tensor.log[:2]
    assert forward == ["aten.mul.Tensor(T[2], T[2]) types=['LoggingTensor']",
                       "aten.sum.default(T[2]) types=['LoggingTensor']"]
    assert any(line.startswith("aten.expand.default") for line in logging_tensor.log[2:])


def test_a_mode_comes_before_the_subclass(logging_tensor):
    x = logging_tensor(opd.ones(2))
    with LoggingMode() as m:
        y = x + x
    assert type(y) is logging_tensor
    assert m.log == ["aten.add.Tensor(T[2], T[2]){} types=['LoggingTensor']"]
    assert logging_tensor.log == ["aten.add.Tensor(T[2], T[2]) types=['LoggingTensor']"]


def test_not_implemented_from_every_subclass_is_a_type_error():
    class Refuses(opd.Tensor):
        @staticmethod
        def __new__(cls, size):
            return opd.Tensor._make_wrapper_subclass(cls, size)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError, match="Multiple dispatch failed for 'aten::neg'; all "
                                        "__torch_dispatch__ handlers returned NotImplemented"):
        Refuses([2]).neg()
    with pytest.raises(TypeError, match="cls must be a subclass of Tensor"):
        opd.Tensor._make_wrapper_subclass(int, [2])

    class NoDispatch(opd.Tensor):
        pass

    with pytest.raises(TypeError, match="NoDispatch must define __torch_dispatch__"):
        opd.Tensor._make_wrapper_subclass(NoDispatch, [2])
    r = opd.Tensor._make_wrapper_subclass(Refuses, [2, 3], layout=opd.strided, pin_memory=False,
                                          memory_format=opd.contiguous_format,
                                          storage_offset=1, strides=[1, 2])
    assert r.shape == (2, 3) and r.stride() == (1, 2) and r.storage_offset() == 1
    with pytest.raises(NotImplementedError, match="only the strided layout"):
        opd.Tensor._make_wrapper_subclass(Refuses, [2], layout=opd.sparse_coo)
    with pytest.raises(NotImplementedError, match="dispatch_device are not supported"):
        opd.Tensor._make_wrapper_subclass(Refuses, [2], dispatch_device=True)
    with pytest.raises(TypeError, match="No constructor defined"):
        opd.Tensor()


def test_an_exception_in_a_subclass_s_torch_dispatch_reaches_the_caller():
    class Raises(opd.Tensor):
        @staticmethod
        def __new__(cls, size):
            return opd.Tensor._make_wrapper_subclass(cls, size)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise IndexError(f"refused {func}")

    with pytest.raises(IndexError, match="refused aten.neg.default"):
        Raises([2]).neg()


def test_cpp_threads_on_a_subclass_run_torch_dispatch_on_their_own_threads(logging_tensor):
    idents = set()

    class OnThreads(logging_tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            idents.add(threading.get_ident())
            return logging_tensor.__torch_dispatch__.__func__(cls, func, types, args, kwargs)

    w = OnThreads(opd.ones(2))
    # Three C++ threads (no Python thread state until the handler takes the GIL), 4 calls each.
    out = _C._test_call_from_threads("aten::add.Tensor", [w, w, 1], 3, 4)
    assert out == [["Tensor(sizes=[2], dtype=Float, device=cpu)"] * 4] * 3
    assert len(idents) == 3 and threading.get_ident() not in idents
    assert len(logging_tensor.log) == 12


def test_a_python_thread_without_the_mode_dispatches_the_subclass_alone(logging_tensor):
    x = logging_tensor(opd.ones(2))
    results = []

    def other():
        results.append(type(x + x).__name__)

    with LoggingMode() as m:
        t = threading.Thread(target=other)
        t.start()
        t.join(10)
    assert results == ["LoggingTensor"] and m.log == []
    assert logging_tensor.log == ["aten.add.Tensor(T[2], T[2]) types=['LoggingTensor']"]


def test_a_wrapper_has_no_memory_to_read(logging_tensor):
    x = logging_tensor(opd.ones(2))
    # torch's texts; its repr fails the same way (it calls tolist).
    for read, what in [(x.tolist, ".tolist()"), (x.numpy, ".numpy()"),
                       (lambda: repr(x), ".tolist()"), (x.__dlpack__, "__dlpack__()"),
                       (lambda: opd.from_dlpack(x), "__dlpack__()")]:
        with pytest.raises(RuntimeError) as info:
            read()
        assert str(info.value) == f"{what} is not supported for tensor subclasses."
    # Through operators it reads its wrapped tensor: x[0] is select, then item.
    assert x[0].item() == 1.0
    with pytest.raises(ValueError, match="only one element tensors"):
        x.item()


def test_a_subclass_comes_before_its_base_in_types(logging_tensor):
    calls = []

    class Derived(logging_tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            calls.append([t.__name__ for t in types])
            return NotImplemented

    base, derived = logging_tensor(opd.ones(2)), Derived(opd.ones(2))
    out = base + derived  # Derived refuses; LoggingTensor, next in types, runs it
    assert calls == [["Derived", "LoggingTensor"]]
    assert type(out) is logging_tensor and out.elem.tolist() == [2.0, 2.0]


def test_detach_of_a_subclass_reaches_torch_dispatch(logging_tensor):
    # As torch's: detach is an operator the subclass runs, and its result has its own state.
    x = logging_tensor(opd.ones(2, 2), requires_grad=True)
    d = x.detach()
    assert logging_tensor.log == ["aten.detach.default(T[2, 2]) types=['LoggingTensor']"]
    assert type(d) is logging_tensor and d is not x and not d.requires_grad
    d.tag = 1
    assert not hasattr(x, "tag")
    assert x.detach() is not x


def test_a_detached_fake_tensor_keeps_its_own_metadata():
    from opdispatch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    x = mode.from_tensor(opd.randn(2, 3))
    d = x.detach()
    with mode:
        d.unsqueeze_(0)
        y = x + 1
    assert d.shape == (1, 2, 3) and x.shape == (2, 3) and y.shape == (2, 3)
