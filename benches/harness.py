#!/usr/bin/env python3
"""Is the harness what is measured? Three checks, measured side by side in one run (issue 3):

1. the null function's cost per message (harness overhead);
2. one pinned session of macbench's OpenSSL backend against `openssl speed` for HMAC-SHA256 and
   CMAC-AES128 at 16, 64, 1024 and 16384 bytes, both on CPU 0: our throughput / theirs;
3. two sessions on two cores against one session on one core (aggregate throughput ratio).

Usage: python3 benches/harness.py [--binary target/release/macbench] [--seconds 1]
Needs the `openssl` command-line tool and `taskset` (util-linux). Prints a table; no thresholds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SIZES = [16, 64, 1024, 16384]
FUNCTIONS = [("hmac-sha256", ["-hmac", "sha256"]), ("cmac-aes128", ["-cmac", "aes-128-cbc"])]


def macbench(binary, args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        proc = subprocess.run([binary, "run", "--quiet", "--no-harness", "--json", path] + args,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode not in (0, 1):
            sys.exit(f"macbench failed: {proc.stderr.strip()}")
        with open(path) as f:
            return json.load(f)


def openssl_speed(extra, size, seconds):
    """Bytes per second from `openssl speed -mr` (+F line: the last field is bytes/s)."""
    cmd = ["taskset", "-c", "0", "openssl", "speed", "-mr", "-seconds", str(seconds), "-bytes", str(size)] + extra
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("+F:"):
            return float(line.split(":")[-1])
    sys.exit(f"no +F line from {' '.join(cmd)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", default="target/release/macbench")
    p.add_argument("--seconds", type=float, default=1.0, help="duration of each timed run")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds per point (median reported)")
    a = p.parse_args()
    dur = f"{a.seconds}s"

    doc = macbench(a.binary, ["--alg", "null", "--sizes", "16,64,1024", "--sessions", "1", "--cores", "0",
                              "--duration", dur])
    f_ghz = doc["clock"]["reference_hz"] / 1e9
    print(f"reference clock f = {f_ghz:.3f} GHz ({doc['clock']['reference_source']})")
    print("\n1. harness overhead (null function, 1 pinned session)")
    for r in doc["results"]:
        print(f"   {r['size']:>6} B: {r['metrics']['absolute_cycles_per_message']:.1f} cycles/message")

    print(f"\n2. one pinned session vs `openssl speed` on CPU 0 (throughput, MB/s; median of {a.rounds} "
          "interleaved rounds, macbench itself a median of 3 repeats, --data same)")
    print(f"   {'function':<12} {'size':>6} {'macbench':>10} {'openssl':>10} {'ratio':>7}")
    for name, extra in FUNCTIONS:
        for size in SIZES:
            mine, theirs = [], []
            for _ in range(a.rounds):
                # `--data same`: openssl speed hashes one cache-hot buffer, so we do too here.
                r = macbench(a.binary, ["--alg", name, "--backend", "openssl", "--sizes", str(size),
                                        "--sessions", "1", "--cores", "0", "--duration", dur,
                                        "--data", "same"])["results"][0]
                mine.append(r["metrics"]["bytes_per_second"])
                theirs.append(openssl_speed(extra, size, max(1, int(a.seconds))))
            m, t = statistics.median(mine), statistics.median(theirs)
            print(f"   {name:<12} {size:>6} {m / 1e6:>10.1f} {t / 1e6:>10.1f} {m / t:>7.2f}")

    print("\n3. scaling: 2 sessions on cores 0,1 vs 1 session on core 0 (1024 B; median of interleaved rounds)")
    for name, _ in FUNCTIONS:
        ones, twos, pars = [], [], []
        for _ in range(a.rounds):
            one = macbench(a.binary, ["--alg", name, "--backend", "openssl", "--sizes", "1024", "--sessions", "1",
                                      "--cores", "0", "--duration", dur])["results"][0]["metrics"]
            two = macbench(a.binary, ["--alg", name, "--backend", "openssl", "--sizes", "1024", "--sessions", "2",
                                      "--cores", "0,1", "--duration", dur])["results"][0]["metrics"]
            ones.append(one["bytes_per_second"])
            twos.append(two["bytes_per_second"])
            pars.append(two["parallelism"])
        o, t = statistics.median(ones), statistics.median(twos)
        print(f"   {name:<12} 1 core {o / 1e6:8.1f} MB/s, 2 cores {t / 1e6:8.1f} MB/s: ×{t / o:.2f}"
              f" (parallelism factor {statistics.median(pars):.2f})")


if __name__ == "__main__":
    main()
