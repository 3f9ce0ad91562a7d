#!/bin/bash
set -euo pipefail
jq -r '.[] | select(.status == "active") | .name' /app/users.json | sort > /app/active.txt
