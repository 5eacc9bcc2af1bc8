#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Packs espeak-ng (the program, the shared libraries it needs and its English data, about 14 MB) into
# DEST/esp, so that quell-corpus can make the corpus's speech on a machine without Debian's packages
# (Tests/gpu/run-device-checks.sh sets PATH, LD_LIBRARY_PATH and ESPEAK_DATA_PATH for it).
#   Tests/gpu/pack-espeak.sh DEST
set -euo pipefail
dest=${1:?destination}/esp
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib" "$dest/share"
exe=$(command -v espeak-ng)
cp "$exe" "$dest/bin/"
for lib in $(ldd "$exe" | awk '/=> \// {print $3}' | grep -vE '/(libc|libm|ld-linux)[.-]'); do cp -nL "$lib" "$dest/lib/"; done
data=$(dirname "$(readlink -f "$(dpkg -L espeak-ng-data | grep '/espeak-ng-data/phontab$')")")
cp -r "$data" "$dest/share/"
# English only: every other language's dictionary is most of the data.
find "$dest/share/espeak-ng-data" -maxdepth 1 -name '*_dict' ! -name 'en_dict' -delete
du -sh "$dest"
