#!/usr/bin/env bash
# Serves the directory it is started from, not /app/public: from / the site is not there.
set -euo pipefail
cat > /app/start-server.sh <<'SH'
#!/usr/bin/env bash
nohup python3 -m http.server 8080 >/tmp/http.log 2>&1 </dev/null &
echo $! > /app/server.pid
sleep 1
SH
chmod +x /app/start-server.sh
cd /app/public && /app/start-server.sh
