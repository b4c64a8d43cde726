"""Sharing memory with numpy 1.24 and torch 1.13 (issue 14, sections 2 and 7): Tensor.numpy(),
from_numpy, __dlpack__/__dlpack_device__ and from_dlpack, zero-copy both ways for every dtype
both sides support, strided views, the refusals (in PyTorch's words, never a crash), and the
lifetime of exported memory, down to the plugin that allocated it being unmapped."""

import gc
import sys

import numpy as np
import pytest
import torch

import opdispatch as opd

NUMPY_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                "float64", "complex64", "complex128"]
# DLPack 0.6 has no bool; numpy has no bfloat16.
DLPACK_NUMPY_DTYPES = [d for d in NUMPY_DTYPES if d != "bool"]
DLPACK_TORCH_DTYPES = DLPACK_NUMPY_DTYPES + ["bfloat16"]


def sample(lib, dtype, shape=(2, 3)):
    """A tensor of ``lib`` (opd or torch) holding 0, 1, 0, 1, ... of ``dtype``."""
    t = lib.zeros(*shape, dtype=getattr(lib, dtype))
    flat = t.reshape([-1])
    for k in range(1, flat.numel(), 2):
        flat[k] = 1
    return t


def one_of(dtype):
    return True if dtype == "bool" else 1


def read(t):
    """t's values as Python numbers. Complex tensors are read through numpy (Tensor.tolist of
    complex is test_tensor's), every other dtype through opdispatch's own tolist."""
    return t.numpy().tolist() if t.is_complex() else t.tolist()


# --- numpy: Tensor.numpy() and from_numpy ---------------------------------------------------

@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_is_a_writable_zero_copy_view(dtype):
    t = sample(opd, dtype)
    a = t.numpy()
    assert a.dtype == np.dtype(dtype) and a.shape == (2, 3)
    assert a.ctypes.data == t.data_ptr() and a.flags.writeable
    assert a.strides == tuple(s * t.element_size() for s in t.stride())
    assert a.tolist() == read(t)
    a[0, 0] = one_of(dtype)
    assert read(t[0, 0]) == one_of(dtype)
    t[1, 2] = 0
    assert a[1, 2] == 0


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_from_numpy_is_a_zero_copy_view(dtype):
    n = np.zeros((2, 3), dtype=dtype)
    t = opd.from_numpy(n)
    assert repr(t.dtype) == f"opdispatch.{dtype}" and t.shape == (2, 3)
    assert t.data_ptr() == n.ctypes.data and t.stride() == (3, 1)
    t[0, 1] = one_of(dtype)
    assert n[0, 1] == one_of(dtype)
    n[1, 0] = one_of(dtype)
    assert read(t[1, 0]) == one_of(dtype)


def test_bfloat16_has_no_numpy_type_in_torchs_words():
    with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
        opd.zeros(2, dtype=opd.bfloat16).numpy()


def test_from_numpy_refuses_an_unsupported_dtype_in_torchs_words():
    with pytest.raises(TypeError, match=r"^can't convert np.ndarray of type numpy.uint16. The "
                                        r"only supported types are: float64, float32, float16, "
                                        r"complex64, complex128, int64, int32, int16, int8, "
                                        r"uint8, and bool.$"):
        opd.from_numpy(np.zeros(2, dtype=np.uint16))


def test_from_numpy_holds_the_array_until_the_last_view_goes():
    n = np.zeros(3)
    base = sys.getrefcount(n)
    t = opd.from_numpy(n)
    assert sys.getrefcount(n) == base + 1
    view = t[1:]
    del t
    gc.collect()
    assert sys.getrefcount(n) == base + 1
    view[0] = 4
    assert n[1] == 4
    del view
    gc.collect()
    assert sys.getrefcount(n) == base


def test_from_numpy_of_a_read_only_array_warns_as_torch():
    n = np.zeros(3)
    n.flags.writeable = False
    with pytest.warns(UserWarning, match="^The given NumPy array is not writable, and PyTorch "
                                         "does not support non-writable tensors."):
        opd.from_numpy(n)


def test_as_tensor_of_an_array_shares_its_memory():
    n = np.arange(3.0)
    t = opd.as_tensor(n)
    n[0] = 9
    assert t.tolist() == [9.0, 1.0, 2.0] and t.dtype is opd.float64
    assert opd.tensor(n).data_ptr() != n.ctypes.data


# --- DLPack ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DLPACK_NUMPY_DTYPES)
def test_numpy_from_dlpack_of_a_tensor_shares_memory(dtype):
    t = sample(opd, dtype)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.ctypes.data == t.data_ptr()
    assert a.tolist() == read(t)
    t[0, 0] = 1
    assert a[0, 0] == 1


@pytest.mark.parametrize("dtype", DLPACK_NUMPY_DTYPES)
def test_from_dlpack_of_a_numpy_array_shares_memory(dtype):
    n = np.zeros((2, 3), dtype=dtype)
    t = opd.from_dlpack(n)
    assert repr(t.dtype) == f"opdispatch.{dtype}" and t.data_ptr() == n.ctypes.data
    assert t.shape == (2, 3) and t.stride() == (3, 1)
    n[1, 1] = 1
    assert read(t[1, 1]) == 1
    t[0, 2] = 1
    assert n[0, 2] == 1


@pytest.mark.parametrize("dtype", DLPACK_TORCH_DTYPES)
def test_torch_from_dlpack_of_a_tensor_shares_memory(dtype):
    t = sample(opd, dtype)
    tt = torch.from_dlpack(t)
    assert tt.dtype is getattr(torch, dtype) and tt.data_ptr() == t.data_ptr()
    assert tt.stride() == t.stride() and tt.tolist() == read(t)
    tt[0, 0] = 1
    assert read(t[0, 0]) == 1
    t[1, 1] = 0
    assert tt[1, 1].item() == 0


@pytest.mark.parametrize("dtype", DLPACK_TORCH_DTYPES)
def test_from_dlpack_of_a_torch_tensor_shares_memory(dtype):
    tt = sample(torch, dtype)
    t = opd.from_dlpack(tt)
    assert repr(t.dtype) == f"opdispatch.{dtype}" and t.data_ptr() == tt.data_ptr()
    assert read(t) == tt.tolist()
    t[0, 0] = 1
    assert tt[0, 0].item() == 1
    tt[1, 1] = 0
    assert read(t[1, 1]) == 0
    del tt
    gc.collect()
    assert read(t[0, 0]) == 1  # the tensor keeps torch's storage


def test_from_dlpack_takes_a_capsule_and_round_trips():
    tt = torch.arange(4.0)
    t = opd.from_dlpack(tt.__dlpack__())
    assert t.data_ptr() == tt.data_ptr()
    back = torch.from_dlpack(t)
    assert back.data_ptr() == tt.data_ptr()
    again = opd.from_dlpack(torch.utils.dlpack.from_dlpack(t.__dlpack__()))
    assert again.data_ptr() == tt.data_ptr() and again.tolist() == [0.0, 1.0, 2.0, 3.0]


# --- strided views --------------------------------------------------------------------------

VIEWS = ["x.T", "x[:, 1:3]", "x[::2, ::3]", "x[1]", "x[:, 2]"]


@pytest.mark.parametrize("view", VIEWS)
def test_strided_tensor_views_export_with_their_strides(view):
    v = eval(view, {"x": opd.arange(12.0).reshape([3, 4])})
    byte_strides = tuple(s * 4 for s in v.stride())
    a = v.numpy()
    n = np.from_dlpack(v)
    tt = torch.from_dlpack(v)
    assert a.strides == byte_strides and n.strides == byte_strides
    assert tt.stride() == v.stride()
    assert a.ctypes.data == n.ctypes.data == tt.data_ptr() == v.data_ptr()
    assert a.tolist() == n.tolist() == tt.tolist() == v.tolist()
    back = opd.from_dlpack(tt)
    assert back.stride() == v.stride() and back.data_ptr() == v.data_ptr()


@pytest.mark.parametrize("view", VIEWS)
def test_strided_peer_views_import_with_their_strides(view):
    n = eval(view, {"x": np.arange(12.0).reshape(3, 4)})
    tt = eval(view, {"x": torch.arange(12.0).reshape(3, 4)})
    elements = tuple(s // 8 for s in n.strides)
    for t, ptr, values in [(opd.from_numpy(n), n.ctypes.data, n.tolist()),
                           (opd.from_dlpack(n), n.ctypes.data, n.tolist()),
                           (opd.from_dlpack(tt), tt.data_ptr(), tt.tolist())]:
        assert t.stride() == elements and t.data_ptr() == ptr and t.tolist() == values


# --- refusals -------------------------------------------------------------------------------

def test_bool_is_refused_over_dlpack_both_ways():
    with pytest.raises(BufferError, match="^Bool type is not supported by DLPack 0.6; use "
                                          r"Tensor.numpy\(\) instead$"):
        opd.tensor([True]).__dlpack__()
    with pytest.raises(BufferError, match="Bool type is not supported"):
        torch.from_dlpack(opd.tensor([True]))
    with pytest.raises(BufferError, match="^DLPack only supports signed/unsigned integers, float "
                                          "and complex dtypes.$"):
        opd.from_dlpack(np.array([True]))
    with pytest.raises(RuntimeError, match="^Bool type is not supported by dlpack$"):
        opd.from_dlpack(torch.tensor([True]))


@pytest.mark.parametrize("stream", ["a", 1.0])
def test_a_dlpack_stream_that_is_not_an_int_is_torchs_type_error(stream):
    for x in (opd.ones(2), torch.ones(2)):
        with pytest.raises(TypeError, match="^stream must be ``int`` or ``none``$"):
            x.__dlpack__(stream=stream)
    assert opd.from_dlpack(opd.ones(2).__dlpack__(stream=-1)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("array", ["np.arange(4.)[::-1]", "np.arange(6.).reshape(2, 3)[:, ::-1]"])
def test_negative_strides_are_refused(array):
    a = eval(array)
    with pytest.raises(ValueError, match=r"^At least one stride in the given numpy array is "
                                         r"negative, and tensors with negative strides are not "
                                         r"currently supported. \(You can probably work around "
                                         r"this by making a copy of your array  with "
                                         r"array.copy\(\).\) $"):
        opd.from_numpy(a)
    with pytest.raises(ValueError, match="^from_dlpack: tensors with negative strides are not "
                                         r"supported \(strides -?\d+(, -?\d+)*\)$"):
        opd.from_dlpack(a)
    assert opd.from_numpy(a.copy()).tolist() == a.tolist()


def test_meta_tensors_are_refused():
    m = opd.zeros(2, device="meta")
    with pytest.raises(TypeError, match=r"^can't convert meta device type tensor to numpy\."):
        m.numpy()
    with pytest.raises(BufferError, match="^Can't export meta tensors over DLPack: they have no "
                                          "memory$"):
        m.__dlpack__()
    with pytest.raises(BufferError, match="^Can't export meta tensors over DLPack"):
        torch.from_dlpack(m)


def test_tensors_that_require_grad_are_refused_in_torchs_words():
    g = opd.tensor([1.0, 2.0], requires_grad=True)
    numpy_text = (r"^Can't call numpy\(\) on Tensor that requires grad. Use "
                  r"tensor.detach\(\).numpy\(\) instead.$")
    dlpack_text = r"^Can't export tensors that require gradient, use tensor.detach\(\)$"
    for f, text in [(g.numpy, numpy_text), (lambda: np.asarray(g), numpy_text),
                    (g.__dlpack__, dlpack_text), (lambda: torch.from_dlpack(g), dlpack_text),
                    (lambda: np.from_dlpack(g), dlpack_text)]:
        with pytest.raises(RuntimeError, match=text):
            f()
    assert g.detach().numpy().tolist() == [1.0, 2.0]
    assert g.numpy(force=True).tolist() == [1.0, 2.0]
    assert torch.from_dlpack(g.detach()).data_ptr() == g.data_ptr()


def test_a_capsule_is_consumed_once():
    text = (r"^from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
            r"consumed only once, so you might have already constructed a tensor from it once.$")
    ours = opd.ones(2).__dlpack__()
    first = opd.from_dlpack(ours)
    with pytest.raises(RuntimeError, match=text):
        opd.from_dlpack(ours)
    theirs = torch.ones(2).__dlpack__()
    torch.from_dlpack(theirs)
    with pytest.raises(RuntimeError, match=text):
        opd.from_dlpack(theirs)
    assert first.tolist() == [1.0, 1.0]


def test_from_dlpack_of_something_else_is_a_type_error():
    with pytest.raises(TypeError, match="^from_dlpack: expected an object with __dlpack__ or a "
                                        "DLPack capsule, got list$"):
        opd.from_dlpack([1.0])


# --- resizing: storages that are not resizable (issue 29) ----------------------------------

# Every way memory leaves a tensor: torch refuses resize_ after the numpy ones; after a DLPack
# export torch 1.13 lets resize_ free the memory the consumer still reads, so we refuse it too.
EXPORTS = {
    "numpy": (lambda t: t.numpy(), True),
    "numpy(force=True)": (lambda t: t.numpy(force=True), True),
    "np.asarray": (np.asarray, True),
    "__dlpack__": (lambda t: t.__dlpack__(), False),
    "np.from_dlpack": (np.from_dlpack, False),
    "torch.from_dlpack": (torch.from_dlpack, False),
    "opd.from_dlpack": (opd.from_dlpack, False),
    "numpy of a view": (lambda t: t[1:].numpy(), True),
}


@pytest.mark.parametrize("export", list(EXPORTS))
def test_resize_cannot_grow_a_tensor_whose_memory_was_exported(export):
    make, torch_refuses = EXPORTS[export]
    t = opd.tensor([1., 2, 3, 4])
    held = make(t)
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
        t.resize_(1000000)
    if type(held).__name__ == "PyCapsule":  # still unconsumed when resize_ was refused
        held = opd.from_dlpack(held)
    # Before the fix the storage was freed here, and the export read garbage.
    assert t.shape == (4,)
    assert held.tolist() == ([2., 3., 4.] if "view" in export else [1., 2., 3., 4.])
    # Shrinking and growing back within the storage keep it, as in torch; writes are shared.
    t.resize_(2)
    t.resize_(2, 2)
    t[1, 1] = 9.
    assert held.tolist()[-1] == 9.
    if torch_refuses and export != "numpy(force=True)":
        theirs = torch.tensor([1., 2, 3, 4])
        held_by_torch = make(theirs)
        with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
            theirs.resize_(1000000)
        del held_by_torch


@pytest.mark.parametrize("make", [
    "lib.from_numpy(np.arange(4.))", "lib.as_tensor(np.arange(4.))",
    "lib.from_dlpack(np.arange(4.))", "lib.from_dlpack(torch.arange(4.))",
    "lib.frombuffer(np.arange(4.))",
])
def test_resize_cannot_grow_a_tensor_over_imported_memory_as_torch(make):
    t = eval(make, {"lib": opd, "np": np, "torch": torch})
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
        t.resize_(1000)
    t.resize_(2)
    t.resize_(4)
    assert t.tolist() == [0., 1., 2., 3.]
    if "frombuffer" not in make:  # torch's frombuffer takes a dtype
        theirs = eval(make, {"lib": torch, "np": np, "torch": torch})
        with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
            theirs.resize_(1000)


def test_an_exported_empty_tensor_is_not_resized_as_an_out_tensor_as_torch():
    for lib in (opd, torch):
        o = lib.ones(3)
        out = lib.empty(0)
        held = out.numpy()
        with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
            lib.add(o, o, out=out)
        fresh = lib.empty(0)
        assert lib.add(o, o, out=fresh).tolist() == [2., 2., 2.]
        if lib is opd:
            assert out.shape == (0,) and held.shape == (0,)
    # torch 1.13 leaves its `out` with the new sizes over an empty storage (reading it crashes);
    # ours is left as it was, checked above.


def test_resize_still_grows_a_tensor_that_was_never_exported():
    t = opd.tensor([1., 2, 3, 4])
    v = t[:2]
    t.resize_(1000)
    assert t.shape == (1000,) and t[:4].tolist() == [1., 2., 3., 4.]
    assert v.tolist() == [1., 2.]
    assert t.clone().resize_(2000).shape == (2000,)


# --- lifetime -------------------------------------------------------------------------------

def test_exports_hold_the_storage_not_the_tensor():
    # Holding the tensor let resize_ free the memory under the export (issue 29); the storage
    # is what must stay, and the next test shows it does once the tensor is gone.
    t = opd.zeros(3)
    base = t._use_count()
    a, c, tt = t.numpy(), t.__dlpack__(), torch.from_dlpack(t)
    assert t._use_count() == base
    t.fill_(2)
    assert a.tolist() == tt.tolist() == opd.from_dlpack(c).tolist() == [2.0] * 3


def test_an_exported_view_keeps_the_storage_after_the_tensor_is_deleted(python):
    # 64 MiB, above glibc's largest mmap threshold: a freed buffer is unmapped, and reading it
    # faults; in a subprocess, so that a fault fails this test only.
    result = python("""
        import gc, torch, numpy as np, opdispatch as opd
        t = opd.full((1 << 24,), 3.0)
        a, tt = t.numpy(), torch.from_dlpack(t)
        del t
        gc.collect()
        opd._C._reclaim()
        junk = [opd.zeros(1 << 24) for _ in range(2)]
        a[0] = 5
        assert float(a.sum(dtype=np.float64)) == 3.0 * (1 << 24) + 2, a[:4]
        assert tt[0].item() == 5 and tt[1].item() == 3
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


def test_a_plugins_memory_keeps_it_mapped_until_the_last_python_view_goes(python):
    result = python("""
        import gc, os, numpy as np, torch, opdispatch as opd

        def mapped():
            with open("/proc/self/maps") as f:
                return "libopd_good.so" in f.read()

        def drop():
            gc.collect()
            opd._C._reclaim()
            return mapped()

        manifest = os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "good_v1", "good.yaml")
        for keep in ["numpy", "view", "torch", "numpy_dlpack", "capsule"]:
            assert opd.plugins.load(manifest).state == "loaded", keep
            assert mapped(), keep
            x = opd.ops.fixture.alloc(opd.zeros(1), 4)
            held = {"numpy": x.numpy, "view": lambda: x[1:], "torch": lambda: torch.from_dlpack(x),
                    "numpy_dlpack": lambda: np.from_dlpack(x), "capsule": x.__dlpack__}[keep]()
            del x
            status = opd.plugins.unload("good")
            assert status.state == "unloading", (keep, status)
            assert "1 object(s)" in status.reason, (keep, status.reason)
            assert drop(), keep + ": unmapped while Python holds its memory"
            if keep == "numpy":
                held[0] = 7.0
                assert held.tolist() == [7.0, 0.0, 0.0, 0.0]
            del held
            assert not drop(), keep + ": still mapped after the last view went"
            assert opd.plugins.status("good").state == "unloaded", keep
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


def test_tensors_from_numpy_over_dlpack_freed_on_cpp_threads_at_exit(python):
    # numpy's DLPack deleter takes the GIL: run on a C++ thread during finalization, it ended the
    # process ("terminate called without an active exception") before the deleter went through
    # the release queue. The drops are spread over the interpreter's exit.
    for _ in range(3):
        proc = python("""
            import numpy as np
            import opdispatch as opd
            for k in range(40):
                t = opd.from_dlpack(np.ones(4, dtype=np.float32))
                opd._C._test_start_threads("aten::add.Tensor", [t, t, 1], 1, k * 2500)
                del t
            print("exiting")
        """)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout == "exiting\n"
