#!/usr/bin/env bash
set -euo pipefail
cat > /app/service/config.ini <<'INI'
; inventory service configuration
[server]
host = 127.0.0.1
port = 8181

[storage]
data_dir = /app/service/data
cache = on

[auth]
token = s3cr3t-inventory-token
INI
cd /app/service
python3 server.py --check-config
nohup python3 server.py >/tmp/service.log 2>&1 </dev/null &
