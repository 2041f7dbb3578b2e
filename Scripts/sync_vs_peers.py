#!/usr/bin/env python3
"""Issue 35's comparison in one run: `magnets-bench sync` (two files, each with M concurrent
moves, one whole-process, durable `magnets sync`) beside `peers.py` (Loro's and Yrs' in-memory
exchange of the same moves through their Python bindings), and the ratio of the two-way times.

    Scripts/sync_vs_peers.py [--bench .build/release/magnets-bench] [--m 50000] [--reps 3]

Needs a release build (`swift build -c release --product magnets-bench && swift build -c
release --product magnets`) and `pip install pycrdt==0.14.13 loro==1.17.1` (the versions
../shared/bench/peers/README.md reports). A peer's two-way time is its encode A→B + import
into B + encode B→A + import into A, each the median of `--reps`; magnets' is the median of its
`sync` runs at the same M. Both run one after the other on this machine: figures taken while
other work runs are noisy, and only the ratios of one run compare.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def magnets_sync(bench):
    """The `magnets-bench sync` table: {M: median ms}, and its output."""
    out = subprocess.run([bench, "sync"], check=True, capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        match = re.match(r"^(\d+)\s*\|\s*([\d.]+) ms", line)
        if match:
            times[int(match.group(1))] = float(match.group(2))
    return times, out


def peers(script, m, reps, libs):
    """{lib: (two-way ms, delta bytes a move A→B)} from one `peers.py` run at M = `m`."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "peers.json")
        subprocess.run(
            [sys.executable, script, "--m", str(m), "--reps", str(reps), "--libs", libs, "--json", path,
             "--tmpdir", folder],
            check=True, stdout=subprocess.DEVNULL, cwd=os.path.dirname(script))
        with open(path) as f:
            summary = json.load(f)["summary"]
    result = {}
    for lib, s in summary.items():
        keys = ["encode_ab_s", "import_b_s", "encode_ba_s", "import_a_s"]
        if all(k in s for k in keys):
            delta = s["delta_ab_bytes"]
            delta = delta["median"] if isinstance(delta, dict) else delta
            result[lib] = (sum(s[k]["median"] for k in keys) * 1000, delta / m)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(ROOT, ".build/release/magnets-bench"))
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "bench", "peers", "peers.py"))
    ap.add_argument("--m", type=int, nargs="+", default=[50000], help="moves a side (magnets-bench runs 5k, 50k, 200k)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--libs", default="pycrdt,loro")
    args = ap.parse_args()
    print(f"load average (1 min) at the start: {os.getloadavg()[0]:.1f}")
    times, table = magnets_sync(args.bench)
    print(table.rstrip())
    for m in args.m:
        if m not in times:
            sys.exit(f"error: magnets-bench sync printed no row for M={m}")
        found = peers(os.path.abspath(args.peers), m, args.reps, args.libs)
        print(f"\nM = {m:,} a side, two-way (A's moves into B and B's into A):")
        print(f"  magnets sync, whole process, durable: {times[m]:.1f} ms")
        for lib, (ms, per_move) in sorted(found.items()):
            print(f"  {lib:8} in memory (encode + import both ways): {ms:.1f} ms, delta {per_move:.1f} B a move"
                  f" — magnets ÷ {lib} = {times[m] / ms:.2f}×")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
