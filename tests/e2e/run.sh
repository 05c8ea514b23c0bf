#!/usr/bin/env bash
# Runs the real-browser suite (node's test runner, one file per concern).
set -euo pipefail
cd "$(dirname "$0")"
exec node --test --test-concurrency=1 --test-timeout=180000 ./*.test.mjs
