#!/bin/bash
# A plausible mistake: every row stored, the zero-quantity ones included.
set -euo pipefail
tail -n +2 /app/inventory.csv | while IFS=, read -r sku qty; do
  python3 -c "import sys, urllib.request; urllib.request.urlopen(urllib.request.Request('http://kv:8080/keys/' + sys.argv[1], data=sys.argv[2].encode(), method='PUT'), timeout=10)" "$sku" "$qty"
done
