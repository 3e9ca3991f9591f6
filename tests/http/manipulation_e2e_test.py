#!/usr/bin/python3
"""Issue 41's manipulation example end to end through the real deniable-server (HTTP/JSON and the
CLI): 200 honest first-in-day reports (70 ones under two coins: 0.20), then one client adds 200
reports with bit 1, each flagged first in its day, week and month (0.85). Every estimate carries
its manipulation bound: at 1 % of n by default (4 fake reports of 400), and for the 200 fakes
asked (manipulation_reports = 200) a bound whose honest range reaches back to the honest 0.20.
A negative manipulation_reports is refused naming the field. Prints the figures (the issue's
closing note quotes them).

Usage: manipulation_e2e_test.py SERVER_BINARY CLI_BINARY
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_collector  # noqa: E402
from checks import check  # noqa: E402

DAY = 86400
FIRSTS = {"day": True, "week": True, "month": True}


def call(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def reports(first_id, bits, event_time):
    return [{"metric": "crash", "designVersion": 1, "bit": bit,
             "reportId": base64.b64encode((first_id + i).to_bytes(16, "big")).decode(),
             "eventTimeSeconds": str(event_time), "windowFirsts": FIRSTS}
            for i, bit in enumerate(bits)]


def close(x, y, tol=1e-9):
    return abs(x - y) <= tol


def main():
    server_bin, cli = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as work:
        db, log = os.path.join(work, "m.db"), os.path.join(work, "m.log")
        proc, target, base = start_collector(server_bin, db, log)
        try:
            code, metric = call(base, "QueryService/CreateMetric",
                                {"name": "crash", "design": {"twoCoin": {}}, "minReports": 1})
            check(code == 200, metric)
            day = int(time.time()) // DAY * DAY
            hour = int(time.time()) // 3600 * 3600
            query = {"metric": "crash", "startTimeSeconds": day, "endTimeSeconds": day + DAY}

            code, sent = call(base, "ReportService/SubmitReports",
                              {"reports": reports(1, [1] * 70 + [0] * 130, hour)})
            check(code == 200 and sent.get("accepted") == 200, sent)
            code, honest = call(base, "QueryService/GetPrevalence", query)
            check(code == 200, honest)
            check(close(honest["estimateUnbiased"], 0.20), honest)

            code, sent = call(base, "ReportService/SubmitReports",
                              {"reports": reports(1000, [1] * 200, hour)})
            check(code == 200 and sent.get("accepted") == 200, sent)
            code, p = call(base, "QueryService/GetPrevalence", query)
            check(code == 200, p)
            check(p["n"] == 400 and close(p["estimateUnbiased"], 0.85), p)
            check(p["estimand"] == "active_device_prevalence", p["estimand"])
            d = p["manipulation"]
            check(d["fakeReports"] == 4, d)  # 1 % of 400
            check(close(d["shiftUp"], 4 * 0.65 / 396) and close(d["shiftDown"], 4 * 1.35 / 396), d)
            check(close(d["uniformBound"], 0.02), d)  # m / (n (a - b)) = 4 / (400 * 0.5)

            code, asked = call(base, "QueryService/GetPrevalence",
                               {**query, "manipulationReports": 200})
            check(code == 200, asked)
            m = asked["manipulation"]
            check(m["fakeReports"] == 200 and close(m["honestLower"], 0.20), m)
            check(close(m["shiftUp"], 0.65) and close(m["uniformBound"], 1.0), m)

            code, err = call(base, "QueryService/GetPrevalence",
                             {**query, "manipulationReports": -1})
            check(code == 400 and "manipulation_reports" in err["error"]["message"], err)

            out = subprocess.run([cli, f"--target={target}", "prevalence", "--metric=crash",
                                  f"--start={day}", f"--end={day + DAY}",
                                  "--manipulation_reports=200"],
                                 capture_output=True, text=True, timeout=60)
            check(out.returncode == 0, out.stderr)
            check("manipulation bound   200 fake reports could have raised it by up to 65.00 %"
                  in out.stdout, out.stdout)
            check("honest reports' estimate in [20.00 %, 150.00 %]" in out.stdout, out.stdout)

            print(f"honest: n = {honest['n']}, estimate {honest['estimateUnbiased']:.3f} "
                  f"[{honest['ciLower']:.3f}, {honest['ciUpper']:.3f}]")
            print(f"with 200 fakes: n = {p['n']}, estimate {p['estimateUnbiased']:.3f} "
                  f"[{p['ciLower']:.3f}, {p['ciUpper']:.3f}]; {p['explanation']}")
            for b in (d, m):
                print(f"  bound for m = {b['fakeReports']}: up {b['shiftUp']:.4f}, down "
                      f"{b['shiftDown']:.4f}, honest estimate in [{b['honestLower']:.4f}, "
                      f"{b['honestUpper']:.4f}], for any reports {b['uniformBound']:.4f}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print("manipulation_e2e: ok")


if __name__ == "__main__":
    main()
