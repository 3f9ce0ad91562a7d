#!/bin/bash
# Harbor verifier: the build's bc and tally must be there, the image's ENV set, and the agent's files right.
mkdir -p /logs/verifier
want_power=$(echo '2^100' | bc)
want_table=$(python3 -c 'import tally; print(tally.table([1, 2, 3]))')
if [ "$TABLE_SEP" = tab ] && [ "$(cat /app/power.txt 2>/dev/null)" = "$want_power" ] \
    && [ "$(cat /app/table.txt 2>/dev/null)" = "$want_table" ]; then
    echo 1 > /logs/verifier/reward.txt
else
    echo "power.txt or table.txt wrong (want $want_power), or TABLE_SEP unset"
    echo 0 > /logs/verifier/reward.txt
fi
