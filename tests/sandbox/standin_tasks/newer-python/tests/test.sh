#!/bin/bash
# Django 6.0 needs Python 3.12, which python:3.12-slim has and its stand-in (Debian's 3.11) does not:
# on this machine the verifier cannot install it, whatever the agent did.
pip install --no-cache-dir --quiet "django==6.0"
if python -c "import django" && grep -qx ready /app/status.txt; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
