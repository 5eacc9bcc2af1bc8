#!/usr/bin/env bash
# GPU tests, 64 live GStreamer pipelines on the GPU, the Kalman streams bench (quick), then the GPU RLS
# (4096 taps) on the physical corpus's files the echo-burst rule moves, rule on (the default).
set -u
mkdir -p /tmp/c && tar xJf .carry/x.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/lib:/tmp/c/esp/lib:/usr/local/cuda/lib64 ESPEAK_DATA_PATH=/tmp/c/esp/share PATH=/tmp/c/bin:/tmp/c/esp/bin:$PATH
{ date -u; nvidia-smi -L; nproc; git log --oneline -1 | cut -c1-60; } > $OUT/info.txt 2>&1
( quell-corpus --out /tmp/full --only speech-rt300-enr30-stereo,speech-rt300-enr30-stereo2mic,speech-rt300-enr30-dt-stereo,music-rt300-enr30,speech-rt300-enr30-dt,near-only-rt300 > $OUT/corpus.log 2>&1 ) &
( time timeout 200 quell-gpu-tests -d yes ) > $OUT/gpu-tests.log 2>&1; echo "exit $?" >> $OUT/gpu-tests.log
( time GST_PLUGIN_PATH=/tmp/c/gst GST_PLUGIN_SYSTEM_PATH_1_0=/tmp/c/gst GST_REGISTRY_FORK=no QUELL_GST_LIVE_PIPELINES=64 QUELL_GST_LIVE_SECONDS=20 timeout 100 quell-gst-tests "[live][gpu]" ) > $OUT/gst-live-64.log 2>&1; echo "exit $?" >> $OUT/gst-live-64.log
( time timeout 80 quell-bench kalman --quick --json $OUT/kalman.json ) > $OUT/kalman.log 2>&1; echo "exit $?" >> $OUT/kalman.log
wait
( time timeout 80 quell-eval --corpus /tmp/full --taps 4096 --backend gpu --no-peers --json $OUT/eval-gpu.json ) > $OUT/eval-gpu.txt 2>&1; echo "exit $?" >> $OUT/eval-gpu.txt
date -u >> $OUT/info.txt
( time timeout 80 quell-eval-off --corpus /tmp/full --taps 4096 --backend gpu --no-peers --json $OUT/eval-gpu-off.json ) > $OUT/eval-gpu-off.txt 2>&1; echo "exit $?" >> $OUT/eval-gpu-off.txt
date -u >> $OUT/info.txt
