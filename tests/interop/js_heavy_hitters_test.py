#!/usr/bin/env python3
"""The JS SDK's heavy-hitters reports (issue 40) through the real deniable-server over its
HTTP/JSON API: a metric (max_length 2, 8 x 64, epsilon 3, holdout 0.5) created over HTTP; 3000
Node devices (tests/interop/js_heavy_hitters.mjs: one Reporter each, seeded, reportString) hold
"a" (50 %), "b" (30 %) or "cd" (20 %). The collector must count what they sent: getTopValues'
devices equal to the reports, its estimationReports to the reports of group 0; it finds "a" and
"b" and "cd" with no candidates, and nothing else ("a" above the threshold); getFrequencies
gives each true share within 5 standard errors (which include the hash-collision allowance) and
"zz" within 5 of 0; the values come back as UTF-8 text. The server runs with a fixed hash salt
(--testing_heavy_hitters_salt), and the devices are seeded, so every run is the same run: with a
salt drawn at random, collisions differ from run to run and a spurious or missed value is the
salt's luck, not a fault (DENIABLE_TEST_SALT=N tries another salt by hand).

Usage: js_heavy_hitters_test.py SERVER_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_lib import NODE, REPO, start_collector, stop  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402

DEVICES = 3000
TRUTH = {"a": 0.5, "b": 0.3, "cd": 0.2}
SALT = 41  # any fixed salt repeats; this one finds all three values


def call(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def value_of(i):
    x = (i * 7919) % 100
    return "a" if x < 50 else "b" if x < 80 else "cd"


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_js_hh_")
    salt = int(os.environ.get("DENIABLE_TEST_SALT") or SALT)
    server, _, base = start_collector(server_bin, work, f"--testing_heavy_hitters_salt={salt}")
    try:
        created = call(base, "QueryService/CreateMetric", {
            "name": "app", "design": {"heavyHitters": {
                "epsilon": 3.0, "maxLength": 2, "rows": 8, "width": 64, "holdoutShare": 0.5,
                "salt": "7"}}})
        # The salt sent is replaced by the server's (here the fixed one).
        design = created["design"]["parameters"]["heavyHitters"]
        check(int(design["salt"]) == salt, design)
        values = [value_of(i) for i in range(DEVICES)]
        out = subprocess.run([NODE, os.path.join(REPO, "tests", "interop", "js_heavy_hitters.mjs"),
                              base, "app", ",".join(values)],
                             check=True, capture_output=True, text=True, timeout=300)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        groups = r["groups"]
        check(r["devices"] == DEVICES and len(groups) == DEVICES, r["devices"])
        check(set(groups) <= {0, 1, 2, 3}, set(groups))
        top = r["top"]
        check(top["devices"] == DEVICES, top)
        check(top["estimationReports"] == groups.count(0),
              (top["estimationReports"], groups.count(0)))
        found = {v["text"] for v in top["values"]}
        check(found == {"a", "b", "cd"} if salt == SALT else {"a", "b"} <= found, top["values"])
        check(any(v["text"] == "a" and v.get("aboveThreshold") for v in top["values"]),
              top["values"])
        f = r["frequencies"]["values"]
        check([v["text"] for v in f] == ["a", "b", "cd", "zz"], f)
        for v in f:
            truth = TRUTH.get(v["text"], 0.0)
            check(abs(v["share"] - truth) < 5 * v["standardError"], (v, truth))
            check(v["reports"] == groups.count(0), v)
        print(f"js_heavy_hitters: {DEVICES} Node devices, {groups.count(0)} in the estimation "
              f"group; found {sorted(found)}; shares "
              + ", ".join(f"{v['text']} {v['share']:.3f} +- {v['standardError']:.3f}" for v in f))
        print("js_heavy_hitters: OK")
    finally:
        stop(server)


if __name__ == "__main__":
    main()
