#!/usr/bin/env bash
# Builds the vendor plugin as a vendor would: install opdispatch to a temporary prefix, configure
# tests/vendor_plugin against it with find_package(opdispatch CONFIG), build, load the plugin
# with `opd` and call its operator. Usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$src/tests/vendor_plugin" -B "$work/vendor" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/vendor" > /dev/null
"$work/vendor/acme_smoke"
OPD_PLUGIN_PATH="$work/vendor/plugins" "$work/prefix/bin/opd" load acme
OPD_PLUGIN_PATH="$work/vendor/plugins" "$work/prefix/bin/opd" check --plugin acme
echo "vendor plugin: built against the installed package, loaded and called"
