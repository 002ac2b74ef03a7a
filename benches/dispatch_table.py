#!/usr/bin/env python3
"""Markdown tables of a `macbench run` over several --dispatch modes: absolute reference cycles per
message (median of repeats) and, in parentheses, the sampled per-message latency p99 in µs; `*` marks a
result with a validity warning. Rows: algorithm, then backend (openssl, rustcrypto, ipsecmb, others),
then acceleration up the ladder; columns: sizes.

Usage: benches/dispatch_table.py RESULTS.json [--backends openssl/hw,rustcrypto/hw,ipsecmb]
  --backends keeps only the named backend[/accel] rows (a backend alone keeps all its accelerations).
Reproduces the README's "Dispatch and the ISA ladder, side by side" table from the run it names.
"""
import argparse
import json

BACKEND_ORDER = ["openssl", "rustcrypto", "cryptopp", "mbedtls", "nettle", "ipsecmb"]
ACCEL_ORDER = ["hw", "sw", "sse", "avx", "avx2", "avx512"]


def rank(order, name):
    return order.index(name) if name in order else len(order)


def cell(r):
    if r is None:
        return "–"
    m = r["metrics"]
    v = m.get("absolute_cycles_per_message")
    if v is None or r.get("failed"):
        return "failed"
    star = "*" if r.get("warnings") else ""
    p99 = m.get("latency_p99_ns")
    lat = "" if p99 is None else f" ({p99 / 1e3:.1f})" if p99 < 1e4 else f" ({p99 / 1e3:.0f})"
    return f"{v:.0f}{star}{lat}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--backends", default="")
    args = ap.parse_args()
    keep = [k for k in args.backends.split(",") if k]
    doc = json.load(open(args.results))
    results = {}
    algorithms, functions, sizes, dispatches = [], set(), set(), []
    for r in doc["results"]:
        d = r["scenario"].get("dispatch", "single")
        f = (r["algorithm"], r["backend"], r["accel"])
        if keep and not any(k in (f[1], f"{f[1]}/{f[2]}") for k in keep):
            continue
        results[f + (d, r["size"])] = r
        functions.add(f)
        sizes.add(r["size"])
        if r["algorithm"] not in algorithms:
            algorithms.append(r["algorithm"])
        if d not in dispatches:
            dispatches.append(d)
    sizes = sorted(sizes)
    ordered = sorted(functions, key=lambda f: (algorithms.index(f[0]), rank(BACKEND_ORDER, f[1]),
                                               rank(ACCEL_ORDER, f[2])))
    print("| function | dispatch | " + " | ".join(f"{s} B" for s in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for f in ordered:
        for d in dispatches:
            cells = [cell(results.get(f + (d, s))) for s in sizes]
            print(f"| {'/'.join(f)} | `{d}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
