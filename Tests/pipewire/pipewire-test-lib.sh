# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by the scripts that run Quell inside a private PipeWire daemon (sourced, not run). With no
# session manager the scripts do its part: each node's port layout and the links.

# Exit 77 (skipped) where a tool is missing.
requirePipewireTools() {
  local tool
  for tool in pipewire pw-cli pw-link pw-cat python3; do
    command -v "$tool" > /dev/null || { echo "$tool not installed (Debian: pipewire pipewire-bin): skipped"; exit 77; }
  done
}

# The daemon's runtime, in a fresh folder, with no D-Bus and no other daemon reachable.
usePrivateRuntime() {   # FOLDER
  mkdir -p "$1"
  export XDG_RUNTIME_DIR=$1 PIPEWIRE_RUNTIME_DIR=$1
  unset DBUS_SESSION_BUS_ADDRESS PIPEWIRE_REMOTE
}

# The bundled demo as one 16-bit file, far end left and microphone right (so they stay in step), after
# one second of silence (the links are made while it plays).
writeDemoFeed() {   # DEMO_DIR OUT.wav
  python3 - "$1" "$2" <<'EOF'
import array, sys, wave
def read(path):
    w = wave.open(path)
    return array.array('h', w.readframes(w.getnframes())), w.getframerate()
ref, rate = read(sys.argv[1] + '/ref.wav')
mic, _ = read(sys.argv[1] + '/mic.wav')
pad = array.array('h', [0] * rate)
ref, mic = pad + ref, pad + mic
both = array.array('h', [0] * (2 * len(ref)))
both[0::2], both[1::2] = ref, mic
out = wave.open(sys.argv[2], 'wb')
out.setnchannels(2); out.setsampwidth(2); out.setframerate(rate); out.writeframes(both.tobytes()); out.close()
EOF
}

nodeId() {   # NODE_NAME
  timeout 5 pw-cli ls Node | awk -v n="\"$1\"" '/id [0-9]+,/ {gsub(",", "", $2); id = $2} $0 ~ "node.name = " n {print id}' | head -1
}

portConfig() {   # NODE Input|Output CHANNELS POSITIONS [MONITOR]
  local id
  id=$(nodeId "$1")
  [ -n "$id" ] || { echo "FAIL: no node $1"; return 1; }
  timeout 5 pw-cli set-param "$id" PortConfig "{ direction: $2, mode: dsp, monitor: ${5:-false}, format: { mediaType: audio, mediaSubtype: raw, format: F32P, rate: 48000, channels: $3, position: [ $4 ] } }" > /dev/null
}

waitForNodes() {   # NODE_NAME ...: up to 5 s
  local name missing
  for _ in $(seq 50); do
    missing=""
    for name in "$@"; do [ -n "$(nodeId "$name")" ] || missing=$name; done
    [ -z "$missing" ] && return 0
    sleep 0.1
  done
  echo "FAIL: no node $missing"
  return 1
}

# The recording's level 3 to 7 s after its first sound, in dB (of 16-bit full scale squared); fails on a
# silent or short recording.
demoLevelDb() {   # RECORDING.wav
  python3 - "$1" <<'EOF'
import array, math, sys, wave
w = wave.open(sys.argv[1])
rate = w.getframerate()
a = array.array('h', w.readframes(w.getnframes()))
start = next((i for i, v in enumerate(a) if abs(v) > 3), None)
seg = a[start + 3 * rate:start + 7 * rate] if start is not None else []
if len(seg) < 3.9 * rate:
    print("FAIL: %s is silent or short" % sys.argv[1], file=sys.stderr); sys.exit(1)
print("%.2f" % (10 * math.log10(sum(v * v for v in seg) / len(seg) + 1e-9)))
EOF
}

# A daemon at 48 kHz in 10 ms quanta, driven by a dummy driver: the modules any graph here needs, then
# MODULE (one more module's entry) and OBJECTS (more context objects).
writeDaemonConfig() {   # FILE MODULE [OBJECTS]
  cat > "$1" <<EOF
context.properties = { core.daemon = true  core.name = pipewire-0  default.clock.rate = 48000
  default.clock.quantum = 480  default.clock.min-quantum = 480  default.clock.max-quantum = 480
  support.dbus = false  mem.allow-mlock = false  log.level = 2 }
context.spa-libs = { audio.convert.* = audioconvert/libspa-audioconvert  support.* = support/libspa-support }
context.modules = [
  { name = libpipewire-module-protocol-native }
  { name = libpipewire-module-spa-node-factory }
  { name = libpipewire-module-access }
  { name = libpipewire-module-client-node }
  { name = libpipewire-module-adapter }
  { name = libpipewire-module-link-factory }
  $2
]
context.objects = [
  { factory = spa-node-factory
    args = { factory.name = support.node.driver  node.name = Dummy-Driver  priority.driver = 20000 } }
  ${3:-}
]
EOF
}

# After the player (PID) ends: the recorder writing OUT.wav stopped, then the daemon ($daemon, cleared).
finishRecording() {   # PLAYER_PID OUT.wav
  for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  sleep 0.5
  pkill -f "pw-cat -r .*$2"
  sleep 0.3
  kill -9 "$daemon" 2>/dev/null
  wait "$daemon" 2>/dev/null
  daemon=""
}

# The folder of SPA's plugins (pkg-config's answer, else Debian's amd64 path).
spaPluginDir() {
  pkg-config --variable=plugindir libspa-0.2 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/spa-0.2
}

# The folder of PipeWire's modules that holds MODULE.so (empty where none does).
pipewireModuleDir() {   # MODULE
  local found
  found=$(find /usr/lib /usr/local/lib -name "$1.so" 2>/dev/null | head -1)
  [ -n "$found" ] && dirname "$found"
}

# A temporary folder ($work), removed at exit with the pw-cat clients and the daemon ($daemon) stopped.
makeWorkFolder() {
  work=$(mktemp -d)
  daemon=""
  trap removeWorkFolder EXIT
}
removeWorkFolder() {
  pkill -f "pw-cat .*$work" 2>/dev/null
  [ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
  rm -rf "$work"
}

# pw-cat recording OUT.wav (node "rec", mono) and playing $work/feed.wav (node "player"); sets $player.
startRecorderAndPlayer() {   # OUT.wav
  setsid pw-cat -r --rate 48000 --channels 1 --format s16 -P '{ node.name = rec }' "$1" > "$work/rec.log" 2>&1 < /dev/null &
  setsid pw-cat -p -P '{ node.name = player }' "$work/feed.wav" > "$work/player.log" 2>&1 < /dev/null &
  player=$!
  waitForNodes rec player
}

# Prints "WHAT: REFERENCE_NAME x dB, output y dB: x - y dB of echo removed" from the two recordings'
# demoLevelDb; succeeds when x - y is at least MIN_DB.
reportEchoRemoved() {   # WHAT REFERENCE_NAME REFERENCE.wav OUTPUT.wav MIN_DB
  local reference output
  reference=$(demoLevelDb "$3") && output=$(demoLevelDb "$4") || return 1
  python3 - "$1" "$2" "$reference" "$output" "$5" <<'EOF'
import sys
what, name = sys.argv[1:3]
reference, output, least = (float(v) for v in sys.argv[3:6])
print("%s: %s %.1f dB, output %.1f dB: %.1f dB of echo removed, 3-7 s into the demo" % (what, name, reference, output, reference - output))
sys.exit(0 if reference - output >= least else 1)
EOF
}
