#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Packs the quellaec element and the GStreamer plugins its tests use (core elements, audiotestsrc,
# audioconvert, wavparse, wavenc), with the shared libraries they need, into DEST/gst and DEST/lib, so
# that quell-gst-tests runs on a machine without Debian's packages. Run there with
#   GST_PLUGIN_SYSTEM_PATH_1_0=DEST/gst GST_REGISTRY_FORK=no LD_LIBRARY_PATH=DEST/lib DEST/bin/quell-gst-tests
#   Tests/gpu/pack-gstreamer.sh BUILD_DIR DEST
set -euo pipefail
build=${1:?build dir}
dest=${2:?destination}
mkdir -p "$dest/gst" "$dest/lib"
system=$(pkg-config --variable=pluginsdir gstreamer-1.0)
plugins=("$build/lib/gstreamer-1.0/libgstquell.so")
for p in coreelements audiotestsrc audioconvert wavparse wavenc; do plugins+=("$system/libgst$p.so"); done
for p in "${plugins[@]}"; do
  cp "$p" "$dest/gst/"
  for lib in $(ldd "$p" | awk '/=> \// {print $3}' \
      | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libpthread|libdl|librt|libcuda|libcufft|libcudart|libcublas|libcublasLt)[.-]' || true); do
    cp -nL "$lib" "$dest/lib/"
  done
done
du -sh "$dest/gst"
