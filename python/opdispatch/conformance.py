"""``python -m opdispatch.conformance PLUGIN``: a plugin's kernels against the CPU plugin (issue
33 §2; ``opd conformance PLUGIN`` runs this).

For every kernel the plugin serves (its ``served_keys``, and the operators it registered there),
the samples of the OpInfo-style table (``opdispatch._opinfo``) run on the key's device (CPU: cpu,
Meta: meta, CUDA: cuda, PrivateUse1: the name the plugin registered, such as "acme"; composite
and autograd keys: cpu) and on the CPU plugin, and each sample is checked: the same error type
where the CPU raises; dtype, shape and values (the entry's per-dtype tolerances; none on Meta, and
strides on Meta and where the entry compares them); out= (the result is the ``out`` object) and
in-place (the result is ``self``) with their values; ``opdispatch.library.opcheck`` on the
operator the call reached (on Meta: test_faketensor over CPU inputs); and each of the entry's
error inputs raises the entry's error type (its text is torch's, which a vendor need not match).
A vendor operator (another namespace) with no table entry gets samples filled from its schema.

Note [Conformance attribution]: a sample counts for a kernel when the call, traced
(``opdispatch.trace``), reached a kernel of this plugin; the plugin's shallowest hops of the call
are the kernels it exercised (``add`` on meta reaches meta's add.Tensor, and, below it, meta's
empty, which is not what the sample tests). A call that never reaches the plugin counts nowhere.
A kernel registered over one of the plugin's (``opdispatch.testing.override_kernel``) is checked
in its place.

Nothing here imports torch: the reference is the CPU plugin. Exit status: 1 when any check
failed, 0 otherwise, 2 on bad usage (an unknown plugin). A failure is printed with a line of
opdispatch Python that repeats the failing call, and a ``replay`` line that reruns the check.
"""

import argparse
import faulthandler
import json
import re
import sys
import time
import warnings

import opdispatch as opd
from . import _C
from ._conformance_checks import Target, seed_of, check_errors, check_sample
from ._conformance_samples import schema_entry
from ._opinfo import all_op_db

__all__ = ["run", "main", "replay", "served_kernels"]


# ---- what the plugin serves --------------------------------------------------------------------

_DUMP_LINE = re.compile(r"^(\w+)(?:\[alias\])?(?: \(inactive\))?: registered at .* "
                        r"\(plugin (\S+) [^)]*\)")


def served_kernels(status):
    """{(operator, key)} the plugin registered kernels for, from its served keys (a kernel
    another registration overrides still counts: it is the plugin's)."""
    found = set()
    for key in status.served_keys:
        try:
            names = _C._dispatch_get_registrations_for_dispatch_key(key)
        except RuntimeError:
            continue
        for name in names:
            for line in _C._dispatch_dump(name).splitlines():
                m = _DUMP_LINE.match(line)
                if m and m.group(1) == key and m.group(2) == status.name:
                    found.add((name, key))
    return found


_PRIVATEUSE = {"PrivateUse1": "privateuseone", "PrivateUse2": "privateusetwo",
               "PrivateUse3": "privateusethree"}


def device_of(key):
    """The device a key's kernels run on, or None (a key with no device here)."""
    if key in ("CPU", "Meta", "CUDA"):
        return key.lower()
    if key in _PRIVATEUSE:
        try:
            return opd.device(_PRIVATEUSE[key]).type  # the name the plugin registered
        except Exception:  # noqa: BLE001 - a slot this build does not declare
            return None
    if key.startswith("Autograd") and key != "Autograd":
        return device_of(key[len("Autograd"):])
    if key.startswith(("Composite", "Autograd")):
        return "cpu"
    return None


class Row:
    """One kernel of the plugin: operator, key, samples that reached it, those that passed,
    and the first failure."""

    def __init__(self, op, key):
        self.op, self.key = op, key
        self.samples = self.passed = 0
        self.failure = None

    def as_dict(self):
        return {"operator": self.op, "key": self.key, "samples": self.samples,
                "passed": self.passed, "failure": self.failure}


def _load(spec):
    """The plugin's status, loading it (name or manifest path) when it is not loaded; exits 2
    naming an unknown plugin."""
    known = {s.name: s for s in opd.plugins.list()}
    if spec in known and known[spec].state in ("loaded", "resident"):
        return known[spec]
    if spec not in known and not spec.endswith((".yaml", ".yml")):
        raise SystemExit(_usage(f"no plugin named '{spec}' in the search path (known: "
                                f"{', '.join(sorted(known)) or 'none'}); give its name or "
                                "its manifest's path"))
    try:
        return opd.plugins.load(spec)
    except Exception as e:  # noqa: BLE001 - PluginError, with the manager's text
        if spec.endswith((".yaml", ".yml")):
            raise SystemExit(_usage(f"cannot load plugin '{spec}': {e}"))
        return opd.plugins.status(spec)


def _usage(message):
    print(f"opd conformance: {message}", file=sys.stderr)
    return 2


def plan(status, ops=None):
    """[(entry, device)] to run for the plugin, the served kernels, and the vendor entries."""
    kernels = served_kernels(status)
    by_device = {}
    for op, key in kernels:
        device = device_of(key)
        if device is not None:
            by_device.setdefault(device, set()).add(op)
    entries = [op for _, op in all_op_db()]
    work = []
    for device in sorted(by_device):
        # Every entry where the plugin serves an aten kernel on the device: which kernels a
        # call reaches is the trace's to say (a composite entry reaches the backend's kernels
        # below it), and a run of the whole table on Meta takes seconds.
        if any(op.startswith("aten::") for op in by_device[device]):
            work += [(e, device) for e in entries]
        for op in sorted(by_device[device]):
            if not op.startswith("aten::"):
                e = schema_entry(op)
                if e is not None:
                    work.append((e, device))
    if ops:
        work = [(e, d) for e, d in work if re.search(ops, e.name)]
    return work, kernels


def run(plugin, *, ops=None, budget=0.0, samples=2, dtypes=None):
    """Runs the conformance checks of `plugin` (a name or manifest path); returns the report
    as a dict (what --json prints). Warnings (a CPU fallback's, out= resizing) are silenced:
    they are not what is checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(plugin, ops, budget, samples, dtypes)


def _run(plugin, ops, budget, samples, dtypes):
    status = _load(plugin)
    report = {"plugin": status.name, "state": status.state, "served_keys": status.served_keys,
              "rows": [], "uncovered": [], "entries": 0, "entries_run": 0,
              "stopped_by_budget": False, "failures": 0}
    if status.state not in ("loaded", "resident"):
        report["error"] = f"plugin {status.name} is {status.state}: {status.reason}"
        report["failures"] = 1
        return report
    work, kernels = plan(status, ops)
    target = Target(status.name, kernels)
    report["entries"] = len(work)
    rows = {}
    start = time.monotonic()
    for entry, device in work:
        if budget and time.monotonic() - start > budget:
            report["stopped_by_budget"] = True
            break
        report["entries_run"] += 1
        if device == "meta" and (not entry.supports_meta or entry.skip_reason("meta")):
            continue
        outcomes = []
        for dtype in entry.dtypes:
            if dtypes and dtype not in dtypes:
                continue
            chosen = entry.samples(dtype, seed=seed_of(entry, dtype))
            for i, sample in enumerate(chosen[:samples] if samples else chosen):
                outcomes.append(check_sample(target, entry, device, dtype, i, sample))
        outcomes.append(check_errors(target, entry, device))
        for sample_results in outcomes:
            passed = {}
            for reached, check, failure in sample_results:
                for kernel in reached:
                    row = rows.setdefault(kernel, Row(*kernel))
                    passed[kernel] = passed.get(kernel, True) and failure is None
                    if failure is not None and row.failure is None:
                        row.failure = failure
            for kernel, ok in passed.items():
                rows[kernel].samples += 1
                rows[kernel].passed += ok
    report["rows"] = [rows[k].as_dict() for k in sorted(rows)]
    reached_ops = {op for op, _ in rows}  # a composite kernel is reached at an Autograd key
    report["uncovered"] = sorted(f"{op} {key}" for op, key in kernels
                                 if op not in reached_ops and device_of(key) is not None)
    report["failures"] = sum(1 for r in rows.values() if r.failure)
    report["seconds"] = round(time.monotonic() - start, 2)
    # Note [The CPU's own reference] (_conformance_samples.py).
    report["cpu_reference"] = "torch" if _torch_importable() else "none: values unchecked"
    report["cpu_kernels"] = any(device == "cpu" for _, device in work)
    return report


def _torch_importable():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def replay(plugin, entry_name, device, dtype, index, check):
    """Reruns one check of a conformance run; raises AssertionError with its failure."""
    status = _load(plugin)
    target = Target(status.name, served_kernels(status))
    entries = {e.name: e for _, e in all_op_db()}
    entry = entries.get(entry_name) or schema_entry(entry_name)
    if check == "errors":
        results = check_errors(target, entry, device, index)
    else:
        sample = entry.samples(dtype, seed=seed_of(entry, dtype))[index]
        results = check_sample(target, entry, device, dtype, index, sample, only=check)
    for _, _, failure in results:
        if failure is not None:
            raise AssertionError(failure["message"])
    return results


def _print_table(report, out):
    rows = [["operator", "key", "samples", "passed", "first failure"]]
    for r in report["rows"]:
        f = r["failure"]
        rows.append([r["operator"], r["key"], str(r["samples"]), str(r["passed"]),
                     f["snippet"] if f else ""])
    width = [max(len(row[i]) for row in rows) for i in range(4)]
    for n, row in enumerate(rows):
        cells = [row[0].ljust(width[0]), row[1].ljust(width[1]), row[2].rjust(width[2]),
                 row[3].rjust(width[3])]
        print("  ".join(cells + [row[4]]).rstrip(), file=out)
        f = report["rows"][n - 1]["failure"] if n else None
        if f:
            print(f"{'':{width[0]}}  {f['check']}: {f['message']}", file=out)
    if report.get("error"):
        print(report["error"], file=out)
    tail = (f"{report['plugin']}: {len(report['rows'])} kernels reached, "
            f"{sum(r['samples'] for r in report['rows'])} samples, {report['failures']} failed; "
            f"{len(report['uncovered'])} served kernels reached by no sample (--json lists them)")
    if report["stopped_by_budget"]:
        tail += (f"; --budget spent after {report['entries_run']} of {report['entries']} "
                 "entries")
    if report.get("cpu_kernels"):
        tail += ("; kernels on the CPU itself checked against torch (a vendor operator's "
                 "values there: unchecked)"
                 if report["cpu_reference"] == "torch" else
                 "; kernels on the CPU itself: values unchecked (torch is not importable to "
                 "compare them with)")
    print(tail, file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="opd conformance",
        description="Check a plugin's kernels against the CPU plugin over the OpInfo table's "
                    "samples. Exit 1 on any failure, 2 on bad usage.")
    parser.add_argument("plugin", help="plugin name or manifest path")
    parser.add_argument("--ops", help="only the table entries whose name matches this regex")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--budget", type=float, default=0,
                        help="start no entry after this many seconds (default: no limit)")
    parser.add_argument("--samples", type=int, default=2,
                        help="samples per entry and dtype (default 2; 0: all)")
    parser.add_argument("--dtypes", help="comma-separated dtype names (default: the entry's)")
    args = parser.parse_args(argv)
    if args.ops:
        try:
            re.compile(args.ops)
        except re.error as e:
            return _usage(f"--ops {args.ops!r} is not a regular expression: {e}")
    try:
        report = run(args.plugin, ops=args.ops, budget=args.budget, samples=args.samples,
                     dtypes=set(args.dtypes.split(",")) if args.dtypes else None)
    except SystemExit as e:
        return e.code
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        _print_table(report, sys.stdout)
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    # A kernel that crashes the process is a failure too: the Python stack, naming the entry
    # and check being run, goes to stderr, and `opd conformance` reports the signal.
    faulthandler.enable()
    sys.exit(main())
