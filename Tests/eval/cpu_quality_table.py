#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""One markdown table from several quell-eval --json runs on the same corpus: Quell's figures per run
(a column group each: steady ERLE, time to 20 dB, near-end SNR after the fit, loudest frame) beside the
best peer's (the peer of the highest steady ERLE, with its loudest frame, and the peer of the best near-end
SNR), for the README's CPU quality table (issue 14: the Kalman filter, RLS, NLMS and the peers).

usage: cpu_quality_table.py --column LABEL=RUN.json [--column ...] --peers RUN.json [--out TABLE.md]

Each --column takes the "quell" rows of its run; --peers takes the peers' rows (speex, speex+res,
webrtc) of a run made without --no-peers. A scenario missing from a run shows "n/a" there (a run
made with --exclude); a figure that does not apply shows "-", as quell-eval prints it.
"""
import argparse
import os
import json
import sys

PEERS = ("speex", "speex+res", "webrtc")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"cpu_quality_table.py: cannot read {path}: {e}")
    rows = {}
    for r in data.get("results", []):
        rows.setdefault(r["scenario"], {})[r["canceller"]] = r
    return data.get("corpus"), rows


def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--column", action="append", required=True, metavar="LABEL=RUN.json")
    parser.add_argument("--peers", required=True, metavar="RUN.json")
    parser.add_argument("--out", metavar="TABLE.md", help="write here instead of standard output")
    args = parser.parse_args()

    columns = []
    for spec in args.column:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            sys.exit(f"cpu_quality_table.py: --column wants LABEL=RUN.json, got '{spec}'")
        columns.append((label, load(path)[1]))
    _, peers = load(args.peers)

    scenarios = list(peers.keys())
    for _, rows in columns:
        scenarios += [s for s in rows if s not in scenarios]

    header = ["scenario"]
    for label, _ in columns:
        header += [f"{label}: ERLE", "t20 s", "near SNR (fit)", "loudest"]
    header += ["best peer ERLE", "its loudest", "best peer near SNR (fit)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for scenario in scenarios:
        cells = [scenario]
        for _, rows in columns:
            q = rows.get(scenario, {}).get("quell")
            if q is None:
                cells += ["n/a"] * 4
                continue
            cells += [fmt(q["steadyErleDb"]), fmt(q["timeTo20dB"], 2), fmt(q["nearSnrFitDb"]), fmt(q["loudestFrameDb"])]
        present = [(name, r) for name, r in peers.get(scenario, {}).items() if name in PEERS]

        def best(key, pick):
            found = [(r[key], name) for name, r in present if r.get(key) is not None]
            if not found:
                return "-"
            value, name = pick(found)
            return f"{value:.1f} ({name})"

        erle = [(r["steadyErleDb"], name) for name, r in present if r.get("steadyErleDb") is not None]
        if erle:
            value, name = max(erle)
            cells += [f"{value:.1f} ({name})", fmt(peers[scenario][name]["loudestFrameDb"])]
        else:
            cells += ["-", "-"]
        cells.append(best("nearSnrFitDb", max))
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(args.out + ".tmp", args.out)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
