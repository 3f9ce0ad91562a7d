#!/bin/bash
# A plausible mistake: the word as served, not reversed.
set -euo pipefail
python3 -c "import urllib.request; print(urllib.request.urlopen('http://api:8000/word', timeout=10).read().decode())" > /app/answer.txt
