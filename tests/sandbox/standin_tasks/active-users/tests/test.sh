#!/bin/bash
# As Harbor tasks do: the verifier installs its test tools with pip (through the verifier's gate to
# PyPI), then runs them. The image must have been built as written: `python` is the official
# image's name for it, and six came from PyPI during the build.
pip install --no-cache-dir --quiet pytest==8.3.4
if python -m pytest -q -p no:cacheprovider /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
