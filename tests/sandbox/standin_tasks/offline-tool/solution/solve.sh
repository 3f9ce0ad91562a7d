#!/bin/bash
/opt/tool/bin/tool --version > /app/version.txt
