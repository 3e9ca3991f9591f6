#!/usr/bin/python3
"""Numeric metrics end to end through the real deniable-server over HTTP/JSON (issue 28): a
1BitMean metric and a dBitFlip metric created with a range, fed with randomized reports and
queried; the mean checked against lo + m (ybar (e^eps + 1) - 1)/(e^eps - 1) from the bits sent,
each bucket's share against (y/s - 1/(a+1))/((a-1)/(a+1)), the histogram's mean as null, and bad
reports rejected naming their field.

Usage: numeric_e2e_test.py SERVER_BINARY
"""
import base64
import json
import math
import os
import random
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402
from checks import check  # noqa: E402

HOUR = 3600


def call(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def http_base(log_path):
    m = re.search(r"http_port=(\d+)", open(log_path).read())
    check(m, "no http_port in the log")
    return f"http://127.0.0.1:{m.group(1)}"


def report(metric, i, event_time, **answer):
    r = {"metric": metric, "designVersion": 1,
         "reportId": base64.b64encode(i.to_bytes(16, "big")).decode(),
         "eventTimeSeconds": str(event_time)}
    r.update(answer)
    return r


def main():
    server_bin = sys.argv[1]
    rng = random.Random(28)
    with tempfile.TemporaryDirectory() as work:
        db, log = os.path.join(work, "n.db"), os.path.join(work, "n.log")
        server, _ = start_server(server_bin, db, log, "--http_listen=127.0.0.1:0")
        base = http_base(log)
        try:
            eps = math.log(3)
            code, metric = call(base, "QueryService/CreateMetric",
                                {"name": "age", "range": {"lo": 18, "hi": 98, "unit": "years"},
                                 "design": {"numeric": {"epsilon": eps}}})
            check(code == 200, metric)
            check(metric["range"] == {"lo": 18, "hi": 98, "unit": "years"}, metric)
            check(metric["design"]["parameters"]["numeric"]["mechanism"] == "ONE_BIT_MEAN", metric)
            code, err = call(base, "QueryService/CreateMetric",
                             {"name": "bad", "range": {"lo": 5, "hi": 1},
                              "design": {"numeric": {"epsilon": 1}}})
            check(code == 400 and "range.hi" in err["error"]["message"], err)
            code, fetched = call(base, "ReportService/GetDesign", {"metric": "age"})
            check(code == 200 and fetched["range"]["unit"] == "years", fetched)

            # 1BitMean: each device's bit, from ages uniform in [18, 98] (true mean 58).
            now = int(time.time()) // HOUR * HOUR
            n, ones, batch = 2000, 0, []
            e = math.exp(eps)
            for i in range(n):
                t = (rng.uniform(18, 98) - 18) / 80
                bit = int(rng.random() < 1 / (e + 1) + t * (e - 1) / (e + 1))
                ones += bit
                batch.append(report("age", i, now - HOUR, bit=bit))
            code, submitted = call(base, "ReportService/SubmitReports", {"reports": batch})
            check(code == 200 and submitted["accepted"] == n, submitted)
            code, p = call(base, "QueryService/GetPrevalence", {"metric": "age"})
            check(code == 200, p)
            ybar = ones / n
            mean = 18 + 80 * (ybar * (e + 1) - 1) / (e - 1)
            num = p["numeric"]
            check(abs(num["mean"] - mean) < 1e-9, (num, mean))
            check(abs(num["total"] - mean * n) < 1e-6, num)
            check(num["devices"] == n and num["unit"] == "years", num)
            check(num["meanCiLower"] < 58 < num["meanCiUpper"], num)  # seeded
            check(num["buckets"] == [], num)

            # dBitFlip: k = 4, d = 2, reports built by hand.
            code, metric = call(base, "QueryService/CreateMetric",
                                {"name": "load", "range": {"lo": 0, "hi": 400, "unit": "ms"},
                                 "design": {"numeric": {"mechanism": "D_BIT_FLIP", "epsilon": eps,
                                                        "buckets": 4, "sampledBuckets": 2}}})
            check(code == 200, metric)
            sampled, ones_of, batch = [0] * 4, [0] * 4, []
            for i in range(400):
                buckets = sorted(rng.sample(range(4), 2))
                bits = [rng.random() < (0.7 if b == 0 else 0.3) for b in buckets]
                for b, bit in zip(buckets, bits):
                    sampled[b] += 1
                    ones_of[b] += int(bit)
                batch.append(report("load", 10000 + i, now - HOUR,
                                    numeric={"buckets": buckets, "bits": bits}))
            bad = [report("load", 20000, now - HOUR, numeric={"buckets": [2, 1],
                                                               "bits": [True, False]}),
                   report("load", 20001, now - HOUR, bit=1,
                          numeric={"buckets": [0, 1], "bits": [True, False]}),
                   report("age", 20002, now - HOUR, numeric={"buckets": [0], "bits": [True]})]
            code, submitted = call(base, "ReportService/SubmitReports", {"reports": batch + bad})
            check(code == 200 and submitted["accepted"] == 400, submitted)
            reasons = [r["reason"] for r in submitted["rejections"]]
            check(len(reasons) == 3 and "reports[400].numeric" in reasons[0], reasons)
            check("reports[401].bit" in reasons[1], reasons)
            check("reports[402].numeric" in reasons[2], reasons)
            code, p = call(base, "QueryService/GetPrevalence",
                           {"metric": "load", "quantiles": [0.5, 0.9]})
            check(code == 200, p)
            num = p["numeric"]
            check(num["mean"] is None and p["yesCount"] is None, p)
            a = math.exp(eps / 2)
            for j, bucket in enumerate(num["buckets"]):
                check(bucket["sampled"] == sampled[j] and bucket["ones"] == ones_of[j], bucket)
                share = (ones_of[j] / sampled[j] - 1 / (a + 1)) / ((a - 1) / (a + 1))
                check(abs(bucket["estimateUnbiased"] - share) < 1e-12, (bucket, share))
            check([q["level"] for q in num["quantiles"]] == [0.5, 0.9], num)
            for q in num["quantiles"]:
                check(q["ciLower"] <= q["value"] <= q["ciUpper"], q)
        finally:
            server.terminate()
            server.wait(timeout=10)
    print("numeric e2e: ok")


if __name__ == "__main__":
    main()
