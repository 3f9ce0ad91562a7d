#!/bin/bash
# As some Harbor tasks do: fetch the test runner's installer from its own site at verification time.
# tools.example.org is on no allow-list of ours, so the verifier's gate refuses it on any machine.
python3 - <<'PY'
import urllib.request

urllib.request.urlretrieve("https://tools.example.org/install.sh", "/tmp/install-tool.sh")
PY
if [ -s /tmp/install-tool.sh ] && grep -qx ready /app/status.txt; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
