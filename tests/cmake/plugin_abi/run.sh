#!/usr/bin/env bash
# opd_add_plugin and the manifest's `abi:` (issue 33 §5), against the installed package as a
# vendor builds: a template without `abi:` gets the package's major and the plugin loads; a
# template stating the package's major configures; one stating another fails the configuration
# with a message naming the template, its value and the package's.
# Usage: run.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build="$1"
src="$2"
here="$src/tests/cmake/plugin_abi"
# shellcheck source=tests/tools/check.sh
source "$src/tests/tools/check.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
major="$(sed -n 's/^#define OPD_PLUGIN_ABI_MAJOR \([0-9]*\)$/\1/p' "$src/plugin_api/include/opd/plugin.h")"

cmake --install "$build" --prefix "$work/prefix" > /dev/null || exit 1
configure() {  # configure TEMPLATE DIR; CMake's wrapped message lines joined by single spaces
  local rc
  cmake -S "$here" -B "$2" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DTEMPLATE="$1" \
    > "$work/configure.log" 2>&1
  rc=$?
  tr -s ' \n' '  ' < "$work/configure.log"
  return $rc
}

check "a template stating another major fails the configuration" 1 \
  "the manifest template $here/wrong_abi.yaml states 'abi: 999', but the opdispatch package it builds against has plugin ABI major $major" -- \
  configure "$here/wrong_abi.yaml" "$work/wrong"
check "the message names the package's header" 1 "$work/prefix/include" -- \
  configure "$here/wrong_abi.yaml" "$work/wrong"

sed "s/^version: 1.0.0$/&\nabi: $major/" "$here/without_abi.yaml" > "$work/right_abi.yaml"
check "a template stating the package's major configures" 0 "Generating done" -- \
  configure "$work/right_abi.yaml" "$work/right"

check "a template without abi configures" 0 "Generating done" -- \
  configure "$here/without_abi.yaml" "$work/without"
check "and builds" 0 "" -- cmake --build "$work/without"
check "the manifest gets the package's major" 0 "abi: $major" -- cat "$work/without/plugins/abi_kit.yaml"
check "the plugin loads" 0 "loaded" -- \
  env OPD_PLUGIN_PATH="$work/without/plugins" "$work/prefix/bin/opd" load abi_kit

report plugin_abi
