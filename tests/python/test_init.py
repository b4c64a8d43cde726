"""import opdispatch: the default plugins are loaded, a failed one is a RuntimeWarning naming it,
an unavailable one is silent, and OPDISPATCH_NO_DEFAULT_PLUGINS=1 loads none."""

import os
import stat


DEFAULT_PLUGINS = ["autograd", "composite", "cpu", "example", "meta"]


def test_import_loads_the_default_plugins_without_a_warning(python):
    # -W error: a warning at import would fail the import.
    r = python(
        """
        import warnings
        warnings.simplefilter("error")
        import opdispatch
        for s in opdispatch.plugins.list():
            print(s.name, s.state)
        """
    )
    assert r.returncode == 0, r.stderr
    states = dict(line.split() for line in r.stdout.splitlines())
    for name in DEFAULT_PLUGINS:
        assert states[name] == "loaded", (name, r.stdout)
    # Without a GPU the cuda plugin (where it is built) reports itself unavailable, silently.
    assert states.get("cuda", "unavailable") in ("loaded", "unavailable")


def test_no_default_plugins_loads_none(python):
    r = python(
        """
        import opdispatch
        print(opdispatch.plugins.status("cpu").state)
        print(opdispatch._C._dispatch_get_registrations_for_dispatch_key("CPU"))
        """,
        env={"OPDISPATCH_NO_DEFAULT_PLUGINS": "1"},
    )
    assert r.returncode == 0, r.stderr
    state, cpu_registrations = r.stdout.splitlines()
    assert state == "available"
    assert cpu_registrations == "[]"


def test_a_default_plugin_that_fails_is_a_runtime_warning_naming_it(python, tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    os.chmod(tmp_path, stat.S_IRWXU)
    os.chmod(folder, stat.S_IRWXU)
    manifest = folder / "broken.yaml"
    manifest.write_text(
        "plugin: broken\n"
        "version: 0.1.0\n"
        "abi: 4\n"
        "library: libopd_broken.so\n"
        "dispatch_keys: [CPU]\n"
        "load: default\n"
    )
    os.chmod(manifest, stat.S_IRUSR | stat.S_IWUSR)
    # Found and safe, but not a shared object: the load fails (a missing library would be
    # skipped when the search path is scanned, before any load).
    library = folder / "libopd_broken.so"
    library.write_text("not an ELF file\n")
    os.chmod(library, stat.S_IRUSR | stat.S_IWUSR)
    r = python(
        """
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import opdispatch
        for w in caught:
            print(w.category.__name__, "|", w.message)
        print("cpu", opdispatch.plugins.status("cpu").state)
        """,
        env={"OPD_PLUGIN_PATH": str(folder)},
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    warnings = [line for line in lines if line.startswith("RuntimeWarning |")]
    assert len(warnings) == 1, lines
    assert "opdispatch: the default plugin 'broken' failed to load: " in warnings[0]
    assert "libopd_broken.so: cannot be loaded as a shared object" in warnings[0]
    assert "cpu loaded" in lines, "the other default plugins still load"


def test_import_after_torch_finds_room_for_the_cores_thread_locals(python):
    # libopd_core.so is dlopened here, so its initial-exec TLS comes from glibc's static TLS
    # surplus, which torch's libgomp shares (Note [Thread state of plugins]).
    r = python(
        """
        import torch
        import opdispatch
        print(opdispatch.plugins.status("cpu").state)
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["loaded"]


def test_func_and_fx_come_with_the_package_as_torchs(python):
    # torch.func and torch.fx need no import of their own; neither loads a plugin until used.
    r = python(
        """
        import opdispatch
        assert callable(opdispatch.func.functionalize)
        print(opdispatch.fx.GraphModule.__name__)
        print(opdispatch._C._dispatch_has_backend_fallback("Functionalize"))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["GraphModule", "False"]
