#!/bin/bash
# The service's whole content must be exactly the expected map; the verifier asks the service itself.
python3 - <<'PY'
import json
import urllib.request

expected = json.load(open("/tests/expected.json"))
try:
    stored = json.loads(urllib.request.urlopen("http://kv:8080/keys", timeout=10).read())
except Exception as exc:
    print(f"cannot read the service: {exc}")
    stored = None
ok = stored == expected
print("stored:", stored)
open("/logs/verifier/reward.txt", "w").write("1" if ok else "0")
PY
