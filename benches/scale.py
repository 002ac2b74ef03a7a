#!/usr/bin/env python3
"""The engine at scale (issue 9), measured side by side in one run on the machine it runs on.

For 1, 100, 1000 and 10,000 sessions of the `null` function (64-byte messages) on all online CPUs, one
repeat each, it prints:
- start-up: creating every session thread, and until all were keyed and waiting at the start gate;
- harness cost: absolute reference cycles per message of the null function (what the engine itself
  costs per message at that scale);
- the window: requested (t2 − t1) against achieved (the coordinator's instants), and the share of
  sessions that processed anything inside it;
- the coordinator: its scheduling, tick, wake-up lateness (p99, max) and its own share of a CPU;
- the wall time of the whole command.

Usage: python3 benches/scale.py [--binary target/release/macbench] [--sessions 1,100,1000,10000]
No thresholds: it prints what it measured.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

DURATIONS = {1: "3s", 100: "3s", 1000: "3s", 10000: "5s"}


def run(binary, sessions, duration):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        start = time.monotonic()
        proc = subprocess.run(
            [binary, "run", "--quiet", "--no-harness", "--alg", "null", "--sizes", "64",
             "--sessions", str(sessions), "--duration", duration, "--repeat", "1",
             "--target-ci", "0", "--json", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - start
        if proc.returncode not in (0, 1):
            return None, wall, proc.stderr.strip()
        with open(path) as f:
            return json.load(f), wall, proc.returncode


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", default="target/release/macbench")
    p.add_argument("--sessions", default="1,100,1000,10000")
    a = p.parse_args()
    print("| sessions | duration | spawn | ready | null cycles/msg | window req → got | sessions measured "
          "| tick | lateness p99 / max | coordinator CPU | exit | wall |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(x) for x in a.sessions.split(",")]:
        duration = DURATIONS.get(n, "3s")
        doc, wall, code = run(a.binary, n, duration)
        if doc is None:
            print(f"| {n} | {duration} | refused: {code} |")
            continue
        r = doc["results"][0]
        raw = r["raw"][0]
        s = r["scenario"]
        c = raw["coordinator"]
        ran = sum(1 for t in r["threads"] if t["messages"] > 0)
        req = s["window_end_s"] - s["window_start_s"]
        got = raw["window_wall_ns"] / 1e9
        cpm = r["metrics"]["absolute_cycles_per_message"]
        print(f"| {n} | {duration} | {raw['startup']['spawn_ns'] / 1e6:.0f} ms "
              f"| {raw['startup']['ready_ns'] / 1e6:.0f} ms "
              f"| {cpm:.1f} | {req:.3f} → {got:.6f} s | {ran}/{n} ({100 * ran / n:.1f} %) "
              f"| {c['tick_ns'] / 1e6:.0f} ms | {c['lateness_p99_ns'] / 1e3:.0f} / {c['lateness_max_ns'] / 1e3:.0f} µs "
              f"| {100 * c['cpu_share']:.2f} % | {code} | {wall:.1f} s |")


if __name__ == "__main__":
    main()
