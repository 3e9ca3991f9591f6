#!/usr/bin/python3
"""Cross-site request forgery in a real browser (headless Chromium through Selenium), issue 25.

A tokenless server holds a metric with reports. A page served from another origin (a Python
http.server on another port) makes the browser send what a forging page can send without a
preflight: a `no-cors` fetch with `Content-Type: text/plain` to /v1/QueryService/DeleteMetric,
and the classic form post with `enctype="text/plain"` whose body is valid JSON. The server must
have received both (its access log shows them refused, 415) and the metric must still be there
with every report. Exits 77 (CTest: skipped) only if chromium is absent.

Usage: csrf_browser_test.py SERVER_BINARY
"""
import base64
import functools
import http.server
import json
import os
import re
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, eventually  # noqa: E402
from components import absent  # noqa: E402
from test_server import start_collector  # noqa: E402
from dashboard_browser_test import CHROMEDRIVER, CHROMIUM, browser  # noqa: E402

HOUR = 3600
REPORTS = 50



def api(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def attacker_site(work, target):
    """Serves the forging page from another origin; returns (server, its base URL)."""
    site = os.path.join(work, "evil")
    os.makedirs(site)
    # The classic JSON CSRF: a text/plain form whose one field makes the body
    # {"metric":"m","x":"="}, valid JSON; submitted by the test.
    with open(os.path.join(site, "index.html"), "w") as page:
        page.write(f"""<!doctype html><html><body><h1>cute cats</h1>
<form id="f" method="POST" enctype="text/plain" action="{target}">
<input type="hidden" name='{{"metric":"m","x":"' value='"}}'></form></body></html>""")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def refused_deletes(log_path):
    text = open(log_path).read()
    return len(re.findall(r"event=access transport=http method=deniable\.v1\.QueryService/"
                          r"DeleteMetric code=INVALID_ARGUMENT http_status=415", text))


def main():
    server_bin = sys.argv[1]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    work = tempfile.mkdtemp(prefix="deniable_csrf_")
    log = os.path.join(work, "server.log")
    server, _, base = start_collector(server_bin, os.path.join(work, "d.db"), log)
    target = f"{base}/v1/QueryService/DeleteMetric"
    evil, evil_base = attacker_site(work, target)
    driver = None
    try:
        api(base, "QueryService/CreateMetric", {"name": "m", "design": {"twoCoin": {}}})
        now = int(time.time()) // HOUR * HOUR
        api(base, "ReportService/SubmitReports", {"reports": [
            {"metric": "m", "designVersion": 1, "bit": i % 2,
             "reportId": base64.b64encode(i.to_bytes(16, "big")).decode(),
             "eventTimeSeconds": str(now)} for i in range(REPORTS)]})
        check(api(base, "QueryService/GetPrevalence", {"metric": "m"})["n"] == REPORTS,
              "reports not stored")

        driver = browser(work)
        driver.set_script_timeout(20)
        driver.get(f"{evil_base}/index.html")
        # 1. The no-cors fetch: the browser sends it (no preflight for text/plain), the page
        # cannot read the answer.
        outcome = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {method: 'POST', mode: 'no-cors',"
            "  headers: {'Content-Type': 'text/plain'}, body: JSON.stringify({metric: 'm'})})"
            ".then(r => done('answered:' + r.type), e => done('failed:' + e));", target)
        check(outcome == "answered:opaque", outcome)
        eventually(lambda: refused_deletes(log) >= 1, 10, "the server logs the forged fetch")
        # 2. The form post with a JSON-shaped text/plain body (the browser navigates to the
        # answer).
        driver.execute_script("document.getElementById('f').submit();")
        eventually(lambda: refused_deletes(log) >= 2, 10, "the server logs the forged form post")

        metrics = [m["name"] for m in api(base, "QueryService/ListMetrics", {})["metrics"]]
        check(metrics == ["m"], f"the metric is gone: {metrics}")
        n = api(base, "QueryService/GetPrevalence", {"metric": "m"})["n"]
        check(n == REPORTS, f"{n} reports left of {REPORTS}")
        print(f"forged fetch and form post from {evil_base}: both refused 415, metric m kept "
              f"with its {REPORTS} reports")
    finally:
        if driver is not None:
            driver.quit()
        evil.shutdown()
        server.terminate()
        server.wait(timeout=30)
    print("csrf browser: OK")


if __name__ == "__main__":
    main()
