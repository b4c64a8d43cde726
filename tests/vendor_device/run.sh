#!/usr/bin/env bash
# Builds the vendor device as a vendor would: install opdispatch to a temporary prefix, configure
# tests/vendor_device against it with find_package(opdispatch CONFIG), build, run the smoke
# program, load the device with `opd` and check it. Usage: run.sh BUILD_DIR SOURCE_DIR
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
echo "vendor device: built against the installed package, loaded and run"
