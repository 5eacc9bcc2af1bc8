#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lv2_validate (Debian: lv2-dev with sordi) over the built LV2 bundle's Turtle, against the LV2 specs
# installed with it: no errors, and the identity and ports the README states. Exit 77 (skipped) where
# lv2_validate is not installed. Usage: run-lv2-validate.sh BUNDLE URI [ports] (ports: the control-port
# bundle, which has no presets).
set -uo pipefail
bundle=${1:?LV2 bundle}
uri=${2:?plugin URI}
kind=${3:-juce}
command -v lv2_validate > /dev/null || { echo "lv2_validate not installed (Debian: lv2-dev sordi): skipped"; exit 77; }
log=$(lv2_validate "$bundle"/*.ttl 2>&1)
echo "$log" | grep -v "^Skipping file"
echo "$log" | grep -q "^Found 0 errors" || { echo "FAIL: lv2_validate found errors"; exit 1; }
grep -q "^<$uri>" "$bundle/manifest.ttl" || { echo "FAIL: manifest does not name $uri"; exit 1; }
grep -q "lv2:FilterPlugin" "$bundle/manifest.ttl" || { echo "FAIL: no category"; exit 1; }
grep -q "lv2:portProperty lv2:isSideChain" "$bundle"/*.ttl || { echo "FAIL: no sidechain port"; exit 1; }
if [ "$kind" = ports ]; then
  for symbol in taps suppression freeze bypass latency; do
    grep -q "lv2:symbol \"$symbol\"" "$bundle"/*.ttl || { echo "FAIL: no control port $symbol"; exit 1; }
  done
else
  grep -q 'rdfs:label "Default"' "$bundle/manifest.ttl" || { echo "FAIL: unnamed preset"; exit 1; }
fi
echo "lv2_validate: no errors; $uri, a filter plugin with its far end as the sidechain"
