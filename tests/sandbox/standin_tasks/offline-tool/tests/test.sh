#!/bin/bash
cmp -s /app/version.txt /app/expected.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
