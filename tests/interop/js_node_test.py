#!/usr/bin/env python3
"""The JavaScript SDK in Node against the real deniable-server over its HTTP/JSON API
(tests/interop/js_devices.mjs: a FileStore device across a restart, a report rejected for good,
and 300 seeded devices); the server counts every report once.

Usage: js_node_test.py SERVER_BINARY CLI_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_lib import NODE, REPO, cli_json, counts_by_label, start_collector, stop  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402

DEVICES = 300


def main():
    server_bin, cli_bin = sys.argv[1:3]
    work = tempfile.mkdtemp(prefix="deniable_js_node_")
    server, target, base = start_collector(server_bin, work)
    try:
        subprocess.run([cli_bin, f"--target={target}", "create-metric", "--name=js_m",
                        "--design=symmetric_epsilon", "--epsilon=1"], check=True,
                       capture_output=True)
        out = subprocess.run([NODE, os.path.join(REPO, "tests", "interop", "js_devices.mjs"),
                              base, "js_m", str(DEVICES), "42", "0.3", work],
                             check=True, capture_output=True, text=True, timeout=120)
        seen = json.loads(out.stdout.strip().splitlines()[-1])
        check(seen["acknowledged"] == DEVICES, seen)
        p, counts = counts_by_label(cli_bin, target, "js_m")
        check(counts == {"node": DEVICES, "node_file": 1}, counts)
        z = (p["estimateUnbiased"] - (90 + 1) / (DEVICES + 1)) / p["standardError"]
        print(f"node: n={p['n']} estimate={p['estimateUnbiased']:.4f} "
              f"se={p['standardError']:.4f} z={z:.2f}")
        check(abs(z) < 5, z)
        check(cli_json(cli_bin, target, "prevalence", "--metric=js_m")["n"] == str(DEVICES + 1))
    finally:
        stop(server)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
