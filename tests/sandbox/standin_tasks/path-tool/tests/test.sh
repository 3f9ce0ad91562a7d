#!/bin/bash
# The tool is called by name, as tasks whose image puts it on PATH do.
if checkstatus; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
