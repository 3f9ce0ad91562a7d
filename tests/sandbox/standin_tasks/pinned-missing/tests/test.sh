#!/bin/bash
# As many Harbor tasks do, the verifier pins its test tool, here through a requirements file. No index
# has pytest 99.0.0, so this verifier fails whatever the agent did: the machine's lack, not the agent's.
if pip install --no-cache-dir --quiet -r /tests/requirements.txt && grep -qx ready /app/status.txt; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
