"""Two vendor devices in one process (issue 33 §4b; Note [Vendor slots] in opd/privateuse.h), with
the installed package: acme_device.cpp built twice, plugin acme_device (device "acme") and
plugin acme_device2 (device "acmetwo"), each claiming a free vendor slot at load. Tensors move
between them through the CPU with their values and each device's allocation counters; the
devices unload in either order, a device's name stays while its tensors live; a claim of a taken
name is a PluginError naming the holder; one device loads and unloads while threads compute on
the other. Run by run.sh with OPD_PLUGIN_PATH at the devices' build. Prints one line; exit 0 when
every check passes."""

import gc
import threading
import time

import opdispatch as opd
from opdispatch import utils


def counters(plugin):
    ns = getattr(opd.ops, plugin)
    return ns.allocations(), ns.live_blocks()


def load(plugin):
    status = opd.plugins.load(plugin)
    assert status.state == "loaded", status.reason


def unload_and_wait(plugin):
    opd.plugins.unload(plugin)
    wait_unloaded(plugin)


def wait_unloaded(plugin):
    """Until the plugin's library has closed: its tensors and kernels are gone."""
    gc.collect()
    deadline = time.monotonic() + 10
    while opd.plugins.status(plugin).state != "unloaded":
        assert time.monotonic() < deadline, opd.plugins.status(plugin)
        time.sleep(0.01)


def raises(exc, text, fn):
    try:
        fn()
    except exc as e:
        assert text in str(e), str(e)
        return
    raise AssertionError(f"expected {exc}: {text}")


def holder(slot):
    return opd._C._privateuse_slot_holder(slot)


def two_devices_at_once():
    load("acme_device")
    load("acme_device2")
    assert holder(1) == "plugin 'acme_device'" and holder(2) == "plugin 'acme_device2'"
    assert opd.device("acmetwo:1").type == "acmetwo"
    utils.generate_methods_for_privateuse_backend("acme")
    utils.generate_methods_for_privateuse_backend(2)  # the slot's number: its name, acmetwo
    x = opd.arange(6.).reshape(2, 3)
    acme0, two0 = counters("acme_device"), counters("acme_device2")
    a = x.acme()
    b = a.cpu().to("acmetwo")
    back = (b * 2).cpu().acme()
    assert a.is_acme and b.is_acmetwo and not b.is_acme and str(b.device) == "acmetwo:0"
    assert opd.equal(back.cpu(), x * 2) and opd.equal(b.cpu(), x)
    acme1, two1 = counters("acme_device"), counters("acme_device2")
    # acme: a and back, live; acmetwo: b, live, and b * 2, gone.
    assert (acme1[0] - acme0[0], acme1[1] - acme0[1]) == (2, 2), (acme0, acme1)
    assert (two1[0] - two0[0], two1[1] - two0[1]) == (2, 1), (two0, two1)
    # Each device reads its own memory or the CPU's: no direct move.
    raises(RuntimeError, "acmetwo: expected an acmetwo or CPU tensor, got acme:0",
           lambda: a.to("acmetwo"))
    # A third claim of a taken name.
    raises(opd.PluginError, "the process cannot claim the vendor backend name 'acme': plugin "
           "'acme_device' holds it on PrivateUse1", lambda: utils.rename_privateuse_backend("acme"))
    return [a, b, back]


def names_stay_while_tensors_live(tensors):
    a, b, back = tensors
    tensors.clear()  # the only references left are these names
    opd.plugins.unload("acme_device")
    assert str(a.device) == "acme:0" and opd.device("acme").type == "acme"
    assert holder(1) == "plugin 'acme_device'"
    # (Its kernels are gone with the plugin: a cannot compute, only be kept or dropped.)
    del a, back
    wait_unloaded("acme_device")
    assert holder(1) == "" and opd._C._get_privateuse_backend_name(1) == "privateuseone"
    raises(ValueError, "device type at start of device string: acme", lambda: opd.device("acme"))
    assert b.is_acmetwo  # the other device is untouched
    del b
    unload_and_wait("acme_device2")
    assert holder(2) == ""


def the_other_order():
    load("acme_device2")
    load("acme_device")
    # Slots are whichever was free: one binary serves any.
    assert holder(1) == "plugin 'acme_device2'" and holder(2) == "plugin 'acme_device'"
    assert opd.equal((opd.ones(3).to("acmetwo") + 1).cpu(), opd.full((3,), 2.))
    unload_and_wait("acme_device2")
    assert opd.equal((opd.ones(3).acme() * 3).cpu(), opd.full((3,), 3.))
    unload_and_wait("acme_device")
    assert holder(1) == "" and holder(2) == ""


def one_loads_while_the_other_computes():
    load("acme_device")
    x = opd.arange(6.).reshape(2, 3)
    done = threading.Event()
    wrong = []

    def compute():
        while not done.is_set():
            a = x.to("acme")
            if not opd.equal((a * a + a).cpu(), x * x + x):
                wrong.append(1)

    threads = [threading.Thread(target=compute) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(10):
            load("acme_device2")
            assert opd.equal((opd.ones(2).to("acmetwo") * 2).cpu(), opd.full((2,), 2.))
            opd.plugins.unload("acme_device2")
    finally:
        done.set()
        for t in threads:
            t.join()
    assert not wrong
    wait_unloaded("acme_device2")
    unload_and_wait("acme_device")


def main():
    start = time.monotonic()
    names_stay_while_tensors_live(two_devices_at_once())
    the_other_order()
    one_loads_while_the_other_computes()
    print(f"two vendor devices: acme and acmetwo at once, both unload orders, "
          f"{time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
