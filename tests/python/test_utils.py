"""opdispatch.utils, as torch.utils.backend_registration: rename_privateuse1_backend and
generate_methods_for_privateuse1_backend on the fixture device "acme"
(tests/vendor_device/acme_device.cpp, a PrivateUse1 backend that names itself at load), with
torch 2.x's error types and texts; naming the slot from Python in a fresh process."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

import opdispatch as opd
from opdispatch import utils


@pytest.fixture(scope="module", autouse=True)
def acme():
    manifest = os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "acme_device", "acme_device.yaml")
    status = opd.plugins.load(manifest)
    assert status.state == "loaded", status.reason
    utils.generate_methods_for_privateuse1_backend()
    yield
    del opd.Tensor.acme, opd.Tensor.is_acme
    opd.plugins.unload("acme_device")


def test_the_plugin_named_the_slot_and_renaming_it_again_is_refused():
    assert opd.device("privateuseone:0").type == "acme"
    utils.rename_privateuse1_backend("acme")  # the same name: nothing to do
    with pytest.raises(RuntimeError, match=re.escape(
            "opdispatch.utils.rename_privateuse1_backend() has already been set! Current "
            "backend: acme")):
        utils.rename_privateuse1_backend("npu")
    with pytest.raises(TypeError, match="must be str, not int"):
        utils.rename_privateuse1_backend(1)


def test_tensor_methods_move_to_acme_and_tell_where_a_tensor_is():
    x = opd.tensor([[1., 2.], [3., 4.]])
    a = x.acme()
    assert a.device == opd.device("acme:0") and str(a.device) == "acme:0"
    assert a.is_acme and not x.is_acme
    assert opd.equal(a.cpu(), x)
    # Already there: the tensor itself, whichever way the device is named.
    assert a.acme() is a and a.acme(0) is a and a.acme("acme:0") is a
    assert a.acme(opd.device("acme")) is a
    assert x.to("acme").is_acme
    with pytest.raises(RuntimeError, match="^Invalid device, must be acme device$"):
        x.acme("cpu")


def test_generating_a_method_that_exists_is_refused():
    with pytest.raises(RuntimeError, match=re.escape(
            f"The custom device module of {opd.Tensor} has already been registered with "
            "is_acme")):
        utils.generate_methods_for_privateuse1_backend()


class _Module:
    """torch.nn.Module's contract as generate_methods uses it: _apply(fn) maps the tensors."""

    def __init__(self):
        self.weight = opd.ones(2, 2)

    def _apply(self, fn):
        self.weight = fn(self.weight)
        return self


def test_module_methods_move_every_tensor(monkeypatch):
    monkeypatch.setattr(opd.nn, "Module", _Module, raising=False)
    utils.generate_methods_for_privateuse1_backend(for_tensor=False)
    m = _Module()
    assert m.acme() is m and m.weight.is_acme
    with pytest.raises(RuntimeError, match="has already been registered with acme"):
        utils.generate_methods_for_privateuse1_backend(for_tensor=False)
    # The module method moves tensors with the Tensor one: without it there is none to make.
    monkeypatch.delattr(_Module, "acme")
    monkeypatch.delattr(opd.Tensor, "acme")
    with pytest.raises(RuntimeError, match=re.escape(
            "Can not automatically generate acme() method for opdispatch.nn.Module.Because "
            "opdispatch.Tensor doesn't has the method acme().For this error, you can try "
            "setting for_tensor=True.")):
        utils.generate_methods_for_privateuse1_backend(for_tensor=False)


def test_module_methods_need_the_tensor_method_even_without_a_module_class(monkeypatch):
    # As torch: for_module without the Tensor method is refused, Module class or not.
    monkeypatch.delattr(opd.nn, "Module", raising=False)
    monkeypatch.delattr(opd.Tensor, "acme")
    with pytest.raises(RuntimeError, match="^Can not automatically generate acme\\(\\) method"):
        utils.generate_methods_for_privateuse1_backend(for_tensor=False)
    utils.generate_methods_for_privateuse1_backend(for_tensor=False, for_module=False)


def test_storage_methods_are_refused():
    with pytest.raises(NotImplementedError, match="opdispatch has no Storage classes"):
        utils.generate_methods_for_privateuse1_backend(for_tensor=False, for_storage=True)


def test_naming_the_slot_from_python_in_a_fresh_process():
    program = textwrap.dedent("""
        import opdispatch as opd
        from opdispatch import utils
        # Before a name, as torch: the methods carry the slot's own name.
        utils.generate_methods_for_privateuse1_backend()
        assert hasattr(opd.Tensor, "privateuseone") and not opd.ones(1).is_privateuseone
        for bad in ("cpu", ""):
            try:
                utils.rename_privateuse1_backend(bad)
            except RuntimeError as e:
                print(e)
        utils.rename_privateuse1_backend("npu")
        utils.rename_privateuse1_backend("npu")
        print(opd.device("npu:1"), opd.device("privateuseone").type)
        try:
            utils.rename_privateuse1_backend("xpu")
        except RuntimeError as e:
            print(e)
        utils.generate_methods_for_privateuse1_backend()
        print(opd.ones(1).is_npu)
    """)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Cannot register privateuse1 backend with in-tree device name: cpu",
        "Cannot register privateuse1 backend with an empty name",
        "npu:1 npu",
        "opdispatch.utils.rename_privateuse1_backend() has already been set! Current backend: npu",
        "False",
    ]


def test_a_device_without_index_is_the_current_acme_device():
    # acme has two devices and a device guard (opd/device_guard.h); the fixture's operators read
    # and set the thread's current one through it.
    cur = opd.ops.acme_device.current_device
    set_device = opd.ops.acme_device.set_device
    assert cur() == 0
    x = opd.tensor([1., 2.])
    a = x.to("acme")
    assert a.device == opd.device("acme:0") and a.to("acme") is a
    set_device(1)
    try:
        assert cur() == 1
        assert opd._C._ensure_has_index(opd.device("acme")) == opd.device("acme:1")
        b = x.to("acme")
        assert b.device == opd.device("acme:1") and b.to("acme") is b
        assert a.to("acme") is not a and a.to("acme").device == opd.device("acme:1")
        assert x.acme().device == opd.device("acme:1") and b.acme() is b
        assert opd.ones(2, device="acme").device == opd.device("acme:1")
        assert a.to("acme:0") is a
    finally:
        set_device(0)
    with pytest.raises(IndexError, match=re.escape(
            "acme: device index 2 is out of range: there are 2 acme devices")):
        set_device(2)
    assert cur() == 0
    # The CPU and Meta have no guard: an index-less device stays so.
    assert opd._C._ensure_has_index(opd.device("cpu")) == opd.device("cpu")
    assert opd._C._ensure_has_index(opd.device("meta")).index is None


# The vendor slots (Note [Vendor slots] in opd/privateuse.h): acme_device.cpp built again as the
# plugin acme_device2, device "acmetwo", which claims the next free slot.
def test_a_second_device_on_another_slot_has_the_same_methods():
    manifest = os.path.join(os.environ["OPD_TEST_PLUGIN_DIR"], "acme_device2", "acme_device2.yaml")
    assert opd.plugins.load(manifest).state == "loaded"
    try:
        assert opd._C._get_privateuse_backend_name(2) == "acmetwo"
        assert opd._C._privateuse_slot_holder(2) == "plugin 'acme_device2'"
        utils.generate_methods_for_privateuse_backend(2)
        x = opd.arange(4.)
        b = x.acme().cpu().acmetwo(1)
        assert str(b.device) == "acmetwo:1" and b.is_acmetwo and not b.is_acme
        assert opd.equal(b.cpu(), x) and opd.device("acmetwo").type == "acmetwo"
        with pytest.raises(RuntimeError, match="^Invalid device, must be acmetwo device$"):
            x.acmetwo("acme")
        with pytest.raises(RuntimeError, match="has already been registered with is_acmetwo$"):
            utils.generate_methods_for_privateuse_backend("acmetwo", for_module=False)
        with pytest.raises(RuntimeError, match="^'cuda' is not the name of a vendor backend$"):
            utils.generate_methods_for_privateuse_backend("cuda")
        with pytest.raises(ValueError, match="^vendor slot 4 does not exist"):
            utils.generate_methods_for_privateuse_backend(4)
        # The name is the plugin's: the process cannot take it.
        with pytest.raises(opd.PluginError, match=re.escape(
                "register_privateuse_backend: the process cannot claim the vendor backend name "
                "'acmetwo': plugin 'acme_device2' holds it on PrivateUse2")):
            utils.rename_privateuse_backend("acmetwo")
        del b
    finally:
        del opd.Tensor.acmetwo, opd.Tensor.is_acmetwo
        opd.plugins.unload("acme_device2")


def test_claiming_slots_from_python_in_a_fresh_process():
    program = textwrap.dedent("""
        import opdispatch as opd
        from opdispatch import utils
        print(utils.rename_privateuse_backend("npu"), utils.rename_privateuse_backend("npu"))
        print(utils.rename_privateuse_backend("xpu", slot=3), opd.device("xpu:1"))
        for bad in ("npu2", "meta"):
            try:
                utils.rename_privateuse_backend(bad)
            except ValueError as e:
                print(type(e).__name__, e)
        for call in (lambda: utils.rename_privateuse_backend("hpu", slot=1),
                     lambda: utils.rename_privateuse_backend("npu", slot=2)):
            try:
                call()
            except opd.PluginError as e:
                print(e)
        print(utils.rename_privateuse_backend("hpu"))
        try:
            utils.rename_privateuse_backend("ipu")
        except opd.PluginError as e:
            print(e)
        utils.generate_methods_for_privateuse_backend(3)
        print(opd.ones(1).is_xpu, opd._C._get_privateuse1_backend_name())
    """)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "1 1",
        "3 xpu:1",
        "ValueError register_privateuse_backend: 'npu2' cannot name a device: a device's name is "
        "letters and underscores ('npu2:0' must be a device string)",
        "ValueError register_privateuse_backend: 'meta' is a built-in device (built-in devices: "
        "cpu, cuda, meta)",
        "register_privateuse_backend: the process cannot claim PrivateUse1 as 'hpu': the process "
        "holds it as 'npu'",
        "register_privateuse_backend: the process claims 'npu' on PrivateUse2, but the name is "
        "PrivateUse1's (held by the process)",
        "2",
        "register_privateuse_backend: no free vendor slot for 'ipu' (the process): PrivateUse1 is "
        "'npu', held by the process; PrivateUse2 is 'hpu', held by the process; PrivateUse3 is "
        "'xpu', held by the process",
        "False npu",
    ]
