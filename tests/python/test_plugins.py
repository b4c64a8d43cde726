"""opdispatch.plugins: the C++ plugin manager's calls, statuses and errors."""

import os

import pytest

import opdispatch
from opdispatch import PluginError, plugins


def test_list_has_the_default_plugins_with_their_fields():
    by_name = {s.name: s for s in plugins.list()}
    cpu = by_name["cpu"]
    assert cpu.state == "loaded"
    assert cpu.version == "0.1.0"
    assert "CPU" in cpu.dispatch_keys
    assert "CPU" in cpu.served_keys
    assert cpu.load_default is True
    assert cpu.registrations > 0
    assert os.path.isabs(cpu.manifest) and cpu.manifest.endswith("cpu.yaml")
    assert os.path.isabs(cpu.library) and cpu.library.endswith("libopd_cpu.so")
    assert repr(cpu) == "PluginStatus(name='cpu', version='0.1.0', state='loaded')"
    assert [s.name for s in plugins.list()] == sorted(by_name)


def test_an_unknown_plugin_is_a_plugin_error_with_the_managers_text():
    with pytest.raises(PluginError, match="^no plugin named 'nope' is known$"):
        plugins.status("nope")
    assert issubclass(PluginError, RuntimeError)


def registered(op):
    return op in opdispatch._C._dispatch_get_registrations_for_dispatch_key()


def test_unload_load_and_reload_the_example_plugin():
    # A default plugin: loaded by the import.
    assert plugins.status("example").state == "loaded"
    assert "example::scale" in opdispatch._C._dispatch_get_registrations_for_dispatch_key("CPU")
    gone = plugins.unload("example")
    assert gone.state in ("unloading", "unloaded")
    assert not registered("example::scale")
    loaded = plugins.load("example")
    assert loaded.state == "loaded"
    assert loaded.registrations > 0
    assert registered("example::scale")
    assert plugins.reload("example").state == "loaded"
    assert registered("example::scale")


def test_unloading_or_loading_an_unknown_plugin_names_it():
    with pytest.raises(PluginError, match="nope"):
        plugins.unload("nope")
    with pytest.raises(PluginError, match="nope"):
        plugins.load("nope")


def test_search_path_starts_with_the_build_trees_plugins():
    path = plugins.search_path()
    assert all(isinstance(p, str) for p in path)
    assert path[0].endswith("plugins")
