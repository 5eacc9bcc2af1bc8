#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `cmake --install BUILD` into a temporary prefix, then checks that what a user runs and loads is there
# and runs from there, and that a program outside the project builds against the installed library.
set -euo pipefail
build=${1:?build folder}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; exit 1; }
rm -f "$prefix.log"
fail() { echo "FAIL: $*"; find "$prefix" -maxdepth 4 | sort; exit 1; }
for program in quell-render quell-live; do
  [ -x "$prefix/bin/$program" ] || fail "bin/$program missing"
  "$prefix/bin/$program" --version | grep -Eq "^$program [0-9]+\.[0-9]+\.[0-9]+ \(git [^)]+\)$" || fail "$program --version from the install"
done
[ -f "$prefix/share/doc/Quell/LICENSE" ] || fail "share/doc/Quell/LICENSE missing"
if grep -q "^QUELL_HELP2MAN:FILEPATH=/" "$build/CMakeCache.txt"; then
  for program in quell-render quell-live; do
    page="$prefix/share/man/man1/$program.1"
    [ -f "$page" ] || fail "share/man/man1/$program.1 missing"
    # Every option the program's --help names is in its page.
    for option in $("$prefix/bin/$program" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
      grep -q -- "$(printf '%s' "$option" | sed 's/-/\\\\-/g')" "$page" || fail "$program.1 lacks $option"
    done
  done
fi
if grep -q "QuellPlugin_VST3" "$build/CMakeCache.txt" 2>/dev/null || [ -d "$build/Plugin" ]; then
  [ -f "$prefix/lib/vst3/Quell.vst3/Contents/x86_64-linux/Quell.so" ] || fail "lib/vst3/Quell.vst3 missing"
  [ -f "$prefix/lib/lv2/Quell.lv2/manifest.ttl" ] || fail "lib/lv2/Quell.lv2 missing"
fi
if grep -q "^QUELL_LV2_PORTS:BOOL=ON" "$build/CMakeCache.txt"; then
  [ -f "$prefix/lib/lv2/quell-ports.lv2/manifest.ttl" ] && [ -x "$prefix/lib/lv2/quell-ports.lv2/quell-ports.so" ] \
    || fail "lib/lv2/quell-ports.lv2 missing"
fi
if grep -q "^QUELL_PIPEWIRE:BOOL=ON" "$build/CMakeCache.txt"; then
  [ -n "$(find "$prefix" -path "*/spa-0.2/aec/libspa-aec-quell.so")" ] || fail "spa-0.2/aec/libspa-aec-quell.so missing"
fi
if grep -q "^QUELL_GSTREAMER:BOOL=ON" "$build/CMakeCache.txt"; then
  plugin=$(find "$prefix" -path "*/gstreamer-1.0/libgstquell.so" | head -1)
  [ -n "$plugin" ] || fail "gstreamer-1.0/libgstquell.so missing"
  if command -v gst-inspect-1.0 > /dev/null; then
    GST_PLUGIN_PATH=$(dirname "$plugin") gst-inspect-1.0 quellaec > /dev/null 2>&1 || fail "gst-inspect-1.0 does not find quellaec in the install"
  fi
fi
# The library: a program outside the project builds against the install, through find_package(Quell)
# and through pkg-config, and cancels an echo.
[ -n "$(find "$prefix" -path "*/cmake/Quell/QuellConfig.cmake")" ] || fail "QuellConfig.cmake missing"
here=$(cd "$(dirname "$0")" && pwd)
consumer="$prefix/consumer-build"
cmake -S "$here/install-consumer" -B "$consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$prefix/consumer.log" 2>&1 \
  && cmake --build "$consumer" >> "$prefix/consumer.log" 2>&1 || { cat "$prefix/consumer.log"; fail "find_package(Quell) consumer does not build"; }
"$consumer/quell-consumer" || fail "find_package(Quell) consumer"
pcdir=$(dirname "$(find "$prefix" -name quell.pc | head -1)")
[ -f "$pcdir/quell.pc" ] || fail "quell.pc missing"
# shellcheck disable=SC2046 # the flags are words
c++ -O2 -o "$prefix/quell-consumer-pc" "$here/install-consumer/main.cpp" $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs quell) \
  || fail "pkg-config quell consumer does not build"
"$prefix/quell-consumer-pc" || fail "pkg-config quell consumer"
rm -rf "$consumer" "$prefix/consumer.log" "$prefix/quell-consumer-pc"
echo "installed: $(cd "$prefix" && find . -maxdepth 3 -mindepth 2 | sort | tr '\n' ' ')"
