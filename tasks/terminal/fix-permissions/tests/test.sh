#!/usr/bin/env bash
# Final verifier: every mode must be exactly right and no content may change.
set -u
mkdir -p /logs/verifier
python3 -I -S -B /opt/agentenvs/evaluators/_entry.py reward @/tests/checks.json --mode all --out /logs/verifier/reward.json
