#!/bin/bash
# A plausible mistake: every account listed, whatever its status.
set -euo pipefail
jq -r '.[].name' /app/users.json | sort > /app/active.txt
