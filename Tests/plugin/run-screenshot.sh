#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Opens the plugin's editor after a simulated echo run and saves it as a PNG, under Xvfb when there is no
# display; checks the editor says where the canceller runs (and, with no GPU, that it runs on the CPU).
# Usage: run-screenshot.sh path/to/quell-plugin-screenshot OUT.png     Exits 77 without xvfb-run.
set -uo pipefail
tool=$1
out=$2
if [ -z "${DISPLAY:-}" ]; then
  command -v xvfb-run >/dev/null || { echo "skipped: no display and no xvfb-run (apt-get install xvfb)"; exit 77; }
  log=$(xvfb-run -a -s "-screen 0 1024x768x24" "$tool" "$out" 2>&1) || { echo "$log"; exit 1; }
else
  log=$("$tool" "$out" 2>&1) || { echo "$log"; exit 1; }
fi
echo "$log"
[ -s "$out" ] || { echo "FAIL: no picture written"; exit 1; }
echo "$log" | grep -q '^backend: \(GPU\|CPU\): ' || { echo "FAIL: the editor does not say which backend runs"; exit 1; }
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "$log" | grep -q '^backend: CPU: ' && echo "$log" | grep -q 'no GPU' || { echo "FAIL: no GPU here, but the editor does not say so (CPU, no GPU)"; exit 1; }
fi
echo "PASSED"
