#!/usr/bin/env bash
# Final verifier: the answer must be the pass->fail transition, checked by running check.sh
# on pristine exports of the commits; the repository must be left as it was.
set -u
mkdir -p /logs/verifier
cat > "${TMPDIR:-/tmp}/checks.json" <<JSON
[
 {"name": "first_bad_commit", "check": "command_exit", "args": {"command": "bash /tests/verify.sh", "timeout": 120}},
 {"name": "main_unchanged", "check": "command_exit", "args": {"command": "git -C /app/repo log --format=%s -1 main", "stdout_equals": "pricing docs, rev 30"}},
 {"name": "history_length", "check": "command_exit", "args": {"command": "git -C /app/repo rev-list --count main", "stdout_equals": "30"}},
 {"name": "main_checked_out", "check": "command_exit", "args": {"command": "git -C /app/repo symbolic-ref --short HEAD", "stdout_equals": "main"}},
 {"name": "clean_tree", "check": "command_exit", "args": {"command": "cd /app/repo && test -z \"\$(git status --porcelain)\""}}
]
JSON
python3 -I -S -B /opt/agentenvs/evaluators/_entry.py reward @"${TMPDIR:-/tmp}/checks.json" --mode all --out /logs/verifier/reward.json
