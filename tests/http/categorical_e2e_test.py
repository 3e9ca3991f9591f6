#!/usr/bin/python3
"""Categorical metrics end to end through the real deniable-server (issue 14): a 4-category
metric (k-RR) and an OUE one created, fed and queried over the HTTP/JSON API (OUE bits as base64
bytes), the shares checked against the closed form from the counts sent, and the same
GetPrevalence answered over gRPC (through the real CLI) equal to the HTTP answer.

Usage: categorical_e2e_test.py SERVER_BINARY CLI_BINARY
"""
import base64
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402
from checks import check  # noqa: E402
from api_json import same_answer  # noqa: E402

HOUR = 3600
VOTE = ["Y", "N", "U", "A"]
SHARES = [868 / 2532, 889 / 2532, 588 / 2532, 187 / 2532]  # the Chile survey's answers


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


def report(metric, i, event_time, fingerprint, categorical):
    return {"metric": metric, "designVersion": 1,
            "reportId": base64.b64encode(i.to_bytes(16, "big")).decode(),
            "eventTimeSeconds": str(event_time), "designFingerprint": fingerprint,
            "categorical": categorical}


def krr(rng, truth, p, k):
    """k-RR: the truth with probability p, else one of the k - 1 others uniformly."""
    if rng.random() < p:
        return truth
    return rng.choice([v for v in range(k) if v != truth])


def oue(rng, truth, q, k):
    """OUE: bit `truth` 1 with probability 1/2, every other bit with q; bit v in byte v // 8."""
    bits = [(rng.random() < (0.5 if v == truth else q)) for v in range(k)]
    packed = bytearray((k + 7) // 8)
    for v, bit in enumerate(bits):
        if bit:
            packed[v // 8] |= 1 << (v % 8)
    return bits, base64.b64encode(bytes(packed)).decode()


def check_shares(prevalence, support, n, p_star, q_star):
    check(prevalence["n"] == n, prevalence)  # int64 counts: JSON numbers
    check(prevalence["simultaneousMethod"] == "sidak", prevalence)
    check(prevalence["consistentMethod"] == "norm_sub", prevalence)
    check(abs(prevalence["perCategoryLevel"] - 0.95 ** 0.25) < 1e-12, prevalence)
    shares = prevalence["shares"]
    check([s["category"] for s in shares] == VOTE, shares)
    total = 0.0
    for v, share in enumerate(shares):
        c = support[v]
        check(share["supportCount"] == c, (v, share, c))
        lam = c / n
        unbiased = (lam - q_star) / (p_star - q_star)
        se = math.sqrt(lam * (1 - lam) / n) / (p_star - q_star)
        check(abs(share["estimateUnbiased"] - unbiased) < 1e-12, (share, unbiased))
        check(abs(share["standardError"] - se) < 1e-12, (share, se))
        check(share["simultaneousLower"] <= share["ciLower"] <= share["ciUpper"], share)
        check(share["ciUpper"] <= share["simultaneousUpper"], share)
        check(share["ciLower"] <= SHARES[v] + 0.1 and SHARES[v] - 0.1 <= share["ciUpper"], share)
        total += share["estimateConsistent"]
    check(abs(total - 1) < 1e-12, shares)


def main():
    server_bin, cli_bin = sys.argv[1], sys.argv[2]
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as work:
        db, log = os.path.join(work, "c.db"), os.path.join(work, "c.log")
        server, target = start_server(server_bin, db, log, "--http_listen=127.0.0.1:0")
        base = http_base(log)
        try:
            eps = math.log(3)
            code, metric = call(base, "QueryService/CreateMetric",
                                {"name": "vote", "description": "How will you vote?",
                                 "categories": VOTE, "design": {"categorical": {"epsilon": eps}}})
            check(code == 200, metric)
            check(metric["categories"] == VOTE, metric)
            design = metric["design"]
            check(design["parameters"]["categorical"]["mechanism"] == "K_RR", design)
            check(design["categories"] == 4 and abs(design["a"] - 0.5) < 1e-12, design)
            code, err = call(base, "QueryService/CreateMetric",
                             {"name": "bad", "categories": ["Y", "Y"],
                              "design": {"categorical": {"epsilon": 1}}})
            check(code == 400 and "categories[1]" in err["error"]["message"], err)
            code, fetched = call(base, "ReportService/GetDesign", {"metric": "vote"})
            check(code == 200 and fetched["categories"] == VOTE, fetched)
            fingerprint = fetched["designFingerprint"]

            now = int(time.time()) // HOUR * HOUR
            n = 2532
            truths = [v for v, count in enumerate([868, 889, 588, 187]) for _ in range(count)]
            support = [0] * 4
            batch = []
            for i, truth in enumerate(truths):
                reported = krr(rng, truth, design["a"], 4)
                support[reported] += 1
                batch.append(report("vote", i, now - HOUR, fingerprint, {"category": reported}))
            bad = report("vote", 99999, now - HOUR, fingerprint, {"category": 4})
            code, submitted = call(base, "ReportService/SubmitReports",
                                   {"reports": batch[:1000] + [bad]})
            check(code == 200 and submitted["accepted"] == 1000, submitted)
            check(submitted["rejections"][0]["index"] == 1000, submitted)
            check("reports[1000].categorical.category" in submitted["rejections"][0]["reason"])
            check(submitted["rejections"][0]["permanent"], submitted)
            code, submitted = call(base, "ReportService/SubmitReports", {"reports": batch[1000:]})
            check(code == 200 and submitted["accepted"] == n - 1000, submitted)

            code, prevalence = call(base, "QueryService/GetPrevalence", {"metric": "vote"})
            check(code == 200, prevalence)
            check_shares(prevalence, support, n, 0.5, 1 / 6)
            check(prevalence["centralEpsilon"] < eps, prevalence)
            print("k_rr over HTTP:", [(s["category"], round(s["estimateUnbiased"], 4),
                                       round(s["simultaneousLower"], 4),
                                       round(s["simultaneousUpper"], 4))
                                      for s in prevalence["shares"]],
                  "central_epsilon", round(prevalence["centralEpsilon"], 4))

            # The same query over gRPC, through the real CLI: the same message.
            cli = subprocess.run([cli_bin, f"--target={target}", "prevalence", "--metric=vote",
                                  "--json"], check=True, capture_output=True, text=True).stdout
            check(same_answer(json.loads(cli), prevalence), (cli, prevalence))

            # OUE: reports are k bits, sent as base64 bytes in JSON.
            code, metric = call(base, "QueryService/CreateMetric",
                                {"name": "vote_oue", "categories": VOTE,
                                 "design": {"categorical": {"mechanism": "OUE", "epsilon": eps}}})
            check(code == 200, metric)
            q_star = metric["design"]["b"]
            check(abs(q_star - 0.25) < 1e-12, metric)
            support = [0] * 4
            batch = []
            for i, truth in enumerate(truths):
                bits, packed = oue(rng, truth, q_star, 4)
                support = [s + int(b) for s, b in zip(support, bits)]
                batch.append(report("vote_oue", i, now - HOUR, 0, {"bits": packed}))
            high_bit = report("vote_oue", 99999, now - HOUR, 0,
                              {"bits": base64.b64encode(b"\x10").decode()})
            code, submitted = call(base, "ReportService/SubmitReports",
                                   {"reports": batch + [high_bit]})
            check(code == 200 and submitted["accepted"] == n, submitted)
            check("reports[2532].categorical.bits" in submitted["rejections"][0]["reason"])
            code, prevalence = call(base, "QueryService/GetPrevalence",
                                    {"metric": "vote_oue", "simultaneous": "SIDAK"})
            check(code == 200, prevalence)
            check_shares(prevalence, support, n, 0.5, 0.25)
            code, bonferroni = call(base, "QueryService/GetPrevalence",
                                    {"metric": "vote_oue", "simultaneous": "BONFERRONI"})
            check(code == 200 and bonferroni["simultaneousMethod"] == "bonferroni", bonferroni)
            for s, b in zip(prevalence["shares"], bonferroni["shares"]):
                check(b["simultaneousLower"] <= s["simultaneousLower"], (s, b))  # wider
        finally:
            server.terminate()
            server.wait(timeout=10)
    print("categorical e2e: ok")


if __name__ == "__main__":
    main()
