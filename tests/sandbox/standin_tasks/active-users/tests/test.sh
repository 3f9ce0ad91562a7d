#!/bin/bash
# The image must have been built as written: `python` is the official image's name for it,
# and six came from PyPI during the build. Then the answer itself.
python - <<'PY'
ok = True
try:
    import six  # noqa: F401
except ImportError:
    print("six is missing: the image's pip step did not run")
    ok = False
expected = ["adil", "ines", "mara"]  # not read from /app, which the agent can change
try:
    got = open("/app/active.txt").read().split("\n")
except OSError as exc:
    print(f"no answer: {exc}")
    got = None
if got is not None and got and got[-1] == "":
    got = got[:-1]
print("expected", expected, "got", got)
ok = ok and got == expected
open("/logs/verifier/reward.txt", "w").write("1" if ok else "0")
PY
