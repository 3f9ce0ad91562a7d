#!/bin/bash
# As some Harbor tasks do: fetch the test runner's installer from its own site at verification time.
# astral.sh is not a package registry, so the verifier's gate refuses it on any machine.
python3 - <<'PY'
import urllib.request

urllib.request.urlretrieve("https://astral.sh/uv/install.sh", "/tmp/install-uv.sh")
PY
if [ -s /tmp/install-uv.sh ] && grep -qx ready /app/status.txt; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
