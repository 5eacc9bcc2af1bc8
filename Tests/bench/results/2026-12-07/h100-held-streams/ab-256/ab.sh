#!/usr/bin/env bash
# A/B of the shared engine at 256 live pipelines: the new plugin against 06e2c32's, the same binaries otherwise.
set -u
mkdir -p /tmp/c && tar xJf .carry/x.tar.xz -C /tmp/c
mkdir -p /tmp/c/gst-old && cp /tmp/c/gst/*.so /tmp/c/gst-old/ && cp .carry/libgstquell-old.so /tmp/c/gst-old/libgstquell.so
export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64
{ date -u; nvidia-smi -L; echo "cores: $(nproc)"; } > $OUT/gpu.txt 2>&1
export GST_REGISTRY_FORK=no
for v in ${ORDER:-new old}; do
  dir=/tmp/c/gst; [ $v = old ] && dir=/tmp/c/gst-old
  t1=$(date +%s)
  GST_PLUGIN_PATH=$dir GST_PLUGIN_SYSTEM_PATH_1_0=$dir QUELL_GST_LIVE_PIPELINES=${N:-256} QUELL_GST_LIVE_SECONDS=20 \
    timeout 110 /tmp/c/bin/quell-gst-tests "[live][gpu]" > $OUT/gst-live-${N:-256}-$v.log 2>&1
  echo "rc $? after $(( $(date +%s) - t1 )) s" >> $OUT/gst-live-${N:-256}-$v.log
done
