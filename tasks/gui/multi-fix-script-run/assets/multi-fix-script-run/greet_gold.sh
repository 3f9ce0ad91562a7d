#!/bin/sh
echo "Hello, world"
