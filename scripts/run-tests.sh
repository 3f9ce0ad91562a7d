#!/usr/bin/env bash
# `make test`'s runner. With no arguments of its own (after --), the whole suite runs as two pytest
# processes side by side, so that the 2-core CI machine is busy while desktops wait: one runs
# tests/gui (desktops, mostly waiting on apps to draw and save) then most of tests/swe, the other the rest
# (docker- and CPU-bound); the split balances their durations in the last CI run (`--durations=0`).
# Each process labels and sweeps only its own containers and sandboxes (tests/conftest.py). The
# second process's output goes to .test-logs/beside.log and is printed after the rest's; the run
# fails if either fails. With arguments, one pytest runs them (e.g. `make test PYTEST_ARGS=tests/terminal`).
#
#   scripts/run-tests.sh PYTEST [OPTION...] -- [ARG...]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pytest=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pytest+=("$1"); shift; done
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then
  exec "${pytest[@]}" "$@"
fi
# The SWE file the rest runs instead (the lanes' last clean-clone times here: the rest 59 min, the
# second 56; tests/swe/test_hacks.py went back to the second when the corpus audit got shorter).
moved=(tests/swe/test_synthesize.py)
beside=(tests/gui)
for file in tests/swe/test_*.py; do
  [[ " ${moved[*]} " == *" $file "* ]] || beside+=("$file")
done
mkdir -p .test-logs
"${pytest[@]}" "${beside[@]}" > .test-logs/beside.log 2>&1 &
second=$!
trap 'kill "$second" 2>/dev/null' EXIT
"${pytest[@]}" "${beside[@]/#/--ignore=}" tests
rest=$?
wait "$second"
besides=$?
trap - EXIT
echo
echo "==== tests/gui and tests/swe (less ${moved[*]}), run beside the rest (exit $besides) ===="
cat .test-logs/beside.log
if [ "$rest" -ne 0 ]; then exit "$rest"; fi
exit "$besides"
