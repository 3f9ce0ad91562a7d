#!/bin/bash
echo not-ready > /app/status.txt
