#!/bin/bash
set -euo pipefail
echo '2^100' | bc > /app/power.txt
python3 -c 'import tally; print(tally.table(sorted(int(x) for x in open("/app/numbers.txt").read().split())))' > /app/table.txt
