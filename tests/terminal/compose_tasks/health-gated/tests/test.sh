#!/bin/bash
python3 - <<'PY'
import pathlib
import urllib.request

word = urllib.request.urlopen("http://api:8000/word", timeout=10).read().decode()
answer = pathlib.Path("/app/answer.txt")
ok = answer.is_file() and answer.read_text() == word[::-1] + "\n"
open("/logs/verifier/reward.txt", "w").write("1" if ok else "0")
PY
