#!/usr/bin/python3
"""Estimates as Prometheus series on /metrics (issue 41), through the real deniable-server:

1. With tokens on, a yes/no, a categorical and a ONE_BIT_MEAN metric are fed over HTTP/JSON; the
   estimate series (refreshed every second here) appear for a scrape with the analyst token and
   never for one without a token or with the reporter's.
2. Each metric's series (deniable_estimate, _lower, _upper, _manipulation_bound, _reports) equal
   the query API's answer over the window the scrape names; one series per metric and quantity,
   labelled with metric and quantity only.
3. Restarted with --metrics_token, the scrape with that token carries the estimates.
4. docs/grafana/deniable.json parses as a dashboard and docs/prometheus/deniable-estimates.rules.yml
   as rule groups, and every series either names is one the scraped server exposes.

Usage: estimate_metrics_test.py SERVER_BINARY
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs")
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from test_server import start_collector  # noqa: E402
from checks import check  # noqa: E402

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')
SERIES = re.compile(r"\b(deniable_[a-z_]+)")


def call(base, method, body, token):
    request = urllib.request.Request(
        f"{base}/v1/{method}", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def scrape(base, token=None):
    """{(name, frozenset(labels)): value} of one scrape."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(f"{base}/metrics", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as r:
        text = r.read().decode()
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        check(m, f"not a sample line: {line!r}")
        labels = frozenset(LABEL.findall(m.group(3) or ""))
        samples[(m.group(1), labels)] = float(m.group(4))
    return samples


def one(samples, name, **labels):
    want = frozenset(labels.items())
    found = [v for (n, l), v in samples.items() if n == name and l == want]
    check(len(found) == 1, f"{name} {labels}: {len(found)} samples")
    return found[0]


def add_token(server_bin, db, role):
    out = subprocess.run([server_bin, "tokens", "add", f"--role={role}", f"--label={role}",
                          f"--db={db}"], capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, out.stderr)
    return out.stdout.strip()


def close(x, y):
    return abs(x - y) <= 1e-12 * max(1.0, abs(y))


def feed(base, reporter, hour):
    """Reports of the three metrics: returns their numbers of reports."""
    reports, i = [], 0

    def add(metric, **answer):
        nonlocal i
        i += 1
        reports.append({"metric": metric, "designVersion": 1,
                        "reportId": base64.b64encode(i.to_bytes(16, "big")).decode(),
                        "eventTimeSeconds": str(hour), **answer})
    for k in range(300):
        add("crash", bit=1 if k % 3 == 0 else 0)
        add("browser", bit=0, categorical={"category": k % 3 if k % 5 else 0})
        add("latency", bit=1 if k % 4 == 0 else 0)
    code, sent = call(base, "ReportService/SubmitReports", {"reports": reports}, reporter)
    check(code == 200 and sent.get("accepted") == len(reports), sent)
    return 300


def check_against_api(base, samples, analyst, n):
    start = int(one(samples, "deniable_estimate_window_start_timestamp_seconds"))
    end = int(one(samples, "deniable_estimate_window_end_timestamp_seconds"))
    check(end - start == 86400, (start, end))
    quantities = {}
    for metric in ("crash", "browser", "latency"):
        check(one(samples, "deniable_estimate_reports", metric=metric) == n, metric)
        code, p = call(base, "QueryService/GetPrevalence",
                       {"metric": metric, "startTimeSeconds": start, "endTimeSeconds": end},
                       analyst)
        check(code == 200, p)
        if "numeric" in p:
            e = p["numeric"]
            expected = {"mean": (e["mean"], e["meanCiLower"], e["meanCiUpper"],
                                 e["meanManipulation"]["bound"])}
        elif p.get("shares"):
            expected = {s["category"]: (s["estimateUnbiased"], s["ciLower"], s["ciUpper"],
                                        s["manipulation"]["bound"]) for s in p["shares"]}
        else:
            expected = {"prevalence": (p["estimateUnbiased"], p["ciLower"], p["ciUpper"],
                                       p["manipulation"]["bound"])}
        for quantity, (value, lower, upper, bound) in expected.items():
            labels = {"metric": metric, "quantity": quantity}
            check(close(one(samples, "deniable_estimate", **labels), value), (labels, value))
            check(close(one(samples, "deniable_estimate_lower", **labels), lower), labels)
            check(close(one(samples, "deniable_estimate_upper", **labels), upper), labels)
            check(close(one(samples, "deniable_estimate_manipulation_bound", **labels), bound),
                  labels)
        quantities[metric] = sorted(expected)
    # One series per metric and quantity, labelled with those two only.
    for (name, labels), _ in samples.items():
        if name in ("deniable_estimate", "deniable_estimate_lower", "deniable_estimate_upper"):
            check({k for k, _ in labels} == {"metric", "quantity"}, (name, labels))
    got = sorted((dict(l)["metric"], dict(l)["quantity"])
                 for (name, l) in samples if name == "deniable_estimate")
    check(got == sorted((m, q) for m, qs in quantities.items() for q in qs), got)
    return quantities


def wait_for_estimates(base, token, n):
    """Scrapes until the refresh has counted every report (bounded; the refresh is 1 s)."""
    deadline = time.time() + 60
    while True:
        samples = scrape(base, token)
        counted = [v for (name, l), v in samples.items() if name == "deniable_estimate_reports"]
        if len(counted) == 3 and all(v == n for v in counted):
            return samples
        check(time.time() < deadline, f"no estimate series after 60 s: {counted}")
        time.sleep(0.1)


def check_docs(samples):
    exposed = {name for name, _ in samples}
    with open(os.path.join(DOCS, "grafana", "deniable.json")) as f:
        dashboard = json.load(f)
    check(dashboard["title"] and dashboard["panels"], "a dashboard with panels")
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v["query"]["query"] for v in dashboard["templating"]["list"]
              if isinstance(v.get("query"), dict)]
    band = dashboard["panels"][0]
    check({t["legendFormat"] for t in band["targets"]} == {"estimate", "lower", "upper"}, band)
    import yaml  # python3-yaml (tools/install-deps.sh)
    with open(os.path.join(DOCS, "prometheus", "deniable-estimates.rules.yml")) as f:
        rules = yaml.safe_load(f)
    alerts = [r for g in rules["groups"] for r in g["rules"]]
    check(all(r.get("alert") and r.get("expr") for r in alerts), alerts)
    exprs += [r["expr"] for r in alerts]
    named = {s for e in exprs for s in SERIES.findall(e)}
    check(named, "no series named")
    missing = named - exposed
    check(not missing, f"named but not exposed: {sorted(missing)}")
    return sorted(named)


def main():
    server_bin = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        db, log = os.path.join(work, "e.db"), os.path.join(work, "e.log")
        analyst = add_token(server_bin, db, "analyst")
        reporter = add_token(server_bin, db, "reporter")
        flags = ["--estimate_refresh_seconds=1"]
        proc, _, base = start_collector(server_bin, db, log, *flags)
        try:
            for create in ({"name": "crash", "design": {"twoCoin": {}}},
                           {"name": "browser", "categories": ["chrome", "firefox", "safari"],
                            "design": {"categorical": {"mechanism": "K_RR", "epsilon": 1.5}}},
                           {"name": "latency", "range": {"lo": 0, "hi": 1000, "unit": "ms"},
                            "design": {"numeric": {"epsilon": 1.0}}}):
                code, m = call(base, "QueryService/CreateMetric", {**create, "minReports": 1},
                               analyst)
                check(code == 200, m)
            n = feed(base, reporter, int(time.time()) // 3600 * 3600)
            samples = wait_for_estimates(base, analyst, n)
            quantities = check_against_api(base, samples, analyst, n)
            for token in (None, reporter):  # counters only
                plain = scrape(base, token)
                check(not any(name.startswith("deniable_estimate") for name, _ in plain),
                      f"estimates shown to {'no token' if token is None else 'the reporter'}")
                check(any(name == "deniable_reports_total" for name, _ in plain), "counters")
            named = check_docs(samples)
        finally:
            proc.terminate()
            proc.wait(timeout=30)

        proc, _, base = start_collector(server_bin, db, log, *flags, "--metrics_token=scrape-me")
        try:
            samples = wait_for_estimates(base, "scrape-me", n)
            check_against_api(base, samples, analyst, n)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print("quantities:", quantities)
    print("series named by the Grafana JSON and the rules:", ", ".join(named))
    for (name, labels), v in sorted(samples.items(), key=lambda x: (x[0][0], sorted(x[0][1]))):
        if name.startswith("deniable_estimate"):
            print(name, dict(labels), v)
    print("estimate_metrics: ok")


if __name__ == "__main__":
    main()
