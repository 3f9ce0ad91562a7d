#!/usr/bin/env bash
# Final verifier: runs after the agent is done; the reward depends only on the state it left.
set -u
mkdir -p /logs/verifier
python3 -I -S -B /opt/agentenvs/evaluators/_entry.py reward @/tests/checks.json --mode all --out /logs/verifier/reward.json
