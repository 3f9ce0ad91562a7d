#!/usr/bin/env bash
set -euo pipefail
cat > /app/start-worker.sh <<'SH'
#!/usr/bin/env bash
set -euo pipefail
cd /app
nohup python3 /app/worker.py >>/app/worker.log 2>&1 </dev/null &
echo $! > /app/worker.pid
SH
chmod +x /app/start-worker.sh
/app/start-worker.sh
for _ in $(seq 50); do [ -f /app/done/b.result ] && exit 0; sleep 0.1; done
exit 1
