#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs quell-eval over a corpus with one process per scenario, JOBS at a time (a many-core machine runs the
# full corpus in minutes), and joins their outputs in the corpus's order:
#   Tests/eval/run-corpus-parallel.sh QUELL_EVAL CORPUS_DIR OUT_PREFIX JOBS [quell-eval options ...]
# Writes OUT_PREFIX.txt (the table and its legend) and OUT_PREFIX.md (the comparison table); exits 1 when a
# scenario's run failed (its output is kept in OUT_PREFIX.failed/).
set -euo pipefail
eval_bin=${1:?quell-eval}
corpus=$(cd "${2:?corpus dir}" && pwd)
prefix=${3:?output prefix}
jobs=${4:?jobs}
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
header=$(head -n 1 "$corpus/manifest.tsv")
names=$(tail -n +2 "$corpus/manifest.tsv" | cut -f 1)
i=0
for name in $names; do
  dir="$work/$(printf '%03d' $i)"
  mkdir -p "$dir/corpus"
  ln -s "$corpus/$name" "$dir/corpus/$name"
  { echo "$header"; grep -P "^\Q$name\E\t" "$corpus/manifest.tsv"; } > "$dir/corpus/manifest.tsv"
  i=$((i + 1))
done
export eval_bin
printf '%s\n' "$work"/[0-9]* | xargs -P "$jobs" -I{} sh -c '"$eval_bin" --corpus {}/corpus --markdown {}/table.md "$@" > {}/out.txt 2>&1 || touch {}/failed' sh "$@"
failed=0
: > "$prefix.txt"
: > "$prefix.md"
first=1
for dir in "$work"/[0-9]*; do
  if [ -e "$dir/failed" ]; then
    mkdir -p "$prefix.failed"
    cp "$dir/out.txt" "$prefix.failed/$(basename "$dir").txt"
    failed=1
    continue
  fi
  if [ $first = 1 ]; then
    # The table's header (and the latency notes before it) once, from the first scenario.
    sed -n '1,/^scenario /p' "$dir/out.txt" >> "$prefix.txt"
    head -n 2 "$dir/table.md" >> "$prefix.md"
    first=0
  fi
  sed -n '/^scenario /,/^$/p' "$dir/out.txt" | sed '1d;/^$/d' >> "$prefix.txt"
  tail -n +3 "$dir/table.md" >> "$prefix.md"
  last=$dir
done
# The legend and the cancellers' descriptions, once.
[ -n "${last:-}" ] && sed -n '/^columns:/,$p' "$last/out.txt" >> "$prefix.txt"
exit $failed
