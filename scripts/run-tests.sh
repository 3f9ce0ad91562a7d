#!/usr/bin/env bash
# `make test`'s runner. With no arguments of its own (after --), the whole suite runs as two pytest
# processes side by side: tests/gui (desktops, mostly waiting on apps to draw and save) and the rest
# (docker- and CPU-bound), so that the 2-core CI machine is busy while desktops wait. Each process
# labels and sweeps only its own containers and sandboxes (tests/conftest.py). The desktop tests'
# output goes to .test-logs/gui.log and is printed after the rest's; the run fails if either fails.
# With arguments, one pytest runs them (e.g. `make test PYTEST_ARGS=tests/terminal`).
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
mkdir -p .test-logs
"${pytest[@]}" tests/gui > .test-logs/gui.log 2>&1 &
gui=$!
trap 'kill "$gui" 2>/dev/null' EXIT
"${pytest[@]}" --ignore=tests/gui tests
rest=$?
wait "$gui"
desktops=$?
trap - EXIT
echo
echo "==== tests/gui, run beside the rest (exit $desktops) ===="
cat .test-logs/gui.log
if [ "$rest" -ne 0 ]; then exit "$rest"; fi
exit "$desktops"
