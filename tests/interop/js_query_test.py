#!/usr/bin/env python3
"""The JavaScript QueryClient (client/js/src/query_client.js) against the real deniable-server
over its HTTP/JSON API (issue 29): counts as numbers, a suppressed bucket and group with null
estimates, the difference's change as second minus first with its words, a breakdown, the
hint when baseUrl is the gRPC port (issue 30), and today's anytime interval (issue 41): wider
than the fixed-n one, equal to what `deniable prevalence --interval_kind=anytime` prints.

Usage: js_query_test.py SERVER_BINARY CLI_BINARY
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_lib import NODE, REPO, start_collector, stop  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402

DAY = 86400


def call(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def submit(base, metric, count, yes, event_time, region, first_id):
    reports = [{"metric": metric, "designVersion": 1, "bit": 1 if i < yes else 0,
                "reportId": base64.b64encode((first_id + i).to_bytes(16, "big")).decode(),
                "eventTimeSeconds": event_time, "labels": {"region": region}}
               for i in range(count)]
    answer = call(base, "ReportService/SubmitReports", {"reports": reports})
    check(answer["accepted"] == count, str(answer)[:300])


def main():
    server_bin, cli_bin = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="deniable_js_query_")
    server, target, base = start_collector(server_bin, work)
    try:
        call(base, "QueryService/CreateMetric",
             {"name": "js_q", "design": {"twoCoin": {}}, "minReports": 10})
        today = int(time.time()) // DAY * DAY
        now = today + DAY // 2
        # Yesterday: 200 reports, 100 "yes" bits (estimate 0.5); today: 200 with 60 (0.1); and 3
        # reports two days ago, in their own group: a suppressed bucket and a suppressed group.
        submit(base, "js_q", 200, 100, today - DAY, "N", 0)
        submit(base, "js_q", 200, 60, today, "S", 1000)
        submit(base, "js_q", 3, 1, today - 2 * DAY, "X", 2000)
        out = subprocess.run([NODE, os.path.join(REPO, "tests", "interop", "js_query.mjs"), base,
                              f"http://{target}", "js_q", str(now)],
                             check=True, capture_output=True, text=True, timeout=60)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        p = r["prevalence"]
        check(p["n"] == 403 and p["yesCount"] == 161, p)  # numbers, not strings
        check(p["estimand"] != "" and p["methodReason"] != "", p)
        buckets = r["series"]["buckets"]
        check([b["n"] for b in buckets] == [3, 200, 200], buckets)
        small = buckets[0]
        check(small["suppressed"] and small["estimateUnbiased"] is None
              and small["ciLower"] is None and small["method"] is None, small)
        check(abs(buckets[1]["estimateUnbiased"] - 0.5) < 1e-12, buckets[1])
        d = r["difference"]
        # first = yesterday (0.5), second = today (0.1): the wire's first - second is +0.4; the
        # change, second minus first, is -0.4: "fell by 40.00 points".
        check(abs(d["difference"] - 0.4) < 1e-12 and abs(d["change"] + 0.4) < 1e-12, d)
        check(d["changeText"] == "fell by 40.00 points", d["changeText"])
        check(abs(d["changeCiLower"] + d["ciUpper"]) < 1e-15 and d["changeCiLower"] < -0.4, d)
        groups = {g["groupValue"]: g for g in r["breakdown"]}
        check(sorted(groups) == ["N", "S", "X"], groups.keys())
        check(groups["X"]["suppressed"] and groups["X"]["estimateUnbiased"] is None
              and groups["X"]["n"] == 3, groups["X"])
        check(groups["N"]["n"] == 200 and groups["N"]["estimateUnbiased"] == 0.5, groups["N"])
        check(r["unknownLabel"] == "INVALID_ARGUMENT", r["unknownLabel"])
        hint = r["grpcPort"]
        check(hint is not None and hint["code"] == "UNAVAILABLE"
              and "--http_listen" in hint["message"], hint)
        fixed, anytime = r["fixedToday"], r["anytimeToday"]
        check(fixed["intervalKind"] == "FIXED_N" and anytime["intervalKind"] == "ANYTIME"
              and anytime["anytimeTunedReports"] == 10000, (fixed, anytime))
        check(fixed["n"] == anytime["n"] == 200, anytime)
        check(anytime["ciLower"] <= fixed["ciLower"] and anytime["ciUpper"] > fixed["ciUpper"],
              (fixed["ciLower"], fixed["ciUpper"], anytime["ciLower"], anytime["ciUpper"]))
        out = subprocess.run([cli_bin, f"--target={target}", "prevalence", "--metric=js_q",
                              f"--start={today}", f"--end={today + DAY}",
                              "--interval_kind=anytime", "--json"],
                             check=True, capture_output=True, text=True, timeout=30)
        cli = json.loads(out.stdout)
        check(cli["intervalKind"] == "ANYTIME"
              and (cli["ciLower"], cli["ciUpper"]) == (anytime["ciLower"], anytime["ciUpper"]),
              (cli.get("ciLower"), cli.get("ciUpper"), anytime["ciLower"], anytime["ciUpper"]))
        bucket = r["anytimeSeries"]["buckets"]
        check(len(bucket) == 1 and bucket[0]["intervalKind"] == "ANYTIME"
              and (bucket[0]["ciLower"], bucket[0]["ciUpper"])
              == (anytime["ciLower"], anytime["ciUpper"]), bucket)
        print("js QueryClient:", json.dumps({"n": p["n"], "change": d["change"],
                                             "changeText": d["changeText"],
                                             "today_fixed": [fixed["ciLower"], fixed["ciUpper"]],
                                             "today_anytime": [anytime["ciLower"],
                                                               anytime["ciUpper"]],
                                             "grpc_port_hint": hint["message"][:160]}))
    finally:
        stop(server)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
