#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Packs the built programs and the shared libraries they need (those the GPU machine lacks: libsndfile
# and its codecs, PortAudio, ...) into one folder, to be carried to a machine that has CUDA but none of
# Debian's packages.  Usage: Tests/gpu/pack-for-device.sh BUILD_DIR DEST_DIR
# Run there with: LD_LIBRARY_PATH=DEST_DIR/lib DEST_DIR/bin/quell-gpu-tests
set -euo pipefail
build=${1:?build dir}
dest=${2:?destination}
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib"
for exe in "$build"/bin/*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  cp "$exe" "$dest/bin/"
  # Skip the C/C++ runtime and the CUDA libraries: the GPU machine has its own, matching its driver.
  libs=$(ldd "$exe" | awk '/=> \// {print $3}' \
    | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libpthread|libdl|librt|libcuda|libcufft|libcudart|libcublas|libcublasLt)[.-]' || true)
  for lib in $libs; do cp -nL "$lib" "$dest/lib/"; done
done
strip --strip-debug "$dest"/bin/* 2>/dev/null || true
du -sh "$dest"
