#!/bin/sh
# check_plugin_symbols.sh DIR...
#
# Fails when a plugin shared object under DIR (searched recursively) could never be unmapped by
# dlclose: it has STB_GNU_UNIQUE symbols (g++ gives them to template static members and static
# locals of inline functions unless built with -fno-gnu-unique), or it is marked NODELETE
# (-z nodelete). See DESIGN.md, "Plugins". Files that are not ELF objects are skipped (a fixture
# is a text file named lib*.so on purpose); folders that do not exist are skipped.
#
# Exit status: 0 when every object is clean, 1 when one is not, 2 when there was nothing to check
# or readelf is missing.

if ! command -v readelf >/dev/null 2>&1; then
  echo "check_plugin_symbols: readelf not found (install binutils)" >&2
  exit 2
fi

objects=""
for dir in "$@"; do
  [ -d "$dir" ] || continue
  found=$(find "$dir" -name '*.so' -type f | sort)
  objects="$objects
$found"
done

checked=0
bad=0
# A here-document, not a pipe, so that the loop runs in this shell and sets `bad`.
while IFS= read -r so; do
  [ -n "$so" ] || continue
  if [ "$(head -c 4 "$so" | od -An -c | tr -d ' ')" != '177ELF' ]; then
    continue
  fi
  checked=$((checked + 1))
  unique=$(readelf --dyn-syms -W "$so" | awk '$5 == "UNIQUE" { print "    " $8 }')
  if [ -n "$unique" ]; then
    echo "$so: has STB_GNU_UNIQUE symbols, so dlclose cannot unmap it; build it with" \
      "-fno-gnu-unique (opd_add_plugin does) or de-inline the statics:"
    echo "$unique"
    bad=1
  fi
  if readelf -d -W "$so" | grep 'FLAGS_1' | grep -q 'NODELETE'; then
    echo "$so: is marked NODELETE (linked with -z nodelete), so dlclose cannot unmap it"
    bad=1
  fi
done <<EOF
$objects
EOF

if [ "$checked" -eq 0 ]; then
  echo "check_plugin_symbols: no ELF shared objects found under: $*" >&2
  exit 2
fi
if [ "$bad" -eq 0 ]; then
  echo "check_plugin_symbols: $checked plugin(s) clean (no UNIQUE symbols, no NODELETE)"
fi
exit "$bad"
