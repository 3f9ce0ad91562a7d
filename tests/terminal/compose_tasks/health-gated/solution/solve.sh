#!/bin/bash
# One request, no retry: it works only because the agent starts after the service is healthy.
set -euo pipefail
python3 -c "import urllib.request; print(urllib.request.urlopen('http://api:8000/word', timeout=10).read().decode()[::-1])" > /app/answer.txt
