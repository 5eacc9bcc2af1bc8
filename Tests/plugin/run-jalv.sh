#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The LV2 in a real LV2 host outside JUCE: jalv under JACK's dummy driver (no sound card needed) for
# 12 s. A metronome (jack_metro) is the far end: it feeds the sidechain and, as its "echo", the
# microphone input too. The plugin's output and the metronome are recorded (jack_rec); when python3 is
# there, the echo reduction over the last 5 s is computed and must be at least 10 dB.
# Usage: run-jalv.sh path/to/Quell.lv2 PLUGIN_URI
# Exits 77 (ctest: skipped) when jackd or jalv is not installed.
set -uo pipefail
bundle=$1
uri=$2
# JACK's graph has been seen to stall for good (the dummy driver reporting "client = quell was not
# finished" and then "Process error" on every cycle, jack_rec waiting for frames that never come) twice in
# full CI runs: once at 9b630dc, once at 03cfdd8, each time passing on its own, 7 times in a row at
# 03cfdd8. The cause is not found. Such a run exits 3, and the whole session (jackd, jalv, the clients) is
# started once more; a second stall, and every other failure, fails the test.
if [ -z "${QUELL_JALV_ATTEMPT:-}" ]; then
  QUELL_JALV_ATTEMPT=1 bash "$0" "$@"
  code=$?
  [ $code -eq 3 ] || exit $code
  echo "note: JACK's graph stalled; the session is started once more"
  QUELL_JALV_ATTEMPT=2 bash "$0" "$@"
  code=$?
  [ $code -eq 3 ] && exit 1
  exit $code
fi
for tool in jackd jalv jack_lsp jack_connect jack_metro lv2ls; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool not installed (apt-get install jackd2 jalv lilv-utils)"; exit 77; }
done

work=$(mktemp -d)
# One server name per bundle, not per run: JACK keeps a server registry in shared memory with eight
# slots, and a slot left by a server that did not exit cleanly is reclaimed only by a server of the same
# name; names that change every run fill it ("Too many servers already active").
# JACK names a client's socket by client name and user, not by server, so two JACK runs at once take each
# other's sockets (jack_lsp's and jack_connect's too): ctest holds every JACK test under RESOURCE_LOCK jack.
server="quell-test-$(basename "$bundle" .lv2)"
client=quell
metroClient=farend
export JACK_DEFAULT_SERVER=$server
export JACK_NO_AUDIO_RESERVATION=1
export LV2_PATH=$(cd "$(dirname "$bundle")" && pwd)
pids=()
# Stop the clients first and jackd (pids[0]) last, each given up to 10 s to exit on SIGTERM: a jackd
# killed before it has unregistered leaves its slot and shared memory behind.
stopProcess() {
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || { wait "$1" 2>/dev/null; return 0; }; sleep 0.1; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
cleanup() {
  exec 3>&-
  for ((i=${#pids[@]}-1; i>=0; i--)); do stopProcess "${pids[i]}"; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- jackd ---"; cat "$work/jackd.log"; echo "--- jalv ---"; cat "$work/jalv.log"; exit 1; }
stalled() { echo "STALLED (attempt $QUELL_JALV_ATTEMPT): $*"; echo "--- jackd ---"; head -20 "$work/jackd.log"; exit 3; }

lv2ls | grep -qx "$uri" || fail "lv2ls does not list $uri under LV2_PATH=$LV2_PATH"

jackd --no-realtime -n "$server" -d dummy -r 48000 -p 256 >"$work/jackd.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do jack_lsp >/dev/null 2>&1 && break; sleep 0.2; done
jack_lsp >/dev/null 2>&1 || fail "jackd (dummy driver) did not start"

# jalv reads commands from stdin: give it a FIFO this script holds open (and never writes to).
mkfifo "$work/stdin"
jalv -p -x -n "$client" "$uri" <"$work/stdin" >"$work/jalv.log" 2>&1 &
jalvPid=$!
pids+=($jalvPid)
exec 3>"$work/stdin"
jack_metro -n "$metroClient" -b 240 -f 660 >"$work/metro.log" 2>&1 &
pids+=($!)
# jalv registers its ports one at a time while it activates the plugin: a list read in between lacks the
# sidechain (or names another input as the last one), so wait until the client's ports and the metronome's
# have stayed the same for a second, with at least two audio inputs and one output, for at most 30 s.
# One line per audio port: "name<TAB>properties<TAB>type" (jack_lsp prints the details on indented lines
# after each name; grep -A1 with paste pairs them wrongly as soon as grep inserts a "--" separator).
portTable() {
  jack_lsp -p -t 2>/dev/null | awk '/^[^\t]/ { if (n != "") print n d; n = $0; d = ""; next } { sub(/^\t+/, ""); d = d "\t" $0 } END { if (n != "") print n d }' |
    grep -v 'midi\|control\|event\|atom'
}
portsNow() { portTable | grep -E "^($client|$metroClient):"; }
previous=""
stable=0
for _ in $(seq 150); do
  now=$(portsNow)
  audioIn=$(grep -c "^$client:.*input" <<<"$now")
  audioOut=$(grep -c "^$client:.*output" <<<"$now")
  if [ -n "$now" ] && [ "$now" = "$previous" ] && [ "$audioIn" -ge 2 ] && [ "$audioOut" -ge 1 ] && grep -q "^$metroClient:" <<<"$now"; then
    stable=$((stable + 1))
    [ $stable -ge 5 ] && break
  else
    stable=0
  fi
  previous=$now
  sleep 0.2
done
jack_lsp | grep -q "^$client:" || fail "jalv did not register its JACK ports"
[ $stable -ge 5 ] || echo "note: the plugin's JACK ports did not settle within 30 s"

echo "JACK ports of the plugin:"
portTable | grep "^$client:" | sed 's/^/  /'
mapfile -t inputs < <(portTable | grep "^$client:" | grep -P '\tproperties: input' | cut -f1)
mapfile -t outputs < <(portTable | grep "^$client:" | grep -P '\tproperties: output' | cut -f1)
[ ${#inputs[@]} -ge 2 ] || fail "expected a microphone and a sidechain input, got: ${inputs[*]}"
# JUCE names the LV2 ports by bus: the last audio input is the sidechain.
mic=${inputs[0]}
side=${inputs[${#inputs[@]}-1]}
metro=$(jack_lsp | grep "^$metroClient:" | head -1)
jack_connect "$metro" "$mic" || fail "connect microphone"
jack_connect "$metro" "$side" || fail "connect sidechain"
for o in "${outputs[@]}"; do
  case "$o" in *midi*|*event*|*atom*) ;; *) jack_connect "$o" system:playback_1 || true ;; esac
done
echo "connections:"
jack_lsp -c | sed 's/^/  /'
jack_lsp -c "$side" | grep -q "$metroClient" || fail "sidechain not connected"

outPort=$(printf '%s\n' "${outputs[@]}" | grep -v 'midi\|event\|atom' | head -1)
# jack_rec has been seen to hang after its duration (once in CI, not reproduced): wait for it at most 20 s
# past the end, and record once more if it did not finish, rather than hang the suite.
record() {
  rm -f "$work/rec.wav"
  jack_rec -f "$work/rec.wav" -d "$1" -b 16 "$metro" "$outPort" >"$work/rec.log" 2>&1 &
  recPid=$!
  pids+=($recPid)
  for _ in $(seq $(( ($1 + 20) * 10 ))); do kill -0 "$recPid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$recPid" 2>/dev/null
  echo "note: jack_rec did not finish within 20 s after its $1 s"
  return 1
}
record 12 &
recorder=$!
sleep 12.5
kill -0 "$jalvPid" 2>/dev/null || fail "jalv exited during the run"
kill -0 "${pids[0]}" 2>/dev/null || fail "jackd exited during the run"
if grep -qi "error\|xrun" "$work/jalv.log"; then
  echo "note: jalv printed:"; grep -i "error\|xrun" "$work/jalv.log" | head
fi
echo "--- jalv output ---"; head -40 "$work/jalv.log"
if ! wait "$recorder"; then
  record 8 || stalled "jack_rec hung twice"
fi
if command -v python3 >/dev/null && [ -s "$work/rec.wav" ]; then
  python3 - "$work/rec.wav" <<'PY' || fail "echo not reduced by 10 dB in jalv"
import sys, wave, array, math
w = wave.open(sys.argv[1])
rate, ch, n = w.getframerate(), w.getnchannels(), w.getnframes()
x = array.array('h', w.readframes(n))
far, out = x[0::ch], x[1::ch]
tail = slice(max(0, len(far) - 5 * rate), len(far))
ef = sum(v * v for v in far[tail]) + 1e-9
eo = sum(v * v for v in out[tail]) + 1e-9
erle = 10 * math.log10(ef / eo)
print(f"jalv run: {len(far) / rate:.1f} s recorded; echo reduction over the last 5 s: {erle:.1f} dB "
      f"(metronome {10 * math.log10(ef / max(1, len(far[tail])) / 32768**2):.1f} dBFS)")
sys.exit(0 if erle >= 10.0 else 1)
PY
else
  echo "note: python3 or the recording missing: echo reduction not measured"
fi
echo "PASSED: jalv ran $uri for 12 s under JACK's dummy driver with the sidechain connected"
exit 0
