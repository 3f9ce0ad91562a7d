#!/usr/bin/env bash
# Final verifier: inspects the archive's members structurally (python tarfile) against the source tree.
set -u
mkdir -p /logs/verifier
cat > "${TMPDIR:-/tmp}/checks.json" <<'JSON'
[
 {"name": "archive_contents", "check": "command_exit", "args": {"command": "python3 /tests/check_backup.py", "timeout": 60}},
 {"name": "source_untouched", "check": "command_exit", "args": {"command": "test -f /app/project/node_modules/left-pad/index.js && test -f /app/project/server.log && test -x /app/project/build.sh"}}
]
JSON
python3 -I -S -B /opt/agentenvs/evaluators/_entry.py reward @"${TMPDIR:-/tmp}/checks.json" --mode all --out /logs/verifier/reward.json
