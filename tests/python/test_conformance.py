"""opdispatch.conformance (`opd conformance PLUGIN`, issue 33 §2): a clean plugin passes, a wrong
kernel in a slot the run checks (a Python kernel registered over the plugin's) is a failure
with exit status 1 and a runnable snippet, an unknown plugin is bad usage (2), a PrivateUse1
device runs under the name its plugin registered, and the run needs no torch. Each run is
narrowed with --ops to keep the file within seconds."""

import json
import os
import subprocess
import sys

import pytest

import opdispatch as opd
from opdispatch import conformance
from opdispatch.testing import override_kernel

ACME = os.path.join(os.environ.get("OPD_TEST_PLUGIN_DIR", ""), "acme_device", "acme_device.yaml")


def test_the_meta_plugin_passes(capsys):
    assert conformance.main(["meta", "--ops", "^(neg|add|sum|cumsum)$"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["operator", "key", "samples", "passed", "first",
                                           "failure"]
    rows = {tuple(line.split()[:2]): line.split()[2:4] for line in out.splitlines()[1:-1]}
    for kernel in ("aten::neg", "aten::neg.out", "aten::neg_", "aten::add.Tensor",
                   "aten::sum.dim_IntList", "aten::cumsum"):
        samples, passed = rows[(kernel, "Meta")]
        assert int(samples) > 0 and samples == passed, (kernel, samples, passed)
    assert out.splitlines()[-1].startswith("meta: ") and " 0 failed" in out


def test_a_wrong_meta_kernel_fails_with_a_snippet(capsys):
    wrong_shape = lambda x: opd.empty([1], device="meta")  # noqa: E731
    with override_kernel("aten::neg", "Meta", wrong_shape):
        assert conformance.main(["meta", "--ops", "^neg$"]) == 1
        out = capsys.readouterr().out
        (row,) = [line for line in out.splitlines() if line.startswith("aten::neg ")]
        snippet = row[row.index("import opdispatch"):]
        assert "opd.neg(opd.empty_strided(" in snippet and "device='meta'" in snippet
        assert "function: neg on meta" in out and "shape [1], the CPU's is" in out
        # The snippet is a line of Python that repeats the call: it gets the wrong kernel's
        # result here, and the CPU's shape without the override.
        scope = {}
        exec(snippet.replace("; opd.neg(", "; result = opd.neg(", 1), scope)
        assert list(scope["result"].shape) == [1]
        report = conformance.run("meta", ops="^neg$")
        failure = next(r["failure"] for r in report["rows"] if r["operator"] == "aten::neg")
        with pytest.raises(AssertionError, match="shape \\[1\\], the CPU's is"):
            exec(failure["replay"], {})
    exec(snippet.replace("; opd.neg(", "; result = opd.neg(", 1), scope)
    assert list(scope["result"].shape) != [1]


def test_a_wrong_out_kernel_is_reported_on_the_out_check():
    def out_of_another_shape(self, *, out):
        return out.resize_([1])
    with override_kernel("aten::neg.out", "Meta", out_of_another_shape):
        report = conformance.run("meta", ops="^neg$")
    (row,) = [r for r in report["rows"] if r["operator"] == "aten::neg.out"]
    assert row["failure"]["check"] == "out" and row["passed"] < row["samples"]
    assert "out=" in row["failure"]["snippet"] and report["failures"] == 1


def test_json_reports_rows_and_what_no_sample_reached(capsys):
    assert conformance.main(["meta", "--ops", "^neg$", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["plugin"] == "meta" and report["served_keys"] == ["Meta"]
    row = next(r for r in report["rows"] if r["operator"] == "aten::neg")
    assert row["key"] == "Meta" and row["samples"] == row["passed"] > 0
    assert row["failure"] is None
    assert "aten::mm Meta" in report["uncovered"]  # served, not in a --ops narrowed run


def test_an_unknown_plugin_is_bad_usage(capsys):
    assert conformance.main(["no_such_plugin"]) == 2
    err = capsys.readouterr().err
    assert "no plugin named 'no_such_plugin'" in err and "meta" in err
    assert conformance.main(["meta", "--ops", "("]) == 2


def test_a_vendor_operator_gets_samples_from_its_schema(capsys):
    assert conformance.main(["example"]) == 0
    out = capsys.readouterr().out
    assert any(line.split()[:2] == ["example::scale", "Meta"] for line in out.splitlines())
    assert any(line.split()[:2] == ["example::scale", "CPU"] for line in out.splitlines())


@pytest.fixture
def acme():
    status = opd.plugins.load(ACME)
    assert status.state == "loaded", status.reason
    yield status
    opd.plugins.unload("acme_device")


def test_a_privateuse1_device_runs_under_its_registered_name(acme):
    report = conformance.run(ACME, ops="^(add|mul)$", dtypes={"float32", "int64"})
    rows = {(r["operator"], r["key"]): r for r in report["rows"]}
    for kernel in ("aten::add.Tensor", "aten::mul.Tensor", "aten::add_.Tensor"):
        row = rows[(kernel, "PrivateUse1")]
        assert row["samples"] == row["passed"] > 0 and row["failure"] is None
    assert report["failures"] == 0

    def add_is_mul(self, other, alpha=1):
        return opd.mul(self, other)
    with override_kernel("aten::add.Tensor", "PrivateUse1", add_is_mul):
        report = conformance.run("acme_device", ops="^add$", dtypes={"float32"})
    failure = next(r["failure"] for r in report["rows"] if r["operator"] == "aten::add.Tensor")
    assert "add on acme (float32" in failure["message"]
    assert "values differ from the CPU's" in failure["message"]
    assert ".to('acme')" in failure["snippet"]


def test_a_wrong_cpu_kernel_fails_against_torch():
    # On the CPU itself the CPU plugin cannot be the reference (Note [The CPU's own reference]):
    # torch is, so a wrong CPU kernel fails (before, both sides ran it and it passed).
    with override_kernel("aten::neg", "CPU", lambda x: opd.zeros_like(x)):
        report = conformance.run("cpu", ops="^neg$", dtypes=["float32"])
    failure = next(r["failure"] for r in report["rows"] if r["operator"] == "aten::neg")
    assert failure is not None and "neg on cpu (float32" in failure["message"]
    assert report["cpu_reference"] == "torch" and report["failures"] >= 1
    assert conformance.run("cpu", ops="^neg$", dtypes=["float32"])["failures"] == 0


def test_the_run_needs_no_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import opdispatch.conformance as c\n"
            "sys.exit(c.main(['meta', '--ops', '^neg$']) + c.main(['cpu', '--ops', '^neg$']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "aten::neg" in done.stdout
    # Without torch nothing checks the values of the CPU's own kernels, and the report says so.
    assert ("kernels on the CPU itself: values unchecked (torch is not importable to compare "
            "them with)") in done.stdout


def _opd():
    # build/<preset>/python/opdispatch -> build/<preset>/bin/opd (the build tree's layout)
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(opd.__file__))), "bin",
                        "opd")


@pytest.mark.skipif(not os.path.exists(_opd()), reason="opd is not next to this package")
def test_opd_conformance_runs_the_package_next_to_it():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([_opd(), "conformance", "meta", "--ops", "^neg$", "--json"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["plugin"] == "meta"
    done = subprocess.run([_opd(), "conformance", "nope"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 2 and "no plugin named 'nope'" in done.stderr
