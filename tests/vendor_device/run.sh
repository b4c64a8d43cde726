#!/usr/bin/env bash
# Builds the vendor device as a vendor would: install opdispatch to a temporary prefix, configure
# tests/vendor_device against it with find_package(opdispatch CONFIG), build, run the smoke
# program, load the device with `opd` and check it, then train on it from Python with the
# installed package (train_on_acme.py), run it beside its second build, acmetwo (two_devices.py),
# and run `opd conformance` on it, where the build has a Python package. Usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$src/tests/vendor_device" -B "$work/device" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/device" > /dev/null
"$work/device/acme_device_smoke"
OPD_PLUGIN_PATH="$work/device/plugins" "$work/prefix/bin/opd" load acme_device
OPD_PLUGIN_PATH="$work/device/plugins" "$work/prefix/bin/opd" check --plugin acme_device

# The Python package is installed where the build made one (python/CMakeLists.txt: not under
# ThreadSanitizer, not without pybind11), for the interpreter it was built for.
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
package="$work/prefix/$(cache OPD_PYTHON_INSTALL_DIR)"
# FindPython's record of the interpreter it found (python/CMakeLists.txt prefers Debian's).
python="$(cache _Python_EXECUTABLE)"
if [ -d "$package/opdispatch" ]; then
  # The vendor tests do not run under the sanitizers (tests/CMakeLists.txt), so the interpreter
  # needs no sanitizer runtime preloaded.
  PYTHONPATH="$package" PYTHONDONTWRITEBYTECODE=1 OPD_PLUGIN_PATH="$work/device/plugins" \
    "${python:-/usr/bin/python3}" "$src/tests/vendor_device/train_on_acme.py"
  # Two devices at once: acme_device.cpp built a second time as acmetwo (Note [Vendor slots]).
  PYTHONPATH="$package" PYTHONDONTWRITEBYTECODE=1 OPD_PLUGIN_PATH="$work/device/plugins" \
    "${python:-/usr/bin/python3}" "$src/tests/vendor_device/two_devices.py"
  # The OpInfo table's samples on acme against the CPU plugin (issue 33 §2), as a vendor runs it.
  if ! OPD_PLUGIN_PATH="$work/device/plugins" "$work/prefix/bin/opd" conformance acme_device \
    --samples 1 >"$work/conformance.txt"; then
    cat "$work/conformance.txt"
    exit 1
  fi
  tail -1 "$work/conformance.txt"
else
  echo "vendor device: this build has no Python package; train_on_acme.py not run"
fi
echo "vendor device: built against the installed package, loaded and run"
