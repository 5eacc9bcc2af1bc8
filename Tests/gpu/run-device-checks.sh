#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The GPU checks of a change on a CUDA machine that has none of Debian's packages, in two stages that
# each fit a 10-minute command: the folder CARRY holds what Tests/gpu/pack-for-device.sh packed (bin/,
# lib/) and, for the corpus's speech, espeak-ng with its libraries and English data (esp/bin, esp/lib,
# esp/share/espeak-ng-data; Tests/gpu/pack-espeak.sh).
#   Tests/gpu/run-device-checks.sh tests CARRY OUT [JOBS]   quell-gpu-tests; the corpora; quell-eval on the
#       physical corpus (GPU at 4096 taps, and CPU at 1024 taps on JOBS cores), CI's short corpus on the GPU
#       with its targets asserted. OUT: log.txt, gpu-tests.log, eval-gpu.txt/.md, eval-cpu1024.txt/.md,
#       eval-short-gpu.txt.
#   Tests/gpu/run-device-checks.sh bench CARRY OUT          quell-bench rls and engine (quick). OUT: bench.log.
#   Tests/gpu/run-device-checks.sh gpu-tests CARRY OUT      quell-gpu-tests alone. OUT: gpu-tests.log.
#   Tests/gpu/run-device-checks.sh multistream CARRY OUT [OPTIONS...]
#       quell-gpu-tests, the demo on the GPU, then quell-bench multistream with the options (e.g. --seconds 5
#       --taps 512,2048). OUT: gpu-tests.log, demo.log, demo-metrics.json, multistream.log, multistream.json.
#   Tests/gpu/run-device-checks.sh engine CARRY OUT NAME [OPTIONS...]
#       quell-bench engine with the options (e.g. --only blocks --blocks 128 --seconds 570). OUT: NAME.log,
#       NAME.json.
#   Tests/gpu/run-device-checks.sh probe CARRY OUT NAMES "OPTIONS" ["OPTIONS" ...]
#       the named scenarios of the physical corpus (comma-separated, quell-corpus --only) through quell-eval
#       once per option set (each in quotes, e.g. "--taps 4096 --backend gpu --no-restart"). OUT: probe-K.txt.
set -uo pipefail
stage=${1:?tests or bench}
carry=$(cd "${2:?carry folder}" && pwd)
out=${3:?output folder}
jobs=${4:-12}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH="$carry/lib:$carry/esp/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="$carry/bin:$carry/esp/bin:$PATH"
export ESPEAK_DATA_PATH="$carry/esp/share"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv; echo "cores: $(nproc)"; } > "$out/log.txt" 2>&1

case "$stage" in
tests)
  work=$(mktemp -d)
  # The corpora, made here (deterministic: the same program and voices as on the development machine).
  (quell-corpus --out "$work/full" && quell-corpus --short --rir-ms 14 --out "$work/s14") >> "$out/log.txt" 2>&1 &
  corpus=$!
  quell-gpu-tests > "$out/gpu-tests.log" 2>&1
  echo "quell-gpu-tests exit $?" >> "$out/gpu-tests.log"
  wait $corpus || { echo "corpus failed" >> "$out/log.txt"; exit 1; }
  # The CPU rows in the background on most cores; the GPU rows a few at a time.
  "$here/Tests/eval/run-corpus-parallel.sh" "$carry/bin/quell-eval" "$work/full" "$out/eval-cpu1024" "$jobs" --taps 1024 --backend cpu &
  cpu=$!
  "$here/Tests/eval/run-corpus-parallel.sh" "$carry/bin/quell-eval" "$work/full" "$out/eval-gpu" 3 --taps 4096 --backend gpu --no-peers
  echo "eval-gpu exit $?" >> "$out/log.txt"
  quell-eval --corpus "$work/s14" --taps 256 --backend gpu --assert --no-peers > "$out/eval-short-gpu.txt" 2>&1
  echo "exit $?" >> "$out/eval-short-gpu.txt"
  # The README's demo with every default (the automatic backend and filter length): what a user gets here.
  quell-render --mic "$here/Resources/demo/mic.wav" --ref "$here/Resources/demo/ref.wav" --out "$work/demo.wav" \
    --metrics "$out/demo-metrics.json" > "$out/demo.log" 2>&1
  echo "exit $?" >> "$out/demo.log"
  wait $cpu
  echo "eval-cpu1024 exit $?" >> "$out/log.txt"
  rm -rf "$work"
  ;;
bench)
  work=$(mktemp -d)
  { quell-bench rls --quick --json "$work/rls.json"; quell-bench engine --quick --json "$work/engine.json"; } > "$out/bench.log" 2>&1
  rm -rf "$work"
  ;;
gpu-tests)
  quell-gpu-tests > "$out/gpu-tests.log" 2>&1
  echo "quell-gpu-tests exit $?" >> "$out/gpu-tests.log"
  ;;
multistream)
  shift 3
  quell-gpu-tests > "$out/gpu-tests.log" 2>&1
  echo "quell-gpu-tests exit $?" >> "$out/gpu-tests.log"
  work=$(mktemp -d)
  quell-render --mic "$here/Resources/demo/mic.wav" --ref "$here/Resources/demo/ref.wav" --out "$work/demo.wav" \
    --metrics "$out/demo-metrics.json" > "$out/demo.log" 2>&1
  echo "exit $?" >> "$out/demo.log"
  rm -rf "$work"
  quell-bench multistream --json "$out/multistream.json" "$@" > "$out/multistream.log" 2>&1
  echo "exit $?" >> "$out/multistream.log"
  ;;
engine)
  name=${4:?run name}
  shift 4
  quell-bench engine --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
  echo "exit $?" >> "$out/$name.log"
  ;;
probe)
  names=${4:?scenario names}
  shift 4
  work=$(mktemp -d)
  quell-corpus --out "$work/full" --only "$names" >> "$out/log.txt" 2>&1 || { echo "corpus failed" >> "$out/log.txt"; exit 1; }
  k=0
  for options in "$@"; do
    # shellcheck disable=SC2086 # the option set is a word list
    { echo "options: $options"; quell-eval --corpus "$work/full" $options; echo "exit $?"; } > "$out/probe-$k.txt" 2>&1
    k=$((k + 1))
  done
  rm -rf "$work"
  ;;
*)
  echo "usage: $0 tests|bench|gpu-tests|engine|probe CARRY OUT ..." >&2
  exit 2
  ;;
esac
