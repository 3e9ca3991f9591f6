#!/usr/bin/env python3
"""Where one phase of deniable-bench spends its CPU: `perf record` of a whole run, with the perf
time window of every phase the bench prints, so that `perf report --time A,B` shows one load
alone (the raw gRPC server, the collector and the raw SQLite loop run in one process, one after
the other, and a profile of the whole run mixes them).

Usage: bench/phase_perf.py OUT.data BENCH [BENCH_FLAGS...]
Prints the bench's output, then one line per phase:  WINDOW <phase> <rate> <start>,<end>
(seconds of CLOCK_MONOTONIC, perf's -k clock; the window leaves out 0.2 s at the start and 0.1 s
at the end). Then, for example:
  perf report -i OUT.data --time <start>,<end> --no-children -g none --sort dso
CPU per call: a phase's samples / 999 Hz / window seconds / rate (docs/performance.md, "Where
the time goes"). Needs perf (linux-perf) and CPU-clock events (perf_event_paranoid <= 1, or root).
"""
import re
import subprocess
import sys
import time


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    perf = subprocess.Popen(
        ["perf", "record", "-k", "CLOCK_MONOTONIC", "-F", "999", "-g", "-o", out, "--"] + cmd,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    windows = []
    for line in perf.stdout:
        now = time.clock_gettime(time.CLOCK_MONOTONIC)
        m = re.match(r"\s+(\w+)\s+(\d+) (?:reports|rows)/s.*\((\d+\.\d+) s\)", line)
        if m:
            windows.append((m.group(1), int(m.group(2)), now - float(m.group(3)) + 0.2, now - 0.1))
        sys.stdout.write(line)
    perf.wait()
    for name, rate, start, end in windows:
        print(f"WINDOW {name} {rate} {start:.6f},{end:.6f}")
    return perf.returncode


if __name__ == "__main__":
    sys.exit(main())
