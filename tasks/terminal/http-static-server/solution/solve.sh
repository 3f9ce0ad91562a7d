#!/usr/bin/env bash
set -euo pipefail
cat > /app/start-server.sh <<'SH'
#!/usr/bin/env bash
set -euo pipefail
cd /app/public
nohup python3 -m http.server 8080 --bind 127.0.0.1 >/tmp/http.log 2>&1 </dev/null &
echo $! > /app/server.pid
for _ in $(seq 50); do python3 -c 'import socket; socket.create_connection(("127.0.0.1", 8080), 1)' 2>/dev/null && exit 0; sleep 0.1; done
exit 1
SH
chmod +x /app/start-server.sh
/app/start-server.sh
