#!/usr/bin/env python3
"""The JavaScript SDK's design fingerprint against the real deniable-server over HTTP/JSON
(CTest js_design_fingerprint): a Node device (tests/interop/js_design_fingerprint.mjs) caches
metric "js_fp" (two_coin v1) and delivers one report; the operator recreates the database, where
"js_fp" v1 is now symmetric_epsilon 0.5, on the same ports. The device's two queued reports are
rejected per report with FAILED_PRECONDITION and dropped as dropped_design_mismatch, never
randomized again; the design is fetched again and the next report (a new draw) is stored. The
new collector counts exactly that one report, with the new design's epsilon.

Usage: js_design_fingerprint_test.py SERVER_BINARY CLI_BINARY
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_lib import NODE, REPO, cli_json, start_collector, start_server, stop  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402

SCRIPT = os.path.join(REPO, "tests", "interop", "js_design_fingerprint.mjs")


def node(base, store, phase):
    out = subprocess.run([NODE, SCRIPT, base, "js_fp", store, phase], capture_output=True,
                         text=True, timeout=120)
    check(out.returncode == 0, f"node ({phase}) failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    server_bin, cli_bin = sys.argv[1:3]
    work = tempfile.mkdtemp(prefix="deniable_js_fp_")
    store = os.path.join(work, "device.json")
    server, target, base = start_collector(server_bin, work)
    try:
        subprocess.run([cli_bin, f"--target={target}", "create-metric", "--name=js_fp",
                        "--design=two_coin", "--min_reports=1"], check=True, capture_output=True)
        node(base, store, "before")
        check(cli_json(cli_bin, target, "prevalence", "--metric=js_fp")["n"] == "1")
        stop(server)
        for f in glob.glob(os.path.join(work, "server.db*")):
            os.remove(f)
        grpc_port = target.rsplit(":", 1)[1]
        http_port = re.search(r":(\d+)$", base).group(1)
        server, target = start_server(server_bin, os.path.join(work, "server.db"),
                                      os.path.join(work, "server2.log"),
                                      f"--listen=127.0.0.1:{grpc_port}",
                                      f"--http_listen=127.0.0.1:{http_port}")
        subprocess.run([cli_bin, f"--target={target}", "create-metric", "--name=js_fp",
                        "--design=symmetric_epsilon", "--epsilon=0.5", "--min_reports=1"],
                       check=True, capture_output=True)
        seen = node(base, store, "after")
        check(seen["stats"]["droppedDesignMismatch"] == 2 and seen["stats"]["queued"] == 0, seen)
        p = cli_json(cli_bin, target, "prevalence", "--metric=js_fp")
        check(p["n"] == "1" and abs(p["epsilon"] - 0.5) < 1e-12, p)
        print(f"js design fingerprint: {seen['stats']}; collector n={p['n']}")
    finally:
        stop(server)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
