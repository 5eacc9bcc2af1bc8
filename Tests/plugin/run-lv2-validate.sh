#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lv2_validate (Debian: lv2-dev with sordi) over the built LV2 bundle's Turtle, against the LV2 specs
# installed with it: no errors, and the identity and ports the README states. Exit 77 (skipped) where
# lv2_validate is not installed.
set -uo pipefail
bundle=${1:?LV2 bundle}
uri=${2:?plugin URI}
command -v lv2_validate > /dev/null || { echo "lv2_validate not installed (Debian: lv2-dev sordi): skipped"; exit 77; }
log=$(lv2_validate "$bundle"/*.ttl 2>&1)
echo "$log" | grep -v "^Skipping file"
echo "$log" | grep -q "^Found 0 errors" || { echo "FAIL: lv2_validate found errors"; exit 1; }
grep -q "^<$uri>" "$bundle/manifest.ttl" || { echo "FAIL: manifest does not name $uri"; exit 1; }
grep -q "lv2:FilterPlugin" "$bundle/manifest.ttl" || { echo "FAIL: no category"; exit 1; }
grep -q "lv2:portProperty lv2:isSideChain" "$bundle/dsp.ttl" || { echo "FAIL: no sidechain port"; exit 1; }
grep -q 'rdfs:label "Default"' "$bundle/manifest.ttl" || { echo "FAIL: unnamed preset"; exit 1; }
echo "lv2_validate: no errors; $uri, a filter plugin with its far end as the sidechain"
