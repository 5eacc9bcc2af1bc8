#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Regenerates the bundled demo (Resources/demo/*.wav, scenario.json) with quell-corpus.
#   Resources/demo/make-demo.sh [BUILD_DIR]     (default: build, relative to the repository root)
# Needs espeak-ng (the far-end voice) and a build with the tests enabled (quell-corpus is built from
# Tests/corpus; this script builds that one target if it is missing). README.md beside this script
# says what the files are.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-"$root/build"}
case "$build" in /*) ;; *) build="$root/$build" ;; esac

if ! command -v espeak-ng >/dev/null 2>&1; then
    echo "make-demo.sh: espeak-ng is not installed (Debian: apt-get install espeak-ng)" >&2
    exit 1
fi
corpus="$build/bin/quell-corpus"
if [ ! -x "$corpus" ]; then
    if [ ! -f "$build/CMakeCache.txt" ]; then
        echo "make-demo.sh: no configured build in $build (run cmake -S $root -B $build first)" >&2
        exit 1
    fi
    cmake --build "$build" --target quell-corpus
fi
"$corpus" --demo --out "$here"
