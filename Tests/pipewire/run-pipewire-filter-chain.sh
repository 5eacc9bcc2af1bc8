#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# quell-ports.lv2 inside PipeWire's filter-chain module, the way a user adds an echo canceller to a
# desktop without an echo-cancel backend: a private daemon (temporary runtime folder, no D-Bus, no session
# manager, a dummy driver) loads libpipewire-module-filter-chain with one LV2 node, plugin
# urn:quell:aec-ports, found through LV2_PATH; its two graph inputs are the plugin's far_end and mic ports
# (the filter's capture stream, FL and FR) and its output the plugin's out (the playback stream, a MONO
# Audio/Source): the configuration the README gives.
# pw-cat plays the bundled demo (far end left, microphone right) into the capture stream and records the
# playback stream. Run twice, with the plugin's bypass control port at 1 (the microphone, delayed by the
# plugin's latency) and at 0: the echo reduction is the level of the one over the other, 3 to 7 s into the
# demo. So it also shows that filter-chain sets the control ports the bundle declares.
#
#   run-pipewire-filter-chain.sh LV2_DIR DEMO_DIR [MIN_DB]     (LV2_DIR holds quell-ports.lv2)
# Exit 77 (skipped) where PipeWire (pipewire, pw-cli, pw-link, pw-cat, the filter-chain module) is missing.
set -uo pipefail
. "$(dirname "$0")/pipewire-test-lib.sh"
lv2Dir=$(realpath "${1:?folder holding quell-ports.lv2}")
demo=$(realpath "${2:?demo folder}")
minDb=${3:-15}
requirePipewireTools
[ -f "$lv2Dir/quell-ports.lv2/manifest.ttl" ] || { echo "FAIL: no quell-ports.lv2 in $lv2Dir"; exit 1; }
spaDir=$(spaPluginDir)
moduleDir=$(pipewireModuleDir libpipewire-module-filter-chain)
[ -f "$moduleDir/libpipewire-module-filter-chain.so" ] \
  || { echo "PipeWire's filter-chain module is missing: skipped"; exit 77; }

makeWorkFolder
usePrivateRuntime "$work/run"
export SPA_PLUGIN_DIR=$spaDir PIPEWIRE_MODULE_DIR=$moduleDir LV2_PATH=$lv2Dir
writeDemoFeed "$demo" "$work/feed.wav"

run() {   # BYPASS OUT.wav
  writeDaemonConfig "$work/pipewire.conf" "
  { name = libpipewire-module-filter-chain
    args = { node.description = \"Quell echo canceller\"  audio.rate = 48000
      filter.graph = {
        nodes = [ { type = lv2  name = quell  plugin = \"urn:quell:aec-ports\"  control = { bypass = $1  suppression = 40 } } ]
        inputs = [ \"quell:far_end\" \"quell:mic\" ]
        outputs = [ \"quell:out\" ] }
      capture.props = { node.name = quell-capture  audio.channels = 2  audio.position = [ FL FR ] }
      playback.props = { node.name = quell-playback  media.class = Audio/Source  audio.channels = 1  audio.position = [ MONO ] } } }"
  setsid pipewire -c "$work/pipewire.conf" > "$work/pipewire-$1.log" 2>&1 < /dev/null &
  daemon=$!
  waitForNodes quell-capture quell-playback \
    || { echo "FAIL: the daemon did not load quell-ports.lv2 in filter-chain"; cat "$work/pipewire-$1.log"; return 1; }
  local player
  startRecorderAndPlayer "$2" || return 1
  portConfig quell-capture Input 2 "FL, FR" && portConfig quell-playback Output 1 MONO \
    && portConfig rec Input 1 MONO && portConfig player Output 2 "FL, FR" || return 1
  sleep 0.3
  pw-link player:output_FL quell-capture:input_FL && pw-link player:output_FR quell-capture:input_FR \
    && pw-link quell-playback:capture_MONO rec:input_MONO \
    || { echo "FAIL: could not link the graph"; timeout 5 pw-link -io; return 1; }
  finishRecording "$player" "$2"
}

run 1 "$work/bypassed.wav" || exit 1
run 0 "$work/cancelled.wav" || exit 1

reportEchoRemoved "PipeWire filter-chain with quell-ports.lv2" bypassed "$work/bypassed.wav" "$work/cancelled.wav" "$minDb"
