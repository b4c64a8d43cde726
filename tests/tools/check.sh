# Sourced by the command tests (opd_cli_test.sh, gen/opd_gen_test.sh): counts checks and says
# what failed; the test ends with `report NAME`, which prints "N passed, N failed" and fails
# the test on any failure.
failures=0
passed=0

check() {  # check NAME EXPECTED_EXIT PATTERN -- COMMAND...
  local name="$1" want_rc="$2" pattern="$3"
  shift 4
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL: $name (exit $rc, wanted $want_rc; expected to find: $pattern)"
    echo "$out" | head -20
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

report() {  # report NAME
  echo "$1: $passed passed, $failures failed"
  [ "$failures" -eq 0 ]
}
