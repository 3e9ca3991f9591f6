#!/usr/bin/env python3
"""The JavaScript SDK's categorical reports (issue 14) in Node and in headless Chromium against
the real deniable-server over its HTTP/JSON API.

Node (tests/interop/js_categorical_devices.mjs): for each of K_RR, OUE and OLH, a 5-category
metric and 200 devices reporting a known category by name; the script prints the support counts
of the reports as sent. The collector's shares must match: the same n and support counts (the
C++ server decoded the JS wire form, OUE bytes and OLH hashes included, to the same supports),
each unbiased estimate equal to (c / n - q*) / (p* - q*) and its standard error to
sqrt(lambda (1 - lambda) / n) / (p* - q*) (to 1e-12). A FileStore device reports the same
category on two days: one randomization, the same report.
Browser (client/js/e2e_page, from another origin allowed by --http_cors_origins): 40 devices of
an OUE and of an OLH metric; the same checks. Skipped (the browser part only) without chromium.

Usage: js_categorical_test.py SERVER_BINARY
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from components import required  # noqa: E402
from interop_lib import (NODE, REPO, browser, have_chromium, run_page,  # noqa: E402
                         serve_directory, start_collector, stop)
from checks import check  # noqa: E402

NAMES = ["red", "green", "blue", "cyan", "gray"]
COUNTS = [80, 50, 40, 20, 10]
BROWSER_DEVICES = 40


def call(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def check_shares(base, metric, support, n):
    """The server's shares of `metric` against the support counts the SDK sent."""
    design = call(base, "ReportService/GetDesign", {"metric": metric})["design"]
    p_star, q_star = design["a"], design["b"]
    gap = p_star - q_star
    p = call(base, "QueryService/GetPrevalence", {"metric": metric})
    check(p["n"] == n, (p["n"], n))  # int64 counts are JSON numbers
    check([s["category"] for s in p["shares"]] == NAMES, p["shares"])
    for s, c in zip(p["shares"], support):
        check(s["supportCount"] == c, (metric, s, c))
        lam = c / n
        check(abs(s["estimateUnbiased"] - (lam - q_star) / gap) < 1e-12, (metric, s, c))
        check(abs(s["standardError"] - math.sqrt(lam * (1 - lam) / n) / gap) < 1e-12, s)
    check(abs(sum(s["estimateConsistent"] for s in p["shares"]) - 1) < 1e-12, p["shares"])
    return p


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_js_categorical_")
    pages, origin = serve_directory(os.path.join(REPO, "client", "js"))
    server, _, base = start_collector(server_bin, work, f"--http_cors_origins={origin}")
    driver = None
    try:
        for mechanism, eps in (("K_RR", 1.0), ("OUE", 1.0), ("OLH", 1.5)):
            metric = f"color_{mechanism.lower()}"
            call(base, "QueryService/CreateMetric", {
                "name": metric, "categories": NAMES,
                "design": {"categorical": {"mechanism": mechanism, "epsilon": eps}}})
            out = subprocess.run([NODE, os.path.join(REPO, "tests", "interop",
                                                     "js_categorical_devices.mjs"),
                                  base, metric, ",".join(map(str, COUNTS)), work],
                                 check=True, capture_output=True, text=True, timeout=120)
            seen = json.loads(out.stdout.strip().splitlines()[-1])
            check(seen["mechanism"] == mechanism and seen["devices"] == sum(COUNTS), seen)
            # + the FileStore device's two reports, supporting what its report supports.
            p = call(base, "QueryService/GetPrevalence",
                     {"metric": metric, "groupBy": "lang"})
            node = [g for g in p["groups"] if g["groupValue"] == "node"][0]
            check(node["n"] == sum(COUNTS), node)
            check([int(s["supportCount"]) for s in node["shares"]] == seen["support"], \
                (node["shares"], seen))
            file_device = [g for g in p["groups"] if g["groupValue"] == "node_file"][0]
            check(file_device["n"] == 2, file_device)
            both = [a + int(s["supportCount"])
                    for a, s in zip(seen["support"], file_device["shares"])]
            shares = check_shares(base, metric, both, sum(COUNTS) + 2)["shares"]
            print(f"node {mechanism}: support {seen['support']}, estimates",
                  [round(s["estimateUnbiased"], 3) for s in shares])

        if not have_chromium():
            if required():
                raise RuntimeError("chromium or chromedriver is absent, and "
                                   "DENIABLE_REQUIRE_COMPONENTS is set: the browser part must run")
            print("chromium or chromedriver is absent: the browser part is skipped")
            return
        driver = browser(work)
        for mechanism, eps in (("OUE", 1.0), ("OLH", 1.5)):
            metric = f"web_{mechanism.lower()}"
            call(base, "QueryService/CreateMetric", {
                "name": metric, "categories": NAMES, "minReports": 1,
                "design": {"categorical": {"mechanism": mechanism, "epsilon": eps}}})
            result = run_page(driver, f"{origin}/e2e_page/index.html?collector={base}"
                                      f"&metric={metric}&devices={BROWSER_DEVICES}"
                                      "&phase=categorical")
            check(result["acknowledged"] == BROWSER_DEVICES, result)
            check(result["mechanism"] == mechanism, result)
            check_shares(base, metric, result["support"], BROWSER_DEVICES)
            print(f"browser {mechanism}: support {result['support']}")
    finally:
        if driver is not None:
            driver.quit()
        pages.shutdown()
        stop(server)
        subprocess.run(["rm", "-rf", work])
    print("js categorical interop: ok")


if __name__ == "__main__":
    main()
