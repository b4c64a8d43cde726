"""Threads: Python kernels called from C++ threads at once, Libraries registered and closed
while other threads call operators (no deadlock between the GIL and the dispatcher's locks, no
crash, no spurious error), grad mode per thread, a plugin unloaded while Python holds a tensor
it allocated, and interpreter exit while C++ threads run a Python kernel."""

import gc
import os
import threading

import opdispatch as opd
from opdispatch.library import Library

TIMEOUT = 60


def good_manifest():
    return os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "good_v1", "good.yaml")


def run_threads(targets):
    """Runs each target on its own daemon thread; returns the exceptions they raised. Fails
    (rather than hangs) when one is still running after TIMEOUT seconds: a deadlock."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: B902 - reported to the test
                errors.append(e)
        return run

    threads = [threading.Thread(target=wrap(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"threads still running after {TIMEOUT}s (deadlock?): {stuck}"
    return errors


def test_a_python_kernel_called_at_once_from_four_cpp_threads():
    idents = set()
    lock = threading.Lock()

    def kernel(x, n):
        with lock:
            idents.add(threading.get_ident())
        # Calls back into the dispatcher from the C++ thread: the GIL is released around it.
        return int((x * n).sum().item()) + 1

    with Library("thrcall", "DEF") as lib:
        lib.define("f(Tensor x, int n) -> int")
        lib.impl("f", kernel, "CPU")
        outcomes = opd._C._test_call_from_threads("thrcall::f", [opd.ones(2), 20], 4, 50)
    assert [len(o) for o in outcomes] == [50] * 4
    assert [o for per_thread in outcomes for o in per_thread if o != "41"] == []
    assert len(idents) == 4
    assert threading.get_ident() not in idents


def test_a_kernel_returning_a_tensor_to_cpp_threads():
    with Library("thrtensor", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 2, "CPU")
        outcomes = opd._C._test_call_from_threads("thrtensor::f", [opd.ones(3)], 4, 10)
    assert outcomes == [["Tensor(sizes=[3], dtype=Float, device=cpu)"] * 10] * 4


def test_registering_and_closing_libraries_while_other_threads_call_operators(python):
    # In a subprocess: a use of a freed operator entry would take the whole suite down.
    proc = python("""
        import threading
        import opdispatch as opd
        from opdispatch.library import Library
        x = opd.ones(2)
        errors = []

        def guarded(fn):
            def run():
                try:
                    fn()
                except Exception as e:
                    errors.append(f"{type(e).__name__}: {e}")
            return run

        def registrar(i):
            def run():
                for n in range(30):
                    with Library(f"thrreg{i}", "DEF") as lib:
                        lib.define("g(Tensor x, int n) -> int")
                        lib.impl("g", lambda t, k: k * 2, "CPU")
                        assert getattr(opd.ops, f"thrreg{i}").g(x, n) == 2 * n
                    assert opd._C._dispatch_dump(f"thrreg{i}::g") == ""
            return run

        def caller():  # operators that stay defined throughout
            for _ in range(300):
                assert (x + x).tolist() == [2.0, 2.0]
                assert opd.ops.thrstable.f(x).tolist() == [2.0, 2.0]
                assert opd.ops.thrstable.f.default(x).tolist() == [2.0, 2.0]

        def cpp_caller():
            outcomes = opd._C._test_call_from_threads("thrstable::f", [x], 2, 100)
            assert all(o.startswith("Tensor(") for per_thread in outcomes for o in per_thread)

        with Library("thrstable", "DEF") as stable:
            stable.define("f(Tensor x) -> Tensor")
            stable.impl("f", lambda t: t + 1, "CPU")
            threads = [threading.Thread(target=guarded(t), daemon=True) for t in
                       (registrar(0), registrar(1), caller, caller, caller, cpp_caller)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            print("stuck:", [t.name for t in threads if t.is_alive()])
        print("errors:", sorted(set(errors)))
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == "stuck: []\nerrors: []\n"


def test_overriding_a_kernel_while_cpp_threads_call_it():
    x = opd.ones(1)
    with Library("throver", "DEF") as lib:
        lib.define("f(Tensor x) -> int")
        lib.impl("f", lambda t: 1, "CPU")
        results = []

        def cpp_caller():
            results.extend(opd._C._test_call_from_threads("throver::f", [x], 3, 200))

        def swapper():
            for _ in range(30):
                with Library("throver", "IMPL", "CPU") as over:
                    over.impl("f", lambda t: 2)

        errors = run_threads([cpp_caller, swapper])
    assert errors == []
    assert len(results) == 3
    assert {o for per_thread in results for o in per_thread} <= {"1", "2"}


def test_no_grad_on_one_thread_does_not_affect_another():
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def other():
        with opd.no_grad():
            seen["other"] = opd.is_grad_enabled()
            entered.set()
            release.wait(TIMEOUT)

    worker = threading.Thread(target=other, daemon=True)
    worker.start()
    try:
        assert entered.wait(TIMEOUT)
        assert seen["other"] is False
        assert opd.is_grad_enabled()
        x = opd.ones(2, requires_grad=True)
        assert (x + x).grad_fn is not None
    finally:
        release.set()
        worker.join(TIMEOUT)
    assert not worker.is_alive()


def mapped(path):
    with open("/proc/self/maps") as f:
        return path in f.read()


def test_an_unloaded_plugin_stays_mapped_while_python_holds_its_tensor():
    status = opd.plugins.load(good_manifest())
    library = status.library
    try:
        t = opd.ops.fixture.alloc(opd.ones(1), 4)
        assert t.tolist() == [0.0] * 4
        assert mapped(library)
    finally:
        gone = opd.plugins.unload("good")
    assert gone.state == "unloading"
    assert "stays mapped until 1 object(s) it made" in gone.reason
    assert mapped(library)
    t.add_(2)  # its memory is still valid and writable
    assert t.tolist() == [2.0] * 4
    view = t.numpy()
    del t
    gc.collect()
    assert mapped(library)  # the numpy view keeps the storage
    assert view.tolist() == [2.0] * 4
    del view
    gc.collect()
    assert opd.plugins.status("good").state == "unloaded"
    assert not mapped(library)


def test_calling_an_operator_while_another_thread_closes_its_library(python):
    # In a subprocess: a use of a freed operator entry would take the whole suite down.
    proc = python("""
        import threading, time
        import opdispatch as opd
        from opdispatch.library import Library
        x = opd.ones(1)
        stop = threading.Event()
        allowed = ("opdispatch: operator thrrace::f is not defined (any more)",
                   "operator thrrace::f is not defined (any more)",
                   "Could not run 'thrrace::f'", "object has no attribute 'f'",
                   "The underlying op of 'thrrace.f' has no overload name 'default'",
                   "thrrace::f: the operator's definition was removed while a call was on its "
                   "way to its Python kernel")
        unexpected = []

        def caller(use_packet):
            while not stop.is_set():
                try:
                    packet = opd.ops.thrrace.f
                    (packet if use_packet else packet.default)(x)
                except Exception as e:
                    if not any(a in str(e) for a in allowed):
                        unexpected.append(f"{type(e).__name__}: {e}")

        threads = [threading.Thread(target=caller, args=(i % 2 == 0,)) for i in range(4)]
        for t in threads:
            t.start()
        deadline = time.time() + 3
        while time.time() < deadline:
            with Library("thrrace", "DEF") as lib:
                lib.define("f(Tensor x) -> Tensor")
                lib.impl("f", lambda t: t, "CPU")
        stop.set()
        for t in threads:
            t.join(30)
        print("unexpected:", sorted(set(unexpected)))
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == "unexpected: []\n"


def test_interpreter_exit_while_cpp_threads_call_a_python_kernel_is_clean(python):
    # The operator stays defined (by a plugin, not unloaded at exit); its Python CPU kernel is
    # running on two C++ threads when the interpreter exits.
    proc = python(f"""
        import threading, time
        import opdispatch as opd
        from opdispatch.library import Library
        opd.plugins.load({good_manifest()!r})
        lib = Library("fixture", "IMPL", "CPU")
        started = threading.Event()

        def kernel(x):
            started.set()
            time.sleep(0.001)
            return 7

        lib.impl("value", kernel)
        opd._C._test_start_threads("fixture::value", [opd.ones(1)], 2, 5000)
        assert started.wait(30)
        time.sleep(0.1)
        print("exiting")
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == "exiting\n"
    assert "Traceback" not in proc.stderr
    assert "Fatal" not in proc.stderr
