#!/usr/bin/env bash
# Final verifier: hidden unit tests (JUnit XML report) plus the shape of the merge.
set -u
mkdir -p /logs/verifier /tmp/verifier
rm -f /tmp/verifier/junit.xml
(cd /tmp && timeout 60 python3 /tests/junit_runner.py /tmp/verifier/junit.xml /tests/test_calc.py)
python3 -I -S -B /opt/agentenvs/evaluators/_entry.py reward @/tests/checks.json --mode all --out /logs/verifier/reward.json
